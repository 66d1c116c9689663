#if canImport(Glibc)
import Glibc
#endif

/// The host API table, wrapped for Swift. Everything registered here is
/// copied by the host; closures are kept alive by this object, which lives
/// until the plugin's shutdown.
public final class PluginHost: @unchecked Sendable {
    public let table: UnsafePointer<pincer_host_t>
    private var retained: [AnyObject] = []
    private let retainLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init(_ table: UnsafePointer<pincer_host_t>) {
        self.table = table
        pthread_mutex_init(retainLock, nil)
    }

    private func keep(_ object: AnyObject) -> UnsafeMutableRawPointer {
        pthread_mutex_lock(retainLock)
        retained.append(object)
        pthread_mutex_unlock(retainLock)
        return Unmanaged.passUnretained(object).toOpaque()
    }

    /// PINCER_HAS_SLOT for the host table: whether the host's table is large
    /// enough to hold a slot appended after 1.0.
    public func hasSlot<T>(_ slot: KeyPath<pincer_host_t, T>) -> Bool {
        guard let offset = MemoryLayout<pincer_host_t>.offset(of: slot) else { return false }
        return Int(table.pointee.struct_size) >= offset + MemoryLayout<T>.size
    }

    /// The host's state directory (ABI 1.1), where a plugin may keep its own files.
    public var stateDirectory: String? {
        guard hasSlot(\.state_directory), let p = table.pointee.state_directory else { return nil }
        return String(cString: p)
    }

    private func check(_ status: pincer_status_t) throws {
        guard status == PINCER_OK else {
            throw CommandError(table.pointee.last_error(table).map { String(cString: $0) } ?? "host call failed", status: status)
        }
    }

    // MARK: log, settings

    public enum LogLevel: UInt32 { case debug = 0, info, warning, error }

    public func log(_ level: LogLevel, _ message: String) {
        message.withCString { table.pointee.log(table, level.rawValue, $0) }
    }

    /// The plugin's own persistent setting, or nil when unset.
    public func setting(_ key: String) -> String? {
        key.withCString { k -> String? in
            var capacity = 256
            while true {
                var buffer = [CChar](repeating: 0, count: capacity)
                let n = table.pointee.settings_get(table, k, &buffer, UInt64(capacity))
                if n < 0 { return nil }
                if Int(n) < capacity {
                    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                }
                capacity = Int(n) + 1
            }
        }
    }

    /// Stores (or with nil, removes) a persistent setting.
    public func setSetting(_ key: String, _ value: String?) throws {
        let status = key.withCString { k in
            if let value { return value.withCString { table.pointee.settings_set(table, k, $0) } }
            return table.pointee.settings_set(table, k, nil)
        }
        try check(status)
    }

    /// What `updateSetting` does with the value it read.
    public enum SettingChange: Sendable, Equatable {
        /// Leave it as it is; nothing is written.
        case keep
        /// Store this value.
        case set(String)
        /// Remove the key.
        case remove
    }

    private final class UpdateBox {
        let decide: (String?) throws -> SettingChange
        var failure: (any Error)?
        var value: UnsafeMutablePointer<CChar>?
        init(_ decide: @escaping (String?) throws -> SettingChange) { self.decide = decide }
        deinit { free(value) }
    }

