import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

/// A failure the shell maps to an exit code.
public struct HostError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case notFound, invalidArgument, failed }
    public let kind: Kind
    public let message: String
    public var description: String { message }
}

/// The plugin host: loads plugins, keeps what they register, and is the
/// other side of every host API call.
public final class Host: @unchecked Sendable {
    public struct Options: Sendable {
        /// Plugin files or directories, searched in order after the built-in directory.
        public var pluginPaths: [String] = []
        /// Where the built-in plugins are (the executable's directory); nil to skip them.
        public var builtinDirectory: String? = Host.executableDirectory()
        /// Directory of the settings store.
        public var stateDirectory: String
        /// Receives every log line; the default prints warnings and errors to stderr.
        public var logHandler: @Sendable (LogRecord) -> Void = Host.standardErrorLog(minimum: .warning)
        /// The plugin scanner `loadAllUsingRegistry` runs (beside the executable); nil to load in process.
        public var scanner: String? = Host.executableDirectory().map { "\($0)/\(PluginScanner.executableName)" }
        /// Seconds a plugin's init may take while being scanned before it is killed and refused.
        public var scanTimeout: Double = 10
        /// Told how far a scan has come (the shell shows it on a terminal).
        public var scanProgress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

        public init(stateDirectory: String) { self.stateDirectory = stateDirectory }
    }

    public static let namespace = "pincer"
    public let options: Options
    public let events = EventBus()

    private let lock = Lock()
    private var runtimes: [PluginRuntime] = []
    /// Every plugin, loaded or known from the registry, in the order it came.
    private var pluginOrder = PluginList()
    /// Registry placeholders (DeferredLoading.swift): who publishes a
    /// service, listens to a topic or owns a section, until loaded.
    private var pendingServices: [String: DeferredPlugin] = [:]
    private var pendingTopics: [(topic: String, plugin: DeferredPlugin)] = []
    private var placeholderSections: [String: DeferredPlugin] = [:]
    private var deferredList: [DeferredPlugin] = []
    /// Plugins of commands only, known from their registry records alone
    /// until one is needed (DeferredLoading.swift).
    private var registryOnly: [RegistryOnlyPlugin] = []
    /// The registry and the candidates as read at start, held until the
    /// process ends: freeing a thousand plugins' worth on the way costs
    /// more than keeping them.
    private var heldRegistry: (RegistryImage?, [Candidate]) = (nil, [])

    func holdRegistry(_ image: RegistryImage?, _ candidates: [Candidate]) { lock.withLock { heldRegistry = (image, candidates) } }
    /// In the scanner: service -> plugin file to load when a plugin's init asks for it.
    private var scanProviders: [String: String]?
    /// In the scanner: the services each plugin looked up, by plugin id.
    private var serviceUses: [String: [String]] = [:]
    /// In the scanner: plugins that used their settings in init, so what
    /// they register may depend on what is stored.
    private var settingsUsers: Set<String> = []
    private var failureList: [PluginFailure] = []
    private var sectionTable: [String: Section] = [:]
    private var commandTable: [String: Command] = [:]
    private var entryTable: [String: Entry] = [:]
    private var entryOrder: [String] = []
    private var serviceTable: [String: (table: UnsafeRawPointer, owner: String)] = [:]
    private var store: SettingsStore?
    private var storeFailure: StoreError?
    private var isShutDown = false

    public init(options: Options) {
        self.options = options
        for s in Section.standard { sectionTable[s.id] = s }
        events.prepareDelivery { [weak self] topic in self?.loadSubscribers(of: topic) }
    }

    deinit { shutdown() }

    // MARK: settings

    /// The settings store, opened on first use.
    public func settings() throws(StoreError) -> SettingsStore {
        if let s = lock.withLock({ store }) { return s }
        let opened: SettingsStore
        do { opened = try SettingsStore(directory: options.stateDirectory) } catch {
            lock.withLock { storeFailure = error }
            throw error
        }
        return lock.withLock {
            if let existing = store { return existing }
            store = opened
            if let warning = opened.setAsideWarning { log(.warning, plugin: Host.namespace, warning) }
            return opened
        }
    }

    /// Why the settings store could not be opened, if an attempt failed in
    /// this process (a plugin's read included): a caller turns failures that
    /// follow from it into "store error" rather than a plugin's failure.
    public var settingsFailure: StoreError? { lock.withLock { storeFailure } }

    // MARK: logging

    /// Writes records at `minimum` or above to standard error.
    public static func standardErrorLog(minimum: LogLevel) -> @Sendable (LogRecord) -> Void {
        { record in
            guard record.level >= minimum else { return }
            writeToStandardError(record)
        }
    }

    private static func writeToStandardError(_ record: LogRecord) {
        let line = "pincer: \(record.level): [\(record.source)] \(record.message)\n"
        var bytes = Array(line.utf8)
        _ = write(2, &bytes, bytes.count)
    }

