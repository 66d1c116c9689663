import Foundation
import NetworkLog
import Synchronization
import XCTest

/// The persisted network log in SQLite (Plugins/NetworkLogger/Core/LogDatabase.swift):
/// real database files, checked with the sqlite3 CLI, and real `pincer` processes.
final class NetworkLogDatabaseTests: XCTestCase {
    // MARK: - In process: batches, pages, filters, retention

    /// Entries queued one by one are written a batch per transaction, and
    /// read back page by page in id order with nothing lost or repeated.
    func testBatchedAppendAndKeysetPaging() throws {
        let dir = Fixture.temporaryDirectory("pincer-netdb-batch")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        let n = 2_600
        for i in 0..<n { try db.enqueue(Self.entry(i)) }
        // Two full batches went in on their own; the rest waits for a flush.
        XCTAssertEqual(db.batchesWritten, 2)
        XCTAssertEqual(db.queued, n - 2 * LogDatabase.batchEntries)
        XCTAssertEqual(try db.count(), 2 * LogDatabase.batchEntries)
        XCTAssertEqual(try db.flush(), n - 2 * LogDatabase.batchEntries)
        XCTAssertEqual(db.batchesWritten, 3)
        XCTAssertEqual(try sqlite(dir, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM entries"), "\(n)|\(n)|1|\(n)")

        var seen: [UInt64] = []
        var after: UInt64 = 0
        var pages = 0
        while true {
            let (entries, next) = try db.page(filter: NetworkFilter(""), after: after, limit: 100)
            XCTAssertLessThanOrEqual(entries.count, 100)
            pages += 1
            seen += entries.map(\.id)
            guard let next else { break }
            after = next
        }
        XCTAssertEqual(seen, (1...UInt64(n)).map { $0 })
        XCTAssertEqual(pages, n / 100 + 1, "the last page is the empty one after 2600")
        // What was stored is what was queued (the JSON read back, its id the row's).
        var expected = Self.entry(41)
        expected.id = 42
        XCTAssertEqual(try db.entry(42), expected)
        XCTAssertNil(try db.entry(UInt64(n) + 1))

        // The schema as sqlite3 sees it: the indexed columns.
        let indexes = try sqlite(dir, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' AND sql IS NOT NULL ORDER BY name)")
        XCTAssertEqual(indexes, "entries_host entries_method entries_recorded_at entries_started_at entries_status")
        XCTAssertEqual(try sqlite(dir, "PRAGMA journal_mode"), "wal")
        XCTAssertEqual(try sqlite(dir, "PRAGMA user_version"), "2")
        // A new log has 64 KiB pages (rows with their bodies inside a page),
        // and checkpoints every 16 MiB of WAL, counted in those pages.
        XCTAssertEqual(try sqlite(dir, "PRAGMA page_size"), "65536")
        XCTAssertEqual(try sqlite(dir, "PRAGMA integrity_check"), "ok")
    }

    /// Full batches are written behind, on the writer's thread: with four
    /// threads queueing at once (single entries and batches) and a fifth
    /// flushing meanwhile, every entry is stored exactly once, each
    /// thread's entries in the order it queued them, and once `flush`
    /// returns everything queued before it is committed.
    func testBatchesWrittenBehindKeepEveryEntryInOrder() throws {
        let dir = Fixture.temporaryDirectory("pincer-netdb-behind")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        let perThread = 2_300
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { t in
            do {
                if t == 4 {
                    for _ in 0..<2_000 { try db.flush() }
                    return
                }
                var i = 0
                while i < perThread {
                    var e = Self.entry(i)
                    e.url = "https://t\(t).example/\(i)"
                    if t % 2 == 0 {
                        try db.enqueue(e)
                        i += 1
                    } else {
                        let batch = (i..<min(perThread, i + 370)).map { k -> NetworkEntry in
                            var e = Self.entry(k)
                            e.url = "https://t\(t).example/\(k)"
                            return e
                        }
                        try db.enqueue(contentsOf: batch)
                        i += batch.count
                    }
                }
            } catch {
                failures.withLock { $0.append("thread \(t): \(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        try db.flush()
        XCTAssertEqual(db.queued, 0)
        XCTAssertEqual(try sqlite(dir, "SELECT count(*), count(DISTINCT url) FROM entries"), "\(4 * perThread)|\(4 * perThread)")
        for t in 0..<4 {
            let urls = try sqlite(dir, "SELECT url FROM entries WHERE host = 't\(t).example' ORDER BY id").split(separator: "\n").map(String.init)
            XCTAssertEqual(urls, (0..<perThread).map { "https://t\(t).example/\($0)" }, "thread \(t)'s entries in its order")
        }
    }

    /// Version 2 keeps stored bodies in BLOB columns beside the JSON (no
    /// escaping into a JSON string on write, no parsing out on read): a
    /// version 1 file (bodies inside the JSON) is upgraded in place, its rows
    /// read as before, and new rows hold their bodies' bytes in the columns.
    func testVersion1LogIsUpgradedAndNewBodiesLiveInTheirColumns() throws {
        let dir = Fixture.temporaryDirectory("pincer-netdb-v1")
        var old = Self.entry(2)
        old.responseBody = Body(payload: .stored(Array(#"{"old":"v1 \"body\""}"#.utf8)), size: 21, mimeType: "application/json")
        old.id = 0
        let oldJSON = String(decoding: old.json.serializedBytes(), as: UTF8.self)
        XCTAssertTrue(oldJSON.contains("v1 "), "a version 1 row holds its body in the JSON")
        let v1 = """
            PRAGMA journal_mode=WAL;
            CREATE TABLE entries(id INTEGER PRIMARY KEY AUTOINCREMENT, recorded_at REAL NOT NULL, started_at REAL NOT NULL,
              method TEXT NOT NULL, method_key TEXT NOT NULL, host TEXT NOT NULL, url TEXT NOT NULL, status INTEGER,
              state TEXT NOT NULL, duration REAL NOT NULL, response_size INTEGER NOT NULL, source TEXT NOT NULL,
              stubbed INTEGER NOT NULL, json BLOB NOT NULL);
            CREATE INDEX entries_recorded_at ON entries(recorded_at); CREATE INDEX entries_started_at ON entries(started_at);
            CREATE INDEX entries_host ON entries(host); CREATE INDEX entries_status ON entries(status);
            CREATE INDEX entries_method ON entries(method_key);
            CREATE TABLE imports(source TEXT PRIMARY KEY, imported INTEGER NOT NULL, skipped INTEGER NOT NULL, at REAL NOT NULL);
            INSERT INTO entries(recorded_at, started_at, method, method_key, host, url, status, state, duration, response_size, source, stubbed, json)
              VALUES (\(old.recordedAt), \(old.startedAt), '\(old.method)', '\(old.method)', 'auth.example.com', '\(old.url)', \(old.status!),
                      'complete', 0, 21, 'imported', 0, '\(oldJSON.replacingOccurrences(of: "'", with: "''"))');
            PRAGMA user_version = 1;
            """
        let made = try Fixture.run(Consumer.require(Consumer.sqlite3), [dir + "/network-log.sqlite", v1])
        XCTAssertEqual(made.status, 0, made.stderr)

        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        XCTAssertEqual(try sqlite(dir, "PRAGMA user_version"), "2")
        // A file made before the log used large pages keeps its own.
        XCTAssertEqual(try sqlite(dir, "PRAGMA page_size"), "4096")
        var expectedOld = old
        expectedOld.id = 1
        XCTAssertEqual(try db.entry(1), expectedOld, "a version 1 row reads as it did")

        var new = Self.entry(4)
        let body = Array(#"{"new":"v2 \"body\" é"}"#.utf8)
        new.responseBody = Body(payload: .stored(body), size: body.count, mimeType: "application/json")
        new.requestBody = Body(payload: .stored([0xFF, 0x00, 0x01]), size: 3, mimeType: "application/octet-stream")
        try db.enqueue(new)
        try db.flush()
        new.id = 2
        XCTAssertEqual(try db.entry(2), new)
        XCTAssertEqual(try db.page(filter: NetworkFilter(""), after: 1).entries, [new])
        XCTAssertEqual(try sqlite(dir, "SELECT id, response_body IS NULL, instr(json, 'v1 ') > 0, instr(json, 'v2 ') > 0, hex(request_body) FROM entries ORDER BY id"),
                       "1|1|1|0|\n2|0|0|0|FF0001")
        XCTAssertEqual(try sqlite(dir, "SELECT CAST(response_body AS TEXT) FROM entries WHERE id = 2"), String(decoding: body, as: UTF8.self))
    }

    /// Every filter selects through the database exactly what the in-memory
    /// filter selects from the same entries; the indexed terms narrow the
    /// query (EXPLAIN QUERY PLAN names the index), the others run per row.
    func testFiltersThroughIndexesSelectWhatTheInMemoryFilterSelects() throws {
        let dir = Fixture.temporaryDirectory("pincer-netdb-filter")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        try db.append((0..<600).map(Self.entry))
        // The entries as stored (their ids), filtered in memory as the store would.
        var stored: [NetworkEntry] = []
        try db.forEach(filter: NetworkFilter("")) { stored.append($0); return true }
        XCTAssertEqual(stored.count, 600)

        let expressions = [
            "", "method:POST", "method:get", "-method:GET", "domain:api.example.com", "domain:*.example.com", "domain:*.example.org",
            "status-code:5xx", "status-code:404", "status-code:2x0", "-status-code:5xx", "~c 500", "!~c 200", "~e", "~s", "!~s",
            "larger-than:2k", "method:POST domain:api.example.com", "method:PUT | status-code:4xx", "!(method:GET | domain:cdn.example.org)",
            "~u /items/1", "items", "~m ^DEL", "~d api", "~hs X-Trace", "~b secretless", "mime-type:application/*", "~a",
            "status-code:5xx & ~u /items/7", "!(~u /items/ & method:GET)", "scheme:https", "has-response-header:x-trace",
        ]
        for text in expressions {
            let filter = try NetworkFilter(text)
            let expected = stored.filter(filter.matches).map(\.id)
            var full: [UInt64] = []
            try db.forEach(filter: filter) { full.append($0.id); return true }
            var columns: [UInt64] = []
            try db.forEach(filter: filter, detail: .columns) { columns.append($0.id); return true }
            XCTAssertEqual(full, expected, "filter \"\(text)\" (full entries)")
            XCTAssertEqual(columns, expected, "filter \"\(text)\" (columns only)")
        }
        // Exact or not, as documented.
        XCTAssertEqual(try NetworkFilter("method:POST domain:api.example.com").sqlCondition?.exact, true)
        XCTAssertEqual(try NetworkFilter("method:POST ~u /items/").sqlCondition?.exact, false)
        XCTAssertNil(try NetworkFilter("~u /items/").sqlCondition)
        XCTAssertNil(try NetworkFilter("method:POST | ~u /items/").sqlCondition, "an | with a per-row side cannot narrow")

        let planHost = try db.queryPlan(filter: NetworkFilter("domain:api.example.com")).joined(separator: "; ")
        XCTAssertTrue(planHost.contains("USING INDEX entries_host"), planHost)
        let planMethod = try db.queryPlan(filter: NetworkFilter("method:POST ~u /items/")).joined(separator: "; ")
        XCTAssertTrue(planMethod.contains("USING INDEX entries_method"), planMethod)
        let planNone = try db.queryPlan(filter: NetworkFilter("~u /items/")).joined(separator: "; ")
        XCTAssertFalse(planNone.contains("INDEX"), planNone)
        print("query plans: host: \(planHost) | method: \(planMethod) | per row: \(planNone)")
    }

    /// Retention deletes the rows recorded before the cutoff and no other.
    func testRetentionDeletesExactlyTheOldRows() throws {
        let dir = Fixture.temporaryDirectory("pincer-netdb-retention")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        let cutoff = 1_700_000_000.0
        var entries: [NetworkEntry] = []
        for i in 0..<300 {
            var e = Self.entry(i)
            e.recordedAt = cutoff + Double(i - 100) // 100 before, one at, 199 after
            entries.append(e)
        }
        try db.append(entries)
        XCTAssertEqual(try db.deleteRecorded(before: cutoff), 100)
        XCTAssertEqual(try sqlite(dir, "SELECT count(*), min(recorded_at) >= \(cutoff), min(id) FROM entries"), "200|1|101")
        XCTAssertEqual(try db.deleteRecorded(before: cutoff), 0)
        let plan = try sqlite(dir, "EXPLAIN QUERY PLAN DELETE FROM entries WHERE recorded_at < 1")
        XCTAssertTrue(plan.contains("entries_recorded_at"), plan)
    }

    // MARK: - Through the built pincer

    /// Several processes import into one persisted log at once: every entry
    /// is there once, with ids unique across the processes.
    func testSeveralProcessesImportingAtOnceKeepEveryEntryWithUniqueIDs() throws {
        let state = Fixture.temporaryDirectory("pincer-netdb-procs")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
        let har = state + "/n.har"
        try Self.writeHAR(count: 1_500, to: har)
        let processes = 4
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["run", "net.import-har", har, "--json"], stateDir: state,
                                                  inputs: Array(repeating: "", count: processes))
        for r in results {
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual((Fixture.json(r.stdout)["result"] as? [String: Any])?["imported"] as? Int, 1_500, r.stdout)
        }
        let total = processes * 1_500
        XCTAssertEqual(try sqlite(state, "SELECT count(*), count(DISTINCT id), max(id) FROM entries"), "\(total)|\(total)|\(total)")
        // Each process's entries are whole batches: one process's rows never interleave inside a batch.
        let listed = try Fixture.pincer(["run", "net.list", "method:DELETE", "--json"], stateDir: state)
        XCTAssertEqual((Fixture.json(listed.stdout)["result"] as? [Any])?.count, total / 5, listed.stderr)
    }

    /// An existing network-log.ndjson is imported once (damaged lines
    /// reported by number), kept as .migrated byte for byte, and not
    /// imported again by the next process or by two starting at once.
    func testOldNDJSONLogIsMigratedOnceWithDamagedLinesReported() throws {
        for concurrent in [false, true] {
            // Big enough that the processes started together all find the file before the first has renamed it.
            let count = concurrent ? 3_000 : 50
            let state = Fixture.temporaryDirectory("pincer-netdb-migrate")
            XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
            var lines: [String] = []
            let now = Date().timeIntervalSince1970
            for i in 0..<count {
                var e = Self.entry(i)
                e.recordedAt = now - 60
                e.url = "https://old.example.com/items/\(i)?password=hunter2"
                lines.append(String(decoding: LegacyLog.line(e), as: UTF8.self).trimmingCharacters(in: .newlines))
            }
            lines.insert("{not json", at: 3)           // line 4
            lines.insert("{\"id\": 1}", at: 10)         // line 11: JSON, not an entry
            let text = lines.joined(separator: "\n") + "\n"
            let old = state + "/network-log.ndjson"
            try text.write(toFile: old, atomically: true, encoding: .utf8)

            let results: [Fixture.ProcessResult]
            if concurrent {
                results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["run", "net.list", "--json"], stateDir: state,
                                                      inputs: Array(repeating: "", count: 4))
            } else {
                results = [try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)]
            }
            var reports = 0
            for r in results {
                XCTAssertEqual(r.status, 0, r.stderr)
                XCTAssertEqual((Fixture.json(r.stdout)["result"] as? [Any])?.count, count, String(r.stdout.prefix(300)))
                if r.stderr.contains("imported \(count) entries of the old network log \(old)") {
                    reports += 1
                    XCTAssertTrue(r.stderr.contains("skipped 2 damaged line(s)"), r.stderr)
                    XCTAssertTrue(r.stderr.contains("line 4: "), r.stderr)
                    XCTAssertTrue(r.stderr.contains("line 11: "), r.stderr)
                    XCTAssertTrue(r.stderr.contains("kept as \(old).migrated"), r.stderr)
                }
            }
            XCTAssertEqual(reports, 1, "exactly one process imported: \(results.map(\.stderr))")
            XCTAssertFalse(FileManager.default.fileExists(atPath: old))
            XCTAssertEqual(try String(contentsOfFile: old + ".migrated", encoding: .utf8), text, "kept byte for byte, damaged lines too")
            XCTAssertEqual(try sqlite(state, "SELECT count(*) FROM entries"), "\(count)")
            XCTAssertEqual(try sqlite(state, "SELECT imported || ' ' || skipped FROM imports"), "\(count) 2")
            // Redacted on the way in, as a restored entry is.
            XCTAssertFalse(try sqlite(state, ".dump").contains("hunter2"))
            // The next process finds nothing to import.
            let again = try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)
            XCTAssertEqual((Fixture.json(again.stdout)["result"] as? [Any])?.count, count)
            XCTAssertFalse(again.stderr.contains("imported"), again.stderr)
            // A run that imported but stopped before renaming leaves the same file (same inode) in place: not imported again.
            XCTAssertEqual(link(old + ".migrated", old), 0)
            let afterCrash = try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)
            XCTAssertEqual((Fixture.json(afterCrash.stdout)["result"] as? [Any])?.count, count, afterCrash.stderr)
            XCTAssertFalse(afterCrash.stderr.contains("imported"), afterCrash.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: old), "renamed this time")
            XCTAssertEqual(try sqlite(state, "SELECT count(*) FROM entries"), "\(count)")
        }
    }

    /// A command that does not touch the log never opens it: with garbage
    /// in place of the database, `pincer commands` and a flag read succeed
    /// without a word about it and leave it byte for byte; the first
    /// net.list sets it aside (the warning names both paths) and starts empty.
    func testCommandsDoNotOpenTheLogAndADamagedLogIsSetAside() throws {
        let state = Fixture.temporaryDirectory("pincer-netdb-damaged")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
        XCTAssertEqual(try Fixture.pincer(["run", "flags.register", "x", "bool", "true"], stateDir: state).status, 0)
        let path = state + "/network-log.sqlite"
        let garbage = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        // (net.persist opened the log: its WAL would still hold good pages.)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try garbage.write(to: URL(fileURLWithPath: path))

        for arguments in [["commands", "--json"], ["commands"], ["run", "flags.get", "x"], ["run", "net.limits", "--json"], ["run", "net.rules"]] {
            let r = try Fixture.pincer(arguments, stateDir: state)
            XCTAssertEqual(r.status, 0, "\(arguments): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("network log"), "\(arguments): \(r.stderr)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), garbage, "\(arguments) touched the log")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: state)
        XCTAssertFalse(names.contains { $0.hasPrefix("network-log.sqlite.") }, "\(names)")

        let list = try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual((Fixture.json(list.stdout)["result"] as? [Any])?.count, 0)
        let aside = try XCTUnwrap(FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasPrefix("network-log.sqlite.unreadable-") })
        XCTAssertTrue(list.stderr.contains("network log \(path) could not be read (file is not a database)"), list.stderr)
        XCTAssertTrue(list.stderr.contains("moved it to \(state)/\(aside)"), list.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/" + aside)), garbage, "set aside, not deleted")
        // The new log works, and the flags never noticed.
        let har = state + "/n.har"
        try Self.writeHAR(count: 5, to: har)
        XCTAssertEqual(try Fixture.pincer(["run", "net.import-har", har], stateDir: state).status, 0)
        XCTAssertEqual(try sqlite(state, "SELECT count(*) FROM entries"), "5")
        let flag = try Fixture.pincer(["run", "flags.get", "x", "--json"], stateDir: state)
        XCTAssertEqual(flag.status, 0, flag.stderr)
        XCTAssertTrue(flag.stdout.contains("true"), flag.stdout)
    }

    /// net.persist with fewer days deletes what is now too old at once;
    /// net.clear empties the database (ids keep increasing).
    func testPersistDaysChangeAppliesRetentionAndClearEmptiesTheDatabase() throws {
        let state = Fixture.temporaryDirectory("pincer-netdb-days")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "30"], stateDir: state).status, 0)
        let db = try LogDatabase.open(directory: state, redact: { $0 })
        let now = Date().timeIntervalSince1970
        try db.append((0..<10).map { i in
            var e = Self.entry(i)
            e.recordedAt = now - Double(i) * 86_400 - 3_600 // 0 days + 1 h ... 9 days + 1 h old
            return e
        })
        XCTAssertEqual(try sqlite(state, "SELECT count(*) FROM entries"), "10")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "5"], stateDir: state).status, 0)
        XCTAssertEqual(try sqlite(state, "SELECT group_concat(id, ' ') FROM entries"), "1 2 3 4 5")
        let cleared = try Fixture.pincer(["run", "net.clear"], stateDir: state)
        XCTAssertEqual(cleared.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "removed 5 entries", cleared.stderr)
        XCTAssertEqual(try sqlite(state, "SELECT count(*) FROM entries"), "0")
        let har = state + "/n.har"
        try Self.writeHAR(count: 1, to: har)
        XCTAssertEqual(try Fixture.pincer(["run", "net.import-har", har], stateDir: state).status, 0)
        XCTAssertEqual(try sqlite(state, "SELECT id FROM entries"), "11", "ids are never reused")
    }

    // MARK: - Helpers

    /// Entry `i` of a varied log: methods, hosts, statuses, failures, sizes.
    static func entry(_ i: Int) -> NetworkEntry {
        let methods = ["GET", "POST", "PUT", "GET", "DELETE"]
        let hosts = ["api.example.com", "cdn.example.org", "auth.example.com"]
        var e = NetworkEntry(source: .imported, startedAt: 1_700_000_000 + Double(i), method: methods[i % 5],
                             url: "https://\(hosts[i % 3])/items/\(i)\(i % 7 == 0 ? ".css" : "")")
        e.recordedAt = 1_800_000_000
        e.requestHeaders = [Header("Accept", "*/*")]
        if i % 11 == 0 {
            e.state = .failed
            e.error = "connection refused"
        } else {
            e.state = .complete
            e.status = [200, 201, 404, 500, 503, 200, 210][i % 7]
            e.responseHeaders = i % 2 == 0 ? [Header("X-Trace", "t\(i)"), Header("Content-Type", "application/json")] : []
            let body = Array(String(repeating: "x", count: (i * 37) % 4000).utf8)
            e.responseBody = Body(payload: .stored(body), size: body.count, mimeType: i % 2 == 0 ? "application/json" : "text/plain")
        }
        e.timings.wait = Double(i % 50)
        return e
    }

    /// A HAR file of `count` entries (a fifth of them DELETEs).
    static func writeHAR(count: Int, to path: String) throws {
        var entries: [String] = []
        for i in 0..<count {
            let method = ["GET", "POST", "PUT", "GET", "DELETE"][i % 5]
            entries.append("""
                {"startedDateTime": "2024-05-01T10:00:00Z", "time": 3,
                 "request": {"method": "\(method)", "url": "https://api.example.com/items/\(i)", "headers": [{"name": "Authorization", "value": "Bearer abcdefghijklmnop\(i)"}]},
                 "response": {"status": \(i % 9 == 0 ? 500 : 200), "headers": [{"name": "Content-Type", "value": "application/json"}],
                              "content": {"size": 20, "mimeType": "application/json", "text": "{\\"n\\": \(i), \\"ok\\": true}"}}}
                """)
        }
        let text = "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"test\", \"version\": \"1\"}, \"entries\": [\n"
            + entries.joined(separator: ",\n") + "]}}\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// One query of the state directory's log through the sqlite3 CLI, trimmed.
    private func sqlite(_ directory: String, _ sql: String) throws -> String {
        let r = try Fixture.run(Consumer.require(Consumer.sqlite3), ["-readonly", directory + "/network-log.sqlite", sql])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
