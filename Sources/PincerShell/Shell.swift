import CPincerSDK
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// The `pincer` command line: parses global options, loads plugins when a
/// command needs them, and dispatches through `Shell.table`.
public final class Shell {
    public static let version = "0.1.0"

    let console: Console
    let environment: [String: String]
    var options = GlobalOptions()
    private(set) var host: Host?
    /// Set inside the REPL, where global options were fixed at start.
    var interactive = false
    /// The shell runs inside an app, on the app's host (`pincer attach`):
    /// the plugins are the app's, so options that load plugins and commands
    /// that only make sense in a terminal of their own are refused.
    let isEmbedded: Bool
    /// False when the app refuses changes from attached shells: commands
    /// marked PINCER_COMMAND_CHANGES_STATE, `set`, `pin`, `unpin` and
    /// `activate` then fail before anything is called.
    public var allowsChanges = true
    /// Set when the last `run` was refused because changes are not allowed.
    /// An attached shell prints nothing then: the app's control server
    /// reports the refusal itself (ErrorCode.disabled).
    public private(set) var refusal: String?
    /// Set by the app for an attached shell: the client's `cancel` of the
    /// request, handed to the plugin commands it runs (pincer_call_t.is_cancelled).
    public var cancellation: Cancellation?
    /// A plugin command was cancelled and did not return: it may still be
    /// running, holding its plugin, so the plugins are not shut down and
    /// the process should leave with _exit (see Sources/pincer/main.swift).
    public internal(set) var abandonedCall = false

    public init(console: Console = StandardConsole(), environment: [String: String]? = nil) {
        self.console = console
        self.environment = environment ?? GlobalOptions.environment()
        isEmbedded = false
    }

    /// A shell over an app's host, already loaded. `close()` leaves it
    /// running: the app owns it.
    public init(host: Host, console: Console, environment: [String: String]? = nil) {
        self.console = console
        self.environment = environment ?? GlobalOptions.environment()
        self.host = host
        isEmbedded = true
    }

    deinit { close() }

    /// Shuts the plugins down (their shutdown callbacks run once), unless
    /// the host is an app's.
    public func close() {
        // Shutting down would wait for the abandoned call's plugin forever.
        if !isEmbedded && !abandonedCall { host?.shutdown() }
    }

    /// Runs one `pincer` invocation (arguments without the program name).
    public func run(_ arguments: [String]) -> Int32 {
        refusal = nil
        // `--json` anywhere before `--` makes errors JSON too, even those
        // found before the word's owner (pincer or the command) is known.
        if !interactive, arguments.prefix(while: { $0 != "--" }).contains("--json") { options.json = true }
        do throws(ShellError) {
            let rest = try options.extract(from: arguments)
            if isEmbedded, let flag = options.pluginLoadingFlag {
                throw ShellError.usage("\(flag) applies to the local pincer only: an attached shell uses the app's plugins")
            }
            return try dispatch(rest).rawValue
        } catch {
            if isEmbedded && refusal != nil { return error.code.rawValue }
            return report(error).rawValue
        }
    }

    /// Refuses what changes the app's state when the app does not allow it.
    func requireChangesAllowed(_ what: String) throws(ShellError) {
        guard allowsChanges else {
            let message = "\(what) changes state, and the app does not allow changes from pincer"
            refusal = message
            throw ShellError.failed(message)
        }
    }

    /// A note on standard error that does not stop the command (a
    /// deprecated spelling, say); JSON with --json, nothing with --quiet.
    func warn(_ message: String) {
        guard !options.quiet else { return }
        let message = TerminalText.shortened(message)
        if options.json {
            console.err(JSON.object([("warning", .string(message))]).serialized() + "\n")
        } else {
            console.err("pincer: warning: \(message)\n")
        }
    }

    func report(_ error: ShellError) -> ExitCode {
        // Messages echo what they refuse (an argument, a plugin's text): cut to size.
        let message = TerminalText.shortened(error.message)
        if options.json {
            var fields: [(String, JSON)] = [("error", .string(message)), ("exit_code", .int(Int64(error.code.rawValue)))]
            if let usage = error.usage { fields.append(("usage", .string(usage))) }
            console.err(JSON.object(fields).serialized() + "\n")
        } else {
            console.err("pincer: \(message)\n")
            if let usage = error.usage { console.err("usage: \(usage)\n") }
        }
        return error.code
    }

