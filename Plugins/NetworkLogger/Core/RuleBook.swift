// Where the interception rules live: one file in the app's state directory
// (`net-rules.json`), plus transient rules that code adds and that end with
// the process. Every process using the state directory sees the same rules:
// the file is re-read when it changes (its identity and modification time
// are checked on each use), changed under an exclusive lock, and replaced
// atomically, so no change acknowledged by one process is lost to another.
// A damaged file is refused with its line and column; the rules read before
// stay in force, and changes are refused until it is fixed, so nothing a
// person wrote there is overwritten.
import PincerJSON
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class RuleBook: Sendable {
    public static let fileName = "net-rules.json"

    /// Nil: the rules live in memory only (no state directory).
    public let path: String?

    private struct State {
        var document = RulesDocument()
        var transient: [InterceptRule] = []
        var nextTransient = 1
        var engine = RuleEngine(document: RulesDocument())
        /// What identified the file when it was last read (nil: no file).
        var seen: FileStamp?
        var checked = false
        /// Why the file on disk is not in force, or nil.
        var problem: String?
    }

    private let state = Mutex(State())

    public init(directory: String?) {
        path = directory.map { $0 + "/" + RuleBook.fileName }
    }

    // MARK: Reading

    /// The engine in force: the file re-read first if it changed.
    public var engine: RuleEngine {
        refresh()
        return state.withLock { $0.engine }
    }

    public var document: RulesDocument {
        refresh()
        return state.withLock { $0.document }
    }

    public var transient: [InterceptRule] { state.withLock { $0.transient } }

    /// Why the file is not in force ("net-rules.json: line 3, column 9: ..."), or nil.
    public var problem: String? {
        refresh()
        return state.withLock { $0.problem }
    }

    /// Re-reads the file when its stamp changed since the last read.
    /// Returns the problem newly found, if any (for the log).
    @discardableResult
    public func refresh() -> String? {
        guard let path else { return nil }
        let stamp = FileStamp(path)
        let unchanged = state.withLock { s in s.checked && s.seen == stamp }
        if unchanged { return nil }
        let loaded = RuleBook.read(path)
        return state.withLock { s -> String? in
            s.checked = true
            s.seen = stamp
            switch loaded {
            case .success(let document):
                s.document = document ?? RulesDocument()
                s.problem = nil
                s.engine = RuleEngine(document: s.document, transient: s.transient)
                return nil
            case .failure(let error):
                let problem = "\(path): \(error.message); the rules read before stay in force"
                let new = s.problem != problem
                s.problem = problem
                return new ? problem : nil
            }
        }
    }

    /// The document in the file; nil when there is none.
    static func read(_ path: String) -> Result<RulesDocument?, RulesError> {
        var st = stat()
        if stat(path, &st) != 0, errno == ENOENT { return .success(nil) }
        switch LocalFile.read(path, limit: 64 << 20) {
        case .success(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(RulesError("not UTF-8 text")) }
            return RulesDocument.decode(text).map { Optional($0) }
        case .failure(let error):
            return .failure(error)
        }
    }

    // MARK: Changing

    /// Changes the stored document in one locked read-modify-write: the file
    /// as it is now (another process may have changed it), `change`, then an
    /// atomic replace. Nothing changes when `change` throws, or when the file
    /// is damaged (the error says where). Returns what `change` returned.
    @discardableResult
    public func update<T>(_ change: (inout RulesDocument) throws -> T) throws -> T {
        guard let path else {
            return try state.withLock { s in
                var d = s.document
                let result = try change(&d)
                s.document = d
                s.engine = RuleEngine(document: d, transient: s.transient)
                return result
            }
        }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw RulesError("cannot open \(path).lock: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw RulesError("cannot lock \(path).lock: \(String(cString: strerror(errno)))") }
        }
        var document: RulesDocument
        switch RuleBook.read(path) {
        case .success(let stored): document = stored ?? RulesDocument()
        case .failure(let error):
            throw RulesError("\(path) is damaged (\(error.message)); fix or remove it, nothing was changed")
        }
        let result = try change(&document)
        let bytes = document.json.serializedBytes(pretty: true) + [0x0A]
        do { try TextFile.writeAtomically(to: path, mode: 0o600) { write in try write(bytes) } } catch {
            throw RulesError("cannot write \(path): \(error)")
        }
        let stamp = FileStamp(path)
        state.withLock { s in
            s.document = document
            s.seen = stamp
            s.checked = true
            s.problem = nil
            s.engine = RuleEngine(document: document, transient: s.transient)
        }
        return result
    }

    // MARK: Transient rules

    /// Adds a rule that lives in this process only, before the stored ones.
    /// Returns its id ("t1", "t2", ...; never reused).
    public func addTransient(_ rule: InterceptRule) throws -> String {
        if let problem = rule.problem { throw RulesError(problem) }
        refresh()
        return state.withLock { s in
            var rule = rule
            rule.id = "t\(s.nextTransient)"
            s.nextTransient += 1
            s.transient.append(rule)
            s.engine = RuleEngine(document: s.document, transient: s.transient)
            return rule.id
        }
    }

    /// Removes a transient rule; false when there is none with that id.
    @discardableResult
    public func removeTransient(_ id: String) -> Bool {
        state.withLock { s in
            guard let at = s.transient.firstIndex(where: { $0.id == id }) else { return false }
            s.transient.remove(at: at)
            s.engine = RuleEngine(document: s.document, transient: s.transient)
            return true
        }
    }
}

/// What identifies a file's content cheaply: device, inode, size and
/// modification time (an atomic replace makes a new inode).
struct FileStamp: Equatable, Sendable {
    let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

    init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        seconds = st.st_mtim.tv_sec
        nanoseconds = st.st_mtim.tv_nsec
    }
}
