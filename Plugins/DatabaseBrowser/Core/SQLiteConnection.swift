// A thin, checked layer over libsqlite3 for the SQLite adapter: prepared
// statements that bind and read DBValues, and a watchdog that turns a
// deadline or a cancel from another thread into SQLITE_INTERRUPT through
// the progress handler.
import CSQLite
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Stops the statement running on a connection when its call's deadline
/// passes or another thread cancels it.
final class Watchdog: Sendable {
    enum Reason: Int { case none = 0, cancelled, timedOut }

    private let cancelled = Atomic<Bool>(false)
    private let deadline = Atomic<UInt64>(UInt64.max)
    private let reason = Atomic<Int>(0)
    let timeoutMilliseconds: Int

    init(timeoutMilliseconds: Int) { self.timeoutMilliseconds = timeoutMilliseconds }

    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    /// Starts a call: a cancel that arrived before it does not count.
    func begin() {
        cancelled.store(false, ordering: .relaxed)
        reason.store(0, ordering: .relaxed)
        deadline.store(timeoutMilliseconds > 0 ? Watchdog.now() + UInt64(timeoutMilliseconds) * 1_000_000 : .max, ordering: .relaxed)
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Called by SQLite every few hundred VM steps: true stops the statement.
    func shouldStop() -> Bool {
        if cancelled.load(ordering: .relaxed) { reason.store(Reason.cancelled.rawValue, ordering: .relaxed); return true }
        let d = deadline.load(ordering: .relaxed)
        if d != .max && Watchdog.now() > d { reason.store(Reason.timedOut.rawValue, ordering: .relaxed); return true }
        return false
    }

    var stopReason: Reason { Reason(rawValue: reason.load(ordering: .relaxed)) ?? .none }
}

/// One sqlite3 connection, used from one thread at a time.
final class SQLiteConnection {
    let db: OpaquePointer
    let path: String
    let watchdog: Watchdog

    init(path: String, writable: Bool, timeoutMilliseconds: Int) throws(DatabaseError) {
        var handle: OpaquePointer?
        // SQLITE_OPEN_READONLY is what the URI parameter mode=ro sets; the
        // flag avoids parsing the path as a URI.
        let flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let why = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw .failed("cannot open \(path): \(why)")
        }
        self.db = db
        self.path = path
        watchdog = Watchdog(timeoutMilliseconds: timeoutMilliseconds)
        _ = csqlite_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1)
        _ = csqlite_db_config_int(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        sqlite3_extended_result_codes(db, 1)
        // Another process holding a write lock is waited for, within the deadline.
        sqlite3_busy_timeout(db, Int32(timeoutMilliseconds > 0 ? min(timeoutMilliseconds, 60_000) : 60_000))
        sqlite3_progress_handler(db, 200, { context in
            Unmanaged<Watchdog>.fromOpaque(context!).takeUnretainedValue().shouldStop() ? 1 : 0
        }, Unmanaged.passUnretained(watchdog).toOpaque())
        if !writable {
            // Belt and braces: the engine refuses writes, and so does the authorizer.
            _ = try? run("PRAGMA query_only = 1")
            sqlite3_set_authorizer(db, { _, action, first, second, _, _ in
                SQLiteConnection.readOnlyAuthorizer(action, first, second)
            }, nil)
        }
        // A file that is not a database fails only on first read; fail at open instead.
        do { _ = try run("SELECT count(*) FROM sqlite_schema") } catch {
            sqlite3_close_v2(db)
            throw .invalid("\(path) is not a usable SQLite database: \(error.message)")
        }
    }

    deinit {
        cache = [:]
        sqlite3_close_v2(db)
    }

    /// Statements a session runs again and again (the page query, the
    /// schema check), prepared once: compiling costs as much as reading a
    /// 100-row page.
    private var cache: [String: PreparedStatement] = [:]

