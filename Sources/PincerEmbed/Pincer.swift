// Embedding Pincer in an app: start the host with its plugins (and the
// control socket `pincer attach` uses) once, and reach the built-in
// services through typed wrappers over their C tables.
import CPincerSDK
import PincerControl
import enum PincerPluginKit.BackgroundThread
@_exported import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Pincer running inside an app.
///
///     let pincer = try Pincer.start(PincerOptions(appName: "shop"))
///     try pincer.flags.register("new-checkout", remote: false)
///     if pincer.flags.bool("new-checkout", default: false) { ... }
///     let api = pincer.servers.variable("API_URL")
///     ...
///     Pincer.stop()
///
/// **One instance per process.** `start` while Pincer runs returns the
/// running instance when the options are the same (every field but the log
/// handler) and throws `.alreadyRunning` naming the fields when they differ:
/// options are never silently ignored. `stop()` then `start` again gives a
/// new instance (the plugins' init runs again, on the same state directory).
///
/// **Stopping** stops the control server and removes its socket, stops a
/// location route playing in this process, ends the subscriptions made
/// through the wrappers, and shuts the host down (each plugin's shutdown
/// runs once). Stopping is bounded by `PincerOptions.stopTimeout`: a plugin
/// call that is still running then (a command stuck on a pipe) is abandoned,
/// named in the returned `StopReport` and logged as a warning, and stop
/// returns so the app can exit; the abandoned call's thread and the
/// shutdowns behind it finish on their own if they ever do. Stopping twice, or stopping an instance that is no longer
/// the running one, does nothing. After stop, the wrappers of the stopped
/// instance read as "off" (defaults, nil, text unchanged) and their changes
/// throw `.stopped`; `host` must not be used.
///
/// **Threads.** Every member may be used from any thread. `start` and `stop`
/// are serialised; do not call them from a Pincer callback (a subscription
/// handler, a plugin) or concurrently with calls into the wrappers you still
/// expect to work.
public final class Pincer: Sendable {
    /// The options it was started with.
    public let options: PincerOptions
    /// The host, for what the wrappers do not cover: `host.command(named:)`,
    /// `host.plugins`, `host.failures`, `host.events`.
    public let host: Host
    /// The control socket's path; nil when started without one.
    public let socketPath: String?
    /// Plugin files not started because `allowedPlugins` left them out.
    public let skippedPlugins: [String]

    public let flags: PincerFlags
    public let servers: PincerServers
    public let l10n: PincerL10n
    public let location: PincerLocation
    public let network: PincerNetwork

    let lifetime: Lifetime
    private let control: ControlSocket?

    /// False once stopped.
    public var isRunning: Bool { lifetime.isRunning }

    /// A service table by id ("pincer.flags/1", "pincer.database/1", ...),
    /// to use with the SDK headers; nil when no loaded plugin publishes it or
    /// Pincer was stopped. Valid until `stop()`.
    public func service(id: String) -> UnsafeRawPointer? {
        lifetime.isRunning ? host.service(id: id) : nil
    }

    /// `service(id:)`, or an error saying why there is none: which plugin
    /// publishes it and whether it was left out, refused or not found.
    public func requireService(id: String) throws(PincerError) -> UnsafeRawPointer {
        guard lifetime.isRunning else { throw PincerError(.stopped, "\(id): Pincer was stopped (start it again for a new instance)") }
        guard let table = host.service(id: id) else {
            throw PincerError(.unavailable, KnownServices.missingReason(id: id, host: host, options: options))
        }
        return table
    }

    // MARK: start and stop

    /// Serialises start and stop.
    private static let lifecycle = Mutex<Void>(())
    /// The running instance (read without waiting for a start or stop).
    private static let running = Mutex<Pincer?>(nil)
    private static let exitHook = Mutex<Bool>(false)

    /// The running instance, if any.
    public static var current: Pincer? { running.withLock { $0 } }

