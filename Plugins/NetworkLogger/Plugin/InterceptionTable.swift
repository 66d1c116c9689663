import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The decisions intercept_request handed out, by handle, with the C memory
/// their pointers point into (freed by finish_interception), and the
/// exchanges their breakpoints hold.
final class InterceptionTable: Sendable {
    private let open = Mutex<[UInt64: Interception]>([:])
    private let nextHandle = Atomic<UInt64>(1)
    let breakpoints: Breakpoints

    init(breakpoints: Breakpoints) { self.breakpoints = breakpoints }

    /// A decision the caller fills in C: what `decide` made, and its memory.
    /// Used by one exchange's thread at a time.
    final class Interception: @unchecked Sendable {
        let decision: RequestDecision
        let engine: RuleEngine
        var memory = CMemory()
        var interventions: [Intervention]
        /// The number under which a breakpoint holds it now.
        var held: Int?

        init(_ decision: RequestDecision, engine: RuleEngine) {
            self.decision = decision
            self.engine = engine
            interventions = decision.interventions
        }
    }

    static let emptyList: StaticString = "[]"

    // A caller built against an older network.h passes a smaller record:
    // only its struct_size bytes are read or written.

    static func load(_ d: UnsafeMutablePointer<pincer_network_decision_t>) -> pincer_network_decision_t {
        var out = pincer_network_decision_t()
        let n = min(Int(d.pointee.struct_size), MemoryLayout<pincer_network_decision_t>.size)
        withUnsafeMutableBytes(of: &out) { $0.baseAddress!.copyMemory(from: UnsafeRawPointer(d), byteCount: n) }
        return out
    }

    static func store(_ value: pincer_network_decision_t, into d: UnsafeMutablePointer<pincer_network_decision_t>) {
        var v = value
        v.struct_size = d.pointee.struct_size
        let n = min(Int(v.struct_size), MemoryLayout<pincer_network_decision_t>.size)
        withUnsafeBytes(of: &v) { UnsafeMutableRawPointer(d).copyMemory(from: $0.baseAddress!, byteCount: n) }
    }

    /// Whether the caller handles PINCER_NETWORK_HOLD.
    static func acceptsHold(_ d: UnsafeMutablePointer<pincer_network_decision_t>) -> Bool {
        Int(d.pointee.struct_size) >= MemoryLayout<pincer_network_decision_t>.offset(of: \.accepts)! + 4
            && load(d).accepts & PINCER_NETWORK_ACCEPTS_HOLD != 0
    }

    /// A zeroed decision for `d`'s caller; what the caller set (its size, `accepts`) kept.
    private static func blank(_ d: UnsafeMutablePointer<pincer_network_decision_t>) -> pincer_network_decision_t {
        var out = pincer_network_decision_t()
        out.struct_size = d.pointee.struct_size
        out.accepts = load(d).accepts
        out.response.struct_size = UInt32(MemoryLayout<pincer_network_response_t>.size)
        return out
    }

    /// SEND with the caller's own request, handle 0: nothing applies.
    static func untouched(_ request: pincer_network_request_t, into d: UnsafeMutablePointer<pincer_network_decision_t>) {
        var out = blank(d)
        out.action = PINCER_NETWORK_SEND
        out.request = request
        out.interventions_json = UnsafeRawPointer(emptyList.utf8Start).assumingMemoryBound(to: CChar.self)
        store(out, into: d)
    }

    /// Why a breakpoint does not hold this exchange, or nil when it may.
    private static func refusal(_ d: UnsafeMutablePointer<pincer_network_decision_t>, body: Int) -> String? {
        if !acceptsHold(d) { return "not held: the caller cannot wait (it does not set PINCER_NETWORK_ACCEPTS_HOLD)" }
        if body > Breakpoints.maxHeldBody { return "not held: the body is \(body) bytes, over the 10 MiB a breakpoint holds" }
        return nil
    }

