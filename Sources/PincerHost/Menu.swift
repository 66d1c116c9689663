import CPincerSDK

/// A menu section: a standard one, a plugin's own, or the host's Pinned.
public struct Section: Sendable, Equatable {
    public let id: String
    public let title: String
    public let order: Int32
    /// nil for sections the host provides.
    public let pluginID: String?

    public static let pinnedID = "pinned"

    /// The sections every host provides (ids from menu.h).
    public static let standard: [Section] = [
        Section(id: "device", title: "Device", order: 100, pluginID: nil),
        Section(id: "networking", title: "Networking", order: 200, pluginID: nil),
        Section(id: "data", title: "Data", order: 300, pluginID: nil),
        Section(id: "system", title: "System", order: 400, pluginID: nil),
        Section(id: "ui", title: "UI/UX", order: 500, pluginID: nil),
        Section(id: "development", title: "Development", order: 600, pluginID: nil),
    ]
}

public enum EntryKind: String, Sendable, CaseIterable {
    case value, toggle, choice, text, action, page

    init?(sdk: UInt32) {
        switch sdk {
        case PINCER_ENTRY_VALUE: self = .value
        case PINCER_ENTRY_TOGGLE: self = .toggle
        case PINCER_ENTRY_CHOICE: self = .choice
        case PINCER_ENTRY_TEXT: self = .text
        case PINCER_ENTRY_ACTION: self = .action
        case PINCER_ENTRY_PAGE: self = .page
        default: return nil
        }
    }

    /// Kinds whose value the host persists.
    public var isPersisted: Bool { self == .toggle || self == .choice || self == .text }
}

/// A menu entry as registered by a plugin.
public final class Entry: @unchecked Sendable {
    /// "<short name>.<local id>"
    public let fullID: String
    public let localID: String
    public let kind: EntryKind
    public let sectionID: String
    public let title: String
    public let summary: String
    public let defaultValue: String
    public let choices: [String]
    public let isSecret: Bool
    /// For actions: the full name of the command it runs.
    public let command: String?
    public let pluginID: String

    let read: pincer_entry_read_fn_t?
    let changed: pincer_entry_changed_fn_t?
    /// Set for PINCER_ENTRY_PLUGIN_VALUE entries: the plugin keeps the value.
    let setter: pincer_entry_set_fn_t?
    let context: UnsafeMutableRawPointer?
    let gate: Lock
    /// Whether the plugin, not the host's store, keeps this entry's value.
    public let isPluginValue: Bool
    /// Set while the entry is known from the plugin registry only: its
    /// callbacks exist once the host has loaded the plugin (Host.bound).
    let deferred: DeferredPlugin?

    init(fullID: String, localID: String, kind: EntryKind, sectionID: String, title: String, summary: String,
         defaultValue: String, choices: [String], isSecret: Bool, command: String?, pluginID: String,
         read: pincer_entry_read_fn_t?, changed: pincer_entry_changed_fn_t?, set: pincer_entry_set_fn_t?, context: UnsafeMutableRawPointer?, gate: Lock,
         isPluginValue: Bool? = nil, deferred: DeferredPlugin? = nil) {
        self.fullID = fullID
        self.localID = localID
        self.kind = kind
        self.sectionID = sectionID
        self.title = title
        self.summary = summary
        self.defaultValue = defaultValue
        self.choices = choices
        self.isSecret = isSecret
        self.command = command
        self.pluginID = pluginID
        self.read = read
        self.changed = changed
        self.setter = set
        self.context = context
        self.gate = gate
        self.isPluginValue = isPluginValue ?? (set != nil)
        self.deferred = deferred
    }

    /// Runs the plugin's read callback (value rows and pages).
    func produce() throws(CommandFailure) -> Reply {
        guard let read else { return Reply() }
        gate.lock()
        let (status, reply) = Reply.collect { read(context, $0) }
        gate.unlock()
        guard status == PINCER_OK else {
            throw CommandFailure(status: status, message: reply.failure.flatMap { $0.isEmpty ? nil : $0 }
                                 ?? "\(fullID) failed (\(Status.name(status))) without a message")
        }
        return reply
    }

    /// Hands a change to the plugin's set callback (plugin-valued entries).
    func apply(_ value: String) throws(CommandFailure) {
        guard let setter else { return }
        gate.lock()
        let (status, reply) = Reply.collect { call in value.withCString { setter(context, call, $0) } }
        gate.unlock()
        guard status == PINCER_OK else {
            throw CommandFailure(status: status, message: reply.failure.flatMap { $0.isEmpty ? nil : $0 }
                                 ?? "\(fullID) refused '\(value)' (\(Status.name(status))) without a message")
        }
    }

    func notifyChanged(_ value: String) {
        guard let changed else { return }
        gate.lock()
        localID.withCString { id in value.withCString { v in changed(context, id, v) } }
        gate.unlock()
    }
}

/// What an entry shows right now.
public enum EntryState: Sendable, Equatable {
    case value(String)
    /// A plugin-valued entry: its value and the details the plugin shows beside it.
    case pluginValue(String, details: [MenuRow])
    case rows([MenuRow])
    case action(command: String)
    case failed(String)
}
