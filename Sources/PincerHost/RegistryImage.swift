#if canImport(Glibc)
import Glibc
#endif

/// The registry file read in place: its bytes, checked whole in one pass,
/// and where each record's fields lie in them. A start with a thousand
/// plugins matches, registers and lists them from these spans without
/// making their Strings; `record(at:)` makes one record whole (a
/// RegistryRecord) when it is needed. The layout is RegistryFile's.
final class RegistryImage: @unchecked Sendable {
    /// A str field: where its UTF-8 (checked) lies in `bytes`.
    struct Text {
        var start: Int32
        var count: Int32
    }

    struct Record {
        var path: Text
        var size: Int64, modified: Int64, changed: Int64, inode: UInt64
        var buildID: Text?
        /// Nil for a refusal.
        var plugin: Plugin?
        var refusal: Refusal?
    }

    struct Plugin {
        var id: Text, shortName: Text, name: Text, version: Text, summary: Text
        var abiMajor: UInt32, abiMinor: UInt32
        var sections: Range<Int32>, entries: Range<Int32>, commands: Range<Int32>
        /// Into `lists`.
        var services: Range<Int32>, topics: Range<Int32>, uses: Range<Int32>
        var flags: UInt8

        /// It registers commands and nothing else (no sections, entries,
        /// services, topics or service lookups, and nothing from its
        /// settings): the host needs no placeholder for it until one of its
        /// commands is looked up.
        var onlyCommands: Bool {
            sections.isEmpty && entries.isEmpty && services.isEmpty && topics.isEmpty && uses.isEmpty && flags == 0
        }
    }

    struct Section { var id: Text, title: Text, order: Int32 }
    struct Entry {
        var localID: Text, kind: EntryKind, section: Text, title: Text, summary: Text, defaultValue: Text
        var choices: Range<Int32>, flags: UInt8, command: Text?
    }
    struct Command { var signature: Text, name: Text, summary: Text, details: Text, flags: UInt8, listing: Text }
    struct Refusal { var reason: Text, pluginID: Text?, uses: Range<Int32> }
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

    let bytes: [UInt8]
    /// No two plugin records share an id or a short name, so plugins taken
    /// from this file alone need no check against each other.
    let distinct: Bool
    let records: [Record]
    let sections: [Section]
    let entries: [Entry]
    let commands: [Command]
    /// The items of every list of strings (choices, services, topics, uses).
    let lists: [Text]
    let directories: [Directory]

    /// Nil if anything about the file is off (see RegistryFile).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8, bytes.count < Int(Int32.max) else { return nil }
        let body = bytes.count - 8
        let stored = bytes[body...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard RegistryFile.checksum(bytes[..<body]) == stored else { return nil }
        // Read into a local value, then kept: appends to a class's arrays
        // are each checked for exclusive access at run time.
        let read = bytes.withUnsafeBufferPointer { all -> Spans? in
            var r = Cursor(UnsafeBufferPointer(rebasing: all[..<body]))
            // A file all ASCII (nearly every one) needs no field checked as UTF-8.
            r.allASCII = Cursor.isASCII(r.base)
            var spans = Spans()
            guard r.bytes(RegistryFile.magic.count).map({ $0.elementsEqual(RegistryFile.magic) }) == true,
                  r.u32() == PluginRegistry.version, let tag = r.text(),
                  RegistryImage.text(tag, in: all) == PluginRegistry.hostTag,
                  let count = r.count(minimumItemBytes: 45), let flags = r.u8(), flags & ~1 == 0 else { return nil }
            spans.distinct = flags & 1 != 0
            spans.records.reserveCapacity(count)
            for _ in 0..<count {
                guard let record = spans.readRecord(&r, all) else { return nil }
                spans.records.append(record)
            }
            guard let directoryCount = r.count(minimumItemBytes: 40) else { return nil }
            for _ in 0..<directoryCount {
                guard let path = r.text(), let modified = r.i64(), let changed = r.i64(), let inode = r.u64(), let listed = r.i64(),
                      let names = r.text(), RegistryImage.isNameList(UnsafeBufferPointer(rebasing: all[Int(names.start)..<Int(names.start + names.count)]))
                else { return nil }
                spans.directories.append(RegistryImage.Directory(path: path, modified: modified, changed: changed, inode: inode,
                                                                 listedAt: listed, names: names))
            }
            return r.atEnd ? spans : nil
        }
        guard let read else { return nil }
        self.bytes = bytes
        distinct = read.distinct
        records = read.records
        sections = read.sections
        entries = read.entries
        commands = read.commands
        lists = read.lists
        directories = read.directories
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
}

/// What the one pass over the file finds.
private struct Spans {
    typealias Text = RegistryImage.Text
    var distinct = false
    var records: [RegistryImage.Record] = []
    var sections: [RegistryImage.Section] = []
    var entries: [RegistryImage.Entry] = []
    var commands: [RegistryImage.Command] = []
    var lists: [Text] = []
    var directories: [RegistryImage.Directory] = []

