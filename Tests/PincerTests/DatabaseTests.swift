import Foundation
import XCTest
import PincerPluginKit
@testable import DatabaseKit

/// The SQLite adapter on real files: the Chinook fixture (read in place,
/// written only on copies) and databases made here with the sqlite3 API
/// through the adapter's own sessions.
final class DatabaseTests: XCTestCase {
    static let chinook = Fixture.packageRoot + "/../shared/fixtures/sqlite/Chinook_Sqlite.sqlite"
    let adapter = SQLiteAdapter(paths: { [] })

    func open(_ path: String, write: Bool = false, timeout: Int = 5000) throws -> DatabaseSession {
        try adapter.open(path, write: write, timeoutMilliseconds: timeout)
    }

    /// The adapter's error; any other error fails the test (a forced cast
    /// would stop the whole run instead).
    func dbError(_ e: Error, file: StaticString = #filePath, line: UInt = #line) -> DatabaseError {
        if let d = e as? DatabaseError { return d }
        XCTFail("expected a DatabaseError, got \(type(of: e)): \(e)", file: file, line: line)
        return DatabaseError(PINCER_FAILED, "not a DatabaseError: \(e)")
    }

    func copyOfChinook() throws -> String {
        let path = Fixture.temporaryDirectory("pincer-db") + "/chinook.sqlite"
        try FileManager.default.copyItem(atPath: DatabaseTests.chinook, toPath: path)
        return path
    }

