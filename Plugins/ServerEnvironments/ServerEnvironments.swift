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
        let store = EnvironmentStore(host: host)
        let service = ServersService(store: store)
        self.service = service
        try host.addSection(id: ServerEnvironments.section, title: "Server Environment", order: 210)
        // The chooser comes first; new environments update its choices in place.
        let chooser = Chooser(store: store, host: host)
        try chooser.refresh()
        try host.addPage(id: "variables", title: "Variables", section: ServerEnvironments.section,
                         summary: "Variables of the current environment") {
            store.snapshot.current?.variables.map { ($0.name, Optional($0.value)) } ?? []
        }
        try host.addPage(id: "environment-variables", title: "Environment variables", section: ServerEnvironments.section,
                         summary: "Facts the app registered for display") {
            store.displayVariables.map { ($0.name, Optional($0.value)) }
        }
        store.onRegistered = { do { try chooser.refresh() } catch { host.log(.warning, "server chooser: \(error)") } }
        try ServerCommands(store: store).register(with: host)
        try host.publishService(PINCER_SERVERS_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }
}

/// The "current" choice entry: registered at start (perhaps with no
/// choices yet) and updated in place when the list of environments changes.
final class Chooser: @unchecked Sendable {
    private let store: EnvironmentStore
    private let host: PluginHost
    private let registered = Mutex<[String]?>(nil)

    init(store: EnvironmentStore, host: PluginHost) {
        self.store = store
        self.host = host
    }

    func refresh() throws {
        let store = self.store
        try registered.withLock { shown in
            let ids = store.snapshot.order
            guard ids != shown else { return }
            try host.addPluginValueEntry(.choice, id: "current", title: "Environment", section: ServerEnvironments.section,
                                         summary: "The server environment the app talks to", choices: ids, update: shown != nil,
                                         read: {
                                             guard let e = store.snapshot.current else { return ("", []) }
                                             return (e.id, [("name", e.name)])
                                         },
                                         set: { id throws in try store.use(id) })
            shown = ids
        }
    }
}
