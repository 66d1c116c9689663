import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Order-preserving parallel map over independent items (HAR export and
/// import convert entries one by one, and the machine has more than one
/// processor).
enum Parallel {
    /// Items per parallel batch in streaming exports.
    static let batchSize = 512

    static func map<T: Sendable, R: Sendable>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
        let workers = min(ProcessInfoLite.processors, max(1, items.count / 64))
        guard workers > 1 else { return items.map(transform) }
        // Several chunks per processor, taken as threads come free: a thread
        // slowed by another (the log's writer, another process) leaves its
        // share to the others instead of being waited for.
        let chunks = min(workers * 8, max(workers, items.count / 32))
        let results = Mutex<[Int: [R]]>([:])
        let chunk = (items.count + chunks - 1) / chunks
        DispatchQueue.concurrentPerform(iterations: chunks) { w in
            let range = min(items.count, w * chunk)..<min(items.count, (w + 1) * chunk)
            let part = items[range].map(transform)
            results.withLock { $0[w] = part }
        }
        let parts = results.withLock { $0 }
        var all: [R] = []
        all.reserveCapacity(items.count)
        for w in 0..<chunks { all += parts[w] ?? [] }
        return all
    }
}

enum ProcessInfoLite {
    /// Online processors, at least 1.
    static let processors: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}
