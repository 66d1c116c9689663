import CPincerSDK
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network logger's recording service, "pincer.network/1" (see
/// SDK/include/pincer/network.h), seen from Swift.
///
/// This is the only way the capture code talks to the logger: every call goes
/// through the C table. The table is published by the `net` plugin and stays
/// valid until the host shuts that plugin down, so a recorder (and any session
/// whose configuration uses it) must not be used after the host shut down.
///
/// All of the service's functions are [any-thread]; so is this type.
public struct NetworkRecorder: @unchecked Sendable {
    /// The service id to look the table up with (`Host.service(id:)`).
    public static let serviceID: String = PINCER_NETWORK_SERVICE_ID

    private let table: UnsafePointer<pincer_network_service_t>
    /// Where capture records, in order and off the request's path.
    private let queue = DispatchQueue(label: "pincer.capture.recording")

    /// The size of version 1.0 of the table: everything before add_redact_name.
    static let version10Size = MemoryLayout<pincer_network_service_t>.offset(of: \.add_redact_name)!

    /// Wraps a "pincer.network/1" table. Nil when `service` is nil, smaller
    /// than version 1.0 of the table (`header.struct_size`), or missing one of
    /// its 1.0 functions.
    public init?(service: UnsafePointer<pincer_network_service_t>?) {
        guard let service,
              Int(service.pointee.header.struct_size) >= NetworkRecorder.version10Size,
              service.pointee.begin != nil, service.pointee.complete != nil, service.pointee.fail != nil,
              service.pointee.is_ignored != nil, service.pointee.last_error != nil
        else { return nil }
        table = service
    }

    /// Wraps the untyped pointer `Host.service(id: NetworkRecorder.serviceID)` returns.
    public init?(service: UnsafeRawPointer?) {
        guard let service else { return nil }
        self.init(service: service.assumingMemoryBound(to: pincer_network_service_t.self))
    }

    private var context: UnsafeMutableRawPointer? { table.pointee.header.context }

    /// Runs `work` on this recorder's serial queue: capture records there so
    /// the app never waits for the log, and calls for one exchange stay in order.
    func enqueue(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }

    /// Waits until everything capture handed this recorder so far has
    /// reached the log (for tests, and before reading the log right after a
    /// response).
    public func flush() { queue.sync {} }

    /// True when the logger stores nothing for this request (an ignored host).
    public func isIgnored(method: String, url: String) -> Bool {
        table.pointee.is_ignored(context, method, url)
    }

    /// Records the start of a request as it is sent. Returns the entry id, or
    /// nil when the logger stores nothing for it (an ignored host, or a record
    /// it refused: `lastError` says why). Then record nothing more for it.
    public func begin(method: String, url: String, headers: [HTTPHeader], body: Data?, startedAt: Date) -> UInt64? {
        let id: UInt64 = withRequest(method: method, url: url, headers: headers, body: body) { request in
            request.pointee.started_at = startedAt.timeIntervalSince1970
            return table.pointee.begin(context, request)
        }
        return id == 0 ? nil : id
    }

    /// A request record for one call into the table.
    private func withRequest<R>(method: String, url: String, headers: [HTTPHeader], body: Data?,
                                _ call: (UnsafeMutablePointer<pincer_network_request_t>) -> R) -> R {
        CStrings.withHeaders(headers) { cHeaders, count in
            withBytes(body) { bytes, length in
                method.withCString { cMethod in
                    url.withCString { cURL in
                        var request = pincer_network_request_t()
                        request.struct_size = UInt32(MemoryLayout<pincer_network_request_t>.size)
                        request.method = cMethod
                        request.url = cURL
                        request.headers = cHeaders
                        request.header_count = count
                        request.body = bytes
                        request.body_length = length
                        return call(&request)
                    }
                }
            }
        }
    }

