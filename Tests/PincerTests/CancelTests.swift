import Foundation
import XCTest
@testable import PincerShell

/// Issue 16, shell and host: Ctrl-C and --timeout cancel a plugin command
/// (pincer_call_t.is_cancelled, ABI 1.4; exit 6), a command that does not
/// poll is abandoned with a message, a plugin crash names plugin and
/// command, and text reaches the terminal with its control characters
/// escaped. All through the built `pincer`, as real processes.
final class CancelTests: XCTestCase {
    var state = ""
    var plugins = ""

    override func setUpWithError() throws {
        state = Fixture.temporaryDirectory("pincer-cancel")
        plugins = Fixture.temporaryDirectory("pincer-cancel-plugins")
        _ = try Fixture.buildPlugin("hostile", into: plugins)
    }

    var hostile: String { plugins + "/hostile.so" }

    /// A running `pincer`: its output collected as it comes.
    final class Running: @unchecked Sendable {
        let process = Process()
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()
        private var readers: [Thread] = []
        private var open = 2

        init(_ arguments: [String], state: String, input: String? = nil) throws {
            var env = ProcessInfo.processInfo.environment
            env["PINCER_STATE_DIR"] = state
            env.removeValue(forKey: "PINCER_PLUGIN_PATH")
            process.executableURL = URL(fileURLWithPath: Fixture.pincer)
            process.arguments = arguments
            process.environment = env
            let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
            process.standardOutput = outPipe
            process.standardError = errPipe
            process.standardInput = inPipe
            try process.run()
            if let input { inPipe.fileHandleForWriting.write(input.data(using: .utf8)!) }
            try inPipe.fileHandleForWriting.close()
            for (pipe, isOut) in [(outPipe, true), (errPipe, false)] {
                let t = Thread { [self] in
                    let handle = pipe.fileHandleForReading
                    while true {
                        let chunk = handle.availableData
                        lock.lock()
                        if chunk.isEmpty { open -= 1; lock.unlock(); return }
                        if isOut { out.append(chunk) } else { err.append(chunk) }
                        lock.unlock()
                    }
                }
                t.start()
                readers.append(t)
            }
        }

        var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
        var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }

