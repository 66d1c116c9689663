import CPincerSDK
import CXXHash
import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// The plugin registry (after GStreamer's): what each plugin file registers,
/// learned once by scanning it in a child process (PluginScanner) and kept in
/// `<state>/plugin-registry.bin`, keyed by the file's identity. A shell
/// command then lists, helps and completes from it and loads a plugin only
/// when one of its commands runs, its entries are read, or another plugin
/// needs its service (DeferredLoading.swift).
///
/// The file is a cache: a damaged or foreign one is ignored and rewritten,
/// and a record whose file changed is scanned again. It is read on every
/// start, so it is binary (RegistryFile): one pass over length-prefixed
/// fields, no document tree. Version 1 was `plugin-registry.json`; that
/// file is no longer read (its plugins are scanned again) and is removed
/// when the new one is written. Version 2 had no command names or cached
/// listings; such a file is refused by its version and written anew.
public enum PluginRegistry {
    public static let fileName = "plugin-registry.bin"
    static let legacyFileName = "plugin-registry.json"
    static let version: UInt32 = 3
    /// Records made by another host ABI may describe refusals this host
    /// would not make, so the whole file is per host ABI.
    /// Listings are cached as this host writes them, so the file is per listing format too.
    static var hostTag: String { "abi \(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR), listing \(Host.commandListingFormat)" }
    /// Cut-offs for the cache file (it lives in the state directory, so it
    /// is read as untrusted): anything bigger is ignored and rebuilt.
    static let maxFileBytes = 64 << 20

    public static func path(stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// How long, in ns, a plugin directory must have been unchanged before
    /// it was listed for its snapshot to be trusted (DirectorySnapshot).
    public static var directoryQuietPeriod: Int64 { DirectorySnapshot.quietPeriod }

    /// The file read in place; nil when it is missing, damaged or made by another host ABI.
    static func readImage(stateDirectory: String) -> RegistryImage? {
        RegistryImage(mapping: path(stateDirectory: stateDirectory), limit: maxFileBytes)
    }

    /// The records in the file's order (the candidates' order when it was
    /// written); empty when the file is missing, damaged or made by another host ABI.
    static func readList(stateDirectory: String) -> [RegistryRecord] {
        guard let image = readImage(stateDirectory: stateDirectory) else { return [] }
        return image.records.indices.compactMap(image.record(at:))
    }

    /// Records by canonical path; empty when the file is missing, damaged or made by another host ABI.
    static func read(stateDirectory: String) -> [String: RegistryRecord] {
        let list = readList(stateDirectory: stateDirectory)
        var records: [String: RegistryRecord] = [:]
        records.reserveCapacity(list.count)
        for r in list { records[r.key.path] = r }
        return records
    }

    /// Replaces the file atomically (temporary file, fsync, rename), so a
    /// reader sees the old registry or the new one. Failure only costs a
    /// rescan next time, so it is reported, not thrown.
    @discardableResult
    static func write(_ records: [RegistryRecord], directories: [DirectorySnapshot] = [], stateDirectory: String) -> String? {
        let why = writeAtomically(RegistryFile.encode(records, directories: directories), to: path(stateDirectory: stateDirectory),
                                  directory: stateDirectory)
        if why == nil { unlink(stateDirectory + "/" + legacyFileName) }
        return why
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
    /// Hex, as UTF-8: made a String only when a plugin is loaded (the one
    /// time it is compared), not for each of a thousand records on every start.
    var buildIDUTF8: ArraySlice<UInt8>?
    var buildID: String? {
        get { buildIDUTF8.map { String(decoding: $0, as: UTF8.self) } }
        set { buildIDUTF8 = newValue.map { ArraySlice($0.utf8) } }
    }

    /// The key of the file as it is now (without build id), or nil if it cannot be stat'ed.
    static func current(_ path: String) -> FileKey? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileKey(path: path, stat: st)
    }

    init(path: String, size: Int64, modified: Int64, changed: Int64, inode: UInt64, buildID: String?) {
        self.path = path
        self.size = size
        self.modified = modified
        self.changed = changed
        self.inode = inode
        self.buildIDUTF8 = buildID.map { ArraySlice($0.utf8) }
    }

    init(path: String, stat st: stat) {
        self.init(path: path, size: Int64(st.st_size),
                  modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                  changed: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec),
                  inode: UInt64(st.st_ino), buildID: nil)
    }

