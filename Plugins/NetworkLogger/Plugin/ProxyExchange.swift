import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The first `cap` bytes of a body that streams past, and its size.
struct BodyCopy {
    let cap: Int
    var bytes: [UInt8] = []
    var total = 0

    /// `expected`: the body's declared length, when known, so the copy is
    /// made once rather than grown by doubling.
    init(cap: Int, expected: UInt64? = nil) {
        self.cap = cap
        if let expected { bytes.reserveCapacity(Int(min(expected, UInt64(cap)))) }
    }

    mutating func add(_ piece: UnsafeRawBufferPointer) {
        if bytes.count < cap { bytes.append(contentsOf: piece.prefix(cap - bytes.count)) }
        total += piece.count
    }
}

/// One proxied request: the rules decide, the request goes to its server
/// (or is answered here), the response comes back, and the log records
/// the exchange as the client saw it.
struct ProxyExchange {
    let proxy: LoopbackProxy
    let client: ProxySocket
    let head: HTTPHead
    /// The client connection's kept server connection.
    let upstream: KeptUpstream

    private var limits: HTTPLimits { proxy.options.limits }

    /// Forwards the request; whether the client's connection may carry another.
    func run() throws(ProxyFailure) -> Bool {
        let (method, target, version) = head.start
        let lower = target.lowercased()
        guard lower.hasPrefix("http://") else {
            if lower.hasPrefix("https://") {
                throw ProxyFailure(.badRequest, "https:// URLs go through CONNECT (HTTPS_PROXY=http://127.0.0.1:\(proxy.port)); the proxy tunnels TLS, it does not decrypt it")
            }
            throw ProxyFailure(.badRequest, "this is a proxy: the request line needs an absolute URL (GET http://host/path HTTP/1.1), not '\(target.prefix(80))'; set HTTP_PROXY=http://127.0.0.1:\(proxy.port)")
        }
        guard let parts = URLParts(target), !parts.host.isEmpty else { throw ProxyFailure(.badRequest, "'\(target.prefix(80))' is not a URL") }
        let framing: HTTPHead.Framing
        do { framing = try head.requestFraming() } catch { throw ProxyFailure(.badRequest, error.message) }
        let connection = head.headers.filter { $0.name.lowercased() == "connection" }.map { $0.value.lowercased() }.joined(separator: ",")
        var keepAlive = version == "HTTP/1.0" ? connection.contains("keep-alive") : !connection.contains("close")

        let started = WallClock.now(), t0 = Breakpoints.now()
        let store = proxy.logger.store
        let engine = proxy.logger.interception.engine
        let cap = store.limits.bodyCap
        // The proxy reads the body itself: it answers the client's Expect, and the server never sees one.
        if framing != .none, head.first("Expect")?.lowercased() == "100-continue" {
            try client.write("HTTP/1.1 100 Continue\r\n\r\n")
        }
        // A body small enough is read first, so rules see it and the log holds it whole.
        var requestCopy = BodyCopy(cap: cap)
        var streamed: HTTPHead.Framing = .none
        switch framing {
        case .length(let n) where n <= UInt64(engine.isEmpty ? cap : LoopbackProxy.maxBuffered):
            requestCopy.bytes = try whole(client, length: Int(n)) { _ in }
            requestCopy.total = Int(n)
        case .none:
            break
        default:
            streamed = framing
        }
        let original = InterceptedRequest(method: method, url: target, headers: head.headers, body: requestCopy.bytes)
        var decision = engine.isEmpty ? nil : engine.decide(original)
        var interventions = decision?.interventions ?? []
        var request = decision?.request ?? original
        if streamed != .none, decision != nil, request.body != original.body {
            interventions.append(Intervention(rule: "proxy", kind: "proxy", title: "", did: "request body not rewritten: it streams (over \(ByteCount.text(LoopbackProxy.maxBuffered)) or chunked)"))
        }

        // Answered here: a block or a mock. A streaming body still unread ends the connection.
        func answerHere(_ bytes: [UInt8], status: Int, headers: [Header], body: [UInt8], stubbed: Bool, error: String?) throws(ProxyFailure) -> Bool {
            try client.write(bytes)
            var r = RawResponse(status: status)
            r.headers = headers
            r.body = body
            proxy.record(method: method, url: target, started: started, headers: head.headers, request: requestCopy, interventions: interventions,
                         stubbed: stubbed, response: error == nil ? r : nil, failure: error)
            return keepAlive && streamed == .none
        }

        func aborted(_ failure: NetworkFailure) throws(ProxyFailure) -> Bool {
            try answerHere(LoopbackProxy.answer(502, "aborted at a breakpoint: \(failure.rawValue) (\(failure.message))"),
                           status: 502, headers: [], body: [], stubbed: false, error: failure.message)
        }

        if let d = decision {
            if d.latencyMs > 0 { usleep(UInt32(min(d.latencyMs, 30_000) * 1000)) }
            switch d.outcome {
            case .fail(let failure):
                let text = "blocked by an interception rule: \(failure.rawValue) (\(failure.message))"
                return try answerHere(LoopbackProxy.answer(502, text, headers: [Header("X-Pincer-Blocked", failure.rawValue)]),
                                      status: 502, headers: [], body: [], stubbed: false, error: failure.message)
            case .respond(let r):
                var headers = r.headers.filter { $0.name.lowercased() != "content-length" && $0.name.lowercased() != "transfer-encoding" }
                headers.append(Header("Content-Length", String(r.body.count)))
                var bytes = Array(("HTTP/1.1 \(r.status) \(r.statusText.isEmpty ? LoopbackProxy.reason(r.status) : r.statusText)\r\n").utf8)
                for h in headers { bytes += Array("\(h.name): \(h.value)\r\n".utf8) }
                bytes += Array("\r\n".utf8) + r.body
                return try answerHere(bytes, status: r.status, headers: headers, body: r.body, stubbed: true, error: nil)
            case .send:
                break
            }
            if let hold = d.holdRequest {
                if streamed != .none {
                    interventions.append(Intervention(rule: hold.rule, kind: RuleKind.breakpoint.rawValue, did: "not held: the body streams (over 10 MiB or chunked)"))
                } else if let (release, h, note) = proxy.breakpoints.holdAndWait(phase: .request, rule: hold.rule, title: engine.rule(id: hold.rule)?.title ?? "",
                                                                                  timeoutSeconds: hold.timeoutSeconds, request: request, response: nil) {
                    interventions.append(note)
                    if case .abort(let failure) = release { return try aborted(failure) }
                    if release == .proceed { request = h.request }
                }
            }
            decision?.request = request
        }

        // To the server.
        guard let to = URLParts(request.url), to.scheme == "http" else {
            throw ProxyFailure(.badGateway, "cannot send to \(request.url): the proxy speaks plain http to servers (a map-remote to https needs the app's own client)")
        }
        let port = to.port ?? 80
        let key = "\(to.host.lowercased()):\(port)"
        let tConnect = Breakpoints.now()
        func connect() throws(ProxyFailure) -> ProxySocket {
            do throws(ProxyFailure) {
                let server = try ProxySocket.connect(host: to.host, port: port, timeoutMs: proxy.options.connectTimeoutMs, buffer: client.scratch)
                server.timeoutMs = proxy.options.idleTimeoutMs
                return server
            } catch {
                record(method: method, target: target, started: started, request: requestCopy, interventions: interventions, failure: error.message)
                throw error
            }
        }
        // The connection this client's last exchange left open to the same
        // server, for a request that can be sent again should it turn out
        // closed (idempotent, its body in hand); anything else a new one.
        let resendable = streamed == .none && ReplayPlan.idempotent.contains(request.method)
        var reused = resendable ? upstream.take(key) : nil
        var server: ProxySocket
        if let kept = reused { server = kept } else { server = try connect() }
        var connectMs = (Breakpoints.now() - tConnect) * 1000
        var text = "\(request.method) \(to.path.isEmpty ? "/" : to.path)\(to.query.map { "?" + $0 } ?? "") HTTP/1.1\r\n"
        text += "Host: \(to.host)\(to.port.map { ":\($0)" } ?? "")\r\n"
        for h in ProxyConnection.forwarded(request.headers) where h.name.lowercased() != "host" && h.name.lowercased() != "expect" {
            text += "\(h.name): \(h.value)\r\n"
        }
        switch streamed {
        case .chunked: text += "Transfer-Encoding: chunked\r\n"
        case .length(let n): text += "Content-Length: \(n)\r\n"
        default: if !request.body.isEmpty || method == "POST" || method == "PUT" { text += "Content-Length: \(request.body.count)\r\n" }
        }
        text += "\r\n"
        let upstreamHead = text
        var upload = Pacer(bytesPerSecond: decision?.uploadBytesPerSecond ?? 0)
        func send(_ server: ProxySocket) throws(ProxyFailure) {
            try server.write(upstreamHead)
            switch streamed {
            case .none:
                try server.write(request.body)
                upload.pace(request.body.count)
            case .chunked:
                _ = try body(client, streamed) { piece in
                    requestCopy.add(piece)
                    try server.write(Array("\(String(piece.count, radix: 16))\r\n".utf8))
                    try server.write(piece)
                    try server.write(Array("\r\n".utf8))
                    upload.pace(piece.count)
                }
                try server.write("0\r\n\r\n")
            default:
                _ = try body(client, streamed) { piece in
                    requestCopy.add(piece)
                    try server.write(piece)
                    upload.pace(piece.count)
                }
            }
        }
        func answer(_ server: ProxySocket) throws(ProxyFailure) -> HTTPHead {
            var next = try server.readHead(isRequest: false, limits: limits)
            // Interim answers (100 Continue, 103 Early Hints) are not the response.
            while let r = next, r.start.1.hasPrefix("1"), r.start.1 != "101" { next = try server.readHead(isRequest: false, limits: limits) }
            guard let r = next else { throw ProxyFailure(.badGateway, "\(server.peer) closed the connection without answering") }
            return r
        }

        var tSend = Breakpoints.now(), sendMs = 0.0, tWait = tSend
        let response: HTTPHead
        while true {
            do throws(ProxyFailure) {
                try send(server)
                sendMs = (Breakpoints.now() - tSend) * 1000
                tWait = Breakpoints.now()
                response = try answer(server)
                break
            } catch {
                // A kept connection the server closed while it was idle: no
                // byte of an answer came, so the request goes again on a new one.
                if reused != nil, error.kind != .gatewayTimeout, server.pending.isEmpty {
                    reused = nil
                    let tAgain = Breakpoints.now()
                    server = try connect()
                    connectMs = (Breakpoints.now() - tAgain) * 1000
                    tSend = Breakpoints.now()
                    continue
                }
                record(method: method, target: target, started: started, request: requestCopy, interventions: interventions, failure: error.message)
                throw error
            }
        }
        let waitMs = (Breakpoints.now() - tWait) * 1000
        let status = Int(response.start.1) ?? 502
        let responseFraming: HTTPHead.Framing
        do { responseFraming = try response.responseFraming(requestMethod: request.method) } catch {
            throw ProxyFailure(.badGateway, "the answer of \(server.peer): \(error.message)")
        }
        let tReceive = Breakpoints.now()
        var download = Pacer(bytesPerSecond: decision?.downloadBytesPerSecond ?? 0)
        var responseCopy = BodyCopy(cap: cap, expected: { if case .length(let n) = responseFraming { return n } else { return nil } }())
        var sentStatus = status, sentHeaders = response.headers
        var forwardedHeaders = ProxyConnection.forwarded(response.headers)
        if responseFraming == .none {
            // HEAD, 204, 304: the server's Content-Length describes the body not sent.
            forwardedHeaders += response.headers.filter { $0.name.lowercased() == "content-length" }
        }

        if let d = decision, d.wantsResponse, responseFraming != .none, Self.fits(responseFraming) {
            // Rules act on the response: read it whole, let them, then answer.
            var whole = BodyCopy(cap: LoopbackProxy.maxBuffered)
            _ = try body(server, responseFraming) { whole.add($0) }
            guard whole.total == whole.bytes.count else {
                throw ProxyFailure(.badGateway, "the answer of \(server.peer) is over \(ByteCount.text(LoopbackProxy.maxBuffered)) without a length, more than an interception rule may change")
            }
            let got = InterceptedResponse(status: status, statusText: response.start.2, headers: forwardedHeaders, body: whole.bytes)
            let out = engine.respond(d, request: request, response: got)
            interventions += out.interventions
            var final = out.response
            if let hold = out.holdResponse,
               let (release, h, note) = proxy.breakpoints.holdAndWait(phase: .response, rule: hold.rule, title: engine.rule(id: hold.rule)?.title ?? "",
                                                                     timeoutSeconds: hold.timeoutSeconds, request: request, response: final) {
                interventions.append(note)
                if case .abort(let failure) = release { return try aborted(failure) }
                if release == .proceed, let edited = h.response { final = edited }
            }
            var headers = final.headers.filter { $0.name.lowercased() != "content-length" }
            headers.append(Header("Content-Length", String(final.body.count)))
            var bytes = Array("HTTP/1.1 \(final.status) \(final.statusText)\r\n".utf8)
            for h in headers { bytes += Array("\(h.name): \(h.value)\r\n".utf8) }
            bytes += Array("\r\n".utf8)
            try client.write(bytes)
            for start in stride(from: 0, to: final.body.count, by: 64 << 10) {
                let piece = final.body[start..<min(final.body.count, start + (64 << 10))]
                try client.write(Array(piece))
                download.pace(piece.count)
            }
            responseCopy.bytes = Array(final.body.prefix(cap))
            responseCopy.total = final.body.count
            sentStatus = final.status
            sentHeaders = headers
        } else {
            if decision?.wantsResponse == true {
                interventions.append(Intervention(rule: "proxy", kind: "proxy", title: "", did: "response rules not applied: the body is over \(ByteCount.text(LoopbackProxy.maxBuffered))"))
            }
            // Streams past: the same framing to the client (until-close becomes close).
            var out = "HTTP/1.1 \(response.start.1) \(response.start.2)\r\n"
            for h in forwardedHeaders { out += "\(h.name): \(h.value)\r\n" }
            switch responseFraming {
            case .length(let n): out += "Content-Length: \(n)\r\n"
            case .chunked: out += "Transfer-Encoding: chunked\r\n"
            case .untilClose: out += "Connection: close\r\n"; keepAlive = false
            case .none: break
            }
            try client.write(out + "\r\n")
            if case .length(let n) = responseFraming, n > UInt64(cap), download.bytesPerSecond == 0, ProxySocket.canSplice {
                // The log keeps only the size of a body over its cap: the bytes pass in the kernel.
                try server.splice(n, to: client)
                responseCopy.total = Int(clamping: n)
            } else if case .length(let n) = responseFraming, n <= UInt64(cap) {
                // The log keeps all of it: read into its copy, forwarded from there.
                responseCopy.bytes = try whole(server, length: Int(n)) { piece in
                    try client.write(piece)
                    download.pace(piece.count)
                }
                responseCopy.total = Int(n)
            } else {
            _ = try body(server, responseFraming) { piece in
                responseCopy.add(piece)
                if responseFraming == .chunked { try client.write(Array("\(String(piece.count, radix: 16))\r\n".utf8)) }
                try client.write(piece)
                if responseFraming == .chunked { try client.write(Array("\r\n".utf8)) }
                download.pace(piece.count)
            }
            if responseFraming == .chunked { try client.write("0\r\n\r\n") }
            }
        }
        var timings = Timings()
        timings.connect = connectMs
        timings.send = sendMs
        timings.wait = waitMs
        timings.receive = (Breakpoints.now() - tReceive) * 1000
        timings.blocked = max(0, (tConnect - t0) * 1000)
        var r = RawResponse(status: sentStatus)
        r.statusText = response.start.2
        r.httpVersion = response.start.0
        r.headers = sentHeaders
        r.body = responseCopy.bytes
        r.bodySize = responseCopy.total
        r.timings = timings
        record(method: method, target: target, started: started, request: requestCopy, interventions: interventions, response: r)
        // The server's connection stays open for the next exchange when the
        // answer was framed and neither side asked to close it.
        let closes = response.headers.contains { $0.name.lowercased() == "connection" && $0.value.lowercased().contains("close") }
        if response.start.0 == "HTTP/1.1", !closes, status != 101, responseFraming != .untilClose, server.pending.isEmpty {
            upstream.keep(server, for: key)
        }
        return keepAlive
    }