    func dispatch(_ args: [String]) throws(ShellError) -> ExitCode {
        guard let first = args.first else {
            if options.help { return try help(nil) }
            if interactive { return .ok }
            console.err(Shell.overview())
            return .usage
        }
        var name = first
        var rest = Array(args.dropFirst())
        // A bare plugin command ("devopts.add 1 2") runs it; so does a
        // dotted name no plugin has, so that it fails as `run` would (exit 3).
        if Shell.shellCommand(named: name) == nil, name.contains(".") {
            rest = [name] + rest
            name = "run"
        }
        guard let command = Shell.shellCommand(named: name) else {
            let known = Shell.table.map(\.name)
            throw .usage("unknown command '\(name)'\(Shell.suggestion(for: name, among: known + (loadedHost()?.commandNames ?? [])))",
                         usage: "pincer <command> [arguments]; see pincer --help")
        }
        if isEmbedded && command.localOnly { throw .usage("\(name) runs in the local pincer only") }
        if options.help && name != "run" { return try help(name) }
        if options.help, name == "run" { return try help(rest.first ?? "run") }
        guard rest.count >= command.minArguments, command.maxArguments.map({ rest.count <= $0 }) ?? true else {
            throw .usage("\(name) takes \(Shell.arity(command))", usage: command.usage)
        }
        if command.needsHost {
            let h = try requireHost()
            if options.strict, !h.failures.isEmpty, !interactive {
                for f in h.failures { console.err("pincer: refused plugin \(TerminalText.shortened("\(f)"))\n") }
                return .pluginLoadFailure
            }
        }
        return try command.run(self, rest)
    }

    static func arity(_ c: ShellCommand) -> String {
        switch (c.minArguments, c.maxArguments) {
        case (0, 0?): return "no arguments"
        case (let a, let b?) where a == b: return "exactly \(a) argument\(a == 1 ? "" : "s")"
        case (let a, let b?): return "\(a) to \(b) arguments"
        case (let a, nil): return "at least \(a) argument\(a == 1 ? "" : "s")"
        }
    }

    // MARK: the host

    /// The host with plugins loaded, created on first use.
    func loadedHost() -> Host? {
        if let host { return host }
        return try? requireHost()
    }

    func requireHost() throws(ShellError) -> Host {
        if let host { return host }
        let h = Host(options: options.hostOptions(environment: environment))
        // The shell answers from the plugin registry and loads a plugin on
        // first use; PINCER_PLUGIN_REGISTRY=off loads every plugin at start.
        if environment["PINCER_PLUGIN_REGISTRY"] == "off" { h.loadAll() } else { h.loadAllUsingRegistry() }
        host = h
        return h
    }

    /// A plugin's failure: exit 1, or 5 when the settings store could not be
    /// opened in this process, since a plugin that cannot read its state
    /// fails for the store's reason (reads exit as writes do).
    func pluginFailure(_ message: String) -> ShellError {
        guard let store = host?.settingsFailure else { return .failed(message) }
        let why = "\(store)"
        return ShellError(code: .storeError, message: message.contains(why) ? message : "\(message) (the settings store could not be opened: \(why))")
    }

    var pluginFailureCode: ExitCode { host?.settingsFailure == nil ? .commandFailed : .storeError }

    func settingsError(_ error: HostError) -> ShellError {
        switch error.kind {
        case .notFound: .notFound(error.message)
        case .invalidArgument: .usage(error.message)
        case .failed: ShellError(code: .storeError, message: error.message)
        }
    }

    func entry(_ id: String) throws(ShellError) -> Entry {
        let h = try requireHost()
        guard let e = h.entry(id: id) else {
            throw .notFound("no entry '\(id)'\(Shell.suggestion(for: id, among: h.entries.map(\.fullID)))")
        }
        return e
    }

    /// ", did you mean X?" for the closest known name, if any is close.
    static func suggestion(for name: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(name, $0)) }.filter { $0.1 <= max(2, name.count / 3) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        return "; did you mean '\(best.0)'?"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        if a.isEmpty { return b.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }

    func emit(_ json: JSON) { console.out(json.serialized(pretty: console.isTerminal) + "\n") }
}
