import CXXHash
#if canImport(Glibc)
import Glibc
#endif

/// The registry file read in place: its bytes, and where each record's
/// fields lie in them. The file opens with an index (one fixed-size entry
/// a record, one a command) that a start reads and checks in one short
/// pass: a thousand plugins are matched, registered and listed from it
/// without walking their records or making their Strings. A record's own
/// bytes (its payload, RegistryFile's record layout) are walked, checked
/// (UTF-8 included) and checked against its index entry only when the
/// record is needed whole (`payload(at:)`, `record(at:)`). Until then the
/// texts the index points at are only compared and copied: every span is
/// checked to lie within its record's payload, and the checksum catches a
/// damaged file. The layout is RegistryFile's.
final class RegistryImage: @unchecked Sendable {
    /// A str field: where its UTF-8 (checked) lies in `bytes`.
    struct Text: Equatable {
        var start: Int32
        var count: Int32
    }

    enum Kind: UInt8 {
        /// A plugin that registers commands and nothing else (no sections,
        /// entries, services, topics or service lookups, and nothing from
        /// its settings): the host needs no placeholder for it until one of
        /// its commands is looked up.
        case onlyCommands = 1
        case plugin = 2
        case refused = 3
    }

    /// A record's index entry.
    struct Record {
        var payload: Range<Int>
        var path: Text
        var size: Int64, modified: Int64, changed: Int64, inode: UInt64
        var buildID: Text?
        var kind: Kind
        /// Plugins only (empty for a refusal).
        var id: Text, shortName: Text
        /// Into `commands`.
        var commands: Range<Int32>
    }

    /// A command's index entry.
    struct Command: Equatable {
        var name: Text, listing: Text, summary: Text, signature: Text, flags: UInt8
    }

    struct Directory {
        var path: Text, modified: Int64, changed: Int64, inode: UInt64, listedAt: Int64
        /// Each name followed by a NUL (checked).
        var names: Text

        var isTrusted: Bool { modified < listedAt &- DirectorySnapshot.quietPeriod }

