import Dispatch
import PincerPluginKit
import PincerSQLite
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Unix time in seconds.
public enum WallClock {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The persisted log: `<state>/network-log.sqlite` (PincerSQLite), one row
/// per finished entry with the columns filters and views need, indexed,
/// and the entry's redacted JSON; a stored body's bytes are in a BLOB
/// column of their own (written and read as they are: no UTF-8 check, no
/// escaping into a JSON string and back). Opening reads no rows (no integrity scan
/// either: a file that is not a database is still found and set aside).
/// Entries are queued and written in batches, one transaction each; reads
/// go page by page by id (keyset), so no view holds the whole log. Ids are
/// the database's (AUTOINCREMENT): unique across processes writing at once
/// and never reused, even after `clear`.
public final class LogDatabase: @unchecked Sendable {
    // Safety of @unchecked Sendable: `file` (and its statements) is only
    // used holding `lock`; the queue has its own mutex.

    public static let fileName = "network-log.sqlite"
    /// The log before it moved to SQLite: one entry's JSON per line.
    public static let legacyFileName = "network-log.ndjson"

    /// A batch is written when this many entries (or `batchBytes` of JSON) are queued.
    public static let batchEntries = 1000
    public static let batchBytes = 8 << 20
    /// Size of a page read from the database.
    public static let pageSize = 256

    static let schema = SQLiteSchema(migrations: ["""
        CREATE TABLE entries(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            recorded_at REAL NOT NULL,
            started_at REAL NOT NULL,
            method TEXT NOT NULL,
            method_key TEXT NOT NULL,
            host TEXT NOT NULL,
            url TEXT NOT NULL,
            status INTEGER,
            state TEXT NOT NULL,
            duration REAL NOT NULL,
            response_size INTEGER NOT NULL,
            source TEXT NOT NULL,
            stubbed INTEGER NOT NULL,
            json BLOB NOT NULL
        );
        CREATE INDEX entries_recorded_at ON entries(recorded_at);
        CREATE INDEX entries_started_at ON entries(started_at);
        CREATE INDEX entries_host ON entries(host);
        CREATE INDEX entries_status ON entries(status);
        CREATE INDEX entries_method ON entries(method_key);
        CREATE TABLE imports(
            source TEXT PRIMARY KEY,
            imported INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            at REAL NOT NULL
        );
        """,
        // Version 2: stored bodies beside the JSON (whose body has no text
        // then); NULL in a version 1 row, whose JSON holds the body.
        """
        ALTER TABLE entries ADD COLUMN request_body BLOB;
        ALTER TABLE entries ADD COLUMN response_body BLOB;
        """],
        // NORMAL: a commit survives the process crashing, not the machine
        // losing power (the README says so); FULL would fsync every batch.
        synchronousFull: false,
        // Constant-time open: quick_check reads every page.
        quickCheckAtOpen: false,
        // Bodies of kilobytes: a 64 KiB page holds a dozen rows whole, and an
        // import of 10,000 entries writes 3,000 pages instead of 46,000.
        pageSize: 65536)

    public let path: String
    /// For people: a damaged file set aside, an old log migrated (with its damaged lines).
    public private(set) var warnings: [String] = []

    private let file: SQLiteFile
    private let lock = Mutex<Void>(())

    private struct Row: Sendable {
        var recordedAt: Double, startedAt: Double, method: String, methodKey: String, host: String, url: String
        var status: Int?, state: String, duration: Double, responseSize: Int, source: String, stubbed: Bool
        var json: [UInt8]
        /// The stored bodies' bytes (nil: not stored; the JSON says what the body is).
        var requestBody: [UInt8]?, responseBody: [UInt8]?
        var bytes: Int { json.count + (requestBody?.count ?? 0) + (responseBody?.count ?? 0) }
    }
    private struct Queue: Sendable {
        var rows: [Row] = []
        var bytes = 0
    }
    private let queue = Mutex(Queue())
    private let appendTransactions = Atomic<Int>(0)
    /// Full batches are written behind the caller, one at a time, in order
    /// (an import parses the next batch meanwhile); `flush` waits for them.
    private let writer = DispatchQueue(label: "pincer.net.log-writer")
    private let writesBehind = Atomic<Int>(0)
    /// Batches that may be handed to the writer before one is written.
    private let behindSlots = DispatchSemaphore(value: LogDatabase.batchesBehind)
    static let batchesBehind = 2
    /// Held while rows are taken from the queue and handed to the writer.
    private let ordering = Mutex<Void>(())
    /// Why a batch written behind failed; thrown by the next `flush`.
    private let failedBehind = Mutex<SQLiteError?>(nil)

