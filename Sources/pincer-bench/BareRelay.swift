// A TCP relay that does nothing but move bytes: 127.0.0.1:0 to a target
// port, a detached pthread each way per connection, read(2) into a 256 KiB
// buffer and write(2) it out. The proxy part runs its clients through it to
// show what one more hop costs on this machine before anything is parsed,
// redacted or recorded: a ceiling for any proxy, not a figure of Pincer's.
#if canImport(Glibc)
import Glibc
#endif

final class BareRelay: @unchecked Sendable {
    let port: UInt16
    private let target: UInt16
    private let listener: Int32

    /// One direction of one connection.
    private final class Pipe {
        let from: Int32, to: Int32
        let done: () -> Void
        init(from: Int32, to: Int32, done: @escaping () -> Void) {
            self.from = from
            self.to = to
            self.done = done
        }

        func run() {
            let size = 256 << 10
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            defer { buffer.deallocate() }
            copying: while true {
                let n = read(from, buffer, size)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                var offset = 0
                while offset < n {
                    let m = send(to, buffer + offset, n - offset, Int32(MSG_NOSIGNAL))
                    if m < 0 && errno == EINTR { continue }
                    if m <= 0 { break copying }
                    offset += m
                }
            }
            shutdown(to, Int32(SHUT_WR))
            done()
        }
    }

    /// Listens on 127.0.0.1 and relays every connection to `target`.
    init(to target: UInt16) throws(BenchError) {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("relay socket: \(BenchServer.lastError())") }
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
            throw BenchError("the relay cannot listen on 127.0.0.1: \(message)")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        try Self.detach { [self] in acceptLoop() }
    }

    /// Stops accepting (open connections end when their clients close).
    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                close(listener)
                return
            }
            guard let server = try? ProxyBenchClient.connect(port: target) else { close(client); continue }
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            // The second direction to finish closes both descriptors.
            let left = SharedCount(2)
            let closeBoth: () -> Void = { if left.decrement() == 0 { close(client); close(server) } }
            let up = Pipe(from: client, to: server, done: closeBoth), down = Pipe(from: server, to: client, done: closeBoth)
            if (try? Self.detach({ up.run() })) == nil || (try? Self.detach({ down.run() })) == nil {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(server, Int32(SHUT_RDWR))
            }
        }
    }

    private final class SharedCount: @unchecked Sendable {
        private var value: Int
        private var lock = pthread_mutex_t()
        init(_ value: Int) {
            self.value = value
            pthread_mutex_init(&lock, nil)
        }
        func decrement() -> Int {
            pthread_mutex_lock(&lock)
            defer { pthread_mutex_unlock(&lock) }
            value -= 1
            return value
        }
    }

    private final class Work {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    private static func detach(_ run: @escaping () -> Void) throws(BenchError) {
        var thread = pthread_t()
        let work = Unmanaged.passRetained(Work(run)).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let work = Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue()
            work.run()
            return nil
        }, work)
        guard rc == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            throw BenchError("pthread_create for the relay: \(String(cString: strerror(rc)))")
        }
        pthread_detach(thread)
    }
}