        func matches(_ st: stat) -> Bool {
            modified == Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
                && changed == Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec) && inode == UInt64(st.st_ino)
        }
    }

    static let recordEntryBytes = 84
    static let commandEntryBytes = 36

    /// The file's bytes, valid while the image lives (see RegistryBytes).
    private let storage: RegistryBytes
    var all: UnsafeBufferPointer<UInt8> { storage.buffer }
    /// The file says no two plugin records share an id or a short name, so
    /// plugins taken from it alone need no check against each other.
    let distinct: Bool
    let records: [Record]
    let commands: [Command]
    let directories: [Directory]

    /// Nil if anything about the file's index is off (see RegistryFile).
    convenience init?(_ bytes: [UInt8]) {
        self.init(RegistryBytes(copying: bytes))
    }

    /// The registry file at `path`, mapped; nil if it is missing, larger
    /// than `limit` or anything about its index is off.
    convenience init?(mapping path: String, limit: Int) {
        guard let storage = RegistryBytes(mapping: path, limit: limit) else { return nil }
        self.init(storage)
    }

    private init?(_ storage: RegistryBytes) {
        let all = storage.buffer
        guard all.count >= 8, all.count < Int(Int32.max) else { return nil }
        let body = all.count - 8
        let stored = all[body...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard XXH3_64bits(all.baseAddress, body) == stored else { return nil }
        // Read into local values, then kept: appends to a class's arrays
        // are each checked for exclusive access at run time.
        var records: [Record] = [], commands: [Command] = [], directories: [Directory] = []
        var distinct = false
        let ok = { () -> Bool in
            var r = RegistryCursor(UnsafeBufferPointer(rebasing: all[..<body]))
            guard r.bytes(RegistryFile.magic.count).map({ $0.elementsEqual(RegistryFile.magic) }) == true,
                  r.u32() == PluginRegistry.version, let tag = r.text(), RegistryImage.text(tag, in: all) == PluginRegistry.hostTag,
                  let count = r.count(minimumItemBytes: RegistryImage.recordEntryBytes), let flags = r.u8(), flags & ~1 == 0,
                  let commandCount = r.count(minimumItemBytes: RegistryImage.commandEntryBytes) else { return false }
            distinct = flags & 1 != 0
            guard count &* RegistryImage.recordEntryBytes &+ commandCount &* RegistryImage.commandEntryBytes <= body &- r.offset else { return false }
            // Payloads follow the two tables, one after another, in record order.
            var payloadEnd = r.offset + count * RegistryImage.recordEntryBytes + commandCount * RegistryImage.commandEntryBytes
            var commandsSoFar = 0
            // A span the entry does not have (a refusal's id, no build id) is empty at the end of the tables.
            let tablesEnd = payloadEnd
            records.reserveCapacity(count)
            let fileCount = all.count
            // Each entry read at its fixed offsets: a thousand of them are read on every start.
            func u32(_ e: UnsafeRawPointer, _ at: Int) -> Int { Int(UInt32(littleEndian: e.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }
            func i64(_ e: UnsafeRawPointer, _ at: Int) -> Int64 { Int64(littleEndian: e.loadUnaligned(fromByteOffset: at, as: Int64.self)) }
            func text(_ e: UnsafeRawPointer, _ at: Int) -> Text { Text(start: Int32(truncatingIfNeeded: u32(e, at)), count: Int32(truncatingIfNeeded: u32(e, at + 4))) }
            for _ in 0..<count {
                let e = UnsafeRawPointer(all.baseAddress! + r.offset)
                r.offset += RegistryImage.recordEntryBytes
                let start = u32(e, 0), length = u32(e, 4)
                let first = u32(e, 72), n = u32(e, 76)
                guard start == payloadEnd, length <= body - start, first == commandsSoFar, n <= commandCount - first,
                      let kind = Kind(rawValue: e.load(fromByteOffset: 80, as: UInt8.self)) else { return false }
                let hasBuildID = e.load(fromByteOffset: 81, as: UInt8.self)
                guard hasBuildID <= 1, e.loadUnaligned(fromByteOffset: 82, as: UInt16.self) == 0 else { return false }
                let end = start + length
                // Offsets and lengths are below 2^32 each, so these sums cannot overflow.
                func inPayload(_ t: Text) -> Bool { Int(t.start) >= start && Int(t.start) + Int(t.count) <= end }
                func none(_ t: Text) -> Bool { Int(t.start) == tablesEnd && t.count == 0 }
                let path = text(e, 8), buildID = text(e, 48), id = text(e, 56), short = text(e, 64)
                // Every offset and length below 2^31, so the spans' Int32 fields hold them.
                guard (u32(e, 8) | u32(e, 12) | u32(e, 48) | u32(e, 52) | u32(e, 56) | u32(e, 60) | u32(e, 64) | u32(e, 68)) < Int(Int32.max),
                      end <= fileCount,
                      inPayload(path), hasBuildID == 0 ? none(buildID) : inPayload(buildID),
                      kind == .refused ? (none(id) && none(short) && n == 0) : (inPayload(id) && inPayload(short))
                else { return false }
                records.append(Record(payload: start..<end, path: path, size: i64(e, 16), modified: i64(e, 24), changed: i64(e, 32),
                                      inode: UInt64(bitPattern: i64(e, 40)), buildID: hasBuildID == 1 ? buildID : nil, kind: kind, id: id,
                                      shortName: short, commands: Int32(first)..<Int32(first + n)))
                payloadEnd = end
                commandsSoFar += n
            }
            guard commandsSoFar == commandCount else { return false }
            commands.reserveCapacity(commandCount)
            var owner = 0
            for i in 0..<commandCount {
                while owner < records.count && Int(records[owner].commands.upperBound) <= i { owner += 1 }
                let payload = records[owner].payload
                let e = UnsafeRawPointer(all.baseAddress! + r.offset)
                r.offset += RegistryImage.commandEntryBytes
                let name = text(e, 0), listing = text(e, 8), summary = text(e, 16), signature = text(e, 24)
                let flags = e.load(fromByteOffset: 32, as: UInt8.self)
                func inPayload(_ t: Text) -> Bool {
                    (Int(t.start) >= payload.lowerBound || t.count == 0) && Int(t.start) + Int(t.count) <= payload.upperBound
                }
                guard (u32(e, 0) | u32(e, 4) | u32(e, 8) | u32(e, 12) | u32(e, 16) | u32(e, 20) | u32(e, 24) | u32(e, 28)) < Int(Int32.max),
                      flags & ~3 == 0, e.load(fromByteOffset: 33, as: UInt8.self) == 0, e.loadUnaligned(fromByteOffset: 34, as: UInt16.self) == 0,
                      name.count > 0, inPayload(name), inPayload(listing), inPayload(summary), inPayload(signature) else { return false }
                commands.append(Command(name: name, listing: listing, summary: summary, signature: signature, flags: flags))
            }
            // Past the payloads: the directory snapshots.
            r.offset = payloadEnd
            guard let directoryCount = r.count(minimumItemBytes: 40) else { return false }
            for _ in 0..<directoryCount {
                guard let path = r.text(), let modified = r.i64(), let changed = r.i64(), let inode = r.u64(), let listed = r.i64(),
                      let names = r.text(), RegistryImage.isNameList(UnsafeBufferPointer(rebasing: all[Int(names.start)..<Int(names.start + names.count)]))
                else { return false }
                directories.append(Directory(path: path, modified: modified, changed: changed, inode: inode, listedAt: listed, names: names))
            }
            return r.atEnd
        }()
        guard ok else { return nil }
        self.storage = storage
        self.distinct = distinct
        self.records = records
        self.commands = commands
        self.directories = directories
    }

    /// Names each followed by a NUL, none empty (and none with a slash: a name, not a path).
    fileprivate static func isNameList(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in b {
            if byte == UInt8(ascii: "/") || (byte == 0 && previous == 0) { return false }
            previous = byte
        }
        return previous == 0
    }

    fileprivate static func text(_ t: Text, in all: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: all[Int(t.start)..<Int(t.start + t.count)]), as: UTF8.self)
    }

    // MARK: a record's payload, walked when it is needed whole

    /// What a walk of one record's payload finds: every field's span.
    struct Payload {
        struct Plugin {
            var id: Text, shortName: Text, name: Text, version: Text, summary: Text
            var abiMajor: UInt32, abiMinor: UInt32
            var services: Range<Int32>, topics: Range<Int32>, uses: Range<Int32>
            var flags: UInt8
        }
        struct Section { var id: Text, title: Text, order: Int32 }
        struct Entry {
            var localID: Text, kind: EntryKind, section: Text, title: Text, summary: Text, defaultValue: Text
            var choices: Range<Int32>, flags: UInt8, command: Text?
        }
        struct PayloadCommand { var signature: Text, name: Text, summary: Text, details: Text, flags: UInt8, listing: Text }
        struct Refusal { var reason: Text, pluginID: Text?, uses: Range<Int32> }

        var path = Text(start: 0, count: 0)
        var size: Int64 = 0, modified: Int64 = 0, changed: Int64 = 0, inode: UInt64 = 0
        var buildID: Text?
        var plugin: Plugin?
        var refusal: Refusal?
        var sections: [Section] = []
        var entries: [Entry] = []
        var commands: [PayloadCommand] = []
        /// The items of every list of strings (choices, services, topics, uses).
        var lists: [Text] = []

        var onlyCommands: Bool {
            guard let p = plugin else { return false }
            return sections.isEmpty && entries.isEmpty && p.services.isEmpty && p.topics.isEmpty && p.uses.isEmpty && p.flags == 0
        }
    }

    /// Record `i`'s payload walked and checked, field by field and against
    /// its index entry; nil if anything is off.
    func payload(at i: Int) -> Payload? {
        let entry = records[i], all = self.all
        return { () -> Payload? in
            var r = RegistryCursor(UnsafeBufferPointer(rebasing: all[..<entry.payload.upperBound]))
            r.offset = entry.payload.lowerBound
            var p = Payload()
            guard p.read(&r, all), r.atEnd, p.path == entry.path, p.size == entry.size, p.modified == entry.modified,
                  p.changed == entry.changed, p.inode == entry.inode, p.buildID == entry.buildID else { return nil }
            if let plugin = p.plugin {
                let indexed = commands[Int(entry.commands.lowerBound)..<Int(entry.commands.upperBound)]
                guard entry.kind == (p.onlyCommands ? .onlyCommands : .plugin), plugin.id == entry.id, plugin.shortName == entry.shortName,
                      indexed.elementsEqual(p.commands.map { Command(name: $0.name, listing: $0.listing, summary: $0.summary,
                                                                     signature: $0.signature, flags: $0.flags) }) else { return nil }
            } else {
                guard entry.kind == .refused else { return nil }
            }
            return p
        }()
    }
}

