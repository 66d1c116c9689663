import PincerHost
// Text and JSON output of pincer-bench.

enum Build {
    #if DEBUG
    static let isDebug = true
    #else
    static let isDebug = false
    #endif
    static var name: String { isDebug ? "debug" : "release" }
    static let debugWarning = "warning: pincer-bench was built in debug mode; its figures are not representative. Run: swift build -c release && .build/release/pincer-bench"
}

struct Report: Sendable {
    var dispatch: DispatchFigures?
    var dispatchError: String?
    var startup: StartupFigures?
    var startupError: String?
    var flags: FlagsFigures?
    var flagsError: String?
    var net: NetFigures?
    var intercept: InterceptFigures?
    var interceptError: String?
    var proxy: ProxyFigures?
    var proxyError: String?
    var l10n: L10nFigures?
    var l10nError: String?
    var a11y: A11yFigures?
    var a11yError: String?
    var loc: LocFigures?
    var locError: String?
    var db: DatabaseFigures?
    var dbError: String?
    var rpc: RPCFigures?
    var rpcError: String?

    /// Every part that ran met its target, and none failed to measure.
    var passed: Bool {
        dispatchError == nil && interceptError == nil && (intercept?.passed ?? true) && proxyError == nil && (proxy?.passed ?? true) && startupError == nil && flagsError == nil && l10nError == nil && a11yError == nil && locError == nil && dbError == nil && rpcError == nil
            && (dispatch?.passed ?? true) && (startup?.passed ?? true) && (flags?.passed ?? true) && (net?.passed ?? true)
            && (l10n?.passed ?? true) && (a11y?.passed ?? true) && (loc?.passed ?? true) && (db?.passed ?? true)
            && (rpc?.passed ?? true)
    }

    static func verdict(_ pass: Bool) -> String { pass ? "PASS" : "FAIL" }

