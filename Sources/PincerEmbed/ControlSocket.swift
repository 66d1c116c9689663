import PincerControlServer
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// The control socket `pincer attach` talks to (PincerControlServer).
struct ControlSocket: Sendable {
    let path: String
    private let stopServer: @Sendable () -> Void
    private let running: @Sendable () -> [CallInProgress]

    /// Binds <socket directory>/<pid>.sock for `host`.
    static func start(host: Host, options: PincerOptions) throws(PincerError) -> ControlSocket {
        var control = ControlOptions(appName: options.appName)
        control.directory = options.socketDirectory
        control.allowChanges = options.allowChanges
        do {
            let server = try ControlServer(host: host, options: control)
            return ControlSocket(path: server.socketPath, stopServer: { server.stop() }, running: { server.callsInProgress })
        } catch {
            throw PincerError(.controlSocket, "cannot start the control socket: \(error.description)")
        }
    }

    /// Requests of clients still running in a plugin.
    var callsInProgress: [CallInProgress] { running() }

    /// Stops the server and makes sure the socket file is gone.
    func stop() {
        stopServer()
        var st = stat()
        if lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    }
}