extension RegistryImage.Payload {
    typealias Text = RegistryImage.Text

    mutating func read(_ r: inout RegistryCursor, _ all: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let path = r.text(), let size = r.i64(), let modified = r.i64(), let changed = r.i64(), let inode = r.u64(),
              let buildID = r.optionalText(), let outcome = r.u8() else { return false }
        (self.path, self.size, self.modified, self.changed, self.inode, self.buildID) = (path, size, modified, changed, inode, buildID)
        switch outcome {
        case 1:
            guard let plugin = readPlugin(&r, all) else { return false }
            self.plugin = plugin
        case 2:
            guard let reason = r.text(), let id = r.optionalText(), let uses = readList(&r) else { return false }
            refusal = Refusal(reason: reason, pluginID: id, uses: uses)
        default:
            return false
        }
        return true
    }

    mutating func readPlugin(_ r: inout RegistryCursor, _ all: UnsafeBufferPointer<UInt8>) -> Plugin? {
        guard let id = r.text(), let short = r.text(), let name = r.text(), let version = r.text(), let summary = r.text(),
              let major = r.u32(), let minor = r.u32(), let sectionCount = r.count(minimumItemBytes: 12) else { return nil }
        for _ in 0..<sectionCount {
            guard let sid = r.text(), let title = r.text(), let order = r.u32() else { return nil }
            sections.append(Section(id: sid, title: title, order: Int32(bitPattern: order)))
        }
        guard let entryCount = r.count(minimumItemBytes: 29) else { return nil }
        for _ in 0..<entryCount {
            guard let local = r.text(), let kindText = r.text(), let kind = EntryKind(rawValue: RegistryImage.text(kindText, in: all)),
                  let section = r.text(), let title = r.text(), let entrySummary = r.text(), let defaultValue = r.text(),
                  let choices = readList(&r), let flags = r.u8(), flags & ~15 == 0 else { return nil }
            var command: Text?
            if flags & 8 != 0 {
                guard let c = r.text() else { return nil }
                command = c
            }
            entries.append(Entry(localID: local, kind: kind, section: section, title: title, summary: entrySummary,
                                 defaultValue: defaultValue, choices: choices, flags: flags, command: command))
        }
        guard let commandCount = r.count(minimumItemBytes: 21) else { return nil }
        for _ in 0..<commandCount {
            guard let signature = r.text(), let commandName = r.text(), commandName.count > 0, let commandSummary = r.text(),
                  let details = r.text(), let flags = r.u8(), flags & ~3 == 0, let listing = r.rawText() else { return nil }
            commands.append(PayloadCommand(signature: signature, name: commandName, summary: commandSummary, details: details,
                                           flags: flags, listing: listing))
        }
        guard let services = readList(&r), let topics = readList(&r), let uses = readList(&r), let flags = r.u8(), flags & ~3 == 0 else {
            return nil
        }
        return Plugin(id: id, shortName: short, name: name, version: version, summary: summary, abiMajor: major, abiMinor: minor,
                      services: services, topics: topics, uses: uses, flags: flags)
    }

