import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import PincerNetworkCapture
@testable import PincerHost

/// net.replay through a real URLSession (the app's, logged by the capture)
/// to a loopback server: redacted headers are left out or supplied, never
/// invented; unsafe methods need --yes; the new entry says what it repeats.
final class ReplayTests: XCTestCase {
    func testReplaySendsThroughTheAppsSessionWithoutInventingSecrets() throws {
        let count = SendableBox(0)
        let h = try CaptureHarness { _ in
            count.value += 1
            return .init(status: 200, headers: [.init("X-Count", "\(count.value)")], text: "answer \(count.value)")
        }
        defer { h.close() }
        XCTAssertTrue(h.app.failure("net.replay", "1").contains("no entry #1"))
        var request = URLRequest(url: h.server.url("/r?page=2"))
        request.setValue("Bearer secret-token-1234", forHTTPHeaderField: "Authorization")
        request.setValue("t-1", forHTTPHeaderField: "X-Trace")
        XCTAssertNil(h.fetch(request).error)
        h.recorder.flush()
        let id = try XCTUnwrap(try h.entry(url: h.server.url("/r?page=2").absoluteString)["id"] as? Int)
        XCTAssertTrue(h.app.failure("net.replay", String(id)).contains("this process sends no requests for net.replay"))
        XCTAssertTrue(h.recorder.enableReplay(through: h.session))

        let first = try h.app.json("net.replay", String(id))
        // (The session's shared cookie storage may add a Cookie, also logged redacted, also left out.)
        XCTAssertTrue(first["left_out"]?.arrayValue?.contains(.string("Authorization")) == true, "\(first)")
        XCTAssertEqual(first["supplied"], .array([]))
        let sent = try XCTUnwrap(h.server.requests.last)
        XCTAssertEqual(h.server.requests.count, 2)
        XCTAssertEqual(sent.target, "/r?page=2")
        XCTAssertNil(sent.header("Authorization"), "a redacted value is left out, not sent as [REDACTED]")
        XCTAssertEqual(sent.header("X-Trace"), "t-1")
        XCTAssertNil(sent.header("X-Pincer-Replay"), "the mark never leaves the app")
        let rows = first["comparison"]?.arrayValue ?? []
        XCTAssertEqual(rows.first?["what"], .string("status"))
        XCTAssertEqual(rows.first?["replay"], .int(200))
        let changed = first["headers_changed"]?.arrayValue ?? []
        XCTAssertEqual(changed.first { $0["header"] == .string("X-Count") }?["after"], .string("2"), "\(changed)")

        let replayID = try XCTUnwrap(first["replay"]?.int64Value)
        let replayed = Fixture.json(try h.app.text("net.entry", String(replayID)))
        XCTAssertEqual(replayed["replayOf"] as? Int, id)
        XCTAssertNil(h.header("X-Pincer-Replay", in: replayed["requestHeaders"]))
        XCTAssertTrue(try h.app.text("net.show", [String(replayID)]).contains("replay of #\(id) (net.replay)"))

        // Supplied by the person: sent as given.
        let second = try h.app.json("net.replay", String(id), "false", "Authorization: Bearer other-token")
        XCTAssertEqual(second["supplied"], .array([.string("Authorization")]))
        XCTAssertFalse(second["left_out"]?.arrayValue?.contains(.string("Authorization")) ?? true)
        XCTAssertEqual(h.server.requests.last?.header("Authorization"), "Bearer other-token")
    }

    func testUnsafeMethodsAndRedactedURLsAndBodies() throws {
        let h = try CaptureHarness { r in .init(status: 201, text: String(decoding: r.body, as: UTF8.self)) }
        defer { h.close() }
        XCTAssertTrue(h.recorder.enableReplay(through: h.session))
        var post = URLRequest(url: h.server.url("/orders"))
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(#"{"item":3}"#.utf8)
        XCTAssertNil(h.fetch(post).error)
        var secret = URLRequest(url: h.server.url("/login"))
        secret.httpMethod = "PUT"
        secret.setValue("application/json", forHTTPHeaderField: "Content-Type")
        secret.httpBody = Data(#"{"user":"a","password":"hunter2"}"#.utf8)
        XCTAssertNil(h.fetch(secret).error)
        XCTAssertNil(h.fetch(URLRequest(url: h.server.url("/q?access_token=abcdef123456"))).error)
        h.recorder.flush()
        let ids = try h.list().compactMap { $0["id"] as? Int }
        XCTAssertEqual(ids.count, 3)

        XCTAssertTrue(h.app.failure("net.replay", String(ids[0])).contains("POST is not idempotent: sending #\(ids[0]) again may repeat what it did"))
        XCTAssertEqual(h.server.requests.count, 3, "refused before anything was sent")
        let confirmed = try h.app.json("net.replay", String(ids[0]), "true")
        XCTAssertEqual(confirmed["comparison"]?.arrayValue?.first?["replay"], .int(201))
        XCTAssertEqual(h.server.requests.last?.body, Data(#"{"item":3}"#.utf8))
        XCTAssertTrue(h.app.failure("net.replay", String(ids[1])).contains("the request body of #\(ids[1]) has redacted values"))
        XCTAssertTrue(h.app.failure("net.replay", String(ids[2])).contains("the URL of #\(ids[2]) has redacted values"))
        XCTAssertEqual(h.server.requests.count, 4)
    }
}
