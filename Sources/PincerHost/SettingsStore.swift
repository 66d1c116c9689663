// The host's persistent settings store: one SQLite file holding
// (namespace, key) -> value strings.
//
// Deliberately Foundation-free (Glibc + libsqlite3 only) to keep start-up fast;
// opening, setting a damaged file aside and statements are PincerSQLite's.

import Glibc
import PincerSQLite
import Synchronization

public struct StoreError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }

    init(_ message: String) { self.message = message }
}

public final class SettingsStore: @unchecked Sendable {
    // Safety of @unchecked Sendable: the file and its prepared statements are
    // only touched while holding `lock` (or in init/deinit, where no other
    // reference exists).

    /// The schema this code writes and understands (`PRAGMA user_version` 1).
    static let schema = SQLiteSchema(migrations: ["""
        CREATE TABLE IF NOT EXISTS settings(
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY(namespace, key)
        ) WITHOUT ROWID
        """], synchronousFull: true)
    static let fileName = "settings.sqlite3"

    /// Full path of the database file.
    public let path: String

    /// Set when an unreadable file was found at `path` and moved aside; says where to.
    public var setAsideWarning: String? { file.setAsideWarning }

    private let file: SQLiteFile
    private let lock = Mutex(())
    /// The thread running an `update` callback (0: none). A call into the
    /// store from that callback would wait for its own lock; it fails instead.
    private let updatingThread = Atomic<UInt>(0)

    /// Opens (creating if needed, with parent directories, mode 0700) `<directory>/settings.sqlite3`,
    /// a file only its owner can read (0600, whatever the umask; SQLite gives its -wal and -shm the same mode).
    /// An unreadable file is set aside (PincerSQLite), never deleted.
    public init(directory: String) throws(StoreError) {
        guard !directory.isEmpty else {
            throw StoreError("settings store: no directory given (empty path)")
        }
        let path = Self.join(directory, Self.fileName)
        do throws(SQLiteError) {
            file = try SQLiteFile.open(path: path, what: "settings store", schema: Self.schema)
        } catch {
            throw StoreError(error.description)
        }
        self.path = path
    }

    // MARK: Public operations

    public func get(namespace: String, key: String) throws(StoreError) -> String? {
        let op = "reading \(Self.describe(namespace, key))"
        try refuseReentry(op)
        return try locked { () throws(SQLiteError) -> String? in
            try select(namespace: namespace, key: key, op)
        }
    }

    /// nil removes the key.
    public func set(namespace: String, key: String, value: String?) throws(StoreError) {
        let op = (value == nil ? "removing " : "writing ") + Self.describe(namespace, key)
        try refuseReentry(op)
        try locked { () throws(SQLiteError) in
            try file.transaction(op) { () throws(SQLiteError) in
                try write(namespace: namespace, key: key, value: value, op)
            }
        }
    }

    /// Several changes in one transaction (all or nothing).
    public func set(namespace: String, values: [(key: String, value: String?)]) throws(StoreError) {
        if values.isEmpty { return }
        let op = "writing \(values.count) setting(s) in namespace \"\(namespace)\""
        try refuseReentry(op)
        try locked { () throws(SQLiteError) in
            try file.transaction(op) { () throws(SQLiteError) in
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
        return try locked { () throws(SQLiteError) -> Change in
            // keep/cancel write nothing, so committing the (read-only) transaction is the same as rolling it back.
            try file.transaction(op) { () throws(SQLiteError) -> Change in
                let current = try select(namespace: namespace, key: key, op)
                updatingThread.store(Self.currentThread, ordering: .releasing)
                let decided = decide(current)
                updatingThread.store(0, ordering: .releasing)
                switch decided {
                case .keep, .cancel:
                    break
                case .set(let value):
                    try write(namespace: namespace, key: key, value: value, op)
                case .remove:
                    try write(namespace: namespace, key: key, value: nil, op)
                }
                return decided
            }
        }
    }

    /// All settings of a namespace, sorted by key (byte order of the UTF-8
    /// text), read in one transaction; with `prefix`, those whose key starts
    /// with it (compared byte for byte).
    public func all(namespace: String, prefix: String = "") throws(StoreError) -> [(key: String, value: String)] {
        let op = "listing namespace \"\(namespace)\""
        try refuseReentry(op)
        let rows = try locked { () throws(SQLiteError) -> [(key: String, value: String)] in
            let stmt = try file.statement("SELECT key, value FROM settings WHERE namespace = ?1 ORDER BY key")
            defer { stmt.reset() }
            try stmt.bind(1, text: namespace)
            var result: [(key: String, value: String)] = []
            while try stmt.step(op) {
                result.append((key: stmt.text(0), value: stmt.text(1)))
            }
            return result
        }
        return prefix.isEmpty ? rows : rows.filter { $0.key.utf8.starts(with: prefix.utf8) }
    }

    /// The connection's `PRAGMA synchronous` (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA).
    public var synchronousLevel: Int {
        lock.withLock { _ in (try? file.scalar("PRAGMA synchronous")).flatMap { $0 }.map(Int.init) ?? -1 }
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

    /// Runs `body` holding the lock; a failure becomes a StoreError naming the file.
    private func locked<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        do throws(SQLiteError) {
            return try lock.withLock { _ throws(SQLiteError) -> T in try body() }
        } catch {
            throw StoreError(error.description)
        }
    }

    private func refuseReentry(_ op: String) throws(StoreError) {
        if updatingThread.load(ordering: .acquiring) == Self.currentThread {
            throw StoreError("settings store \(path): \(op) was called from inside an update of the same store "
                + "(an update callback must not use the settings; it would wait for its own lock)")
        }
    }

    private func select(namespace: String, key: String, _ op: String) throws(SQLiteError) -> String? {
        let stmt = try file.statement("SELECT value FROM settings WHERE namespace = ?1 AND key = ?2")
        defer { stmt.reset() }
        try stmt.bind(1, text: namespace)
        try stmt.bind(2, text: key)
        return try stmt.step(op) ? stmt.text(0) : nil
    }

    private func write(namespace: String, key: String, value: String?, _ op: String) throws(SQLiteError) {
        let stmt = try file.statement(value == nil ? "DELETE FROM settings WHERE namespace = ?1 AND key = ?2"
            : "INSERT OR REPLACE INTO settings(namespace, key, value) VALUES (?1, ?2, ?3)")
        try stmt.bind(1, text: namespace)
        try stmt.bind(2, text: key)
        if let value { try stmt.bind(3, text: value) }
        try stmt.run(op)
    }

    private static func describe(_ namespace: String, _ key: String) -> String {
        "setting \"\(key)\" in namespace \"\(namespace)\""
    }

    fileprivate static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
