// Where apps put their control sockets and where `pincer ps` looks:
// $XDG_RUNTIME_DIR/pincer, or /tmp/pincer-<uid> when that is unset. The
// directory must be ours and private (0700), or nothing is bound or read
// there: another user could otherwise plant a socket for us to talk to.
// An app that finds the default directory planted still starts, in a
// private directory of its own (`privateFallback`), and says so.
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

    /// A new private directory, /tmp/pincer-<uid>-XXXXXX (mkdtemp: created
    /// 0700 by us, under a name nobody could have planted), for an app whose
    /// default directory was refused. `pincer ps` does not look there; the
    /// app reports the path (a warning, and `hello`).
    public static func privateFallback() throws(Failure) -> String {
        var template = Array("/tmp/pincer-\(geteuid())-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure(description: "cannot create a private socket directory in /tmp: \(String(cString: strerror(errno)))")
        }
        return try ensure(String(cString: made))
    }

    /// The socket of the process `pid` in `directory`.
    public static func socketPath(in directory: String, pid: pid_t) -> String { "\(directory)/\(pid).sock" }

    /// The sockets in `directory`, by process id, oldest process first;
    /// those of processes that no longer run are left out, and with
    /// `removingStale` removed (an app killed with SIGKILL cannot remove
    /// its own; the directory is private, so each file is ours).
    public static func sockets(in directory: String) -> [(pid: pid_t, path: String)] {
        sockets(in: directory, removingStale: false)
    }

    public static func sockets(in directory: String, removingStale: Bool) -> [(pid: pid_t, path: String)] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [(pid: pid_t, path: String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name.hasSuffix(".sock"), let pid = pid_t(name.dropLast(5)), pid > 0 else { continue }
            // kill(pid, 0) fails with ESRCH when no such process runs.
            if kill(pid, 0) != 0 && errno == ESRCH {
                if removingStale { removeStale("\(directory)/\(name)") }
                continue
            }
            found.append((pid, "\(directory)/\(name)"))
        }
        return found.sorted { $0.pid < $1.pid }
    }

    /// Removes a socket file left by a process that is gone, only if it is
    /// a socket of this user that nothing listens on (a pid can be reused
    /// by a new app in the moment between the check and here).
    private static func removeStale(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK, st.st_uid == geteuid(),
              let address = UnixSocket.address(path) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let rc = UnixSocket.withSockaddr(address) { connect(fd, $0, $1) }
        if rc != 0 && errno == ECONNREFUSED { unlink(path) }
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
    /// One read's worth, allocated on first use (a server reading many
    /// connections passes one scratch buffer to all of them instead).
    private var chunk: [UInt8] = []
    private var start = 0
    private var skipping = false

    public init(fd: Int32, maxBytes: Int) {
        self.fd = fd
        self.maxBytes = maxBytes
    }

    /// The next message, blocking until one is complete; `.end` at end of
    /// input or on a read error, `.timedOut` when the descriptor has a
    /// receive timeout and it passed (or is non-blocking and has no more).
    public mutating func next() -> Next {
        if chunk.isEmpty { chunk = [UInt8](repeating: 0, count: 65536) }
        var scratch = chunk
        chunk = []
        defer { chunk = scratch }
        return next(scratch: &scratch)
    }

    /// `next()`, reading into `scratch` (not empty).
    public mutating func next(scratch: inout [UInt8]) -> Next {
        let fd = self.fd
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if start == buffer.count {
                    // All consumed: keep a small buffer, give a large one back.
                    buffer.removeAll(keepingCapacity: buffer.capacity <= 65536)
                    start = 0
                } else if start > 65536 {
                    buffer.removeFirst(start)
                    start = 0
                }
                if skipping { skipping = false; return .tooLarge }
                if line.count > maxBytes { return .tooLarge }
                return .message(line)
            }
            if buffer.count - start > maxBytes {
                // Too long already: drop what we have and skip to the newline.
                buffer.removeAll()
                start = 0
                skipping = true
            }
            let n = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timedOut }
            if n <= 0 { return .end }
            buffer.append(contentsOf: scratch[0..<n])
        }
    }
}
