import Foundation
import XCTest
import PincerJSON

/// The `db` plugin through the real `pincer` executable: the SQLite adapter
/// on the Chinook fixture and on databases made here, output as tables,
/// JSON and CSV, exit codes, and an adapter written in plain C.
final class DatabasePluginTests: XCTestCase {
    var state = ""
    override func setUp() { state = Fixture.temporaryDirectory("pincer-db-shell") }

    func pincer(_ args: String..., pluginPath: String? = nil) throws -> Fixture.ProcessResult {
        try Fixture.pincer(args, stateDir: state, pluginPath: pluginPath)
    }

    func result(_ r: Fixture.ProcessResult, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        guard let object = Fixture.json(r.stdout, file: file, line: line)["result"] as? [String: Any] else {
            XCTFail("no result object in: \(r.stdout.prefix(300))", file: file, line: line)
            return [:]
        }
        return object
    }

    func testBrowsingChinookFromTheShell() throws {
        let folder = (DatabaseTests.chinook as NSString).deletingLastPathComponent
        XCTAssertEqual(try pincer("db.add-path", folder).stdout, "added \(folder)\n")
        let list = try pincer("db.list")
        XCTAssertTrue(list.stdout.hasPrefix("NAME            ADAPTER  LOCATION"), list.stdout)
        XCTAssertTrue(list.stdout.contains("Chinook_Sqlite  sqlite"), list.stdout)

        let tables = try pincer("db.tables", "Chinook_Sqlite", "--json")
        XCTAssertEqual((Fixture.json(tables.stdout)["result"] as? [[String: Any]])?.count, 11)

        let schema = result(try pincer("db.schema", "Chinook_Sqlite", "PlaylistTrack", "--json"))
        XCTAssertEqual(schema["key"] as? [String], ["PlaylistId", "TrackId"])
        XCTAssertEqual(schema["rows_identified_by"] as? String, "primary key")

        // A page as text, the next one by its cursor, and the same pages as CSV.
        let first = result(try pincer("db.rows", "Chinook_Sqlite", "Artist", "--limit", "2", "--json"))
        XCTAssertEqual(first["columns"] as? [String], ["ArtistId", "Name"])
        XCTAssertEqual(first["paging"] as? String, "offset")
        let cursor = try XCTUnwrap(first["next_cursor"] as? String)
        let text = try pincer("db.rows", "Chinook_Sqlite", "Artist", "--limit", "3", "--after", cursor)
        XCTAssertEqual(text.stdout, """
            ArtistId  Name
            3         Aerosmith
            4         Alanis Morissette
            5         Alice In Chains
            paging       keyset
            next_cursor  \(try XCTUnwrap(result(try pincer("db.rows", "Chinook_Sqlite", "Artist", "--limit", "3", "--after", cursor, "--json"))["next_cursor"] as? String))

            """)
        let csv = try pincer("db.rows", "Chinook_Sqlite", "Artist", "--order", "Name:desc", "--limit", "2", "--offset", "268", "--csv")
        XCTAssertEqual(csv.stdout, """
            ArtistId,Name
            222,"Academy of St. Martin in the Fields, John Birch, Sir Neville Marriner & Sylvia McNair"
            215,Academy of St. Martin in the Fields Chamber Ensemble & Sir Neville Marriner

            """)
        let jobim = try pincer("db.rows", "Chinook_Sqlite", "Artist", "--after", cursor, "--limit", "4", "--csv")
        XCTAssertTrue(jobim.stdout.hasSuffix("6,Antônio Carlos Jobim\n"), jobim.stdout)

        // Parameters are items after the SQL; options are named.
        let query = result(try pincer("db.query", "Chinook_Sqlite", "SELECT Name FROM Track WHERE AlbumId = ? AND Milliseconds > ? ORDER BY 1",
                                      "1", "300000", "--limit", "5", "--json"))
        XCTAssertEqual((query["rows"] as? [[String]])?.first, ["For Those About To Rock (We Salute You)"])
        let count = result(try pincer("db.count", "Chinook_Sqlite", "Track", "--limit", "1000", "--json"))
        XCTAssertEqual(count["count"] as? Int, 1000)
        XCTAssertEqual(count["exact"] as? Bool, false)
    }

