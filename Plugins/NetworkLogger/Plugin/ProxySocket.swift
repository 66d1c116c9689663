import NetworkLog
#if canImport(Glibc)
import Glibc
#endif

/// What went wrong with one side of a proxied exchange, for the 4xx/5xx
/// answer and the log.
struct ProxyFailure: Error, CustomStringConvertible {
    enum Kind { case badRequest, badGateway, gatewayTimeout, closed }
    let kind: Kind
    let message: String
    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    var description: String { message }

    var status: Int {
        switch kind {
        case .badRequest: 400
        case .badGateway, .closed: 502
        case .gatewayTimeout: 504
        }
    }
}

/// The read buffer of one client connection, shared by its socket and the
/// server sockets its exchanges open (one thread uses them, one at a time):
/// allocated once per connection and never zeroed, rather than per request.
final class ProxyReadBuffer: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(count: Int = 256 << 10) {
        base = .allocate(byteCount: count, alignment: 16)
        self.count = count
    }

    deinit { base.deallocate() }
}

/// One TCP connection of the proxy (a client's or a server's): reads with a
/// deadline into a bounded buffer, writes whole, and frames bodies. Used by
/// one thread at a time; `shutdown` may come from another (a clean stop).
final class ProxySocket: @unchecked Sendable {
    let fd: Int32
    /// Who is on the other side, for messages ("the client", "api.example.com:80").
    let peer: String
    /// Read but not consumed yet (the start of the next message, or of a body).
    var pending: [UInt8] = []
    /// Shared with the server sockets this connection opens.
    let scratch: ProxyReadBuffer
    /// How long one read or write may wait.
    var timeoutMs: Int32
    /// Reads while looking for a head are this small, so what follows the
    /// head in `pending` (moved down when the head is consumed) stays small.
    private static let headReadBytes = 16 << 10

    init(fd: Int32, peer: String, timeoutMs: Int32, buffer: ProxyReadBuffer) {
        self.fd = fd
        self.peer = peer
        self.timeoutMs = timeoutMs
        self.scratch = buffer
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func shutdown() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Waits until the socket is readable (or writable); false on timeout.
    func wait(_ events: Int16) -> Bool {
        var p = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let rc = poll(&p, 1, timeoutMs)
            if rc < 0 && errno == EINTR { continue }
            return rc > 0
        }
    }

    /// Reads what arrives (at most `max` bytes) into `pending`; false at end of stream.
    func fill(max: Int = .max) throws(ProxyFailure) -> Bool {
        let n = try readSome(into: scratch.base, max: min(max, scratch.count))
        guard n > 0 else { return false }
        pending.append(contentsOf: UnsafeRawBufferPointer(start: scratch.base, count: n))
        return true
    }

    /// One read of at most `max` bytes into `destination`, within the
    /// deadline; 0 at end of stream.
    private func readSome(into destination: UnsafeMutableRawPointer, max: Int) throws(ProxyFailure) -> Int {
        while true {
            guard wait(Int16(POLLIN)) else { throw ProxyFailure(.gatewayTimeout, "\(peer) sent nothing for \(timeoutMs / 1000) s") }
            let n = read(fd, destination, max)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n < 0 { throw ProxyFailure(.closed, "reading from \(peer): \(Self.errorText())") }
            return n
        }
    }

    /// One read of at most `max` bytes handed to `piece` as it is; 0 at end of stream.
    private func readDirect(max: Int, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let n = try readSome(into: scratch.base, max: min(max, scratch.count))
        if n > 0 { try piece(UnsafeRawBufferPointer(start: scratch.base, count: n)) }
        return n
    }

