import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

/// What the host knows about a loaded plugin, from its entry record.
public struct PluginInfo: Sendable, Equatable {
    public let id: String
    public let shortName: String
    public let name: String
    public let version: String
    public let summary: String
    public let abiMajor: UInt32
    public let abiMinor: UInt32
    /// The library file, or "<in-process>" for an entry function linked into the host.
    public let path: String
}

/// Plugins in the order they came, found by id or short name in constant
/// time (a registry of a thousand plugins is checked for duplicates on
/// every start). A plugin of commands only known from the registry is kept
/// as its record: its PluginInfo is made when it is asked for.
struct PluginList {
    enum Item {
        // Boxed: a thousand plugins from the registry are `.registry` items,
        // and each would take a PluginInfo's room otherwise (fresh pages at start).
        indirect case info(PluginInfo)
        case registry(RegistryOnlyPlugin)

        var info: PluginInfo {
            switch self {
            case .info(let info): info
            case .registry(let known): known.info
            }
        }
        var id: String {
            switch self {
            case .info(let info): info.id
            case .registry(let known): known.id
            }
        }
        var shortName: String {
            switch self {
            case .info(let info): info.shortName
            case .registry(let known): known.shortName
            }
        }
    }

    private var items: [Item] = []
    private var byID: [String: Int] = [:]
    private var byShortName: [String: Int] = [:]
    /// Items from `indexed` on were appended unchecked (`appendKnownDistinct`)
    /// and are not in the tables yet: the first lookup puts them there.
    private var indexed = 0

    var isEmpty: Bool { items.isEmpty }
    var all: [PluginInfo] { items.map(\.info) }

    mutating func with(id: String) -> PluginInfo? {
        indexPending()
        return byID[id].map { items[$0].info }
    }

    mutating func with(shortName: String) -> PluginInfo? {
        indexPending()
        return byShortName[shortName].map { items[$0].info }
    }

    /// Appends a plugin known not to clash with any other (a registry whose
    /// records are distinct, read into an empty list), without hashing it:
    /// a start that lists a thousand such plugins looks none of them up.
    mutating func appendKnownDistinct(_ item: Item) { items.append(item) }

    private mutating func indexPending() {
        guard indexed < items.count else { return }
        for i in indexed..<items.count {
            byID[items[i].id] = i
            byShortName[items[i].shortName] = i
        }
        indexed = items.count
    }

    mutating func reserve(_ more: Int) {
        items.reserveCapacity(items.count + more)
        byID.reserveCapacity(byID.count + more)
        byShortName.reserveCapacity(byShortName.count + more)
    }

    /// A plugin already listed with the same id (`onID`) or short name.
    struct Clash {
        let other: PluginInfo
        let onID: Bool
    }

    mutating func clash(with info: PluginInfo) -> Clash? {
        if let other = with(id: info.id) { return Clash(other: other, onID: true) }
        if let other = with(shortName: info.shortName) { return Clash(other: other, onID: false) }
        return nil
    }

    /// Adds a plugin unless it clashes (then nothing changes): two hash
    /// lookups, where `clash` and `put` take five; a thousand plugins from
    /// the registry are added on every start.
    mutating func addIfNew(_ item: Item) -> Clash? {
        indexPending()
        let index = items.count, id = item.id, shortName = item.shortName
        if let i = byID.updateValue(index, forKey: id) {
            byID[id] = i
            return Clash(other: items[i].info, onID: true)
        }
        if let i = byShortName.updateValue(index, forKey: shortName) {
            byShortName[shortName] = i
            byID[id] = nil
            return Clash(other: items[i].info, onID: false)
        }
        items.append(item)
        indexed = items.count
        return nil
    }

    /// Adds the plugin, or replaces the one with its id in place.
    mutating func put(_ info: PluginInfo) {
        indexPending()
        if let i = byID[info.id] {
            byShortName[items[i].shortName] = nil
            items[i] = .info(info)
            byShortName[info.shortName] = i
            return
        }
        byID[info.id] = items.count
        byShortName[info.shortName] = items.count
        items.append(.info(info))
        indexed = items.count
    }