    func log(_ level: LogLevel, plugin: String, _ message: String) {
        options.logHandler(LogRecord(level: level, source: plugin, message: message))
    }

    // MARK: what is loaded

    /// Loaded plugins and those known from the registry (not loaded yet).
    public var plugins: [PluginInfo] { lock.withLock { pluginOrder.all } }

    /// Whether the plugin's library is loaded and its init ran (not only known from the registry).
    public func isLoaded(pluginID: String) -> Bool { lock.withLock { runtimes.contains { $0.info.id == pluginID } } }
    public var failures: [PluginFailure] { lock.withLock { failureList } }

    /// Every command, sorted by name. Makes the placeholders of every
    /// deferred plugin; listings that need no Command use `commandListing()`.
    public var commands: [Command] {
        lock.withLock {
            for i in registryOnly.indices { _ = promoteLocked(registryOnly[i]) }
            for plugin in deferredList where !plugin.commandsInTable { makePlaceholderCommandsLocked(plugin) }
            return commandTable.values.sorted { $0.fullName < $1.fullName }
        }
    }

    /// The names of every command, sorted, from the tables and the deferred
    /// plugins' registry records (no placeholder is made).
    public var commandNames: [String] { commandListing().map(\.fullName) }

    /// A command by full name. A name the registry does not know, under
    /// the prefix of a plugin not loaded yet, loads that plugin and asks again
    /// (its init may register more than it did when it was scanned).
    public func command(named name: String) -> Command? {
        if let command = lock.withLock({ () -> Command? in
            if let command = commandTable[name] { return command }
            guard let owner = deferredOwnerLocked(of: name), !owner.commandsInTable else { return nil }
            makePlaceholderCommandsLocked(owner)
            return commandTable[name]
        }) { return command }
        guard loadOwner(of: name) else { return nil }
        return lock.withLock { commandTable[name] }
    }

    /// The deferred plugin whose short name prefixes `name`, if any. A
    /// linear search: it runs for one name, and a table by short name would
    /// cost every start a thousand hashes.
    private func deferredOwnerLocked(of name: String) -> DeferredPlugin? {
        guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let prefix = Substring(name.utf8[..<dot])
        if let plugin = deferredList.first(where: { $0.info.shortName == prefix }) { return plugin }
        return registryOnly.first { $0.promoted == nil && $0.hasShortName(prefix.utf8) }.map(promoteLocked)
    }

    /// The deferred plugin of a plugin known from its record alone, made
    /// the first time it is needed (its commands are looked up or listed as Commands).
    private func promoteLocked(_ known: RegistryOnlyPlugin) -> DeferredPlugin {
        if let plugin = known.promoted { return plugin }
        let info = known.info
        // A damaged payload gives no records: the plugin is loaded when one of its commands is looked up.
        let plugin = DeferredPlugin(info: info, key: known.image.key(at: known.record),
                                    scanned: known.image.scanned(at: known.record, path: known.path) ?? ScannedPlugin(info: info), host: self)
        known.promoted = plugin
        deferredList.append(plugin)
        return plugin
    }

    /// One line of a command listing: a registered command (a placeholder
    /// included), or the record of a command of a deferred plugin whose
    /// placeholders were not made.
    /// Small (a name and two words), since a thousand of them are sorted.
    struct ListedCommand {
        enum Source { case command(Command), record(DeferredPlugin, Int), registry(RegistryOnlyPlugin, Int) }
        let fullName: String
        let source: Source
        var summary: String {
            switch source {
            case .command(let c): c.summary
            case .record(let plugin, let i): plugin.scanned.commands[i].summary
            case .registry(let known, let i): known.image.string(known.image.commands[i].summary)
            }
        }
        var signatureText: String {
            switch source {
            case .command(let c): c.signature.text
            case .record(let plugin, let i): plugin.scanned.commands[i].signature
            case .registry(let known, let i): known.image.string(known.image.commands[i].signature)
            }
        }
    }

    /// Every command in name order, as `commands` sorts them, without making
    /// a Command for a deferred plugin: `pincer commands`, completion and
    /// search read a thousand plugins' commands from their records.
    func commandListing() -> [ListedCommand] {
        lock.withLock {
            var list: [ListedCommand] = []
            list.reserveCapacity(commandTable.count + deferredList.count + registryOnly.count)
            for c in commandTable.values { list.append(ListedCommand(fullName: c.fullName, source: .command(c))) }
            let tableEmpty = commandTable.isEmpty
            for plugin in deferredList where !plugin.commandsInTable {
                let commands = plugin.scanned.commands
                for i in commands.indices {
                    let fullName = plugin.info.shortName + "." + commands[i].name
                    // While it loads on another thread its init's commands come in.
                    guard tableEmpty || commandTable[fullName] == nil else { continue }
                    list.append(ListedCommand(fullName: fullName, source: .record(plugin, i)))
                }
            }
            for known in registryOnly where known.promoted == nil {
                for n in known.commands {
                    let fullName = known.fullName(ofCommand: n)
                    guard tableEmpty || commandTable[fullName] == nil else { continue }
                    list.append(ListedCommand(fullName: fullName, source: .registry(known, n)))
                }
            }
            list.sort { $0.fullName < $1.fullName }
            return list
        }
    }

