// Interception rules: what Pincer may do to an exchange before the app sees
// it (after Scyther's request overrides, Proxyman's and Charles's map tools).
//
// A rule has an id, a title, an enabled flag, a `match` (a filter expression
// of net.list, Filter.swift) and one kind:
//
// | kind         | does                                                                   |
// |--------------|------------------------------------------------------------------------|
// | `mock`       | answers with a status, headers and a body (text, base64 or a file)     |
// | `map-local`  | answers with a file (≤ 10 MiB), its media type from the extension      |
// | `map-remote` | sends the request to another scheme/host/port (and path prefix)         |
// | `rewrite`    | changes headers, query parameters, status, body text, JSON values      |
// | `block`      | fails the request with a network error, as the app's client reports it |
// | `delay`      | conditioning: latency, jitter, bandwidth, a failure rate               |
// | `breakpoint` | holds the request, the response or both for a person to edit           |
//
// Order: the document's order. For each kind the first enabled rule that
// matches applies; the others of that kind are not consulted. Rules that
// answer or fail (block, mock, map-local) come first in that precedence:
// block, then mock, then map-local. Response-side parts (a rewrite of the
// response, a response breakpoint) are matched again once the response is
// there, so their `match` may test the status.
//
// The document (`RulesDocument`) is JSON with a format id and version:
//
//     {"format": "pincer.net-rules", "version": 1, "enabled": true,
//      "conditioning": null, "nextId": 3, "rules": [ {...}, ... ]}
import PincerJSON
import PincerPluginKit

/// What a rule does.
public enum RuleKind: String, Sendable, CaseIterable {
    case mock, mapLocal = "map-local", mapRemote = "map-remote", rewrite, block, delay, breakpoint
}

/// A network failure a `block` rule (or a conditioning failure) reports: the
/// names are URLSession's `URLError` codes, which capture code maps back.
public enum NetworkFailure: String, Sendable, CaseIterable {
    case offline = "not-connected", timedOut = "timed-out", cannotFindHost = "cannot-find-host",
         cannotConnect = "cannot-connect", connectionLost = "connection-lost", secureConnectionFailed = "secure-connection-failed",
         cancelled

    /// NSURLError codes (Foundation's URLError.Code raw values).
    public var urlErrorCode: Int {
        switch self {
        case .offline: -1009
        case .timedOut: -1001
        case .cannotFindHost: -1003
        case .cannotConnect: -1004
        case .connectionLost: -1005
        case .secureConnectionFailed: -1200
        case .cancelled: -999
        }
    }

    /// The message URLSession gives for the code.
    public var message: String {
        switch self {
        case .offline: "The Internet connection appears to be offline."
        case .timedOut: "The request timed out."
        case .cannotFindHost: "A server with the specified hostname could not be found."
        case .cannotConnect: "Could not connect to the server."
        case .connectionLost: "The network connection was lost."
        case .secureConnectionFailed: "An SSL error has occurred and a secure connection to the server cannot be made."
        case .cancelled: "cancelled"
        }
    }
}

/// Network conditioning: added latency, bandwidth limits and a failure rate
/// (Scyther's presets). Rates are in bytes per second; 0 means unlimited.
public struct Conditioning: Sendable, Equatable {
    public var latencyMs: Double = 0
    public var jitterMs: Double = 0
    public var downloadBytesPerSecond: Int64 = 0
    public var uploadBytesPerSecond: Int64 = 0
    /// 0...1: the share of requests that fail with `connection-lost`.
    public var failureRate: Double = 0
    /// Every request fails with `not-connected` (the Offline preset).
    public var offline = false
    /// The preset it came from, for people ("" for custom figures).
    public var preset = ""

    public init(latencyMs: Double = 0, jitterMs: Double = 0, downloadBytesPerSecond: Int64 = 0, uploadBytesPerSecond: Int64 = 0,
                failureRate: Double = 0, offline: Bool = false, preset: String = "") {
        self.latencyMs = latencyMs
        self.jitterMs = jitterMs
        self.downloadBytesPerSecond = downloadBytesPerSecond
        self.uploadBytesPerSecond = uploadBytesPerSecond
        self.failureRate = failureRate
        self.offline = offline
        self.preset = preset
    }

    /// The longest delay any rule or preset may add.
    public static let maximumDelayMs: Double = 30_000

