import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

enum TemporaryDirectory {
    /// $TMPDIR, or /tmp.
    static var path: String {
        guard let t = getenv("TMPDIR"), t.pointee != 0 else { return "/tmp" }
        return String(cString: t)
    }
}

/// A plugin that registers commands only, known from its registry record
/// alone: its commands are listed from the record (RegistryImage), and a
/// DeferredPlugin is made for it (`promoted`, under the host's lock) the
/// first time one of them is looked up. A thousand such plugins cost a
/// start one of these each and their ids in the plugin list.
final class RegistryOnlyPlugin: @unchecked Sendable {
    let image: RegistryImage
    /// Its record's index in the image.
    let record: Int
    /// The file it was found as (its path made when asked for).
    private let candidate: Host.Candidate
    var promoted: DeferredPlugin?

    init(image: RegistryImage, record: Int, candidate: Host.Candidate) {
        self.image = image
        self.record = record
        self.candidate = candidate
    }

    /// As shown (the candidate's path).
    var path: String { candidate.shown }
    /// Its commands' indices in `image.commands`, in the record's order.
    var commands: Range<Int> {
        let r = image.records[record].commands
        return Int(r.lowerBound)..<Int(r.upperBound)
    }
    /// The full name of command `n` (an index in `commands`).
    func fullName(ofCommand n: Int) -> String { image.fullName(image.records[record].shortName, image.commands[n].name) }

    /// Made when asked for: a start that lists the plugin needs neither.
    var id: String { image.string(image.records[record].id) }
    var shortName: String { image.string(image.records[record].shortName) }
    func hasShortName(_ prefix: Substring.UTF8View) -> Bool { image.text(image.records[record].shortName, equals: prefix) }
    /// Made when asked for (`pincer plugins`, a message), from the record's
    /// payload; a damaged one gives what the index knows.
    var info: PluginInfo {
        image.payload(at: record)?.plugin.map { image.info(of: $0, path: path) }
            ?? PluginInfo(id: id, shortName: shortName, name: shortName, version: "", summary: "", abiMajor: PINCER_ABI_MAJOR,
                          abiMinor: PINCER_ABI_MINOR, path: path)
    }
}

/// A plugin known from the registry but not loaded: its sections and
/// entries are in the host's tables as placeholders, its commands stay
/// registry records (listed from them) until one is looked up by name, so
/// listing, help, completion and search need no plugin code. The first call
/// that needs the plugin (a command, an entry's value, its service, an
/// event it listens to) loads it, and its init's registrations replace the
/// placeholders.
final class DeferredPlugin: @unchecked Sendable {
    enum State { case pending, loading, loaded, failed(String) }

    let info: PluginInfo
    let key: FileKey
    /// Its registry record, whose command records stand for its commands
    /// until `commandsInTable`.
    let scanned: ScannedPlugin
    /// Its commands are in the host's table (as placeholders, or registered
    /// by its init); guarded by the host's lock.
    var commandsInTable = false
    /// What its init published and looked up: a plugin that looks up a
    /// service in init extends it (a database adapter registering with the
    /// browser), so loading the publisher loads it too.
    let services: [String]
    let usesServices: [String]
    /// Its entries follow what is stored (its init read its settings, or it
    /// has sync_entries): it is loaded before the host lists entries.
    let entriesFollowState: Bool
    weak var host: Host?
    /// Recursive: a plugin's init may look up the service of another
    /// deferred plugin, whose init may in turn reach this one. Made by the
    /// first load (under `lockMaking`): a thousand plugins that are not
    /// used need no lock each.
    private var loadingLock: Lock?
    private static let lockMaking = Lock()
    private var loading: Lock {
        DeferredPlugin.lockMaking.withLock {
            if let loadingLock { return loadingLock }
            let made = Lock(recursive: true)
            loadingLock = made
            return made
        }
    }
    /// Changed only under `loading`.
    private var state = State.pending
    /// The placeholders' gate; never taken, since a placeholder calls
    /// nothing, so one serves every deferred plugin (a lock each was a
    /// thousand allocations on every start).
    var gate: Lock { DeferredPlugin.placeholderGate }
    private static let placeholderGate = Lock(recursive: true)
    /// Entries whose plugin wants to hear of a changed host-kept value (a
    /// `changed` callback): setting one loads the plugin; others need not.
    var entriesCallingBack: Set<String> = []

    init(info: PluginInfo, key: FileKey, scanned: ScannedPlugin, host: Host) {
        self.entriesFollowState = scanned.registersFromSettings || scanned.syncsEntries
        self.info = info
        self.key = key
        self.scanned = scanned
        self.services = scanned.services
        self.usesServices = scanned.usesServices
        self.host = host
    }