    /// A database with the awkward cases: WITHOUT ROWID, a view, generated
    /// columns, blobs and text with NUL bytes, names with spaces and quotes,
    /// a table without a primary key and one whose column shadows rowid.
    static func makeOddDatabase() throws -> String {
        let path = Fixture.temporaryDirectory("pincer-db") + "/odd.db"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        // The adapter refuses empty files, so the schema goes in with sqlite3 itself.
        let sql = """
            CREATE TABLE "my ""odd"" table" ("first name" TEXT NOT NULL, "it's" INTEGER, PRIMARY KEY ("first name")) WITHOUT ROWID;
            INSERT INTO "my ""odd"" table" VALUES ('Zoë', 1), ('Ann', 2), ('', 3);
            CREATE TABLE items (id INTEGER PRIMARY KEY, price REAL NOT NULL, qty INTEGER NOT NULL DEFAULT 1,
                                total REAL GENERATED ALWAYS AS (price * qty) VIRTUAL,
                                label TEXT GENERATED ALWAYS AS ('#' || id) STORED, data BLOB, note TEXT);
            INSERT INTO items (id, price, qty, data, note) VALUES (1, 2.5, 4, x'00ff0041', 'a' || char(0) || 'b'),
                                                               (2, 1.0, 1, x'', NULL), (9007199254740993, 9e999, 1, NULL, 'big');
            CREATE VIEW cheap AS SELECT id, price FROM items WHERE price < 2;
            CREATE TABLE log (at TEXT, message TEXT);
            INSERT INTO log VALUES ('t1', 'one'), ('t2', 'two'), (NULL, 'three');
            CREATE TABLE shadow (rowid TEXT, value INTEGER);
            INSERT INTO shadow VALUES ('r', 1);
            CREATE INDEX items_cheap ON items (price) WHERE price < 2;
            CREATE UNIQUE INDEX items_expr ON items (lower(note));
            """
        let r = try Fixture.run("/usr/bin/sqlite3", [path], input: sql)
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    // MARK: reading Chinook

    func testChinookObjectsAndSchema() throws {
        let s = try open(DatabaseTests.chinook)
        let names = try s.objects().map(\.name)
        XCTAssertEqual(names, ["Album", "Artist", "Customer", "Employee", "Genre", "Invoice", "InvoiceLine", "MediaType",
                               "Playlist", "PlaylistTrack", "Track"])

        let pt = try s.describe("PlaylistTrack")
        XCTAssertEqual(pt.identity, .primaryKey)
        XCTAssertEqual(pt.keyColumns, ["PlaylistId", "TrackId"])
        XCTAssertEqual(pt.columns.map(\.primaryKey), [1, 2])
        XCTAssertTrue(pt.indexes.contains { $0.primaryKey && $0.unique && $0.columns == ["PlaylistId", "TrackId"] })
        XCTAssertEqual(Set(pt.foreignKeys.map(\.table)), ["Playlist", "Track"])
        XCTAssertTrue(pt.ddl?.contains("PRIMARY KEY") ?? false)

        // Employee.ReportsTo refers to Employee itself.
        let employee = try s.describe("Employee")
        XCTAssertTrue(employee.foreignKeys.contains { $0.table == "Employee" && $0.from == ["ReportsTo"] && $0.to == ["EmployeeId"] })
        XCTAssertEqual(employee.identity, .primaryKey)
        XCTAssertEqual(employee.keyColumns, ["EmployeeId"])

        let track = try s.describe("Track")
        XCTAssertEqual(track.columns.first { $0.name == "Name" }?.declaredType, "NVARCHAR(200)")
        XCTAssertEqual(track.columns.first { $0.name == "Name" }?.notNull, true)

        XCTAssertThrowsError(try s.describe("Tracks")) { e in
            let error = dbError(e)
            XCTAssertEqual(error.status, PINCER_NOT_FOUND)
            XCTAssertTrue(error.message.contains("did you mean 'Track'"), error.message)
        }
    }

    func testNonASCIITextSurvives() throws {
        let s = try open(DatabaseTests.chinook)
        let page = try s.execute(Statement(sql: "SELECT Name FROM Artist WHERE ArtistId = ?1", parameters: [.integer(6)]))
        XCTAssertEqual(page.rows, [[.text("Antônio Carlos Jobim")]])
        let found = try s.execute(Statement(sql: "SELECT count(*) FROM Artist WHERE Name = ?", parameters: [.text("Antônio Carlos Jobim")]))
        XCTAssertEqual(found.rows, [[.integer(1)]])
    }

    /// Walks a whole table page by page with cursors and checks the result
    /// against one ORDER BY query over the same total order.
    func walk(_ s: DatabaseSession, _ table: String, order: [OrderTerm], pageSize: Int) throws -> (rows: [[DBValue]], pages: Int) {
        var rows: [[DBValue]] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try s.readPage(PageRequest(object: table, order: order, limit: pageSize, cursor: cursor))
            XCTAssertEqual(page.paging, cursor == nil ? .offset : .keyset)
            XCTAssertLessThanOrEqual(page.rows.count, pageSize)
            rows += page.rows
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 10_000
        return (rows, pages)
    }

    func testKeysetPagingMatchesOneQueryForEveryOrder() throws {
        let s = try open(DatabaseTests.chinook)
        let cases: [([OrderTerm], String)] = [
            ([], "TrackId"),
            ([OrderTerm("Composer")], "Composer, TrackId"),                                   // NULLs first
            ([OrderTerm("Composer", descending: true)], "Composer DESC, TrackId"),            // NULLs last
            ([OrderTerm("AlbumId", descending: true), OrderTerm("Name")], "AlbumId DESC, Name, TrackId"),
            ([OrderTerm("UnitPrice", descending: true), OrderTerm("Composer")], "UnitPrice DESC, Composer, TrackId"),
        ]
        for (order, sql) in cases {
            let expected = try s.execute(Statement(sql: "SELECT * FROM Track ORDER BY \(sql)")).rows
            let (rows, pages) = try walk(s, "Track", order: order, pageSize: 97)
            XCTAssertEqual(rows.count, 3503, "\(order)")
            XCTAssertEqual(rows, expected, "order \(sql)")
            XCTAssertEqual(pages, (3503 + 96) / 97, "\(order)")
        }
        // Composite keys: PlaylistTrack pages by (PlaylistId, TrackId).
        let expected = try s.execute(Statement(sql: "SELECT * FROM PlaylistTrack ORDER BY TrackId DESC, PlaylistId, TrackId")).rows
        XCTAssertEqual(try walk(s, "PlaylistTrack", order: [OrderTerm("TrackId", descending: true)], pageSize: 500).rows, expected)
    }

    /// Tables whose declared keys hold NULLs: a rowid table's PRIMARY KEY
    /// takes NULLs, several of them (they never conflict), unless it is the
    /// rowid itself; "INTEGER PRIMARY KEY DESC" is not the rowid. Every
    /// table has a unique `id` column, so a walk can be checked row by row.
    static func makeNullableKeyDatabase() throws -> String {
        let path = Fixture.temporaryDirectory("pincer-db-nullkeys") + "/keys.db"
        // 40 rows each, inserted out of key order; (i * 7) % 41 is distinct for i in 1...40.
        let rows = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40) "
        let sql = """
            CREATE TABLE single (k TEXT PRIMARY KEY, id INTEGER NOT NULL, n);
            \(rows) INSERT INTO single SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE printf('k%02d', (i * 7) % 41) END, i,
                                              CASE WHEN i % 4 = 0 THEN NULL ELSE i % 5 END FROM s;
            CREATE TABLE pair (a, b, id INTEGER NOT NULL, n TEXT, PRIMARY KEY (a, b));
            \(rows) INSERT INTO pair SELECT CASE i % 6 WHEN 0 THEN NULL WHEN 1 THEN i % 3 WHEN 2 THEN 'x' || (i % 2)
                                                    WHEN 3 THEN x'00' WHEN 4 THEN (i % 3) * 1.0 ELSE NULL END,
                                            CASE WHEN i % 2 = 0 THEN NULL ELSE i END, i,
                                            CASE WHEN i % 5 = 0 THEN NULL ELSE char(65 + i % 4) END FROM s;
            CREATE TABLE descending (x INTEGER PRIMARY KEY DESC, id INTEGER NOT NULL);
            \(rows) INSERT INTO descending SELECT CASE WHEN i % 2 = 0 THEN NULL ELSE (i * 7) % 41 END, i FROM s;
            CREATE TABLE half (rowid TEXT, k TEXT PRIMARY KEY, id INTEGER NOT NULL);
            \(rows) INSERT INTO half SELECT 'r', CASE WHEN i % 2 = 0 THEN NULL ELSE i END, i FROM s;
            CREATE TABLE strict (a TEXT, b INTEGER, id INTEGER NOT NULL, n, PRIMARY KEY (a, b)) WITHOUT ROWID;
            \(rows) INSERT INTO strict SELECT 'g' || (i % 4), (i * 7) % 41, i, CASE WHEN i % 3 = 0 THEN NULL ELSE i % 4 END FROM s;
            CREATE TABLE hidden (rowid, _rowid_, oid, k TEXT PRIMARY KEY, id INTEGER NOT NULL);
            \(rows) INSERT INTO hidden SELECT 1, 2, 3, CASE WHEN i % 2 = 0 THEN NULL ELSE i END, i FROM s;
            """
        let r = try Fixture.run(try Consumer.require(Consumer.sqlite3), [path], input: sql)
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    /// Every row exactly once, in the order the engine gives the same total
    /// order, at page sizes 1, 2, 3 and 7, by cursor and by offset.
    func testKeysetWalksReachEveryRowWhenKeysHoldNulls() throws {
        let s = try open(try DatabaseTests.makeNullableKeyDatabase())
        let ids = (1...40).map { DBValue.integer(Int64($0)) }
        // (table, order asked for, the same order in SQL with what the adapter adds)
        let cases: [(String, [OrderTerm], String)] = [
            ("single", [], "k, rowid"),
            ("single", [OrderTerm("k", descending: true)], "k DESC, rowid"),
            ("single", [OrderTerm("n")], "n, k, rowid"),
            ("single", [OrderTerm("n", descending: true)], "n DESC, k, rowid"),
            ("single", [OrderTerm("n", descending: true), OrderTerm("k")], "n DESC, k, rowid"),
            ("single", [OrderTerm("k"), OrderTerm("n", descending: true)], "k, n DESC, rowid"),
            ("pair", [], "a, b, rowid"),
            ("pair", [OrderTerm("b", descending: true), OrderTerm("a", descending: true)], "b DESC, a DESC, rowid"),
            ("pair", [OrderTerm("n", descending: true)], "n DESC, a, b, rowid"),
            ("pair", [OrderTerm("a"), OrderTerm("n")], "a, n, b, rowid"),
            ("descending", [], "x, rowid"),
            ("descending", [OrderTerm("x", descending: true)], "x DESC, rowid"),
            ("half", [], "k, _rowid_"),
            ("half", [OrderTerm("k", descending: true)], "k DESC, _rowid_"),
            ("strict", [], "a, b"),
            ("strict", [OrderTerm("n")], "n, a, b"),
            ("strict", [OrderTerm("n", descending: true), OrderTerm("b", descending: true)], "n DESC, b DESC, a"),
        ]
        for (table, order, sql) in cases {
            let expected = try s.execute(Statement(sql: "SELECT * FROM \(table) ORDER BY \(sql)")).rows
            XCTAssertEqual(expected.count, 40, table)
            let idColumn = try XCTUnwrap(try s.describe(table).columns.firstIndex { $0.name == "id" })
            for size in [1, 2, 3, 7] {
                let what = "\(table) ORDER BY \(sql), \(size) a page"
                let (rows, pages) = try walk(s, table, order: order, pageSize: size)
                XCTAssertEqual(rows.map { $0[idColumn] }.sorted { ($0.asInt ?? 0) < ($1.asInt ?? 0) }, ids, "\(what): every row exactly once")
                XCTAssertEqual(rows, expected, what)
                XCTAssertEqual(pages, (40 + size - 1) / size, what)
                XCTAssertEqual(try walkByOffset(s, table, order: order, pageSize: size), expected, "\(what), by offset")
            }
        }

        // The rowid added for NULL keys is part of the cursor's order: one
        // made for a table without it is refused, not misread.
        let strictCursor = try XCTUnwrap(try s.readPage(PageRequest(object: "strict", limit: 1)).nextCursor)
        XCTAssertThrowsError(try s.readPage(PageRequest(object: "single", limit: 1, cursor: strictCursor)))
    }

    /// A NULL-able key with every rowid name taken by a column: no order is
    /// total, so the table pages by offset, and the page says why.
    func testNullableKeyWithoutARowidNamePagesByOffsetAndSaysSo() throws {
        let s = try open(try DatabaseTests.makeNullableKeyDatabase())
        let page = try s.readPage(PageRequest(object: "hidden", limit: 7))
        XCTAssertEqual(page.rows.count, 7)
        XCTAssertTrue(page.more)
        XCTAssertNil(page.nextCursor)
        XCTAssertEqual(page.paging, .offset)
        let note = try XCTUnwrap(page.note)
        XCTAssertTrue(note.contains("hidden's key (k) may be NULL") && note.contains("--offset"), note)
        XCTAssertEqual(page.json(offset: 0)["next_offset"], .int(7))
        XCTAssertEqual(page.json(offset: 0)["paging_note"], .string(note))
        // Offsets still reach every row.
        let all = try walkByOffset(s, "hidden", order: [], pageSize: 7)
        XCTAssertEqual(Set(all.map { $0[4] }), Set((1...40).map { DBValue.integer(Int64($0)) }))
        XCTAssertEqual(all.count, 40)
        // A cursor of another table is refused with the reason.
        let cursor = try XCTUnwrap(try s.readPage(PageRequest(object: "single", limit: 1)).nextCursor)
        XCTAssertThrowsError(try s.readPage(PageRequest(object: "hidden", limit: 1, cursor: cursor))) { e in
            XCTAssertTrue(dbError(e).message.contains("may be NULL") && dbError(e).message.contains("--offset only"),
                          dbError(e).message)
        }
        // A table with a key that cannot be NULL, and a rowid alias, say nothing.
        XCTAssertNil(try s.readPage(PageRequest(object: "strict", limit: 1)).note)
        XCTAssertNil(try s.readPage(PageRequest(object: "single", limit: 1)).note)
    }

    /// Pages by --offset until one says no more rows follow.
    func walkByOffset(_ s: DatabaseSession, _ table: String, order: [OrderTerm], pageSize: Int) throws -> [[DBValue]] {
        var rows: [[DBValue]] = []
        while rows.count < 10_000 {
            let page = try s.readPage(PageRequest(object: table, order: order, limit: pageSize, offset: rows.count))
            XCTAssertEqual(page.paging, .offset)
            rows += page.rows
            if !page.more { break }
            XCTAssertEqual(page.rows.count, pageSize, "a page with more after it is full")
        }
        return rows
    }

    func testOffsetPagingAndCursorChecks() throws {
        let s = try open(DatabaseTests.chinook)
        let page = try s.readPage(PageRequest(object: "Track", limit: 3, offset: 3500))
        XCTAssertEqual(page.rows.map { $0[0] }, [.integer(3501), .integer(3502), .integer(3503)])
        XCTAssertNil(page.nextCursor, "the last page has no cursor")
        XCTAssertEqual(page.keys, [[.integer(3501)], [.integer(3502)], [.integer(3503)]])

        let first = try s.readPage(PageRequest(object: "Track", limit: 10, offset: 100))
        let next = try XCTUnwrap(first.nextCursor)
        let second = try s.readPage(PageRequest(object: "Track", limit: 10, cursor: next))
        XCTAssertEqual(second.rows.first?.first, .integer(111))

        for (request, fragment) in [
            (PageRequest(object: "Album", limit: 10, cursor: next), "another table or order"),
            (PageRequest(object: "Track", order: [OrderTerm("Name")], limit: 10, cursor: next), "another table or order"),
            (PageRequest(object: "Track", limit: 10, cursor: "garbage"), "not one this adapter made"),
            (PageRequest(object: "Track", order: [OrderTerm("Nmae")], limit: 10), "did you mean 'Name'"),
            (PageRequest(object: "Track", limit: 0), "at least 1"),
        ] {
            XCTAssertThrowsError(try s.readPage(request)) { e in
                XCTAssertEqual(dbError(e).status, PINCER_INVALID_ARGUMENT)
                XCTAssertTrue(dbError(e).message.contains(fragment), dbError(e).message)
            }
        }
    }

    func testBoundedCount() throws {
        let s = try open(DatabaseTests.chinook)
        XCTAssertEqual(try s.count("Track", limit: 0), RowCount(value: 3503, exact: true))
        XCTAssertEqual(try s.count("Track", limit: 5000), RowCount(value: 3503, exact: true))
        XCTAssertEqual(try s.count("Track", limit: 3503), RowCount(value: 3503, exact: true))
        XCTAssertEqual(try s.count("Track", limit: 100), RowCount(value: 100, exact: false))
    }

    // MARK: writes

    func testCompositeKeyWritesOnACopy() throws {
        let path = try copyOfChinook()
        let s = try open(path, write: true)
        let key: [DBValue] = [.integer(1), .integer(3402)]
        let before = try s.count("PlaylistTrack", limit: 0).value

        try s.delete("PlaylistTrack", key: key)
        XCTAssertEqual(try s.count("PlaylistTrack", limit: 0).value, before - 1)
        XCTAssertThrowsError(try s.delete("PlaylistTrack", key: key)) { e in
            XCTAssertEqual(dbError(e).status, PINCER_NOT_FOUND)
            XCTAssertTrue(dbError(e).message.contains("PlaylistId=1, TrackId=3402"), dbError(e).message)
        }
        let inserted = try s.insert("PlaylistTrack", values: [("PlaylistId", .integer(1)), ("TrackId", .integer(3402))])
        XCTAssertEqual(inserted.rows, [key])
        XCTAssertEqual(inserted.keys, [key])
        // Moving the row to another track through its composite key.
        try s.update("PlaylistTrack", key: key, values: [("TrackId", .integer(2819))])
        XCTAssertEqual(try s.execute(Statement(sql: "SELECT TrackId FROM PlaylistTrack WHERE PlaylistId = 1 AND TrackId IN (3402, 2819)")).rows,
                       [[.integer(2819)]])
        XCTAssertThrowsError(try s.update("PlaylistTrack", key: [.integer(1)], values: [("TrackId", .integer(1))])) { e in
            XCTAssertTrue(dbError(e).message.contains("(PlaylistId, TrackId): give 2 key values"), dbError(e).message)
        }
        // A constraint failure changes nothing.
        XCTAssertThrowsError(try s.insert("PlaylistTrack", values: [("PlaylistId", .integer(1)), ("TrackId", .integer(2819))]))
        XCTAssertEqual(try s.count("PlaylistTrack", limit: 0).value, before)

        // Unicode text written and read back through the self-referencing Employee table.
        try s.update("Employee", key: [.integer(2)], values: [("FirstName", .text("Zoë 🦀")), ("ReportsTo", .integer(1))])
        XCTAssertEqual(try s.execute(Statement(sql: "SELECT FirstName FROM Employee WHERE EmployeeId = 2")).rows, [[.text("Zoë 🦀")]])
    }

    func testReadOnlyRefusesEveryWrite() throws {
        let path = try copyOfChinook()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let s = try open(path)
        func refused(_ body: () throws -> Void, _ fragment: String, line: UInt = #line) {
            XCTAssertThrowsError(try body(), line: line) { e in
                let error = dbError(e)
                XCTAssertEqual(error.status, PINCER_UNSUPPORTED, error.message, line: line)
                XCTAssertTrue(error.message.contains(fragment), error.message, line: line)
            }
        }
        refused({ try s.delete("Genre", key: [.integer(1)]) }, "read-only")
        refused({ _ = try s.insert("Genre", values: [("Name", .text("Polka"))]) }, "read-only")
        refused({ try s.update("Genre", key: [.integer(1)], values: [("Name", .text("x"))]) }, "read-only")
        refused({ _ = try s.execute(Statement(sql: "DELETE FROM Genre")) }, "would write")
        refused({ _ = try s.execute(Statement(sql: "VACUUM INTO '/tmp/pincer-vacuum-copy.db'")) }, "would write")
        refused({ _ = try s.execute(Statement(sql: "ATTACH '\(path)' AS other")) }, "read-only")
        refused({ _ = try s.execute(Statement(sql: "PRAGMA journal_mode = WAL")) }, "read-only")
        refused({ _ = try s.execute(Statement(sql: "PRAGMA user_version = 7")) }, "read-only")
        // Reading pragmas still work, with and without arguments.
        XCTAssertEqual(try s.execute(Statement(sql: "PRAGMA table_info(Genre)")).rows.count, 2)
        XCTAssertEqual(try s.execute(Statement(sql: "PRAGMA user_version")).rows, [[.integer(0)]])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original, "the file is byte for byte unchanged")
    }