    func testWritesNeedWriteAndFailuresChangeNothing() throws {
        let dir = Fixture.temporaryDirectory("pincer-db-copy")
        let copy = dir + "/chinook.db"
        try FileManager.default.copyItem(atPath: DatabaseTests.chinook, toPath: copy)
        let original = try Data(contentsOf: URL(fileURLWithPath: copy))

        let refused = try pincer("db.delete", copy, "PlaylistTrack", "1,3402")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("read-only") && refused.stderr.contains("--write"), refused.stderr)
        let query = try pincer("db.query", copy, "DELETE FROM Track")
        XCTAssertEqual(query.status, 1)
        XCTAssertTrue(query.stderr.contains("would write"), query.stderr)
        let bad = try pincer("db.query", copy, "SELECT * FROM Trak", "--write", "--json")
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue((Fixture.json(bad.stdout)["error"] as? String)?.contains("no such table: Trak") ?? false, bad.stdout)
        let slow = try pincer("db.query", copy, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) INSERT INTO Genre (Name) SELECT i FROM n",
                              "--write", "--timeout", "100")
        XCTAssertEqual(slow.status, 1)
        XCTAssertTrue(slow.stderr.contains("timed out after 100 ms"), slow.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy)), original, "nothing was written")

        let deleted = result(try pincer("db.delete", copy, "PlaylistTrack", "PlaylistId=1,TrackId=3402", "--write", "--json"))
        XCTAssertEqual(deleted["deleted"] as? Int, 1)
        let again = try pincer("db.delete", copy, "PlaylistTrack", "1,3402", "--write")
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("no row of PlaylistTrack has key (PlaylistId=1, TrackId=3402)"), again.stderr)
        let inserted = result(try pincer("db.insert", copy, "Genre", "Name='Zoë''s picks'", "--write", "--json"))
        XCTAssertEqual(inserted["rows"] as? [[AnyHashable]], [[26, "Zoë's picks"]])
        XCTAssertEqual(try pincer("db.update", copy, "Genre", "26", "Name=Polka", "--write").status, 0)
        XCTAssertEqual(try pincer("db.query", copy, "SELECT Name FROM Genre WHERE GenreId = 26", "--csv").stdout, "Name\nPolka\n")
    }

    /// The keyset fix seen from the shell: a walk by --after over a key
    /// with NULLs (ties broken by the rowid) reaches all 40 rows once, and
    /// a table that cannot be walked by cursor says why.
    func testWalkingNullKeysFromTheShell() throws {
        let path = try DatabaseTests.makeNullableKeyDatabase()
        var ids: [Int] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = result(try pincer("db.rows", path, "pair", "--order", "n:desc", "--limit", "3", "--json",
                                         "--after", cursor ?? ""))
            XCTAssertNil(page["paging_note"])
            ids += (page["rows"] as? [[Any]] ?? []).map { $0[2] as? Int ?? -1 }
            cursor = page["next_cursor"] as? String
            pages += 1
        } while cursor != nil && pages <= 40
        XCTAssertEqual(pages, 14)
        XCTAssertEqual(ids.sorted(), Array(1...40), "every row exactly once")
        let expected = try Fixture.run(try Consumer.require(Consumer.sqlite3), ["-readonly", path, "SELECT id FROM pair ORDER BY n DESC, a, b, rowid"])
        XCTAssertEqual(ids.map(String.init).joined(separator: "\n") + "\n", expected.stdout, "in the engine's order")

        let hidden = result(try pincer("db.rows", path, "hidden", "--limit", "5", "--json"))
        XCTAssertEqual(hidden["paging"] as? String, "offset")
        XCTAssertTrue(hidden["next_cursor"] is NSNull, "\(hidden)")
        XCTAssertEqual(hidden["next_offset"] as? Int, 5)
        XCTAssertEqual(hidden["paging_note"] as? String,
                       "no cursor: hidden's key (k) may be NULL, and every rowid name (rowid, _rowid_, oid) is a column, so it pages by --offset only")
        let text = try pincer("db.rows", path, "hidden", "--limit", "5")
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("paging_note  no cursor: hidden's key (k) may be NULL"), text.stdout)
    }

    func testJSONKeepsBigIntegersBlobsAndInfinities() throws {
        let path = try DatabaseTests.makeOddDatabase()
        let page = result(try pincer("db.rows", path, "items", "--json"))
        let rows = try XCTUnwrap(page["rows"] as? [[Any]])
        XCTAssertEqual(rows[0][5] as? [String: String], ["base64": "AP8AQQ=="])
        XCTAssertEqual(rows[0][6] as? String, "a\0b")
        XCTAssertEqual(rows[2][0] as? String, "9007199254740993")
        XCTAssertEqual(rows[2][1] as? [String: String], ["real": "Infinity"])
        XCTAssertEqual(page["key_columns"] as? [String], ["id"])
        // Names with spaces and quotes, as arguments and in CSV.
        let odd = try pincer("db.rows", path, "my \"odd\" table", "--order", "it's:desc", "--csv")
        XCTAssertEqual(odd.stdout, "first name,it's\n,3\nAnn,2\nZoë,1\n")
        let unknown = try pincer("db.rows", path, "nope")
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("no table or view 'nope'"), unknown.stderr)
        let notDB = try pincer("db.tables", Fixture.packageRoot + "/README.md")
        XCTAssertEqual(notDB.status, 1)
        XCTAssertTrue(notDB.stderr.contains("README.md is not a SQLite database"), notDB.stderr)
    }
}

