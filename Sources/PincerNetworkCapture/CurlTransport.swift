import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CCurl
import Synchronization

/// Sends each hop with libcurl, the library URLSession itself uses on Linux,
/// set up the way FoundationNetworking's HTTP protocol sets it up (6.3.1,
/// `_HTTPURLProtocol.configureEasyHandle`): the same headers added and
/// removed, the same body framing, automatic content decoding, no redirects
/// followed. A second URLSession inside the capture cost as much again as
/// the app's own request; one libcurl multi handle on a thread of its own
/// costs a fraction of it.
///
/// What the configuration contributes, as URLSession would apply it:
/// `httpAdditionalHeaders` (under the request's own headers), cookies from
/// and into `httpCookieStorage` (per `httpShouldSetCookies` and
/// `httpCookieAcceptPolicy`), `timeoutIntervalForRequest` (an idle timeout,
/// reset whenever bytes move) and `httpMaximumConnectionsPerHost`. Proxies come from the environment
/// (`http_proxy`, `https_proxy`, `no_proxy`), as for URLSession on Linux.
/// Authentication challenges and the URL cache stay with the app's session:
/// it sees the 401 and retries through the capture again.
final class CurlTransport: CaptureTransport, @unchecked Sendable {
    private let settings: CurlSettings
    private let loop: CurlLoop

    init(configuration: URLSessionConfiguration) {
        settings = CurlSettings(configuration)
        loop = CurlLoop(maximumConnectionsPerHost: configuration.httpMaximumConnectionsPerHost)
    }

    func send(_ request: CaptureRequest) async -> CaptureOutcome {
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(request, settings: settings)
        } catch {
            return .failure(CaptureFailure(error: error))
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CaptureOutcome, Never>) in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }

    /// Cancels every transfer in flight and ends the loop's thread.
    func invalidate() { loop.stop() }
}

/// What a configuration contributes to every hop, read once.
struct CurlSettings: @unchecked Sendable {
    let additionalHeaders: [(name: String, value: String)]
    let requestTimeout: TimeInterval
    let cookieStorage: HTTPCookieStorage?
    let shouldSetCookies: Bool
    let acceptsCookies: Bool

    init(_ configuration: URLSessionConfiguration) {
        additionalHeaders = (configuration.httpAdditionalHeaders ?? [:]).compactMap { key, value in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
        requestTimeout = configuration.timeoutIntervalForRequest
        cookieStorage = configuration.httpCookieStorage
        shouldSetCookies = configuration.httpShouldSetCookies
        acceptsCookies = configuration.httpCookieAcceptPolicy != .never
    }

    /// The header lines for libcurl, built as `_HTTPURLProtocol` builds them:
    /// the configuration's headers under the request's (names compared
    /// without case), the session's cookies for this URL, then Connection,
    /// User-Agent and Accept-Language unless already there; "Expect:" turns
    /// off libcurl's `Expect: 100-continue` for a request with a body; a POST
    /// with a body and no Content-Type gets URLSession's form type.
    func headerLines(for request: CaptureRequest, hasBody: Bool) -> [String] {
        var headers = additionalHeaders
        func set(_ name: String, _ value: String) {
            headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            headers.append((name, value))
        }
        for (name, value) in request.urlRequest.allHTTPHeaderFields ?? [:] { set(name, value) }
        if shouldSetCookies, let storage = cookieStorage, let url = request.url,
           let cookies = storage.cookies(for: url), !cookies.isEmpty,
           let value = HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], !value.isEmpty {
            set("Cookie", value)
        }
        var lines: [String] = []
        var names = Set<String>()
        func add(_ name: String, _ value: String) {
            guard names.insert(name.lowercased()).inserted else { return }
            lines.append(value.isEmpty ? name + ";" : name + ": " + value)
        }
        for header in headers { add(header.name, header.value) }
        add("Connection", "keep-alive")
        add("User-Agent", CurlLibrary.userAgent)
        if let language = CurlLibrary.acceptLanguage { add("Accept-Language", language) }
        if hasBody, names.insert("expect").inserted { lines.append("Expect:") }
        if request.method == "POST", hasBody, request.urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            lines.append("Content-Type:application/x-www-form-urlencoded")
        }
        return lines
    }

    /// Keeps the cookies a response sets, one Set-Cookie line at a time.
    func storeCookies(from headers: [HTTPHeader], for url: URL) {
        guard acceptsCookies, let storage = cookieStorage else { return }
        for header in headers where header.name.caseInsensitiveCompare("Set-Cookie") == .orderedSame {
            let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header.value], for: url)
            if !cookies.isEmpty { storage.setCookies(cookies, for: url, mainDocumentURL: nil) }
        }
    }
}

