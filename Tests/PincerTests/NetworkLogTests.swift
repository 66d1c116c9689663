import Foundation
import XCTest
@testable import NetworkLog
@testable import PincerHost
import PincerNetworkCapture
import CPincerSDK

/// The log's store and the `net` plugin through the real host: bounds,
/// budgets, rules, manual recording from C, HAR import of every shared
/// fixture, persistence with retention, and net.tail across processes.
final class NetworkLogTests: XCTestCase {
    func exchange(_ store: NetworkStore, _ url: String, body: Int = 0, pending: Bool = false) -> UInt64? {
        guard let id = store.begin(source: .manual, startedAt: 1_700_000_000, method: "GET", url: url, headers: [], body: []) else { return nil }
        if !pending {
            var r = RawResponse(status: 200)
            r.headers = [Header("Content-Type", "text/plain")]
            r.body = Array(repeating: UInt8(ascii: "x"), count: body)
            store.complete(id, r)
        }
        return id
    }

    func testEntryLimitEvictsTheOldestInConstantSpace() {
        let store = NetworkStore(limits: LogLimits(entryLimit: 3))
        for i in 1...5 { XCTAssertEqual(exchange(store, "https://a.example.com/\(i)"), UInt64(i)) }
        XCTAssertEqual(store.entries().map(\.id), [3, 4, 5])
        XCTAssertNil(store.entry(2))
        XCTAssertFalse(store.complete(1, RawResponse(status: 200)), "an evicted id is gone")
        // A smaller limit evicts now; ids never restart.
        store.setLimits(LogLimits(entryLimit: 2))
        XCTAssertEqual(store.entries().map(\.id), [4, 5])
        XCTAssertEqual(exchange(store, "https://a.example.com/6"), 6)
        store.clear()
        XCTAssertEqual(exchange(store, "https://a.example.com/7"), 7)
    }

    /// Entries keep their order through wrap-arounds of the log's ring, a
    /// pending entry completed late, new limits and a clear.
    func testTheLogKeepsItsOrderThroughWrapAroundsAndNewLimits() {
        let store = NetworkStore(limits: LogLimits(entryLimit: 2_500))
        for i in 1...6_000 {
            XCTAssertEqual(exchange(store, "https://a.example.com/\(i)", pending: i % 7 == 0), UInt64(i))
        }
        XCTAssertEqual(store.count, 2_500)
        XCTAssertEqual(store.entries().map(\.id), Array(3_501...6_000))
        XCTAssertEqual(store.entry(3_501)?.url, "https://a.example.com/3501")
        XCTAssertNil(store.entry(3_500))
        XCTAssertTrue(store.complete(4_004, RawResponse(status: 204)), "a pending entry kept through wrap-arounds")
        XCTAssertEqual(store.entry(4_004)?.status, 204)
        store.setLimits(LogLimits(entryLimit: 1_100))
        XCTAssertEqual(store.entries().map(\.id), Array(4_901...6_000))
        for i in 6_001...7_000 { XCTAssertEqual(exchange(store, "https://a.example.com/\(i)"), UInt64(i)) }
        XCTAssertEqual(store.entries().map(\.id), Array(5_901...7_000))
        XCTAssertEqual(store.entries().map(\.url), (5_901...7_000).map { "https://a.example.com/\($0)" })
        store.clear()
        XCTAssertEqual(store.count, 0)
        XCTAssertEqual(exchange(store, "https://a.example.com/next"), 7_001)
    }

    func testBodyBudgetDropsOldestPayloadsKeepsMetadata() {
        let store = NetworkStore(limits: LogLimits(entryLimit: 100, bodyCap: 1000, bodyBudget: 250))
        let pending = exchange(store, "https://a.example.com/pending", pending: true)!
        for i in 1...4 { _ = exchange(store, "https://a.example.com/\(i)", body: 100) }
        // 400 bytes arrived, 250 fit: the two oldest completed payloads went.
        let all = store.entries()
        XCTAssertEqual(all.map { $0.responseBody.payload == .dropped }, [false, true, true, false, false])
        XCTAssertEqual(all[1].responseBody.size, 100, "the size stays")
        XCTAssertEqual(all[1].status, 200)
        XCTAssertTrue(all[1].notes.contains { $0.contains("response body dropped") }, "\(all[1].notes)")
        XCTAssertEqual(store.storedBodyBytes, 200)
        // The pending entry's body arrives later and is counted too.
        var r = RawResponse(status: 200)
        r.body = Array(repeating: 0x41, count: 100)
        XCTAssertTrue(store.complete(pending, r))
        XCTAssertLessThanOrEqual(store.storedBodyBytes, 250)
    }