    /// A response record for one call into the table.
    private func withResponse<R>(status: Int, statusText: String?, httpVersion: String? = nil, headers: [HTTPHeader], body: Data,
                                 redirectURL: String? = nil, _ call: (UnsafeMutablePointer<pincer_network_response_t>) -> R) -> R {
        CStrings.withHeaders(headers) { cHeaders, count in
            withBytes(body) { bytes, length in
                CStrings.withOptional(statusText) { cStatusText in
                    CStrings.withOptional(httpVersion) { cVersion in
                        CStrings.withOptional(redirectURL) { cRedirect in
                            var response = pincer_network_response_t()
                            response.struct_size = UInt32(MemoryLayout<pincer_network_response_t>.size)
                            response.status = Int32(clamping: status)
                            response.status_text = cStatusText
                            response.http_version = cVersion
                            response.headers = cHeaders
                            response.header_count = count
                            response.body = bytes
                            response.body_length = length
                            response.redirect_url = cRedirect
                            response.server_ip = nil
                            return call(&response)
                        }
                    }
                }
            }
        }
    }

    /// Completes entry `id` with a response. Returns false when the logger
    /// refused it (evicted entry, bad record: `lastError` says why).
    @discardableResult
    public func complete(id: UInt64, status: Int, statusText: String?, httpVersion: String?,
                         headers: [HTTPHeader], body: Data, redirectURL: String?,
                         timings: CaptureTimings) -> Bool {
        let status: pincer_status_t = withResponse(status: status, statusText: statusText, httpVersion: httpVersion, headers: headers,
                                                   body: body, redirectURL: redirectURL) { response in
            response.pointee.timings = timings.cValue
            return table.pointee.complete(context, id, response)
        }
        return status == PINCER_OK
    }

    /// Completes entry `id` without a response; `error` says why.
    @discardableResult
    public func fail(id: UInt64, error: String, timings: CaptureTimings?) -> Bool {
        let status: pincer_status_t = error.withCString { cError in
            if var t = timings?.cValue {
                return table.pointee.fail(context, id, cError, &t)
            }
            return table.pointee.fail(context, id, cError, nil)
        }
        return status == PINCER_OK
    }

    /// Redacts the values of `name` too (on top of the defaults) in
    /// everything recorded from now on, and keeps it in the logger's settings
    /// (as `net.redact-name` does); normalised as the built-in names are.
    /// False when the logger refused it (`lastError` says why) or cannot
    /// add names (`canAddRedactedNames`).
    @discardableResult
    public func addRedactedName(_ name: String) -> Bool {
        guard canAddRedactedNames, let add = table.pointee.add_redact_name else { return false }
        return name.withCString { add(context, $0) } == PINCER_OK
    }

    /// False for a logger older than version 1.1 of the table (ABI 1.4),
    /// which has no add_redact_name.
    public var canAddRedactedNames: Bool {
        Int(table.pointee.header.struct_size) >= NetworkRecorder.version10Size + MemoryLayout<UnsafeRawPointer?>.size
            && table.pointee.add_redact_name != nil
    }

    // MARK: Interception (version 1.2 of the table, ABI 1.6)

    /// The size of the table up to and including remove_transient_rule.
    static let version12Size = MemoryLayout<pincer_network_service_t>.offset(of: \.remove_transient_rule)! + MemoryLayout<UnsafeRawPointer?>.size

    /// False for a logger older than version 1.2 of the table: requests
    /// then go on untouched.
    public var canIntercept: Bool {
        Int(table.pointee.header.struct_size) >= NetworkRecorder.version12Size && table.pointee.intercept_request != nil
            && table.pointee.intercept_response != nil && table.pointee.finish_interception != nil && table.pointee.annotate != nil
    }

    /// The size of the table up to and including await_release (1.3, ABI 1.7).
    static let version13Size = MemoryLayout<pincer_network_service_t>.offset(of: \.await_release)! + MemoryLayout<UnsafeRawPointer?>.size

    /// Whether breakpoints can hold exchanges (the logger has await_release).
    var canHold: Bool {
        Int(table.pointee.header.struct_size) >= NetworkRecorder.version13Size && table.pointee.await_release != nil
    }

    /// A decision record for the service to fill; it may answer HOLD when we can wait.
    private func emptyDecision() -> pincer_network_decision_t {
        var d = pincer_network_decision_t()
        d.struct_size = UInt32(MemoryLayout<pincer_network_decision_t>.size)
        if canHold { d.accepts = PINCER_NETWORK_ACCEPTS_HOLD }
        return d
    }