    /// Scyther's figures; KB = 1,000 bytes.
    public static let presets: [(name: String, value: Conditioning)] = [
        ("wifi", Conditioning(latencyMs: 10, preset: "wifi")),
        ("4g", Conditioning(latencyMs: 50, downloadBytesPerSecond: 1_500_000, uploadBytesPerSecond: 1_500_000, preset: "4g")),
        ("3g", Conditioning(latencyMs: 100, downloadBytesPerSecond: 100_000, uploadBytesPerSecond: 100_000, preset: "3g")),
        ("edge", Conditioning(latencyMs: 400, downloadBytesPerSecond: 30_000, uploadBytesPerSecond: 30_000, preset: "edge")),
        ("very-bad", Conditioning(latencyMs: 500, downloadBytesPerSecond: 125_000, uploadBytesPerSecond: 125_000, failureRate: 0.1, preset: "very-bad")),
        ("offline", Conditioning(offline: true, preset: "offline")),
    ]

    public static func preset(_ name: String) -> Conditioning? {
        presets.first { $0.name == name.lowercased() }?.value
    }

    /// Why these figures are refused, or nil.
    public var problem: String? {
        if !(0...Conditioning.maximumDelayMs).contains(latencyMs) { return "latency \(latencyMs) ms is outside 0–30000 ms" }
        if !(0...Conditioning.maximumDelayMs).contains(jitterMs) { return "jitter \(jitterMs) ms is outside 0–30000 ms" }
        if downloadBytesPerSecond < 0 || uploadBytesPerSecond < 0 { return "a rate is negative (0 means unlimited)" }
        if !(0...1).contains(failureRate) { return "failure rate \(failureRate) is outside 0–1" }
        return nil
    }

    /// The latency for one request: jitter spread evenly around it, capped.
    public func latency(random: Double) -> Double {
        let spread = jitterMs * (random * 2 - 1)
        return min(max(latencyMs + spread, 0), Conditioning.maximumDelayMs)
    }

    /// "3g: 100 ms, 100 KB/s down, 100 KB/s up".
    public var summary: String {
        if offline { return "offline" }
        var parts: [String] = ["\(NumberText.trimmed(latencyMs)) ms"]
        if jitterMs > 0 { parts[0] += " ± \(NumberText.trimmed(jitterMs))" }
        if downloadBytesPerSecond > 0 { parts.append("\(NumberText.trimmed(Double(downloadBytesPerSecond) / 1000)) KB/s down") }
        if uploadBytesPerSecond > 0 { parts.append("\(NumberText.trimmed(Double(uploadBytesPerSecond) / 1000)) KB/s up") }
        if failureRate > 0 { parts.append("\(NumberText.trimmed(failureRate * 100)) % failures") }
        return (preset.isEmpty ? "" : preset + ": ") + parts.joined(separator: ", ")
    }
}

/// Which side of an exchange a rewrite operation or breakpoint is about.
public enum ExchangeSide: String, Sendable {
    case request, response
}

/// One change a `rewrite` rule makes.
public enum RewriteOperation: Sendable, Equatable {
    /// Replaces every header of that name with one (adds it when absent).
    case setHeader(ExchangeSide, name: String, value: String)
    case addHeader(ExchangeSide, name: String, value: String)
    case removeHeader(ExchangeSide, name: String)
    /// Replaces every query parameter of that name with one (adds it when absent).
    case setQuery(name: String, value: String)
    case removeQuery(name: String)
    /// The response status.
    case status(Int)
    /// Every occurrence of `find` (a literal, or a regex) in the body text.
    case replaceBody(ExchangeSide, find: String, regex: Bool, with: String)
    /// A JSON value by path (`user.name`, `items[0].id`), in a JSON body.
    case setJSON(ExchangeSide, path: String, value: JSON)
    case removeJSON(ExchangeSide, path: String)

    public var side: ExchangeSide {
        switch self {
        case .setHeader(let s, _, _), .addHeader(let s, _, _), .removeHeader(let s, _), .replaceBody(let s, _, _, _),
             .setJSON(let s, _, _), .removeJSON(let s, _): s
        case .setQuery, .removeQuery: .request
        case .status: .response
        }
    }
}

/// The body of a mock.
public enum MockBody: Sendable, Equatable {
    case none
    case text(String)
    case bytes([UInt8])
    /// Read when the rule applies (so edits to the file show), at most 10 MiB.
    case file(String)
}

/// What a rule does, with its figures.
public enum RuleAction: Sendable, Equatable {
    case mock(status: Int, headers: [Header], body: MockBody)
    case mapLocal(path: String)
    /// `to`'s scheme, host and port replace the request's; its path, when
    /// not empty, replaces `stripPrefix` at the start of the request's path.
    case mapRemote(to: String, stripPrefix: String)
    case rewrite([RewriteOperation])
    case block(NetworkFailure)
    case delay(Conditioning)
    /// Holds before sending (`request`), before the app sees the response
    /// (`response`), or both, for at most `timeoutSeconds` (5–300).
    case breakpoint(request: Bool, response: Bool, timeoutSeconds: Int)

