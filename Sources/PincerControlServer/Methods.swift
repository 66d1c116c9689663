import PincerControl
import PincerHost
import PincerShell
#if canImport(Glibc)
import Glibc
#endif

/// The methods of Protocol.swift over the app's host. Shapes come from
/// HostJSON, so they are those of `pincer … --json`.
extension ClientConnection {
    var host: Host { core.host }

    func perform(_ request: Request, _ token: RequestToken) throws(MethodError) -> JSON {
        let params = request.params
        switch request.method {
        case .hello: return hello()
        case .describe: return describe()
        case .invoke: return try invoke(params, token)
        case .get: return try get(params)
        case .set: return try set(params)
        case .cancel: return try cancelRequest(params)
        case .subscribe: return try subscribe(params)
        case .unsubscribe: return .object([("unsubscribed", .bool(core.router.unsubscribe(try params.int("subscription"), of: self)))])
        case .shell: return try shell(params, token)
        case .answer: return try answerQuestion(params)
        }
    }

    private func hello() -> JSON {
        var fields: [(String, JSON)] = [
            ("protocol", .int(Int64(ControlProtocol.version))),
            ("app", .object([("name", .string(core.options.appName)), ("pid", .int(Int64(getpid())))])),
            ("pincer", .string(Shell.version)), ("abi", .string(Host.abiVersion)),
            ("methods", .array(ControlProtocol.Method.allCases.map { .string($0.rawValue) })),
            ("max_message_bytes", .int(Int64(core.options.maxMessageBytes))),
            ("allow_changes", .bool(core.options.allowChanges)),
            ("socket", .string(core.socketPath)),
        ]
        if let warning = core.directoryWarning { fields.append(("socket_warning", .string(warning))) }
        return .object(fields)
    }

    private func describe() -> JSON {
        .object([
            ("plugins", .array(host.pluginListJSON())), ("failed", .array(host.failureListJSON())),
            ("sections", .array(host.sectionsJSON(host.sections()))),
            ("commands", .array(host.commands.map(Host.commandJSON))),
        ])
    }

    private func refuseChanges(_ what: String) throws(MethodError) {
        guard core.options.allowChanges else {
            throw MethodError(.disabled, "\(what) changes state, and the app does not allow changes from pincer")
        }
    }

    private func commandFailed(_ failure: CommandFailure) -> MethodError {
        MethodError(.commandFailed, failure.message, data: .object([("status", .string(Status.name(failure.status)))]))
    }

    private func invoke(_ params: Params, _ token: RequestToken) throws(MethodError) -> JSON {
        let name = try params.string("command")
        guard let command = host.command(named: name) else { throw MethodError(.notFound, "no command '\(name)'") }
        if command.changesState { try refuseChanges(name) }
        let values = try InvokeArguments.values(for: command, from: params["arguments"])
        let json: Bool
        switch params["output"] {
        case nil, .null?, .string("text")?: json = false
        case .string("json")?: json = true
        case let other?: throw .params("params.output must be \"text\" or \"json\", not \(other.serialized())")
        }
        do {
            let value = try command.invoke(values, output: { [self] text in sendOutput(token, stream: "stdout", text: text) },
                                       json: json, cancellation: token.cancellation)
            return .object([("type", .string(command.resultTypeName)), ("result", try command.jsonResult(value))])
        } catch {
            throw commandFailed(error)
        }
    }

    private func entry(_ params: Params) throws(MethodError) -> Entry {
        let id = try params.string("entry")
        guard let e = host.entry(id: id) else { throw MethodError(.notFound, "no entry '\(id)'") }
        return e
    }

    private func get(_ params: Params) throws(MethodError) -> JSON {
        let e = try entry(params)
        let json = host.entryJSON(e, pinned: Set(host.pinnedEntryIDs()))
        if let why = json["error"]?.stringValue { throw MethodError(.commandFailed, "\(e.fullID): \(why)", data: json) }
        return json
    }