    // MARK: odd databases

    func testWithoutRowidViewsGeneratedColumnsAndOddNames() throws {
        let path = try DatabaseTests.makeOddDatabase()
        let s = try open(path, write: true)
        XCTAssertEqual(try s.objects(), [ObjectInfo(name: "cheap", kind: .view), ObjectInfo(name: "items", kind: .table),
                                         ObjectInfo(name: "log", kind: .table), ObjectInfo(name: "my \"odd\" table", kind: .table),
                                         ObjectInfo(name: "shadow", kind: .table)])

        let odd = try s.describe("my \"odd\" table")
        XCTAssertEqual(odd.identity, .primaryKey)
        XCTAssertEqual(odd.keyColumns, ["first name"])
        XCTAssertEqual(try walk(s, "my \"odd\" table", order: [], pageSize: 1).rows,
                       [[.text(""), .integer(3)], [.text("Ann"), .integer(2)], [.text("Zoë"), .integer(1)]])
        try s.update("my \"odd\" table", key: [.text("Ann")], values: [("it's", .integer(20))])
        try s.delete("my \"odd\" table", key: [.text("")])
        XCTAssertEqual(try s.count("my \"odd\" table", limit: 0).value, 2)

        let items = try s.describe("items")
        XCTAssertEqual(items.columns.first { $0.name == "total" }?.generated, .virtual)
        XCTAssertEqual(items.columns.first { $0.name == "label" }?.generated, .stored)
        XCTAssertEqual(items.columns.first { $0.name == "qty" }?.defaultSQL, "1")
        XCTAssertTrue(items.indexes.contains { $0.name == "items_cheap" && $0.partial && !$0.unique })
        XCTAssertTrue(items.indexes.contains { $0.name == "items_expr" && $0.unique && $0.columns == [nil] })
        let page = try s.readPage(PageRequest(object: "items", limit: 10))
        XCTAssertEqual(page.columns, ["id", "price", "qty", "total", "label", "data", "note"])
        XCTAssertEqual(page.rows[0], [.integer(1), .real(2.5), .integer(4), .real(10), .text("#1"), .blob([0, 0xff, 0, 0x41]), .text("a\0b")])
        XCTAssertEqual(page.rows[1][5], .blob([]))
        XCTAssertEqual(page.rows[2][0], .integer(9_007_199_254_740_993))
        XCTAssertEqual(page.rows[2][1], .real(.infinity))

        XCTAssertThrowsError(try s.update("items", key: [.integer(1)], values: [("total", .real(1))])) { e in
            XCTAssertTrue(dbError(e).message.contains("generated column"), dbError(e).message)
        }
        // A blob and a text with NUL bytes go in and come back whole.
        let row = try s.insert("items", values: [("price", .real(0.5)), ("data", .blob([0, 0, 1])), ("note", .text("x\0y\0"))])
        XCTAssertEqual(row.rows[0][4], .text("#9007199254740994"))
        XCTAssertEqual(row.rows[0][5], .blob([0, 0, 1]))
        XCTAssertEqual(row.rows[0][6], .text("x\0y\0"))

        // A view pages by offset only and cannot be written by key.
        let view = try s.describe("cheap")
        XCTAssertEqual(view.identity, .none)
        let viewPage = try s.readPage(PageRequest(object: "cheap", limit: 1))
        XCTAssertNil(viewPage.nextCursor)
        XCTAssertTrue(viewPage.more)
        XCTAssertEqual(viewPage.note, "no cursor: cheap is a view, which has no key, so it pages by --offset only")
        XCTAssertEqual(viewPage.keyColumns, [])
        XCTAssertThrowsError(try s.delete("cheap", key: [.integer(2)])) { e in
            XCTAssertEqual(dbError(e).status, PINCER_UNSUPPORTED)
        }

        // No primary key: rows are addressed by rowid; a column named rowid
        // makes the adapter use _rowid_.
        XCTAssertEqual(try s.describe("log").identity, .rowid)
        XCTAssertEqual(try s.describe("log").keyColumns, ["rowid"])
        XCTAssertEqual(try walk(s, "log", order: [OrderTerm("at", descending: true)], pageSize: 1).rows,
                       [[.text("t2"), .text("two")], [.text("t1"), .text("one")], [.null, .text("three")]])
        try s.delete("log", key: [.integer(3)])
        XCTAssertEqual(try s.describe("shadow").keyColumns, ["_rowid_"])
        XCTAssertEqual(try s.readPage(PageRequest(object: "shadow", limit: 5)).keys, [[.integer(1)]])
    }

