import PincerPluginKit

/// The servers.* commands.
struct ServerCommands {
    let store: FirstUse<EnvironmentStore>

    func register(with host: PluginHost) throws {
        let store = self.store
        try host.addCommand("list() -> string", summary: "Every environment; the current one is marked", jsonResult: true) { _ in
            let s = try store.get().snapshot
            let current = s.current?.id
            return .string(JSON.array(s.order.compactMap { id in
                s.environments[id].map { e in
                    .object([("id", .string(e.id)), ("name", .string(e.name)), ("current", .bool(e.id == current)),
                             ("variables", .object(e.variables.map { ($0.name, .string($0.value)) }))])
                }
            }).serialized())
        }
        try host.addCommand("current() -> string", summary: "The current environment's id") { _ in
            guard let e = try store.get().snapshot.current else { throw ServerCommands.noneRegistered }
            return .string(e.id)
        }
        try host.addCommand("use(id: string) -> string", summary: "Switch to another environment (persisted; subscribers are told)",
                            changesState: true) { args in
            let id = args[0].string
            let from = try store.get().use(id)
            return .string(from == id ? "\(id) is already current" : "\(from ?? "(none)") -> \(id)")
        }
        try host.addCommand("vars() -> string", summary: "Variables of the current environment", jsonResult: true) { _ in
            guard let e = try store.get().snapshot.current else { throw ServerCommands.noneRegistered }
            return .string(JSON.object(e.variables.map { ($0.name, .string($0.value)) }).serialized())
        }
        try host.addCommand("get(name: string) -> string", summary: "One variable of the current environment") { args in
            guard let e = try store.get().snapshot.current else { throw ServerCommands.noneRegistered }
            let name = args[0].string
            guard let value = e.variable(name) else {
                throw ServersError.notFound("environment '\(e.id)' has no variable \(name) (has: \(e.variables.map(\.name).joined(separator: ", ")))")
            }
            return .string(value)
        }
        try host.addCommand("env() -> string", summary: "The current variables as shell export lines",
                            details: "eval \"$(pincer run servers.env)\" sets them in the calling shell. Values are single-quoted.") { _ in
            guard let e = try store.get().snapshot.current else { throw ServerCommands.noneRegistered }
            return .string(e.variables.map { "export \($0.name)=\(ServerCommands.shellQuote($0.value))" }.joined(separator: "\n"))
        }
        try host.addCommand("register(id: string, name: string, variables: string = \"{}\") -> string",
                            summary: "Register an environment or replace its name and variables (persisted)",
                            details: "variables is a JSON object of strings, e.g. '{\"API_URL\": \"https://staging.example.com\"}'.",
                            changesState: true) { args in
            let id = args[0].string
            let doc: JSON
            do { doc = try JSON.parse(args[2].string) } catch { throw ServersError.invalid("variables: \(error)") }
            guard let fields = doc.objectValue else { throw ServersError.invalid("variables must be a JSON object, found \(doc.typeName)") }
            var pairs: [(String, String)] = []
            for (name, value) in fields {
                guard let s = value.stringValue else { throw ServersError.invalid("variable \(name) must be a string, found \(value.typeName)") }
                pairs.append((name, s))
            }
            try store.get().register(id, name: args[1].string, variables: pairs)
            return .string("registered \(id) with \(pairs.count) variable\(pairs.count == 1 ? "" : "s")")
        }
        try host.addCommand("display() -> string", summary: "The environment variables the app registered for display",
                            jsonResult: true) { _ in
            .string(JSON.object(try store.get().displayVariables.map { ($0.name, .string($0.value)) }).serialized())
        }
    }

    static let noneRegistered = ServersError.notFound("no server environment is registered (the app registers them through pincer.servers/1, or use servers.register)")

    /// POSIX single quoting: everything literal, a ' becomes '\''.
    static func shellQuote(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