    func start(_ decision: RequestDecision, engine: RuleEngine, into d: UnsafeMutablePointer<pincer_network_decision_t>) {
        let it = Interception(decision, engine: engine)
        if let hold = decision.holdRequest {
            let rule = engine.rule(id: hold.rule)
            if let why = InterceptionTable.refusal(d, body: decision.request.body.count) {
                it.interventions.append(Intervention(rule: hold.rule, kind: RuleKind.breakpoint.rawValue, title: rule?.title ?? "", did: why))
            } else {
                it.held = breakpoints.hold(phase: .request, rule: hold.rule, title: rule?.title ?? "", timeoutSeconds: hold.timeoutSeconds,
                                           request: decision.request, response: nil)
            }
        }
        var out = InterceptionTable.blank(d)
        InterceptionTable.fill(&out, decision, request: decision.request, memory: it.memory)
        if let number = it.held {
            // The delay and rates come with the release.
            out.action = PINCER_NETWORK_HOLD
            out.held = UInt32(truncatingIfNeeded: number)
            out.delay_ms = 0
        }
        out.interventions_json = it.memory.string(JSON.array(it.interventions.map(\.json)).serialized())
        let handle = nextHandle.add(1, ordering: .relaxed).oldValue
        out.handle = handle
        open.withLock { $0[handle] = it }
        InterceptionTable.store(out, into: d)
    }

    /// A request decision into `out`: `request` to send, or the answer.
    private static func fill(_ out: inout pincer_network_decision_t, _ decision: RequestDecision, request: InterceptedRequest, memory m: CMemory) {
        var r = pincer_network_request_t()
        r.struct_size = UInt32(MemoryLayout<pincer_network_request_t>.size)
        r.method = m.string(request.method)
        r.url = m.string(request.url)
        (r.headers, r.header_count) = m.headers(request.headers)
        (r.body, r.body_length) = m.bytes(request.body)
        r.started_at = 0
        out.request = r
        switch decision.outcome {
        case .send: out.action = PINCER_NETWORK_SEND
        case .respond(let response):
            out.action = PINCER_NETWORK_RESPOND
            out.response = InterceptionTable.response(response, m)
        case .fail(let failure):
            fail(&out, failure, m)
        }
        out.delay_ms = decision.latencyMs
        out.max_receive_bytes_per_second = UInt64(max(0, decision.downloadBytesPerSecond))
        out.max_send_bytes_per_second = UInt64(max(0, decision.uploadBytesPerSecond))
    }

    private static func fail(_ out: inout pincer_network_decision_t, _ failure: NetworkFailure, _ m: CMemory) {
        out.action = PINCER_NETWORK_FAIL
        out.error_code = Int32(failure.urlErrorCode)
        out.error_text = m.string(failure.message)
    }

    func respond(_ handle: UInt64, _ response: InterceptedResponse, into d: UnsafeMutablePointer<pincer_network_decision_t>) -> Bool {
        guard let it = open.withLock({ $0[handle] }) else { return false }
        let out = it.engine.respond(it.decision, request: it.decision.request, response: response)
        var record = InterceptionTable.blank(d)
        record.action = PINCER_NETWORK_RESPOND
        record.handle = handle
        record.response = InterceptionTable.response(out.response, it.memory)
        it.interventions += out.interventions
        if let hold = out.holdResponse {
            let rule = it.engine.rule(id: hold.rule)
            if let why = InterceptionTable.refusal(d, body: out.response.body.count) {
                it.interventions.append(Intervention(rule: hold.rule, kind: RuleKind.breakpoint.rawValue, title: rule?.title ?? "",
                                                     did: "response " + why))
            } else {
                let number = breakpoints.hold(phase: .response, rule: hold.rule, title: rule?.title ?? "", timeoutSeconds: hold.timeoutSeconds,
                                              request: it.decision.request, response: out.response)
                it.held = number
                record.action = PINCER_NETWORK_HOLD
                record.held = UInt32(truncatingIfNeeded: number)
            }
        }
        record.interventions_json = it.memory.string(JSON.array(it.interventions.map(\.json)).serialized())
        InterceptionTable.store(record, into: d)
        return true
    }