    var isPending: Bool {
        // Without a lock no load has begun.
        guard let lock = DeferredPlugin.lockMaking.withLock({ loadingLock }) else { return true }
        return lock.withLock { if case .pending = state { return true } else { return false } }
    }

    /// Loads the plugin unless it is loaded (or loading on this thread).
    func load(shutDownAfter dependent: String? = nil) throws(CommandFailure) {
        let loading = self.loading
        loading.lock()
        defer { loading.unlock() }
        switch state {
        case .loaded, .loading: return
        case .failed(let why): throw CommandFailure(status: PINCER_FAILED, message: why)
        case .pending: state = .loading
        }
        guard let host else {
            state = .failed("the host of plugin \(info.id) is gone")
            throw CommandFailure(status: PINCER_FAILED, message: "the host of plugin \(info.id) is gone")
        }
        if let why = host.materialize(self, shutDownAfter: dependent) {
            state = .failed(why)
            throw CommandFailure(status: PINCER_FAILED, message: why)
        }
        state = .loaded
        host.loadExtensions(of: self)
    }

    func command(named name: String) throws(CommandFailure) -> Command {
        try load()
        guard let command = host?.command(named: name), !command.isDeferred else {
            throw CommandFailure(status: PINCER_NOT_FOUND, message: "\(name) is no longer registered by \(info.id) (\(info.path) changed since it was scanned; the next run scans it again)")
        }
        return command
    }

    func entry(id: String) throws(CommandFailure) -> Entry {
        try load()
        guard let entry = host?.entry(id: id), entry.deferred == nil else {
            throw CommandFailure(status: PINCER_NOT_FOUND, message: "\(id) is no longer registered by \(info.id) (\(info.path) changed since it was scanned; the next run scans it again)")
        }
        return entry
    }
}

extension Host {
    // MARK: the shell's start-up: from the registry

