import PincerPluginKit
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
        /// The skipped lines as they were, so compaction keeps them.
        var damaged: [[UInt8]] = []

        public init(entries: [NetworkEntry], skipped: [(line: Int, reason: String)]) {
            self.entries = entries
            self.skipped = skipped
        }
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
            } catch {
                result.skipped.append((lineNumber, "\(error)"))
                result.damaged.append(Array(line))
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

    /// Drops the entries recorded before `cutoff` (Unix seconds) by
    /// rewriting the file atomically; a file with nothing expired is left as
    /// it is. Damaged lines are kept, not lost. Returns the kept entries.
    @discardableResult
    public static func compact(_ path: String, keepingSince cutoff: Double) throws(FileError) -> Contents {
        var contents = try read(path)
        let before = contents.entries.count
        contents.entries.removeAll { $0.recordedAt < cutoff }
        guard contents.entries.count < before else { return contents }
        do {
            try TextFile.writeAtomically(to: path, mode: 0o600) { write in
                for line in contents.damaged { try write(line + [UInt8(ascii: "\n")]) }
                for e in contents.entries { try write(e.json.serializedBytes() + [UInt8(ascii: "\n")]) }
            }
        } catch {
            throw FileError(description: "\(error)")
        }
        return contents
    }

    public static func readAll(_ path: String) throws(FileError) -> [UInt8] {
        do { return try TextFile.readBytes(path) } catch { throw FileError(description: "\(error)") }
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
