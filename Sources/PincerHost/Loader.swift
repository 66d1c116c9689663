import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

/// Finds plugin libraries, opens them and validates their entry records
/// before handing them to the host. Each refusal names the file and the
/// reason, and never stops the other plugins from loading.
extension Host {
    /// The prefix of built-in plugin libraries beside the executable
    /// (SwiftPM names them lib<product>.so).
    public static let builtinPrefix = "libpincer-plugin-"

    /// Plugin files in search order: built-ins, then each path in `pluginPaths`
    /// (a directory contributes its *.so files in name order, a file itself).
    public func pluginCandidates() -> [String] { candidateFiles().map(\.shown) }

    enum Candidate {
        /// `shown`: as the user gave it (a directory's path joined with the
        /// name); `canonical`: what duplicates and the registry are keyed
        /// by; `key`: the file's identity, when the listing already stat'ed it.
        // Boxed, so that the `.known` candidates of a thousand plugins take
        // a word each, not the room of two paths and a key.
        indirect case file(shown: String, canonical: String, key: FileKey?)
        /// A file of a trusted directory snapshot whose registry record the
        /// survey found current (its stat agrees), in the order the records
        /// were written: its canonical path is the record's, and it is shown
        /// as the record's name after `shownBase` (the directory as the user
        /// gave it, nil when that is the canonical one). Its paths are made
        /// Strings only when asked for: a start with a thousand plugins then
        /// makes none for them.
        case known(record: Int, image: RegistryImage, shownBase: [UInt8]?)

        var shown: String {
            switch self {
            case .file(let shown, _, _): shown
            case .known(let k, let image, nil): image.string(image.records[k].path)
            case .known(let k, let image, let base?): image.withName(of: k) { Host.joined(base, $0) }
            }
        }

        var canonical: String {
            switch self {
            case .file(_, let canonical, _): canonical
            case .known(let k, let image, _): image.string(image.records[k].path)
            }
        }
    }

    /// The candidates with their canonical paths.
    func candidateFiles() -> [Candidate] { surveyCandidates(known: nil).files }

    /// The candidates, and what each searched directory held.
    struct CandidateSurvey {
        var files: [Candidate] = []
        /// Every searched directory's snapshot as it now stands.
        var directories: [DirectorySnapshot] = []
        /// A directory was listed anew and its snapshot differs from the
        /// known one (or has become trustworthy): worth writing down.
        var directoriesChanged = false
    }

