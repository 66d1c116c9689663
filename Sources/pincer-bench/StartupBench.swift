// Cold start: `pincer commands --json` against `bench-hello`, both launched
// with posix_spawn and timed from the spawn to waitpid's return.
import Foundation
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

struct ProgramFigures: Sendable {
    var command: String
    /// Wall time of each run, in nanoseconds, in run order.
    var samples: [UInt64]

    var sorted: [UInt64] { samples.sorted() }
    var minimum: Double { Double(samples.min() ?? 0) }
    var maximum: Double { Double(samples.max() ?? 0) }
    var median: Double {
        let s = sorted
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? Double(s[s.count / 2]) : (Double(s[s.count / 2 - 1]) + Double(s[s.count / 2])) / 2
    }
}

struct StartupFigures: Sendable {
    static let targetRatio = 1.1

    var runs: Int
    var pincer: ProgramFigures
    var hello: ProgramFigures
    /// Built-in plugin files beside `pincer`: each must load.
    var builtinPlugins: [String]
    /// What `pincer plugins --json` reported loaded (ids) and refused ("path: reason").
    var loadedPlugins: [String]
    var refusedPlugins: [String]
    /// Commands `pincer commands --json` listed, and the commands the same
    /// built-in plugins register when this process loads them.
    var commandCount: Int
    var expectedCommandCount: Int
    /// Large state and many plugins (StartupScaleBench), or why they could not be measured.
    var scale: StartupScaleFigures?
    var scaleError: String?

    var ratio: Double { pincer.median / hello.median }
    var minimumRatio: Double { pincer.minimum / hello.minimum }
    /// A start-up that loaded fewer plugins or commands than there are is
    /// not the start-up the target is about, however fast it was.
    var loadedEverything: Bool {
        !builtinPlugins.isEmpty && loadedPlugins.count == builtinPlugins.count && refusedPlugins.isEmpty
            && commandCount == expectedCommandCount
    }
    /// Why the measured start-up is not the full one, or nil.
    var incompleteReason: String? {
        if builtinPlugins.isEmpty { return "no built-in plugins beside pincer (build everything: swift build -c release)" }
        var reasons: [String] = []
        if loadedPlugins.count != builtinPlugins.count {
            reasons.append("\(loadedPlugins.count) of \(builtinPlugins.count) built-in plugins loaded")
        }
        if !refusedPlugins.isEmpty { reasons.append("refused: \(refusedPlugins.joined(separator: "; "))") }
        if commandCount != expectedCommandCount {
            reasons.append("\(commandCount) commands listed, \(expectedCommandCount) expected")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: ", ")
    }
    var passed: Bool { loadedEverything && ratio <= StartupFigures.targetRatio && scaleError == nil && (scale?.passed ?? true) }
}