    /// Asks the rules what to do with a request; nil when the logger cannot intercept.
    func intercept(method: String, url: String, headers: [HTTPHeader], body: Data?) -> InterceptionDecision? {
        guard canIntercept, let call = table.pointee.intercept_request else { return nil }
        return withRequest(method: method, url: url, headers: headers, body: body) { request in
            var d = emptyDecision()
            guard call(context, request, &d) == PINCER_OK else { return nil }
            return InterceptionDecision(d)
        }
    }

    /// The response the app receives for `response`, after the rules of interception `handle`.
    func interceptResponse(_ handle: UInt64, status: Int, statusText: String?, headers: [HTTPHeader], body: Data) -> InterceptionDecision? {
        guard canIntercept, let call = table.pointee.intercept_response else { return nil }
        return withResponse(status: status, statusText: statusText, headers: headers, body: body) { response in
            var d = emptyDecision()
            guard call(context, handle, response, &d) == PINCER_OK else { return nil }
            return InterceptionDecision(d)
        }
    }

    /// What became of a held exchange (a HOLD decision), once a person or
    /// the breakpoint's timeout released it. The wait is on a thread of its
    /// own, so a breakpoint held for a minute ties up no thread of Swift's
    /// small cooperative pool.
    func awaitRelease(_ handle: UInt64) async -> InterceptionDecision? {
        guard canHold, let wait = table.pointee.await_release else { return nil }
        // The service's context and table live as long as the recorder.
        nonisolated(unsafe) let context = self.context
        let accepts = canHold
        return await withCheckedContinuation { (c: CheckedContinuation<InterceptionDecision?, Never>) in
            Thread.detachNewThread {
                var d = pincer_network_decision_t()
                d.struct_size = UInt32(MemoryLayout<pincer_network_decision_t>.size)
                if accepts { d.accepts = PINCER_NETWORK_ACCEPTS_HOLD }
                let rc = wait(context, handle, &d)
                c.resume(returning: rc == PINCER_OK ? InterceptionDecision(d) : nil)
            }
        }
    }

    func finishInterception(_ handle: UInt64) {
        guard handle != 0, canIntercept else { return }
        table.pointee.finish_interception(context, handle)
    }

    /// Adds what rules did to entry `id` (before it is completed).
    @discardableResult
    func annotate(id: UInt64, stubbed: Bool, interventions: String) -> Bool {
        guard canIntercept else { return false }
        return interventions.withCString { table.pointee.annotate(context, id, stubbed ? PINCER_NETWORK_STUBBED : 0, $0) } == PINCER_OK
    }

    /// Adds a rule that lives in this process only, before the stored ones
    /// (`rule` is one rule's JSON, as `net.add-rule` takes it). Returns its
    /// id ("t1", ...), or nil when it is refused (`lastError` says why) or
    /// the logger cannot intercept.
    public func addTransientRule(_ rule: String) -> String? {
        guard canIntercept, let add = table.pointee.add_transient_rule else { return nil }
        let n = rule.withCString { add(context, $0) }
        return n == 0 ? nil : "t\(n)"
    }

    /// Removes a transient rule by the id `addTransientRule` returned.
    @discardableResult
    public func removeTransientRule(_ id: String) -> Bool {
        guard canIntercept, let remove = table.pointee.remove_transient_rule, id.hasPrefix("t"), let n = UInt64(id.dropFirst()) else { return false }
        return remove(context, n) == PINCER_OK
    }

    // MARK: Replay (version 1.3 of the table, ABI 1.7)

    /// PINCER_NETWORK_REPLAY_HEADER: recorded, never sent.
    public static let replayHeader = PINCER_NETWORK_REPLAY_HEADER

