// The one SQLite-file wrapper for stores (the host's settings store, the
// network log, routes): opening with the checks every store needs, schema
// versions, transactions and cached prepared statements.
//
// Deliberately Foundation-free (Glibc + libsqlite3 only) to keep start-up fast.

import CSQLite
import Glibc

/// What went wrong with a store file: which file, doing what, and SQLite's
/// (or the OS's) reason.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The database file.
    public let path: String
    /// What was being done, e.g. "reading setting \"a\"".
    public let operation: String
    /// SQLite's result code (0 when the failure was not SQLite's, e.g. mkdir).
    public let code: Int32
    /// Why, for people (SQLite's message with its code, or the OS error).
    public let message: String
    /// The full sentence; names the file.
    public let description: String

    public init(path: String, operation: String, code: Int32, message: String, description: String? = nil) {
        self.path = path
        self.operation = operation
        self.code = code
        self.message = message
        self.description = description ?? "\(path): \(operation) failed: \(message)"
    }

    /// True when SQLite says the file is not a (healthy) database.
    public var isDamaged: Bool {
        let primary = code & 0xff
        return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
    }
}

/// A store's schema: `migrations[i]` takes the file from `PRAGMA
/// user_version` i to i + 1 (SQL run as one script), so the version this
/// code writes is `migrations.count`. A file of a newer version is refused.
public struct SQLiteSchema: Sendable {
    public var migrations: [String]
    /// FULL: each commit is on disk (the WAL fsynced) before it is
    /// acknowledged, so it survives a power loss; NORMAL only survives a
    /// crash of the process (in WAL mode), and commits much faster.
    public var synchronousFull: Bool
    /// Run `PRAGMA quick_check` at open. It reads every page, so it costs
    /// time in proportion to the file: a store that must open in constant
    /// time turns it off and relies on the header check (a file that is
    /// not a database is still found and set aside).
    public var quickCheckAtOpen: Bool
    /// The page size of a file this creates (nil: SQLite's 4 KiB); a file
    /// that exists keeps its own. A store of many bodies of kilobytes wants
    /// large pages: rows stay inside their page instead of overflow chains,
    /// and SQLite writes (and checkpoints) one page per system call.
    public var pageSize: Int?

    public init(migrations: [String], synchronousFull: Bool = true, quickCheckAtOpen: Bool = true, pageSize: Int? = nil) {
        self.migrations = migrations
        self.synchronousFull = synchronousFull
        self.quickCheckAtOpen = quickCheckAtOpen
        self.pageSize = pageSize
    }

    public var version: Int64 { Int64(migrations.count) }
}

/// One open store file. Not locked itself: its owner serialises use (the
/// settings store and the log database each hold a mutex around it).
public final class SQLiteFile: @unchecked Sendable {
    // Safety of @unchecked Sendable: the connection is opened FULLMUTEX, and
    // the statement cache and the statements' bindings are only used under
    // the owner's lock, as documented above.

    /// Full path of the database file.
    public let path: String
    /// What the file is, for messages ("settings store", "network log").
    public let what: String
    /// Set when an unreadable file was found at `path` and moved aside: names both paths.
    public let setAsideWarning: String?
    /// The path the unreadable file was moved to, with `setAsideWarning`.
    public let setAsidePath: String?

