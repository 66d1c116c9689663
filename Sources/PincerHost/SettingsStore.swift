// The host's persistent settings store: one SQLite file holding
// (namespace, key) -> value strings.
//
// Deliberately Foundation-free (Glibc + libsqlite3 only) to keep start-up fast.

import CSQLite
import Glibc
import Synchronization

public struct StoreError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }

    init(_ message: String) { self.message = message }
}

public final class SettingsStore: @unchecked Sendable {
    // Safety of @unchecked Sendable: `db` and the prepared statements are only
    // touched while holding `lock` (or in init/deinit, where no other reference
    // exists); `setAsideWarning` is only written during init.

    /// The schema version this code writes and understands (`PRAGMA user_version`).
    static let schemaVersion: Int64 = 1
    static let fileName = "settings.sqlite3"

    /// Full path of the database file.
    public let path: String

    /// Set when an unreadable file was found at `path` and moved aside; says where to.
    public private(set) var setAsideWarning: String?

    private let db: OpaquePointer
    private let statements: Statements
    private let lock = Mutex(())
    /// The thread running an `update` callback (0: none). A call into the
    /// store from that callback would wait for its own lock; it fails instead.
    private let updatingThread = Atomic<UInt>(0)

    /// Opens (creating if needed, with parent directories, mode 0700) `<directory>/settings.sqlite3`,
    /// a file only its owner can read (0600, whatever the umask; SQLite gives its -wal and -shm the same mode).
    public init(directory: String) throws(StoreError) {
        guard !directory.isEmpty else {
            throw StoreError("settings store: no directory given (empty path)")
        }
        let path = Self.join(directory, Self.fileName)
        try FileSystem.makeDirectories(directory, neededFor: path)

        var warning: String?
        var opened: OpaquePointer?
        // Normally one pass; a second (and, if another process is racing us, a
        // third) only after an unreadable file has been moved out of the way.
        for _ in 0..<3 {
            switch try Self.openChecked(path) {
            case .ready(let db):
                opened = db
            case .unreadable(let reason, let identity):
                if let destination = try FileSystem.setAside(path, ifStill: identity) {
                    warning = "settings store \(path) could not be read (\(reason)); "
                        + "moved it to \(destination) and started a new one"
                }
                // else: someone else already replaced the file; just open what is there now.
            }
            if opened != nil { break }
        }
        guard let db = opened else {
            throw StoreError("settings store \(path) could not be read even after moving the unreadable file aside")
        }

        let statements: Statements
        do {
            statements = try Statements(db: db, path: path)
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
        self.path = path
        self.db = db
        self.statements = statements
        self.setAsideWarning = warning
    }

    deinit {
        statements.finalizeAll()
        sqlite3_close_v2(db)
    }

    // MARK: Public operations

    public func get(namespace: String, key: String) throws(StoreError) -> String? {
        let op = "reading \(Self.describe(namespace, key))"
        try refuseReentry(op)
        return try lock.withLock { _ throws(StoreError) -> String? in
            try select(namespace: namespace, key: key, op)
        }
    }

    /// nil removes the key.
    public func set(namespace: String, key: String, value: String?) throws(StoreError) {
        let op = (value == nil ? "removing " : "writing ") + Self.describe(namespace, key)
        try refuseReentry(op)
        try lock.withLock { _ throws(StoreError) in
            try inTransaction(op) { () throws(StoreError) in
                try write(namespace: namespace, key: key, value: value, op)
            }
        }
    }

    /// Several changes in one transaction (all or nothing).
    public func set(namespace: String, values: [(key: String, value: String?)]) throws(StoreError) {
        if values.isEmpty { return }
        let op = "writing \(values.count) setting(s) in namespace \"\(namespace)\""
        try refuseReentry(op)
        try lock.withLock { _ throws(StoreError) in
            try inTransaction(op) { () throws(StoreError) in
                for (key, value) in values {
                    try write(namespace: namespace, key: key, value: value,
                              op + " (at " + Self.describe(namespace, key) + ")")
                }
            }
        }
    }

    /// What an `update` decides for the setting it read.
    public enum Change: Sendable, Equatable {
        /// Leave it as it is (nothing is written).
        case keep
        /// Store this value.
        case set(String)
        /// Remove the key.
        case remove
        /// Refuse the change: nothing is written, and the caller says why.
        case cancel
    }

    /// Reads `key`, lets `decide` choose from its current value (nil when
    /// unset) what it becomes, and writes that, all in one `BEGIN IMMEDIATE`
    /// transaction: no other process or thread can write the store between
    /// the read and the write, so a read-modify-write never loses another's
    /// change. Returns what `decide` returned.
    ///
    /// `decide` runs once, on the calling thread, with the store locked for
    /// writing (other writers, here and in other processes, wait): keep it
    /// quick, and do not use this store from it (such a call fails with a
    /// StoreError instead of waiting for itself). It is not called when the
    /// write lock cannot be had within the busy timeout.
    @discardableResult
    public func update(namespace: String, key: String, _ decide: (String?) -> Change) throws(StoreError) -> Change {
        let op = "updating " + Self.describe(namespace, key)
        try refuseReentry(op)
        return try lock.withLock { _ throws(StoreError) -> Change in
            var decided = Change.keep
            try inTransactionOrRollback(op, { () throws(StoreError) -> Bool in
                let current = try select(namespace: namespace, key: key, op)
                updatingThread.store(Self.currentThread, ordering: .releasing)
                decided = decide(current)
                updatingThread.store(0, ordering: .releasing)
                switch decided {
                case .keep, .cancel:
                    return false
                case .set(let value):
                    try write(namespace: namespace, key: key, value: value, op)
                case .remove:
                    try write(namespace: namespace, key: key, value: nil, op)
                }
                return true
            })
            return decided
        }
    }

    /// All settings of a namespace, sorted by key (byte order of the UTF-8
    /// text), read in one transaction; with `prefix`, those whose key starts
    /// with it (compared byte for byte).
    public func all(namespace: String, prefix: String = "") throws(StoreError) -> [(key: String, value: String)] {
        let op = "listing namespace \"\(namespace)\""
        try refuseReentry(op)
        let rows = try lock.withLock { _ throws(StoreError) -> [(key: String, value: String)] in
            let stmt = statements.selectAll
            defer { Self.resetStatement(stmt) }
            try bind(stmt, 1, namespace, op)
            var result: [(key: String, value: String)] = []
            while true {
                switch sqlite3_step(stmt) {
                case SQLITE_ROW:
                    result.append((key: Self.columnString(stmt, 0), value: Self.columnString(stmt, 1)))
                case SQLITE_DONE:
                    return result
                case let rc:
                    throw failure(op, rc)
                }
            }
        }
        return prefix.isEmpty ? rows : rows.filter { $0.key.utf8.starts(with: prefix.utf8) }
    }

    /// The connection's `PRAGMA synchronous` (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA).
    public var synchronousLevel: Int {
        lock.withLock { _ in
            var handle: OpaquePointer?
            guard sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &handle, nil) == SQLITE_OK, let stmt = handle else { return -1 }
            defer { sqlite3_finalize(stmt) }
            return sqlite3_step(stmt) == SQLITE_ROW ? Int(sqlite3_column_int(stmt, 0)) : -1
        }
    }