/// "pincer.database/1" from a plugin in plain C: an app offers its own
/// SQLite file, and adapter tables that break the contract are refused with
/// messages that name what is wrong.
final class DatabaseServiceTests: XCTestCase {
    func testAnAppOffersItsDatabaseAndBadAdaptersAreRefused() throws {
        let dir = Fixture.temporaryDirectory("pincer-db-client")
        let plugin = try Fixture.buildPlugin("db_client", into: dir)
        let app = dir + "/app.db"
        try FileManager.default.copyItem(atPath: DatabaseTests.chinook, toPath: app)
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = Fixture.temporaryDirectory("pincer-db-client-state")
        env["DB_CLIENT_PATH"] = app
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        func pincer(_ args: String...) throws -> Fixture.ProcessResult {
            try Fixture.run(Fixture.pincer, ["--plugin-path", plugin] + args, environment: env)
        }
        let report = try pincer("dbclient.report")
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertEqual(report.stdout, """
            add_sqlite_path: 0 
            add_sqlite_path(not a database): 2 /proc/self/status is not a SQLite database (its first bytes are not "SQLite format 3")
            register incomplete: 2 the adapter 'incomplete' leaves these slots NULL: read_page, release
            register bad id: 2 the adapter id 'Bad Id' must be 1 to 32 characters of a-z, 0-9, '-' and '_'
            register false promise: 2 the adapter 'promise' leaves these slots NULL: insert (PINCER_DB_CAN_WRITE is set), update (PINCER_DB_CAN_WRITE is set), remove (PINCER_DB_CAN_WRITE is set), execute (PINCER_DB_CAN_QUERY is set)
            register small: 2 the adapter table's struct_size is 24; version 1.0 of pincer_db_adapter_t needs 144
            register NULL: 2 register_adapter: the adapter table is NULL
            register good: 0 
            register duplicate: 4 an adapter with the id 'fixture' is already registered
            register zeroed: 2 the adapter table's struct_size is 0; version 1.0 of pincer_db_adapter_t needs 144


            """)
        // The app's file is listed and browsable; the adapter that cannot list
        // is reported beside it instead of hiding it.
        let list = try pincer("db.list", "--json")
        XCTAssertEqual(list.status, 0, list.stderr)
        let names = (Fixture.json(list.stdout)["result"] as? [[String: Any]])?.map { $0["name"] as? String }
        XCTAssertEqual(names, ["app"])
        XCTAssertTrue(list.stderr.contains("adapter fixture could not list its databases: this fixture adapter offers nothing"), list.stderr)
        // An object of scalars is a name,value table in CSV.
        XCTAssertEqual(try pincer("db.count", "app", "Genre", "--csv").stdout, "name,value\ntable,Genre\ncount,25\nexact,true\n")
        // The app's database by its bare name and by adapter:name.
        for name in ["app", "sqlite:app"] {
            let count = try pincer("db.count", name, "Genre", "--json")
            XCTAssertEqual(count.status, 0, "\(name): \(count.stderr)")
            XCTAssertEqual((Fixture.json(count.stdout)["result"] as? [String: Any])?["count"] as? Int, 25, name)
        }
        let failing = try pincer("db.tables", "fixture:anything")
        XCTAssertEqual(failing.status, 1)
        XCTAssertEqual(failing.stderr, "pincer: db.tables: this fixture adapter offers nothing\n")
    }
}

