import CPincerSDK

/// Feature flags through "pincer.flags/1" (SDK/include/pincer/flags.h).
///
/// Reads never throw: they return the caller's default when the flag is
/// not registered, has another type, or the flags plugin is not loaded
/// (`resolve` says which). Changes throw a `PincerError` carrying the
/// service's message. Every method may be called from any thread; reads
/// take no lock in the flags plugin and allocate nothing (string reads
/// allocate the returned String).
public struct PincerFlags: Sendable {
    /// Why a read produced its value.
    public enum Reason: String, Sendable {
        /// The registered remote value.
        case remote
        /// A local override (overrides enabled).
        case override
        /// Not registered: the caller's default.
        case `default`
        /// Registered with another type: the caller's default.
        case typeMismatch = "type-mismatch"
        /// Bad arguments: the caller's default.
        case error
        /// The flags service is not available (plugin not loaded, or Pincer
        /// stopped): the caller's default.
        case unavailable

        init(_ reason: pincer_flag_reason_t) {
            switch reason {
            case PINCER_FLAG_REASON_REMOTE: self = .remote
            case PINCER_FLAG_REASON_OVERRIDE: self = .override
            case PINCER_FLAG_REASON_DEFAULT: self = .default
            case PINCER_FLAG_REASON_TYPE_MISMATCH: self = .typeMismatch
            default: self = .error
            }
        }
    }

    /// A value and why it is the value.
    public struct Resolution<Value: Sendable>: Sendable {
        public let value: Value
        public let reason: Reason
    }

    let service: ServiceTable<pincer_flags_service_t>

    static var slots: [(String, PartialKeyPath<pincer_flags_service_t>)] { [
        ("register_bool", \.register_bool), ("register_int", \.register_int), ("register_double", \.register_double),
        ("register_string", \.register_string), ("get_bool", \.get_bool), ("get_int", \.get_int),
        ("get_double", \.get_double), ("get_string", \.get_string), ("set_override", \.set_override),
        ("clear_override", \.clear_override), ("clear_all_overrides", \.clear_all_overrides),
        ("overrides_enabled", \.overrides_enabled), ("set_overrides_enabled", \.set_overrides_enabled),
        ("last_error", \.last_error),
    ] }

    /// False when the flags plugin is not loaded or Pincer was stopped.
    public var isAvailable: Bool { service.isAvailable }

    /// Why the service is unavailable (which plugin, and whether it was left
    /// out, refused or not found; or that Pincer stopped); "" when available.
    public var unavailableReason: String { service.unavailableReason }


    // MARK: reads

    public func bool(_ key: String, default defaultValue: Bool) -> Bool { resolve(key, default: defaultValue).value }
    public func int(_ key: String, default defaultValue: Int) -> Int { resolve(key, default: defaultValue).value }
    public func double(_ key: String, default defaultValue: Double) -> Double { resolve(key, default: defaultValue).value }
    public func string(_ key: String, default defaultValue: String) -> String { resolve(key, default: defaultValue).value }

    public func resolve(_ key: String, default defaultValue: Bool) -> Resolution<Bool> {
        guard let (t, c) = service.ifAvailable else { return Resolution(value: defaultValue, reason: .unavailable) }
        var value = defaultValue
        let reason = t.pointee.get_bool!(c, key, defaultValue, &value)
        return Resolution(value: value, reason: Reason(reason))
    }

    public func resolve(_ key: String, default defaultValue: Int) -> Resolution<Int> {
        guard let (t, c) = service.ifAvailable else { return Resolution(value: defaultValue, reason: .unavailable) }
        var value = Int64(defaultValue)
        let reason = t.pointee.get_int!(c, key, Int64(defaultValue), &value)
        return Resolution(value: Int(value), reason: Reason(reason))
    }

    public func resolve(_ key: String, default defaultValue: Double) -> Resolution<Double> {
        guard let (t, c) = service.ifAvailable else { return Resolution(value: defaultValue, reason: .unavailable) }
        var value = defaultValue
        let reason = t.pointee.get_double!(c, key, defaultValue, &value)
        return Resolution(value: value, reason: Reason(reason))
    }

    public func resolve(_ key: String, default defaultValue: String) -> Resolution<String> {
        guard let (t, c) = service.ifAvailable else { return Resolution(value: defaultValue, reason: .unavailable) }
        var reason: pincer_flag_reason_t = PINCER_FLAG_REASON_ERROR
        let value = copiedOut { buffer, capacity in
            var length: UInt64 = 0
            reason = t.pointee.get_string!(c, key, defaultValue, buffer, capacity, &length)
            return Int64(clamping: length)
        }
        return Resolution(value: value ?? defaultValue, reason: Reason(reason))
    }

    // MARK: registration

    /// Registers `key` with its remote value (the value the app's
    /// configuration delivered, or its built-in default), or updates that
    /// value. Registering a key again with another type fails (`.service(status: PINCER_DUPLICATE)`).
    public func register(_ key: String, remote: Bool, summary: String? = nil) throws(PincerError) {
        let (t, c) = try service.get()
        try check("register '\(key)'", t, c, t.pointee.register_bool!(c, key, remote, summary))
    }

    public func register(_ key: String, remote: Int, summary: String? = nil) throws(PincerError) {
        let (t, c) = try service.get()
        try check("register '\(key)'", t, c, t.pointee.register_int!(c, key, Int64(remote), summary))
    }

    public func register(_ key: String, remote: Double, summary: String? = nil) throws(PincerError) {
        let (t, c) = try service.get()
        try check("register '\(key)'", t, c, t.pointee.register_double!(c, key, remote, summary))
    }

    public func register(_ key: String, remote: String, summary: String? = nil) throws(PincerError) {
        let (t, c) = try service.get()
        try check("register '\(key)'", t, c, t.pointee.register_string!(c, key, remote, summary))
    }

    // MARK: overrides

    /// Sets a local override from text parsed by the flag's type ("true",
    /// "42", "2.5", any text).
    public func setOverride(_ key: String, _ value: String) throws(PincerError) {
        let (t, c) = try service.get()
        try check("set override '\(key)'", t, c, t.pointee.set_override!(c, key, value))
    }

    public func clearOverride(_ key: String) throws(PincerError) {
        let (t, c) = try service.get()
        try check("clear override '\(key)'", t, c, t.pointee.clear_override!(c, key))
    }

    public func clearAllOverrides() throws(PincerError) {
        let (t, c) = try service.get()
        try check("clear all overrides", t, c, t.pointee.clear_all_overrides!(c))
    }

    /// The master switch: off, every flag reads its remote value. False when unavailable.
    public var overridesEnabled: Bool {
        guard let (t, c) = service.ifAvailable else { return false }
        return t.pointee.overrides_enabled!(c)
    }

    public func setOverridesEnabled(_ enabled: Bool) throws(PincerError) {
        let (t, c) = try service.get()
        try check("set overrides enabled", t, c, t.pointee.set_overrides_enabled!(c, enabled))
    }

    private func check(_ what: String, _ t: UnsafePointer<pincer_flags_service_t>, _ c: UnsafeMutableRawPointer?,
                       _ status: pincer_status_t) throws(PincerError) {
        guard status == PINCER_OK else { throw service.failure(what, status, lastError: t.pointee.last_error, context: c) }
    }
}
