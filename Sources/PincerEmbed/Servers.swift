import CPincerSDK
#if canImport(Glibc)
import Glibc
#endif

/// Server environments through "pincer.servers/1" (SDK/include/pincer/servers.h).
///
/// Reads return nil when nothing is registered, the variable is missing, or
/// the servers plugin is not loaded; changes throw a `PincerError` with the
/// service's message. Every method may be called from any thread.
public struct PincerServers: Sendable {
    let service: ServiceTable<pincer_servers_service_t>

    static var slots: [(String, PartialKeyPath<pincer_servers_service_t>)] { [
        ("register_environment", \.register_environment), ("use", \.use), ("current", \.current),
        ("get_variable", \.get_variable), ("each_variable", \.each_variable), ("subscribe", \.subscribe),
        ("unsubscribe", \.unsubscribe), ("set_display_variable", \.set_display_variable), ("last_error", \.last_error),
    ] }

    /// False when the servers plugin is not loaded or Pincer was stopped.
    public var isAvailable: Bool { service.isAvailable }

    /// Why the service is unavailable (which plugin, and whether it was left
    /// out, refused or not found; or that Pincer stopped); "" when available.
    public var unavailableReason: String { service.unavailableReason }

    /// The current environment's id; nil when none is registered.
    public var current: String? {
        guard let (t, c) = service.ifAvailable else { return nil }
        return copiedOut { buffer, capacity in t.pointee.current!(c, buffer, capacity) }
    }

    /// Variable `name` of the current environment; nil when it has none.
    public func variable(_ name: String) -> String? {
        guard let (t, c) = service.ifAvailable else { return nil }
        return copiedOut { buffer, capacity in t.pointee.get_variable!(c, name, buffer, capacity) }
    }

    /// Every variable of the current environment, from one consistent snapshot.
    public var variables: [String: String] {
        guard let (t, c) = service.ifAvailable else { return [:] }
        final class Collected { var all: [String: String] = [:] }
        let collected = Collected()
        withExtendedLifetime(collected) {
            _ = t.pointee.each_variable!(c, { context, name, value in
                guard let context, let name, let value else { return }
                Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue().all[String(cString: name)] = String(cString: value)
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.all
    }

    /// Registers environment `id` (or replaces its name and variables).
    /// The first one registered is current until `use` chooses another.
    public func register(_ id: String, name: String, variables: [String: String]) throws(PincerError) {
        let (t, c) = try service.get()
        let pairs = variables.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
        let status = CStringArray.with(pairs) { array in
            t.pointee.register_environment!(c, id, name, array, UInt32(variables.count))
        }
        try check("register '\(id)'", t, c, status)
    }

    /// Makes `id` current (persisted) and notifies subscribers.
    public func use(_ id: String) throws(PincerError) {
        let (t, c) = try service.get()
        try check("use '\(id)'", t, c, t.pointee.use!(c, id))
    }

    /// Sets (or with nil removes) a display variable shown to testers.
    public func setDisplayVariable(_ name: String, _ value: String?) throws(PincerError) {
        let (t, c) = try service.get()
        try check("set display variable '\(name)'", t, c, t.pointee.set_display_variable!(c, name, value))
    }

    /// Calls `handler(from, to)` after every change of environment, on the
    /// thread that made it. Do not call `use` from inside it.
    public func subscribe(_ handler: @escaping @Sendable (_ from: String?, _ to: String) -> Void) throws(PincerError) -> PincerSubscription {
        let (t, c) = try service.get()
        typealias Handler = @Sendable (String?, String) -> Void
        let box = HandlerBox<Handler>(handler)
        let token = t.pointee.subscribe!(c, { context, from, to in
            guard let to, let handler = HandlerBox<Handler>.from(context)?.handler else { return }
            handler(from.map { String(cString: $0) }, String(cString: to))
        }, box.leakedContext())
        return try service.subscription(token, box, lastError: t.pointee.last_error, context: c) { t, c, token in
            t.pointee.unsubscribe!(c, token)
        }
    }

    /// Ends a subscription: no new call of its handler starts once this
    /// returns. Unknown subscriptions are ignored.
    public func unsubscribe(_ subscription: PincerSubscription) {
        guard subscription.service == service.id else { return }
        service.lifetime.forget(subscription)?()
    }

    private func check(_ what: String, _ t: UnsafePointer<pincer_servers_service_t>, _ c: UnsafeMutableRawPointer?,
                       _ status: pincer_status_t) throws(PincerError) {
        guard status == PINCER_OK else { throw service.failure(what, status, lastError: t.pointee.last_error, context: c) }
    }
}

/// NUL-terminated copies of Swift strings as a `const char *const *` for one call.
enum CStringArray {
    static func with<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
