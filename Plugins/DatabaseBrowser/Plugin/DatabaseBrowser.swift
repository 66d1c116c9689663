// The database browser (after Scyther's database browser and Flipper's
// databases plugin): tables, schemas, pages of rows, counts, writes by key
// and raw statements, on any database an adapter offers. SQLite files are
// built in; other stores come from adapters that plugins register through
// "pincer.database/1" (SDK/include/pincer/database.h).
import DatabaseKit
import PincerPluginKit
import Synchronization

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.database", shortName: "db", name: "Database Browser", version: "1.0.0",
    summary: "Browse and edit SQLite files and any database an adapter offers")) { DatabaseBrowser() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class DatabaseBrowser: PincerPlugin {
    static let section = "databases"
    private var service: DatabaseService?

    func register(with host: PluginHost) throws {
        let places = SQLitePlaces(host: host)
        let registry = DatabaseRegistry()
        try registry.add(SQLiteAdapter(paths: { places.all }))
        let service = DatabaseService(registry: registry, places: places)
        self.service = service

        try host.addSection(id: DatabaseBrowser.section, title: "Databases", order: 260)
        try host.addPage(id: "databases", title: "Databases", section: DatabaseBrowser.section,
                         summary: "Every database the adapters offer") {
            let listing = registry.listing()
            return listing.databases.map { d in
                (d.info.name, [d.adapter.id, d.info.location, d.info.detail].compactMap { $0 }.joined(separator: " · "))
            } + listing.failures.map { ("\($0.adapter) (failed)", $0.message) }
        }
        try DatabaseCommands(registry: registry, places: places, host: host).register()
        try host.publishService(PINCER_DATABASE_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }
}

/// Where the SQLite adapter looks: folders and files saved in the plugin's
/// settings (db.add-path), plus those an app offers for this process only
/// (add_sqlite_path).
final class SQLitePlaces: Sendable {
    private let host: PluginHost
    private let runtime = Mutex<[String]>([])
    static let key = "sqlite.paths"

    init(host: PluginHost) { self.host = host }

    var saved: [String] { SQLitePlaces.paths(host.setting(SQLitePlaces.key)) }

    var all: [String] { saved + runtime.withLock { $0 } }

    private static func paths(_ text: String?) -> [String] { (text ?? "").split(separator: "\n").map(String.init) }

    /// Changes the saved list in one transaction of the store, so a path
    /// another process adds meanwhile is kept: `change` gets the list as
    /// stored now and returns the new one, or nil to leave it alone.
    func change(_ change: ([String]) throws -> [String]?) throws {
        try host.updateSetting(SQLitePlaces.key) { text in
            guard let paths = try change(SQLitePlaces.paths(text)) else { return .keep }
            return paths.isEmpty ? .remove : .set(paths.joined(separator: "\n"))
        }
    }

    func addForProcess(_ path: String) {
        runtime.withLock { if !$0.contains(path) { $0.append(path) } }
    }
}
