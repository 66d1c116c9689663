import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// net.tail: prints finished entries as they arrive. With persistence on it
/// follows the log file, which is where an app in another process writes;
/// otherwise it follows this process's store.
struct Tail {
    let logger: LoggerState
    let filter: NetworkFilter
    let limit: Int

    static func line(_ e: NetworkEntry) -> String {
        let status = e.status.map(String.init) ?? (e.state == .failed ? "ERR" : "...")
        let ms = e.state == .pending ? "" : "  \(Int(e.duration.rounded())) ms"
        return "#\(e.id)  \(e.method) \(status)  \(e.url)\(ms)\(e.error.map { "  (\($0))" } ?? "")\n"
    }

    /// Calls `show` with each finished entry that matches, as it arrives,
    /// until `limit` or until `cancelled` (Ctrl-C, --timeout: args.isCancelled).
    func run(cancelled: () -> Bool, _ show: (NetworkEntry) -> Void) throws -> CommandValue {
        let arrived = Mutex<[NetworkEntry]>([])
        var follower: FileFollower?
        var token: UInt64?
        if logger.current.persistDays > 0, let path = logger.logFilePath {
            follower = FileFollower(path: path)
        } else {
            token = logger.store.listen { e in
                guard e.state != .pending else { return }
                arrived.withLock { $0.append(e) }
            }
        }
        defer { if let token { logger.store.stopListening(token) } }
        var shown = 0
        while (limit <= 0 || shown < limit) && !cancelled() {
            var batch = arrived.withLock { list -> [NetworkEntry] in
                defer { list.removeAll() }
                return list
            }
            // The file is the logger's own, but may predate names added since (or this redactor).
            if let follower { batch += follower.poll().map(logger.store.redactedForDisplay) }
            for e in batch where filter.matches(e) {
                show(e)
                shown += 1
                if limit > 0 && shown >= limit { break }
            }
            if batch.isEmpty { usleep(100_000) }
        }
        return .string("followed \(shown) entr\(shown == 1 ? "y" : "ies")")
    }
}

/// Reads whole lines appended to a file since it was opened (tail -f).
final class FileFollower {
    private let path: String
    private var offset: Int
    private var partial: [UInt8] = []

    init(path: String) {
        self.path = path
        var st = stat()
        offset = stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    func poll() -> [NetworkEntry] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return [] }
        if Int(st.st_size) < offset { offset = 0; partial = [] } // compacted or replaced
        guard Int(st.st_size) > offset else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) - offset)
        let n = pread(fd, &bytes, bytes.count, off_t(offset))
        guard n > 0 else { return [] }
        offset += n
        partial += bytes[0..<n]
        var entries: [NetworkEntry] = []
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(partial[..<newline])
            partial.removeSubrange(...newline)
            if let json = try? JSON.parse(bytes: line), let e = try? NetworkEntry(json: json) { entries.append(e) }
        }
        return entries
    }
}
