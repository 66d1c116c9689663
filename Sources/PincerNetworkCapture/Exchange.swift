import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP header line, as sent or received.
public struct HTTPHeader: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
    public var description: String { "\(name): \(value)" }
}

/// A request ready to be sent: one hop of an exchange (the app's request, or
/// a request that follows a redirect).
///
/// The body is always held whole in `body`: a stream body the app supplied
/// (`httpBodyStream`) has been read to its end, and is sent again as a stream
/// (`bodyIsStream`) so the server sees the same framing as without capture.
public struct CaptureRequest: Sendable {
    /// The request without its body (`httpBody` and `httpBodyStream` are nil);
    /// URL, method, headers, timeout and cache policy are the app's.
    public var urlRequest: URLRequest
    /// The full body, or nil for none.
    public var body: Data?
    /// The app supplied the body as a stream: it is sent as a stream again.
    public var bodyIsStream: Bool
    /// 0 for the app's request, n for the request that follows the n-th redirect.
    public var redirectCount: Int
    /// Headers the session adds from its configuration (`httpAdditionalHeaders`);
    /// the request's own headers take precedence (case-insensitive).
    public var configurationHeaders: [HTTPHeader]
    /// Bandwidth limits for the transfer (network conditioning); 0: unlimited.
    public var maxReceiveBytesPerSecond: UInt64 = 0
    public var maxSendBytesPerSecond: UInt64 = 0

    public init(urlRequest: URLRequest, body: Data?, bodyIsStream: Bool = false, redirectCount: Int = 0,
                configurationHeaders: [HTTPHeader] = []) {
        var bare = urlRequest
        bare.httpBody = nil
        bare.httpBodyStream = nil
        self.urlRequest = bare
        self.body = body
        self.bodyIsStream = bodyIsStream
        self.redirectCount = redirectCount
        self.configurationHeaders = configurationHeaders
    }

    public var method: String { urlRequest.httpMethod ?? "GET" }
    public var url: URL? { urlRequest.url }

    /// The headers sent with this request: the configuration's, overridden by
    /// the request's, plus the Content-Type URLSession adds to a POST with a
    /// body and no Content-Type. (libcurl's own Host, Accept, Content-Length,
    /// User-Agent... are not listed.) Request headers come in name order:
    /// URLRequest keeps them in a dictionary.
    public var headersAsSent: [HTTPHeader] {
        let own = (urlRequest.allHTTPHeaderFields ?? [:])
            .map { HTTPHeader(name: $0.key, value: $0.value) }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
        let ownNames = Set(own.map { $0.name.lowercased() })
        var result = configurationHeaders.filter { !ownNames.contains($0.name.lowercased()) } + own
        let hasBody = (body?.isEmpty == false) || bodyIsStream
        if method == "POST", hasBody, !result.contains(where: { $0.name.lowercased() == "content-type" }) {
            result.append(HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"))
        }
        return result
    }

    /// The URLRequest to hand to a URLSession: the body attached again.
    public var requestToSend: URLRequest {
        var request = urlRequest
        if let body {
            if bodyIsStream {
                request.httpBodyStream = InputStream(data: body)
            } else {
                request.httpBody = body
            }
        }
        return request
    }
}

/// A complete response: headers and the whole (decoded) body.
public struct CaptureResponse: Sendable {
    /// The response the app receives, unchanged from the transport.
    public var response: HTTPURLResponse
    /// The whole body, after content decoding.
    public var body: Data
    public var timings: CaptureTimings
    /// The header lines as the server sent them (order and repeats kept),
    /// when the transport saw them; nil when only `response` is known.
    public var receivedHeaders: [HTTPHeader]?
    /// The reason phrase of the status line, when the transport saw it.
    public var reasonPhrase: String?
    /// What interception rules did to this exchange (a JSON array, as the
    /// service's annotate takes it); nil when none applied.
    public var interventions: String?
    /// The response did not come from the network (a mock, map-local).
    public var stubbed = false

    public init(response: HTTPURLResponse, body: Data, timings: CaptureTimings = CaptureTimings(),
                receivedHeaders: [HTTPHeader]? = nil, reasonPhrase: String? = nil) {
        self.response = response
        self.body = body
        self.timings = timings
        self.receivedHeaders = receivedHeaders
        self.reasonPhrase = reasonPhrase
    }

    public var statusCode: Int { response.statusCode }

    /// The server's reason phrase, or the standard one for the status code
    /// (HTTP/2 sends none).
    public var statusText: String {
        if let reasonPhrase, !reasonPhrase.isEmpty { return reasonPhrase }
        return HTTPURLResponse.localizedString(forStatusCode: response.statusCode)
    }

    /// The response headers: as received when known, else from the
    /// response's dictionary (by name, repeats joined).
    public var headers: [HTTPHeader] {
        if let receivedHeaders { return receivedHeaders }
        return response.allHeaderFields.compactMap { key, value -> HTTPHeader? in
            guard let name = key as? String else { return nil }
            return HTTPHeader(name: name, value: value as? String ?? "\(value)")
        }.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }
}

/// A request that ended without a response.
public struct CaptureFailure: Error, Sendable {
    /// The error the app receives (for a network failure, URLSession's own).
    public var error: NSError
    public var timings: CaptureTimings?
    /// What interception rules did (a JSON array); nil when none applied.
    public var interventions: String?

    public init(error: NSError, timings: CaptureTimings? = nil) {
        self.error = error
        self.timings = timings
    }

    /// The error as one line of text for the log.
    public var summary: String {
        "\(error.localizedDescription) (\(error.domain) \(error.code))"
    }
}

/// How one hop ended.
public enum CaptureOutcome: Sendable {
    case response(CaptureResponse)
    case failure(CaptureFailure)
}
