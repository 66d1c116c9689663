// Server environments (after Scyther's server configuration): registered
// environments with variables, one current, switching persisted and
// announced. Code uses the "pincer.servers/1" service
// (SDK/include/pincer/servers.h); people use the menu and servers.* commands.
import PincerPluginKit
import Synchronization

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.servers", shortName: "servers", name: "Server Environments", version: "1.0.0",
    summary: "Switch the app between server environments and read their variables")) { ServerEnvironments() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class ServerEnvironments: PincerPlugin {
    static let section = "servers"
    private var service: ServersService?

    func register(with host: PluginHost) throws {
        try host.addSection(id: ServerEnvironments.section, title: "Server Environment", order: 210)
        // Init only registers: the same entries every run, whatever is stored.
        // The chooser is a text entry the plugin checks itself, so that a
        // fresh process can set it before anything opened the store; its
        // suggestions are the stored ids, filled in when the store opens.
        let chooser = Chooser(host: host)
        let store = FirstUse { () -> EnvironmentStore in
            let store = EnvironmentStore(host: host)
            store.onRegistered = { do { try chooser.refresh(store) } catch { host.log(.warning, "server chooser: \(error)") } }
            do { try chooser.refresh(store) } catch { host.log(.warning, "server chooser: \(error)") }
            return store
        }
        try chooser.register(store)
        try host.addPage(id: "variables", title: "Variables", section: ServerEnvironments.section,
                         summary: "Variables of the current environment") {
            try store.get().snapshot.current?.variables.map { ($0.name, Optional($0.value)) } ?? []
        }
        try host.addPage(id: "environment-variables", title: "Environment variables", section: ServerEnvironments.section,
                         summary: "Facts the app registered for display") {
            try store.get().displayVariables.map { ($0.name, Optional($0.value)) }
        }
        let service = ServersService(store: store)
        self.service = service
        try ServerCommands(store: store).register(with: host)
        try host.publishService(PINCER_SERVERS_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }
}

/// The "current" entry: registered at start with no suggestions and updated
/// in place when the store opens and when the list of environments changes.
final class Chooser: @unchecked Sendable {
    private let host: PluginHost
    private let shown = Mutex<[String]>([])

    init(host: PluginHost) { self.host = host }

    func register(_ store: FirstUse<EnvironmentStore>) throws {
        try add(store, ids: [], update: false)
    }

    /// Gives the entry the ids `store` holds now, if they changed. Takes the
    /// opened store (not the FirstUse): it runs while the store is opening.
    func refresh(_ opened: EnvironmentStore) throws {
        try shown.withLock { shown in
            let ids = opened.snapshot.order
            guard ids != shown else { return }
            try add(FirstUse { opened }, ids: ids, update: true)
            shown = ids
        }
    }

    private func add(_ store: FirstUse<EnvironmentStore>, ids: [String], update: Bool) throws {
        try host.addPluginValueEntry(.text, id: "current", title: "Environment", section: ServerEnvironments.section,
                                     summary: "The server environment the app talks to", choices: ids, update: update,
                                     read: {
                                         guard let e = try store.get().snapshot.current else { return ("", []) }
                                         return (e.id, [("name", e.name)])
                                     },
                                     set: { id throws in try store.get().use(id) })
    }
}
