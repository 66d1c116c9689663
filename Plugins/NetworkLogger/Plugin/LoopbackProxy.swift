import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// net.proxy (`pincer proxy`): an HTTP/1.1 forward proxy on 127.0.0.1, so
/// any program (HTTP_PROXY=http://127.0.0.1:PORT) is recorded into the log,
/// redacted before storage, through the same interception rules. CONNECT is
/// tunnelled and recorded as metadata. Bodies stream; the proxy keeps at
/// most the log's body cap of each, and buffers one whole (up to 10 MiB)
/// only when a rule must see or change it. A thread per connection, at
/// most `maxConnections` of them.
final class LoopbackProxy: Sendable {
    struct Options: Sendable {
        var port = 8080
        var maxConnections = 64
        /// A client or server silent this long ends the exchange (504 from a server).
        var idleTimeoutMs: Int32 = 30_000
        var connectTimeoutMs: Int32 = 10_000
        var limits = HTTPLimits()
    }

    let logger: LoggerState
    let breakpoints: Breakpoints
    let options: Options
    private let listener: Int32
    let port: Int
    private let open = Mutex<[Int32: ProxySocket]>([:])
    private let active = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)

    /// Bodies a rule must see whole are buffered up to this (as breakpoints and map-local).
    static let maxBuffered = 10 << 20

    /// Listens on 127.0.0.1:`options.port` (0: any free port).
    init(logger: LoggerState, breakpoints: Breakpoints, options: Options) throws {
        self.logger = logger
        self.breakpoints = breakpoints
        self.options = options
        guard (0...65535).contains(options.port) else { throw CommandError.invalidArgument("port \(options.port) is not 0–65535") }
        guard (1...4096).contains(options.maxConnections) else { throw CommandError.invalidArgument("max-connections \(options.maxConnections) is not 1–4096") }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CommandError("cannot create a socket: \(ProxySocket.errorText())") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(options.port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            let why = ProxySocket.errorText()
            close(fd)
            throw CommandError("cannot listen on 127.0.0.1:\(options.port): \(why)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(listener) }

    /// Entries recorded by the connections' threads, for `run`'s thread to show.
    private let recorded = Mutex<[NetworkEntry]>([])

    /// Stores one finished exchange, redacted, in one turn of the store's
    /// lock (the connections' threads record at once), and queues it to be
    /// shown. `response` nil: it failed with `failure`.
    func record(method: String, url: String, started: Double, headers: [Header], request: BodyCopy, interventions: [Intervention] = [],
                stubbed: Bool = false, response: RawResponse? = nil, failure: String? = nil, note: String? = nil) {
        var e = NetworkEntry(source: .proxy, startedAt: started, method: method, url: url)
        e.requestHeaders = headers
        e.requestBody = Body(payload: .stored(request.bytes), size: request.total, mimeType: headers.first("Content-Type") ?? "")
        e.interventions = interventions
        e.stubbed = stubbed
        if let note { e.notes.append(note) }
        if let r = response {
            e.state = .complete
            e.status = r.status
            e.statusText = r.statusText
            e.httpVersion = r.httpVersion
            e.responseHeaders = r.headers
            e.responseBody = Body(payload: .stored(r.body), size: r.bodySize ?? r.body.count, mimeType: r.headers.first("Content-Type") ?? "")
            e.timings = r.timings
        } else {
            e.state = .failed
            e.error = failure ?? "failed"
        }
        guard let stored = logger.store.add(e) else { return }
        recorded.withLock { $0.append(stored) }
    }

    /// Serves until `cancelled` (Ctrl-C); then stops taking connections,
    /// ends the open ones and waits (at most 5 s) for their threads. `show`
    /// gets each recorded entry, on this thread.
    func run(cancelled: () -> Bool, show: (NetworkEntry) -> Void) {
        var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        func showRecorded() { for e in recorded.withLock({ list in defer { list.removeAll() }; return list }) { show(e) } }
        while !cancelled() {
            showRecorded()
            guard poll(&p, 1, 100) > 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let client = ProxySocket(fd: fd, peer: "the client", timeoutMs: options.idleTimeoutMs, buffer: ProxyReadBuffer())
            if active.add(1, ordering: .relaxed).newValue > options.maxConnections {
                active.subtract(1, ordering: .relaxed)
                try? client.write(Self.answer(503, "the proxy has \(options.maxConnections) connections open (--max-connections); try again"))
                continue
            }
            open.withLock { $0[fd] = client }
            let started = BackgroundThread.start { [self] in
                ProxyConnection(proxy: self, client: client).serve()
                open.withLock { $0[fd] = nil }
                active.subtract(1, ordering: .relaxed)
            }
            if !started {
                open.withLock { $0[fd] = nil }
                active.subtract(1, ordering: .relaxed)
                try? client.write(Self.answer(503, "the proxy could not start a thread for the connection"))
            }
        }
        stopping.store(true, ordering: .relaxed)
        for socket in open.withLock({ Array($0.values) }) { socket.shutdown() }
        let deadline = Breakpoints.now() + 5
        while active.load(ordering: .relaxed) > 0 && Breakpoints.now() < deadline { usleep(10_000) }
        showRecorded()
    }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// A whole answer of the proxy's own (an error), closing the connection.
    static func answer(_ status: Int, _ message: String, headers: [Header] = []) -> [UInt8] {
        let body = Array((message + "\n").utf8)
        var head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\nX-Pincer-Proxy: error\r\n"
        for h in headers { head += "\(h.name): \(h.value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}

/// One client connection: its requests in turn (keep-alive), each forwarded
/// to its server, on the connection the previous one left open to it when
/// there is one (`KeptUpstream`).
struct ProxyConnection {
    let proxy: LoopbackProxy
    let client: ProxySocket

    /// Headers that describe one hop, not the message (RFC 9110 §7.6.1); the
    /// proxy sets its own framing.
    static let hopByHop: Set<String> = ["connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
                                        "te", "trailer", "transfer-encoding", "upgrade", "content-length"]

    static func forwarded(_ headers: [Header]) -> [Header] {
        let named = Set(headers.filter { $0.name.lowercased() == "connection" }
            .flatMap { $0.value.lowercased().split(separator: ",").map { $0.filter { $0 != " " } } })
        return headers.filter { !hopByHop.contains($0.name.lowercased()) && !named.contains($0.name.lowercased()) }
    }

    func serve() {
        let upstream = KeptUpstream()
        while !proxy.isStopping {
            let head: HTTPHead
            do {
                guard let h = try client.readHead(isRequest: true, limits: proxy.options.limits) else { return }
                head = h
            } catch {
                // A client that sent nothing more (idle keep-alive) just goes.
                if error.kind == .badRequest { try? client.write(LoopbackProxy.answer(400, error.message)) }
                return
            }
            let keepAlive: Bool
            do {
                if head.start.0 == "CONNECT" { try Tunnel(proxy: proxy, client: client).run(head); return }
                keepAlive = try ProxyExchange(proxy: proxy, client: client, head: head, upstream: upstream).run()
            } catch {
                try? client.write(LoopbackProxy.answer(error.status, error.message))
                return
            }
            if !keepAlive { return }
        }
    }
}
