import Foundation
import XCTest
import PincerJSON

/// The browser's pages against the sqlite3 command-line tool on a real
/// database the tests did not make: every table of the Chinook fixture,
/// walked through the built `pincer` (db.rows --json, by keyset cursor and
/// by offset; --csv by offset) and compared row by row, value by value and
/// type by type with `sqlite3 -readonly -json` (and -csv) of the same
/// ordered SELECT.
///
/// The fixture is read in place: its header says it uses a rollback
/// journal (not WAL), so a read-only open creates no -wal or -shm file
/// beside it, and the test checks that none appeared.
final class DatabaseConformanceTests: XCTestCase {
    static let chinook = DatabaseTests.chinook
    var state = ""

    override func setUpWithError() throws {
        state = Fixture.temporaryDirectory("pincer-db-conformance")
        let header = try XCTUnwrap(FileHandle(forReadingAtPath: DatabaseConformanceTests.chinook), "\(DatabaseConformanceTests.chinook) is missing")
        defer { try? header.close() }
        let bytes = [UInt8](try XCTUnwrap(try header.read(upToCount: 20)))
        // Bytes 18 and 19: file format write and read versions, 1 = rollback journal, 2 = WAL.
        XCTAssertEqual(Array(bytes[18...19]), [1, 1], "the fixture should use a rollback journal, so reading it writes nothing beside it")
    }

