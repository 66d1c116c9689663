import CPincerSDK

/// One spoofed position (pincer_location_fix_t). Every fix is simulated.
public struct LocationFix: Sendable, Equatable {
    /// Degrees, -90...90 (WGS-84).
    public var latitude: Double
    /// Degrees, -180...180.
    public var longitude: Double
    /// Metres; nil when the fix has none.
    public var altitude: Double?
    /// Degrees clockwise from true north.
    public var course: Double
    /// Metres per second.
    public var speed: Double
    /// Metres.
    public var horizontalAccuracy: Double
    /// Seconds since 1970-01-01 UTC.
    public var timestamp: Double
    /// From a route being played.
    public var isMoving: Bool

    init(_ fix: pincer_location_fix_t) {
        latitude = fix.latitude
        longitude = fix.longitude
        altitude = fix.flags & PINCER_LOCATION_FIX_HAS_ALTITUDE != 0 ? fix.altitude : nil
        course = fix.course
        speed = fix.speed
        horizontalAccuracy = fix.horizontal_accuracy
        timestamp = fix.timestamp
        isMoving = fix.flags & PINCER_LOCATION_FIX_MOVING != 0
    }
}

/// Location spoofing through "pincer.location/1" (SDK/include/pincer/location.h).
///
/// While `isSpoofing`, the app uses these fixes instead of the device's.
/// Reads answer "not spoofing" when the loc plugin is not loaded or Pincer
/// stopped; changes throw a `PincerError` with the service's message. Every
/// method may be called from any thread.
public struct PincerLocation: Sendable {
    let service: ServiceTable<pincer_location_service_t>

    static var slots: [(String, PartialKeyPath<pincer_location_service_t>)] { [
        ("is_spoofing", \.is_spoofing), ("current", \.current), ("set", \.set), ("set_place", \.set_place),
        ("play", \.play), ("stop", \.stop), ("off", \.off), ("subscribe", \.subscribe),
        ("unsubscribe", \.unsubscribe), ("last_error", \.last_error),
    ] }

    /// False when the loc plugin is not loaded or Pincer was stopped.
    public var isAvailable: Bool { service.isAvailable }

    /// Why the service is unavailable (which plugin, and whether it was left
    /// out, refused or not found; or that Pincer stopped); "" when available.
    public var unavailableReason: String { service.unavailableReason }

    public var isSpoofing: Bool {
        guard let (t, c) = service.ifAvailable else { return false }
        return t.pointee.is_spoofing!(c)
    }

    /// The current spoofed fix; nil when spoofing is off.
    public var current: LocationFix? {
        guard let (t, c) = service.ifAvailable else { return nil }
        var fix = pincer_location_fix_t()
        fix.struct_size = UInt32(MemoryLayout<pincer_location_fix_t>.size)
        return t.pointee.current!(c, &fix) ? LocationFix(fix) : nil
    }

    /// Spoofs a fixed position (persisted; stops a route being played).
    public func set(latitude: Double, longitude: Double) throws(PincerError) {
        let (t, c) = try service.get()
        try check("set \(latitude),\(longitude)", t, c, t.pointee.set!(c, latitude, longitude))
    }

    /// Spoofs a preset ("paris") or a place added with loc.add.
    public func set(place: String) throws(PincerError) {
        let (t, c) = try service.get()
        try check("set place '\(place)'", t, c, t.pointee.set_place!(c, place))
    }

    /// Plays a route (a scenario such as "city-run", or an imported route)
    /// at `rate` times real time, in a loop when `loop` is true.
    public func play(route: String, rate: Double = 1, loop: Bool = false) throws(PincerError) {
        let (t, c) = try service.get()
        try check("play '\(route)'", t, c, t.pointee.play!(c, route, rate, loop))
    }

    /// Stops a route being played; the last fix stays current.
    public func stop() throws(PincerError) {
        let (t, c) = try service.get()
        try check("stop", t, c, t.pointee.stop!(c))
    }

    /// Switches spoofing off (persisted).
    public func off() throws(PincerError) {
        let (t, c) = try service.get()
        try check("off", t, c, t.pointee.off!(c))
    }

    /// Calls `handler` with every new fix, and with nil when spoofing is
    /// switched off. It runs on the plugin's playback thread (or the thread
    /// that changed the location): return quickly, and do not unsubscribe
    /// from inside it.
    public func subscribe(_ handler: @escaping @Sendable (LocationFix?) -> Void) throws(PincerError) -> PincerSubscription {
        let (t, c) = try service.get()
        typealias Handler = @Sendable (LocationFix?) -> Void
        let box = HandlerBox<Handler>(handler)
        let token = t.pointee.subscribe!(c, { context, fix in
            guard let handler = HandlerBox<Handler>.from(context)?.handler else { return }
            guard let fix, fix.pointee.flags != 0, !fix.pointee.latitude.isNaN else { return handler(nil) }
            handler(LocationFix(fix.pointee))
        }, box.leakedContext())
        return try service.subscription(token, box, lastError: t.pointee.last_error, context: c) { t, c, token in
            t.pointee.unsubscribe!(c, token)
        }
    }

    /// Ends a subscription. Unknown subscriptions are ignored.
    public func unsubscribe(_ subscription: PincerSubscription) {
        guard subscription.service == service.id else { return }
        service.lifetime.forget(subscription)?()
    }

    private func check(_ what: String, _ t: UnsafePointer<pincer_location_service_t>, _ c: UnsafeMutableRawPointer?,
                       _ status: pincer_status_t) throws(PincerError) {
        guard status == PINCER_OK else { throw service.failure(what, status, lastError: t.pointee.last_error, context: c) }
    }
}