    /// Runs `body` with the cached statement for `sql`, then resets it at
    /// once, so no read transaction stays open after an early stop.
    func withStatement<T>(_ sql: String, what: String, _ body: (PreparedStatement) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        let s: PreparedStatement
        if let cached = cache[sql] {
            s = cached
        } else {
            s = try prepare(sql, what: what, persistent: true)
            if cache.count >= 32 { cache.removeAll() }
            cache[sql] = s
        }
        defer {
            sqlite3_reset(s.stmt)
            sqlite3_clear_bindings(s.stmt)
        }
        return try body(s)
    }

    /// Read-only sessions: no ATTACH/DETACH, and no pragma that sets a
    /// value; pragmas that take a table or index name only read.
    private static let readingPragmas: Set<String> = [
        "table_info", "table_xinfo", "index_info", "index_xinfo", "index_list", "foreign_key_list",
        "foreign_key_check", "integrity_check", "quick_check", "table_list", "function_list", "pragma_list",
    ]

    static func readOnlyAuthorizer(_ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?) -> Int32 {
        switch action {
        case SQLITE_ATTACH, SQLITE_DETACH: return SQLITE_DENY
        case SQLITE_PRAGMA:
            // first is the pragma's name, second its argument (NULL when it only reads).
            guard second != nil, let first else { return SQLITE_OK }
            return readingPragmas.contains(String(cString: first).lowercased()) ? SQLITE_OK : SQLITE_DENY
        default: return SQLITE_OK
        }
    }

    var message: String { String(cString: sqlite3_errmsg(db)) }

    /// The error for a failed step or prepare: interrupts become CANCELLED
    /// with the reason; everything else carries SQLite's message.
    func error(_ rc: Int32, _ doing: String) -> DatabaseError {
        if rc & 0xff == SQLITE_INTERRUPT {
            switch watchdog.stopReason {
            case .timedOut: return .cancelled("\(doing): timed out after \(watchdog.timeoutMilliseconds) ms; nothing was changed")
            default: return .cancelled("\(doing): cancelled; nothing was changed")
            }
        }
        if rc & 0xff == SQLITE_AUTH {
            return .unsupported("\(doing): not allowed in a read-only session (\(message))")
        }
        if rc & 0xff == SQLITE_READONLY {
            return .unsupported("\(doing): the session is read-only (\(message))")
        }
        if rc & 0xff == SQLITE_CONSTRAINT || rc & 0xff == SQLITE_MISMATCH {
            return .invalid("\(doing): \(message)")
        }
        return .failed("\(doing): \(message)")
    }

    /// Prepares exactly one statement. Extra SQL after it is refused.
    func prepare(_ sql: String, what: String = "SQL", persistent: Bool = false) throws(DatabaseError) -> PreparedStatement {
        var stmt: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        var bytes = Array(sql.utf8)
        bytes.append(0)
        let (rc, consumed) = bytes.withUnsafeBufferPointer { buf -> (Int32, Int) in
            buf.withMemoryRebound(to: CChar.self) { c in
                let rc = sqlite3_prepare_v3(db, c.baseAddress, Int32(c.count), persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &stmt, &tail)
                return (rc, tail.map { $0 - c.baseAddress! } ?? 0)
            }
        }
        guard rc == SQLITE_OK else {
            let offset = sqlite3_error_offset(db)
            let at = offset >= 0 ? " (at byte \(offset + 1) of the \(what))" : ""
            sqlite3_finalize(stmt)
            if rc & 0xff == SQLITE_AUTH { throw error(rc, "\(what)") }
            throw .invalid("\(what): \(message)\(at)")
        }
        guard let stmt else { throw .invalid("\(what): no statement (the text is empty or only comments)") }
        if consumed < bytes.count - 1 {
            // More text: only whitespace and comments may follow, which SQLite
            // prepares to no statement.
            var next: OpaquePointer?
            let rest = Array(bytes[consumed...])
            let rc2 = rest.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { sqlite3_prepare_v3(db, $0.baseAddress, Int32($0.count), 0, &next, nil) }
            }
            sqlite3_finalize(next)
            if rc2 != SQLITE_OK || next != nil {
                sqlite3_finalize(stmt)
                throw .invalid("\(what): one statement at a time; more SQL follows at byte \(consumed + 1)")
            }
        }
        return PreparedStatement(stmt, connection: self)
    }

    /// Runs a statement that returns nothing the caller needs.
    @discardableResult
    func run(_ sql: String, _ values: [DBValue] = []) throws(DatabaseError) -> Int {
        let s = try prepare(sql)
        try s.bind(values)
        while try s.step() {}
        return Int(sqlite3_changes64(db))
    }

    /// The rows of a query, all of them.
    func rows(_ sql: String, _ values: [DBValue] = []) throws(DatabaseError) -> [[DBValue]] {
        let s = try prepare(sql)
        try s.bind(values)
        var out: [[DBValue]] = []
        while try s.step() { out.append(s.row()) }
        return out
    }

    var isAutocommit: Bool { sqlite3_get_autocommit(db) != 0 }
}

