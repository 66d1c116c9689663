import CPincerSDK
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A decision of the logger's rules, copied out of the C record (whose
/// memory lives until `finishInterception`).
struct InterceptionDecision: Sendable {
    enum Action: Sendable { case send, respond, fail, hold }
    var action: Action
    var method: String
    var url: String
    var headers: [HTTPHeader]
    var body: Data?
    var status: Int
    var statusText: String?
    var responseHeaders: [HTTPHeader]
    var responseBody: Data
    var errorCode: Int
    var errorText: String
    var delayMs: Double
    var receiveLimit: UInt64
    var sendLimit: UInt64
    var handle: UInt64
    var interventions: String

    init(_ d: pincer_network_decision_t) {
        switch d.action {
        case PINCER_NETWORK_RESPOND: action = .respond
        case PINCER_NETWORK_FAIL: action = .fail
        case PINCER_NETWORK_HOLD: action = .hold
        default: action = .send
        }
        method = d.request.method.map { String(cString: $0) } ?? "GET"
        url = d.request.url.map { String(cString: $0) } ?? ""
        headers = InterceptionDecision.headers(d.request.headers, d.request.header_count)
        body = d.request.body_length > 0 ? d.request.body.map { Data(bytes: $0, count: Int(d.request.body_length)) } : nil
        status = Int(d.response.status)
        statusText = d.response.status_text.map { String(cString: $0) }
        responseHeaders = InterceptionDecision.headers(d.response.headers, d.response.header_count)
        responseBody = d.response.body_length > 0 ? d.response.body.map { Data(bytes: $0, count: Int(d.response.body_length)) } ?? Data() : Data()
        errorCode = Int(d.error_code)
        errorText = d.error_text.map { String(cString: $0) } ?? ""
        delayMs = d.delay_ms
        receiveLimit = d.max_receive_bytes_per_second
        sendLimit = d.max_send_bytes_per_second
        handle = d.handle
        interventions = d.interventions_json.map { String(cString: $0) } ?? "[]"
    }

    static func headers(_ list: UnsafePointer<pincer_http_header_t>?, _ count: UInt32) -> [HTTPHeader] {
        guard let list, count > 0 else { return [] }
        return (0..<Int(count)).compactMap { i in
            guard let n = list[i].name, let v = list[i].value else { return nil }
            return HTTPHeader(name: String(cString: n), value: String(cString: v))
        }
    }

    var touched: Bool { handle != 0 }
}

/// The stage that applies the logger's interception rules (net.add-mock,
/// net.add-map-remote, ..., transient rules): it asks the service before
/// the request goes on and again when the response is back, and hands the
/// recording stage what applied (`CaptureResponse.interventions`), so the log
/// says which rule did what. Put it after `RecordingStage`, so the log holds
/// the request as the app made it and the response as the app received it.
public struct InterceptionStage: CaptureStage {
    public let recorder: NetworkRecorder

    public init(recorder: NetworkRecorder) {
        self.recorder = recorder
    }

    public func process(_ request: CaptureRequest, next: CaptureNext) async -> CaptureOutcome {
        guard recorder.canIntercept, let url = request.url?.absoluteString,
              var d = recorder.intercept(method: request.method, url: url, headers: request.headersAsSent, body: request.body),
              d.touched else { return await next(request) }
        defer { recorder.finishInterception(d.handle) }
        // A breakpoint holds the request until a person (or its timeout) lets it go.
        if d.action == .hold, let released = await recorder.awaitRelease(d.handle) { d = released }
        if d.delayMs > 0 { try? await Task.sleep(nanoseconds: UInt64(min(d.delayMs, 30_000) * 1_000_000)) }
        switch d.action {
        case .fail:
            return .failure(failure(request.url, d))
        case .respond:
            // A mock under a bandwidth limit takes the time its body would.
            if d.receiveLimit > 0, !d.responseBody.isEmpty {
                try? await Task.sleep(nanoseconds: UInt64(Double(d.responseBody.count) / Double(d.receiveLimit) * 1e9))
            }
            return .response(response(for: request.url, status: d.status, statusText: d.statusText, headers: d.responseHeaders,
                                      body: d.responseBody, interventions: d.interventions, stubbed: true))
        case .send, .hold: // .hold: the logger could not say what became of it; send as decided
            var changed = request
            if let target = URL(string: d.url) { changed.urlRequest.url = target }
            changed.urlRequest.httpMethod = d.method
            // The decision's headers are the whole set as sent (configuration's included).
            changed.urlRequest.allHTTPHeaderFields = Dictionary(d.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, b in a + ", " + b })
            changed.configurationHeaders = []
            changed.body = d.body ?? (request.body == nil ? nil : Data())
            changed.maxReceiveBytesPerSecond = d.receiveLimit
            changed.maxSendBytesPerSecond = d.sendLimit
            let outcome = await next(changed)
            switch outcome {
            case .failure(var failure):
                failure.interventions = d.interventions
                return .failure(failure)
            case .response(let r):
                guard var after = recorder.interceptResponse(d.handle, status: r.statusCode, statusText: r.reasonPhrase, headers: r.headers, body: r.body) else {
                    var same = r
                    same.interventions = d.interventions
                    return .response(same)
                }
                if after.action == .hold, let released = await recorder.awaitRelease(d.handle) { after = released }
                if after.action == .fail { return .failure(failure(request.url, after)) }
                var out = response(for: r.response.url ?? request.url, status: after.status, statusText: after.statusText,
                                   headers: after.responseHeaders, body: after.responseBody, interventions: after.interventions, stubbed: false)
                out.timings = r.timings
                return .response(out)
            }
        }
    }

    /// The error the app's client gets for a FAIL decision.
    private func failure(_ url: URL?, _ d: InterceptionDecision) -> CaptureFailure {
        var info: [String: Any] = [NSLocalizedDescriptionKey: d.errorText]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        var failure = CaptureFailure(error: NSError(domain: NSURLErrorDomain, code: d.errorCode, userInfo: info))
        failure.interventions = d.interventions
        return failure
    }

    private func response(for url: URL?, status: Int, statusText: String?, headers: [HTTPHeader], body: Data,
                          interventions: String, stubbed: Bool) -> CaptureResponse {
        let fields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, b in a + ", " + b })
        let http = HTTPURLResponse(url: url ?? URL(string: "about:blank")!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
        var r = CaptureResponse(response: http, body: body, receivedHeaders: headers, reasonPhrase: statusText)
        r.interventions = interventions
        r.stubbed = stubbed
        return r
    }
}