    mutating func readList(_ r: inout RegistryCursor) -> Range<Int32>? {
        guard let n = r.count(minimumItemBytes: 4) else { return nil }
        let first = Int32(lists.count)
        for _ in 0..<n {
            guard let t = r.text() else { return nil }
            lists.append(t)
        }
        return first..<Int32(lists.count)
    }
}

extension RegistryImage {
    // MARK: reading the spans

    func string(_ t: Text) -> String { RegistryImage.text(t, in: all) }

    func slice(_ t: Text) -> ArraySlice<UInt8> { ArraySlice(all[Int(t.start)..<Int(t.start + t.count)]) }

    func strings(_ range: Range<Int32>, of p: Payload) -> [String] { range.map { string(p.lists[Int($0)]) } }

    /// The snapshot of the directory searched as `path`, if the file has one.
    func directory(path: String) -> Directory? { directories.first { text($0.path, equals: path) } }

    func snapshot(_ d: Directory) -> DirectorySnapshot {
        DirectorySnapshot(path: string(d.path), modified: d.modified, changed: d.changed, inode: d.inode, listedAt: d.listedAt,
                          names: Array(slice(d.names)))
    }

    /// Calls `body` with each of the snapshot's names, as bytes and as a C
    /// string (the NUL after it in the file), valid for the call.
    func forEachName(in d: Directory, _ body: (UnsafeBufferPointer<UInt8>, UnsafePointer<CChar>) -> Void) {
        do {
            let all = self.all
            var start = Int(d.names.start)
            let end = start + Int(d.names.count)
            var i = start
            while i < end {
                if all[i] == 0 {
                    let name = UnsafeBufferPointer(rebasing: all[start..<i])
                    (all.baseAddress! + start).withMemoryRebound(to: CChar.self, capacity: i - start + 1) { body(name, $0) }
                    start = i + 1
                }
                i += 1
            }
        }
    }

