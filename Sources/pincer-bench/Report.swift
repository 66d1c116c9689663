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

    /// Every part that ran met its target, and none failed to measure.
    var passed: Bool {
        dispatchError == nil && startupError == nil && flagsError == nil
            && (dispatch?.passed ?? true) && (startup?.passed ?? true) && (flags?.passed ?? true)
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
            lines.append(row("dispatch", "prepared typed call via libffi", Format.rate(d.preparedRate),
                             "(\(Format.fixed(d.preparedNanoseconds, 1)) ns/call)"))
            lines.append(row("", "direct C call of bench_add (baseline)", Format.rate(d.directRate),
                             "(\(Format.fixed(d.directNanoseconds, 2)) ns/call)"))
            lines.append(row("", "ratio direct/dispatch", Format.ratio(d.ratio),
                             "target: >= \(Format.fixed(DispatchFigures.targetCallsPerSecond / 1e6, 1)) M calls/s  \(Report.verdict(d.passed))"))
            lines.append(row("", "info: Command.invoke (convert+prepare)", Format.rate(d.perCallRate),
                             "(\(Format.fixed(d.perCallNanoseconds, 1)) ns/call, \(Format.ratio(d.perCallNanoseconds / d.preparedNanoseconds)) a prepared call)"))
            lines.append(row("", "info: plain C call bench_add_direct", Format.rate(d.plainRate),
                             "(\(Format.fixed(d.plainNanoseconds, 2)) ns/call)"))
            lines.append("          best of \(d.rounds) rounds: \(d.preparedCalls) prepared, \(d.directCalls) direct, \(d.perCallCalls) Command.invoke calls per round")
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
                             "target: <= \(Format.fixed(StartupFigures.targetRatio, 1))x  \(Report.verdict(s.passed))"))
            lines.append(row("", "info: ratio of minimums", Format.ratio(s.minimumRatio)))
            let plugins = s.builtinPlugins.isEmpty ? "NO built-in plugins beside pincer (build everything: swift build -c release)"
                : "\(s.builtinPlugins.count) built-in plugin\(s.builtinPlugins.count == 1 ? "" : "s"), \(s.commandCount) command\(s.commandCount == 1 ? "" : "s")"
            lines.append("          \(s.runs) runs each, alternating; \(plugins)")
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
        lines.append("")
        lines.append("result    \(passed ? "all targets met" : "target missed")")
        return lines.joined(separator: "\n") + "\n"
    }

    func json() -> String {
        var members: [(String, JSON)] = [("build", .string(Build.name))]
        if Build.isDebug { members.append(("warning", .string(Build.debugWarning))) }
        if let d = dispatch {
            members.append(("dispatch", .object([
                ("prepared_calls_per_second", .rounded(d.preparedRate, 0)),
                ("prepared_ns_per_call", .rounded(d.preparedNanoseconds, 3)),
                ("direct_calls_per_second", .rounded(d.directRate, 0)),
                ("direct_ns_per_call", .rounded(d.directNanoseconds, 3)),
                ("ratio_direct_over_dispatch", .rounded(d.ratio, 3)),
                ("command_invoke_calls_per_second", .rounded(d.perCallRate, 0)),
                ("command_invoke_ns_per_call", .rounded(d.perCallNanoseconds, 3)),
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
                ("commands", .int(Int64(s.commandCount))),
                ("target_ratio", .double(StartupFigures.targetRatio)),
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
        members.append(("pass", .bool(passed)))
        return JSON.object(members).serialized(pretty: true) + "\n"
    }
}
