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