    /// Same file as far as stat can tell.
    func sameStat(as other: FileKey) -> Bool {
        path == other.path && size == other.size && modified == other.modified && changed == other.changed && inode == other.inode
    }
}

/// What a searched directory held when it was last listed: the names it
/// accepted, in order, and the directory's identity then. A start that
/// finds the directory as the snapshot says (modification and change
/// times, inode) takes its names from the snapshot instead of listing it
/// again (a thousand entries' worth of getdents, filtering and sorting):
/// adding, removing or renaming an entry changes the directory's times.
/// Each file in it is still stat'ed, since a file changed in place leaves
/// its directory as it was.
///
/// File systems stamp times from a coarse clock, so a change made in the
/// same tick as the one recorded would not show. A snapshot is therefore
/// trusted only when the directory had not changed for `quietPeriod`
/// before it was listed; any later change then stamps a later time.
struct DirectorySnapshot: Sendable, Equatable {
    /// As searched (the built-in directory, or an entry of the plugin path).
    var path: String
    var modified: Int64, changed: Int64, inode: UInt64
    /// CLOCK_REALTIME (the clock file times come from), in ns, when it was listed.
    var listedAt: Int64
    /// Each accepted name followed by a NUL.
    var names: [UInt8] = []

    static let quietPeriod: Int64 = 2_000_000_000

    init(path: String, modified: Int64, changed: Int64, inode: UInt64, listedAt: Int64, names: [UInt8]) {
        self.path = path
        self.modified = modified
        self.changed = changed
        self.inode = inode
        self.listedAt = listedAt
        self.names = names
    }

    init(path: String, stat st: stat, listedAt: Int64) {
        self.init(path: path, modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                  changed: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec), inode: UInt64(st.st_ino),
                  listedAt: listedAt, names: [])
    }

    var isTrusted: Bool { modified < listedAt &- DirectorySnapshot.quietPeriod }

    /// The same directory, unchanged, holding the same names.
    func sameListing(as other: DirectorySnapshot) -> Bool {
        path == other.path && modified == other.modified && changed == other.changed && inode == other.inode && names == other.names
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
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

    // Fields at their default (empty, false, zero) are left out: the file
    // is read on every start, and most plugins leave most fields empty.
    var json: JSON {
        var fields: [(String, JSON)] = [
            ("path", .string(key.path)), ("size", .int(key.size)), ("modified_ns", .int(key.modified)),
            ("changed_ns", .int(key.changed)), ("inode", .int(Int64(bitPattern: key.inode))),
        ]
        if let id = key.buildID { fields.append(("build_id", .string(id))) }
        switch outcome {
        case .plugin(let p): fields.append(("plugin", p.json))
        case .refused(let id, let reason, let uses):
            var refusal: [(String, JSON)] = [("reason", .string(reason))]
            if let id { refusal.append(("plugin_id", .string(id))) }
            if !uses.isEmpty { refusal.append(("uses_services", .array(uses.map(JSON.string)))) }
            fields.append(("refused", .object(refusal)))
        }
        return .object(fields)
    }

    /// Decodes in one pass over the fields; nil for anything malformed (the
    /// file is then scanned again for that plugin).
    init?(json: JSON) {
        guard let fields = json.objectValue else { return nil }
        var path: String?, size: Int64?, modified: Int64?, changed: Int64?, inode: Int64?, buildID: String?
        var plugin: JSON?, refusal: JSON?
        for (name, value) in fields {
            switch name {
            case "path": path = value.stringValue
            case "size": size = value.int64Value
            case "modified_ns": modified = value.int64Value
            case "changed_ns": changed = value.int64Value
            case "inode": inode = value.int64Value
            case "build_id": buildID = value.stringValue
            case "plugin": plugin = value
            case "refused": refusal = value
            default: break
            }
        }
        guard let path, let size, let modified, let changed, let inode else { return nil }
        key = FileKey(path: path, size: size, modified: modified, changed: changed, inode: UInt64(bitPattern: inode), buildID: buildID)
        if let plugin {
            guard let scanned = ScannedPlugin(json: plugin, path: path) else { return nil }
            outcome = .plugin(scanned)
        } else if let refusal, let reason = refusal["reason"]?.stringValue {
            outcome = .refused(pluginID: refusal["plugin_id"]?.stringValue, reason: reason,
                               usesServices: Self.strings(refusal["uses_services"]) ?? [])
        } else {
            return nil
        }
    }

    /// An array of strings (absent: empty); nil when it holds anything else.
    static func strings(_ json: JSON?) -> [String]? {
        guard let json else { return [] }
        guard let list = json.arrayValue else { return nil }
        var values: [String] = []
        values.reserveCapacity(list.count)
        for item in list {
            guard let s = item.stringValue else { return nil }
            values.append(s)
        }
        return values
    }
}

