// The C embedding API (SDK/include/pincer/embed.h) over PincerEmbed,
// exported from libpincer-embed.so. Each function documents its contract
// in the header; this file only converts.
import CPincerSDK
import PincerEmbed
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a pincer_embed_t points at. Never released: a handle stays valid
/// memory for the life of the process, so a stale one is answered, not a crash.
private final class EmbedHandle: Sendable {
    let pincer: Pincer
    /// A C copy of the socket path, owned by the handle.
    private let socketPathCopy: UInt

    init(_ pincer: Pincer) {
        self.pincer = pincer
        socketPathCopy = UInt(bitPattern: pincer.socketPath.flatMap { strdup($0) })
    }

    var socketPath: UnsafePointer<CChar>? {
        pincer.isRunning ? UnsafePointer(bitPattern: socketPathCopy) : nil
    }

    var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    static func from(_ pointer: OpaquePointer?) -> EmbedHandle? {
        guard let pointer else { return nil }
        return Unmanaged<EmbedHandle>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }

    /// Every handle ever handed out, so none is ever released.
    static let all = Mutex<[EmbedHandle]>([])

    /// The handle of `pincer`: the one handed out before for the same instance, or a new one.
    static func handle(for pincer: Pincer) -> EmbedHandle {
        all.withLock { handles in
            if let existing = handles.last, existing.pincer === pincer { return existing }
            let handle = EmbedHandle(pincer)
            handles.append(handle)
            return handle
        }
    }
}

/// pincer_embed_last_error: one message per thread.
private enum LastError {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()
    private static let empty: StaticString = ""

    static func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))
        free(old)
    }

    static var pointer: UnsafePointer<CChar> {
        if let p = pthread_getspecific(key) { return UnsafePointer(p.assumingMemoryBound(to: CChar.self)) }
        return UnsafeRawPointer(empty.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    static func fail(_ status: pincer_status_t, _ message: String) -> pincer_status_t {
        set(message)
        return status
    }
}

/// The Swift options an options record asks for.
private func swiftOptions(_ record: UnsafePointer<pincer_embed_options_t>) throws(PincerError) -> PincerOptions {
    let size = Int(record.pointee.struct_size)
    guard size >= MemoryLayout<pincer_embed_options_t>.size else {
        throw PincerError(.invalidOptions, "pincer_embed_start: struct_size \(size) is smaller than the \(MemoryLayout<pincer_embed_options_t>.size) bytes of a 1.0 pincer_embed_options_t")
    }
    let r = record.pointee
    let known = PINCER_EMBED_NO_SOCKET | PINCER_EMBED_READ_ONLY | PINCER_EMBED_NO_BUILTIN
    guard r.flags & ~known == 0 else {
        throw PincerError(.invalidOptions, "pincer_embed_start: unknown flags 0x\(String(r.flags & ~known, radix: 16)) (known: PINCER_EMBED_NO_SOCKET, PINCER_EMBED_READ_ONLY, PINCER_EMBED_NO_BUILTIN)")
    }
    guard let name = r.app_name else { throw PincerError(.invalidOptions, "pincer_embed_start: app_name is NULL") }
    func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
    var options = PincerOptions(appName: String(cString: name))
    if r.flags & PINCER_EMBED_NO_BUILTIN != 0 {
        options.builtinPlugins = .none
    } else if let directory = text(r.plugin_directory) {
        options.builtinPlugins = .directory(directory)
    }
    options.pluginPaths = (text(r.plugin_paths) ?? "").split(separator: ":").map(String.init)
    options.stateDirectory = text(r.state_directory)
    options.allowedPlugins = text(r.allow_plugins).map { list in
        list.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
    }
    options.socketDirectory = text(r.socket_directory)
    options.controlSocket = r.flags & PINCER_EMBED_NO_SOCKET == 0
    options.allowChanges = r.flags & PINCER_EMBED_READ_ONLY == 0
    return options
}

@_cdecl("pincer_embed_start")
public func embedStart(_ options: UnsafePointer<pincer_embed_options_t>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> pincer_status_t {
    guard let options, let out else {
        return LastError.fail(PINCER_INVALID_ARGUMENT, "pincer_embed_start: \(options == nil ? "options" : "out") is NULL")
    }
    do {
        let pincer = try Pincer.start(try swiftOptions(options))
        out.pointee = EmbedHandle.handle(for: pincer).opaque
        return PINCER_OK
    } catch {
        return LastError.fail(error.status, error.message)
    }
}

@_cdecl("pincer_embed_get_service")
public func embedGetService(_ embed: OpaquePointer?, _ id: UnsafePointer<CChar>?) -> UnsafeRawPointer? {
    guard let handle = EmbedHandle.from(embed), let id else {
        _ = LastError.fail(PINCER_INVALID_ARGUMENT, "pincer_embed_get_service: \(embed == nil ? "embed" : "id") is NULL")
        return nil
    }
    do {
        return try handle.pincer.requireService(id: String(cString: id))
    } catch {
        _ = LastError.fail(error.status, error.message)
        return nil
    }
}

@_cdecl("pincer_embed_socket_path")
public func embedSocketPath(_ embed: OpaquePointer?) -> UnsafePointer<CChar>? {
    EmbedHandle.from(embed)?.socketPath
}

@_cdecl("pincer_embed_stop")
public func embedStop(_ embed: OpaquePointer?) -> pincer_status_t {
    guard let pincer = EmbedHandle.from(embed)?.pincer else { return PINCER_OK }
    return stopped(pincer, pincer.stop(), "pincer_embed_stop")
}

@_cdecl("pincer_embed_stop_within")
public func embedStopWithin(_ embed: OpaquePointer?, _ milliseconds: UInt32) -> pincer_status_t {
    guard let pincer = EmbedHandle.from(embed)?.pincer else { return PINCER_OK }
    guard Pincer.current === pincer else { return PINCER_OK }
    return stopped(pincer, Pincer.stop(timeout: .milliseconds(Int64(milliseconds))), "pincer_embed_stop_within")
}

/// PINCER_OK, or PINCER_FAILED with the report when calls were abandoned (Pincer is stopped either way).
private func stopped(_ pincer: Pincer, _ report: Pincer.StopReport, _ function: String) -> pincer_status_t {
    report.isClean ? PINCER_OK : LastError.fail(PINCER_FAILED, "\(function): \(report)")
}

@_cdecl("pincer_embed_last_error")
public func embedLastError() -> UnsafePointer<CChar> {
    LastError.pointer
}
