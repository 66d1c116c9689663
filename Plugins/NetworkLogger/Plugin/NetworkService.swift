import NetworkLog
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The "pincer.network/1" table (SDK/include/pincer/network.h): how capture
/// code and any other recorder put exchanges into the log.
final class NetworkService: ServiceObject<pincer_network_service_t>, @unchecked Sendable {
    private let state: FirstUse<LoggerState>
    /// Decisions handed out and not finished yet.
    let interceptions: InterceptionTable

    /// Where net.replay sends (set_replayer).
    let replayer: Replayer

    init(state: FirstUse<LoggerState>, breakpoints: Breakpoints, replayer: Replayer) {
        self.state = state
        self.replayer = replayer
        interceptions = InterceptionTable(breakpoints: breakpoints)
        super.init(table: NetworkService.makeTable(), header: \.header)
    }

    /// A decision record as version 1.2 of the table had it (before `accepts`):
    /// the least a caller may pass.
    static let decisionSize12 = UInt32(MemoryLayout<pincer_network_decision_t>.offset(of: \.accepts)!)

    /// The logger, opened by the first call that needs it.
    var logger: LoggerState {
        get throws { try state.get() }
    }

    /// Runs `body` with the logger; an open that fails becomes `failed` and last_error.
    static func with<R>(_ ctx: UnsafeMutableRawPointer?, failed: R, _ body: (NetworkService, LoggerState) -> R) -> R {
        NetworkService.with(ctx) { s in
            do { return body(s, try s.logger) } catch {
                _ = s.fail(PINCER_FAILED, "network logger: \(error)")
                return failed
            }
        }
    }

