import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import PincerHost

/// The loopback proxy (net.proxy, `pincer proxy`) with real clients (curl,
/// Python's urllib, URLSession) and real loopback servers: traffic is
/// logged redacted, the interception rules apply, CONNECT is tunnelled as
/// metadata, big bodies stream, and what goes wrong gets a clear 400, 502,
/// 503 or 504.
final class ProxyTests: XCTestCase {
    /// net.proxy running in this process (its command on a thread of its own), stopped like Ctrl-C.
    final class RunningProxy: @unchecked Sendable {
        let app: AppHost
        private let cancellation = Cancellation()
        private let done = DispatchSemaphore(value: 0)
        private let output = NSLock()
        private var text = ""
        private(set) var port = 0

        init(_ app: AppHost, maxConnections: Int = 64, timeout: Int = 30) throws {
            self.app = app
            let command = try XCTUnwrap(app.host.command(named: "net.proxy"))
            let cancellation = self.cancellation
            DispatchQueue.global().async {
                _ = try? command.invoke([.i64(0), .i64(Int64(maxConnections)), .i64(Int64(timeout))],
                                        output: { t in self.output.lock(); self.text += t; self.output.unlock() }, cancellation: cancellation)
                self.done.signal()
            }
            let deadline = Date().addingTimeInterval(10)
            while port == 0 && Date() < deadline {
                usleep(10_000)
                output.lock()
                if let r = text.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                    port = Int(text[r].split(separator: ":").last ?? "") ?? 0
                }
                output.unlock()
            }
            XCTAssertNotEqual(port, 0, "the proxy did not start: \(text)")
        }

        var url: String { "http://127.0.0.1:\(port)" }

        /// What the command printed so far (one line per exchange).
        var printed: String { output.lock(); defer { output.unlock() }; return text }

