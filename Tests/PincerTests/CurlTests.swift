import Foundation
import XCTest
@testable import NetworkLog

#if canImport(Glibc)
import Glibc
#endif

/// cURL export: the commands run with /bin/bash (plain and interactive, where
/// '!' is history expansion) against a loopback HTTP server started here,
/// which must receive the original bytes.
final class CurlTests: XCTestCase {

    func testQuoting() {
        XCTAssertEqual(Curl.quote("plain $(x) `y` \\ \"q\""), "$'plain $(x) `y` \\\\ \"q\"'")
        XCTAssertEqual(Curl.quote("plain $(x) `y` \\"), "'plain $(x) `y` \\'")
        XCTAssertEqual(Curl.quote("it's"), "$'it\\x27s'")
        XCTAssertEqual(Curl.quote("wow!"), "$'wow\\x21'")
        XCTAssertEqual(Curl.quote("a\nb\tc\r\u{1}"), "$'a\\nb\\tc\\r\\x01'")
        XCTAssertEqual(Curl.quote("héllo ✓"), "'héllo ✓'")
        XCTAssertEqual(Curl.quote("rtl\u{202E}x"), "$'rtl\\xE2\\x80\\xAEx'")
        XCTAssertEqual(Curl.quote(""), "''")
    }

    func testCommandShape() {
        var get = NetworkEntry(source: .captured, startedAt: 0, method: "GET", url: "https://example.com:8443/a?b=[1]")
        get.requestHeaders = [Header("Host", "example.com:8443"), Header(":authority", "example.com"), Header("Accept", "*/*"),
                              Header("Content-Length", "0"), Header("X-Empty", ""), Header("@evil", "x"), Header("<in", "y")]
        XCTAssertEqual(Curl.command(for: get), """
            # left out a header whose name is not an HTTP token: @evil
            # left out a header whose name is not an HTTP token: <in
            # left out 1 HTTP/2 pseudo-header; curl sets them
            curl -g --url 'https://example.com:8443/a?b=[1]' \\
              -H 'Accept: */*' \\
              -H 'X-Empty;'
            """)
        var other = get
        other.requestHeaders = [Header("Host", "other.example")]
        other.method = "HEAD"
        XCTAssertEqual(Curl.command(for: other), "curl -g --head --url 'https://example.com:8443/a?b=[1]' \\\n  -H 'Host: other.example'")

        var withheld = NetworkEntry(source: .captured, startedAt: 0, method: "POST", url: "https://example.com/")
        withheld.requestBody = Body(payload: .withheld(reason: "too big\nrm -rf /"), size: 10, mimeType: "")
        XCTAssertEqual(Curl.command(for: withheld), """
            # request body not included (10 bytes, withheld: too big?rm -rf /): this command sends no body
            curl -g -X POST --url 'https://example.com/'
            """)

        var put = NetworkEntry(source: .captured, startedAt: 0, method: "PUT", url: "https://example.com/")
        put.requestHeaders = [Header("Content-Type", "text/plain")]
        put.requestBody = Body(payload: .stored(Array("hi".utf8)), size: 2, mimeType: "text/plain")
        XCTAssertEqual(Curl.command(for: put), """
            curl -g -X PUT --url 'https://example.com/' \\
              -H 'Content-Type: text/plain' \\
              -H 'Expect:' \\
              --data-raw 'hi'
            """)
        put.requestBody = Body(payload: .stored([0, 1, 2]), size: 3, mimeType: "application/octet-stream")
        XCTAssertTrue(Curl.command(for: put).hasPrefix("printf %s 'AAEC' | base64 -d | curl -g -X PUT --url "))
        XCTAssertTrue(Curl.command(for: put).hasSuffix("--data-binary @-"))
    }

