import Foundation
import XCTest

/// "Start-up does not grow with state" (issue 17), shown by what the real
/// `pincer` opens, as strace sees it: with a state directory holding a
/// persisted network log, imported routes, flags and settings, a command
/// that touches none of them opens nothing there but the plugin registry,
/// and a command of one plugin opens that plugin's state only.
final class StartupStateTests: XCTestCase {
    var state = ""

    override func setUpWithError() throws {
        state = Fixture.temporaryDirectory("pincer-startup-state")
        // Real files: a HAR from mitmproxy's tests, a GPX from gpxpy's.
        for command in [["net.persist", "30"], ["net.import-har", Consumer.shared + "/har/mitmproxy-firefox.har"],
                        ["loc.import", Consumer.shared + "/gpx/korita-zbevnica.gpx"],
                        ["flags.register", "checkout", "bool", "false"], ["servers.register", "qa", "QA"]] {
            let r = try Fixture.pincer(["run"] + command, stateDir: state)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: state)
        XCTAssertTrue(files.contains { $0.hasPrefix("network-log") }, "\(files)")
        XCTAssertTrue(files.contains { $0.hasPrefix("routes") }, "\(files)")
    }

    /// The files under the state directory that `pincer args` opened or
    /// looked at (every file system call strace names a path for).
    func stateFilesTouched(_ args: [String]) throws -> Set<String> {
        let trace = Fixture.temporaryDirectory("pincer-strace") + "/trace"
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        let r = try Fixture.run(try Consumer.require(Consumer.strace), ["-f", "-qq", "-e", "trace=%file", "-o", trace, Fixture.pincer] + args, environment: env)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        var touched = Set<String>()
        for line in text.split(separator: "\n") {
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\"") else { continue }
            let path = String(line[line.index(after: open)..<close])
            if path.hasPrefix(state + "/") { touched.insert(String(path.dropFirst(state.count + 1))) }
        }
        return touched
    }

    func testCommandsThatTouchNoStateOpenOnlyTheRegistry() throws {
        _ = try Fixture.pincer(["commands"], stateDir: state) // the registry is warm from here on
        for args in [["commands", "--json"], ["help", "loc.routes"], ["complete", "net."], ["plugins", "--json"]] {
            XCTAssertEqual(try stateFilesTouched(args), ["plugin-registry.bin"], "\(args)")
        }
        // A search lists entries too, and the flags' entries follow the stored
        // flags (sync_entries): it reads the settings store, and nothing else.
        let search = try stateFilesTouched(["search", "route"])
        XCTAssertEqual(search.filter { !$0.hasPrefix("settings.sqlite3") }, ["plugin-registry.bin"], "\(search)")
    }

    func testAPluginsCommandOpensThatPluginsStateOnly() throws {
        _ = try Fixture.pincer(["commands"], stateDir: state)
        let flags = try stateFilesTouched(["flags.list"])
        XCTAssertTrue(flags.contains("settings.sqlite3"), "\(flags)")
        XCTAssertFalse(flags.contains { $0.hasPrefix("network-log") || $0.hasPrefix("routes") }, "\(flags)")
        let routes = try stateFilesTouched(["loc.routes"])
        XCTAssertTrue(routes.contains { $0.hasPrefix("routes") }, "\(routes)")
        XCTAssertFalse(routes.contains { $0.hasPrefix("network-log") }, "\(routes)")
        let log = try stateFilesTouched(["net.list"])
        XCTAssertTrue(log.contains { $0.hasPrefix("network-log") }, "\(log)")
        XCTAssertFalse(log.contains { $0.hasPrefix("routes") }, "\(log)")
    }
}
