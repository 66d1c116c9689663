import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The net.* commands. Every view reads the redacted store, so no export
/// shows what another hides.
struct NetworkCommands {
    /// Opened by the first command that needs it; a command that does not
    /// touch the log (rules, limits, names) never opens the database.
    let state: FirstUse<LoggerState>

    static func filter(_ text: String) throws -> NetworkFilter {
        do { return try NetworkFilter(text) } catch { throw CommandError.invalidArgument("filter \"\(text)\": \(error)") }
    }

    func entry(_ id: UInt64) throws -> NetworkEntry {
        let logger = try state.get()
        guard let e = try logger.entry(id) else {
            throw CommandError("no entry #\(id) (the log holds \(try logger.count()) entries; ids are in net.list)", status: PINCER_NOT_FOUND)
        }
        return e
    }

    func register(with host: PluginHost) throws {
        let state = self.state, commands = self
        try host.addCommand("list(filter: string = \"\", width: i64 = 0) -> string", summary: "Logged requests, oldest first, optionally filtered",
                            details: NetworkCommands.filterHelp + "\n\n" + NetworkCommands.widthHelp, jsonResult: true) { args in
            let f = try NetworkCommands.filter(args[0].string)
            // The columns suffice for a row; with persistence on, pages of the database.
            var rows: [JSON] = []
            try state.get().forEach(f, detail: .columns) { rows.append($0.summaryJSON); return true }
            let width = args.wantsJSON ? nil : TerminalWidth.columns(requested: args[1].i64)
            return .string(JSON.array(width.map { NetworkEntry.fit(rows, width: $0) } ?? rows).serialized())
        }
        try host.addCommand("entry(id: u64) -> string", summary: "One entry, everything the log kept, as JSON", jsonResult: true) { args in
            .string(try commands.entry(args[0].u64).json.serialized())
        }
        try host.addCommand("show(id: u64, limit: i64 = 4096) -> string",
                            summary: "One entry as text: request, response, timings, what was redacted or withheld",
                            details: "Prints at most `limit` bytes of each body (default 4096) and says how much it left out; --limit 0 prints all of it. net.entry has everything as JSON.") { args in
            let id = args[0].u64, limit = args[1].i64
            guard limit >= 0 else { throw CommandError.invalidArgument("limit must be 0 (everything) or more") }
            return .string(TextExport.render(try commands.entry(id), bodyLimit: Int(clamping: limit),
                                             showAll: "net.show \(id) --limit 0 prints all of it"))
        }
        try host.addCommand("curl(id: u64) -> string", summary: "A cURL command that repeats the request (safe to paste into bash)") { args in
            .string(Curl.command(for: try commands.entry(args[0].u64)))
        }
        try host.addCommand("export-har(file: string, filter: string = \"\") -> string",
                            summary: "Write the (filtered) log as HAR 1.2, streamed to the file") { args in
            let f = try NetworkCommands.filter(args[1].string)
            let logger = try state.get()
            let count: Int, bytes: Int
            if let db = try logger.database() {
                // Streamed a page at a time from the database.
                try logger.flush()
                (count, bytes) = try HARFile.write(db, filter: f, to: args[0].string)
            } else {
                let entries = try logger.entries(f)
                bytes = try HARFile.write(entries, to: args[0].string)
                count = entries.count
            }
            return .string("wrote \(count) entr\(count == 1 ? "y" : "ies") (\(bytes) bytes) to \(args[0].string)")
        }
        try host.addCommand("import-har(file: string) -> string", summary: "Add a HAR file's entries to the log (redacted on the way in)",
                            changesState: true, jsonResult: true) { args in
            let path = args[0].string
            let logger = try state.get()
            // Streamed a batch at a time into the store (HAR.swift "Reading
            // streams"); acknowledged once written: the last batch of the
            // persisted log is committed before the command returns.
            // Each entry is redacted on the thread that read it.
            let store = logger.store
            let result = try logger.importing {
                try HARImport.readFile(path, prepare: store.prepare) { batch in store.add(prepared: batch) }
            }
            let ignored = result.ignored
            var fields: [(String, JSON)] = [
                ("file", .string(path)), ("imported", .int(Int64(result.read - ignored))),
                ("ignored", .int(Int64(ignored))), ("skipped", .int(Int64(result.skipped.count))),
                ("total", .int(Int64(result.read + result.skipped.count))),
            ]
            // Persistence is opt-in (the log may hold what a user would not
            // keep on disk), so an import never turns it on; it says where
            // the entries live instead, since a one-shot `pincer run` loses them.
            if logger.current.persistDays > 0, let file = logger.logFilePath {
                fields.append(("persisted", .bool(true)))
                fields.append(("logFile", .string(file)))
            } else {
                fields.append(("persisted", .bool(false)))
                fields.append(("note", .string(NetworkCommands.notPersistedNote)))
            }
            fields.append(("problems", .array(result.skipped.map { .object([("entry", .int(Int64($0.index))), ("offset", $0.offset.map { .int(Int64($0)) } ?? .null), ("reason", .string($0.reason))]) })))
            return .string(JSON.object(fields).serialized())
        }
        try host.addCommand("stats(filter: string = \"\") -> string", summary: "Traffic stats: failures, percentiles, slowest endpoints, hosts",
                            jsonResult: true) { args in
            let f = try NetworkCommands.filter(args[0].string)
            return .string(TrafficStats(try state.get().statsEntries(f)).json.serialized())
        }
        try host.addCommand("waterfall(file: string, filter: string = \"\") -> string",
                            summary: "Draw the (filtered) log as a waterfall picture: file.svg or file.png") { args in
            let f = try NetworkCommands.filter(args[1].string)
            let entries = try state.get().entries(f)
            try PictureFile.write(svg: Waterfall.svg(entries), to: args[0].string)
            return .string("wrote \(entries.count) request\(entries.count == 1 ? "" : "s") to \(args[0].string)")
        }
        try host.addCommand("clear() -> string", summary: "Remove every entry from the log", changesState: true) { _ in
            let n = try state.get().clear()
            return .string("removed \(n) entr\(n == 1 ? "y" : "ies")")
        }
        try host.addCommand("tail(filter: string = \"\", limit: i64 = 0) -> string",
                            summary: "Follow new entries live (this process and the persisted log); stop after `limit` if > 0",
                            details: "Prints one line per finished entry as it arrives; with --json, one net.list object per line (NDJSON). Ctrl-C stops it.",
                            concurrent: true) { args in
            let json = args.wantsJSON
            return try Tail(logger: state.get(), filter: NetworkCommands.filter(args[0].string), limit: Int(args[1].i64)).run(cancelled: { args.isCancelled }) { e in
                if json { args.output(json: e.summaryJSON) } else { args.output(Tail.line(e)) }
            }
        }
        try host.addCommand("ignore-host(host: string, path: string = \"\", methods: string = \"\") -> string",
                            summary: "Store nothing for this host (\"*.example.com\" for subdomains), optionally only under a path prefix and for some methods",
                            changesState: true) { args in
            try commands.addRule(.ignore, args)
        }
        try host.addCommand("metadata-only(host: string, path: string = \"\", methods: string = \"\") -> string",
                            summary: "Store no body bytes for this host (and path prefix, methods)", changesState: true) { args in
            try commands.addRule(.metadataOnly, args)
        }
        try host.addCommand("rules() -> string", summary: "Ignore and metadata-only rules, in order", jsonResult: true) { _ in
            .string(JSON.array(try state.get().current.rules.enumerated().map { i, r in
                .object([("index", .int(Int64(i + 1))), ("kind", .string(r.kind.rawValue)), ("host", .string(r.host)),
                         ("path", .string(r.pathPrefix)), ("methods", .string(r.methods.joined(separator: ",")))])
            }).serialized())
        }
        try host.addCommand("remove-rule(index: i32) -> string", summary: "Remove a rule by its net.rules index", changesState: true) { args in
            let i = Int(args[0].i32)
            try state.get().update { c in
                guard (1...c.rules.count).contains(i) else { throw CommandError.invalidArgument("no rule \(i) (there are \(c.rules.count))") }
                c.rules.remove(at: i - 1)
            }
            return .string("removed rule \(i)")
        }
        try host.addCommand("redact-name(name: string) -> string",
                            summary: "Redact the values of this name too (headers, parameters, cookies, JSON keys, text) from now on; persisted",
                            details: "The name is normalised as the built-in ones are (lowercase, percent-decoded, NFKC, letters and digits only), so X-Tenant-PIN also matches x_tenant_pin; it matches whole names, not parts. net.redact-names lists the added names; net.remove-redact-name removes one. Entries already in the log are not changed.",
                            changesState: true) { args in
            .string(try state.get().addRedactName(args[0].string))
        }
        try host.addCommand("redact-names() -> string", summary: "The names added with net.redact-name (on top of the defaults)", jsonResult: true) { _ in
            .string(JSON.array(try state.get().current.redactNames.map { name in
                .object([("name", .string(name)), ("normalized", .string(Redactor.normalize(name)))])
            }).serialized())
        }
        try host.addCommand("remove-redact-name(name: string) -> string", summary: "Stop redacting an added name (the defaults stay)",
                            changesState: true) { args in
            .string(try state.get().removeRedactName(args[0].string))
        }
        try host.addCommand("limits(entries: i64 = 0, body_cap: i64 = -1, budget: i64 = -1) -> string",
                            summary: "Show or set the entry limit (1-100000), the per-body cap and the total body budget (bytes)",
                            changesState: true, jsonResult: true) { args in
            let logger = try state.get()
            try logger.update { c in
                if args[0].i64 > 0 { c.limits.entryLimit = Int(args[0].i64) }
                if args[1].i64 >= 0 { c.limits.bodyCap = Int(args[1].i64) }
                if args[2].i64 >= 0 { c.limits.bodyBudget = Int(args[2].i64) }
                if args[0].i64 < 0 { throw CommandError.invalidArgument("entries must be 1...100000") }
            }
            let l = logger.current.limits
            return .string(JSON.object([("entries", .int(Int64(l.entryLimit))), ("bodyCap", .int(Int64(l.bodyCap))),
                                        ("budget", .int(Int64(l.bodyBudget))), ("held", .int(Int64(logger.store.count))),
                                        ("storedBodyBytes", .int(Int64(logger.store.storedBodyBytes)))]).serialized())
        }
        try host.addCommand("persist(days: i32) -> string",
                            summary: "Keep the (redacted) log in the state directory for this many days; 0 keeps it in memory only",
                            changesState: true) { args in
            let days = Int(args[0].i32)
            guard (0...3650).contains(days) else { throw CommandError.invalidArgument("days must be 0...3650") }
            let logger = try state.get()
            try logger.update { $0.persistDays = days }
            return .string(days == 0 ? "the log is kept in memory only" : "the log is kept in \(logger.logFilePath ?? "?") for \(days) day\(days == 1 ? "" : "s")")
        }
        try host.addCommand("open(file: string) -> string",
                            summary: "Load a log file in NDJSON (one entry's net.entry JSON per line, as network-log.ndjson was) into the log",
                            jsonResult: true) { args in
            let path = args[0].string
            let contents: LegacyLog.Contents
            do throws(LegacyLog.FileError) { contents = try LegacyLog.read(path) } catch { throw CommandError(error.description, status: PINCER_NOT_FOUND) }
            let logger = try state.get()
            try logger.importing { logger.store.restore(contents.entries) }
            return .string(JSON.object([("file", .string(path)), ("loaded", .int(Int64(contents.entries.count))),
                                        ("skipped", .array(contents.skipped.map { .object([("line", .int(Int64($0.line))), ("reason", .string($0.reason))]) }))]).serialized())
        }
    }