    /// Whether a body of this framing may be buffered for the rules: a
    /// declared length up to 10 MiB; one of unknown length is read while it
    /// fits (over 10 MiB the exchange fails with a 502 that says so).
    private static func fits(_ f: HTTPHead.Framing) -> Bool {
        if case .length(let n) = f { return n <= UInt64(LoopbackProxy.maxBuffered) }
        return true
    }

    /// One body from `socket`, in pieces; its failures as the proxy's.
    private func body(_ socket: ProxySocket, _ framing: HTTPHead.Framing, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws(ProxyFailure) -> UInt64 {
        do { return try socket.readBody(framing, limits: limits, piece) } catch let e as ProxyFailure { throw e } catch {
            throw ProxyFailure(.badGateway, "\(error)")
        }
    }

    /// A body of `length` bytes read into the array returned, each piece
    /// also handed to `piece`; its failures as the proxy's.
    private func whole(_ socket: ProxySocket, length: Int, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws(ProxyFailure) -> [UInt8] {
        do { return try socket.readBody(length: length, piece) } catch let e as ProxyFailure { throw e } catch {
            throw ProxyFailure(.badGateway, "\(error)")
        }
    }

    private func record(method: String, target: String, started: Double, request: BodyCopy, interventions: [Intervention],
                        response: RawResponse? = nil, failure: String? = nil) {
        proxy.record(method: method, url: target, started: started, headers: head.headers, request: request, interventions: interventions,
                     response: response, failure: failure)
    }
}

/// The server connection a client connection's last exchange left open,
/// kept for its next exchange to the same server (one is enough: a
/// client's requests on one connection go one after another). Used by the
/// client connection's thread only.
final class KeptUpstream {
    private var key = ""
    private var socket: ProxySocket?

    /// The kept connection to `key` (host:port) if the server has not closed
    /// it; it is no longer kept either way.
    func take(_ key: String) -> ProxySocket? {
        defer { socket = nil }
        guard let kept = socket, self.key == key else { return nil }
        // Readable while idle: the server closed it (or sent what it should not).
        var p = pollfd(fd: kept.fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0 ? kept : nil
    }

    func keep(_ socket: ProxySocket, for key: String) {
        self.socket = socket
        self.key = key
    }
}

/// CONNECT host:port: bytes relayed both ways untouched (TLS is not
/// decrypted) and recorded as metadata: host, port, bytes each way, timing.
struct Tunnel {
    let proxy: LoopbackProxy
    let client: ProxySocket

    func run(_ head: HTTPHead) throws(ProxyFailure) {
        let target = head.start.1
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]), (1...65535).contains(port),
              colon > target.startIndex else {
            throw ProxyFailure(.badRequest, "CONNECT needs host:port, not '\(target.prefix(80))'")
        }
        let host = String(target[..<colon])
        let started = WallClock.now(), t0 = Breakpoints.now()
        let url = "https://\(target)/"
        let server: ProxySocket
        do throws(ProxyFailure) { server = try ProxySocket.connect(host: host, port: port, timeoutMs: proxy.options.connectTimeoutMs, buffer: client.scratch) } catch {
            proxy.record(method: "CONNECT", url: url, started: started, headers: head.headers, request: BodyCopy(cap: 0), failure: error.message)
            throw error
        }
        let connectMs = (Breakpoints.now() - t0) * 1000
        try client.write("HTTP/1.1 200 Connection established\r\n\r\n")
        let (up, down) = relay(server)
        var r = RawResponse(status: 200)
        r.statusText = "Connection established"
        r.bodySize = down
        var timings = Timings()
        timings.connect = connectMs
        timings.receive = (Breakpoints.now() - t0) * 1000 - connectMs
        r.timings = timings
        var sent = BodyCopy(cap: 0)
        sent.total = up
        proxy.record(method: "CONNECT", url: url, started: started, headers: head.headers, request: sent, response: r,
                     note: "tunnelled (TLS is not decrypted): \(up) bytes to \(host):\(port), \(down) bytes back")
    }

    /// Copies both ways until both sides are done (or one fails); bytes up and down.
    private func relay(_ server: ProxySocket) -> (Int, Int) {
        var up = 0, down = 0
        var clientOpen = true, serverOpen = true
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        // What the client sent after the CONNECT head goes first.
        if !client.pending.isEmpty {
            if (try? server.write(client.pending)) == nil { return (0, 0) }
            up += client.pending.count
            client.pending.removeAll()
        }
        while clientOpen || serverOpen {
            var fds = [pollfd(fd: client.fd, events: clientOpen ? Int16(POLLIN) : 0, revents: 0),
                       pollfd(fd: server.fd, events: serverOpen ? Int16(POLLIN) : 0, revents: 0)]
            let rc = poll(&fds, 2, proxy.options.idleTimeoutMs * 10)
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 || proxy.isStopping { break }
            for (i, from, to) in [(0, client, server), (1, server, client)] where fds[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(from.fd, $0.baseAddress, $0.count) }
                if n <= 0 {
                    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    // One side is done: tell the other, and keep reading it.
                    if i == 0 { clientOpen = false } else { serverOpen = false }
                    Glibc.shutdown(to.fd, Int32(SHUT_WR))
                    continue
                }
                let wrote = buffer.withUnsafeBytes { raw in (try? to.write(UnsafeRawBufferPointer(rebasing: raw[0..<n]))) != nil }
                if !wrote { return (up, down) }
                if i == 0 { up += n } else { down += n }
            }
        }
        return (up, down)
    }
}