    let db: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]

    private init(path: String, what: String, db: OpaquePointer, warning: String?, aside: String?) {
        self.path = path
        self.what = what
        self.db = db
        self.setAsideWarning = warning
        self.setAsidePath = aside
    }

    deinit {
        for statement in cache.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(db)
    }

    /// Opens (creating if needed, with parent directories of mode 0700) the
    /// database at `path`, a file only its owner can read (0600, whatever
    /// the umask; SQLite gives its -wal and -shm the same mode), in WAL mode
    /// with a busy timeout, and brings its schema to `schema.version` in one
    /// write transaction. A file that is not a database (or fails the quick
    /// check) is moved aside to `<path>.unreadable-<UTC time>` (never
    /// deleted) and a new one started; `setAsideWarning` then says so. A
    /// file of a newer schema version is refused and left untouched.
    public static func open(path: String, what: String, schema: SQLiteSchema) throws(SQLiteError) -> SQLiteFile {
        func failure(_ operation: String, _ message: String, _ description: String) -> SQLiteError {
            SQLiteError(path: path, operation: operation, code: 0, message: message, description: description)
        }
        guard !path.isEmpty else {
            throw failure("opening", "no path given", "\(what): no file given (empty path)")
        }
        let directory = FileSystem.directory(of: path)
        try FileSystem.makeDirectories(directory, neededFor: path, what: what)

        var warning: String?
        var aside: String?
        // Normally one pass; a second (and, if another process is racing us, a
        // third) only after an unreadable file has been moved out of the way.
        for _ in 0..<3 {
            switch try openChecked(path, what: what, schema: schema) {
            case .ready(let db):
                return SQLiteFile(path: path, what: what, db: db, warning: warning, aside: aside)
            case .unreadable(let reason, let identity):
                if let destination = try FileSystem.setAside(path, ifStill: identity, what: what) {
                    aside = destination
                    warning = "\(what) \(path) could not be read (\(reason)); "
                        + "moved it to \(destination) and started a new one"
                }
                // else: someone else already replaced the file; just open what is there now.
            }
        }
        throw failure("opening", "still unreadable",
                      "\(what) \(path) could not be read even after moving the unreadable file aside")
    }

    // MARK: Statements and transactions

    /// The prepared statement for `sql`, prepared once and cached (reset
    /// and unbound before it is returned).
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard rc == SQLITE_OK, let stmt = handle else {
            sqlite3_finalize(handle)
            throw error("preparing \"\(sql)\"", rc)
        }
        let statement = SQLiteStatement(file: self, handle: stmt)
        cache[sql] = statement
        return statement
    }

    /// Runs SQL without parameters (several statements allowed), ignoring any rows.
    public func execute(_ sql: String, _ operation: String? = nil) throws(SQLiteError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(operation ?? "running \"\(sql)\"", rc) }
    }

    /// BEGIN IMMEDIATE (the write lock, waiting up to the busy timeout) …
    /// COMMIT around `body`; ROLLBACK when it throws. A read-modify-write in
    /// here cannot lose another process's change.
    public func transaction<T>(_ operation: String, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try step(statement("BEGIN IMMEDIATE"), operation + " (BEGIN IMMEDIATE)")
        do throws(SQLiteError) {
            let result = try body()
            try step(statement("COMMIT"), operation + " (COMMIT)")
            return result
        } catch {
            rollbackIfOpen()
            throw error
        }
    }

    /// As `transaction`, for a body that throws any error (rolled back, then rethrown).
    public func transaction<T>(_ operation: String, anyError body: () throws -> T) throws -> T {
        try step(statement("BEGIN IMMEDIATE"), operation + " (BEGIN IMMEDIATE)")
        do {
            let result = try body()
            try step(statement("COMMIT"), operation + " (COMMIT)")
            return result
        } catch {
            rollbackIfOpen()
            throw error
        }
    }

    private func rollbackIfOpen() {
        // Some errors (SQLITE_FULL, IOERR) already rolled back; only roll back if still open.
        if sqlite3_get_autocommit(db) == 0 { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
    }

    private func step(_ statement: SQLiteStatement, _ operation: String) throws(SQLiteError) {
        defer { statement.reset() }
        _ = try statement.step(operation)
    }

    /// The first column of the first row of a constant query (a PRAGMA, a count), or nil.
    public func scalar(_ sql: String) throws(SQLiteError) -> Int64? {
        let s = try statement(sql)
        defer { s.reset() }
        return try s.step("reading \"\(sql)\"") ? s.int64(0) : nil
    }

    /// The rowid of the last row inserted on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(db) }
    /// Rows changed by the last statement on this connection.
    public var changes: Int { Int(sqlite3_changes64(db)) }

    /// An error for `rc` on this file, with SQLite's message and the OS error.
    public func error(_ operation: String, _ rc: Int32) -> SQLiteError {
        let message = SQLiteFile.message(db, rc)
        return SQLiteError(path: path, operation: operation, code: rc, message: message,
                           description: "\(what) \(path): \(operation) failed: \(message)")
    }

    /// SQLite's message for the last error on `db` (or for `rc` if there is no
    /// connection), plus the OS error for file-level failures.
    static func message(_ db: OpaquePointer?, _ rc: Int32) -> String {
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
    /// understand, configures the connection and migrates the schema.
    private static func openChecked(_ path: String, what: String, schema: SQLiteSchema) throws(SQLiteError) -> OpenOutcome {
        try FileSystem.makePrivate(path, what: what)
        let identity = FileSystem.identity(of: path)

        func failure(_ operation: String, _ message: String, _ description: String, code: Int32 = 0) -> SQLiteError {
            SQLiteError(path: path, operation: operation, code: code, message: message, description: description)
        }

        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let message = message(handle, rc)
            sqlite3_close_v2(handle)
            throw failure("opening", message, "could not open \(what) \(path): \(message)", code: rc)
        }

        var keepOpen = false
        defer { if !keepOpen { sqlite3_close_v2(db) } }

        // SQLite silently falls back to read-only when the file is not writable.
        if sqlite3_db_readonly(db, "main") == 1 {
            let why = access(path, W_OK) == 0 ? "SQLite could only open it read-only"
                : FileSystem.errorText(errno)
            throw failure("opening for writing", why, "could not open \(what) \(path) for writing: \(why)")
        }

        sqlite3_busy_timeout(db, 10_000)

        func fail(_ op: String, _ result: QueryError) -> SQLiteError {
            failure(op, result.message, "\(what) \(path): \(op) failed: \(result.message)", code: result.code)
        }
        func tooNew(_ version: Int64) -> SQLiteError {
            failure("checking the schema version", "version \(version) is newer than \(schema.version)",
                    "\(what) \(path) has schema version \(version), but this version of pincer "
                    + "only understands version \(schema.version) or older; refusing to use it (the file was left untouched)")
        }

        // Read-only checks first: nothing is written before we know the file is ours to use.
        var unreadable: String?
        var existingVersion: Int64 = 0
        do throws(QueryError) {
            _ = try query(db, "SELECT count(*) FROM sqlite_master")
            existingVersion = Int64(try query(db, "PRAGMA user_version").first ?? "0") ?? 0
            if existingVersion <= schema.version && schema.quickCheckAtOpen {
                let check = try query(db, "PRAGMA quick_check")
                if check != ["ok"] {
                    unreadable = "integrity check failed: " + check.prefix(3).joined(separator: "; ")
                }
            }
        } catch {
            guard error.isUnreadable else { throw fail("reading", error) }
            unreadable = error.reason
        }
        if existingVersion > schema.version { throw tooNew(existingVersion) }
        if let reason = unreadable {
            guard let identity else {
                throw failure("reading", reason, "\(what) \(path) could not be read (\(reason))")
            }
            return .unreadable(reason: reason, identity: identity)
        }

        do throws(QueryError) {
            // Returns the resulting mode; a file system without WAL support keeps
            // its old mode, which still works (just with less concurrency).
            // Before WAL mode writes the header: a new file takes the size then.
            if let size = schema.pageSize { _ = try query(db, "PRAGMA page_size=\(size)") }
            try retryingWhileBusy { () throws(QueryError) in _ = try query(db, "PRAGMA journal_mode=WAL") }
            _ = try query(db, schema.synchronousFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        } catch {
            throw fail("configuring the connection", error)
        }

        // Migrate under a write lock (another process may be doing the same).
        var foundVersion: Int64 = 0
        do throws(QueryError) {
            _ = try query(db, "BEGIN IMMEDIATE")
            foundVersion = Int64(try query(db, "PRAGMA user_version").first ?? "0") ?? 0
            if foundVersion <= schema.version {
                if foundVersion < schema.version {
                    for step in schema.migrations[Int(foundVersion)...] { try script(db, step) }
                    _ = try query(db, "PRAGMA user_version = \(schema.version)")
                }
                _ = try query(db, "COMMIT")
            } else {
                _ = try query(db, "ROLLBACK")
            }
        } catch {
            if sqlite3_get_autocommit(db) == 0 { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
            throw fail("creating the schema", error)
        }
        // Upgraded by a newer pincer between the check above and our write lock.
        if foundVersion > schema.version { throw tooNew(foundVersion) }

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

    private static func script(_ db: OpaquePointer, _ sql: String) throws(QueryError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw QueryError(code: rc, reason: String(cString: sqlite3_errmsg(db)),
                             message: message(db, rc) + " (in: \(sql))")
        }
    }

    /// Runs one constant SQL statement (no parameters) and returns the first column of each row.
    /// Runs `body` again while SQLite says the file is busy or locked, for
    /// up to the busy timeout (10 s). Switching a new file to WAL takes an
    /// exclusive lock, and SQLite answers SQLITE_BUSY at once, without its
    /// busy handler, to the others opening the same new file meanwhile
    /// (twenty processes meeting on a fresh settings store).
    private static func retryingWhileBusy(_ body: () throws(QueryError) -> Void) throws(QueryError) {
        var waited = 0  // milliseconds
        var pause = 1
        while true {
            do {
                try body()
                return
            } catch {
                let primary = error.code & 0xff
                guard primary == SQLITE_BUSY || primary == SQLITE_LOCKED, waited < 10_000 else { throw error }
                usleep(useconds_t(pause * 1000))
                waited += pause
                pause = min(pause * 2, 50)
            }
        }
    }

    private static func query(_ db: OpaquePointer, _ sql: String) throws(QueryError) -> [String] {
        var handle: OpaquePointer?
        var rc = sqlite3_prepare_v2(db, sql, -1, &handle, nil)
        guard rc == SQLITE_OK, let stmt = handle else {
            throw QueryError(code: rc, reason: String(cString: sqlite3_errmsg(db)),
                             message: message(db, rc) + " (in: \(sql))")
        }
        defer { sqlite3_finalize(stmt) }
        var rows: [String] = []
        while true {
            rc = sqlite3_step(stmt)
            if rc == SQLITE_ROW {
                rows.append(SQLiteStatement.text(stmt, 0))
            } else if rc == SQLITE_DONE {
                return rows
            } else {
                throw QueryError(code: rc, reason: String(cString: sqlite3_errmsg(db)),
                                 message: message(db, rc) + " (in: \(sql))")
            }
        }
    }
}

/// A cached prepared statement: bind (1-based), step, read columns (0-based).
/// Used under its file's owner's lock, like the file.
public final class SQLiteStatement {
    unowned let file: SQLiteFile
    let handle: OpaquePointer

    init(file: SQLiteFile, handle: OpaquePointer) {
        self.file = file
        self.handle = handle
    }

    /// Ready for new bindings (what `SQLiteFile.statement` does first).
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    public func bind(_ index: Int32, text: String) throws(SQLiteError) {
        // Explicit byte length: keeps embedded NULs, and the copy is made by SQLite (TRANSIENT).
        try check(sqlite3_bind_text64(handle, index, text, sqlite3_uint64(text.utf8.count), csqlite_transient(), UInt8(SQLITE_UTF8)), index)
    }

    /// UTF-8 bytes bound as text (no String made).
    public func bind(_ index: Int32, utf8: [UInt8]) throws(SQLiteError) {
        if utf8.isEmpty { return try bind(index, text: "") }
        let rc = utf8.withUnsafeBytes { raw in
            sqlite3_bind_text64(handle, index, raw.baseAddress!.assumingMemoryBound(to: CChar.self),
                                sqlite3_uint64(raw.count), csqlite_transient(), UInt8(SQLITE_UTF8))
        }
        try check(rc, index)
    }

    public func bind(_ index: Int32, int64: Int64) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, int64), index)
    }

    public func bind(_ index: Int32, double: Double) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, double), index)
    }

    public func bind(_ index: Int32, blob: [UInt8]) throws(SQLiteError) {
        let rc = blob.withUnsafeBytes { raw in
            // A zero-length blob, not NULL, even for an empty array.
            raw.baseAddress == nil ? sqlite3_bind_zeroblob(handle, index, 0)
                : sqlite3_bind_blob64(handle, index, raw.baseAddress, sqlite3_uint64(raw.count), csqlite_transient())
        }
        try check(rc, index)
    }

    public func bindNull(_ index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index), index)
    }

    /// One step: true when a row is ready, false when done.
    public func step(_ operation: String) throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            let error = file.error(operation, rc)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps to the end (an INSERT, UPDATE, DELETE), then resets.
    public func run(_ operation: String) throws(SQLiteError) {
        defer { reset() }
        while try step(operation) {}
    }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func text(_ column: Int32) -> String { SQLiteStatement.text(handle, column) }

    /// The column's bytes (text or blob), copied.
    public func bytes(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    static func text(_ stmt: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(stmt, column) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private func check(_ rc: Int32, _ index: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw file.error("binding parameter \(index)", rc) }
    }
}
