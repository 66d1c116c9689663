#if canImport(Glibc)
import Glibc
#endif
import CPincerSDK
import PincerHost
import Synchronization

/// The shell commands' bodies. Each prints text, or JSON with --json.
extension Shell {
    func plugins() -> ExitCode {
        let h = host!
        let failures = h.failures
        if options.json {
            emit(h.pluginsJSON())
        } else {
            let plugins = h.plugins
            if plugins.isEmpty { console.out("No plugins loaded.\n") }
            for p in plugins {
                console.out("\(p.shortName.padded(to: 10)) \(p.name) \(p.version)  [\(p.id), ABI \(p.abiMajor).\(p.abiMinor)]\n")
                if !p.summary.isEmpty { console.out("           \(p.summary)\n") }
                console.out("           \(p.path)\n")
            }
            if !failures.isEmpty {
                console.out("\nRefused (\(failures.count)):\n")
                for f in failures { console.out("  \(f.path)\n    \(TerminalText.shortened(f.reason))\n") }
            }
        }
        return failures.isEmpty ? .ok : .pluginLoadFailure
    }

    func menu(_ only: String?) throws(ShellError) -> ExitCode {
        let h = host!
        var sections = h.sections()
        if let only {
            sections = sections.filter { $0.id == only }
            guard !sections.isEmpty else {
                throw .notFound("no section '\(only)'\(Shell.suggestion(for: only, among: h.sections().map(\.id)))")
            }
        }
        let pinned = Set(h.pinnedEntryIDs())
        if options.json {
            emit(.object([("sections", .array(h.sectionsJSON(sections)))]))
            return .ok
        }
        for s in sections {
            let entries = h.entries(inSection: s.id)
            if entries.isEmpty && only == nil { continue }
            console.out("\(s.title)\n")
            let width = entries.map(\.title.count).max() ?? 0
            for e in entries {
                let pin = pinned.contains(e.fullID) && s.id != Section.pinnedID ? " *" : ""
                let state = h.state(of: e) // plugin callbacks run once per entry
                console.out("  \(e.title.padded(to: width))  \(describe(e, state))\(pin)    (\(e.fullID))\n")
                if case .rows(let rows) = state {
                    let w = rows.map(\.title.count).max() ?? 0
                    for r in rows { console.out("      \(r.title.padded(to: w))  \(r.value ?? "")\n") }
                }
            }
            console.out("\n")
        }
        return .ok
    }

    /// The one-line form of an entry's state for text listings.
    func describe(_ e: Entry, _ state: EntryState) -> String {
        switch state {
        case .value(let v):
            let shown = e.isSecret && !v.isEmpty ? "********" : v
            switch e.kind {
            case .toggle: return v == "true" ? "[on]" : "[off]"
            case .choice: return "[\(e.choices.map { $0 == v ? "(\($0))" : $0 }.joined(separator: " "))]"
            case .text: return "\"\(shown)\""
            default: return shown
            }
        case .pluginValue(let v, let details):
            let shown = describe(e, .value(v))
            if details.isEmpty { return shown }
            return shown + "  (" + details.map { "\($0.title): \($0.value ?? "-")" }.joined(separator: ", ") + ")"
        case .rows(let rows): return "(\(rows.count) row\(rows.count == 1 ? "" : "s"))"
        case .action(let c): return "-> \(c)"
        case .failed(let why): return "error: \(why)"
        }
    }

    func listCommands() -> ExitCode {
        let h = host!
        if options.json && !console.isTerminal {
            // No tree, no Command for a deferred plugin, a buffer reused:
            // this is the listing a thousand plugins make long.
            h.writeCommandsJSON(flushingAt: 32 << 10) { console.out(utf8: $0) }
            return .ok
        }
        if options.json {
            emit(.object([("commands", .array(h.commands.map(Host.commandJSON)))]))
            return .ok
        }
        let commands = h.commandSummaries()
        let width = commands.map(\.name.count).max() ?? 0
        for c in commands { console.out("\(c.name.padded(to: width))  \(c.summary)\n") }
        return .ok
    }

