import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import PincerNetworkCapture
@testable import PincerHost

/// The capture sends through libcurl, not through URLSession's own HTTP
/// protocol. These tests hold it to the real thing: every request goes once
/// through a plain URLSession and once through a capturing one made from the
/// same base configuration, against the same loopback server, and what the
/// server received (method, target, every header line, body, framing) and
/// what the app received (status, header fields, body, error) must be equal.
final class CaptureFidelityTests: XCTestCase {
    private static let gzipBody = Data([
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x4a, 0xce, 0xcf, 0x2d, 0x28, 0x4a,
        0x2d, 0x2e, 0x4e, 0x4d, 0x51, 0xb2, 0x2a, 0x29, 0x2a, 0x4d, 0xd5, 0x51, 0x2a, 0x49, 0xad, 0x28, 0x51, 0xb2,
        0x52, 0xca, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc0, 0x20, 0x95, 0x6a, 0x01, 0xd4, 0xb6, 0xfb, 0x60, 0x34, 0x00,
        0x00, 0x00,
    ])

    /// The server's answers, by path.
    private static func respond(_ request: LoopbackServer.Request) -> LoopbackServer.Response {
        switch request.path {
        case "/gzip":
            return .init(status: 200, headers: [.init("Content-Type", "application/json"), .init("Content-Encoding", "gzip")],
                         body: gzipBody)
        case "/repeated":
            return .init(status: 200, reason: "Fine Thanks",
                         headers: [.init("X-Many", "one"), .init("X-Many", "two"), .init("X-Many", "three"), .init("X-Folded", "a, b")],
                         body: Data("repeated".utf8))
        case "/login":
            return .init(status: 200, headers: [.init("Set-Cookie", "pincer_fidelity=s3cr3t; Path=/"),
                                                .init("Set-Cookie", "pincer_other=2; Path=/")], text: "in")
        case "/post-redirect":
            return .redirect(302, to: "/landing", body: Data("see landing".utf8))
        case "/see-other":
            return .redirect(303, to: "/landing")
        case "/temporary":
            return .redirect(307, to: "/echo")
        case "/echo":
            return .init(status: 201, headers: [.init("Content-Type", "application/octet-stream")], body: request.body)
        case "/empty":
            return .init(status: 204)
        default:
            return .init(status: 200, headers: [.init("Content-Type", "text/plain")], text: "ok \(request.method) \(request.target)")
        }
    }

