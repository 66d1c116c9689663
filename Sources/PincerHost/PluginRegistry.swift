import CPincerSDK
import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// The plugin registry (after GStreamer's): what each plugin file registers,
/// learned once by scanning it in a child process (PluginScanner) and kept in
/// `<state>/plugin-registry.json`, keyed by the file's identity. A shell
/// command then lists, helps and completes from it and loads a plugin only
/// when one of its commands runs, its entries are read, or another plugin
/// needs its service (DeferredLoading.swift).
///
/// The file is a cache: a damaged or foreign one is ignored and rewritten,
/// and a record whose file changed is scanned again.
public enum PluginRegistry {
    public static let fileName = "plugin-registry.json"
    static let format = "pincer-plugin-registry"
    static let version: Int64 = 1
    /// Records made by another host ABI may describe refusals this host
    /// would not make, so the whole file is per host ABI.
    static var hostTag: String { "abi \(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR)" }
    /// Cut-offs for the cache file (it lives in the state directory, so it
    /// is read as untrusted): anything bigger is ignored and rebuilt.
    static let maxFileBytes = 64 << 20

    public static func path(stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// Records by canonical path; empty when the file is missing, damaged or made by another host ABI.
    static func read(stateDirectory: String) -> [String: RegistryRecord] {
        guard let bytes = readFile(path(stateDirectory: stateDirectory), limit: maxFileBytes),
              let doc = try? JSON.parse(bytes: bytes),
              doc["format"]?.stringValue == format, doc["version"]?.int64Value == version,
              doc["host"]?.stringValue == hostTag, let list = doc["plugins"]?.arrayValue else { return [:] }
        var records: [String: RegistryRecord] = [:]
        for item in list { if let r = RegistryRecord(json: item) { records[r.key.path] = r } }
        return records
    }

    /// Replaces the file atomically (temporary file, fsync, rename), so a
    /// reader sees the old registry or the new one. Failure only costs a
    /// rescan next time, so it is reported, not thrown.
    @discardableResult
    static func write(_ records: [RegistryRecord], stateDirectory: String) -> String? {
        let doc = JSON.object([
            ("format", .string(format)), ("version", .int(version)), ("host", .string(hostTag)),
            ("plugins", .array(records.map(\.json))),
        ])
        return writeAtomically(doc.serializedBytes(), to: path(stateDirectory: stateDirectory), directory: stateDirectory)
    }

    static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size >= 0, st.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// Why writing failed, or nil.
    static func writeAtomically(_ bytes: [UInt8], to path: String, directory: String) -> String? {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            return "cannot create \(directory): \(String(cString: strerror(errno)))"
        }
        let temporary = "\(path).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot create \(temporary): \(String(cString: strerror(errno)))" }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let why = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                return "cannot write \(temporary): \(why)"
            }
            done += n
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            return "cannot replace \(path): \(why)"
        }
        return nil
    }
}

/// What identifies the plugin file a record was made from. Size, times and
/// inode are compared on every start-up (one stat); the build id, which
/// needs reading the file, when the plugin is loaded.
struct FileKey: Sendable, Equatable {
    var path: String
    var size: Int64
    var modified: Int64
    var changed: Int64
    var inode: UInt64
    var buildID: String?

    /// The key of the file as it is now (without build id), or nil if it cannot be stat'ed.
    static func current(_ path: String) -> FileKey? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileKey(path: path, size: Int64(st.st_size),
                       modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                       changed: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec),
                       inode: UInt64(st.st_ino), buildID: nil)
    }

    /// Same file as far as stat can tell.
    func sameStat(as other: FileKey) -> Bool {
        path == other.path && size == other.size && modified == other.modified && changed == other.changed && inode == other.inode
    }
}

/// One plugin file's scan: what it registered, or why it was refused.
struct RegistryRecord: Sendable {
    var key: FileKey
    var outcome: Outcome

    enum Outcome: Sendable {
        case plugin(ScannedPlugin)
        /// `usesServices`: what its init looked up before failing, so a
        /// plugin refused for want of a service scanned later is scanned again.
        case refused(pluginID: String?, reason: String, usesServices: [String] = [])
    }

    init(key: FileKey, outcome: Outcome) {
        self.key = key
        self.outcome = outcome
    }

    var json: JSON {
        var fields: [(String, JSON)] = [
            ("path", .string(key.path)), ("size", .int(key.size)), ("modified_ns", .int(key.modified)),
            ("changed_ns", .int(key.changed)), ("inode", .int(Int64(bitPattern: key.inode))), ("build_id", key.buildID.map(JSON.string) ?? .null),
        ]
        switch outcome {
        case .plugin(let p): fields.append(("plugin", p.json))
        case .refused(let id, let reason, let uses):
            fields.append(("refused", .object([("plugin_id", id.map(JSON.string) ?? .null), ("reason", .string(reason)),
                                               ("uses_services", .array(uses.map(JSON.string)))])))
        }
        return .object(fields)
    }