    /// The candidates with their canonical paths. A directory is resolved
    /// once and each file in it stat'ed relative to it (fstatat), resolved
    /// further only when it is a symbolic link: one system call a file, not
    /// realpath's walk of every component and another stat. A directory
    /// whose trustworthy snapshot in `known` (the registry) matches it as it
    /// is now is not listed again: its names come from the snapshot (see
    /// DirectorySnapshot). Names stay bytes until a file is accepted: with a
    /// thousand plugins this runs on every start, and its system calls are
    /// most of what it costs.
    func surveyCandidates(known: RegistryImage?) -> CandidateSurvey {
        var survey = CandidateSurvey()
        var resolvedDirectories: [String] = []
        // Duplicates (by canonical path) come only from a symbolic link, a
        // file named on its own, or a directory met twice.
        var mayRepeat = false
        // The record the next file of a trusted snapshot should match.
        var nextRecord = 0
        func addDirectory(_ dir: String, _ dirStat: stat, prefix: [UInt8]?) {
            let resolved = Host.canonical(dir)
            let repeated = resolvedDirectories.contains(resolved)
            if repeated { mayRepeat = true }
            resolvedDirectories.append(resolved)
            let fd = open(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if fd >= 0 { close(fd) } }
            let shownBase = Array(dir.utf8) + [UInt8(ascii: "/")], canonicalBase = Array(resolved.utf8) + [UInt8(ascii: "/")]
            let sameBase = shownBase == canonicalBase
            func add(_ name: UnsafeBufferPointer<UInt8>, _ cName: UnsafePointer<CChar>, matching image: RegistryImage?) {
                var st = stat()
                guard fd >= 0, fstatat(fd, cName, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) != S_IFLNK else {
                    mayRepeat = true
                    let canonical = Host.joined(canonicalBase, name)
                    survey.files.append(.file(shown: Host.joined(shownBase, name), canonical: Host.canonical(canonical), key: nil))
                    return
                }
                if let image, nextRecord < image.records.count, image.path(of: nextRecord, is: canonicalBase, name),
                   image.isCurrent(nextRecord, for: st) {
                    survey.files.append(.known(record: nextRecord, image: image, shownBase: sameBase ? nil : shownBase))
                    nextRecord += 1
                    return
                }
                let canonical = Host.joined(canonicalBase, name)
                survey.files.append(.file(shown: sameBase ? canonical : Host.joined(shownBase, name), canonical: canonical,
                                          key: FileKey(path: canonical, stat: st)))
            }
            let previous = known?.directory(path: dir)
            if let previous, let image = known, previous.matches(dirStat), previous.isTrusted {
                // Matched in place only in a directory met once (a second
                // meeting's files are duplicates, found by canonical path).
                let matching = repeated ? nil : image
                image.forEachName(in: previous) { add($0, $1, matching: matching) }
                survey.directories.append(image.snapshot(previous))
                return
            }
            // Listed after the directory was stat'ed: a change in between
            // leaves it newer than the snapshot says, so it is listed again.
            var listing = DirectorySnapshot(path: dir, stat: dirStat, listedAt: DirectorySnapshot.now())
            DirectoryListing(path: dir)?.forEachName { name, cName in
                guard name.count > 3, name.suffix(3).elementsEqual(".so".utf8) else { return }
                if let prefix, !name.starts(with: prefix) { return }
                listing.names.append(contentsOf: name)
                listing.names.append(0)
                add(name, cName, matching: nil)
            }
            if let previous, let image = known, image.snapshot(previous).sameListing(as: listing), previous.isTrusted || !listing.isTrusted {
                survey.directories.append(image.snapshot(previous))
            } else {
                survey.directoriesChanged = true
                survey.directories.append(listing)
            }
        }
        if let dir = options.builtinDirectory {
            var st = stat()
            if stat(dir, &st) == 0 { addDirectory(dir, st, prefix: Array(Host.builtinPrefix.utf8)) }
        }
        for path in options.pluginPaths where !path.isEmpty {
            var st = stat()
            if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                addDirectory(path, st, prefix: nil)
            } else {
                mayRepeat = true
                survey.files.append(.file(shown: path, canonical: Host.canonical(path), key: nil))
            }
        }
        guard mayRepeat else { return survey }
        var seen = Set<String>(minimumCapacity: survey.files.count)
        survey.files = survey.files.filter { seen.insert($0.canonical).inserted }
        return survey
    }

    /// `base` (ending in a slash) and `name` as one String, made in place.
    static func joined(_ base: [UInt8], _ name: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: base.count + name.count) { out in
            _ = out.initialize(fromContentsOf: base)
            _ = UnsafeMutableBufferPointer(rebasing: out[base.count...]).initialize(fromContentsOf: name)
            return base.count + name.count
        }
    }

    /// Loads every candidate. Returns the number of plugins refused.
    @discardableResult
    public func loadAll() -> Int {
        let before = failures.count
        for file in pluginCandidates() { load(path: file) }
        return failures.count - before
    }

    /// Opens one library and starts the plugin in it.
    public func load(path: String) { load(path: path, shutDownAfter: nil) }

    /// `shutDownAfter`: the plugin (id) whose service lookup loads this
    /// one; it is placed before it in shutdown order, so the service it
    /// looked up outlives it, as host.h promises.
    func load(path: String, shutDownAfter dependent: String?) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            refuse(path: path, pluginID: nil, "cannot read the file: \(String(cString: strerror(errno)))")
            return
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            refuse(path: path, pluginID: nil, "not a regular file")
            return
        }
        guard Host.hasELFHeader(path) else {
            refuse(path: path, pluginID: nil, "not a shared library (no ELF header)")
            return
        }
        // dlopen searches the library path for a name without a slash; the
        // user named a file (`--plugin-path libx.so`), so open that file.
        guard let handle = dlopen(path.contains("/") ? path : "./" + path, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            refuse(path: path, pluginID: nil, "dlopen failed: \(why)")
            return
        }
        // The handle is deliberately never closed: the library may hold Swift
        // code, whose runtime metadata cannot be unloaded safely.
        guard let symbol = dlsym(handle, PINCER_PLUGIN_ENTRY_SYMBOL) else {
            refuse(path: path, pluginID: nil, "missing entry function \(PINCER_PLUGIN_ENTRY_SYMBOL) (is it exported with PINCER_EXPORT?)")
            return
        }
        let entry = unsafeBitCast(symbol, to: pincer_plugin_entry_fn_t.self)
        load(entry: entry, origin: path, shutDownAfter: dependent)
    }

    /// Starts a plugin from an entry function already in the process (a
    /// plugin linked into an app, or a benchmark).
    public func load(entry: pincer_plugin_entry_fn_t, origin: String = "<in-process>") {
        load(entry: entry, origin: origin, shutDownAfter: nil)
    }

    func load(entry: pincer_plugin_entry_fn_t, origin: String, shutDownAfter dependent: String?) {
        guard let record = entry(PINCER_ABI_MAJOR, PINCER_ABI_MINOR) else {
            refuse(path: origin, pluginID: nil, "\(PINCER_PLUGIN_ENTRY_SYMBOL) returned NULL: the plugin declined to load on this host (ABI \(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR))")
            return
        }
        switch Host.validate(record, path: origin) {
        case .failure(let failure):
            refuse(path: origin, pluginID: failure.pluginID, failure.reason)
        case .success(let info):
            start(PluginRuntime(info: info, record: record, host: self), shutDownAfter: dependent)
        }
    }

    /// Field-by-field checks of an entry record, in the order entry.h documents.
    static func validate(_ record: UnsafePointer<pincer_plugin_t>, path: String) -> Result<PluginInfo, PluginFailure> {
        // The first four fields are fixed for every ABI version, so they can
        // be read before struct_size is known to cover the rest.
        let head = UnsafeRawPointer(record).assumingMemoryBound(to: UInt32.self)
        let magic = head[0], major = head[1], minor = head[2], size = head[3]
        let v1Size = UInt32(MemoryLayout<pincer_plugin_t>.offset(of: \.sync_entries)!)
        let facts = "(magic 0x\(hex(magic)), abi \(major).\(minor), struct_size \(size))"
        func refuse(_ why: String, id: String? = nil) -> Result<PluginInfo, PluginFailure> {
            .failure(PluginFailure(path: path, pluginID: id, reason: why))
        }
        guard magic == PINCER_PLUGIN_MAGIC else {
            return refuse("bad magic: field magic is 0x\(hex(magic)), expected 0x\(hex(PINCER_PLUGIN_MAGIC)) (PINCER_PLUGIN_MAGIC); this is not a Pincer plugin record \(facts)")
        }
        guard major == PINCER_ABI_MAJOR else {
            return refuse("ABI major mismatch: field abi_major is \(major), this host implements ABI \(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR); rebuild the plugin against a \(PINCER_ABI_MAJOR).x SDK \(facts)")
        }
        guard size >= v1Size else {
            return refuse("record too small: field struct_size is \(size), but an ABI 1.0 pincer_plugin_t is \(v1Size) bytes \(facts)")
        }
        let r = record.pointee
        let id = Identifier.string(r.id)
        guard let id else { return refuse("missing required field id (NULL)") }
        guard Identifier.isReverseDNS(id) else {
            return refuse("field id '\(id)' is not a reverse-DNS id such as com.example.tools")
        }
        var missing: [String] = []
        if r.short_name == nil { missing.append("short_name") }
        if r.name == nil { missing.append("name") }
        if r.version == nil { missing.append("version") }
        if r.`init` == nil { missing.append("init") }
        if !missing.isEmpty {
            return refuse("missing required field\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")) (NULL)", id: id)
        }
        let short = String(cString: r.short_name)
        guard Identifier.isName(short, max: 32) else {
            return refuse("field short_name '\(short)' is not [a-z][a-z0-9_-]* of at most 32 bytes", id: id)
        }
        let name = String(cString: r.name)
        guard !name.isEmpty else { return refuse("field name is empty", id: id) }
        return .success(PluginInfo(id: id, shortName: short, name: name, version: String(cString: r.version),
                                   summary: Identifier.string(r.summary) ?? "", abiMajor: major, abiMinor: minor, path: path))
    }

    private static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 8 - s.count)) + s
    }

    static func hasELFHeader(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = (UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        let n = withUnsafeMutableBytes(of: &magic) { read(fd, $0.baseAddress, 4) }
        return n == 4 && magic == (0x7f, 0x45, 0x4c, 0x46)
    }

    /// Names in a directory, sorted, without . and ..; empty when it cannot be read.
    public static func listDirectory(_ path: String) -> [String] {
        var names: [String] = []
        DirectoryListing(path: path)?.forEachName { name, _ in names.append(String(decoding: name, as: UTF8.self)) }
        return names
    }

    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A directory's entries (without "." and ".."), in byte order: UTF-8's is
/// code point order, a prefix first. Every name's bytes sit in one buffer,
/// each followed by a NUL, and are sorted as spans with memcmp: an array
/// per name and a generic comparison cost more than the listing itself for
/// a directory of a thousand plugins, read on every start.
struct DirectoryListing {
    private var bytes: [UInt8] = []
    private var spans: [(start: Int, count: Int)] = []

    init?(path: String) {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        bytes.reserveCapacity(16 << 10)
        while let entry = readdir(dir) {
            withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let name = UnsafeRawBufferPointer(rebasing: raw[..<strlen(raw.baseAddress!.assumingMemoryBound(to: CChar.self))])
                if name.elementsEqual([0x2e]) || name.elementsEqual([0x2e, 0x2e]) { return }
                spans.append((bytes.count, name.count))
                bytes.append(contentsOf: name)
                bytes.append(0)
            }
        }
        bytes.withUnsafeBufferPointer { all in
            spans.sort { a, b in
                let c = memcmp(all.baseAddress! + a.start, all.baseAddress! + b.start, min(a.count, b.count))
                return c != 0 ? c < 0 : a.count < b.count
            }
        }
    }

    /// Calls `body` with each name, as bytes and as a C string (the same
    /// storage, valid for the call).
    func forEachName(_ body: (UnsafeBufferPointer<UInt8>, UnsafePointer<CChar>) -> Void) {
        bytes.withUnsafeBufferPointer { all in
            for span in spans {
                let start = all.baseAddress! + span.start
                start.withMemoryRebound(to: CChar.self, capacity: span.count + 1) { body(UnsafeBufferPointer(start: start, count: span.count), $0) }
            }
        }
    }
}