    func text() -> String {
        var lines: [String] = []
        lines.append("pincer-bench (\(Build.name) build): figures are ratios against baselines measured in this run")
        if Build.isDebug { lines.append("  ** debug build: figures are not representative; use swift build -c release **") }
        func row(_ part: String, _ label: String, _ value: String, _ note: String = "") -> String {
            let base = Format.padded(part, 10) + Format.padded(label, 40) + Format.leftPadded(value, 18)
            return note.isEmpty ? base : base + "   " + note
        }
        if let d = dispatch {
            lines.append("")
            lines.append(row("dispatch", "prepared call of bench.add, dlopen'ed .so", Format.rate(d.preparedRate),
                             "(\(Format.fixed(d.preparedNanoseconds, 1)) ns/call: libffi, the plugin's lock, the result)"))
            lines.append(row("", "direct call, same function (baseline)", Format.rate(d.directRate),
                             "(\(Format.fixed(d.directNanoseconds, 2)) ns/call: bench_add in the same .so via a pointer)"))
            lines.append(row("", "ratio direct/dispatch", Format.ratio(d.ratio),
                             "target: >= \(Format.fixed(DispatchFigures.targetCallsPerSecond / 1e6, 1)) M calls/s  \(Report.verdict(d.passed))"))
            lines.append(row("", "info: prepared call, devopts.add", Format.rate(d.builtinRate),
                             "(\(Format.fixed(d.builtinNanoseconds, 1)) ns/call, libpincer-plugin-devopts.so)"))
            lines.append(row("", "info: Command.invoke (convert+prepare)", Format.rate(d.perCallRate),
                             "(\(Format.fixed(d.perCallNanoseconds, 1)) ns/call, \(Format.ratio(d.perCallNanoseconds / d.preparedNanoseconds)) a prepared call)"))
            lines.append(row("", "info: plain C call bench_add_direct", Format.rate(d.plainRate),
                             "(\(Format.fixed(d.plainNanoseconds, 2)) ns/call)"))
            lines.append("          best of \(d.rounds) rounds: \(d.preparedCalls) prepared, \(d.directCalls) direct, \(d.perCallCalls) Command.invoke calls per round;")
            lines.append("          plugin built at run time: \(d.buildCommand)")
        } else if let e = dispatchError {
            lines.append("")
            lines.append(row("dispatch", "error: \(e)", "", "FAIL"))
        }
        if let s = startup {
            lines.append("")
            let pm = "median \(Format.milliseconds(s.pincer.median))", hm = "median \(Format.milliseconds(s.hello.median))"
            lines.append(row("startup", "pincer commands --json", pm, "min \(Format.milliseconds(s.pincer.minimum))"))
            lines.append(row("", "bench-hello (baseline)", hm, "min \(Format.milliseconds(s.hello.minimum))"))
            lines.append(row("", "ratio pincer/hello (medians)", Format.ratio(s.ratio),
                             "target: <= \(Format.fixed(StartupFigures.targetRatio, 1))x  \(Report.verdict(s.loadedEverything && s.ratio <= StartupFigures.targetRatio))"))
            lines.append(row("", "info: ratio of minimums", Format.ratio(s.minimumRatio)))
            let plugins = "\(s.loadedPlugins.count) of \(s.builtinPlugins.count) built-in plugins loaded, \(s.commandCount) of \(s.expectedCommandCount) commands listed"
            lines.append("          \(s.runs) runs each, alternating; \(plugins)")
            if let why = s.incompleteReason {
                lines.append("          FAIL: not the full start-up: \(why)")
            }
            if let c = s.scale {
                func median(_ p: ProgramFigures) -> String { "median \(Format.milliseconds(p.median))" }
                lines.append(row("", "commands --json, empty state", median(c.emptyState), "min \(Format.milliseconds(c.emptyState.minimum))"))
                lines.append(row("", "commands --json, large state", median(c.largeState), "min \(Format.milliseconds(c.largeState.minimum))"))
                lines.append(row("", "ratio large/empty state (medians)", Format.ratio(c.stateRatio),
                                 "target: <= \(Format.fixed(StartupScaleFigures.stateTargetRatio, 1))x  \(Report.verdict(c.stateRatio <= StartupScaleFigures.stateTargetRatio))"))
                lines.append("          large state: \(c.largeStateContents)")
                lines.append(row("", "commands --json, +1,000 plugins", median(c.manyPlugins), "min \(Format.milliseconds(c.manyPlugins.minimum))"))
                lines.append(row("", "ratio +1,000 plugins/built-ins", Format.ratio(c.pluginsRatio),
                                 "target: <= \(Format.fixed(StartupScaleFigures.pluginsTargetRatio, 1))x  \(Report.verdict(c.pluginsRatio <= StartupScaleFigures.pluginsTargetRatio && c.listedEverything))"))
                lines.append(row("", "info: first start, +1,000 (scan)", Format.milliseconds(Double(c.coldScanNanoseconds))))
                lines.append(row("", "info: +1,000, registry off", median(c.manyPluginsEager), "(every plugin loaded in process)"))
                lines.append("          \(c.runs) runs each, rotating; registries warm; \(c.manyPluginsCommands) commands listed with the plugins (\(c.builtinCommands) built-in)")
            } else if let e = s.scaleError {
                lines.append(row("", "large state / 1,000 plugins: error: \(e)", "", "FAIL"))
            }
        } else if let e = startupError {
            lines.append("")
            lines.append(row("startup", "error: \(e)", "", "FAIL"))
        }
        if let f = flags {
            lines.append("")
            func lookups(_ rate: Double) -> String { Format.rate(rate, unit: "lookups") }
            let threads = "\(f.threads) thread\(f.threads == 1 ? "" : "s")"
            lines.append(row("flags", "get_bool via pincer.flags/1, \(threads)", lookups(f.flagsRate)))
            lines.append(row("", "[String: Bool] lookup (baseline)", lookups(f.dictionaryRate)))
            lines.append(row("", "ratio flags/dictionary", Format.ratio(f.ratio),
                             "target: >= \(Format.fixed(FlagsFigures.targetRatio, 2))x  \(Report.verdict(f.passed))"))
            lines.append(row("", "info: get_bool, 1 thread", lookups(f.singleFlagsRate),
                             "(\(Format.fixed(f.singleFlagsNanosecondsPerLookup, 1)) ns/lookup)"))
            lines.append(row("", "info: [String: Bool], 1 thread", lookups(f.singleDictionaryRate),
                             "(\(Format.fixed(f.singleDictionaryNanosecondsPerLookup, 1)) ns/lookup)"))
            lines.append(row("", "info: ratio flags/dictionary, 1 thread", Format.ratio(f.singleRatio)))
            lines.append("          best of \(f.rounds) rounds: \(threads) x \(f.lookupsPerThread) lookups (and 1 thread alone) on \(f.processors) CPU\(f.processors == 1 ? "" : "s");")
            let long = FlagsBench.longKeyBytes
            lines.append("          \(f.keyCount) bool flags cycled in order (\(f.longKeyCount) of them with \(long.lowerBound)-\(long.upperBound) byte keys), \(f.overrideCount) overridden")
        } else if let e = flagsError {
            lines.append("")
            lines.append(row("flags", "error: \(e)", "", "FAIL"))
        }
        if let n = net {
            lines.append("")
            lines += netText(n, row: row)
        }
        // The parts with their own text functions: their figures, or their error.
        func part<Figures>(_ name: String, _ figures: Figures?, _ error: String?,
                           _ text: (Figures, (String, String, String, String) -> String) -> [String]) {
            if let figures {
                lines.append("")
                lines += text(figures, row)
            } else if let error {
                lines.append("")
                lines.append(row(name, "error: \(error)", "", "FAIL"))
            }
        }
        part("intercept", intercept, interceptError) { i, row in
            [row("intercept", "request, \(i.rules) rules, none matching", "\(Format.fixed(i.rulesNanoseconds / 1000, 2)) us",
                 "(intercept_request + finish through pincer.network/1, in process)"),
             row("", "request, no rules (baseline)", "\(Format.fixed(i.noRulesNanoseconds / 1000, 2)) us", "(the same call; the rules file checked)"),
             row("", "added by \(i.rules) rules", "\(Format.fixed(i.addedMicroseconds, 2)) us",
                 "ratio \(Format.ratio(i.ratio)); target: <= \(Format.fixed(InterceptFigures.targetAddedMicroseconds, 0)) us  \(Report.verdict(i.passed))"),
             row("", "info: the matching mock answered", "\(Format.fixed(i.matchingNanoseconds / 1000, 2)) us", "(its response built in C memory)"),
             row("", "info: \(i.rules) path: rules, no domain", "\(Format.fixed(i.pathIndexedNanoseconds / 1000, 2)) us", "(path:/vN/items/*: indexed by first segment)"),
             row("", "info: \(i.rules) rules no index narrows", "\(Format.fixed(i.unindexedNanoseconds / 1000, 2)) us", "(path:*/items/N: each is matched in turn)")]
        }
        part("proxy", proxy, proxyError) { proxyText($0, row: $1) }
        part("l10n", l10n, l10nError) { l10nText($0, row: $1) }
        part("a11y", a11y, a11yError) { a11yText($0, row: $1) }
        part("loc", loc, locError) { locText($0, row: $1) }
        part("db", db, dbError) { dbText($0, row: $1) }
        part("rpc", rpc, rpcError) { rpcText($0, row: $1) }
        lines.append("")
        lines.append("result    \(passed ? "all targets met" : "target missed")")
        return lines.joined(separator: "\n") + "\n"
    }

