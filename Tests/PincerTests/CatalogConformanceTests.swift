import Foundation
import XCTest
import PseudoL10n
@testable import PincerHost

/// The catalogs the l10n plugin writes, opened by the programs that read
/// them (gettext's msgfmt, libxml2's xmllint, Python's json), and
/// `l10n.check` held against `msgfmt -c`'s verdicts on the same files.
/// These fail, never skip, when a consumer is missing (`bash scripts/deps`).
final class CatalogConformanceTests: XCTestCase {
    private var fixtures: String { "\(Fixture.packageRoot)/Tests/Fixtures/l10n" }

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A complete gettext header, so msgfmt -c has nothing to say about it.
    private static func header(language: String = "de", pluralForms: String = "nplurals=2; plural=(n != 1);") -> String {
        """
        msgid ""
        msgstr ""
        "Project-Id-Version: pincer-tests 1.0\\n"
        "Report-Msgid-Bugs-To: \\n"
        "POT-Creation-Date: 2024-05-01 12:00+0000\\n"
        "PO-Revision-Date: 2024-05-02 09:30+0000\\n"
        "Last-Translator: Ada <ada@example.com>\\n"
        "Language-Team: German\\n"
        "Language: \(language)\\n"
        "MIME-Version: 1.0\\n"
        "Content-Type: text/plain; charset=UTF-8\\n"
        "Content-Transfer-Encoding: 8bit\\n"
        "Plural-Forms: \(pluralForms)\\n"

        """
    }

    /// `msgfmt -c -o /dev/null file`: the exit status and what it printed.
    private func msgfmt(_ path: String) throws -> Fixture.ProcessResult {
        try Fixture.run(Consumer.require(Consumer.msgfmt), ["-c", "-o", "/dev/null", path])
    }

    // MARK: l10n.check against msgfmt -c

    /// One constructed message: its flags, msgid (and msgid_plural) and
    /// translation(s), and whether msgfmt -c calls it fatal.
    private struct Case {
        var name: String
        var flags: String
        var msgid: String
        var plural: String?
        var msgstr: [String]
        var pluralForms = "nplurals=2; plural=(n != 1);"

        var po: String {
            var text = CatalogConformanceTests.header(pluralForms: pluralForms) + "\n#, \(flags)\nmsgid \"\(msgid)\"\n"
            if let plural {
                text += "msgid_plural \"\(plural)\"\n"
                for (k, s) in msgstr.enumerated() { text += "msgstr[\(k)] \"\(s)\"\n" }
            } else {
                text += "msgstr \"\(msgstr[0])\"\n"
            }
            return text
        }
    }

    private static let polish = "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"