    mutating func readRecord(_ r: inout Cursor, _ all: UnsafeBufferPointer<UInt8>) -> RegistryImage.Record? {
        guard let path = r.text(), let size = r.i64(), let modified = r.i64(), let changed = r.i64(), let inode = r.u64(),
              let buildID = r.optionalText(), let outcome = r.u8() else { return nil }
        var record = RegistryImage.Record(path: path, size: size, modified: modified, changed: changed, inode: inode, buildID: buildID)
        switch outcome {
        case 1:
            guard let plugin = readPlugin(&r, all) else { return nil }
            record.plugin = plugin
        case 2:
            guard let reason = r.text(), let id = r.optionalText(), let uses = readList(&r) else { return nil }
            record.refusal = RegistryImage.Refusal(reason: reason, pluginID: id, uses: uses)
        default:
            return nil
        }
        return record
    }

    mutating func readPlugin(_ r: inout Cursor, _ all: UnsafeBufferPointer<UInt8>) -> RegistryImage.Plugin? {
        guard let id = r.text(), let short = r.text(), let name = r.text(), let version = r.text(), let summary = r.text(),
              let major = r.u32(), let minor = r.u32(), let sectionCount = r.count(minimumItemBytes: 12) else { return nil }
        let firstSection = Int32(sections.count)
        for _ in 0..<sectionCount {
            guard let sid = r.text(), let title = r.text(), let order = r.u32() else { return nil }
            sections.append(RegistryImage.Section(id: sid, title: title, order: Int32(bitPattern: order)))
        }
        guard let entryCount = r.count(minimumItemBytes: 29) else { return nil }
        let firstEntry = Int32(entries.count)
        for _ in 0..<entryCount {
            guard let local = r.text(), let kindText = r.text(), let kind = EntryKind(rawValue: RegistryImage.text(kindText, in: all)),
                  let section = r.text(),
                  let title = r.text(), let entrySummary = r.text(), let defaultValue = r.text(), let choices = readList(&r),
                  let flags = r.u8(), flags & ~15 == 0 else { return nil }
            var command: Text?
            if flags & 8 != 0 {
                guard let c = r.text() else { return nil }
                command = c
            }
            entries.append(RegistryImage.Entry(localID: local, kind: kind, section: section, title: title, summary: entrySummary,
                                 defaultValue: defaultValue, choices: choices, flags: flags, command: command))
        }
        guard let commandCount = r.count(minimumItemBytes: 21) else { return nil }
        let firstCommand = Int32(commands.count)
        for _ in 0..<commandCount {
            guard let signature = r.text(), let commandName = r.text(), commandName.count > 0, let commandSummary = r.text(),
                  let details = r.text(), let flags = r.u8(), flags & ~3 == 0, let listing = r.rawText() else { return nil }
            commands.append(RegistryImage.Command(signature: signature, name: commandName, summary: commandSummary, details: details, flags: flags,
                                    listing: listing))
        }
        guard let services = readList(&r), let topics = readList(&r), let uses = readList(&r), let flags = r.u8(), flags & ~3 == 0 else {
            return nil
        }
        return RegistryImage.Plugin(id: id, shortName: short, name: name, version: version, summary: summary, abiMajor: major, abiMinor: minor,
                      sections: firstSection..<Int32(sections.count), entries: firstEntry..<Int32(entries.count),
                      commands: firstCommand..<Int32(commands.count), services: services, topics: topics, uses: uses, flags: flags)
    }

    mutating func readList(_ r: inout Cursor) -> Range<Int32>? {
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

    func string(_ t: Text) -> String { bytes.withUnsafeBufferPointer { RegistryImage.text(t, in: $0) } }

    func slice(_ t: Text) -> ArraySlice<UInt8> { bytes[Int(t.start)..<Int(t.start + t.count)] }

    func strings(_ range: Range<Int32>) -> [String] { range.map { string(lists[Int($0)]) } }

    /// The snapshot of the directory searched as `path`, if the file has one.
    func directory(path: String) -> Directory? { directories.first { text($0.path, equals: path) } }

    func snapshot(_ d: Directory) -> DirectorySnapshot {
        DirectorySnapshot(path: string(d.path), modified: d.modified, changed: d.changed, inode: d.inode, listedAt: d.listedAt,
                          names: Array(slice(d.names)))
    }

    /// Calls `body` with each of the snapshot's names, as bytes and as a C
    /// string (the NUL after it in the file), valid for the call.
    func forEachName(in d: Directory, _ body: (UnsafeBufferPointer<UInt8>, UnsafePointer<CChar>) -> Void) {
        bytes.withUnsafeBufferPointer { all in
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
        bytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[Int(t.start)..<Int(t.start + t.count)])) }
    }

