import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// Options that apply to every shell command. They may appear anywhere
/// before a `--`; for `run`, a command's own `--name` parameters win.
struct GlobalOptions {
    var pluginPaths: [String] = []
    var builtins = true
    var stateDirectory: String?
    var json = false
    /// CSV for commands with table results (see JSONRendering.csv).
    var csv = false
    var help = false
    var strict = false
    var quiet = false
    /// Plugin and host log lines at info and debug level too (`-v`).
    var verbose = false
    /// Seconds a plugin command may run before it is cancelled (`--timeout`).
    var timeout: Double?

    /// (flag, takes a value, description) — drives parsing and `pincer --help`.
    static let table: [(flag: String, value: String?, summary: String)] = [
        ("--plugin-path", "PATH", "load plugins from PATH (a file, a directory, or a colon-separated list); repeatable"),
        ("--no-builtin", nil, "do not load the built-in plugins beside the executable"),
        ("--state-dir", "DIR", "settings store directory (default: $PINCER_STATE_DIR, $XDG_STATE_HOME/pincer, ~/.local/state/pincer)"),
        ("--json", nil, "print data as JSON (shapes in README, \"JSON output\")"),
        ("--csv", nil, "print a plugin command's table result as CSV (not with --json)"),
        ("--strict", nil, "exit 4 before doing anything if any plugin fails to load"),
        ("--quiet", nil, "do not print plugin warnings to standard error"),
        ("--verbose", nil, "also print info and debug log lines (-v; or PINCER_LOG=debug|info|warning|error)"),
        ("--timeout", "SECONDS", "cancel a plugin command that runs longer (exit 6, as for Ctrl-C)"),
        ("--help", nil, "show help for pincer or for a command"),
    ]

    /// Removes the global options from `args`, returning what is left.
    /// Everything after a plugin command's name (`run devopts.add ...` or
    /// `devopts.add ...`) is left alone: it belongs to the command, which
    /// sorts its own parameters from `--json`, `--csv` and `--help` (see Shell.runCommand).
    mutating func extract(from args: [String]) throws(ShellError) -> [String] {
        var rest: [String] = []
        var positionals: [String] = []
        var i = 0
        while i < args.count {
            let arg = args[i]
            if arg == "--" {
                rest += args[i...]
                break
            }
            if !arg.hasPrefix("-") || arg == "-" || Self.isNumber(arg) {
                positionals.append(arg)
                rest.append(arg)
                i += 1
                let first = positionals[0]
                // `attach` and `tail` read their own words (attach passes them on to the app).
                let ownsWords = positionals.count == 1 && Shell.shellCommand(named: first)?.parsesOwnOptions == true
                if (first == "run" && positionals.count == 2) || (positionals.count == 1 && first.contains(".")) || ownsWords {
                    rest += args[i...]
                    break
                }
                continue
            }
            let (name, inline) = Self.split(arg)
            func value() throws(ShellError) -> String {
                if let inline { return inline }
                i += 1
                guard i < args.count else { throw .usage("\(name) needs a value") }
                return args[i]
            }
            switch name {
            case "--plugin-path": pluginPaths += try value().split(separator: ":").map(String.init)
            case "--no-builtin": builtins = false
            case "--state-dir": stateDirectory = try value()
            case "--json": json = true
            case "--csv": csv = true
            case "--strict": strict = true
            case "--quiet", "-q": quiet = true
            case "--verbose", "-v": verbose = true
            case "--help", "-h": help = true
            case "--timeout":
                let text = try value()
                guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 31_536_000 else {
                    throw .usage("--timeout needs a number of seconds above 0 (at most a year), not '\(TerminalText.shortened(text, limit: 40))'")
                }
                timeout = seconds
            default:
                throw .usage("unknown option \(name)", usage: "pincer [options] <command> [arguments]; see pincer --help")
            }
            i += 1
        }
        // Only a plugin command's result can be a table; refusing here keeps
        // `pincer plugins --csv` from silently printing text.
        if csv && !help, let first = positionals.first, first != "run" && first != "attach" && !first.contains(".") {
            throw .usage("--csv applies to plugin commands with table results, not to '\(first)'",
                         usage: "pincer run <command> [arguments] --csv")
        }
        return rest
    }

    /// An option given that loads plugins or opens a store of its own (nil
    /// when none was): meaningless in a shell attached to an app, which has
    /// its plugins and its store.
    var pluginLoadingFlag: String? {
        if !pluginPaths.isEmpty { return "--plugin-path" }
        if !builtins { return "--no-builtin" }
        if stateDirectory != nil { return "--state-dir" }
        if strict { return "--strict" }
        return nil
    }

    static func isNumber(_ arg: String) -> Bool {
        arg.count > 1 && arg.dropFirst().allSatisfy { $0.isNumber || $0 == "." || $0 == "e" || $0 == "E" }
    }

    static func split(_ arg: String) -> (String, String?) {
        guard arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") else { return (arg, nil) }
        return (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
    }

    static func environment() -> [String: String] { ProcessEnvironment.current() }

    /// PINCER_LOG's level; nil when unset or not a level name.
    static func logLevel(_ text: String?) -> LogLevel? {
        switch text?.lowercased() {
        case "debug"?: .debug
        case "info"?: .info
        case "warning"?, "warn"?: .warning
        case "error"?: .error
        default: nil
        }
    }

    func hostOptions(environment env: [String: String]) -> Host.Options {
        var o = Host.Options(stateDirectory: stateDirectory ?? SettingsStore.defaultDirectory(environment: env))
        if !builtins { o.builtinDirectory = nil }
        o.pluginPaths = (env["PINCER_PLUGIN_PATH"] ?? "").split(separator: ":").map(String.init) + pluginPaths
        if let text = env["PINCER_SCAN_TIMEOUT"], let seconds = Double(text), seconds > 0, seconds.isFinite { o.scanTimeout = seconds }
        if isatty(2) != 0 {
            o.scanProgress = { done, total in
                guard total >= 20 else { return }
                StandardConsole.write(2, done < total ? "\rpincer: scanning plugins \(done)/\(total)" : "\r\u{1b}[K")
            }
        }
        if quiet {
            o.logHandler = { _ in }
        } else {
            let minimum = verbose ? .debug : GlobalOptions.logLevel(env["PINCER_LOG"]) ?? LogLevel.warning
            // Host.standardErrorLog's line, escaped and cut to size like the shell's own messages.
            o.logHandler = { record in
                guard record.level >= minimum else { return }
                StandardConsole.write(2, "pincer: \(record.level): [\(record.source)] \(TerminalText.shortened(record.message))\n")
            }
        }
        return o
    }
}