        func stop() {
            cancellation.cancel()
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the proxy stopped")
        }
    }

    func curl(_ args: [String]) throws -> Fixture.ProcessResult {
        try Fixture.run("/usr/bin/curl", ["-s", "-S", "--max-time", "30"] + args)
    }

    func entries(_ app: AppHost) throws -> [[String: Any]] {
        (try JSONSerialization.jsonObject(with: Data(try app.text("net.list").utf8)) as? [[String: Any]]) ?? []
    }

    func entry(_ app: AppHost, _ id: Int) -> [String: Any] { Fixture.json((try? app.text("net.entry", String(id))) ?? "{}") }

    func testCurlPythonAndURLSessionAreRecordedRedactedBeforeStorage() throws {
        let server = try LoopbackServer { r in .init(status: 200, headers: [.init("Content-Type", "text/plain")], text: "\(r.method) \(r.target) \(r.body.count)") }
        defer { server.stop() }
        let app = AppHost(withApp: false)
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }

        let got = try curl(["-x", proxy.url, "-H", "Authorization: Bearer s3cr3t-token-value", "\(server.baseURL)/a?api_key=k-123456"])
        XCTAssertEqual(got.stdout, "GET /a?api_key=k-123456 0", got.stderr)
        XCTAssertEqual(server.requests.first?.header("Authorization"), "Bearer s3cr3t-token-value", "the server gets the real request")
        XCTAssertNil(server.requests.first?.header("Proxy-Connection"))

        let python = try Fixture.run("/usr/bin/env", ["python3", "-c", """
            import urllib.request
            o = urllib.request.build_opener(urllib.request.ProxyHandler({'http': '\(proxy.url)'}))
            print(o.open(urllib.request.Request('\(server.baseURL)/p', data=b'{"password":"hunter2"}', headers={'Content-Type': 'application/json'})).read().decode())
            """])
        XCTAssertEqual(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "POST /p 22", python.stderr)

        // URLSession on Linux sends through libcurl, which takes its proxy from
        // http_proxy (connectionProxyDictionary is not read there).
        setenv("http_proxy", proxy.url, 1)
        defer { unsetenv("http_proxy") }
        let session = URLSession(configuration: .ephemeral)
        let answered = DispatchSemaphore(value: 0)
        let box = SendableBox<String?>(nil)
        session.dataTask(with: URL(string: "\(server.baseURL)/session")!) { data, _, _ in
            box.value = data.map { String(decoding: $0, as: UTF8.self) }
            answered.signal()
        }.resume()
        XCTAssertEqual(answered.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(box.value, "GET /session 0")

        let list = try entries(app)
        XCTAssertEqual(list.map { $0["url"] as? String }, ["\(server.baseURL)/a?api_key=[REDACTED]", "\(server.baseURL)/p", "\(server.baseURL)/session"])
        XCTAssertEqual(list.map { $0["source"] as? String }, ["proxy", "proxy", "proxy"])
        let first = entry(app, list[0]["id"] as? Int ?? 0)
        let auth = (first["requestHeaders"] as? [[String: Any]])?.first { ($0["name"] as? String) == "Authorization" }?["value"] as? String
        XCTAssertEqual(auth, "Bearer [REDACTED]")
        XCTAssertEqual((first["responseBody"] as? [String: Any])?["text"] as? String, "GET /a?api_key=[REDACTED] 0", "bodies are redacted too")
        let second = entry(app, list[1]["id"] as? Int ?? 0)
        XCTAssertEqual((second["requestBody"] as? [String: Any])?["text"] as? String, #"{"password":"[REDACTED]"}"#)
        XCTAssertTrue(proxy.printed.contains("GET 200  \(server.baseURL)/a?api_key=[REDACTED]"), proxy.printed)
    }

    func testTheInterceptionRulesApplyToProxiedTraffic() throws {
        let server = try LoopbackServer { r in .init(status: 200, text: "production \(r.target)") }
        defer { server.stop() }
        let staging = try LoopbackServer { r in .init(status: 200, text: "staging \(r.target)") }
        defer { staging.stop() }
        let app = AppHost(withApp: false)
        _ = try app.text("net.add-mock", ["path:/mocked", "418", "short and stout"])
        _ = try app.text("net.add-block", ["path:/blocked", "cannot-find-host"])
        _ = try app.text("net.add-map-remote", ["path:/api/*", staging.baseURL])
        _ = try app.text("net.add-rewrite", ["path:/rewritten", "status", "response", "", "", "", "", "false", "503"])
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }

        let mocked = try curl(["-x", proxy.url, "-w", " %{http_code}", "\(server.baseURL)/mocked"])
        XCTAssertEqual(mocked.stdout, "short and stout 418")
        let blocked = try curl(["-x", proxy.url, "-i", "\(server.baseURL)/blocked"])
        XCTAssertTrue(blocked.stdout.hasPrefix("HTTP/1.1 502 Bad Gateway"), blocked.stdout)
        XCTAssertTrue(blocked.stdout.contains("X-Pincer-Blocked: cannot-find-host"), blocked.stdout)
        let mapped = try curl(["-x", proxy.url, "\(server.baseURL)/api/users?id=3"])
        XCTAssertEqual(mapped.stdout, "staging /api/users?id=3")
        let rewritten = try curl(["-x", proxy.url, "-w", " %{http_code}", "\(server.baseURL)/rewritten"])
        XCTAssertEqual(rewritten.stdout, "production /rewritten 503")
        XCTAssertEqual(server.requests.map(\.path), ["/rewritten"], "mocked, blocked and mapped requests never reached production")

        let list = try entries(app)
        XCTAssertEqual(list.count, 4)
        let did = list.map { e in ((entry(app, e["id"] as? Int ?? 0)["interventions"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String } }
        XCTAssertEqual(did, [["mock"], ["block"], ["map-remote"], ["rewrite"]])
        XCTAssertEqual(entry(app, list[0]["id"] as? Int ?? 0)["stubbed"] as? Bool, true)
    }

    func testBreakpointsHoldProxiedRequests() throws {
        let server = try LoopbackServer { r in .init(status: 200, text: "\(r.target) \(r.header("X-Edited") ?? "-")") }
        defer { server.stop() }
        let app = AppHost(withApp: false)
        _ = try app.text("net.add-breakpoint", ["path:/held"])
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }
        let box = SendableBox<Fixture.ProcessResult?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let url = proxy.url, target = "\(server.baseURL)/held"
        DispatchQueue.global().async {
            box.value = try? Fixture.run("/usr/bin/curl", ["-s", "--max-time", "30", "-x", url, target])
            finished.signal()
        }
        var number: Int64?
        for _ in 0..<500 where number == nil {
            number = try app.json("net.breakpoints").arrayValue?.first?["number"]?.int64Value
            if number == nil { usleep(20_000) }
        }
        let held = try XCTUnwrap(number)
        XCTAssertTrue(server.requests.isEmpty)
        _ = try app.text("net.edit", [String(held), "", "", "X-Edited: yes", "", "", "", "0", "true"])
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(box.value?.stdout, "/held yes")
    }

    func testConnectIsTunnelledAndRecordedAsMetadata() throws {
        let server = try LoopbackServer { _ in .init(status: 200, text: "through the tunnel") }
        defer { server.stop() }
        let app = AppHost(withApp: false)
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }
        // -p: curl asks for a CONNECT tunnel even for http, so the bytes pass untouched.
        let got = try curl(["-p", "-x", proxy.url, "\(server.baseURL)/t"])
        XCTAssertEqual(got.stdout, "through the tunnel", got.stderr)
        let list = try entries(app)
        XCTAssertEqual(list.first?["method"] as? String, "CONNECT")
        XCTAssertEqual(list.first?["url"] as? String, "https://127.0.0.1:\(server.port)/")
        let e = entry(app, list.first?["id"] as? Int ?? 0)
        let notes = (e["notes"] as? [String] ?? []).joined(separator: "; ")
        XCTAssertTrue(notes.contains("tunnelled (TLS is not decrypted): "), notes)
        XCTAssertGreaterThan((e["responseBody"] as? [String: Any])?["size"] as? Int ?? 0, 18)
        let refused = try curl(["-p", "-x", proxy.url, "-w", "%{http_connect}", "http://127.0.0.1:9/"])
        XCTAssertEqual(refused.stdout, "502")
    }

    func testBigBodiesStreamBothWays() throws {
        let size = 24 << 20
        let payload = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let server = try LoopbackServer { r in
            r.path == "/up" ? .init(status: 200, text: "got \(r.body.count) \(r.wasChunked)") : .init(status: 200, body: payload)
        }
        defer { server.stop() }
        let app = AppHost(withApp: false)
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }
        let directory = Fixture.temporaryDirectory("pincer-proxy-big")
        let down = try curl(["-x", proxy.url, "-o", directory + "/down.bin", "\(server.baseURL)/down"])
        XCTAssertEqual(down.status, 0, down.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: directory + "/down.bin")), payload)
        try payload.write(to: URL(fileURLWithPath: directory + "/up.bin"))
        let up = try curl(["-x", proxy.url, "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + directory + "/up.bin", "\(server.baseURL)/up"])
        XCTAssertEqual(up.stdout, "got \(size) true", up.stderr)
        let list = try entries(app)
        let downloaded = entry(app, list[0]["id"] as? Int ?? 0)
        XCTAssertEqual((downloaded["responseBody"] as? [String: Any])?["size"] as? Int, size)
        XCTAssertEqual((downloaded["responseBody"] as? [String: Any])?["payload"] as? String, "withheld", "over the body cap: only the size is kept")
        let uploaded = entry(app, list[1]["id"] as? Int ?? 0)
        XCTAssertEqual((uploaded["requestBody"] as? [String: Any])?["size"] as? Int, size)
    }

    /// A client's keep-alive connection keeps its server connection too: the
    /// next request to that server goes on it. One the server closes is not
    /// used again; an idempotent request that meets a closed one goes again
    /// on a new connection; a POST always gets a new one.
    func testServerConnectionsAreKeptForTheClientsNextRequest() throws {
        let refusedOnce = NSLock()
        nonisolated(unsafe) var refused = false
        let server = try LoopbackServer(keepAlive: true) { r in
            if r.path == "/retry" {
                // The kept connection: read, then closed without an answer (as
                // an idle timeout that strikes as the request arrives).
                let first = refusedOnce.withLock { () -> Bool in defer { refused = true }; return !refused }
                if first { return .close }
            }
            var response = LoopbackServer.Response(status: 200, text: "\(r.method) \(r.path);")
            response.closeAfterwards = r.path == "/closing"
            return response
        }
        defer { server.stop() }
        let app = AppHost(withApp: false)
        let proxy = try RunningProxy(app)
        defer { proxy.stop() }
        let base = server.baseURL

        // curl sends every URL of one command on one connection to the proxy.
        let three = try curl(["-x", proxy.url, "\(base)/a", "\(base)/b", "\(base)/c"])
        XCTAssertEqual(three.stdout, "GET /a;GET /b;GET /c;", three.stderr)
        XCTAssertEqual(server.connectionsAccepted, 1, "three requests, one server connection")

        let closing = try curl(["-x", proxy.url, "\(base)/closing", "\(base)/after"])
        XCTAssertEqual(closing.stdout, "GET /closing;GET /after;", closing.stderr)
        XCTAssertEqual(server.connectionsAccepted, 3, "a new client connection, and a new server one after the server closed")

        let retried = try curl(["-x", proxy.url, "-w", " %{http_code}", "\(base)/first", "\(base)/retry"])
        XCTAssertEqual(retried.stdout, "GET /first; 200GET /retry; 200", retried.stderr)
        XCTAssertEqual(server.requests(path: "/retry").count, 2, "sent again after the kept connection closed unanswered")
        XCTAssertEqual(server.connectionsAccepted, 5)

        let post = try curl(["-x", proxy.url, "\(base)/get", "--next", "-x", proxy.url, "-d", "x=1", "\(base)/post"])
        XCTAssertEqual(post.stdout, "GET /get;POST /post;", post.stderr)
        XCTAssertEqual(server.connectionsAccepted, 7, "a POST, which must not go twice, never meets a kept connection")

        let list = try entries(app)
        XCTAssertEqual(list.count, 9, "one entry an exchange, the retried one included once")
        XCTAssertEqual(list.filter { ($0["url"] as? String)?.hasSuffix("/retry") == true }.map { $0["status"] as? Int }, [200])
    }

    func testWhatGoesWrongGetsAClearAnswer() throws {
        // A server that takes the connection and never answers.
        let silent = try LoopbackServer { _ in usleep(3_000_000); return .init(status: 200, text: "late") }
        defer { silent.stop() }
        let app = AppHost(withApp: false)
        let proxy = try RunningProxy(app, maxConnections: 2, timeout: 1)
        defer { proxy.stop() }

        let origin = try curl(["-w", " %{http_code}", proxy.url + "/x"])
        XCTAssertTrue(origin.stdout.hasPrefix("this is a proxy: the request line needs an absolute URL"), origin.stdout)
        XCTAssertTrue(origin.stdout.hasSuffix(" 400"), origin.stdout)
        let huge = try curl(["-x", proxy.url, "-w", " %{http_code}", "-H", "X-Big: " + String(repeating: "a", count: 70_000), "http://127.0.0.1:9/"])
        XCTAssertTrue(huge.stdout.contains("the head (request line and headers) is over 64 KiB"), huge.stdout)
        XCTAssertTrue(huge.stdout.hasSuffix(" 400"), huge.stdout)
        let refused = try curl(["-x", proxy.url, "-w", " %{http_code}", "http://127.0.0.1:9/"])
        XCTAssertEqual(refused.stdout, "cannot connect to 127.0.0.1:9: Connection refused\n 502")
        let late = try curl(["-x", proxy.url, "-w", " %{http_code}", "\(silent.baseURL)/slow"])
        XCTAssertEqual(late.stdout, "127.0.0.1:\(silent.port) sent nothing for 1 s\n 504")
        let failed = try entries(app).filter { $0["state"] as? String == "failed" }
        XCTAssertEqual(failed.count, 2, "the refused and the silent exchange are logged as failed")

        // Bounded connections: two held open, the third is turned away.
        let held = try (0..<2).map { _ in try RawSocket(port: proxy.port) }
        usleep(200_000)
        let turned = try curl(["-x", proxy.url, "-w", " %{http_code}", "http://127.0.0.1:9/"])
        XCTAssertTrue(turned.stdout.hasSuffix(" 503"), turned.stdout)
        XCTAssertTrue(turned.stdout.contains("the proxy has 2 connections open (--max-connections)"), turned.stdout)
        withExtendedLifetime(held) {}
    }

    /// `pincer proxy` as a user runs it: the exchanges reach the persisted
    /// log that other shells read, and Ctrl-C stops it cleanly.
    func testPincerProxyRecordsIntoTheSharedLogAndStopsOnCtrlC() throws {
        let server = try LoopbackServer { _ in .init(status: 200, text: "ok") }
        defer { server.stop() }
        let state = Fixture.temporaryDirectory("pincer-proxy-state")
        XCTAssertEqual(try Fixture.pincer(["net.persist", "7"], stateDir: state).status, 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixture.pincer)
        process.arguments = ["proxy", "--port", "0", "--json"]
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = AsyncLines(out.fileHandleForReading)
        let first = Fixture.json(try XCTUnwrap(lines.next(timeout: 10)))
        let port = try XCTUnwrap(first["port"] as? Int)
        XCTAssertEqual(try curl(["-x", "http://127.0.0.1:\(port)", "\(server.baseURL)/shared"]).stdout, "ok")
        let recorded = Fixture.json(try XCTUnwrap(lines.next(timeout: 10)))
        XCTAssertEqual(recorded["url"] as? String, "\(server.baseURL)/shared")
        kill(process.processIdentifier, SIGINT)
        let stopping = Date()
        process.waitUntilExit()
        XCTAssertLessThan(Date().timeIntervalSince(stopping), 5)
        XCTAssertEqual(process.terminationStatus, 6, "stopped by Ctrl-C, as every command is")
        let list = try Fixture.pincer(["net.list", "--json"], stateDir: state)
        XCTAssertTrue(list.stdout.contains("\(server.baseURL)/shared"), list.stdout)
    }
}

/// A TCP connection that sends nothing (holds a proxy connection open).
final class RawSocket {
    let fd: Int32
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port)).bigEndian
        a.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { throw NSError(domain: "RawSocket", code: Int(errno)) }
    }
    deinit { close(fd) }
}
