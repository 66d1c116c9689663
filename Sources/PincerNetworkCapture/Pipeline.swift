import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One step between "request ready" and "send", run once for every hop of an
/// exchange (a redirect is a new hop).
///
/// A stage gets the request and the rest of the pipeline (`next`). It may
/// change the request before passing it on, answer without calling `next`,
/// wait, or look at the outcome on its way back. The recording stage is one
/// such stage; request overrides, mocks, breakpoints, network conditioning
/// and replay fit the same shape.
public protocol CaptureStage: Sendable {
    func process(_ request: CaptureRequest, next: CaptureNext) async -> CaptureOutcome
}

/// The rest of the pipeline after a stage: the later stages, then the transport.
public struct CaptureNext: Sendable {
    private let run: @Sendable (CaptureRequest) async -> CaptureOutcome

    init(_ run: @escaping @Sendable (CaptureRequest) async -> CaptureOutcome) {
        self.run = run
    }

    public func callAsFunction(_ request: CaptureRequest) async -> CaptureOutcome {
        await run(request)
    }
}

/// What finally sends one hop. It must not follow redirects: the capture
/// protocol follows them itself so that every hop passes the stages.
public protocol CaptureTransport: Sendable {
    func send(_ request: CaptureRequest) async -> CaptureOutcome
}

/// Stages in order, then a transport.
struct CapturePipeline: Sendable {
    let stages: [any CaptureStage]
    let transport: any CaptureTransport

    func run(_ request: CaptureRequest) async -> CaptureOutcome {
        await run(request, from: 0)
    }

    private func run(_ request: CaptureRequest, from index: Int) async -> CaptureOutcome {
        guard index < stages.count else { return await transport.send(request) }
        let next = CaptureNext { [self] request in await self.run(request, from: index + 1) }
        return await stages[index].process(request, next: next)
    }
}

/// The stage that records every hop into the network logger: `begin` with
/// the request as it goes on, then `complete` (with `redirect_url` for a
/// redirect that will be followed) or `fail`. A request the logger ignores is
/// still sent; nothing is recorded for it.
public struct RecordingStage: CaptureStage {
    public let recorder: NetworkRecorder

    public init(recorder: NetworkRecorder) {
        self.recorder = recorder
    }

    /// Recording runs on the recorder's serial queue, so the request and the
    /// app's response never wait for redaction and storage; begin and
    /// complete for one exchange stay in order. `NetworkRecorder.flush()`
    /// waits for it.
    public func process(_ request: CaptureRequest, next: CaptureNext) async -> CaptureOutcome {
        guard let url = request.url?.absoluteString else { return await next(request) }
        let recorder = self.recorder
        let entry = EntryID()
        let method = request.method, headers = request.headersAsSent, body = request.body, started = Date()
        recorder.enqueue {
            guard !recorder.isIgnored(method: method, url: url) else { return }
            entry.id = recorder.begin(method: method, url: url, headers: headers, body: body, startedAt: started)
        }
        // net.replay's mark goes to the log (above), never to the server.
        var sent = request
        if request.urlRequest.value(forHTTPHeaderField: NetworkRecorder.replayHeader) != nil {
            sent.urlRequest.setValue(nil, forHTTPHeaderField: NetworkRecorder.replayHeader)
        }
        let outcome = await next(sent)
        switch outcome {
        case .response(let response):
            let redirect = Redirects.follow(request, after: response)?.url?.absoluteString
            recorder.enqueue {
                guard let id = entry.id else { return }
                if let applied = response.interventions { recorder.annotate(id: id, stubbed: response.stubbed, interventions: applied) }
                recorder.complete(id: id, status: response.statusCode, statusText: response.statusText,
                                  httpVersion: nil, headers: response.headers, body: response.body,
                                  redirectURL: redirect, timings: response.timings)
            }
        case .failure(let failure):
            recorder.enqueue {
                guard let id = entry.id else { return }
                if let applied = failure.interventions { recorder.annotate(id: id, stubbed: false, interventions: applied) }
                recorder.fail(id: id, error: failure.summary, timings: failure.timings)
            }
        }
        return outcome
    }
}

/// The id `begin` returned, read only on the recorder's serial queue.
private final class EntryID: @unchecked Sendable {
    var id: UInt64?
}

/// Which responses are followed, and with what request: as URLSession on
/// Linux does (`_HTTPURLProtocol.redirectRequest`), so the server sees the
/// same requests with or without capture. 301/302 turn a POST into a GET,
/// 303 turns any method into a GET, both without a body (the headers stay,
/// Content-Type included); 305-308 resend method and body; at most 20
/// redirects. The Location is resolved against the URL that answered.
public enum Redirects {
    public static let maximum = 20

    /// The request that follows `response`, or nil when it is not a redirect
    /// to follow (not 301-303 or 305-308, or no usable Location).
    public static func follow(_ request: CaptureRequest, after response: CaptureResponse) -> CaptureRequest? {
        let status = response.statusCode
        guard (301...308).contains(status), status != 304,
              let location = response.response.value(forHTTPHeaderField: "Location"),
              let target = URL(string: location, relativeTo: response.response.url ?? request.url)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var next = request
        next.urlRequest.url = target
        next.redirectCount = request.redirectCount + 1
        if status == 303 || ((status == 301 || status == 302) && request.method == "POST") {
            next.urlRequest.httpMethod = "GET"
            next.body = nil
            next.bodyIsStream = false
        }
        return next
    }
}