    public var kind: RuleKind {
        switch self {
        case .mock: .mock
        case .mapLocal: .mapLocal
        case .mapRemote: .mapRemote
        case .rewrite: .rewrite
        case .block: .block
        case .delay: .delay
        case .breakpoint: .breakpoint
        }
    }
}

/// One interception rule.
public struct InterceptRule: Sendable, Equatable {
    public var id: String
    public var title: String
    public var enabled: Bool
    /// A filter expression of net.list ("" matches every request).
    public var match: String
    public var action: RuleAction
    /// Where it came from, for people ("net.mock-from 12", "HAR file x.har, entry 3").
    public var origin: String

    public init(id: String = "", title: String = "", enabled: Bool = true, match: String, action: RuleAction, origin: String = "") {
        self.id = id
        self.title = title
        self.enabled = enabled
        self.match = match
        self.action = action
        self.origin = origin
    }

    public var kind: RuleKind { action.kind }

    /// The largest file a mock or map-local serves.
    public static let maximumFileSize = 10 << 20

    /// Why the rule cannot be used (checked on every way in: commands, the
    /// file, imports, transient rules), or nil.
    public var problem: String? {
        let filter: NetworkFilter
        do { filter = try NetworkFilter(match) } catch { return "match \"\(match)\": \(error)" }
        let answersBeforeSending: Bool
        switch action {
        case .mock(let status, let headers, _):
            guard (100...599).contains(status) else { return "status \(status) is outside 100–599" }
            if let bad = headers.first(where: { !HeaderText.isValidName($0.name) || !HeaderText.isValidValue($0.value) }) {
                return "header '\(bad.name)' has a character a header cannot hold"
            }
            answersBeforeSending = true
        case .mapLocal(let path):
            guard !path.isEmpty else { return "map-local needs a file" }
            answersBeforeSending = true
        case .mapRemote(let to, _):
            guard let target = URLParts(to), target.scheme == "http" || target.scheme == "https", !target.host.isEmpty else {
                return "map-remote target '\(to)' is not an absolute http(s) URL"
            }
            guard target.query == nil, target.fragment == nil else { return "map-remote target '\(to)' may not have a query or fragment" }
            answersBeforeSending = true
        case .rewrite(let operations):
            guard !operations.isEmpty else { return "a rewrite needs at least one operation" }
            for op in operations {
                if let problem = RewriteOperation.problem(op) { return problem }
            }
            // Request-side operations are decided before sending.
            answersBeforeSending = operations.contains { $0.side == .request }
        case .block:
            answersBeforeSending = true
        case .delay(let c):
            if let problem = c.problem { return problem }
            answersBeforeSending = true
        case .breakpoint(let request, let response, let timeout):
            guard request || response else { return "a breakpoint holds the request, the response or both" }
            guard (5...300).contains(timeout) else { return "breakpoint timeout \(timeout) s is outside 5–300 s" }
            answersBeforeSending = request
        }
        if answersBeforeSending, filter.needsResponse {
            return "match \"\(match)\" tests the response, but a \(kind.rawValue) rule\(kind == .rewrite || kind == .breakpoint ? " on the request" : "") acts before there is one"
        }
        return nil
    }
}

extension RewriteOperation {
    static func problem(_ op: RewriteOperation) -> String? {
        switch op {
        case .setHeader(_, let name, let value), .addHeader(_, let name, let value):
            if !HeaderText.isValidName(name) { return "'\(name)' is not a header name" }
            if !HeaderText.isValidValue(value) { return "the value for header '\(name)' has a line break or NUL" }
        case .removeHeader(_, let name):
            if !HeaderText.isValidName(name) { return "'\(name)' is not a header name" }
        case .setQuery(let name, _), .removeQuery(let name):
            if name.isEmpty { return "a query parameter needs a name" }
        case .status(let code):
            if !(100...599).contains(code) { return "status \(code) is outside 100–599" }
        case .replaceBody(_, let find, let regex, _):
            if find.isEmpty { return "replace-body needs text to find" }
            if regex {
                do { _ = try Regex(find) } catch { return "invalid regex '\(find)': \(error)" }
            }
        case .setJSON(_, let path, _), .removeJSON(_, let path):
            if let problem = JSONPath(path).problem { return problem }
        }
        return nil
    }
}

/// Header syntax checks (RFC 9110 tokens; values without CR, LF or NUL).
enum HeaderText {
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}

/// `user.name`, `items[0].id`, `$.a.b` (a leading `$.` or `$` is allowed):
/// object keys and array indexes.
struct JSONPath {
    enum Step: Equatable { case key(String), index(Int) }
    let steps: [Step]
    let problem: String?

