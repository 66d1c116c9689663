import PincerPluginKit
import Synchronization

/// The flags and their overrides: the writer side. Every change is
/// persisted first (one settings write, so it lands whole or not at all),
/// then published to lock-free readers, then announced.
///
/// The stored document is re-read and rewritten in one transaction of the
/// settings store for each change, so a change made by another process
/// sharing the store (the `pincer` shell beside a running app, another
/// shell) at the same moment is merged rather than overwritten.
final class FlagStore: @unchecked Sendable {
    struct State {
        var flags: [String: Flag] = [:]
        /// Registration order, for listings and the menu.
        var order: [String] = []
        var overridesEnabled = true
    }

    /// A change the plugin turns into menu entries and events after unlocking.
    struct Change {
        var flag: String?
        var kind: String
        var newFlag: Flag?
        var summaryChanged = false
    }

    static let settingsKey = "state"
    private let host: PluginHost
    private let state = Mutex(State())
    let readers: SnapshotPublisher
    /// Called after each change, outside the lock (menu entries, events).
    var onChange: (@Sendable (Change) -> Void)?

    /// Reads the stored document (what the plugin's first use does) and
    /// publishes it to `readers`.
    init(host: PluginHost, readers: SnapshotPublisher) {
        self.host = host
        self.readers = readers
        let loaded = load()
        state.withLock { $0 = loaded }
        publish(loaded)
    }

    // MARK: reading

    var snapshot: State { state.withLock { $0 } }

    func flag(_ key: String) -> Flag? { state.withLock { $0.flags[key] } }

    // MARK: changes

    /// Registers `key` with a remote value, or updates the remote value.
    func register(_ key: String, remote: FlagValue, summary: String?) throws(FlagError) {
        if let problem = FlagKey.check(key) { throw problem }
        if case .double(let d) = remote, !d.isFinite { throw .invalid("flag '\(key)': remote value \(d) is not finite") }
        try mutate { s throws(FlagError) -> Change in
            if var existing = s.flags[key] {
                if existing.type != remote.type {
                    guard !existing.registeredHere else {
                        throw .conflict("flag '\(key)' is registered as \(existing.type.rawValue), not \(remote.type.rawValue)")
                    }
                    // Known only from the store: the app changed the flag's type.
                    existing.override = nil
                }
                let newSummary = summary ?? existing.summary
                let summaryChanged = newSummary != existing.summary
                existing.remote = remote
                existing.summary = newSummary
                existing.registeredHere = true
                s.flags[key] = existing
                return Change(flag: key, kind: "registered", summaryChanged: summaryChanged)
            }
            let flag = Flag(key: key, remote: remote, summary: summary ?? "", override: nil, registeredHere: true)
            s.flags[key] = flag
            s.order.append(key)
            return Change(flag: key, kind: "registered", newFlag: flag)
        }
    }

    func setOverride(_ key: String, text: String) throws(FlagError) {
        try mutate { s throws(FlagError) -> Change in
            guard var flag = s.flags[key] else { throw FlagStore.unknown(key, in: s) }
            switch FlagValue.parse(text, as: flag.type) {
            case .success(let v): flag.override = v
            case .failure(let e): throw .invalid("flag '\(key)' is \(flag.type.rawValue): \(e)")
            }
            s.flags[key] = flag
            return Change(flag: key, kind: "override")
        }
    }

    func clearOverride(_ key: String) throws(FlagError) {
        try mutate { s throws(FlagError) -> Change in
            guard s.flags[key] != nil else { throw FlagStore.unknown(key, in: s) }
            s.flags[key]!.override = nil
            return Change(flag: key, kind: "cleared")
        }
    }

    /// Returns how many overrides were removed.
    @discardableResult
    func clearAll() throws(FlagError) -> Int {
        var cleared = 0
        try mutate { s throws(FlagError) -> Change in
            for key in s.order where s.flags[key]?.override != nil {
                s.flags[key]!.override = nil
                cleared += 1
            }
            return Change(flag: nil, kind: "cleared-all")
        }
        return cleared
    }

    func setOverridesEnabled(_ on: Bool) throws(FlagError) {
        try mutate { s throws(FlagError) -> Change in
            s.overridesEnabled = on
            return Change(flag: nil, kind: "overrides-enabled")
        }
    }

    /// Applies a whole set of overrides in one write (flags.import).
    func apply(overrides: [(String, FlagValue?)], overridesEnabled: Bool?) throws(FlagError) {
        try mutate { s throws(FlagError) -> Change in
            for (key, value) in overrides {
                guard s.flags[key] != nil else { throw FlagStore.unknown(key, in: s) }
                s.flags[key]!.override = value
            }
            if let overridesEnabled { s.overridesEnabled = overridesEnabled }
            return Change(flag: nil, kind: "imported")
        }
    }