    /// Changes a setting atomically (settings_update, ABI 1.4): `decide`
    /// gets the stored value (nil when unset) and says what it becomes, and
    /// the read and the write are one transaction of the store, so a change
    /// another process makes in between is never overwritten. `decide` runs
    /// once, on this thread, with the store locked: keep it quick and do not
    /// use the settings from it. An error it throws cancels the change
    /// (nothing is written) and is rethrown here. Throws PINCER_UNSUPPORTED
    /// on a host older than 1.4.
    public func updateSetting(_ key: String, _ decide: (String?) throws -> SettingChange) throws {
        guard hasSlot(\.settings_update), let update = table.pointee.settings_update else {
            throw CommandError("this host (ABI \(table.pointee.abi_major).\(table.pointee.abi_minor)) has no settings_update "
                + "(ABI 1.4), so setting '\(key)' cannot be changed atomically", status: PINCER_UNSUPPORTED)
        }
        let status = try withoutActuallyEscaping(decide) { decide -> pincer_status_t in
            let box = UpdateBox(decide)
            let status = withExtendedLifetime(box) {
                key.withCString { k in
                    update(table, k, { context, current, newValue in
                        let box = Unmanaged<UpdateBox>.fromOpaque(context!).takeUnretainedValue()
                        do {
                            switch try box.decide(current.map { String(cString: $0) }) {
                            case .keep: return PINCER_SETTING_KEEP
                            case .remove: return PINCER_SETTING_DELETE
                            case .set(let text):
                                free(box.value)
                                box.value = strdup(text)
                                newValue?.pointee = UnsafePointer(box.value)
                                return PINCER_SETTING_REPLACE
                            }
                        } catch {
                            box.failure = error
                            return PINCER_SETTING_CANCEL
                        }
                    }, Unmanaged.passUnretained(box).toOpaque())
                }
            }
            if let failure = box.failure { throw failure }
            return status
        }
        try check(status)
    }

    /// The plugin's settings whose key starts with `prefix` ("" for all),
    /// sorted by key, from one read of the store (settings_list, ABI 1.4).
    /// Throws PINCER_UNSUPPORTED on a host older than 1.4.
    public func settings(prefix: String = "") throws -> [(key: String, value: String)] {
        guard hasSlot(\.settings_list), let list = table.pointee.settings_list else {
            throw CommandError("this host (ABI \(table.pointee.abi_major).\(table.pointee.abi_minor)) has no settings_list (ABI 1.4)",
                               status: PINCER_UNSUPPORTED)
        }
        final class Rows { var list: [(key: String, value: String)] = [] }
        let rows = Rows()
        let status = withExtendedLifetime(rows) {
            prefix.withCString { p in
                list(table, p, { context, key, value in
                    guard let context, let key else { return }
                    Unmanaged<Rows>.fromOpaque(context).takeUnretainedValue().list
                        .append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                }, Unmanaged.passUnretained(rows).toOpaque())
            }
        }
        try check(status)
        return rows.list
    }

    /// A document the plugin keeps under one setting: nil when there is
    /// none. One that `decode` rejects is moved aside to "<key>.unreadable"
    /// (so nothing is lost), logged with `what` and the reason, and reads as nil.
    public func storedDocument<T, E: Error>(_ key: String, what: String, decode: (String) -> Result<T, E>) -> T? {
        guard let text = setting(key) else { return nil }
        switch decode(text) {
        case .success(let value): return value
        case .failure(let why):
            setAside(key, text, what: what, why: "\(why)")
            return nil
        }
    }

    /// Keeps an unreadable document under "<key>.unreadable" and removes it
    /// from `key`, but only if `key` still holds that text: a readable
    /// document another process wrote meanwhile is left alone.
    private func setAside(_ key: String, _ text: String, what: String, why: String) {
        log(.error, "stored \(what) are unreadable (\(why)); kept them under the key '\(key).unreadable' and started empty")
        try? setSetting("\(key).unreadable", text)
        if hasSlot(\.settings_update) {
            try? updateSetting(key) { current in current == text ? .remove : .keep }
        } else {
            try? setSetting(key, nil)
        }
    }

    /// The read-modify-write form of `storedDocument`: in one transaction
    /// (`updateSetting`), decodes the stored document (nil when there is
    /// none), lets `change` make the new one from it, and stores that. A
    /// document `decode` rejects is first set aside as `storedDocument`
    /// does, and `change` then gets nil. `change` runs with the store
    /// locked (quick, no settings calls); an error it throws leaves the
    /// store unchanged and is rethrown.
    public func updateDocument<T, E: Error>(_ key: String, what: String, decode: (String) -> Result<T, E>,
                                            _ change: (T?) throws -> String) throws {
        // Twice at most: once more only after an unreadable document was set aside.
        for _ in 0..<2 {
            var unreadable: (text: String, why: String)?
            try updateSetting(key) { text in
                guard let text else { return .set(try change(nil)) }
                switch decode(text) {
                case .success(let document): return .set(try change(document))
                case .failure(let why):
                    unreadable = (text, "\(why)")
                    return .keep
                }
            }
            guard let (text, why) = unreadable else { return }
            setAside(key, text, what: what, why: why)
        }
        throw CommandError("stored \(what) under '\(key)' are still unreadable after setting them aside")
    }