    /// A body of exactly `count` bytes read straight into the array that is
    /// returned (the log's copy), each piece handed to `piece` as it arrives
    /// (to be forwarded): the bytes are copied once, by the kernel.
    func readBody(length count: Int, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws -> [UInt8] {
        guard count > 0 else { return [] }
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            if !pending.isEmpty {
                let take = min(pending.count, count)
                pending.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: take) }
                pending.removeFirst(take)
                initialized = take
                try piece(UnsafeRawBufferPointer(start: base, count: take))
            }
            while initialized < count {
                let got = try readSome(into: base + initialized, max: count - initialized)
                if got == 0 { throw ProxyFailure(.closed, "\(peer) closed the connection \(count - initialized) bytes before the end of the body") }
                initialized += got
                try piece(UnsafeRawBufferPointer(start: base + initialized - got, count: got))
            }
        }
    }

    /// splice(2): a GNU extension the Glibc module does not show, looked up once.
    private typealias SpliceFunction = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32) -> Int
    private static let spliceFunction: SpliceFunction? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "splice")
        .map { unsafeBitCast($0, to: SpliceFunction.self) }

    private static func spliceCall(_ from: Int32, _ a: UnsafeMutablePointer<Int64>?, _ to: Int32, _ b: UnsafeMutablePointer<Int64>?,
                                   _ count: Int, _ flags: UInt32) -> Int {
        spliceFunction?(from, a, to, b, count, flags) ?? -1
    }

    static var canSplice: Bool { spliceFunction != nil }

    /// Moves exactly `count` bytes from this socket to `to` inside the
    /// kernel (splice through a pipe): for a body the log does not keep, no
    /// byte is copied into the proxy. What was read into `pending` goes first.
    func splice(_ count: UInt64, to out: ProxySocket) throws(ProxyFailure) {
        var left = count
        if !pending.isEmpty {
            let take = Int(min(UInt64(pending.count), left))
            try out.write(Array(pending[0..<take]))
            pending.removeFirst(take)
            left -= UInt64(take)
        }
        guard left > 0 else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ProxyFailure(.badGateway, "cannot make a pipe: \(Self.errorText())") }
        defer { close(fds[0]); close(fds[1]) }
        _ = fcntl(fds[0], 1031 /* F_SETPIPE_SZ */, Int32(1 << 20))
        let flags = UInt32(1 | 2 | 4) // SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE
        while left > 0 {
            guard wait(Int16(POLLIN)) else { throw ProxyFailure(.gatewayTimeout, "\(peer) sent nothing for \(timeoutMs / 1000) s") }
            let n = Self.spliceCall(fd, nil, fds[1], nil, Int(min(left, 1 << 20)), flags)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n < 0 { throw ProxyFailure(.closed, "reading from \(peer): \(Self.errorText())") }
            if n == 0 { throw ProxyFailure(.closed, "\(peer) closed the connection \(left) bytes before the end of the body") }
            var inPipe = n
            while inPipe > 0 {
                let m = Self.spliceCall(fds[0], nil, out.fd, nil, inPipe, flags)
                if m < 0 && (errno == EINTR || errno == EAGAIN) {
                    guard out.wait(Int16(POLLOUT)) else { throw ProxyFailure(.gatewayTimeout, "\(out.peer) took nothing for \(timeoutMs / 1000) s") }
                    continue
                }
                if m <= 0 { throw ProxyFailure(.closed, "writing to \(out.peer): \(Self.errorText())") }
                inPipe -= m
            }
            left -= UInt64(n)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ProxyFailure) {
        var offset = 0
        while offset < bytes.count {
            guard wait(Int16(POLLOUT)) else { throw ProxyFailure(.gatewayTimeout, "\(peer) took nothing for \(timeoutMs / 1000) s") }
            let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { throw ProxyFailure(.closed, "writing to \(peer): \(Self.errorText())") }
            offset += n
        }
    }

    func write(_ bytes: [UInt8]) throws(ProxyFailure) {
        var failure: ProxyFailure?
        bytes.withUnsafeBytes { raw in
            do throws(ProxyFailure) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    func write(_ text: String) throws(ProxyFailure) { try write(Array(text.utf8)) }

    /// The next message head; nil when the stream ended before its first byte.
    func readHead(isRequest: Bool, limits: HTTPLimits) throws(ProxyFailure) -> HTTPHead? {
        let who: ProxyFailure.Kind = isRequest ? .badRequest : .badGateway
        while true {
            do {
                if let end = try HTTPHead.end(in: pending[...], limits: limits) {
                    let head = try HTTPHead.parse(pending[0..<end], isRequest: isRequest, limits: limits)
                    pending.removeFirst(end)
                    return head
                }
            } catch {
                throw ProxyFailure(who, isRequest ? error.message : "the answer of \(peer) is not HTTP/1.1: \(error.message)")
            }
            guard try fill(max: Self.headReadBytes) else {
                if pending.allSatisfy({ $0 == 13 || $0 == 10 }) { return nil }
                throw ProxyFailure(who, "\(peer) closed the connection in the middle of a head")
            }
        }
    }

    /// Reads a body framed as `framing`, handing it on in pieces; its size.
    func readBody(_ framing: HTTPHead.Framing, limits: HTTPLimits, _ piece: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt64 {
        switch framing {
        case .none:
            return 0
        case .length(let n):
            var left = n
            if !pending.isEmpty {
                let take = Int(min(UInt64(pending.count), left))
                try pending.withUnsafeBytes { try piece(UnsafeRawBufferPointer(rebasing: $0[0..<take])) }
                pending.removeFirst(take)
                left -= UInt64(take)
            }
            // The rest straight from the socket to `piece`, no copy kept.
            while left > 0 {
                let got = try readDirect(max: Int(min(left, UInt64(scratch.count))), piece)
                if got == 0 { throw ProxyFailure(.closed, "\(peer) closed the connection \(left) bytes before the end of the body") }
                left -= UInt64(got)
            }
            return n
        case .chunked:
            var decoder = ChunkedDecoder(limits: limits)
            while true {
                let used: Int
                do { used = try pending.withUnsafeBytes { try decoder.feed($0, data: piece) } } catch let e as HTTPMessageError {
                    throw ProxyFailure(.badRequest, "the chunked body from \(peer): \(e.message)")
                }
                pending.removeFirst(used)
                if decoder.isDone { return decoder.total }
                if try !fill() { throw ProxyFailure(.closed, "\(peer) closed the connection in the middle of a chunked body") }
            }
        case .untilClose:
            var total: UInt64 = 0
            while true {
                if !pending.isEmpty {
                    try pending.withUnsafeBytes { try piece($0) }
                    total += UInt64(pending.count)
                    pending.removeAll(keepingCapacity: true)
                }
                if try !fill() { return total }
            }
        }
    }

    /// Connects to `host`:`port` within `timeoutMs`.
    static func connect(host: String, port: Int, timeoutMs: Int32, buffer: ProxyReadBuffer) throws(ProxyFailure) -> ProxySocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let rc = getaddrinfo(name, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw ProxyFailure(.badGateway, "cannot find the host \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var last = "no address"
        var a: UnsafeMutablePointer<addrinfo>? = first
        while let ai = a {
            a = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { last = errorText(); continue }
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
                last = errorText()
                close(fd)
                continue
            }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if poll(&p, 1, timeoutMs) <= 0 {
                close(fd)
                throw ProxyFailure(.gatewayTimeout, "\(host):\(port) did not accept a connection within \(timeoutMs / 1000) s")
            }
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 {
                last = errorText(soError)
                close(fd)
                continue
            }
            return ProxySocket(fd: fd, peer: "\(host):\(port)", timeoutMs: timeoutMs, buffer: buffer)
        }
        throw ProxyFailure(.badGateway, "cannot connect to \(host):\(port): \(last)")
    }
}

/// Holds a transfer to a rate (network conditioning): sleeps while it is ahead.
struct Pacer {
    let bytesPerSecond: Int64
    private var sent: Int64 = 0
    private let start = Breakpoints.now()

    init(bytesPerSecond: Int64) { self.bytesPerSecond = bytesPerSecond }

    mutating func pace(_ n: Int) {
        guard bytesPerSecond > 0 else { return }
        sent += Int64(n)
        let due = Double(sent) / Double(bytesPerSecond)
        let ahead = due - (Breakpoints.now() - start)
        if ahead > 0.001 { usleep(UInt32(min(ahead, 30) * 1_000_000)) }
    }
}
