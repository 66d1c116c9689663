import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// net.tail: prints finished entries as they arrive. With persistence on it
/// follows the log database, which is where an app in another process
/// writes; otherwise it follows this process's store.
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
        var follower: DatabaseFollower?
        var token: UInt64?
        if let db = try logger.database() {
            try logger.flush()
            follower = try DatabaseFollower(db)
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
            // The log is the logger's own, but may predate names added since (or this redactor).
            if let follower {
                // This process's own entries are queued for the timer: write them first.
                try logger.flush()
                batch += try follower.poll().map(logger.store.redactedForDisplay)
            }
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

/// Reads the entries added to the persisted log (by any process) since it
/// was opened, in id order (tail -f).
final class DatabaseFollower {
    private let db: LogDatabase
    private var after: UInt64

    init(_ db: LogDatabase) throws {
        self.db = db
        do { after = try db.lastID() } catch { throw CommandError("\(error)") }
    }

    func poll() throws -> [NetworkEntry] {
        do {
            let (entries, _) = try db.page(filter: NetworkFilter.all, after: after)
            if let last = entries.last { after = last.id }
            return entries
        } catch {
            throw CommandError("\(error)")
        }
    }
}
