// The network logger (after Scyther's network logging, Windshield's privacy
// defaults and byte budgets, and iOSDevelopmentTools' redact-before-store).
// Exchanges arrive through "pincer.network/1" (SDK/include/pincer/network.h),
// from PincerNetworkCapture's URLSession protocol or any other recorder, and
// from HAR imports; the log itself is the NetworkLog module.
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

    func register(with host: PluginHost) throws {
        let config = host.storedDocument(LoggerConfig.key, what: "network logger settings", decode: LoggerConfig.decode) ?? LoggerConfig()
        let store = NetworkStore(limits: config.limits, rules: config.rules, redactor: Redactor(extraNames: config.redactNames))
        let logger = LoggerState(host: host, store: store, config: config)
        logger.openPersistedLog()
        let service = NetworkService(logger: logger)
        self.service = service

        store.listen { entry in
            host.emit(PINCER_NETWORK_ENTRY_EVENT, payload: JSON.object([("id", .uint(entry.id)), ("state", .string(entry.state.rawValue))]).serialized())
        }
        try host.addValueRow(id: "requests", title: "Logged requests", section: PINCER_SECTION_NETWORKING,
                             summary: "Requests in the log (failures: status >= 400 or no response)") {
            let all = store.entries()
            return "\(all.count) (\(all.filter(\.isFailure).count) failed, \(all.filter { $0.state == .pending }.count) pending)"
        }
        try host.addPage(id: "recent", title: "Recent requests", section: PINCER_SECTION_NETWORKING,
                         summary: "The last 20 requests, newest first") {
            store.entries().suffix(20).reversed().map { e in
                ("#\(e.id) \(e.method) \(e.status.map(String.init) ?? e.state.rawValue)", Optional(e.url))
            }
        }
        try host.addPage(id: "stats", title: "Traffic stats", section: PINCER_SECTION_NETWORKING, summary: "As net.stats") {
            TrafficStats(store.entries()).json.objectValue?.compactMap { key, value in
                switch value {
                case .array, .object: nil
                default: (key, Optional(value.stringValue ?? value.serialized()))
                }
            } ?? []
        }
        try host.addAction(id: "clear", title: "Clear the log", command: "clear", section: PINCER_SECTION_NETWORKING)
        try NetworkCommands(logger: logger).register(with: host)
        try host.publishService(PINCER_NETWORK_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }
}

/// The store plus what the commands change about it: configuration and the
/// persisted log file.
final class LoggerState: @unchecked Sendable {
    let host: PluginHost
    let store: NetworkStore
    private let config: Mutex<LoggerConfig>
    private let persistence = Mutex<UInt64?>(nil)
    /// One configuration change at a time (commands and the service's
    /// add_redact_name may run on different threads).
    private let updating = Mutex<Void>(())

    init(host: PluginHost, store: NetworkStore, config: LoggerConfig) {
        self.host = host
        self.store = store
        self.config = Mutex(config)
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
            if before.persistDays != next.persistDays { openPersistedLog(loadEntries: false) }
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

    /// The log file in the state directory, when the host tells where that is.
    var logFilePath: String? { host.stateDirectory.map { $0 + "/network-log.ndjson" } }

    /// With persistence on: drops expired lines, loads the rest into the
    /// store, then appends each finished entry as it comes.
    func openPersistedLog(loadEntries: Bool = true) {
        persistence.withLock { token in
            if let token { store.stopListening(token) }
            token = nil
        }
        let days = current.persistDays
        guard days > 0, let path = logFilePath else { return }
        let cutoff = Clock.now() - Double(days) * 86_400
        do {
            let contents = try LogFile.compact(path, keepingSince: cutoff)
            if loadEntries { store.restore(contents.entries) }
            if !contents.skipped.isEmpty {
                host.log(.warning, "\(path): skipped \(contents.skipped.count) damaged line(s), first at line \(contents.skipped[0].line): \(contents.skipped[0].reason)")
            }
        } catch {
            // No file yet is the normal first run.
            if LogFileProbe.exists(path) { host.log(.error, "cannot read the persisted network log: \(error)") }
        }
        let host = self.host
        let token = store.listen { entry in
            guard entry.state != .pending else { return }
            do { try LogFile.append(entry, to: path) } catch { host.log(.error, "cannot persist entry \(entry.id): \(error)") }
        }
        persistence.withLock { $0 = token }
    }
}

enum LogFileProbe {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