        /// Waits until standard output contains `marker`; false after `seconds`.
        func waitForOutput(_ marker: String, seconds: Double = 20) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if stdout.contains(marker) { return true }
                usleep(10_000)
            }
            return false
        }

        /// Waits for the process to end and its pipes to close; the
        /// seconds it took, or nil (then it is killed) after `limit`.
        func waitForExit(limit: Double = 20) -> Double? {
            let start = Date()
            while process.isRunning || { lock.lock(); defer { lock.unlock() }; return open > 0 }() {
                if Date().timeIntervalSince(start) > limit {
                    kill(process.processIdentifier, SIGKILL)
                    process.waitUntilExit()
                    return nil
                }
                usleep(5_000)
            }
            return Date().timeIntervalSince(start)
        }
    }

    /// The built-in streaming commands, each as a line and the text that
    /// shows it is running (net.tail prints nothing until traffic comes).
    let streaming: [(args: [String], marker: String?)] = [
        (["net.tail"], nil),
        (["loc.play", "city-run", "--loop", "--rate", "50"], " m/s "),
        (["devopts.progress", "1000", "--delay-ms", "100"], "step 1 of 1000"),
    ]

    /// Reproducer: before is_cancelled, SIGINT killed `pincer` by the
    /// default action (no message, status "signal 2"), and `loc.play --loop`
    /// could not be ended any other way. Now each stops within a poll
    /// interval, prints its result and exits 6.
    func testInterruptStopsEachStreamingCommandPromptly() throws {
        for (args, marker) in streaming {
            let run = try Running(args, state: state)
            if let marker {
                XCTAssertTrue(run.waitForOutput(marker), "\(args): no '\(marker)' in \(run.stdout) \(run.stderr)")
            } else {
                usleep(1_000_000) // net.tail is silent; give it time to reach its loop
            }
            XCTAssertTrue(run.process.isRunning, "\(args) ended before the interrupt: \(run.stderr)")
            run.process.interrupt()
            let took = try XCTUnwrap(run.waitForExit(), "\(args) did not exit after SIGINT")
            XCTAssertLessThan(took, 1.0, "\(args) took \(took) s to stop")
            XCTAssertEqual(run.process.terminationReason, .exit, "\(args) died of a signal")
            XCTAssertEqual(run.process.terminationStatus, 6, "\(args): \(run.stderr)")
            XCTAssertEqual(run.stderr, "pincer: \(args[0]) interrupted (Ctrl-C)\n", "\(args)")
        }
    }

    /// `--timeout 1` on each: stopped after one second (plus a poll), exit 6.
    func testTimeoutStopsEachStreamingCommand() throws {
        for (args, _) in streaming {
            let run = try Running(["--timeout", "1"] + args, state: state)
            let took = try XCTUnwrap(run.waitForExit(), "\(args) did not stop at its timeout")
            XCTAssertGreaterThanOrEqual(took, 0.9, "\(args)")
            XCTAssertLessThan(took, 2.0, "\(args) took \(took) s")
            XCTAssertEqual(run.process.terminationStatus, 6, "\(args): \(run.stderr)")
            XCTAssertEqual(run.stderr, "pincer: \(args[0]) timed out after 1 s\n", "\(args)")
        }
        // What the command returned is still shown; under --json in the run object.
        let progress = try Running(["--timeout", "0.5", "--json", "devopts.progress", "1000", "--delay-ms", "100"], state: state)
        XCTAssertNotNil(progress.waitForExit())
        XCTAssertEqual(progress.process.terminationStatus, 6)
        let last = try XCTUnwrap(progress.stdout.split(separator: "\n").last.map(String.init))
        let object = Fixture.json(last)
        XCTAssertEqual(object["ok"] as? Bool, false)
        XCTAssertEqual(object["status"] as? String, "PINCER_CANCELLED")
        XCTAssertEqual(object["error"] as? String, "devopts.progress timed out after 0.5 s")
        let steps = progress.stdout.split(separator: "\n").dropLast()
        XCTAssertTrue((3...6).contains(steps.count), "\(steps.count) steps in 0.5 s at 100 ms each: \(progress.stdout)")
        XCTAssertEqual(try Fixture.pincer(["--timeout", "0", "devopts.progress"], stateDir: state).status, 2)
        XCTAssertEqual(try Fixture.pincer(["--timeout", "x", "devopts.progress"], stateDir: state).status, 2)
    }

    /// A command that never polls cannot be stopped: the shell waits 2 s
    /// after the timeout (or Ctrl-C), says which command did not stop, and
    /// exits 6 with it still sleeping (it would sleep 30 s).
    func testNonPollingCommandIsAbandonedWithAMessage() throws {
        let timed = try Running(["--plugin-path", hostile, "--timeout", "1", "hostile.stuck"], state: state)
        let took = try XCTUnwrap(timed.waitForExit(), "pincer waited for the stuck command")
        XCTAssertGreaterThanOrEqual(took, 2.9)
        XCTAssertLessThan(took, 4.5)
        XCTAssertEqual(timed.process.terminationStatus, 6)
        XCTAssertEqual(timed.stdout, "stuck: sleeping\n")
        XCTAssertEqual(timed.stderr, "pincer: hostile.stuck (plugin test.hostile) timed out after 1 s; it did not stop within 2 s "
                       + "(it does not poll pincer_call_t.is_cancelled), so pincer exits with the call still running\n")

        let interrupted = try Running(["--plugin-path", hostile, "hostile.stuck"], state: state)
        XCTAssertTrue(interrupted.waitForOutput("stuck: sleeping"))
        interrupted.process.interrupt()
        let after = try XCTUnwrap(interrupted.waitForExit())
        XCTAssertGreaterThanOrEqual(after, 1.9)
        XCTAssertLessThan(after, 3.5)
        XCTAssertEqual(interrupted.process.terminationStatus, 6)
        XCTAssertTrue(interrupted.stderr.contains("hostile.stuck (plugin test.hostile) interrupted (Ctrl-C); it did not stop"), interrupted.stderr)

        // A second Ctrl-C stops waiting at once.
        let twice = try Running(["--plugin-path", hostile, "hostile.stuck"], state: state)
        XCTAssertTrue(twice.waitForOutput("stuck: sleeping"))
        twice.process.interrupt()
        usleep(200_000)
        twice.process.interrupt()
        let quick = try XCTUnwrap(twice.waitForExit())
        XCTAssertLessThan(quick, 1.0)
        XCTAssertEqual(twice.process.terminationStatus, 6)
    }

    /// In the REPL, Ctrl-C cancels the running command and the shell goes
    /// on with the next line.
    func testInterruptInTheShellReturnsToThePrompt() throws {
        let shell = try Running(["shell"], state: state, input: "devopts.progress 1000 --delay-ms 100\ndevopts.add 2 3\n")
        XCTAssertTrue(shell.waitForOutput("step 1 of 1000"), shell.stderr)
        shell.process.interrupt()
        XCTAssertNotNil(shell.waitForExit())
        XCTAssertEqual(shell.process.terminationReason, .exit)
        XCTAssertEqual(shell.process.terminationStatus, 0, shell.stderr) // the last line's code
        XCTAssertEqual(shell.stderr, "pincer: devopts.progress interrupted (Ctrl-C)\n")
        XCTAssertTrue(shell.stdout.hasSuffix("\n5.0\n"), shell.stdout)
    }

    /// Reproducer: a plugin's NULL dereference killed pincer with nothing
    /// naming the plugin. Now the first line of the crash names plugin and
    /// command, and the process still died of SIGSEGV.
    func testCrashInACommandNamesPluginAndCommand() throws {
        let crashed = try Running(["--plugin-path", hostile, "hostile.crash"], state: state)
        XCTAssertNotNil(crashed.waitForExit(limit: 60))
        XCTAssertEqual(crashed.process.terminationReason, .uncaughtSignal)
        XCTAssertEqual(crashed.process.terminationStatus, SIGSEGV)
        XCTAssertTrue(crashed.stderr.hasPrefix("pincer: plugin test.hostile crashed in hostile.crash: signal 11\n"), crashed.stderr)
        // Only while a command runs: a clean run says nothing of crashes.
        let fine = try Fixture.pincer(["--plugin-path", hostile, "hostile.escape"], stateDir: state)
        XCTAssertFalse(fine.stderr.contains("crashed"), fine.stderr)
    }

    /// The fixture's text: an OSC title change, a screen clear, a C1 CSI, a
    /// right-to-left override, a tab and a newline.
    static let hostileText = "title\u{1b}]0;owned\u{7} clear\u{1b}[2J c1\u{9b}31m rlo\u{202e}txt\tnext\nline2"
    static let escapedText = #"title\u001B]0;owned\u0007 clear\u001B[2J c1\u009B31m rlo\u202Etxt"# + "\tnext\nline2"

    static func assertNoControls(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let bad = text.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)
        }
        XCTAssertTrue(bad.isEmpty, "\(what) has raw control characters \(bad.map { String($0.value, radix: 16) })", file: file, line: line)
    }

    /// Reproducer: a plugin's result, live output, failure and log line
    /// reached the terminal raw, so `\e]0;owned\a` retitled it and `\e[2J`
    /// cleared it. Now they are printed escaped; tab and newline are kept.
    func testPluginTextIsEscaped() throws {
        let run = try Fixture.pincer(["--plugin-path", hostile, "hostile.escape"], stateDir: state)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "live:\(Self.escapedText)\nresult:\(Self.escapedText)\n")
        XCTAssertEqual(run.stderr, "pincer: warning: [test.hostile] log:\(Self.escapedText)\n")

        let failed = try Fixture.pincer(["--plugin-path", hostile, "hostile.fail-escape"], stateDir: state)
        XCTAssertEqual(failed.status, 1)
        XCTAssertEqual(failed.stderr, "pincer: hostile.fail-escape: failure:\(Self.escapedText)\n")

        // JSON output stays valid and reads back to the plugin's text.
        let json = try Fixture.pincer(["--plugin-path", hostile, "--json", "hostile.escape"], stateDir: state)
        Self.assertNoControls(json.stdout, "--json output")
        let lines = json.stdout.split(separator: "\n").map(String.init)
        // The live line holds a newline, so it is two NDJSON lines; then the run object.
        XCTAssertEqual(lines.count, 3, json.stdout)
        let hostileLines = Self.hostileText.split(separator: "\n").map(String.init)
        XCTAssertEqual(Fixture.json(lines[0])["output"] as? String, "live:" + hostileLines[0])
        XCTAssertEqual(Fixture.json(lines[1])["output"] as? String, hostileLines[1])
        XCTAssertEqual(Fixture.json(lines[2])["result"] as? String, "result:\(Self.hostileText)")
    }

    /// Reproducer: a captured URL with an escape sequence (here imported
    /// from a HAR) was printed raw by net.list and net.show.
    func testLoggedURLIsEscaped() throws {
        let har = state + "/hostile.har"
        let url = "http://example.com/a\u{1b}]0;owned\u{7}b\u{1b}[2Jc"
        let entry: [String: Any] = [
            "startedDateTime": "2026-01-01T00:00:00.000Z", "time": 5,
            "request": ["method": "GET", "url": url, "httpVersion": "HTTP/1.1", "headers": [["name": "X-Evil", "value": "v\u{1b}[2J"]],
                        "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0],
            "response": ["status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                         "content": ["size": 0, "mimeType": "text/plain"], "redirectURL": "", "headersSize": -1, "bodySize": 0],
            "cache": [:], "timings": ["send": 1, "wait": 3, "receive": 1],
        ]
        let document: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "test", "version": "1"], "entries": [entry]]]
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: har))
        // One process: the log is not persisted, so import and list in one shell.
        let shown = try Fixture.pincer(["shell"], stateDir: state, input: "net.import-har \(har)\nnet.list\nnet.show 1\n")
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("imported   1"), shown.stdout)
        Self.assertNoControls(shown.stdout, "net.list and net.show")
        XCTAssertTrue(shown.stdout.contains(#"1   GET     http://example.com/a\u001B]0;owned\u0007b\u001B[2Jc"#), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("X-Evil: v"), shown.stdout)
    }

    /// Reproducer: a plugin refused for a 2 MB signature printed the whole
    /// signature in its warning (2 MB on stderr, and in `pincer plugins`).
    func testHugeSignatureWarningIsShort() throws {
        let so = try Fixture.buildPlugin("huge_signature", into: plugins)
        let listed = try Fixture.pincer(["--plugin-path", so, "plugins"], stateDir: state)
        XCTAssertEqual(listed.status, 4)
        XCTAssertLessThan(listed.stderr.utf8.count, 1_500, String(listed.stderr.prefix(300)))
        XCTAssertLessThan(listed.stdout.utf8.count, 8_000)
        XCTAssertTrue(listed.stderr.contains("refused plugin"), String(listed.stderr.prefix(300)))
        XCTAssertTrue(listed.stderr.contains(" bytes cut) …"), String(listed.stderr.prefix(300)))
        XCTAssertTrue(listed.stdout.contains(" bytes cut) …"), String(listed.stdout.prefix(300)))
        // An argument echoed in an error is cut the same way.
        let long = String(repeating: "9", count: 100_000)
        let typed = try Fixture.pincer(["devopts.add", long, "1"], stateDir: state)
        XCTAssertEqual(typed.status, 2)
        XCTAssertLessThan(typed.stderr.utf8.count, 1_500, String(typed.stderr.prefix(300)))
    }

    /// The word-at-a-time check agrees with the byte-by-byte rule for every
    /// byte, in every lane of a 32- and an 8-byte block and in the tail.
    func testTheTerminalFastPathCheckIsExact() {
        func byByte(_ bytes: [UInt8]) -> Bool {
            !bytes.contains { b in (b < 0x20 && b != 0x0A && b != 0x09) || b == 0x7F || b == 0xC2 || b == 0xD8 || b == 0xE2 }
        }
        for b in 0...255 {
            for at in 0..<70 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 70)
                bytes[at] = UInt8(b)
                XCTAssertEqual(TerminalText.needsNoEscape(bytes), byByte(bytes), "byte \(b) at \(at)")
            }
        }
        XCTAssertTrue(TerminalText.needsNoEscape([]))
    }

    /// The escaper itself: which characters, in which form, and that plain
    /// text (the fast path) and JSON pass through with their meaning.
    func testTerminalTextEscapesOnlyControls() throws {
        func escaped(_ s: String) -> String { String(decoding: TerminalText.escaped(s), as: UTF8.self) }
        XCTAssertEqual(escaped("plain ascii, é, 漢字, emoji 🎉\tand\nlines"), "plain ascii, é, 漢字, emoji 🎉\tand\nlines")
        XCTAssertEqual(escaped("a\u{1b}[2Jb"), #"a\u001B[2Jb"#)
        XCTAssertEqual(escaped("cr\rdel\u{7f}nul\u{0}bel\u{7}"), #"cr\u000Ddel\u007Fnul\u0000bel\u0007"#)
        XCTAssertEqual(escaped("c1\u{80}\u{9b}\u{9f}\u{a0}"), "c1\\u0080\\u009B\\u009F\u{a0}")
        XCTAssertEqual(escaped("\u{61c}\u{200e}\u{200f}\u{202a}\u{202e}\u{2066}\u{2069}\u{2070}"),
                       #"\u061C\u200E\u200F\u202A\u202E\u2066\u2069"# + "\u{2070}")
        // Inside a JSON string the escape is JSON's: the document reads back the same.
        let document = #"{"k":"x\#u{202e}y\#u{85}z"}"#
        let back = try JSONSerialization.jsonObject(with: Data(TerminalText.escaped(document))) as? [String: String]
        XCTAssertEqual(back?["k"], "x\u{202e}y\u{85}z")

        XCTAssertEqual(TerminalText.shortened("short"), "short")
        let long = String(repeating: "a", count: 600) + String(repeating: "b", count: 2_000_000) + String(repeating: "c", count: 300)
        let cut = TerminalText.shortened(long)
        XCTAssertLessThan(cut.count, 1_100)
        XCTAssertTrue(cut.hasPrefix(String(repeating: "a", count: 600)))
        XCTAssertTrue(cut.hasSuffix(String(repeating: "c", count: 250)))
        XCTAssertTrue(cut.contains("… (\(long.utf8.count - 666 - 250) bytes cut) …"), String(cut.prefix(800).suffix(100)))
    }
}