    func testBodiesOverTheCapAreWithheldWithTheirSize() {
        let store = NetworkStore(limits: LogLimits(entryLimit: 10, bodyCap: 64, bodyBudget: 1 << 20))
        let id = exchange(store, "https://a.example.com/big", body: 65)!
        let e = store.entry(id)!
        XCTAssertEqual(e.responseBody.size, 65)
        guard case .withheld(let why) = e.responseBody.payload else { return XCTFail("\(e.responseBody)") }
        XCTAssertEqual(why, "larger than the 64 B body cap")
    }

    func testIgnoredAndMetadataOnlyRules() {
        let store = NetworkStore(rules: [
            CaptureRule(kind: .ignore, host: "*.tracker.example"),
            CaptureRule(kind: .metadataOnly, host: "api.example.com", pathPrefix: "/upload", methods: ["post"]),
        ])
        XCTAssertNil(exchange(store, "https://cdn.tracker.example/pixel.gif"))
        XCTAssertNotNil(exchange(store, "https://tracker.example.org/x"), "a different host")
        let id = store.begin(source: .manual, startedAt: 0, method: "POST", url: "https://api.example.com/upload/1",
                             headers: [Header("Content-Type", "text/plain")], body: Array("secret file".utf8))!
        XCTAssertEqual(store.entry(id)?.requestBody.payload, .skipped)
        XCTAssertEqual(store.entry(id)?.requestBody.size, 11)
        let get = store.begin(source: .manual, startedAt: 0, method: "GET", url: "https://api.example.com/upload/1",
                              headers: [Header("Content-Type", "text/plain")], body: Array("kept".utf8))!
        XCTAssertEqual(store.entry(get)?.requestBody.bytes, Array("kept".utf8), "GET is not covered by the rule")
    }