    // MARK: events and services

    public func emit(_ topic: String, payload: String? = nil) {
        _ = topic.withCString { t in
            if let payload { return payload.withCString { table.pointee.emit(table, t, $0) } }
            return table.pointee.emit(table, t, nil)
        }
    }

    private final class EventBox {
        let handler: (String, String?) -> Void
        init(_ handler: @escaping (String, String?) -> Void) { self.handler = handler }
    }

    /// Subscribes to a topic; returns the token for `unsubscribe`.
    @discardableResult
    public func subscribe(_ topic: String, _ handler: @escaping (_ topic: String, _ payload: String?) -> Void) -> UInt64 {
        let context = keep(EventBox(handler))
        return topic.withCString { t in
            table.pointee.subscribe(table, t, { context, topic, payload in
                guard let context, let topic else { return }
                Unmanaged<EventBox>.fromOpaque(context).takeUnretainedValue()
                    .handler(String(cString: topic), payload.map { String(cString: $0) })
            }, context)
        }
    }

    public func unsubscribe(_ token: UInt64) { table.pointee.unsubscribe(table, token) }

    /// Publishes a service table; it must stay valid until shutdown.
    public func publishService(_ id: String, table service: UnsafeRawPointer) throws {
        try check(id.withCString { table.pointee.publish_service(table, $0, service) })
    }

    public func service(_ id: String) -> UnsafeRawPointer? {
        id.withCString { table.pointee.get_service(table, $0) }
    }

    // MARK: menu

    public func addSection(id: String, title: String, order: Int32) throws {
        let arena = CStringArena()
        var s = pincer_section_t()
        s.struct_size = UInt32(MemoryLayout<pincer_section_t>.size)
        s.order = order
        s.id = arena.c(id)
        s.title = arena.c(title)
        try check(add_section(&s))
    }

    private func add_section(_ s: inout pincer_section_t) -> pincer_status_t { table.pointee.add_section(table, &s) }

    private final class ReadBox {
        let produce: (UnsafeMutablePointer<pincer_call_t>) throws -> Void
        init(_ produce: @escaping (UnsafeMutablePointer<pincer_call_t>) throws -> Void) { self.produce = produce }
    }

    private final class ChangedBox {
        let changed: (String) -> Void
        init(_ changed: @escaping (String) -> Void) { self.changed = changed }
    }

    private func addEntry(kind: pincer_entry_kind_t, id: String, title: String, section: String?, summary: String?,
                          read: ReadBox? = nil, changed: ((String) -> Void)? = nil, set: SetBox? = nil,
                          defaultValue: String? = nil, choices: [String] = [], command: String? = nil,
                          secret: Bool = false, update: Bool = false) throws {
        let arena = CStringArena()
        var e = pincer_entry_t()
        e.struct_size = UInt32(MemoryLayout<pincer_entry_t>.size)
        e.kind = kind
        e.id = arena.c(id)
        e.section = arena.c(section)
        e.title = arena.c(title)
        e.summary = arena.c(summary)
        e.default_value = arena.c(defaultValue)
        e.command = arena.c(command)
        e.flags = (secret ? PINCER_ENTRY_SECRET : 0) | (set != nil ? PINCER_ENTRY_PLUGIN_VALUE : 0)
        // One context object carries every callback.
        let box = EntryBox(read: read, changed: changed.map(ChangedBox.init), set: set)
        e.context = keep(box)
        if read != nil {
            e.read = { context, call in
                guard let context, let call else { return PINCER_INVALID_ARGUMENT }
                let box = Unmanaged<EntryBox>.fromOpaque(context).takeUnretainedValue()
                return PluginHost.report(call) { try box.read?.produce(call) }
            }
        }
        if changed != nil {
            e.changed = { context, _, value in
                guard let context else { return }
                Unmanaged<EntryBox>.fromOpaque(context).takeUnretainedValue().changed?.changed(value.map { String(cString: $0) } ?? "")
            }
        }
        if set != nil {
            e.set = { context, call, value in
                guard let context, let call else { return PINCER_INVALID_ARGUMENT }
                let box = Unmanaged<EntryBox>.fromOpaque(context).takeUnretainedValue()
                return PluginHost.report(call) { try box.set?.apply(value.map { String(cString: $0) } ?? "") }
            }
        }
        let cChoices = choices.map { arena.c($0) }
        let status = cChoices.withUnsafeBufferPointer { buffer -> pincer_status_t in
            e.choices = buffer.isEmpty ? nil : buffer.baseAddress
            e.choice_count = UInt32(buffer.count)
            if update {
                guard hasSlot(\.update_entry) else { return PINCER_UNSUPPORTED }
                return table.pointee.update_entry(table, &e)
            }
            return table.pointee.add_entry(table, &e)
        }
        if status == PINCER_UNSUPPORTED && update {
            throw CommandError("this host (ABI \(table.pointee.abi_major).\(table.pointee.abi_minor)) has no update_entry", status: status)
        }
        try check(status)
    }