    init(_ text: String) {
        var steps: [Step] = [], problem: String?
        var s = Substring(text)
        if s.hasPrefix("$.") { s = s.dropFirst(2) } else if s.hasPrefix("$") { s = s.dropFirst() }
        var key = ""
        var i = s.startIndex
        func flush() { if !key.isEmpty { steps.append(.key(key)); key = "" } }
        while i < s.endIndex, problem == nil {
            let c = s[i]
            if c == "." {
                if key.isEmpty, steps.isEmpty || s[s.index(before: i)] != "]" { problem = "JSON path '\(text)' has an empty key" }
                flush()
            } else if c == "[" {
                flush()
                guard let close = s[i...].firstIndex(of: "]"), let n = Int(s[s.index(after: i)..<close]), n >= 0 else {
                    problem = "JSON path '\(text)' has a bad index (expected [0], [1], ...)"
                    break
                }
                steps.append(.index(n))
                i = close
            } else {
                key.append(c)
            }
            i = s.index(after: i)
        }
        flush()
        if problem == nil, steps.isEmpty { problem = "JSON path '\(text)' is empty" }
        self.steps = steps
        self.problem = problem
    }

    /// `root` with the value at the path set (objects and arrays made as
    /// needed; an index past the end appends), or removed (`value` nil).
    /// Nil when the path crosses a value that is neither object nor array.
    func apply(_ value: JSON?, to root: JSON) -> JSON? {
        Self.apply(value, steps[...], to: root)
    }

    private static func apply(_ value: JSON?, _ steps: ArraySlice<Step>, to node: JSON) -> JSON? {
        guard let step = steps.first else { return value ?? .null }
        let rest = steps.dropFirst()
        switch (step, node) {
        case (.key(let k), .object(var members)):
            if let at = members.firstIndex(where: { $0.0 == k }) {
                if rest.isEmpty, value == nil { members.remove(at: at); return .object(members) }
                guard let changed = apply(value, rest, to: members[at].1) else { return nil }
                members[at].1 = changed
            } else {
                guard value != nil else { return node }
                guard let made = apply(value, rest, to: rest.first.map { if case .index = $0 { .array([]) } else { .object([]) } } ?? .null) else { return nil }
                members.append((k, made))
            }
            return .object(members)
        case (.index(let n), .array(var items)):
            if n < items.count {
                if rest.isEmpty, value == nil { items.remove(at: n); return .array(items) }
                guard let changed = apply(value, rest, to: items[n]) else { return nil }
                items[n] = changed
            } else {
                guard value != nil else { return node }
                guard let made = apply(value, rest, to: rest.first.map { if case .index = $0 { .array([]) } else { .object([]) } } ?? .null) else { return nil }
                items.append(made)
            }
            return .array(items)
        default:
            return nil
        }
    }
}

extension RuleAction {
    /// One line for listings: "503, 2 headers, 7-byte body", "→ https://staging.example.com".
    public var summary: String {
        switch self {
        case .mock(let status, let headers, let body):
            var parts = ["\(status)"]
            if !headers.isEmpty { parts.append("\(headers.count) header\(headers.count == 1 ? "" : "s")") }
            switch body {
            case .none: parts.append("no body")
            case .text(let t): parts.append("\(t.utf8.count)-byte body")
            case .bytes(let b): parts.append("\(b.count)-byte body")
            case .file(let p): parts.append("body from \(p)")
            }
            return parts.joined(separator: ", ")
        case .mapLocal(let path): return "serves \(path)"
        case .mapRemote(let to, let strip): return "→ \(to)\(strip.isEmpty ? "" : " (replacing \(strip))")"
        case .rewrite(let ops): return ops.map(\.summary).joined(separator: "; ")
        case .block(let failure): return "fails with \(failure.rawValue)"
        case .delay(let c): return c.summary
        case .breakpoint(let request, let response, let timeout):
            return "holds the \(request && response ? "request and response" : request ? "request" : "response") (\(timeout) s)"
        }
    }
}

extension RewriteOperation {
    var summary: String {
        switch self {
        case .setHeader(let s, let n, let v): "set \(s.rawValue) header \(n): \(v)"
        case .addHeader(let s, let n, let v): "add \(s.rawValue) header \(n): \(v)"
        case .removeHeader(let s, let n): "remove \(s.rawValue) header \(n)"
        case .setQuery(let n, let v): "set query \(n)=\(v)"
        case .removeQuery(let n): "remove query \(n)"
        case .status(let c): "status \(c)"
        case .replaceBody(let s, let f, let r, let w): "replace \(r ? "regex " : "")\"\(f)\" with \"\(w)\" in the \(s.rawValue) body"
        case .setJSON(let s, let p, let v): "set \(p) = \(v.serialized()) in the \(s.rawValue) JSON"
        case .removeJSON(let s, let p): "remove \(p) from the \(s.rawValue) JSON"
        }
    }
}