    /// Appends the text's bytes (copied straight from the file's).
    func append(_ t: Text, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: all[Int(t.start)..<Int(t.start + t.count)]))
    }

    /// `short` + "." + `name`, made in place.
    func fullName(_ short: Text, _ name: Text) -> String {
        let a = Int(short.count), b = Int(name.count), all = self.all
        return String(unsafeUninitializedCapacity: a + 1 + b) { out in
            let base = out.baseAddress!
            (base).initialize(from: all.baseAddress! + Int(short.start), count: a)
            base[a] = UInt8(ascii: ".")
            (base + a + 1).initialize(from: all.baseAddress! + Int(name.start), count: b)
            return a + 1 + b
        }
    }

    /// Whether the text's bytes are those of `u`.
    func text(_ t: Text, equals u: Substring.UTF8View) -> Bool {
        u.count == Int(t.count) && zip(u, all[Int(t.start)..<Int(t.start + t.count)]).allSatisfy { $0 == $1 }
    }

    /// Whether the text's bytes are those of `s`.
    func text(_ t: Text, equals s: String) -> Bool {
        var s = s
        return s.withUTF8 { u in
            guard u.count == Int(t.count) else { return false }
            guard let other = u.baseAddress else { return true }
            return memcmp(all.baseAddress! + Int(t.start), other, u.count) == 0
        }
    }

    /// The record's file key (its build id kept as UTF-8).
    func key(at i: Int) -> FileKey {
        let r = records[i]
        var key = FileKey(path: string(r.path), size: r.size, modified: r.modified, changed: r.changed, inode: r.inode, buildID: nil)
        key.buildIDUTF8 = r.buildID.map(slice)
        return key
    }

    /// Whether the record, found by its path, describes the file as `key` (stat'ed at that path) says it is now.
    func isCurrent(_ i: Int, for key: FileKey) -> Bool {
        let r = records[i]
        return r.size == key.size && r.modified == key.modified && r.changed == key.changed && r.inode == key.inode
    }

    /// `isCurrent` for the file's stat (as FileKey(path:stat:) reads it).
    func isCurrent(_ i: Int, for st: stat) -> Bool {
        let r = records[i]
        return r.size == Int64(st.st_size) && r.modified == Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            && r.changed == Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec) && r.inode == UInt64(st.st_ino)
    }

    /// `body` of record `i`'s file name (its path after the last slash).
    func withName<T>(of i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        let t = records[i].path
        let path = all[Int(t.start)..<Int(t.start + t.count)]
        let start = path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? path.startIndex
        return body(UnsafeBufferPointer(rebasing: all[start..<path.endIndex]))
    }

    /// Whether record `i`'s path is `base` followed by `name`, compared in place.
    func path(of i: Int, is base: [UInt8], _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let t = records[i].path
        guard Int(t.count) == base.count + name.count, let start = all.baseAddress.map({ $0 + Int(t.start) }) else { return false }
        return base.withUnsafeBufferPointer { memcmp(start, $0.baseAddress!, base.count) == 0 }
            && (name.isEmpty || memcmp(start + base.count, name.baseAddress!, name.count) == 0)
    }

    func info(of p: Payload.Plugin, path: String) -> PluginInfo {
        PluginInfo(id: string(p.id), shortName: string(p.shortName), name: string(p.name), version: string(p.version),
                   summary: string(p.summary), abiMajor: p.abiMajor, abiMinor: p.abiMinor, path: path)
    }

    /// The record made whole; nil if its payload is off.
    func record(at i: Int) -> RegistryRecord? {
        guard let p = payload(at: i) else { return nil }
        let key = key(at: i)
        if let refusal = p.refusal {
            return RegistryRecord(key: key, outcome: .refused(pluginID: refusal.pluginID.map(string), reason: string(refusal.reason),
                                                               usesServices: strings(refusal.uses, of: p)))
        }
        return RegistryRecord(key: key, outcome: .plugin(scanned(p, path: key.path)))
    }

    /// A plugin record's registrations; nil if its payload is off or a refusal.
    func scanned(at i: Int, path: String) -> ScannedPlugin? { payload(at: i).flatMap { $0.plugin == nil ? nil : scanned($0, path: path) } }

    func scanned(_ p: Payload, path: String) -> ScannedPlugin {
        let plugin = p.plugin!
        let scanned = ScannedPlugin(info: info(of: plugin, path: path))
        scanned.sections = p.sections.map { ScannedPlugin.SectionRecord(id: string($0.id), title: string($0.title), order: $0.order) }
        scanned.entries = p.entries.map { e in
            ScannedPlugin.EntryRecord(localID: string(e.localID), kind: e.kind, section: string(e.section), title: string(e.title),
                                      summary: string(e.summary), defaultValue: string(e.defaultValue), choices: strings(e.choices, of: p),
                                      isSecret: e.flags & 1 != 0, command: e.command.map(string), isPluginValue: e.flags & 2 != 0,
                                      hasChanged: e.flags & 4 != 0)
        }
        scanned.commands = p.commands.map { c in
            ScannedPlugin.CommandRecord(signatureUTF8: slice(c.signature), summaryUTF8: slice(c.summary), detailsUTF8: slice(c.details),
                                        changesState: c.flags & 1 != 0, returnsJSON: c.flags & 2 != 0, name: string(c.name),
                                        listing: slice(c.listing))
        }
        scanned.services = strings(plugin.services, of: p)
        scanned.topics = strings(plugin.topics, of: p)
        scanned.usesServices = strings(plugin.uses, of: p)
        scanned.registersFromSettings = plugin.flags & 1 != 0
        scanned.syncsEntries = plugin.flags & 2 != 0
        return scanned
    }
}