/// Process-wide libcurl facts, computed once.
enum CurlLibrary {
    /// `curl_global_init` before the first handle (thread-safe since 7.84).
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// URLSession's User-Agent on Linux: "<process> (unknown version) curl/x.y.z".
    static let userAgent: String = {
        let number = ccurl_version_number()
        return "\(ProcessInfo.processInfo.processName) (unknown version) curl/\(number >> 16 & 0xff).\(number >> 8 & 0xff).\(number & 0xff)"
    }()

    /// URLSession's Accept-Language: the current locale's language code.
    static let acceptLanguage: String? = Locale.current.language.languageCode?.identifier

    /// The CA bundle URLSession falls back to when libcurl has no default.
    static let caBundle: String? = {
        guard let handle = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(handle) }
        var path: UnsafeMutablePointer<CChar>?
        if ccurl_get_string(handle, CURLINFO_CAINFO, &path) == CURLE_OK, path != nil { return nil }
        return ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                "/usr/share/ssl/certs/ca-bundle.crt", "/usr/local/share/certs/ca-root-nss.crt", "/etc/ssl/cert.pem"]
            .first { FileManager.default.fileExists(atPath: $0) }
    }()
}

/// One hop in flight. Made on the sending task; after `submit` only the
/// loop's thread touches it, until it resumes `continuation`.
final class CurlTransfer: @unchecked Sendable {
    let url: URL
    let method: String
    let headerLines: [String]
    let body: Data?
    let bodyIsStream: Bool
    let idleTimeout: TimeInterval
    let settings: CurlSettings
    var continuation: CheckedContinuation<CaptureOutcome, Never>?
    let cancelRequested = Atomic<Bool>(false)

    // Loop thread only.
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    var lastActivity: UInt64 = 0
    var bodyOffset = 0
    var firstRead: UInt64?
    var lastRead: UInt64?
    var status: (version: String, code: Int, reason: String)?
    var headers: [HTTPHeader] = []
    var headersComplete = false
    var received = Data()

    init(_ request: CaptureRequest, settings: CurlSettings) throws(NSError) {
        guard let url = request.url else {
            throw NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL, userInfo: [NSLocalizedDescriptionKey: "the request has no URL"])
        }
        let hasBody = request.body != nil || request.bodyIsStream
        // URLSession refuses a GET with a body before sending anything.
        if request.method == "GET", hasBody {
            throw NSError(domain: NSURLErrorDomain, code: NSURLErrorDataLengthExceedsMaximum,
                          userInfo: [NSLocalizedDescriptionKey: "resource exceeds maximum size"])
        }
        self.url = url
        method = request.method
        body = request.body
        bodyIsStream = request.bodyIsStream
        self.settings = settings
        receiveLimit = request.maxReceiveBytesPerSecond
        sendLimit = request.maxSendBytesPerSecond
        headerLines = settings.headerLines(for: request, hasBody: hasBody)
        // URLRequest does not tell whether its timeout was set: 60 s is its default.
        let own = request.urlRequest.timeoutInterval
        idleTimeout = own > 0 && own != 60 ? own : settings.requestTimeout
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Conditioning's bandwidth (bytes per second; 0 unlimited). The loop
    /// paces the transfer itself, pausing it while it is ahead of the rate:
    /// libcurl's own limits average over seconds and let a short transfer
    /// (seconds of it on loopback) through at full speed.
    let receiveLimit: UInt64
    let sendLimit: UInt64
    var receivePacer = Pacer()
    var sendPacer = Pacer()
    /// Paused until then (uptime ns), by a pacer; the loop resumes it.
    var pausedUntil: UInt64?

