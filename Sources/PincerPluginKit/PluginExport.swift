@_exported import CPincerSDK
@_exported import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// What a Swift plugin says about itself; becomes the C entry record.
public struct PluginMetadata: Sendable {
    public let id: String
    public let shortName: String
    public let name: String
    public let version: String
    public let summary: String
    /// The plugin adds entries that follow its stored state in
    /// `syncEntries()` (pincer_plugin_t.sync_entries, ABI 1.5).
    public let entriesFollowState: Bool

    public init(id: String, shortName: String, name: String, version: String, summary: String = "", entriesFollowState: Bool = false) {
        self.id = id
        self.shortName = shortName
        self.name = name
        self.version = version
        self.summary = summary
        self.entriesFollowState = entriesFollowState
    }
}

/// A plugin written in Swift. The host calls `register(with:)` from the C
/// init callback; throwing makes the host refuse the plugin with the error's text.
public protocol PincerPlugin: AnyObject {
    func register(with host: PluginHost) throws
    /// Called once when the host shuts down. The default does nothing.
    func shutdown()
    /// For `entriesFollowState` plugins: open the state and add the entries
    /// that follow it (entry.h, sync_entries). The default does nothing.
    func syncEntries() throws
}

extension PincerPlugin {
    public func shutdown() {}
    public func syncEntries() throws {}
}

/// Owns a plugin's C entry record for the life of the process. Keep one in a
/// `static let` and return `record` from the exported entry function:
///
///     let export = PluginExport(metadata) { MyPlugin() }
///     @_cdecl("pincer_plugin_entry")
///     public func pincerPluginEntry(_ major: UInt32, _ minor: UInt32) -> UnsafeRawPointer? {
///         export.entry(hostMajor: major)
///     }
public final class PluginExport: @unchecked Sendable {
    public let record: UnsafePointer<pincer_plugin_t>
    private let make: () -> PincerPlugin
    fileprivate var instance: PincerPlugin?
    fileprivate var host: PluginHost?

    public init(_ metadata: PluginMetadata, make: @escaping () -> PincerPlugin) {
        self.make = make
        let r = UnsafeMutablePointer<pincer_plugin_t>.allocate(capacity: 1)
        var p = pincer_plugin_t()
        p.magic = PINCER_PLUGIN_MAGIC
        p.abi_major = PINCER_ABI_MAJOR
        p.abi_minor = PINCER_ABI_MINOR
        p.struct_size = UInt32(MemoryLayout<pincer_plugin_t>.size)
        // The record lives as long as the process, so these copies are never freed.
        p.id = UnsafePointer(strdup(metadata.id))
        p.short_name = UnsafePointer(strdup(metadata.shortName))
        p.name = UnsafePointer(strdup(metadata.name))
        p.version = UnsafePointer(strdup(metadata.version))
        p.summary = UnsafePointer(strdup(metadata.summary))
        p.`init` = { context, table, reply in
            guard let context, let table else { return PINCER_INVALID_ARGUMENT }
            let export = Unmanaged<PluginExport>.fromOpaque(context).takeUnretainedValue()
            let host = PluginHost(table)
            let plugin = export.make()
            do {
                try plugin.register(with: host)
            } catch {
                let failure = CommandError(error)
                failure.message.withCString { reply?.pointee.fail(reply, $0) }
                return failure.status
            }
            export.instance = plugin
            export.host = host
            return PINCER_OK
        }
        p.shutdown = { context in
            guard let context else { return }
            let export = Unmanaged<PluginExport>.fromOpaque(context).takeUnretainedValue()
            export.instance?.shutdown()
            export.instance = nil
        }
        if metadata.entriesFollowState {
            p.sync_entries = { context, reply in
                guard let context else { return PINCER_INVALID_ARGUMENT }
                let export = Unmanaged<PluginExport>.fromOpaque(context).takeUnretainedValue()
                do { try export.instance?.syncEntries() } catch {
                    let failure = CommandError(error)
                    failure.message.withCString { reply?.pointee.fail(reply, $0) }
                    return failure.status
                }
                return PINCER_OK
            }
        }
        r.initialize(to: p)
        record = UnsafePointer(r)
        r.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The value to return from `pincer_plugin_entry`: the record, or nil
    /// (declining to load) when the host speaks another ABI major.
    public func entry(hostMajor: UInt32) -> UnsafeRawPointer? {
        hostMajor == PINCER_ABI_MAJOR ? UnsafeRawPointer(record) : nil
    }
}

/// An error that knows which SDK status it stands for; thrown from a
/// command or entry callback it reaches the host with that status.
public protocol StatusError: Error, CustomStringConvertible {
    var status: pincer_status_t { get }
}

/// Any error a plugin throws becomes a status and a message at the C boundary.
public struct CommandError: Error, CustomStringConvertible, Sendable {
    public let status: pincer_status_t
    public let message: String

    public init(_ message: String, status: pincer_status_t = PINCER_FAILED) {
        self.message = message
        self.status = status
    }

    public static func invalidArgument(_ message: String) -> CommandError {
        CommandError(message, status: PINCER_INVALID_ARGUMENT)
    }

    init(_ error: Error) {
        if let e = error as? CommandError { self = e }
        else if let e = error as? StatusError { self.init(String(describing: e), status: e.status) }
        else { self.init(String(describing: error)) }
    }

    public var description: String { message }
}
