import Foundation
import XCTest

/// net.replay from a shell attached to the running demo: the request goes
/// through the demo's own session, whose credentials (logged redacted)
/// come back without the shell ever knowing them.
extension AttachDemoTests {
    func testReplayThroughTheAttachedAppsSession() throws {
        XCTAssertNotNil(tick { $0.hasSuffix("/production status=200") })
        let first = try pincer("attach", String(pid), "net.entry", "1", "--json")
        let original = Fixture.json(first.stdout)["result"] as? [String: Any] ?? [:]
        let auth = (original["requestHeaders"] as? [[String: Any]])?.first { ($0["name"] as? String)?.lowercased() == "authorization" }
        XCTAssertEqual(auth?["value"] as? String, "Bearer [REDACTED]", "the session's credentials are logged redacted")

        let replay = try pincer("attach", String(pid), "net.replay", "1", "--json")
        XCTAssertEqual(replay.status, 0, replay.stderr)
        let result = Fixture.json(replay.stdout)["result"] as? [String: Any] ?? [:]
        XCTAssertEqual(result["left_out"] as? [String], ["Authorization"])
        let id = try XCTUnwrap(result["replay"] as? Int)
        let shown = try pincer("attach", String(pid), "net.entry", String(id), "--json")
        let entry = Fixture.json(shown.stdout)["result"] as? [String: Any] ?? [:]
        XCTAssertEqual(entry["replayOf"] as? Int, 1)
        let body = (entry["responseBody"] as? [String: Any])?["text"] as? String ?? ""
        XCTAssertTrue(body.contains(#""authorized":true"#), "the app's session added its credentials again: \(entry)")

        let text = try pincer("attach", String(pid), "net.replay", "1")
        XCTAssertTrue(text.stdout.contains("left_out"), text.stdout)
        XCTAssertTrue(text.stdout.contains("status"), text.stdout)
    }
}
