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
    public var mimeType: String

    public static let empty = Body(payload: .none, size: 0, mimeType: "")

    public init(payload: BodyPayload, size: Int, mimeType: String) {
        self.payload = payload
        self.size = size
        self.mimeType = mimeType
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
    public var requestHeaders: [Header] = []
    public var requestBody: Body = .empty

    public var state: EntryState = .pending
    /// The response status; nil without a response.
    public var status: Int?
    public var statusText: String = ""
    public var responseHeaders: [Header] = []
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
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        scheme = String(url[..<colon]).lowercased()
        var rest = Substring(url[url.index(colon, offsetBy: 3)...])
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        // [v6]:port, host:port
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[...close]).lowercased()
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon]).lowercased()
            port = Int(authority[authority.index(after: colon)...])
        } else {
            host = String(authority).lowercased()
        }
        if let q = rest.firstIndex(of: "?") {
            path = String(rest[..<q])
            query = String(rest[rest.index(after: q)...])
        } else {
            path = String(rest)
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
    guard let contentType else { return "" }
    let base = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
    return base.trimmingCharacters(in: " \t").lowercased()
}

extension String {
    /// Trims the given ASCII characters from both ends (no Foundation).
    public func trimmingCharacters(in set: String) -> String {
        let chars = Set(set.unicodeScalars)
        var scalars = Substring(self).unicodeScalars[...]
        while let f = scalars.first, chars.contains(f) { scalars = scalars.dropFirst() }
        while let l = scalars.last, chars.contains(l) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
