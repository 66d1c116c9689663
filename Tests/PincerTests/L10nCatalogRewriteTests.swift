import Foundation
import XCTest
import PseudoL10n

/// The .po reader over UTF-8 bytes and the streamed rewrite
/// (`CatalogRewrite`) that `l10n.catalog` uses: the same output, strings,
/// positions and errors as the whole-catalog path (`Catalog`).
final class L10nCatalogRewriteTests: XCTestCase {
    private func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/l10n/\(name)")
        return Array(try Data(contentsOf: url))
    }

    private let mark: (CatalogString) -> String = { "[" + $0.raw + "]" }

    /// `text` as UTF-16 with a byte order mark.
    private func utf16(_ text: String, little: Bool) -> [UInt8] {
        var out: [UInt8] = little ? [0xFF, 0xFE] : [0xFE, 0xFF]
        for u in text.utf16 { out += little ? [UInt8(u & 0xFF), UInt8(u >> 8)] : [UInt8(u >> 8), UInt8(u & 0xFF)] }
        return out
    }

    /// The rewrite's pieces and the strings its transform saw.
    private func streamed(_ bytes: [UInt8], table: String = "T") throws -> (pieces: [[UInt8]], seen: [CatalogString], count: Int) {
        let rewrite = try CatalogRewrite(bytes: bytes, format: .po, table: table)
        var pieces: [[UInt8]] = []
        var seen: [CatalogString] = []
        try rewrite.write(locale: "en-XA", transform: { seen.append($0); return self.mark($0) }, to: { pieces.append($0) })
        return (pieces, seen, rewrite.stringCount)
    }

    /// A generated catalog: comments, flags (fuzzy ones), contexts, plurals, non-ASCII.
    static func generated(entries: Int) -> String {
        var text = "# generated\nmsgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Language: en\\n\"\n\n"
        let words = ["file", "Größe", "日本語", "%@", "%1$lld", "{name}", "<b>bold</b>", "https://example.com/a?b=c", "naïve", "🎉", "\\\"q\\\"", "tab\\t"]
        for i in 0..<entries {
            var s = ""
            for k in 0..<(4 + i % 9) { s += words[(i * 7 + k * 3) % words.count] + " " }
            if i % 5 == 0 { text += "# translator \(i)\n#. Shown in view \(i % 40)\n#: Sources/View.swift:\(i)\n" }
            if i % 11 == 0 { text += "#, fuzzy, c-format\n" }
            text += "msgctxt \"k\(i)\"\n"
            if i % 13 == 0 {
                text += "msgid \"\(s)one\"\nmsgid_plural \"\(s)many\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\n\n"
            } else if i % 17 == 0 {
                text += "msgid \"\"\n\"\(s)\\n\"\n\"second line\"\nmsgstr \"old\"\n\n"
            } else {
                text += "msgid \"\(s)\"\nmsgstr \"\"\n\n"
            }
        }
        return text
    }

    /// Streamed in pieces, the output is byte for byte what `Catalog.rewritten`
    /// returns, and the transform sees exactly `Catalog.strings` (keys,
    /// parts, comments, format flags, lines and columns), in order: for the
    /// fixture, with a UTF-8 byte order mark, with CRLF, as UTF-16 LE and BE
    /// (only the first piece carries the byte order mark), and for a
    /// generated catalog of several pieces.
    func testStreamedRewriteIsTheWholeRewrite() throws {
        let messages = String(decoding: try fixture("messages.po"), as: UTF8.self)
        let big = Self.generated(entries: 3_000)
        let inputs: [(String, [UInt8])] = [
            ("messages.po", Array(messages.utf8)),
            ("UTF-8 BOM", [0xEF, 0xBB, 0xBF] + Array(messages.utf8)),
            ("CRLF", Array(messages.replacingOccurrences(of: "\n", with: "\r\n").utf8)),
            ("UTF-16 LE", utf16(messages, little: true)),
            ("UTF-16 BE", utf16(messages, little: false)),
            ("generated", Array(big.utf8)),
            ("generated UTF-16", utf16(big, little: true)),
        ]
        for (name, bytes) in inputs {
            let catalog = try Catalog(bytes: bytes, format: .po, table: "T")
            var whole: [CatalogString] = []
            let expected = catalog.rewritten(locale: "en-XA") { whole.append($0); return self.mark($0) }
            let (pieces, seen, count) = try streamed(bytes)
            XCTAssertEqual(pieces.flatMap { $0 }, expected, name)
            XCTAssertEqual(seen, catalog.strings, name)
            XCTAssertEqual(whole, catalog.strings, name)
            XCTAssertEqual(count, catalog.strings.count, name)
            if name.hasPrefix("generated") {
                XCTAssertGreaterThan(pieces.count, 3, "\(name): \(expected.count) bytes in \(pieces.count) pieces")
                XCTAssertTrue(pieces.dropLast().allSatisfy { $0.count <= 3 * (1 << 16) }, name)
            }
        }
        // The rewrite reads back with every message translated and its fuzzy flags gone.
        let back = try Catalog(bytes: try streamed(Array(big.utf8)).pieces.flatMap { $0 }, format: .po, table: "T")
        XCTAssertEqual(back.translations.count, back.strings.filter { $0.part != "plural" }.count + 3_000 / 13 + 1)
        XCTAssertFalse(back.translations.contains { $0.fuzzy })
    }

    private func error(_ text: String) -> CatalogError? { error(bytes: Array(text.utf8)) }

    private func error(bytes: [UInt8]) -> CatalogError? {
        do throws(CatalogError) {
            _ = try CatalogRewrite(bytes: bytes, format: .po, table: "T")
        } catch {
            // The whole-catalog path reports the same.
            do throws(CatalogError) { _ = try Catalog(bytes: bytes, format: .po, table: "T"); XCTFail("Catalog read it") } catch let other {
                XCTAssertEqual(other, error)
            }
            return error
        }
        XCTFail("expected an error")
        return nil
    }

    /// Errors keep their order and positions: a syntax error anywhere before
    /// a duplicate or bad escape; the first duplicate in file order, with
    /// its first definition; canonically equivalent keys as one message
    /// (as String compares them); columns in Unicode scalars, the byte
    /// order mark not one; ill-formed UTF-8 where it is.
    func testErrorsAsTheEntriesWereReadThenChecked() {
        let dup = "msgid \"a\"\nmsgstr \"1\"\n\nmsgid \"a\"\nmsgstr \"2\"\n"
        XCTAssertEqual(error(dup + "\nmsgid \"b\nmsgstr \"\"\n"),
                       CatalogError(line: 7, column: 7, message: "unterminated string: the '\"' opened here has no closing '\"' on its line"))
        XCTAssertEqual(error(dup), CatalogError(line: 4, column: 1, message: "duplicate message \"a\": first defined on line 1"))
        XCTAssertEqual(error("msgid \"b\"\nmsgstr \"\"\nmsgid \"a\"\nmsgstr \"\"\nmsgid \"b\"\nmsgstr \"\"\nmsgid \"a\"\nmsgstr \"\"\nmsgid \"b\"\nmsgstr \"\"\n"),
                       CatalogError(line: 5, column: 1, message: "duplicate message \"b\": first defined on line 1"))
        XCTAssertEqual(error("msgctxt \"c\"\nmsgid \"a\"\nmsgstr \"\"\nmsgctxt \"c\"\nmsgid \"a\"\nmsgstr \"\"\n"),
                       CatalogError(line: 5, column: 1, message: "duplicate message \"a\" in its context: first defined on line 2"))
        XCTAssertEqual(error("msgid \"caf\u{E9}\"\nmsgstr \"\"\nmsgid \"cafe\u{301}\"\nmsgstr \"\"\n")?.message,
                       "duplicate message \"cafe\u{301}\": first defined on line 1")
        // A bad escape before a duplicate is reported, and a duplicate before a bad escape.
        XCTAssertEqual(error("msgid \"x\"\nmsgstr \"\\q\"\n" + dup)?.message, "invalid escape sequence '\\q'")
        XCTAssertEqual(error(dup + "msgid \"x\"\nmsgstr \"\\q\"\n")?.line, 4)
        XCTAssertEqual(error("msgid \"\u{E9}\u{E9}\\q\"\nmsgstr \"\"\n"),
                       CatalogError(line: 1, column: 10, message: "invalid escape sequence '\\q'"))
        XCTAssertEqual(error("msgid \"a\\\u{E9}\"\nmsgstr \"\"\n")?.message, "invalid escape sequence '\\\u{E9}'")
        XCTAssertEqual(error(bytes: [0xEF, 0xBB, 0xBF] + Array("msgid \"a\\q\"\nmsgstr \"\"\n".utf8)),
                       CatalogError(line: 1, column: 9, message: "invalid escape sequence '\\q'"))
        XCTAssertEqual(error(bytes: Array("msgid \"\u{E9}\"\nmsgstr \"".utf8) + [0xC3, 0x28] + Array("\"\n".utf8)),
                       CatalogError(line: 2, column: 9, message: "invalid UTF-8"))
        XCTAssertEqual(error("msgid \"a\"\nmsgstr \"\"\n\nmsgid \"b\"\n"), CatalogError(line: 5, column: 1, message: "the msgid on line 4 has no msgstr"))
        XCTAssertEqual(error("#, fuzzy\nmsgctxt \"c\"\n")?.message, "the msgctxt on line 2 has no msgid")
        XCTAssertEqual(error("  msgid \"a\"\n  msgstr \"\u{E9}\" \u{E9}\n"),
                       CatalogError(line: 2, column: 14, message: "unexpected '\u{E9}' after the closing '\"' (write \\\" for a quote inside a string)"))
    }

    /// Keys are told apart by a 32-bit hash first; among 200,000 distinct
    /// keys some hashes are equal (about 4.7 pairs expected), and those
    /// are compared by key, so none is taken for a duplicate.
    func testEqualHashesAreNotDuplicates() throws {
        var text = ""
        text.reserveCapacity(200_000 * 30)
        for i in 0..<200_000 { text += "msgid \"m\(i)\"\nmsgstr \"\"\n" }
        let rewrite = try CatalogRewrite(bytes: Array(text.utf8), format: .po, table: "T")
        XCTAssertEqual(rewrite.stringCount, 200_000)
        XCTAssertEqual(error(text + "msgid \"m123456\"\nmsgstr \"\"\n")?.message, "duplicate message \"m123456\": first defined on line 246913")
    }

    /// Other formats go through `Catalog` and come out in one piece.
    func testOtherFormatsInOnePiece() throws {
        let bytes = try fixture("Localizable.strings")
        let rewrite = try CatalogRewrite(bytes: bytes, format: .strings, table: "Localizable")
        var pieces: [[UInt8]] = []
        try rewrite.write(locale: "en-XA", transform: mark, to: { pieces.append($0) })
        let catalog = try Catalog(bytes: bytes, format: .strings, table: "Localizable")
        XCTAssertEqual(pieces, [catalog.rewritten(locale: "en-XA", transform: mark)])
        XCTAssertEqual(rewrite.stringCount, catalog.strings.count)
    }
}
