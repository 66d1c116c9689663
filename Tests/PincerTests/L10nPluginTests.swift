import Foundation
import XCTest
import PseudoL10n
import CPincerSDK
@testable import PincerHost

/// The real `l10n` plugin in a real host: an app written in C (the
/// app_client fixture) passes its strings through "pincer.l10n/1", and the
/// commands work on real catalog files.
final class L10nPluginTests: XCTestCase {
    private static let wj = "\u{2060}"

    private func bracketed(_ text: String) -> String { "[" + Self.wj + text + Self.wj + "]" }

    func testAppStringsPassThroughTheServiceWithTheEnabledModes() throws {
        let app = AppHost()
        // Only boundaries is on by default.
        XCTAssertEqual(try app.text("app.localize", "home.title", "Welcome back"), bracketed("Welcome back") + "|4|0|")
        // Another table passes unchanged, and says why.
        XCTAssertEqual(try app.text("app.localize", "k", "Welcome back", "Settings"),
                       "Welcome back|4|0|table 'Settings' is not transformed (see l10n.tables)")
        XCTAssertEqual(try app.text("l10n.tables", "Settings, Onboarding"), "Localizable,Settings,Onboarding")
        XCTAssertEqual(try app.text("app.localize", "k", "Welcome back", "Settings"), bracketed("Welcome back") + "|4|0|")

        XCTAssertEqual(try app.text("l10n.set", "accented", "on"), "accented on; enabled: accented, boundaries")
        XCTAssertEqual(try app.text("app.localize", "k", "Hello %@"), bracketed("Ĥéļļö %@") + "|5|0|")
        // The app switches right to left on: the layout flag follows.
        try app.run("app.l10n-mode", "8", "true")
        let line = try app.text("app.localize", "k", "Hi you")
        XCTAssertTrue(line.hasSuffix("|13|1|"), line)
        XCTAssertTrue(line.contains("\u{202E}Ĥî\u{202C}"), line)
        XCTAssertTrue(app.failure("app.l10n-mode", "3", "true").contains("not one PINCER_L10N_* bit"))

        // Keys mode shows the table and key.
        XCTAssertEqual(try app.text("l10n.off"), "every mode is off")
        XCTAssertEqual(try app.text("app.localize", "home.title", "Welcome back"), "Welcome back|0|0|every mode is off")
        try app.run("app.l10n-mode", "16", "true")
        XCTAssertEqual(try app.text("app.localize", "home.title", "Welcome back", "Settings"), "Settings:home.title|16|0|")
    }