enum StartupBench {
    static func run(runs: Int) throws(BenchError) -> StartupFigures {
        guard let directory = Host.executableDirectory() else {
            throw BenchError("cannot find this executable's directory (readlink /proc/self/exe failed)")
        }
        let pincerPath = "\(directory)/pincer", helloPath = "\(directory)/bench-hello"
        for path in [pincerPath, helloPath] where access(path, X_OK) != 0 {
            throw BenchError("\(path) is missing or not executable; build it beside pincer-bench: swift build -c release --product pincer --product bench-hello (or simply swift build -c release)")
        }
        let builtins = builtinPlugins(in: directory)

        let state = try TemporaryDirectory(prefix: "pincer-bench-startup")
        defer { state.remove() }
        let environment = childEnvironment(stateDirectory: state.path)

        let pincer = try Spawner(path: pincerPath, arguments: ["commands", "--json"], environment: environment)
        let hello = try Spawner(path: helloPath, arguments: [], environment: environment)

        // Check both once (this also warms the page cache and the state directory).
        let (pincerStatus, output) = try pincer.runCapturingOutput()
        guard pincerStatus == 0 else {
            throw BenchError("`\(pincer.commandLine)` exited with \(describe(pincerStatus))")
        }
        let commandCount = try checkCommandsJSON(output, commandLine: pincer.commandLine)
        let (loaded, refused) = try listPlugins(path: pincerPath, environment: environment)
        let expectedCommands = try expectedCommandCount(builtinDirectory: directory)
        let (helloStatus, helloOutput) = try hello.runCapturingOutput()
        guard helloStatus == 0 else {
            throw BenchError("`\(hello.commandLine)` exited with \(describe(helloStatus))")
        }
        guard (try? JSONSerialization.jsonObject(with: Data(helloOutput))) is [String: Any] else {
            throw BenchError("`\(hello.commandLine)` did not print a JSON object")
        }

        // Alternate the programs, and which of the two goes first, so that
        // drift during the run affects both alike.
        var pincerSamples: [UInt64] = [], helloSamples: [UInt64] = []
        pincerSamples.reserveCapacity(runs)
        helloSamples.reserveCapacity(runs)
        for i in 0..<runs {
            for spawner in (i % 2 == 0 ? [pincer, hello] : [hello, pincer]) {
                let (status, elapsed) = try spawner.runTimed()
                guard status == 0 else {
                    throw BenchError("`\(spawner.commandLine)` exited with \(describe(status)) in timed run \(i + 1)")
                }
                if spawner === pincer { pincerSamples.append(elapsed) } else { helloSamples.append(elapsed) }
            }
        }
        var figures = StartupFigures(runs: runs,
                                     pincer: ProgramFigures(command: "pincer commands --json", samples: pincerSamples),
                                     hello: ProgramFigures(command: "bench-hello", samples: helloSamples),
                                     builtinPlugins: builtins, loadedPlugins: loaded, refusedPlugins: refused,
                                     commandCount: commandCount, expectedCommandCount: expectedCommands)
        do { figures.scale = try StartupScaleBench.run(runs: runs) } catch { figures.scaleError = error.message }
        return figures
    }

    /// `pincer plugins --json` with the same environment: the ids it loaded
    /// and "path: reason" of each it refused (it exits 4 when any was refused).
    static func listPlugins(path: String, environment: [String]) throws(BenchError) -> (loaded: [String], refused: [String]) {
        let spawner = try Spawner(path: path, arguments: ["plugins", "--json"], environment: environment)
        let (status, output) = try spawner.runCapturingOutput()
        let parsed = try? JSON.parse(String(decoding: output, as: UTF8.self))
        guard let parsed, let plugins = parsed["plugins"]?.arrayValue, let failed = parsed["failed"]?.arrayValue else {
            throw BenchError("`\(spawner.commandLine)` exited with \(describe(status)) and did not print {\"plugins\": [...], \"failed\": [...]}: \(String(decoding: output.prefix(200), as: UTF8.self))")
        }
        let loaded = plugins.compactMap { $0["id"]?.stringValue }
        let refused = failed.map { "\($0["path"]?.stringValue ?? "?"): \($0["reason"]?.stringValue ?? "?")" }
        return (loaded, refused)
    }

    /// The commands the built-in plugins of `builtinDirectory` register when
    /// this process loads them, as an app embedding the host would.
    static func expectedCommandCount(builtinDirectory: String) throws(BenchError) -> Int {
        let state = try TemporaryDirectory(prefix: "pincer-bench-startup-expected")
        defer { state.remove() }
        var options = Host.Options(stateDirectory: state.path)
        options.builtinDirectory = builtinDirectory
        options.pluginPaths = []
        options.logHandler = { _ in }
        let host = Host(options: options)
        host.loadAll()
        defer { host.shutdown() }
        return host.commands.count
    }

    /// The built-in plugin libraries `pincer` will load from `directory`.
    static func builtinPlugins(in directory: String) -> [String] {
        Host.listDirectory(directory).filter { $0.hasPrefix(Host.builtinPrefix) && $0.hasSuffix(".so") }
    }

