import Foundation
import XCTest

/// What the fuzz targets (Fuzz/, README "Fuzzing") found, each through the
/// real reader; the crashing inputs are also replayed by scripts/fuzz from
/// Fuzz/regressions/<target>/.
final class FuzzRegressionTests: XCTestCase {
    /// Fuzz/regressions/csv/quoted-bom-header.csv: a header whose first
    /// name is a quoted U+FEFF. The adapter's writer left it unquoted, so
    /// the rewritten file began with EF BB BF, the reader took that for a
    /// byte order mark, and the column lost its name ("column 1 has no
    /// name" for the reproducer; here "\u{FEFF}id" silently became "id").
    func testCSVRewriteKeepsALeadingFEFFInTheFirstField() throws {
        let plugin = try CSVAdapterTests.built.get()
        let state = Fixture.temporaryDirectory("pincer-fuzz-csv-state")
        let folder = Fixture.temporaryDirectory("pincer-fuzz-csv-data") + "/bom"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/t.csv"
        try Data("\"\u{FEFF}id\",n\n1,2\n".utf8).write(to: URL(fileURLWithPath: path))
        func pincer(_ args: String...) throws -> Fixture.ProcessResult { try Fixture.pincer(args, stateDir: state, pluginPath: plugin) }
        XCTAssertEqual(try pincer("csv.add", folder, "--name", "bom").status, 0)

        let inserted = try pincer("db.insert", "bom", "t", "\u{FEFF}id=3", "n=4", "--write")
        XCTAssertEqual(inserted.status, 0, inserted.stderr)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "\"\u{FEFF}id\",n\n1,2\n3,4\n")
        let rows = try pincer("db.rows", "bom", "t", "--json")
        XCTAssertEqual(rows.status, 0, rows.stderr)
        XCTAssertTrue(rows.stdout.contains("\"\u{FEFF}id\"") || rows.stdout.lowercased().contains("\"\\ufeffid\""), rows.stdout)

        // The fuzzer's input itself: one column named U+FEFF, no rows.
        let reproducer = try Data(contentsOf: URL(fileURLWithPath: Fixture.packageRoot + "/Fuzz/regressions/csv/quoted-bom-header.csv"))
        XCTAssertEqual(reproducer, Data("\"\u{FEFF}\"".utf8))
        try reproducer.write(to: URL(fileURLWithPath: folder + "/r.csv"))
        let one = try pincer("db.insert", "bom", "r", "\u{FEFF}=x", "--write")
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertEqual(try String(contentsOfFile: folder + "/r.csv", encoding: .utf8), "\"\u{FEFF}\"\nx\n")
        XCTAssertEqual(try pincer("db.count", "bom", "r").status, 0)
    }
}