/// What a plugin's init registered, as the scanner saw it. A class: a
/// registry of a thousand plugins passes records around on every start,
/// and a copy is then one reference. Built by one thread, then only read.
final class ScannedPlugin: @unchecked Sendable {
    struct SectionRecord: Sendable { var id: String, title: String, order: Int32 }
    struct EntryRecord: Sendable {
        var localID: String, kind: EntryKind, section: String, title: String, summary: String
        var defaultValue: String, choices: [String], isSecret: Bool, command: String?
        var isPluginValue: Bool
        /// Whether setting a host-kept value calls the plugin back (so it must be loaded).
        var hasChanged: Bool
    }
    struct CommandRecord: Sendable {
        /// The texts as UTF-8 (slices of the registry file when read from
        /// it): a start with a thousand plugins makes no String of them.
        var signatureUTF8: ArraySlice<UInt8>, summaryUTF8: ArraySlice<UInt8>, detailsUTF8: ArraySlice<UInt8>
        var changesState: Bool, returnsJSON: Bool
        /// The signature's command name, so a listing needs no parse.
        var name: String
        /// Its object in `pincer commands --json`, as the scanning host wrote
        /// it (Host.writeCommandJSON): the listing copies it. Empty when
        /// the record has none; the listing then writes it from the signature.
        var listing: ArraySlice<UInt8> = []

        var signature: String {
            get { String(decoding: signatureUTF8, as: UTF8.self) }
            set { signatureUTF8 = ArraySlice(newValue.utf8) }
        }
        var summary: String {
            get { String(decoding: summaryUTF8, as: UTF8.self) }
            set { summaryUTF8 = ArraySlice(newValue.utf8) }
        }
        var details: String {
            get { String(decoding: detailsUTF8, as: UTF8.self) }
            set { detailsUTF8 = ArraySlice(newValue.utf8) }
        }

        init(signatureUTF8: ArraySlice<UInt8>, summaryUTF8: ArraySlice<UInt8>, detailsUTF8: ArraySlice<UInt8>, changesState: Bool,
             returnsJSON: Bool, name: String, listing: ArraySlice<UInt8>) {
            self.signatureUTF8 = signatureUTF8
            self.summaryUTF8 = summaryUTF8
            self.detailsUTF8 = detailsUTF8
            self.changesState = changesState
            self.returnsJSON = returnsJSON
            self.name = name
            self.listing = listing
        }

        init(signature: String, summary: String, details: String, changesState: Bool, returnsJSON: Bool, name: String? = nil,
             listing: ArraySlice<UInt8> = []) {
            self.signatureUTF8 = ArraySlice(signature.utf8)
            self.summaryUTF8 = ArraySlice(summary.utf8)
            self.detailsUTF8 = ArraySlice(details.utf8)
            self.changesState = changesState
            self.returnsJSON = returnsJSON
            self.name = name ?? (try? Signature.parse(signature).name) ?? ""
            self.listing = listing
        }
    }

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
    /// A command's signature parsed (nil for a damaged record): done only
    /// when a placeholder is made, since listings read `name` and `listing`.
    func signature(ofCommand i: Int) -> Signature? { try? Signature.parse(commands[i].signature) }

    init(info: PluginInfo) { self.info = info }