    /// Runs `body`, turning a thrown error into call->fail and a status.
    static func report(_ call: UnsafeMutablePointer<pincer_call_t>, _ body: () throws -> Void) -> pincer_status_t {
        do {
            try body()
            return PINCER_OK
        } catch {
            let failure = CommandError(error)
            failure.message.withCString { call.pointee.fail(call, $0) }
            return failure.status
        }
    }

    private final class EntryBox {
        let read: ReadBox?
        let changed: ChangedBox?
        let set: SetBox?
        init(read: ReadBox?, changed: ChangedBox?, set: SetBox?) { self.read = read; self.changed = changed; self.set = set }
    }

    private final class SetBox {
        let apply: (String) throws -> Void
        init(_ apply: @escaping (String) throws -> Void) { self.apply = apply }
    }

    /// The kinds of entry whose value a plugin may keep itself.
    public enum PluginValueKind { case toggle, choice, text }

    /// An entry whose value the plugin keeps (PINCER_ENTRY_PLUGIN_VALUE):
    /// `read` gives the current value and details shown beside it; `set`
    /// applies a change (already checked against the kind) or throws to
    /// refuse it. For text entries `choices` are completion suggestions.
    /// With `update`, replaces the registration of an existing entry in place.
    public func addPluginValueEntry(_ kind: PluginValueKind, id: String, title: String, section: String? = nil,
                                    summary: String? = nil, choices: [String] = [], update: Bool = false,
                                    read: @escaping () throws -> (value: String, details: [(title: String, value: String?)]),
                                    set: @escaping (String) throws -> Void) throws {
        let sdkKind: pincer_entry_kind_t = switch kind {
        case .toggle: PINCER_ENTRY_TOGGLE
        case .choice: PINCER_ENTRY_CHOICE
        case .text: PINCER_ENTRY_TEXT
        }
        try addEntry(kind: sdkKind, id: id, title: title, section: section, summary: summary,
                     read: ReadBox { call in
                         let (value, details) = try read()
                         value.withCString { call.pointee.return_string(call, $0) }
                         PluginHost.addRows(details, to: call)
                     },
                     set: SetBox(set), defaultValue: kind == .choice ? choices.first : nil, choices: choices, update: update)
    }

    static func addRows(_ rows: [(title: String, value: String?)], to call: UnsafeMutablePointer<pincer_call_t>) {
        for row in rows {
            row.title.withCString { t in
                if let v = row.value {
                    v.withCString { call.pointee.add_row(call, t, $0) }
                } else {
                    call.pointee.add_row(call, t, nil)
                }
            }
        }
    }

    /// A label with a value computed each time the menu is shown.
    public func addValueRow(id: String, title: String, section: String? = nil, summary: String? = nil,
                            value: @escaping () throws -> String) throws {
        try addEntry(kind: PINCER_ENTRY_VALUE, id: id, title: title, section: section, summary: summary,
                     read: ReadBox { call in try value().withCString { call.pointee.return_string(call, $0) } })
    }

