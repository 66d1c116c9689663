// Where apps put their control sockets and where `pincer ps` looks:
// $XDG_RUNTIME_DIR/pincer, or /tmp/pincer-<uid> when that is unset. The
// directory must be ours and private (0700), or nothing is bound or read
// there: another user could otherwise plant a socket for us to talk to.
#if canImport(Glibc)
import Glibc
#endif

public enum RuntimeDirectory {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The directory for this user, from the environment given.
    public static func path(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/pincer" }
        return "/tmp/pincer-\(geteuid())"
    }

    /// Creates the directory (0700) if missing and checks that it is a
    /// directory owned by this user that no one else can use.
    @discardableResult
    public static func ensure(_ path: String) throws(Failure) -> String {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw Failure(description: "\(path) is not a directory") }
        guard st.st_uid == geteuid() else { throw Failure(description: "\(path) belongs to uid \(st.st_uid), not to this user (\(geteuid()))") }
        if st.st_mode & 0o077 != 0 {
            // Ours but open to others: close it rather than refuse.
            guard chmod(path, 0o700) == 0 else {
                throw Failure(description: "\(path) is open to other users and cannot be made private: \(String(cString: strerror(errno)))")
            }
        }
        return path
    }

    /// The socket of the process `pid` in `directory`.
    public static func socketPath(in directory: String, pid: pid_t) -> String { "\(directory)/\(pid).sock" }

    /// The sockets in `directory`, by process id, oldest process first;
    /// those of processes that no longer run are left out.
    public static func sockets(in directory: String) -> [(pid: pid_t, path: String)] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [(pid: pid_t, path: String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name.hasSuffix(".sock"), let pid = pid_t(name.dropLast(5)), pid > 0 else { continue }
            // kill(pid, 0) fails with ESRCH when no such process runs.
            if kill(pid, 0) != 0 && errno == ESRCH { continue }
            found.append((pid, "\(directory)/\(name)"))
        }
        return found.sorted { $0.pid < $1.pid }
    }
}

/// Reads newline-delimited messages from a file descriptor, refusing any
/// longer than a limit without buffering it.
public struct MessageReader {
    public enum Next {
        case message([UInt8])
        /// A line longer than the limit was skipped (up to its newline).
        case tooLarge
        /// No byte arrived within the socket's receive timeout (SO_RCVTIMEO);
        /// what was read so far is kept, so `next()` may be called again.
        case timedOut
        case end
    }

    private let fd: Int32
    private let maxBytes: Int
    private var buffer: [UInt8] = []
    /// One read's worth, allocated once per reader rather than per message.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private var start = 0
    private var skipping = false

    public init(fd: Int32, maxBytes: Int) {
        self.fd = fd
        self.maxBytes = maxBytes
    }

    /// The next message, blocking until one is complete; `.end` at end of
    /// input or on a read error, `.timedOut` when the descriptor has a
    /// receive timeout and it passed.
    public mutating func next() -> Next {
        let fd = self.fd
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if start > 65536 { buffer.removeFirst(start); start = 0 }
                if skipping { skipping = false; return .tooLarge }
                if line.count > maxBytes { return .tooLarge }
                return .message(line)
            }
            if buffer.count - start > maxBytes {
                // Too long already: drop what we have and skip to the newline.
                buffer.removeAll(keepingCapacity: true)
                start = 0
                skipping = true
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timedOut }
            if n <= 0 { return .end }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}