    /// c-format, python-format and python-brace-format messages a
    /// translator got right or wrong: the numbered `%1$s`, Python's
    /// `%(name)s`, `{name}`, argument types and sizes, plural forms that may
    /// leave the count out (German and Polish msgstr[0]), fuzzy entries.
    private static let cases: [Case] = [
        // c-format
        Case(name: "c-same", flags: "c-format", msgid: "%s has %d files", msgstr: ["%s hat %d Dateien"]),
        Case(name: "c-reordered", flags: "c-format", msgid: "%s has %d files", msgstr: ["%2$d Dateien hat %1$s"]),
        Case(name: "c-reordered-wrong-types", flags: "c-format", msgid: "%s has %d files", msgstr: ["%2$s Dateien hat %1$d"]),
        Case(name: "c-dropped", flags: "c-format", msgid: "%s has %d files", msgstr: ["%s hat Dateien"]),
        Case(name: "c-added", flags: "c-format", msgid: "%s", msgstr: ["%s und %d"]),
        Case(name: "c-type", flags: "c-format", msgid: "%d files", msgstr: ["%s Dateien"]),
        Case(name: "c-size", flags: "c-format", msgid: "%d files", msgstr: ["%lld Dateien"]),
        Case(name: "c-unsigned", flags: "c-format", msgid: "%d files", msgstr: ["%u Dateien"]),
        Case(name: "c-same-class", flags: "c-format", msgid: "%i of %f", msgstr: ["%d von %e"]),
        Case(name: "c-numbered-gap", flags: "c-format", msgid: "%1$s and %2$s", msgstr: ["%1$s und %3$s"]),
        Case(name: "c-numbered-mixed", flags: "c-format", msgid: "%s has %d", msgstr: ["%1$s hat %d"]),
        Case(name: "c-numbered-twice", flags: "c-format", msgid: "%1$s", msgstr: ["%1$s, %1$s"]),
        Case(name: "c-numbered-twice-two-ways", flags: "c-format", msgid: "%1$s", msgstr: ["%1$s, %1$d"]),
        Case(name: "c-star-width", flags: "c-format", msgid: "%*d", msgstr: ["%d"]),
        Case(name: "c-percent", flags: "c-format", msgid: "100%% of %s", msgstr: ["%s zu 100 %%"]),
        Case(name: "c-braces-are-text", flags: "c-format", msgid: "Hi {name}, %s", msgstr: ["Hallo {user}, %s"]),
        // python-format
        Case(name: "py-renamed", flags: "python-format", msgid: "Hello %(name)s", msgstr: ["Hallo %(user)s"]),
        Case(name: "py-same", flags: "python-format", msgid: "Hello %(name)s", msgstr: ["Hallo %(name)s"]),
        Case(name: "py-reordered", flags: "python-format", msgid: "%(a)s and %(b)s", msgstr: ["%(b)s und %(a)s"]),
        Case(name: "py-dropped", flags: "python-format", msgid: "%(a)s and %(b)s", msgstr: ["%(a)s und"]),
        Case(name: "py-added", flags: "python-format", msgid: "%(a)s", msgstr: ["%(a)s und %(b)s"]),
        Case(name: "py-type", flags: "python-format", msgid: "%(n)s files", msgstr: ["%(n)d Dateien"]),
        Case(name: "py-same-class", flags: "python-format", msgid: "%(n)d or %(v)s", msgstr: ["%(n)x oder %(v)r"]),
        Case(name: "py-unnamed-swapped", flags: "python-format", msgid: "%s has %d", msgstr: ["%d hat %s"]),
        Case(name: "py-unnamed-same", flags: "python-format", msgid: "%s has %d", msgstr: ["%s hat %d"]),
        Case(name: "py-named-and-unnamed", flags: "python-format", msgid: "%(a)s", msgstr: ["%(a)s %s"]),
        Case(name: "py-numbered", flags: "python-format", msgid: "%s", msgstr: ["%1$s"]),
        Case(name: "py-braces-are-text", flags: "python-format", msgid: "{x} %(a)s", msgstr: ["{y} %(a)s"]),
        // python-brace-format
        Case(name: "brace-renamed", flags: "python-brace-format", msgid: "Hello {name}", msgstr: ["Hallo {user}"]),
        Case(name: "brace-same", flags: "python-brace-format", msgid: "Hello {name}", msgstr: ["Hallo {name}"]),
        Case(name: "brace-dropped", flags: "python-brace-format", msgid: "Hello {name}", msgstr: ["Hallo"]),
        Case(name: "brace-printf-is-text", flags: "python-brace-format", msgid: "%d {n}", msgstr: ["%s {n}"]),
        // plural forms: German msgstr[0] is for n == 1 only, so it may drop the count
        Case(name: "plural-same", flags: "c-format", msgid: "%d file", plural: "%d files", msgstr: ["%d Datei", "%d Dateien"]),
        Case(name: "plural-one-without-count", flags: "c-format", msgid: "%d file", plural: "%d files",
             msgstr: ["eine Datei", "%d Dateien"]),
        Case(name: "plural-other-without-count", flags: "c-format", msgid: "%d file", plural: "%d files",
             msgstr: ["%d Datei", "Dateien"]),
        Case(name: "plural-other-type", flags: "c-format", msgid: "%d file", plural: "%d files", msgstr: ["%d Datei", "%s Dateien"]),
        Case(name: "plural-one-added", flags: "c-format", msgid: "%d file", plural: "%d files",
             msgstr: ["%d Datei %s", "%d Dateien"]),
        Case(name: "plural-py-one-without-name", flags: "python-format", msgid: "%(n)d file", plural: "%(n)d files",
             msgstr: ["eine Datei", "%(n)d Dateien"]),
        Case(name: "plural-py-renamed", flags: "python-format", msgid: "%(n)d file", plural: "%(n)d files",
             msgstr: ["%(n)d Datei", "%(m)d Dateien"]),
        Case(name: "plural-polish-ok", flags: "c-format", msgid: "%d file", plural: "%d files",
             msgstr: ["jeden plik", "%d pliki", "%d plików"], pluralForms: polish),
        Case(name: "plural-polish-many-without-count", flags: "c-format", msgid: "%d file", plural: "%d files",
             msgstr: ["%d plik", "%d pliki", "plików"], pluralForms: polish),
        // fuzzy: not used, so not checked
        Case(name: "fuzzy", flags: "fuzzy, c-format", msgid: "%d files", msgstr: ["%s Dateien"]),
    ]