    static func unknown(_ key: String, in s: State) -> FlagError {
        let known = s.order.isEmpty ? "no flag is registered" : "registered: \(s.order.prefix(8).joined(separator: ", "))\(s.order.count > 8 ? ", ..." : "")"
        return .notFound("flag '\(key)' is not registered (\(known))")
    }

    /// Re-reads the stored state, applies `change` and writes it back in one
    /// transaction of the settings store (so a change another process makes
    /// at the same moment is merged, never overwritten), then publishes. A
    /// failure anywhere leaves memory and store unchanged.
    private func mutate(_ change: (inout State) throws(FlagError) -> Change) throws(FlagError) {
        let result: Result<Change, FlagError> = state.withLock { current in
            var outcome: (change: Change, state: State)?
            var refusal: FlagError?
            do {
                try host.updateDocument(FlagStore.settingsKey, what: "flags", decode: FlagStore.decode) { stored in
                    var next = merge(stored: stored ?? State(), into: current)
                    do throws(FlagError) {
                        outcome = (try change(&next), next)
                    } catch {
                        refusal = error
                        throw error
                    }
                    return FlagStore.encode(next)
                }
            } catch {
                return .failure(refusal ?? .storage("could not save the flags: \(error)"))
            }
            guard let outcome else { return .failure(.storage("could not save the flags: the store did not apply the change")) }
            current = outcome.state
            publish(outcome.state)
            return .success(outcome.change)
        }
        switch result {
        case .success(let c): onChange?(c)
        case .failure(let e): throw e
        }
    }

    /// The stored document wins for overrides and the switch (another process
    /// may have changed them); this process's registrations stay.
    private func merge(stored: State, into current: State) -> State {
        var next = stored
        for key in current.order {
            guard let mine = current.flags[key], mine.registeredHere else { continue }
            if var theirs = next.flags[key] {
                if theirs.type != mine.type { theirs.override = nil }
                theirs.remote = mine.remote
                theirs.summary = mine.summary
                theirs.registeredHere = true
                next.flags[key] = theirs
            } else {
                next.flags[key] = mine
                next.order.append(key)
            }
        }
        return next
    }

    private func publish(_ s: State) {
        readers.publish(s.order.compactMap { key in
            guard let f = s.flags[key] else { return nil }
            let (value, reason) = f.resolved(overridesEnabled: s.overridesEnabled)
            return (key, value, reason)
        })
    }

    // MARK: persistence (one JSON document under the plugin's "state" key)

    static func encode(_ s: State) -> String {
        JSON.object([
            ("version", .int(1)),
            ("overridesEnabled", .bool(s.overridesEnabled)),
            ("flags", .array(s.order.compactMap { key in
                guard let f = s.flags[key] else { return nil }
                var fields: [(String, JSON)] = [("key", .string(key)), ("type", .string(f.type.rawValue)),
                                                ("remote", f.remote.json), ("summary", .string(f.summary))]
                if let o = f.override { fields.append(("override", o.json)) }
                return .object(fields)
            })),
        ]).serialized()
    }

    /// The stored state; an unreadable document is kept aside under another
    /// key (so nothing is lost) and the plugin starts empty.
    private func load() -> State {
        host.storedDocument(FlagStore.settingsKey, what: "flags", decode: FlagStore.decode) ?? State()
    }

    static func decode(_ text: String) -> Result<State, FlagError> {
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { return .failure(.invalid("\(error)")) }
        guard doc["version"]?.int64Value == 1, let list = doc["flags"]?.arrayValue else {
            return .failure(.invalid("not a version 1 flags document"))
        }
        var s = State()
        s.overridesEnabled = doc["overridesEnabled"]?.boolValue ?? true
        for (i, item) in list.enumerated() {
            guard let key = item["key"]?.stringValue, FlagKey.check(key) == nil,
                  let type = item["type"]?.stringValue.flatMap(FlagType.init(rawValue:)),
                  let remoteJSON = item["remote"], let remote = FlagValue.from(remoteJSON, as: type) else {
                return .failure(.invalid("flag \(i) is malformed"))
            }
            let override = item["override"].flatMap { FlagValue.from($0, as: type) }
            if s.flags[key] == nil { s.order.append(key) }
            s.flags[key] = Flag(key: key, remote: remote, summary: item["summary"]?.stringValue ?? "", override: override,
                                registeredHere: false)
        }
        return .success(s)
    }
}
