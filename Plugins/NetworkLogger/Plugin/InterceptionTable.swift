import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The decisions intercept_request handed out, by handle, with the C memory
/// their pointers point into (freed by finish_interception).
final class InterceptionTable: Sendable {
    private let open = Mutex<[UInt64: Interception]>([:])
    private let nextHandle = Atomic<UInt64>(1)

    /// A decision the caller fills in C: what `decide` made, and its memory.
    final class Interception: @unchecked Sendable {
        let decision: RequestDecision
        let engine: RuleEngine
        var memory = CMemory()
        var interventions: [Intervention]

        init(_ decision: RequestDecision, engine: RuleEngine) {
            self.decision = decision
            self.engine = engine
            interventions = decision.interventions
        }
    }

    static let emptyList: StaticString = "[]"

    /// SEND with the caller's own request, handle 0: nothing applies.
    static func untouched(_ request: pincer_network_request_t, into d: UnsafeMutablePointer<pincer_network_decision_t>) {
        let size = d.pointee.struct_size
        d.pointee = pincer_network_decision_t()
        d.pointee.struct_size = size
        d.pointee.action = PINCER_NETWORK_SEND
        d.pointee.request = request
        d.pointee.response.struct_size = UInt32(MemoryLayout<pincer_network_response_t>.size)
        d.pointee.interventions_json = UnsafeRawPointer(emptyList.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    func start(_ decision: RequestDecision, engine: RuleEngine, into d: UnsafeMutablePointer<pincer_network_decision_t>) {
        let it = Interception(decision, engine: engine)
        var note = it.interventions
        if let hold = decision.holdRequest {
            // Held exchanges need a shell to release them; until the
            // breakpoint flow is built the rule says so instead of waiting.
            note.append(Intervention(rule: hold.rule, kind: RuleKind.breakpoint.rawValue, did: "not held: breakpoints are not built yet"))
        }
        it.interventions = note
        let m = it.memory
        var r = pincer_network_request_t()
        r.struct_size = UInt32(MemoryLayout<pincer_network_request_t>.size)
        r.method = m.string(decision.request.method)
        r.url = m.string(decision.request.url)
        (r.headers, r.header_count) = m.headers(decision.request.headers)
        (r.body, r.body_length) = m.bytes(decision.request.body)
        r.started_at = 0
        d.pointee.request = r
        switch decision.outcome {
        case .send: d.pointee.action = PINCER_NETWORK_SEND
        case .respond(let response):
            d.pointee.action = PINCER_NETWORK_RESPOND
            d.pointee.response = InterceptionTable.response(response, m)
        case .fail(let failure):
            d.pointee.action = PINCER_NETWORK_FAIL
            d.pointee.error_code = Int32(failure.urlErrorCode)
            d.pointee.error_text = m.string(failure.message)
        }
        d.pointee.delay_ms = decision.latencyMs
        d.pointee.max_receive_bytes_per_second = UInt64(max(0, decision.downloadBytesPerSecond))
        d.pointee.max_send_bytes_per_second = UInt64(max(0, decision.uploadBytesPerSecond))
        d.pointee.interventions_json = m.string(JSON.array(note.map(\.json)).serialized())
        let handle = nextHandle.add(1, ordering: .relaxed).oldValue
        d.pointee.handle = handle
        open.withLock { $0[handle] = it }
    }

    func respond(_ handle: UInt64, _ response: InterceptedResponse, into d: UnsafeMutablePointer<pincer_network_decision_t>) -> Bool {
        guard let it = open.withLock({ $0[handle] }) else { return false }
        let out = it.engine.respond(it.decision, request: it.decision.request, response: response)
        let size = d.pointee.struct_size
        d.pointee = pincer_network_decision_t()
        d.pointee.struct_size = size
        d.pointee.action = PINCER_NETWORK_RESPOND
        d.pointee.handle = handle
        d.pointee.response = InterceptionTable.response(out.response, it.memory)
        var all = it.interventions + out.interventions
        if let hold = out.holdResponse {
            all.append(Intervention(rule: hold.rule, kind: RuleKind.breakpoint.rawValue, did: "response not held: breakpoints are not built yet"))
        }
        d.pointee.interventions_json = it.memory.string(JSON.array(all.map(\.json)).serialized())
        return true
    }

    func finish(_ handle: UInt64) {
        _ = open.withLock { $0.removeValue(forKey: handle) }
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