    /// Puts a pending deferred plugin's commands in the table as placeholders
    /// (Command `.deferred`), the first time one of them is looked up.
    private func makePlaceholderCommandsLocked(_ plugin: DeferredPlugin) {
        plugin.commandsInTable = true
        let info = plugin.info
        let scanned = plugin.scanned
        for (n, c) in scanned.commands.enumerated() {
            guard let signature = scanned.signature(ofCommand: n) else { continue }
            let fullName = "\(info.shortName).\(signature.name)"
            // Its init registered them already if it ran.
            guard commandTable[fullName] == nil else { continue }
            commandTable[fullName] = Command(fullName: fullName, signature: signature, summary: c.summary, details: c.details,
                                             changesState: c.changesState, returnsJSON: c.returnsJSON, pluginID: info.id,
                                             implementation: .deferred(plugin), context: nil, gate: plugin.gate)
        }
    }

    /// Whether the plugin's commands are in the table (placeholders made, or it is loaded).
    func hasCommandsInTable(_ plugin: DeferredPlugin) -> Bool { lock.withLock { plugin.commandsInTable } }


    /// An entry by full id. One the host does not know, under the prefix
    /// of a plugin whose entries follow its state, asks that plugin for
    /// them (loading it first if it is known from the registry only).
    public func entry(id: String) -> Entry? {
        if let entry = lock.withLock({ entryTable[id] }) { return entry }
        let loaded = loadOwner(of: id)
        let synced = syncOwner(of: id)
        guard loaded || synced else { return nil }
        return lock.withLock { entryTable[id] }
    }

    /// Every entry. Plugins whose entries follow what is stored (one per
    /// feature flag: sync_entries, or an init that read settings) are
    /// loaded and asked for them first.
    public var entries: [Entry] {
        for plugin in deferredPlugins where plugin.entriesFollowState && plugin.isPending { try? plugin.load() }
        for runtime in lock.withLock({ runtimes.filter(\.needsSync) }) { runtime.syncEntries() }
        return lock.withLock { entryOrder.compactMap { entryTable[$0] } }
    }

    /// The entries registered so far, asking no plugin for more.
    var registeredEntries: [Entry] { lock.withLock { entryOrder.compactMap { entryTable[$0] } } }

    private func syncOwner(of name: String) -> Bool {
        guard let dot = name.firstIndex(of: ".") else { return false }
        let prefix = name[..<dot]
        guard let runtime = lock.withLock({ runtimes.first { $0.info.shortName == prefix } }), runtime.needsSync else { return false }
        runtime.syncEntries()
        return true
    }

    private func loadOwner(of name: String) -> Bool {
        guard let owner = lock.withLock({ deferredOwnerLocked(of: name) }), owner.isPending else { return false }
        do { try owner.load() } catch { return false }
        return true
    }

    /// In the scanner: the services a plugin's init looked up.
    func serviceUses(of pluginID: String) -> [String] { lock.withLock { serviceUses[pluginID] ?? [] } }

    func noteSettingsUse(by pluginID: String) {
        lock.withLock { if scanProviders != nil { settingsUsers.insert(pluginID) } }
    }

    func sectionsByOrder() -> [Section] {
        lock.withLock { sectionTable.values.sorted { ($0.order, $0.id) < ($1.order, $1.id) } }
    }

    /// A published service's table. A service of a plugin known from the
    /// registry loads that plugin first.
    public func service(id: String) -> UnsafeRawPointer? {
        if let table = lock.withLock({ serviceTable[id]?.table }) { return table }
        return loadProvider(ofService: id, for: nil)
    }

    /// get_service from a plugin: the scanner notes what its init looks up.
    func service(id: String, for plugin: PluginRuntime) -> UnsafeRawPointer? {
        lock.withLock {
            if scanProviders != nil, !(serviceUses[plugin.info.id]?.contains(id) ?? false) { serviceUses[plugin.info.id, default: []].append(id) }
        }
        if let table = lock.withLock({ serviceTable[id]?.table }) { return table }
        return loadProvider(ofService: id, for: plugin.info.id)
    }