    /// `short` + "." + `name`, made in place.
    func fullName(_ short: Text, _ name: Text) -> String {
        let a = Int(short.count), b = Int(name.count)
        return bytes.withUnsafeBufferPointer { all in
            String(unsafeUninitializedCapacity: a + 1 + b) { out in
                let base = out.baseAddress!
                (base).initialize(from: all.baseAddress! + Int(short.start), count: a)
                base[a] = UInt8(ascii: ".")
                (base + a + 1).initialize(from: all.baseAddress! + Int(name.start), count: b)
                return a + 1 + b
            }
        }
    }

    /// Whether the text's bytes are those of `u`.
    func text(_ t: Text, equals u: Substring.UTF8View) -> Bool {
        u.count == Int(t.count) && bytes.withUnsafeBufferPointer { all in
            zip(u, all[Int(t.start)..<Int(t.start + t.count)]).allSatisfy { $0 == $1 }
        }
    }

    /// Whether the text's bytes are those of `s`.
    func text(_ t: Text, equals s: String) -> Bool {
        var s = s
        return s.withUTF8 { u in
            guard u.count == Int(t.count) else { return false }
            guard let other = u.baseAddress else { return true }
            return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + Int(t.start), other, u.count) == 0 }
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

    func info(of p: Plugin, path: String) -> PluginInfo {
        PluginInfo(id: string(p.id), shortName: string(p.shortName), name: string(p.name), version: string(p.version),
                   summary: string(p.summary), abiMajor: p.abiMajor, abiMinor: p.abiMinor, path: path)
    }

    /// The record made whole.
    func record(at i: Int) -> RegistryRecord {
        let r = records[i]
        let key = key(at: i)
        if let refusal = r.refusal {
            return RegistryRecord(key: key, outcome: .refused(pluginID: refusal.pluginID.map(string), reason: string(refusal.reason),
                                                               usesServices: strings(refusal.uses)))
        }
        return RegistryRecord(key: key, outcome: .plugin(scanned(r.plugin!, path: key.path)))
    }

    func scanned(_ p: Plugin, path: String) -> ScannedPlugin {
        let scanned = ScannedPlugin(info: info(of: p, path: path))
        scanned.sections = sections[Int(p.sections.lowerBound)..<Int(p.sections.upperBound)].map {
            ScannedPlugin.SectionRecord(id: string($0.id), title: string($0.title), order: $0.order)
        }
        scanned.entries = entries[Int(p.entries.lowerBound)..<Int(p.entries.upperBound)].map { e in
            ScannedPlugin.EntryRecord(localID: string(e.localID), kind: e.kind, section: string(e.section), title: string(e.title),
                                      summary: string(e.summary), defaultValue: string(e.defaultValue), choices: strings(e.choices),
                                      isSecret: e.flags & 1 != 0, command: e.command.map(string), isPluginValue: e.flags & 2 != 0,
                                      hasChanged: e.flags & 4 != 0)
        }
        scanned.commands = commands[Int(p.commands.lowerBound)..<Int(p.commands.upperBound)].map(commandRecord)
        scanned.services = strings(p.services)
        scanned.topics = strings(p.topics)
        scanned.usesServices = strings(p.uses)
        scanned.registersFromSettings = p.flags & 1 != 0
        scanned.syncsEntries = p.flags & 2 != 0
        return scanned
    }

    func commandRecord(_ c: Command) -> ScannedPlugin.CommandRecord {
        ScannedPlugin.CommandRecord(signatureUTF8: slice(c.signature), summaryUTF8: slice(c.summary), detailsUTF8: slice(c.details),
                                    changesState: c.flags & 1 != 0, returnsJSON: c.flags & 2 != 0, name: string(c.name),
                                    listing: slice(c.listing))
    }
}

/// A cursor over the file's bytes that fails (nil) rather than read past
/// the end; every length is checked against what is left before it is used.
private struct Cursor {
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
        return Cursor.isASCII(b) || String(validating: b, as: UTF8.self) != nil ? t : nil
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
