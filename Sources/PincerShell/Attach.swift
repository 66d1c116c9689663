// `pincer ps`, `attach` and `tail`: the shell against an app that embeds the
// host and opened a control socket (Sources/PincerControl/Protocol.swift).
import PincerControl
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Shell {
    static let psDetails = """
        Apps that embed pincer open a socket in $XDG_RUNTIME_DIR/pincer (else
        /tmp/pincer-<uid>). ps asks each for its name; one that does not answer
        within a second is shown with name "?" and the error. Sockets left by
        apps that are gone (killed before they could remove them) are removed.
        --json: [{"pid","name","socket","protocol"}], with "error" for an app that did not answer.
        Exit codes: 0 (also when no app runs), 1 the runtime directory is not private.
        """

    static let attachDetails = """
        With a command, runs it inside the app exactly as the local shell would
        (same text, JSON and exit codes), its output arriving as it is printed:
          pincer attach 1234 run flags.set new-checkout true --json
        Without one, a shell against the app: one command per line, from a
        terminal or a pipe; 'exit', 'quit' or end of input leaves. Its history
        lasts for the session only.
        The app: a pid (its socket in the runtime directory, see pincer ps), a
        socket path (any word with a '/'), or, left out, the only app running.
        --json, --csv and --quiet before the command apply to it; options that
        load plugins (--plugin-path, --no-builtin, --state-dir, --strict) are
        refused, since the app has its plugins. So are shell, ps, attach and tail
        inside the app.
        Exit codes: the command's own; 1 the app refused (changes disabled) or
        the connection failed or ended; 2 usage, or several apps and none named;
        3 no such app, or nothing listens on its socket.
        """

    static let tailDetails = """
        Topics: an event topic ("net.entry", "flags.changed"), "prefix.*" for
        every topic under a prefix, or "*" for all.
        Each event is one line: "<seq> <topic> <payload JSON>"; --json prints
        {"seq","topic","payload"} per line. seq numbers every event the app
        emits, so gaps are events of other topics. When the app had to drop
        events because this reader was too slow, "dropped <count>" ({"dropped":N}).
        --snapshot first prints the menu entries of the plugins owning the topic:
        "snapshot <seq> <JSON>" ({"seq","snapshot"}), seq being the last event before it.
        Runs until the app exits (exit 0) or Ctrl-C.
        Exit codes: 1 the connection failed, 2 usage, 3 no such app.
        """

    // MARK: pincer ps

    func listApps() throws(ShellError) -> ExitCode {
        guard let directory = try runtimeDirectory() else {
            if options.json { emit(.array([])) } else { console.out("No attachable apps (no \(RuntimeDirectory.path(environment: environment))).\n") }
            return .ok
        }
        let apps = RuntimeDirectory.sockets(in: directory, removingStale: true).map { AppProbe.probe(pid: $0.pid, socket: $0.path) }
        if options.json {
            emit(.array(apps.map(\.json)))
            return .ok
        }
        if apps.isEmpty {
            console.out("No attachable apps (looked in \(directory)).\n")
            return .ok
        }
        console.out(AppProbe.table(apps))
        return .ok
    }

    /// The runtime directory, or nil when it does not exist; refused when
    /// someone else could have planted sockets in it.
    func runtimeDirectory() throws(ShellError) -> String? {
        let path = RuntimeDirectory.path(environment: environment)
        var st = stat()
        if lstat(path, &st) != 0 && errno == ENOENT { return nil }
        do { return try RuntimeDirectory.ensure(path) } catch { throw .failed(error.description) }
    }

    // MARK: pincer attach

    func attach(_ words: [String]) throws(ShellError) -> ExitCode {
        if let flag = options.pluginLoadingFlag {
            throw .usage("\(flag) applies to the local pincer; an attached app uses its own plugins", usage: Shell.shellCommand(named: "attach")!.usage)
        }
        // Output options given before `attach` or before the command go to the app's command.
        var forwarded: [String] = []
        if options.json { forwarded.append("--json") }
        if options.csv { forwarded.append("--csv") }
        if options.quiet { forwarded.append("--quiet") }
        var i = 0
        while i < words.count, words[i].hasPrefix("-") {
            switch words[i] {
            case "--help", "-h": return try help("attach")
            case "--json", "--csv", "--quiet", "-q": forwarded.append(words[i])
            default: throw .usage("unknown option \(words[i]) for attach (options of the app's command go after it)",
                                  usage: Shell.shellCommand(named: "attach")!.usage)
            }
            i += 1
        }
        var target: String?
        if i < words.count, Shell.isAppTarget(words[i]) {
            target = words[i]
            i += 1
        }
        let command = Array(words[i...])
        let session = try AttachSession(path: try appSocket(target), console: console)
        defer { session.client.close() }
        if command.isEmpty { return remoteShell(session, forwarded: forwarded) }
        return try session.run(forwarded + command)
    }

    /// A pid, or a socket path (anything with a slash); never a command name.
    static func isAppTarget(_ word: String) -> Bool {
        word.contains("/") || (!word.isEmpty && word.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 })
    }

    /// The socket of the app named by `target` (a pid or a path), or of the only app running.
    func appSocket(_ target: String?) throws(ShellError) -> String {
        if let target, target.contains("/") { return target }
        let directory = try runtimeDirectory()
        if let target {
            let path = RuntimeDirectory.socketPath(in: directory ?? RuntimeDirectory.path(environment: environment), pid: pid_t(target) ?? 0)
            var st = stat()
            guard lstat(path, &st) == 0 else { throw .notFound("no attachable app with pid \(target) (no \(path)); see pincer ps") }
            return path
        }
        let apps = directory.map(RuntimeDirectory.sockets(in:)) ?? []
        switch apps.count {
        case 0:
            throw .notFound("no attachable app is running (looked in \(directory ?? RuntimeDirectory.path(environment: environment)))")
        case 1:
            return apps[0].path
        default:
            let list = AppProbe.table(apps.map { AppProbe.probe(pid: $0.pid, socket: $0.path) })
            throw .usage("\(apps.count) apps are attachable; name one by pid or socket:\n\(list.dropLast())", usage: Shell.shellCommand(named: "attach")!.usage)
        }
    }

    /// `pincer attach` without a command: every line runs in the app.
    private func remoteShell(_ session: AttachSession, forwarded: [String]) -> ExitCode {
        session.answersQuestions = true
        let name = session.hello["app"]?["name"]?.stringValue ?? "app"
        let pid = session.hello["app"]?["pid"]?.int64Value ?? 0
        let loop = LineLoop(
            prompt: "\(name)> ",
            banner: "attached to \(name) (pid \(pid)). Tab completes; 'help' lists commands; 'exit' leaves.\n",
            // In memory only: the local signatures cannot tell which words are secrets.
            historyPath: nil,
            completions: { session.completions(for: $0) },
            historyLine: { $0 })
        return loop.run(console: console) { line in
            let words: [String]
            do { words = try Words.split(line) } catch { return .next(report(.usage("unterminated quote in: \(line)"))) }
            do throws(ShellError) { return .next(try session.run(forwarded + words)) } catch {
                let code = report(error)
                return session.isConnected ? .next(code) : .stop(code)
            }
        }
    }

    // MARK: pincer tail

    func tail(_ words: [String]) throws(ShellError) -> ExitCode {
        let usage = Shell.shellCommand(named: "tail")!.usage
        var topic: String?
        var target: String?
        var snapshot = false
        for w in words {
            switch w {
            case "--help", "-h": return try help("tail")
            case "--json": options.json = true
            case "--snapshot": snapshot = true
            case _ where w.hasPrefix("-") && w.count > 1: throw .usage("unknown option \(w) for tail", usage: usage)
            case _ where topic == nil: topic = w
            case _ where target == nil: target = w
            default: throw .usage("tail takes one topic and at most one pid or socket; '\(w)' is extra", usage: usage)
            }
        }
        guard let topic else { throw .usage("tail needs a topic (\"flags.*\", \"net.entry\" or \"*\")", usage: usage) }
        let json = options.json
        let printer = LiveOutput(console: console)
        let client = try AttachSession.connect(try appSocket(target)) { n in
            switch n.kind {
            case .event?:
                let p = n.params
                let seq = p["seq"] ?? .null, topic = p["topic"] ?? .null, payload = p["payload"] ?? .null
                printer.console.out((json ? JSON.object([("seq", seq), ("topic", topic), ("payload", payload)]).serialized()
                                          : "\(seq.serialized()) \(topic.stringValue ?? topic.serialized()) \(payload.serialized())") + "\n")
            case .dropped?:
                let count = n.params["count"] ?? .null
                printer.console.out(json ? JSON.object([("dropped", count)]).serialized() + "\n" : "dropped \(count.serialized())\n")
            case .output?, .ask?, nil:
                break
            }
        }
        defer { client.close() }
        do {
            try AttachSession.greet(client)
            let subscribed = try client.call(.subscribe, .object([("topics", .array([.string(topic)]))]))
            if snapshot {
                let seq = subscribed["seq"] ?? .null, entries = subscribed["snapshot"] ?? .object([])
                console.out((json ? JSON.object([("seq", seq), ("snapshot", entries)]).serialized()
                                  : "snapshot \(seq.serialized()) \(entries.serialized())") + "\n")
            }
            try client.listen()
        } catch {
            throw AttachSession.shellError(error)
        }
        return .ok
    }
}