    /// Starts Pincer: loads the plugins, opens the settings store and the
    /// control socket. Returns the running instance when Pincer already runs
    /// with the same options; throws `.alreadyRunning` when they differ.
    /// Nothing stays started when it throws.
    @discardableResult
    public static func start(_ options: PincerOptions) throws(PincerError) -> Pincer {
        try options.validate()
        return try lifecycle.withLock { _ throws(PincerError) -> Pincer in
            if let existing = current {
                let differences = options.differences(from: existing.options)
                guard differences.isEmpty else {
                    throw PincerError(.alreadyRunning, "Pincer is already running with other options (\(differences.joined(separator: ", ")) differ); stop it first, or start with the same options to get the running instance")
                }
                return existing
            }
            let started = try Pincer(options)
            running.withLock { $0 = started }
            installExitHook()
            return started
        }
    }

    /// Stops the running instance, if any, within its `stopTimeout`.
    @discardableResult
    public static func stop() -> StopReport { stop(only: nil, timeout: nil) }

    /// Stops this instance if it is the running one; otherwise does nothing.
    @discardableResult
    public func stop() -> StopReport { Pincer.stop(only: self, timeout: nil) }

    /// Stops the running instance, waiting at most `timeout` for its plugins.
    @discardableResult
    public static func stop(timeout: Duration) -> StopReport { stop(only: nil, timeout: timeout) }

    private static func stop(only instance: Pincer?, timeout: Duration?) -> StopReport {
        lifecycle.withLock { _ in
            guard let running = current, instance == nil || instance === running else { return StopReport(abandoned: [], shutdownFinished: true, timeout: .zero) }
            let report = running.shutDown(within: timeout ?? running.options.stopTimeout)
            Pincer.running.withLock { $0 = nil }
            return report
        }
    }

    /// What stopping left behind.
    public struct StopReport: Sendable, CustomStringConvertible {
        /// A call into a plugin still running when stop gave up waiting.
        public struct AbandonedCall: Sendable, Equatable {
            /// The plugin's id, when known ("com.example.stuck").
            public let pluginID: String?
            /// What runs, as the control socket received it: "invoke stuck.wait".
            public let what: String
            /// How long it had been running.
            public let milliseconds: Int64
        }

        /// Calls that were abandoned (known ones: those of control-socket
        /// clients). Empty when everything stopped in time.
        public let abandoned: [AbandonedCall]
        /// Whether every plugin's shutdown ran within the bound.
        public let shutdownFinished: Bool
        /// The bound that applied.
        public let timeout: Duration

        /// Everything stopped within the bound; nothing was abandoned.
        public var isClean: Bool { shutdownFinished && abandoned.isEmpty }

        public var description: String {
            if isClean { return "stopped" }
            let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            var text = "stopped, but the plugins did not finish within \(ms) ms"
            if abandoned.isEmpty {
                text += "; a call into a plugin is still running (one the app made itself: no control-socket request is), so its shutdown is abandoned"
            } else {
                text += "; abandoned: " + abandoned.map { c in
                    "\(c.what)\(c.pluginID.map { " (plugin \($0))" } ?? "") running for \(c.milliseconds) ms"
                }.joined(separator: "; ")
            }
            return text
        }
    }

    private init(_ options: PincerOptions) throws(PincerError) {
        let hostOptions = options.hostOptions()
        let host = Host(options: hostOptions)
        do {
            _ = try host.settings()
        } catch {
            throw PincerError(.stateDirectory, "cannot open the settings store in \(hostOptions.stateDirectory): \(error)")
        }
        let skipped = Pincer.loadPlugins(into: host, options: options, log: hostOptions.logHandler)
        let lifetime = Lifetime()
        func table<T>(_ id: String, _ slots: [(String, PartialKeyPath<T>)]) -> ServiceTable<T> {
            ServiceTable(id: id, host: host, options: options, lifetime: lifetime, slots: slots)
        }
        self.options = options
        self.host = host
        self.lifetime = lifetime
        skippedPlugins = skipped
        flags = PincerFlags(service: table(PINCER_FLAGS_SERVICE_ID, PincerFlags.slots))
        servers = PincerServers(service: table(PINCER_SERVERS_SERVICE_ID, PincerServers.slots))
        l10n = PincerL10n(service: table(PINCER_L10N_SERVICE_ID, PincerL10n.slots))
        location = PincerLocation(service: table(PINCER_LOCATION_SERVICE_ID, PincerLocation.slots))
        network = PincerNetwork(service: table(PINCER_NETWORK_SERVICE_ID, PincerNetwork.slots))
        if options.controlSocket {
            do {
                control = try ControlSocket.start(host: host, options: options)
            } catch {
                lifetime.end()
                host.shutdown()
                throw error
            }
        } else {
            control = nil
        }
        socketPath = control?.path
    }

