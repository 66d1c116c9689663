import CPincerSDK
import Foundation
import XCTest
@testable import PincerHost

/// The ABI 1.4 settings slots through real C plugins (Tests/Fixtures/plugins/
/// counter.c, late_writer.c): settings_update is one transaction across
/// processes, settings_list lists keys, and a plugin's thread that outlives
/// its shutdown can no longer write.
final class SettingsUpdateTests: XCTestCase {
    static let counterPlugin: String = {
        try! Fixture.buildPlugin("counter", into: Fixture.temporaryDirectory("pincer-counter-plugin"))
    }()

    private var state = ""

    override func setUp() { state = Fixture.temporaryDirectory("pincer-update") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: state) }

    private func host(_ plugin: String) -> PincerHost.Host {
        var options = PincerHost.Host.Options(stateDirectory: state)
        options.builtinDirectory = nil
        options.pluginPaths = [plugin]
        options.logHandler = { _ in }
        let host = PincerHost.Host(options: options)
        host.loadAll()
        XCTAssertEqual(host.failures, [])
        return host
    }

    private func run(_ host: PincerHost.Host, _ name: String, _ args: [Value] = []) throws -> Value {
        try XCTUnwrap(host.command(named: name), "no command \(name)").invoke(args)
    }

    /// Twenty `pincer` processes, each incrementing counter `key` once with
    /// `command`, all at the same moment (each waits for a wall-clock time
    /// 3 s ahead, by when all have started). Returns what each saw and the
    /// counter's final value.
    private func twentyAtOnce(_ command: String, key: String) throws -> (seen: [Int], final: String?) {
        // Warm the plugin registry first, so no process spends its 3 s scanning.
        XCTAssertEqual(try Fixture.pincer(["--no-builtin", "--plugin-path", Self.counterPlugin, "commands"], stateDir: state).status, 0)
        let at = Int64(Date().timeIntervalSince1970 * 1000) + 3000
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["--no-builtin", "--plugin-path", Self.counterPlugin,
                                                                               "run", command, key, String(at)],
                                                  stateDir: state, inputs: Array(repeating: "", count: 20))
        var seen: [Int] = []
        for (i, r) in results.enumerated() {
            XCTAssertEqual(r.status, 0, "process \(i): \(r.stderr)")
            if let n = Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) { seen.append(n) }
        }
        return (seen.sorted(), try SettingsStore(directory: state).get(namespace: "test.counter", key: key))
    }

    /// Through settings_update the counter ends at exactly twenty, and the
    /// values the twenty saw are 1 to 20, each once (no two read the same
    /// old value). The same processes doing settings_get then settings_set
    /// lose increments: the check that the processes really did meet.
    func testTwentyProcessesIncrementingOnceEndAtTwenty() throws {
        let atomic = try twentyAtOnce("counter.increment", key: "count")
        XCTAssertEqual(atomic.seen, Array(1...20), "the values the processes saw")
        XCTAssertEqual(atomic.final, "20")
        let keys = try Fixture.pincer(["--no-builtin", "--plugin-path", Self.counterPlugin, "run", "counter.keys"], stateDir: state)
        XCTAssertEqual(keys.stdout, "count=20\n", keys.stderr)

        let naive = try twentyAtOnce("counter.naive", key: "naive")
        XCTAssertLessThan(Int(naive.final ?? "0") ?? 0, 20, "get-then-set did not lose a count, so the processes did not meet: \(naive.seen)")
    }

    func testListCancelDeleteAndACallFromInsideTheCallback() throws {
        let host = host(Self.counterPlugin)
        defer { host.shutdown() }
        for (key, value) in [("b.1", "x"), ("a.2", "y"), ("a.1", "z"), ("ab", "w")] {
            _ = try run(host, "counter.put", [.string(key), .string(value)])
        }
        XCTAssertEqual(try run(host, "counter.increment", [.string("n"), .i64(0)]), .i64(1))
        XCTAssertEqual(try run(host, "counter.increment", [.string("n"), .i64(0)]), .i64(2))
        // Byte order of keys; a prefix is compared byte for byte ("a." is not "ab").
        XCTAssertEqual(try run(host, "counter.keys", [.string("")]), .string("a.1=z,a.2=y,ab=w,b.1=x,n=2"))
        XCTAssertEqual(try run(host, "counter.keys", [.string("a.")]), .string("a.1=z,a.2=y"))
        XCTAssertEqual(try run(host, "counter.keys", [.string("zz")]), .string(""))

        // CANCEL: PINCER_CANCELLED, nothing written, last_error says so.
        let refused = try run(host, "counter.refuse", [.string("n")])
        XCTAssertEqual(refused, .string("\(PINCER_CANCELLED) settings_update: the update of setting \"n\" was cancelled by its callback; nothing was written"))
        XCTAssertEqual(try run(host, "counter.increment", [.string("n"), .i64(0)]), .i64(3))
        // DELETE removes the key; a value that is not a number cancels the increment.
        XCTAssertEqual(try run(host, "counter.drop", [.string("a.1")]), .string("\(PINCER_OK) "))
        XCTAssertEqual(try run(host, "counter.keys", [.string("a")]), .string("a.2=y,ab=w"))
        XCTAssertThrowsError(try run(host, "counter.increment", [.string("b.1"), .i64(0)])) { error in
            XCTAssertEqual((error as? CommandFailure)?.message, "the counter is not a number")
            XCTAssertEqual((error as? CommandFailure)?.status, PINCER_CANCELLED)
        }

        // A settings call from inside the callback fails (it would wait for its own lock) and the update goes on.
        let reentry = try run(host, "counter.reenter")
        guard case .string(let text) = reentry else { return XCTFail("\(reentry)") }
        XCTAssertTrue(text.hasPrefix("update=\(PINCER_OK) get=\(PINCER_SETTING_ERROR) set=\(PINCER_FAILED) error=settings_set: "), text)
        XCTAssertTrue(text.contains("was called from inside an update of the same store"), text)
        XCTAssertEqual(try run(host, "counter.keys", [.string("other")]), .string(""))
        XCTAssertEqual(try run(host, "counter.increment", [.string("n"), .i64(0)]), .i64(4))
    }

    /// A plugin thread that writes after the plugin's shutdown has returned
    /// is refused with a status and a last_error, and nothing lands.
    func testSettingsCallsAfterShutdownFailAndWriteNothing() throws {
        let plugin = try Fixture.buildPlugin("late_writer", into: Fixture.temporaryDirectory("pincer-late-plugin"), extraFlags: ["-pthread"])
        let host = host(plugin)
        let report = state + "/late-report.txt"
        _ = try run(host, "late.arm", [.string(report)])
        host.shutdown()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: report), Date() < deadline { usleep(10_000) }
        let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, "\(lines)")
        let refusal = "plugin test.late has shut down; its settings can no longer be read or written (nothing was written)"
        XCTAssertEqual(lines.first, "set=\(PINCER_FAILED) settings_set: \(refusal)")
        XCTAssertEqual(lines.dropFirst().first, "update=\(PINCER_FAILED) settings_update: \(refusal)")
        XCTAssertEqual(lines.dropFirst(2).first, "get=\(PINCER_SETTING_ERROR) settings_get: \(refusal)")
        XCTAssertEqual(lines.dropFirst(3).first, "list=\(PINCER_FAILED) settings_list: \(refusal)")
        let store = try SettingsStore(directory: state)
        XCTAssertNil(try store.get(namespace: "test.late", key: "late"), "the write after shutdown landed")
        XCTAssertEqual(try store.get(namespace: "test.late", key: "kept"), "before shutdown", "the update after shutdown landed")
    }
}