    // MARK: statements, errors, deadlines

    func testStatementsAreClassifiedByTheEngine() throws {
        let path = try copyOfChinook()
        let s = try open(path, write: true)
        // A leading comment and a CTE do not fool it: this writes.
        let write = try s.execute(Statement(sql: "/* tidy */ WITH x AS (SELECT 1) UPDATE Genre SET Name = Name || '!' WHERE GenreId < ?",
                                            parameters: [.integer(3)]))
        XCTAssertTrue(write.wrote)
        XCTAssertEqual(write.changes, 2)
        let read = try s.execute(Statement(sql: "  select GenreId, Name from Genre order by 1", rowLimit: 2))
        XCTAssertFalse(read.wrote)
        XCTAssertTrue(read.truncated)
        XCTAssertEqual(read.rows, [[.integer(1), .text("Rock!")], [.integer(2), .text("Jazz!")]])
        XCTAssertEqual(read.columns, ["GenreId", "Name"])
        let same = try s.execute(Statement(sql: "SELECT 1 AS a, 2 AS a"))
        XCTAssertEqual(same.columns, ["a", "a"], "duplicate names keep their order")
    }

    func testBadSQLNamesWhereAndChangesNothing() throws {
        let path = try copyOfChinook()
        let s = try open(path, write: true)
        func invalid(_ sql: String, _ fragment: String, params: [DBValue] = [], line: UInt = #line) {
            XCTAssertThrowsError(try s.execute(Statement(sql: sql, parameters: params)), line: line) { e in
                let error = dbError(e)
                XCTAssertEqual(error.status, PINCER_INVALID_ARGUMENT, error.message, line: line)
                XCTAssertTrue(error.message.contains(fragment), error.message, line: line)
            }
        }
        invalid("SELECT * FORM Genre", "at byte 10")
        invalid("SELECT * FROM Genre; DELETE FROM Genre", "one statement at a time")
        invalid("SELECT * FROM Genre WHERE GenreId = ?", "1 parameter, 0 given")
        invalid("", "no statement")
        XCTAssertNoThrow(try s.execute(Statement(sql: "SELECT 1; -- a comment after is fine")))
        // A constraint failure part-way through a multi-row write rolls it all back.
        // (The first row becomes (1, 99999); the second would too, which the key forbids.)
        XCTAssertThrowsError(try s.execute(Statement(sql: "UPDATE PlaylistTrack SET TrackId = 99999 WHERE PlaylistId = 1")))
        XCTAssertEqual(try s.execute(Statement(sql: "SELECT count(*) FROM PlaylistTrack WHERE TrackId = 99999")).rows, [[.integer(0)]])
    }