    /// Lets `net.replay` send logged requests again through `session`, the
    /// app's own (so its cookies and credentials come back). The session
    /// should be one whose traffic is logged (`.pincerLogged`), or the replay
    /// is sent but not recorded. False when the logger has no replay.
    @discardableResult
    public func enableReplay(through session: URLSession) -> Bool {
        guard Int(table.pointee.header.struct_size) >= NetworkRecorder.version13Size + MemoryLayout<UnsafeRawPointer?>.size,
              let set = table.pointee.set_replayer else { return false }
        let sender = Unmanaged.passRetained(ReplaySender(session: session, recorder: self)).toOpaque()
        let replay: pincer_network_replay_fn_t = { context, request in
            guard let context, let request else { return PINCER_INVALID_ARGUMENT }
            return Unmanaged<ReplaySender>.fromOpaque(context).takeUnretainedValue().send(request.pointee)
        }
        // The previous sender (if any) stays: a call may still be using it.
        return set(context, replay, sender) == PINCER_OK
    }

    /// Why this thread's most recent failing call into the service failed.
    public var lastError: String {
        guard let text = table.pointee.last_error(context) else { return "" }
        return String(cString: text)
    }

    private func withBytes<R>(_ data: Data?, _ body: (UnsafePointer<UInt8>?, UInt64) -> R) -> R {
        guard let data, !data.isEmpty else { return body(nil, 0) }
        return data.withUnsafeBytes { raw in
            body(raw.bindMemory(to: UInt8.self).baseAddress, UInt64(raw.count))
        }
    }
}

/// HAR timing phases of one exchange in milliseconds; -1 when unknown.
public struct CaptureTimings: Sendable, Equatable {
    public var blocked: Double = -1, dns: Double = -1, connect: Double = -1, ssl: Double = -1
    public var send: Double = -1
    /// From sending the request to the complete response headers.
    public var wait: Double = -1
    /// From the response headers to the end of the body.
    public var receive: Double = -1

    public init(wait: Double = -1, receive: Double = -1) {
        self.wait = wait
        self.receive = receive
    }

    var cValue: pincer_network_timings_t {
        pincer_network_timings_t(blocked: blocked, dns: dns, connect: connect, ssl: ssl,
                                 send: send, wait: wait, receive: receive)
    }
}

/// NUL-terminated copies of Swift strings that live for one call.
enum CStrings {
    static func withOptional<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let string else { return body(nil) }
        return string.withCString { body($0) }
    }

    static func withHeaders<R>(_ headers: [HTTPHeader], _ body: (UnsafePointer<pincer_http_header_t>?, UInt32) -> R) -> R {
        guard !headers.isEmpty else { return body(nil, 0) }
        var owned: [UnsafeMutablePointer<CChar>] = []
        owned.reserveCapacity(headers.count * 2)
        defer { owned.forEach { free($0) } }
        var cHeaders: [pincer_http_header_t] = []
        cHeaders.reserveCapacity(headers.count)
        for header in headers {
            guard let name = strdup(header.name) else { continue }
            owned.append(name)
            guard let value = strdup(header.value) else { continue }
            owned.append(value)
            cHeaders.append(pincer_http_header_t(name: name, value: value))
        }
        return cHeaders.withUnsafeBufferPointer { body($0.baseAddress, UInt32($0.count)) }
    }
}

/// net.replay's requests, sent through the app's session and waited for
/// (on the replaying command's thread, which may wait).
final class ReplaySender: Sendable {
    let session: URLSession
    let recorder: NetworkRecorder

    init(session: URLSession, recorder: NetworkRecorder) {
        self.session = session
        self.recorder = recorder
    }

    func send(_ r: pincer_network_request_t) -> pincer_status_t {
        guard let method = r.method, let url = r.url.flatMap({ URL(string: String(cString: $0)) }) else { return PINCER_INVALID_ARGUMENT }
        var request = URLRequest(url: url)
        request.httpMethod = String(cString: method)
        for h in InterceptionDecision.headers(r.headers, r.header_count) { request.addValue(h.value, forHTTPHeaderField: h.name) }
        if r.body_length > 0, let body = r.body { request.httpBody = Data(bytes: body, count: Int(r.body_length)) }
        let done = DispatchSemaphore(value: 0)
        // Answered or failed, the exchange is logged: the log says which.
        session.dataTask(with: request) { _, _, _ in done.signal() }.resume()
        done.wait()
        // Recording runs on the recorder's queue: let it finish first.
        recorder.flush()
        return PINCER_OK
    }
}
