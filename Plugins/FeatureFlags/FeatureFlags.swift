// Feature flags: remote values, local overrides behind a master switch, and
// resolution with a reason (after OpenFeature). Code in the process uses the
// "pincer.flags/1" service (SDK/include/pincer/flags.h); people use the menu
// and the flags.* commands.
import PincerPluginKit

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.flags", shortName: "flags", name: "Feature Flags", version: "1.0.0",
    summary: "Typed feature flags with local overrides, a master switch and resolution reasons",
    entriesFollowState: true)) { FeatureFlags() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class FeatureFlags: PincerPlugin {
    static let section = "flags"
    private var service: FlagsService?
    private var store: FirstUse<FlagStore>?

    func register(with host: PluginHost) throws {
        // Init only registers, the same entries every run: the flags'
        // own entries come from the stored document, so they are added when
        // the store opens (the first command, entry or service call).
        let readers = SnapshotPublisher()
        let store = FirstUse { () -> FlagStore in
            let store = FlagStore(host: host, readers: readers)
            for key in store.snapshot.order {
                do { try FeatureFlags.addEntry(for: key, store: store, host: host) } catch {
                    host.log(.warning, "flag '\(key)': no menu entry: \(error)")
                }
            }
            store.onChange = { change in
                if let flag = change.newFlag {
                    do { try FeatureFlags.addEntry(for: flag.key, store: store, host: host) } catch {
                        host.log(.warning, "flag '\(flag.key)': no menu entry: \(error)")
                    }
                } else if change.summaryChanged, let key = change.flag {
                    try? FeatureFlags.addEntry(for: key, store: store, host: host, update: true)
                }
                let payload = JSON.object([("flag", change.flag.map(JSON.string) ?? .null), ("change", .string(change.kind))])
                host.emit(PINCER_FLAGS_CHANGED_EVENT, payload: payload.serialized())
            }
            return store
        }
        let service = FlagsService(store: store, readers: readers)
        self.service = service
        self.store = store
        try host.addSection(id: FeatureFlags.section, title: "Feature Flags", order: 610)
        try host.addPluginValueEntry(.toggle, id: "overrides-enabled", title: "Overrides enabled", section: FeatureFlags.section,
                                     summary: "Off: every flag reads its remote value; overrides are kept for later",
                                     read: { (try store.get().snapshot.overridesEnabled ? "true" : "false", []) },
                                     set: { value throws in
                                         try store.get().setOverridesEnabled(value == "true")
                                     })
        try host.addAction(id: "clear-all", title: "Clear all overrides", command: "clear-all", section: FeatureFlags.section)
        try FlagCommands(store: store).register(with: host)
        try host.publishService(PINCER_FLAGS_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }

    /// The host wants every entry (the menu, `pincer set flags.x`): opening
    /// the store adds one per stored flag.
    func syncEntries() throws { _ = try store?.get() }

    /// One entry per flag: bool flags choose between remote, true and false;
    /// the others take text, where "remote" clears the override.
    private static func addEntry(for key: String, store: FlagStore, host: PluginHost, update: Bool = false) throws {
        guard let flag = store.flag(key) else { return }
        let summary = flag.summary.isEmpty ? "\(flag.type.rawValue) flag" : flag.summary
        try host.addPluginValueEntry(flag.type == .bool ? .choice : .text, id: key, title: key, section: FeatureFlags.section,
                                     summary: summary, choices: flag.type == .bool ? ["remote", "true", "false"] : ["remote"],
                                     update: update,
                                     read: {
                                         guard let f = store.flag(key) else { throw CommandError("flag '\(key)' is gone", status: PINCER_NOT_FOUND) }
                                         let (value, reason) = f.resolved(overridesEnabled: store.snapshot.overridesEnabled)
                                         return (f.override?.text ?? "remote", [("remote", f.remote.text), ("override", f.override?.text),
                                                                                ("effective", "\(value.text) (\(reason.name))")])
                                     },
                                     set: { value throws in
                                         if value == "remote" { try store.clearOverride(key) } else { try store.setOverride(key, text: value) }
                                     })
    }
}