    static let notPersistedNote = "the log is not persisted: these entries live in this process only and are gone when it exits (after a one-shot `pincer run`, at once); to keep them, run `pincer run net.persist DAYS` first, then import again"

    static let widthHelp = """
        On a terminal the table fits its width (COLUMNS, else the terminal's); long URLs end in "…".
        --width N fits N columns anywhere, --width -1 never cuts; piped output and --json are never cut.
        """

    static let filterHelp = """
        Filters (mitmproxy style, DevTools keys as sugar):
          ~m RE method  ~u RE url  ~d RE host  ~c CODE status  ~h/~hq/~hs RE header  ~b/~bq/~bs RE body
          ~t RE content type  ~q pending  ~e transport error  ~s has response  ~a asset  ~all
          word          URL contains the word (plain text)
          method:POST  status-code:5xx  domain:*.example.com  larger-than:10k  mime-type:image/*
          scheme:https  has-response-header:Set-Cookie  is:running   (-key:value negates)
        Operators, tightest first: ( )  !  & (or just a space)  |
        Regexes and words ignore case; sizes are bytes, k = 1000, M = 1000000.
        Example: ~m POST & ~c 500 | !~d example.com
        """

    func addRule(_ kind: CaptureRule.Kind, _ args: Arguments) throws -> CommandValue {
        let host = args[0].string.lowercased()
        guard !host.isEmpty, !host.contains("/") else { throw CommandError.invalidArgument("host '\(args[0].string)' is not a host name") }
        let methods = args[2].string.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        let rule = CaptureRule(kind: kind, host: host, pathPrefix: args[1].string, methods: methods)
        try state.get().update { $0.rules.append(rule) }
        return .string("\(kind.rawValue): \(host)\(rule.pathPrefix)\(methods.isEmpty ? "" : " (\(rule.methods.joined(separator: ",")))")")
    }
}

