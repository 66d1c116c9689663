import Foundation
import NetworkLog
import XCTest

/// net.export-har from the persisted log: entries read, decoded and written
/// as HAR in one pass a page at a time (LogDatabase.forEachPage,
/// HARExport.Document), against the in-memory export of the same entries.
final class NetworkLogExportTests: XCTestCase {
    /// Pages of every size give every matching entry once, in id order,
    /// whether the filter is answered by SQL alone or checked per row.
    func testForEachPageGivesWhatForEachGives() throws {
        let dir = Fixture.temporaryDirectory("pincer-netexport-pages")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        try db.append((0..<700).map(NetworkLogDatabaseTests.entry))
        for text in ["", "method:POST", "method:POST ~u /items/1", "~u /items/3", "status-code:5xx | method:PUT", "domain:nowhere.example"] {
            let filter = try NetworkFilter(text)
            var expected: [UInt64] = []
            try db.forEach(filter: filter) { expected.append($0.id); return true }
            for limit in [1, 7, 100, 700, 1024] {
                var ids: [UInt64] = []
                var pages = 0
                try db.forEachPage(filter: filter, limit: limit, transform: { $0.id }) { page in
                    XCTAssertLessThanOrEqual(page.count, limit)
                    ids += page
                    pages += 1
                }
                XCTAssertEqual(ids, expected, "filter \"\(text)\", pages of \(limit)")
                XCTAssertLessThanOrEqual(pages, 700 / limit + 1)
            }
        }
    }

    /// The document streamed from pages is byte for byte the one
    /// HARExport.write makes of the same entries.
    func testDocumentFromPagesIsTheExportOfTheEntries() throws {
        let dir = Fixture.temporaryDirectory("pincer-netexport-document")
        let db = try LogDatabase.open(directory: dir, redact: { $0 })
        try db.append((0..<1_500).map(NetworkLogDatabaseTests.entry))
        let filter = try NetworkFilter("!~u /items/5")
        var entries: [NetworkEntry] = []
        try db.forEach(filter: filter) { entries.append($0); return true }
        let creator = (name: "pincer", version: "test")
        let expected = HARExport.document(entries, creator: creator)

        var streamed: [UInt8] = []
        var chunks = 0
        var document = HARExport.Document(creator: creator, chunkSize: 1 << 14)
        try db.forEachPage(filter: filter, limit: 256, transform: HARExport.entryBytes) { page in
            for bytes in page { document.append(entry: bytes) { streamed += $0; chunks += 1 } }
        }
        document.finish { streamed += $0; chunks += 1 }
        XCTAssertEqual(streamed, expected)
        XCTAssertGreaterThan(chunks, expected.count / (1 << 15))
        XCTAssertEqual(try JSON.parse(bytes: streamed)["log"]?["entries"]?.arrayValue?.count, entries.count)
    }

    /// A row whose JSON is damaged stops the export with the entry's id;
    /// `pincer run net.export-har` then fails and leaves the file it would
    /// have replaced as it was.
    func testDamagedRowStopsTheExportAndKeepsTheOldFile() throws {
        let state = Fixture.temporaryDirectory("pincer-netexport-damaged")
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
        do {
            let db = try LogDatabase.open(directory: state, redact: { $0 })
            try db.append((0..<1_300).map(NetworkLogDatabaseTests.entry))
        }
        let out = state + "/out.har"
        let good = try Fixture.pincer(["run", "net.export-har", out], stateDir: state)
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.hasPrefix("wrote 1300 entries ("), good.stdout)
        let exported = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(try JSON.parse(bytes: [UInt8](exported))["log"]?["entries"]?.arrayValue?.count, 1300)

        let damage = try Fixture.run(Consumer.require(Consumer.sqlite3), [state + "/network-log.sqlite", "UPDATE entries SET json = '{\"id\":' WHERE id = 1100"])
        XCTAssertEqual(damage.status, 0, damage.stderr)
        let db = try LogDatabase.open(directory: state, redact: { $0 })
        XCTAssertThrowsError(try db.forEachPage(filter: NetworkFilter(""), transform: { $0.id }) { _ in }) { error in
            XCTAssertTrue("\(error)".contains("entry 1100"), "\(error)")
        }
        let bad = try Fixture.pincer(["run", "net.export-har", out], stateDir: state)
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("not written") && bad.stderr.contains("entry 1100"), bad.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), exported, "the old file is kept")
    }
}
