import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The interception commands: rules (RuleBook, NetworkLog's Rules.swift),
/// the master switch, global conditioning, export and import, mocks from
/// traffic. Each change is one locked read-modify-write of net-rules.json.
struct InterceptCommands {
    let state: FirstUse<LoggerState>

    static let matchHelp = "`match` is a filter expression of net.list (net.list --help): `domain:api.example.com path:/v1/users/*`, `~m POST`, `graphql:GetUser`; \"\" matches every request. For each kind the first enabled rule that matches applies, in the order net.intercept-rules lists."

    private func book() throws -> RuleBook { try state.get().interception }

    /// Adds `rule` and says what was added.
    func add(_ rule: InterceptRule, position: Int64) throws -> CommandValue {
        if let problem = rule.problem { throw CommandError.invalidArgument(problem) }
        let id = try change { d in d.add(rule, at: position > 0 ? Int(position) : nil) }
        return .string("added \(rule.kind.rawValue) rule \(id)\(rule.enabled ? "" : " (disabled)"): \(rule.action.summary)")
    }

    private func change<T>(_ body: (inout RulesDocument) throws -> T) throws -> T {
        do { return try book().update(body) } catch let error as RulesError { throw CommandError(error.message) }
    }

    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), !path.isEmpty else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/" + path
    }

    /// "Name: value" lines (newline-separated) as headers.
    static func headers(_ text: String) throws -> [Header] {
        try text.split(whereSeparator: \.isNewline).map { line in
            guard let colon = line.firstIndex(of: ":") else {
                throw CommandError.invalidArgument("header '\(line)' is not 'Name: value'")
            }
            return Header(String(line[..<colon]).filter { $0 != " " }, String(line[line.index(after: colon)...]).drop { $0 == " " }.description)
        }
    }

    /// A rule as net.intercept-rules lists it: the columns people read, then
    /// (for JSON) every field as net.export-rules writes it.
    private func ruleRow(_ r: InterceptRule, transient: Bool = false, full: Bool) -> JSON {
        var fields: [(String, JSON)] = [("id", .string(r.id)), ("on", .bool(r.enabled)), ("kind", .string(r.kind.rawValue)),
                                        ("match", .string(r.match)), ("does", .string(r.action.summary)), ("title", .string(r.title)),
                                        ("transient", .bool(transient))]
        if full { fields.append(("rule", RulesCodec.json(r))) }
        return .object(fields)
    }

    func register(with host: PluginHost) throws {
        let commands = self
        try host.addCommand("intercept-rules() -> string",
                            summary: "Interception rules in order, the master switch, global conditioning and what is wrong with the rules file",
                            jsonResult: true) { args in
            let book = try commands.book()
            let d = book.document
            let transient = book.transient
            let problem = book.problem
            var fields: [(String, JSON)] = [("enabled", .bool(d.enabled)), ("file", book.path.map(JSON.string) ?? .null),
                                            ("conditioning", d.conditioning.map { .string($0.summary) } ?? .null)]
            if let problem { fields.append(("problem", .string(problem))) }
            fields.append(("rules", .array(transient.map { commands.ruleRow($0, transient: true, full: args.wantsJSON) } + d.rules.map { commands.ruleRow($0, full: args.wantsJSON) })))
            return .string(JSON.object(fields).serialized())
        }
        try host.addCommand("add-rule(rule: string, position: i64 = 0) -> string",
                            summary: "Add a rule of any kind from its JSON (as net.export-rules writes one)",
                            details: "For example {\"kind\":\"rewrite\",\"match\":\"domain:api.example.com\",\"operations\":[{\"op\":\"set-header\",\"side\":\"response\",\"name\":\"Cache-Control\",\"value\":\"no-store\"}]}. The README lists every kind's keys. `position` (1-based) inserts it there; 0 appends.\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            let json: JSON
            do { json = try JSON.parse(args[0].string) } catch { throw CommandError.invalidArgument("rule: \(error)") }
            let rule: InterceptRule
            do { rule = try RulesCodec.rule(json, at: "rule") } catch let e as RulesError { throw CommandError.invalidArgument(e.message) }
            return try commands.add(rule, position: args[1].i64)
        }
        try host.addCommand("add-mock(match: string, status: i64 = 200, body: string = \"\", body_file: string = \"\", content_type: string = \"\", headers: string = \"\", title: string = \"\", position: i64 = 0) -> string",
                            summary: "Answer matching requests with this status, headers and body, without sending them",
                            details: "`body` is the text to answer with; `body_file` a file read on each request (at most 10 MiB; its media type from the extension unless given). `headers` holds 'Name: value' lines. \n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            guard args[2].string.isEmpty || args[3].string.isEmpty else { throw CommandError.invalidArgument("give body or body_file, not both") }
            var headers = try InterceptCommands.headers(args[5].string)
            if !args[4].string.isEmpty { headers.insert(Header("Content-Type", args[4].string), at: 0) }
            let body: MockBody = !args[3].string.isEmpty ? .file(InterceptCommands.absolute(args[3].string)) : args[2].string.isEmpty ? .none : .text(args[2].string)
            return try commands.add(InterceptRule(title: args[6].string, match: args[0].string,
                                                  action: .mock(status: Int(clamping: args[1].i64), headers: headers, body: body)), position: args[7].i64)
        }
        try host.addCommand("add-map-local(match: string, file: string, title: string = \"\", position: i64 = 0) -> string",
                            summary: "Answer matching requests with a local file (at most 10 MiB; media type from its extension)",
                            details: InterceptCommands.matchHelp, changesState: true) { args in
            try commands.add(InterceptRule(title: args[2].string, match: args[0].string, action: .mapLocal(path: InterceptCommands.absolute(args[1].string))),
                             position: args[3].i64)
        }
        try host.addCommand("add-map-remote(match: string, to: string, strip_prefix: string = \"\", title: string = \"\", position: i64 = 0) -> string",
                            summary: "Send matching requests to another scheme, host and port (e.g. production to staging), keeping the rest of the URL",
                            details: "`to`'s path, when it has one, replaces `strip_prefix` at the start of the request's path: --to https://staging.example.com/v2 --strip-prefix /v1 sends /v1/users to /v2/users.\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            try commands.add(InterceptRule(title: args[3].string, match: args[0].string, action: .mapRemote(to: args[1].string, stripPrefix: args[2].string)),
                             position: args[4].i64)
        }
        try host.addCommand("add-rewrite(match: string, op: string, side: string = \"response\", name: string = \"\", value: string = \"\", find: string = \"\", with: string = \"\", regex: bool = false, status: i64 = 0, title: string = \"\", position: i64 = 0) -> string",
                            summary: "Change matching exchanges: headers, query parameters, status, body text or JSON values",
                            details: "`op` is one of set-header, add-header, remove-header (--side request|response, --name, --value), set-query, remove-query (--name, --value), status (--status), replace-body (--find, --with, --regex), set-json (--name is the path, e.g. user.items[0].id; --value is JSON), remove-json (--name). Several operations in one rule: net.add-rule.\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            var op: [String: JSON] = ["op": .string(args[1].string), "side": .string(args[2].string)]
            let name = args[3].string, value = args[4].string
            switch args[1].string {
            case "set-query", "remove-query": op["side"] = nil; op["name"] = .string(name); if args[1].string == "set-query" { op["value"] = .string(value) }
            case "status": op = ["op": .string("status"), "status": .int(args[8].i64)]
            case "replace-body": op["find"] = .string(args[5].string); op["with"] = .string(args[6].string); op["regex"] = .bool(args[7].bool)
            case "set-json", "remove-json":
                op["path"] = .string(name)
                if args[1].string == "set-json" {
                    do { op["value"] = try JSON.parse(value) } catch { throw CommandError.invalidArgument("value is not JSON (a string needs quotes: '\"text\"'): \(error)") }
                }
            default: op["name"] = .string(name); if args[1].string != "remove-header" { op["value"] = .string(value) }
            }
            let operation: RewriteOperation
            do { operation = try RulesCodec.operation(.object(op.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }), at: "the operation") } catch let e as RulesError {
                throw CommandError.invalidArgument(e.message)
            }
            return try commands.add(InterceptRule(title: args[9].string, match: args[0].string, action: .rewrite([operation])), position: args[10].i64)
        }
        try host.addCommand("add-block(match: string, error: string = \"not-connected\", title: string = \"\", position: i64 = 0) -> string",
                            summary: "Fail matching requests with a network error, as the app's client reports one (nothing is sent)",
                            details: "`error`: \(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", ")).\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            guard let failure = NetworkFailure(rawValue: args[1].string) else {
                throw CommandError.invalidArgument("unknown error '\(args[1].string)' (one of \(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return try commands.add(InterceptRule(title: args[2].string, match: args[0].string, action: .block(failure)), position: args[3].i64)
        }
        try host.addCommand("add-delay(match: string, preset: string = \"\", latency_ms: f64 = -1, jitter_ms: f64 = -1, download_kb_s: f64 = -1, upload_kb_s: f64 = -1, failure_rate: f64 = -1, title: string = \"\", position: i64 = 0) -> string",
                            summary: "Condition matching requests: latency, jitter, bandwidth (KB/s, 1 KB = 1000 bytes) and a failure rate",
                            details: "Presets (Scyther's figures): wifi 10 ms; 4g 50 ms, 1500 KB/s; 3g 100 ms, 100 KB/s; edge 400 ms, 30 KB/s; very-bad 500 ms, 125 KB/s, 10 % failures; offline. Figures given override the preset's. The delay is capped at 30 s.\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            let c = try InterceptCommands.conditioning(args, from: 1)
            return try commands.add(InterceptRule(title: args[7].string, match: args[0].string, action: .delay(c)), position: args[8].i64)
        }
        try host.addCommand("condition(preset: string = \"\", latency_ms: f64 = -1, jitter_ms: f64 = -1, download_kb_s: f64 = -1, upload_kb_s: f64 = -1, failure_rate: f64 = -1) -> string",
                            summary: "Condition every request no delay rule matches (global); net.condition-off ends it",
                            details: "As net.add-delay, for every request.", changesState: true) { args in
            let c = try InterceptCommands.conditioning(args, from: 0)
            try commands.change { $0.conditioning = c }
            return .string("every request is conditioned: \(c.summary)")
        }
        try host.addCommand("condition-off() -> string", summary: "End global conditioning (delay rules stay)", changesState: true) { _ in
            try commands.change { $0.conditioning = nil }
            return .string("global conditioning is off")
        }
        try host.addCommand("intercept-on() -> string", summary: "Turn interception on: enabled rules apply (the master switch)", changesState: true) { _ in
            try commands.change { $0.enabled = true }
            return .string("interception is on")
        }
        try host.addCommand("intercept-off() -> string", summary: "Turn interception off: no rule applies, and every rule is kept", changesState: true) { _ in
            try commands.change { $0.enabled = false }
            return .string("interception is off: no rule applies until net.intercept-on")
        }
        for (name, enable) in [("enable-rule", true), ("disable-rule", false)] {
            try host.addCommand("\(name)(id: string) -> string", summary: enable ? "Enable a rule by its id" : "Disable a rule by its id (it is kept)",
                                changesState: true) { args in
                let id = args[0].string
                try commands.change { d in
                    guard let i = d.index(of: id) else { throw InterceptCommands.noRule(id, d) }
                    d.rules[i].enabled = enable
                }
                return .string("rule \(id) is \(enable ? "enabled" : "disabled")")
            }
        }
        try host.addCommand("remove-intercept-rule(id: string) -> string", summary: "Remove an interception rule by its id", changesState: true) { args in
            let id = args[0].string
            if id.hasPrefix("t"), try commands.book().removeTransient(id) { return .string("removed transient rule \(id)") }
            let removed = try commands.change { d -> InterceptRule in
                guard let i = d.index(of: id) else { throw InterceptCommands.noRule(id, d) }
                return d.rules.remove(at: i)
            }
            return .string("removed \(removed.kind.rawValue) rule \(id)")
        }
        try host.addCommand("move-rule(id: string, position: i64) -> string", summary: "Move a rule to a position (1 is first)", changesState: true) { args in
            let id = args[0].string
            let at = try commands.change { d -> Int in
                guard let i = d.index(of: id) else { throw InterceptCommands.noRule(id, d) }
                guard args[1].i64 >= 1 else { throw CommandError.invalidArgument("position must be 1 or more") }
                let rule = d.rules.remove(at: i)
                let to = min(Int(clamping: args[1].i64) - 1, d.rules.count)
                d.rules.insert(rule, at: to)
                return to + 1
            }
            return .string("rule \(id) is now at position \(at)")
        }
        try host.addCommand("export-rules(file: string) -> string",
                            summary: "Write the rules, the switch and global conditioning as one JSON document (format pincer.net-rules, version 1)",
                            details: "Values that could be secrets (header and query values, mock bodies, texts) pass the log's redactor, as everything Pincer exports does: a shared file holds no more than the log would. The stored rules keep their values.") { args in
            var d = try commands.book().document
            let redactor = try commands.state.get().store.redactor
            var redacted: [String] = []
            d.rules = d.rules.map { rule in
                let (clean, changed) = rule.redacted(by: redactor)
                if changed { redacted.append(rule.id) }
                return clean
            }
            try TextFile.writeAtomically(d.json.serialized(pretty: true) + "\n", to: args[0].string)
            let note = redacted.isEmpty ? "" : "; values that could be secrets are [REDACTED] in rule\(redacted.count == 1 ? "" : "s") \(redacted.joined(separator: ", ")) (the stored rules keep them)"
            return .string("wrote \(d.rules.count) rule\(d.rules.count == 1 ? "" : "s") to \(args[0].string)\(note)")
        }
        try host.addCommand("import-rules(file: string, replace: bool = false) -> string",
                            summary: "Add the rules of a document net.export-rules wrote (new ids, after the others); --replace replaces every rule, the switch and conditioning",
                            changesState: true) { args in
            let text = try TextFile.read(args[0].string)
            let imported: RulesDocument
            switch RulesDocument.decode(text) {
            case .success(let d): imported = d
            case .failure(let e): throw CommandError.invalidArgument("\(args[0].string): \(e.message); nothing was imported")
            }
            try commands.change { d in
                if args[1].bool {
                    let next = max(d.nextID, imported.nextID)
                    d = imported
                    d.nextID = next
                } else {
                    for r in imported.rules { d.add(r) }
                }
            }
            return .string("\(args[1].bool ? "replaced the rules with" : "added") \(imported.rules.count) rule\(imported.rules.count == 1 ? "" : "s") from \(args[0].string)")
        }
        try host.addCommand("mock-from(id: u64, title: string = \"\") -> string",
                            summary: "Turn a logged entry into a mock of its response (redacted values stay redacted and are listed)",
                            changesState: true) { args in
            let logger = try commands.state.get()
            guard let entry = try logger.entry(args[0].u64) else {
                throw CommandError("no entry #\(args[0].u64) (ids are in net.list)", status: PINCER_NOT_FOUND)
            }
            guard case (var rule, let caveats)? = MockFrom.rule(entry, origin: "net.mock-from \(entry.id)") else {
                throw CommandError.invalidArgument("entry #\(entry.id) has no response to mock (\(entry.state.rawValue))")
            }
            if !args[1].string.isEmpty { rule.title = args[1].string }
            let id = try commands.change { $0.add(rule) }
            return .string((["added mock rule \(id) from entry #\(entry.id): \(rule.match) → \(rule.action.summary)"] + caveats.map { "note: " + $0 }).joined(separator: "\n"))
        }
        try host.addCommand("mock-from-har(file: string, filter: string = \"\", enabled: bool = false) -> string",
                            summary: "Turn a HAR file's entries into mocks, disabled unless --enabled (redacted on the way in; redacted values are listed)",
                            changesState: true, jsonResult: true) { args in
            let path = args[0].string
            let filter = try NetworkCommands.filter(args[1].string)
            let logger = try commands.state.get()
            let result: HARImportResult
            do { result = try HARImport.read(try TextFile.readBytes(path)) } catch let e as HARImportError { throw CommandError.invalidArgument("\(path): \(e)") }
            var made: [(InterceptRule, [String], Int)] = []
            var skipped: [JSON] = result.skipped.map { .object([("index", .int(Int64($0.index))), ("reason", .string($0.reason))]) }
            for (i, raw) in result.entries.enumerated() {
                // Through the one redactor, as an import into the log would be.
                guard let entry = logger.store.prepare(raw), filter.matches(entry) else { continue }
                guard case (var rule, let caveats)? = MockFrom.rule(entry, origin: "HAR \(path), entry \(i)") else {
                    skipped.append(.object([("index", .int(Int64(i))), ("reason", .string("no response to mock"))]))
                    continue
                }
                rule.enabled = args[2].bool
                made.append((rule, caveats, i))
            }
            let ids = try commands.change { d in made.map { d.add($0.0) } }
            let rules: [JSON] = zip(ids, made).map { id, m in
                .object([("id", .string(id)), ("entry", .int(Int64(m.2))), ("match", .string(m.0.match)), ("summary", .string(m.0.action.summary)),
                         ("notes", .array(m.1.map(JSON.string)))])
            }
            return .string(JSON.object([("file", .string(path)), ("added", .int(Int64(ids.count))), ("enabled", .bool(args[2].bool)),
                                        ("rules", .array(rules)), ("skipped", .array(skipped))]).serialized())
        }
    }

    static func noRule(_ id: String, _ d: RulesDocument) -> CommandError {
        CommandError("no interception rule \(id) (net.intercept-rules lists \(d.rules.count))", status: PINCER_NOT_FOUND)
    }

    /// A preset and figures from args[from...] (preset, latency, jitter, down, up, failure rate; -1 = the preset's).
    static func conditioning(_ args: Arguments, from i: Int) throws -> Conditioning {
        var c = Conditioning()
        let preset = args[i].string
        if !preset.isEmpty {
            guard let p = Conditioning.preset(preset) else {
                throw CommandError.invalidArgument("unknown preset '\(preset)' (one of \(Conditioning.presets.map(\.name).joined(separator: ", ")))")
            }
            c = p
        }
        var custom = false
        if args[i + 1].f64 >= 0 { c.latencyMs = args[i + 1].f64; custom = true }
        if args[i + 2].f64 >= 0 { c.jitterMs = args[i + 2].f64; custom = true }
        if args[i + 3].f64 >= 0 { c.downloadBytesPerSecond = Int64(args[i + 3].f64 * 1000); custom = true }
        if args[i + 4].f64 >= 0 { c.uploadBytesPerSecond = Int64(args[i + 4].f64 * 1000); custom = true }
        if args[i + 5].f64 >= 0 { c.failureRate = args[i + 5].f64; custom = true }
        if custom, !c.preset.isEmpty { c.preset += " (changed)" }
        if let problem = c.problem { throw CommandError.invalidArgument(problem) }
        return c
    }
}
