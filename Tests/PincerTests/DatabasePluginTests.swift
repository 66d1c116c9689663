import Foundation
import XCTest

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
        return Fixture.json(r.stdout, file: file, line: line)["result"] as? [String: Any] ?? [:]
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