    deinit {
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Sets every option this hop needs on a handle fresh from `curl_easy_reset`.
    func configure(_ handle: UnsafeMutableRawPointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_set_long(handle, CURLOPT_NOPROGRESS, 1)
        _ = ccurl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = ccurl_set_pointer(handle, CURLOPT_URL, url.absoluteString)
        _ = ccurl_set_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_set_pointer(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        if let bundle = CurlLibrary.caBundle { _ = ccurl_set_pointer(handle, CURLOPT_CAINFO, bundle) }
        _ = ccurl_set_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        // Conditioning's bandwidth: libcurl paces the transfer itself.

        // Body framing as `_HTTPURLProtocol`: a GET without a body sends none;
        // any other method uploads its body (an empty one as Content-Length: 0);
        // a stream body goes chunked.
        switch (body, bodyIsStream) {
        case (nil, false) where method == "GET":
            _ = ccurl_set_long(handle, CURLOPT_UPLOAD, 0)
            _ = ccurl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, 0)
        case (_, true):
            _ = ccurl_set_long(handle, CURLOPT_UPLOAD, 1)
            _ = ccurl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, -1)
        default:
            _ = ccurl_set_long(handle, CURLOPT_UPLOAD, 1)
            _ = ccurl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(body?.count ?? 0))
        }
        for line in headerLines { headerList = curl_slist_append(headerList, line) }
        _ = ccurl_set_pointer(handle, CURLOPT_HTTPHEADER, headerList)
        _ = ccurl_set_pointer(handle, CURLOPT_ACCEPT_ENCODING, "")
        _ = ccurl_set_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 1)
        _ = ccurl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, method)
        _ = ccurl_set_long(handle, CURLOPT_NOBODY, method == "HEAD" ? 1 : 0)

        _ = ccurl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = ccurl_set_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if transfer.receiveLimit > 0, let until = transfer.receivePacer.hold(length, limit: transfer.receiveLimit, now: CurlLoop.now()) {
                // Not taken: libcurl delivers the same bytes again once resumed.
                transfer.pausedUntil = until
                return Int(CURL_WRITEFUNC_PAUSE)
            }
            if length > 0, let data { transfer.received.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length) }
            transfer.lastActivity = CurlLoop.now()
            return length
        }
        _ = ccurl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = ccurl_set_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if let data { transfer.receivedHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) }
            transfer.lastActivity = CurlLoop.now()
            return length
        }
        _ = ccurl_set_pointer(handle, CURLOPT_READDATA, context)
        _ = ccurl_set_data_callback(handle, CURLOPT_READFUNCTION) { buffer, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.fill(buffer, capacity: size * count)
        }
        _ = ccurl_set_pointer(handle, CURLOPT_SEEKDATA, context)
        // libcurl rewinds the body to resend it (a reused connection that
        // turned out closed, an auth round): only from the start is asked.
        _ = ccurl_set_seek_callback(handle) { context, offset, origin in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            guard origin == SEEK_SET, offset >= 0, Int(offset) <= (transfer.body?.count ?? 0) else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
            transfer.bodyOffset = Int(offset)
            return Int32(CURL_SEEKFUNC_OK)
        }
    }

    private func fill(_ buffer: UnsafeMutablePointer<CChar>?, capacity: Int) -> Int {
        let now = CurlLoop.now()
        if firstRead == nil { firstRead = now }
        lastRead = now
        lastActivity = now
        guard let body, let buffer, bodyOffset < body.count else { return 0 }
        let count = min(capacity, body.count - bodyOffset)
        if sendLimit > 0, let until = sendPacer.hold(count, limit: sendLimit, now: now) {
            pausedUntil = until
            return Int(CURL_READFUNC_PAUSE)
        }
        body.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + bodyOffset, byteCount: count)
        }
        bodyOffset += count
        return count
    }

    /// One line of a response head: a status line starts a new head (after a
    /// 1xx, say), an empty line ends it, a line starting with white space
    /// continues the previous header.
    private func receivedHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        // Bytes, not Characters: "\r\n" is one Character.
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 0 : 0, parts.count > 2 ? String(parts[2]) : "")
            headers = []
            headersComplete = false
        } else if line.isEmpty {
            headersComplete = status != nil
        } else if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
            headers[headers.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
        } else if let colon = line.firstIndex(of: ":") {
            headers.append(HTTPHeader(name: String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                                      value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
    }

    /// How the hop ended: `code` is libcurl's result for it.
    func outcome(_ code: CURLcode, handle: UnsafeMutableRawPointer) -> CaptureOutcome {
        let timings = timings(handle)
        guard code == CURLE_OK else {
            var osError = 0
            _ = ccurl_get_long(handle, CURLINFO_OS_ERRNO, &osError)
            let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
            return .failure(CaptureFailure(error: CurlErrors.error(code, osError: Int32(osError), detail: detail, url: url),
                                           timings: status == nil ? nil : timings))
        }
        guard let status, status.code > 0 else {
            return .failure(CaptureFailure(error: CurlErrors.error(CURLE_GOT_NOTHING, osError: 0, detail: "no HTTP response", url: url)))
        }
        // URLSession joins repeated fields with ", " by exact name (and
        // HTTPURLResponse then folds names that differ only in case).
        var fields: [String: String] = [:]
        for header in headers {
            if let earlier = fields[header.name] {
                fields[header.name] = earlier + ", " + header.value
            } else {
                fields[header.name] = header.value
            }
        }
        guard let response = HTTPURLResponse(url: url, statusCode: status.code, httpVersion: status.version, headerFields: fields) else {
            return .failure(CaptureFailure(error: CurlErrors.error(CURLE_WEIRD_SERVER_REPLY, osError: 0, detail: "unusable HTTP response", url: url)))
        }
        settings.storeCookies(from: headers, for: url)
        return .response(CaptureResponse(response: response, body: received, timings: timings,
                                         receivedHeaders: headers, reasonPhrase: status.reason))
    }

    /// HAR timings from libcurl's clock (microseconds since the hop began).
    /// A reused connection has no DNS or connect phase: -1, as HAR asks.
    private func timings(_ handle: UnsafeMutableRawPointer) -> CaptureTimings {
        func info(_ what: CURLINFO) -> Double {
            var value: curl_off_t = 0
            _ = ccurl_get_offset(handle, what, &value)
            return Double(value) / 1000
        }
        let lookup = info(CURLINFO_NAMELOOKUP_TIME_T), connect = info(CURLINFO_CONNECT_TIME_T)
        let secure = info(CURLINFO_APPCONNECT_TIME_T), pretransfer = info(CURLINFO_PRETRANSFER_TIME_T)
        let start = info(CURLINFO_STARTTRANSFER_TIME_T), total = info(CURLINFO_TOTAL_TIME_T)
        var timings = CaptureTimings()
        if connect > 0 {
            timings.dns = lookup
            timings.connect = max(secure, connect) - lookup
            timings.ssl = secure > 0 ? secure - connect : -1
        }
        let sending = firstRead.flatMap { first in lastRead.map { Double($0 - first) / 1e6 } } ?? 0
        timings.send = sending
        guard status != nil, start > 0 else { return timings }
        timings.wait = max(0, start - pretransfer - sending)
        timings.receive = max(0, total - start)
        return timings
    }
}

/// NSURLError codes for libcurl results, as FoundationNetworking maps them,
/// with libcurl's own message.
enum CurlErrors {
    static func error(_ code: CURLcode, osError: Int32, detail: String, url: URL) -> NSError {
        let mapped: Int
        switch (code, osError) {
        case (_, ECONNREFUSED): mapped = NSURLErrorCannotConnectToHost
        case (CURLE_UNSUPPORTED_PROTOCOL, _): mapped = NSURLErrorUnsupportedURL
        case (CURLE_URL_MALFORMAT, _): mapped = NSURLErrorBadURL
        case (CURLE_COULDNT_RESOLVE_HOST, _), (CURLE_COULDNT_RESOLVE_PROXY, _): mapped = NSURLErrorCannotFindHost
        case (CURLE_RECV_ERROR, ECONNRESET), (CURLE_SEND_ERROR, ECONNRESET): mapped = NSURLErrorNetworkConnectionLost
        case (CURLE_GOT_NOTHING, _), (CURLE_WEIRD_SERVER_REPLY, _): mapped = NSURLErrorBadServerResponse
        case (CURLE_COULDNT_CONNECT, ETIMEDOUT), (CURLE_OPERATION_TIMEDOUT, _): mapped = NSURLErrorTimedOut
        case (CURLE_COULDNT_CONNECT, _): mapped = NSURLErrorCannotConnectToHost
        case (CURLE_PEER_FAILED_VERIFICATION, _): mapped = NSURLErrorServerCertificateUntrusted
        case (CURLE_SSL_CONNECT_ERROR, _): mapped = NSURLErrorSecureConnectionFailed
        case (CURLE_ABORTED_BY_CALLBACK, _): mapped = NSURLErrorCancelled
        default: mapped = NSURLErrorUnknown
        }
        return NSError(domain: NSURLErrorDomain, code: mapped,
                       userInfo: [NSLocalizedDescriptionKey: detail,
                                  NSURLErrorFailingURLErrorKey: url])
    }

    static func cancelled(_ url: URL) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled,
                userInfo: [NSLocalizedDescriptionKey: "cancelled", NSURLErrorFailingURLErrorKey: url])
    }

    static func timedOut(_ url: URL) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut,
                userInfo: [NSLocalizedDescriptionKey: "The request timed out.", NSURLErrorFailingURLErrorKey: url])
    }
}

