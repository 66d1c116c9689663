import Foundation
import XCTest
import PseudoL10n

/// Reading and rewriting catalogs (`Catalog`), on fixture files in Tests/Fixtures/l10n.
final class L10nCatalogTests: XCTestCase {
    // MARK: Helpers

    private func fixtureURL(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/l10n/\(name)")
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtureURL(name)))
    }

    private func load(_ name: String, _ format: CatalogFormat, table: String = "Localizable") throws -> Catalog {
        try Catalog(bytes: try fixture(name), format: format, table: table)
    }

    private let mark: (CatalogString) -> String = { "[" + $0.raw + "]" }

    /// The error reading `text` throws; fails the test when it reads.
    private func readError(_ text: String, _ format: CatalogFormat, file: StaticString = #filePath,
                           line: UInt = #line) -> CatalogError? {
        readError(bytes: Array(text.utf8), format, file: file, line: line)
    }

    private func readError(bytes: [UInt8], _ format: CatalogFormat, file: StaticString = #filePath,
                           line: UInt = #line) -> CatalogError? {
        do throws(CatalogError) {
            let catalog = try Catalog(bytes: bytes, format: format, table: "T")
            XCTFail("expected an error, read \(catalog.strings.count) strings", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Checks the position of the error and that its message contains `message`.
    private func assertError(_ text: String, _ format: CatalogFormat, line: Int, column: Int, _ message: String,
                             file: StaticString = #filePath, sourceLine: UInt = #line) {
        guard let error = readError(text, format, file: file, line: sourceLine) else { return }
        XCTAssertEqual(error.line, line, "line of \(error)", file: file, line: sourceLine)
        XCTAssertEqual(error.column, column, "column of \(error)", file: file, line: sourceLine)
        XCTAssertTrue(error.message.contains(message), "message of \(error) should contain \(message.debugDescription)",
                      file: file, line: sourceLine)
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func utf16(_ s: String, littleEndian: Bool) -> [UInt8] {
        var out: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
        for unit in s.utf16 {
            out += littleEndian ? [UInt8(unit & 0xFF), UInt8(unit >> 8)] : [UInt8(unit >> 8), UInt8(unit & 0xFF)]
        }
        return out
    }

    private func summary(_ strings: [CatalogString]) -> [String] {
        strings.map { $0.part.isEmpty ? "\($0.key)=\($0.raw)" : "\($0.key)|\($0.part)=\($0.raw)" }
    }

    /// A translation without positions (they move when a language is added).
    private func describe(_ t: CatalogTranslation) -> String {
        "\(t.language)|\(t.source.key)|\(t.source.part)=\(t.source.raw)|\(t.translated.part)=\(t.translated.raw)|\(t.translated.comment ?? "-")"
    }

    // MARK: Formats

    func testFormatForPath() {
        XCTAssertEqual(Catalog.format(forPath: "App/en.lproj/Localizable.strings"), .strings)
        XCTAssertEqual(Catalog.format(forPath: "Localizable.stringsdict"), .stringsdict)
        XCTAssertEqual(Catalog.format(forPath: "/x/Localizable.xcstrings"), .xcstrings)
        XCTAssertEqual(Catalog.format(forPath: "po/fr.po"), .po)
        XCTAssertEqual(Catalog.format(forPath: "po/messages.POT"), .po)
        XCTAssertEqual(Catalog.format(forPath: "res/values/strings.xml"), .android)
        XCTAssertNil(Catalog.format(forPath: "README.md"))
        XCTAssertNil(Catalog.format(forPath: "strings"))
        XCTAssertNil(Catalog.format(forPath: "dir.strings/file"))
    }

    // MARK: .strings

    func testStringsListsEntriesWithCommentsAndPositions() throws {
        let catalog = try load("Localizable.strings", .strings)
        XCTAssertEqual(catalog.format, .strings)
        XCTAssertEqual(catalog.table, "Localizable")
        XCTAssertEqual(summary(catalog.strings), [
            "welcome.title=Welcome to Pincer!",
            "greeting=Hello, %@",
            "transfer.summary=Sent %1$@ to %2$@ at %3$lld%%",
            #"quote=She said \"hi\" \\ then left"#,
            #"multiline=Line one\nLine two\tTabbed"#,
            #"unicode.escape=Arrow \U2192 and caf\u00e9"#,
            "non.ascii=Größe: 12 € — ça va? 日本語",
            "empty=",
            "unquoted_key=Unquoted key",
            "braces=Hi {name}, you have {count} new messages",
        ])
        XCTAssertEqual(catalog.strings.map(\.comment), [
            "Title of the welcome screen", "Greeting with the user's name", "Two arguments, reordered by translators",
            nil, nil, nil, nil, "Empty value", nil, nil,
        ])
        XCTAssertTrue(catalog.strings.allSatisfy { $0.style == .backslash && $0.table == "Localizable" && $0.part.isEmpty })
        let first = catalog.strings[0]
        XCTAssertEqual([first.line, first.column], [5, 20])
        let nonASCII = catalog.strings[6]
        XCTAssertEqual([nonASCII.line, nonASCII.column], [16, 16])
        let unquoted = catalog.strings[8]
        XCTAssertEqual([unquoted.line, unquoted.column], [20, 17])
        XCTAssertTrue(catalog.translations.isEmpty)
    }

    func testStringsEscapedKeysAreDecoded() throws {
        let catalog = try Catalog(bytes: Array(#""a\"b\n\U00e9" = "x";"#.utf8), format: .strings, table: "T")
        XCTAssertEqual(catalog.strings.map(\.key), ["a\"b\né"])
        XCTAssertEqual(catalog.strings.map(\.raw), ["x"])
    }

    /// Octal escapes (up to three digits) in .strings keys and .po ids.
    func testOctalEscapesAreDecoded() throws {
        let strings = try Catalog(bytes: Array(#""\101\1024\7" = "x";"#.utf8), format: .strings, table: "T")
        XCTAssertEqual(strings.strings.map(\.key), ["AB4\u{07}"])
        let po = try Catalog(bytes: Array("msgid \"\\101\\0629\"\nmsgstr \"\"\n".utf8), format: .po, table: "T")
        XCTAssertEqual(po.strings.map(\.key), ["A29"])
    }

    func testStringsIdentityRoundTripIsByteIdentical() throws {
        for name in ["Localizable.strings", "UTF16LE.strings", "UTF16BE.strings", "CRLF.strings"] {
            let bytes = try fixture(name)
            let catalog = try Catalog(bytes: bytes, format: .strings, table: "T")
            XCTAssertFalse(catalog.strings.isEmpty, name)
            XCTAssertEqual(catalog.rewritten(locale: "en-XA") { $0.raw }, bytes, name)
        }
    }

    /// XML catalogs are read by PincerXML over UTF-8; a UTF-16 file is
    /// re-encoded for it and its byte offsets mapped back to characters, so
    /// positions and the rewrite are those of the file as it is.
    func testUTF16AndroidCatalogPositionsAndRewrite() throws {
        let xml = "<resources>\n  <string name=\"größe\">Größe 🎉 &amp; mehr</string>\n  <string name=\"b\">B</string>\n</resources>\n"
        let bytes = utf16(xml, littleEndian: true)
        let catalog = try Catalog(bytes: bytes, format: .android, table: "strings")
        XCTAssertEqual(summary(catalog.strings), ["größe=Größe 🎉 &amp; mehr", "b=B"])
        XCTAssertEqual([catalog.strings[1].line, catalog.strings[1].column], [3, 20])
        XCTAssertEqual(catalog.rewritten(locale: "x") { $0.raw }, bytes)
        XCTAssertEqual(catalog.rewritten(locale: "x", transform: mark), utf16(xml.replacingOccurrences(of: ">Größe 🎉 &amp; mehr<", with: ">[Größe 🎉 &amp; mehr]<")
            .replacingOccurrences(of: ">B<", with: ">[B]<"), littleEndian: true))
        XCTAssertEqual(readError(bytes: utf16("<resources>\n  <string name=\"ü\">é</strinG>\n</resources>\n", littleEndian: false), .android)
            .map { "\($0.line):\($0.column)" }, "2:21")
    }

    func testUTF8ByteOrderMarkIsKeptAndNotAColumn() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("\"k\" = \"v\";\n".utf8)
        let catalog = try Catalog(bytes: bytes, format: .strings, table: "T")
        XCTAssertEqual([catalog.strings[0].line, catalog.strings[0].column], [1, 8])
        XCTAssertEqual(catalog.rewritten(locale: "x") { $0.raw }, bytes)
        XCTAssertEqual(catalog.rewritten(locale: "x", transform: mark), [0xEF, 0xBB, 0xBF] + Array("\"k\" = \"[v]\";\n".utf8))
        let xml: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<resources><string name=\"a\">A</string></resources>".utf8)
        let android = try Catalog(bytes: xml, format: .android, table: "strings")
        XCTAssertEqual([android.strings[0].line, android.strings[0].column], [1, 29])
        XCTAssertEqual(android.rewritten(locale: "x") { $0.raw }, xml)
    }

    func testStringsMarkedOutput() throws {
        let catalog = try load("Localizable.strings", .strings)
        XCTAssertEqual(text(catalog.rewritten(locale: "en-XA", transform: mark)), text(try fixture("Localizable.marked.strings")))
    }

    func testStringsUTF16ReadAndRewriteKeepTheEncoding() throws {
        let le = try load("UTF16LE.strings", .strings)
        XCTAssertEqual(summary(le.strings), ["save=Save", "copying=Copying %lld files…", "emoji=Done 🎉"])
        XCTAssertEqual(le.strings.map(\.comment), ["UTF-16 LE with BOM", "Shown while copying %lld files", nil])
        XCTAssertEqual([le.strings[1].line, le.strings[1].column], [4, 14])
        let leExpected = "/* UTF-16 LE with BOM */\n\"save\" = \"[Save]\";\n/* Shown while copying %lld files */\n"
            + "\"copying\" = \"[Copying %lld files…]\";\n\"emoji\" = \"[Done 🎉]\";\n"
        XCTAssertEqual(le.rewritten(locale: "x", transform: mark), utf16(leExpected, littleEndian: true))

        let be = try load("UTF16BE.strings", .strings)
        XCTAssertEqual(summary(be.strings), ["cancel=Cancel", "delete=Delete “%@”?"])
        XCTAssertEqual(be.strings[0].comment, "UTF-16 BE with BOM")
        let beExpected = "// UTF-16 BE with BOM\n\"cancel\" = \"[Cancel]\";\n\"delete\" = \"[Delete “%@”?]\";\n"
        XCTAssertEqual(be.rewritten(locale: "x", transform: mark), utf16(beExpected, littleEndian: false))
    }

    func testStringsCRLFValueKeepsItsNewline() throws {
        let catalog = try load("CRLF.strings", .strings)
        XCTAssertEqual(catalog.strings.map(\.raw), ["1", "two\r\nlines"])
        XCTAssertEqual([catalog.strings[1].line, catalog.strings[1].column], [2, 8])
        XCTAssertEqual(text(catalog.rewritten(locale: "x", transform: mark)), "\"a\" = \"[1]\";\r\n\"b\" = \"[two\r\nlines]\";\r\n")
    }

    func testStringsErrors() {
        assertError("\"a\" = \"1\";\n\"b\" \"2\";\n", .strings, line: 2, column: 5, "expected '=' after the key \"b\"")
        assertError("\"a\" = \"1\"\n\"b\" = \"2\";\n", .strings, line: 2, column: 1, "expected ';' after the value of \"a\"")
        assertError("\"a\" = \"1\";\n\"b\" = \"abc;\n", .strings, line: 2, column: 7, "unterminated string")
        assertError("\"a\" = \"1\";\n/* never closed\n\"b\" = \"2\";\n", .strings, line: 2, column: 1, "unterminated comment")
        assertError("\"a\" = \"x\\U12G4\";", .strings, line: 1, column: 9, "invalid \\U escape")
        assertError("\"a\" = \"1\";\n\"b\" = \"2\";\n\"a\" = \"3\";\n", .strings, line: 3, column: 1,
                    "duplicate key \"a\": defined on line 1 and again on line 3")
        assertError("\"a\" = ;", .strings, line: 1, column: 7, "expected a quoted value")
        assertError("\"a\" = \"1\";\n\"b\";\n", .strings, line: 2, column: 4, "expected '='")
    }

    // MARK: .stringsdict

    func testStringsdictListsEveryPluralCategory() throws {
        let catalog = try load("Localizable.stringsdict", .stringsdict)
        XCTAssertEqual(summary(catalog.strings), [
            "files.count|NSStringLocalizedFormatKey=%#@files@ in “%@”",
            "files.count|files.zero=No files",
            "files.count|files.one=%lld file",
            "files.count|files.other=%lld files",
            "transfer & sync|NSStringLocalizedFormatKey=%1$#@items@ &amp; %2$#@folders@",
            "transfer & sync|items.one=one item &lt;new&gt;",
            "transfer & sync|items.other=%d items",
            "transfer & sync|folders.one=one folder",
            "transfer & sync|folders.other=%d folders (&#233;t&#xE9;)",
            "empty.format|NSStringLocalizedFormatKey=",
        ])
        XCTAssertTrue(catalog.strings.allSatisfy { $0.style == .xml && $0.comment == nil })
        XCTAssertEqual([catalog.strings[0].line, catalog.strings[0].column], [9, 11])
        XCTAssertEqual([catalog.strings[2].line, catalog.strings[2].column], [19, 12])
        XCTAssertTrue(catalog.translations.isEmpty)
    }

    func testStringsdictIdentityAndMarkedOutput() throws {
        let bytes = try fixture("Localizable.stringsdict")
        let catalog = try Catalog(bytes: bytes, format: .stringsdict, table: "Localizable")
        XCTAssertEqual(catalog.rewritten(locale: "en-XA") { $0.raw }, bytes)
        XCTAssertEqual(text(catalog.rewritten(locale: "en-XA", transform: mark)),
                       text(try fixture("Localizable.marked.stringsdict")))
    }

    func testStringsdictErrors() {
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n"
        assertError(head + "  <key>a</key>\n  <dict>\n    <key>NSStringLocalizedFormatKey</key>\n    <string>x</strin>\n  </dict>\n</dict>\n</plist>\n",
                    .stringsdict, line: 7, column: 14, "end tag </strin> does not match <string> opened at line 7, column 5")
        assertError(head + "  <key>a</key>\n  <string>not a dict</string>\n</dict>\n</plist>\n",
                    .stringsdict, line: 5, column: 3, "maps each key to a <dict>")
        assertError(head + "  <key>a</key>\n  <dict>\n    <key>NSStringLocalizedFormatKey</key>\n    <string>Tom &amp Jerry</string>\n  </dict>\n</dict>\n</plist>\n",
                    .stringsdict, line: 7, column: 17, "'&' must start a reference such as &amp;")
        assertError(head + "  <!-- unterminated\n</dict>\n</plist>\n", .stringsdict, line: 4, column: 3, "unterminated comment")
        assertError("<plist version=\"1.0\">\n<array/>\n</plist>\n", .stringsdict, line: 2, column: 1, "exactly one <dict>")
        assertError(head + "  <key>a</key>\n</dict>\n</plist>\n", .stringsdict, line: 4, column: 15, "the key \"a\" has no value")
    }

    // MARK: Android

    func testAndroidListsStringsPluralsAndArrays() throws {
        let catalog = try load("strings.xml", .android, table: "strings")
        XCTAssertEqual(summary(catalog.strings), [
            "welcome_title=Welcome to <b>Pincer</b>!",
            "greeting=Hello, <xliff:g id=\"name\" example=\"Ada\">%1$s</xliff:g>!",
            #"apostrophe=Don\'t stop &amp; don\'t \"quote\""#,
            "cdata=<![CDATA[<b>hi</b> & <i>bye</i>]]>",
            "non_ascii=Größe: 12 € — ça va? 日本語",
            "empty=",
            "unread_messages|one=%d unread message",
            "unread_messages|other=%d unread messages",
            "planets|[0]=Mercury",
            "planets|[1]=Venus &#x2640;",
            "planets|[2]=Earth",
            #"newline=First\nSecond \u2192 {count}"#,
        ])
        XCTAssertEqual(catalog.strings.map(\.comment), [
            "Title of the welcome screen", nil, nil, nil, nil, nil,
            "Unread messages", "Used for 0 and 2+ in English", nil, nil, nil, nil,
        ])
        XCTAssertTrue(catalog.strings.allSatisfy { $0.style == .android && $0.table == "strings" })
        XCTAssertEqual([catalog.strings[0].line, catalog.strings[0].column], [8, 34])
        XCTAssertEqual([catalog.strings[6].line, catalog.strings[6].column], [18, 30])
        XCTAssertEqual([catalog.strings[8].line, catalog.strings[8].column], [27, 15])
        XCTAssertFalse(catalog.strings.contains { $0.key == "app_name" || $0.key == "internal_count" || $0.key == "accent" })
    }

    /// The rewritten file is the input without its translatable="false"
    /// resources (and the comment just before one): a locale's copy of them
    /// is what aapt and lint warn about. Everything else stays byte for byte.
    func testAndroidIdentityAndMarkedOutputLeaveOutUntranslatable() throws {
        let bytes = try fixture("strings.xml")
        let catalog = try Catalog(bytes: bytes, format: .android, table: "strings")
        let untranslatable = [
            "    <!-- Name of the app, never translated -->\n    <string name=\"app_name\" translatable=\"false\">Pincer</string>\n",
            "    <plurals name=\"internal_count\" translatable=\"false\">\n        <item quantity=\"other\">%d</item>\n    </plurals>\n",
        ]
        var expected = text(bytes)
        for block in untranslatable {
            XCTAssertTrue(expected.contains(block), "the fixture has \(block)")
            expected = expected.replacingOccurrences(of: block, with: "")
        }
        let identity = text(catalog.rewritten(locale: "en-XA") { $0.raw })
        XCTAssertEqual(identity, expected)
        XCTAssertFalse(identity.contains("translatable"), identity)
        XCTAssertEqual(text(catalog.rewritten(locale: "en-XA", transform: mark)), text(try fixture("strings.marked.xml")))
        // A resource sharing its line with another keeps the line; only the element goes.
        let inline = "<resources><string name=\"a\" translatable=\"false\">A</string><string name=\"b\">B</string></resources>\n"
        let one = try Catalog(bytes: Array(inline.utf8), format: .android, table: "strings")
        XCTAssertEqual(text(one.rewritten(locale: "x", transform: mark)), "<resources><string name=\"b\">[B]</string></resources>\n")
    }

    func testAndroidErrors() {
        assertError("<resources>\n  <string name=hello>x</string>\n</resources>\n", .android, line: 2, column: 16,
                    "the value of attribute name of <string> is not in quotes")
        assertError("<resources>\n  <string name=\"a\"><![CDATA[open\n</string>\n</resources>\n", .android, line: 2, column: 20,
                    "unterminated CDATA section")
        assertError("<resources>\n  <string name=\"a\">Fish &chips</string>\n</resources>\n", .android, line: 2, column: 25,
                    "'&' must start a reference such as &amp;")
        assertError("<resources>\n  <string name=\"a\">x<b>y</string></b>\n</resources>\n", .android, line: 2, column: 25,
                    "end tag </string> does not match <b> opened at line 2, column 21")
        assertError("<resources>\n  <string name=\"a\">x</string>\n", .android, line: 1, column: 1,
                    "<resources> is never closed (the input ends at line 3, column 1)")
        assertError("<?xml version=\"1.0\"?>\n<plist/>\n", .android, line: 2, column: 1, "must be <resources>")
        assertError("<resources>\n  <plurals name=\"p\">\n    <item>x</item>\n  </plurals>\n</resources>\n", .android, line: 3, column: 5,
                    "has no quantity attribute")
    }

    // MARK: .po

    func testPOListsMessagesWithContextsPluralsAndComments() throws {
        let catalog = try load("messages.po", .po, table: "messages")
        XCTAssertEqual(summary(catalog.strings), [
            "Welcome to Pincer!=Welcome to Pincer!",
            "Hello, %s=Hello, %s",
            #"Usage: pincer [OPTION]..."# + "\nRuns the tool.\nReport bugs to <bugs@example.com>.="
                + #"Usage: pincer [OPTION]...\nRuns the tool.\nReport bugs to <bugs@example.com>."#,
            "menu\u{4}Open=Open",
            "door\u{4}Open=Open",
            "%d file removed=%d file removed",
            "%d file removed|plural=%d files removed",
            "Say \"hi\" to {name}\tnow=" + #"Say \"hi\" to {name}\tnow"#,
        ])
        XCTAssertEqual(catalog.strings.map(\.comment), [
            "Title of the welcome screen", "Translator note: keep the name placeholder", nil, nil, nil, nil, nil, nil,
        ])
        XCTAssertTrue(catalog.strings.allSatisfy { $0.style == .backslash && $0.table == "messages" })
        XCTAssertEqual([catalog.strings[0].line, catalog.strings[0].column], [20, 8])
        XCTAssertEqual([catalog.strings[2].line, catalog.strings[2].column], [31, 2])
        XCTAssertEqual([catalog.strings[6].line, catalog.strings[6].column], [52, 15])
    }

    func testPOTranslations() throws {
        let catalog = try load("messages.po", .po, table: "messages")
        let pairs = catalog.translations.map { "\($0.language)|\($0.source.raw)|\($0.translated.part)=\($0.translated.raw)" }
        XCTAssertEqual(pairs, [
            "fr|Welcome to Pincer!|=Bienvenue dans Pincer !",
            "fr|" + #"Usage: pincer [OPTION]...\nRuns the tool.\nReport bugs to <bugs@example.com>.|="#
                + #"Utilisation : pincer [OPTION]...\nLance l'outil.\nSignalez les bogues à <bugs@example.com>."#,
            "fr|Open|=Ouvrir",
            "fr|%d file removed|[0]=%d fichier supprimé",
            "fr|%d files removed|[1]=%d fichiers supprimés",
        ])
        XCTAssertEqual(catalog.translations.map(\.fuzzy), [false, false, false, true, true])
        XCTAssertEqual(catalog.translations.map(\.fewCounts), [false, false, false, true, false], "French plural=(n > 1): [0] is for 0 and 1")
        XCTAssertEqual(catalog.strings.map(\.grammar), [.any, .c, .any, .any, .any, .c, .c, .any])
        XCTAssertEqual(catalog.translations[2].source.key, "menu\u{4}Open")
        XCTAssertEqual(catalog.translations[2].source.displayKey, "menu|Open")
        XCTAssertEqual([catalog.translations[4].translated.line, catalog.translations[4].translated.column], [54, 12])
    }

    /// msgfmt checks a plural form strictly only when the Plural-Forms
    /// formula picks it for at least 5 of the counts 0...1000; others (and
    /// every form, when there is no formula) may leave arguments out.
    func testPOPluralFormsUsedForFewCounts() throws {
        func fewCounts(_ pluralForms: String?, forms: Int) throws -> [Bool] {
            var po = "msgid \"\"\nmsgstr \"\"\n\"Language: xx\\n\"\n"
            if let pluralForms { po += "\"Plural-Forms: \(pluralForms)\\n\"\n" }
            po += "\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\n"
            for k in 0..<forms { po += "msgstr[\(k)] \"x\(k)\"\n" }
            return try Catalog(bytes: Array(po.utf8), format: .po, table: "T").translations.map(\.fewCounts)
        }
        XCTAssertEqual(try fewCounts("nplurals=2; plural=(n != 1);", forms: 2), [true, false])
        XCTAssertEqual(try fewCounts("nplurals=1; plural=0;", forms: 1), [false], "one form: nothing plural to relax")
        XCTAssertEqual(try fewCounts("nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);", forms: 3),
                       [true, false, false])
        XCTAssertEqual(try fewCounts("nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;",
                                     forms: 6), [true, true, true, false, false, false])
        XCTAssertEqual(try fewCounts("nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);", forms: 4),
                       [false, false, false, false], "Slovenian: 1, 101, 201... is often")
        XCTAssertEqual(try fewCounts(nil, forms: 2), [true, true])
        XCTAssertEqual(try fewCounts("nplurals=2; plural=n /;", forms: 2), [true, true], "a formula that does not parse is none")
        XCTAssertEqual(try fewCounts("nplurals=2; plural=n / 0;", forms: 2), [true, true], "nor one that divides by zero")
    }

    func testPOMarkedOutputSetsLanguageAndPluralForms() throws {
        let catalog = try load("messages.po", .po, table: "messages")
        XCTAssertEqual(text(catalog.rewritten(locale: "en-XA", transform: mark)), text(try fixture("messages.marked.po")))
    }

    func testPOHeaderWithoutLanguageGetsOne() throws {
        let po = "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: x\\n\"\n\"Language-Team: none\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
            + "msgid \"a\\nb\"\nmsgstr \"\"\n"
        let catalog = try Catalog(bytes: Array(po.utf8), format: .po, table: "T")
        XCTAssertTrue(catalog.translations.isEmpty)
        XCTAssertEqual(text(catalog.rewritten(locale: "de-XA", transform: mark)),
                       "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: x\\n\"\n\"Language-Team: none\\n\"\n\"Language: de-XA\\n\"\n"
                       + "\"Content-Type: text/plain; charset=UTF-8\\n\"\n\nmsgid \"a\\nb\"\nmsgstr \"\"\n\"[a\\n\"\n\"b]\"\n")
    }

    /// What a .pot leaves open is set for the file written: the charset is
    /// UTF-8, Plural-Forms fits the plural entries, and entries lose
    /// "fuzzy" (other flags stay; a line left empty goes).
    func testPOTemplateHeaderIsCompletedAndFuzzyCleared() throws {
        let pot = "#, fuzzy\nmsgid \"\"\nmsgstr \"\"\n\"Language: \\n\"\n\"MIME-Version: 1.0\\n\"\n"
            + "\"Content-Type: text/plain; charset=CHARSET\\n\"\n\"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n\"\n\n"
            + "#, fuzzy, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\n\n"
            + "#: a.c:1\n#, fuzzy\n#| msgid \"Old\"\nmsgid \"New\"\nmsgstr \"\"\n"
        let catalog = try Catalog(bytes: Array(pot.utf8), format: .po, table: "T")
        XCTAssertEqual(text(catalog.rewritten(locale: "en-XA", transform: mark)),
                       "#, fuzzy\nmsgid \"\"\nmsgstr \"\"\n\"Language: en-XA\\n\"\n\"MIME-Version: 1.0\\n\"\n"
                       + "\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n"
                       + "#, c-format\nmsgid \"%d file\"\nmsgid_plural \"%d files\"\nmsgstr[0] \"[%d file]\"\nmsgstr[1] \"[%d files]\"\n\n"
                       + "#: a.c:1\n#| msgid \"Old\"\nmsgid \"New\"\nmsgstr \"[New]\"\n")
        // A header without the fields gets them; one that has them right keeps them.
        let bare = try Catalog(bytes: Array("msgid \"\"\nmsgstr \"\"\n\nmsgid \"a\"\nmsgid_plural \"b\"\nmsgstr[0] \"\"\nmsgstr[1] \"\"\nmsgstr[2] \"\"\n".utf8),
                               format: .po, table: "T")
        XCTAssertEqual(text(bare.rewritten(locale: "x") { $0.raw }),
                       "msgid \"\"\nmsgstr \"\"\n\"Language: x\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
                       + "\"Plural-Forms: nplurals=3; plural=(n != 1);\\n\"\n\nmsgid \"a\"\nmsgid_plural \"b\"\nmsgstr[0] \"a\"\nmsgstr[1] \"b\"\nmsgstr[2] \"b\"\n")
        let fixture = try load("messages.po", .po, table: "messages")
        let output = text(fixture.rewritten(locale: "en-XA") { $0.raw })
        XCTAssertTrue(output.contains("\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Content-Transfer-Encoding: 8bit\\n\"\n"
                                      + "\"Plural-Forms: nplurals=2; plural=(n > 1);\\n\"\n"), output)
    }

    func testPOKeepsCRLFAndOneLineTrailingNewline() throws {
        let po = "msgid \"Line\\n\"\r\nmsgstr \"\"\r\n\r\nmsgid \"x\"\r\nmsgid_plural \"xs\"\r\nmsgstr[0] \"\"\r\nmsgstr[1] \"\"\r\nmsgstr[2] \"\"\r\n"
        let catalog = try Catalog(bytes: Array(po.utf8), format: .po, table: "T")
        XCTAssertEqual(text(catalog.rewritten(locale: "x") { "!" + $0.raw }),
                       "msgid \"Line\\n\"\r\nmsgstr \"!Line\\n\"\r\n\r\nmsgid \"x\"\r\nmsgid_plural \"xs\"\r\n"
                       + "msgstr[0] \"!x\"\r\nmsgstr[1] \"!xs\"\r\nmsgstr[2] \"!xs\"\r\n")
    }

    func testPOErrors() {
        assertError("# comment\nmsgstr \"x\"\n", .po, line: 2, column: 1, "msgstr without a preceding msgid")
        assertError("msgid \"abc\nmsgstr \"\"\n", .po, line: 1, column: 7, "unterminated string")
        assertError("msgid \"a\"\nmsgtxt \"b\"\n", .po, line: 2, column: 1, "unknown keyword 'msgtxt'")
        assertError("msgid \"a\"\nmsgstr \"b\"\n\nmsgid \"c\"\n", .po, line: 5, column: 1, "the msgid on line 4 has no msgstr")
        assertError("msgid \"a\"\nmsgid_plural \"as\"\nmsgstr \"b\"\n", .po, line: 3, column: 1, "needs msgstr[0]")
        assertError("msgid \"a\"\nmsgstr \"b\" x\n", .po, line: 2, column: 12, "unexpected 'x' after the closing '\"'")
        assertError("msgid \"a\\q\"\nmsgstr \"\"\n", .po, line: 1, column: 9, "invalid escape sequence '\\q'")
        assertError("msgid \"a\"\nmsgstr \"1\"\nmsgid \"a\"\nmsgstr \"2\"\n", .po, line: 3, column: 1, "duplicate message \"a\"")
    }

    // MARK: .xcstrings

    func testXCStringsListsSourceValuesAndVariations() throws {
        let catalog = try load("Localizable.xcstrings", .xcstrings)
        XCTAssertEqual(summary(catalog.strings), [
            "%lld items|plural.one=%lld item",
            "%lld items|plural.other=%lld items",
            "Cancel=Cancel",
            "Tap to continue|device.mac=Click to continue",
            "Tap to continue|device.other=Tap to continue",
            #"greeting %@=Hello, %@!\nWelcome back."#,
            "shared.files=%1$@ shared %#@files@",
            "shared.files|substitutions.files.plural.one=a file",
            "shared.files|substitutions.files.plural.other=%arg files",
            "upload.device|device.iphone.plural.one=Uploading %lld photo from iPhone",
            "upload.device|device.iphone.plural.other=Uploading %lld photos from iPhone",
            "upload.device|device.other=Uploading %lld photos",
            #"welcome.message=Welcome, {name} \u2014 caf\u00e9 <b>time</b>"#,
        ])
        XCTAssertEqual(catalog.strings.map(\.comment), [
            "Number of items in the cart", "Number of items in the cart", nil, nil, nil,
            "Greeting; %@ is the user's \"display\" name", nil, nil, nil, nil, nil, nil, "Shown once",
        ])
        XCTAssertTrue(catalog.strings.allSatisfy { $0.style == .backslash })
        XCTAssertEqual([catalog.strings[0].line, catalog.strings[0].column], [31, 30])
        XCTAssertEqual([catalog.strings[2].line, catalog.strings[2].column], [75, 6])
        XCTAssertEqual([catalog.strings[5].line, catalog.strings[5].column], [110, 24])
    }

    func testXCStringsTranslations() throws {
        let catalog = try load("Localizable.xcstrings", .xcstrings)
        let pairs = catalog.translations.map {
            "\($0.language)|\($0.translated.key)|\($0.translated.part)|\($0.source.part)=\($0.translated.raw)"
        }
        XCTAssertEqual(pairs, [
            "de|%lld items|plural.one|plural.one=%lld Artikel",
            "de|%lld items|plural.other|plural.other=%lld Artikel",
            "ru|%lld items|plural.few|plural.other=%lld товара",
            "ru|%lld items|plural.many|plural.other=%lld товаров",
            "ru|%lld items|plural.one|plural.one=%lld товар",
            "ru|%lld items|plural.other|plural.other=%lld товара",
            #"fr|greeting %@||=Bonjour, %@ !\nBon retour."#,
            "ja|welcome.message||=ようこそ、{name}",
        ])
        XCTAssertEqual([catalog.translations[6].translated.line, catalog.translations[6].translated.column], [116, 24])
        XCTAssertEqual(catalog.translations[6].source.raw, #"Hello, %@!\nWelcome back."#)
    }

    func testXCStringsMarkedOutputAddsTheLocale() throws {
        let catalog = try load("Localizable.xcstrings", .xcstrings)
        let output = catalog.rewritten(locale: "en-XA", transform: mark)
        XCTAssertEqual(text(output), text(try fixture("Localizable.marked.xcstrings")))
        // The output reads back: the new language is a translation of every source string.
        let again = try Catalog(bytes: output, format: .xcstrings, table: "Localizable")
        XCTAssertEqual(summary(again.strings), summary(catalog.strings))
        let added = again.translations.filter { $0.language == "en-XA" }
        XCTAssertEqual(added.map(\.translated.raw), catalog.strings.map { "[" + $0.raw + "]" })
        XCTAssertEqual(added.map(\.translated.part), catalog.strings.map(\.part))
        XCTAssertEqual(again.translations.filter { $0.language != "en-XA" }.map(describe), catalog.translations.map(describe))
    }

    func testXCStringsIdentityTransformWithExistingLanguageKeepsOthers() throws {
        let catalog = try load("Localizable.xcstrings", .xcstrings)
        let output = catalog.rewritten(locale: "fr", transform: mark)
        let again = try Catalog(bytes: output, format: .xcstrings, table: "Localizable")
        let fr = again.translations.filter { $0.language == "fr" }
        XCTAssertEqual(fr.count, catalog.strings.count)
        XCTAssertEqual(fr.first { $0.translated.key == "greeting %@" }?.translated.raw, #"[Hello, %@!\nWelcome back.]"#)
        XCTAssertEqual(again.translations.filter { $0.language != "fr" }.map(describe),
                       catalog.translations.filter { $0.language != "fr" }.map(describe))
        XCTAssertFalse(text(output).contains("Bonjour"))
        XCTAssertTrue(text(output).contains("\"shouldTranslate\" : false"))
    }

    func testXCStringsWritesXcodeLayout() throws {
        let input = #"{"version":"1.0","strings":{"b":{"localizations":{"fr":{"stringUnit":{"value":"Bé","state":"translated"}},"#
            + #""en":{"stringUnit":{"value":"B \"q\"","state":"new"}}},"extractionState":"manual"},"a":{},"#
            + #""z":{"localizations":{}}},"sourceLanguage":"en","extra":[1,2.50,true,null,[]]}"#
        let catalog = try Catalog(bytes: Array(input.utf8), format: .xcstrings, table: "T")
        XCTAssertEqual(summary(catalog.strings), [#"b=B \"q\""#, "a=a", "z=z"])
        let expected = """
        {
          "extra" : [
            1,
            2.50,
            true,
            null,
            [

            ]
          ],
          "sourceLanguage" : "en",
          "strings" : {
            "b" : {
              "extractionState" : "manual",
              "localizations" : {
                "fr" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "Bé"
                  }
                },
                "en" : {
                  "stringUnit" : {
                    "state" : "new",
                    "value" : "B \\"q\\""
                  }
                },
                "qps" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "<B \\"q\\">"
                  }
                }
              }
            },
            "a" : {
              "localizations" : {
                "qps" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "<a>"
                  }
                }
              }
            },
            "z" : {
              "localizations" : {
                "qps" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "<z>"
                  }
                }
              }
            }
          },
          "version" : "1.0"
        }
        """
        XCTAssertEqual(text(catalog.rewritten(locale: "qps") { "<" + $0.raw + ">" }), expected)
    }

    func testXCStringsKeyIsTheSourceWhenTheSourceLanguageHasNoValue() throws {
        let input = #"{"sourceLanguage":"en","strings":{"k \"1\"":{"localizations":{"en":{},"de":{"stringUnit":{"state":"translated","value":"K"}}}}},"version":"1.0"}"#
        let catalog = try Catalog(bytes: Array(input.utf8), format: .xcstrings, table: "T")
        XCTAssertEqual(summary(catalog.strings), [#"k "1"=k \"1\""#])
        XCTAssertEqual(catalog.translations.map { "\($0.language)=\($0.translated.raw)<\($0.source.raw)" }, [#"de=K<k \"1\""#])
        let output = text(catalog.rewritten(locale: "en-XA") { "<" + $0.raw + ">" })
        XCTAssertTrue(output.contains("\"en-XA\" : {\n          \"stringUnit\" : {\n            \"state\" : \"translated\",\n"
                                      + "            \"value\" : \"<k \\\"1\\\">\"\n"), output)
        XCTAssertTrue(output.contains("\"en\" : {\n\n        },\n        \"de\""), output)
    }

    func testXCStringsErrors() {
        assertError("{\n  \"sourceLanguage\" : \"en\",\n  \"strings\" : {,}\n}", .xcstrings, line: 3, column: 16,
                    "expected a string key or '}' in an object, found ','")
        // Columns count characters, not UTF-8 bytes.
        assertError("{\"sourceLanguage\":\"é\" x}", .xcstrings, line: 1, column: 23,
                    "expected ',' or '}' after an object member, found 'x'")
        assertError("{\n  \"sourceLanguage\" : \"en\",\n  \"strings\" : []\n}", .xcstrings, line: 3, column: 15,
                    "\"strings\" must be an object, found an array")
        assertError("{\n  \"sourceLanguage\" : \"en\",\n  \"strings\" : {\n    \"k\" : {\n      \"localizations\" : {\n"
                    + "        \"en\" : { \"stringUnit\" : { \"state\" : \"new\", \"value\" : 3 } }\n      }\n    }\n  }\n}",
                    .xcstrings, line: 6, column: 62, "the \"value\" of a stringUnit of \"k\" must be a string, found a number")
        assertError("{\n  \"strings\" : {\n  }\n}", .xcstrings, line: 1, column: 1, "missing \"sourceLanguage\"")
        assertError("{\n  \"sourceLanguage\" : \"en\",\n  \"strings\" : {\n    \"k\" : {},\n    \"k\" : {}\n  }\n}",
                    .xcstrings, line: 5, column: 5, "duplicate key \"k\"")
    }

    func testMalformedEncodingIsAnError() {
        guard let error = readError(bytes: [0x22, 0x61, 0x22, 0x20, 0x3D, 0x20, 0x22, 0xC3, 0x28, 0x22, 0x3B], .strings) else { return }
        XCTAssertEqual([error.line, error.column], [1, 8])
        XCTAssertTrue(error.message.contains("invalid UTF-8"))
    }
}
