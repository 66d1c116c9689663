import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import PincerNetworkCapture
@testable import PincerHost

/// Interception rules applied to real URLSession traffic: the real `net`
/// plugin's rules (added with its commands, stored in the state directory),
/// the capture pipeline, libcurl and a loopback server that counts what
/// reached it. The log must say which rule did what.
final class InterceptCaptureTests: XCTestCase {
    func testAMockAnswersWithoutTheServerAndTheLogSaysSo() throws {
        let h = try CaptureHarness { _ in .init(status: 200, text: "real") }
        defer { h.close() }
        _ = try h.app.text("net.add-mock", ["path:/down", "503", "{\"down\":true}", "", "application/json", "Retry-After: 5", "server down"])
        let mocked = h.fetch(URLRequest(url: h.server.url("/down?x=1")))
        XCTAssertNil(mocked.error)
        XCTAssertEqual(mocked.response?.statusCode, 503)
        XCTAssertEqual(mocked.response?.value(forHTTPHeaderField: "Retry-After"), "5")
        XCTAssertEqual(mocked.data, Data("{\"down\":true}".utf8))
        XCTAssertTrue(h.server.requests(path: "/down").isEmpty, "a mocked request never reaches the server")
        let real = h.fetch(URLRequest(url: h.server.url("/up")))
        XCTAssertEqual(real.data, Data("real".utf8))

        let entry = try h.entry(url: h.server.url("/down?x=1").absoluteString)
        XCTAssertEqual(entry["status"] as? Int, 503)
        XCTAssertEqual(entry["stubbed"] as? Bool, true)
        let applied = try XCTUnwrap(entry["interventions"] as? [[String: Any]])
        XCTAssertEqual(applied.count, 1)
        XCTAssertEqual(applied[0]["kind"] as? String, "mock")
        XCTAssertEqual(applied[0]["rule"] as? String, "1")
        XCTAssertEqual(applied[0]["title"] as? String, "server down")
        let other = try h.entry(url: h.server.url("/up").absoluteString)
        XCTAssertEqual(other["stubbed"] as? Bool, false)
        XCTAssertNil(other["interventions"])
        let shown = try h.app.text("net.show", [String(try XCTUnwrap(entry["id"] as? Int))])
        XCTAssertTrue(shown.contains("interception rules applied (the response did not come from the server):"), shown)
        XCTAssertTrue(shown.contains("mock 1 (server down): answered 503 with 13 bytes (not sent)"), shown)
        let stats = Fixture.json(try h.app.text("net.stats", []))
        XCTAssertEqual(stats["stubbed"] as? Int, 1)
    }