    func testTimeoutStopsAQueryAndAWriteChangesNothing() throws {
        let path = try copyOfChinook()
        let s = try open(path, write: true, timeout: 150)
        let forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        let start = Date()
        XCTAssertThrowsError(try s.execute(Statement(sql: forever + "SELECT count(*) FROM n"))) { e in
            XCTAssertEqual(dbError(e).status, PINCER_CANCELLED)
            XCTAssertTrue(dbError(e).message.contains("timed out after 150 ms"), dbError(e).message)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertThrowsError(try s.execute(Statement(sql: forever + "INSERT INTO Genre (Name) SELECT 'g' || i FROM n")))
        XCTAssertEqual(try s.count("Genre", limit: 0).value, 25)
        // The session is still usable, with a fresh deadline per call.
        XCTAssertEqual(try s.execute(Statement(sql: "SELECT count(*) FROM Track")).rows, [[.integer(3503)]])
    }

    func testCancelFromAnotherThread() throws {
        let s = try open(DatabaseTests.chinook, timeout: 0)
        let box = SessionBox(s)
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            started.signal()
            Thread.sleep(forTimeInterval: 0.2)
            box.session.cancel()
        }
        started.wait()
        XCTAssertThrowsError(try s.execute(Statement(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"))) { e in
            XCTAssertEqual(dbError(e).status, PINCER_CANCELLED)
            XCTAssertTrue(dbError(e).message.contains("cancelled"), dbError(e).message)
        }
        // A cancel that arrives between calls does not poison the next one.
        s.cancel()
        XCTAssertEqual(try s.execute(Statement(sql: "SELECT 42")).rows, [[.integer(42)]])
    }

    // MARK: discovery

    func testDiscoveryChecksHeadersNotJustNames() throws {
        let dir = Fixture.temporaryDirectory("pincer-db-scan")
        try FileManager.default.copyItem(atPath: DatabaseTests.chinook, toPath: dir + "/music.db")
        try "not a database".write(toFile: dir + "/fake.sqlite", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: DatabaseTests.chinook, toPath: dir + "/data.bin")
        _ = FileManager.default.createFile(atPath: dir + "/empty.sqlite3", contents: nil)
        let found = SQLiteAdapter(paths: { [dir, DatabaseTests.chinook] }).databases()
        XCTAssertEqual(found.map(\.name), ["music", "Chinook_Sqlite"])
        XCTAssertEqual(found[0].location, dir + "/music.db")
        XCTAssertThrowsError(try adapter.open(dir + "/fake.sqlite", write: false, timeoutMilliseconds: 0)) { e in
            XCTAssertTrue(dbError(e).message.contains("is not a SQLite database"), dbError(e).message)
        }
        XCTAssertThrowsError(try adapter.open(dir + "/nothing.db", write: false, timeoutMilliseconds: 0)) { e in
            XCTAssertEqual(dbError(e).status, PINCER_NOT_FOUND)
        }
    }

    // MARK: values

    func testLiteralsAndJSON() throws {
        XCTAssertEqual(Literal.parse("NULL"), .null)
        XCTAssertEqual(Literal.parse("-42"), .integer(-42))
        XCTAssertEqual(Literal.parse("4.5e1"), .real(45))
        XCTAssertEqual(Literal.parse("'it''s'"), .text("it's"))
        XCTAssertEqual(Literal.parse("'007'"), .text("007"))
        XCTAssertEqual(Literal.parse("x'00Ff'"), .blob([0, 255]))
        XCTAssertEqual(Literal.parse("nan"), .text("nan"))
        XCTAssertEqual(Literal.parse("hello world"), .text("hello world"))
        XCTAssertEqual(try Literal.key("PlaylistId=1,TrackId=3402", columns: ["PlaylistId", "TrackId"]), [.integer(1), .integer(3402)])
        XCTAssertEqual(try Literal.key("TrackId=3402,PlaylistId=1", columns: ["PlaylistId", "TrackId"]), [.integer(1), .integer(3402)])
        XCTAssertEqual(try Literal.key("'a,b',2", columns: ["x", "y"]), [.text("a,b"), .integer(2)])
        XCTAssertThrowsError(try Literal.key("1", columns: ["x", "y"]))

        XCTAssertEqual(DBValue.integer(1 << 53).json, .int(1 << 53))
        XCTAssertEqual(DBValue.integer((1 << 53) + 1).json, .string("9007199254740993"))
        XCTAssertEqual(DBValue.integer(Int64.min).json, .string("-9223372036854775808"))
        XCTAssertEqual(DBValue.real(.nan).json, .object([("real", .string("NaN"))]))
        XCTAssertEqual(DBValue.real(-.infinity).json, .object([("real", .string("-Infinity"))]))
        XCTAssertEqual(DBValue.blob([0, 1, 2, 255]).json, .object([("base64", .string("AAEC/w=="))]))
        XCTAssertEqual(DBValue.text("a\0b").json.serialized(), "\"a\\u0000b\"")

        // Cursor values survive the round trip, NUL bytes and all.
        let order = [OrderColumn(expression: "\"a\"", descending: false, nullable: true)]
        for v in [DBValue.null, .integer(-7), .real(-0.25), .text("é\0"), .blob([0, 9])] {
            let c = KeysetCursor.encode(object: "t", order: order, values: [v])
            XCTAssertEqual(try KeysetCursor.decode(c, object: "t", order: order), [v])
        }
        XCTAssertEqual(Base64.encode([0xfb, 0xff], alphabet: .urlSafe), "-_8")
        XCTAssertEqual(Base64.decode("-_8", alphabet: .urlSafe), [0xfb, 0xff])
    }
}

final class SessionBox: @unchecked Sendable {
    let session: DatabaseSession
    init(_ s: DatabaseSession) { session = s }
}