/// The example adapter in Plugins/Examples/CSVAdapter: plain C against
/// SDK/ alone, built with the README's cc command, used through the same
/// db.* commands as SQLite.
final class CSVAdapterTests: XCTestCase {
    /// Built once; a compile error fails every test here (with cc's
    /// message) rather than stopping the whole run.
    static let built: Result<String, BuildFailure> = {
        let dir = Fixture.temporaryDirectory("pincer-csv-adapter")
        let output = dir + "/libpincer-csv.so"
        do {
            let r = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-shared", "-fPIC",
                                                    "-fvisibility=hidden", "-I", Fixture.sdkInclude,
                                                    Fixture.packageRoot + "/Plugins/Examples/CSVAdapter/csv_adapter.c", "-o", output])
            return r.status == 0 ? .success(output) : .failure(BuildFailure(description: "cc failed for csv_adapter.c: \(r.stderr)"))
        } catch {
            return .failure(BuildFailure(description: "cc could not run: \(error)"))
        }
    }()

    struct BuildFailure: Error, CustomStringConvertible { let description: String }

    var plugin = ""
    var state = ""
    var folder = ""

    override func setUpWithError() throws {
        plugin = try CSVAdapterTests.built.get()
        state = Fixture.temporaryDirectory("pincer-csv-state")
        folder = Fixture.temporaryDirectory("pincer-csv-data") + "/music"
        try FileManager.default.copyItem(atPath: Fixture.packageRoot + "/Plugins/Examples/CSVAdapter/sample", toPath: folder)
        XCTAssertEqual(try pincer("csv.add", folder, "--name", "music").status, 0)
    }

    func pincer(_ args: String...) throws -> Fixture.ProcessResult {
        try Fixture.pincer(args, stateDir: state, pluginPath: plugin)
    }

    func json(_ r: Fixture.ProcessResult, file: StaticString = #filePath, line: UInt = #line) -> Any? {
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        return Fixture.json(r.stdout, file: file, line: line)["result"]
    }

    func testExportsOnlyTheEntryFunction() throws {
        let r = try Fixture.run("/usr/bin/nm", ["-D", "--defined-only", plugin])
        let symbols = r.stdout.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        XCTAssertEqual(symbols.filter { !$0.hasPrefix("_") }, ["pincer_plugin_entry"])
    }

    func testBrowsingCSVThroughTheSameCommands() throws {
        let list = json(try pincer("db.list", "--json")) as? [[String: Any]] ?? []
        XCTAssertTrue(list.contains { $0["name"] as? String == "music" && $0["adapter"] as? String == "csv" }, "\(list)")
        XCTAssertEqual(try pincer("db.tables", "csv:music", "--csv").stdout, "name,kind\nartists,table\ntracks,table\n")
        let schema = json(try pincer("db.schema", "music", "tracks", "--json")) as? [String: Any] ?? [:]
        XCTAssertEqual((schema["columns"] as? [[String: Any]])?.map { $0["type"] as? String },
                       ["INTEGER", "INTEGER", "TEXT", "INTEGER", "REAL", "TEXT"])
        XCTAssertEqual(schema["key"] as? [String], ["row"])

        // Keyset pages over a custom order add up to the whole ordered table.
        let all = json(try pincer("db.rows", "music", "tracks", "--order", "rating:desc,title", "--limit", "100", "--json")) as? [String: Any] ?? [:]
        let allRows = all["rows"] as? [[Any]] ?? []
        XCTAssertEqual(allRows.count, 20)
        var walked: [[Any]] = []
        var cursor: String?
        repeat {
            var args = ["db.rows", "music", "tracks", "--order", "rating:desc,title", "--limit", "6", "--json"]
            if let cursor { args += ["--after", cursor] }
            let page = json(try Fixture.pincer(args, stateDir: state, pluginPath: plugin)) as? [String: Any] ?? [:]
            walked += page["rows"] as? [[Any]] ?? []
            cursor = page["next_cursor"] as? String
        } while cursor != nil && walked.count < 100
        XCTAssertEqual(walked.map { "\($0)" }, allRows.map { "\($0)" })
        // NULL ratings sort last descending, as in SQLite.
        XCTAssertTrue(allRows.last.map { $0[4] is NSNull } ?? false, "\(allRows.last ?? [])")

        let count = json(try pincer("db.count", "music", "tracks", "--json")) as? [String: Any] ?? [:]
        XCTAssertEqual(count["count"] as? Int, 20)
        XCTAssertEqual(count["exact"] as? Bool, true)
        let query = try pincer("db.query", "music", "SELECT 1")
        XCTAssertEqual(query.status, 1)
        XCTAssertTrue(query.stderr.contains("does not run statements"), query.stderr)
    }

    /// The adapter's own keyset walks, over columns with NULLs and the
    /// empty text, in both directions and at small page sizes, against
    /// SQLite ordering the same values: the rows are loaded into sqlite3
    /// (untyped columns, so each value keeps its class) with their row
    /// numbers, which break ties in both.
    func testKeysetWalksOverNullableColumnsMatchSQLite() throws {
        func page(_ args: [String]) throws -> JSON {
            let r = try Fixture.pincer(["db.rows", "music", "tracks", "--json"] + args, stateDir: state, pluginPath: plugin)
            XCTAssertEqual(r.status, 0, "db.rows tracks \(args): \(r.stderr)")
            return try JSON.parse(r.stdout)["result"] ?? .null
        }
        let all = try page(["--limit", "100"])
        let rows = try XCTUnwrap(all["rows"]?.arrayValue, "\(all)")
        let keys = try XCTUnwrap(all["keys"]?.arrayValue, "\(all)")
        XCTAssertEqual(rows.count, 20)
        XCTAssertEqual(all["next_cursor"], .null)
        func literal(_ v: JSON) -> String {
            switch v {
            case .null: return "NULL"
            case .int(let i): return String(i)
            case .double(let d): return "\(d)"
            case .string(let t): return "'" + t.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
            default: XCTFail("an unexpected value \(v)"); return "NULL"
            }
        }
        var script = "CREATE TABLE t (row, id, artist_id, title, seconds, rating, notes);\n"
        for (key, row) in zip(keys, rows) {
            script += "INSERT INTO t VALUES (" + ((key.arrayValue ?? []) + (row.arrayValue ?? [])).map(literal).joined(separator: ", ") + ");\n"
        }
        // The sample has what the order has to get right: NULLs and an empty text.
        XCTAssertTrue(script.contains("NULL") && script.contains(", '');"), script)

        let cases: [(order: String, sql: String, sizes: [Int])] = [
            ("rating:desc,title", "rating DESC, title", [1, 2, 3, 7]),
            ("notes", "notes", [3, 7]),
            ("notes:desc,seconds", "notes DESC, seconds", [3, 7]),
            ("artist_id:desc,rating", "artist_id DESC, rating", [3, 7]),
        ]
        for c in cases {
            let sqlite = try Fixture.run(try Consumer.require(Consumer.sqlite3), [":memory:"],
                                         input: script + "SELECT row FROM t ORDER BY \(c.sql), row;\n")
            XCTAssertEqual(sqlite.status, 0, sqlite.stderr)
            let expected = sqlite.stdout.split(separator: "\n").map { Int64($0) ?? -1 }
            XCTAssertEqual(expected.count, 20)
            for size in c.sizes {
                var walked: [Int64] = []
                var cursor: JSON = .null
                var pages = 0
                repeat {
                    let p = try page(["--order", c.order, "--limit", String(size)] + (cursor.stringValue.map { ["--after", $0] } ?? []))
                    walked += (p["keys"]?.arrayValue ?? []).map { $0.arrayValue?.first?.int64Value ?? -1 }
                    cursor = p["next_cursor"] ?? .null
                    pages += 1
                } while cursor != .null && pages <= 20
                XCTAssertEqual(walked, expected, "--order \(c.order), \(size) a page: rows in SQLite's order, each once")
                XCTAssertEqual(pages, (20 + size - 1) / size, "--order \(c.order), \(size) a page")
            }
        }
    }

    func testWritesRewriteTheFileWholeAndNeedWrite() throws {
        let path = folder + "/artists.csv"
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let refused = try pincer("db.insert", "music", "artists", "id=7", "name='Nina Simone'")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("read-only"), refused.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original)

        let inserted = json(try pincer("db.insert", "music", "artists", "id=7", "name=Nina, \"Simone\"", "country=United States",
                                       "--write", "--json")) as? [String: Any] ?? [:]
        let row = try XCTUnwrap((inserted["rows"] as? [[Any]])?.first)
        XCTAssertEqual(row[0] as? Int, 7)
        XCTAssertEqual(row[1] as? String, "Nina, \"Simone\"")
        XCTAssertEqual(row[2] as? String, "United States")
        let key = try XCTUnwrap((inserted["keys"] as? [[Int]])?.first?.first)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).hasSuffix("7,\"Nina, \"\"Simone\"\"\",United States\n"))
        XCTAssertEqual(try pincer("db.update", "music", "artists", String(key), "country=USA", "--write").status, 0)
        XCTAssertEqual(try pincer("db.rows", "music", "artists", "--offset", "6", "--csv").stdout,
                       "id,name,country\n7,\"Nina, \"\"Simone\"\"\",USA\n")
        let wrongColumn = try pincer("db.update", "music", "artists", String(key), "colour=red", "--write")
        XCTAssertEqual(wrongColumn.status, 1)
        XCTAssertTrue(wrongColumn.stderr.contains("colour"), wrongColumn.stderr)
        XCTAssertEqual(try pincer("db.delete", "music", "artists", String(key), "--write").status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), original, "insert then delete gives the file back byte for byte")
        let missing = try pincer("db.delete", "music", "artists", "99", "--write")
        XCTAssertEqual(missing.status, 1)
    }

    func testMalformedFilesAreNamedWithLineAndColumn() throws {
        try "a,b\n1,2\n3,\"unterminated\n".write(toFile: folder + "/broken.csv", atomically: true, encoding: .utf8)
        let r = try pincer("db.rows", "music", "broken")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("broken.csv:3:3: unterminated quoted field"), r.stderr)
        // The other tables still work.
        XCTAssertEqual(try pincer("db.count", "music", "artists", "--json").status, 0)
    }
}