    /// Transactions that appended entries so far (each writes a whole batch).
    public var batchesWritten: Int {
        settle()
        return appendTransactions.load(ordering: .relaxed)
    }

    private init(path: String, file: SQLiteFile) {
        self.path = path
        self.file = file
    }

    /// Opens (creating) `<directory>/network-log.sqlite`; a damaged file is
    /// set aside and a new log started. An old `network-log.ndjson` beside
    /// it is imported once (each entry through `redact`), then renamed
    /// `.migrated`.
    public static func open(directory: String, redact: (NetworkEntry) -> NetworkEntry) throws(SQLiteError) -> LogDatabase {
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let path = dir + "/" + fileName
        let file = try SQLiteFile.open(path: path, what: "network log", schema: schema)
        // Checkpoint every 64 MB of WAL rather than SQLite's 4 MB: a
        // checkpoint runs in the writer's commit (copying, two syncs), and
        // the import waits for the writer; at 16 MB an import of 10,000
        // entries (60 MB) took 40 ms longer. The setting counts pages, whose
        // size a file keeps from its creation. The WAL file is cut back to
        // 16 MB when it restarts, so a big import leaves no 64 MB behind.
        let filePageSize = max(512, Int(try file.scalar("PRAGMA page_size") ?? 4096))
        try file.execute("PRAGMA wal_autocheckpoint=\((64 << 20) / filePageSize)")
        try file.execute("PRAGMA journal_size_limit=\(16 << 20)")
        let db = LogDatabase(path: path, file: file)
        if let aside = file.setAsideWarning { db.warnings.append(aside + " (the log starts empty)") }
        if let report = try db.migrate(dir + "/" + legacyFileName, redact: redact) { db.warnings.append(report) }
        return db
    }

    // MARK: Writing

    /// Queues a finished entry (serialised once, now) for the next batch;
    /// writes the batch at once when it is full. Returns true when entries
    /// are left waiting for `flush` (a timer's or the command's).
    @discardableResult
    public func enqueue(_ entry: NetworkEntry) throws(SQLiteError) -> Bool {
        try enqueue(rows: [Self.row(entry)])
    }

    /// Queues finished entries, in order, as `enqueue` does one: their rows
    /// (the serialising) are made on every processor (an import hands over
    /// a thousand at a time).
    @discardableResult
    public func enqueue(contentsOf entries: [NetworkEntry]) throws(SQLiteError) -> Bool {
        try enqueue(rows: Parallel.map(entries, Self.row))
    }

    private func enqueue(rows: [Row]) throws(SQLiteError) -> Bool {
        var start = 0
        while start < rows.count {
            let full = queue.withLock { q -> Bool in
                while start < rows.count && q.rows.count < Self.batchEntries && q.bytes < Self.batchBytes {
                    q.rows.append(rows[start])
                    q.bytes += rows[start].bytes
                    start += 1
                }
                return q.rows.count >= Self.batchEntries || q.bytes >= Self.batchBytes
            }
            if full { try writeBehind() }
        }
        return queue.withLock { !$0.rows.isEmpty }
    }