    func testSettingsPersistAndChangesAreAnnounced() throws {
        let app = AppHost(withApp: false)
        let service = try XCTUnwrap(app.host.service(id: PINCER_L10N_SERVICE_ID)?.assumingMemoryBound(to: pincer_l10n_service_t.self))
        let before = service.pointee.generation(service.pointee.header.context)
        let events = SendableBox<[String]>([])
        _ = app.host.events.subscribe(topic: PINCER_L10N_CHANGED_EVENT) { _, payload in events.value.append(payload ?? "") }
        XCTAssertEqual(try app.text("l10n.set", "lengthened", "on"), "lengthened on; enabled: lengthened, boundaries")
        XCTAssertGreaterThan(service.pointee.generation(service.pointee.header.context), before)
        XCTAssertEqual(events.value.count, 1)
        XCTAssertTrue(events.value.first?.contains(#""modes":["lengthened","boundaries"]"#) == true, "\(events.value)")
        XCTAssertTrue(app.failure("l10n.set", "sparkles", "on").contains("unknown mode 'sparkles'"))
        XCTAssertTrue(app.failure("l10n.set", "accented", "maybe").contains("on or off"))

        app.restart(withApp: false)
        let modes = try app.json("l10n.modes")
        let on = (modes["modes"]?.arrayValue ?? []).filter { $0["on"]?.boolValue == true }.compactMap { $0["mode"]?.stringValue }
        XCTAssertEqual(on, ["lengthened", "boundaries"])
    }

    func testTransformCommandReportsWhatItLeftAlone() throws {
        let app = AppHost(withApp: false)
        let result = try app.json("l10n.transform", "Hello, world", "", "", "accented,boundaries")
        XCTAssertEqual(result["output"]?.stringValue, bracketed("Ĥéļļö, ŵöŕļð"))
        XCTAssertEqual(result["problem"], .null)
        let refused = try app.json("l10n.transform", "Hello %d", "welcome %@", "", "keys")
        XCTAssertEqual(refused["output"]?.stringValue, "Hello %d")
        XCTAssertNotNil(refused["problem"]?.stringValue)
        XCTAssertTrue(app.failure("l10n.transform", "x", "", "", "accented,bogus").contains("unknown mode 'bogus'"))
    }

    func testCatalogIsWrittenToANewFileAndBadInputWritesNothing() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-catalog")
        let input = "\(dir)/Localizable.strings"
        try Data("""
            /* The title of the home screen */
            "home.title" = "Welcome back, %@!";
            // Count of files
            "files.count" = "%lld files in \\"%@\\"";
            "link" = "Read <b>more</b> at https://example.com";

            """.utf8).write(to: URL(fileURLWithPath: input))
        let output = "\(dir)/en-XA.strings"
        let summary = try app.json("l10n.catalog", input, output, "accented,boundaries")
        XCTAssertEqual(summary["strings"]?.int64Value, 3)
        XCTAssertEqual(summary["transformed"]?.int64Value, 3)
        XCTAssertEqual(summary["locale"]?.stringValue, "en-XA")
        let written = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertEqual(written, """
            /* The title of the home screen */
            "home.title" = "\(bracketed("Ŵéļçöḿé ɓåçķ, %@¡"))";
            // Count of files
            "files.count" = "\(bracketed("%lld ƒîļéš îñ \\\"%@\\\""))";
            "link" = "\(bracketed("Ŕéåð <b>ḿöŕé</b> åţ https://example.com"))";

            """)
        // The rewritten catalog reads back with the same keys and placeholders.
        let reread = try Catalog(bytes: Array(written.utf8), format: .strings, table: "en-XA")
        XCTAssertEqual(reread.strings.map(\.key), ["home.title", "files.count", "link"])

        // Never in place unless asked.
        XCTAssertTrue(app.failure("l10n.catalog", input, input).contains("--in_place true"))
        XCTAssertTrue(app.failure("l10n.catalog", input).contains("--output"))

        // A malformed catalog: line and column, and no output file.
        let bad = "\(dir)/Bad.strings"
        try Data("\"a\" = \"one\";\n\"b\" = \"two\"\n\"c\" = \"three\";\n".utf8).write(to: URL(fileURLWithPath: bad))
        let message = app.failure("l10n.catalog", bad, "\(dir)/bad-out.strings")
        XCTAssertTrue(message.contains("line 3"), message)
        XCTAssertTrue(message.contains("nothing was written"), message)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/bad-out.strings"))
    }

    /// Every fixture catalog, all modes on: the output reads back as the same
    /// format with the same strings, every string keeps its placeholders in
    /// order, and pseudo-localising the output again changes nothing.
    func testEveryCatalogFormatRoundTripsWithAllModes() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-roundtrip")
        let fixtures = "\(Fixture.packageRoot)/Tests/Fixtures/l10n"
        let inputs = ["Localizable.strings", "UTF16LE.strings", "UTF16BE.strings", "CRLF.strings", "Localizable.stringsdict",
                      "strings.xml", "messages.po", "Localizable.xcstrings"]
        for name in inputs {
            let input = "\(fixtures)/\(name)"
            let ext = String(name.split(separator: ".").last!)
            let output = "\(dir)/pseudo-\(name.replacingOccurrences(of: ".", with: "-")).\(ext)"
            let summary = try app.json("l10n.catalog", input, output, "all")
            XCTAssertEqual(summary["unchanged"]?.arrayValue?.count, 0, "\(name): \(summary.serialized())")
            let format = try XCTUnwrap(Catalog.format(forPath: input))
            let source = try Catalog(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: input))), format: format, table: "T")
            let outBytes = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
            let pseudo = try Catalog(bytes: outBytes, format: format, table: "T")
            XCTAssertGreaterThan(source.strings.count, 0, name)

            // The transformed texts, paired with their sources.
            let pairs: [(CatalogString, CatalogString)]
            switch format {
            case .po:
                pairs = pseudo.translations.map { ($0.source, $0.translated) }
                XCTAssertEqual(pairs.count, source.strings.count, "\(name): every msgid got a msgstr")
            case .xcstrings:
                pairs = pseudo.translations.filter { $0.language == "ar-XB" }.map { ($0.source, $0.translated) }
                XCTAssertEqual(pairs.count, source.strings.count, "\(name): the pseudo-locale has every string")
            default:
                XCTAssertEqual(pseudo.strings.map(\.key), source.strings.map(\.key), name)
                pairs = Array(zip(source.strings, pseudo.strings))
            }
            for (original, transformed) in pairs {
                let scanner = PlaceholderScanner(style: original.style)
                XCTAssertEqual(scanner.placeholders(transformed.raw).map(\.text), scanner.placeholders(original.raw).map(\.text),
                               "\(name) \(original.key) \(original.part)")
                // Empty and one-character strings are left alone; every other one changes.
                if original.raw.count > 1 {
                    XCTAssertNotEqual(transformed.raw, original.raw, "\(name) \(original.key)")
                } else {
                    XCTAssertEqual(transformed.raw, original.raw, "\(name) \(original.key)")
                }
            }
            // Twice is once: the output of the output is the output (a .po
            // gets its msgstr from the msgid again, an .xcstrings its
            // pseudo-locale replaced by the same).
            let again = "\(dir)/again-\(name)"
            _ = try app.json("l10n.catalog", output, again, "all")
            XCTAssertEqual(String(decoding: try Data(contentsOf: URL(fileURLWithPath: again)), as: UTF8.self),
                           String(decoding: outBytes, as: UTF8.self), "\(name): a second pass changed it")
        }
    }

    func testCheckFailsListingPlaceholdersATranslatorBroke() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-check")
        try Data("""
            "sent" = "%1$@ sent %2$lld files";
            "greeting" = "Hello {name}";
            "gap" = "%1$@ and %3$@";

            """.utf8).write(to: URL(fileURLWithPath: "\(dir)/Localizable.strings"))
        try Data("""
            "sent" = "%2$d Dateien von %1$@";
            "greeting" = "Hallo";

            """.utf8).write(to: URL(fileURLWithPath: "\(dir)/de.strings"))
        let message = app.failure("l10n.check", "\(dir)/Localizable.strings", "\(dir)/de.strings")
        XCTAssertEqual(message, """
            3 placeholder problems in 3 of 3 messages:
            \(dir)/Localizable.strings:3:10: "gap": argument 2 of 3 never used
            \(dir)/de.strings:1:11: "sent" (de): argument 2 is int (ll) in the source but int here
            \(dir)/de.strings:2:15: "greeting" (de): {name} is missing
            """)

        // Through the shell: exit 1, the problems on standard error; with
        // --json the report first (one line), then the failure object.
        let state = Fixture.temporaryDirectory("pincer-l10n-check-state")
        let text = try Fixture.pincer(["run", "l10n.check", "\(dir)/Localizable.strings", "\(dir)/de.strings"], stateDir: state)
        XCTAssertEqual(text.status, 1, text.stderr)
        XCTAssertTrue(text.stderr.contains("l10n.check: 3 placeholder problems in 3 of 3 messages:\n"), text.stderr)
        XCTAssertTrue(text.stderr.contains("\"greeting\" (de): {name} is missing"), text.stderr)
        let json = try Fixture.pincer(["--json", "run", "l10n.check", "\(dir)/Localizable.strings", "\(dir)/de.strings"],
                                      stateDir: state)
        XCTAssertEqual(json.status, 1, json.stderr)
        let lines = json.stdout.split(separator: "\n").map { try? JSON.parse(String($0)) }
        XCTAssertEqual(lines.count, 2, json.stdout)
        let report = try XCTUnwrap(lines.first ?? nil, json.stdout)
        XCTAssertEqual(report["checked"]?.int64Value, 3)
        XCTAssertEqual(report["problems"]?.int64Value, 3)
        XCTAssertEqual(report["translation"]?.stringValue, "\(dir)/de.strings")
        let found = (report["issues"]?.arrayValue ?? []).map {
            "\($0["file"]?.stringValue == "\(dir)/de.strings" ? "de" : "base"):\($0["key"]?.stringValue ?? ""):\($0["kind"]?.stringValue ?? "")"
                + ":\($0["line"]?.int64Value ?? 0):\($0["column"]?.int64Value ?? 0)"
        }
        XCTAssertEqual(found, ["base:gap:positional-gap:3:10", "de:sent:type-mismatch:1:11", "de:greeting:missing:2:15"])
        let failure = try XCTUnwrap(lines.last ?? nil, json.stdout)
        XCTAssertEqual(failure["ok"]?.boolValue, false)
        XCTAssertEqual(failure["command"]?.stringValue, "l10n.check")
        XCTAssertEqual(failure["error"]?.stringValue, message)

        // Nothing broken: exit 0, the same report with no issues.
        try Data("\"sent\" = \"%2$lld Dateien von %1$@\";\n\"greeting\" = \"Hallo {name}\";\n".utf8)
            .write(to: URL(fileURLWithPath: "\(dir)/fixed.strings"))
        try Data("\"sent\" = \"%1$@ sent %2$lld files\";\n\"greeting\" = \"Hello {name}\";\n".utf8)
            .write(to: URL(fileURLWithPath: "\(dir)/Base.strings"))
        let clean = try Fixture.pincer(["--json", "run", "l10n.check", "\(dir)/Base.strings", "\(dir)/fixed.strings"], stateDir: state)
        XCTAssertEqual(clean.status, 0, clean.stdout + clean.stderr)
        let result = try JSON.parse(clean.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(result["ok"]?.boolValue, true)
        XCTAssertEqual(result["result"]?["checked"]?.int64Value, 2)
        XCTAssertEqual(result["result"]?["problems"]?.int64Value, 0)
        XCTAssertEqual(result["result"]?["issues"]?.arrayValue?.count, 0)
    }

    /// A .po beside its template: the .po's own translations are checked
    /// (its msgids are the template's, so comparing those would find nothing).
    func testCheckAPOBesideItsTemplate() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-pot")
        try Data("msgid \"\"\nmsgstr \"\"\n\n#, python-format\nmsgid \"Hello %(name)s\"\nmsgstr \"\"\n".utf8)
            .write(to: URL(fileURLWithPath: "\(dir)/app.pot"))
        try Data("msgid \"\"\nmsgstr \"\"\n\"Language: de\\n\"\n\n#, python-format\nmsgid \"Hello %(name)s\"\nmsgstr \"Hallo %(user)s\"\n".utf8)
            .write(to: URL(fileURLWithPath: "\(dir)/de.po"))
        XCTAssertEqual(app.failure("l10n.check", "\(dir)/app.pot", "\(dir)/de.po"), """
            2 placeholder problems in 1 of 1 messages:
            \(dir)/de.po:7:9: "Hello %(name)s" (de): %(name) is missing
            \(dir)/de.po:7:9: "Hello %(name)s" (de): %(user) is not in the source
            """)
    }

    /// The count is of messages: a .po message with a translation, or with
    /// plural forms, is one message however many strings it has.
    func testCheckCountsMessages() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-l10n-count")
        let po = "\(dir)/de.po"
        try Data("""
            msgid ""
            msgstr ""
            "Language: de\\n"
            "Plural-Forms: nplurals=2; plural=(n != 1);\\n"

            #, c-format
            msgid "Hello %s"
            msgstr "Hallo %s"

            #, c-format
            msgid "%d file"
            msgid_plural "%d files"
            msgstr[0] "%d Datei"
            msgstr[1] "%d Dateien"

            """.utf8).write(to: URL(fileURLWithPath: po))
        let report = try app.json("l10n.check", po)
        XCTAssertEqual(report["checked"]?.int64Value, 2, report.serialized())
        XCTAssertEqual(report["problems"]?.int64Value, 0, report.serialized())
        // The fixture: 7 messages (the header is none, the obsolete one is a comment).
        let fixture = try app.json("l10n.check", "\(Fixture.packageRoot)/Tests/Fixtures/l10n/messages.po")
        XCTAssertEqual(fixture["checked"]?.int64Value, 7, fixture.serialized())
    }
}
