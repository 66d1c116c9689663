import Foundation
import XCTest

/// Breakpoints from a shell attached to the running demo app (real
/// processes): the REPL's interactive flow edits one request and aborts
/// another, and a watching shell killed while it holds an exchange lets it
/// go at once instead of at its timeout.
extension AttachDemoTests {
    func testTheREPLFlowEditsAndAbortsHeldRequests() throws {
        let added = try pincer("attach", String(pid), "net.add-breakpoint", "path:/production", "--timeout", "30")
        XCTAssertEqual(added.status, 0, added.stderr)
        // Lines as a person types them: the watch, then its answers.
        let answers = ["net.breakpoints --watch --limit 2",
                       "e", "PUT", "", "X-Edited: yes", "", "",  // edit: method, url kept, one header, body kept
                       "a", "not-connected"]                    // abort
        let repl = try pincer(["attach", String(pid)], input: answers.joined(separator: "\n") + "\n")
        XCTAssertEqual(repl.status, 0, repl.stdout + repl.stderr)
        XCTAssertTrue(repl.stdout.contains("── held request "), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("> GET http://127.0.0.1:"), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("[c]ontinue, [e]dit, [a]bort or [s]kip (leave it held)? "), repl.stdout)
        XCTAssertTrue(repl.stdout.contains("edited: method, header X-Edited"), repl.stdout)
        XCTAssertTrue(repl.stdout.range(of: #"continued \d+ as edited"#, options: .regularExpression) != nil, repl.stdout)
        XCTAssertTrue(repl.stdout.range(of: #"aborted \d+ with not-connected"#, options: .regularExpression) != nil, repl.stdout)
        // The app saw both: the PUT answered 404 by its server, then an offline failure.
        XCTAssertNotNil(tick { $0.hasSuffix("/production status=404") })
        XCTAssertNotNil(tick { $0.contains("status=failed") && $0.contains("offline") })
        let did = try interventionsInTheAppsLog()
        XCTAssertTrue(did.contains { $0.hasSuffix("; edited (method, header X-Edited) and continued") }, "\(did)")
        XCTAssertTrue(did.contains { $0.hasSuffix("; aborted with not-connected") }, "\(did)")
    }

    func testAKilledWatcherReleasesWhatItHeld() throws {
        XCTAssertEqual(try pincer("attach", String(pid), "net.add-breakpoint", "path:/production", "--timeout", "120").status, 0)
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtime
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: Fixture.pincer)
        watch.arguments = ["attach", String(pid), "net.breakpoints", "--watch"]
        watch.environment = env
        let out = Pipe()
        watch.standardOutput = out
        watch.standardError = FileHandle.nullDevice
        watch.standardInput = Pipe() // open and silent: no answers, the watch only shows
        try watch.run()
        let shown = AsyncLines(out.fileHandleForReading)
        var first: String?
        while first == nil, let line = shown.next(timeout: 10) { if line.hasPrefix("── held request ") { first = line } }
        XCTAssertNotNil(first, "the watch showed the held request")
        // The watch runs beside the logger's other commands (PINCER_COMMAND_CONCURRENT).
        let listed = try pincer("attach", String(pid), "net.breakpoints", "--json")
        XCTAssertEqual((Fixture.json(listed.stdout)["result"] as? [[String: Any]])?.first?["phase"] as? String, "request", listed.stdout)
        XCTAssertEqual(try pincer("attach", String(pid), "net.list").status, 0)
        // Held now, for up to 120 s; the watch's death must end that.
        let killed = Date()
        kill(watch.processIdentifier, SIGKILL)
        watch.waitUntilExit()
        XCTAssertNotNil(tick { $0.hasSuffix("/production status=200") }, "the request went on")
        XCTAssertLessThan(Date().timeIntervalSince(killed), 10, "released when the watcher died, not at the 120 s timeout")
        let did = try interventionsInTheAppsLog()
        XCTAssertTrue(did.contains { $0.hasSuffix("; released unchanged: the shell watching it went away") }, "\(did)")
    }

    /// What rules did to the entries of the app's log, read through attach.
    func interventionsInTheAppsLog() throws -> [String] {
        let log = try pincer("attach", String(pid), "net.list", "--json")
        let entries = try XCTUnwrap(Fixture.json(log.stdout)["result"] as? [[String: Any]], log.stdout)
        var did: [String] = []
        for e in entries {
            let shown = try pincer("attach", String(pid), "net.entry", String(e["id"] as? Int ?? 0), "--json")
            let entry = Fixture.json(shown.stdout)["result"] as? [String: Any] ?? [:]
            did += (entry["interventions"] as? [[String: Any]] ?? []).compactMap { $0["did"] as? String }
        }
        return did
    }
}
