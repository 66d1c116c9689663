// The control socket an app opens so `pincer attach` can reach its host.
// The protocol is in Sources/PincerControl/Protocol.swift.
import PincerControl
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public struct ControlOptions: Sendable {
    /// Where the socket goes; nil: RuntimeDirectory.path for the process
    /// environment (and when that directory is refused, a private one of
    /// the app's own: `ControlServer.directoryWarning` says why).
    public var directory: String?
    /// The app's name, as `hello` and `pincer ps` show it.
    public var appName: String
    /// false: `invoke` of a command that changes state, `set`, and shell
    /// commands that change state are refused with ErrorCode.disabled.
    public var allowChanges: Bool = true
    /// The longest message, each way.
    public var maxMessageBytes: Int = ControlProtocol.maxMessageBytes
    /// Bytes queued for one client: events are dropped past it, and a
    /// client whose replies do not fit is disconnected. At least one message
    /// of `maxMessageBytes` and its newline fit, whatever is set here.
    public var queueBytes: Int = ControlProtocol.queueBytes

    public init(appName: String) { self.appName = appName }
}

public struct ControlServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Serves the control protocol on <directory>/<pid>.sock: one poller
/// thread accepts, reads every client and writes what their sockets did
/// not take at once; requests that call plugins run on the request pool
/// (WorkerPool). An idle client costs a descriptor and a little memory, no thread.
public final class ControlServer: Sendable {
    public let socketPath: String
    /// Why the socket is not in the default directory (that one was refused,
    /// e.g. planted by another user, and a private one was made); nil when
    /// it is where it was asked to be. Also logged as a warning and sent in `hello`.
    public let directoryWarning: String?
    private let core: ServerCore
    private let listener: Int32
    private let pollThread: ServerThread
    private let busToken: UInt64
    /// The socket file we bound, so stop() removes that file and no other.
    private let socketInode: UInt
    /// The private directory made when the default was refused: removed by stop().
    private let madeDirectory: String?
    private let stopped = Atomic<Bool>(false)

    /// Socket paths served in this process: a second server on the same
    /// path would otherwise remove the first one's socket as stale.
    private static let pathsInUse = Mutex<Set<String>>([])

    /// listen(2)'s backlog: a burst of connects waits here while the poller
    /// accepts (the kernel caps it at net.core.somaxconn).
    static let backlog: Int32 = 4096