    func json() -> String {
        var members: [(String, JSON)] = [("build", .string(Build.name))]
        if Build.isDebug { members.append(("warning", .string(Build.debugWarning))) }
        if let d = dispatch {
            members.append(("dispatch", .object([
                ("library", .string(d.library)),
                ("build_command", .string(d.buildCommand)),
                ("prepared_calls_per_second", .rounded(d.preparedRate, 0)),
                ("prepared_ns_per_call", .rounded(d.preparedNanoseconds, 3)),
                ("direct_calls_per_second", .rounded(d.directRate, 0)),
                ("direct_ns_per_call", .rounded(d.directNanoseconds, 3)),
                ("ratio_direct_over_dispatch", .rounded(d.ratio, 3)),
                ("command_invoke_calls_per_second", .rounded(d.perCallRate, 0)),
                ("command_invoke_ns_per_call", .rounded(d.perCallNanoseconds, 3)),
                ("builtin_devopts_calls_per_second", .rounded(d.builtinRate, 0)),
                ("builtin_devopts_ns_per_call", .rounded(d.builtinNanoseconds, 3)),
                ("plain_c_calls_per_second", .rounded(d.plainRate, 0)),
                ("plain_c_ns_per_call", .rounded(d.plainNanoseconds, 3)),
                ("rounds", .int(Int64(d.rounds))),
                ("prepared_calls_per_round", .int(Int64(d.preparedCalls))),
                ("direct_calls_per_round", .int(Int64(d.directCalls))),
                ("command_invoke_calls_per_round", .int(Int64(d.perCallCalls))),
                ("target_calls_per_second", .rounded(DispatchFigures.targetCallsPerSecond, 0)),
                ("pass", .bool(d.passed)),
            ])))
        } else if let e = dispatchError {
            members.append(("dispatch", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let s = startup {
            func program(_ p: ProgramFigures) -> JSON {
                .object([
                    ("command", .string(p.command)),
                    ("median_ms", .rounded(p.median / 1e6, 3)),
                    ("min_ms", .rounded(p.minimum / 1e6, 3)),
                    ("max_ms", .rounded(p.maximum / 1e6, 3)),
                    ("samples_ms", .array(p.samples.map { .rounded(Double($0) / 1e6, 3) })),
                ])
            }
            members.append(("startup", .object([
                ("runs", .int(Int64(s.runs))),
                ("pincer", program(s.pincer)),
                ("hello", program(s.hello)),
                ("ratio_median_pincer_over_hello", .rounded(s.ratio, 3)),
                ("ratio_min_pincer_over_hello", .rounded(s.minimumRatio, 3)),
                ("builtin_plugins", .array(s.builtinPlugins.map { .string($0) })),
                ("loaded_plugins", .array(s.loadedPlugins.map { .string($0) })),
                ("refused_plugins", .array(s.refusedPlugins.map { .string($0) })),
                ("commands", .int(Int64(s.commandCount))),
                ("expected_commands", .int(Int64(s.expectedCommandCount))),
                ("loaded_everything", .bool(s.loadedEverything)),
                ("incomplete_reason", s.incompleteReason.map { .string($0) } ?? .null),
                ("target_ratio", .double(StartupFigures.targetRatio)),
                ("scale", s.scale.map { c in
                    .object([
                        ("empty_state", program(c.emptyState)), ("large_state", program(c.largeState)),
                        ("large_state_contents", .string(c.largeStateContents)),
                        ("ratio_median_large_over_empty_state", .rounded(c.stateRatio, 3)),
                        ("target_state_ratio", .double(StartupScaleFigures.stateTargetRatio)),
                        ("many_plugins", program(c.manyPlugins)), ("many_plugins_commands", .int(Int64(c.manyPluginsCommands))),
                        ("builtin_commands", .int(Int64(c.builtinCommands))),
                        ("ratio_median_many_plugins_over_builtins", .rounded(c.pluginsRatio, 3)),
                        ("target_plugins_ratio", .double(StartupScaleFigures.pluginsTargetRatio)),
                        ("cold_scan_ms", .rounded(Double(c.coldScanNanoseconds) / 1e6, 3)),
                        ("many_plugins_registry_off", program(c.manyPluginsEager)),
                        ("pass", .bool(c.passed)),
                    ])
                } ?? (s.scaleError.map { .object([("error", .string($0)), ("pass", .bool(false))]) } ?? .null)),
                ("pass", .bool(s.passed)),
            ])))
        } else if let e = startupError {
            members.append(("startup", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let f = flags {
            members.append(("flags", .object([
                ("threads", .int(Int64(f.threads))),
                ("lookups_per_thread", .int(Int64(f.lookupsPerThread))),
                ("rounds", .int(Int64(f.rounds))),
                ("keys", .int(Int64(f.keyCount))),
                ("long_keys", .int(Int64(f.longKeyCount))),
                ("overridden", .int(Int64(f.overrideCount))),
                ("processors", .int(Int64(f.processors))),
                ("flag_lookups_per_second", .rounded(f.flagsRate, 0)),
                ("dictionary_lookups_per_second", .rounded(f.dictionaryRate, 0)),
                ("ratio_flags_over_dictionary", .rounded(f.ratio, 3)),
                ("single_thread_flag_lookups_per_second", .rounded(f.singleFlagsRate, 0)),
                ("single_thread_flag_ns_per_lookup", .rounded(f.singleFlagsNanosecondsPerLookup, 3)),
                ("single_thread_dictionary_lookups_per_second", .rounded(f.singleDictionaryRate, 0)),
                ("single_thread_dictionary_ns_per_lookup", .rounded(f.singleDictionaryNanosecondsPerLookup, 3)),
                ("single_thread_ratio_flags_over_dictionary", .rounded(f.singleRatio, 3)),
                ("target_ratio", .double(FlagsFigures.targetRatio)),
                ("pass", .bool(f.passed)),
            ])))
        } else if let e = flagsError {
            members.append(("flags", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let n = net { members.append(("net", netJSON(n))) }
        if let i = intercept {
            members.append(("intercept", .object([
                ("rules", .int(Int64(i.rules))), ("requests_per_round", .int(Int64(i.requests))),
                ("no_rules_us", .rounded(i.noRulesNanoseconds / 1000, 3)), ("rules_us", .rounded(i.rulesNanoseconds / 1000, 3)),
                ("added_us", .rounded(i.addedMicroseconds, 3)), ("ratio", .rounded(i.ratio, 3)),
                ("matching_mock_us", .rounded(i.matchingNanoseconds / 1000, 3)), ("path_indexed_rules_us", .rounded(i.pathIndexedNanoseconds / 1000, 3)), ("unindexed_rules_us", .rounded(i.unindexedNanoseconds / 1000, 3)),
                ("target_added_us", .double(InterceptFigures.targetAddedMicroseconds)), ("pass", .bool(i.passed)),
            ])))
        } else if let e = interceptError {
            members.append(("intercept", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let p = proxy {
            members.append(("proxy", proxyJSON(p)))
        } else if let e = proxyError {
            members.append(("proxy", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let l = l10n {
            members.append(("l10n", l10nJSON(l)))
        } else if let e = l10nError {
            members.append(("l10n", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let a = a11y {
            members.append(("a11y", a11yJSON(a)))
        } else if let e = a11yError {
            members.append(("a11y", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let l = loc {
            members.append(("loc", locJSON(l)))
        } else if let e = locError {
            members.append(("loc", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let d = db {
            members.append(("db", dbJSON(d)))
        } else if let e = dbError {
            members.append(("db", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let r = rpc {
            members.append(("rpc", rpcJSON(r)))
        } else if let e = rpcError {
            members.append(("rpc", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        members.append(("pass", .bool(passed)))
        return JSON.object(members).serialized(pretty: true) + "\n"
    }
}

extension Report {
    func netText(_ n: NetFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        var part = "net"
        func add(_ label: String, _ value: String, _ note: String = "") {
            lines.append(row(part, label, value, note))
            part = ""
        }
        func requests(_ rate: Double) -> String { "\(Format.short(rate)) requests/s" }
        func appends(_ rate: Double) -> String { "\(Format.short(rate / 1000)) k appends/s" }
        func seconds(_ s: Double) -> String { "\(Format.fixed(s * 1000, 1)) ms" }
        if let c = n.capture {
            add("GET with capture (pincer.network/1)", requests(c.captureRate), "(\(Format.fixed(c.captureMilliseconds, 3)) ms/request)")
            add("GET, default configuration (baseline)", requests(c.baselineRate), "(\(Format.fixed(c.baselineMilliseconds, 3)) ms/request)")
            add("ratio capture/baseline (time)", Format.ratio(c.ratio),
                "target: <= \(Format.fixed(CaptureFigures.targetRatio, 1))x  \(Report.verdict(c.passed))")
            add("info: capture protocol, no recording", requests(c.pipelineRate),
                "(\(Format.fixed(c.pipelineMilliseconds, 3)) ms/request, \(Format.ratio(c.pipelineRatio)) baseline)")
            lines.append("          best of \(c.rounds) rounds: \(c.requests) sequential GETs each to a keep-alive loopback server")
            lines.append("          (\(c.serverRequests) answered on \(c.serverConnections) connection\(c.serverConnections == 1 ? "" : "s")); the log held the last \(c.loggedEntries) (bound \(c.entryLimit)), checked")
        }
        if let h = n.har {
            if !lines.isEmpty { lines.append("") }
            let target = "target: < \(Format.fixed(HARFigures.targetSeconds * 1000, 0)) ms"
            add("HAR export, \(h.entries) entries, net.export-har", seconds(h.exportSeconds),
                "\(target)  \(Report.verdict(h.exportSeconds < HARFigures.targetSeconds))")
            add("HAR import of that file (read+parse)", seconds(h.importSeconds),
                "\(target)  \(Report.verdict(h.importSeconds < HARFigures.targetSeconds && h.importedEntries == h.entries))")
            add("info: HAR file size", "\(Format.fixed(Double(h.fileBytes) / 1_048_576, 2)) MiB",
                "(\(Format.fixed(Double(h.fileBytes) / Double(max(h.entries, 1)), 0)) bytes/entry)")
            add("info: store.add of the entries (redact)", seconds(Double(h.addNanoseconds) / 1e9))
            lines.append("          export: the command's atomic write (stream to a temporary file, fsync, rename); import: read + parse, no store")
            lines.append("          best of \(h.rounds) rounds; \(h.failedEntries) failed and \(h.binaryEntries) binary entries; import gave back \(h.importedEntries), checked")
        }
        if let a = n.append {
            if !lines.isEmpty { lines.append("") }
            add("info: append, full at bound \(a.bound)", appends(a.atBoundRate),
                "(\(Format.fixed(1e9 / a.atBoundRate / 1000, 2)) us/append, each evicts)")
            add("info: append, empty, bound \(a.largeBound)", appends(a.belowBoundRate),
                "(\(Format.fixed(1e9 / a.belowBoundRate / 1000, 2)) us/append, no eviction)")
            add("info: ratio at bound/below bound (time)", Format.ratio(a.ratio), a.verdict)
            add("info: append, full at bound \(a.largeBound)", appends(a.largeAtBoundRate),
                "(\(Format.fixed(1e9 / a.largeAtBoundRate / 1000, 2)) us/append, \(Format.ratio(a.largeRatio)) below bound)")
            lines.append("          best of \(a.rounds) rounds: \(a.appends) begin+complete of a small GET exchange each, ids and count checked")
        }
        if let s = n.speed {
            if !lines.isEmpty { lines.append("") }
            func mib(_ b: Int) -> String { "\(Format.fixed(Double(b) / 1_048_576, 0)) MiB" }
            let small = s.small, large = s.large
            add("pincer net.import-har, \(small.entries) x ~\(small.fileBytes / small.entries) B (whole command)", seconds(small.importCommand.seconds),
                "target: <= \(Format.fixed(HARSpeedFigures.smallTargetSeconds * 1000, 0)) ms  \(Report.verdict(small.importCommand.seconds <= HARSpeedFigures.smallTargetSeconds))")
            add("pincer net.export-har of them (whole command)", seconds(small.exportCommand.seconds),
                "target: <= \(Format.fixed(HARSpeedFigures.smallTargetSeconds * 1000, 0)) ms  \(Report.verdict(small.exportCommand.seconds <= HARSpeedFigures.smallTargetSeconds))")
            add("info: in process, stream + store.add", seconds(Double(small.inProcessNanoseconds) / 1e9), "(no persistence, no process start)")
            add("pincer net.import-har, \(large.entries) entries, \(mib(large.fileBytes))", seconds(large.importCommand.seconds),
                large.pythonRatio.map { "\(Format.ratio($0)) python; target: <= \(Format.fixed(HARSpeedFigures.pythonTargetRatio, 1))x  \(Report.verdict($0 <= HARSpeedFigures.pythonTargetRatio))" } ?? "no python baseline  FAIL")
            add("  peak RSS of that process (wait4)", mib(large.importCommand.maxRSSBytes),
                "\(Format.fixed(large.importRSSRatio, 2))x the file; target: <= \(Format.fixed(HARSpeedFigures.rssTargetRatio, 1))x  \(Report.verdict(large.importRSSRatio <= HARSpeedFigures.rssTargetRatio))")
            add("pincer net.export-har of them (whole command)", seconds(large.exportCommand.seconds),
                large.exportPythonRatio.map { "\(Format.ratio($0)) python; target: <= \(Format.fixed(HARSpeedFigures.pythonTargetRatio, 1))x  \(Report.verdict($0 <= HARSpeedFigures.pythonTargetRatio))" } ?? "")
            add("  peak RSS of that process (wait4)", mib(large.exportCommand.maxRSSBytes), "(information)")
            if let p = large.python {
                add("python3 json.load + json.dump (baseline)", seconds(p.seconds), "(peak RSS \(mib(p.maxRSSBytes)))")
            } else if let e = s.pythonError {
                add("python3 baseline: \(e)", "", "FAIL")
            }
            add("info: in process, stream + store.add", seconds(Double(large.inProcessNanoseconds) / 1e9), "(no persistence, no process start)")
            add("holding \(s.heldEntries) entries, RSS growth", mib(s.heldRSS - s.emptyRSS),
                "\(Format.fixed(s.holdRatio, 2))x the \(mib(s.storedBytes)) stored (\(mib(s.storedBodyBytes)) bodies); target: <= \(Format.fixed(HARSpeedFigures.holdTargetRatio, 1))x  \(Report.verdict(s.holdRatio <= HARSpeedFigures.holdTargetRatio))")
            add("after net.clear, RSS above the empty log", mib(s.clearedExcess),
                "target: <= \(mib(HARSpeedFigures.clearTargetBytes))  \(Report.verdict(s.clearedExcess <= HARSpeedFigures.clearTargetBytes))")
            lines.append("          whole command: `pincer --state-dir D run net.import-har FILE` with net.limits --entries N and net.persist 7 set")
            lines.append("          (\(HARSpeedBench.smallEntries): median of \(HARSpeedBench.smallRuns) runs, each import into a new state directory; \(HARSpeedBench.largeEntries): one run)")
            lines.append("          before (so with redaction and the persisted log), spawn to wait4; export-har is a new process, so it")
            lines.append("          includes loading the persisted log; python: json.load + json.dump of the same file, one process")
        }
        for (what, message) in n.errors {
            if !lines.isEmpty { lines.append("") }
            add("error: \(what): \(message)", "", "FAIL")
        }
        return lines
    }

    func netJSON(_ n: NetFigures) -> JSON {
        var members: [(String, JSON)] = []
        if let c = n.capture {
            members.append(("capture", .object([
                ("requests", .int(Int64(c.requests))),
                ("rounds", .int(Int64(c.rounds))),
                ("capture_requests_per_second", .rounded(c.captureRate, 1)),
                ("capture_ms_per_request", .rounded(c.captureMilliseconds, 4)),
                ("baseline_requests_per_second", .rounded(c.baselineRate, 1)),
                ("baseline_ms_per_request", .rounded(c.baselineMilliseconds, 4)),
                ("ratio_capture_over_baseline", .rounded(c.ratio, 3)),
                ("no_recording_requests_per_second", .rounded(c.pipelineRate, 1)),
                ("no_recording_ms_per_request", .rounded(c.pipelineMilliseconds, 4)),
                ("ratio_no_recording_over_baseline", .rounded(c.pipelineRatio, 3)),
                ("logged_entries", .int(Int64(c.loggedEntries))),
                ("entry_limit", .int(Int64(c.entryLimit))),
                ("server_requests", .int(Int64(c.serverRequests))),
                ("server_connections", .int(Int64(c.serverConnections))),
                ("target_ratio", .double(CaptureFigures.targetRatio)),
                ("pass", .bool(c.passed)),
            ])))
        } else if let e = n.captureError {
            members.append(("capture", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let h = n.har {
            members.append(("har", .object([
                ("entries", .int(Int64(h.entries))),
                ("rounds", .int(Int64(h.rounds))),
                ("file_bytes", .int(Int64(h.fileBytes))),
                ("export_seconds", .rounded(h.exportSeconds, 4)),
                ("import_seconds", .rounded(h.importSeconds, 4)),
                ("imported_entries", .int(Int64(h.importedEntries))),
                ("store_add_seconds", .rounded(Double(h.addNanoseconds) / 1e9, 4)),
                ("failed_entries", .int(Int64(h.failedEntries))),
                ("binary_entries", .int(Int64(h.binaryEntries))),
                ("target_seconds", .double(HARFigures.targetSeconds)),
                ("pass", .bool(h.passed)),
            ])))
        } else if let e = n.harError {
            members.append(("har", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let s = n.speed {
            func size(_ z: HARSpeedFigures.Size) -> JSON {
                .object([
                    ("entries", .int(Int64(z.entries))), ("file_bytes", .int(Int64(z.fileBytes))),
                    ("import_command_seconds", .rounded(z.importCommand.seconds, 4)),
                    ("import_command_max_rss_bytes", .int(Int64(z.importCommand.maxRSSBytes))),
                    ("import_rss_over_file", .rounded(z.importRSSRatio, 3)),
                    ("export_command_seconds", .rounded(z.exportCommand.seconds, 4)),
                    ("export_command_max_rss_bytes", .int(Int64(z.exportCommand.maxRSSBytes))),
                    ("exported_bytes", .int(Int64(z.exportedBytes))),
                    ("python_seconds", z.python.map { .rounded($0.seconds, 4) } ?? .null),
                    ("python_max_rss_bytes", z.python.map { .int(Int64($0.maxRSSBytes)) } ?? .null),
                    ("import_over_python", z.pythonRatio.map { .rounded($0, 3) } ?? .null),
                    ("export_over_python", z.exportPythonRatio.map { .rounded($0, 3) } ?? .null),
                    ("in_process_import_seconds", .rounded(Double(z.inProcessNanoseconds) / 1e9, 4)),
                ])
            }
            members.append(("har_at_size", .object([
                ("small", size(s.small)), ("large", size(s.large)),
                ("held_entries", .int(Int64(s.heldEntries))), ("stored_bytes", .int(Int64(s.storedBytes))),
                ("stored_body_bytes", .int(Int64(s.storedBodyBytes))), ("empty_rss_bytes", .int(Int64(s.emptyRSS))),
                ("held_rss_bytes", .int(Int64(s.heldRSS))), ("cleared_rss_bytes", .int(Int64(s.clearedRSS))),
                ("hold_rss_over_stored", .rounded(s.holdRatio, 3)),
                ("python_error", s.pythonError.map(JSON.string) ?? .null),
                ("pass", .bool(s.passed)),
            ])))
        } else if let e = n.speedError {
            members.append(("har_at_size", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let a = n.append {
            members.append(("append", .object([
                ("appends", .int(Int64(a.appends))),
                ("rounds", .int(Int64(a.rounds))),
                ("bound", .int(Int64(a.bound))),
                ("large_bound", .int(Int64(a.largeBound))),
                ("at_bound_appends_per_second", .rounded(a.atBoundRate, 0)),
                ("below_bound_appends_per_second", .rounded(a.belowBoundRate, 0)),
                ("large_at_bound_appends_per_second", .rounded(a.largeAtBoundRate, 0)),
                ("ratio_at_bound_over_below_bound", .rounded(a.ratio, 3)),
                ("ratio_large_at_bound_over_below_bound", .rounded(a.largeRatio, 3)),
                ("info", .bool(true)),
            ])))
        } else if let e = n.appendError {
            members.append(("append", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        members.append(("pass", .bool(n.passed)))
        return .object(members)
    }
}

extension Report {
    func l10nText(_ l: L10nFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        var part = "l10n"
        func add(_ label: String, _ value: String, _ note: String = "") {
            lines.append(row(part, label, value, note))
            part = ""
        }
        func strings(_ rate: Double) -> String {
            rate >= 1e6 ? Format.rate(rate, unit: "strings") : "\(Format.short(rate / 1000)) k strings/s"
        }
        func perString(_ us: Double) -> String { "(\(Format.fixed(us, us < 10 ? 2 : 1)) us/string)" }
        add("pseudo-localise, all modes (Pincer)", strings(l.transformRate), perString(l.transformMicroseconds))
        if let b = l.baseline {
            add("pseudol10nutil \(b.version) (baseline)", strings(b.rate), perString(b.microseconds))
            if let ratio = l.ratio {
                add("ratio Pincer/pseudol10nutil (rate)", Format.ratio(ratio), "higher is better  \(Report.verdict(l.passed))")
            }
        }
        if let c = l.catalog {
            add("info: .po read + rewrite, whole catalog", strings(c.rate),
                "(\(Format.fixed(Double(c.nanoseconds) / 1e6, 0)) ms in process, \(Format.fixed(c.readShare * 100, 0))% reading)")
        }
        if let c = l.catalogCommand {
            func mib(_ b: Int) -> String { "\(Format.fixed(Double(b) / 1_048_576, 1)) MiB" }
            add("whole command: pincer run l10n.catalog", "\(Format.fixed(c.seconds, 2)) s",
                "(peak RSS \(mib(c.peakRSSBytes)); l10n.modes: \(mib(c.idleRSSBytes)))")
            add("  its peak RSS / the .po file", Format.ratio(c.ratio),
                "target <= \(Format.short(CatalogCommandFigures.targetRatio))x  \(Report.verdict(c.passed))")
        }
        lines.append("          best of \(l.rounds) rounds each side: \(l.strings) strings of \(l.shortestString)-\(l.longestString) characters (\(l.stringsWithPlaceholders) with placeholders,")
        lines.append("          \(l.nonASCIIStrings) with non-ASCII), a \(Format.fixed(Double(l.catalogBytes) / 1_048_576, 1)) MiB .po catalog; \(l.problems) placeholder problems, \(l.unchanged) unchanged\(l.baseline.map { " (pseudol10nutil: \($0.unchanged) unchanged, Python \($0.python))" } ?? "")")
        if let c = l.catalog {
            lines.append("          catalog path: \(c.rounds == 1 ? "1 round" : "best of \(c.rounds) rounds"); the rewritten catalog read back, every msgstr the transform of its msgid, checked")
        }
        if let c = l.catalogCommand {
            lines.append("          command: spawn to wait4 (through a forking python3), \(Format.fixed(Double(c.outputBytes) / 1_048_576, 1)) MiB written, byte for byte the in-process output")
        }
        if let first = l.firstProblem { add("first problem: \(first)", "", "FAIL") }
        for (what, message) in l.errors {
            lines.append("")
            add("error: \(what): \(message)", "", "FAIL")
        }
        return lines
    }

    func l10nJSON(_ l: L10nFigures) -> JSON {
        var members: [(String, JSON)] = [
            ("strings", .int(Int64(l.strings))),
            ("rounds", .int(Int64(l.rounds))),
            ("shortest_string", .int(Int64(l.shortestString))),
            ("longest_string", .int(Int64(l.longestString))),
            ("strings_with_placeholders", .int(Int64(l.stringsWithPlaceholders))),
            ("non_ascii_strings", .int(Int64(l.nonASCIIStrings))),
            ("catalog_bytes", .int(Int64(l.catalogBytes))),
            ("modes", .array(L10nBench.localizer.modes.names.map { .string($0) })),
            ("strings_per_second", .rounded(l.transformRate, 0)),
            ("us_per_string", .rounded(l.transformMicroseconds, 4)),
            ("problems", .int(Int64(l.problems))),
            ("unchanged", .int(Int64(l.unchanged))),
        ]
        if let b = l.baseline {
            members.append(("pseudol10nutil", .object([
                ("version", .string(b.version)),
                ("python", .string(b.python)),
                ("command", .string(b.command)),
                ("rounds", .int(Int64(b.rounds))),
                ("strings_per_second", .rounded(b.rate, 0)),
                ("us_per_string", .rounded(b.microseconds, 4)),
                ("unchanged", .int(Int64(b.unchanged))),
            ])))
            if let ratio = l.ratio { members.append(("ratio_ours_over_pseudol10nutil", .rounded(ratio, 3))) }
        } else if let e = l.baselineError {
            members.append(("pseudol10nutil", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let c = l.catalog {
            members.append(("catalog", .object([
                ("rounds", .int(Int64(c.rounds))),
                ("strings_per_second", .rounded(c.rate, 0)),
                ("seconds", .rounded(Double(c.nanoseconds) / 1e9, 4)),
                ("read_seconds", .rounded(Double(c.readNanoseconds) / 1e9, 4)),
                ("rewrite_seconds", .rounded(Double(c.rewriteNanoseconds) / 1e9, 4)),
                ("output_bytes", .int(Int64(c.outputBytes))),
                ("info", .bool(true)),
            ])))
        } else if let e = l.catalogError {
            members.append(("catalog", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let c = l.catalogCommand {
            members.append(("catalog_command", .object([
                ("file_bytes", .int(Int64(c.fileBytes))),
                ("output_bytes", .int(Int64(c.outputBytes))),
                ("seconds", .rounded(c.seconds, 4)),
                ("peak_rss_bytes", .int(Int64(c.peakRSSBytes))),
                ("idle_rss_bytes", .int(Int64(c.idleRSSBytes))),
                ("ratio_peak_rss_over_file", .rounded(c.ratio, 3)),
                ("target_ratio", .rounded(CatalogCommandFigures.targetRatio, 1)),
                ("pass", .bool(c.passed)),
            ])))
        } else if let e = l.catalogCommandError {
            members.append(("catalog_command", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let first = l.firstProblem { members.append(("first_problem", .string(first))) }
        members.append(("pass", .bool(l.passed)))
        return .object(members)
    }
}

extension Report {
    func a11yText(_ a: A11yFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        var part = "a11y"
        func add(_ label: String, _ value: String, _ note: String = "") {
            lines.append(row(part, label, value, note))
            part = ""
        }
        func ms(_ value: Double) -> String { "\(Format.fixed(value, 2)) ms" }
        add("full audit pass, all checks + screenshot", ms(a.fullMilliseconds),
            "target: < \(Format.fixed(A11yFigures.targetMilliseconds, 0)) ms  \(Report.verdict(a.passed))")
        add("same walk, contrast off (baseline)", ms(a.withoutContrastMilliseconds))
        add("ratio full/without contrast (time)", Format.ratio(a.ratio))
        add("info: elements walked", "\(a.walked) of \(a.elements)", "(\(a.depth + 1) levels deep, no limit hit)")
        add("info: contrast read", "\(a.contrastRead) of \(a.contrastApplicable)",
            "(\(a.contrastFromPixels) from pixels, \(a.contrastKnownColours) known colours, \(a.contrastNotMeasurable) not measurable)")
        if let us = a.contrastMicrosecondsPerCrop {
            add("info: contrast time per pixel crop", "\(Format.fixed(us, 1)) us", "((full - baseline) / crops read from pixels)")
        }
        add("info: findings", "\(a.findings)",
            a.findingsByCheck.map { "\($0.check) \($0.count)" }.joined(separator: ", "))
        lines.append("          best of \(a.rounds) rounds each, interleaved: Auditor.audit of a generated screen of \(a.elements) elements,")
        lines.append("          \(a.pixelWidth) x \(a.pixelHeight) px @\(Format.short(a.scale))x screenshot, time budget \(Format.fixed(A11yBench.limits.timeBudget, 0)) s (never reached)")
        return lines
    }

    func a11yJSON(_ a: A11yFigures) -> JSON {
        .object([
            ("elements", .int(Int64(a.elements))),
            ("walked", .int(Int64(a.walked))),
            ("levels", .int(Int64(a.depth + 1))),
            ("screenshot_px", .array([.int(Int64(a.pixelWidth)), .int(Int64(a.pixelHeight))])),
            ("scale", .double(a.scale)),
            ("rounds", .int(Int64(a.rounds))),
            ("full_ms", .rounded(a.fullMilliseconds, 3)),
            ("without_contrast_ms", .rounded(a.withoutContrastMilliseconds, 3)),
            ("ratio_full_over_without_contrast", .rounded(a.ratio, 3)),
            ("contrast", .object([
                ("applicable", .int(Int64(a.contrastApplicable))),
                ("read", .int(Int64(a.contrastRead))),
                ("from_pixels", .int(Int64(a.contrastFromPixels))),
                ("known_colours", .int(Int64(a.contrastKnownColours))),
                ("not_measurable", .int(Int64(a.contrastNotMeasurable))),
                ("us_per_pixel_crop", a.contrastMicrosecondsPerCrop.map { .rounded($0, 2) } ?? .null),
            ])),
            ("findings", .int(Int64(a.findings))),
            ("findings_by_check", .object(a.findingsByCheck.map { ($0.check, .int(Int64($0.count))) })),
            ("target_ms", .double(A11yFigures.targetMilliseconds)),
            ("pass", .bool(a.passed)),
        ])
    }
}

extension Report {
    func locText(_ l: LocFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        var part = "loc"
        func add(_ label: String, _ value: String, _ note: String = "") {
            lines.append(row(part, label, value, note))
            part = ""
        }
        func points(_ rate: Double) -> String {
            rate >= 1e6 ? Format.rate(rate, unit: "points") : "\(Format.short(rate / 1000)) k points/s"
        }
        func megabytes(_ rate: Double) -> String { "\(Format.short(rate)) MB/s" }
        func time(_ seconds: Double) -> String {
            seconds >= 1 ? "\(Format.fixed(seconds, 2)) s" : "\(Format.fixed(seconds * 1000, 0)) ms"
        }
        add("GPX parse, from memory (GeoRoutes)", points(l.pointRate),
            "(\(megabytes(l.megabytesPerSecond)), \(time(Double(l.parseNanoseconds) / 1e9)))")
        if let b = l.baseline {
            add("gpxpy \(b.version) parse (baseline)", points(b.pointRate), "(\(megabytes(b.megabytesPerSecond)), \(time(b.medianSeconds)))")
            if let ratio = l.ratio {
                add("ratio GeoRoutes/gpxpy (rate)", Format.ratio(ratio), "higher is better  \(Report.verdict(l.passed))")
            }
        }
        add("info: read file + parse (GeoRoutes)\(l.fileRounds == 1 ? ", once" : "")", points(l.filePointRate),
            "(\(megabytes(l.fileMegabytesPerSecond)), \(time(Double(l.fileParseNanoseconds) / 1e9)))")
        if let p = l.playback {
            add("interpolated fixes, interval \(Format.short(p.interval)) s", Format.rate(p.rate, unit: "fixes"),
                "(\(Format.fixed(p.nanosecondsPerFix, 1)) ns/fix, \(p.fixes) fixes)")
            add("info: Timeline build, \(p.points) points", time(Double(p.buildNanoseconds) / 1e9))
        }
        let mb = Format.fixed(Double(l.fileBytes) / 1e6, 1)
        let each = l.baseline == nil ? "" : " each, GeoRoutes and gpxpy"
        lines.append("          median of \(l.rounds) rounds\(each): a \(mb) MB GPX 1.1 file, \(l.tracks) tracks, \(l.segments) segments,")
        lines.append("          \(l.points) track points with ele and time (1 s apart), \(l.pointsWithExtensions) with Garmin hr/cad, \(l.stops) stop\(l.stops == 1 ? "" : "s");")
        let counted = l.baseline == nil ? "checked against the generator" : l.countMismatch == nil ? "equal on both sides" : "DIFFERENT"
        lines.append("          \(l.waypoints) waypoints; counts \(counted)\(l.baseline.map { " (Python \($0.python))" } ?? "")")
        if let p = l.playback {
            lines.append("          playback: track '\(p.track)' (\(Format.fixed(p.duration / 3600, 1)) h of route time), median of \(p.rounds); about duration / \(Format.short(p.interval)) fixes, checked")
        }
        if !l.notes.isEmpty { lines.append("          reader notes: \(l.notes.joined(separator: "; "))") }
        for (what, message) in l.errors {
            lines.append("")
            add("error: \(what): \(message)", "", "FAIL")
        }
        return lines
    }

    func locJSON(_ l: LocFigures) -> JSON {
        var members: [(String, JSON)] = [
            ("file_bytes", .int(Int64(l.fileBytes))),
            ("tracks", .int(Int64(l.tracks))),
            ("segments", .int(Int64(l.segments))),
            ("points", .int(Int64(l.points))),
            ("points_per_track", .array(l.perTrack.map { .int(Int64($0)) })),
            ("points_with_extensions", .int(Int64(l.pointsWithExtensions))),
            ("stops", .int(Int64(l.stops))),
            ("waypoints", .int(Int64(l.waypoints))),
            ("rounds", .int(Int64(l.rounds))),
            ("statistic", .string("median")),
            ("file_rounds", .int(Int64(l.fileRounds))),
            ("points_per_second", .rounded(l.pointRate, 0)),
            ("mb_per_second", .rounded(l.megabytesPerSecond, 2)),
            ("parse_seconds", .rounded(Double(l.parseNanoseconds) / 1e9, 4)),
            ("file_points_per_second", .rounded(l.filePointRate, 0)),
            ("file_mb_per_second", .rounded(l.fileMegabytesPerSecond, 2)),
            ("file_parse_seconds", .rounded(Double(l.fileParseNanoseconds) / 1e9, 4)),
            ("notes", .array(l.notes.map { .string($0) })),
        ]
        if let b = l.baseline {
            members.append(("gpxpy", .object([
                ("version", .string(b.version)),
                ("python", .string(b.python)),
                ("command", .string(b.command)),
                ("rounds", .int(Int64(b.rounds))),
                ("statistic", .string("median")),
                ("points_per_second", .rounded(b.pointRate, 0)),
                ("mb_per_second", .rounded(b.megabytesPerSecond, 3)),
                ("parse_seconds", .rounded(b.medianSeconds, 4)),
                ("tracks", .int(Int64(b.tracks))),
                ("segments", .int(Int64(b.segments))),
                ("points", .int(Int64(b.points))),
                ("waypoints", .int(Int64(b.waypoints))),
            ])))
            if let ratio = l.ratio { members.append(("ratio_ours_over_gpxpy", .rounded(ratio, 3))) }
            members.append(("counts_equal", .bool(l.countMismatch == nil)))
        } else if let e = l.baselineError {
            members.append(("gpxpy", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let p = l.playback {
            members.append(("playback", .object([
                ("interval_seconds", .double(p.interval)),
                ("track", .string(p.track)),
                ("track_points", .int(Int64(p.points))),
                ("rounds", .int(Int64(p.rounds))),
                ("duration_seconds", .rounded(p.duration, 3)),
                ("fixes", .int(Int64(p.fixes))),
                ("fixes_per_second", .rounded(p.rate, 0)),
                ("ns_per_fix", .rounded(p.nanosecondsPerFix, 2)),
                ("seconds", .rounded(Double(p.nanoseconds) / 1e9, 4)),
                ("build_seconds", .rounded(Double(p.buildNanoseconds) / 1e9, 4)),
            ])))
        } else if let e = l.playbackError {
            members.append(("playback", .object([("error", .string(e)), ("pass", .bool(false))])))
        }
        if let m = l.countMismatch { members.append(("count_mismatch", .string(m))) }
        members.append(("pass", .bool(l.passed)))
        return .object(members)
    }
}