/// A connection to an app for `attach`: its `hello`, and commands run
/// through the `shell` method with their output printed as it arrives.
final class AttachSession {
    let client: ControlClient
    let hello: JSON
    /// Output of requests whose text is wanted rather than printed (completion).
    private let captured: Captures

    private final class Captures: Sendable {
        let texts = Mutex<[Int64: String]>([:])
    }

    /// Whether our standard output is a terminal: the app's shell then
    /// prints JSON as the local one would on it.
    private let terminal: Bool

    /// The client, for answers sent from the notification handler.
    private final class Answerer: Sendable {
        let client = Mutex<ControlClient?>(nil)

        /// An "ask": the question shown, a line read from our input, the answer sent.
        func answer(_ n: ControlNotification, _ console: Console) {
            guard let id = n.params["id"], let question = n.params["question"]?.stringValue else { return }
            console.out(question)
            let line = readLine(strippingNewline: true)
            // A terminal echoed the person's Enter; from a pipe, end the prompt's line ourselves.
            if isatty(0) != 1 { console.out("\n") }
            // Sending from the reader thread is safe: only waiting for a response is not.
            _ = try? client.withLock { $0 }?.send(.answer, .object([("id", id), ("text", line.map(JSON.string) ?? .null)]))
        }
    }

    /// Whether the app's commands may ask us questions: the person is at a
    /// terminal, or feeds the REPL its lines.
    var answersQuestions = isatty(0) == 1