    /// Default directory: $PINCER_STATE_DIR, else $XDG_STATE_HOME/pincer, else
    /// $HOME/.local/state/pincer, else /tmp/pincer-<uid>. Empty variables count as
    /// unset, and (per the XDG spec) a relative $XDG_STATE_HOME is ignored.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let dir = environment["PINCER_STATE_DIR"], !dir.isEmpty {
            return dir
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return join(xdg, "pincer")
        }
        if let home = environment["HOME"], !home.isEmpty {
            return join(home, ".local/state/pincer")
        }
        return "/tmp/pincer-\(getuid())"
    }

    // MARK: Reading and writing (caller holds the lock)

    private static var currentThread: UInt { UInt(pthread_self()) }

    private func refuseReentry(_ op: String) throws(StoreError) {
        if updatingThread.load(ordering: .acquiring) == Self.currentThread {
            throw StoreError("settings store \(path): \(op) was called from inside an update of the same store "
                + "(an update callback must not use the settings; it would wait for its own lock)")
        }
    }

    private func select(namespace: String, key: String, _ op: String) throws(StoreError) -> String? {
        let stmt = statements.select
        defer { Self.resetStatement(stmt) }
        try bind(stmt, 1, namespace, op)
        try bind(stmt, 2, key, op)
        switch sqlite3_step(stmt) {
        case SQLITE_ROW:
            return Self.columnString(stmt, 0)
        case SQLITE_DONE:
            return nil
        case let rc:
            throw failure(op, rc)
        }
    }


    private func write(namespace: String, key: String, value: String?, _ op: String) throws(StoreError) {
        let stmt = value == nil ? statements.delete : statements.upsert
        defer { Self.resetStatement(stmt) }
        try bind(stmt, 1, namespace, op)
        try bind(stmt, 2, key, op)
        if let value { try bind(stmt, 3, value, op) }
        let rc = sqlite3_step(stmt)
        guard rc == SQLITE_DONE else { throw failure(op, rc) }
    }

    /// BEGIN IMMEDIATE ... COMMIT around `body`; rolls back on any error.
    private func inTransaction(_ op: String, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        try inTransactionOrRollback(op, { () throws(StoreError) -> Bool in
            try body()
            return true
        })
    }

    /// BEGIN IMMEDIATE ... COMMIT around `body`, or ROLLBACK when it returns
    /// false (nothing to write) or throws.
    private func inTransactionOrRollback(_ op: String, _ body: () throws(StoreError) -> Bool) throws(StoreError) {
        try stepToEnd(statements.begin, op + " (BEGIN IMMEDIATE)")
        do throws(StoreError) {
            if try body() {
                try stepToEnd(statements.commit, op + " (COMMIT)")
            } else {
                try stepToEnd(statements.rollback, op + " (ROLLBACK)")
            }
        } catch {
            // Some errors (e.g. SQLITE_FULL, IOERR) already rolled back; only roll back if still open.
            if sqlite3_get_autocommit(db) == 0 {
                sqlite3_step(statements.rollback)
                Self.resetStatement(statements.rollback)
            }
            throw error
        }
    }

    private func stepToEnd(_ stmt: OpaquePointer, _ op: String) throws(StoreError) {
        defer { Self.resetStatement(stmt) }
        let rc = sqlite3_step(stmt)
        guard rc == SQLITE_DONE else { throw failure(op, rc) }
    }

    private func bind(_ stmt: OpaquePointer, _ index: Int32, _ text: String, _ op: String) throws(StoreError) {
        // Explicit byte length: keeps embedded NULs, and the copy is made by SQLite (TRANSIENT).
        let rc = sqlite3_bind_text64(stmt, index, text, sqlite3_uint64(text.utf8.count),
                                     csqlite_transient(), UInt8(SQLITE_UTF8))
        guard rc == SQLITE_OK else { throw failure(op + " (binding parameter \(index))", rc) }
    }

    private func failure(_ op: String, _ rc: Int32) -> StoreError {
        StoreError("settings store \(path): \(op) failed: \(Self.sqliteMessage(db, rc))")
    }

    // MARK: Helpers

    private static func resetStatement(_ stmt: OpaquePointer) {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    fileprivate static func columnString(_ stmt: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(stmt, column) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private static func describe(_ namespace: String, _ key: String) -> String {
        "setting \"\(key)\" in namespace \"\(namespace)\""
    }

    fileprivate static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// SQLite's message for the last error on `db` (or for `rc` if there is no
    /// connection), plus the OS error for file-level failures.
    fileprivate static func sqliteMessage(_ db: OpaquePointer?, _ rc: Int32) -> String {
        var message: String
        if let db, let text = sqlite3_errmsg(db) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(rc))
        }
        let primary = rc & 0xff
        if let db, primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_READONLY
            || primary == SQLITE_PERM {
            let sys = sqlite3_system_errno(db)
            if sys != 0 { message += " (\(String(cString: strerror(sys))))" }
        }
        return message + " [sqlite code \(rc)]"
    }

    // MARK: Opening

    private enum OpenOutcome {
        case ready(OpaquePointer)
        /// The file exists but SQLite says it is not a (healthy) database.
        case unreadable(reason: String, identity: FileSystem.Identity)
    }

    /// Opens `path`, checks it is a readable database of a schema version we
    /// understand, configures the connection and creates the schema.
    private static func openChecked(_ path: String) throws(StoreError) -> OpenOutcome {
        try FileSystem.makePrivate(path)
        let identity = FileSystem.identity(of: path)

        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let message = sqliteMessage(handle, rc)
            sqlite3_close_v2(handle)
            throw StoreError("could not open settings store \(path): \(message)")
        }

        var keepOpen = false
        defer { if !keepOpen { sqlite3_close_v2(db) } }

        // SQLite silently falls back to read-only when the file is not writable.
        if sqlite3_db_readonly(db, "main") == 1 {
            let why = access(path, W_OK) == 0 ? "SQLite could only open it read-only"
                : FileSystem.errorText(errno)
            throw StoreError("could not open settings store \(path) for writing: \(why)")
        }

        sqlite3_busy_timeout(db, 10_000)

        func fail(_ op: String, _ result: QueryError) -> StoreError {
            StoreError("settings store \(path): \(op) failed: \(result.message)")
        }
        func tooNew(_ version: Int64) -> StoreError {
            StoreError("settings store \(path) has schema version \(version), but this version of pincer "
                + "only understands version \(schemaVersion) or older; refusing to use it (the file was left untouched)")
        }

        // Read-only checks first: nothing is written before we know the file is ours to use.
        var unreadable: String?
        var existingVersion: Int64 = 0
        do throws(QueryError) {
            _ = try query(db, "SELECT count(*) FROM sqlite_master")
            existingVersion = Int64(try query(db, "PRAGMA user_version").first ?? "0") ?? 0
            if existingVersion <= schemaVersion {
                let check = try query(db, "PRAGMA quick_check")
                if check != ["ok"] {
                    unreadable = "integrity check failed: " + check.prefix(3).joined(separator: "; ")
                }
            }
        } catch {
            guard error.isUnreadable else { throw fail("reading", error) }
            unreadable = error.reason
        }
        if existingVersion > schemaVersion { throw tooNew(existingVersion) }
        if let reason = unreadable {
            guard let identity else {
                throw StoreError("settings store \(path) could not be read (\(reason))")
            }
            return .unreadable(reason: reason, identity: identity)
        }

        do throws(QueryError) {
            // Returns the resulting mode; a file system without WAL support keeps
            // its old mode, which still works (just with less concurrency).
            _ = try query(db, "PRAGMA journal_mode=WAL")
            // FULL: each commit is on disk (the WAL fsynced) before it is
            // acknowledged, so it survives a power loss; NORMAL only
            // survives a crash of the process.
            _ = try query(db, "PRAGMA synchronous=FULL")
        } catch {
            throw fail("configuring the connection", error)
        }

        // Create the schema under a write lock (another process may be doing the same).
        var foundVersion: Int64 = 0
        do throws(QueryError) {
            _ = try query(db, "BEGIN IMMEDIATE")
            foundVersion = Int64(try query(db, "PRAGMA user_version").first ?? "0") ?? 0
            if foundVersion <= schemaVersion {
                _ = try query(db, """
                    CREATE TABLE IF NOT EXISTS settings(
                        namespace TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value TEXT NOT NULL,
                        PRIMARY KEY(namespace, key)
                    ) WITHOUT ROWID
                    """)
                if foundVersion < schemaVersion {
                    _ = try query(db, "PRAGMA user_version = \(schemaVersion)")
                }
                _ = try query(db, "COMMIT")
            } else {
                _ = try query(db, "ROLLBACK")
            }
        } catch {
            if sqlite3_get_autocommit(db) == 0 { _ = try? query(db, "ROLLBACK") }
            throw fail("creating the schema", error)
        }
        // Upgraded by a newer pincer between the check above and our write lock.
        if foundVersion > schemaVersion { throw tooNew(foundVersion) }

        keepOpen = true
        return .ready(db)
    }

    private struct QueryError: Error {
        let code: Int32
        /// SQLite's own message only, e.g. "file is not a database".
        let reason: String
        /// With the error code, OS error and the SQL that failed.
        let message: String
        var isUnreadable: Bool {
            let primary = code & 0xff
            return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
        }
    }

    /// Runs one constant SQL statement (no parameters) and returns the first column of each row.
    private static func query(_ db: OpaquePointer, _ sql: String) throws(QueryError) -> [String] {
        var handle: OpaquePointer?
        var rc = sqlite3_prepare_v2(db, sql, -1, &handle, nil)
        guard rc == SQLITE_OK, let stmt = handle else {
            throw QueryError(code: rc, reason: String(cString: sqlite3_errmsg(db)),
                             message: sqliteMessage(db, rc) + " (in: \(sql))")
        }
        defer { sqlite3_finalize(stmt) }
        var rows: [String] = []
        while true {
            rc = sqlite3_step(stmt)
            if rc == SQLITE_ROW {
                rows.append(columnString(stmt, 0))
            } else if rc == SQLITE_DONE {
                return rows
            } else {
                throw QueryError(code: rc, reason: String(cString: sqlite3_errmsg(db)),
                             message: sqliteMessage(db, rc) + " (in: \(sql))")
            }
        }
    }
}

