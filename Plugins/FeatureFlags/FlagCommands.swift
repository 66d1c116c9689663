import PincerPluginKit

/// The flags.* commands. Data comes back as JSON documents the shell renders
/// as tables (or passes through with --json).
struct FlagCommands {
    let store: FirstUse<FlagStore>
    static let exportFormat = "pincer.flags.overrides/1"

    func register(with host: PluginHost) throws {
        let state = self.store
        try host.addCommand("list() -> string", summary: "Every flag with its remote, override and effective value", jsonResult: true) { _ in
            let store = try state.get()
            let s = store.snapshot
            return .string(JSON.object([
                ("overridesEnabled", .bool(s.overridesEnabled)),
                ("flags", .array(s.order.compactMap { s.flags[$0].map { FlagCommands.describe($0, overridesEnabled: s.overridesEnabled) } })),
            ]).serialized())
        }
        try host.addCommand("get(key: string) -> string", summary: "Resolve one flag: value and reason", jsonResult: true) { args in
            .string(try FlagCommands.resolution(args[0].string, state.get()).serialized())
        }
        try host.addCommand("set(key: string, value: string) -> string", summary: "Override a flag locally (parsed by the flag's type)",
                            changesState: true, jsonResult: true) { args in
            let store = try state.get()
            try store.setOverride(args[0].string, text: args[1].string)
            return .string(try FlagCommands.resolution(args[0].string, store).serialized())
        }
        try host.addCommand("clear(key: string) -> string", summary: "Remove a flag's override: it reads its remote value again",
                            changesState: true, jsonResult: true) { args in
            let store = try state.get()
            try store.clearOverride(args[0].string)
            return .string(try FlagCommands.resolution(args[0].string, store).serialized())
        }
        try host.addCommand("clear-all() -> string", summary: "Remove every override", changesState: true) { _ in
            let store = try state.get()
            let n = try store.clearAll()
            return .string("cleared \(n) override\(n == 1 ? "" : "s")")
        }
        try host.addCommand("register(key: string, type: string, remote: string, summary: string = \"\") -> string",
                            summary: "Register a flag (bool, int, double or string) or update its remote value",
                            details: "The remote value is parsed as the type. Registrations persist.",
                            changesState: true, jsonResult: true) { args in
            let store = try state.get()
            let key = args[0].string, typeName = args[1].string
            guard let type = FlagType(rawValue: typeName) else {
                throw CommandError.invalidArgument("type '\(typeName)' is not one of bool, int, double, string")
            }
            let remote: FlagValue
            switch FlagValue.parse(args[2].string, as: type) {
            case .success(let v): remote = v
            case .failure(let e): throw CommandError.invalidArgument("remote value for \(type.rawValue) flag '\(key)': \(e)")
            }
            let summary = args[3].string
            try store.register(key, remote: remote, summary: summary.isEmpty ? nil : summary)
            return .string(try FlagCommands.resolution(key, store).serialized())
        }
        try host.addCommand("export(path: string = \"\") -> string",
                            summary: "Overrides as JSON: printed, or written to a file to hand to someone") { args in
            let store = try state.get()
            let document = FlagCommands.exportDocument(store.snapshot)
            let path = args[0].string
            if path.isEmpty { return .string(document.serialized(pretty: true)) }
            try TextFile.writeAtomically(document.serialized(pretty: true) + "\n", to: path)
            let n = document["overrides"]?.objectValue?.count ?? 0
            return .string("wrote \(n) override\(n == 1 ? "" : "s") to \(path)")
        }
        try host.addCommand("import(path: string, partial: bool = false) -> string",
                            summary: "Apply overrides from a flags.export file",
                            details: """
                            Every problem (an unknown flag, a value of the wrong type) is reported. By default \
                            a file with any problem changes nothing; with --partial true the valid overrides are \
                            applied and the problems listed. A file that does not parse never changes anything. \
                            A null value clears that flag's override.
                            """,
                            changesState: true, jsonResult: true) { args in
            .string(try FlagCommands.importFile(args[0].string, partial: args[1].bool, store: state.get()).serialized())
        }
    }

    static func describe(_ f: Flag, overridesEnabled: Bool) -> JSON {
        let (value, reason) = f.resolved(overridesEnabled: overridesEnabled)
        return .object([("key", .string(f.key)), ("type", .string(f.type.rawValue)), ("remote", f.remote.json),
                        ("override", f.override?.json ?? .null), ("value", value.json), ("reason", .string(reason.name)),
                        ("summary", .string(f.summary))])
    }

    /// The shell's view of a resolution; an unregistered key is an error
    /// here (the service returns the caller's default with reason "default").
    static func resolution(_ key: String, _ store: FlagStore) throws -> JSON {
        let s = store.snapshot
        guard let f = s.flags[key] else { throw FlagStore.unknown(key, in: s) }
        guard case .object(var fields) = describe(f, overridesEnabled: s.overridesEnabled) else { return .null }
        fields.append(("overridesEnabled", .bool(s.overridesEnabled)))
        return .object(fields)
    }

    static func exportDocument(_ s: FlagStore.State) -> JSON {
        .object([
            ("format", .string(exportFormat)),
            ("overridesEnabled", .bool(s.overridesEnabled)),
            ("overrides", .object(s.order.compactMap { key in s.flags[key]?.override.map { (key, $0.json) } })),
        ])
    }

    static func importFile(_ path: String, partial: Bool, store: FlagStore) throws -> JSON {
        let text = try TextFile.read(path)
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { throw CommandError.invalidArgument("\(path): \(error); nothing was changed") }
        guard doc.objectValue != nil else {
            throw CommandError.invalidArgument("\(path): expected a JSON object as written by flags.export, found \(doc.typeName); nothing was changed")
        }
        if let format = doc["format"], format.stringValue != exportFormat {
            throw CommandError.invalidArgument("\(path): \"format\" is \(format.serialized()), expected \"\(exportFormat)\"; nothing was changed")
        }
        guard let overrides = doc["overrides"]?.objectValue else {
            throw CommandError.invalidArgument("\(path): missing the \"overrides\" object; nothing was changed")
        }
        var problems: [String] = []
        var enabled: Bool?
        if let e = doc["overridesEnabled"] {
            if let b = e.boolValue { enabled = b } else { problems.append("\"overridesEnabled\" must be true or false, found \(e.typeName)") }
        }
        let s = store.snapshot
        var accepted: [(String, FlagValue?)] = []
        for (key, value) in overrides {
            guard let flag = s.flags[key] else {
                problems.append("flag '\(key)' is not registered")
                continue
            }
            if case .null = value { accepted.append((key, nil)); continue }
            guard let v = FlagValue.from(value, as: flag.type) else {
                problems.append("flag '\(key)' is \(flag.type.rawValue); the file gives \(value.typeName) \(value.serialized())")
                continue
            }
            accepted.append((key, v))
        }
        if !problems.isEmpty && !partial {
            throw CommandError.invalidArgument("\(path): \(problems.count) problem\(problems.count == 1 ? "" : "s"); nothing was changed:\n  "
                                               + problems.joined(separator: "\n  "))
        }
        try store.apply(overrides: accepted, overridesEnabled: enabled)
        return .object([("file", .string(path)), ("applied", .int(Int64(accepted.count))),
                        ("problems", .array(problems.map(JSON.string)))])
    }
}