    init(path: String, console: Console) throws(ShellError) {
        terminal = console.isTerminal
        let printer = LiveOutput(console: console)
        let captured = Captures()
        let answerer = Answerer()
        client = try AttachSession.connect(path) { n in
            if n.kind == .ask { return answerer.answer(n, printer.console) }
            guard n.kind == .output, let text = n.params["text"]?.stringValue else { return }
            let id = n.params["id"]?.int64Value ?? 0
            let wasCaptured = captured.texts.withLock { texts -> Bool in
                guard let sofar = texts[id] else { return false }
                texts[id] = sofar + text
                return true
            }
            if wasCaptured { return }
            if n.params["stream"]?.stringValue == "stderr" { printer.console.err(text) } else { printer.console.out(text) }
        }
        self.captured = captured
        answerer.client.withLock { [client] in $0 = client }
        do { hello = try AttachSession.greet(client) } catch { throw AttachSession.shellError(error) }
    }

    private(set) var isConnected = true

    /// Runs one shell command in the app; its exit code.
    func run(_ argv: [String]) throws(ShellError) -> ExitCode {
        let result: JSON
        do {
            result = try client.call(.shell, .object([("argv", .array(argv.map(JSON.string))), ("terminal", .bool(terminal)),
                                                      ("answers", .bool(answersQuestions))]))
        } catch {
            if error.kind != .remote { isConnected = false }
            throw AttachSession.shellError(error)
        }
        return result["exit_code"]?.int64Value.flatMap { ExitCode(rawValue: Int32(truncatingIfNeeded: $0)) } ?? .commandFailed
    }

