// A TCP relay that does nothing but move bytes: 127.0.0.1:0 to a target
// port, a detached thread each way per connection, read(2) into a 256 KiB
// buffer and write(2) it out. The proxy part runs its clients through it to
// show what one more hop costs on this machine before anything is parsed,
// redacted or recorded: a ceiling for any proxy, not a figure of Pincer's.
import Foundation
import Synchronization

final class BareRelay: @unchecked Sendable {
    let port: UInt16
    private let target: UInt16
    private let listener: Int32

    /// One direction of one connection.
    private final class Pipe: @unchecked Sendable {
        let from: Int32, to: Int32
        let done: @Sendable () -> Void
        init(from: Int32, to: Int32, done: @escaping @Sendable () -> Void) {
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
        (listener, port) = try BenchServer.listenOnLoopback()
        Thread.detachNewThread { [self] in acceptLoop() }
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
            let closeBoth: @Sendable () -> Void = { if left.decrement() == 0 { close(client); close(server) } }
            let up = Pipe(from: client, to: server, done: closeBoth), down = Pipe(from: server, to: client, done: closeBoth)
            Thread.detachNewThread { up.run() }
            Thread.detachNewThread { down.run() }
        }
    }

    private final class SharedCount: Sendable {
        private let value: Atomic<Int>
        init(_ value: Int) { self.value = Atomic(value) }
        func decrement() -> Int { value.subtract(1, ordering: .acquiringAndReleasing).newValue }
    }
}