    public init(host: Host, options: ControlOptions) throws(ControlServerError) {
        let directory: String
        var warning: String?
        do {
            if let asked = options.directory {
                directory = try RuntimeDirectory.ensure(asked)
            } else {
                let usual = RuntimeDirectory.path(environment: Self.runtimeEnvironment())
                do {
                    directory = try RuntimeDirectory.ensure(usual)
                } catch {
                    // Refused (another user's, or not a directory): never used, but the app still starts.
                    directory = try RuntimeDirectory.privateFallback()
                    warning = "the socket directory \(usual) was refused (\(error.description)); using the private directory \(directory) instead, which pincer ps does not list: attach with the socket path"
                }
            }
        } catch {
            throw ControlServerError(description: error.description)
        }
        let made = warning == nil ? nil : directory
        let path = RuntimeDirectory.socketPath(in: directory, pid: getpid())
        guard let address = UnixSocket.address(path) else {
            if let made { rmdir(made) }
            throw ControlServerError(description: "socket path \(path) is longer than \(UnixSocket.maxPathBytes) bytes; choose a shorter directory")
        }
        guard Self.pathsInUse.withLock({ $0.insert(path).inserted }) else {
            throw ControlServerError(description: "\(path) is already served by another ControlServer in this process")
        }
        func fail(_ message: String, closing fds: [Int32] = []) -> ControlServerError {
            for fd in fds { Glibc.close(fd) }
            _ = Self.pathsInUse.withLock { $0.remove(path) }
            if let made { rmdir(made) }
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
        guard chmod(path, 0o600) == 0, lstat(path, &st) == 0, listen(fd, Self.backlog) == 0 else {
            let why = UnixSocket.errorText()
            unlink(path)
            throw fail("cannot listen on \(path): \(why)", closing: [fd])
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let why = UnixSocket.errorText()
            unlink(path)
            throw fail("cannot create a pipe: \(why)", closing: [fd])
        }
        for p in pipeFDs {
            _ = fcntl(p, F_SETFD, FD_CLOEXEC)
            // Waking never blocks: a full pipe wakes the poller already.
            _ = fcntl(p, F_SETFL, fcntl(p, F_GETFL) | O_NONBLOCK)
        }
        let core = ServerCore(host: host, options: options, wake: (pipeFDs[0], pipeFDs[1]),
                              socketPath: path, directoryWarning: warning)
        let token = core.router.listen(to: host.events)
        guard let thread = ServerThread.start({ Poller(listener: fd, core: core).run() }) else {
            host.events.unsubscribe(token)
            unlink(path)
            throw fail("cannot start the server thread", closing: [fd] + pipeFDs)
        }
        if let warning { host.options.logHandler(LogRecord(level: .warning, source: "pincer.control", message: warning)) }
        socketPath = path
        directoryWarning = warning
        madeDirectory = made
        socketInode = UInt(st.st_ino)
        self.core = core
        listener = fd
        pollThread = thread
        busToken = token
    }

    deinit { stop() }

    /// Clients connected now.
    public var clientCount: Int { core.clientCount }

    /// Bytes queued for all clients now (the byte budget at work; for tests).
    public var queuedBytes: Int { core.clientList().reduce(0) { $0 + $1.queue.queuedBytes } }

    /// Requests running in a plugin (or a shell command) now, oldest first.
    public var callsInProgress: [CallInProgress] { core.running.list() }

    /// Stops accepting, closes every client, joins the poller and removes
    /// the socket. Never waits for a plugin: requests still running finish
    /// on their own (`callsInProgress` lists them) and their results are
    /// dropped. Safe to call more than once.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.stopping.store(true, ordering: .releasing)
        core.wakePoller()
        pollThread.join()
        Glibc.close(listener)
        var st = stat()
        if lstat(socketPath, &st) == 0 && UInt(st.st_ino) == socketInode { unlink(socketPath) }
        if let madeDirectory { rmdir(madeDirectory) }
        _ = Self.pathsInUse.withLock { $0.remove(socketPath) }
        core.host.events.unsubscribe(busToken)
        core.router.removeAll()
        // The poller is gone: retire the clients it served.
        for client in core.takeClients() {
            client.close()
            client.retire()
        }
        core.closeWake()
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

/// The server's one thread: poll(2) over the listener, the wake pipe and
/// every client. Accepts, reads requests (ClientConnection.readAvailable),
/// writes queued bytes when a socket has room, and retires clients that ended.
struct Poller {
    let listener: Int32
    let core: ServerCore

    func run() {
        var clients: [ClientConnection] = []
        var readers: [MessageReader] = []
        var scratch = [UInt8](repeating: 0, count: 65536)
        var fds: [pollfd] = []
        while !core.stopping.load(ordering: .acquiring) {
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: core.wakeDescriptor, events: Int16(POLLIN), revents: 0))
            for client in clients {
                var events: Int16 = 0
                if client.wantsRead { events |= Int16(POLLIN) }
                if client.queue.wantsWrite { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: client.fd, events: events, revents: 0))
            }
            let n = poll(&fds, nfds_t(fds.count), -1)
            if n < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { core.drainWake() }
            if core.stopping.load(ordering: .acquiring) { return }
            for i in clients.indices {
                let revents = fds[i + 2].revents
                if revents == 0 { continue }
                let client = clients[i]
                if revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0 { client.queue.flush() }
                if client.wantsRead && revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                    client.readAvailable(&readers[i], scratch: &scratch)
                }
            }
            // Retire the clients that are done (closed, or drained after their end).
            var i = 0
            while i < clients.count {
                if clients[i].isFinished {
                    let client = clients.remove(at: i)
                    readers.remove(at: i)
                    // false: stop() took it, and retires it.
                    if core.remove(client) { client.retire() }
                } else {
                    i += 1
                }
            }
            if fds[0].revents != 0 { accept(into: &clients, &readers) }
        }
    }

    /// Accepts every pending connection (the listener is non-blocking).
    private func accept(into clients: inout [ClientConnection], _ readers: inout [MessageReader]) {
        while true {
            let fd = Glibc.accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors: wait instead of spinning on the pending connection.
                if errno == EMFILE || errno == ENFILE { usleep(50_000) }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC) // accept4 is a GNU extension Swift does not see
            // Before reading a byte: only this user may talk to the app.
            guard ControlServer.peerUID(fd) == geteuid() else {
                Glibc.close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let client = ClientConnection(fd: fd, core: core)
            core.add(client)
            clients.append(client)
            readers.append(MessageReader(fd: fd, maxBytes: core.options.maxMessageBytes))
        }
    }
}