// MARK: - Prepared statements

private struct Statements {
    let begin: OpaquePointer
    let commit: OpaquePointer
    let rollback: OpaquePointer
    let select: OpaquePointer
    let selectAll: OpaquePointer
    let upsert: OpaquePointer
    let delete: OpaquePointer

    init(db: OpaquePointer, path: String) throws(StoreError) {
        var prepared: [OpaquePointer] = []
        func prepare(_ sql: String) throws(StoreError) -> OpaquePointer {
            var handle: OpaquePointer?
            let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
            guard rc == SQLITE_OK, let stmt = handle else {
                let message = SettingsStore.sqliteMessage(db, rc)
                for stmt in prepared { sqlite3_finalize(stmt) }
                throw StoreError("settings store \(path): preparing \"\(sql)\" failed: \(message)")
            }
            prepared.append(stmt)
            return stmt
        }
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
        rollback = try prepare("ROLLBACK")
        select = try prepare("SELECT value FROM settings WHERE namespace = ?1 AND key = ?2")
        selectAll = try prepare("SELECT key, value FROM settings WHERE namespace = ?1 ORDER BY key")
        upsert = try prepare("INSERT OR REPLACE INTO settings(namespace, key, value) VALUES (?1, ?2, ?3)")
        delete = try prepare("DELETE FROM settings WHERE namespace = ?1 AND key = ?2")
    }

