import CPincerSDK

/// Pseudo-localisation through "pincer.l10n/1" (SDK/include/pincer/l10n.h).
///
/// Call `transform` where the app resolves a localised string. With every
/// mode off, the plugin not loaded or Pincer stopped, the text comes back
/// unchanged. Every method may be called from any thread.
public struct PincerL10n: Sendable {
    /// The modes, as the PINCER_L10N_* bits.
    public struct Modes: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Hello -> Ĥéļļö
        public static let accented = Modes(rawValue: PINCER_L10N_ACCENTED)
        /// Padded to the length translations reach.
        public static let lengthened = Modes(rawValue: PINCER_L10N_LENGTHENED)
        /// [Hello]: truncation and concatenation show.
        public static let boundaries = Modes(rawValue: PINCER_L10N_BOUNDARIES)
        /// Words forced right to left.
        public static let rightToLeft = Modes(rawValue: PINCER_L10N_RIGHT_TO_LEFT)
        /// Table:key instead of the text.
        public static let showKeys = Modes(rawValue: PINCER_L10N_SHOW_KEYS)
    }

    let service: ServiceTable<pincer_l10n_service_t>

    static var slots: [(String, PartialKeyPath<pincer_l10n_service_t>)] { [
        ("transform", \.transform), ("modes", \.modes), ("set_mode", \.set_mode),
        ("layout_right_to_left", \.layout_right_to_left), ("generation", \.generation), ("last_error", \.last_error),
    ] }

    /// False when the l10n plugin is not loaded or Pincer was stopped.
    public var isAvailable: Bool { service.isAvailable }

    /// Why the service is unavailable (which plugin, and whether it was left
    /// out, refused or not found; or that Pincer stopped); "" when available.
    public var unavailableReason: String { service.unavailableReason }

    /// The enabled modes; empty when unavailable.
    public var modes: Modes {
        guard let (t, c) = service.ifAvailable else { return [] }
        return Modes(rawValue: t.pointee.modes!(c))
    }

    /// True when any mode is on, so `transform` may change text.
    public var isOn: Bool { !modes.isEmpty }

    /// Whether the app should mirror its layout (right to left).
    public var layoutRightToLeft: Bool {
        guard let (t, c) = service.ifAvailable else { return false }
        return t.pointee.layout_right_to_left!(c)
    }

    /// Changes whenever modes, tables or the layout flag change: drop a
    /// cache of transformed strings when it moves. 0 when unavailable.
    public var generation: UInt64 {
        guard let (t, c) = service.ifAvailable else { return 0 }
        return t.pointee.generation!(c)
    }

    /// `value` (the text resolved for `key` in `table`, nil for the default
    /// table) with the enabled modes applied; `value` itself when nothing
    /// applies, a placeholder would change, or the service is unavailable.
    public func transform(_ value: String, key: String? = nil, table: String? = nil) -> String {
        guard let (t, c) = service.ifAvailable else { return value }
        var failed = false
        let result = copiedOut { buffer, capacity in
            var length: UInt64 = 0
            guard t.pointee.transform!(c, key, value, table, buffer, capacity, &length) == PINCER_OK else {
                failed = true
                return nil
            }
            return Int64(clamping: length)
        }
        return failed ? value : (result ?? value)
    }

    /// Switches modes on or off (persisted).
    public func set(_ modes: Modes, on: Bool) throws(PincerError) {
        let (t, c) = try service.get()
        for bit in [Modes.accented, .lengthened, .boundaries, .rightToLeft, .showKeys] where modes.contains(bit) {
            let status = t.pointee.set_mode!(c, bit.rawValue, on)
            guard status == PINCER_OK else { throw service.failure("set mode \(bit.rawValue)", status, lastError: t.pointee.last_error, context: c) }
        }
    }
}