    var json: JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(info.id)), ("short_name", .string(info.shortName)), ("name", .string(info.name)),
            ("version", .string(info.version)), ("abi", .array([.int(Int64(info.abiMajor)), .int(Int64(info.abiMinor))])),
        ]
        func add(_ name: String, _ text: String) { if !text.isEmpty { fields.append((name, .string(text))) } }
        func add(_ name: String, _ list: [String]) { if !list.isEmpty { fields.append((name, .array(list.map(JSON.string)))) } }
        func add(_ name: String, _ flag: Bool) { if flag { fields.append((name, .bool(true))) } }
        add("summary", info.summary)
        if !sections.isEmpty {
            fields.append(("sections", .array(sections.map { .object([("id", .string($0.id)), ("title", .string($0.title)), ("order", .int(Int64($0.order)))]) })))
        }
        if !entries.isEmpty {
            fields.append(("entries", .array(entries.map { e in
                var f: [(String, JSON)] = [("id", .string(e.localID)), ("kind", .string(e.kind.rawValue)), ("section", .string(e.section)),
                                           ("title", .string(e.title))]
                if !e.summary.isEmpty { f.append(("summary", .string(e.summary))) }
                if !e.defaultValue.isEmpty { f.append(("default", .string(e.defaultValue))) }
                if !e.choices.isEmpty { f.append(("choices", .array(e.choices.map(JSON.string)))) }
                if e.isSecret { f.append(("secret", .bool(true))) }
                if let c = e.command { f.append(("command", .string(c))) }
                if e.isPluginValue { f.append(("plugin_value", .bool(true))) }
                if e.hasChanged { f.append(("changed_callback", .bool(true))) }
                return .object(f)
            })))
        }
        if !commands.isEmpty {
            fields.append(("commands", .array(commands.map { c in
                var f: [(String, JSON)] = [("signature", .string(c.signature))]
                if !c.summaryUTF8.isEmpty { f.append(("summary", .string(c.summary))) }
                if !c.detailsUTF8.isEmpty { f.append(("details", .string(c.details))) }
                if c.changesState { f.append(("changes_state", .bool(true))) }
                if c.returnsJSON { f.append(("json_result", .bool(true))) }
                f.append(("name", .string(c.name)))
                if !c.listing.isEmpty { f.append(("listing", .string(String(decoding: c.listing, as: UTF8.self)))) }
                return .object(f)
            })))
        }
        add("services", services)
        add("topics", topics)
        add("uses_services", usesServices)
        add("registers_from_settings", registersFromSettings)
        add("syncs_entries", syncsEntries)
        return .object(fields)
    }

    init?(json j: JSON, path: String) {
        guard let fields = j.objectValue else { return nil }
        var id: String?, short: String?, name: String?, version: String?, summary = "", abi: [JSON]?
        var sectionList: [JSON] = [], entryList: [JSON] = [], commandList: [JSON] = []
        var services: [String]? = [], topics: [String]? = [], uses: [String]? = []
        for (key, value) in fields {
            switch key {
            case "id": id = value.stringValue
            case "short_name": short = value.stringValue
            case "name": name = value.stringValue
            case "version": version = value.stringValue
            case "summary": summary = value.stringValue ?? ""
            case "abi": abi = value.arrayValue
            case "sections": sectionList = value.arrayValue ?? []
            case "entries": entryList = value.arrayValue ?? []
            case "commands": commandList = value.arrayValue ?? []
            case "services": services = RegistryRecord.strings(value)
            case "topics": topics = RegistryRecord.strings(value)
            case "uses_services": uses = RegistryRecord.strings(value)
            case "registers_from_settings": registersFromSettings = value.boolValue ?? true
            case "syncs_entries": syncsEntries = value.boolValue ?? true
            default: break
            }
        }
        guard let id, let short, let name, let version, let abi, abi.count == 2,
              let major = abi[0].int64Value.flatMap({ UInt32(exactly: $0) }), let minor = abi[1].int64Value.flatMap({ UInt32(exactly: $0) }),
              let services, let topics, let uses else { return nil }
        info = PluginInfo(id: id, shortName: short, name: name, version: version, summary: summary,
                          abiMajor: major, abiMinor: minor, path: path)
        self.services = services
        self.topics = topics
        self.usesServices = uses
        for s in sectionList {
            guard let sid = s["id"]?.stringValue, let title = s["title"]?.stringValue,
                  let order = s["order"]?.int64Value.flatMap({ Int32(exactly: $0) }) else { return nil }
            sections.append(SectionRecord(id: sid, title: title, order: order))
        }
        for e in entryList {
            guard let f = e.objectValue else { return nil }
            var local: String?, kind: EntryKind?, section: String?, title: String?
            var record = EntryRecord(localID: "", kind: .value, section: "", title: "", summary: "", defaultValue: "", choices: [],
                                     isSecret: false, command: nil, isPluginValue: false, hasChanged: false)
            for (key, value) in f {
                switch key {
                case "id": local = value.stringValue
                case "kind": kind = value.stringValue.flatMap(EntryKind.init(rawValue:))
                case "section": section = value.stringValue
                case "title": title = value.stringValue
                case "summary": record.summary = value.stringValue ?? ""
                case "default": record.defaultValue = value.stringValue ?? ""
                case "choices": guard let c = RegistryRecord.strings(value) else { return nil }; record.choices = c
                case "secret": record.isSecret = value.boolValue ?? false
                case "command": record.command = value.stringValue
                case "plugin_value": record.isPluginValue = value.boolValue ?? false
                case "changed_callback": record.hasChanged = value.boolValue ?? true
                default: break
                }
            }
            guard let local, let kind, let section, let title else { return nil }
            record.localID = local
            record.kind = kind
            record.section = section
            record.title = title
            entries.append(record)
        }
        commands.reserveCapacity(commandList.count)
        for c in commandList {
            guard let f = c.objectValue else { return nil }
            var record = CommandRecord(signature: "", summary: "", details: "", changesState: false, returnsJSON: false, name: "")
            var signature: String?, name: String?
            for (key, value) in f {
                switch key {
                case "signature": signature = value.stringValue
                case "name": name = value.stringValue
                case "listing":
                    guard let text = value.stringValue, RegistryFile.isListing(Array(text.utf8)) else { return nil }
                    record.listing = ArraySlice(text.utf8)
                case "summary": record.summary = value.stringValue ?? ""
                case "details": record.details = value.stringValue ?? ""
                case "changes_state": record.changesState = value.boolValue ?? false
                case "json_result": record.returnsJSON = value.boolValue ?? false
                default: break
                }
            }
            guard let signature, let name, !name.isEmpty else { return nil }
            record.signature = signature
            record.name = name
            commands.append(record)
        }
    }
}

