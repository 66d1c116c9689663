import Foundation
import XCTest

/// Every file Pincer writes into the state directory is the owner's alone:
/// files 0600, directories 0700, whatever the umask. Real commands run
/// under umask 000 (where the defaults would give 0644 or 0666 files and
/// 0755 directories): a flag registration (the settings store and its
/// -wal/-shm), net.persist with entries imported into the log, loc.import
/// (the route store and its -wal/-shm), and the REPL on a terminal (history).
final class StateFileModesTests: XCTestCase {
    func testEveryFileInTheStateDirectoryIsOwnerOnly() throws {
        let root = Fixture.temporaryDirectory("pincer-modes")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state"
        let script = try Consumer.require("/usr/bin/script")
        func sh(_ command: String) throws {
            var env = ProcessInfo.processInfo.environment
            env["PINCER_STATE_DIR"] = state
            env["TERM"] = "dumb"
            env.removeValue(forKey: "PINCER_PLUGIN_PATH")
            let r = try Fixture.run("/bin/sh", ["-c", "umask 000 && " + command], environment: env, input: "version\nexit\n")
            XCTAssertEqual(r.status, 0, "\(command): \(r.stdout) \(r.stderr)")
        }
        let pincer = Fixture.pincer
        try sh("'\(pincer)' run flags.register private-flag bool true")
        try sh("'\(pincer)' run net.persist 7")
        try sh("'\(pincer)' run net.import-har '\(Consumer.shared)/har/mitmproxy-chrome.har'")
        try sh("'\(pincer)' run loc.import '\(Consumer.shared)/gpx/route.gpx'")
        try sh("'\(script)' -qec '\(pincer) shell' /dev/null")

        var found: [String: mode_t] = [:]
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: state))
        for case let relative as String in walker {
            var info = stat()
            XCTAssertEqual(lstat(state + "/" + relative, &info), 0)
            found[relative] = info.st_mode
        }
        // What the commands made: the test looks at each of them, and at anything else that appears.
        for expected in ["settings.sqlite3", "settings.sqlite3-wal", "settings.sqlite3-shm", "network-log.sqlite", "history", "routes.sqlite"] {
            XCTAssertNotNil(found[expected], "\(expected) was not made; found \(found.keys.sorted())")
        }
        var rootInfo = stat()
        XCTAssertEqual(stat(state, &rootInfo), 0)
        XCTAssertEqual(String(rootInfo.st_mode & 0o7777, radix: 8), "700", "the state directory")
        for (name, mode) in found.sorted(by: { $0.key < $1.key }) {
            let isDirectory = mode & S_IFMT == S_IFDIR
            XCTAssertEqual(String(mode & 0o7777, radix: 8), isDirectory ? "700" : "600", name)
        }
    }
}
