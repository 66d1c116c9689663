import PincerPluginKit
import PseudoL10n
#if canImport(Glibc)
import Glibc
#endif

/// The "pincer.l10n/1" table (SDK/include/pincer/l10n.h).
final class L10nService: ServiceObject<pincer_l10n_service_t>, @unchecked Sendable {
    /// Opened by the first call that needs the settings.
    let state: FirstUse<L10nStore>

    init(store: FirstUse<L10nStore>) {
        state = store
        super.init(table: L10nService.makeTable(), header: \.header)
    }

    /// The text to hand back for one resolved string, and why it is
    /// unchanged when it is (for last_error).
    func resolve(key: String?, value: String, table: String?) -> (text: String, unchanged: String?) {
        guard let settings = settings else { return (value, "the pseudo-localisation settings could not be opened") }
        let name = table.flatMap { $0.isEmpty ? nil : $0 } ?? L10nSettings.defaultTable
        guard !settings.modes.isEmpty else { return (value, "every mode is off") }
        guard settings.transforms(table: name) else { return (value, "table '\(name)' is not transformed (see l10n.tables)") }
        let result = settings.localizer.transform(value, key: key, table: name)
        if let problem = result.problem { return (value, "left unchanged: \(problem)") }
        return (result.text, result.text == value ? "nothing to change (one character, or no text)" : nil)
    }

    /// The store, opened now if this is the first use.
    func store() throws(L10nError) -> L10nStore {
        do { return try state.get() } catch { throw .storage("could not open the pseudo-localisation settings: \(error)") }
    }

    /// The settings; nil only when the store could not be opened (never for
    /// a settings document, whose unreadable text is set aside).
    var settings: L10nSettings? { (try? state.get())?.settings }

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
            L10nService.with(ctx) { $0.settings?.modes.rawValue ?? 0 }
        }
        t.set_mode = { ctx, mode, on in
            L10nService.with(ctx) { s in
                guard mode.nonzeroBitCount == 1, PseudoModes.named.contains(where: { $0.mode.rawValue == mode }) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "set_mode: \(mode) is not one PINCER_L10N_* bit")
                }
                return s.perform { () throws(L10nError) in try s.store().set(PseudoModes(rawValue: mode), on: on) }
            }
        }
        t.layout_right_to_left = { ctx in
            L10nService.with(ctx) { $0.settings?.layoutRightToLeft ?? false }
        }
        t.generation = { ctx in
            L10nService.with(ctx) { (try? $0.state.get())?.generation ?? 0 }
        }
        t.last_error = { ctx in
            L10nService.with(ctx) { $0.errors.pointer }
        }
        return t
    }
}