/// A cursor over the file's bytes that fails (nil) rather than read past
/// the end; every length is checked against what is left before it is used.
struct RegistryCursor {
    let base: UnsafeBufferPointer<UInt8>
    var offset = 0
    /// Every byte is ASCII, so every field is valid UTF-8.
    var allASCII = false

    init(_ base: UnsafeBufferPointer<UInt8>) { self.base = base }

    var atEnd: Bool { offset == base.count }

    @inline(__always)
    mutating func bytes(_ n: Int) -> UnsafeBufferPointer<UInt8>? {
        guard n >= 0, n <= base.count - offset else { return nil }
        defer { offset += n }
        return UnsafeBufferPointer(rebasing: base[offset..<offset + n])
    }

    @inline(__always)
    mutating func u8() -> UInt8? {
        guard offset < base.count else { return nil }
        defer { offset &+= 1 }
        return base[offset]
    }

    @inline(__always)
    mutating func u32() -> UInt32? {
        guard base.count &- offset >= 4 else { return nil }
        defer { offset &+= 4 }
        return UInt32(littleEndian: UnsafeRawPointer(base.baseAddress! + offset).loadUnaligned(as: UInt32.self))
    }

    @inline(__always)
    mutating func u64() -> UInt64? {
        guard base.count &- offset >= 8 else { return nil }
        defer { offset &+= 8 }
        return UInt64(littleEndian: UnsafeRawPointer(base.baseAddress! + offset).loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    mutating func i64() -> Int64? { u64().map { Int64(bitPattern: $0) } }

    /// A count of items of at least `minimumItemBytes` each that fit in what is left.
    @inline(__always)
    mutating func count(minimumItemBytes: Int) -> Int? {
        guard let n = u32().map(Int.init) else { return nil }
        // n × minimumItemBytes cannot overflow: n < 2^32 and the item sizes are small.
        if n == 0 { return 0 }
        return n &* minimumItemBytes <= base.count &- offset ? n : nil
    }

    /// A str field whose bytes need not be text (a listing, checked when it came in).
    /// Offsets fit in Int32: RegistryImage takes no file of 2 GiB or more.
    @inline(__always)
    mutating func rawText() -> RegistryImage.Text? {
        guard let n = u32(), Int(n) <= base.count &- offset else { return nil }
        defer { offset &+= Int(n) }
        return RegistryImage.Text(start: Int32(truncatingIfNeeded: offset), count: Int32(truncatingIfNeeded: n))
    }

    /// A str field, checked to be UTF-8.
    @inline(__always)
    mutating func text() -> RegistryImage.Text? {
        guard let t = rawText() else { return nil }
        // ASCII (nearly every field) is valid UTF-8 as it is.
        if allASCII { return t }
        let b = UnsafeBufferPointer(rebasing: base[Int(t.start)..<Int(t.start) + Int(t.count)])
        return RegistryCursor.isASCII(b) || String(validating: b, as: UTF8.self) != nil ? t : nil
    }

    @inline(__always)
    mutating func optionalText() -> RegistryImage.Text?? {
        switch u8() {
        case 0: return .some(nil)
        case 1: return text().map { .some($0) }
        default: return nil
        }
    }

    /// Eight bytes at a time.
    @inline(__always)
    static func isASCII(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = b.baseAddress else { return true }
        var i = 0, any: UInt64 = 0
        while i &+ 8 <= b.count {
            any |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            i &+= 8
        }
        while i < b.count {
            any |= UInt64(p[i])
            i &+= 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }
}

/// The bytes a RegistryImage reads, for as long as it lives: the file
/// mapped read-only, or (tests, fuzzing) a copy of an array. A start that
/// maps the file faults in a few pages of the page cache where reading it
/// copied it into new memory page by page (a thousand plugins' 700 KB
/// registry: 0.28 ms read, 0.03 ms mapped). The file is only ever replaced
/// by a rename, never rewritten in place, so the mapping does not change
/// while it is read.
final class RegistryBytes: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<UInt8>
    private let mapped: Bool

    init(copying bytes: [UInt8]) {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        buffer = UnsafeBufferPointer(copy)
        mapped = false
    }

    /// Nil when the file cannot be opened or mapped, is shorter than a
    /// checksum or longer than `limit`.
    init?(mapping path: String, limit: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size >= 8, st.st_size <= limit else { return nil }
        let count = Int(st.st_size)
        guard let base = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return nil }
        buffer = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count)
        mapped = true
    }

    deinit {
        if mapped {
            munmap(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
        } else {
            UnsafeMutableBufferPointer(mutating: buffer).deallocate()
        }
    }
}
