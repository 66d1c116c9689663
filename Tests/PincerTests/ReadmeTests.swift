import Foundation
import XCTest

/// The README says what the binary does: its example commands run, in
/// order, as a user pastes them, and its JSON shapes are what `--json` prints.
final class ReadmeTests: XCTestCase {
    static let readme = (try? String(contentsOfFile: Fixture.packageRoot + "/README.md", encoding: .utf8)) ?? ""

    struct Example {
        let section: String
        let line: String
    }

    /// Shell lines of the README's ```sh blocks that run pincer (or build
    /// the C plugins its examples load), continuation lines joined.
    static func examples() -> [Example] {
        var out: [Example] = []
        var section = "", inBlock = false, pending = ""
        for raw in readme.components(separatedBy: "\n") {
            if raw.hasPrefix("## ") { section = String(raw.dropFirst(3)) }
            if raw.hasPrefix("```") { inBlock = raw == "```sh"; continue }
            guard inBlock else { continue }
            if raw.hasSuffix("\\") { pending += raw.dropLast() + " "; continue }
            let line = (pending + raw).trimmingCharacters(in: .whitespaces)
            pending = ""
            let runsPincer = line.hasPrefix("pincer ") || line.hasPrefix("printf ") || line.hasPrefix("eval ")
            let buildsExample = line.hasPrefix("cc ") && (line.contains("myapp.c") || line.contains("csv_adapter.c"))
            if runsPincer || buildsExample { out.append(Example(section: section, line: line)) }
        }
        return out
    }

    /// What a line may end with other than 0: no app is running to attach
    /// to, and commands that follow something live until stopped.
    static func expectedStatus(_ line: String) -> Set<Int32> {
        if line.hasPrefix("pincer attach") || line.hasPrefix("pincer tail") { return [3] }
        if line.contains("net.tail") || line.contains("--loop") || line.hasPrefix("pincer proxy") { return [124] }
        if line.contains("loc.play") { return [0, 124] }
        // The example shows the report of a broken translation.
        if line.contains("l10n.check po/de.po") { return [1] }
        return [0]
    }