    /// Requests of every shape the capture handles.
    private static func requests(_ server: LoopbackServer) -> [(name: String, request: URLRequest)] {
        func make(_ path: String, _ method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
                  stream: Data? = nil) -> URLRequest {
            var request = URLRequest(url: server.url(path))
            request.httpMethod = method
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.httpBody = body
            if let stream { request.httpBodyStream = InputStream(data: stream) }
            return request
        }
        let json = Data(#"{"name":"pincer","n":[1,2,3]}"#.utf8)
        let binary = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        return [
            ("GET with headers", make("/plain?q=a%20b&x=1", headers: ["X-Trace": "t-1", "Accept": "application/json",
                                                                      "X-Team": "request wins", "X-Empty": ""])),
            ("POST form without Content-Type", make("/echo", "POST", body: Data("a=1&b=two".utf8))),
            ("POST JSON", make("/echo", "POST", headers: ["Content-Type": "application/json"], body: json)),
            ("PUT large binary", make("/echo", "PUT", headers: ["Content-Type": "application/octet-stream"], body: binary)),
            ("PUT stream (chunked)", make("/echo", "PUT", stream: json)),
            ("PATCH", make("/echo", "PATCH", headers: ["Content-Type": "application/json"], body: json)),
            ("DELETE without body", make("/items/7", "DELETE")),
            ("HEAD", make("/plain", "HEAD")),
            ("OPTIONS", make("/plain", "OPTIONS")),
            ("204 No Content", make("/empty")),
            ("gzip response", make("/gzip")),
            ("repeated response headers", make("/repeated")),
            ("cookies set", make("/login")),
            ("cookies sent", make("/after-login")),
            ("POST redirected to GET", make("/post-redirect", "POST", headers: ["Content-Type": "text/plain"], body: Data("x".utf8))),
            ("PUT answered 303", make("/see-other", "PUT", headers: ["Content-Type": "application/json"], body: json)),
            (deliberateDifference, make("/temporary", "POST", headers: ["Content-Type": "application/json"], body: json)),
        ]
    }

    func testCapturedRequestsMatchPlainURLSession() throws {
        let app = AppHost(withApp: false)
        defer { app.host.shutdown() }
        guard let recorder = NetworkRecorder(service: app.host.service(id: NetworkRecorder.serviceID)) else {
            throw NetworkPluginMissing(host: app.host)
        }
        let server = try LoopbackServer(handler: Self.respond)
        defer { server.stop() }

        let base = URLSessionConfiguration.default
        base.httpAdditionalHeaders = ["X-Team": "configuration", "X-Config-Only": "from the configuration"]
        base.httpCookieStorage = HTTPCookieStorage.shared
        let capturing = PincerNetworkCapture.configuration(base: base, recorder: recorder)
        let plainSession = URLSession(configuration: base)
        let captureSession = URLSession(configuration: capturing)
        defer {
            plainSession.invalidateAndCancel()
            captureSession.invalidateAndCancel()
            PincerNetworkCapture.stopCapturing(capturing)
        }

        func clearCookies() {
            for cookie in HTTPCookieStorage.shared.cookies ?? [] where cookie.name.hasPrefix("pincer_") {
                HTTPCookieStorage.shared.deleteCookie(cookie)
            }
        }
        func run(_ session: URLSession) -> [(request: [LoopbackServer.Request], result: Fetched)] {
            clearCookies()
            return Self.requests(server).map { _, request in
                let before = server.requests.count
                let result = Fetched.fetch(session, request)
                return (Array(server.requests.dropFirst(before)), result)
            }
        }
        let plain = run(plainSession)
        let captured = run(captureSession)
        clearCookies()

        for ((name, _), (plain, captured)) in zip(Self.requests(server), zip(plain, captured)) {
            if name == Self.deliberateDifference {
                // URLSession on Linux (6.3.1) follows a 307 with the method
                // but an empty body (Content-Length: 0). The capture resends
                // the body, as RFC 9110 asks and URLSession on Apple systems does.
                XCTAssertEqual(captured.request.map(\.method), ["POST", "POST"], name)
                XCTAssertEqual(captured.request.last?.body, captured.request.first?.body, name)
                XCTAssertEqual(captured.result.data, captured.request.first?.body, name)
                continue
            }
            XCTAssertEqual(captured.request.count, plain.request.count, "\(name): requests the server received")
            for (sent, expected) in zip(captured.request, plain.request) {
                XCTAssertEqual(sent.method, expected.method, name)
                XCTAssertEqual(sent.target, expected.target, name)
                XCTAssertEqual(sent.version, expected.version, name)
                XCTAssertEqual(Self.sorted(sent.headers), Self.sorted(expected.headers), "\(name): header lines the server received")
                XCTAssertEqual(sent.body, expected.body, "\(name): body the server received")
                XCTAssertEqual(sent.wasChunked, expected.wasChunked, "\(name): body framing")
            }
            XCTAssertNil(plain.result.error, name)
            XCTAssertEqual(captured.result.error?.code, plain.result.error?.code, name)
            XCTAssertEqual(captured.result.status, plain.result.status, name)
            XCTAssertEqual(captured.result.headers, plain.result.headers, "\(name): header fields the app received")
            XCTAssertEqual(captured.result.data, plain.result.data, "\(name): body the app received")
            XCTAssertEqual(captured.result.url, plain.result.url, name)
        }
        // The cookie the server set reached the next request both ways.
        XCTAssertEqual(captured[13].request.first?.header("Cookie")?.contains("pincer_fidelity=s3cr3t"), true)
        // The decoded body both ways.
        XCTAssertEqual(String(decoding: captured[10].result.data ?? Data(), as: UTF8.self),
                       #"{"compressed":true,"text":"hello hello hello hello"}"#)

        // The log kept the server's own header lines and reason phrase.
        recorder.flush()
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try app.text("net.list", "", "-1").utf8)) as? [[String: Any]])
        // 17 requests, three of them redirected once: one entry per hop.
        XCTAssertEqual(listed.count, 20, "entries: \(listed.map { $0["url"] ?? "?" })")
        let repeated = try XCTUnwrap(listed.first { ($0["url"] as? String)?.hasSuffix("/repeated") == true })
        let entry = Fixture.json(try app.text("net.entry", String(try XCTUnwrap(repeated["id"] as? Int))))
        XCTAssertEqual(entry["statusText"] as? String, "Fine Thanks")
        let many = (entry["responseHeaders"] as? [[String: Any]] ?? [])
            .filter { ($0["name"] as? String)?.lowercased() == "x-many" }.compactMap { $0["value"] as? String }
        XCTAssertEqual(many, ["one", "two", "three"])
    }

    func testTimeoutOfAnIdleServerReachesTheApp() throws {
        let app = AppHost(withApp: false)
        defer { app.host.shutdown() }
        guard let recorder = NetworkRecorder(service: app.host.service(id: NetworkRecorder.serviceID)) else {
            throw NetworkPluginMissing(host: app.host)
        }
        let server = try LoopbackServer { _ in
            Thread.sleep(forTimeInterval: 1.5)
            return .init(status: 200, text: "late")
        }
        defer { server.stop() }
        let capturing = PincerNetworkCapture.configuration(base: .default, recorder: recorder)
        let session = URLSession(configuration: capturing)
        defer {
            session.invalidateAndCancel()
            PincerNetworkCapture.stopCapturing(capturing)
        }
        var request = URLRequest(url: server.url("/slow"))
        request.timeoutInterval = 0.3
        let result = Fetched.fetch(session, request)
        XCTAssertEqual(result.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(result.error?.code, NSURLErrorTimedOut)
        recorder.flush()
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try app.text("net.list", "", "-1").utf8)) as? [[String: Any]])
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed.first?["state"] as? String, "failed")
    }

    private static let deliberateDifference = "POST answered 307"

    private static func sorted(_ headers: [LoopbackServer.Header]) -> [String] {
        headers.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }
}

/// What the app got for one request.
private struct Fetched: Sendable {
    var status: Int?
    var headers: [String: String] = [:]
    var data: Data?
    var url: URL?
    var error: NSError?

    static func fetch(_ session: URLSession, _ request: URLRequest) -> Fetched {
        let done = DispatchSemaphore(value: 0)
        let box = SendableBox<Fetched>(Fetched())
        session.dataTask(with: request) { data, response, error in
            let http = response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (key, value) in http?.allHeaderFields ?? [:] {
                headers[(key as? String ?? "\(key)").lowercased()] = value as? String ?? "\(value)"
            }
            box.value = Fetched(status: http?.statusCode, headers: headers, data: data, url: http?.url, error: error as NSError?)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "no answer for \(request)")
        return box.value
    }
}
