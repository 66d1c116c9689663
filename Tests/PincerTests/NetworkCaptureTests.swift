import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import PincerNetworkCapture
@testable import PincerHost

/// URLSession traffic through the capture protocol, against a real loopback
/// server, recorded by the real `net` plugin of a real host. Exact bytes are
/// checked where they matter: at the server (what the app sent) and in the
/// app (what the server returned); the log is checked for what it keeps.
final class NetworkCaptureTests: XCTestCase {
    // MARK: - Unchanged requests and responses

    func testRequestAndResponsePassUnchanged() throws {
        let h = try CaptureHarness { _ in
            .init(status: 201, headers: [.init("X-Reply", "abc"), .init("Content-Type", "text/plain"), .init("Set-Thing", "one two")],
                  text: "created!")
        }
        defer { h.close() }
        let binary = Data((0..<512).map { UInt8($0 % 256) })
        var request = URLRequest(url: h.server.url("/echo?x=1&y=%20z"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.setValue("custom value ; with=stuff", forHTTPHeaderField: "X-Custom")
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        request.httpBody = binary

        let result = h.fetch(request)
        XCTAssertNil(result.error)
        // The server got exactly what the app sent.
        let received = try XCTUnwrap(h.server.requests.first)
        XCTAssertEqual(h.server.requests.count, 1)
        XCTAssertEqual(received.method, "POST")
        XCTAssertEqual(received.target, "/echo?x=1&y=%20z")
        XCTAssertEqual(received.header("X-Custom"), "custom value ; with=stuff")
        XCTAssertEqual(received.header("Authorization"), "Bearer secret-token")
        XCTAssertEqual(received.header("Content-Type"), "application/octet-stream")
        XCTAssertEqual(received.headers(named: "X-Custom").count, 1)
        XCTAssertEqual(received.body, binary)
        // The app got exactly what the server returned.
        XCTAssertEqual(result.response?.statusCode, 201)
        XCTAssertEqual(result.response?.value(forHTTPHeaderField: "X-Reply"), "abc")
        XCTAssertEqual(result.response?.value(forHTTPHeaderField: "Set-Thing"), "one two")
        XCTAssertEqual(result.response?.value(forHTTPHeaderField: "Content-Type"), "text/plain")
        XCTAssertEqual(result.data, Data("created!".utf8))
        XCTAssertEqual(result.response?.url, h.server.url("/echo?x=1&y=%20z"))

        // The log has one complete entry with the request as sent.
        let entries = try h.list()
        XCTAssertEqual(entries.count, 1)
        let entry = try h.entry(url: h.server.url("/echo?x=1&y=%20z").absoluteString)
        XCTAssertEqual(entry["method"] as? String, "POST")
        XCTAssertEqual(entry["state"] as? String, "complete")
        XCTAssertEqual(entry["status"] as? Int, 201)
        XCTAssertEqual(entry["statusText"] as? String, "Created")
        XCTAssertEqual(h.header("X-Custom", in: entry["requestHeaders"]), "custom value ; with=stuff")
        XCTAssertEqual(h.header("X-Reply", in: entry["responseHeaders"]), "abc")
        XCTAssertNotEqual(h.header("Authorization", in: entry["requestHeaders"]), "Bearer secret-token", "redacted by the log")
        let requestBody = try XCTUnwrap(entry["requestBody"] as? [String: Any])
        XCTAssertEqual(requestBody["size"] as? Int, binary.count)
        let responseBody = try XCTUnwrap(entry["responseBody"] as? [String: Any])
        XCTAssertEqual(responseBody["size"] as? Int, 8)
        XCTAssertEqual(responseBody["payload"] as? String, "stored")
        XCTAssertEqual(responseBody["text"] as? String, "created!")
        XCTAssertEqual(entry["redirectURL"] as? String ?? "", "", "no redirect")
    }

    func testStreamBodyIsReadFullyAndSent() throws {
        let h = try CaptureHarness { request in .init(status: 200, body: request.body) }
        defer { h.close() }
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        var request = URLRequest(url: h.server.url("/upload-stream"))
        request.httpMethod = "PUT"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.httpBodyStream = InputStream(data: payload)

        let result = h.fetch(request)
        XCTAssertNil(result.error)
        let received = try XCTUnwrap(h.server.requests.first)
        XCTAssertEqual(received.method, "PUT")
        XCTAssertEqual(received.body.count, payload.count)
        XCTAssertEqual(received.body, payload)
        XCTAssertEqual(result.response?.statusCode, 200)
        XCTAssertEqual(result.data, payload)
        let entry = try h.entry(url: h.server.url("/upload-stream").absoluteString)
        XCTAssertEqual(entry["method"] as? String, "PUT")
        XCTAssertEqual((entry["requestBody"] as? [String: Any])?["size"] as? Int, payload.count)
    }

    func testGETWithoutBodyAndAnErrorStatus() throws {
        let h = try CaptureHarness { _ in .init(status: 404, headers: [.init("Content-Type", "application/json")], text: #"{"error":"none here"}"#) }
        defer { h.close() }
        var request = URLRequest(url: h.server.url("/missing"))
        request.setValue("v1", forHTTPHeaderField: "X-Trace")
        let result = h.fetch(request)
        XCTAssertNil(result.error)
        XCTAssertEqual(result.response?.statusCode, 404)
        XCTAssertEqual(result.data, Data(#"{"error":"none here"}"#.utf8))
        let received = try XCTUnwrap(h.server.requests.first)
        XCTAssertEqual(received.method, "GET")
        XCTAssertEqual(received.body, Data())
        XCTAssertEqual(received.header("X-Trace"), "v1")
        let entry = try h.entry(url: h.server.url("/missing").absoluteString)
        XCTAssertEqual(entry["status"] as? Int, 404)
        XCTAssertEqual((entry["responseBody"] as? [String: Any])?["text"] as? String, #"{"error":"none here"}"#)
    }

    // MARK: - Redirects

    func testRedirectChainIsFollowedAndEveryHopLogged() throws {
        let port = SendableBox<UInt16>(0)
        let h = try CaptureHarness { request in
            switch request.path {
            case "/a": .redirect(301, to: "/b", body: Data("moved".utf8))
            case "/b": .redirect(302, to: "http://127.0.0.1:\(port.value)/c?done=1")
            default: .init(status: 200, headers: [.init("X-Final", "yes")], text: "final body")
            }
        }
        defer { h.close() }
        port.value = h.server.port

        let result = h.fetch(URLRequest(url: h.server.url("/a")))
        XCTAssertNil(result.error)
        XCTAssertEqual(result.response?.statusCode, 200)
        XCTAssertEqual(result.response?.value(forHTTPHeaderField: "X-Final"), "yes")
        XCTAssertEqual(result.data, Data("final body".utf8))
        XCTAssertEqual(result.response?.url, h.server.url("/c?done=1"))
        XCTAssertEqual(h.server.requests.map(\.target), ["/a", "/b", "/c?done=1"])

        let entries = try h.list()
        XCTAssertEqual(entries.count, 3)
        let a = try h.entry(url: h.server.url("/a").absoluteString)
        let b = try h.entry(url: h.server.url("/b").absoluteString)
        let c = try h.entry(url: h.server.url("/c?done=1").absoluteString)
        XCTAssertEqual(a["status"] as? Int, 301)
        XCTAssertEqual(a["redirectURL"] as? String, h.server.url("/b").absoluteString)
        XCTAssertEqual((a["responseBody"] as? [String: Any])?["size"] as? Int, 5)
        XCTAssertEqual(b["status"] as? Int, 302)
        XCTAssertEqual(b["redirectURL"] as? String, h.server.url("/c?done=1").absoluteString)
        XCTAssertEqual(c["status"] as? Int, 200)
        XCTAssertEqual(c["redirectURL"] as? String ?? "", "", "the final hop")
        XCTAssertEqual((c["responseBody"] as? [String: Any])?["text"] as? String, "final body")
    }

    func testRedirectMethodRules() throws {
        let h = try CaptureHarness { request in
            switch request.path {
            case "/307": .redirect(307, to: "/target307")
            case "/308": .redirect(308, to: "/target308")
            case "/303": .redirect(303, to: "/target303")
            case "/302": .redirect(302, to: "/target302")
            default: .init(status: 200, text: "\(request.method) \(request.body.count)")
            }
        }
        defer { h.close() }
        let body = Data("a=1&b=2".utf8)
        for (path, expected) in [("/307", "POST 7"), ("/308", "POST 7"), ("/303", "GET 0"), ("/302", "GET 0")] {
            var request = URLRequest(url: h.server.url(path))
            request.httpMethod = "POST"
            request.httpBody = body
            let result = h.fetch(request)
            XCTAssertNil(result.error, path)
            XCTAssertEqual(result.data.map { String(decoding: $0, as: UTF8.self) }, expected, path)
        }
        XCTAssertEqual(h.server.requests(path: "/target307").first?.body, body)
        XCTAssertEqual(h.server.requests(path: "/target308").first?.body, body)
        XCTAssertEqual(try h.list().count, 8)
    }

    // MARK: - Large and chunked bodies

    func testLargeBodiesBothWays() throws {
        let h = try CaptureHarness { request in .init(status: 200, headers: [.init("Content-Type", "application/octet-stream")], body: request.body) }
        defer { h.close() }
        var payload = Data(count: 8 << 20)
        payload.withUnsafeMutableBytes { raw in
            for i in 0..<raw.count { raw[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 13) }
        }
        var request = URLRequest(url: h.server.url("/large"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.httpBody = payload
        let result = h.fetch(request, timeout: 120)
        XCTAssertNil(result.error)
        XCTAssertEqual(h.server.requests.first?.body.count, payload.count)
        XCTAssertTrue(h.server.requests.first?.body == payload)
        XCTAssertEqual(result.data?.count, payload.count)
        XCTAssertTrue(result.data == payload)
        let entry = try h.entry(url: h.server.url("/large").absoluteString)
        XCTAssertEqual(entry["state"] as? String, "complete")
        XCTAssertEqual(entry["status"] as? Int, 200)
    }

    func testChunkedAndPiecewiseResponses() throws {
        let text = String(repeating: "chunky text 0123456789\n", count: 4_000)
        let h = try CaptureHarness { request in
            switch request.path {
            case "/chunked": .init(status: 200, headers: [.init("Content-Type", "text/plain")], text: text, delivery: .chunked(size: 1_000))
            default: .init(status: 200, headers: [.init("Content-Type", "text/plain")], text: text, delivery: .pieces(size: 7_000, delay: 0.01))
            }
        }
        defer { h.close() }
        for path in ["/chunked", "/pieces"] {
            let result = h.fetch(URLRequest(url: h.server.url(path)))
            XCTAssertNil(result.error, path)
            XCTAssertEqual(result.data, Data(text.utf8), path)
            let entry = try h.entry(url: h.server.url(path).absoluteString)
            XCTAssertEqual(entry["status"] as? Int, 200)
            XCTAssertEqual((entry["responseBody"] as? [String: Any])?["size"] as? Int, text.utf8.count, path)
        }
        XCTAssertEqual(h.server.requests.count, 2)
    }

    func testChunkedRequestBodyFromAStream() throws {
        let h = try CaptureHarness { request in .init(status: 200, text: "\(request.wasChunked) \(request.body.count)") }
        defer { h.close() }
        var request = URLRequest(url: h.server.url("/stream"))
        request.httpMethod = "POST"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.httpBodyStream = InputStream(data: Data(String(repeating: "x", count: 70_000).utf8))
        let result = h.fetch(request)
        XCTAssertNil(result.error)
        XCTAssertEqual(h.server.requests.first?.body, Data(String(repeating: "x", count: 70_000).utf8))
        XCTAssertEqual(result.data.map { String(decoding: $0, as: UTF8.self) }, "true 70000")
    }

    // MARK: - Concurrency

    func testTwentyConcurrentRequests() throws {
        let h = try CaptureHarness { request in
            Thread.sleep(forTimeInterval: 0.05)
            return .init(status: 200, headers: [.init("X-Path", request.path)], body: Data(request.path.utf8) + request.body)
        }
        defer { h.close() }
        let group = DispatchGroup()
        let results = SendableBox<[Int: CaptureHarness.Result]>([:])
        for i in 0..<20 {
            var request = URLRequest(url: h.server.url("/n/\(i)"))
            request.httpMethod = "POST"
            request.httpBody = Data("body-\(i)".utf8)
            group.enter()
            h.session.dataTask(with: request) { data, response, error in
                results.mutate { $0[i] = CaptureHarness.Result(data: data, response: response as? HTTPURLResponse, error: error as NSError?) }
                group.leave()
            }.resume()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        for i in 0..<20 {
            let result = try XCTUnwrap(results.value[i])
            XCTAssertNil(result.error)
            XCTAssertEqual(result.response?.statusCode, 200)
            XCTAssertEqual(result.response?.value(forHTTPHeaderField: "X-Path"), "/n/\(i)")
            XCTAssertEqual(result.data, Data("/n/\(i)body-\(i)".utf8))
            XCTAssertEqual(h.server.requests(path: "/n/\(i)").first?.body, Data("body-\(i)".utf8))
        }
        let entries = try h.list()
        XCTAssertEqual(entries.count, 20)
        XCTAssertEqual(Set(entries.compactMap { $0["url"] as? String }), Set((0..<20).map { h.server.url("/n/\($0)").absoluteString }))
        XCTAssertTrue(entries.allSatisfy { $0["status"] as? Int == 200 }, "\(entries)")
    }

    // MARK: - Failures

    func testConnectionRefusedIsRecordedAsFailed() throws {
        let h = try CaptureHarness { _ in .init() }
        defer { h.close() }
        let url = URL(string: "http://127.0.0.1:\(LoopbackServer.unusedPort())/refused")!
        let result = h.fetch(URLRequest(url: url))
        XCTAssertNil(result.response)
        XCTAssertEqual(result.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(result.error?.code, NSURLErrorCannotConnectToHost)
        let entry = try h.entry(url: url.absoluteString)
        XCTAssertEqual(entry["state"] as? String, "failed")
        XCTAssertFalse((entry["error"] as? String ?? "").isEmpty)
    }

    func testConnectionClosedWithoutResponseIsRecordedAsFailed() throws {
        let h = try CaptureHarness { _ in .close }
        defer { h.close() }
        let result = h.fetch(URLRequest(url: h.server.url("/hangup")))
        XCTAssertNil(result.response)
        XCTAssertNotNil(result.error)
        XCTAssertEqual(h.server.requests.count, 1)
        let entry = try h.entry(url: h.server.url("/hangup").absoluteString)
        XCTAssertEqual(entry["state"] as? String, "failed")
        XCTAssertFalse((entry["error"] as? String ?? "").isEmpty)
    }

    func testUploadAndDownloadTasksFailClearly() throws {
        let h = try CaptureHarness { _ in .init(text: "never") }
        defer { h.close() }
        var request = URLRequest(url: h.server.url("/upload"))
        request.httpMethod = "POST"

        let upload = SendableBox<CaptureHarness.Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        h.session.uploadTask(with: request, from: Data("payload".utf8)) { data, response, error in
            upload.value = CaptureHarness.Result(data: data, response: response as? HTTPURLResponse, error: error as NSError?)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(upload.value?.error?.domain, PincerNetworkCapture.errorDomain)
        XCTAssertEqual(upload.value?.error?.code, PincerNetworkCapture.ErrorCode.uploadTaskUnsupported.rawValue)
        XCTAssertTrue(upload.value?.error?.localizedDescription.contains("upload tasks") == true)

        let download = SendableBox<CaptureHarness.Result?>(nil)
        h.session.downloadTask(with: h.server.url("/download")) { url, response, error in
            download.value = CaptureHarness.Result(data: url.map { Data($0.path.utf8) }, response: response as? HTTPURLResponse, error: error as NSError?)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(download.value?.error?.domain, PincerNetworkCapture.errorDomain)
        XCTAssertEqual(download.value?.error?.code, PincerNetworkCapture.ErrorCode.downloadTaskUnsupported.rawValue)

        XCTAssertTrue(h.server.requests.isEmpty)
        // The session still works afterwards.
        XCTAssertEqual(h.fetch(URLRequest(url: h.server.url("/after"))).data, Data("never".utf8))
    }

    // MARK: - Suspend and resume

    func testSuspendBeforeStartThenResume() throws {
        let h = try CaptureHarness { _ in .init(text: "resumed") }
        defer { h.close() }
        let done = DispatchSemaphore(value: 0)
        let box = SendableBox<Data?>(nil)
        let task = h.session.dataTask(with: h.server.url("/resume")) { data, _, _ in
            box.value = data
            done.signal()
        }
        task.resume()
        task.suspend()
        task.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(box.value, Data("resumed".utf8))
    }

    func testCancelReachesTheAppAndTheLog() throws {
        let h = try CaptureHarness { _ in
            Thread.sleep(forTimeInterval: 1)
            return .init(text: "too late")
        }
        defer { h.close() }
        let done = DispatchSemaphore(value: 0)
        let box = SendableBox<NSError?>(nil)
        let task = h.session.dataTask(with: h.server.url("/slow")) { _, _, error in
            box.value = error as NSError?
            done.signal()
        }
        task.resume()
        Thread.sleep(forTimeInterval: 0.2)
        task.cancel()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(box.value?.code, NSURLErrorCancelled)
        // The inner request is cancelled too; its entry ends failed.
        var state: String?
        for _ in 0..<100 {
            state = try h.list().first?["state"] as? String
            if state == "failed" { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(state, "failed")
    }

    // MARK: - Ignored hosts

    func testIgnoredHostIsSentButNotLogged() throws {
        let h = try CaptureHarness { request in .init(text: "seen \(request.path)") }
        defer { h.close() }
        try h.app.run("net.ignore-host", "127.0.0.1")
        let result = h.fetch(URLRequest(url: h.server.url("/quiet")))
        XCTAssertNil(result.error)
        XCTAssertEqual(result.data, Data("seen /quiet".utf8))
        XCTAssertEqual(h.server.requests.count, 1)
        XCTAssertEqual(try h.list().count, 0)
    }

    // MARK: - API

    func testRecorderRefusesASmallTableAndConfigurationListsTheProtocolFirst() throws {
        XCTAssertNil(NetworkRecorder(service: nil as UnsafeRawPointer?))
        var tiny = [UInt32](repeating: 0, count: 8)
        tiny[0] = 8
        tiny.withUnsafeBytes { XCTAssertNil(NetworkRecorder(service: $0.baseAddress)) }

        let h = try CaptureHarness { _ in .init() }
        defer { h.close() }
        let classes = try XCTUnwrap(h.configuration.protocolClasses)
        XCTAssertGreaterThan(classes.count, 1)
        XCTAssertTrue(classes.first is URLProtocol.Type)
        XCTAssertFalse(classes.first! == URLSessionConfiguration.default.protocolClasses!.first!)
        // Two configurations get two protocol classes; stopping one leaves the other.
        let other = URLSessionConfiguration.pincerLogged(base: .ephemeral, recorder: h.recorder)
        XCTAssertFalse(other.protocolClasses!.first! == classes.first!)
        XCTAssertTrue(PincerNetworkCapture.stopCapturing(other))
        XCTAssertFalse(PincerNetworkCapture.stopCapturing(other))
        XCTAssertEqual(h.fetch(URLRequest(url: h.server.url("/still"))).response?.statusCode, 200)
        XCTAssertEqual(try h.list().count, 1)
    }
}

/// A host with the built-in plugins, a loopback server and a logged session.
final class CaptureHarness {
    struct Result: Sendable {
        var data: Data?
        var response: HTTPURLResponse?
        var error: NSError?
    }

    let app: AppHost
    let server: LoopbackServer
    let recorder: NetworkRecorder
    let configuration: URLSessionConfiguration
    let session: URLSession

    init(file: StaticString = #filePath, line: UInt = #line, handler: @escaping LoopbackServer.Handler) throws {
        app = AppHost(withApp: false)
        server = try LoopbackServer(handler: handler)
        guard let recorder = NetworkRecorder(service: app.host.service(id: NetworkRecorder.serviceID)) else {
            server.stop()
            throw NetworkPluginMissing(host: app.host)
        }
        self.recorder = recorder
        configuration = .pincerLogged(base: .default, recorder: recorder)
        session = URLSession(configuration: configuration)
    }

    /// Ends capture before the host (and its service table) goes away.
    func close() {
        session.invalidateAndCancel()
        PincerNetworkCapture.stopCapturing(configuration)
        server.stop()
    }

    func fetch(_ request: URLRequest, timeout: TimeInterval = 30) -> Result {
        let done = DispatchSemaphore(value: 0)
        let box = SendableBox<Result?>(nil)
        session.dataTask(with: request) { data, response, error in
            box.value = Result(data: data, response: response as? HTTPURLResponse, error: error as NSError?)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + timeout) == .success, let result = box.value else {
            XCTFail("no answer for \(request) in \(timeout) s")
            return Result()
        }
        return result
    }

    /// The log's summaries.
    func list() throws -> [[String: Any]] {
        recorder.flush() // capture records on a background queue
        let text = try app.text("net.list", "", "-1") // never cut to a terminal's width
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try XCTUnwrap(object as? [[String: Any]], text)
    }

    /// The one entry for `url`.
    func entry(url: String) throws -> [String: Any] {
        let all = try list()
        let matches = all.filter { $0["url"] as? String == url }
        XCTAssertEqual(matches.count, 1, "entries for \(url): \(all)")
        let id = try XCTUnwrap(matches.first?["id"] as? Int, "no entry for \(url)")
        return Fixture.json(try app.text("net.entry", String(id)))
    }

    /// A header's value in an entry's header list.
    func header(_ name: String, in list: Any?) -> String? {
        (list as? [[String: Any]])?.first { ($0["name"] as? String)?.lowercased() == name.lowercased() }?["value"] as? String
    }
}

/// The built `net` plugin did not load or published no usable service: a
/// failure, not a skip, since every capture test depends on it.
struct NetworkPluginMissing: Error, CustomStringConvertible {
    let description: String
    init(host: PincerHost.Host) {
        description = "the built-in net plugin published no usable \(NetworkRecorder.serviceID) service; "
            + "loaded: \(host.plugins.map(\.id)); refused: \(host.failures.map(\.reason))"
    }
}

/// A value shared with callbacks on other threads.
final class SendableBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}

