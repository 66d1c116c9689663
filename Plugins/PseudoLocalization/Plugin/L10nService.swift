import PincerPluginKit
import PseudoL10n
#if canImport(Glibc)
import Glibc
#endif

/// The "pincer.l10n/1" table (SDK/include/pincer/l10n.h).
final class L10nService: ServiceObject<pincer_l10n_service_t>, @unchecked Sendable {
    let store: L10nStore

    init(store: L10nStore) {
        self.store = store
        super.init(table: L10nService.makeTable(), header: \.header)
    }

    /// The text to hand back for one resolved string, and why it is
    /// unchanged when it is (for last_error).
    func resolve(key: String?, value: String, table: String?) -> (text: String, unchanged: String?) {
        let settings = store.settings
        let name = table.flatMap { $0.isEmpty ? nil : $0 } ?? L10nSettings.defaultTable
        guard !settings.modes.isEmpty else { return (value, "every mode is off") }
        guard settings.transforms(table: name) else { return (value, "table '\(name)' is not transformed (see l10n.tables)") }
        let result = settings.localizer.transform(value, key: key, table: name)
        if let problem = result.problem { return (value, "left unchanged: \(problem)") }
        return (result.text, result.text == value ? "nothing to change (one character, or no text)" : nil)
    }

    private static func makeTable() -> pincer_l10n_service_t {
        var t = pincer_l10n_service_t()
        t.header.version_minor = 0
        t.transform = { ctx, key, value, table, buffer, capacity, length in
            L10nService.with(ctx) { s in
                guard let value, let length else { return s.fail(PINCER_INVALID_ARGUMENT, "transform: value and length are required") }
                guard let text = String(validatingCString: value) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "transform: value is not UTF-8")
                }
                let result = s.resolve(key: key.flatMap { String(validatingCString: $0) }, value: text,
                                       table: table.flatMap { String(validatingCString: $0) })
                s.errors.set(result.unchanged ?? "")
                length.pointee = UInt64(copyOut(result.text, to: buffer, capacity: capacity))
                return PINCER_OK
            }
        }
        t.modes = { ctx in
            L10nService.with(ctx) { $0.store.settings.modes.rawValue }
        }
        t.set_mode = { ctx, mode, on in
            L10nService.with(ctx) { s in
                guard mode.nonzeroBitCount == 1, PseudoModes.named.contains(where: { $0.mode.rawValue == mode }) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "set_mode: \(mode) is not one PINCER_L10N_* bit")
                }
                return s.perform { () throws(L10nError) in try s.store.set(PseudoModes(rawValue: mode), on: on) }
            }
        }
        t.layout_right_to_left = { ctx in
            L10nService.with(ctx) { $0.store.settings.layoutRightToLeft }
        }
        t.generation = { ctx in
            L10nService.with(ctx) { $0.store.generation }
        }
        t.last_error = { ctx in
            L10nService.with(ctx) { $0.errors.pointer }
        }
        return t
    }
}