    /// Learns every candidate plugin from the registry, scanning in a child
    /// process the files it does not know (or that changed since), and
    /// registers placeholders instead of loading them. Files the scanner
    /// cannot handle (it is missing) are loaded here as `loadAll()` does.
    /// Returns the number of plugins refused.
    @discardableResult
    public func loadAllUsingRegistry() -> Int {
        let before = failures.count
        let stateDirectory = options.stateDirectory
        // The registry is read first (its directory snapshots spare listing
        // directories again), and the candidates stat'ed, on this thread:
        // with a thousand plugins each takes about a millisecond, and a
        // second thread, measured here, waited one to two milliseconds for a
        // processor (an idle virtual CPU), longer than the work it took over.
        let image = PluginRegistry.readImage(stateDirectory: stateDirectory)
        let survey = surveyCandidates(known: image)
        let candidates = survey.files
        defer { holdRegistry(image, candidates) }
        let recordCount = image?.records.count ?? 0
        // The file lists the candidates in the order they had when it was
        // written, which is nearly always their order now: each is matched
        // against the next record, and a table by path is made only once
        // the two orders part.
        var next = 0
        var byPath: [String: Int]?
        func recordIndex(for path: String) -> Int? {
            guard let image else { return nil }
            if next < recordCount, image.text(image.records[next].path, equals: path) {
                next += 1
                return next - 1
            }
            if byPath == nil {
                byPath = Dictionary(image.records.indices.map { (image.string(image.records[$0].path), $0) }, uniquingKeysWith: { _, last in last })
            }
            return byPath?[path]
        }
        // Per candidate: the index of the record that describes it as it is now.
        let current: [Int?] = candidates.map { c in
            switch c {
            case .known(let k, _, _):
                // Matched (and found current) by the survey.
                next = k + 1
                return k
            case .file(_, let canonical, let key):
                guard let image, let k = recordIndex(for: canonical), let now = key ?? FileKey.current(canonical), image.isCurrent(k, for: now) else {
                    return nil
                }
                return k
            }
        }
        let missing = candidates.indices.filter { current[$0] == nil }.map { candidates[$0].canonical }
        var changed = !missing.isEmpty || recordCount != candidates.count || survey.directoriesChanged
        var scanned: [String: RegistryRecord] = [:]
        if !missing.isEmpty, let scanner = options.scanner {
            var providers: [String: String] = [:]
            if let image {
                for case let k? in current where image.records[k].kind == .plugin {
                    guard let p = image.payload(at: k), let plugin = p.plugin else { continue }
                    for s in image.strings(plugin.services, of: p) { providers[s] = image.string(image.records[k].path) }
                }
            }
            // The scan runs against an empty scratch state directory: it must
            // not touch the user's state (a store it set aside would warn no one),
            // and a registration that follows stored settings is marked as such.
            let scratch = Host.makeScratchDirectory()
            defer { if let scratch { Host.removeTree(scratch) } }
            let request = PluginScanner.Request(paths: missing, providers: providers, stateDirectory: scratch ?? "/nonexistent/pincer-scan",
                                                scanner: scanner, timeout: options.scanTimeout, progress: options.scanProgress)
            if let first = PluginScanner.scan(request) {
                scanned = first
                // A plugin refused for want of a service that a file scanned
                // after it publishes is scanned once more, with that file known.
                for case .plugin(let p)? in scanned.values.map(\.outcome) { for s in p.services { providers[s] = p.info.path } }
                let retry = missing.filter { path in
                    guard case .refused(_, _, let uses)? = scanned[path]?.outcome else { return false }
                    return uses.contains { providers[$0] != nil }
                }
                if !retry.isEmpty {
                    var again = request
                    again.paths = retry
                    again.providers = providers
                    again.progress = nil
                    for (path, record) in PluginScanner.scan(again) ?? [:] { scanned[path] = record }
                }
            } else {
                log(.debug, plugin: Host.namespace, "the plugin scanner \(scanner) could not be started; loading plugins in this process")
                changed = false
            }
        }
        if changed {
            // A record whose payload turned out damaged is left out: scanned again next time.
            let records = candidates.indices.compactMap { i in current[i].flatMap { image!.record(at: $0) } ?? scanned[candidates[i].canonical] }
            if let why = PluginRegistry.write(records, directories: survey.directories, stateDirectory: stateDirectory) {
                log(.debug, plugin: Host.namespace, "the plugin registry was not saved (\(why)); the next start scans again")
            }
        }
        // Every plugin comes from a registry whose records are distinct,
        // into a host with none yet: none can clash with another by id or
        // short name, so none is checked (the others' checks come when one is looked up).
        let knownDistinct = image?.distinct == true && missing.isEmpty && recordCount == candidates.count && hasNoPlugins
        reserveRegistrations(plugins: candidates.count)
        // Commands-only plugins that cannot clash go in together, under one
        // lock, before the next plugin of another kind (the order is kept).
        var distinctKnown: [RegistryOnlyPlugin] = []
        func registerDistinctKnown() {
            if !distinctKnown.isEmpty { registerRegistryOnly(distinct: distinctKnown) }
            distinctKnown.removeAll()
        }
        for (i, candidate) in candidates.enumerated() {
            if let k = current[i], let image {
                let kind = image.records[k].kind
                if kind != .onlyCommands { registerDistinctKnown() }
                switch kind {
                case .onlyCommands:
                    let known = RegistryOnlyPlugin(image: image, record: k, candidate: candidate)
                    if knownDistinct {
                        distinctKnown.append(known)
                    } else if let collision = registerRegistryOnly(known) {
                        refuse(path: candidate.shown, pluginID: known.id, collision)
                    }
                case .plugin:
                    // A damaged payload: the plugin itself knows better.
                    guard let plugin = image.scanned(at: k, path: candidate.shown) else { load(path: candidate.shown); continue }
                    register(prepareRegistration(plugin, key: image.key(at: k), shownAs: candidate.shown))
                case .refused:
                    guard let refusal = image.payload(at: k)?.refusal else { load(path: candidate.shown); continue }
                    refuse(path: candidate.shown, pluginID: refusal.pluginID.map(image.string), image.string(refusal.reason))
                }
                continue
            }
            registerDistinctKnown()
            switch scanned[candidate.canonical]?.outcome {
            case .refused(let id, let reason, _)?: refuse(path: candidate.shown, pluginID: id, reason)
            case .plugin(let p)?: register(prepareRegistration(p, key: scanned[candidate.canonical]!.key, shownAs: candidate.shown))
            case nil: load(path: candidate.shown)
            }
        }
        registerDistinctKnown()
        return failures.count - before
    }

    /// A scanned plugin's placeholder and entries, made before they go in the tables.
    struct DeferredRegistration {
        let plugin: DeferredPlugin
        let entries: [Entry]
    }

