import Foundation
import XCTest
@testable import NetworkLog
@testable import PincerHost

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

    /// Every shared HAR fixture imports or is rejected with a message, and the counts add up.
    func testEveryFixtureHARImportsOrIsRejected() throws {
        let dir = Fixture.packageRoot + "/../shared/fixtures/har"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else {
            throw XCTSkip("\(dir) is not present (fixtures live beside the checkout)")
        }
        let app = AppHost(withApp: false)
        try app.run("net.limits", "100000")
        var imported = 0
        for name in names.sorted() where name.hasSuffix(".har") || name.hasSuffix(".json") {
            let path = "\(dir)/\(name)"
            do {
                let report = try app.json("net.import-har", path)
                let (i, s, t) = (report["imported"]?.int64Value ?? -1, report["skipped"]?.int64Value ?? -1, report["total"]?.int64Value ?? -2)
                XCTAssertEqual(i + s + (report["ignored"]?.int64Value ?? 0), t, name)
                imported += Int(i)
            } catch let error as CommandFailure {
                XCTAssertTrue(error.message.hasPrefix(path + ": "), "\(name): \(error.message)")
            }
        }
        XCTAssertGreaterThan(imported, 20)
        XCTAssertEqual(try app.json("net.list").arrayValue?.count, imported)
    }

    func testPersistedLogSurvivesRestartAndRetentionDropsOldEntries() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("net.persist", "7"), "the log is kept in \(app.stateDirectory)/network-log.ndjson for 7 days")
        _ = try app.text("app.record", "https://api.example.com/a")
        _ = try app.text("app.record", "https://api.example.com/b")
        // An old line, as a week-old run would have left it.
        var old = NetworkEntry(source: .captured, startedAt: 1_000, method: "GET", url: "https://old.example.com/")
        old.recordedAt = 1_000
        old.state = .complete
        old.status = 200
        try LogFile.append(old, to: "\(app.stateDirectory)/network-log.ndjson")
        app.restart(withApp: false)
        let urls = try app.json("net.list").arrayValue?.compactMap { $0["url"]?.stringValue }
        XCTAssertEqual(urls, ["https://api.example.com/a", "https://api.example.com/b"])
        // The file was compacted: the old line is gone for good.
        let lines = try String(contentsOfFile: "\(app.stateDirectory)/network-log.ndjson", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertFalse(lines.contains { $0.contains("old.example.com") })
        // Stored redacted: the file never saw the password.
        XCTAssertFalse(lines.contains { $0.contains("hunter2") })
    }

    /// net.tail in one process follows what another process records.
    func testTailFollowsAnotherProcess() throws {
        let state = Fixture.temporaryDirectory("pincer-net-tail")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "1"], stateDir: state).status, 0)
        let tail = Process()
        tail.executableURL = URL(fileURLWithPath: Fixture.pincer)
        tail.arguments = ["run", "net.tail", "--limit", "2"]
        tail.environment = ["PINCER_STATE_DIR": state]
        let out = Pipe()
        tail.standardOutput = out
        try tail.run()
        usleep(500_000)
        let har = Fixture.packageRoot + "/../shared/fixtures/har/mitmproxy-successful_log.har"
        guard FileManager.default.fileExists(atPath: har) else {
            tail.terminate()
            throw XCTSkip("\(har) is not present")
        }
        let imported = try Fixture.pincer(["run", "net.import-har", har], stateDir: state)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let deadline = Date().addingTimeInterval(10)
        while tail.isRunning && Date() < deadline { usleep(50_000) }
        if tail.isRunning { tail.terminate(); XCTFail("net.tail did not stop after two entries") }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, text) // two entries and the closing summary
        XCTAssertTrue(lines.first?.hasPrefix("#1  ") == true, text)
        XCTAssertEqual(lines.last, "followed 2 entries")
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