    func help(_ topic: String?) throws(ShellError) -> ExitCode {
        guard let topic else {
            console.out(Shell.overview())
            return .ok
        }
        if let sc = Shell.shellCommand(named: topic) {
            if options.json {
                emit(.object([("name", .string(sc.name)), ("usage", .string(sc.usage)), ("summary", .string(sc.summary))]))
            } else {
                console.out("usage: \(sc.usage)\n\n\(sc.summary).\n")
                if !sc.details.isEmpty { console.out("\n\(sc.details)\n") }
                if sc.name == "run" { console.out("\nArguments are positional or --name value (also --name=value); `--` ends options.\n") }
            }
            return .ok
        }
        let h = try requireHost()
        guard let c = h.command(named: topic) else {
            throw .notFound("no command '\(topic)'\(Shell.suggestion(for: topic, among: h.commandNames + Shell.table.map(\.name)))")
        }
        if options.json {
            emit(Host.commandJSON(c))
            return .ok
        }
        var text = "usage: pincer run \(c.usage)\n"
        if !c.summary.isEmpty { text += "\n\(c.summary)\n" }
        if !c.details.isEmpty { text += "\n\(c.details)\n" }
        if !c.signature.parameters.isEmpty {
            text += "\nParameters:\n"
            let width = c.signature.parameters.map(\.optionName.count).max() ?? 0
            for p in c.signature.parameters {
                var line = "  --\(p.optionName.padded(to: width))  \(p.type.rawValue)"
                if p.isSecret { line += ", secret (kept out of history)" }
                if p.isRest {
                    line += ", zero or more (rest)"
                } else if let d = p.defaultValue {
                    line += ", optional, default \(Signature.literalText(d))"
                } else {
                    line += ", required"
                }
                text += line + "\n"
            }
            if let rest = c.signature.restParameter {
                text += "\nWords left over after the other arguments go to '\(rest.optionName)' (so does each --\(rest.optionName) value);\n"
                text += "after `--`, words starting with '-' are items too.\n"
            }
        }
        text += "\nReturns: \(c.signature.result.rawValue)\nSignature: \(c.signature.text)\nPlugin: \(c.pluginID)\n"
        console.out(text)
        return .ok
    }

    /// Words a bool parameter accepts as its value.
    static func isBoolWord(_ w: String) -> Bool {
        ["true", "false", "1", "0", "yes", "no", "on", "off"].contains(w.lowercased())
    }

    /// Binds shell words to a command's parameters: positional in order,
    /// or `--name value` / `--name=value`; `--` makes the rest positional.
    /// A rest parameter (`name: string...`) collects, in command-line order,
    /// the positional words left over once the required parameters are
    /// filled and each `--name value` given for it (it may repeat); optional
    /// parameters before it are then given by name only.
    /// `deprecated` hears of each option spelt the old way (`--body_cap`).
    static func bind(_ words: [String], to command: Command, deprecated: (String) -> Void = { _ in }) -> Result<[Value], ShellError> {
        let params = command.signature.parameters
        let fixed = command.signature.fixedParameters.count
        let rest = command.signature.restParameter
        let usage = "pincer run \(command.usage)"
        // With a rest parameter, positional words fill the required
        // parameters and then become items; optional ones are named
        // (`db.query app "select ?" 5 --limit 10`), so a value meant as an
        // item never lands in an option.
        let positional = rest == nil ? fixed : params.prefix { !$0.isOptional && !$0.isRest }.count
        var given = [String?](repeating: nil, count: fixed)
        var restItems: [String] = []
        var nextPositional = 0
        var i = 0
        var optionsEnded = false
        func fail(_ message: String) -> Result<[Value], ShellError> { .failure(.usage("\(command.fullName): \(message)", usage: usage)) }
        while i < words.count {
            let w = words[i]
            i += 1
            if !optionsEnded && w == "--" { optionsEnded = true; continue }
            if !optionsEnded && w.hasPrefix("--") && w.count > 2 && !GlobalOptions.isNumber(w) {
                let (flag, inline) = GlobalOptions.split(w)
                let options = params.map { "--" + $0.optionName }
                guard let (index, old) = command.signature.parameterIndex(option: String(flag.dropFirst(2))) else {
                    let names = options.isEmpty ? "none" : options.joined(separator: ", ")
                    return fail("unknown parameter \(flag)\(Shell.suggestion(for: flag, among: options)) (parameters: \(names))")
                }
                let name = params[index].optionName
                if old { deprecated("\(command.fullName): \(flag) is the old spelling of --\(name); use --\(name)") }
                if params[index].isRest {
                    if let inline {
                        restItems.append(inline)
                    } else {
                        guard i < words.count else { return fail("--\(name) needs a value (one string item)") }
                        restItems.append(words[i])
                        i += 1
                    }
                    continue
                }
                guard given[index] == nil else { return fail("parameter --\(name) is given twice") }
                if let inline {
                    given[index] = inline
                } else if params[index].type == .bool, i >= words.count || !Shell.isBoolWord(words[i]) {
                    // A bool parameter works as a flag: `--loop` alone means true.
                    given[index] = "true"
                } else {
                    guard i < words.count else { return fail("--\(name) needs a value (\(params[index].type.rawValue))") }
                    given[index] = words[i]
                    i += 1
                }
                continue
            }
            while nextPositional < positional && given[nextPositional] != nil { nextPositional += 1 }
            guard nextPositional < positional else {
                if rest != nil { restItems.append(w); continue }
                return fail("too many arguments: takes at most \(fixed), '\(w)' is extra")
            }
            given[nextPositional] = w
            nextPositional += 1
        }
        var values: [Value] = []
        for (p, text) in zip(params, given) {
            guard let text else {
                if let d = p.defaultValue { values.append(d); continue }
                return fail("missing argument '\(p.optionName)' (\(p.type.rawValue))")
            }
            switch ValueConversion.convert(text, to: p.type) {
            case .success(let v): values.append(v)
            case .failure(let why): return fail("parameter --\(p.optionName) expects \(p.type.rawValue): \(why)")
            }
        }
        // Rest items are strings: nothing to convert.
        values += restItems.map(Value.string)
        return .success(values)
    }

