import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 (a port the kernel picks), for tests
/// that need a network peer: POSIX sockets, one thread per connection,
/// `Connection: close` after every response (or, with `keepAlive`, the
/// connection's requests in turn until the client closes it).
///
///     let server = try LoopbackServer { request in
///         request.target == "/old" ? .redirect(302, to: "/new") : .init(status: 200, body: Data("hi".utf8))
///     }
///     defer { server.stop() }
///     let url = server.url("/old")
///     ...
///     XCTAssertEqual(server.requests.map(\.target), ["/old", "/new"])
///
/// Every request is recorded as received: method, target, headers in order
/// with their exact bytes, and the raw body bytes (Content-Length or chunked
/// bodies; `Expect: 100-continue` is answered). The handler runs on the
/// connection's thread, so it may block; it must be thread-safe.
final class LoopbackServer: @unchecked Sendable {
    /// One header line as received or to send.
    struct Header: Sendable, Equatable, CustomStringConvertible {
        var name: String
        var value: String
        init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
        var description: String { "\(name): \(value)" }
    }

    /// A request as the server received it.
    struct Request: Sendable {
        var method: String
        /// The request target, e.g. "/path?query".
        var target: String
        var version: String
        /// In order, with duplicates. Values are trimmed of surrounding spaces;
        /// `rawHead` has the exact bytes.
        var headers: [Header]
        /// The request line and header lines exactly as received (without the blank line).
        var rawHead: Data
        /// The body bytes after transfer decoding.
        var body: Data
        /// The body came with `Transfer-Encoding: chunked`.
        var wasChunked: Bool

        /// The path of the target, without the query.
        var path: String { String(target.prefix { $0 != "?" }) }

        /// The first value of header `name` (case-insensitive).
        func header(_ name: String) -> String? { headers(named: name).first }

        /// All values of header `name` (case-insensitive), in order.
        func headers(named name: String) -> [String] {
            headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        }
    }

    /// What the server does with a request.
    struct Response: Sendable {
        /// How the body goes on the wire.
        enum Delivery: Sendable {
            /// With a Content-Length, in one write.
            case whole
            /// With `Transfer-Encoding: chunked`, in chunks of `size` bytes.
            case chunked(size: Int)
            /// With a Content-Length, in writes of `size` bytes `delay` seconds apart.
            case pieces(size: Int, delay: TimeInterval)
        }

        var status: Int
        /// The reason phrase; nil for the standard one.
        var reason: String?
        /// Sent in order. Content-Length / Transfer-Encoding and
        /// `Connection: close` are added unless present.
        var headers: [Header]
        var body: Data
        var delivery: Delivery
        /// Close the connection without sending anything.
        var closeWithoutResponse = false
        /// With `keepAlive`: answers as if the connection stays open, then
        /// closes it (as a server whose idle timeout strikes).
        var closeAfterwards = false

        init(status: Int = 200, reason: String? = nil, headers: [Header] = [], body: Data = Data(), delivery: Delivery = .whole) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
            self.delivery = delivery
        }

        init(status: Int = 200, headers: [Header] = [], text: String, delivery: Delivery = .whole) {
            self.init(status: status, headers: headers, body: Data(text.utf8), delivery: delivery)
        }

        /// A redirect (301, 302, 303, 307, 308) to `location`, sent as given
        /// (relative or absolute).
        static func redirect(_ status: Int, to location: String, body: Data = Data()) -> Response {
            Response(status: status, headers: [Header("Location", location)], body: body)
        }