    /// await_release: waits for the exchange `handle` holds and fills `d`
    /// with what goes on. False when it holds nothing.
    func awaitRelease(_ handle: UInt64, into d: UnsafeMutablePointer<pincer_network_decision_t>) -> Bool {
        guard let it = open.withLock({ $0[handle] }), let number = it.held,
              let (release, h) = breakpoints.wait(number) else { return false }
        it.held = nil
        it.interventions.append(Intervention(rule: h.rule, kind: RuleKind.breakpoint.rawValue, title: h.title, did: Breakpoints.note(release, h)))
        var out = InterceptionTable.blank(d)
        out.handle = handle
        let edited = release == .proceed
        switch h.phase {
        case .request:
            InterceptionTable.fill(&out, it.decision, request: edited ? h.request : h.original, memory: it.memory)
        case .response:
            out.action = PINCER_NETWORK_RESPOND
            out.response = InterceptionTable.response((edited ? h.response : h.originalResponse) ?? InterceptedResponse(status: 502),
                                                      it.memory)
        }
        if case .abort(let failure) = release {
            InterceptionTable.fail(&out, failure, it.memory)
            out.delay_ms = 0
        }
        out.interventions_json = it.memory.string(JSON.array(it.interventions.map(\.json)).serialized())
        InterceptionTable.store(out, into: d)
        return true
    }

    func finish(_ handle: UInt64) {
        // A caller that finishes without await_release leaves nothing held.
        if let number = open.withLock({ $0.removeValue(forKey: handle) })?.held { breakpoints.forget(number) }
    }

    var count: Int { open.withLock { $0.count } }

    private static func response(_ response: InterceptedResponse, _ m: CMemory) -> pincer_network_response_t {
        var r = pincer_network_response_t()
        r.struct_size = UInt32(MemoryLayout<pincer_network_response_t>.size)
        r.status = Int32(clamping: response.status)
        r.status_text = response.statusText.isEmpty ? nil : m.string(response.statusText)
        (r.headers, r.header_count) = m.headers(response.headers)
        (r.body, r.body_length) = m.bytes(response.body)
        r.timings = pincer_network_timings_t(blocked: -1, dns: -1, connect: -1, ssl: -1, send: -1, wait: -1, receive: -1)
        return r
    }
}

/// Memory for C records, freed all at once when the owner goes.
final class CMemory: @unchecked Sendable {
    private var blocks: [UnsafeMutableRawPointer] = []
    private let lock = Mutex<Void>(())

    private func keep(_ p: UnsafeMutableRawPointer) { lock.withLock { _ in blocks.append(p) } }

    func string(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        keep(p)
        return UnsafePointer(p)
    }

    func bytes(_ b: [UInt8]) -> (UnsafePointer<UInt8>?, UInt64) {
        guard !b.isEmpty else { return (nil, 0) }
        let p = malloc(b.count)!
        b.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        keep(p)
        return (UnsafePointer(p.assumingMemoryBound(to: UInt8.self)), UInt64(b.count))
    }

    func headers(_ headers: [Header]) -> (UnsafePointer<pincer_http_header_t>?, UInt32) {
        guard !headers.isEmpty else { return (nil, 0) }
        let raw = malloc(MemoryLayout<pincer_http_header_t>.stride * headers.count)!
        keep(raw)
        let p = raw.bindMemory(to: pincer_http_header_t.self, capacity: headers.count)
        for (i, h) in headers.enumerated() { p[i] = pincer_http_header_t(name: string(h.name), value: string(h.value)) }
        return (UnsafePointer(p), UInt32(headers.count))
    }

    deinit { for b in blocks { free(b) } }
}
