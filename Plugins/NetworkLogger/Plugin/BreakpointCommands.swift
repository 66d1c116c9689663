import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// net.add-breakpoint, net.breakpoints (listing, one exchange, and the
/// interactive --watch flow), net.continue, net.edit, net.abort. They run
/// in the app (pincer attach <pid> ...), where the held exchanges are, and
/// concurrently with the logger's other commands, so that a shell watching
/// breakpoints does not lock out another that releases them.
struct BreakpointCommands {
    let state: FirstUse<LoggerState>
    let breakpoints: Breakpoints

    static let flowHelp = """
        With --watch, waits for exchanges to be held and shows each; in a shell where a person answers (the REPL, a terminal: pincer attach <pid> without a command, then net.breakpoints --watch) it asks what to do: continue, edit (method, URL, headers, body; status for a response), abort with an error, or skip (leave it held). Without a person it prints them (NDJSON with --json) until Ctrl-C or --limit exchanges. Exchanges a watch was shown are released unchanged when it ends (Ctrl-C, the shell detached or was killed) unless another watch saw them too. Held exchanges not watched wait for net.continue, net.edit, net.abort or their timeout.
        """

    func register(with host: PluginHost) throws {
        let commands = self
        try host.addCommand("add-breakpoint(match: string, request: bool = false, response: bool = false, timeout: i64 = 60, title: string = \"\", position: i64 = 0) -> string",
                            summary: "Hold matching requests before they are sent (--request, the default), their responses (--response), or both",
                            details: "A held exchange waits for a person (net.breakpoints) at most --timeout seconds (5–300, default 60), then continues unchanged and says so. Bodies over 10 MiB are not held.\n\n" + InterceptCommands.matchHelp,
                            changesState: true) { args in
            let request = args[1].bool || !args[2].bool
            let rule = InterceptRule(title: args[4].string, match: args[0].string,
                                     action: .breakpoint(request: request, response: args[2].bool, timeoutSeconds: Int(clamping: args[3].i64)))
            return try InterceptCommands(state: commands.state).add(rule, position: args[5].i64)
        }
        try host.addCommand("breakpoints(number: i64 = 0, watch: bool = false, limit: i64 = 0) -> string",
                            summary: "The exchanges breakpoints hold now; one in full with its number; --watch to handle them as they come",
                            details: Self.flowHelp, jsonResult: true, concurrent: true) { args in
            if args[1].bool { return try commands.watch(args, limit: Int(clamping: max(0, args[2].i64))) }
            if args[0].i64 != 0 {
                guard let h = commands.breakpoints.get(Int(clamping: args[0].i64)) else {
                    throw CommandError("no held exchange \(args[0].i64) (see net.breakpoints)", status: PINCER_NOT_FOUND)
                }
                return .string(try commands.detail(h).serialized())
            }
            return .string(JSON.array(try commands.breakpoints.all.map(commands.row)).serialized())
        }
        try host.addCommand("continue(number: i64) -> string", summary: "Let a held exchange go on (with the edits net.edit made)",
                            changesState: true, concurrent: true) { args in
            try commands.breakpoints.release(Int(clamping: args[0].i64), .proceed)
            return .string("continued \(args[0].i64)")
        }
        try host.addCommand("edit(number: i64, method: string = \"\", url: string = \"\", headers: string = \"\", remove_headers: string = \"\", body: string = \"\", body_file: string = \"\", status: i64 = 0, send: bool = false) -> string",
                            summary: "Change a held exchange: method, URL, headers, body (status for a response); --send continues it",
                            details: "`headers` holds 'Name: value' lines, each set (replacing that header); `remove_headers` names separated by commas. `body` replaces the body with text, `body_file` with a file's bytes (at most 10 MiB). A held request takes --method, --url; a held response --status. It stays held until net.continue (or --send).",
                            changesState: true, concurrent: true) { args in
            let number = Int(clamping: args[0].i64)
            let edits = try commands.edit(number, args)
            if args[8].bool { try commands.breakpoints.release(number, .proceed) }
            return .string(edits.isEmpty ? "nothing to change" : "edited \(number): \(edits.joined(separator: ", "))\(args[8].bool ? "; continued" : "")")
        }
        try host.addCommand("abort(number: i64, error: string = \"cancelled\") -> string",
                            summary: "Fail a held exchange with a network error, as the app's client would see it",
                            details: "Errors: \(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", ")).",
                            changesState: true, concurrent: true) { args in
            guard let failure = NetworkFailure(rawValue: args[1].string) else {
                throw CommandError.invalidArgument("unknown error '\(args[1].string)'; use one of \(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            try commands.breakpoints.release(Int(clamping: args[0].i64), .abort(failure))
            return .string("aborted \(args[0].i64) with \(failure.rawValue)")
        }
    }

    // MARK: showing

    /// The exchange as the log would hold it: redacted, like everything shown.
    private func entry(_ h: Breakpoints.Held) throws -> NetworkEntry {
        var e = RuleEngine.entry(h.request)
        if let r = h.response {
            e.state = .complete
            e.status = r.status
            e.statusText = r.statusText
            e.responseHeaders = r.headers
            e.responseBody = Body(payload: .stored(r.body), size: r.body.count, mimeType: r.headers.first("Content-Type") ?? "")
        }
        return try state.get().store.redactedForDisplay(e)
    }

    private func row(_ h: Breakpoints.Held) throws -> JSON {
        let e = try entry(h)
        let now = Breakpoints.now()
        return .object([
            ("number", .int(Int64(h.number))), ("phase", .string(h.phase.rawValue)), ("rule", .string(h.rule)), ("title", .string(h.title)),
            ("method", .string(e.method)), ("url", .string(e.url)), ("status", e.status.map { .int(Int64($0)) } ?? .null),
            ("held_s", .double((max(0, now - h.heldAt) * 10).rounded() / 10)),
            ("times_out_in_s", .double((max(0, h.deadline - now) * 10).rounded() / 10)),
            ("edits", .array(h.edits.map(JSON.string))),
        ])
    }

    /// The row, with headers and bodies (text, at most 64 KiB each; net.show's rules for binary).
    private func detail(_ h: Breakpoints.Held) throws -> JSON {
        guard case .object(var fields) = try row(h) else { return .null }
        let e = try entry(h)
        func lines(_ list: [Header]) -> JSON { .array(list.map { .string("\($0.name): \($0.value)") }) }
        func text(_ b: Body) -> JSON {
            guard let bytes = b.bytes, !bytes.isEmpty else { return .string("") }
            let shown = bytes.prefix(64 << 10)
            let t = String(decoding: shown, as: UTF8.self)
            return .string(t.unicodeScalars.contains("\u{FFFD}") ? "(\(bytes.count) bytes of binary)" : t + (shown.count < bytes.count ? "…" : ""))
        }
        fields.append(("request_headers", lines(e.requestHeaders)))
        fields.append(("request_body", text(e.requestBody)))
        if h.phase == .response {
            fields.append(("response_headers", lines(e.responseHeaders)))
            fields.append(("response_body", text(e.responseBody)))
        }
        return .object(fields)
    }

    /// The exchange for a person: who holds it, then the request (and
    /// response) with headers and at most 2 KiB of each body.
    private func text(_ h: Breakpoints.Held) throws -> String {
        let e = try entry(h)
        let rule = h.title.isEmpty ? "rule \(h.rule)" : "rule \(h.rule) (\(h.title))"
        let left = Int(max(0, h.deadline - Breakpoints.now()).rounded())
        var out = "── held \(h.phase.rawValue) \(h.number), by \(rule); continues unchanged in \(left) s\n"
        func body(_ b: Body, _ mark: String) {
            guard let bytes = b.bytes, !bytes.isEmpty else { return }
            let shown = bytes.prefix(2048)
            let t = String(decoding: shown, as: UTF8.self)
            if t.unicodeScalars.contains("\u{FFFD}") { out += "\(mark) (\(bytes.count) bytes of binary)\n"; return }
            out += TextExport.clean(t, keepLineBreaks: true) + "\n"
            if shown.count < bytes.count { out += "\(mark) (\(bytes.count - shown.count) more bytes: net.breakpoints \(h.number) --json)\n" }
        }
        out += "> \(e.method) \(e.url)\n"
        for header in e.requestHeaders { out += "> \(header.name): \(header.value)\n" }
        body(e.requestBody, ">")
        if h.phase == .response, let status = e.status {
            out += "< \(status) \(e.statusText)\n"
            for header in e.responseHeaders { out += "< \(header.name): \(header.value)\n" }
            body(e.responseBody, "<")
        }
        return out
    }

    // MARK: changing

    private func edit(_ number: Int, _ args: Arguments) throws -> [String] {
        let method = args[1].string, url = args[2].string, headers = try InterceptCommands.headers(args[3].string)
        let removed = args[4].string.split(separator: ",").map { $0.trimmedSpaces }.filter { !$0.isEmpty }
        guard args[5].string.isEmpty || args[6].string.isEmpty else { throw CommandError.invalidArgument("give body or body_file, not both") }
        var body: [UInt8]?
        if !args[5].string.isEmpty { body = Array(args[5].string.utf8) }
        if !args[6].string.isEmpty {
            let read = RuleEngine.localFile(args[6].string)
            if let problem = read.problem { throw CommandError.invalidArgument(problem) }
            body = read.response.body
        }
        let status = Int(clamping: args[7].i64)
        var done: [String] = []
        try breakpoints.change(number) { h in
            done = try Self.apply(to: &h, method: method, url: url, headers: headers, removed: removed, body: body, status: status)
        }
        return done
    }

    /// The changes to a held exchange, checked first, so an edit that is
    /// refused changes nothing. What changed, for the intervention note.
    static func apply(to h: inout Breakpoints.Held, method: String, url: String, headers: [Header], removed: [String],
                      body: [UInt8]?, status: Int) throws -> [String] {
        var done: [String] = []
        switch h.phase {
        case .request:
            guard status == 0 else { throw CommandError.invalidArgument("--status changes a held response; exchange \(h.number) is a held request") }
            if !method.isEmpty {
                guard method.utf8.allSatisfy({ (0x41...0x5A).contains($0) || $0 == 0x2D }) else {
                    throw CommandError.invalidArgument("method '\(method)' is not an HTTP method (capital letters, like PUT)")
                }
                h.request.method = method
                done.append("method")
            }
            if !url.isEmpty {
                guard let parts = URLParts(url), parts.scheme == "http" || parts.scheme == "https" else {
                    throw CommandError.invalidArgument("url '\(url)' is not an http or https URL")
                }
                h.request.url = url
                done.append("url")
            }
            edit(&h.request.headers, headers, removed, &done)
            if let body { h.request.body = body; done.append("body") }
        case .response:
            guard method.isEmpty, url.isEmpty else {
                throw CommandError.invalidArgument("--method and --url change a held request; exchange \(h.number) is a held response")
            }
            if status != 0 {
                guard (100...999).contains(status) else { throw CommandError.invalidArgument("status \(status) is not 100–999") }
                h.response?.status = status
                h.response?.statusText = ""
                done.append("status")
            }
            var list = h.response?.headers ?? []
            edit(&list, headers, removed, &done)
            h.response?.headers = list
            if let body { h.response?.body = body; done.append("body") }
        }
        h.edits += done
        return done
    }

    private static func edit(_ list: inout [Header], _ set: [Header], _ removed: [String], _ done: inout [String]) {
        for name in removed {
            list.removeAll { $0.name.lowercased() == name.lowercased() }
            done.append("removed header \(name)")
        }
        for header in set {
            list.removeAll { $0.name.lowercased() == header.name.lowercased() }
            list.append(header)
            done.append("header \(header.name)")
        }
    }

    // MARK: the watch flow

    /// net.breakpoints --watch: shows each exchange as it is held and, while
    /// a person answers, asks what to do with it.
    private func watch(_ args: Arguments, limit: Int) throws -> CommandValue {
        let watcher = breakpoints.startWatching()
        defer { breakpoints.stopWatching(watcher) }
        var asking = !args.wantsJSON
        var handled = 0
        while !args.isCancelled && (limit == 0 || handled < limit) {
            let fresh = breakpoints.unseen(by: watcher)
            if fresh.isEmpty { usleep(50_000); continue }
            for h in fresh {
                if args.wantsJSON {
                    args.output(json: try row(h))
                } else {
                    args.output(try text(h))
                }
                if asking {
                    switch try ask(h, args, watcher: watcher) {
                    case .answered: break
                    case .nobody: asking = false
                    }
                }
                handled += 1
                if limit > 0 && handled >= limit { break }
            }
        }
        return .string(JSON.object([("watched", .int(Int64(handled)))]).serialized())
    }

    private enum Asked { case answered, nobody }

    /// One exchange's questions; `.nobody` when no person answers (then the
    /// watch only shows).
    private func ask(_ h: Breakpoints.Held, _ args: Arguments, watcher: Int) throws -> Asked {
        while true {
            guard let answer = args.ask("[c]ontinue, [e]dit, [a]bort or [s]kip (leave it held)? ") else { return .nobody }
            do {
                switch answer.trimmedSpaces.lowercased() {
                case "c", "continue", "":
                    try breakpoints.release(h.number, .proceed)
                    args.output("continued \(h.number)\n")
                case "a", "abort":
                    let word = args.ask("error [cancelled] (\(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", "))): ")?
                        .trimmedSpaces ?? ""
                    guard let failure = NetworkFailure(rawValue: word.isEmpty ? "cancelled" : word) else {
                        args.output("unknown error '\(word)'\n")
                        continue
                    }
                    try breakpoints.release(h.number, .abort(failure))
                    args.output("aborted \(h.number) with \(failure.rawValue)\n")
                case "e", "edit":
                    guard try askEdits(h, args) else { return .nobody }
                    try breakpoints.release(h.number, .proceed)
                    args.output("continued \(h.number) as edited\n")
                case "s", "skip":
                    breakpoints.leave(h.number, watcher: watcher)
                    args.output("left \(h.number) held (net.continue \(h.number), or it continues at its timeout)\n")
                default:
                    args.output("answer c, e, a or s\n")
                    continue
                }
            } catch let error as CommandError {
                // Released meanwhile (its timeout, another shell): say so, go on.
                args.output("\(error.message)\n")
            }
            return .answered
        }
    }

    /// Asks for each change in turn (empty keeps it); false when answers stopped.
    private func askEdits(_ h: Breakpoints.Held, _ args: Arguments) throws -> Bool {
        var method = "", url = "", status = 0, headers: [Header] = [], removed: [String] = [], body: [UInt8]?
        switch h.phase {
        case .request:
            guard let m = args.ask("method [\(h.request.method)]: "), let u = args.ask("url (empty keeps it): ") else { return false }
            method = m.trimmedSpaces
            url = u.trimmedSpaces
        case .response:
            guard let s = args.ask("status [\(h.response?.status ?? 0)]: ") else { return false }
            status = Int(s.trimmedSpaces) ?? 0
        }
        while true {
            guard let line = args.ask("header 'Name: value' to set, '-Name' to remove (empty when done): ") else { return false }
            let t = line.trimmedSpaces
            if t.isEmpty { break }
            if t.hasPrefix("-") { removed.append(String(t.dropFirst())); continue }
            headers += (try? InterceptCommands.headers(t)) ?? []
        }
        guard let b = args.ask("body (empty keeps it; @path reads a file): ") else { return false }
        if b.hasPrefix("@") {
            let read = RuleEngine.localFile(String(b.dropFirst()))
            if let problem = read.problem { args.output("\(problem); the body is kept\n") } else { body = read.response.body }
        } else if !b.isEmpty {
            body = Array(b.utf8)
        }
        var done: [String] = []
        try breakpoints.change(h.number) { held in
            done = try Self.apply(to: &held, method: method, url: url, headers: headers, removed: removed, body: body, status: status)
        }
        if !done.isEmpty { args.output("edited: \(done.joined(separator: ", "))\n") }
        return true
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (answers typed by people).
    var trimmedSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
