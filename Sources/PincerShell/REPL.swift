import CEdit
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

/// libedit's completion hook is a plain C function with no context
/// pointer, so the active shell is parked here while the REPL runs.
nonisolated(unsafe) private var activeShell: Shell?
nonisolated(unsafe) private var pendingMatches: [String] = []

extension Shell {
    /// The interactive shell. On a terminal: libedit line editing, history
    /// in the state directory and tab completion. From a pipe: one command
    /// per line, no prompt; the exit code is that of the last command.
    func repl() -> ExitCode {
        interactive = true
        let terminal = isatty(0) == 1
        var last = ExitCode.ok
        let historyPath = host!.options.stateDirectory + "/history"
        if terminal {
            _ = try? host!.settings() // creates the state directory the history lives in
            activeShell = self
            cedit_set_name(strdup("pincer"))
            cedit_set_completer { text, start, _ in
                guard let shell = activeShell, let line = cedit_line_buffer() else { return nil }
                let prefix = String(decoding: UnsafeRawBufferPointer(start: line, count: Int(start)), as: UTF8.self)
                let word = text.map { String(cString: $0) } ?? ""
                pendingMatches = shell.completions(for: prefix + word)
                cedit_completion_over()
                guard !pendingMatches.isEmpty else { return nil }
                return rl_completion_matches(text) { _, state in
                    let i = Int(state)
                    return i < pendingMatches.count ? strdup(pendingMatches[i]) : nil
                }
            }
            using_history()
            _ = read_history(historyPath)
            console.out("pincer \(Shell.version) — \(host!.plugins.count) plugins, \(host!.commands.count) commands. Tab completes; 'help' lists commands; 'exit' leaves.\n")
        }
        while true {
            let line: String
            if terminal {
                guard let raw = readline("pincer> ") else { console.out("\n"); break }
                line = String(cString: raw)
                free(raw)
            } else {
                guard let l = readLine(strippingNewline: true) else { break }
                line = l
            }
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed == "exit" || trimmed == "quit" { break }
            if terminal, let saved = historyLine(for: trimmed) {
                _ = add_history(saved)
                _ = append_history(1, historyPath) == 0 || write_history(historyPath) == 0
            }
            last = execute(line: trimmed)
        }
        activeShell = nil
        interactive = false
        return last
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