    func runCommand(_ args: [String]) throws(ShellError) -> ExitCode {
        let h = try requireHost()
        let name = args[0]
        guard let command = h.command(named: name) else {
            throw .notFound("no command '\(name)'\(Shell.suggestion(for: name, among: h.commandNames))")
        }
        // `--json`, `--csv` and `--help` after the command name are pincer's unless the
        // command has such a parameter, or they come after `--` (where they can be rest items).
        var words: [String] = []
        var optionsEnded = false
        for w in args.dropFirst() {
            if w == "--" { optionsEnded = true }
            if !optionsEnded {
                if w == "--json" && command.signature.parameter(named: "json") == nil { options.json = true; continue }
                if w == "--csv" && command.signature.parameter(named: "csv") == nil { options.csv = true; continue }
                if (w == "--help" || w == "-h") && command.signature.parameter(named: "help") == nil { return try help(name) }
            }
            words.append(w)
        }
        if options.csv && options.json {
            throw .usage("--csv and --json cannot be used together", usage: "pincer run \(command.usage) [--json | --csv]")
        }
        // Only a JSON document can be a table; refuse the rest before anything is called.
        if options.csv && !command.returnsJSON { throw .usage("\(name): --csv needs a table result") }
        if command.changesState { try requireChangesAllowed(name) }
        let values: [Value]
        switch Shell.bind(words, to: command, deprecated: { warn($0) }) {
        case .success(let v): values = v
        case .failure(let e): throw e
        }
        let live = LiveOutput(console: console, json: options.json)
        let outcome = invokeCancellable(command, values, live: live)
        live.finish()
        let returned: Result<Value, CommandFailure>
        let stopped: String?
        switch outcome {
        case .finished(let r, let cancelled):
            returned = r
            stopped = cancelled
        case .abandoned(let reason):
            abandonedCall = true
            let message = "\(name) (plugin \(command.pluginID)) \(reason); it did not stop within "
                + "\(NumberTextShell.seconds(cancelGraceSeconds)) (it does not poll pincer_call_t.is_cancelled), "
                + "so pincer exits with the call still running"
            if options.json {
                emit(.object([("command", .string(name)), ("ok", .bool(false)), ("status", .string(Status.name(PINCER_CANCELLED))),
                              ("error", .string(message))]))
                return .cancelled
            }
            throw ShellError(code: .cancelled, message: message)
        }
        let result: Value
        switch returned {
        case .success(let v): result = v
        case .failure(let error):
            if let stopped { return try reportStopped(name, stopped, result: nil) }
            if options.json {
                emit(.object([("command", .string(name)), ("ok", .bool(false)), ("status", .string(Status.name(error.status))),
                              ("error", .string(pluginFailure(error.message).message))]))
                return pluginFailureCode
            }
            throw pluginFailure("\(name): \(error.message)")
        }
        if let stopped { return try reportStopped(name, stopped, result: result) }
        let json: JSON
        do { json = try command.jsonResult(result) } catch {
            if options.json {
                emit(.object([("command", .string(name)), ("ok", .bool(false)), ("status", .string(Status.name(error.status))),
                              ("error", .string(pluginFailure(error.message).message))]))
                return pluginFailureCode
            }
            throw pluginFailure(error.message)
        }
        if options.json {
            emit(.object([("command", .string(name)), ("ok", .bool(true)),
                          ("type", .string(command.resultTypeName)), ("result", json)]))
        } else if options.csv {
            guard let csv = JSONRendering.csv(json) else { throw .usage("\(name): --csv needs a table result") }
            console.out(csv)
        } else if command.returnsJSON {
            console.out(JSONRendering.render(json))
        } else if command.signature.result != .void {
            console.out(result.description + "\n")
        }
        return .ok
    }

