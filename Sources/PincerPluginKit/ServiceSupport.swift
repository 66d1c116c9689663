#if canImport(Glibc)
import Glibc
#endif

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
    /// The file's bytes as UTF-8 text; errors name the path and the reason.
    public static func read(_ path: String) throws -> String {
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
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandError("\(path) is not UTF-8 text", status: PINCER_INVALID_ARGUMENT)
        }
        return text
    }

    /// Writes `text` to a temporary file beside `path`, flushes it to disk
    /// and renames it over `path`, so readers see the old file or the new
    /// one, never half of it.
    public static func writeAtomically(_ text: String, to path: String) throws {
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CommandError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let why = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw CommandError("cannot write \(temporary): \(why)")
            }
            written += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandError("cannot flush \(temporary): \(why)")
        }
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandError("cannot replace \(path): \(why)")
        }
        bytes.removeAll()
    }
}
