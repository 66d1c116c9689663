import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import PincerNetworkCapture
@testable import PincerHost

/// Breakpoints on real URLSession traffic through the capture pipeline and
/// libcurl to a loopback server, and from plain C: an exchange is held
/// until net.continue, net.edit, net.abort or its timeout, and the log says
/// what happened to it.
final class BreakpointTests: XCTestCase {
    /// A fetch running on its own thread while the test handles the breakpoint.
    final class Pending: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var value: CaptureHarness.Result?

        init(_ harness: CaptureHarness, _ request: URLRequest) {
            // The harness outlives the fetch: the test waits for it.
            nonisolated(unsafe) let h = harness
            DispatchQueue.global().async {
                self.value = h.fetch(request, timeout: 60)
                self.done.signal()
            }
        }

        func result(file: StaticString = #filePath, line: UInt = #line) -> CaptureHarness.Result {
            XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "the fetch never finished", file: file, line: line)
            return value ?? CaptureHarness.Result()
        }

        var isFinished: Bool { done.wait(timeout: .now()) == .success ? { done.signal(); return true }() : false }
    }

    /// The held exchanges, once `count` are there (within 10 s).
    func held(_ h: CaptureHarness, count: Int = 1, file: StaticString = #filePath, line: UInt = #line) throws -> [JSON] {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let list = try h.app.json("net.breakpoints").arrayValue ?? []
            if list.count >= count { return list }
            usleep(20_000)
        }
        XCTFail("\(count) exchange(s) were not held within 10 s", file: file, line: line)
        return []
    }

    func interventions(_ h: CaptureHarness, _ url: URL) throws -> [String] {
        let entry = try h.entry(url: url.absoluteString)
        return (entry["interventions"] as? [[String: Any]] ?? []).compactMap { $0["did"] as? String }
    }

    func testAHeldRequestIsEditedAndContinued() throws {
        let h = try CaptureHarness { r in .init(status: 200, text: "\(r.method) \(r.target) \(r.header("X-Debug") ?? "-") \(String(decoding: r.body, as: UTF8.self))") }
        defer { h.close() }
        XCTAssertTrue(try h.app.text("net.add-breakpoint", ["path:/held*"]).hasPrefix("added breakpoint rule 1: holds the request (60 s)"))
        var request = URLRequest(url: h.server.url("/held"))
        request.httpMethod = "POST"
        request.httpBody = Data("original".utf8)
        let pending = Pending(h, request)
        let list = try held(h)
        XCTAssertEqual(list.first?["phase"], .string("request"))
        XCTAssertEqual(list.first?["method"], .string("POST"))
        usleep(300_000)
        XCTAssertTrue(h.server.requests.isEmpty, "a held request is not sent")
        XCTAssertFalse(pending.isFinished)
        let number = try XCTUnwrap(list.first?["number"]?.int64Value)
        let shown = try h.app.json("net.breakpoints", String(number))
        XCTAssertEqual(shown["request_body"], .string("original"))

        let edited = try h.app.text("net.edit", [String(number), "PUT", h.server.url("/held-edited?x=1").absoluteString, "X-Debug: 1", "", "changed"])
        XCTAssertEqual(edited, "edited \(number): method, url, header X-Debug, body")
        XCTAssertTrue(h.app.failure("net.edit", String(number), "", "", "", "", "", "", "418").contains("--status changes a held response"))
        XCTAssertEqual(try h.app.text("net.continue", String(number)), "continued \(number)")
        let result = pending.result()
        XCTAssertEqual(result.data.map { String(decoding: $0, as: UTF8.self) }, "PUT /held-edited?x=1 1 changed")
        XCTAssertEqual(h.server.requests.count, 1)
        let did = try interventions(h, h.server.url("/held"))
        XCTAssertEqual(did.count, 1)
        XCTAssertTrue(did[0].hasPrefix("held the request "), did[0])
        XCTAssertTrue(did[0].hasSuffix("; edited (method, url, header X-Debug, body) and continued"), did[0])
        XCTAssertTrue(h.app.failure("net.continue", String(number)).contains("no held exchange \(number)"))
        XCTAssertEqual(try h.app.json("net.breakpoints"), .array([]))
    }

    func testAHeldResponseIsChangedBeforeTheAppSeesIt() throws {
        let h = try CaptureHarness { _ in .init(status: 200, headers: [.init("Content-Type", "text/plain")], text: "from the server") }
        defer { h.close() }
        _ = try h.app.text("net.add-breakpoint", ["path:/r", "false", "true"])
        let pending = Pending(h, URLRequest(url: h.server.url("/r")))
        let list = try held(h)
        XCTAssertEqual(list.first?["phase"], .string("response"))
        XCTAssertEqual(list.first?["status"], .int(200))
        XCTAssertEqual(h.server.requests.count, 1, "the request went; its response waits")
        let number = try XCTUnwrap(list.first?["number"]?.int64Value)
        XCTAssertTrue(h.app.failure("net.edit", String(number), "GET").contains("--method and --url change a held request"))
        _ = try h.app.text("net.edit", [String(number), "", "", "X-Mocked-By: breakpoint", "content-type", "teapot", "", "418", "true"])
        let result = pending.result()
        XCTAssertEqual(result.response?.statusCode, 418)
        XCTAssertEqual(result.response?.value(forHTTPHeaderField: "X-Mocked-By"), "breakpoint")
        XCTAssertNil(result.response?.value(forHTTPHeaderField: "Content-Type"))
        XCTAssertEqual(result.data, Data("teapot".utf8))
        let entry = try h.entry(url: h.server.url("/r").absoluteString)
        XCTAssertEqual(entry["status"] as? Int, 418, "the log holds what the app received")
        XCTAssertTrue(try interventions(h, h.server.url("/r")).last?.hasSuffix("; edited (status, removed header content-type, header X-Mocked-By, body) and continued") == true)
    }

    func testAnAbortedRequestFailsLikeTheNetworkAndIsNeverSent() throws {
        let h = try CaptureHarness { _ in .init(status: 200, text: "no") }
        defer { h.close() }
        _ = try h.app.text("net.add-breakpoint", ["path:/a"])
        let pending = Pending(h, URLRequest(url: h.server.url("/a")))
        let number = try XCTUnwrap(try held(h).first?["number"]?.int64Value)
        XCTAssertTrue(h.app.failure("net.abort", String(number), "exploded").contains("unknown error 'exploded'"))
        XCTAssertEqual(try h.app.text("net.abort", String(number), "not-connected"), "aborted \(number) with not-connected")
        let result = pending.result()
        XCTAssertEqual(result.error?.code, -1009)
        XCTAssertTrue(h.server.requests.isEmpty)
        XCTAssertTrue(try interventions(h, h.server.url("/a")).last?.hasSuffix("; aborted with not-connected") == true)
    }

    func testATimedOutBreakpointContinuesUnchangedAndSaysSo() throws {
        let h = try CaptureHarness { _ in .init(status: 200, text: "on time") }
        defer { h.close() }
        XCTAssertTrue(h.app.failure("net.add-breakpoint", "path:/t", "false", "false", "4").contains("breakpoint timeout 4 s is outside 5–300 s"))
        _ = try h.app.text("net.add-breakpoint", ["path:/t", "false", "false", "5"])
        let started = Date()
        let pending = Pending(h, URLRequest(url: h.server.url("/t")))
        let number = try XCTUnwrap(try held(h).first?["number"]?.int64Value)
        // An edit that was never continued does not count.
        _ = try h.app.text("net.edit", [String(number), "", h.server.url("/elsewhere").absoluteString])
        let result = pending.result()
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(result.data, Data("on time".utf8))
        XCTAssertEqual(h.server.requests.first?.path, "/t")
        XCTAssertGreaterThanOrEqual(waited, 4.9)
        XCTAssertLessThan(waited, 15)
        XCTAssertEqual(try interventions(h, h.server.url("/t")).last, "held the request 5 s: timed out after 5 s, continued unchanged")
    }

    func testBodiesOverTenMebibytesAreNotHeld() throws {
        let h = try CaptureHarness { r in .init(status: 200, text: "\(r.body.count)") }
        defer { h.close() }
        _ = try h.app.text("net.add-breakpoint", ["~m POST"])
        var request = URLRequest(url: h.server.url("/big"))
        request.httpMethod = "POST"
        request.httpBody = Data(count: (10 << 20) + 1)
        let result = h.fetch(request)
        XCTAssertEqual(result.data, Data("\((10 << 20) + 1)".utf8))
        XCTAssertEqual(try interventions(h, h.server.url("/big")), ["not held: the body is 10485761 bytes, over the 10 MiB a breakpoint holds"])
    }

    /// Plain C (app_client.c): the caller waits in await_release while
    /// another thread continues the exchange; a caller built against ABI 1.6
    /// (no `accepts`) is never held, and is told so.
    func testBreakpointsFromC() throws {
        nonisolated(unsafe) let app = AppHost()
        let rule = #"{"kind":"breakpoint","match":"path:/c","request":true,"timeoutSeconds":30}"#
        let box = SendableBox<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.value = try? app.text("app.intercept", rule, "GET", "https://api.example.com/c")
            done.signal()
        }
        var number: Int64?
        for _ in 0..<500 where number == nil {
            number = try app.json("net.breakpoints").arrayValue?.first?["number"]?.int64Value
            if number == nil { usleep(20_000) }
        }
        let held = try XCTUnwrap(number, "the C caller's request was not held")
        _ = try app.text("net.edit", [String(held), "", "https://api.example.com/c2", "", "", "", "", "0", "true"])
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        let parts = try XCTUnwrap(box.value).split(separator: "|", maxSplits: 5).map(String.init)
        XCTAssertEqual(Array(parts.prefix(4)), ["t1", "send", "0", "https://api.example.com/c2"])
        XCTAssertTrue(parts[5].contains("edited (url) and continued"), parts[5])

        let legacy = try app.text("app.intercept-legacy", rule, "GET", "https://api.example.com/c")
        XCTAssertTrue(legacy.hasPrefix("t2|send|0|https://api.example.com/c|"), legacy)
        XCTAssertTrue(legacy.contains("not held: the caller cannot wait (it does not set PINCER_NETWORK_ACCEPTS_HOLD)"), legacy)
    }
}
