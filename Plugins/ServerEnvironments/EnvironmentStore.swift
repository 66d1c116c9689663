import PincerPluginKit
import Synchronization

/// One server environment: an id, a display name and its variables.
struct Environment: Sendable, Equatable {
    let id: String
    var name: String
    /// Sorted by name, so listings and `servers.env` are stable.
    var variables: [(name: String, value: String)]

    static func == (a: Environment, b: Environment) -> Bool {
        a.id == b.id && a.name == b.name && a.variables.elementsEqual(b.variables) { $0 == $1 }
    }

    func variable(_ name: String) -> String? { variables.first { $0.name == name }?.value }
}

/// A refused operation, with the SDK status it maps to.
struct ServersError: StatusError {
    let status: pincer_status_t
    let message: String
    var description: String { message }

    static func invalid(_ m: String) -> ServersError { ServersError(status: PINCER_INVALID_ARGUMENT, message: m) }
    static func notFound(_ m: String) -> ServersError { ServersError(status: PINCER_NOT_FOUND, message: m) }
    static func storage(_ m: String) -> ServersError { ServersError(status: PINCER_FAILED, message: m) }
}

enum Names {
    /// Environment ids double as menu choices: [a-z][a-z0-9_-]*, at most 64 bytes.
    static func checkID(_ id: String) -> ServersError? {
        let b = Array(id.utf8)
        guard let f = b.first, isLower(f), b.count <= 64, b.allSatisfy({ isLower($0) || isDigit($0) || $0 == 0x5F || $0 == 0x2D }) else {
            return .invalid("environment id '\(id)' is not [a-z][a-z0-9_-]* of at most 64 bytes")
        }
        return nil
    }

    /// Variable names must be shell variable names so `servers.env` output can be eval'ed.
    static func checkVariable(_ name: String) -> ServersError? {
        let b = Array(name.utf8)
        guard let f = b.first, isAlpha(f) || f == 0x5F, b.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == 0x5F }) else {
            return .invalid("variable name '\(name)' is not a shell name ([A-Za-z_][A-Za-z0-9_]*)")
        }
        return nil
    }

    private static func isLower(_ c: UInt8) -> Bool { c >= 0x61 && c <= 0x7A }
    private static func isAlpha(_ c: UInt8) -> Bool { isLower(c) || (c >= 0x41 && c <= 0x5A) }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}

/// Environments, the current choice and the display variables. Changes are
/// persisted first (one settings write), then published, then announced to
/// subscribers outside the lock. Like the flags store, it re-reads the stored
/// document and writes the changed one in one transaction, so a choice or
/// registration made from another process is merged, not overwritten.
final class EnvironmentStore: @unchecked Sendable {
    struct State: Sendable {
        var environments: [String: Environment] = [:]
        var order: [String] = []
        /// The last `use`d id; it may name an environment not registered yet.
        var chosen: String?
        /// Registered (or updated) in this process, so they survive a merge.
        var registeredHere: Set<String> = []

        /// The chosen environment when registered, else the first one.
        var current: Environment? {
            if let chosen, let e = environments[chosen] { return e }
            return order.first.flatMap { environments[$0] }
        }
    }

    typealias Subscriber = (token: UInt64, notify: @Sendable (String?, String) -> Void)

    private static let settingsKey = "state"
    private let host: PluginHost
    private let state = Mutex(State())
    private let subscribers = Mutex<(next: UInt64, list: [Subscriber])>((1, []))
    private let display = Mutex<[(name: String, value: String)]>([])
    /// Menu upkeep after a change (new choices); called outside the lock.
    var onRegistered: (@Sendable () -> Void)?

    init(host: PluginHost) {
        self.host = host
        let loaded = load()
        state.withLock { $0 = loaded }
    }

    var snapshot: State { state.withLock { $0 } }

    // MARK: changes

    func register(_ id: String, name: String, variables: [(String, String)]) throws(ServersError) {
        if let e = Names.checkID(id) { throw e }
        guard !name.isEmpty else { throw .invalid("environment '\(id)': the display name is empty") }
        var sorted: [(name: String, value: String)] = []
        for (n, v) in variables {
            if let e = Names.checkVariable(n) { throw .invalid("environment '\(id)': \(e.message)") }
            if sorted.contains(where: { $0.name == n }) { throw .invalid("environment '\(id)': variable \(n) is given twice") }
            sorted.append((n, v))
        }
        sorted.sort { $0.name < $1.name }
        let environment = Environment(id: id, name: name, variables: sorted)
        let before = try mutate { s in
            if s.environments[id] == nil { s.order.append(id) }
            s.environments[id] = environment
            s.registeredHere.insert(id)
        }
        onRegistered?()
        // The first registration makes an environment current.
        if before.current == nil { notify(from: nil, to: id) }
    }

