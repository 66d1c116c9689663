import PincerPluginKit
import PseudoL10n
import Synchronization

/// The persisted settings: modes, accent map, layout direction, tables.
struct L10nSettings: Sendable, Equatable {
    static let defaultTable = "Localizable"

    var modes: PseudoModes = [.boundaries]
    var accentMap: AccentMap = .full
    var layoutRightToLeft = false
    /// Tables whose strings are transformed; the default table always is.
    var tables: [String] = [L10nSettings.defaultTable]

    var localizer: PseudoLocalizer { PseudoLocalizer(modes: modes, accentMap: accentMap) }

    /// Whether strings of `table` (nil or "" for the default) are transformed.
    func transforms(table: String?) -> Bool {
        let name = table.flatMap { $0.isEmpty ? nil : $0 } ?? L10nSettings.defaultTable
        return name == L10nSettings.defaultTable || tables.contains(name)
    }

    var json: JSON {
        .object([("modes", .array(modes.names.map(JSON.string))), ("accentMap", .string(accentMap.rawValue)),
                 ("layoutRightToLeft", .bool(layoutRightToLeft)), ("tables", .array(tables.map(JSON.string)))])
    }

    /// Reads a stored document; what cannot be read is named in `problems`
    /// and left at its default.
    static func decode(_ text: String) -> (L10nSettings, [String]) {
        var settings = L10nSettings()
        var problems: [String] = []
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { return (settings, ["the stored settings do not parse: \(error)"]) }
        if let names = doc["modes"]?.arrayValue {
            var modes: PseudoModes = []
            for name in names {
                if let s = name.stringValue, let mode = PseudoModes(name: s) { modes.insert(mode) } else { problems.append("unknown mode \(name.serialized())") }
            }
            settings.modes = modes
        }
        if let map = doc["accentMap"]?.stringValue {
            if let value = AccentMap(rawValue: map) { settings.accentMap = value } else { problems.append("unknown accent map '\(map)'") }
        }
        if let rtl = doc["layoutRightToLeft"]?.boolValue { settings.layoutRightToLeft = rtl }
        if let tables = doc["tables"]?.arrayValue {
            settings.tables = tables.compactMap(\.stringValue)
            if !settings.tables.contains(defaultTable) { settings.tables.insert(defaultTable, at: 0) }
        }
        return (settings, problems)
    }
}

/// A refused change, with the SDK status it maps to.
struct L10nError: StatusError {
    let status: pincer_status_t
    let message: String
    var description: String { message }

    static func invalid(_ m: String) -> L10nError { L10nError(status: PINCER_INVALID_ARGUMENT, message: m) }
    static func storage(_ m: String) -> L10nError { L10nError(status: PINCER_FAILED, message: m) }
}

/// The settings, persisted first and then published; each change bumps the
/// generation and is announced as "l10n.changed". Reads take a short lock
/// and copy a small value, so `transform` stays cheap.
final class L10nStore: @unchecked Sendable {
    private static let settingsKey = "state"
    private let host: PluginHost
    private let current = Mutex<(settings: L10nSettings, generation: UInt64)>((L10nSettings(), 1))

    init(host: PluginHost) {
        self.host = host
        if let text = host.setting(L10nStore.settingsKey) {
            let (settings, problems) = L10nSettings.decode(text)
            for problem in problems { host.log(.warning, "pseudo-localisation settings: \(problem); using the default") }
            current.withLock { $0.settings = settings }
        }
    }

    var settings: L10nSettings { current.withLock { $0.settings } }
    var generation: UInt64 { current.withLock { $0.generation } }

    /// Applies `change` to the settings as stored now (one transaction of
    /// the store, so a change another process made meanwhile is kept),
    /// saves, publishes and announces; nothing changes when saving fails.
    func change(_ change: (inout L10nSettings) throws(L10nError) -> Void) throws(L10nError) {
        let result: Result<L10nSettings?, L10nError> = current.withLock { state in
            var next = state.settings
            var changed = false
            do {
                try host.updateSetting(L10nStore.settingsKey) { text in
                    let stored = text.map { L10nSettings.decode($0).0 } ?? state.settings
                    next = stored
                    try change(&next)
                    changed = next != stored
                    return changed ? .set(next.json.serialized()) : .keep
                }
            } catch let error as L10nError {
                return .failure(error)
            } catch {
                return .failure(.storage("could not save the pseudo-localisation settings: \(error)"))
            }
            guard changed || next != state.settings else { return .success(nil) }
            state = (next, state.generation + 1)
            return .success(next)
        }
        if let changed = try result.get() {
            host.emit(PINCER_L10N_CHANGED_EVENT, payload: changed.json.serialized())
        }
    }

    /// Switches one mode; the right-to-left mode carries the layout flag along.
    func set(_ mode: PseudoModes, on: Bool) throws(L10nError) {
        try change { s throws(L10nError) in
            if on { s.modes.insert(mode) } else { s.modes.remove(mode) }
            if mode == .rightToLeft { s.layoutRightToLeft = on }
        }
    }

    func turnEverythingOff() throws(L10nError) {
        try change { s throws(L10nError) in
            s.modes = []
            s.layoutRightToLeft = false
        }
    }
}
