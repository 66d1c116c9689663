import Foundation
import XCTest

/// Several real `pincer` processes changing the same plugin state at once,
/// each change reported as done, then an exact count of what survived
/// (issue 16: registrations made at the same time were lost). Each process
/// runs a piped `pincer shell`, so its changes follow one another quickly
/// while the others' land in between.
final class ConcurrentWritersTests: XCTestCase {
    static let processes = 6
    static let perProcess = 15

    private var state = ""

    override func setUp() {
        state = Fixture.temporaryDirectory("pincer-writers")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: state)
    }

    /// Starts every process before waiting for any, then checks that each
    /// exited 0 having acknowledged each of its lines.
    private func runShells(_ script: (_ process: Int) -> [String], acknowledgement: String,
                           file: StaticString = #filePath, line: UInt = #line) throws {
        let scripts = (0..<Self.processes).map(script)
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["shell"], stateDir: state,
                                                  inputs: scripts.map { $0.joined(separator: "\n") + "\n" })
        for (i, r) in results.enumerated() {
            XCTAssertEqual(r.status, 0, "process \(i): \(r.stderr)", file: file, line: line)
            let acknowledged = r.stdout.components(separatedBy: acknowledgement).count - 1
            XCTAssertEqual(acknowledged, scripts[i].count, "process \(i) acknowledged \(acknowledged) of \(scripts[i].count): \(r.stdout) \(r.stderr)",
                           file: file, line: line)
        }
    }

    private func json(_ arguments: [String]) throws -> Any {
        let r = try Fixture.pincer(["--json"] + arguments, stateDir: state)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
    }

    private func expectedNames(_ prefix: String) -> Set<String> {
        Set((0..<Self.processes).flatMap { p in (0..<Self.perProcess).map { "\(prefix)\(p)-\($0)" } })
    }

    func testFlagRegistrationsFromConcurrentShellsAllSurvive() throws {
        try runShells({ p in (0..<Self.perProcess).map { "flags.register f\(p)-\($0) string v\(p)" } },
                      acknowledgement: "reason            remote")
        let list = try json(["run", "flags.list"]) as? [String: Any]
        let result = list?["result"] as? [String: Any]
        let keys = (result?["flags"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        XCTAssertEqual(keys.count, Self.processes * Self.perProcess, "registrations lost: \(expectedNames("f").subtracting(keys).sorted())")
        XCTAssertEqual(Set(keys), expectedNames("f"))
    }

    func testServerEnvironmentsFromConcurrentShellsAllSurvive() throws {
        try runShells({ p in (0..<Self.perProcess).map { "servers.register s\(p)-\($0) Env\(p)" } },
                      acknowledgement: "registered")
        let list = try json(["run", "servers.list"]) as? [String: Any]
        let ids = (list?["result"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertEqual(ids.count, Self.processes * Self.perProcess, "environments lost: \(expectedNames("s").subtracting(ids).sorted())")
        XCTAssertEqual(Set(ids), expectedNames("s"))
    }

    func testPlacesFromConcurrentShellsAllSurvive() throws {
        try runShells({ p in (0..<Self.perProcess).map { "loc.add p\(p)-\($0) \(10 + p) \($0)" } },
                      acknowledgement: "added")
        let list = try json(["run", "loc.presets"]) as? [String: Any]
        let ids = (list?["result"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }.filter { $0.range(of: #"^p[0-9]+-[0-9]+$"#, options: .regularExpression) != nil }
        XCTAssertEqual(ids.count, Self.processes * Self.perProcess, "places lost: \(expectedNames("p").subtracting(ids).sorted())")
        XCTAssertEqual(Set(ids), expectedNames("p"))
    }

    func testDatabasePathsFromConcurrentShellsAllSurvive() throws {
        let folder = state + "/dbs"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try Fixture.run(Consumer.require(Consumer.sqlite3), [folder + "/seed.sqlite", "create table t(x);"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let names = expectedNames("d")
        for name in names { try FileManager.default.copyItem(atPath: folder + "/seed.sqlite", toPath: "\(folder)/\(name).sqlite") }
        try runShells({ p in (0..<Self.perProcess).map { "db.add-path \(folder)/d\(p)-\($0).sqlite" } }, acknowledgement: "added ")
        let list = try json(["run", "db.paths"]) as? [String: Any]
        let paths = (list?["result"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        let saved = Set(paths.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent })
        XCTAssertEqual(paths.count, Self.processes * Self.perProcess, "paths lost: \(names.subtracting(saved).sorted())")
        XCTAssertEqual(saved, names)
    }

    func testNetworkRulesFromConcurrentShellsAllSurvive() throws {
        try runShells({ p in (0..<Self.perProcess).map { "net.ignore-host h\(p)-\($0).example" } }, acknowledgement: "ignore: ")
        let list = try json(["run", "net.rules"]) as? [String: Any]
        let hosts = Set((list?["result"] as? [[String: Any]] ?? []).compactMap { ($0["host"] as? String)?.replacingOccurrences(of: ".example", with: "") })
        XCTAssertEqual(hosts, expectedNames("h"), "rules lost: \(expectedNames("h").subtracting(hosts).sorted())")
    }

    /// Interception rules: one locked read-modify-write of net-rules.json
    /// each, so every mock survives and every id is given once.
    func testInterceptionRulesFromConcurrentShellsAllSurvive() throws {
        try runShells({ p in (0..<Self.perProcess).map { "net.add-block --match domain:m\(p)-\($0).example --title m\(p)-\($0)" } },
                      acknowledgement: "added block rule")
        let list = try json(["run", "net.intercept-rules"]) as? [String: Any]
        let rules = (list?["result"] as? [String: Any])?["rules"] as? [[String: Any]] ?? []
        let titles = Set(rules.compactMap { $0["title"] as? String })
        XCTAssertEqual(titles, expectedNames("m"), "rules lost: \(expectedNames("m").subtracting(titles).sorted())")
        let ids = rules.compactMap { $0["id"] as? String }
        XCTAssertEqual(Set(ids), Set((1...(Self.processes * Self.perProcess)).map(String.init)), "ids are given once each")
    }

    /// The C example adapter's folder list, through settings_update from C.
    func testCSVFoldersFromConcurrentShellsAllSurvive() throws {
        let plugin = try CSVAdapterTests.built.get()
        let root = state + "/csv"
        let names = expectedNames("c")
        for name in names { try FileManager.default.createDirectory(atPath: "\(root)/\(name)", withIntermediateDirectories: true) }
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["shell"], stateDir: state,
                                                  extraEnvironment: ["PINCER_PLUGIN_PATH": plugin],
                                                  inputs: (0..<Self.processes).map { p in
            (0..<Self.perProcess).map { "csv.add \(root)/c\(p)-\($0) --name c\(p)-\($0)" }.joined(separator: "\n") + "\n"
        })
        for (i, r) in results.enumerated() {
            XCTAssertEqual(r.status, 0, "process \(i): \(r.stderr)")
            XCTAssertEqual(r.stdout.components(separatedBy: "added \"").count - 1, Self.perProcess, "process \(i): \(r.stdout) \(r.stderr)")
        }
        let listed = try Fixture.pincer(["run", "csv.folders"], stateDir: state, pluginPath: plugin)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let saved = Set(listed.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) })
        XCTAssertEqual(saved, names, "folders lost: \(names.subtracting(saved).sorted())")
        // Refusals still name what is wrong, from inside the transaction.
        let again = try Fixture.pincer(["run", "csv.add", "\(root)/c0-0", "--name", "c0-0"], stateDir: state, pluginPath: plugin)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("there is already a folder named \"c0-0\" ("), again.stderr)
        let missing = try Fixture.pincer(["run", "csv.remove", "nope"], stateDir: state, pluginPath: plugin)
        XCTAssertTrue(missing.stderr.contains("no folder named \"nope\""), missing.stderr)
    }

    /// Each process switches its own check (or mode) off and on, ending in
    /// its own final state; every process's final state must survive.
    func testAuditSwitchesFromConcurrentShellsAllSurvive() throws {
        let checks = ["missing-label", "touch-target", "contrast", "duplicate-bounds", "redundant-trait", "conflicting-traits"]
        XCTAssertEqual(checks.count, Self.processes)
        try runShells({ p in (0..<Self.perProcess).map { "set a11y.\(checks[p]) \($0 % 2 == 0 ? "false" : "true")" } },
                      acknowledgement: "a11y.")
        for check in checks {
            XCTAssertEqual(try Fixture.pincer(["get", "a11y.\(check)"], stateDir: state).stdout, "false\n", check)
        }
    }

    func testPseudoLocalisationModesFromConcurrentShellsAllSurvive() throws {
        let modes = ["accented", "lengthened", "rtl", "keys"]
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["shell"], stateDir: state, inputs: modes.map { mode in
            (0..<Self.perProcess).map { "l10n.set \(mode) \($0 % 2 == 0 ? "on" : "off")" }.joined(separator: "\n") + "\n"
        })
        for (i, r) in results.enumerated() {
            XCTAssertEqual(r.status, 0, "\(modes[i]): \(r.stderr)")
            XCTAssertEqual(r.stdout.components(separatedBy: "enabled:").count - 1, Self.perProcess, "\(modes[i]): \(r.stdout)")
        }
        let listed = try json(["run", "l10n.modes"]) as? [String: Any]
        let rows = ((listed?["result"] as? [String: Any])?["modes"] as? [[String: Any]]) ?? []
        let on = Set(rows.filter { $0["on"] as? Bool == true }.compactMap { $0["mode"] as? String })
        XCTAssertEqual(on, Set(modes + ["boundaries"]), "\(rows)")
    }

    /// A running app removes a place a shell added after the app started:
    /// the check is made against the stored places, in the transaction.
    func testAPlaceAddedByAnotherProcessCanBeRemovedByARunningOne() throws {
        let app = AppHost(stateDirectory: state, withApp: false)
        let added = try Fixture.pincer(["run", "loc.add", "from-shell", "1", "2"], stateDir: state)
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(try app.text("loc.remove", "from-shell"), "removed from-shell")
        let list = try json(["run", "loc.presets"]) as? [String: Any]
        let ids = (list?["result"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertFalse(ids.contains("from-shell"), "\(ids)")
    }
}

/// Child processes started together, with their output in files (so no
/// pipe can fill up while the others are still being started).
enum ConcurrentProcesses {
    static func run(_ executable: String, arguments: [String], stateDir: String, extraEnvironment: [String: String] = [:],
                    inputs: [String]) throws -> [Fixture.ProcessResult] {
        let scratch = Fixture.temporaryDirectory("pincer-procs")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = stateDir
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        for (k, v) in extraEnvironment { env[k] = v }
        var started: [(Process, String, String)] = []
        for (i, input) in inputs.enumerated() {
            let inPath = "\(scratch)/\(i).in", outPath = "\(scratch)/\(i).out", errPath = "\(scratch)/\(i).err"
            try Data(input.utf8).write(to: URL(fileURLWithPath: inPath))
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
            _ = FileManager.default.createFile(atPath: errPath, contents: nil)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: executable)
            p.arguments = arguments
            p.environment = env
            p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
            p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
            started.append((p, outPath, errPath))
        }
        for (p, _, _) in started { try p.run() }
        return started.map { p, out, err in
            p.waitUntilExit()
            return Fixture.ProcessResult(status: p.terminationStatus,
                                         stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                                         stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        }
    }
}