    /// Every constructed file: msgfmt -c fails on it for a format problem
    /// exactly when l10n.check fails on it.
    func testCheckAgreesWithMsgfmt() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-msgfmt")
        var fatal = 0
        for c in Self.cases {
            let path = "\(dir)/\(c.name).po"
            try write(c.po, to: path)
            let gettext = try msgfmt(path)
            let gettextFails = gettext.status != 0
            if gettextFails {
                fatal += 1
                XCTAssertTrue(gettext.stderr.contains("format"), "\(c.name): msgfmt failed for something else: \(gettext.stderr)")
            }
            let ours = checkFailure(app, path)
            XCTAssertEqual(ours != nil, gettextFails,
                           "\(c.name): msgfmt -c \(gettextFails ? "fails" : "passes") (\(gettext.stderr)), l10n.check \(ours.map { "fails: " + $0 } ?? "passes")")
        }
        // Both verdicts occur, so the comparison means something.
        XCTAssertEqual(fatal, 24, "fatal cases")
    }

    /// Where l10n.check is stricter than msgfmt, on purpose: msgfmt checks
    /// only messages flagged with a format and ignores a msgid that is not
    /// a valid format string; l10n.check reads unflagged messages with every
    /// placeholder it knows and reports the source's own mistakes.
    func testCheckIsStricterThanMsgfmtWhereMsgfmtDoesNotLook() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-stricter")
        let stricter = [
            Case(name: "unflagged", flags: "no-wrap", msgid: "%d files", msgstr: ["%s Dateien"]),
            Case(name: "unflagged-python", flags: "no-wrap", msgid: "Hello %(name)s", msgstr: ["Hallo %(user)s"]),
            Case(name: "source-gap", flags: "c-format", msgid: "%1$s and %3$s", msgstr: ["%1$s und %3$s"]),
        ]
        for c in stricter {
            let path = "\(dir)/\(c.name).po"
            try write(c.po, to: path)
            let gettext = try msgfmt(path)
            XCTAssertEqual(gettext.status, 0, "\(c.name): \(gettext.stderr)")
            XCTAssertNotNil(checkFailure(app, path), "\(c.name): l10n.check passed")
        }
        // A message flagged no-c-format is literal text for both.
        let literal = Case(name: "literal", flags: "no-c-format", msgid: "100%d", msgstr: ["100%s"])
        let path = "\(dir)/literal.po"
        try write(literal.po, to: path)
        XCTAssertEqual(try msgfmt(path).status, 0)
        XCTAssertNil(checkFailure(app, path))
    }

    /// The message of l10n.check when it fails on `path`; nil when it passes.
    private func checkFailure(_ app: AppHost, _ path: String) -> String? {
        do {
            let report = try app.json("l10n.check", path)
            XCTAssertEqual(report["problems"]?.int64Value, 0, "\(path): passed with \(report.serialized())")
            return nil
        } catch let error as CommandFailure {
            return error.message
        } catch {
            XCTFail("\(path): \(error)")
            return "\(error)"
        }
    }

    // MARK: What l10n.catalog writes

    /// Every .po the plugin writes passes msgfmt -c: pseudo-localised
    /// catalogs in each mode and all of them, from the fixtures, from
    /// constructed files with c-format, python-format, python-brace-format,
    /// plural forms, contexts and newlines at either end, and from a .pot
    /// as xgettext writes it. So do the inputs (the .pot excepted), no
    /// entry stays fuzzy (the header of the .pot aside: msgfmt reads it
    /// anyway), and l10n.check finds nothing in the outputs.
    func testEveryPOWrittenPassesMsgfmt() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-po-conformance")
        let constructed = "\(dir)/constructed.po"
        try write(Self.header(language: "en", pluralForms: Self.polish) + """

            #, c-format
            msgid "%s has %d files"
            msgstr ""

            #, c-format
            msgid "%1$s sent %2$lld bytes to %3$s"
            msgstr ""

            #, python-format
            msgid "Hello %(name)s, %(count)d new"
            msgstr ""

            #, python-format
            msgid "%s: %r"
            msgstr ""

            #, python-brace-format
            msgid "Welcome {user} to {place}"
            msgstr ""

            #, c-format
            msgid "%d file"
            msgid_plural "%d files"
            msgstr[0] ""
            msgstr[1] ""
            msgstr[2] ""

            msgctxt "button"
            msgid "Open"
            msgstr ""

            msgid ""
            "\\n"
            "Two lines\\n"
            "end with a newline\\n"
            msgstr ""

            msgid "Tab\\tand \\"quotes\\" at <a href=\\"https://example.com\\">example.com</a> 100%"
            msgstr ""

            """, to: constructed)
        // A template as xgettext writes it: its header is fuzzy and holds
        // placeholders (charset=CHARSET, nplurals=INTEGER) msgfmt rejects.
        let template = "\(dir)/template.pot"
        try write("""
            # SOME DESCRIPTIVE TITLE.
            # Copyright (C) YEAR THE PACKAGE'S COPYRIGHT HOLDER
            # This file is distributed under the same license as the PACKAGE package.
            # FIRST AUTHOR <EMAIL@ADDRESS>, YEAR.
            #
            #, fuzzy
            msgid ""
            msgstr ""
            "Project-Id-Version: PACKAGE VERSION\\n"
            "Report-Msgid-Bugs-To: \\n"
            "POT-Creation-Date: 2026-12-01 20:41+0000\\n"
            "PO-Revision-Date: YEAR-MO-DA HO:MI+ZONE\\n"
            "Last-Translator: FULL NAME <EMAIL@ADDRESS>\\n"
            "Language-Team: LANGUAGE <LL@li.org>\\n"
            "Language: \\n"
            "MIME-Version: 1.0\\n"
            "Content-Type: text/plain; charset=CHARSET\\n"
            "Content-Transfer-Encoding: 8bit\\n"
            "Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"

            #: app.c:4
            #, c-format
            msgid "Hello, %s!\\n"
            msgstr ""

            #: app.c:5
            #, c-format
            msgid "%d file"
            msgid_plural "%d files"
            msgstr[0] ""
            msgstr[1] ""

            #: app.c:6
            #, fuzzy, c-format
            msgctxt "menu"
            msgid "Open %s"
            msgstr ""

            """, to: template)
        XCTAssertNotEqual(try msgfmt(template).status, 0, "msgfmt refuses the template itself")
        let inputs = ["\(fixtures)/messages.po", "\(fixtures)/messages.marked.po", constructed, template]
        for input in inputs {
            let isTemplate = input == template
            if !isTemplate {
                let original = try msgfmt(input)
                XCTAssertEqual(original.status, 0, "\(input): \(original.stderr)")
            }
            for modes in ["accented", "lengthened", "boundaries", "rtl", "keys", "all", "accented,lengthened,boundaries,rtl,keys"] {
                let output = "\(dir)/\((input as NSString).lastPathComponent)-\(modes.replacingOccurrences(of: ",", with: "+")).po"
                let summary = try app.json("l10n.catalog", input, output, modes)
                XCTAssertGreaterThan(summary["transformed"]?.int64Value ?? 0, 0, "\(input) \(modes): \(summary.serialized())")
                let result = try msgfmt(output)
                XCTAssertEqual(result.status, 0, "\(output) (\(modes)): \(result.stderr)")
                // The template's author fields are the template's to fill in, not ours.
                let warnings = result.stderr.split(separator: "\n").filter { !$0.hasSuffix("still has the initial default value") }
                XCTAssertEqual(warnings, [], "\(output) (\(modes)): \(result.stderr)")
                XCTAssertNil(checkFailure(app, output), "\(output) (\(modes))")
                // Every message is in the compiled catalog: none is left fuzzy.
                let written = try String(contentsOfFile: output, encoding: .utf8)
                XCTAssertEqual(written.components(separatedBy: "fuzzy").count - 1, isTemplate ? 1 : 0, "\(output): \(written)")
            }
        }
    }

    /// Android: the rewritten strings.xml is well-formed XML (xmllint) and
    /// leaves out every translatable="false" resource, keeping the others.
    func testAndroidOutputIsWellFormedAndLeavesOutUntranslatable() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-android-conformance")
        let xmllint = try Consumer.require(Consumer.xmllint)
        let input = "\(fixtures)/strings.xml"
        let source = try String(contentsOfFile: input, encoding: .utf8)
        XCTAssertTrue(source.contains("translatable=\"false\""), "the fixture has untranslatable resources")
        for modes in ["accented", "all", "accented,lengthened,boundaries,rtl,keys"] {
            let output = "\(dir)/strings-\(modes.replacingOccurrences(of: ",", with: "+")).xml"
            _ = try app.json("l10n.catalog", input, output, modes)
            let lint = try Fixture.run(xmllint, ["--noout", output])
            XCTAssertEqual(lint.status, 0, "\(output): \(lint.stderr)")
            XCTAssertEqual(lint.stderr, "", output)
            let written = try String(contentsOfFile: output, encoding: .utf8)
            XCTAssertFalse(written.contains("translatable"), "\(modes): \(written)")
            for gone in ["app_name", "internal_count", "Name of the app"] {
                XCTAssertFalse(written.contains(gone), "\(modes): \(gone) is still in \(written)")
            }
            for kept in ["welcome_title", "greeting", "apostrophe", "cdata", "non_ascii", "\"empty\"", "accent", "unread_messages",
                         "planets", "newline", "Title of the welcome screen"] {
                XCTAssertTrue(written.contains(kept), "\(modes): \(kept) is missing from \(written)")
            }
        }
    }

    /// The other XML and JSON outputs open in their readers: .stringsdict
    /// (an XML property list) in xmllint, .xcstrings in Python's json.
    func testStringsdictAndXCStringsOutputsOpen() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-other-conformance")
        let xmllint = try Consumer.require(Consumer.xmllint)
        let plist = "\(dir)/Pseudo.stringsdict"
        _ = try app.json("l10n.catalog", "\(fixtures)/Localizable.stringsdict", plist, "all")
        let lint = try Fixture.run(xmllint, ["--noout", plist])
        XCTAssertEqual(lint.status, 0, lint.stderr)
        let catalog = "\(dir)/Pseudo.xcstrings"
        _ = try app.json("l10n.catalog", "\(fixtures)/Localizable.xcstrings", catalog, "all")
        let read = try Consumer.python(Consumer.debianPython, """
            import json, sys
            doc = json.load(open(sys.argv[1], encoding="utf-8"))
            langs = {l for s in doc["strings"].values() for l in s.get("localizations", {})}
            print(len(doc["strings"]), "ar-XB" in langs)
            """, [catalog])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "8 True")
    }
}
