#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The `last_error` of a service table: one message per thread, valid until
/// that thread's next call into the service (the errno / sqlite3_errmsg
/// pattern, so concurrent callers never see each other's errors).
public final class ThreadErrorMessage: @unchecked Sendable {
    private let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()
    private static let empty: StaticString = ""

    public init() {}

    /// Records `message` for the calling thread.
    public func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))
        free(old)
    }

    /// The calling thread's last message; never NULL.
    public var pointer: UnsafePointer<CChar> {
        if let p = pthread_getspecific(key) { return UnsafePointer(p.assumingMemoryBound(to: CChar.self)) }
        return UnsafeRawPointer(ThreadErrorMessage.empty.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

/// The SDK's copy-out convention (settings_get, flags get_string, servers
/// current): copy at most capacity - 1 bytes, NUL-terminate when capacity > 0,
/// return the full length so the caller can retry with a larger buffer.
public func copyOut(_ text: String, to buffer: UnsafeMutablePointer<CChar>?, capacity: UInt64) -> Int64 {
    var text = text
    return text.withUTF8 { utf8 in copyOut(utf8.baseAddress, length: utf8.count, to: buffer, capacity: capacity) }
}

public func copyOut(_ bytes: UnsafeRawPointer?, length: Int, to buffer: UnsafeMutablePointer<CChar>?, capacity: UInt64) -> Int64 {
    if let buffer, capacity > 0 {
        let n = min(length, Int(capacity) - 1)
        if n > 0, let bytes { memcpy(buffer, bytes, n) }
        buffer[n] = 0
    }
    return Int64(length)
}

/// Whole-file reads and atomic writes for plugins that import and export
/// files, without Foundation.
public enum TextFile {
    /// The file's bytes; errors name the path and the reason.
    public static func readBytes(_ path: String) throws -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw CommandError("cannot open \(path): \(String(cString: strerror(errno)))", status: PINCER_NOT_FOUND) }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n > 0 { bytes.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count {
                if ferror(f) != 0 { throw CommandError("cannot read \(path): \(String(cString: strerror(errno)))") }
                break
            }
        }
        return bytes
    }

    /// The file's bytes as UTF-8 text; errors name the path and the reason.
    public static func read(_ path: String) throws -> String {
        guard let text = String(validating: try readBytes(path), as: UTF8.self) else {
            throw CommandError("\(path) is not UTF-8 text", status: PINCER_INVALID_ARGUMENT)
        }
        return text
    }

    /// Writes `text` to `path` atomically (see the streaming form).
    public static func writeAtomically(_ text: String, to path: String) throws {
        try writeAtomically(to: path) { write in try write(Array(text.utf8)) }
    }

    /// Streams what `produce` hands its `write` function into a temporary
    /// file beside `path`, flushes it to disk and renames it over `path`
    /// (then flushes the directory), so readers see the old file or the new
    /// one, never half of it, and once it returns the new one survives a
    /// power loss; on any error the temporary file is removed. Returns the
    /// bytes written.
    ///
    /// `mode`: the default 0644 is reduced by the umask, as for any file a
    /// tool exports. An owner-only mode (nothing for group and others, e.g.
    /// 0600, for files in the state directory) is applied exactly, whatever
    /// the umask. The temporary file is owner-only until it is complete.
    @discardableResult
    public static func writeAtomically(to path: String, mode: mode_t = 0o644,
                                       _ produce: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> Int {
        // Unique per call: two threads writing one path must not share a temporary file.
        let temporary = "\(path).tmp-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        // O_EXCL after unlinking a leftover: never write through a planted file or symlink.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0o700)
        guard fd >= 0 else { throw CommandError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var total = 0
        do {
            // Owner-only: exactly `mode`. Otherwise what open(2) would give `mode` under the umask.
            let final = mode & 0o077 == 0 ? mode : mode & ~currentUmask()
            guard fchmod(fd, final) == 0 else { throw CommandError("cannot set the mode of \(temporary): \(String(cString: strerror(errno)))") }
            try produce { bytes in
                var written = 0
                while written < bytes.count {
                    let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { throw CommandError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
                    written += n
                }
                total += written
            }
            guard fsync(fd) == 0 else { throw CommandError("cannot flush \(temporary): \(String(cString: strerror(errno)))") }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandError("cannot replace \(path): \(why)")
        }
        // The rename is only durable once the directory is on disk too (else a power loss may undo it).
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            let synced = fsync(dirFD) == 0 || errno == EINVAL  // EINVAL: a file system that cannot sync directories
            let why = String(cString: strerror(errno))
            close(dirFD)
            guard synced else { throw CommandError("wrote \(path), but flushing its directory \(directory) failed: \(why)") }
        }
        return total
    }
}

private let temporaryCounter = Atomic<Int>(0)

/// The process's umask, read from /proc (umask(2) can only be read by
/// changing it, which would race with other threads creating files); 022
/// when /proc cannot say.
func currentUmask() -> mode_t {
    guard let f = fopen("/proc/self/status", "r") else { return 0o022 }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), f) != nil {
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard text.hasPrefix("Umask:") else { continue }
        let digits = text.dropFirst(6).filter { $0 >= "0" && $0 <= "7" }
        return mode_t(digits.prefix(4), radix: 8) ?? 0o022
    }
    return 0o022
}

/// The Swift side of a service table (service.h). Subclass it with the
/// table's @convention(c) functions in a static `makeTable()`; this owns
/// the table, points its header's context at the instance, and keeps the
/// per-thread `last_error`. The table and the instance are never freed:
/// code in the process may hold the pointer until it exits.
open class ServiceObject<Table>: @unchecked Sendable {
    public let table: UnsafeMutablePointer<Table>
    public let errors = ThreadErrorMessage()

    public init(table initial: Table, header: WritableKeyPath<Table, pincer_service_header_t>) {
        table = .allocate(capacity: 1)
        table.initialize(to: initial)
        table.pointee[keyPath: header].struct_size = UInt32(MemoryLayout<Table>.size)
        table.pointee[keyPath: header].context = Unmanaged.passRetained(self).toOpaque()
    }

    /// The service behind a table function's context, borrowed: no
    /// reference counting, so hot paths stay cheap.
    @inline(__always)
    public static func with<R>(_ context: UnsafeMutableRawPointer?, _ body: (Self) -> R) -> R {
        Unmanaged<Self>.fromOpaque(context!)._withUnsafeGuaranteedRef(body)
    }

    /// Records `message` as this thread's last_error and returns `status`.
    public func fail(_ status: pincer_status_t, _ message: String) -> pincer_status_t {
        errors.set(message)
        return status
    }

    /// Runs a change; a thrown error becomes its status and last_error.
    public func perform<E: StatusError>(_ body: () throws(E) -> Void) -> pincer_status_t {
        do {
            try body()
            return PINCER_OK
        } catch {
            return fail(error.status, error.description)
        }
    }
}