    /// A persisted switch; read its value with `setting(id)` ("true"/"false").
    public func addToggle(id: String, title: String, section: String? = nil, summary: String? = nil,
                          default on: Bool = false, changed: ((Bool) -> Void)? = nil) throws {
        try addEntry(kind: PINCER_ENTRY_TOGGLE, id: id, title: title, section: section, summary: summary,
                     changed: changed.map { f in { f($0 == "true") } }, defaultValue: on ? "true" : "false")
    }

    public func addChoice(id: String, title: String, choices: [String], default value: String? = nil,
                          section: String? = nil, summary: String? = nil, changed: ((String) -> Void)? = nil) throws {
        try addEntry(kind: PINCER_ENTRY_CHOICE, id: id, title: title, section: section, summary: summary,
                     changed: changed, defaultValue: value, choices: choices)
    }

    public func addTextField(id: String, title: String, default value: String = "", secret: Bool = false,
                             section: String? = nil, summary: String? = nil, changed: ((String) -> Void)? = nil) throws {
        try addEntry(kind: PINCER_ENTRY_TEXT, id: id, title: title, section: section, summary: summary,
                     changed: changed, defaultValue: value, secret: secret)
    }

    /// An entry that runs one of the plugin's commands (by its signature name).
    public func addAction(id: String, title: String, command: String, section: String? = nil, summary: String? = nil) throws {
        try addEntry(kind: PINCER_ENTRY_ACTION, id: id, title: title, section: section, summary: summary, command: command)
    }

    /// A nested list produced each time it is opened.
    public func addPage(id: String, title: String, section: String? = nil, summary: String? = nil,
                        rows: @escaping () throws -> [(title: String, value: String?)]) throws {
        try addEntry(kind: PINCER_ENTRY_PAGE, id: id, title: title, section: section, summary: summary,
                     read: ReadBox { call in PluginHost.addRows(try rows(), to: call) })
    }

    // MARK: commands

    private final class CommandBox {
        let handler: (Arguments) throws -> CommandValue
        init(_ handler: @escaping (Arguments) throws -> CommandValue) { self.handler = handler }
    }

    /// Registers a command by signature (grammar in SDK/include/pincer/command.h).
    /// The handler gets the converted arguments, defaults filled in, and
    /// returns a value of the signature's result type.
    /// With `jsonResult`, the command returns one JSON document as its string
    /// result and the shell renders it (PINCER_COMMAND_JSON_RESULT).
    /// With `concurrent`, the host may run it while other callbacks of the
    /// plugin run (PINCER_COMMAND_CONCURRENT): the handler guards its own state.
    public func addCommand(_ signature: String, summary: String, details: String? = nil, changesState: Bool = false,
                           jsonResult: Bool = false, concurrent: Bool = false,
                           _ handler: @escaping (Arguments) throws -> CommandValue) throws {
        let arena = CStringArena()
        var c = pincer_command_t()
        c.struct_size = UInt32(MemoryLayout<pincer_command_t>.size)
        c.flags = (changesState ? PINCER_COMMAND_CHANGES_STATE : 0) | (jsonResult ? PINCER_COMMAND_JSON_RESULT : 0)
            | (concurrent ? PINCER_COMMAND_CONCURRENT : 0)
        c.signature = arena.c(signature)
        c.summary = arena.c(summary)
        c.details = arena.c(details)
        c.context = keep(CommandBox(handler))
        c.values = { context, call, args, count, result in
            guard let context, let call else { return PINCER_INVALID_ARGUMENT }
            let box = Unmanaged<CommandBox>.fromOpaque(context).takeUnretainedValue()
            var status = PINCER_OK
            let reported = PluginHost.report(call) {
                status = try box.handler(Arguments(base: args, count: Int(count), call: call)).store(into: result, call: call)
            }
            return reported == PINCER_OK ? status : reported
        }
        try check(table.pointee.add_command(table, &c))
    }
}

/// Strings copied for the duration of one registration call.
final class CStringArena {
    private var pointers: [UnsafeMutablePointer<CChar>] = []
    func c(_ s: String?) -> UnsafePointer<CChar>? {
        guard let s, let p = strdup(s) else { return nil }
        pointers.append(p)
        return UnsafePointer(p)
    }
    deinit { for p in pointers { free(p) } }
}
