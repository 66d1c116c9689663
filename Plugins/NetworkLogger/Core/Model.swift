@_exported import PincerJSON

// The network log's data model. Everything in an entry has already passed
// redaction (Redaction.swift) by the time the store holds it: exports and
// views read only what is here.

/// One header, in order, as sent or received. Names keep their case.
public struct Header: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Headers in order, held as one exactly sized buffer: for each header its
/// name's and its value's UTF-8 length (LEB128), then the bytes. A log of
/// 100,000 entries holds two million headers; as `[Header]` each was two
/// Strings, most of them a heap object of their own (about 40 bytes over
/// their text), and an array slot. `headers` builds the `[Header]` form on
/// demand; exports read the bytes as they are (`forEach`).
public struct HeaderList: Sendable, Equatable {
    private var storage: [UInt8]

    public init() { storage = [] }

    public init(_ headers: [Header]) {
        var total = 0
        for h in headers {
            let n = h.name.utf8.count, v = h.value.utf8.count
            total += HeaderList.lengthSize(n) + n + HeaderList.lengthSize(v) + v
        }
        guard !headers.isEmpty else { storage = []; return }
        storage = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var at = 0
            func put(_ s: String) {
                var s = s
                s.withUTF8 { text in
                    var n = text.count
                    // LEB128: seven bits a byte, low bits first.
                    while n >= 0x80 {
                        buffer[at] = UInt8(truncatingIfNeeded: n) | 0x80
                        n >>= 7
                        at += 1
                    }
                    buffer[at] = UInt8(n)
                    at += 1
                    if let base = text.baseAddress {
                        UnsafeMutableRawPointer(buffer.baseAddress! + at).copyMemory(from: base, byteCount: text.count)
                    }
                    at += text.count
                }
            }
            for h in headers {
                put(h.name)
                put(h.value)
            }
            initialized = at
        }
    }

    private static func lengthSize(_ n: Int) -> Int {
        var size = 1, n = n
        while n >= 0x80 { n >>= 7; size += 1 }
        return size
    }

    /// Each header's name and value as UTF-8 bytes, in order (valid only during the call).
    public func forEach(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try storage.withUnsafeBufferPointer { b in
            var at = 0
            // The buffer is only ever written by init: its lengths are within it.
            func take() -> UnsafeBufferPointer<UInt8> {
                var n = 0, shift = 0
                while b[at] & 0x80 != 0 {
                    n |= Int(b[at] & 0x7F) << shift
                    shift += 7
                    at += 1
                }
                n |= Int(b[at]) << shift
                at += 1
                defer { at += n }
                return UnsafeBufferPointer(rebasing: b[at..<(at + n)])
            }
            while at < b.count {
                let name = take()
                let value = take()
                try body(name, value)
            }
        }
    }

    /// The headers as values.
    public var headers: [Header] {
        var out: [Header] = []
        forEach { name, value in
            out.append(Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return out
    }

    public var isEmpty: Bool { storage.isEmpty }

    /// The first value of a header, by case-insensitive name (as `[Header].first`).
    public func first(_ name: String) -> String? {
        let wanted = Array(name.utf8)
        // ASCII names compare byte by byte; anything else as `[Header].first` does.
        guard wanted.allSatisfy({ $0 < 0x80 }) else { return headers.first(name) }
        var found: String?
        var fallback = false
        forEach { n, value in
            guard found == nil, !fallback else { return }
            // A non-ASCII name may still lowercase to an ASCII one (U+212A KELVIN SIGN is "k").
            if n.contains(where: { $0 >= 0x80 }) { fallback = true; return }
            guard n.count == wanted.count else { return }
            for i in 0..<n.count where HeaderList.lower(n[i]) != HeaderList.lower(wanted[i]) { return }
            found = String(decoding: value, as: UTF8.self)
        }
        if fallback { return headers.first(name) }
        return found
    }

    /// Whether a header of this name is present (case-insensitive).
    public func contains(name: String) -> Bool { first(name) != nil }

    /// The headers of this name (case-insensitive, as `name.lowercased()`
    /// compares), in order, built without building the others.
    public func all(named name: String) -> [Header] {
        let wanted = Array(name.lowercased().utf8)
        var out: [Header] = []
        forEach { n, value in
            if n.contains(where: { $0 >= 0x80 }) {
                // Non-ASCII: as String.lowercased() says (U+212A KELVIN SIGN lowercases to "k").
                let text = String(decoding: n, as: UTF8.self)
                if Array(text.lowercased().utf8) == wanted { out.append(Header(text, String(decoding: value, as: UTF8.self))) }
                return
            }
            guard n.count == wanted.count else { return }
            for i in 0..<n.count where HeaderList.lower(n[i]) != wanted[i] { return }
            out.append(Header(String(decoding: n, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return out
    }

    @inline(__always)
    private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

    /// Equal as `[Header]`s are (String equality): the same bytes are.
    public static func == (a: HeaderList, b: HeaderList) -> Bool {
        a.storage == b.storage || a.headers == b.headers
    }
}

/// What the log keeps of a request or response body.
public enum BodyPayload: Sendable, Equatable {
    /// There was no body.
    case none
    /// The (redacted) bytes.
    case stored([UInt8])
    /// The body could not be checked for secrets (over the per-body cap,
    /// invalid or too deep JSON, duplicate keys, multipart...): only its
    /// size is kept. `reason` says why, for people.
    case withheld(reason: String)
    /// A metadata-only rule matched: no bytes were kept.
    case skipped
    /// The bytes were kept, then dropped to stay within the total body
    /// budget; the rest of the entry is intact.
    case dropped
}

public struct Body: Sendable, Equatable {
    public var payload: BodyPayload
    /// Size of the original body in bytes (as sent or received).
    public var size: Int
    /// The Content-Type's media type, lowercased, without parameters; "" when unknown.
    public var mimeType: String {
        didSet { mimeType = Body.interned(mimeType) }
    }

    public static let empty = Body(payload: .none, size: 0, mimeType: "")

    public init(payload: BodyPayload, size: Int, mimeType: String) {
        self.payload = payload
        self.size = size
        self.mimeType = Body.interned(mimeType)
    }

    /// A common media type as the literal it equals: a literal needs no
    /// memory of its own, and "application/json" (16 bytes) is one byte too
    /// long for a String held inline, so each body would carry a heap copy.
    static func interned(_ m: String) -> String {
        guard m.utf8.count > 15 else { return m }
        switch m {
        case "application/json": return "application/json"
        case "application/javascript": return "application/javascript"
        case "application/x-www-form-urlencoded": return "application/x-www-form-urlencoded"
        case "application/octet-stream": return "application/octet-stream"
        case "application/xml": return "application/xml"
        case "multipart/form-data": return "multipart/form-data"
        case "application/graphql": return "application/graphql"
        case "application/x-ndjson": return "application/x-ndjson"
        case "application/problem+json": return "application/problem+json"
        case "application/manifest+json": return "application/manifest+json"
        case "application/vnd.api+json": return "application/vnd.api+json"
        case "application/x-protobuf": return "application/x-protobuf"
        case "application/grpc-web+proto": return "application/grpc-web+proto"
        default: return m
        }
    }

    /// The bytes the log holds, if it holds them.
    public var bytes: [UInt8]? {
        if case .stored(let b) = payload { return b }
        return nil
    }

    /// Bytes counted against the total body budget.
    public var storedByteCount: Int { bytes?.count ?? 0 }
}

/// HAR's timing phases in milliseconds; -1 means "does not apply / unknown".
/// `ssl` is part of `connect`, as in HAR 1.2.
public struct Timings: Sendable, Equatable {
    public var blocked: Double = -1
    public var dns: Double = -1
    public var connect: Double = -1
    public var ssl: Double = -1
    public var send: Double = 0
    public var wait: Double = 0
    public var receive: Double = 0

    public init() {}

    /// HAR's `time`: the sum of the phases that are not -1, `ssl` excluded
    /// because `connect` already contains it.
    public var total: Double {
        [blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
    }
}

public enum EntryState: String, Sendable {
    /// Sent, no response yet.
    case pending
    /// A response arrived (any status).
    case complete
    /// No response: a transport error.
    case failed
}

/// Where an entry came from.
public enum EntrySource: String, Sendable {
    /// URLSession capture (PincerNetworkCapture).
    case captured
    /// Recorded by code through the pincer.network/1 service.
    case manual
    /// Imported from a HAR file.
    case imported
    /// Went through the loopback proxy (net.proxy).
    case proxy
}

/// One HTTP exchange (one hop: a redirect is its own entry whose
/// `redirectURL` names the next hop).
public struct NetworkEntry: Sendable, Equatable {
    /// Increasing from 1 in the order requests started; never reused.
    public var id: UInt64 = 0
    public var source: EntrySource
    /// Unix time in seconds when the request started.
    public var startedAt: Double
    /// Unix time in seconds when the log received the entry (retention
    /// counts from here: an imported HAR may hold requests years old).
    public var recordedAt: Double = 0
    public var method: String
    /// The (redacted) URL.
    public var url: String
    public var httpVersion: String = "HTTP/1.1"
    /// The request headers, held packed (`requestHeaderList`): this builds them.
    public var requestHeaders: [Header] {
        get { requestHeaderList.headers }
        set { requestHeaderList = HeaderList(newValue) }
    }
    public var requestHeaderList = HeaderList()
    public var requestBody: Body = .empty

    public var state: EntryState = .pending
    /// The response status; nil without a response.
    public var status: Int?
    public var statusText: String = ""
    /// The response headers, held packed (`responseHeaderList`): this builds them.
    public var responseHeaders: [Header] {
        get { responseHeaderList.headers }
        set { responseHeaderList = HeaderList(newValue) }
    }
    public var responseHeaderList = HeaderList()
    public var responseBody: Body = .empty
    /// For 3xx hops: where the server sent the client ("" otherwise).
    public var redirectURL: String = ""
    public var timings = Timings()
    /// Transport error for failed entries.
    public var error: String?
    /// The server's IP address when known.
    public var serverIP: String?
    /// Answered by a stub or mock instead of the network.
    public var stubbed = false
    /// What the log did to this entry, for people: "request body withheld: ...".
    public var notes: [String] = []
    /// What interception rules did to this exchange (mocked, mapped, rewritten,
    /// delayed...), in the order they applied; empty when none applied.
    public var interventions: [Intervention] = []
    /// net.replay sent this request again: the id of the entry it repeats.
    public var replayOf: UInt64?

    public init(source: EntrySource, startedAt: Double, method: String, url: String) {
        self.source = source
        self.startedAt = startedAt
        self.method = method
        self.url = url
    }

    /// Milliseconds from start to the end of the response (HAR `time`).
    public var duration: Double { timings.total }

    /// "≥ 400 or no response", as Scyther counts failures.
    public var isFailure: Bool {
        switch state {
        case .failed: true
        case .complete: (status ?? 0) >= 400
        case .pending: false
        }
    }
}

/// The pieces of a URL the filters, stats and exports need, split on bytes
/// (no Foundation). `scheme://userinfo@host:port/path?query#fragment`.
public struct URLParts: Sendable, Equatable {
    public var scheme: String
    public var userinfo: String?
    public var host: String
    public var port: Int?
    public var path: String
    public var query: String?
    public var fragment: String?

    public init?(_ url: String) {
        // Byte offsets into the UTF-8 view: the delimiters are ASCII, and
        // walking Characters here was a hot spot of export and filtering.
        let u = Array(url.utf8)
        func text(_ r: Range<Int>) -> String { String(decoding: u[r], as: UTF8.self) }
        guard let colon = u.firstIndex(of: 0x3A), colon + 2 < u.count, u[colon + 1] == 0x2F, u[colon + 2] == 0x2F else { return nil }
        scheme = text(0..<colon).lowercased()
        var end = u.count
        if let hash = u[(colon + 3)...].firstIndex(of: 0x23) {
            fragment = text((hash + 1)..<end)
            end = hash
        }
        let authorityStart = colon + 3
        let authorityEnd = u[authorityStart..<end].firstIndex { $0 == 0x2F || $0 == 0x3F } ?? end
        var hostStart = authorityStart
        if let at = u[authorityStart..<authorityEnd].lastIndex(of: 0x40) {
            userinfo = text(authorityStart..<at)
            hostStart = at + 1
        }
        // [v6]:port, host:port
        if hostStart < authorityEnd, u[hostStart] == 0x5B, let close = u[hostStart..<authorityEnd].firstIndex(of: 0x5D) {
            host = text(hostStart..<(close + 1)).lowercased()
            if close + 1 < authorityEnd, u[close + 1] == 0x3A { port = Int(text((close + 2)..<authorityEnd)) }
        } else if let c = u[hostStart..<authorityEnd].lastIndex(of: 0x3A) {
            host = text(hostStart..<c).lowercased()
            port = Int(text((c + 1)..<authorityEnd))
        } else {
            host = text(hostStart..<authorityEnd).lowercased()
        }
        if let q = u[authorityEnd..<end].firstIndex(of: 0x3F) {
            path = text(authorityEnd..<q)
            query = text((q + 1)..<end)
        } else {
            path = text(authorityEnd..<end)
        }
        if path.isEmpty { path = "/" }
    }

    /// Reassembles the URL (the inverse of init for what it parsed).
    public var string: String {
        var s = scheme + "://"
        if let userinfo { s += userinfo + "@" }
        s += host
        if let port { s += ":\(port)" }
        s += path
        if let query { s += "?" + query }
        if let fragment { s += "#" + fragment }
        return s
    }
}

extension Array where Element == Header {
    /// The first value of a header, by case-insensitive name.
    public func first(_ name: String) -> String? {
        let lower = name.lowercased()
        return first { $0.name.lowercased() == lower }?.value
    }
}

/// The media type of a Content-Type value: lowercased, parameters removed.
public func mediaType(_ contentType: String?) -> String {
    guard let contentType, !contentType.isEmpty else { return "" }
    let u = contentType.utf8
    let end = u.firstIndex(of: 0x3B) ?? u.endIndex
    var bytes = Array(u[..<end])
    while let f = bytes.first, f == 0x20 || f == 0x09 { bytes.removeFirst() }
    while let l = bytes.last, l == 0x20 || l == 0x09 { bytes.removeLast() }
    for i in bytes.indices where bytes[i] >= 0x41 && bytes[i] <= 0x5A { bytes[i] += 0x20 }
    return String(decoding: bytes, as: UTF8.self)
}

extension String {
    /// Trims the given ASCII characters from both ends (no Foundation). Works
    /// on the UTF-8 view: trimming ASCII leaves scalar boundaries intact.
    public func trimmingCharacters(in set: String) -> String {
        let chars = Array(set.utf8)
        let u = utf8
        var start = u.startIndex, end = u.endIndex
        while start < end, chars.contains(u[start]) { start = u.index(after: start) }
        while end > start, chars.contains(u[u.index(before: end)]) { end = u.index(before: end) }
        if start == u.startIndex && end == u.endIndex { return self }
        return String(self[start..<end])
    }
}