    /// Files the examples name, made from real fixtures; what a tour assumes
    /// an app has registered, registered first.
    func makeWorkspace() throws -> (directory: String, environment: [String: String]) {
        let fm = FileManager.default
        let dir = Fixture.temporaryDirectory("pincer-readme-examples")
        let root = Fixture.packageRoot
        try fm.createSymbolicLink(atPath: dir + "/SDK", withDestinationPath: root + "/SDK")
        try fm.createSymbolicLink(atPath: dir + "/Plugins", withDestinationPath: root + "/Plugins")
        let readme = Self.readme
        let start = try XCTUnwrap(readme.range(of: "```c\n"))
        let end = try XCTUnwrap(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        try String(readme[start.upperBound..<end.lowerBound]).write(toFile: dir + "/myapp.c", atomically: true, encoding: .utf8)
        let chinook = Consumer.shared + "/sqlite/Chinook_Sqlite.sqlite"
        try fm.createDirectory(atPath: dir + "/home/app/Documents", withIntermediateDirectories: true)
        try fm.copyItem(atPath: chinook, toPath: dir + "/home/app/Documents/chinook.sqlite")
        try fm.copyItem(atPath: chinook, toPath: dir + "/app.db")
        try fm.copyItem(atPath: Consumer.shared + "/har/mitmproxy-chrome.har", toPath: dir + "/session.har")
        // A recorded ride: the examples name the route it becomes.
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="pincer-tests" xmlns="http://www.topografix.com/GPX/1/1">
              <trk><name>ride</name><trkseg>
                <trkpt lat="46.0569" lon="14.5058"><ele>295</ele><time>2026-05-01T08:00:00Z</time></trkpt>
                <trkpt lat="46.0601" lon="14.5102"><ele>297</ele><time>2026-05-01T08:01:10Z</time></trkpt>
                <trkpt lat="46.0650" lon="14.5160"><ele>301</ele><time>2026-05-01T08:02:30Z</time></trkpt>
              </trkseg></trk>
            </gpx>
            """.write(toFile: dir + "/ride.gpx", atomically: true, encoding: .utf8)
        let dump = try XCTUnwrap(try fm.contentsOfDirectory(atPath: Consumer.shared + "/layouts").sorted().first { $0.hasPrefix("uiautomator-") })
        try fm.copyItem(atPath: Consumer.shared + "/layouts/" + dump, toPath: dir + "/dump.xml")
        let l10n = root + "/Tests/Fixtures/l10n/"
        try fm.copyItem(atPath: l10n + "Localizable.strings", toPath: dir + "/Localizable.strings")
        try fm.copyItem(atPath: l10n + "Localizable.xcstrings", toPath: dir + "/Localizable.xcstrings")
        for table in ["Base", "de"] {
            try fm.createDirectory(atPath: "\(dir)/\(table).lproj", withIntermediateDirectories: true)
            try fm.copyItem(atPath: l10n + "Localizable.strings", toPath: "\(dir)/\(table).lproj/Localizable.strings")
        }
        // A translation that renames a placeholder (msgfmt -c calls it fatal).
        try fm.createDirectory(atPath: dir + "/po", withIntermediateDirectories: true)
        try """
            msgid ""
            msgstr ""
            "Content-Type: text/plain; charset=UTF-8\\n"
            "Language: de\\n"

            #, python-format
            msgid "Hello %(name)s"
            msgstr "Hallo %(nom)s"

            """.write(toFile: dir + "/po/de.po", atomically: true, encoding: .utf8)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        env["PATH"] = Fixture.buildDirectory + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["PINCER_STATE_DIR"] = dir + "/state"
        env["HOME"] = dir + "/home"
        env["COLUMNS"] = "120"
        for setup in [["run", "servers.register", "staging", "Staging", #"{"API_URL": "https://staging.example.com"}"#],
                      ["run", "a11y.import", "dump.xml", "--output", "screen.json"]] {
            let r = try shell(setup.map(Self.quoted).joined(separator: " "), in: dir, environment: env, pincer: true)
            XCTAssertEqual(r.status, 0, "\(setup): \(r.stderr)")
        }
        return (dir, env)
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// A line as sh runs it in the workspace, with nothing on standard
    /// input; timeout(1) ends it after `seconds` (exit 124).
    func shell(_ line: String, in dir: String, environment: [String: String], pincer: Bool = false, seconds: Int = 20) throws -> Fixture.ProcessResult {
        try Fixture.run("/usr/bin/timeout", ["-k", "2", "\(seconds)", "/bin/sh", "-c", pincer ? "pincer " + line : line],
                        environment: environment, directory: dir)
    }

    /// Every example command, run in README order in one workspace.
    func testEveryExampleCommandRuns() throws {
        let examples = Self.examples()
        XCTAssertGreaterThan(examples.count, 60, "the README's examples were not found")
        let (dir, env) = try makeWorkspace()
        for example in examples {
            let streams = Self.expectedStatus(example.line).contains(124)
            let r = try shell(example.line, in: dir, environment: env, seconds: streams ? 3 : 60)
            XCTAssertTrue(Self.expectedStatus(example.line).contains(r.status),
                          "README (\(example.section)): `\(example.line)` exited \(r.status)\n\(r.stderr.prefix(2000))")
            // The README spells options as the shell does.
            XCTAssertFalse(r.stderr.contains("old spelling"), "README (\(example.section)): `\(example.line)`: \(r.stderr)")
        }
    }

    /// Each row of the README's JSON table lists fields the command prints.
    func testJSONShapesMatchTheBinary() throws {
        let (dir, env) = try makeWorkspace()
        let rows: [(command: String, run: String, fields: [String])] = [
            ("plugins", "plugins", ["plugins", "id", "short_name", "name", "version", "summary", "abi", "path", "failed"]),
            ("commands", "commands", ["commands", "name", "signature", "usage", "summary", "plugin", "changes_state", "parameters",
                                      "type", "optional", "default", "secret", "rest", "option", "result"]),
            ("run", "run devopts.add 1", ["command", "ok", "type", "result"]),
            ("menu", "menu", ["sections", "id", "title", "entries"]),
            ("get", "get devopts.api-mode", ["id", "kind", "title", "summary", "plugin", "pinned", "value", "choices"]),
            ("set", "set devopts.api-mode staging", ["entry", "value"]),
            ("pin`/`unpin", "pin devopts.api-mode", ["entry", "pinned"]),
            ("activate", "activate devopts.reset", ["entry", "command", "ok", "result"]),
            ("search", "search greet", ["entries", "commands"]),
            ("complete <line>", "complete dev", ["line", "completions"]),
            ("version", "version", ["version", "abi"]),
        ]
        let table = try XCTUnwrap(Self.readme.components(separatedBy: "### JSON output").dropFirst().first)
        for row in rows {
            let readmeRow = try XCTUnwrap(table.components(separatedBy: "\n").first { $0.hasPrefix("| `\(row.command)` |") },
                                          "README's JSON table has no row for \(row.command)")
            let r = try shell(row.run + " --json", in: dir, environment: env, pincer: true)
            XCTAssertEqual(r.status, 0, "\(row.run): \(r.stderr)")
            let printed = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
            let keys = Self.keys(printed)
            for field in row.fields {
                XCTAssertTrue(readmeRow.contains("\"\(field)\""), "README's row for \(row.command) does not list \"\(field)\"")
                XCTAssertTrue(keys.contains(field), "`pincer \(row.run) --json` prints no \"\(field)\": \(r.stdout.prefix(300))")
            }
        }
        // The error shape and the exit codes the README promises.
        XCTAssertTrue(Self.readme.contains(#"`{"error": "...", "exit_code": N, "usage": "..."}`"#))
        let codes = Self.readme.components(separatedBy: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("| "), let n = Int(line.dropFirst(2).prefix { $0.isNumber }) else { return nil }
            return line.dropFirst(2).drop { $0.isNumber }.hasPrefix(" | ") ? n : nil
        }
        XCTAssertEqual(codes, [0, 1, 2, 3, 4, 5, 6])
    }

    static func keys(_ value: Any) -> Set<String> {
        if let object = value as? [String: Any] { return Set(object.keys).union(object.values.flatMap(keys)) }
        if let array = value as? [Any] { return Set(array.flatMap(keys)) }
        return []
    }
}