    func finalizeAll() {
        for stmt in [begin, commit, rollback, select, selectAll, upsert, delete] {
            sqlite3_finalize(stmt)
        }
    }
}

// MARK: - File system helpers (Glibc)

private enum FileSystem {
    struct Identity: Equatable {
        let device: UInt
        let inode: UInt
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Device and inode of the file at `path` (not following a final symlink), nil if absent.
    static func identity(of path: String) -> Identity? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Identity(device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `mkdir -p` with mode 0700 for the directories it creates.
    static func makeDirectories(_ directory: String, neededFor file: String) throws(StoreError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError("could not create settings store \(file): \(directory) exists and is not a directory")
            }
            return
        }
        var trimmed = Substring(directory)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        if let slash = trimmed.lastIndex(of: "/") {
            let parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
            if parent != String(trimmed) {
                try makeDirectories(parent, neededFor: file)
            }
        }
        if mkdir(directory, 0o700) != 0 {
            let code = errno
            if code == EEXIST, stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
            throw StoreError("could not create directory \(directory) for settings store \(file): \(errorText(code))")
        }
        // mkdir's mode is reduced by the umask; the directory is the owner's alone whatever it is.
        chmod(directory, 0o700)
    }

    /// Creates the store file owner-only (0600, exactly: the umask only
    /// removes bits, so fchmod sets it) before SQLite opens it, as SQLite
    /// would create it 0644 less the umask. A store of ours found readable
    /// by others (made by an older pincer) is narrowed to 0600, with its
    /// -wal and -shm, whose modes SQLite copies from the database file.
    static func makePrivate(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 {
            let failed = fchmod(fd, 0o600) != 0 ? errno : 0
            close(fd)
            if failed != 0 { throw StoreError("could not make settings store \(path) private (mode 0600): \(errorText(failed))") }
            return
        }
        guard errno == EEXIST else { return }  // let SQLite report why it cannot open the file
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(),
                  info.st_mode & 0o077 != 0 else { continue }
            if chmod(file, 0o600) != 0 {
                throw StoreError("could not make settings store file \(file) private (mode 0600): \(errorText(errno))")
            }
        }
    }

    /// Moves an unreadable store (and its -wal/-shm) to `<path>.unreadable-<UTC time>[-N]`,
    /// never overwriting anything. Returns nil (moving nothing) if the file at `path`
    /// is no longer the one found unreadable (another process dealt with it).
    static func setAside(_ path: String, ifStill expected: Identity) throws(StoreError) -> String? {
        guard identity(of: path) == expected else { return nil }
        let base = path + ".unreadable-" + utcTimestamp()
        var destination = base
        var attempt = 0
        while true {
            let code = moveNoReplace(path, destination)
            if code == 0 { break }
            if code == ENOENT, identity(of: path) == nil { return nil }  // someone else moved it
            guard code == EEXIST else {
                throw StoreError("settings store \(path) could not be read, and moving it aside to "
                    + "\(destination) failed: \(errorText(code))")
            }
            attempt += 1
            destination = base + "-\(attempt)"
        }
        // A leftover -wal must not be paired with the new database, so move it too.
        for suffix in ["-wal", "-shm"] where exists(path + suffix) {
            let code = moveNoReplace(path + suffix, destination + suffix)
            if code != 0 && code != ENOENT {
                throw StoreError("settings store \(path) could not be read; moved it to \(destination), "
                    + "but moving \(path + suffix) to \(destination + suffix) failed: \(errorText(code))")
            }
        }
        return destination
    }

    /// Renames without ever replacing an existing `to`. Returns 0 or an errno value.
    static func moveNoReplace(_ from: String, _ to: String) -> Int32 {
        // link() fails with EEXIST rather than replacing; then drop the old name.
        if link(from, to) == 0 {
            if unlink(from) != 0 {
                let code = errno
                unlink(to)
                return code
            }
            return 0
        }
        let code = errno
        switch code {
        case EPERM, ENOTSUP, EOPNOTSUPP, EXDEV, EMLINK:
            // File system without hard links: check, then rename (small race, best effort).
            if exists(to) { return EEXIST }
            return rename(from, to) == 0 ? 0 : errno
        default:
            return code
        }
    }

    /// Current UTC time as YYYYMMDDTHHMMSS.
    static func utcTimestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2)
    }
}
