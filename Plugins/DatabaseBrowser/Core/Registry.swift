// The adapters the browser knows, and how a name typed in the shell
// ("chinook", "csv:music", "./app.db") becomes an adapter and a database.
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class DatabaseRegistry: Sendable {
    private let adapters = Mutex<[any DatabaseAdapter]>([])

    public init() {}

    public var all: [any DatabaseAdapter] { adapters.withLock { $0 } }

    public func add(_ adapter: any DatabaseAdapter) throws(DatabaseError) {
        let id = adapter.id
        let ok = adapters.withLock { list -> Bool in
            guard !list.contains(where: { $0.id == id }) else { return false }
            list.append(adapter)
            return true
        }
        guard ok else { throw DatabaseError(PINCER_DUPLICATE, "an adapter with the id '\(id)' is already registered") }
    }

    public func remove(id: String) throws(DatabaseError) {
        let removed = adapters.withLock { list -> Bool in
            guard let i = list.firstIndex(where: { $0.id == id }) else { return false }
            list.remove(at: i)
            return true
        }
        guard removed else { throw .notFound("no adapter with the id '\(id)'") }
    }

    public func adapter(id: String) -> (any DatabaseAdapter)? { all.first { $0.id == id } }

    /// Every adapter's databases; an adapter that fails to list is reported
    /// beside the others rather than hiding them.
    public func listing() -> (databases: [(adapter: any DatabaseAdapter, info: DatabaseInfo)], failures: [(adapter: String, message: String)]) {
        var databases: [(adapter: any DatabaseAdapter, info: DatabaseInfo)] = []
        var failures: [(adapter: String, message: String)] = []
        for a in all {
            do { databases += try a.databases().map { (a, $0) } } catch { failures.append((a.id, error.message)) }
        }
        return (databases, failures)
    }

    /// Resolves a name: "adapter:name" picks the adapter; a plain name must
    /// match one database; a path to a file goes to the SQLite adapter.
    public func resolve(_ name: String) throws(DatabaseError) -> (adapter: any DatabaseAdapter, database: String) {
        if let colon = name.firstIndex(of: ":"), let a = adapter(id: String(name[..<colon])) {
            return (a, String(name[name.index(after: colon)...]))
        }
        let listed = listing().databases
        let matches = listed.filter { $0.info.name == name }
        if matches.count == 1 { return (matches[0].adapter, name) }
        if matches.count > 1 {
            throw .invalid("'\(name)' names \(matches.count) databases; say which: \(matches.map { "\($0.adapter.id):\(name)" }.joined(separator: ", "))")
        }
        var st = stat()
        if stat(name, &st) == 0, st.st_mode & S_IFMT == S_IFREG, let sqlite = adapter(id: "sqlite") {
            return (sqlite, name)
        }
        throw .notFound("no database '\(name)'\(Suggest.nearest(name, listed.map(\.info.name))); db.list shows them, and a path to a SQLite file works too")
    }

    public func open(_ name: String, write: Bool, timeoutMilliseconds: Int) throws(DatabaseError) -> (adapter: any DatabaseAdapter, session: any DatabaseSession) {
        let (adapter, database) = try resolve(name)
        if write && !adapter.capabilities.contains(.write) {
            throw .unsupported("the \(adapter.name) adapter cannot write")
        }
        return (adapter, try adapter.open(database, write: write, timeoutMilliseconds: timeoutMilliseconds))
    }
}
