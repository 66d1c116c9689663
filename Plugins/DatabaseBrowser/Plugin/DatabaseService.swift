// "pincer.database/1": how other plugins and apps reach the browser. Any
// plugin registers an adapter written in C (or anything that speaks C);
// an app offers its own SQLite files.
import DatabaseKit
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

final class DatabaseService: ServiceObject<pincer_database_service_t>, @unchecked Sendable {
    let registry: DatabaseRegistry
    let places: SQLitePlaces

    init(registry: DatabaseRegistry, places: SQLitePlaces) {
        self.registry = registry
        self.places = places
        super.init(table: DatabaseService.makeTable(), header: \.header)
    }

    private static func makeTable() -> pincer_database_service_t {
        var t = pincer_database_service_t()
        t.register_adapter = { context, table in
            DatabaseService.with(context) { s in
                guard let table else { return s.fail(PINCER_INVALID_ARGUMENT, "register_adapter: the adapter table is NULL") }
                return s.perform { () throws(DatabaseError) in try s.registry.add(try CAdapter(table)) }
            }
        }
        t.unregister_adapter = { context, id in
            DatabaseService.with(context) { s in
                guard let id else { return s.fail(PINCER_INVALID_ARGUMENT, "unregister_adapter: the id is NULL") }
                let name = String(cString: id)
                guard name != "sqlite" else { return s.fail(PINCER_INVALID_ARGUMENT, "unregister_adapter: the built-in SQLite adapter stays") }
                return s.perform { () throws(DatabaseError) in try s.registry.remove(id: name) }
            }
        }
        t.add_sqlite_path = { context, path in
            DatabaseService.with(context) { s in
                guard let path else { return s.fail(PINCER_INVALID_ARGUMENT, "add_sqlite_path: the path is NULL") }
                let p = String(cString: path)
                return s.perform { () throws(DatabaseError) in
                    try SQLitePath.check(p)
                    s.places.addForProcess(p)
                }
            }
        }
        t.last_error = { context in DatabaseService.with(context) { $0.errors.pointer } }
        return t
    }
}

/// A path offered to the SQLite adapter: a folder, or a SQLite file.
enum SQLitePath {
    static func check(_ path: String) throws(DatabaseError) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .notFound("\(path): \(String(cString: strerror(errno)))") }
        if st.st_mode & S_IFMT == S_IFDIR { return }
        try SQLiteAdapter.check(path)
    }
}