    /// Code in C records through pincer.network/1; the log holds it redacted.
    func testManualRecordingFromCIsRedactedBeforeStorage() throws {
        let app = AppHost()
        let id = try app.text("app.record", "https://user:pw@api.example.com/login?api_key=K1&page=2")
        let entry = try app.json("net.entry", id)
        XCTAssertEqual(entry["url"], .string("https://user:[REDACTED]@api.example.com/login?api_key=[REDACTED]&page=2"))
        XCTAssertEqual(entry["source"], .string("captured"))
        let requestHeaders = entry["requestHeaders"]?.arrayValue ?? []
        XCTAssertTrue(requestHeaders.contains(.object([("name", .string("Authorization")), ("value", .string("Bearer [REDACTED]"))])), "\(requestHeaders)")
        XCTAssertEqual(entry["requestBody"]?["text"], .string(#"{"user": "ann", "password": "[REDACTED]"}"#))
        XCTAssertEqual(entry["responseBody"]?["text"], .string(#"{"token": "[REDACTED]", "ok": true}"#))
        XCTAssertEqual(entry["status"], .int(200))
        let failed = try app.text("app.record", "https://api.example.com/down", "0", "true")
        XCTAssertEqual(try app.json("net.entry", failed)["error"], .string("connection refused"))
        // An ignored host stores nothing and says so.
        try app.run("net.ignore-host", "*.example.org")
        XCTAssertEqual(try app.text("app.record", "https://x.example.org/"), "ignored")
        XCTAssertEqual(try app.text("app.record", "not a url"), "begin: 'not a url' is not an absolute URL")
    }

    /// Issue 16: the message given to pincer.network/1's fail is stored redacted.
    func testFailureMessageFromCIsRedacted() throws {
        let app = AppHost()
        let id = try app.text("app.record-exchange", "GET", "https://api.example.com/down", "", "", "0", "", "", "", "", "",
                              "connect to https://ann:pw-Secret1@api.example.com/?token=T0k3nValue&page=2 failed: Authorization: Bearer eyJraWQiOiIxIn0abc123")
        let entry = try app.json("net.entry", id)
        XCTAssertEqual(entry["state"], .string("failed"))
        XCTAssertEqual(entry["error"], .string("connect to https://ann:[REDACTED]@api.example.com/?token=[REDACTED]&page=2 failed: Authorization: Bearer [REDACTED]"))
        let show = try app.text("net.show", id)
        XCTAssertFalse(show.contains("pw-Secret1") || show.contains("T0k3nValue") || show.contains("eyJraWQiOiIxIn0abc123"), show)
    }

    /// net.redact-name persists, is listed and removable; C's add_redact_name
    /// and NetworkRecorder.addRedactedName add to the same list.
    func testRedactNamesFromTheShellCAndSwift() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("net.redact-name", "X-Tenant-PIN"),
                       "values named 'X-Tenant-PIN' (normalised: xtenantpin) are redacted from now on")
        XCTAssertEqual(try app.text("net.redact-name", "x_tenant_pin"), "'x_tenant_pin' (xtenantpin) is already redacted")
        XCTAssertTrue(app.failure("net.redact-name", "--").contains("has no letters or digits"))
        XCTAssertEqual(try app.text("app.redact-name", "Account_Number"), "ok")
        XCTAssertEqual(app.failure("app.redact-name", ""), "add_redact_name: name is NULL")
        let recorder = try XCTUnwrap(NetworkRecorder(service: app.host.service(id: NetworkRecorder.serviceID)))
        XCTAssertTrue(recorder.addRedactedName("customer.ref"))
        XCTAssertFalse(recorder.addRedactedName("?!"))
        XCTAssertTrue(recorder.lastError.contains("has no letters or digits"), recorder.lastError)

        func record(_ url: String, _ headers: String, _ body: String) throws -> JSON {
            try app.json("net.entry", try app.text("app.record-exchange", "POST", url, headers, body, "200", "OK", "", "", "", "", ""))
        }
        let e = try record("https://h.example.com/?x-tenant-pin=1234&customerRef=c9&page=2", "X-Tenant-Pin: 1234\nContent-Type: application/json",
                           #"{"account number": "DE89 3704", "name": "ann"}"#)
        XCTAssertEqual(e["url"], .string("https://h.example.com/?x-tenant-pin=[REDACTED]&customerRef=[REDACTED]&page=2"))
        XCTAssertTrue(e["requestHeaders"]?.arrayValue?.contains(.object([("name", .string("X-Tenant-Pin")), ("value", .string("[REDACTED]"))])) == true)
        XCTAssertEqual(e["requestBody"]?["text"], .string(#"{"account number": "[REDACTED]", "name": "ann"}"#))

        // Listed, kept across a restart, removable.
        let listed = try app.json("net.redact-names").arrayValue?.compactMap { $0["normalized"]?.stringValue }
        XCTAssertEqual(listed, ["xtenantpin", "accountnumber", "customerref"])
        app.restart()
        XCTAssertEqual(try app.json("net.redact-names").arrayValue?.count, 3)
        XCTAssertEqual(try record("https://h.example.com/?x_tenant_pin=1", "", "")["url"], .string("https://h.example.com/?x_tenant_pin=[REDACTED]"))
        XCTAssertEqual(try app.text("net.remove-redact-name", "X-TENANT-PIN"), "removed 'X-Tenant-PIN'; the defaults still apply")
        XCTAssertTrue(app.failure("net.remove-redact-name", "X-Tenant-PIN").contains("no added name normalises to 'xtenantpin'"))
        XCTAssertEqual(try record("https://h.example.com/?x_tenant_pin=1", "", "")["url"], .string("https://h.example.com/?x_tenant_pin=1"))
    }

    /// A log file written by hand (or before a name was added) passes the
    /// redactor again when net.open loads it.
    func testOpenedLogFilesAreRedactedAgain() throws {
        let app = AppHost(withApp: false)
        var e = NetworkEntry(source: .captured, startedAt: 1_700_000_000, method: "GET", url: "https://ann:pw9Secret@h.example.com/?token=t0k3n&page=2")
        e.recordedAt = 1_700_000_000
        e.state = .failed
        e.error = "refused: Bearer abcDEF123456789xyz"
        e.notes = ["retry with password=hunter2"]
        e.requestHeaders = [Header("X-Tenant-Pin", "4321")]
        e.responseBody = Body(payload: .stored(Array("session token=Zq81kq0PaQ7wLm3Vb9Ty".utf8)), size: 36, mimeType: "text/plain")
        let file = app.stateDirectory + "/hand.ndjson"
        try Data(LegacyLog.line(e)).write(to: URL(fileURLWithPath: file))
        try app.run("net.redact-name", "X-Tenant-PIN")
        XCTAssertEqual(try app.json("net.open", file)["loaded"]?.int64Value, 1)
        let text = try app.text("net.entry", "1")
        for secret in ["pw9Secret", "t0k3n", "abcDEF123456789xyz", "hunter2", "4321", "Zq81kq0PaQ7wLm3Vb9Ty"] {
            XCTAssertFalse(text.contains(secret), "\(secret) in \(text)")
        }
        XCTAssertTrue(text.contains("page=2"), text)
        XCTAssertEqual(try app.json("net.entry", "1")["responseBody"]?["size"]?.int64Value, 36, "the size as sent stays")
    }

    /// A 1.0-sized pincer.network/1 table (no add_redact_name) still records
    /// from Swift; adding names then says it cannot.
    func testRecorderAcceptsAVersion10Table() throws {
        let app = AppHost(withApp: false)
        let table = try XCTUnwrap(app.host.service(id: NetworkRecorder.serviceID)).assumingMemoryBound(to: pincer_network_service_t.self)
        var old = table.pointee
        old.header.struct_size = UInt32(MemoryLayout<pincer_network_service_t>.offset(of: \.add_redact_name)!)
        old.add_redact_name = nil
        let recorder = try withUnsafePointer(to: &old) { try XCTUnwrap(NetworkRecorder(service: $0)) }
        XCTAssertFalse(recorder.canAddRedactedNames)
        XCTAssertFalse(recorder.addRedactedName("x"))
        XCTAssertFalse(recorder.canIntercept, "a 1.0 table has no interception slots")
        XCTAssertNil(recorder.addTransientRule(#"{"kind":"block"}"#))
        XCTAssertEqual(table.pointee.header.version_minor, 3)
    }

    /// Every shared HAR fixture imports or is rejected with a message, and the counts add up.
    func testEveryFixtureHARImportsOrIsRejected() throws {
        let dir = try harFixtureDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        let app = AppHost(withApp: false)
        try app.run("net.limits", "100000")
        var imported = 0
        var rejected: [String] = []
        for name in names.sorted() where name.hasSuffix(".har") || name.hasSuffix(".json") {
            let path = "\(dir)/\(name)"
            do {
                let report = try app.json("net.import-har", path)
                let (i, s, t) = (report["imported"]?.int64Value ?? -1, report["skipped"]?.int64Value ?? -1, report["total"]?.int64Value ?? -2)
                XCTAssertEqual(i + s + (report["ignored"]?.int64Value ?? 0), t, name)
                imported += Int(i)
            } catch let error as CommandFailure {
                rejected.append(name)
                XCTAssertTrue(error.message.hasPrefix(path + ": "), "\(name): \(error.message)")
            }
        }
        XCTAssertEqual(Set(rejected), HARConformanceTests.notHAR)
        XCTAssertGreaterThan(imported, 20)
        XCTAssertEqual(try app.json("net.list").arrayValue?.count, imported)
    }

    func testPersistedLogSurvivesRestartAndRetentionDropsOldEntries() throws {
        let app = AppHost()
        let database = "\(app.stateDirectory)/network-log.sqlite"
        XCTAssertEqual(try app.text("net.persist", "7"), "the log is kept in \(database) for 7 days")
        _ = try app.text("app.record", "https://api.example.com/a")
        _ = try app.text("app.record", "https://api.example.com/b")
        app.restart(withApp: false)
        // An old row, as a week-old run would have left it.
        var old = NetworkEntry(source: .captured, startedAt: 1_000, method: "GET", url: "https://old.example.com/")
        old.recordedAt = 1_000
        old.state = .complete
        old.status = 200
        try LogDatabase.open(directory: app.stateDirectory, redact: { $0 }).append([old])
        XCTAssertEqual(try sqlite(database, "SELECT count(*) FROM entries"), "3")
        app.restart(withApp: false)
        let urls = try app.json("net.list").arrayValue?.compactMap { $0["url"]?.stringValue }
        XCTAssertEqual(urls, ["https://api.example.com/a", "https://api.example.com/b"])
        // Retention deleted the old row (opening the log applies it).
        XCTAssertEqual(try sqlite(database, "SELECT group_concat(url, ' ') FROM entries ORDER BY id"),
                       "https://api.example.com/a https://api.example.com/b")
        // Stored redacted: the database never saw the password.
        XCTAssertFalse(try sqlite(database, ".dump").contains("hunter2"))
    }

    /// One query through the sqlite3 CLI (read-only), its output trimmed.
    private func sqlite(_ database: String, _ sql: String) throws -> String {
        let r = try Fixture.run(Consumer.require(Consumer.sqlite3), ["-readonly", database, sql])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// net.tail in one process follows what another process records.
    func testTailFollowsAnotherProcess() throws {
        let lines = try follow(json: false)
        XCTAssertEqual(lines.count, 3, "\(lines)") // two entries and the closing summary
        XCTAssertTrue(lines.first?.hasPrefix("#1  ") == true, "\(lines)")
        XCTAssertEqual(lines.last, "followed 2 entries")
    }

    /// With --json, net.tail is NDJSON: one net.list object per entry, the result last.
    func testTailWithJSONIsNDJSON() throws {
        let lines = try follow(json: true).map { Fixture.json($0) }
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertEqual(lines.prefix(2).map { $0["id"] as? Int }, [1, 2])
        XCTAssertEqual(Set(lines[0].keys), ["id", "method", "url", "status", "state", "duration", "size", "source"])
        XCTAssertEqual(lines[2]["result"] as? String, "followed 2 entries")
        XCTAssertEqual(lines[2]["ok"] as? Bool, true)
    }

    /// Lines `net.tail --limit 2` prints while another process imports a HAR.
    private func follow(json: Bool) throws -> [String] {
        let state = Fixture.temporaryDirectory("pincer-net-tail")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "1"], stateDir: state).status, 0)
        let tail = Process()
        tail.executableURL = URL(fileURLWithPath: Fixture.pincer)
        tail.arguments = ["run", "net.tail", "--limit", "2"] + (json ? ["--json"] : [])
        tail.environment = ["PINCER_STATE_DIR": state]
        let out = Pipe()
        tail.standardOutput = out
        try tail.run()
        usleep(500_000)
        let har = try harFixtureDirectory + "/mitmproxy-successful_log.har"
        let imported = try Fixture.pincer(["run", "net.import-har", har], stateDir: state)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let deadline = Date().addingTimeInterval(10)
        while tail.isRunning && Date() < deadline { usleep(50_000) }
        let stillRunning = tail.isRunning
        if stillRunning { tail.terminate() }
        XCTAssertFalse(stillRunning, "net.tail did not stop after two entries")
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    // MARK: - Through the built pincer: import without persistence, net.show, net.list

    /// A one-shot `pincer run net.import-har` into a log that is not
    /// persisted says where its entries live and how to keep them; with
    /// persistence on they are there for the next process.
    func testImportWithoutPersistenceSaysSoAndPersistedImportIsKept() throws {
        let state = Fixture.temporaryDirectory("pincer-net-import")
        let har = try harFixtureDirectory + "/mitmproxy-firefox.har"
        let memory = try Fixture.pincer(["run", "net.import-har", har, "--json"], stateDir: state)
        XCTAssertEqual(memory.status, 0, memory.stderr)
        let report = try XCTUnwrap(Fixture.json(memory.stdout)["result"] as? [String: Any])
        XCTAssertEqual(report["imported"] as? Int, 14)
        XCTAssertEqual(report["persisted"] as? Bool, false)
        let note = try XCTUnwrap(report["note"] as? String)
        XCTAssertTrue(note.contains("live in this process only"), note)
        XCTAssertTrue(note.contains("net.persist DAYS"), note)
        // As text, the note is there too.
        let text = try Fixture.pincer(["run", "net.import-har", har], stateDir: state)
        XCTAssertTrue(text.stdout.contains("persisted  false"), text.stdout)
        XCTAssertTrue(text.stdout.contains("note       the log is not persisted: these entries live in this process only"), text.stdout)
        // And it is true: the next process has nothing.
        let empty = try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)
        XCTAssertEqual((Fixture.json(empty.stdout)["result"] as? [Any])?.count, 0, empty.stdout)

        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
        let kept = try Fixture.pincer(["run", "net.import-har", har, "--json"], stateDir: state)
        let keptReport = try XCTUnwrap(Fixture.json(kept.stdout)["result"] as? [String: Any])
        XCTAssertEqual(keptReport["persisted"] as? Bool, true)
        XCTAssertEqual(keptReport["logFile"] as? String, state + "/network-log.sqlite")
        XCTAssertNil(keptReport["note"])
        let listed = try Fixture.pincer(["run", "net.list", "--json"], stateDir: state)
        XCTAssertEqual((Fixture.json(listed.stdout)["result"] as? [Any])?.count, 14, listed.stdout)
    }

    /// net.show prints at most --limit bytes of each body (4096 unless told),
    /// says how much it left out, and prints everything with --limit 0.
    func testShowLimitsBodiesAndSaysWhatItLeftOut() throws {
        let state = Fixture.temporaryDirectory("pincer-net-show")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "1"], stateDir: state).status, 0)
        let lines = (1...2000).map { "line \($0) of the body, and some more text to make it longer" }
        let body = lines.joined(separator: "\n") + "\n"
        let har = state + "/big.har"
        try """
        {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [
          {"startedDateTime": "2024-05-01T10:00:00Z", "time": 1,
           "request": {"method": "GET", "url": "https://example.com/big", "headers": []},
           "response": {"status": 200, "statusText": "OK", "headers": [{"name": "Content-Type", "value": "text/plain"}],
                        "content": {"size": \(body.utf8.count), "mimeType": "text/plain", "text": \(JSON.quote(body))}}}]}}
        """.write(toFile: har, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Fixture.pincer(["run", "net.import-har", har], stateDir: state).status, 0)

        let cut = try Fixture.pincer(["run", "net.show", "1"], stateDir: state)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        let shown = body.utf8.prefix(4096)
        XCTAssertTrue(cut.stdout.contains(String(decoding: shown, as: UTF8.self)), "the first 4096 bytes")
        // The rest starts mid-line and ends with a line break: its line breaks count its lines.
        let restLines = body.utf8.dropFirst(4096).filter { $0 == 0x0A }.count
        XCTAssertTrue(cut.stdout.contains("… (\(body.utf8.count - 4096) more bytes, \(restLines) lines, of \(body.utf8.count) not shown; net.show 1 --limit 0 prints all of it)"),
                      String(cut.stdout.suffix(600)))
        XCTAssertLessThan(cut.stdout.utf8.count, 4096 + 1000)
        XCTAssertFalse(cut.stdout.contains(lines.last!))

        let all = try Fixture.pincer(["run", "net.show", "1", "--limit", "0"], stateDir: state)
        XCTAssertTrue(all.stdout.contains(body), "everything with --limit 0")
        XCTAssertFalse(all.stdout.contains("not shown"))
        let small = try Fixture.pincer(["run", "net.show", "1", "--limit", "10"], stateDir: state)
        XCTAssertTrue(small.stdout.contains("\n<\nline 1 of \n… (\(body.utf8.count - 10) more bytes, 2000 lines, of \(body.utf8.count) not shown"), small.stdout)
        let negative = try Fixture.pincer(["run", "net.show", "1", "--limit", "-1"], stateDir: state)
        XCTAssertNotEqual(negative.status, 0)
        XCTAssertTrue(negative.stderr.contains("limit must be 0 (everything) or more"), negative.stderr)
    }

    /// On a terminal net.list fits its width (COLUMNS, else the tty's); piped
    /// or with --json nothing is cut.
    func testListFitsTheTerminalAndCutsNothingElsewhere() throws {
        let state = Fixture.temporaryDirectory("pincer-net-list")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "1"], stateDir: state).status, 0)
        let long = "https://api.example.com/v1/" + String(repeating: "segment/", count: 20) + "end?query=" + String(repeating: "x", count: 50)
        let har = state + "/urls.har"
        try """
        {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [
          {"startedDateTime": "2024-05-01T10:00:00Z", "time": 12.5, "request": {"method": "GET", "url": "https://short.example.com/"},
           "response": {"status": 200, "content": {"size": 0, "mimeType": "text/plain"}}},
          {"startedDateTime": "2024-05-01T10:00:01Z", "time": 3, "request": {"method": "POST", "url": \(JSON.quote(long))},
           "response": {"status": 404, "content": {"size": 0, "mimeType": "text/plain"}}},
          {"startedDateTime": "2024-05-01T10:00:02Z", "time": 3, "request": {"method": "GET", "url": "https://evil.example.com/\\u001b[31mred"},
           "response": {"status": 200, "content": {"size": 0, "mimeType": "text/plain"}}}]}}
        """.write(toFile: har, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Fixture.pincer(["run", "net.import-har", har], stateDir: state).status, 0)
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        env.removeValue(forKey: "COLUMNS")