    /// This process's environment with PINCER_STATE_DIR pointing at `stateDirectory`
    /// and without PINCER_PLUGIN_PATH, so only the built-in plugins load.
    static func childEnvironment(stateDirectory: String) -> [String] {
        var result: [String] = []
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("PINCER_STATE_DIR=") && !text.hasPrefix("PINCER_PLUGIN_PATH=") { result.append(text) }
            p += 1
        }
        result.append("PINCER_STATE_DIR=\(stateDirectory)")
        return result
    }

    /// Checks the output is a JSON object with a "commands" array; returns its length.
    static func checkCommandsJSON(_ output: [UInt8], commandLine: String) throws(BenchError) -> Int {
        let parsed = try? JSONSerialization.jsonObject(with: Data(output))
        guard let object = parsed as? [String: Any] else {
            let head = String(decoding: output.prefix(200), as: UTF8.self)
            throw BenchError("`\(commandLine)` did not print a JSON object; it printed: \(head)")
        }
        guard let commands = object["commands"] else {
            throw BenchError("`\(commandLine)` printed a JSON object without a \"commands\" key (keys: \(object.keys.sorted().joined(separator: ", ")))")
        }
        return (commands as? [Any])?.count ?? 0
    }

    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        return signal == 0 ? "status \((status >> 8) & 0xff)" : "signal \(signal)"
    }
}

/// One program with its argv and envp laid out as C arrays once, so that the
/// timed section holds nothing but posix_spawn and waitpid.
final class Spawner {
    let path: String
    let commandLine: String
    private let argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let argc: Int, envc: Int
    /// stdout and stderr to /dev/null.
    private let quiet = UnsafeMutablePointer<posix_spawn_file_actions_t>.allocate(capacity: 1)

    init(path: String, arguments: [String], environment: [String]) throws(BenchError) {
        self.path = path
        let name = path.split(separator: "/").last.map(String.init) ?? path
        commandLine = ([name] + arguments).joined(separator: " ")
        argc = 1 + arguments.count
        envc = environment.count
        argv = Spawner.cArray([path] + arguments)
        envp = Spawner.cArray(environment)
        quiet.initialize(to: posix_spawn_file_actions_t())
        posix_spawn_file_actions_init(quiet)
        posix_spawn_file_actions_addopen(quiet, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(quiet, 2, "/dev/null", O_WRONLY, 0)
    }

    deinit {
        posix_spawn_file_actions_destroy(quiet)
        quiet.deallocate()
        for i in 0..<argc { free(argv[i]) }
        for i in 0..<envc { free(envp[i]) }
        argv.deallocate()
        envp.deallocate()
    }

    private static func cArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        let array = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        for (i, s) in strings.enumerated() { array[i] = strdup(s) }
        array[strings.count] = nil
        return array
    }

    /// One run with output discarded: the wait status and the wall time in
    /// nanoseconds from posix_spawn to the return of waitpid.
    func runTimed() throws(BenchError) -> (status: Int32, nanoseconds: UInt64) {
        var pid = pid_t()
        let start = monotonicNanoseconds()
        let rc = posix_spawn(&pid, path, quiet, nil, argv, envp)
        guard rc == 0 else { throw BenchError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        let status = try wait(pid)
        let end = monotonicNanoseconds()
        return (status, end - start)
    }

    /// One run with stdout captured through a pipe (stderr inherited).
    func runCapturingOutput() throws(BenchError) -> (status: Int32, output: [UInt8]) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        var pid = pid_t()
        let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw BenchError("posix_spawn \(path): \(String(cString: strerror(rc)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { output += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        close(fds[0])
        return (try wait(pid), output)
    }

    private func wait(_ pid: pid_t) throws(BenchError) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchError("waitpid \(path): \(String(cString: strerror(errno)))") }
        }
        return status
    }
}