/// The registry file's bytes. Little-endian throughout:
///
///     magic "PNCRREG\0", u32 version, str host tag, u32 record count,
///     u8 flags (1: no two plugin records share an id or a short name),
///     u32 command count, then
///     the record index, one 84-byte entry a record: u32 payload offset and
///       length; u32 path offset and length; i64 size, i64 modified_ns,
///       i64 changed_ns, u64 inode; u32 offset and length of the build id,
///       the id, the short name; u32 first command, u32 command count;
///       u8 kind (1 plugin of commands only, 2 other plugin, 3 refused),
///       u8 has build id, u16 0
///     the command index, one 36-byte entry a command: u32 offset and length
///       of its name, listing, summary and signature; u8 flags, three 0 bytes
///     the payloads, one a record, in order (offsets in the index are from
///       the file's start and point into the record's own payload; a span
///       the entry lacks is empty at the payloads' start):
///     payload: str path, i64 size, i64 modified_ns, i64 changed_ns, u64 inode,
///             opt-str build id, u8 outcome (1 plugin, 2 refused), then
///       plugin:  str id, short_name, name, version, summary; u32 abi major, minor;
///                u32 n × section (str id, str title, i32 order);
///                u32 n × entry (str id, str kind, str section, str title, str summary,
///                               str default, strs choices, u8 flags, [str command]);
///                u32 n × command (str signature, str name, str summary, str details, u8 flags,
///                                 str listing: its `pincer commands --json` object, or empty);
///                strs services, strs topics, strs uses_services, u8 flags
///       refused: str reason, opt-str plugin id, strs uses_services
///     then u32 n × directory (DirectorySnapshot): str path, i64 modified_ns,
///       i64 changed_ns, u64 inode, i64 listed_ns, str names (each followed by a NUL)
///     str: u32 byte count, UTF-8; opt-str: u8 0 or 1 then str; strs: u32 n × str
///     and last, u64 XXH3-64 (libxxhash) of every byte before it
///
/// The file is untrusted (it sits in the state directory). A start reads
/// only the header, the two indexes and the directories (RegistryImage):
/// every offset and length is checked to lie in its record's payload,
/// counts against the bytes left, kinds and flags against the known values,
/// and the payloads must follow each other exactly. A record's payload is
/// walked when the record is needed whole, with every length checked
/// against what is left, text checked as UTF-8, and its fields checked
/// against its index entry; one that disagrees is treated as damaged (the
/// plugin is loaded to learn what it registers, and scanned again). A
/// listing is copied into `pincer commands --json` as it is: it was checked
/// to be one JSON object when the scanner's record came in
/// (ScannedPlugin(json:)), and the checksum catches damage since. (Checking
/// a thousand listings again was a third of a start with a thousand
/// plugins; whoever can write the file, in the private state directory, can
/// as well write the plugins it describes.) Nesting is fixed by the layout
/// (record, list, item), so there is no recursion to limit.
enum RegistryFile {
    static let magic: [UInt8] = Array("PNCRREG".utf8) + [0]