/// One libcurl multi handle driven by a thread of its own, started with the
/// first transfer. Other threads only queue work and wake it; every libcurl
/// call happens on it. Connections are kept in the multi handle, so
/// keep-alive spans transfers; easy handles are reused.
final class CurlLoop: @unchecked Sendable {
    private struct Inbox {
        var submitted: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
        var started = false
        /// The multi handle is gone: nothing may wake it any more.
        var closed = false
    }

    /// Guards the queues, and the multi handle's life: it is woken and
    /// cleaned up only under this lock, so a wake-up never meets a freed handle.
    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer?
    // Loop thread only.
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []

    init(maximumConnectionsPerHost: Int) {
        _ = CurlLibrary.initialized
        multi = curl_multi_init()
        if let multi, maximumConnectionsPerHost > 0 {
            _ = ccurl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        }
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func submit(_ transfer: CurlTransfer) {
        let accepted: Bool = inbox.withLock { inbox in
            guard !inbox.stopping, !inbox.closed, let multi else { return false }
            inbox.submitted.append(transfer)
            if inbox.started {
                curl_multi_wakeup(multi)
            } else {
                inbox.started = true
                let thread = Thread { [self] in run() }
                thread.name = "pincer.capture.curl"
                thread.start()
            }
            return true
        }
        guard !accepted else { return }
        let message = multi == nil ? "libcurl could not make a multi handle" : "network capture was stopped for this configuration"
        transfer.continuation?.resume(returning: .failure(CaptureFailure(error: PincerNetworkCapture.error(.captureStopped, message))))
        transfer.continuation = nil
    }

    func cancel(_ transfer: CurlTransfer) {
        transfer.cancelRequested.store(true, ordering: .releasing)
        inbox.withLock { inbox in
            guard inbox.started, !inbox.closed, let multi else { return }
            inbox.cancelled.append(transfer)
            curl_multi_wakeup(multi)
        }
    }

    func stop() {
        inbox.withLock { inbox in
            guard !inbox.stopping, let multi else { return }
            inbox.stopping = true
            if inbox.started {
                curl_multi_wakeup(multi)
            } else {
                inbox.closed = true
                curl_multi_cleanup(multi)
            }
        }
    }

    private func run() {
        guard let multi else { return }
        while true {
            let work = inbox.withLock { inbox -> Inbox in
                defer { inbox.submitted = []; inbox.cancelled = [] }
                return inbox
            }
            for transfer in work.submitted { start(transfer, multi: multi) }
            for transfer in work.cancelled {
                guard let handle = running.first(where: { $0.value === transfer })?.key else { continue }
                finish(handle, multi: multi, .failure(CaptureFailure(error: CurlErrors.cancelled(transfer.url))))
            }
            if work.stopping {
                for (handle, transfer) in running {
                    finish(handle, multi: multi, .failure(CaptureFailure(error: CurlErrors.cancelled(transfer.url))))
                }
                break
            }
            resumePaced()
            var active: Int32 = 0
            _ = curl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                      let transfer = running[handle] else { continue }
                finish(handle, multi: multi, transfer.outcome(message.pointee.data.result, handle: handle))
            }
            let wait = expireIdle(multi: multi)
            _ = curl_multi_poll(multi, nil, 0, wait, nil)
        }
        for handle in spareHandles { curl_easy_cleanup(handle) }
        spareHandles = []
        // Transfers submitted after the stop was seen are refused by submit;
        // any that slipped in before are answered here.
        let late: [CurlTransfer] = inbox.withLock { inbox in
            inbox.closed = true
            curl_multi_cleanup(multi)
            defer { inbox.submitted = [] }
            return inbox.submitted
        }
        for transfer in late { resume(transfer, .failure(CaptureFailure(error: CurlErrors.cancelled(transfer.url)))) }
    }

