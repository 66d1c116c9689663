import Foundation
import XCTest
import CPincerSDK
import PincerControl
import PincerEmbed
import Synchronization

/// Embedding: the Swift API in-process with the built-in plugins of the
/// build directory, the C API from a real C program linked against
/// libpincer-embed.so, and the demo app run as a process.
final class EmbedTests: XCTestCase {
    var stateDirectory = ""
    var socketDirectory = ""

    override func setUp() {
        stateDirectory = Fixture.temporaryDirectory("pincer-embed-state")
        // The control server creates the directory itself (0700).
        socketDirectory = Fixture.temporaryDirectory("pincer-embed-run") + "/sockets"
    }

    override func tearDown() {
        Pincer.stop()
    }

    func options(socket: Bool = true) -> PincerOptions {
        var o = PincerOptions(appName: "embed-tests")
        o.builtinPlugins = .directory(Fixture.buildDirectory)
        o.stateDirectory = stateDirectory
        o.socketDirectory = socketDirectory
        o.controlSocket = socket
        o.logHandler = { _ in }
        return o
    }

    static func mode(_ path: String) -> mode_t? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return st.st_mode
    }

    /// Runs a host command the way a tester would (through the shell or the socket).
    @discardableResult
    func command(_ pincer: Pincer, _ name: String, _ words: String...) throws -> Value {
        guard let command = pincer.host.command(named: name) else {
            throw PincerError(.unavailable, "no command \(name)")
        }
        return try command.invoke(words.map(Value.string))
    }

    // MARK: lifecycle

    func testStartStopAndStartAgain() throws {
        let log = Fixture.temporaryDirectory("pincer-embed-lifecycle") + "/calls"
        setenv("PINCER_TEST_LIFECYCLE_LOG", log, 1)
        defer { unsetenv("PINCER_TEST_LIFECYCLE_LOG") }
        var o = options()
        o.pluginPaths = [try Fixture.buildPlugin("lifecycle", into: Fixture.temporaryDirectory("pincer-embed-plugin"))]

        let pincer = try Pincer.start(o)
        XCTAssertTrue(pincer.isRunning)
        XCTAssertTrue(Pincer.current === pincer)
        XCTAssertEqual(Set(pincer.host.plugins.map(\.shortName)).isSuperset(of: ["flags", "servers", "l10n", "loc", "net", "lifecycle"]), true,
                       "\(pincer.host.plugins.map(\.shortName)) \(pincer.host.failures)")
        let socket = try XCTUnwrap(pincer.socketPath)
        XCTAssertEqual(socket, "\(socketDirectory)/\(getpid()).sock")
        XCTAssertEqual(Self.mode(socket).map { $0 & S_IFMT }, S_IFSOCK)
        XCTAssertEqual(Self.mode(socket).map { $0 & 0o777 }, 0o600)
        XCTAssertEqual(Self.mode(socketDirectory).map { $0 & 0o777 }, 0o700)

        // Starting again: the same options give the running instance, others are refused by name.
        XCTAssertTrue(try Pincer.start(o) === pincer)
        var other = o
        other.allowChanges = false
        other.stateDirectory = stateDirectory + "/elsewhere"
        XCTAssertThrowsError(try Pincer.start(other)) { error in
            let e = error as? PincerError
            XCTAssertEqual(e?.kind, .alreadyRunning)
            XCTAssertTrue(e?.message.contains("stateDirectory, allowChanges") == true, "\(error)")
        }

        try pincer.flags.register("embed-lifecycle", remote: true)
        XCTAssertTrue(pincer.flags.bool("embed-lifecycle", default: false))
        let recorder = try XCTUnwrap(pincer.network.recorder)
        XCTAssertFalse(recorder.isIgnored(method: "GET", url: "https://example.com/"))

        Pincer.stop()
        XCTAssertFalse(pincer.isRunning)
        XCTAssertNil(Pincer.current)
        XCTAssertNil(Self.mode(socket), "the socket is removed")
        // The stopped instance's wrappers answer "off"; changes say why they cannot.
        XCTAssertFalse(pincer.flags.isAvailable)
        XCTAssertEqual(pincer.flags.resolve("embed-lifecycle", default: false).reason, .unavailable)
        XCTAssertNil(pincer.service(id: PINCER_FLAGS_SERVICE_ID))
        XCTAssertThrowsError(try pincer.flags.register("x", remote: 1)) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .stopped)
        }
        // A capturing session built from the recorder keeps working, unrecorded.
        XCTAssertTrue(recorder.isIgnored(method: "GET", url: "https://example.com/"))
        XCTAssertNil(recorder.begin(method: "GET", url: "https://example.com/", headers: [], body: nil, startedAt: Date()))
        XCTAssertTrue(recorder.lastError.contains("stopped"), recorder.lastError)
        // Stopping twice, through either door, does nothing.
        Pincer.stop()
        pincer.stop()
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8), "init\nshutdown\n", "each plugin's shutdown runs once")

        // A new instance on the same state: the flag registered before is still there.
        let again = try Pincer.start(o)
        XCTAssertFalse(again === pincer)
        XCTAssertEqual(again.flags.resolve("embed-lifecycle", default: false).value, true)
        XCTAssertEqual(again.flags.resolve("embed-lifecycle", default: false).reason, .remote)
        XCTAssertNotNil(again.socketPath.flatMap(Self.mode))
        pincer.stop() // the old instance's stop leaves the new one alone
        XCTAssertTrue(again.isRunning)
        again.stop()
        XCTAssertNil(Self.mode(socket))
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8), "init\nshutdown\ninit\nshutdown\n")
    }

    func testOptionsAreChecked() throws {
        var o = options(socket: false)
        o.appName = ""
        XCTAssertThrowsError(try Pincer.start(o)) { XCTAssertEqual(($0 as? PincerError)?.kind, .invalidOptions) }
        XCTAssertNil(Pincer.current, "nothing stays started")

        // A socket that cannot be opened: nothing stays started either.
        o = options()
        o.socketDirectory = "/proc/pincer-no-such-directory/sockets"
        XCTAssertThrowsError(try Pincer.start(o)) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .controlSocket)
            XCTAssertTrue("\(error)".contains("/proc/pincer-no-such-directory"), "\(error)")
        }
        XCTAssertNil(Pincer.current)

        // Read-only: the socket says so to clients.
        o = options()
        o.allowChanges = false
        let pincer = try Pincer.start(o)
        let hello = try Self.request(try XCTUnwrap(pincer.socketPath), #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}"#)
        let result = Fixture.json(hello)["result"] as? [String: Any]
        XCTAssertEqual(result?["allow_changes"] as? Bool, false, hello)
        XCTAssertEqual((result?["app"] as? [String: Any])?["name"] as? String, "embed-tests", hello)
    }

    /// README "attach ... exits with its exit code; 1 when the app refuses
    /// (changes disabled)": an app embedding Pincer with allowChanges off,
    /// and the real `pincer attach` against it.
    func testAttachExitsOneWhenTheAppRefusesChanges() throws {
        var o = options()
        o.allowChanges = false
        let pincer = try Pincer.start(o)
        let socket = try XCTUnwrap(pincer.socketPath)
        try pincer.flags.register("embed-refused", remote: false)
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = Fixture.temporaryDirectory("pincer-embed-local") // not the app's store
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        func attach(_ words: [String], input: String? = nil) throws -> Fixture.ProcessResult {
            try Fixture.run(Fixture.pincer, ["attach", socket] + words, environment: env, input: input)
        }
        // Reading is allowed: the connection and the app are fine.
        let read = try attach(["get", "devopts.api-mode"])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, "live\n")
        for (words, what) in [(["set", "devopts.api-mode", "mock"], "set devopts.api-mode"), (["run", "devopts.reset"], "devopts.reset"),
                              (["run", "flags.set", "embed-refused", "true"], "flags.set"), (["pin", "devopts.api-mode"], "pin devopts.api-mode")] {
            let refused = try attach(words)
            XCTAssertEqual(refused.status, 1, "\(words): \(refused.stderr)")
            XCTAssertEqual(refused.stdout, "", "\(words)")
            XCTAssertTrue(refused.stderr.contains("\(what) changes state, and the app does not allow changes from pincer"), "\(words): \(refused.stderr)")
        }
        // A shell against the app: the refused line is its last, so it exits 1 too.
        let repl = try attach([], input: "devopts.add 1 --b 2\nset devopts.api-mode mock\n")
        XCTAssertEqual(repl.status, 1, repl.stderr)
        XCTAssertEqual(repl.stdout, "3.0\n")
        XCTAssertTrue(repl.stderr.contains("set devopts.api-mode changes state"), repl.stderr)
        // Nothing changed in the app.
        XCTAssertEqual(try pincer.host.storedValue(of: try XCTUnwrap(pincer.host.entry(id: "devopts.api-mode"))), "live")
        XCTAssertEqual(pincer.flags.resolve("embed-refused", default: true).reason, .remote)
        XCTAssertEqual(pincer.host.entries(inSection: "pinned").map(\.fullID), [])
    }

    // MARK: typed services

    func testFlagsThroughTheTypedAPI() throws {
        let pincer = try Pincer.start(options(socket: false))
        let flags = pincer.flags
        XCTAssertTrue(flags.isAvailable, flags.unavailableReason)
        try flags.register("embed-bool", remote: false, summary: "a bool")
        try flags.register("embed-int", remote: 7)
        try flags.register("embed-double", remote: 2.5)
        try flags.register("embed-string", remote: String(repeating: "long text ", count: 40))

        XCTAssertEqual(flags.bool("embed-bool", default: true), false)
        XCTAssertEqual(flags.int("embed-int", default: 0), 7)
        XCTAssertEqual(flags.double("embed-double", default: 0), 2.5)
        XCTAssertEqual(flags.string("embed-string", default: ""), String(repeating: "long text ", count: 40), "longer than the first buffer")
        XCTAssertEqual(flags.resolve("embed-bool", default: true).reason, .remote)
        XCTAssertEqual(flags.resolve("missing-flag", default: true).value, true)
        XCTAssertEqual(flags.resolve("missing-flag", default: true).reason, .default)
        XCTAssertEqual(flags.resolve("embed-int", default: false).reason, .typeMismatch)

        // A tester changes them through the host's commands; the app reads the change.
        try command(pincer, "flags.set", "embed-bool", "true")
        try command(pincer, "flags.set", "embed-string", "from the shell")
        XCTAssertEqual(flags.resolve("embed-bool", default: false).value, true)
        XCTAssertEqual(flags.resolve("embed-bool", default: false).reason, .override)
        XCTAssertEqual(flags.string("embed-string", default: ""), "from the shell")

        try flags.setOverridesEnabled(false)
        XCTAssertFalse(flags.overridesEnabled)
        XCTAssertEqual(flags.bool("embed-bool", default: true), false)
        try flags.setOverridesEnabled(true)
        try flags.setOverride("embed-int", "42")
        XCTAssertEqual(flags.int("embed-int", default: 0), 42)
        try flags.clearOverride("embed-int")
        XCTAssertEqual(flags.int("embed-int", default: 0), 7)

        // Errors carry the service's message.
        XCTAssertThrowsError(try flags.register("Bad Key", remote: true)) { error in
            let e = error as? PincerError
            XCTAssertEqual(e?.kind, .service(status: PINCER_INVALID_ARGUMENT))
            XCTAssertTrue(e?.message.hasPrefix("pincer.flags/1 register 'Bad Key': ") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("a-z") == true, "the plugin's own text: \(error)")
        }
        XCTAssertThrowsError(try flags.register("embed-int", remote: "text")) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .service(status: PINCER_DUPLICATE))
        }
        XCTAssertThrowsError(try flags.setOverride("embed-int", "not a number")) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .service(status: PINCER_INVALID_ARGUMENT))
        }
    }

    func testServersThroughTheTypedAPI() throws {
        let pincer = try Pincer.start(options(socket: false))
        let servers = pincer.servers
        XCTAssertTrue(servers.isAvailable)
        XCTAssertNil(servers.current, "nothing registered yet")
        try servers.register("production", name: "Production", variables: ["API_URL": "https://api.example.com", "REGION": "eu"])
        try servers.register("staging", name: "Staging", variables: ["API_URL": "https://staging.example.com"])
        XCTAssertEqual(servers.current, "production")
        XCTAssertEqual(servers.variable("API_URL"), "https://api.example.com")
        XCTAssertEqual(servers.variables, ["API_URL": "https://api.example.com", "REGION": "eu"])
        XCTAssertNil(servers.variable("MISSING"))

        let changes = EmbedLockedList()
        let subscription = try servers.subscribe { from, to in changes.append("\(from ?? "-")->\(to)") }
        try command(pincer, "servers.use", "staging")
        XCTAssertEqual(servers.current, "staging")
        XCTAssertEqual(servers.variable("API_URL"), "https://staging.example.com")
        try servers.use("production")
        XCTAssertEqual(changes.items, ["production->staging", "staging->production"])
        servers.unsubscribe(subscription)
        try servers.use("staging")
        XCTAssertEqual(changes.items.count, 2, "no call after unsubscribe")

        XCTAssertThrowsError(try servers.use("nowhere")) { error in
            let e = error as? PincerError
            XCTAssertEqual(e?.kind, .service(status: PINCER_NOT_FOUND))
            XCTAssertTrue(e?.message.contains("nowhere") == true, "\(error)")
        }
        try servers.setDisplayVariable("BUILD", "977")
    }

    func testL10nAndLocationThroughTheTypedAPI() throws {
        let pincer = try Pincer.start(options(socket: false))
        let l10n = pincer.l10n
        XCTAssertTrue(l10n.isAvailable)
        XCTAssertEqual(l10n.modes, [.boundaries], "only boundaries is on by default")
        XCTAssertTrue(l10n.isOn)
        XCTAssertEqual(l10n.transform("Hello"), "[\u{2060}Hello\u{2060}]")
        let generation = l10n.generation
        try command(pincer, "l10n.set", "accented", "on")
        XCTAssertEqual(l10n.modes, [.boundaries, .accented])
        XCTAssertNotEqual(l10n.generation, generation)
        XCTAssertEqual(l10n.transform("Hello %@"), "[\u{2060}Ĥéļļö %@\u{2060}]", "placeholders are kept")
        try l10n.set([.accented, .boundaries], on: false)
        XCTAssertFalse(l10n.isOn)
        XCTAssertEqual(l10n.transform("Hello"), "Hello")

        let location = pincer.location
        XCTAssertTrue(location.isAvailable)
        XCTAssertFalse(location.isSpoofing)
        XCTAssertNil(location.current)
        try command(pincer, "loc.set", "paris", "")
        XCTAssertTrue(location.isSpoofing)
        let paris = try XCTUnwrap(location.current)
        XCTAssertEqual(paris.latitude, 48.8566, accuracy: 0.01)
        XCTAssertEqual(paris.longitude, 2.3522, accuracy: 0.01)
        XCTAssertFalse(paris.isMoving)

        let fixes = EmbedLockedList()
        let subscription = try location.subscribe { fix in
            fixes.append(fix.map { $0.isMoving ? "moving" : "still" } ?? "off")
        }
        try location.play(route: "city-run", rate: 600)
        let deadline = Date().addingTimeInterval(10)
        while fixes.items.filter({ $0 == "moving" }).count < 3 && Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThanOrEqual(fixes.items.filter { $0 == "moving" }.count, 3, "\(fixes.items)")
        XCTAssertTrue(location.current?.isMoving == true)
        try location.stop()
        try location.off()
        XCTAssertFalse(location.isSpoofing)
        location.unsubscribe(subscription)
        XCTAssertThrowsError(try location.play(route: "no-such-route")) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .service(status: PINCER_NOT_FOUND))
        }
        XCTAssertThrowsError(try location.set(latitude: 91, longitude: 0)) { error in
            XCTAssertEqual((error as? PincerError)?.kind, .service(status: PINCER_INVALID_ARGUMENT))
        }

        XCTAssertTrue(pincer.network.isAvailable)
        XCTAssertNotNil(pincer.network.recorder)
    }

    // MARK: a plugin left out

    func testMissingPluginGivesAClearErrorNotACrash() throws {
        var o = options(socket: false)
        o.allowedPlugins = ["servers", "dev.pincer.l10n", "nonexistent"]
        let warnings = EmbedLockedList()
        o.logHandler = { record in if record.level >= .warning { warnings.append(record.message) } }
        let pincer = try Pincer.start(o)
        XCTAssertEqual(pincer.host.plugins.map(\.shortName).sorted(), ["l10n", "servers"])
        XCTAssertTrue(pincer.skippedPlugins.contains { $0.hasSuffix("libpincer-plugin-flags.so") }, "\(pincer.skippedPlugins)")
        XCTAssertTrue(warnings.items.contains { $0.contains("'nonexistent'") }, "\(warnings.items)")

        // Reads fall back to the caller's default and say why; changes throw.
        let flags = pincer.flags
        XCTAssertFalse(flags.isAvailable)
        XCTAssertTrue(flags.unavailableReason.contains("'flags' plugin (dev.pincer.flags) is not in the allowed plugins"), flags.unavailableReason)
        XCTAssertEqual(flags.bool("new-checkout", default: true), true)
        XCTAssertEqual(flags.resolve("new-checkout", default: 3).reason, .unavailable)
        XCTAssertThrowsError(try flags.register("new-checkout", remote: true)) { error in
            let e = error as? PincerError
            XCTAssertEqual(e?.kind, .unavailable)
            XCTAssertTrue(e?.message.hasPrefix("pincer.flags/1 is not available") == true, "\(error)")
        }
        XCTAssertNil(pincer.service(id: PINCER_FLAGS_SERVICE_ID))
        XCTAssertThrowsError(try pincer.requireService(id: PINCER_LOCATION_SERVICE_ID)) { error in
            XCTAssertTrue("\(error)".contains("'loc' plugin"), "\(error)")
        }
        XCTAssertFalse(pincer.location.isSpoofing)
        XCTAssertNil(pincer.location.current)
        XCTAssertThrowsError(try pincer.location.subscribe { _ in })
        XCTAssertNil(pincer.network.recorder)

        // What is allowed works.
        XCTAssertTrue(pincer.servers.isAvailable)
        XCTAssertTrue(pincer.l10n.isAvailable)
        XCTAssertNotNil(try pincer.requireService(id: PINCER_SERVERS_SERVICE_ID))
    }

    // MARK: stopping while a plugin is stuck

    /// A FIFO nobody writes to yet, and the stuck fixture plugin.
    func stuckFixture() throws -> (plugin: String, fifo: String) {
        let plugin = try Fixture.buildPlugin("stuck", into: Fixture.temporaryDirectory("pincer-embed-stuck"))
        // Resolved, as /proc/<pid>/fd shows it.
        let directory = URL(fileURLWithPath: Fixture.temporaryDirectory("pincer-embed-fifo")).resolvingSymlinksInPath().path
        let fifo = directory + "/pipe"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        return (plugin, fifo)
    }

    /// Lets the stuck call finish: one byte into the FIFO it reads.
    func release(_ fifo: String) {
        let fd = open(fifo, O_WRONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(fd, 0, "the stuck call no longer has the FIFO open")
        _ = write(fd, "x", 1)
        close(fd)
    }

    /// Invokes stuck.wait over the socket and waits until the plugin is
    /// inside it (process `pid` has the FIFO open).
    func invokeStuck(socket: String, fifo: String, pid: pid_t = getpid()) throws -> ControlClient {
        let client = try ControlClient(path: socket, timeoutMilliseconds: 20_000)
        _ = try client.send(.invoke, .object([("command", .string("stuck.wait")), ("arguments", .array([.string(fifo)]))]))
        let deadline = Date().addingTimeInterval(10)
        while !Self.hasOpen(fifo, pid: pid) && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(Self.hasOpen(fifo, pid: pid), "the command did not start")
        return client
    }

    /// Whether process `pid` has `path` open (/proc/<pid>/fd).
    static func hasOpen(_ path: String, pid: pid_t) -> Bool {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) == path }
    }

    /// Stopping while a plugin command is stuck (blocked on a pipe, called
    /// over the control socket) returns within the bound and names the
    /// abandoned call: plugin, command, how long. Before, stop waited for the
    /// plugin's shutdown, serialised behind the stuck call: forever.
    func testStopIsBoundedWhileAPluginCommandIsStuck() throws {
        let (plugin, fifo) = try stuckFixture()
        let warnings = Mutex<[String]>([])
        var o = options()
        o.pluginPaths = [plugin]
        o.stopTimeout = .milliseconds(500)
        o.logHandler = { record in if record.level >= .warning { warnings.withLock { $0.append(record.message) } } }
        let pincer = try Pincer.start(o)
        let socket = try XCTUnwrap(pincer.socketPath)
        let client = try invokeStuck(socket: socket, fifo: fifo)
        defer { client.close() }
        usleep(200_000)

        let started = ContinuousClock.now
        let report = Pincer.stop()
        let took = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(took, .milliseconds(500))
        XCTAssertLessThan(took, .seconds(3), "stop returned after \(took)")
        XCTAssertFalse(report.isClean)
        XCTAssertFalse(report.shutdownFinished)
        XCTAssertEqual(report.abandoned.map(\.what), ["invoke stuck.wait"])
        XCTAssertEqual(report.abandoned.first?.pluginID, "com.example.stuck")
        XCTAssertGreaterThanOrEqual(report.abandoned.first?.milliseconds ?? 0, 700)
        XCTAssertTrue(report.description.contains("invoke stuck.wait (plugin com.example.stuck) running for "), report.description)
        XCTAssertEqual(warnings.withLock { $0 }.filter { $0.contains("stuck.wait") }.count, 1, "\(warnings.withLock { $0 })")
        XCTAssertFalse(pincer.isRunning)
        XCTAssertNil(Pincer.current)
        XCTAssertNil(Self.mode(socket), "the socket is removed")

        // The call finishes once released; the abandoned shutdown then runs.
        release(fifo)
        // A new instance starts meanwhile, and stops cleanly.
        var again = options()
        again.pluginPaths = [plugin]
        let second = try Pincer.start(again)
        XCTAssertTrue(second.isRunning)
        XCTAssertTrue(Pincer.stop().isClean)
    }

    /// The same from C: pincer_embed_stop_within returns within the bound
    /// with PINCER_FAILED and a message naming the call, and the process
    /// exits although the plugin's call never finished.
    func testCProgramStopsAndExitsWhileAPluginCommandIsStuck() throws {
        let (plugin, fifo) = try stuckFixture()
        let bin = Fixture.buildDirectory
        let program = Fixture.temporaryDirectory("pincer-embed-c") + "/embed_stuck"
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", Fixture.sdkInclude,
                                                 "\(Fixture.packageRoot)/Tests/Fixtures/embed/embed_stuck.c",
                                                 "-L", bin, "-lpincer-embed", "-Wl,-rpath,\(bin)", "-o", program])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [plugin, stateDirectory, socketDirectory, "400"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = EmbedLineReader(output.fileHandleForReading)
        let socketLine = try XCTUnwrap(lines.next())
        let socket = String(socketLine.dropFirst("socket ".count))
        let client = try invokeStuck(socket: socket, fifo: fifo, pid: process.processIdentifier)
        defer { client.close() }

        let started = Date()
        input.fileHandleForWriting.write(Data("stop\n".utf8))
        let stopLine = try XCTUnwrap(lines.next())
        XCTAssertTrue(stopLine.hasPrefix("stop \(PINCER_FAILED) pincer_embed_stop_within: stopped, but the plugins did not finish within 400 ms; abandoned: invoke stuck.wait (plugin com.example.stuck) running for "), stopLine)
        let exited = Date().addingTimeInterval(10)
        while process.isRunning && Date() < exited { usleep(10_000) }
        XCTAssertFalse(process.isRunning, "the app exits with its plugin call stuck")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertNil(Self.mode(socket), "the socket is removed")
    }

    // MARK: the C API, from a C program

    func testCProgramEmbedsThroughLibpincerEmbed() throws {
        let bin = Fixture.buildDirectory
        let library = "\(bin)/libpincer-embed.so"
        // Only the documented pincer_embed_* functions are exported.
        let symbols = try Fixture.run("/usr/bin/nm", ["-D", "--defined-only", library])
        XCTAssertEqual(symbols.status, 0, symbols.stderr)
        let exported = symbols.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
        XCTAssertEqual(exported.filter { $0.hasPrefix("pincer_embed_") }.sorted(),
                       ["pincer_embed_get_service", "pincer_embed_last_error", "pincer_embed_socket_path", "pincer_embed_start", "pincer_embed_stop",
                        "pincer_embed_stop_within"])

        let program = Fixture.temporaryDirectory("pincer-embed-c") + "/embed_app"
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", Fixture.sdkInclude,
                                                 "\(Fixture.packageRoot)/Tests/Fixtures/embed/embed_app.c",
                                                 "-L", bin, "-lpincer-embed", "-Wl,-rpath,\(bin)", "-o", program])
        XCTAssertEqual(cc.status, 0, cc.stderr)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [bin, stateDirectory, socketDirectory]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let lines = EmbedLineReader(output.fileHandleForReading)

        XCTAssertEqual(lines.next(), "flag c-app-ready=true reason=remote")
        let socketLine = try XCTUnwrap(lines.next())
        XCTAssertTrue(socketLine.hasPrefix("socket "), socketLine)
        let socket = String(socketLine.dropFirst("socket ".count))
        XCTAssertEqual(socket, "\(socketDirectory)/\(process.processIdentifier).sock")
        XCTAssertEqual(Self.mode(socket).map { $0 & S_IFMT }, S_IFSOCK)
        XCTAssertEqual(Self.mode(socket).map { $0 & 0o777 }, 0o600)
        XCTAssertEqual(Self.mode(socketDirectory).map { $0 & 0o777 }, 0o700)

        // Attach: the control protocol's hello names the app.
        let hello = try Self.request(socket, #"{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}"#)
        let result = Fixture.json(hello)["result"] as? [String: Any]
        let app = result?["app"] as? [String: Any]
        XCTAssertEqual(app?["name"] as? String, "embed-app", hello)
        XCTAssertEqual((app?["pid"] as? NSNumber)?.int32Value, process.processIdentifier, hello)

        // Closing standard input makes it stop cleanly.
        try input.fileHandleForWriting.close()
        XCTAssertEqual(lines.next(), "stopped")
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        XCTAssertNil(Self.mode(socket), "the socket is removed")
    }

    /// Sends one JSON-RPC line over a Unix socket; returns the first line of the answer.
    static func request(_ path: String, _ line: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PincerError(.controlSocket, "socket failed") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw PincerError(.controlSocket, "connect \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array((line + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw PincerError(.controlSocket, "write failed") }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != 10 { answer.append(byte) }
        return String(decoding: answer, as: UTF8.self)
    }

    // MARK: the demo app

    func testDemoTicksThroughFlagsServersAndTheNetwork() throws {
        let demo = Fixture.buildDirectory + "/pincer-demo"
        let first = try Fixture.run(demo, ["--ticks", "3", "--interval", "0.1", "--socket-dir", socketDirectory, "--state-dir", stateDirectory])
        XCTAssertEqual(first.status, 0, first.stderr)
        var lines = first.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("pincer-demo: pid ") == true, first.stdout)
        XCTAssertTrue(lines.first?.contains("socket \(socketDirectory)/") == true, first.stdout)
        XCTAssertEqual(lines.last, "pincer-demo: stopped")
        var ticks = lines.filter { $0.hasPrefix("tick ") }
        XCTAssertEqual(ticks.count, 3, first.stdout)
        for (i, tick) in ticks.enumerated() {
            XCTAssertTrue(tick.hasPrefix("tick \(i + 1) fast-mode=false greeting=hello env=production GET http://127.0.0.1:"), tick)
            XCTAssertTrue(tick.hasSuffix("/production status=200"), tick)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: socketDirectory), [], "the socket is removed")

        // What the demo registered persists; a tester's changes reach its next run.
        let tester = AppHost(stateDirectory: stateDirectory, withApp: false)
        try tester.run("flags.set", "fast-mode", "true")
        try tester.run("flags.set", "greeting", "bonjour")
        try tester.run("servers.use", "staging")
        tester.host.shutdown()

        let second = try Fixture.run(demo, ["--ticks", "2", "--interval", "0.1", "--socket-dir", socketDirectory, "--state-dir", stateDirectory])
        XCTAssertEqual(second.status, 0, second.stderr)
        lines = second.stdout.split(separator: "\n").map(String.init)
        ticks = lines.filter { $0.hasPrefix("tick ") }
        XCTAssertEqual(ticks.count, 2, second.stdout)
        for tick in ticks {
            XCTAssertTrue(tick.contains("fast-mode=true greeting=bonjour env=staging GET http://127.0.0.1:"), tick)
            XCTAssertTrue(tick.hasSuffix("/staging status=200"), tick)
        }
    }

    func testDemoStopsCleanlyOnSIGTERM() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixture.buildDirectory + "/pincer-demo")
        process.arguments = ["--interval", "0.1", "--socket-dir", socketDirectory, "--state-dir", stateDirectory]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = EmbedLineReader(output.fileHandleForReading)
        let start = try XCTUnwrap(lines.next())
        let socket = try XCTUnwrap(start.components(separatedBy: "socket ").last)
        XCTAssertNotNil(Self.mode(socket), start)
        XCTAssertTrue(lines.next()?.hasPrefix("tick 1 ") == true)
        process.terminate()
        var last = ""
        while let line = lines.next() { last = line }
        process.waitUntilExit()
        XCTAssertEqual(last, "pincer-demo: stopped")
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertNil(Self.mode(socket), "the socket is removed")
    }
}

/// Strings appended from any thread.
final class EmbedLockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

/// Lines from a pipe as they arrive; nil at end of file.
final class EmbedLineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer += chunk
        }
    }
}