        func onTerminal(columns: Int, _ arguments: [String], environment: [String: String]) throws -> [String] {
            let result = try Fixture.run(Consumer.require(Consumer.debianPython),
                                         ["-c", Self.ptyRunner, String(columns), Fixture.pincer] + arguments, environment: environment)
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
            return result.stdout.split(separator: "\n").map(String.init)
        }
        // The tty's width.
        let narrow = try onTerminal(columns: 100, ["run", "net.list"], environment: env)
        XCTAssertEqual(narrow.count, 4, narrow.joined(separator: "\n"))
        XCTAssertTrue(narrow[0].hasPrefix("ID"), narrow[0])
        for line in narrow { XCTAssertLessThanOrEqual(line.count, 100, line) }
        XCTAssertTrue(narrow[2].contains("https://api.example.com/v1/segment/"), narrow[2])
        XCTAssertTrue(narrow[2].contains("…"), narrow[2])
        XCTAssertEqual(narrow.map(\.count).max(), 100, "the widest line fills the terminal")
        XCTAssertTrue(narrow[1].contains("https://short.example.com/"), "short URLs are whole")
        XCTAssertTrue(narrow[3].contains("https://evil.example.com/\\u{1B}[31mred"), "control characters are escaped: \(narrow[3])")
        XCTAssertFalse(narrow.joined().contains("\u{1B}"))
        // COLUMNS wins over the tty's width.
        var wide = env
        wide["COLUMNS"] = "120"
        let wider = try onTerminal(columns: 100, ["run", "net.list"], environment: wide)
        XCTAssertEqual(wider.map(\.count).max(), 120, wider.joined(separator: "\n"))
        // --json on a terminal, and any piped output, keep every URL whole.
        let json = try onTerminal(columns: 100, ["run", "net.list", "--json"], environment: env).joined()
        XCTAssertTrue(json.contains(long), json)
        var piped = env
        piped["COLUMNS"] = "40"
        let pipedText = try Fixture.run(Fixture.pincer, ["run", "net.list"], environment: piped).stdout
        XCTAssertTrue(pipedText.contains(long), pipedText)
        // --width asks for a width anywhere; --width -1 never cuts.
        let ninety = try Fixture.run(Fixture.pincer, ["run", "net.list", "", "--width", "90"], environment: env).stdout
        XCTAssertEqual(ninety.split(separator: "\n").map(\.count).max(), 90, ninety)
        let never = try onTerminal(columns: 100, ["run", "net.list", "", "--width", "-1"], environment: env).joined()
        XCTAssertTrue(never.contains(long), never)
    }

    /// Runs a program on a pseudo-terminal of the given width; prints what it wrote.
    static let ptyRunner = """
    import fcntl, os, pty, struct, subprocess, sys, termios
    columns = int(sys.argv[1])
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    child = subprocess.Popen(sys.argv[2:], stdin=follower, stdout=follower, stderr=subprocess.PIPE, close_fds=True)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    err = child.stderr.read()
    child.wait()
    sys.stdout.write(out.decode("utf-8", "replace").replace("\\r\\n", "\\n"))
    sys.stderr.write(err.decode("utf-8", "replace"))
    sys.exit(child.returncode)
    """

    func testFitCutsOnlyTheURLColumnToTheWidth() {
        func row(_ id: Int, _ url: String) -> JSON {
            var e = NetworkEntry(source: .imported, startedAt: 0, method: "GET", url: url)
            e.id = UInt64(id)
            e.state = .complete
            e.status = 200
            return e.summaryJSON
        }
        let rows = [row(1, "https://a.example.com/" + String(repeating: "p", count: 200)), row(22, "https://b.example.com/")]
        let fitted = NetworkEntry.fit(rows, width: 80)
        let urls = fitted.compactMap { $0["url"]?.stringValue }
        XCTAssertTrue(urls[0].hasSuffix("…"))
        XCTAssertEqual(urls[1], "https://b.example.com/")
        // The other columns: ID(2) METHOD(6) STATUS(6) STATE(8) DURATION(8) SIZE(4) SOURCE(8), seven gaps of two.
        XCTAssertEqual(urls[0].count, 80 - (2 + 6 + 6 + 8 + 8 + 4 + 8) - 14)
        XCTAssertEqual(fitted[0]["id"], rows[0]["id"])
        XCTAssertEqual(NetworkEntry.fit(rows, width: 10).first?["url"]?.stringValue?.count, 12, "at least 12 characters of URL")
        XCTAssertEqual(NetworkEntry.fit([], width: 80), [])
    }

    /// Large HARs are parsed entry by entry in parallel; the result must be
    /// the sequential parse's, and any damage must fall back to the exact error.
    func testParallelImportMatchesSequentialAndFallsBackOnDamage() throws {
        var entries: [NetworkEntry] = []
        for i in 0..<400 {
            var e = NetworkEntry(source: .manual, startedAt: 1_700_000_000 + Double(i), method: i % 3 == 0 ? "POST" : "GET",
                                 url: "https://api.example.com/items/\(i)?q=\"x\"")
            e.state = .complete
            e.status = 200
            e.requestHeaders = [Header("Accept", "application/json"), Header("X-Pad", String(repeating: "p", count: 2000))]
            e.responseBody = Body(payload: .stored(Array("{\"n\": \(i), \"s\": \"[\\\"]\"}".utf8)), size: 20, mimeType: "application/json")
            entries.append(e)
        }
        var bytes = HARExport.document(entries, creator: (name: "test", version: "1"))
        XCTAssertGreaterThan(bytes.count, 1 << 20, "big enough for the parallel path")
        XCTAssertNotNil(EntriesSplitter.scan(bytes), "the scan finds log.entries")
        let parallel = try HARImport.read(bytes)
        let (log, list) = try HARImport.logAndEntries(try JSON.parse(bytes: bytes))
        let sequential = HARImport.result(log: log, list.map { HARImport.entry($0) })
        XCTAssertEqual(parallel.entries, sequential.entries)
        XCTAssertEqual(parallel.entries.count, 400)
        XCTAssertEqual(parallel.entries[399].url, "https://api.example.com/items/399?q=%22x%22")

        // Damage one entry in the middle: the error names the place in the file.
        let target = Array("\"method\":\"GET\"".utf8)
        var hits = 0, position = -1
        for i in 0..<(bytes.count - target.count) where bytes[i..<(i + target.count)].elementsEqual(target) {
            hits += 1
            if hits == 200 { position = i; break }
        }
        XCTAssertGreaterThan(position, 0)
        bytes[position + 9] = UInt8(ascii: "X") // "method":XGET" : not JSON
        XCTAssertThrowsError(try HARImport.read(bytes)) { error in
            guard case .notJSON(let syntax) = error as? HARImportError else { return XCTFail("\(error)") }
            XCTAssertEqual(syntax.line, 1)
            XCTAssertEqual(syntax.column, position + 10)
        }
    }
}