    private func set(_ params: Params) throws(MethodError) -> JSON {
        let e = try entry(params)
        let text: String
        switch params["value"] {
        case .string(let s)?: text = s
        case .bool(let b)?: text = b ? "true" : "false"
        case let number? where number.doubleValue != nil: text = number.serialized()
        case let other?: throw .params("params.value must be a string (or a boolean or number), not \(other.typeName)")
        case nil: throw .params("params.value is missing (a string)")
        }
        try refuseChanges("set \(e.fullID)")
        do { try host.setValue(text, of: e) } catch {
            switch error.kind {
            case .notFound: throw MethodError(.notFound, error.message)
            case .invalidArgument: throw MethodError(.invalidParams, error.message)
            case .failed: throw MethodError(.commandFailed, error.message)
            }
        }
        return host.entryJSON(e, pinned: Set(host.pinnedEntryIDs()))
    }

    private func answerQuestion(_ params: Params) throws(MethodError) -> JSON {
        guard let value = params["id"], let id = RequestID(value) else {
            throw .params("params.id must be the id (a string or an integer) of the request that asked")
        }
        let text = params["text"]
        guard text == nil || text == .null || text?.stringValue != nil else {
            throw .params("params.text must be a string, or null for no answer, not \(text!.typeName)")
        }
        return .object([("answered", .bool(answer(id, text?.stringValue)))])
    }

    private func cancelRequest(_ params: Params) throws(MethodError) -> JSON {
        guard let value = params["id"], let id = RequestID(value) else {
            throw .params("params.id must be the id (a string or an integer) of a request in progress")
        }
        return .object([("cancelled", .bool(cancel(id)))])
    }

    private func subscribe(_ params: Params) throws(MethodError) -> JSON {
        let topics = try params.stringArray("topics")
        guard !topics.isEmpty else { throw .params("params.topics is empty: name at least one topic (\"*\" for every one)") }
        if let bad = topics.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw .params("params.topics: \(JSON.quote(bad)) is not a topic (\"net.entry\", \"flags.*\" or \"*\")")
        }
        let patterns = topics.map(TopicPattern.init)
        let (id, seq) = core.router.subscribe(self, patterns)
        // Read after the subscription started: a change made meanwhile is
        // in the snapshot, or arrives as an event, or both.
        let shortNames = host.plugins.map(\.shortName)
        let wanted = patterns.contains { $0.pluginShortName == nil } ? shortNames
            : shortNames.filter { name in patterns.contains { $0.pluginShortName == name } }
        let pinned = Set(host.pinnedEntryIDs())
        let entries = host.entries
        let snapshot = wanted.map { name in
            (name, JSON.array(entries.filter { $0.fullID.hasPrefix(name + ".") }.map { host.entryJSON($0, pinned: pinned) }))
        }
        return .object([("subscription", .int(id)), ("seq", .int(seq)), ("snapshot", .object(snapshot))])
    }

    private func shell(_ params: Params, _ token: RequestToken) throws(MethodError) -> JSON {
        let argv = try params.stringArray("argv")
        var terminal = false
        if let value = params["terminal"] {
            guard let b = value.boolValue else { throw .params("params.terminal must be a boolean, not \(value.typeName)") }
            terminal = b
        }
        var answers = false
        if let value = params["answers"] {
            guard let b = value.boolValue else { throw .params("params.answers must be a boolean, not \(value.typeName)") }
            answers = b
        }
        let shell = Shell(host: host, console: RemoteConsole(client: self, token: token, isTerminal: terminal, answers: answers))
        shell.allowsChanges = core.options.allowChanges
        shell.cancellation = token.cancellation
        defer { shell.close() }
        let code = shell.run(argv)
        if let refusal = shell.refusal { throw MethodError(.disabled, refusal) }
        return .object([("exit_code", .int(Int64(code)))])
    }
}

/// The console of a shell run for a client: what it prints goes to the
/// client as "output" notifications as it happens.
final class RemoteConsole: Console {
    private let client: ClientConnection
    private let token: RequestToken
    /// Whether the client's standard output is a terminal (pretty JSON).
    let isTerminal: Bool
    /// Whether the client answers "ask" notifications.
    let answers: Bool

    init(client: ClientConnection, token: RequestToken, isTerminal: Bool, answers: Bool) {
        self.client = client
        self.token = token
        self.isTerminal = isTerminal
        self.answers = answers
    }

    func out(_ text: String) { client.sendOutput(token, stream: "stdout", text: text) }
    func err(_ text: String) { client.sendOutput(token, stream: "stderr", text: text) }
    var canAsk: Bool { answers }
    func ask(_ question: String) -> String? { answers ? client.ask(token, question) : nil }
}