    func testCommandsDeliverHostileRequestsToALocalServer() throws {
        let server = try CurlProbeServer()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let directory = NSTemporaryDirectory() + "/curl-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

        let hostileText = "line1\nline2\r\n'single' \"double\" $(touch PWNED1) `touch PWNED2` ${HOME} !! !$ !-1 \\ \\' \t tab ü ✓ \u{202E}"
        var binary: [UInt8] = Array(0...255)
        binary += [0x00, 0x27, 0x21, 0x0A, 0xFF, 0xC3]
        let big = [UInt8]((0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })

        var cases: [(entry: NetworkEntry, body: [UInt8])] = []
        func add(_ method: String, _ path: String, headers: [Header] = [], body: BodyPayload = .none, expect: [UInt8]? = nil) {
            var e = NetworkEntry(source: .captured, startedAt: 0, method: method, url: base + path)
            e.requestHeaders = headers
            let bytes: [UInt8] = { if case .stored(let b) = body { return b } else { return [] } }()
            e.requestBody = Body(payload: body, size: bytes.count, mimeType: "")
            cases.append((e, expect ?? bytes))
        }
        let hostileHeaders = [
            Header("X-Quote", "it's \"quoted\""),
            Header("X-Subst", "$(touch PWNED3) `touch PWNED4` ${PATH}"),
            Header("X-Bang", "hello!! !$ !-1 !#"),
            Header("X-Tab", "a\tb"),
            Header("X-At", "@/etc/passwd"),
            Header("X-Lt", "</etc/passwd"),
            Header("X-Backslash", "a\\b\\'c\\"),
            Header("X-Unicode", "héllo ✓"),
            Header("X-Empty", ""),
            Header("Content-Type", "text/plain; charset=utf-8"),
            Header("Content-Length", "999"),
        ]
        add("POST", "/text?a='x'&b=$(touch%20PWNED5)&c=!!&d=%00", headers: hostileHeaders, body: .stored(Array(hostileText.utf8)))
        add("PUT", "/binary", headers: [Header("Content-Type", "application/octet-stream")], body: .stored(binary))
        add("POST", "/at", body: .stored(Array("@/etc/passwd".utf8)))
        add("POST", "/lt", body: .stored(Array("</etc/passwd".utf8)))
        add("PATCH", "/big", body: .stored(big))
        add("GET", "/get-with-body", body: .stored(Array("q=1".utf8)))
        add("POST", "/empty-body", body: .stored([]))
        add("DELETE", "/delete")
        add("HEAD", "/head")
        add("POST", "/withheld", body: .withheld(reason: "over the cap; $(touch PWNED6)\n`touch PWNED7`"), expect: [])
        add("GET", "/newline-header", headers: [Header("X-Split", "a\r\nInjected: yes")])

        for interactive in [false, true] {
            server.reset()
            for (entry, _) in cases {
                let command = Curl.command(for: entry)
                // Interactive bash applies history expansion ('!'); the
                // first line gives "!!" something to expand to.
                let args = interactive ? ["--norc", "--noprofile", "-i"] : ["--norc", "--noprofile", "-s"]
                let script = "echo warm-up\n" + command + " -s -o /dev/null --fail\nexit $?\n"
                let result = try curlRunBash(args, script: script, directory: directory)
                XCTAssertEqual(result.status, 0, "interactive=\(interactive)\n\(command)\n\(result.output)")
            }
            let received = server.requests()
            XCTAssertEqual(received.count, cases.count, "interactive=\(interactive)")
            for ((entry, body), request) in zip(cases, received) {
                let label = "\(entry.method) \(entry.url) interactive=\(interactive)"
                XCTAssertEqual(request.method, entry.method, label)
                XCTAssertEqual(base + request.target, entry.url, label)
                XCTAssertEqual(request.body, body, label)
                for header in entry.requestHeaders where header.name != "Content-Length" {
                    let expected = header.value.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
                    XCTAssertEqual(request.headers.first { $0.name == header.name }?.value, Array(expected.utf8), "\(label) \(header.name)")
                }
                if case .stored = entry.requestBody.payload {
                    XCTAssertEqual(request.headerValue("Content-Length"), String(body.count), label)
                } else {
                    XCTAssertNil(request.headerValue("Content-Length"), label)
                }
            }
            // The hostile header arrives exactly; nothing was injected.
            XCTAssertNil(received.last?.headerValue("Injected"))
            // No header curl adds on its own when the original had none.
            XCTAssertNil(received[2].headerValue("Content-Type"))
            XCTAssertNil(received[4].headerValue("Expect"))
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
        XCTAssertEqual(leftovers, [], "command substitution ran")
    }
}

// MARK: - Running bash

private struct CurlBashResult {
    let status: Int32
    let output: String
}

private func curlRunBash(_ arguments: [String], script: String, directory: String) throws -> CurlBashResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var environment = ProcessInfo.processInfo.environment
    environment["HISTFILE"] = "/dev/null"
    environment["PS1"] = "$ "
    process.environment = environment
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = output
    try process.run()
    input.fileHandleForWriting.write(Data(script.utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CurlBashResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}

// MARK: - A minimal loopback HTTP/1.1 server (private to these tests)

private struct CurlProbeRequest {
    var method = ""
    var target = ""
    var headers: [(name: String, value: [UInt8])] = []
    var body: [UInt8] = []

    func headerValue(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }.map { String(decoding: $0.value, as: UTF8.self) }
    }
}

/// Binds 127.0.0.1 on an ephemeral port, accepts on a background thread,
/// reads the request line, headers and a Content-Length body, answers 200
/// and records what it read. One request per connection.
private final class CurlProbeServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var received: [CurlProbeRequest] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { close(listener); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    func reset() { lock.withLock { received.removeAll() } }

    func requests() -> [CurlProbeRequest] { lock.withLock { received } }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            if let request = handle(connection) { lock.withLock { received.append(request) } }
            close(connection)
        }
    }

    private func handle(_ fd: Int32) -> CurlProbeRequest? {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            data += chunk[0..<n]
            return true
        }
        var headerEnd: Int?
        while headerEnd == nil {
            guard fill() else { return nil }
            headerEnd = findHeaderEnd(data)
        }
        let head = Array(data[0..<headerEnd!])
        var lines = split(head)
        guard !lines.isEmpty else { return nil }
        let requestLine = String(decoding: lines.removeFirst(), as: UTF8.self).split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var request = CurlProbeRequest()
        request.method = String(requestLine[0])
        request.target = String(requestLine[1])
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var value = Array(line[(colon + 1)...])
            while let f = value.first, f == 0x20 || f == 0x09 { value.removeFirst() }
            while let l = value.last, l == 0x20 || l == 0x09 { value.removeLast() }
            request.headers.append((String(decoding: line[..<colon], as: UTF8.self), value))
        }
        let length = Int(request.headerValue("Content-Length") ?? "0") ?? 0
        let bodyStart = headerEnd! + 4
        while data.count - bodyStart < length {
            guard fill() else { break }
        }
        request.body = Array(data[bodyStart..<min(data.count, bodyStart + length)])
        let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n".utf8)
            + (request.method == "HEAD" ? [] : Array("ok".utf8))
        _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return request
    }

    private func findHeaderEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 0x0D && data[i + 1] == 0x0A && data[i + 2] == 0x0D && data[i + 3] == 0x0A {
            return i
        }
        return nil
    }

    private func split(_ head: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        var i = 0
        while i < head.count {
            if head[i] == 0x0D, i + 1 < head.count, head[i + 1] == 0x0A {
                lines.append(current)
                current = []
                i += 2
            } else {
                current.append(head[i])
                i += 1
            }
        }
        lines.append(current)
        return lines
    }
}