    private func loadProvider(ofService id: String, for dependent: String?) -> UnsafeRawPointer? {
        let (deferred, scanPath): (DeferredPlugin?, String?) = lock.withLock {
            if let d = pendingServices[id] { return (d, nil) }
            guard let path = scanProviders?[id] else { return (nil, nil) }
            scanProviders?[id] = nil // tried once
            return (nil, path)
        }
        if let deferred {
            do { try deferred.load(shutDownAfter: dependent) } catch { log(.debug, plugin: Host.namespace, "service \(id): \(error.message)") }
        } else if let scanPath, !plugins.contains(where: { $0.path == scanPath }) {
            load(path: scanPath, shutDownAfter: dependent)
        }
        return lock.withLock { serviceTable[id]?.table }
    }

    private func loadSubscribers(of topic: String) {
        let waiting = lock.withLock { pendingTopics.filter { $0.topic == topic || $0.topic == "*" }.map(\.plugin) }
        for plugin in waiting { try? plugin.load() }
    }

    // MARK: registration (called from the host API table)

    func addSection(_ record: UnsafePointer<pincer_section_t>, from plugin: PluginRuntime) -> UInt32 {
        guard record.pointee.struct_size >= UInt32(MemoryLayout<pincer_section_t>.size) else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_section: struct_size \(record.pointee.struct_size) is smaller than the \(MemoryLayout<pincer_section_t>.size) bytes of a 1.0 pincer_section_t")
        }
        let r = record.pointee
        guard let id = Identifier.string(r.id), Identifier.isName(id, max: 64) else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_section: id \(Identifier.quoted(r.id)) is not [a-z][a-z0-9_-]* of at most 64 bytes")
        }
        guard let title = Identifier.string(r.title), !title.isEmpty else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_section '\(id)': title is missing")
        }
        return lock.withLock {
            let isOwnPlaceholder = placeholderSections[id]?.info.id == plugin.info.id
            if id == Section.pinnedID || (sectionTable[id] != nil && !isOwnPlaceholder) {
                return plugin.failed(PINCER_DUPLICATE, "add_section: section id '\(id)' is already taken")
            }
            placeholderSections[id] = nil
            sectionTable[id] = Section(id: id, title: title, order: r.order, pluginID: plugin.info.id)
            return PINCER_OK
        }
    }

    /// Size of a 1.0 pincer_entry_t: the slots before `set`.
    static let entryV1Size = MemoryLayout<pincer_entry_t>.offset(of: \.set)!

    func addEntry(_ record: UnsafePointer<pincer_entry_t>, from plugin: PluginRuntime) -> UInt32 {
        let entry: Entry
        switch makeEntry(record, from: plugin, call: "add_entry") {
        case .success(let e): entry = e
        case .failure(let f): return plugin.failed(f.status, f.message)
        }
        return lock.withLock {
            guard sectionTable[entry.sectionID] != nil, entry.sectionID != Section.pinnedID else {
                return plugin.failed(PINCER_NOT_FOUND, "add_entry '\(entry.localID)': section '\(entry.sectionID)' does not exist (standard: \(Section.standard.map(\.id).joined(separator: ", ")))")
            }
            if let existing = entryTable[entry.fullID] {
                // The plugin's own registry placeholder gives way, keeping its place.
                guard existing.deferred != nil, existing.pluginID == plugin.info.id else {
                    return plugin.failed(PINCER_DUPLICATE, "add_entry '\(entry.localID)': entry id '\(entry.fullID)' is already registered")
                }
                entryTable[entry.fullID] = entry
                return PINCER_OK
            }
            entryTable[entry.fullID] = entry
            entryOrder.append(entry.fullID)
            return PINCER_OK
        }
    }

    /// Replaces an entry's record in place: order and pin stay.
    func updateEntry(_ record: UnsafePointer<pincer_entry_t>, from plugin: PluginRuntime) -> UInt32 {
        let entry: Entry
        switch makeEntry(record, from: plugin, call: "update_entry") {
        case .success(let e): entry = e
        case .failure(let f): return plugin.failed(f.status, f.message)
        }
        return lock.withLock {
            guard let old = entryTable[entry.fullID] else {
                return plugin.failed(PINCER_NOT_FOUND, "update_entry '\(entry.localID)': the plugin has no entry with this id (add it with add_entry first)")
            }
            guard old.kind == entry.kind else {
                return plugin.failed(PINCER_INVALID_ARGUMENT, "update_entry '\(entry.localID)': kind \(entry.kind.rawValue) differs from the registered \(old.kind.rawValue)")
            }
            guard sectionTable[entry.sectionID] != nil, entry.sectionID != Section.pinnedID else {
                return plugin.failed(PINCER_NOT_FOUND, "update_entry '\(entry.localID)': section '\(entry.sectionID)' does not exist")
            }
            entryTable[entry.fullID] = entry
            return PINCER_OK
        }
    }

    private struct RecordFailure: Error {
        let status: pincer_status_t
        let message: String
        init(_ status: pincer_status_t, _ message: String) { self.status = status; self.message = message }
    }

    /// Checks an entry record against its kind and copies it.
    private func makeEntry(_ record: UnsafePointer<pincer_entry_t>, from plugin: PluginRuntime, call: String) -> Result<Entry, RecordFailure> {
        let size = Int(record.pointee.struct_size)
        guard size >= Host.entryV1Size else {
            return .failure(RecordFailure(PINCER_INVALID_ARGUMENT, "\(call): struct_size \(size) is smaller than the \(Host.entryV1Size) bytes of a 1.0 pincer_entry_t"))
        }
        let r = record.pointee
        // `set` exists only in records of 1.1 and later.
        let setter: pincer_entry_set_fn_t? = size >= MemoryLayout<pincer_entry_t>.size ? r.set : nil
        func fail(_ message: String) -> Result<Entry, RecordFailure> { .failure(RecordFailure(PINCER_INVALID_ARGUMENT, message)) }
        guard let local = Identifier.string(r.id), Identifier.isName(local, max: 64) else {
            return fail("\(call): id \(Identifier.quoted(r.id)) is not [a-z][a-z0-9_-]* of at most 64 bytes")
        }
        let what = "\(call) '\(local)'"
        guard let kind = EntryKind(sdk: r.kind) else {
            return fail("\(what): kind \(r.kind) is not one of PINCER_ENTRY_VALUE...PINCER_ENTRY_PAGE (1...6)")
        }
        guard let title = Identifier.string(r.title), !title.isEmpty else { return fail("\(what): title is missing") }
        let section = Identifier.string(r.section) ?? "development"
        let pluginValue = r.flags & PINCER_ENTRY_PLUGIN_VALUE != 0
        if pluginValue {
            guard kind.isPersisted else {
                return fail("\(what): PINCER_ENTRY_PLUGIN_VALUE applies to toggle, choice and text entries, not \(kind.rawValue)")
            }
            guard r.read != nil, setter != nil else {
                return fail("\(what): a PINCER_ENTRY_PLUGIN_VALUE entry needs read and set callbacks (set is an ABI 1.1 slot; struct_size \(size))")
            }
        }
        if (kind == .value || kind == .page) && r.read == nil {
            return fail("\(what): a \(kind.rawValue) entry needs a read callback")
        }
        var choices: [String] = []
        // A plugin-valued choice may start empty (no server environment yet).
        if kind == .choice && r.choice_count == 0 && !pluginValue {
            return fail("\(what): a choice entry needs at least one choice")
        }
        if r.choice_count > 0 && (kind == .choice || kind == .text) {
            guard let list = r.choices else { return fail("\(what): choice_count is \(r.choice_count) but choices is NULL") }
            for i in 0..<Int(r.choice_count) {
                guard let c = Identifier.string(list[i]), !c.isEmpty else { return fail("\(what): choice \(i) is NULL or empty") }
                if choices.contains(c) { return fail("\(what): choice '\(c)' appears twice") }
                choices.append(c)
            }
        }
        var defaultValue = Identifier.string(r.default_value)
        switch kind {
        case .toggle:
            let d = defaultValue ?? "false"
            guard d == "true" || d == "false" else { return fail("\(what): toggle default must be \"true\" or \"false\", not \"\(d)\"") }
            defaultValue = d
        case .choice where choices.isEmpty:
            defaultValue = ""
        case .choice:
            let d = defaultValue ?? choices[0]
            guard choices.contains(d) else { return fail("\(what): default \"\(d)\" is not one of the choices \(choices)") }
            defaultValue = d
        default:
            break
        }
        var command: String?
        if kind == .action {
            guard let c = Identifier.string(r.command), !c.isEmpty else { return fail("\(what): an action entry needs a command") }
            command = c.contains(".") ? c : "\(plugin.info.shortName).\(c)"
        }
        return .success(Entry(
            fullID: "\(plugin.info.shortName).\(local)", localID: local, kind: kind, sectionID: section,
            title: title, summary: Identifier.string(r.summary) ?? "", defaultValue: defaultValue ?? "",
            choices: choices, isSecret: r.flags & PINCER_ENTRY_SECRET != 0, command: command,
            pluginID: plugin.info.id, read: r.read, changed: r.changed, set: pluginValue ? setter : nil,
            context: r.context, gate: plugin.gate))
    }

    func addCommand(_ record: UnsafePointer<pincer_command_t>, from plugin: PluginRuntime) -> UInt32 {
        guard record.pointee.struct_size >= UInt32(MemoryLayout<pincer_command_t>.size) else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_command: struct_size \(record.pointee.struct_size) is smaller than the \(MemoryLayout<pincer_command_t>.size) bytes of a 1.0 pincer_command_t")
        }
        let r = record.pointee
        guard let text = Identifier.string(r.signature) else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_command: signature is NULL")
        }
        let signature: Signature
        do {
            signature = try Signature.parse(text)
        } catch {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_command: signature \"\(text)\" does not parse: \(error)")
        }
        let implementation: Command.Implementation
        switch (r.typed, r.values) {
        case (let typed?, nil):
            do {
                implementation = .typed(typed, try CallInterface(signature: signature))
            } catch {
                return plugin.failed(PINCER_FAILED, "add_command '\(signature.name)': \(error)")
            }
        case (nil, let values?):
            implementation = .values(values)
        default:
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_command '\(signature.name)': set exactly one of `typed` and `values`")
        }
        let returnsJSON = r.flags & PINCER_COMMAND_JSON_RESULT != 0
        if returnsJSON && signature.result != .string {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "add_command '\(signature.name)': PINCER_COMMAND_JSON_RESULT needs a `-> string` result, not \(signature.result.rawValue)")
        }
        let command = Command(fullName: "\(plugin.info.shortName).\(signature.name)", signature: signature,
                              summary: Identifier.string(r.summary) ?? "", details: Identifier.string(r.details) ?? "",
                              changesState: r.flags & PINCER_COMMAND_CHANGES_STATE != 0, returnsJSON: returnsJSON, pluginID: plugin.info.id,
                              implementation: implementation, context: r.context, gate: plugin.gate,
                              runsConcurrently: r.flags & PINCER_COMMAND_CONCURRENT != 0)
        return lock.withLock {
            if let existing = commandTable[command.fullName], !(existing.isDeferred && existing.pluginID == plugin.info.id) {
                return plugin.failed(PINCER_DUPLICATE, "add_command: command '\(command.fullName)' is already registered")
            }
            commandTable[command.fullName] = command
            return PINCER_OK
        }
    }

    func publishService(id: String, table: UnsafeRawPointer, from plugin: PluginRuntime) -> UInt32 {
        guard Identifier.isServiceID(id) else {
            return plugin.failed(PINCER_INVALID_ARGUMENT, "publish_service: id '\(id)' is not of the form vendor.name/N (at most \(PINCER_SERVICE_ID_MAX) bytes)")
        }
        return lock.withLock {
            if let existing = serviceTable[id] {
                return plugin.failed(PINCER_DUPLICATE, "publish_service: '\(id)' is already published by \(existing.owner)")
            }
            if let pending = pendingServices[id], pending.info.id != plugin.info.id {
                return plugin.failed(PINCER_DUPLICATE, "publish_service: '\(id)' is already published by \(pending.info.id)")
            }
            pendingServices[id] = nil
            serviceTable[id] = (table, plugin.info.id)
            return PINCER_OK
        }
    }

    /// Removes everything a plugin registered (its init failed).
    private func dropRegistrations(of pluginID: String) {
        lock.withLock {
            commandTable = commandTable.filter { $0.value.pluginID != pluginID }
            entryTable = entryTable.filter { $0.value.pluginID != pluginID }
            entryOrder.removeAll { entryTable[$0] == nil }
            sectionTable = sectionTable.filter { $0.value.pluginID != pluginID }
            serviceTable = serviceTable.filter { $0.value.owner != pluginID }
            pendingServices = pendingServices.filter { $0.value.info.id != pluginID }
            pendingTopics.removeAll { $0.plugin.info.id == pluginID }
            placeholderSections = placeholderSections.filter { $0.value.info.id != pluginID }
            if !runtimes.contains(where: { $0.info.id == pluginID }) { pluginOrder.remove(id: pluginID) }
        }
        events.unsubscribeAll(owner: pluginID)
    }

    // MARK: registry placeholders (DeferredLoading.swift)

    /// Puts a scanned plugin's registrations in the tables as placeholders.
    /// Returns the collision that refuses it (nothing is added then), or nil.
    /// Its commands are not checked: their names begin with its short
    /// name, which no other plugin has, and they stay records until looked up.
    func deferRegistrations(_ plugin: DeferredPlugin, scanned: ScannedPlugin, entries: [Entry]) -> String? {
        let info = plugin.info
        return lock.withLock { () -> String? in
            if let clash = pluginOrder.clash(with: info) { return Host.duplicate(info, clash) }
            // The collisions its init would meet, worded as the host words them.
            func initFailed(_ why: String) -> String { "init failed (PINCER_DUPLICATE): \(why)" }
            for section in scanned.sections where section.id == Section.pinnedID || sectionTable[section.id] != nil {
                return initFailed("add_section: section id '\(section.id)' is already taken")
            }
            for entry in entries where entryTable[entry.fullID] != nil {
                return initFailed("add_entry '\(entry.localID)': entry id '\(entry.fullID)' is already registered")
            }
            for id in scanned.services {
                if let owner = serviceTable[id]?.owner ?? pendingServices[id]?.info.id {
                    return initFailed("publish_service: '\(id)' is already published by \(owner)")
                }
            }
            pluginOrder.put(info)
            deferredList.append(plugin)
            for section in scanned.sections {
                sectionTable[section.id] = Section(id: section.id, title: section.title, order: section.order, pluginID: info.id)
                placeholderSections[section.id] = plugin
            }
            for entry in entries {
                entryTable[entry.fullID] = entry
                entryOrder.append(entry.fullID)
            }
            for id in scanned.services { pendingServices[id] = plugin }
            for topic in scanned.topics { pendingTopics.append((topic, plugin)) }
            return nil
        }
    }

    static func duplicate(_ info: PluginInfo, _ clash: PluginList.Clash) -> String {
        clash.onID ? "duplicate plugin id '\(info.id)': already loaded from \(clash.other.path)"
            : "duplicate short_name '\(info.shortName)': already used by \(clash.other.id) from \(clash.other.path)"
    }

    /// Lists a plugin of commands only from its registry record: its id and
    /// short name are checked and taken (two hash lookups; none when they
    /// are `knownDistinct` from every plugin listed), and nothing else is
    /// made until it is needed. Returns the collision that refuses it, or nil.
    func registerRegistryOnly(_ known: RegistryOnlyPlugin) -> String? {
        lock.withLock {
            if let clash = pluginOrder.addIfNew(.registry(known)) { return Host.duplicate(known.info, clash) }
            registryOnly.append(known)
            return nil
        }
    }

    /// Registers plugins known to clash with none (see `appendKnownDistinct`).
    func registerRegistryOnly(distinct known: [RegistryOnlyPlugin]) {
        lock.withLock {
            for k in known { pluginOrder.appendKnownDistinct(.registry(k)) }
            registryOnly += known
        }
    }

    /// Room for what the registry is about to add, so the tables do not
    /// grow (and rehash) step by step through a thousand plugins.
    func reserveRegistrations(plugins: Int) {
        lock.withLock {
            pluginOrder.reserve(plugins)
            registryOnly.reserveCapacity(registryOnly.count + plugins)
        }
    }

    var hasNoPlugins: Bool { lock.withLock { pluginOrder.isEmpty } }

    /// Plugins registered from the registry, in order (loaded or not).
    var deferredPlugins: [DeferredPlugin] { lock.withLock { deferredList } }

    /// After a deferred plugin loaded (or failed to): removes the
    /// placeholders its init did not register again, and retires its
    /// command records. Until then a lookup on another thread may still
    /// make placeholders (its init replaces them), as it finds them while
    /// the plugin loads.
    func dropPlaceholders(of plugin: DeferredPlugin) {
        lock.withLock {
            plugin.commandsInTable = true
            commandTable = commandTable.filter { !($0.value.isDeferred && $0.value.pluginID == plugin.info.id) }
            entryTable = entryTable.filter { $0.value.deferred !== plugin }
            entryOrder.removeAll { entryTable[$0] == nil }
            for (id, owner) in placeholderSections where owner === plugin { sectionTable[id] = nil }
            placeholderSections = placeholderSections.filter { $0.value !== plugin }
            pendingServices = pendingServices.filter { $0.value !== plugin }
            pendingTopics.removeAll { $0.plugin === plugin }
            if !runtimes.contains(where: { $0.info.id == plugin.info.id }) { pluginOrder.remove(id: plugin.info.id) }
        }
    }

    /// The scanner's mode: services looked up in init are noted, and a
    /// service another file provides is loaded from it on demand.
    func beginScanning(providers: [String: String]) {
        lock.withLock { scanProviders = providers }
    }

    /// What a loaded plugin registered, for its registry record.
    func registrations(of info: PluginInfo) -> ScannedPlugin {
        let scanned = ScannedPlugin(info: info)
        lock.withLock {
            scanned.sections = sectionTable.values.filter { $0.pluginID == info.id }.sorted { $0.id < $1.id }
                .map { ScannedPlugin.SectionRecord(id: $0.id, title: $0.title, order: $0.order) }
            scanned.entries = entryOrder.compactMap { entryTable[$0] }.filter { $0.pluginID == info.id }.map { e in
                ScannedPlugin.EntryRecord(localID: e.localID, kind: e.kind, section: e.sectionID, title: e.title, summary: e.summary,
                                          defaultValue: e.defaultValue, choices: e.choices, isSecret: e.isSecret, command: e.command,
                                          isPluginValue: e.isPluginValue, hasChanged: e.changed != nil)
            }
            scanned.commands = commandTable.values.filter { $0.pluginID == info.id }.sorted { $0.fullName < $1.fullName }.map { c in
                ScannedPlugin.CommandRecord(signature: c.signature.text, summary: c.summary, details: c.details,
                                            changesState: c.changesState, returnsJSON: c.returnsJSON, name: c.signature.name,
                                            listing: ArraySlice(Host.listing(of: c)))
            }
            scanned.services = serviceTable.filter { $0.value.owner == info.id }.map(\.key).sorted()
            scanned.usesServices = serviceUses[info.id] ?? []
            scanned.registersFromSettings = settingsUsers.contains(info.id)
            scanned.syncsEntries = runtimes.first { $0.info.id == info.id }?.syncsEntries ?? false
        }
        scanned.topics = events.topics(owner: info.id)
        return scanned
    }

    // MARK: lifecycle

    /// Adds a plugin the loader validated, runs its init, and keeps it or records why not.
    func start(_ runtime: PluginRuntime, shutDownAfter dependent: String? = nil) {
        let duplicate: String? = lock.withLock {
            if let other = runtimes.first(where: { $0.info.id == runtime.info.id }) {
                return "duplicate plugin id '\(runtime.info.id)': already loaded from \(other.info.path)"
            }
            if let other = runtimes.first(where: { $0.info.shortName == runtime.info.shortName }) {
                return "duplicate short_name '\(runtime.info.shortName)': already used by \(other.info.id) from \(other.info.path)"
            }
            // A registry placeholder of the same plugin is this plugin, now loaded.
            if let other = [pluginOrder.with(id: runtime.info.id), pluginOrder.with(shortName: runtime.info.shortName)]
                .compactMap({ $0 }).first(where: { $0.path != runtime.info.path }) {
                return other.id == runtime.info.id
                    ? "duplicate plugin id '\(runtime.info.id)': already loaded from \(other.path)"
                    : "duplicate short_name '\(runtime.info.shortName)': already used by \(other.id) from \(other.path)"
            }
            // Visible to itself during init. Shutdown runs newest first, so a
            // provider loaded for a plugin's lookup goes before that plugin.
            if let dependent, let i = runtimes.firstIndex(where: { $0.info.id == dependent }) {
                runtimes.insert(runtime, at: i)
            } else {
                runtimes.append(runtime)
            }
            pluginOrder.put(runtime.info)
            return nil
        }
        if let duplicate {
            refuse(path: runtime.info.path, pluginID: runtime.info.id, duplicate)
            return
        }
        let record = runtime.record.pointee
        runtime.gate.lock()
        let (status, reply) = Reply.collect { record.`init`(record.context, runtime.table, $0) }
        runtime.gate.unlock()
        if status != PINCER_OK {
            lock.withLock { runtimes.removeAll { $0 === runtime } }
            dropRegistrations(of: runtime.info.id)
            let why = reply.failure.flatMap { $0.isEmpty ? nil : $0 } ?? "no message"
            refuse(path: runtime.info.path, pluginID: runtime.info.id, "init failed (\(Status.name(status))): \(why)")
        }
    }

    func refuse(path: String, pluginID: String?, _ reason: String) {
        let failure = PluginFailure(path: path, pluginID: pluginID, reason: reason)
        lock.withLock { failureList.append(failure) }
        log(.error, plugin: Host.namespace, "refused plugin \(failure)")
    }

    /// Calls every plugin's shutdown, newest first. Libraries stay mapped.
    public func shutdown() {
        let toStop: [PluginRuntime] = lock.withLock {
            if isShutDown { return [] }
            isShutDown = true
            return runtimes.reversed()
        }
        for runtime in toStop {
            events.unsubscribeAll(owner: runtime.info.id)
            let record = runtime.record.pointee
            if let stop = record.shutdown {
                runtime.gate.withLock { stop(record.context) }
            }
            runtime.markShutDown()
        }
    }

    public static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}

/// Checks on the identifiers plugins hand in.
enum Identifier {
    static func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

    static func quoted(_ p: UnsafePointer<CChar>?) -> String { p.map { "'\(String(cString: $0))'" } ?? "NULL" }

    /// [a-z][a-z0-9_-]*
    static func isName(_ s: String, max: Int) -> Bool {
        let u = Array(s.utf8)
        guard let first = u.first, first >= 0x61 && first <= 0x7a, u.count <= max else { return false }
        return u.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f || $0 == 0x2d }
    }

    /// Reverse-DNS: two or more dot-separated labels of [A-Za-z0-9_-].
    static func isReverseDNS(_ s: String) -> Bool {
        guard s.utf8.count <= 128 else { return false }
        let labels = s.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.utf8.allSatisfy { c in
                (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f || c == 0x2d
            }
        }
    }

    /// vendor.name/N
    static func isServiceID(_ s: String) -> Bool {
        guard s.utf8.count <= Int(PINCER_SERVICE_ID_MAX) else { return false }
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let major = UInt32(parts[1]), major > 0 else { return false }
        return isReverseDNS(String(parts[0]))
    }
}
