// The control socket an app opens so `pincer attach` can reach its host.
// The protocol is in Sources/PincerControl/Protocol.swift.
import PincerControl
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public struct ControlOptions: Sendable {
    /// Where the socket goes; nil: RuntimeDirectory.path for the process environment.
    public var directory: String?
    /// The app's name, as `hello` and `pincer ps` show it.
    public var appName: String
    /// false: `invoke` of a command that changes state, `set`, and shell
    /// commands that change state are refused with ErrorCode.disabled.
    public var allowChanges: Bool = true
    /// The longest message, each way.
    public var maxMessageBytes: Int = ControlProtocol.maxMessageBytes
    /// Messages queued for one client before events are dropped.
    public var queueLimit: Int = ControlProtocol.queueLimit

    public init(appName: String) { self.appName = appName }
}

public struct ControlServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Serves the control protocol on <directory>/<pid>.sock: an accept thread,
/// and per client a reader thread, a writer thread draining its bounded
/// queue, and a thread per request being worked on.
public final class ControlServer: Sendable {
    public let socketPath: String
    private let core: ServerCore
    private let listener: Int32
    /// stop() writes a byte here to wake the accept thread out of poll().
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let acceptThread: ServerThread
    private let busToken: UInt64
    /// The socket file we bound, so stop() removes that file and no other.
    private let socketInode: UInt
    private let stopped = Atomic<Bool>(false)

    /// Socket paths served in this process: a second server on the same
    /// path would otherwise remove the first one's socket as stale.
    private static let pathsInUse = Mutex<Set<String>>([])

    public init(host: Host, options: ControlOptions) throws(ControlServerError) {
        let directory = options.directory ?? RuntimeDirectory.path(environment: Self.runtimeEnvironment())
        do { try RuntimeDirectory.ensure(directory) } catch { throw ControlServerError(description: error.description) }
        let path = RuntimeDirectory.socketPath(in: directory, pid: getpid())
        guard let address = UnixSocket.address(path) else {
            throw ControlServerError(description: "socket path \(path) is longer than \(UnixSocket.maxPathBytes) bytes; choose a shorter directory")
        }
        guard Self.pathsInUse.withLock({ $0.insert(path).inserted }) else {
            throw ControlServerError(description: "\(path) is already served by another ControlServer in this process")
        }
        func fail(_ message: String, closing fds: [Int32] = []) -> ControlServerError {
            for fd in fds { Glibc.close(fd) }
            _ = Self.pathsInUse.withLock { $0.remove(path) }
            return ControlServerError(description: message)
        }
        // A file at our path is left from an earlier process with our pid.
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK, st.st_uid == geteuid() else {
                throw fail("\(path) exists and is not a socket of this user; not removing it")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw fail("cannot create a socket: \(UnixSocket.errorText())") }
        guard UnixSocket.withSockaddr(address, { bind(fd, $0, $1) }) == 0 else {
            throw fail("cannot bind \(path): \(UnixSocket.errorText())", closing: [fd])
        }
        // The directory is already private; 0600 keeps the socket so on its own.
        guard chmod(path, 0o600) == 0, lstat(path, &st) == 0, listen(fd, 64) == 0 else {
            let why = UnixSocket.errorText()
            unlink(path)
            throw fail("cannot listen on \(path): \(why)", closing: [fd])
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let why = UnixSocket.errorText()
            unlink(path)
            throw fail("cannot create a pipe: \(why)", closing: [fd])
        }
        for p in pipeFDs { _ = fcntl(p, F_SETFD, FD_CLOEXEC) }
        let core = ServerCore(host: host, options: options)
        let token = core.router.listen(to: host.events)
        let wake = pipeFDs[0]
        guard let thread = ServerThread.start({ ControlServer.acceptLoop(listener: fd, wake: wake, core: core) }) else {
            host.events.unsubscribe(token)
            unlink(path)
            throw fail("cannot start the accept thread", closing: [fd] + pipeFDs)
        }
        socketPath = path
        socketInode = UInt(st.st_ino)
        self.core = core
        listener = fd
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
        acceptThread = thread
        busToken = token
    }

    deinit { stop() }

    /// Clients connected now.
    public var clientCount: Int { core.clientCount }

    /// Stops accepting, closes every client, joins the threads and removes
    /// the socket. Requests still running in a plugin finish on their own;
    /// their results are dropped. Safe to call more than once.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        acceptThread.join()
        Glibc.close(listener)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
        var st = stat()
        if lstat(socketPath, &st) == 0 && UInt(st.st_ino) == socketInode { unlink(socketPath) }
        _ = Self.pathsInUse.withLock { $0.remove(socketPath) }
        core.host.events.unsubscribe(busToken)
        core.router.removeAll()
        let clients = core.takeClients()
        for client in clients { client.close() }
        for client in clients { client.joinReader() }
    }

    private static func acceptLoop(listener: Int32, wake: Int32, core: ServerCore) {
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            let n = poll(&fds, 2, -1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 || fds[1].revents != 0 { return }
            let client = accept(listener, nil, nil)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) } // accept4 is a GNU extension Swift does not see
            if client < 0 {
                // Out of descriptors: wait instead of spinning on the pending connection.
                if errno == EMFILE || errno == ENFILE { usleep(50_000) }
                continue
            }
            // Before reading a byte: only this user may talk to the app.
            guard peerUID(client) == geteuid() else {
                Glibc.close(client)
                continue
            }
            core.admit(client)
        }
    }

    /// The connected peer's uid (SO_PEERCRED); nil when it cannot be read.
    static func peerUID(_ fd: Int32) -> uid_t? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<PeerCredentials>.size) else { return nil }
        return credentials.uid
    }

    /// struct ucred of <sys/socket.h>, which Glibc shows only with _GNU_SOURCE.
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    private static func runtimeEnvironment() -> [String: String] {
        guard let value = getenv("XDG_RUNTIME_DIR") else { return [:] }
        return ["XDG_RUNTIME_DIR": String(cString: value)]
    }
}

/// What the server's threads share: the host, the options, the event
/// router and the connected clients.
final class ServerCore: Sendable {
    let host: Host
    let options: ControlOptions
    let router: EventRouter
    private let clients = Mutex<[ObjectIdentifier: ClientConnection]>([:])

    init(host: Host, options: ControlOptions) {
        self.host = host
        self.options = options
        router = EventRouter(heldLimit: options.queueLimit)
    }

    var clientCount: Int { clients.withLock { $0.count } }

    /// Starts serving a connection whose peer was checked. Registered and
    /// started under one lock, so a client that leaves at once finds itself
    /// registered when it unregisters.
    func admit(_ fd: Int32) {
        let client = ClientConnection(fd: fd, core: self)
        let started = clients.withLock { list -> Bool in
            guard client.start() else { return false }
            list[ObjectIdentifier(client)] = client
            return true
        }
        if !started { Glibc.close(fd) }
    }

    /// Unregisters a client that ended; false when stop() took it (and joins its reader).
    func remove(_ client: ClientConnection) -> Bool {
        clients.withLock { $0.removeValue(forKey: ObjectIdentifier(client)) != nil }
    }

    func takeClients() -> [ClientConnection] {
        clients.withLock { list in
            defer { list.removeAll() }
            return Array(list.values)
        }
    }
}
