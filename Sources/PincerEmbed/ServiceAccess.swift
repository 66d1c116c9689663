import CPincerSDK
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A subscription made through a typed service (`servers.subscribe`,
/// `location.subscribe`); pass it back to that service's `unsubscribe`.
/// Subscriptions still open when Pincer stops are ended by `Pincer.stop()`.
public struct PincerSubscription: Sendable, Hashable {
    /// The service id, e.g. "pincer.location/1".
    public let service: String
    /// The service's token (never 0).
    public let token: UInt64
}

/// Whether one started instance still runs, and what must be undone when
/// it stops. Shared by the instance's service wrappers.
final class Lifetime: Sendable {
    private let running = Atomic<Bool>(true)
    /// Open subscriptions: what ends each one, by (service, token).
    private let open = Mutex<[PincerSubscription: @Sendable () -> Void]>([:])

    var isRunning: Bool { running.load(ordering: .acquiring) }

    func remember(_ subscription: PincerSubscription, end: @escaping @Sendable () -> Void) {
        open.withLock { $0[subscription] = end }
    }

    /// Removes the subscription's record; returns its ending, nil if unknown.
    func forget(_ subscription: PincerSubscription) -> (@Sendable () -> Void)? {
        open.withLock { $0.removeValue(forKey: subscription) }
    }

    /// Marks the instance stopped (every wrapper call fails or answers as
    /// "off" from now on) and ends the open subscriptions while the
    /// services are still there.
    func end() {
        running.store(false, ordering: .releasing)
        let endings = open.withLock { all in
            let list = Array(all.values)
            all.removeAll()
            return list
        }
        for ending in endings { ending() }
    }
}

/// A Swift closure handed to a C callback as its context. The box is
/// retained for the life of the process (a call already running on another
/// thread may still reach it after unsubscribe); `drop` releases the
/// closure itself, so nothing it captured outlives the subscription.
final class HandlerBox<Handler: Sendable>: Sendable {
    private let slot: Mutex<Handler?>

    init(_ handler: Handler) { slot = Mutex(handler) }

    /// A context pointer for C; the box is never released.
    func leakedContext() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    static func from(_ context: UnsafeMutableRawPointer?) -> HandlerBox? {
        guard let context else { return nil }
        return Unmanaged<HandlerBox>.fromOpaque(context).takeUnretainedValue()
    }

    var handler: Handler? { slot.withLock { $0 } }

    func drop() { slot.withLock { $0 = nil } }
}

/// One service table looked up at start and checked once: its header, and
/// every slot the typed wrapper calls (PINCER_HAS_SERVICE_SLOT and not NULL).
/// Service tables never change once published, so calls need no checks
/// beyond "still running".
struct ServiceTable<Table>: @unchecked Sendable {
    let id: String
    /// nil when unusable; `problem` says why.
    let table: UnsafePointer<Table>?
    let problem: String
    let lifetime: Lifetime

    /// `slots`: the names and key paths of the function pointers the wrapper uses.
    init(id: String, host: Host, options: PincerOptions, lifetime: Lifetime, slots: [(String, PartialKeyPath<Table>)]) {
        self.id = id
        self.lifetime = lifetime
        guard let raw = host.service(id: id) else {
            table = nil
            problem = KnownServices.missingReason(id: id, host: host, options: options)
            return
        }
        let header = raw.load(as: pincer_service_header_t.self)
        let pointerSize = MemoryLayout<UnsafeRawPointer>.size
        for (name, path) in slots {
            guard let offset = MemoryLayout<Table>.offset(of: path) else { continue }
            guard Int(header.struct_size) >= offset + pointerSize else {
                table = nil
                problem = "\(id) is not usable: its table (struct_size \(header.struct_size)) has no slot \(name)"
                return
            }
            guard raw.load(fromByteOffset: offset, as: UInt.self) != 0 else {
                table = nil
                problem = "\(id) is not usable: its slot \(name) is NULL"
                return
            }
        }
        table = raw.assumingMemoryBound(to: Table.self)
        problem = ""
    }

    var isAvailable: Bool { table != nil && lifetime.isRunning }

    /// Why the service cannot be used; "" when it can.
    var unavailableReason: String {
        guard lifetime.isRunning else { return "\(id): Pincer was stopped" }
        return table == nil ? problem : ""
    }

    /// The table and its context, or why it cannot be used.
    @inline(__always)
    func get() throws(PincerError) -> (UnsafePointer<Table>, UnsafeMutableRawPointer?) {
        guard lifetime.isRunning else { throw PincerError(.stopped, "\(id): Pincer was stopped (start it again for a new instance)") }
        guard let table else { throw PincerError(.unavailable, problem) }
        return (table, UnsafeRawPointer(table).load(as: pincer_service_header_t.self).context)
    }

    /// The table and its context when usable; nil when unavailable or stopped.
    @inline(__always)
    var ifAvailable: (UnsafePointer<Table>, UnsafeMutableRawPointer?)? {
        guard let table, lifetime.isRunning else { return nil }
        return (table, UnsafeRawPointer(table).load(as: pincer_service_header_t.self).context)
    }

    /// The table and its context even after stop (for ending subscriptions
    /// while the host is still up); nil when unavailable.
    var unchecked: (UnsafePointer<Table>, UnsafeMutableRawPointer?)? {
        guard let table else { return nil }
        return (table, UnsafeRawPointer(table).load(as: pincer_service_header_t.self).context)
    }

    /// The subscription for a token a service's subscribe returned (0 is
    /// its failure): remembered, so that stop ends it; `end` unsubscribes,
    /// and the handler's box is dropped after it.
    func subscription<Handler>(_ token: UInt64, _ box: HandlerBox<Handler>,
                               lastError: (@convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?)?,
                               context: UnsafeMutableRawPointer?,
                               end: @escaping @Sendable (UnsafePointer<Table>, UnsafeMutableRawPointer?, UInt64) -> Void) throws(PincerError) -> PincerSubscription {
        guard token != 0 else {
            box.drop()
            throw failure("subscribe", PINCER_FAILED, lastError: lastError, context: context)
        }
        let subscription = PincerSubscription(service: id, token: token)
        lifetime.remember(subscription) { [self] in
            if let (t, c) = unchecked { end(t, c, token) }
            box.drop()
        }
        return subscription
    }

    /// An error from a failing call: the status and the service's last_error.
    func failure(_ what: String, _ status: pincer_status_t,
                 lastError: (@convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?)?,
                 context: UnsafeMutableRawPointer?) -> PincerError {
        let text = lastError.flatMap { $0(context) }.map { String(cString: $0) } ?? ""
        let detail = text.isEmpty ? PincerError.statusName(status) : text
        return PincerError(.service(status: status), "\(id) \(what): \(detail)")
    }
}

/// The services of the built-in plugins, for messages that name the plugin.
enum KnownServices {
    static let publishers: [String: (shortName: String, id: String)] = [
        PINCER_FLAGS_SERVICE_ID: ("flags", "dev.pincer.flags"),
        PINCER_SERVERS_SERVICE_ID: ("servers", "dev.pincer.servers"),
        PINCER_L10N_SERVICE_ID: ("l10n", "dev.pincer.l10n"),
        PINCER_LOCATION_SERVICE_ID: ("loc", "dev.pincer.location"),
        PINCER_NETWORK_SERVICE_ID: ("net", "dev.pincer.net"),
        PINCER_DATABASE_SERVICE_ID: ("db", "dev.pincer.database"),
    ]

    /// Why no loaded plugin publishes `id`.
    static func missingReason(id: String, host: Host, options: PincerOptions) -> String {
        guard let plugin = publishers[id] else {
            let loaded = host.plugins.map(\.shortName).joined(separator: ", ")
            return "\(id) is not available: no loaded plugin publishes it (loaded: \(loaded.isEmpty ? "none" : loaded))"
        }
        let prefix = "\(id) is not available: the '\(plugin.shortName)' plugin (\(plugin.id))"
        if let allowed = options.allowedPlugins, !allowed.contains(plugin.shortName), !allowed.contains(plugin.id) {
            return "\(prefix) is not in the allowed plugins (\(allowed.joined(separator: ",")))"
        }
        if let failure = host.failures.first(where: { $0.pluginID == plugin.id }) {
            return "\(prefix) was refused: \(failure.reason)"
        }
        if host.plugins.contains(where: { $0.id == plugin.id }) {
            return "\(prefix) is loaded but publishes no \(id)"
        }
        let searched = host.options.builtinDirectory.map { "built-in plugin directory \($0)" } ?? "no built-in plugins"
        let paths = options.pluginPaths.isEmpty ? "" : ", plugin paths \(options.pluginPaths.joined(separator: ":"))"
        return "\(prefix) was not found (\(searched)\(paths))"
    }
}

/// The SDK's copy-out convention (copy at most capacity - 1 bytes, return
/// the full length): calls `fill` with a stack buffer, then once more with
/// one large enough. `fill` returns the full length, or nil for "none".
func copiedOut(_ fill: (UnsafeMutablePointer<CChar>, UInt64) -> Int64?) -> String? {
    var result: String?
    var needed = 0
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
        guard let length = fill(buffer.baseAddress!, UInt64(buffer.count)), length >= 0 else { return }
        if length < Int64(buffer.count) {
            result = String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: Int(length)), as: UTF8.self)
        } else {
            needed = Int(length) + 1
        }
    }
    if needed > 0 {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: needed)
        defer { buffer.deallocate() }
        guard let length = fill(buffer, UInt64(needed)), length >= 0 else { return nil }
        result = String(decoding: UnsafeRawBufferPointer(start: buffer, count: min(Int(length), needed - 1)), as: UTF8.self)
    }
    return result
}
