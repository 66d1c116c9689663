// Apart from Redaction.swift, which must not import Glibc (see there).
#if canImport(Glibc)
import Glibc
#endif

/// Each thread's caches in front of the memos it uses (`RedactionMemo`),
/// held through one pthread key: at most `limit` memos a thread, the
/// oldest dropped; freed when the thread ends.
enum RedactionThreadLocal {
    final class Box {
        var caches: [UInt64: AnyObject] = [:]
        private var order: [UInt64] = []
        static let limit = 8

        func add(_ cache: AnyObject, for id: UInt64) {
            if order.count == Box.limit { caches[order.removeFirst()] = nil }
            caches[id] = cache
            order.append(id)
        }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            if let raw { Unmanaged<Box>.fromOpaque(raw).release() }
        }
        return key
    }()

    static func box() -> Box {
        if let raw = pthread_getspecific(key) { return Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue() }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }
}