    /// Hands what is queued to the writer's thread, which writes batches
    /// one at a time in the order they were taken. At most `batchesBehind`
    /// batches are handed over and not yet written: a caller faster than
    /// the disk waits here, so the queue stays bounded, and one that is
    /// briefly faster (an import while the writer checkpoints) does not.
    private func writeBehind() throws(SQLiteError) {
        behindSlots.wait()
        if let error = takeFailure() {
            behindSlots.signal()
            throw error
        }
        ordering.withLock { _ in
            let rows = takeQueued()
            guard !rows.isEmpty else {
                behindSlots.signal()
                return
            }
            writesBehind.add(1, ordering: .acquiringAndReleasing)
            writer.async { [self] in
                defer {
                    writesBehind.subtract(1, ordering: .acquiringAndReleasing)
                    behindSlots.signal()
                }
                do throws(SQLiteError) { _ = try write(rows) } catch {
                    failedBehind.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
    }

    /// Writes every queued entry in one transaction, after the batches
    /// written behind (whose failure is thrown here): when this returns,
    /// everything queued before the call is committed. Returns how many
    /// entries this call wrote.
    @discardableResult
    public func flush() throws(SQLiteError) -> Int {
        let written = ordering.withLock { _ -> Result<Int, SQLiteError> in
            let rows = takeQueued()
            return writer.sync { Result { () throws(SQLiteError) -> Int in try write(rows) } }
        }
        if let error = takeFailure() { throw error }
        return try written.get()
    }

    /// Waits for the batches written behind (readers see what was queued before).
    private func settle() {
        if writesBehind.load(ordering: .acquiring) > 0 { writer.sync {} }
    }

    private func takeFailure() -> SQLiteError? {
        failedBehind.withLock { e -> SQLiteError? in
            defer { e = nil }
            return e
        }
    }

    private func takeQueued() -> [Row] {
        queue.withLock { q -> [Row] in
            defer { q = Queue() }
            return q.rows
        }
    }

    private func write(_ rows: [Row]) throws(SQLiteError) -> Int {
        if rows.isEmpty { return 0 }
        return try lock.withLock { _ throws(SQLiteError) -> Int in
            try file.transaction("appending \(rows.count) entr\(rows.count == 1 ? "y" : "ies")") { () throws(SQLiteError) in
                for row in rows { try insert(row) }
            }
            appendTransactions.add(1, ordering: .relaxed)
            return rows.count
        }
    }

    /// Entries waiting in the queue.
    public var queued: Int { queue.withLock { $0.rows.count } }

    /// Appends entries now, in one transaction (what `flush` does with the queue).
    public func append(_ entries: [NetworkEntry]) throws(SQLiteError) {
        let rows = Parallel.map(entries, Self.row)
        settle()
        try lock.withLock { _ throws(SQLiteError) in
            try file.transaction("appending \(rows.count) entries") { () throws(SQLiteError) in
                for row in rows { try insert(row) }
            }
            appendTransactions.add(1, ordering: .relaxed)
        }
    }

    private static func row(_ entry: NetworkEntry) -> Row {
        var e = entry
        // The row's id is the entry's; the JSON's would be this process's only.
        e.id = 0
        // Stored bodies go to their columns; the JSON keeps `"payload":"stored"` and an empty text.
        let requestBody = e.requestBody.bytes, responseBody = e.responseBody.bytes
        if requestBody != nil { e.requestBody.payload = .stored([]) }
        if responseBody != nil { e.responseBody.payload = .stored([]) }
        return Row(recordedAt: e.recordedAt, startedAt: e.startedAt, method: e.method, methodKey: e.method.uppercased(),
                   host: URLParts(e.url)?.host ?? "", url: e.url, status: e.status, state: e.state.rawValue,
                   duration: e.duration, responseSize: e.responseBody.size, source: e.source.rawValue, stubbed: e.stubbed,
                   json: e.jsonBytes, requestBody: requestBody, responseBody: responseBody)
    }

    private func insert(_ row: Row) throws(SQLiteError) {
        let s = try file.statement("""
            INSERT INTO entries(recorded_at, started_at, method, method_key, host, url, status, state,
                                duration, response_size, source, stubbed, json, request_body, response_body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
            """)
        try s.bind(1, double: row.recordedAt)
        try s.bind(2, double: row.startedAt)
        try s.bind(3, text: row.method)
        try s.bind(4, text: row.methodKey)
        try s.bind(5, text: row.host)
        try s.bind(6, text: row.url)
        if let status = row.status { try s.bind(7, int64: Int64(status)) } else { try s.bindNull(7) }
        try s.bind(8, text: row.state)
        try s.bind(9, double: row.duration)
        try s.bind(10, int64: Int64(row.responseSize))
        try s.bind(11, text: row.source)
        try s.bind(12, int64: row.stubbed ? 1 : 0)
        try s.bind(13, utf8: row.json)
        if let b = row.requestBody { try s.bind(14, blob: b) } else { try s.bindNull(14) }
        if let b = row.responseBody { try s.bind(15, blob: b) } else { try s.bindNull(15) }
        try s.run("appending an entry")
    }

    /// Retention: deletes the entries recorded before `cutoff` (Unix
    /// seconds), through the recorded_at index. Returns how many.
    @discardableResult
    public func deleteRecorded(before cutoff: Double) throws(SQLiteError) -> Int {
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> Int in
            try file.transaction("deleting entries older than the retention period") { () throws(SQLiteError) -> Int in
                let s = try file.statement("DELETE FROM entries WHERE recorded_at < ?1")
                try s.bind(1, double: cutoff)
                try s.run("deleting old entries")
                return file.changes
            }
        }
    }

    /// Removes every entry (queued ones too). Returns how many were stored.
    @discardableResult
    public func clear() throws(SQLiteError) -> Int {
        queue.withLock { $0 = Queue() }
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> Int in
            try file.transaction("clearing the log") { () throws(SQLiteError) -> Int in
                try file.statement("DELETE FROM entries").run("clearing the log")
                return file.changes
            }
        }
    }

    // MARK: Reading

    /// How many entries the database holds.
    public func count() throws(SQLiteError) -> Int {
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> Int in Int(try file.scalar("SELECT count(*) FROM entries") ?? 0) }
    }