    private func start(_ transfer: CurlTransfer, multi: UnsafeMutableRawPointer) {
        guard !transfer.cancelRequested.load(ordering: .acquiring) else {
            return resume(transfer, .failure(CaptureFailure(error: CurlErrors.cancelled(transfer.url))))
        }
        guard let handle = spareHandles.popLast() ?? curl_easy_init() else {
            return resume(transfer, .failure(CaptureFailure(error: CurlErrors.error(CURLE_OUT_OF_MEMORY, osError: 0,
                                                                                   detail: "libcurl could not make a handle", url: transfer.url))))
        }
        curl_easy_reset(handle)
        transfer.configure(handle)
        transfer.lastActivity = Self.now()
        running[handle] = transfer
        if curl_multi_add_handle(multi, handle) != CURLM_OK {
            running[handle] = nil
            spareHandles.append(handle)
            resume(transfer, .failure(CaptureFailure(error: CurlErrors.error(CURLE_FAILED_INIT, osError: 0,
                                                                            detail: "libcurl refused the transfer", url: transfer.url))))
        }
    }

    private func finish(_ handle: UnsafeMutableRawPointer, multi: UnsafeMutableRawPointer, _ outcome: CaptureOutcome) {
        guard let transfer = running.removeValue(forKey: handle) else { return }
        curl_multi_remove_handle(multi, handle)
        if spareHandles.count < 16 { spareHandles.append(handle) } else { curl_easy_cleanup(handle) }
        resume(transfer, outcome)
    }