    /// Makes `id` current; returns the previous current id.
    @discardableResult
    func use(_ id: String) throws(ServersError) -> String? {
        let before = try mutate { s throws(ServersError) in
            guard s.environments[id] != nil else {
                let known = s.order.isEmpty ? "none is registered" : "registered: \(s.order.joined(separator: ", "))"
                throw .notFound("no server environment '\(id)' (\(known))")
            }
            s.chosen = id
        }
        let from = before.current?.id
        if from != id { notify(from: from, to: id) }
        return from
    }

    /// Runs `change` on the freshly merged state and saves it, the read and
    /// the write in one transaction of the settings store (another
    /// process's change made at the same moment is merged, not lost);
    /// returns the state before the change.
    private func mutate(_ change: (inout State) throws(ServersError) -> Void) throws(ServersError) -> State {
        let result: Result<State, ServersError> = state.withLock { current in
            var outcome: (before: State, after: State)?
            var refusal: ServersError?
            do {
                try host.updateDocument(EnvironmentStore.settingsKey, what: "server environments",
                                        decode: EnvironmentStore.decode) { stored in
                    var next = merge(stored: stored ?? State(), into: current)
                    let before = next
                    do throws(ServersError) { try change(&next) } catch {
                        refusal = error
                        throw error
                    }
                    outcome = (before, next)
                    return EnvironmentStore.encode(next)
                }
            } catch {
                return .failure(refusal ?? .storage("could not save the server environments: \(error)"))
            }
            guard let outcome else { return .failure(.storage("could not save the server environments: the store did not apply the change")) }
            current = outcome.after
            return .success(outcome.before)
        }
        return try result.get()
    }

    private func merge(stored: State, into current: State) -> State {
        var next = stored
        for id in current.order where current.registeredHere.contains(id) {
            if next.environments[id] == nil { next.order.append(id) }
            next.environments[id] = current.environments[id]
            next.registeredHere.insert(id)
        }
        return next
    }

    // MARK: subscribers and events

    func subscribe(_ notify: @escaping @Sendable (String?, String) -> Void) -> UInt64 {
        subscribers.withLock { s in
            let token = s.next
            s.next += 1
            s.list.append((token, notify))
            return token
        }
    }

    func unsubscribe(_ token: UInt64) {
        subscribers.withLock { $0.list.removeAll { $0.token == token } }
    }

    private func notify(from: String?, to: String) {
        let list = subscribers.withLock { $0.list }
        for s in list where subscribers.withLock({ $0.list.contains { $0.token == s.token } }) {
            s.notify(from, to)
        }
        let payload = JSON.object([("from", from.map(JSON.string) ?? .null), ("to", .string(to))])
        host.emit(PINCER_SERVERS_CHANGED_EVENT, payload: payload.serialized())
    }

    // MARK: display variables (not persisted: the app registers them each run)

    func setDisplay(_ name: String, _ value: String?) throws(ServersError) {
        guard !name.isEmpty else { throw .invalid("display variable name is empty") }
        display.withLock { list in
            list.removeAll { $0.name == name }
            if let value { list.append((name, value)) }
        }
    }

    var displayVariables: [(name: String, value: String)] { display.withLock { $0 } }

    // MARK: persistence

    static func encode(_ s: State) -> String {
        JSON.object([
            ("version", .int(1)),
            ("current", s.chosen.map(JSON.string) ?? .null),
            ("environments", .array(s.order.compactMap { id in
                s.environments[id].map { e in
                    .object([("id", .string(e.id)), ("name", .string(e.name)),
                             ("variables", .object(e.variables.map { ($0.name, .string($0.value)) }))])
                }
            })),
        ]).serialized()
    }

    private func load() -> State {
        host.storedDocument(EnvironmentStore.settingsKey, what: "server environments", decode: EnvironmentStore.decode) ?? State()
    }

    static func decode(_ text: String) -> Result<State, ServersError> {
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { return .failure(.invalid("\(error)")) }
        guard doc["version"]?.int64Value == 1, let list = doc["environments"]?.arrayValue else {
            return .failure(.invalid("not a version 1 environments document"))
        }
        var s = State()
        s.chosen = doc["current"]?.stringValue
        for (i, item) in list.enumerated() {
            guard let id = item["id"]?.stringValue, Names.checkID(id) == nil, let name = item["name"]?.stringValue,
                  let vars = item["variables"]?.objectValue else {
                return .failure(.invalid("environment \(i) is malformed"))
            }
            var variables: [(name: String, value: String)] = []
            for (n, v) in vars {
                guard Names.checkVariable(n) == nil, let value = v.stringValue else {
                    return .failure(.invalid("environment '\(id)': variable '\(n)' is malformed"))
                }
                variables.append((n, value))
            }
            if s.environments[id] == nil { s.order.append(id) }
            s.environments[id] = Environment(id: id, name: name, variables: variables.sorted { $0.name < $1.name })
        }
        return .success(s)
    }
}
