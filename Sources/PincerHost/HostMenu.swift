import CPincerSDK

/// The menu as the shell and attached clients see it: sections in order,
/// entry values computed on demand, persisted values, pins and search.
extension Host {
    private static let pinPrefix = "pin."

    /// Sections in display order; Pinned first when anything is pinned.
    public func sections() -> [Section] {
        var list = sectionsByOrder()
        if !pinnedEntryIDs().isEmpty {
            list.insert(Section(id: Section.pinnedID, title: "Pinned", order: 0, pluginID: nil), at: 0)
        }
        return list
    }

    /// Entries of a section in registration order (Pinned: in pin order).
    public func entries(inSection id: String) -> [Entry] {
        if id == Section.pinnedID { return pinnedEntryIDs().compactMap { entry(id: $0) } }
        return entries.filter { $0.sectionID == id }
    }

    /// The entry as its loaded plugin registered it: a registry placeholder
    /// loads its plugin first (its callbacks exist only then).
    public func bound(_ entry: Entry) throws(HostError) -> Entry {
        guard let plugin = entry.deferred else { return entry }
        do { return try plugin.entry(id: entry.fullID) } catch {
            throw HostError(kind: error.status == PINCER_NOT_FOUND ? .notFound : .failed, message: error.message)
        }
    }

    /// What an entry shows now. Plugin failures become `.failed`, never a throw.
    public func state(of placeholder: Entry) -> EntryState {
        var entry = placeholder
        if placeholder.kind == .value || placeholder.kind == .page || placeholder.isPluginValue {
            do { entry = try bound(placeholder) } catch { return .failed(error.message) }
        }
        switch entry.kind {
        case .value:
            do { return .value(try entry.produce().text ?? "") } catch { return .failed(error.message) }
        case .page:
            do { return .rows(try entry.produce().rows) } catch { return .failed(error.message) }
        case .action:
            return .action(command: entry.command ?? "")
        case .toggle, .choice, .text:
            if entry.isPluginValue {
                do {
                    let reply = try entry.produce()
                    return .pluginValue(reply.text ?? "", details: reply.rows)
                } catch { return .failed(error.message) }
            }
            do { return .value(try storedValue(of: entry)) } catch { return .failed(error.message) }
        }
    }

    /// The persisted value of a toggle, choice or text entry, or its default.
    public func storedValue(of entry: Entry) throws(HostError) -> String {
        do {
            let stored = try settings().get(namespace: entry.pluginID, key: entry.localID)
            if let stored, entry.kind != .choice || entry.choices.contains(stored) { return stored }
            return entry.defaultValue
        } catch {
            throw HostError(kind: .failed, message: error.message)
        }
    }

    /// Validates `text` for the entry's kind, then persists it and tells the
    /// plugin, or for a plugin-valued entry hands it to the plugin's `set`.
    /// Returns the value as stored.
    @discardableResult
    public func setValue(_ text: String, of entry: Entry) throws(HostError) -> String {
        let value: String
        switch entry.kind {
        case .toggle:
            guard case .success(.bool(let b)) = ValueConversion.convert(text, to: .bool) else {
                throw HostError(kind: .invalidArgument, message: "\(entry.fullID) is a toggle: expected true or false, got '\(text)'")
            }
            value = b ? "true" : "false"
        case .choice:
            guard entry.choices.contains(text) else {
                if entry.choices.isEmpty { throw HostError(kind: .invalidArgument, message: "\(entry.fullID) has nothing to choose from yet") }
                throw HostError(kind: .invalidArgument, message: "\(entry.fullID) is a choice: expected one of \(entry.choices.joined(separator: ", ")), got '\(text)'")
            }
            value = text
        case .text:
            value = text
        case .value, .action, .page:
            throw HostError(kind: .invalidArgument, message: "\(entry.fullID) is a \(entry.kind.rawValue) entry and has no value to set")
        }
        if entry.isPluginValue {
            let real = try bound(entry)
            do { try real.apply(value) } catch {
                throw HostError(kind: error.status == PINCER_INVALID_ARGUMENT || error.status == PINCER_NOT_FOUND ? .invalidArgument : .failed,
                                message: error.message)
            }
        } else {
            do {
                try settings().set(namespace: entry.pluginID, key: entry.localID, value: value)
            } catch {
                throw HostError(kind: .failed, message: error.message)
            }
            if let plugin = entry.deferred {
                // A placeholder: load the plugin only if it wants to hear of the change.
                if plugin.entriesCallingBack.contains(entry.fullID) { try bound(entry).notifyChanged(value) }
            } else {
                entry.notifyChanged(value)
            }
        }
        events.emit(topic: "pincer.entry-changed", payload: "{\"entry\":\(JSON.quote(entry.fullID)),\"value\":\(JSON.quote(value))}")
        return value
    }