    /// The largest id so far (0 when empty).
    public func lastID() throws(SQLiteError) -> UInt64 {
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> UInt64 in UInt64(max(0, try file.scalar("SELECT coalesce(max(id), 0) FROM entries") ?? 0)) }
    }

    /// One entry by id.
    public func entry(_ id: UInt64) throws(SQLiteError) -> NetworkEntry? {
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> NetworkEntry? in
            let s = try file.statement("SELECT id, json, request_body, response_body FROM entries WHERE id = ?1")
            defer { s.reset() }
            try s.bind(1, int64: Int64(clamping: id))
            return try s.step("reading entry \(id)") ? try decode(s) : nil
        }
    }

    /// What a page read yields per row.
    public enum Detail: Sendable {
        /// The whole entry (its JSON decoded).
        case full
        /// What the columns hold (id, method, url, status, state, duration,
        /// response size, source, stubbed, start): enough for net.list and
        /// net.stats without decoding JSON. Bodies and headers are empty.
        case columns
    }

    /// The entries matching `filter` with id > `after`, in id order, at
    /// most `limit`: one page, read with the filter's indexed terms in the
    /// WHERE clause and the rest checked per row. Returns the page and the
    /// id to continue after (nil at the end).
    public func page(filter: NetworkFilter, after: UInt64 = 0, limit: Int = pageSize, detail: Detail = .full,
                     descending: Bool = false) throws(SQLiteError) -> (entries: [NetworkEntry], next: UInt64?) {
        let condition = Self.numbered(filter.sqlCondition)
        // Rows are decoded when the filter must see the whole entry, or the caller wants it.
        let needFull = detail == .full || condition?.exact != true
        let sql = Self.pageSQL(condition, needFull: needFull, descending: descending, fromTheEnd: descending && after == 0)
        settle()
        return try lock.withLock { _ throws(SQLiteError) -> ([NetworkEntry], UInt64?) in
            let s = try pageStatement(sql, after: after, limit: limit, condition)
            defer { s.reset() }
            // The rows' bytes are copied under the lock; their JSON is decoded after it, on every processor.
            var raws: [RawRow] = []
            var lights: [NetworkEntry] = []
            var last: UInt64 = after
            while try s.step("reading a page of the log") {
                last = UInt64(s.int64(0))
                if needFull { raws.append(RawRow(s, jsonColumn: 10)) }
                if detail == .columns { lights.append(Self.light(s)) }
            }
            let rows = needFull ? raws.count : lights.count
            guard needFull else { return (lights, rows < limit ? nil : last) }
            let path = self.path
            let decoded = Parallel.map(raws) { raw in Result { () throws(SQLiteError) -> NetworkEntry in try raw.decode(path: path) } }
            var result: [NetworkEntry] = []
            for (i, d) in decoded.enumerated() {
                let full = try d.get()
                if condition?.exact != true, !filter.matches(full) { continue }
                result.append(detail == .full ? full : lights[i])
            }
            return (result, rows < limit ? nil : last)
        }
    }

    /// A page query (`pageSQL`) with its bindings: ?1 the id to continue
    /// after, ?2 the row limit, then the condition's arguments. Under `lock`;
    /// the caller resets it.
    private func pageStatement(_ sql: String, after: UInt64, limit: Int,
                               _ condition: NetworkFilter.SQLCondition?) throws(SQLiteError) -> SQLiteStatement {
        let s = try file.statement(sql)
        do {
            try s.bind(1, int64: Int64(clamping: after))
            try s.bind(2, int64: Int64(limit))
            try LogDatabase.bind(condition?.arguments ?? [], to: s, from: 3)
        } catch {
            s.reset()
            throw error
        }
        return s
    }

    /// Every entry matching `filter`, in id order, a page of `limit` rows at
    /// a time, each turned into an `R` by `transform` on every processor in
    /// the same pass that decodes it: a page's entries are never held
    /// together, only their results, which `body` gets page by page
    /// (net.export-har writes each entry's HAR bytes so).
    public func forEachPage<R: Sendable>(filter: NetworkFilter, limit: Int = 1024,
                                         transform: @escaping @Sendable (NetworkEntry) -> R,
                                         _ body: ([R]) throws -> Void) throws {
        let condition = Self.numbered(filter.sqlCondition)
        let exact = condition?.exact == true
        let sql = Self.pageSQL(condition, needFull: true, descending: false, fromTheEnd: false)
        let path = self.path
        var after: UInt64 = 0
        while true {
            settle()
            // The rows' bytes are copied under the lock; they are decoded after it.
            let raws = try lock.withLock { _ throws(SQLiteError) -> [RawRow] in
                let s = try pageStatement(sql, after: after, limit: limit, condition)
                defer { s.reset() }
                var raws: [RawRow] = []
                while try s.step("reading a page of the log") { raws.append(RawRow(s, jsonColumn: 10)) }
                return raws
            }
            guard let last = raws.last else { return }
            let results = Parallel.map(raws) { raw in
                Result { () throws(SQLiteError) -> R? in
                    let entry = try raw.decode(path: path)
                    return exact || filter.matches(entry) ? transform(entry) : nil
                }
            }
            var page: [R] = []
            page.reserveCapacity(results.count)
            for r in results { if let value = try r.get() { page.append(value) } }
            try body(page)
            if raws.count < limit { return }
            after = last.id
        }
    }

    /// A row's entry as stored: its id, JSON and body columns (copied out of the statement).
    private struct RawRow: Sendable {
        let id: UInt64
        let json: [UInt8]
        let requestBody: [UInt8]?, responseBody: [UInt8]?

        init(_ s: SQLiteStatement, jsonColumn: Int32) {
            id = UInt64(s.int64(0))
            json = s.bytes(jsonColumn)
            requestBody = s.isNull(jsonColumn + 1) ? nil : s.bytes(jsonColumn + 1)
            responseBody = s.isNull(jsonColumn + 2) ? nil : s.bytes(jsonColumn + 2)
        }

        /// A version 2 row's bodies that the JSON says are stored are in their columns.
        func decode(path: String) throws(SQLiteError) -> NetworkEntry {
            do {
                var e = try NetworkEntry(json: JSON.parse(bytes: json))
                e.id = id
                if let b = requestBody, e.requestBody.bytes != nil { e.requestBody.payload = .stored(b) }
                if let b = responseBody, e.responseBody.bytes != nil { e.responseBody.payload = .stored(b) }
                return e
            } catch {
                throw SQLiteError(path: path, operation: "reading entry \(id)", code: 0, message: "\(error)",
                                  description: "network log \(path): entry \(id) is not a valid entry: \(error)")
            }
        }
    }

    /// Every entry matching `filter`, page by page, in id order: `body`
    /// sees each (and may stop by returning false); at most a page is held.
    public func forEach(filter: NetworkFilter, detail: Detail = .full, _ body: (NetworkEntry) throws -> Bool) throws {
        var after: UInt64 = 0
        while true {
            let (entries, next) = try page(filter: filter, after: after, detail: detail)
            for e in entries {
                if try !body(e) { return }
            }
            guard let next else { return }
            after = next
        }
    }

    /// The query plan SQLite chooses for a page with `filter` (EXPLAIN QUERY PLAN's details).
    public func queryPlan(filter: NetworkFilter) throws(SQLiteError) -> [String] {
        let condition = Self.numbered(filter.sqlCondition)
        let sql = "EXPLAIN QUERY PLAN " + Self.pageSQL(condition, needFull: true, descending: false, fromTheEnd: false)
        return try lock.withLock { _ throws(SQLiteError) -> [String] in
            let s = try file.statement(sql)
            defer { s.reset() }
            try s.bind(1, int64: 0)
            try s.bind(2, int64: 1)
            try LogDatabase.bind(condition?.arguments ?? [], to: s, from: 3)
            var plan: [String] = []
            while try s.step("explaining a query") { plan.append(s.text(3)) }
            return plan
        }
    }

    /// A page's query: ?1 the keyset (the last id seen), ?2 the limit, ?3… the condition's.
    private static func pageSQL(_ condition: NetworkFilter.SQLCondition?, needFull: Bool, descending: Bool, fromTheEnd: Bool) -> String {
        let columns = "id, started_at, method, url, status, state, duration, response_size, source, stubbed"
            + (needFull ? ", json, request_body, response_body" : "")
        let keyset = fromTheEnd ? "?1 = ?1" : descending ? "id < ?1" : "id > ?1"
        return "SELECT \(columns) FROM entries WHERE \(keyset) AND (\(condition?.sql ?? "1")) ORDER BY id \(descending ? "DESC" : "ASC") LIMIT ?2"
    }

    /// The condition with its `?`s numbered from ?3 (?1 and ?2 are the
    /// page's keyset and limit; a bare `?` would take the number after ?1).
    private static func numbered(_ condition: NetworkFilter.SQLCondition?) -> NetworkFilter.SQLCondition? {
        guard var c = condition else { return nil }
        var sql = ""
        var n = 3
        for ch in c.sql {
            if ch == "?" {
                sql += "?\(n)"
                n += 1
            } else {
                sql.append(ch)
            }
        }
        c.sql = sql
        return c
    }

    /// The entry of a row: its JSON at `jsonColumn`, the request and response
    /// bodies' columns after it.
    /// A filter's SQL arguments, bound from parameter `first` on.
    private static func bind(_ arguments: [SQLArgument], to s: SQLiteStatement, from first: Int32) throws(SQLiteError) {
        var index = first
        for argument in arguments {
            switch argument {
            case .text(let t): try s.bind(index, text: t)
            case .int(let i): try s.bind(index, int64: i)
            case .double(let d): try s.bind(index, double: d)
            }
            index += 1
        }
    }

    private func decode(_ s: SQLiteStatement, jsonColumn: Int32 = 1) throws(SQLiteError) -> NetworkEntry {
        try RawRow(s, jsonColumn: jsonColumn).decode(path: path)
    }

    /// An entry from the columns alone (Detail.columns).
    private static func light(_ s: SQLiteStatement) -> NetworkEntry {
        var e = NetworkEntry(source: EntrySource(rawValue: s.text(8)) ?? .imported, startedAt: s.double(1), method: s.text(2), url: s.text(3))
        e.id = UInt64(s.int64(0))
        e.status = s.isNull(4) ? nil : Int(s.int64(4))
        e.state = EntryState(rawValue: s.text(5)) ?? .complete
        // duration is the timings' total: all of it as wait.
        e.timings.wait = s.double(6)
        e.responseBody = Body(payload: .none, size: Int(s.int64(7)), mimeType: "")
        e.stubbed = s.int64(9) != 0
        return e
    }

    // MARK: Migration of the NDJSON log

    /// Imports the old log file once, in one transaction: a row in
    /// `imports` names the file (device, inode, size, modification time),
    /// so a second process starting at the same time (it waits for the
    /// write lock, then finds the row) or a crash before the rename does
    /// not import it twice. The file is then renamed `.migrated`, never deleted.
    private func migrate(_ legacy: String, redact: (NetworkEntry) -> NetworkEntry) throws(SQLiteError) -> String? {
        guard let identity = Self.identity(legacy) else { return nil }
        let outcome = try lock.withLock { _ throws(SQLiteError) -> (imported: Int, skipped: [(line: Int, reason: String)])? in
            try file.transaction("importing \(legacy)") { () throws(SQLiteError) -> (imported: Int, skipped: [(line: Int, reason: String)])? in
                let seen = try file.statement("SELECT 1 FROM imports WHERE source = ?1")
                defer { seen.reset() }
                try seen.bind(1, text: identity)
                if try seen.step("checking whether \(legacy) was imported") { return nil }
                // Another process may have imported and renamed it while we waited for the lock.
                guard Self.identity(legacy) == identity else { return nil }
                let contents: LegacyLog.Contents
                do throws(LegacyLog.FileError) { contents = try LegacyLog.read(legacy) } catch {
                    throw SQLiteError(path: path, operation: "importing \(legacy)", code: 0, message: error.description,
                                      description: "network log \(path): cannot import \(legacy): \(error.description)")
                }
                for e in contents.entries { try insert(Self.row(redact(e))) }
                let mark = try file.statement("INSERT INTO imports(source, imported, skipped, at) VALUES (?1, ?2, ?3, ?4)")
                try mark.bind(1, text: identity)
                try mark.bind(2, int64: Int64(contents.entries.count))
                try mark.bind(3, int64: Int64(contents.skipped.count))
                try mark.bind(4, double: WallClock.now())
                try mark.run("recording the import of \(legacy)")
                return (contents.entries.count, contents.skipped)
            }
        }
        // Imported (now or by a run that stopped before renaming): keep the old file under a new name.
        var destination = legacy + ".migrated"
        var code = StoreFiles.moveNoReplace(legacy, destination)
        if code == EEXIST {
            destination = legacy + ".migrated-" + StoreFiles.utcTimestamp()
            code = StoreFiles.moveNoReplace(legacy, destination)
        }
        if code == ENOENT, let moved = [legacy + ".migrated"].first(where: { Self.identity($0) == identity }) {
            // A process that found our import done (it waited for the lock) renamed it first.
            destination = moved
            code = 0
        }
        guard let outcome else { return nil }
        var report = "imported \(outcome.imported) entr\(outcome.imported == 1 ? "y" : "ies") of the old network log \(legacy) into \(path)"
        report += code == 0 ? "; the old file is kept as \(destination)" : "; renaming it to \(destination) failed (\(String(cString: strerror(code))))"
        if !outcome.skipped.isEmpty {
            let lines = outcome.skipped.prefix(10).map { "line \($0.line): \($0.reason)" }.joined(separator: "; ")
            report += "; skipped \(outcome.skipped.count) damaged line(s), kept in that file: \(lines)"
            if outcome.skipped.count > 10 { report += "; …" }
        }
        return report
    }

    /// "device:inode:size:mtime" of a regular file, nil when absent.
    private static func identity(_ path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        return "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }
}