    static func encode(_ records: [RegistryRecord], directories: [DirectorySnapshot] = []) -> [UInt8] {
        // Each record's payload first, noting where its indexed fields lie in it.
        typealias Span = (start: Int, count: Int)
        struct Placed {
            var payload: Span = (0, 0), path: Span = (0, 0), buildID: Span?, id: Span = (0, 0), short: Span = (0, 0)
            var kind: UInt8 = 3
            var commands: [(name: Span, listing: Span, summary: Span, signature: Span, flags: UInt8)] = []
        }
        var p = Writer()
        p.out.reserveCapacity(records.count * 300)
        var placed: [Placed] = []
        placed.reserveCapacity(records.count)
        for r in records {
            var m = Placed()
            let start = p.out.count
            m.path = p.span(r.key.path)
            p.u64(UInt64(bitPattern: r.key.size))
            p.u64(UInt64(bitPattern: r.key.modified))
            p.u64(UInt64(bitPattern: r.key.changed))
            p.u64(r.key.inode)
            if let id = r.key.buildIDUTF8 {
                p.u8(1)
                m.buildID = p.span(id)
            } else {
                p.u8(0)
            }
            switch r.outcome {
            case .plugin(let s):
                p.u8(1)
                m.id = p.span(s.info.id)
                m.short = p.span(s.info.shortName)
                for text in [s.info.name, s.info.version, s.info.summary] { p.str(text) }
                p.u32(s.info.abiMajor)
                p.u32(s.info.abiMinor)
                p.u32(UInt32(s.sections.count))
                for section in s.sections {
                    p.str(section.id)
                    p.str(section.title)
                    p.u32(UInt32(bitPattern: section.order))
                }
                p.u32(UInt32(s.entries.count))
                for e in s.entries {
                    for text in [e.localID, e.kind.rawValue, e.section, e.title, e.summary, e.defaultValue] { p.str(text) }
                    p.strs(e.choices)
                    let flags: UInt8 = (e.isSecret ? 1 : 0) | (e.isPluginValue ? 2 : 0) | (e.hasChanged ? 4 : 0) | (e.command != nil ? 8 : 0)
                    p.u8(flags)
                    if let command = e.command { p.str(command) }
                }
                p.u32(UInt32(s.commands.count))
                for c in s.commands {
                    let signature = p.span(c.signatureUTF8), name = p.span(c.name), summary = p.span(c.summaryUTF8)
                    p.str(c.detailsUTF8)
                    let flags: UInt8 = (c.changesState ? 1 : 0) | (c.returnsJSON ? 2 : 0)
                    p.u8(flags)
                    let listing = p.span(c.listing)
                    m.commands.append((name, listing, summary, signature, flags))
                }
                p.strs(s.services)
                p.strs(s.topics)
                p.strs(s.usesServices)
                p.u8((s.registersFromSettings ? 1 : 0) | (s.syncsEntries ? 2 : 0))
                let onlyCommands = s.sections.isEmpty && s.entries.isEmpty && s.services.isEmpty && s.topics.isEmpty && s.usesServices.isEmpty
                    && !s.registersFromSettings && !s.syncsEntries
                m.kind = onlyCommands ? 1 : 2
            case .refused(let id, let reason, let uses):
                p.u8(2)
                p.str(reason)
                p.optional(id)
                p.strs(uses)
            }
            m.payload = (start, p.out.count - start)
            placed.append(m)
        }
        var ids = Set<String>(), shortNames = Set<String>(), distinct = true
        for case .plugin(let s) in records.map(\.outcome) where !ids.insert(s.info.id).inserted || !shortNames.insert(s.info.shortName).inserted {
            distinct = false
        }
        let commandCount = placed.reduce(0) { $0 + $1.commands.count }
        var w = Writer()
        w.out += magic
        w.u32(PluginRegistry.version)
        w.str(PluginRegistry.hostTag)
        w.u32(UInt32(records.count))
        w.u8(distinct ? 1 : 0)
        w.u32(UInt32(commandCount))
        // Offsets in the tables are from the file's start; the payloads follow the tables.
        let base = w.out.count + records.count * RegistryImage.recordEntryBytes + commandCount * RegistryImage.commandEntryBytes
        w.out.reserveCapacity(base + p.out.count + directories.count * 64 + 8)
        func span(_ s: Span) {
            w.u32(UInt32(base + s.start))
            w.u32(UInt32(s.count))
        }
        var first = 0
        for m in placed {
            span(m.payload)
            span(m.path)
            // size, times, inode: the payload's first fields after the path.
            let stat = m.path.start + m.path.count
            w.out += p.out[stat..<stat + 32]
            span(m.buildID ?? (0, 0))
            span(m.id)
            span(m.short)
            w.u32(UInt32(first))
            w.u32(UInt32(m.commands.count))
            w.u8(m.kind)
            w.u8(m.buildID == nil ? 0 : 1)
            w.u8(0)
            w.u8(0)
            first += m.commands.count
        }
        for m in placed {
            for c in m.commands {
                span(c.name)
                span(c.listing)
                span(c.summary)
                span(c.signature)
                w.u8(c.flags)
                w.u8(0)
                w.u8(0)
                w.u8(0)
            }
        }
        w.out += p.out
        w.u32(UInt32(directories.count))
        for d in directories {
            w.str(d.path)
            w.u64(UInt64(bitPattern: d.modified))
            w.u64(UInt64(bitPattern: d.changed))
            w.u64(d.inode)
            w.u64(UInt64(bitPattern: d.listedAt))
            w.str(d.names[...])
        }
        w.u64(checksum(w.out[...]))
        return w.out
    }