    /// Runs an action entry's command with its defaults.
    public func activate(_ entry: Entry) throws(HostError) -> Value {
        guard entry.kind == .action, let name = entry.command else {
            throw HostError(kind: .invalidArgument, message: "\(entry.fullID) is a \(entry.kind.rawValue) entry, not an action")
        }
        guard let command = command(named: name) else {
            throw HostError(kind: .notFound, message: "\(entry.fullID) runs \(name), which is not registered")
        }
        var args: [Value] = []
        for p in command.signature.fixedParameters { // a rest parameter gets no items
            guard let d = p.defaultValue else {
                throw HostError(kind: .invalidArgument, message: "\(entry.fullID) runs \(name), whose parameter '\(p.name)' has no default")
            }
            args.append(d)
        }
        do { return try command.invoke(args) } catch { throw HostError(kind: .failed, message: error.message) }
    }

    // MARK: pins (stored in the host's own namespace, in pin order)

    public func pinnedEntryIDs() -> [String] {
        guard let all = try? settings().all(namespace: Host.namespace) else { return [] }
        return all.filter { $0.key.hasPrefix(Host.pinPrefix) }
            .sorted { (Int64($0.value) ?? 0, $0.key) < (Int64($1.value) ?? 0, $1.key) }
            .map { String($0.key.dropFirst(Host.pinPrefix.count)) }
    }

    public func isPinned(_ entry: Entry) -> Bool { pinnedEntryIDs().contains(entry.fullID) }

    public func setPinned(_ pinned: Bool, _ entry: Entry) throws(HostError) {
        do {
            let store = try settings()
            if pinned {
                let next = (try store.all(namespace: Host.namespace)
                    .filter { $0.key.hasPrefix(Host.pinPrefix) }
                    .compactMap { Int64($0.value) }.max() ?? 0) + 1
                if try store.get(namespace: Host.namespace, key: Host.pinPrefix + entry.fullID) == nil {
                    try store.set(namespace: Host.namespace, key: Host.pinPrefix + entry.fullID, value: String(next))
                }
            } else {
                try store.set(namespace: Host.namespace, key: Host.pinPrefix + entry.fullID, value: nil)
            }
        } catch {
            throw HostError(kind: .failed, message: error.message)
        }
    }

    // MARK: search

    public struct SearchResults: Sendable {
        public let entries: [Entry]
        public let commands: [Command]
    }

    /// Case-insensitive substring search over ids, titles, summaries and signatures.
    public func search(_ text: String) -> SearchResults {
        let needle = text.lowercased()
        func matches(_ fields: [String]) -> Bool { fields.contains { $0.lowercased().contains(needle) } }
        return SearchResults(
            entries: entries.filter { matches([$0.fullID, $0.title, $0.summary]) },
            // Matched on the listing; only the commands found are made (placeholders of deferred plugins).
            commands: commandListing().filter { matches([$0.fullName, $0.summary, $0.signatureText]) }.compactMap { command(named: $0.fullName) })
    }
}