    mutating func remove(id: String) {
        indexPending()
        guard byID[id] != nil else { return }
        items.removeAll { $0.id == id }
        byID = [:]
        byShortName = [:]
        for (i, p) in items.enumerated() {
            byID[p.id] = i
            byShortName[p.shortName] = i
        }
        indexed = items.count
    }
}

/// A plugin the host refused, and why.
public struct PluginFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    /// The plugin id, when the record got far enough to have one.
    public let pluginID: String?
    public let reason: String
    public var description: String { "\(path): \(reason)" }
}

/// One loaded plugin: its record, its own host API table, and what it
/// registered. The host API table's `host_data` points here.
final class PluginRuntime: @unchecked Sendable {
    let info: PluginInfo
    /// Weak: a plugin's stray thread may call its table after the host is
    /// gone; such calls then fail instead of crashing the process.
    weak var host: Host?
    let record: UnsafePointer<pincer_plugin_t>
    let table = UnsafeMutablePointer<pincer_host_t>.allocate(capacity: 1)
    /// Serialises every call the host makes into this plugin.
    let gate = Lock(recursive: true)
    private let errorLock = Lock()
    private var lastError: UnsafeMutablePointer<CChar>? = strdup("")
    /// Set once the plugin's shutdown has returned: a thread it left behind
    /// may still call the table, and its settings calls must not land.
    private var hasShutDown = false
    /// Whether the record has sync_entries (ABI 1.5), called or not.
    let syncsEntries: Bool
    /// pincer_plugin_t.sync_entries (ABI 1.5), until the host has called it once.
    private var pendingSync: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<pincer_call_t>?) -> pincer_status_t)?

    init(info: PluginInfo, record: UnsafePointer<pincer_plugin_t>, host: Host) {
        self.info = info
        self.record = record
        self.host = host
        let sync = record.pointee.struct_size >= UInt32(MemoryLayout<pincer_plugin_t>.size) ? record.pointee.sync_entries : nil
        pendingSync = sync
        syncsEntries = sync != nil
        table.initialize(to: PluginRuntime.makeTable())
        // Retained for the life of the process, like the library itself.
        table.pointee.host_data = Unmanaged.passRetained(self).toOpaque()
        // Lives as long as the table (never freed, like the library).
        table.pointee.state_directory = UnsafePointer(strdup(host.options.stateDirectory))
    }

    /// Whether the plugin has entries that follow its state and has not yet been asked for them.
    var needsSync: Bool { errorLock.withLock { pendingSync != nil } }


    /// Calls sync_entries once (entry.h); later calls do nothing.
    func syncEntries() {
        guard let sync = errorLock.withLock({ () -> (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<pincer_call_t>?) -> pincer_status_t)? in
            defer { pendingSync = nil }
            return pendingSync
        }) else { return }
        gate.lock()
        let (status, reply) = Reply.collect { sync(record.pointee.context, $0) }
        gate.unlock()
        if status != PINCER_OK {
            host?.log(.warning, plugin: info.id, "sync_entries failed (\(Status.name(status))): \(reply.failure ?? "no message"); its entries are those registered so far")
        }
    }

    static func from(_ table: UnsafePointer<pincer_host_t>?) -> PluginRuntime? {
        guard let data = table?.pointee.host_data else { return nil }
        return Unmanaged<PluginRuntime>.fromOpaque(data).takeUnretainedValue()
    }

    /// Records why a host call failed, for last_error, and returns the
    /// status. The plugin hears of it through the status and handles it, so
    /// it is logged at debug level only (`pincer -v` shows it).
    func failed(_ status: UInt32, _ message: String) -> UInt32 {
        host?.log(.debug, plugin: info.id, message)
        errorLock.withLock {
            free(lastError)
            lastError = strdup(message)
        }
        return status
    }

    var lastErrorPointer: UnsafePointer<CChar>? {
        errorLock.withLock { UnsafePointer(lastError) }
    }

    /// Called by the host when the plugin's shutdown has returned.
    func markShutDown() { errorLock.withLock { hasShutDown = true } }

    /// The store for this plugin's settings call `slot`, or the status
    /// (recorded for last_error) saying why there is none.
    func settingsStore(for slot: String) -> Result<SettingsStore, SettingsRefusal> {
        if errorLock.withLock({ hasShutDown }) {
            return .failure(SettingsRefusal(status: failed(PINCER_FAILED,
                "\(slot): plugin \(info.id) has shut down; its settings can no longer be read or written (nothing was written)")))
        }
        guard let host else {
            return .failure(SettingsRefusal(status: failed(PINCER_FAILED, "\(slot): the host of plugin \(info.id) is gone")))
        }
        host.noteSettingsUse(by: info.id)
        do {
            return .success(try host.settings())
        } catch {
            return .failure(SettingsRefusal(status: failed(PINCER_FAILED, "\(slot): \(error)")))
        }
    }

    struct SettingsRefusal: Error { let status: pincer_status_t }

    // MARK: the host API table

    private static let hostName: StaticString = "pincer"
    private static let hostVersion: StaticString = "0.1.0"

    private static func makeTable() -> pincer_host_t {
        var t = pincer_host_t()
        t.struct_size = UInt32(MemoryLayout<pincer_host_t>.size)
        t.abi_major = PINCER_ABI_MAJOR
        t.abi_minor = PINCER_ABI_MINOR
        t.host_name = UnsafeRawPointer(hostName.utf8Start).assumingMemoryBound(to: CChar.self)
        t.host_version = UnsafeRawPointer(hostVersion.utf8Start).assumingMemoryBound(to: CChar.self)
        t.log = { table, level, message in
            guard let p = PluginRuntime.from(table), let host = p.host else { return }
            host.log(LogLevel(sdk: level), plugin: p.info.id, message.map { String(cString: $0) } ?? "")
        }
        t.add_section = { table, section in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let section else { return p.failed(PINCER_INVALID_ARGUMENT, "add_section: section is NULL") }
            return host.addSection(section, from: p)
        }
        t.add_entry = { table, entry in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let entry else { return p.failed(PINCER_INVALID_ARGUMENT, "add_entry: entry is NULL") }
            return host.addEntry(entry, from: p)
        }
        t.add_command = { table, command in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let command else { return p.failed(PINCER_INVALID_ARGUMENT, "add_command: command is NULL") }
            return host.addCommand(command, from: p)
        }
        t.settings_get = { table, key, buffer, capacity in
            guard let p = PluginRuntime.from(table) else { return PINCER_SETTING_ERROR }
            guard let key else {
                _ = p.failed(PINCER_INVALID_ARGUMENT, "settings_get: key is NULL")
                return PINCER_SETTING_ERROR
            }
            guard case .success(let store) = p.settingsStore(for: "settings_get") else { return PINCER_SETTING_ERROR }
            do {
                guard let value = try store.get(namespace: p.info.id, key: String(cString: key)) else {
                    return PINCER_SETTING_MISSING
                }
                return value.withCString { src in
                    let length = strlen(src)
                    if let buffer, capacity > 0 {
                        let n = min(Int(length), Int(capacity) - 1)
                        memcpy(buffer, src, n)
                        buffer[n] = 0
                    }
                    return Int64(length)
                }
            } catch {
                _ = p.failed(PINCER_FAILED, "settings_get: \(error)")
                return PINCER_SETTING_ERROR
            }
        }
        t.settings_set = { table, key, value in
            guard let p = PluginRuntime.from(table) else { return PINCER_INVALID_ARGUMENT }
            guard let key, key.pointee != 0 else { return p.failed(PINCER_INVALID_ARGUMENT, "settings_set: key is empty") }
            let store: SettingsStore
            switch p.settingsStore(for: "settings_set") {
            case .success(let s): store = s
            case .failure(let refusal): return refusal.status
            }
            do {
                try store.set(namespace: p.info.id, key: String(cString: key), value: value.map { String(cString: $0) })
                return PINCER_OK
            } catch {
                return p.failed(PINCER_FAILED, "settings_set: \(error)")
            }
        }
        t.emit = { table, topic, payload in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let topic, topic.pointee != 0 else { return p.failed(PINCER_INVALID_ARGUMENT, "emit: topic is empty") }
            host.events.emit(topic: String(cString: topic), payload: payload.map { String(cString: $0) })
            return PINCER_OK
        }
        t.subscribe = { table, topic, callback, context in
            guard let p = PluginRuntime.from(table), let host = p.host else { return 0 }
            guard let topic, topic.pointee != 0, let callback else {
                _ = p.failed(PINCER_INVALID_ARGUMENT, "subscribe: topic and callback are required")
                return 0
            }
            let box = UnsafeSendable(context)
            return host.events.subscribe(topic: String(cString: topic), owner: p.info.id) { topic, payload in
                topic.withCString { t in
                    if let payload {
                        payload.withCString { callback(box.value, t, $0) }
                    } else {
                        callback(box.value, t, nil)
                    }
                }
            }
        }
        t.unsubscribe = { table, token in
            guard let p = PluginRuntime.from(table), let host = p.host else { return }
            host.events.unsubscribe(token)
        }
        t.publish_service = { table, id, service in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let id, let service else { return p.failed(PINCER_INVALID_ARGUMENT, "publish_service: id and table are required") }
            return host.publishService(id: String(cString: id), table: service, from: p)
        }
        t.get_service = { table, id in
            guard let p = PluginRuntime.from(table), let host = p.host, let id else { return nil }
            return host.service(id: String(cString: id), for: p)
        }
        t.last_error = { table in
            PluginRuntime.from(table)?.lastErrorPointer
        }
        t.update_entry = { table, entry in
            guard let p = PluginRuntime.from(table), let host = p.host else { return PINCER_INVALID_ARGUMENT }
            guard let entry else { return p.failed(PINCER_INVALID_ARGUMENT, "update_entry: entry is NULL") }
            return host.updateEntry(entry, from: p)
        }
        t.settings_update = { table, key, update, context in
            guard let p = PluginRuntime.from(table) else { return PINCER_INVALID_ARGUMENT }
            guard let key, key.pointee != 0 else { return p.failed(PINCER_INVALID_ARGUMENT, "settings_update: key is empty") }
            guard let update else { return p.failed(PINCER_INVALID_ARGUMENT, "settings_update: the update callback is NULL") }
            let store: SettingsStore
            switch p.settingsStore(for: "settings_update") {
            case .success(let s): store = s
            case .failure(let refusal): return refusal.status
            }
            let name = String(cString: key)
            let decided: SettingsStore.Change
            do {
                decided = try store.update(namespace: p.info.id, key: name) { current in
                    var proposed: UnsafePointer<CChar>?
                    let action = current.map { text in text.withCString { update(context, $0, &proposed) } }
                        ?? update(context, nil, &proposed)
                    switch action {
                    case PINCER_SETTING_KEEP: return .keep
                    case PINCER_SETTING_REPLACE: return proposed.map { .set(String(cString: $0)) } ?? .cancel
                    case PINCER_SETTING_DELETE: return .remove
                    default: return .cancel
                    }
                }
            } catch {
                return p.failed(PINCER_FAILED, "settings_update: \(error)")
            }
            guard decided != .cancel else {
                return p.failed(PINCER_CANCELLED, "settings_update: the update of setting \"\(name)\" was cancelled by its callback; nothing was written")
            }
            return PINCER_OK
        }
        t.settings_list = { table, prefix, each, context in
            guard let p = PluginRuntime.from(table) else { return PINCER_INVALID_ARGUMENT }
            guard let each else { return p.failed(PINCER_INVALID_ARGUMENT, "settings_list: the callback is NULL") }
            let store: SettingsStore
            switch p.settingsStore(for: "settings_list") {
            case .success(let s): store = s
            case .failure(let refusal): return refusal.status
            }
            let rows: [(key: String, value: String)]
            do {
                rows = try store.all(namespace: p.info.id, prefix: prefix.map { String(cString: $0) } ?? "")
            } catch {
                return p.failed(PINCER_FAILED, "settings_list: \(error)")
            }
            // Called after the read, with the store unlocked: the callback may use the settings.
            for row in rows {
                row.key.withCString { k in row.value.withCString { each(context, k, $0) } }
            }
            return PINCER_OK
        }
        return t
    }
}

/// Carries a C pointer owned by a plugin across a @Sendable boundary; the
/// plugin promised (in host.h) that it stays valid and handles its own threading.
struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