/// What the server's threads share: the host, the options, the event
/// router, the connected clients and the calls in progress.
final class ServerCore: Sendable {
    let host: Host
    let options: ControlOptions
    let router: EventRouter
    let running = RunningCalls()
    let queueBudget: Int
    let socketPath: String
    let directoryWarning: String?
    let stopping = Atomic<Bool>(false)
    private let clients = Mutex<[ObjectIdentifier: ClientConnection]>([:])
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(host: Host, options: ControlOptions, wake: (read: Int32, write: Int32), socketPath: String, directoryWarning: String?) {
        self.host = host
        self.options = options
        self.socketPath = socketPath
        self.directoryWarning = directoryWarning
        router = EventRouter(heldLimit: ControlProtocol.heldEvents)
        queueBudget = max(options.queueBytes, options.maxMessageBytes + 1)
        wakeRead = wake.read
        wakeWrite = wake.write
    }

    var clientCount: Int { clients.withLock { $0.count } }

    func clientList() -> [ClientConnection] { clients.withLock { Array($0.values) } }

    /// Makes the poller look again: a client has bytes waiting or closed, or the server stops.
    func wakePoller() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    var wakeDescriptor: Int32 { wakeRead }

    /// Reads the wake-ups that arrived (on the poller thread).
    func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 256)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    func closeWake() {
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    func add(_ client: ClientConnection) { clients.withLock { $0[ObjectIdentifier(client)] = client } }

    /// Unregisters a client that ended; false when stop() took it.
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

/// A request running in a plugin (or in a shell command) for a client.
public struct CallInProgress: Sendable, CustomStringConvertible {
    /// The plugin called, when the request names one (invoke, get, set).
    public let pluginID: String?
    /// What runs: "invoke net.list", "shell run x", "get flags.fast-mode".
    public let what: String
    public let started: ContinuousClock.Instant

    public var duration: Duration { ContinuousClock.now - started }

    public var milliseconds: Int64 {
        let d = duration.components
        return d.seconds * 1000 + d.attoseconds / 1_000_000_000_000_000
    }

    public var description: String {
        "\(what)\(pluginID.map { " (plugin \($0))" } ?? "") running for \(milliseconds) ms"
    }
}

/// The requests running now, so a bounded stop can name what it abandons.
final class RunningCalls: Sendable {
    private let calls = Mutex<(last: UInt64, table: [UInt64: CallInProgress])>((0, [:]))

    func begin(_ request: Request, host: Host) -> UInt64 {
        let name = request.params["command"]?.stringValue ?? request.params["entry"]?.stringValue
        var plugin: String?
        switch request.method {
        case .invoke: plugin = name.flatMap { host.command(named: $0)?.pluginID }
        case .get, .set:
            if let id = name { plugin = host.plugins.first { id.hasPrefix($0.shortName + ".") }?.id }
        default: break
        }
        var what = request.method.rawValue
        if let name { what += " " + name }
        if request.method == .shell, let argv = request.params["argv"]?.arrayValue {
            what += " " + argv.compactMap(\.stringValue).joined(separator: " ").prefix(200)
        }
        let call = CallInProgress(pluginID: plugin, what: what, started: .now)
        return calls.withLock { c in
            c.last += 1
            c.table[c.last] = call
            return c.last
        }
    }

    func end(_ token: UInt64) { _ = calls.withLock { $0.table.removeValue(forKey: token) } }

    func list() -> [CallInProgress] { calls.withLock { Array($0.table.values) }.sorted { $0.started < $1.started } }
}