    /// The app's completions for a partial line (`complete` run in the app).
    func completions(for line: String) -> [String] {
        guard isConnected, let id = try? client.send(.shell, .object([("argv", .array([.string("complete"), .string(line)]))])) else { return [] }
        captured.texts.withLock { $0[id] = "" }
        _ = try? client.response(to: id)
        let text = captured.texts.withLock { $0.removeValue(forKey: id) } ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    static func connect(_ path: String, notifications: @escaping ControlClient.NotificationHandler) throws(ShellError) -> ControlClient {
        do { return try ControlClient(path: path, notifications: notifications) } catch { throw shellError(error) }
    }

    /// `hello`, checking that the app speaks this protocol.
    @discardableResult
    static func greet(_ client: ControlClient) throws(ControlError) -> JSON {
        let hello = try client.hello()
        let version = hello["protocol"]?.int64Value ?? 0
        guard version == Int64(ControlProtocol.version) else {
            throw ControlError(.protocolError, "the app speaks control protocol \(version); this pincer speaks \(ControlProtocol.version)")
        }
        return hello
    }

    /// Not found (3) when there is no app at the socket; else a failure (1).
    static func shellError(_ error: ControlError) -> ShellError {
        switch error.kind {
        case .noSocket, .refused: .notFound(error.message)
        default: .failed(error.message)
        }
    }
}

/// One line of `pincer ps`: an app's socket and what it said to `hello`.
struct AppProbe {
    let pid: pid_t
    let socket: String
    let name: String
    let protocolVersion: Int64?
    let error: String?

    /// Asks the app at `socket` who it is, waiting at most a second.
    static func probe(pid: pid_t, socket: String) -> AppProbe {
        do {
            let client = try ControlClient(path: socket, timeoutMilliseconds: 1000)
            defer { client.close() }
            let hello = try client.hello()
            return AppProbe(pid: pid, socket: socket, name: hello["app"]?["name"]?.stringValue ?? "?",
                            protocolVersion: hello["protocol"]?.int64Value, error: nil)
        } catch {
            return AppProbe(pid: pid, socket: socket, name: "?", protocolVersion: nil, error: error.message)
        }
    }

    var json: JSON {
        var fields: [(String, JSON)] = [("pid", .int(Int64(pid))), ("name", .string(name)), ("socket", .string(socket)),
                                        ("protocol", protocolVersion.map(JSON.int) ?? .null)]
        if let error { fields.append(("error", .string(error))) }
        return .object(fields)
    }

    static func table(_ apps: [AppProbe]) -> String {
        let pidWidth = max(3, apps.map { String($0.pid).count }.max() ?? 0)
        let nameWidth = max(4, apps.map(\.name.count).max() ?? 0)
        var text = "\("PID".padded(to: pidWidth))  \("NAME".padded(to: nameWidth))  SOCKET\n"
        for a in apps {
            text += "\(String(a.pid).padded(to: pidWidth))  \(a.name.padded(to: nameWidth))  \(a.socket)"
            text += a.error.map { "  (\($0))" } ?? ""
            text += "\n"
        }
        return text
    }
}