/// The log's NDJSON form (the persisted log before SQLite, and `net.open`'s
/// input): one entry's JSON per line; a damaged line is skipped and
/// reported by line number, never fatal.
public enum LegacyLog {
    public struct Contents: Sendable {
        public var entries: [NetworkEntry]
        /// 1-based line numbers and why each was skipped.
        public var skipped: [(line: Int, reason: String)]
    }

    public struct FileError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func read(_ path: String) throws(FileError) -> Contents {
        let bytes: [UInt8]
        do { bytes = try TextFile.readBytes(path) } catch { throw FileError(description: "\(error)") }
        return parse(bytes)
    }

    /// The entries of NDJSON bytes (untrusted: each line goes through
    /// PincerJSON, with its nesting limit, then NetworkEntry(json:);
    /// Fuzz/net-log.swift).
    public static func parse(_ bytes: [UInt8]) -> Contents {
        var result = Contents(entries: [], skipped: [])
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.isEmpty { continue }
            do {
                let json = try JSON.parse(bytes: line)
                result.entries.append(try NetworkEntry(json: json))
            } catch {
                result.skipped.append((lineNumber, "\(error)"))
            }
        }
        return result
    }

    /// One entry as a line of this form.
    public static func line(_ entry: NetworkEntry) -> [UInt8] {
        entry.jsonBytes + [UInt8(ascii: "\n")]
    }
}