    /// What answers a command's questions (pincer_call_t.ask): the person
    /// at this shell's input (the REPL, a terminal, or an attached client
    /// that answers), never under --json, whose output is for programs.
    var asker: (@Sendable (String) -> String?)? {
        guard !options.json, console.canAsk, isEmbedded || interactive || isatty(0) == 1 else { return nil }
        // The command's thread asks while this one waits for it.
        nonisolated(unsafe) let console = self.console
        return { console.ask($0) }
    }

    /// Calls a plugin command so that Ctrl-C and --timeout can stop it: on
    /// a thread of its own in the local shell (see CommandRun), on this
    /// thread with the client's cancellation in an attached one.
    func invokeCancellable(_ command: Command, _ values: [Value], live: LiveOutput) -> CommandRun.Outcome {
        let json = options.json
        let ask = asker
        if isEmbedded {
            let r = Result { () throws(CommandFailure) -> Value in
                try command.invoke(values, output: { live.write($0) }, json: json, cancellation: cancellation, ask: ask)
            }
            return .finished(r, cancelled: cancellation?.isCancelled == true ? "cancelled by the client" : nil)
        }
        let local = Cancellation()
        return CommandRun.run(command: command, timeout: options.timeout, cancellation: local) {
            Result { () throws(CommandFailure) -> Value in
                try command.invoke(values, output: { live.write($0) }, json: json, cancellation: local, ask: ask)
            }
        }
    }

    /// A command that returned after being cancelled: exit 6 whatever it
    /// returned (a stream cut short is not a success); its result, if it
    /// had one, is still shown.
    func reportStopped(_ name: String, _ reason: String, result: Value?) throws(ShellError) -> ExitCode {
        let message = "\(name) \(reason)"
        if options.json {
            var fields: [(String, JSON)] = [("command", .string(name)), ("ok", .bool(false)),
                                            ("status", .string(Status.name(PINCER_CANCELLED))), ("error", .string(message))]
            if let result { fields.append(("result", result.json)) }
            emit(.object(fields))
            return .cancelled
        }
        if let result, result != .void { console.out(result.description + "\n") }
        throw ShellError(code: .cancelled, message: message)
    }

    func get(_ id: String) throws(ShellError) -> ExitCode {
        let h = try requireHost()
        let e = try entry(id)
        let state = h.state(of: e)
        if options.json {
            emit(h.entryJSON(e, pinned: Set(h.pinnedEntryIDs())))
        } else {
            switch state {
            case .value(let v): console.out((e.isSecret && !v.isEmpty ? "********" : v) + "\n")
            case .pluginValue(let v, let details):
                console.out((e.isSecret && !v.isEmpty ? "********" : v) + "\n")
                for d in details { console.out("  \(d.title): \(d.value ?? "-")\n") }
            case .rows(let rows):
                let w = rows.map(\.title.count).max() ?? 0
                for r in rows { console.out("\(r.title.padded(to: w))  \(r.value ?? "")\n") }
            case .action(let c): console.out("action: runs \(c) (pincer activate \(e.fullID))\n")
            case .failed: break
            }
        }
        if case .failed(let why) = state { throw pluginFailure("\(id): \(why)") }
        return .ok
    }

    func set(_ id: String, _ value: String) throws(ShellError) -> ExitCode {
        let h = try requireHost()
        let e = try entry(id)
        try requireChangesAllowed("set \(id)")
        let stored: String
        do { stored = try h.setValue(value, of: e) } catch { throw settingsError(error) }
        if e.isPluginValue {
            // The plugin decides what a change means (e.g. "remote" clears a
            // flag's override), so show what the entry reads now.
            if options.json { emit(h.entryJSON(e, pinned: Set(h.pinnedEntryIDs()))) } else {
                console.out("\(e.fullID) = \(describe(e, h.state(of: e)))\n")
            }
        } else if options.json {
            emit(.object([("entry", .string(e.fullID)), ("value", .string(e.isSecret ? "********" : stored))]))
        } else {
            console.out("\(e.fullID) = \(e.isSecret ? "********" : stored)\n")
        }
        return .ok
    }

