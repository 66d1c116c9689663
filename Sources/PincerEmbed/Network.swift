@_exported import PincerNetworkCapture
import CPincerSDK

/// The network logger, "pincer.network/1" (SDK/include/pincer/network.h),
/// as an app needs it: a recorder to build capturing URLSession
/// configurations with (PincerNetworkCapture, re-exported by this module),
/// and the C table for recording other traffic by hand.
///
///     import Foundation
///     import FoundationNetworking
///     if let recorder = pincer.network.recorder {
///         let configuration = URLSessionConfiguration.pincerLogged(base: .default, recorder: recorder)
///         let session = URLSession(configuration: configuration)
///         ...
///         PincerNetworkCapture.stopCapturing(configuration)   // before Pincer.stop()
///     }
///
/// Both go through a table this module owns and never frees, which
/// forwards to the net plugin's while Pincer runs. Once Pincer stopped it
/// records nothing (`is_ignored` answers true, `begin` returns 0), so a
/// session built from the recorder keeps working, unrecorded, instead of
/// reaching a plugin that was shut down.
public struct PincerNetwork: Sendable {
    let service: ServiceTable<pincer_network_service_t>
    let proxy: NetworkProxy?

    static var slots: [(String, PartialKeyPath<pincer_network_service_t>)] { [
        ("begin", \.begin), ("complete", \.complete), ("fail", \.fail), ("is_ignored", \.is_ignored), ("last_error", \.last_error),
    ] }

    init(service: ServiceTable<pincer_network_service_t>) {
        self.service = service
        proxy = service.table.map { NetworkProxy(real: $0, lifetime: service.lifetime) }
    }

    /// False when the net plugin is not loaded or Pincer was stopped.
    public var isAvailable: Bool { service.isAvailable }

    /// Why the service is unavailable (which plugin, and whether it was left
    /// out, refused or not found; or that Pincer stopped); "" when available.
    public var unavailableReason: String { service.unavailableReason }


    /// What `URLSessionConfiguration.pincerLogged(base:recorder:)` takes;
    /// nil when the net plugin is not loaded.
    public var recorder: NetworkRecorder? { proxy.flatMap { NetworkRecorder(service: UnsafePointer($0.table)) } }

    /// The "pincer.network/1" table to record by hand (begin / complete /
    /// fail); nil when the net plugin is not loaded. Valid for the life of
    /// the process; records nothing once Pincer stopped.
    public var table: UnsafePointer<pincer_network_service_t>? { proxy.map { UnsafePointer($0.table) } }
}

/// A "pincer.network/1" table that forwards to the plugin's while the
/// instance runs. Allocated once per started instance, never freed.
final class NetworkProxy: @unchecked Sendable {
    let table: UnsafeMutablePointer<pincer_network_service_t>
    private let real: UnsafePointer<pincer_network_service_t>
    private let lifetime: Lifetime
    private static let stoppedMessage: StaticString = "Pincer was stopped: the network log records nothing"

    init(real: UnsafePointer<pincer_network_service_t>, lifetime: Lifetime) {
        self.real = real
        self.lifetime = lifetime
        var t = pincer_network_service_t()
        t.header.struct_size = UInt32(MemoryLayout<pincer_network_service_t>.size)
        t.header.version_minor = real.pointee.header.version_minor
        t.begin = { context, request in
            guard let (real, c) = NetworkProxy.live(context) else { return 0 }
            return real.pointee.begin!(c, request)
        }
        t.complete = { context, id, response in
            guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
            return real.pointee.complete!(c, id, response)
        }
        t.fail = { context, id, error, timings in
            guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
            return real.pointee.fail!(c, id, error, timings)
        }
        t.is_ignored = { context, method, url in
            guard let (real, c) = NetworkProxy.live(context) else { return true }
            return real.pointee.is_ignored!(c, method, url)
        }
        t.last_error = { context in
            guard let (real, c) = NetworkProxy.live(context) else {
                return UnsafeRawPointer(NetworkProxy.stoppedMessage.utf8Start).assumingMemoryBound(to: CChar.self)
            }
            return real.pointee.last_error!(c)
        }
        // Version 1.1, 1.2 and 1.3 slots, forwarded when the plugin's table has them.
        let realSize = Int(real.pointee.header.struct_size)
        func has<T>(_ slot: KeyPath<pincer_network_service_t, T>) -> Bool {
            MemoryLayout<pincer_network_service_t>.offset(of: slot).map { realSize >= $0 + MemoryLayout<T>.size } ?? false
        }
        if has(\.add_redact_name), real.pointee.add_redact_name != nil {
            t.add_redact_name = { context, name in
                guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
                return real.pointee.add_redact_name!(c, name)
            }
        }
        if has(\.remove_transient_rule), real.pointee.intercept_request != nil {
            t.intercept_request = { context, request, decision in
                guard let (real, c) = NetworkProxy.live(context) else {
                    // Stopped: the request goes on untouched.
                    if let decision, let request { decision.pointee.action = PINCER_NETWORK_SEND; decision.pointee.request = request.pointee; decision.pointee.handle = 0 }
                    return PINCER_OK
                }
                return real.pointee.intercept_request!(c, request, decision)
            }
            t.intercept_response = { context, handle, response, decision in
                guard let (real, c) = NetworkProxy.live(context) else { return PINCER_NOT_FOUND }
                return real.pointee.intercept_response!(c, handle, response, decision)
            }
            t.finish_interception = { context, handle in
                // After a stop the plugin's table stays mapped (never unloaded); finishing frees its memory.
                guard let context else { return }
                let proxy = Unmanaged<NetworkProxy>.fromOpaque(context).takeUnretainedValue()
                proxy.real.pointee.finish_interception!(proxy.real.pointee.header.context, handle)
            }
            t.annotate = { context, id, flags, json in
                guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
                return real.pointee.annotate!(c, id, flags, json)
            }
            t.add_transient_rule = { context, json in
                guard let (real, c) = NetworkProxy.live(context) else { return 0 }
                return real.pointee.add_transient_rule!(c, json)
            }
            t.remove_transient_rule = { context, rule in
                guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
                return real.pointee.remove_transient_rule!(c, rule)
            }
        }
        if has(\.await_release), real.pointee.await_release != nil {
            t.await_release = { context, handle, decision in
                // Also after a stop: a held exchange still ends (at its timeout at the latest).
                guard let context else { return PINCER_NOT_FOUND }
                let proxy = Unmanaged<NetworkProxy>.fromOpaque(context).takeUnretainedValue()
                return proxy.real.pointee.await_release!(proxy.real.pointee.header.context, handle, decision)
            }
        }
        if has(\.set_replayer), real.pointee.set_replayer != nil {
            t.set_replayer = { context, replay, replayContext in
                guard let (real, c) = NetworkProxy.live(context) else { return PINCER_FAILED }
                return real.pointee.set_replayer!(c, replay, replayContext)
            }
        }
        table = .allocate(capacity: 1)
        table.initialize(to: t)
        table.pointee.header.context = Unmanaged.passRetained(self).toOpaque()
    }

    /// The plugin's table and context while the instance runs.
    private static func live(_ context: UnsafeMutableRawPointer?) -> (UnsafePointer<pincer_network_service_t>, UnsafeMutableRawPointer?)? {
        guard let context else { return nil }
        let proxy = Unmanaged<NetworkProxy>.fromOpaque(context).takeUnretainedValue()
        guard proxy.lifetime.isRunning else { return nil }
        return (proxy.real, proxy.real.pointee.header.context)
    }
}
