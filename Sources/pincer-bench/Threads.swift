// A gang of plain pthreads released together, for throughput measured from
// several threads at once. pthreads rather than Dispatch or Foundation's
// Thread: the timed section then holds nothing but the work, one wake-up and
// the joins.
import PincerControl
#if canImport(Glibc)
import Glibc
#endif

enum ThreadGang {
    /// Runs `work(i)` on `count` new threads, i in 0..<count. The threads are
    /// all created before any of them starts working; the time runs from
    /// their release to the last join. Returns that wall time and each result.
    static func run(count: Int, _ work: @escaping @Sendable (Int) -> UInt64) throws(BenchError) -> (nanoseconds: UInt64, results: [UInt64]) {
        let gate = Gate()
        let jobs = (0..<count).map { Job(index: $0, work: work, gate: gate) }
        var threads: [pthread_t] = []
        for job in jobs {
            var thread = pthread_t()
            // `jobs` keeps each job alive until after the joins; the thread borrows it.
            let rc = pthread_create(&thread, nil, { raw in
                let job = Unmanaged<Job>.fromOpaque(raw!).takeUnretainedValue()
                if job.gate.wait() { job.result = job.work(job.index) }
                return nil
            }, Unmanaged.passUnretained(job).toOpaque())
            guard rc == 0 else {
                // Let the threads already started go without working.
                gate.open(cancelled: true)
                for t in threads { pthread_join(t, nil) }
                throw BenchError("pthread_create failed for thread \(threads.count + 1) of \(count): \(String(cString: strerror(rc)))")
            }
            threads.append(thread)
        }
        let start = monotonicNanoseconds()
        gate.open(cancelled: false)
        for thread in threads { pthread_join(thread, nil) }
        let elapsed = monotonicNanoseconds() - start
        // pthread_join orders each thread's write of `result` before this read.
        return (elapsed, jobs.map(\.result))
    }

    private final class Job {
        let index: Int
        let work: @Sendable (Int) -> UInt64
        let gate: Gate
        var result: UInt64 = 0

        init(index: Int, work: @escaping @Sendable (Int) -> UInt64, gate: Gate) {
            self.index = index
            self.work = work
            self.gate = gate
        }
    }

    /// A one-shot start signal (a mutex and a condition variable): unlike a
    /// barrier it can also send the threads away when one fails to start.
    private final class Gate: @unchecked Sendable {
        private let lock = ConditionLock()
        private var isOpen = false
        private var isCancelled = false

        /// Blocks until the gate opens; false when it opened to cancel.
        func wait() -> Bool {
            lock.withLock {
                while !isOpen { lock.wait() }
                return !isCancelled
            }
        }

        func open(cancelled: Bool) {
            lock.withLock {
                isOpen = true
                isCancelled = cancelled
                lock.broadcast()
            }
        }
    }
}