    init?(json: JSON) {
        guard let path = json["path"]?.stringValue, let size = json["size"]?.int64Value,
              let modified = json["modified_ns"]?.int64Value, let changed = json["changed_ns"]?.int64Value,
              let inode = json["inode"]?.int64Value.map({ UInt64(bitPattern: $0) }) else { return nil }
        key = FileKey(path: path, size: size, modified: modified, changed: changed, inode: inode, buildID: json["build_id"]?.stringValue)
        if let p = json["plugin"], let scanned = ScannedPlugin(json: p, path: path) {
            outcome = .plugin(scanned)
        } else if let r = json["refused"], let reason = r["reason"]?.stringValue {
            outcome = .refused(pluginID: r["plugin_id"]?.stringValue, reason: reason,
                               usesServices: r["uses_services"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        } else {
            return nil
        }
    }
}

/// What a plugin's init registered, as the scanner saw it.
struct ScannedPlugin: Sendable {
    struct SectionRecord: Sendable { var id: String, title: String, order: Int32 }
    struct EntryRecord: Sendable {
        var localID: String, kind: EntryKind, section: String, title: String, summary: String
        var defaultValue: String, choices: [String], isSecret: Bool, command: String?
        var isPluginValue: Bool
        /// Whether setting a host-kept value calls the plugin back (so it must be loaded).
        var hasChanged: Bool
    }
    struct CommandRecord: Sendable { var signature: String, summary: String, details: String, changesState: Bool, returnsJSON: Bool }

    var info: PluginInfo
    var sections: [SectionRecord] = []
    var entries: [EntryRecord] = []
    var commands: [CommandRecord] = []
    /// Services it published, topics it subscribed to and services it looked up, in init.
    var services: [String] = []
    var topics: [String] = []
    var usesServices: [String] = []
    /// Its init used its settings: what it registers may follow what is stored.
    var registersFromSettings = false
    /// Its record has sync_entries (ABI 1.5): more entries come when its state opens.
    var syncsEntries = false

    init(info: PluginInfo) { self.info = info }

    var json: JSON {
        .object([
            ("id", .string(info.id)), ("short_name", .string(info.shortName)), ("name", .string(info.name)),
            ("version", .string(info.version)), ("summary", .string(info.summary)),
            ("abi", .array([.int(Int64(info.abiMajor)), .int(Int64(info.abiMinor))])),
            ("sections", .array(sections.map { .object([("id", .string($0.id)), ("title", .string($0.title)), ("order", .int(Int64($0.order)))]) })),
            ("entries", .array(entries.map { e in
                .object([("id", .string(e.localID)), ("kind", .string(e.kind.rawValue)), ("section", .string(e.section)),
                         ("title", .string(e.title)), ("summary", .string(e.summary)), ("default", .string(e.defaultValue)),
                         ("choices", .array(e.choices.map(JSON.string))), ("secret", .bool(e.isSecret)),
                         ("command", e.command.map(JSON.string) ?? .null), ("plugin_value", .bool(e.isPluginValue)),
                         ("changed_callback", .bool(e.hasChanged))])
            })),
            ("commands", .array(commands.map { c in
                .object([("signature", .string(c.signature)), ("summary", .string(c.summary)), ("details", .string(c.details)),
                         ("changes_state", .bool(c.changesState)), ("json_result", .bool(c.returnsJSON))])
            })),
            ("services", .array(services.map(JSON.string))), ("topics", .array(topics.map(JSON.string))),
            ("uses_services", .array(usesServices.map(JSON.string))), ("registers_from_settings", .bool(registersFromSettings)),
            ("syncs_entries", .bool(syncsEntries)),
        ])
    }

    init?(json j: JSON, path: String) {
        guard let id = j["id"]?.stringValue, let short = j["short_name"]?.stringValue, let name = j["name"]?.stringValue,
              let version = j["version"]?.stringValue, let abi = j["abi"]?.arrayValue, abi.count == 2,
              let major = abi[0].int64Value, let minor = abi[1].int64Value,
              let majorValue = UInt32(exactly: major), let minorValue = UInt32(exactly: minor) else { return nil }
        info = PluginInfo(id: id, shortName: short, name: name, version: version, summary: j["summary"]?.stringValue ?? "",
                          abiMajor: majorValue, abiMinor: minorValue, path: path)
        func strings(_ key: String) -> [String]? {
            guard let list = j[key]?.arrayValue else { return nil }
            let values = list.compactMap(\.stringValue)
            return values.count == list.count ? values : nil
        }
        guard let services = strings("services"), let topics = strings("topics"), let uses = strings("uses_services"),
              let sectionList = j["sections"]?.arrayValue, let entryList = j["entries"]?.arrayValue,
              let commandList = j["commands"]?.arrayValue else { return nil }
        self.services = services
        self.topics = topics
        self.usesServices = uses
        registersFromSettings = j["registers_from_settings"]?.boolValue ?? true
        syncsEntries = j["syncs_entries"]?.boolValue ?? true
        for s in sectionList {
            guard let sid = s["id"]?.stringValue, let title = s["title"]?.stringValue,
                  let order = s["order"]?.int64Value.flatMap({ Int32(exactly: $0) }) else { return nil }
            sections.append(SectionRecord(id: sid, title: title, order: order))
        }
        for e in entryList {
            guard let local = e["id"]?.stringValue, let kind = e["kind"]?.stringValue.flatMap(EntryKind.init(rawValue:)),
                  let section = e["section"]?.stringValue, let title = e["title"]?.stringValue,
                  let choices = e["choices"]?.arrayValue?.compactMap(\.stringValue) else { return nil }
            entries.append(EntryRecord(localID: local, kind: kind, section: section, title: title, summary: e["summary"]?.stringValue ?? "",
                                       defaultValue: e["default"]?.stringValue ?? "", choices: choices,
                                       isSecret: e["secret"]?.boolValue ?? false, command: e["command"]?.stringValue,
                                       isPluginValue: e["plugin_value"]?.boolValue ?? false,
                                       hasChanged: e["changed_callback"]?.boolValue ?? true))
        }
        for c in commandList {
            guard let signature = c["signature"]?.stringValue else { return nil }
            commands.append(CommandRecord(signature: signature, summary: c["summary"]?.stringValue ?? "",
                                          details: c["details"]?.stringValue ?? "", changesState: c["changes_state"]?.boolValue ?? false,
                                          returnsJSON: c["json_result"]?.boolValue ?? false))
        }
    }
}
