// A loopback HTTP/1.1 server for the net and proxy parts: POSIX sockets on
// 127.0.0.1 (a port the kernel picks), one detached pthread per connection,
// keep-alive. By default the same small 200 response to every request; the
// proxy part answers with bodies of the size a path asks for. Plain sockets
// and threads so the server costs the same whether or not the client
// captures its traffic.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class BenchServer: @unchecked Sendable {
    /// The body of every response (JSON, as an API would send).
    static let body = Array(#"{"ok":true,"items":[1,2,3],"message":"pincer-bench"}"#.utf8)
    static let response = Array("""
        HTTP/1.1 200 OK\r
        Content-Type: application/json\r
        Content-Length: \(body.count)\r
        Connection: keep-alive\r
        \r

        """.utf8) + body
    static let badRequest = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
    /// Largest request head accepted (request line and headers).
    static let maximumHead = 64 << 10

    /// Answers one request whose body was read: writes the response to `fd`;
    /// false ends the connection. `target` is the request line's, `close`
    /// whether the client asked to close after it.
    typealias Answer = @Sendable (_ fd: Int32, _ target: String, _ close: Bool) -> Bool

    /// The default answer: `response`, whatever was asked.
    static let fixedAnswer: Answer = { fd, _, _ in BenchServer.send(fd, BenchServer.response) }

    let port: UInt16
    private let listener: Int32
    private var acceptThread = pthread_t()
    private let answer: Answer
    /// Requests answered, over every connection.
    private let answered = Atomic<Int>(0)
    private let connectionCount = Atomic<Int>(0)
    /// Connection threads (detached) still running.
    private let active = Atomic<Int>(0)
    private let open = Mutex<(fds: Set<Int32>, stopping: Bool)>(([], false))

    /// Binds 127.0.0.1:0, listens and starts accepting.
    init(answer: @escaping Answer = BenchServer.fixedAnswer) throws(BenchError) {
        self.answer = answer
        (listener, port) = try BenchServer.listenOnLoopback()

        // The accept thread holds the server until stop() joins it.
        let rc = pthread_create(&acceptThread, nil, { raw in
            Unmanaged<BenchServer>.fromOpaque(raw!).takeUnretainedValue().acceptLoop()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        guard rc == 0 else {
            close(listener)
            throw BenchError("pthread_create for the server's accept thread: \(String(cString: strerror(rc)))")
        }
    }

    /// A listening socket on 127.0.0.1, a port the kernel picks.
    static func listenOnLoopback() throws(BenchError) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(BenchServer.lastError())") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            let message = BenchServer.lastError()
            close(fd)
            throw BenchError("cannot listen on 127.0.0.1: \(message)")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// "http://127.0.0.1:PORT"
    var origin: String { "http://127.0.0.1:\(port)" }

    /// Requests answered so far.
    var requestsAnswered: Int { answered.load(ordering: .acquiring) }
    /// Connections accepted so far (keep-alive keeps this small).
    var connectionsAccepted: Int { connectionCount.load(ordering: .relaxed) }

    /// Stops accepting, closes every connection and joins every thread.
    func stop() {
        let first = open.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        // shutdown wakes the blocked accept (close alone may not).
        shutdown(listener, Int32(SHUT_RDWR))
        pthread_join(acceptThread, nil)
        close(listener)
        open.withLock { state in
            for fd in state.fds { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        // Detached threads: wait (at most 5 s) for the last to leave.
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while active.load(ordering: .acquiring) > 0 && monotonicNanoseconds() < deadline { usleep(1_000) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return // shut down (or out of descriptors: the clients then see errors)
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let admitted = open.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.fds.insert(fd)
                return true
            }
            guard admitted else { close(fd); return }
            connectionCount.add(1, ordering: .relaxed)
            // Detached: a proxy opens a connection per request, so there may be thousands.
            let connection = Connection(server: self, fd: fd)
            active.add(1, ordering: .relaxed)
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            var thread = pthread_t()
            let rc = pthread_create(&thread, &attributes, { raw in
                let connection = Unmanaged<Connection>.fromOpaque(raw!).takeRetainedValue()
                connection.server.serve(connection.fd)
                return nil
            }, Unmanaged.passRetained(connection).toOpaque())
            pthread_attr_destroy(&attributes)
            if rc != 0 {
                Unmanaged.passUnretained(connection).release()
                finish(fd)
            }
        }
    }

    private final class Connection {
        let server: BenchServer
        let fd: Int32
        init(server: BenchServer, fd: Int32) {
            self.server = server
            self.fd = fd
        }
    }

    /// Answers requests on one connection until the client closes it, asks
    /// to close it, or sends something this server does not understand.
    private func serve(_ fd: Int32) {
        defer { finish(fd) }
        var pending: [UInt8] = []
        pending.reserveCapacity(16 << 10)
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        func fill() -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { pending.append(contentsOf: chunk[0..<n]); return true }
            return n < 0 && errno == EINTR
        }
        while true {
            var headEnd = BenchServer.headEnd(pending)
            while headEnd == nil {
                guard pending.count <= BenchServer.maximumHead, fill() else { return }
                headEnd = BenchServer.headEnd(pending)
            }
            guard let end = headEnd, let request = RequestHead(pending[..<end]) else {
                _ = BenchServer.send(fd, BenchServer.badRequest)
                return
            }
            // Read and discard the body, if any.
            while pending.count < end + request.contentLength {
                guard fill() else { return }
            }
            pending.removeFirst(end + request.contentLength)
            guard answer(fd, request.target, request.close) else { return }
            answered.add(1, ordering: .releasing)
            if request.close { return }
        }
    }

    /// Ends a connection (and its count: the thread touches nothing of the server's after it).
    private func finish(_ fd: Int32) {
        // Leave the set before closing, so stop() never shuts down a reused descriptor number.
        open.withLock { _ = $0.fds.remove(fd) }
        close(fd)
        active.subtract(1, ordering: .releasing)
    }

    /// The index just past "\r\n\r\n", or nil.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count where bytes[i] == 10 && bytes[i - 1] == 13 && bytes[i - 2] == 10 && bytes[i - 3] == 13 {
            return i + 1
        }
        return nil
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send(fd, $0) }
    }

    /// Writes all of `bytes` (without SIGPIPE when the client went away).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    static func lastError() -> String { String(cString: strerror(errno)) }

    /// What the server needs of a request head: its target, body length and whether to close.
    struct RequestHead {
        var target = ""
        var contentLength = 0
        var close = false

        init?(_ head: ArraySlice<UInt8>) {
            var lines = head.split(separator: 10, omittingEmptySubsequences: true).map {
                String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self)
            }
            guard !lines.isEmpty else { return nil }
            let requestLine = lines.removeFirst().split(separator: " ")
            guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return nil }
            target = String(requestLine[1])
            close = requestLine[2] == "HTTP/1.0"
            for line in lines where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let name = line[..<colon].lowercased()
                var value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
                while value.last == " " || value.last == "\t" { value = value.dropLast() }
                switch name {
                case "content-length":
                    guard let n = Int(value), n >= 0 else { return nil }
                    contentLength = n
                case "connection":
                    let v = value.lowercased()
                    if v.contains("close") { close = true } else if v.contains("keep-alive") { close = false }
                case "transfer-encoding":
                    return nil // chunked request bodies: not needed here
                default:
                    break
                }
            }
        }
    }
}