        /// Reads the request, then closes the connection without a response.
        static var close: Response {
            var response = Response()
            response.closeWithoutResponse = true
            return response
        }
    }

    typealias Handler = @Sendable (Request) -> Response

    /// The port the server listens on (127.0.0.1).
    let port: UInt16

    private let handler: Handler
    private let listener: Int32
    private let lock = NSLock()
    private var received: [Request] = []
    private var stopped = false
    private var openConnections = Set<Int32>()
    private var acceptedCount = 0
    private let keepAlive: Bool

    /// Connections accepted so far.
    var connectionsAccepted: Int { lock.withLock { acceptedCount } }

    /// Starts listening at once; `handler` answers every request.
    init(keepAlive: Bool = false, handler: @escaping Handler) throws {
        self.handler = handler
        self.keepAlive = keepAlive
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackServer.posixError("socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let error = LoopbackServer.posixError("bind/listen")
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "LoopbackServer.accept"
        thread.start()
    }

    deinit { stop() }

    /// "http://127.0.0.1:<port>".
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The URL of `target` ("/path?query") on this server.
    func url(_ target: String) -> URL { URL(string: baseURL + target)! }

    /// Every request received so far, in the order they were complete.
    var requests: [Request] { lock.withLock { received } }

    /// The requests received for `path` (the target without its query).
    func requests(path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Stops accepting and closes open connections. Idempotent.
    func stop() {
        let connections: Set<Int32>? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            return openConnections
        }
        guard let connections else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// A port on 127.0.0.1 nobody listens on (bound, then released).
    static func unusedPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    // MARK: - Connections

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let accepted: Bool = lock.withLock {
                guard !stopped else { return false }
                openConnections.insert(fd)
                acceptedCount += 1
                return true
            }
            guard accepted else {
                close(fd)
                return
            }
            let thread = Thread { [self] in
                serve(fd)
                lock.withLock { _ = openConnections.remove(fd) }
                close(fd)
            }
            thread.name = "LoopbackServer.connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var reader = Reader(fd: fd)
        guard var request = readRequest(&reader, fd: fd) else { return }
        while keepAlive {
            lock.withLock { received.append(request) }
            var response = handler(request)
            guard !response.closeWithoutResponse else { return }
            let closing = response.closeAfterwards || request.header("Connection")?.lowercased() == "close"
            if !response.headers.contains(where: { $0.name.caseInsensitiveCompare("Connection") == .orderedSame }) {
                response.headers.append(Header("Connection", closing && !response.closeAfterwards ? "close" : "keep-alive"))
            }
            write(response, to: fd)
            if closing { return }
            guard let next = readRequest(&reader, fd: fd) else { return }
            request = next
        }
        lock.withLock { received.append(request) }
        let response = handler(request)
        guard !response.closeWithoutResponse else { return }
        write(response, to: fd)
        shutdown(fd, Int32(SHUT_WR))
        // Let the client read everything before the close.
        var scratch = [UInt8](repeating: 0, count: 1024)
        while recv(fd, &scratch, scratch.count, 0) > 0 {}
    }

    private func readRequest(_ reader: inout Reader, fd: Int32) -> Request? {
        guard let head = reader.readHead() else { return nil }
        let lines = head.split(separator: Array("\r\n".utf8))
        guard let requestLine = lines.first else { return nil }
        let parts = String(decoding: requestLine, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var headers: [Header] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            headers.append(Header(name, value))
        }
        var request = Request(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]),
                              headers: headers, rawHead: Data(head), body: Data(), wasChunked: false)
        if request.header("Expect")?.lowercased() == "100-continue" {
            sendAll(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            guard let body = reader.readChunkedBody() else { return nil }
            request.body = body
            request.wasChunked = true
        } else if let length = request.header("Content-Length").flatMap({ Int($0) }), length > 0 {
            guard let body = reader.read(count: length) else { return nil }
            request.body = body
        }
        return request
    }

    private func write(_ response: Response, to fd: Int32) {
        var headers = response.headers
        func has(_ name: String) -> Bool { headers.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } }
        if case .chunked = response.delivery {
            if !has("Transfer-Encoding") { headers.append(Header("Transfer-Encoding", "chunked")) }
        } else if !has("Content-Length") {
            headers.append(Header("Content-Length", String(response.body.count)))
        }
        if !has("Connection") { headers.append(Header("Connection", "close")) }
        let reason = response.reason ?? HTTPURLResponseReason.phrase(response.status)
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        head += "\r\n"
        switch response.delivery {
        case .whole:
            sendAll(fd, Data(head.utf8) + response.body)
        case .chunked(let size):
            sendAll(fd, Data(head.utf8))
            var offset = 0
            while offset < response.body.count {
                let end = min(offset + max(size, 1), response.body.count)
                sendAll(fd, Data(String(end - offset, radix: 16).utf8) + Data("\r\n".utf8) + response.body[offset..<end] + Data("\r\n".utf8))
                offset = end
            }
            sendAll(fd, Data("0\r\n\r\n".utf8))
        case .pieces(let size, let delay):
            sendAll(fd, Data(head.utf8))
            var offset = 0
            while offset < response.body.count {
                let end = min(offset + max(size, 1), response.body.count)
                sendAll(fd, response.body[offset..<end])
                offset = end
                if offset < response.body.count { Thread.sleep(forTimeInterval: delay) }
            }
        }
    }

    @discardableResult
    private func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard var pointer = raw.baseAddress else { return true }
            var left = raw.count
            while left > 0 {
                let sent = send(fd, pointer, left, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                pointer += sent
                left -= sent
            }
            return true
        }
    }

    private static func posixError(_ call: String) -> NSError {
        NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "\(call): \(String(cString: strerror(errno)))"])
    }

    /// Buffered reads from one connection.
    private struct Reader {
        let fd: Int32
        var buffer: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        /// Reads more bytes; false at end of stream or on error.
        private mutating func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = recv(fd, &chunk, chunk.count, 0)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
        }

        /// The request line and headers, without the terminating blank line.
        mutating func readHead() -> [UInt8]? {
            let terminator: [UInt8] = Array("\r\n\r\n".utf8)
            var searchFrom = 0
            while true {
                if let range = buffer[searchFrom...].firstRange(of: terminator) {
                    let head = Array(buffer[..<range.lowerBound])
                    buffer.removeSubrange(..<range.upperBound)
                    return head
                }
                searchFrom = max(0, buffer.count - 3)
                guard fill() else { return nil }
            }
        }

        mutating func read(count: Int) -> Data? {
            while buffer.count < count {
                guard fill() else { return nil }
            }
            let data = Data(buffer[..<count])
            buffer.removeSubrange(..<count)
            return data
        }

        mutating func readLine() -> [UInt8]? {
            let crlf: [UInt8] = Array("\r\n".utf8)
            while true {
                if let range = buffer.firstRange(of: crlf) {
                    let line = Array(buffer[..<range.lowerBound])
                    buffer.removeSubrange(..<range.upperBound)
                    return line
                }
                guard fill() else { return nil }
            }
        }

        /// A chunked body, decoded; trailers are read and dropped.
        mutating func readChunkedBody() -> Data? {
            var body = Data()
            while true {
                guard let line = readLine() else { return nil }
                let sizeText = String(decoding: line, as: UTF8.self).split(separator: ";").first.map(String.init) ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                if size == 0 {
                    while let trailer = readLine(), !trailer.isEmpty {}
                    return body
                }
                guard let chunk = read(count: size), readLine() != nil else { return nil }
                body.append(chunk)
            }
        }
    }
}

/// Standard reason phrases for the status line.
private enum HTTPURLResponseReason {
    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 418: "I'm a teapot"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