    func activate(_ id: String) throws(ShellError) -> ExitCode {
        let h = try requireHost()
        let e = try entry(id)
        try requireChangesAllowed("activate \(id)")
        let result: Value
        do { result = try h.activate(e) } catch {
            throw error.kind == .failed ? pluginFailure(error.message) : settingsError(error)
        }
        if options.json {
            emit(.object([("entry", .string(e.fullID)), ("command", .string(e.command ?? "")), ("ok", .bool(true)), ("result", result.json)]))
        } else if result != .void {
            console.out(result.description + "\n")
        }
        return .ok
    }

    func pin(_ id: String, _ pinned: Bool) throws(ShellError) -> ExitCode {
        let h = try requireHost()
        let e = try entry(id)
        try requireChangesAllowed("\(pinned ? "pin" : "unpin") \(id)")
        do { try h.setPinned(pinned, e) } catch { throw settingsError(error) }
        if options.json {
            emit(.object([("entry", .string(e.fullID)), ("pinned", .bool(pinned))]))
        } else {
            console.out("\(pinned ? "pinned" : "unpinned") \(e.fullID)\n")
        }
        return .ok
    }

    func search(_ text: String) -> ExitCode {
        let h = host!
        let found = h.search(text)
        if options.json {
            let pinned = Set(h.pinnedEntryIDs())
            emit(.object([("entries", .array(found.entries.map { h.entryJSON($0, pinned: pinned) })),
                          ("commands", .array(found.commands.map(Host.commandJSON)))]))
        } else {
            for e in found.entries { console.out("entry    \(e.fullID.padded(to: 28)) \(e.title)\n") }
            for c in found.commands { console.out("command  \(c.fullName.padded(to: 28)) \(c.summary)\n") }
            if found.entries.isEmpty && found.commands.isEmpty { console.out("Nothing matches '\(text)'.\n") }
        }
        return found.entries.isEmpty && found.commands.isEmpty ? .notFound : .ok
    }

    func version() -> ExitCode {
        if options.json {
            emit(.object([("version", .string(Shell.version)), ("abi", .string("\(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR)"))]))
        } else {
            console.out("pincer \(Shell.version) (plugin ABI \(PINCER_ABI_MAJOR).\(PINCER_ABI_MINOR))\n")
        }
        return .ok
    }

    static func overview() -> String {
        var text = "usage: pincer [options] <command> [arguments]\n\nCommands:\n"
        let width = table.map(\.name.count).max() ?? 0
        for c in table { text += "  \(c.name.padded(to: width))  \(c.summary)\n" }
        text += "\nA plugin command can also be run directly: pincer devopts.add 1 2\n\nOptions:\n"
        for o in GlobalOptions.table {
            let flag = o.value.map { "\(o.flag) \($0)" } ?? o.flag
            text += "  \(flag.padded(to: 20))  \(o.summary)\n"
        }
        text += """

        Exit codes: 0 ok, 1 command failed, 2 usage error, 3 not found,
                    4 plugin load failure (plugins, --strict), 5 settings store error,
                    6 plugin command cancelled (Ctrl-C) or timed out (--timeout).
        Environment: PINCER_PLUGIN_PATH (colon-separated plugin paths), PINCER_STATE_DIR.

        """
        return text
    }
}

extension Signature {
    /// How a default value is written in help.
    static func literalText(_ v: Value) -> String {
        if case .string(let s) = v { return JSON.quote(s) }
        return v.description
    }
}

/// The console, handed to a command's live output; that output arrives on
/// the thread running the command, which is the shell's own.
/// A command's live output (pincer_call_t.output) on its way to the
/// console. With `--json` the stream is NDJSON: a line that is a JSON
/// object is printed as it is, any other line as {"output": "<line>"},
/// and a partial line waits for its newline (or the end of the call).
final class LiveOutput: @unchecked Sendable {
    let console: Console
    private let json: Bool
    private let pending = Mutex("")

    init(console: Console, json: Bool = false) {
        self.console = console
        self.json = json
    }

    func write(_ text: String) {
        guard json else { console.out(text); return }
        pending.withLock { pending in
            pending += text
            while let newline = pending.firstIndex(of: "\n") {
                emitLine(String(pending[..<newline]))
                pending = String(pending[pending.index(after: newline)...])
            }
        }
    }

    /// Prints what is left of a partial line.
    func finish() {
        pending.withLock { pending in
            if !pending.isEmpty { emitLine(pending) }
            pending = ""
        }
    }

    private func emitLine(_ line: String) {
        if case .object? = try? JSON.parse(line) {
            console.out(line + "\n")
        } else {
            console.out(JSON.object([("output", .string(line))]).serialized() + "\n")
        }
    }
}