    /// XXH3-64 (libxxhash): about two instructions a byte, where zlib's
    /// CRC-32 and Adler-32 took seven.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBufferPointer { XXH3_64bits($0.baseAddress, $0.count) }
    }

    /// The records, or nil if anything about the file is off.
    static func decode(_ bytes: [UInt8]) -> [RegistryRecord]? {
        guard let image = RegistryImage(bytes) else { return nil }
        let records = image.records.indices.compactMap(image.record(at:))
        // Whole, and saying of itself what its records say (the flag is trusted at start).
        var ids = Set<String>(), shortNames = Set<String>(), distinct = true
        for case .plugin(let s) in records.map(\.outcome) where !ids.insert(s.info.id).inserted || !shortNames.insert(s.info.shortName).inserted {
            distinct = false
        }
        return records.count == image.records.count && distinct == image.distinct ? records : nil
    }

    /// Whether `bytes` are one JSON object (a listing the host will copy into its output).
    static func isListing(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "{") else { return false }
        do { try bytes.withUnsafeBufferPointer { (b) throws(JSONSyntaxError) in try JSON.validate(bytes: b) } } catch { return false }
        return true
    }

    struct Writer {
        var out: [UInt8] = []
        mutating func u8(_ v: UInt8) { out.append(v) }
        mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        mutating func str(_ s: String) {
            u32(UInt32(s.utf8.count))
            out += s.utf8
        }
        mutating func str(_ utf8: ArraySlice<UInt8>) {
            u32(UInt32(utf8.count))
            out += utf8
        }
        /// A str, and where its bytes went.
        mutating func span(_ s: String) -> (start: Int, count: Int) {
            str(s)
            return (out.count - s.utf8.count, s.utf8.count)
        }
        mutating func span(_ utf8: ArraySlice<UInt8>) -> (start: Int, count: Int) {
            str(utf8)
            return (out.count - utf8.count, utf8.count)
        }
        mutating func optional(_ s: String?) {
            if let s { u8(1); str(s) } else { u8(0) }
        }
        mutating func strs(_ list: [String]) {
            u32(UInt32(list.count))
            for s in list { str(s) }
        }
    }
}
