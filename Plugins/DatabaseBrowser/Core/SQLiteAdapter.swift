// The built-in SQLite adapter: finds SQLite files in the configured folders
// (by their header, not only by name) and opens any SQLite file it is
// given, read-only unless a session asks for writes.
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class SQLiteAdapter: DatabaseAdapter, @unchecked Sendable {
    public let id = "sqlite"
    public let name = "SQLite files"
    public let capabilities: Capabilities = [.query, .write, .atomicWrite, .keyset, .cancel]
    public static let extensions = ["sqlite", "sqlite3", "db"]
    private let paths: @Sendable () -> [String]
    /// Name to path, from the last listing: the shell lists to resolve a
    /// name and then opens it, and need not scan the folders twice.
    private let listed = Mutex<[String: String]>([:])

    /// `paths` gives the folders and files to offer, read at each listing.
    public init(paths: @escaping @Sendable () -> [String]) { self.paths = paths }

    public func databases() -> [DatabaseInfo] {
        var files: [(path: String, size: Int64)] = []
        var seen = Set<String>()
        func add(_ path: String, _ size: Int64) {
            let canonical = realpath(path, nil).map { p in defer { free(p) }; return String(cString: p) } ?? path
            if seen.insert(canonical).inserted { files.append((path, size)) }
        }
        for p in paths() {
            var st = stat()
            guard stat(p, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR {
                for entry in SQLiteAdapter.listDirectory(p) {
                    let full = p.hasSuffix("/") ? p + entry : p + "/" + entry
                    let ext = entry.split(separator: ".").last.map { $0.lowercased() } ?? ""
                    var fst = stat()
                    guard entry.contains("."), SQLiteAdapter.extensions.contains(ext), stat(full, &fst) == 0,
                          fst.st_mode & S_IFMT == S_IFREG, SQLiteAdapter.hasHeader(full) else { continue }
                    add(full, Int64(fst.st_size))
                }
            } else if st.st_mode & S_IFMT == S_IFREG, SQLiteAdapter.hasHeader(p) {
                add(p, Int64(st.st_size))
            }
        }
        // Named after the file without its extension; the file name, then the
        // path, when that name is taken.
        var taken = Set<String>()
        let infos = files.map { f in
            let base = String(f.path.split(separator: "/").last ?? Substring(f.path))
            let stem = base.contains(".") ? String(base[..<base.lastIndex(of: ".")!]) : base
            let name = [stem, base, f.path].first { !taken.contains($0) } ?? f.path
            taken.insert(name)
            return DatabaseInfo(name: name, location: f.path, detail: ByteCount.text(f.size), capabilities: capabilities)
        }
        listed.withLock { map in
            map = [:]
            for info in infos { map[info.name] = info.location }
        }
        return infos
    }

    public func open(_ database: String, write: Bool, timeoutMilliseconds: Int) throws(DatabaseError) -> DatabaseSession {
        let path: String
        let cached = listed.withLock { $0[database] }.flatMap { access($0, F_OK) == 0 ? $0 : nil }
        if let location = cached ?? databases().first(where: { $0.name == database })?.location {
            path = location
        } else {
            var st = stat()
            guard stat(database, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                throw .notFound("no SQLite database '\(database)'\(Suggest.nearest(database, databases().map(\.name)))")
            }
            try SQLiteAdapter.check(database)
            path = database
        }
        return try SQLiteSession(path: path, writable: write, timeoutMilliseconds: timeoutMilliseconds)
    }

    static let header = Array("SQLite format 3\0".utf8)

    static func hasHeader(_ path: String) -> Bool { (try? check(path)) != nil }

    /// Refuses a file that is not a SQLite database, saying what it is instead.
    public static func check(_ path: String) throws(DatabaseError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .notFound("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = read(fd, &bytes, 16)
        guard n == 16, bytes == header else {
            throw .invalid("\(path) is not a SQLite database (\(n <= 0 ? "the file is empty" : "its first bytes are not \"SQLite format 3\""))")
        }
    }

    static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}

/// Sizes for people: "812 KiB".
enum ByteCount {
    static func text(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) bytes" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return NumberText.fixed(value, value < 10 ? 1 : 0) + " " + units[unit]
    }
}