    static func headers(_ list: UnsafePointer<pincer_http_header_t>?, _ count: UInt32) -> [Header]? {
        guard count > 0 else { return [] }
        guard let list else { return nil }
        var out: [Header] = []
        out.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            guard let n = list[i].name, let v = list[i].value else { return nil }
            out.append(Header(String(cString: n), String(cString: v)))
        }
        return out
    }

    static func bytes(_ p: UnsafePointer<UInt8>?, _ n: UInt64) -> [UInt8]? {
        guard n > 0 else { return [] }
        guard let p else { return nil }
        return Array(UnsafeBufferPointer(start: p, count: Int(n)))
    }

    static func timings(_ t: pincer_network_timings_t) -> Timings {
        var out = Timings()
        out.blocked = t.blocked
        out.dns = t.dns
        out.connect = t.connect
        out.ssl = t.ssl
        out.send = max(t.send, 0)
        out.wait = max(t.wait, 0)
        out.receive = max(t.receive, 0)
        return out
    }

    private static func makeTable() -> pincer_network_service_t {
        var t = pincer_network_service_t()
        t.begin = { ctx, request in
            NetworkService.with(ctx, failed: 0) { s, logger in
                guard let r = request?.pointee, r.struct_size >= UInt32(MemoryLayout<pincer_network_request_t>.size) else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "begin: request is NULL or its struct_size is too small")
                    return 0
                }
                guard let method = r.method, let url = r.url, method.pointee != 0 else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "begin: method and url are required")
                    return 0
                }
                let urlText = String(cString: url)
                guard URLParts(urlText) != nil else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "begin: '\(logger.store.redactor.url(urlText))' is not an absolute URL")
                    return 0
                }
                guard let headers = NetworkService.headers(r.headers, r.header_count), let body = NetworkService.bytes(r.body, r.body_length) else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "begin: a header has a NULL name or value, or body is NULL with a length")
                    return 0
                }
                let started = r.started_at > 0 ? r.started_at : Clock.now()
                return logger.store.begin(source: .captured, startedAt: started, method: String(cString: method), url: urlText,
                                     headers: headers, body: body, stubbed: r.flags & PINCER_NETWORK_STUBBED != 0) ?? 0
            }
        }
        t.complete = { ctx, id, response in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                guard let r = response?.pointee, r.struct_size >= UInt32(MemoryLayout<pincer_network_response_t>.size) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "complete: response is NULL or its struct_size is too small")
                }
                guard let headers = NetworkService.headers(r.headers, r.header_count), let body = NetworkService.bytes(r.body, r.body_length) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "complete: a header has a NULL name or value, or body is NULL with a length")
                }
                var raw = RawResponse(status: Int(r.status))
                raw.statusText = r.status_text.map { String(cString: $0) } ?? ""
                raw.httpVersion = r.http_version.map { String(cString: $0) } ?? "HTTP/1.1"
                raw.headers = headers
                raw.body = body
                raw.redirectURL = r.redirect_url.map { String(cString: $0) } ?? ""
                raw.serverIP = r.server_ip.map { String(cString: $0) }
                raw.timings = NetworkService.timings(r.timings)
                return logger.store.complete(id, raw) ? PINCER_OK : s.fail(PINCER_NOT_FOUND, "complete: no pending entry \(id) (unknown or evicted)")
            }
        }
        t.fail = { ctx, id, error, timings in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                guard let error else { return s.fail(PINCER_INVALID_ARGUMENT, "fail: error is NULL") }
                return logger.store.fail(id, error: String(cString: error), timings: timings.map { NetworkService.timings($0.pointee) })
                    ? PINCER_OK : s.fail(PINCER_NOT_FOUND, "fail: no entry \(id) (unknown or evicted)")
            }
        }
        t.is_ignored = { ctx, method, url in
            NetworkService.with(ctx, failed: false) { s, logger in
                guard let method, let url else { return false }
                return logger.store.rule(method: String(cString: method), url: String(cString: url)) == .ignore
            }
        }
        t.last_error = { ctx in
            NetworkService.with(ctx) { $0.errors.pointer }
        }
        // Version 1.1 of the table (ABI 1.4).
        t.header.version_minor = 1
        t.add_redact_name = { ctx, name in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                guard let name else { return s.fail(PINCER_INVALID_ARGUMENT, "add_redact_name: name is NULL") }
                do {
                    try logger.addRedactName(String(cString: name))
                    return PINCER_OK
                } catch let error as CommandError {
                    return s.fail(error.status, "add_redact_name: \(error.message)")
                } catch {
                    return s.fail(PINCER_FAILED, "add_redact_name: \(error)")
                }
            }
        }
        // Version 1.2 of the table (ABI 1.6): interception; 1.3 (ABI 1.7): breakpoints.
        t.header.version_minor = 3
        t.intercept_request = { ctx, request, decision in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                guard let decision, decision.pointee.struct_size >= NetworkService.decisionSize12 else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "intercept_request: decision is NULL or its struct_size is too small")
                }
                guard let request, request.pointee.struct_size >= UInt32(MemoryLayout<pincer_network_request_t>.size) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "intercept_request: request is NULL or its struct_size is too small")
                }
                InterceptionTable.untouched(request.pointee, into: decision)
                guard NetworkService.isComplete(request.pointee) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "intercept_request: method and url are required, and every header needs a name and a value")
                }
                // No rules (the common case): nothing of the request is copied.
                let engine = logger.interception.engine
                if engine.isEmpty { return PINCER_OK }
                guard let r = NetworkService.intercepted(request.pointee) else { return PINCER_OK }
                let d = engine.decide(r)
                if d.isUntouched { return PINCER_OK }
                s.interceptions.start(d, engine: engine, into: decision)
                return PINCER_OK
            }
        }
        t.intercept_response = { ctx, handle, response, decision in
            NetworkService.with(ctx) { s in
                guard let decision, decision.pointee.struct_size >= NetworkService.decisionSize12 else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "intercept_response: decision is NULL or its struct_size is too small")
                }
                guard let response, response.pointee.struct_size >= UInt32(MemoryLayout<pincer_network_response_t>.size),
                      let headers = NetworkService.headers(response.pointee.headers, response.pointee.header_count),
                      let body = NetworkService.bytes(response.pointee.body, response.pointee.body_length) else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "intercept_response: response is NULL, too small, or has a NULL header or body")
                }
                let r = InterceptedResponse(status: Int(response.pointee.status),
                                            statusText: response.pointee.status_text.map { String(cString: $0) } ?? "", headers: headers, body: body)
                guard s.interceptions.respond(handle, r, into: decision) else {
                    return s.fail(PINCER_NOT_FOUND, "intercept_response: no interception \(handle) (finished, or never started)")
                }
                return PINCER_OK
            }
        }
        t.finish_interception = { ctx, handle in
            NetworkService.with(ctx) { s in s.interceptions.finish(handle) }
        }
        t.annotate = { ctx, id, flags, json in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                guard let json, let parsed = try? JSON.parse(String(cString: json)), let list = parsed.arrayValue else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "annotate: interventions_json is NULL or not a JSON array")
                }
                let interventions = list.compactMap(Intervention.init(json:))
                guard interventions.count == list.count else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "annotate: an intervention lacks rule, kind or did")
                }
                return logger.store.annotate(id, interventions, stubbed: flags & PINCER_NETWORK_STUBBED != 0)
                    ? PINCER_OK : s.fail(PINCER_NOT_FOUND, "annotate: no entry \(id) (unknown or evicted)")
            }
        }
        t.add_transient_rule = { ctx, json in
            NetworkService.with(ctx, failed: 0) { s, logger in
                guard let json else { _ = s.fail(PINCER_INVALID_ARGUMENT, "add_transient_rule: rule_json is NULL"); return 0 }
                do {
                    let rule = try RulesCodec.rule(try JSON.parse(String(cString: json)), at: "rule")
                    let id = try logger.interception.addTransient(rule)
                    return UInt64(id.dropFirst()) ?? 0
                } catch {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "add_transient_rule: \(error)")
                    return 0
                }
            }
        }
        t.await_release = { ctx, handle, decision in
            NetworkService.with(ctx) { s in
                guard let decision, decision.pointee.struct_size >= NetworkService.decisionSize12 else {
                    return s.fail(PINCER_INVALID_ARGUMENT, "await_release: decision is NULL or its struct_size is too small")
                }
                return s.interceptions.awaitRelease(handle, into: decision)
                    ? PINCER_OK : s.fail(PINCER_NOT_FOUND, "await_release: interception \(handle) holds nothing (released, finished, or never held)")
            }
        }
        t.set_replayer = { ctx, replay, replayContext in
            NetworkService.with(ctx) { s in
                s.replayer.set(replay.map { Replayer.Sender(send: $0, context: replayContext) })
                return PINCER_OK
            }
        }
        t.remove_transient_rule = { ctx, rule in
            NetworkService.with(ctx, failed: PINCER_FAILED) { s, logger in
                logger.interception.removeTransient("t\(rule)") ? PINCER_OK : s.fail(PINCER_NOT_FOUND, "remove_transient_rule: no transient rule t\(rule)")
            }
        }
        return t
    }

    /// Method and URL present, every header with a name and a value, a body
    /// pointer where there is a length: what `intercepted` needs, checked
    /// without copying.
    static func isComplete(_ r: pincer_network_request_t) -> Bool {
        guard let method = r.method, r.url != nil, method.pointee != 0 else { return false }
        if r.body_length > 0, r.body == nil { return false }
        guard r.header_count > 0 else { return true }
        guard let list = r.headers else { return false }
        return (0..<Int(r.header_count)).allSatisfy { list[$0].name != nil && list[$0].value != nil }
    }

    /// The engine's view of a C request; nil when a required field is missing.
    static func intercepted(_ r: pincer_network_request_t) -> InterceptedRequest? {
        guard let method = r.method, let url = r.url, method.pointee != 0,
              let headers = headers(r.headers, r.header_count), let body = bytes(r.body, r.body_length) else { return nil }
        return InterceptedRequest(method: String(cString: method), url: String(cString: url), headers: headers, body: body)
    }
}

enum Clock {
    static func now() -> Double { WallClock.now() }
}
