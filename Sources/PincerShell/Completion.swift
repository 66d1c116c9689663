import PincerHost

/// Completion candidates for a partial line, from the shell command table
/// and the registered signatures — the same records that drive help.
extension Shell {
    /// Candidates for the last word of `line` (empty when the line ends in a space).
    func completions(for line: String) -> [String] {
        let words = (try? Words.split(line)) ?? line.split(separator: " ").map(String.init)
        let endsInSpace = line.last.map { $0 == " " || $0 == "\t" } ?? true
        let done = endsInSpace ? words : Array(words.dropLast())
        let partial = endsInSpace ? "" : (words.last ?? "")
        guard let h = loadedHost() else { return [] }
        let commandNames = h.commandNames
        func matching(_ list: [String]) -> [String] { list.filter { $0.hasPrefix(partial) }.sorted() }

        guard let first = done.first else {
            return matching(Shell.table.map(\.name) + ["exit", "quit"] + commandNames)
        }
        // Arguments of a plugin command: `run name ...` or a bare `name ...`.
        let commandName: String? = first == "run" ? (done.count >= 2 ? done[1] : nil) : (first.contains(".") ? first : nil)
        if first == "run" && done.count == 1 { return matching(commandNames) }
        if let commandName, let command = h.command(named: commandName) {
            let sig = command.signature
            let used = Set(done.filter { $0.hasPrefix("--") }.compactMap { sig.parameterIndex(option: String(GlobalOptions.split($0).0.dropFirst(2)))?.index })
            // After `--flag` of a bool parameter, offer its values.
            if let last = done.last, last.hasPrefix("--"), let (i, _) = sig.parameterIndex(option: String(last.dropFirst(2))) {
                return sig.parameters[i].type == .bool ? matching(["true", "false"]) : []
            }
            return matching(sig.parameters.indices.filter { !used.contains($0) }.map { "--" + sig.parameters[$0].optionName })
        }
        guard let sc = Shell.shellCommand(named: first) else { return [] }
        if done.count == 1 {
            switch sc.completion {
            case .none: return []
            case .command: return matching(commandNames + (sc.name == "help" ? Shell.table.map(\.name) : []))
            case .entry: return matching(h.entries.map(\.fullID))
            case .persistedEntry: return matching(h.entries.filter { $0.kind.isPersisted }.map(\.fullID))
            case .section: return matching(h.sections().map(\.id))
            }
        }
        if sc.name == "set" && done.count == 2, let e = h.entry(id: done[1]) {
            switch e.kind {
            case .toggle: return matching(["true", "false"])
            case .choice, .text: return matching(e.choices) // text: the plugin's suggestions
            default: return []
            }
        }
        return []
    }

    func printCompletions(_ line: String) -> ExitCode {
        let list = completions(for: line)
        if options.json {
            emit(.object([("line", .string(line)), ("completions", .array(list.map(JSON.string)))]))
        } else {
            for c in list { console.out(c + "\n") }
        }
        return .ok
    }

    /// The line as it may be saved in history: arguments bound to secret
    /// parameters are replaced by "***".
    func historyLine(for line: String) -> String? {
        guard let words = try? Words.split(line), let first = words.first else { return nil }
        let nameIndex = first == "run" ? 1 : 0
        guard words.count > nameIndex, let h = host, let command = h.command(named: words[nameIndex]) else { return line }
        let params = command.signature.parameters
        guard params.contains(where: \.isSecret) else { return line }
        // Walk the words as `bind` does, masking whatever lands on a secret parameter.
        var out = Array(words[...nameIndex])
        var filled = Set<Int>()
        var i = nameIndex + 1
        var optionsEnded = false
        func nextPositional() -> Int? { params.indices.first { !filled.contains($0) } }
        while i < words.count {
            let w = words[i]
            i += 1
            if !optionsEnded && w == "--" { optionsEnded = true; out.append(w); continue }
            if !optionsEnded && w.hasPrefix("--") && w.count > 2 {
                let (flag, inline) = GlobalOptions.split(w)
                let index = command.signature.parameterIndex(option: String(flag.dropFirst(2)))?.index
                if let index { filled.insert(index) }
                let secret = index.map { params[$0].isSecret } ?? false
                if inline != nil {
                    out.append(secret ? "\(flag)=***" : w)
                } else {
                    out.append(w)
                    if i < words.count { out.append(secret ? "***" : words[i]); i += 1 }
                }
                continue
            }
            let index = nextPositional()
            if let index { filled.insert(index) }
            out.append(index.map { params[$0].isSecret } == true ? "***" : w)
        }
        return out.map(Words.quote).joined(separator: " ")
    }
}
