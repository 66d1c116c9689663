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
        let results = Mutex<[Int: [R]]>([:])
        let chunk = (items.count + workers - 1) / workers
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            let range = (w * chunk)..<min(items.count, (w + 1) * chunk)
            let part = items[range].map(transform)
            results.withLock { $0[w] = part }
        }
        let parts = results.withLock { $0 }
        return (0..<workers).flatMap { parts[$0] ?? [] }
    }
}

enum ProcessInfoLite {
    /// Online processors, at least 1.
    static let processors: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}
