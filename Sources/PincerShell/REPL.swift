import CEdit
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// libedit's completion hook is a plain C function with no context
/// pointer, so the running loop's completer is parked here.
nonisolated(unsafe) private var activeCompleter: ((String) -> [String])?
nonisolated(unsafe) private var pendingMatches: [String] = []

/// The read loop of the shells (the local `pincer shell` and `pincer attach`
/// without a command). On a terminal: libedit line editing, history and
/// tab completion. From a pipe: one command per line, no prompt.
struct LineLoop {
    enum Outcome {
        case next(ExitCode)
        /// Ends the loop (the app went away).
        case stop(ExitCode)
    }

    let prompt: String
    /// Printed on a terminal before the first prompt.
    let banner: String
    /// Where history persists; nil keeps it for the session only.
    let historyPath: String?
    let completions: (String) -> [String]
    /// The line as history keeps it (secrets masked); nil keeps nothing.
    let historyLine: (String) -> String?

    /// Lines kept in the history file.
    static let historyLimit: Int32 = 1000

    /// Runs lines until exit, quit or end of input; returns the last line's exit code.
    func run(console: Console, _ execute: (String) -> Outcome) -> ExitCode {
        let terminal = isatty(0) == 1
        var last = ExitCode.ok
        if terminal {
            activeCompleter = completions
            cedit_set_name(strdup("pincer"))
            cedit_set_completer { text, start, _ in
                guard let complete = activeCompleter, let line = cedit_line_buffer() else { return nil }
                let prefix = String(decoding: UnsafeRawBufferPointer(start: line, count: Int(start)), as: UTF8.self)
                let word = text.map { String(cString: $0) } ?? ""
                pendingMatches = complete(prefix + word)
                cedit_completion_over()
                guard !pendingMatches.isEmpty else { return nil }
                return rl_completion_matches(text) { _, state in
                    let i = Int(state)
                    return i < pendingMatches.count ? strdup(pendingMatches[i]) : nil
                }
            }
            using_history()
            stifle_history(LineLoop.historyLimit)
            if let historyPath { _ = read_history(historyPath) }
            console.out(banner)
        }
        defer { activeCompleter = nil }
        while true {
            let line: String
            if terminal {
                guard let raw = readline(prompt) else { console.out("\n"); break }
                line = String(cString: raw)
                free(raw)
            } else {
                guard let l = readLine(strippingNewline: true) else { break }
                line = l
            }
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed == "exit" || trimmed == "quit" { break }
            if terminal, let saved = historyLine(trimmed) {
                _ = add_history(saved)
                // The whole (bounded) history is rewritten: libedit's
                // append_history reports failure after appending, and a
                // fallback to write_history then saved each line twice.
                if let historyPath { _ = write_history(historyPath) }
            }
            switch execute(trimmed) {
            case .next(let code): last = code
            case .stop(let code): return code
            }
        }
        return last
    }
}

extension Shell {
    /// The interactive shell over the local host. The exit code is that of
    /// the last command.
    func repl() -> ExitCode {
        interactive = true
        defer { interactive = false }
        let h = host!
        if isatty(0) == 1 { _ = try? h.settings() } // creates the state directory the history lives in
        let loop = LineLoop(
            prompt: "pincer> ",
            banner: "pincer \(Shell.version) — \(h.plugins.count) plugins, \(h.commandNames.count) commands. Tab completes; 'help' lists commands; 'exit' leaves.\n",
            historyPath: h.options.stateDirectory + "/history",
            completions: { [unowned self] in completions(for: $0) },
            historyLine: { [unowned self] in historyLine(for: $0) })
        return loop.run(console: console) { [unowned self] line in
            let code = execute(line: line)
            // A command that did not stop after Ctrl-C still holds its plugin.
            return abandonedCall ? .stop(code) : .next(code)
        }
    }

    /// Runs one REPL line with the already loaded host.
    func execute(line: String) -> ExitCode {
        let words: [String]
        do { words = try Words.split(line) } catch { return report(.usage("unterminated quote in: \(line)")) }
        let saved = options
        defer { options = saved }
        // Per-line output options only; the plugin set is fixed for the session.
        var rest: [String] = []
        for w in words {
            if w == "--json" && rest.first.map({ !$0.contains(".") && $0 != "run" }) ?? true { options.json = true; continue }
            rest.append(w)
        }
        do { return try dispatch(rest) } catch { return report(error) }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
