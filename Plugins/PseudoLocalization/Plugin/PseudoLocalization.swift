// Pseudo-localisation (the design Scyther's README describes, AOSP's en-XA and
// ar-XB behaviour): modes applied to every string the app resolves through
// "pincer.l10n/1" (SDK/include/pincer/l10n.h) and to whole catalogs from the
// shell. The transforms live in PseudoL10n; this is the glue.
import PincerPluginKit
import PseudoL10n

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.l10n", shortName: "l10n", name: "Pseudo-localisation", version: "1.0.0",
    summary: "Accented, lengthened, bracketed, right-to-left or key-only strings, live and in catalogs")) { PseudoLocalization() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class PseudoLocalization: PincerPlugin {
    static let section = "l10n"
    private var service: L10nService?

    static let summaries: [String: String] = [
        "accented": "Letters replaced by accented look-alikes: Hello -> Ĥéļļö",
        "lengthened": "Padded to the length translations need (IBM's table: short strings grow most)",
        "boundaries": "Brackets around every string, so truncation shows",
        "rtl": "Each word forced right to left (AOSP's ar-XB); also mirrors the layout",
        "keys": "The table and key instead of the text",
    ]

    func register(with host: PluginHost) throws {
        // Init only registers: the stored settings are read by the first entry, command or service call.
        let store = FirstUse { L10nStore(host: host) }
        let service = L10nService(store: store)
        self.service = service
        try host.addSection(id: PseudoLocalization.section, title: "Pseudo-localisation", order: 320)
        for (mode, name) in PseudoModes.named {
            try host.addPluginValueEntry(.toggle, id: name, title: PseudoLocalization.title(name), section: PseudoLocalization.section,
                                         summary: PseudoLocalization.summaries[name],
                                         read: { (try store.get().settings.modes.contains(mode) ? "true" : "false", []) },
                                         set: { value throws in try store.get().set(mode, on: value == "true") })
        }
        try host.addPluginValueEntry(.choice, id: "accent-map", title: "Accent map", section: PseudoLocalization.section,
                                     summary: "full: every letter; consonants: vowels stay, easier to read",
                                     choices: AccentMap.allCases.map(\.rawValue),
                                     read: { (try store.get().settings.accentMap.rawValue, []) },
                                     set: { value throws in
                                         guard let map = AccentMap(rawValue: value) else { throw L10nError.invalid("unknown accent map '\(value)'") }
                                         try store.get().change { $0.accentMap = map }
                                     })
        try host.addPluginValueEntry(.toggle, id: "layout-rtl", title: "Mirror layout (right to left)", section: PseudoLocalization.section,
                                     summary: "Read by the app (layout_right_to_left) to lay its UI out right to left",
                                     read: { (try store.get().settings.layoutRightToLeft ? "true" : "false", []) },
                                     set: { value throws in try store.get().change { $0.layoutRightToLeft = value == "true" } })
        try host.addPluginValueEntry(.text, id: "tables", title: "Tables", section: PseudoLocalization.section,
                                     summary: "Tables whose strings are transformed, comma-separated (Localizable always is)",
                                     read: { (try store.get().settings.tables.joined(separator: ","), []) },
                                     set: { value throws in try store.get().change { $0.tables = L10nCommands.tables(from: value) } })
        try host.addAction(id: "off", title: "Turn everything off", command: "off", section: PseudoLocalization.section)
        try L10nCommands(store: store, service: service).register(with: host)
        try host.publishService(PINCER_L10N_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }

    static func title(_ name: String) -> String {
        switch name {
        case "rtl": "Right to left"
        case "keys": "Show keys"
        case "boundaries": "Show boundaries"
        default: name.prefix(1).uppercased() + name.dropFirst()
        }
    }
}
