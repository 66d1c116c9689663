import Foundation
import XCTest
import PseudoL10n

/// Hostile catalogs: each used to kill the process reading it (through
/// `pincer run`, and so through `pincer attach` the app it is attached to).
/// They run in a child `pincer` so the test sees a crash as an exit status
/// rather than dying with it; each must end as an ordinary error (exit 1)
/// or a report, naming the file and where.
final class L10nLimitsTests: XCTestCase {
    private var dir = ""
    private var state = ""

    override func setUp() {
        dir = Fixture.temporaryDirectory("pincer-l10n-limits")
        state = Fixture.temporaryDirectory("pincer-l10n-limits-state")
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let path = "\(dir)/\(name)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func pincer(_ args: String...) throws -> Fixture.ProcessResult {
        try Fixture.pincer(Array(args), stateDir: state)
    }

    /// 900 nested dicts in a .stringsdict and 900 nested <b> in a
    /// strings.xml overflowed the stack of the recursive catalog XML
    /// scanner (SIGSEGV, exit 139). Now PincerXML refuses them at the
    /// catalog depth limit, with the file, line and column.
    func testDeeplyNestedXMLCatalogsAreRefusedAtTheDepthLimit() throws {
        let n = 900
        let plist = try write("deep.stringsdict", "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict>\n<key>a</key>\n"
            + String(repeating: "<dict><key>x</key>", count: n) + "<string>v</string>" + String(repeating: "</dict>", count: n)
            + "\n</dict>\n</plist>\n")
        let android = try write("strings.xml", "<resources>\n<string name=\"a\">" + String(repeating: "<b>", count: n) + "x"
            + String(repeating: "</b>", count: n) + "</string>\n</resources>\n")
        // <plist> and <dict> are 2 levels, so the 98th "<dict><key>x</key>" on
        // line 5 is level 100 and its <key> the 101st, refused.
        let plistColumn = 97 * 18 + "<dict>".count + 1
        // <resources>, <string> and 98 <b> are 100 levels; the 99th <b> is refused.
        let androidColumn = "<string name=\"a\">".count + 98 * 3 + 1
        for (path, column) in [(plist, plistColumn), (android, androidColumn)] {
            let result = try pincer("run", "l10n.catalog", path, "--output", "\(dir)/out")
            XCTAssertEqual(result.status, 1, "\(path): \(result.stderr.suffix(400))")
            XCTAssertTrue(result.stderr.contains("l10n.catalog: \(path): line \(path == plist ? 5 : 2), column \(column): elements nested more than 100 levels (the limit)"),
                          result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/out"))
        }
        // The limit is the catalog's: 100 levels read, 101 do not.
        let ok = "<resources>\n<string name=\"a\">" + String(repeating: "<b>", count: 98) + "x" + String(repeating: "</b>", count: 98) + "</string>\n</resources>\n"
        XCTAssertEqual(try Catalog(bytes: Array(ok.utf8), format: .android, table: "strings").strings.count, 1)
    }

    /// `%99999999999999999999$@` trapped on overflow in the placeholder
    /// check (SIGILL, exit 132). Numbers are read with checked arithmetic,
    /// and a position beyond 4096 is a problem of its own.
    func testHugeArgumentPositionIsAProblemNotATrap() throws {
        let base = try write("Base.strings", "\"a\" = \"%@\";\n\"b\" = \"%1$*99999999999999999999$d\";\n")
        let translated = try write("de.strings", "\"a\" = \"%99999999999999999999$@\";\n\"b\" = \"%1$*2$d\";\n")
        let result = try pincer("run", "l10n.check", base, translated)
        XCTAssertEqual(result.status, 1, result.stderr.suffix(400).description)
        XCTAssertTrue(result.stderr.contains("\(translated):1:8: \"a\" (de): %99999999999999999999$@ numbers an argument beyond 4096, the most printf takes"),
                      result.stderr)
        XCTAssertTrue(result.stderr.contains("\(base):2:8: \"b\": %1$*99999999999999999999$d numbers an argument beyond 4096"), result.stderr)

        // In the library: the same, and the position at the limit still counts.
        XCTAssertEqual(PlaceholderCheck.check("%4096$@", style: .backslash).map(\.kind), [.positionalGap])
        XCTAssertEqual(PlaceholderCheck.check("%4097$@ %1$@", style: .backslash).map(\.kind), [.invalid])
        XCTAssertEqual(PlaceholderCheck.arguments("%18446744073709551617$@", style: .backslash).outOfRange, ["%18446744073709551617$@"])
    }

    /// Fuzz/regressions/placeholders/positional-zero.txt: `%0$@` trapped
    /// ("Range requires lowerBound <= upperBound") when the highest argument
    /// was 0. printf counts from 1, so it is a problem of its own.
    func testArgumentZeroIsAProblemNotATrap() throws {
        let base = try write("Base.strings", "\"a\" = \"%1$@\";\n")
        let translated = try write("de.strings", "\"a\" = \"%0$@\";\n")
        let result = try pincer("run", "l10n.check", base, translated)
        XCTAssertEqual(result.status, 1, result.stderr.suffix(400).description)
        XCTAssertTrue(result.stderr.contains("%0$@ numbers argument 0; printf counts arguments from 1"), result.stderr)
        XCTAssertEqual(PlaceholderCheck.check("%0$@", style: .backslash).map(\.kind), [.invalid])
        XCTAssertEqual(PlaceholderCheck.check("%1$*0$d", style: .backslash).map(\.kind), [.invalid])
    }

    /// A Plural-Forms header is input too: a huge nplurals allocated a form
    /// table of that size, and a formula nested 100,000 parentheses deep or
    /// chained 100,000 terms long overflowed the stack of the recursive
    /// parser and evaluator. Beyond the limits the header is not used (the
    /// check then treats every form strictly), and the file still checks.
    func testHostilePluralFormsHeadersAreIgnoredNotACrash() throws {
        func po(_ pluralForms: String) -> String {
            "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Plural-Forms: \(pluralForms)\\n\"\n\n"
                + "#, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"eine Datei\"\nmsgstr[1] \"Dateien\"\n"
        }
        let cases = [
            "huge": "nplurals=9223372036854775807; plural=(n != 1);",
            "deep": "nplurals=2; plural=" + String(repeating: "(", count: 100_000) + "n != 1" + String(repeating: ")", count: 100_000) + ";",
            "not": "nplurals=2; plural=" + String(repeating: "!", count: 100_000) + "n;",
            "chain": "nplurals=2; plural=" + String(repeating: "n+", count: 100_000) + "n;",
        ]
        for (name, header) in cases.sorted(by: { $0.key < $1.key }) {
            let path = try write("\(name).po", po(header))
            let result = try pincer("run", "l10n.check", path)
            // As without a header: no form is known to be used often, so
            // none is checked strictly (before: SIGSEGV or an abort).
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr.suffix(400))")
            XCTAssertTrue(result.stdout.contains("problems  0"), "\(name): \(result.stdout)")
        }
        // A usable formula makes msgstr[1] strict: "Dateien" drops %d.
        let fine = try write("fine.po", po("nplurals=2; plural=(n != 1);"))
        let strict = try pincer("run", "l10n.check", fine)
        XCTAssertEqual(strict.status, 1, strict.stderr)
        XCTAssertTrue(strict.stderr.contains("argument 1 (int) is missing"), strict.stderr)
    }

    /// ICU plural bodies are scanned as messages, recursively; 3,000 levels
    /// are kept whole past the scanner's nesting limit instead.
    func testDeeplyNestedICUIsKeptWhole() throws {
        let message = String(repeating: "{n, plural, one {a", count: 3000) + "x" + String(repeating: "}}", count: 3000)
        let path = try write("icu.strings", "\"a\" = \"\(message)\";\n")
        let result = try pincer("run", "l10n.catalog", path, "--output", "\(dir)/icu.out.strings")
        XCTAssertEqual(result.status, 0, result.stderr.suffix(400).description)
        let out = try String(contentsOfFile: "\(dir)/icu.out.strings", encoding: .utf8)
        // The 20 outer levels are scanned; what is inside is kept as written.
        XCTAssertTrue(out.contains(String(repeating: "{n, plural, one {a", count: 2980) + "x"), String(out.prefix(200)))
        let pieces = PlaceholderScanner(style: .backslash).pieces(message)
        XCTAssertEqual(pieces.map(\.text).joined(), message)
        XCTAssertEqual(pieces.filter { $0.kind == .text }.map(\.text), Array(repeating: "a", count: PlaceholderScanner.maximumNesting))
    }
}
