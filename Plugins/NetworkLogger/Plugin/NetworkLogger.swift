// The network logger (after Scyther's network logging, Windshield's privacy
// defaults and byte budgets, and iOSDevelopmentTools' redact-before-store).
// Exchanges arrive through "pincer.network/1" (SDK/include/pincer/network.h),
// from PincerNetworkCapture's URLSession protocol or any other recorder, and
// from HAR imports; the log itself is the NetworkLog module.
import Dispatch
import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.net", shortName: "net", name: "Network Logger", version: "1.0.0",
    summary: "HTTP traffic log: redacted before storage, bounded, HAR and cURL export, filters and stats")) { NetworkLogger() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

/// What persists of the logger's configuration (one settings document).
struct LoggerConfig: Equatable {
    var limits = LogLimits()
    var rules: [CaptureRule] = []
    /// 0: the log lives in memory only. Otherwise entries are appended to
    /// the log file and kept this many days.
    var persistDays = 0
    /// Names redacted on top of the defaults (`net.redact-name`), as given.
    var redactNames: [String] = []

    static let key = "config"

    var json: JSON {
        .object([
            ("version", .int(1)),
            ("entryLimit", .int(Int64(limits.entryLimit))), ("bodyCap", .int(Int64(limits.bodyCap))),
            ("bodyBudget", .int(Int64(limits.bodyBudget))), ("persistDays", .int(Int64(persistDays))),
            ("rules", .array(rules.map { r in
                .object([("kind", .string(r.kind.rawValue)), ("host", .string(r.host)), ("pathPrefix", .string(r.pathPrefix)),
                         ("methods", .array(r.methods.map(JSON.string)))])
            })),
            ("redactNames", .array(redactNames.map(JSON.string))),
        ])
    }

    static func decode(_ text: String) -> Result<LoggerConfig, CommandError> {
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { return .failure(CommandError("\(error)")) }
        guard doc["version"]?.int64Value == 1 else { return .failure(CommandError("not a version 1 configuration")) }
        var c = LoggerConfig()
        c.limits = LogLimits(entryLimit: Int(doc["entryLimit"]?.int64Value ?? 500), bodyCap: Int(doc["bodyCap"]?.int64Value ?? 1 << 20),
                             bodyBudget: Int(doc["bodyBudget"]?.int64Value ?? 20 << 20))
        if let problem = c.limits.problem { return .failure(CommandError(problem)) }
        c.persistDays = Int(doc["persistDays"]?.int64Value ?? 0)
        for r in doc["rules"]?.arrayValue ?? [] {
            guard let kind = r["kind"]?.stringValue.flatMap(CaptureRule.Kind.init(rawValue:)), let host = r["host"]?.stringValue else {
                return .failure(CommandError("a rule is malformed"))
            }
            c.rules.append(CaptureRule(kind: kind, host: host, pathPrefix: r["pathPrefix"]?.stringValue ?? "",
                                       methods: r["methods"]?.arrayValue?.compactMap(\.stringValue) ?? []))
        }
        c.redactNames = doc["redactNames"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return .success(c)
    }
}

final class NetworkLogger: PincerPlugin {
    private var service: NetworkService?
    private var state: FirstUse<LoggerState>?

    // Registers only (SDK/include/pincer/entry.h): the configuration and the
    // persisted log are opened by the first command, entry or service call
    // that needs them.
    func register(with host: PluginHost) throws {
        let state = FirstUse { LoggerState(host: host) }
        self.state = state
        let breakpoints = Breakpoints(emit: { host.emit("net.held", payload: $0) })
        let replayer = Replayer()
        let service = NetworkService(state: state, breakpoints: breakpoints, replayer: replayer)
        self.service = service

        try host.addValueRow(id: "requests", title: "Logged requests", section: PINCER_SECTION_NETWORKING,
                             summary: "Requests in the log (failures: status >= 400 or no response)") {
            var count = 0, failed = 0, pending = 0
            try state.get().forEach(NetworkFilter.all, detail: .columns) { e in
                count += 1
                if e.isFailure { failed += 1 }
                if e.state == .pending { pending += 1 }
                return true
            }
            return "\(count) (\(failed) failed, \(pending) pending)"
        }
        try host.addPage(id: "recent", title: "Recent requests", section: PINCER_SECTION_NETWORKING,
                         summary: "The last 20 requests, newest first") {
            try state.get().recent(20).map { e in
                ("#\(e.id) \(e.method) \(e.status.map(String.init) ?? e.state.rawValue)", Optional(e.url))
            }
        }
        try host.addPage(id: "stats", title: "Traffic stats", section: PINCER_SECTION_NETWORKING, summary: "As net.stats") {
            TrafficStats(try state.get().statsEntries(NetworkFilter.all)).json.objectValue?.compactMap { key, value in
                switch value {
                case .array, .object: nil
                default: (key, Optional(value.stringValue ?? value.serialized()))
                }
            } ?? []
        }
        try host.addAction(id: "clear", title: "Clear the log", command: "clear", section: PINCER_SECTION_NETWORKING)
        try NetworkCommands(state: state).register(with: host)
        try InterceptCommands(state: state).register(with: host)
        try BreakpointCommands(state: state, breakpoints: breakpoints).register(with: host)
        try ReplayCommand(state: state, replayer: replayer).register(with: host)
        try ProxyCommand(state: state, breakpoints: breakpoints).register(with: host)
        try host.publishService(PINCER_NETWORK_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }

    func shutdown() {
        state?.ifOpen?.shutdown()
    }
}

extension NetworkFilter {
    /// The empty filter (every entry).
    static let all = try! NetworkFilter("")
}

/// The store plus what the commands change about it: configuration and the
/// persisted log.
final class LoggerState: @unchecked Sendable {
    let host: PluginHost
    let store: NetworkStore
    /// The interception rules (net-rules.json in the state directory, and transient ones).
    let interception: RuleBook
    private let config: Mutex<LoggerConfig>
    /// One configuration change at a time (commands and the service's
    /// add_redact_name may run on different threads).
    private let updating = Mutex<Void>(())
    /// The persisted log, opened when persistence is on and something reads or records.
    private let opened = Mutex<LogDatabase?>(nil)
    private let opening = Mutex<Void>(())
    /// The flush timer's thread is running / should stop (shutdown).
    private let timerRunning = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Signalled at shutdown: the timer's wait between flushes ends at once
    /// (a nap of its interval kept every short command waiting at exit).
    private let wakeTimer = DispatchSemaphore(value: 0)
    /// Imports in progress: the timer leaves their entries to whole batches
    /// (and the import's final flush), so an import is a handful of transactions.
    private let bulk = Atomic<Int>(0)

    init(host: PluginHost) {
        let config = host.storedDocument(LoggerConfig.key, what: "network logger settings", decode: LoggerConfig.decode) ?? LoggerConfig()
        self.host = host
        self.interception = RuleBook(directory: host.stateDirectory)
        self.store = NetworkStore(limits: config.limits, rules: config.rules, redactor: Redactor(extraNames: config.redactNames))
        self.config = Mutex(config)
        store.listen { entry in
            host.emit(PINCER_NETWORK_ENTRY_EVENT, payload: JSON.object([("id", .uint(entry.id)), ("state", .string(entry.state.rawValue))]).serialized())
        }
        store.listen(batches: { [weak self] entries in
            guard let self else { return }
            let finished = entries.filter { $0.state != .pending }
            if !finished.isEmpty { self.persist(finished) }
        })
    }

    var current: LoggerConfig { config.withLock { $0 } }

    /// Applies and saves a configuration change to the configuration as
    /// stored now, in one transaction of the store (so a rule or name
    /// another process added meanwhile is kept); nothing changes if saving fails.
    func update(_ change: (inout LoggerConfig) throws -> Void) throws {
        try updating.withLock { _ in
            var next = current
            try host.updateDocument(LoggerConfig.key, what: "network logger settings", decode: LoggerConfig.decode) { stored in
                next = stored ?? LoggerConfig()
                try change(&next)
                if let problem = next.limits.problem { throw CommandError.invalidArgument(problem) }
                return next.json.serialized()
            }
            if next == current { return }
            let before = config.withLock { c -> LoggerConfig in
                let old = c
                c = next
                return old
            }
            if before.limits != next.limits { store.setLimits(next.limits) }
            if before.rules != next.rules { store.setRules(next.rules) }
            if before.redactNames != next.redactNames { store.setRedactedNames(next.redactNames) }
            // Retention of the new period at once (opening applies it).
            if before.persistDays != next.persistDays {
                if next.persistDays == 0 {
                    try flush() // what was recorded while persistence was on is kept
                } else if let db = opened.withLock({ $0 }) {
                    try applyRetention(db, days: next.persistDays)
                } else {
                    _ = try database()
                }
            }
        }
    }

    /// Adds a name whose values are redacted from now on (persisted).
    /// Returns what happened, for people.
    @discardableResult
    func addRedactName(_ name: String) throws -> String {
        let normalized = Redactor.normalize(name)
        guard !normalized.isEmpty else {
            throw CommandError.invalidArgument("name '\(TextExport.clean(String(name.prefix(80))))' has no letters or digits, so it can match nothing")
        }
        var added = false
        try update { c in
            guard !c.redactNames.contains(where: { Redactor.normalize($0) == normalized }) else { return }
            c.redactNames.append(name)
            added = true
        }
        if !added { return "'\(name)' (\(normalized)) is already redacted" }
        let builtIn = Redactor().isSensitiveField(name) ? "; the defaults already redacted it" : ""
        return "values named '\(name)' (normalised: \(normalized)) are redacted from now on\(builtIn)"
    }

    /// Removes every added name that normalises like `name`.
    func removeRedactName(_ name: String) throws -> String {
        let normalized = Redactor.normalize(name)
        var removed: [String] = []
        try update { c in
            removed = c.redactNames.filter { Redactor.normalize($0) == normalized }
            guard !removed.isEmpty else {
                throw CommandError("no added name normalises to '\(normalized)' (net.redact-names lists them)", status: PINCER_NOT_FOUND)
            }
            c.redactNames.removeAll { Redactor.normalize($0) == normalized }
        }
        return "removed \(removed.map { "'\($0)'" }.joined(separator: ", ")); the defaults still apply"
    }

    // MARK: The persisted log

    /// The database file in the state directory, when the host tells where that is.
    var logFilePath: String? { host.stateDirectory.map { $0 + "/" + LogDatabase.fileName } }

    /// The persisted log when persistence is on (opened now if this is the
    /// first use: migration of an old NDJSON log, then retention), else nil.
    func database() throws -> LogDatabase? {
        guard current.persistDays > 0, let directory = host.stateDirectory else { return nil }
        if let db = opened.withLock({ $0 }) { return db }
        return try opening.withLock { _ -> LogDatabase in
            if let db = opened.withLock({ $0 }) { return db }
            let store = self.store
            let db: LogDatabase
            do { db = try LogDatabase.open(directory: directory, redact: store.redactedForDisplay) } catch {
                throw CommandError("cannot open the persisted network log: \(error)")
            }
            for warning in db.warnings { host.log(.warning, warning) }
            try applyRetention(db, days: current.persistDays)
            opened.withLock { $0 = db }
            return db
        }
    }

    private func applyRetention(_ db: LogDatabase, days: Int) throws {
        do { try db.deleteRecorded(before: Clock.now() - Double(days) * 86_400) } catch {
            throw CommandError("cannot apply the retention period to the persisted network log: \(error)")
        }
    }

    /// Finished entries into the persisted log's queue (written by the
    /// timer within `flushInterval`, when a batch fills, or by `flush`).
    private func persist(_ entries: [NetworkEntry]) {
        do {
            guard let db = try database() else { return }
            if try db.enqueue(contentsOf: entries) { startTimer(db) }
        } catch {
            let ids = entries.count == 1 ? "entry \(entries[0].id)" : "entries \(entries[0].id)–\(entries[entries.count - 1].id)"
            host.log(.error, "cannot persist \(ids): \(error)")
        }
    }

    /// Writes what is queued (each command that reads or imports does this first).
    func flush() throws {
        guard let db = opened.withLock({ $0 }) else { return }
        do { try db.flush() } catch { throw CommandError("cannot write to the persisted network log: \(error)") }
    }

    static let flushInterval: UInt32 = 200_000  // µs

    private func startTimer(_ db: LogDatabase) {
        guard !stopping.load(ordering: .acquiring),
              timerRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let started = BackgroundThread.start { [self] in
            while true {
                if wakeTimer.wait(timeout: .now() + .microseconds(Int(Self.flushInterval))) == .success {
                    wakeTimer.signal()  // for whichever timer thread waits next
                }
                if stopping.load(ordering: .acquiring) { break }
                if bulk.load(ordering: .acquiring) > 0 { continue }
                do { try db.flush() } catch { host.log(.error, "cannot write to the persisted network log: \(error)") }
                if db.queued > 0 { continue }
                timerRunning.store(false, ordering: .releasing)
                // An entry queued after the check above found the timer still running: take it back.
                guard db.queued > 0, timerRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
            }
            timerRunning.store(false, ordering: .releasing)
        }
        if !started {
            timerRunning.store(false, ordering: .releasing)
            do { try db.flush() } catch { host.log(.error, "cannot write to the persisted network log: \(error)") }
        }
    }

    /// Runs an import: its entries are written in whole batches, the last
    /// one before this returns (an imported entry is acknowledged with the command).
    func importing<T>(_ body: () throws -> T) throws -> T {
        bulk.add(1, ordering: .acquiringAndReleasing)
        defer { bulk.subtract(1, ordering: .acquiringAndReleasing) }
        let result = try body()
        try flush()
        return result
    }

    /// At host shutdown: stops the timer, then writes what is queued.
    func shutdown() {
        stopping.store(true, ordering: .releasing)
        wakeTimer.signal()
        var waited = 0
        while timerRunning.load(ordering: .acquiring) && waited < 20_000 { usleep(100); waited += 1 }
        do { try flush() } catch { host.log(.error, "\(error)") }
    }

    // MARK: Reading the log (the database with persistence on, else the store)

    /// Every entry matching `filter`, oldest first, page by page from the
    /// database (at most a page held), or from the store.
    func forEach(_ filter: NetworkFilter, detail: LogDatabase.Detail = .full, _ body: (NetworkEntry) throws -> Bool) throws {
        if let db = try database() {
            try flush()
            try db.forEach(filter: filter, detail: detail, body)
        } else {
            for e in store.entries() where filter.matches(e) {
                if try !body(e) { return }
            }
        }
    }

    func entries(_ filter: NetworkFilter, detail: LogDatabase.Detail = .full) throws -> [NetworkEntry] {
        var all: [NetworkEntry] = []
        try forEach(filter, detail: detail) { all.append($0); return true }
        return all
    }

    /// What net.stats needs: from the columns alone when the filter maps to them.
    func statsEntries(_ filter: NetworkFilter) throws -> [NetworkEntry] { try entries(filter, detail: .columns) }

    func entry(_ id: UInt64) throws -> NetworkEntry? {
        if let db = try database() {
            try flush()
            do { return try db.entry(id) } catch { throw CommandError("\(error)") }
        }
        return store.entry(id)
    }

    func count() throws -> Int {
        if let db = try database() {
            try flush()
            do { return try db.count() } catch { throw CommandError("\(error)") }
        }
        return store.count
    }

    /// The newest `n` entries, newest first.
    func recent(_ n: Int) throws -> [NetworkEntry] {
        if let db = try database() {
            try flush()
            do { return try db.page(filter: NetworkFilter.all, limit: n, detail: .columns, descending: true).entries } catch {
                throw CommandError("\(error)")
            }
        }
        return store.entries().suffix(n).reversed()
    }

    /// Empties the log (and the persisted one). Returns how many entries it held.
    func clear() throws -> Int {
        let held = store.count
        store.clear()
        guard let db = try database() else { return held }
        do { return try db.clear() } catch { throw CommandError("cannot clear the persisted network log: \(error)") }
    }
}
