import PincerControl
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread without Foundation (PincerPluginKit's BackgroundThread
/// is for plugins; the server cannot depend on it).
struct ServerThread: Sendable {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// pthread_t is an integer on Linux.
    let handle: pthread_t

    /// Starts `body` on a new joinable thread; nil when the system refuses one.
    static func start(_ body: @escaping @Sendable () -> Void) -> ServerThread? {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let work = Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue()
            work.body()
            return nil
        }, work)
        guard rc == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return nil
        }
        return ServerThread(handle: thread)
    }

    /// Starts `body` on a thread nobody joins (a request that may run for
    /// as long as its plugin function does); false when refused.
    static func detached(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = start(body) else { return false }
        pthread_detach(thread.handle)
        return true
    }

    func join() { pthread_join(handle, nil) }

    var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }
}

/// Threads for requests, kept for a while after their work: starting a
/// thread costs more than a whole quick request (about 40 µs of a 100 µs
/// round trip here). A request never waits for a thread: with none idle, a
/// new one starts. Idle threads end after `idleSeconds`.
final class WorkerPool: @unchecked Sendable {
    static let shared = WorkerPool()
    static let idleSeconds = 5

    private let lock = ConditionLock()
    private var work: [@Sendable () -> Void] = []
    private var idle = 0

    /// Runs `body` on a pool thread; false when no thread could be started.
    func run(_ body: @escaping @Sendable () -> Void) -> Bool {
        let handed = lock.withLock { () -> Bool in
            guard idle > work.count else { return false }
            work.append(body)
            lock.signal() // one idle thread is enough

            return true
        }
        if handed { return true }
        return ServerThread.detached { [self] in
            body()
            loop()
        }
    }

    /// Takes work until none comes for `idleSeconds`.
    private func loop() {
        while let next = take() { next() }
    }

    private func take() -> (@Sendable () -> Void)? {
        lock.withLock {
            idle += 1
            defer { idle -= 1 }
            while work.isEmpty {
                if !lock.wait(seconds: WorkerPool.idleSeconds) && work.isEmpty { return nil }
            }
            return work.removeFirst()
        }
    }
}
