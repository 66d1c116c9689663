import PincerHost

/// One record per shell command (Redis's command table): it drives
/// dispatch, argument-count checks, `pincer help` and completion.
struct ShellCommand: Sendable {
    enum Completion: Sendable { case none, command, entry, persistedEntry, section }

    let name: String
    let arguments: String
    let summary: String
    let minArguments: Int
    let maxArguments: Int?
    /// What the first argument completes to in the REPL.
    let completion: Completion
    /// Whether the command needs plugins loaded.
    let needsHost: Bool
    /// Refused in a shell attached to an app (`shell`, `ps`, `attach`, `tail`).
    var localOnly = false
    /// The words after the command's name are its own, options included
    /// (global options go before the name).
    var parsesOwnOptions = false
    /// More help text (`pincer help <name>`), after the summary.
    var details = ""
    let run: @Sendable (Shell, [String]) throws(ShellError) -> ExitCode

    var usage: String { arguments.isEmpty ? "pincer \(name)" : "pincer \(name) \(arguments)" }
}

extension Shell {
    static let table: [ShellCommand] = [
        ShellCommand(name: "plugins", arguments: "", summary: "List loaded and refused plugins (exit 4 if any was refused)",
                     minArguments: 0, maxArguments: 0, completion: .none, needsHost: true) { s, _ throws(ShellError) in s.plugins() },
        ShellCommand(name: "menu", arguments: "[section]", summary: "Show the menu tree with current values",
                     minArguments: 0, maxArguments: 1, completion: .section, needsHost: true) { s, a throws(ShellError) in try s.menu(a.first) },
        ShellCommand(name: "commands", arguments: "", summary: "List every command with its signature",
                     minArguments: 0, maxArguments: 0, completion: .none, needsHost: true) { s, _ throws(ShellError) in s.listCommands() },
        ShellCommand(name: "help", arguments: "[command]", summary: "Help for pincer, a shell command or a plugin command",
                     minArguments: 0, maxArguments: 1, completion: .command, needsHost: false) { s, a throws(ShellError) in try s.help(a.first) },
        ShellCommand(name: "run", arguments: "<command> [arguments...]", summary: "Run a plugin command (positional or --name value arguments)",
                     minArguments: 1, maxArguments: nil, completion: .command, needsHost: true) { s, a throws(ShellError) in try s.runCommand(a) },
        ShellCommand(name: "get", arguments: "<entry>", summary: "Show one entry's value (value rows, toggles, choices, text, pages)",
                     minArguments: 1, maxArguments: 1, completion: .entry, needsHost: true) { s, a throws(ShellError) in try s.get(a[0]) },
        ShellCommand(name: "set", arguments: "<entry> <value>", summary: "Set a toggle, choice or text entry (persisted)",
                     minArguments: 2, maxArguments: 2, completion: .persistedEntry, needsHost: true) { s, a throws(ShellError) in try s.set(a[0], a[1]) },
        ShellCommand(name: "activate", arguments: "<entry>", summary: "Run an action entry",
                     minArguments: 1, maxArguments: 1, completion: .entry, needsHost: true) { s, a throws(ShellError) in try s.activate(a[0]) },
        ShellCommand(name: "pin", arguments: "<entry>", summary: "Pin an entry to the Pinned section (persisted)",
                     minArguments: 1, maxArguments: 1, completion: .entry, needsHost: true) { s, a throws(ShellError) in try s.pin(a[0], true) },
        ShellCommand(name: "unpin", arguments: "<entry>", summary: "Remove an entry from the Pinned section",
                     minArguments: 1, maxArguments: 1, completion: .entry, needsHost: true) { s, a throws(ShellError) in try s.pin(a[0], false) },
        ShellCommand(name: "search", arguments: "<text>", summary: "Find entries and commands by id, title or summary",
                     minArguments: 1, maxArguments: nil, completion: .none, needsHost: true) { s, a throws(ShellError) in s.search(a.joined(separator: " ")) },
        ShellCommand(name: "shell", arguments: "", summary: "Interactive shell with history and tab completion; reads commands from a pipe too",
                     minArguments: 0, maxArguments: 0, completion: .none, needsHost: true, localOnly: true) { s, _ throws(ShellError) in s.repl() },
        ShellCommand(name: "ps", arguments: "", summary: "List the running apps pincer can attach to (PID, NAME, SOCKET)",
                     minArguments: 0, maxArguments: 0, completion: .none, needsHost: false, localOnly: true,
                     details: Shell.psDetails) { s, _ throws(ShellError) in try s.listApps() },
        ShellCommand(name: "attach", arguments: "[pid|socket] [command [arguments...]]",
                     summary: "Run a command inside a running app, or a shell against it without one (exit code: the app's)",
                     minArguments: 0, maxArguments: nil, completion: .none, needsHost: false, localOnly: true,
                     parsesOwnOptions: true, details: Shell.attachDetails) { s, a throws(ShellError) in try s.attach(a) },
        ShellCommand(name: "tail", arguments: "<topic> [pid|socket] [--json] [--snapshot]",
                     summary: "Print a running app's events (\"flags.*\", \"net.entry\", \"*\") as they happen, one per line",
                     minArguments: 1, maxArguments: nil, completion: .none, needsHost: false, localOnly: true,
                     parsesOwnOptions: true, details: Shell.tailDetails) { s, a throws(ShellError) in try s.tail(a) },
        ShellCommand(name: "proxy", arguments: "[--port N] [--max-connections N] [--timeout S]",
                     summary: "An HTTP proxy on 127.0.0.1 that records any program's traffic into the network log (net.proxy)",
                     minArguments: 0, maxArguments: nil, completion: .none, needsHost: true, localOnly: true, parsesOwnOptions: true,
                     details: "The same as `pincer net.proxy`: see `pincer help net.proxy`. Runs until Ctrl-C (exit 6, as every command stopped so).") { s, a throws(ShellError) in
            try s.runCommand(["net.proxy"] + a)
        },
        ShellCommand(name: "complete", arguments: "<line>", summary: "Print completions for a partial command line, one per line",
                     minArguments: 1, maxArguments: 1, completion: .none, needsHost: true) { s, a throws(ShellError) in s.printCompletions(a[0]) },
        ShellCommand(name: "version", arguments: "", summary: "Print the pincer and ABI versions",
                     minArguments: 0, maxArguments: 0, completion: .none, needsHost: false) { s, _ throws(ShellError) in s.version() },
    ]

    static func shellCommand(named name: String) -> ShellCommand? { table.first { $0.name == name } }
}