/// A prepared statement, finalized when released.
final class PreparedStatement {
    static let empty: StaticString = ""
    let stmt: OpaquePointer
    unowned let connection: SQLiteConnection

    init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(stmt) }

    var isReadOnly: Bool { sqlite3_stmt_readonly(stmt) != 0 }
    var parameterCount: Int { Int(sqlite3_bind_parameter_count(stmt)) }
    var columnCount: Int { Int(sqlite3_column_count(stmt)) }
    var columnNames: [String] {
        (0..<Int32(columnCount)).map { i -> String in
            guard let name = sqlite3_column_name(stmt, i) else { return "" }
            return String(cString: name)
        }
    }

    func bind(_ values: [DBValue], from first: Int32 = 1) throws(DatabaseError) {
        for (i, v) in values.enumerated() {
            let index = first + Int32(i)
            let rc: Int32
            switch v {
            case .null: rc = sqlite3_bind_null(stmt, index)
            case .integer(let x): rc = sqlite3_bind_int64(stmt, index, x)
            case .real(let x): rc = sqlite3_bind_double(stmt, index, x)
            case .text(var s):
                // With its length, so an embedded NUL survives; never a NULL
                // pointer, which would bind NULL instead of ''.
                rc = s.withUTF8 { b in
                    let p = UnsafeRawPointer(b.baseAddress ?? PreparedStatement.empty.utf8Start).assumingMemoryBound(to: CChar.self)
                    return sqlite3_bind_text64(stmt, index, p, sqlite3_uint64(b.count), csqlite_transient(), UInt8(SQLITE_UTF8))
                }
            case .blob(let bytes):
                // An empty blob is zeroblob(0): a NULL pointer would bind NULL.
                rc = bytes.isEmpty ? sqlite3_bind_zeroblob(stmt, index, 0)
                    : bytes.withUnsafeBytes { sqlite3_bind_blob64(stmt, index, $0.baseAddress, sqlite3_uint64($0.count), csqlite_transient()) }
            }
            guard rc == SQLITE_OK else { throw .invalid("cannot bind parameter \(index): \(connection.message)") }
        }
    }

    /// True when a row is ready; false when the statement is done.
    func step(_ doing: @autoclosure () -> String = "query") throws(DatabaseError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.error(rc, doing())
    }

    func value(_ i: Int32) -> DBValue {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(stmt, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(stmt, i))
        case SQLITE_TEXT:
            let p = sqlite3_column_text(stmt, i)
            let n = Int(sqlite3_column_bytes(stmt, i))
            return .text(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
        case SQLITE_BLOB:
            let p = sqlite3_column_blob(stmt, i)
            let n = Int(sqlite3_column_bytes(stmt, i))
            guard let p, n > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default: return .null
        }
    }

    func row(from first: Int = 0) -> [DBValue] {
        (first..<columnCount).map { value(Int32($0)) }
    }

    func text(_ i: Int32) -> String? {
        guard sqlite3_column_type(stmt, i) != SQLITE_NULL, let p = sqlite3_column_text(stmt, i) else { return nil }
        return String(cString: p)
    }

    func int(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
}

extension DBValue {
    var asText: String? { if case .text(let s) = self { s } else { nil } }
    var asInt: Int64? { if case .integer(let i) = self { i } else { nil } }
}
