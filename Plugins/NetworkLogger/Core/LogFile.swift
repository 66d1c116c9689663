#if canImport(Glibc)
import Glibc
#endif

/// Unix time in seconds.
public enum WallClock {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// A persisted log: one entry's JSON per line (already redacted when it was
/// recorded), appended as entries complete. Retention drops lines older than
/// the period when the file is compacted; a damaged line is skipped and
/// counted, never fatal.
public enum LogFile {
    public struct Contents: Sendable {
        public var entries: [NetworkEntry]
        /// 1-based line numbers and why each was skipped.
        public var skipped: [(line: Int, reason: String)]
    }

    public struct FileError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func read(_ path: String) throws(FileError) -> Contents {
        let bytes = try readAll(path)
        var result = Contents(entries: [], skipped: [])
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.isEmpty { continue }
            do {
                let json = try JSON.parse(bytes: line)
                result.entries.append(try NetworkEntry(json: json))
            } catch let error as JSONSyntaxError {
                result.skipped.append((lineNumber, "\(error)"))
            } catch {
                result.skipped.append((lineNumber, "\(error)"))
            }
        }
        return result
    }

    /// Appends one entry as a line (O_APPEND: concurrent writers do not interleave lines).
    public static func append(_ entry: NetworkEntry, to path: String) throws(FileError) {
        var line = Array(entry.json.serialized().utf8)
        line.append(UInt8(ascii: "\n"))
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try writeAll(fd, line, path: path)
    }

    /// Rewrites the file without entries recorded before `cutoff` (Unix
    /// seconds), atomically (temporary file, fsync, rename). Returns the kept entries.
    @discardableResult
    public static func compact(_ path: String, keepingSince cutoff: Double) throws(FileError) -> Contents {
        var contents = try read(path)
        contents.entries.removeAll { $0.recordedAt < cutoff }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var out: [UInt8] = []
        for e in contents.entries {
            out += Array(e.json.serialized().utf8)
            out.append(UInt8(ascii: "\n"))
        }
        do throws(FileError) {
            try writeAll(fd, out, path: temporary)
            guard fsync(fd) == 0 else { throw FileError(description: "cannot flush \(temporary): \(String(cString: strerror(errno)))") }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw FileError(description: "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        return contents
    }

    public static func readAll(_ path: String) throws(FileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw FileError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FileError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FileError(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}