    /// Makes a scanned plugin's placeholder and its entries' placeholders
    /// (its commands stay records, made into placeholders when looked up).
    private func prepareRegistration(_ scanned: ScannedPlugin, key: FileKey, shownAs path: String) -> DeferredRegistration {
        let i = scanned.info
        let info = i.path == path ? i : PluginInfo(id: i.id, shortName: i.shortName, name: i.name, version: i.version, summary: i.summary,
                                                   abiMajor: i.abiMajor, abiMinor: i.abiMinor, path: path)
        let plugin = DeferredPlugin(info: info, key: key, scanned: scanned, host: self)
        let entries = scanned.entries.map { e in
            Entry(fullID: "\(info.shortName).\(e.localID)", localID: e.localID, kind: e.kind, sectionID: e.section, title: e.title,
                  summary: e.summary, defaultValue: e.defaultValue, choices: e.choices, isSecret: e.isSecret, command: e.command,
                  pluginID: info.id, read: nil, changed: nil, set: nil, context: nil, gate: plugin.gate,
                  isPluginValue: e.isPluginValue, deferred: plugin)
        }
        if scanned.entries.contains(where: \.hasChanged) {
            plugin.entriesCallingBack = Set(scanned.entries.filter(\.hasChanged).map { "\(info.shortName).\($0.localID)" })
        }
        return DeferredRegistration(plugin: plugin, entries: entries)
    }

    /// Puts a prepared plugin in the tables, refusing it for the collisions its init would have met here.
    private func register(_ made: DeferredRegistration) {
        let info = made.plugin.info
        if let collision = deferRegistrations(made.plugin, scanned: made.plugin.scanned, entries: made.entries) {
            refuse(path: info.path, pluginID: info.id, collision)
        }
    }

    /// Called by DeferredPlugin.load: loads the file for real. Returns why
    /// it could not be loaded, or nil.
    func materialize(_ plugin: DeferredPlugin, shutDownAfter dependent: String?) -> String? {
        let path = plugin.info.path
        var stale = true
        if let now = FileKey.current(plugin.key.path), now.sameStat(as: plugin.key) {
            stale = plugin.key.buildID != nil && ELFBuildID.read(path: plugin.key.path) != plugin.key.buildID
        }
        if stale {
            log(.debug, plugin: Host.namespace, "\(path) changed since it was scanned; loading it as it is now, and scanning it again next time")
            forgetRegistryRecord(plugin.key.path)
        }
        let before = failures.count
        log(.debug, plugin: Host.namespace, "loading \(plugin.info.id) from \(path) on first use")
        load(path: path, shutDownAfter: dependent)
        let failure = failures.dropFirst(before).first { $0.path == path }
        dropPlaceholders(of: plugin)
        if let failure { return "plugin \(plugin.info.id) could not be loaded: \(failure.reason)" }
        return nil
    }

    /// Loads the deferred plugins whose init looks up a service `plugin` publishes.
    func loadExtensions(of plugin: DeferredPlugin) {
        guard !plugin.services.isEmpty else { return }
        for other in deferredPlugins where other.isPending && other.usesServices.contains(where: plugin.services.contains) {
            do { try other.load() } catch { log(.debug, plugin: Host.namespace, error.message) }
        }
    }

    static func makeScratchDirectory() -> String? {
        let base = TemporaryDirectory.path
        var template = Array("\(base)/pincer-scan-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
    }

    /// Removes a directory the scanner had, with whatever plugins left in it.
    static func removeTree(_ path: String, depth: Int = 0) {
        var st = stat()
        guard depth < 32, lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in listDirectory(path) { removeTree("\(path)/\(name)", depth: depth + 1) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    private func forgetRegistryRecord(_ key: String) {
        let stateDirectory = options.stateDirectory
        var records = PluginRegistry.read(stateDirectory: stateDirectory)
        guard records.removeValue(forKey: key) != nil else { return }
        PluginRegistry.write(Array(records.values).sorted { $0.key.path < $1.key.path }, stateDirectory: stateDirectory)
    }

    // MARK: the scanner's side (in the child process)

    /// What the file at `path` registers, loading it into this (scanner) host.
    func scan(path: String) -> RegistryRecord {
        guard var key = FileKey.current(path) else {
            return PluginScanner.refused(path, "cannot read the file: \(String(cString: strerror(errno)))")
        }
        key.buildID = ELFBuildID.read(path: path)
        if !plugins.contains(where: { $0.path == path }) {
            let before = failures.count
            load(path: path)
            if let failure = failures.dropFirst(before).last {
                let uses = failure.pluginID.map { serviceUses(of: $0) } ?? []
                return RegistryRecord(key: key, outcome: .refused(pluginID: failure.pluginID, reason: failure.reason, usesServices: uses))
            }
        }
        guard let info = plugins.first(where: { $0.path == path }) else {
            return RegistryRecord(key: key, outcome: .refused(pluginID: nil, reason: "loaded, but registered no plugin"))
        }
        return RegistryRecord(key: key, outcome: .plugin(registrations(of: info)))
    }
}
