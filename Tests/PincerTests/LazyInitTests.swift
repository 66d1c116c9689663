import Foundation
import XCTest
import GeoRoutes
@testable import PincerHost

/// "A plugin's init only registers" (issue 17), plugin by plugin, through
/// the built `pincer` and the real plugin libraries: with a state directory
/// whose every store is garbage (the settings store, the route store) and
/// an old GPX route folder beside them, listing, describing and searching
/// commands succeed with no warning and leave every file as it was, byte
/// for byte, with nothing added but the shell's plugin registry. The
/// plugin's first real command is what meets the garbage: it reports it and
/// sets the file aside.
final class LazyInitTests: XCTestCase {
    /// The built-in plugins this test covers (the network logger has its own), by short name.
    static let plugins = ["devopts", "sysinfo", "flags", "servers", "l10n", "a11y", "loc", "db"]

    var state = ""
    override func setUp() { state = Fixture.temporaryDirectory("pincer-lazy") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: state) }

    static func library(_ shortName: String) -> String { Fixture.buildDirectory + "/libpincer-plugin-\(shortName).so" }

    /// Garbage where each store is, and a route folder of the old layout.
    func fillWithGarbage() throws {
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: state + "/settings.sqlite3"))
        try Data("not a database either\n".utf8).write(to: URL(fileURLWithPath: state + "/routes.sqlite"))
        try FileManager.default.createDirectory(atPath: state + "/routes", withIntermediateDirectories: false)
        let kept = Route(name: "kept", kind: .track, segments: [[Waypoint(Coordinate(latitude: 1, longitude: 1)), Waypoint(Coordinate(latitude: 1, longitude: 1.001))]])
        try Data(RouteFormats.writeGPX([kept], creator: "an older pincer")).write(to: URL(fileURLWithPath: state + "/routes/kept.gpx"))
    }

    /// Every file and directory under the state directory with its bytes.
    func snapshot() throws -> [String: Data] {
        var found: [String: Data] = [:]
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: state))
        for case let relative as String in walker where relative != PluginRegistry.fileName {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: state + "/" + relative, isDirectory: &isDirectory)
            found[relative] = isDirectory.boolValue ? Data("<dir>".utf8) : try Data(contentsOf: URL(fileURLWithPath: state + "/" + relative))
        }
        return found
    }

    /// The plugin alone (and the database browser with the CSV example, which needs its service).
    func pincer(_ plugins: [String], _ args: [String], environment: [String: String] = [:]) throws -> Fixture.ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        for (k, v) in environment { env[k] = v }
        let paths = plugins.flatMap { ["--plugin-path", $0.hasPrefix("/") ? $0 : LazyInitTests.library($0)] }
        return try Fixture.run(Fixture.pincer, ["--no-builtin"] + paths + args, environment: env)
    }

    func testListingCommandsOpensNoStateOfAnyPlugin() throws {
        for plugin in LazyInitTests.plugins {
            // A fresh state directory for each, so each plugin's result is its own.
            try? FileManager.default.removeItem(atPath: state)
            state = Fixture.temporaryDirectory("pincer-lazy")
            try fillWithGarbage()
            let before = try snapshot()
            // Flags' entries follow its stored flags (sync_entries): a search
            // lists entries, so it reads them, and meets the garbage.
            let search = plugin == "flags" ? [] : [["search", LazyInitTests.someCommand[plugin]!]]
            for args in [["commands", "--json"], ["help", "\(plugin).\(LazyInitTests.someCommand[plugin]!)"]] + search {
                // PINCER_LOG=debug: not even a debug line may mention the state.
                let r = try pincer([plugin], args, environment: ["PINCER_LOG": "debug"])
                XCTAssertEqual(r.status, 0, "\(plugin) \(args): \(r.stderr)")
                XCTAssertFalse(r.stderr.contains("settings") || r.stderr.contains("route") || r.stderr.contains("warning") || r.stderr.contains("error"),
                               "\(plugin) \(args) said something about state: \(r.stderr)")
                XCTAssertEqual(try snapshot(), before, "\(plugin) \(args) changed the state directory")
            }
        }
        // All of them together, and the CSV example over the database browser.
        let before = try snapshot()
        let csv = try CSVAdapterTests.built.get()
        let all = try pincer(LazyInitTests.plugins + [csv], ["commands", "--json"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(all.stderr, "")
        let names = ((Fixture.json(all.stdout)["commands"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        for plugin in LazyInitTests.plugins + ["csv"] {
            XCTAssertTrue(names.contains { $0.hasPrefix(plugin + ".") }, "\(plugin) registered no command: \(names)")
        }
        XCTAssertEqual(try snapshot(), before, "commands with every plugin changed the state directory")
    }

    /// What the built-in plugins register as they load (entries with their
    /// kinds and choices, and commands), in a host that reads nothing after.
    func registrations() -> [String] {
        var options = PincerHost.Host.Options(stateDirectory: state)
        options.builtinDirectory = nil
        options.pluginPaths = LazyInitTests.plugins.map(LazyInitTests.library)
        options.logHandler = { _ in }
        let host = PincerHost.Host(options: options)
        host.loadAll()
        defer { host.shutdown() }
        // What init registered: not host.entries, which asks sync_entries for more.
        return host.registeredEntries.map { "\($0.fullID) \($0.kind) \($0.choices)" } + host.commands.map { "\($0.fullName) \($0.signature.text)" }
    }

    /// Registrations do not depend on what is stored: the same entries
    /// (kinds, choices) and commands with an empty state directory as with
    /// one holding flags, environments, places, routes, modes and paths.
    func testRegistrationsAreTheSameWhateverIsStored() throws {
        let registered = registrations()
        XCTAssertGreaterThan(registered.count, 60)
        let empty = try pincer(LazyInitTests.plugins, ["commands", "--json"])
        XCTAssertEqual(empty.status, 0, empty.stderr)
        for command in [["flags.register", "stored-flag", "bool", "true"], ["servers.register", "qa", "QA"],
                        ["loc.add", "office", "52.52", "13.405"], ["loc.waypoints", "walk", "1,1 1,1.001"],
                        ["l10n.set", "accented", "on"], ["db.add-path", state]] {
            let r = try pincer(LazyInitTests.plugins, ["run"] + command)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
        }
        let full = try pincer(LazyInitTests.plugins, ["commands", "--json"])
        XCTAssertEqual(full.stdout, empty.stdout)
        XCTAssertEqual(full.stderr, "")
        XCTAssertEqual(registrations(), registered)
    }

    /// The first real command of each plugin meets the garbage: the settings
    /// store is set aside with a warning (once), the command works on a new
    /// one; the route store the same way, by the first route command.
    func testTheFirstRealCommandReportsAndSetsTheGarbageAside() throws {
        for (plugin, command) in [("flags", ["flags.list"]), ("servers", ["servers.list"]), ("l10n", ["l10n.modes"]), ("a11y", ["a11y.checks"]),
                                  ("loc", ["loc.presets"]), ("db", ["db.list"]), ("devopts", ["devopts.greet"])] {
            try? FileManager.default.removeItem(atPath: state)
            state = Fixture.temporaryDirectory("pincer-lazy")
            try fillWithGarbage()
            let r = try pincer([plugin], ["run"] + command)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("settings store \(state)/settings.sqlite3 could not be read"), "\(command): \(r.stderr)")
            let aside = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("settings.sqlite3.unreadable-") }
            XCTAssertEqual(aside.count, 1, "\(command): \(aside)")
            // Only the store the command needed: the route store and the old folder are untouched.
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/routes.sqlite")), Data("not a database either\n".utf8), "\(command)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: state + "/routes/kept.gpx"), "\(command)")
        }
        // The route store: set aside by the first route command, which then works.
        try? FileManager.default.removeItem(atPath: state)
        state = Fixture.temporaryDirectory("pincer-lazy")
        try fillWithGarbage()
        let routes = try pincer(["loc"], ["run", "loc.routes", "--json"])
        XCTAssertEqual(routes.status, 0, routes.stderr)
        XCTAssertTrue(routes.stderr.contains("route store \(state)/routes.sqlite could not be read (file is not a database); moved it to \(state)/routes.sqlite.unreadable-"),
                      routes.stderr)
        // The old folder's route was migrated (its speeds read from the settings, set aside too) and the folder renamed.
        XCTAssertTrue(FileManager.default.fileExists(atPath: state + "/routes.migrated/kept.gpx"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: state + "/routes"))
        let listed = ((Fixture.json(routes.stdout)["result"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        XCTAssertEqual(listed, ["city-bicycle-ride", "city-run", "freeway-drive", "kept"], "the scenarios and the migrated route")
        let aside = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("routes.sqlite.unreadable-") }
        XCTAssertEqual(aside.count, 1, "\(aside)")
        if let first = aside.first {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/" + first)), Data("not a database either\n".utf8))
        }
    }

    /// A command of each plugin for `help` and `search`.
    static let someCommand = ["devopts": "add", "sysinfo": "env", "flags": "set", "servers": "use", "l10n": "transform",
                              "a11y": "audit", "loc": "import", "db": "rows"]
}