    override func tearDown() {
        for suffix in ["-wal", "-shm", "-journal"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: DatabaseConformanceTests.chinook + suffix), "reading left \(suffix) beside the fixture")
        }
    }

    // MARK: the two sides

    /// sqlite3 -readonly -json of `sql`: the rows as JSON objects, in order.
    func sqlite(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> [JSON] {
        let r = try Fixture.run(try Consumer.require(Consumer.sqlite3), ["-readonly", "-json", DatabaseConformanceTests.chinook, sql])
        XCTAssertEqual(r.status, 0, "sqlite3 \(sql): \(r.stderr)", file: file, line: line)
        // sqlite3 prints nothing at all for no rows.
        if r.stdout.isEmpty { return [] }
        guard case .array(let rows) = try JSON.parse(r.stdout) else {
            XCTFail("sqlite3 -json printed no array for \(sql): \(r.stdout.prefix(200))", file: file, line: line)
            return []
        }
        return rows
    }

    /// One db.rows call through the built shell; the page document.
    func page(_ table: String, _ options: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: JSON] {
        let r = try Fixture.pincer(["db.rows", DatabaseConformanceTests.chinook, table, "--json"] + options, stateDir: state)
        XCTAssertEqual(r.status, 0, "db.rows \(table) \(options): \(r.stderr)", file: file, line: line)
        guard case .object(let top) = try JSON.parse(r.stdout), case .object(let result)? = top.first(where: { $0.0 == "result" })?.1 else {
            XCTFail("db.rows \(table) \(options) printed no result object: \(r.stdout.prefix(200))", file: file, line: line)
            return [:]
        }
        return Dictionary(result, uniquingKeysWith: { a, _ in a })
    }

    /// A table's visible columns and key, as the engine states them (not as the browser does).
    func columns(_ table: String) throws -> (names: [String], key: [String]) {
        let rows = try sqlite("SELECT name, pk FROM pragma_table_xinfo('\(table)') WHERE hidden != 1 ORDER BY cid")
        let names = rows.map { $0["name"]?.stringValue ?? "?" }
        let key = rows.filter { ($0["pk"]?.int64Value ?? 0) > 0 }.sorted { ($0["pk"]?.int64Value ?? 0) < ($1["pk"]?.int64Value ?? 0) }
            .map { $0["name"]?.stringValue ?? "?" }
        return (names, key)
    }

    /// The expected rows: each value with its storage class from typeof(),
    /// blobs as hex (sqlite3 -json prints a blob's bytes as text).
    func expected(_ table: String, _ names: [String], orderBy: String) throws -> [[Cell]] {
        let select = names.enumerated().map { i, n in
            let c = quote(n)
            return "\(c) AS v\(i), typeof(\(c)) AS t\(i), CASE WHEN typeof(\(c)) = 'blob' THEN hex(\(c)) END AS h\(i)"
        }.joined(separator: ", ")
        return try sqlite("SELECT \(select) FROM \(quote(table)) ORDER BY \(orderBy)").map { row in
            names.indices.map { i in
                Cell(sqlite: row["v\(i)"] ?? .null, type: row["t\(i)"]?.stringValue ?? "?", hex: row["h\(i)"]?.stringValue)
            }
        }
    }

    func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// One value as both sides give it, reduced to storage class and value.
    struct Cell: Equatable, CustomStringConvertible {
        var type: String
        var value: String

        /// From sqlite3: integers exact, reals to the double they round to.
        init(sqlite v: JSON, type: String, hex: String?) {
            self.type = type
            switch (type, v) {
            case ("null", _): value = ""
            case ("integer", .int(let i)): value = String(i)
            case ("integer", .uint(let u)): value = String(u)
            case ("real", .double(let d)): value = String(d)
            case ("real", .int(let i)): value = String(Double(i)) // sqlite3 prints some reals without a point
            case ("text", .string(let s)): value = s
            case ("blob", _): value = hex ?? "?"
            default: value = "unexpected \(v) for \(type)"
            }
        }

        /// From the browser's documented JSON form: integers beyond ±2^53 as
        /// strings, blobs as {"base64"}, non-finite reals as {"real"}.
        init(browser v: JSON, integerColumnHint: Bool = false) {
            switch v {
            case .null: type = "null"; value = ""
            case .int(let i): type = "integer"; value = String(i)
            case .uint(let u): type = "integer"; value = String(u)
            case .double(let d): type = "real"; value = String(d)
            case .string(let s):
                // A big integer, where sqlite3 has an integer; only beyond
                // ±2^53, so a small integer sent as text still shows.
                type = integerColumnHint && Int64(s).map { $0 > 1 << 53 || $0 < -(1 << 53) } == true ? "integer" : "text"
                value = s
            case .object(let f) where f.count == 1 && f[0].0 == "base64":
                type = "blob"
                value = f[0].1.stringValue.flatMap { Data(base64Encoded: $0) }.map { $0.map { String(format: "%02X", $0) }.joined() } ?? "bad base64"
            case .object(let f) where f.count == 1 && f[0].0 == "real":
                type = "real"; value = f[0].1.stringValue ?? "?"
            default: type = "?"; value = "\(v)"
            }
        }

        var description: String { "\(type):\(value)" }
    }

    /// The browser's rows as cells; a string becomes an integer only where
    /// sqlite3 says the value is one (a big integer in its JSON form).
    func cells(_ rows: [JSON], like expected: [[Cell]]) -> [[Cell]] {
        rows.enumerated().map { r, row in
            guard case .array(let values) = row else { return [Cell(browser: row)] }
            return values.enumerated().map { c, v in
                let hint = r < expected.count && c < expected[r].count && expected[r][c].type == "integer"
                return Cell(browser: v, integerColumnHint: hint)
            }
        }
    }

    /// Walks `table` through the shell by cursor, then by offset.
    func walk(_ table: String, limit: Int, order: [String] = [],
              file: StaticString = #filePath, line: UInt = #line) throws -> (keyset: [JSON], offset: [JSON], columns: [String], pages: Int) {
        var keyset: [JSON] = []
        var columns: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let p = try page(table, ["--limit", String(limit)] + order + (cursor.map { ["--after", $0] } ?? []), file: file, line: line)
            XCTAssertEqual(p["paging"], .string(cursor == nil ? "offset" : "keyset"), "\(table) page \(pages)", file: file, line: line)
            XCTAssertNil(p["paging_note"], "\(table) has a key that cannot be NULL", file: file, line: line)
            if case .array(let names)? = p["columns"] { columns = names.map { $0.stringValue ?? "?" } }
            guard case .array(let rows)? = p["rows"] else { XCTFail("\(table): a page without rows", file: file, line: line); break }
            XCTAssertLessThanOrEqual(rows.count, limit, file: file, line: line)
            keyset += rows
            cursor = p["next_cursor"]?.stringValue
            pages += 1
        } while cursor != nil && pages <= 100

        var offset: [JSON] = []
        while offset.count < 100_000 {
            let p = try page(table, ["--limit", String(limit), "--offset", String(offset.count)] + order, file: file, line: line)
            XCTAssertEqual(p["paging"], .string("offset"), file: file, line: line)
            guard case .array(let rows)? = p["rows"] else { XCTFail("\(table): a page without rows", file: file, line: line); break }
            let next = p["next_offset"]?.int64Value
            offset += rows
            guard let next else { break }
            XCTAssertEqual(Int(next), offset.count, "\(table): next_offset is where the page ended", file: file, line: line)
            XCTAssertEqual(rows.count, limit, "\(table): a page with more after it is full", file: file, line: line)
        }
        return (keyset, offset, columns, pages)
    }

    // MARK: the tests

    func testEveryChinookTableMatchesSqlite3ByKeysetAndByOffset() throws {
        let tables = try sqlite("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            .map { $0["name"]?.stringValue ?? "?" }
        XCTAssertEqual(tables.count, 11)
        let listed = try Fixture.pincer(["db.tables", DatabaseConformanceTests.chinook, "--json"], stateDir: state)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        guard case .object(let top) = try JSON.parse(listed.stdout), case .array(let objects)? = top.first(where: { $0.0 == "result" })?.1 else {
            return XCTFail("db.tables printed no array: \(listed.stdout)")
        }
        XCTAssertEqual(objects.map { $0["name"]?.stringValue ?? "?" }, tables)

        var types: [String: Int] = [:]
        var nonASCII = 0
        for table in tables {
            let (names, key) = try columns(table)
            XCTAssertFalse(key.isEmpty, "\(table) has a primary key")
            let want = try expected(table, names, orderBy: key.map(quote).joined(separator: ", "))
            let count = want.count
            XCTAssertGreaterThan(count, 0, table)
            // At least three pages each; one row a page for the smallest table.
            let limit = count <= 5 ? 1 : min(1000, (count + 2) / 3)
            let got = try walk(table, limit: limit)
            XCTAssertEqual(got.columns, names, "\(table): the columns and their order")
            XCTAssertEqual(got.pages, (count + limit - 1) / limit, "\(table): pages of \(limit)")
            XCTAssertEqual(got.keyset.count, count, "\(table) by keyset: \(count) rows")
            XCTAssertEqual(got.offset.count, count, "\(table) by offset: \(count) rows")
            assertSame(cells(got.keyset, like: want), want, "\(table) by keyset, \(limit) a page")
            assertSame(cells(got.offset, like: want), want, "\(table) by offset, \(limit) a page")
            for row in want {
                for c in row {
                    types[c.type, default: 0] += 1
                    if c.type == "text" && c.value.unicodeScalars.contains(where: { !$0.isASCII }) { nonASCII += 1 }
                }
            }
        }
        // What the comparison covered: every storage class Chinook holds.
        XCTAssertGreaterThan(types["integer"] ?? 0, 40_000, "\(types)")
        XCTAssertGreaterThan(types["real"] ?? 0, 6_000, "\(types)")
        XCTAssertGreaterThan(types["text"] ?? 0, 9_000, "\(types)")
        XCTAssertGreaterThan(types["null"] ?? 0, 1_000, "\(types)")
        XCTAssertGreaterThan(nonASCII, 100, "values with non-ASCII text")
    }

    /// Orders on NULL-able columns, both directions, the key appended by the
    /// browser and by hand in the sqlite3 query.
    func testOrdersOnNullableColumnsMatchSqlite3() throws {
        let cases: [(String, String, String)] = [
            ("Track", "Composer", "Composer, TrackId"),
            ("Track", "Composer:desc,Name", "Composer DESC, Name, TrackId"),
            ("Customer", "Company:desc", "Company DESC, CustomerId"),
            ("Customer", "State,Fax:desc", "State, Fax DESC, CustomerId"),
            ("Employee", "ReportsTo:desc", "ReportsTo DESC, EmployeeId"),
            ("Invoice", "BillingState,Total:desc", "BillingState, Total DESC, InvoiceId"),
            ("PlaylistTrack", "TrackId:desc", "TrackId DESC, PlaylistId"),
        ]
        for (table, order, sql) in cases {
            let (names, _) = try columns(table)
            let want = try expected(table, names, orderBy: sql)
            XCTAssertTrue(want.contains { $0.contains { $0.type == "null" } } || table == "PlaylistTrack", "\(table) ORDER BY \(sql) meets NULLs")
            let limit = max(1, want.count / 4 + 1)
            let got = try walk(table, limit: limit, order: ["--order", order])
            assertSame(cells(got.keyset, like: want), want, "\(table) ORDER BY \(sql) by keyset")
            assertSame(cells(got.offset, like: want), want, "\(table) ORDER BY \(sql) by offset")
        }
        // --desc alone: the key, reversed.
        let (names, _) = try columns("Genre")
        let want = try expected("Genre", names, orderBy: "GenreId DESC")
        let got = try walk("Genre", limit: 7, order: ["--desc"])
        assertSame(cells(got.keyset, like: want), want, "Genre --desc")
    }

    /// --csv pages (by offset: CSV carries no cursor) against sqlite3 -csv,
    /// both parsed as RFC 4180 (the two quote differently: sqlite3 quotes
    /// any field with a space). CSV has no types and no NULL; the JSON test
    /// above checks those.
    func testCSVPagesMatchSqlite3CSV() throws {
        for (table, key) in [("Artist", "ArtistId"), ("Invoice", "InvoiceId"), ("Track", "TrackId"), ("Employee", "EmployeeId")] {
            let r = try Fixture.run(try Consumer.require(Consumer.sqlite3),
                                    ["-readonly", "-csv", "-header", DatabaseConformanceTests.chinook, "SELECT * FROM \(quote(table)) ORDER BY \(key)"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let want = try CSVRecords.parse(r.stdout)
            let limit = (want.count - 1) / 3 + 1
            var got: [[String]] = []
            var offset = 0
            while offset < 100_000 {
                let page = try Fixture.pincer(["db.rows", DatabaseConformanceTests.chinook, table, "--csv", "--limit", String(limit), "--offset", String(offset)],
                                              stateDir: state)
                XCTAssertEqual(page.status, 0, page.stderr)
                let rows = try CSVRecords.parse(page.stdout)
                XCTAssertEqual(rows.first, want.first, "\(table): the header on every page")
                got += rows.dropFirst()
                offset += rows.count - 1
                if rows.count - 1 < limit { break }
            }
            XCTAssertEqual(got.count, want.count - 1, table)
            for (i, (a, b)) in zip(got, want.dropFirst()).enumerated() where a != b {
                XCTFail("\(table) row \(i + 1): pincer \(a), sqlite3 \(b)")
                break
            }
        }
    }

    func assertSame(_ got: [[Cell]], _ want: [[Cell]], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(got.count, want.count, "\(what): rows", file: file, line: line)
        // The first difference, named by row and column, rather than two dumps of thousands of rows.
        for (i, (a, b)) in zip(got, want).enumerated() where a != b {
            XCTFail("\(what): row \(i + 1) is \(a), sqlite3 has \(b)", file: file, line: line)
            return
        }
    }
}

/// RFC 4180 records, for comparing CSV from two writers that quote differently.
enum CSVRecords {
    struct Malformed: Error, CustomStringConvertible { let description: String }

    static func parse(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false, wasQuoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { chars.removeFirst(); field.unicodeScalars.append("\"") } else { quoted = false }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                guard field.isEmpty && !wasQuoted else { throw Malformed(description: "a quote inside an unquoted field in record \(records.count + 1)") }
                quoted = true
                wasQuoted = true
            } else if c == "," {
                record.append(field); field = ""; wasQuoted = false
            } else if c == "\n" || c == "\r" {
                if c == "\r" && chars.first == "\n" { chars.removeFirst() }
                record.append(field); field = ""; wasQuoted = false
                records.append(record); record = []
            } else {
                field.unicodeScalars.append(c)
            }
        }
        if quoted { throw Malformed(description: "an unterminated quoted field at the end") }
        if !field.isEmpty || !record.isEmpty || wasQuoted { record.append(field); records.append(record) }
        return records
    }
}