/// HAR files on disk (read by HARImport.readFile, streamed): written as a
/// stream into a file that replaces the old one only when complete.
enum HARFile {
    /// The persisted log's entries matching `filter`: each is read, decoded
    /// and written as HAR in one pass on every processor, a page at a time.
    /// A read error stops it: then the file is not replaced. Returns the
    /// entries and bytes written.
    static func write(_ db: LogDatabase, filter: NetworkFilter, to path: String) throws -> (entries: Int, bytes: Int) {
        var written = 0, count = 0
        _ = try TextFile.writeAtomically(to: path) { write in
            func sink(_ chunk: [UInt8]) throws {
                try write(chunk)
                written += chunk.count
            }
            var document = HARExport.Document(creator: (name: "pincer", version: "0.1.0"), chunkSize: HARExport.fileChunkSize)
            do {
                try db.forEachPage(filter: filter, transform: HARExport.entryBytes) { page in
                    for bytes in page { try document.append(entry: bytes, to: sink) }
                    count += page.count
                }
            } catch let error as CommandError {
                throw error  // the file's own write failed: it says so
            } catch {
                throw CommandError("\(path) not written: \(error)")  // reading the log failed
            }
            try document.finish(to: sink)
        }
        return (count, written)
    }

    static func write(_ entries: [NetworkEntry], to path: String) throws -> Int {
        try HARExport.writeFile(entries, creator: (name: "pincer", version: "0.1.0"), to: path)
    }
}

/// The width `net.list` fits its table to, or nil for no cutting.
enum TerminalWidth {
    /// `requested` > 0: that; < 0: never cut; 0: the terminal's width when
    /// standard output is one (COLUMNS when set, else the tty's, else 80).
    static func columns(requested: Int64) -> Int? {
        if requested > 0 { return Int(clamping: requested) }
        if requested < 0 || isatty(STDOUT_FILENO) != 1 { return nil }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let n = Int(text), n > 0 { return n }
        var size = winsize()
        if withUnsafeMutablePointer(to: &size, { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) }) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return 80
    }
}