    func testMapRemoteRewriteAndBlockThroughTheRealTransport() throws {
        let staging = try LoopbackServer { _ in .init(status: 200, headers: [.init("Content-Type", "application/json")], text: "{\"env\":\"staging\",\"n\":1}") }
        defer { staging.stop() }
        let h = try CaptureHarness { _ in .init(status: 200, text: "production") }
        defer { h.close() }
        _ = try h.app.text("net.add-map-remote", ["path:/api/*", staging.baseURL, "", "to staging"])
        _ = try h.app.text("net.add-rewrite", ["path:/hdr", "set-header", "request", "X-Env", "test"])
        _ = try h.app.text("net.add-rule", [#"{"kind":"rewrite","match":"~c 200 & path:/api/*","operations":[{"op":"set-json","path":"n","value":2},{"op":"add-header","name":"X-Rewritten","value":"yes"}]}"#])
        _ = try h.app.text("net.add-block", ["path:/offline", "not-connected"])

        let mapped = h.fetch(URLRequest(url: h.server.url("/api/users?id=3")))
        XCTAssertNil(mapped.error)
        XCTAssertTrue(h.server.requests.isEmpty, "production was not asked")
        let atStaging = try XCTUnwrap(staging.requests.first)
        XCTAssertEqual(atStaging.target, "/api/users?id=3", "the rest of the URL kept")
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: mapped.data ?? Data()) as? [String: Any])
        XCTAssertEqual(reply["env"] as? String, "staging")
        XCTAssertEqual(reply["n"] as? Int, 2, "set-json on the response")
        XCTAssertEqual(mapped.response?.value(forHTTPHeaderField: "X-Rewritten"), "yes")

        let blocked = h.fetch(URLRequest(url: h.server.url("/offline")))
        XCTAssertEqual(blocked.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(blocked.error?.code, NSURLErrorNotConnectedToInternet)
        XCTAssertTrue(h.server.requests(path: "/offline").isEmpty)

        let entry = try h.entry(url: h.server.url("/api/users?id=3").absoluteString)
        let kinds = (entry["interventions"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        XCTAssertEqual(kinds, ["map-remote", "rewrite"])
        // A request rewrite on the way to production.
        XCTAssertNil(h.fetch(URLRequest(url: h.server.url("/hdr"))).error)
        XCTAssertEqual(h.server.requests(path: "/hdr").first?.header("X-Env"), "test")
        XCTAssertEqual(entry["stubbed"] as? Bool, false, "mapped to a real server: a real response")
        let failed = try h.entry(url: h.server.url("/offline").absoluteString)
        XCTAssertEqual(failed["state"] as? String, "failed")
        XCTAssertEqual((failed["interventions"] as? [[String: Any]])?.first?["kind"] as? String, "block")

        // The master switch: off, everything reaches the servers unchanged.
        _ = try h.app.text("net.intercept-off", [])
        let direct = h.fetch(URLRequest(url: h.server.url("/api/users?id=4")))
        XCTAssertEqual(direct.data, Data("production".utf8))
        XCTAssertEqual(h.server.requests(path: "/api/users").count, 1)
    }

    func testTransientRulesFromSwiftComeAndGo() throws {
        let h = try CaptureHarness { _ in .init(status: 200, text: "real") }
        defer { h.close() }
        let id = try XCTUnwrap(h.recorder.addTransientRule(#"{"kind":"mock","match":"path:/t","status":418,"body":"teapot"}"#), h.recorder.lastError)
        XCTAssertEqual(id, "t1")
        XCTAssertNil(h.recorder.addTransientRule(#"{"kind":"mock","status":9}"#))
        XCTAssertTrue(h.recorder.lastError.contains("status 9 is outside 100–599"), h.recorder.lastError)
        XCTAssertEqual(h.fetch(URLRequest(url: h.server.url("/t"))).response?.statusCode, 418)
        let listed = try h.app.text("net.intercept-rules", [])
        XCTAssertTrue(listed.contains("t1"), listed)
        XCTAssertFalse(((try? String(contentsOfFile: h.app.stateDirectory + "/net-rules.json", encoding: .utf8)) ?? "").contains("teapot"),
                       "a transient rule is never stored")
        XCTAssertTrue(h.recorder.removeTransientRule(id))
        XCTAssertFalse(h.recorder.removeTransientRule(id))
        XCTAssertEqual(h.fetch(URLRequest(url: h.server.url("/t"))).data, Data("real".utf8))
    }

    func testConditioningDelaysAndPacesTheTransfer() throws {
        let body = Data(repeating: 0x61, count: 200_000)
        let h = try CaptureHarness { _ in .init(status: 200, body: body) }
        defer { h.close() }
        _ = try h.app.text("net.add-delay", ["path:/slow", "", "300", "-1", "400", "-1", "-1"])
        let start = Date()
        let slow = h.fetch(URLRequest(url: h.server.url("/slow")))
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(slow.data, body)
        // 300 ms of latency, then 200 kB at 400 KB/s: 0.5 s more (libcurl paces it).
        XCTAssertGreaterThan(elapsed, 0.75, "latency and bandwidth were applied")
        XCTAssertLessThan(elapsed, 3.0)
        let entry = try h.entry(url: h.server.url("/slow").absoluteString)
        let did = (entry["interventions"] as? [[String: Any]])?.first?["did"] as? String ?? ""
        XCTAssertTrue(did.hasPrefix("conditioned: 300 ms, 400 KB/s down"), did)
    }

    func testMocksFromTheLogAndFromAHARKeepRedactedValuesRedacted() throws {
        let h = try CaptureHarness { _ in
            .init(status: 200, headers: [.init("Set-Cookie", "session=abc123secret"), .init("Content-Type", "application/json")],
                  text: "{\"token\":\"abc123secret\",\"name\":\"Ada\"}")
        }
        defer { h.close() }
        XCTAssertNil(h.fetch(URLRequest(url: h.server.url("/me"))).error)
        let id = try XCTUnwrap(try h.entry(url: h.server.url("/me").absoluteString)["id"] as? Int)
        let made = try h.app.text("net.mock-from", [String(id)])
        XCTAssertTrue(made.contains("redacted values stay redacted in header Set-Cookie"), made)
        XCTAssertTrue(made.contains("redacted values stay redacted in the body"), made)
        let stored = try String(contentsOfFile: h.app.stateDirectory + "/net-rules.json", encoding: .utf8)
        XCTAssertFalse(stored.contains("abc123secret"), "the mock is made from the redacted entry")
        let mocked = h.fetch(URLRequest(url: h.server.url("/me")))
        XCTAssertEqual(h.server.requests.count, 1, "the second request was answered by the mock")
        XCTAssertTrue(String(decoding: mocked.data ?? Data(), as: UTF8.self).contains("\"name\":\"Ada\""))

        let har = Consumer.shared + "/har/mitmproxy-chrome.har"
        let result = Fixture.json(try h.app.text("net.mock-from-har", [har]))
        let added = try XCTUnwrap(result["added"] as? Int)
        XCTAssertGreaterThan(added, 0)
        XCTAssertEqual(result["enabled"] as? Bool, false)
        let rules = Fixture.json(try h.app.text("net.intercept-rules", []))
        let listed = try XCTUnwrap(rules["rules"] as? [[String: Any]])
        XCTAssertEqual(listed.count, 1 + added)
        XCTAssertEqual(listed.dropFirst().filter { $0["on"] as? Bool == true }.count, 0, "HAR mocks start disabled")
    }

    /// The same flow from plain C against SDK/ alone (app_client.c): a
    /// transient rule, a decision, the entry annotated, the rule removed.
    func testTransientRulesAndDecisionsFromC() throws {
        let app = AppHost()
        let mocked = try app.text("app.intercept", #"{"kind":"mock","match":"path:/c","status":202,"body":"from C"}"#, "GET", "https://api.example.com/c")
        let parts = mocked.split(separator: "|", maxSplits: 5).map(String.init)
        XCTAssertEqual(Array(parts.prefix(4)), ["t1", "respond", "202", "from C"])
        let entry = try app.json("net.entry", parts[4])
        XCTAssertEqual(entry["stubbed"], .bool(true))
        XCTAssertEqual(entry["interventions"]?.arrayValue?.first?["rule"], .string("t1"))
        // Removed again: the same request is sent untouched.
        XCTAssertEqual(try app.text("app.intercept", "", "GET", "https://api.example.com/c").split(separator: "|").prefix(4).map(String.init),
                       ["t0", "send", "0", "https://api.example.com/c"])
        let mapped = try app.text("app.intercept", #"{"kind":"map-remote","match":"domain:api.example.com","to":"http://127.0.0.1:9"}"#, "GET", "https://api.example.com/x?y=1")
        XCTAssertTrue(mapped.hasPrefix("t2|send|0|http://127.0.0.1:9/x?y=1|"), mapped)
        XCTAssertTrue(app.failure("app.intercept", #"{"kind":"mock","status":42}"#, "GET", "https://h/").contains("status 42 is outside 100–599"))
    }
}