    private func resume(_ transfer: CurlTransfer, _ outcome: CaptureOutcome) {
        transfer.continuation?.resume(returning: outcome)
        transfer.continuation = nil
    }

    /// Resumes paced transfers whose time came.
    private func resumePaced() {
        let now = Self.now()
        for (handle, transfer) in running {
            guard let until = transfer.pausedUntil, until <= now else { continue }
            transfer.pausedUntil = nil
            transfer.lastActivity = now
            _ = curl_easy_pause(handle, 0)  // CURLPAUSE_CONT
        }
    }

    /// Fails transfers idle longer than their timeout; returns how long the
    /// loop may sleep (ms) before the next one could expire or a paced one resumes.
    private func expireIdle(multi: UnsafeMutableRawPointer) -> Int32 {
        let now = Self.now()
        var wait: UInt64 = 1000
        for (handle, transfer) in running {
            if let until = transfer.pausedUntil {
                // Paced, not idle.
                transfer.lastActivity = now
                wait = min(wait, until > now ? (until - now) / 1_000_000 + 1 : 0)
                continue
            }
            let limit = UInt64(max(transfer.idleTimeout, 0) * 1e9)
            let idle = now &- transfer.lastActivity
            if idle >= limit {
                finish(handle, multi: multi, .failure(CaptureFailure(error: CurlErrors.timedOut(transfer.url))))
            } else {
                wait = min(wait, (limit - idle) / 1_000_000 + 1)
            }
        }
        return Int32(wait)
    }
}

/// Paces one direction of a transfer to a rate: a chunk is taken only once
/// the bytes before it and itself fit the rate since the first chunk, so
/// the transfer as a whole takes its size divided by the rate.
struct Pacer {
    private var start: UInt64?
    private var taken: UInt64 = 0

    /// Nil when `count` more bytes may go now (they are counted); else the
    /// uptime (ns) when they may.
    mutating func hold(_ count: Int, limit: UInt64, now: UInt64) -> UInt64? {
        let first = start ?? now
        start = first
        let due = first + UInt64(Double(taken + UInt64(count)) / Double(limit) * 1e9)
        if due > now + 1_000_000 { return due }
        taken += UInt64(count)
        return nil
    }
}