    /// Stops everything, in the order that keeps each step safe, waiting
    /// for the plugins at most `timeout`.
    private func shutDown(within timeout: Duration) -> StopReport {
        guard lifetime.isRunning else { return StopReport(abandoned: [], shutdownFinished: true, timeout: timeout) }
        // No client can reach the host any more, and the socket is gone
        // (this never waits for a plugin: requests still running are dropped).
        control?.stop()
        // The rest calls into plugins, which wait for a call that is stuck
        // (each plugin's calls are serialised): on a thread of its own.
        let done = ConditionLock()
        let finished = Mutex(false)
        let location = self.location, lifetime = self.lifetime, host = self.host
        let steps: @Sendable () -> Void = {
            // A route's playback thread must not outlive the host.
            if let (t, c) = location.service.ifAvailable { _ = t.pointee.stop!(c) }
            // Wrappers answer "off" from now on; their subscriptions end.
            lifetime.end()
            host.shutdown()
            done.withLock {
                finished.withLock { $0 = true }
                done.broadcast()
            }
        }
        // A thread nobody joins: this part of stopping may never end.
        if !BackgroundThread.start(steps) { steps() }
        let deadline = ContinuousClock.now + timeout
        let inTime = done.withLock { () -> Bool in
            while !finished.withLock({ $0 }) {
                let left = deadline - ContinuousClock.now
                if left <= .zero { return false }
                _ = done.wait(milliseconds: Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
            }
            return true
        }
        if inTime { return StopReport(abandoned: [], shutdownFinished: true, timeout: timeout) }
        // Given up: the wrappers still read as "off".
        lifetime.end()
        let abandoned = (control?.callsInProgress ?? []).map {
            StopReport.AbandonedCall(pluginID: $0.pluginID, what: $0.what, milliseconds: $0.milliseconds)
        }
        let report = StopReport(abandoned: abandoned, shutdownFinished: false, timeout: timeout)
        host.options.logHandler(LogRecord(level: .warning, source: Host.namespace, message: "Pincer.stop: \(report)"))
        return report
    }

    /// Loads every plugin, or with an allow-list only the allowed ones.
    /// Returns the files left out.
    private static func loadPlugins(into host: Host, options: PincerOptions, log: @Sendable (LogRecord) -> Void) -> [String] {
        guard let allowed = options.allowedPlugins else {
            host.loadAll()
            return []
        }
        var skipped: [String] = []
        var matched = Set<String>()
        for path in host.pluginCandidates() {
            guard let identity = PluginLocator.identity(of: path),
                  let name = [identity.shortName, identity.id].first(where: allowed.contains) else {
                skipped.append(path)
                continue
            }
            matched.insert(name)
            host.load(path: path)
        }
        for name in allowed where !matched.contains(name) {
            log(LogRecord(level: .warning, source: Host.namespace,
                          message: "allowed plugin '\(name)' matches no plugin found (by short name or id)"))
        }
        return skipped
    }

    /// At exit, removes the socket of an instance the app did not stop
    /// (plugins are not shut down then: other threads may still run).
    private static func installExitHook() {
        let first = exitHook.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard first else { return }
        atexit {
            let path = Pincer.running.withLockIfAvailable { $0?.socketPath } ?? nil
            if let path { unlink(path) }
        }
    }
}
