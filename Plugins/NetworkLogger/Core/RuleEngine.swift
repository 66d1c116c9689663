// The rules engine: one compiled set of interception rules, asked once
// before a request is sent (`decide`) and once when its response is there
// (`respond`). Every way traffic reaches Pincer (URLSession capture, C
// recorders, the loopback proxy) asks the same engine through the
// pincer.network/1 service, so a rule means the same everywhere.
//
// Cost: rules whose match requires an exact `domain:` are indexed by host,
// so a request is matched only against the rules for its host and the rules
// for any host; both lists keep the document's order.
import PincerJSON
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// A request as the engine sees it.
public struct InterceptedRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: [Header]
    public var body: [UInt8]

    public init(method: String, url: String, headers: [Header] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response as the engine sees it (or makes it, for a mock).
public struct InterceptedResponse: Sendable, Equatable {
    public var status: Int
    public var statusText: String
    public var headers: [Header]
    public var body: [UInt8]

    public init(status: Int, statusText: String = "", headers: [Header] = [], body: [UInt8] = []) {
        self.status = status
        self.statusText = statusText
        self.headers = headers
        self.body = body
    }
}

/// What one rule did to one exchange: kept with its log entry, so a mocked
/// or rewritten response can never pass for the server's.
public struct Intervention: Sendable, Equatable {
    /// The rule's id ("t3" for a transient rule, "conditioning" for the global one).
    public var rule: String
    public var kind: String
    public var title: String
    /// What it did, for people: "answered 503 with 42 bytes".
    public var did: String

    public init(rule: String, kind: String, title: String = "", did: String) {
        self.rule = rule
        self.kind = kind
        self.title = title
        self.did = did
    }

    public var json: JSON {
        .object([("rule", .string(rule)), ("kind", .string(kind)), ("title", .string(title)), ("did", .string(did))])
    }

    public init?(json: JSON) {
        guard let rule = json["rule"]?.stringValue, let kind = json["kind"]?.stringValue, let did = json["did"]?.stringValue else { return nil }
        self.init(rule: rule, kind: kind, title: json["title"]?.stringValue ?? "", did: did)
    }

    /// "mock 3 (Server down): answered 503 with 42 bytes".
    public var line: String {
        "\(kind) \(rule)\(title.isEmpty ? "" : " (\(title))"): \(did)"
    }
}

/// What to do with a request, decided before it is sent.
public struct RequestDecision: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// Send `request` (changed or not).
        case send
        /// Do not send; the app receives this response.
        case respond(InterceptedResponse)
        /// Do not send; the app's request fails with this error.
        case fail(NetworkFailure)
    }

    /// The request to send: the app's, after map-remote and request rewrites.
    public var request: InterceptedRequest
    public var outcome: Outcome = .send
    /// Milliseconds to wait before sending (or answering); jitter included, capped at 30 s.
    public var latencyMs: Double = 0
    /// Bytes per second for the transfer; 0 unlimited.
    public var downloadBytesPerSecond: Int64 = 0
    public var uploadBytesPerSecond: Int64 = 0
    /// Hold the request before sending, for at most this many seconds.
    public var holdRequest: (rule: String, timeoutSeconds: Int)?
    public var interventions: [Intervention] = []
    /// Rules consulted again once the response is there (indexes into the engine).
    var responseRewrite: Int?
    var responseBreakpoint: Int?
    var deferredRewrites = false
    var deferredBreakpoints = false

    /// The response did not come from the network.
    public var stubbed: Bool {
        switch outcome {
        case .respond: true
        case .send, .fail: false
        }
    }

    /// True when nothing applies: the request goes on untouched and nothing
    /// happens to its response (the common case, and the fast one).
    public var isUntouched: Bool {
        outcome == .send && interventions.isEmpty && holdRequest == nil && responseRewrite == nil && responseBreakpoint == nil
            && !deferredRewrites && !deferredBreakpoints
    }

    /// Rules may act on the response (rewrite it, hold it): it must be
    /// there whole for `respond`; otherwise it can stream past.
    public var wantsResponse: Bool {
        responseRewrite != nil || responseBreakpoint != nil || deferredRewrites || deferredBreakpoints
    }

    init(request: InterceptedRequest) { self.request = request }
}

/// What to do with a response, decided when it arrived.
public struct ResponseDecision: Sendable {
    public var response: InterceptedResponse
    public var interventions: [Intervention] = []
    /// Hold the response before the app sees it, for at most this many seconds.
    public var holdResponse: (rule: String, timeoutSeconds: Int)?
}

/// One compiled set of rules (transient ones first, then the document's).
public final class RuleEngine: Sendable {
    struct Compiled: Sendable {
        let rule: InterceptRule
        let filter: NetworkFilter
        let needsResponse: Bool
        /// Regexes of replace-body operations, by operation index.
        let regexes: [Int: RegexBox]
    }

    let rules: [Compiled]
    let enabled: Bool
    let conditioning: Conditioning?
    /// Rules that can only match one host, by that host; of the others,
    /// those that can only match one first path segment, by it; the rest.
    let byHost: [String: [Int]]
    let bySegment: [String: [Int]]
    let anyHost: [Int]

    public var isEmpty: Bool { !enabled || (rules.isEmpty && conditioning == nil) }
    public var ruleCount: Int { rules.count }

    /// Compiles `document` with `transient` rules before its own. Rules
    /// that are disabled, or whose match does not parse, are left out (the
    /// way in checks every rule, so the latter cannot happen).
    public init(document: RulesDocument, transient: [InterceptRule] = []) {
        enabled = document.enabled
        conditioning = document.conditioning
        var compiled: [Compiled] = []
        var byHost: [String: [Int]] = [:], bySegment: [String: [Int]] = [:], anyHost: [Int] = []
        for rule in transient + document.rules where rule.enabled {
            guard let filter = try? NetworkFilter(rule.match) else { continue }
            var regexes: [Int: RegexBox] = [:]
            if case .rewrite(let ops) = rule.action {
                for (i, op) in ops.enumerated() {
                    if case .replaceBody(_, let find, true, _) = op, let regex = try? Regex(find) { regexes[i] = RegexBox(regex: regex) }
                }
            }
            let index = compiled.count
            compiled.append(Compiled(rule: rule, filter: filter, needsResponse: filter.needsResponse, regexes: regexes))
            if let host = filter.requiredHost { byHost[host, default: []].append(index) }
            else if let segment = filter.requiredFirstSegment { bySegment[segment, default: []].append(index) }
            else { anyHost.append(index) }
        }
        rules = compiled
        self.byHost = byHost
        self.bySegment = bySegment
        self.anyHost = anyHost
    }

    /// The rules to try for a request to `host` and `path`, in order.
    private func candidates(_ host: String, _ path: String) -> [Int] {
        let own = byHost[host] ?? [], segment = bySegment.isEmpty ? [] : bySegment[NetworkFilter.firstSegment(path)] ?? []
        if own.isEmpty && segment.isEmpty { return anyHost }
        return RuleEngine.merged(RuleEngine.merged(own, segment), anyHost)
    }

    /// Two sorted lists of rule indexes as one.
    private static func merged(_ a: [Int], _ b: [Int]) -> [Int] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [Int] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) { out.append(a[i]); i += 1 } else { out.append(b[j]); j += 1 }
        }
        return out
    }

    /// The request as a log entry, for filters and for showing it.
    public static func entry(_ r: InterceptedRequest) -> NetworkEntry {
        var e = NetworkEntry(source: .captured, startedAt: 0, method: r.method, url: r.url)
        e.requestHeaders = r.headers
        e.requestBody = Body(payload: .stored(r.body), size: r.body.count, mimeType: r.headers.first("Content-Type") ?? "")
        return e
    }

    /// What to do with `request`. `random` gives numbers in 0..<1 (jitter,
    /// failure rates); tests pass their own.
    public func decide(_ request: InterceptedRequest, random: () -> Double = { Double.random(in: 0..<1) }) -> RequestDecision {
        var d = RequestDecision(request: request)
        guard !isEmpty else { return d }
        let parts = URLParts(request.url)
        let list = candidates(parts?.host ?? "", parts?.path ?? "")
        guard !list.isEmpty || conditioning != nil else { return d }
        let entry = RuleEngine.entry(request)
        var first: [RuleKind: Int] = [:]
        for i in list {
            let c = rules[i]
            let kind = c.rule.kind
            if first[kind] != nil { continue }
            if c.needsResponse {
                if kind == .rewrite { d.deferredRewrites = true }
                if kind == .breakpoint { d.deferredBreakpoints = true }
                continue
            }
            if c.filter.matches(entry) { first[kind] = i }
        }
        // Answers first: block, then mock, then map-local.
        if let i = first[.block], case .block(let failure) = rules[i].rule.action {
            d.outcome = .fail(failure)
            d.interventions.append(note(i, "failed the request with \(failure.rawValue) (not sent)"))
        } else if let i = first[.mock], case .mock(let status, let headers, let body) = rules[i].rule.action {
            let made = RuleEngine.mockResponse(status: status, headers: headers, body: body)
            d.outcome = .respond(made.response)
            d.interventions.append(note(i, made.problem ?? "answered \(status) with \(made.response.body.count) bytes (not sent)"))
        } else if let i = first[.mapLocal], case .mapLocal(let path) = rules[i].rule.action {
            let made = RuleEngine.localFile(path)
            d.outcome = .respond(made.response)
            d.interventions.append(note(i, made.problem ?? "answered with \(path) (\(made.response.body.count) bytes, not sent)"))
        }
        if d.outcome == .send {
            if let i = first[.mapRemote], case .mapRemote(let to, let strip) = rules[i].rule.action,
               let mapped = RuleEngine.mapRemote(d.request.url, to: to, stripPrefix: strip) {
                d.request.url = mapped
                d.request.headers.removeAll { $0.name.lowercased() == "host" }
                d.interventions.append(note(i, "sent to \(mapped)"))
            }
            if let i = first[.breakpoint], case .breakpoint(true, _, let timeout) = rules[i].rule.action {
                d.holdRequest = (rules[i].rule.id, timeout)
            }
        }
        if let i = first[.rewrite], case .rewrite(let ops) = rules[i].rule.action {
            if d.outcome == .send {
                var done: [String] = []
                RuleEngine.apply(ops, side: .request, regexes: rules[i].regexes, request: &d.request, done: &done)
                if !done.isEmpty { d.interventions.append(note(i, done.joined(separator: "; "))) }
            }
            if ops.contains(where: { $0.side == .response }) { d.responseRewrite = i }
        }
        if let i = first[.breakpoint], case .breakpoint(_, true, _) = rules[i].rule.action { d.responseBreakpoint = i }
        // Conditioning: a delay rule, else the global one.
        var condition: (Conditioning, Intervention)?
        if let i = first[.delay], case .delay(let c) = rules[i].rule.action {
            condition = (c, note(i, ""))
        } else if let c = conditioning {
            condition = (c, Intervention(rule: "conditioning", kind: RuleKind.delay.rawValue, title: "global conditioning", did: ""))
        }
        if let (c, base) = condition {
            var n = base
            if c.offline, d.outcome == .send {
                d.outcome = .fail(.offline)
                n.did = "offline: failed with not-connected (not sent)"
            } else if c.failureRate > 0, d.outcome == .send, random() < c.failureRate {
                d.outcome = .fail(.connectionLost)
                n.did = "failed at random with connection-lost (\(NumberText.trimmed(c.failureRate * 100)) % failures; not sent)"
            } else {
                d.latencyMs = c.latency(random: random())
                d.downloadBytesPerSecond = c.downloadBytesPerSecond
                d.uploadBytesPerSecond = c.uploadBytesPerSecond
                n.did = "conditioned: \(c.summary) (waited \(NumberText.trimmed(d.latencyMs)) ms)"
            }
            d.interventions.append(n)
        }
        return d
    }

    /// What to do with `response`, the answer to the request `decision` was made for.
    public func respond(_ decision: RequestDecision, request: InterceptedRequest, response: InterceptedResponse) -> ResponseDecision {
        var out = ResponseDecision(response: response)
        var rewrite = decision.responseRewrite, breakpoint = decision.responseBreakpoint
        if (rewrite == nil && decision.deferredRewrites) || (breakpoint == nil && decision.deferredBreakpoints) {
            var entry = RuleEngine.entry(request)
            entry.state = .complete
            entry.status = response.status
            entry.statusText = response.statusText
            entry.responseHeaders = response.headers
            entry.responseBody = Body(payload: .stored(response.body), size: response.body.count,
                                      mimeType: response.headers.first("Content-Type") ?? "")
            let parts = URLParts(request.url)
            for i in candidates(parts?.host ?? "", parts?.path ?? "") where rules[i].needsResponse {
                let kind = rules[i].rule.kind
                if kind == .rewrite, rewrite == nil, decision.deferredRewrites, rules[i].filter.matches(entry) { rewrite = i }
                if kind == .breakpoint, breakpoint == nil, decision.deferredBreakpoints, rules[i].filter.matches(entry) { breakpoint = i }
            }
        }
        if let i = rewrite, case .rewrite(let ops) = rules[i].rule.action {
            var done: [String] = []
            RuleEngine.apply(ops, regexes: rules[i].regexes, response: &out.response, done: &done)
            if !done.isEmpty { out.interventions.append(note(i, done.joined(separator: "; "))) }
        }
        if let i = breakpoint, case .breakpoint(_, true, let timeout) = rules[i].rule.action {
            out.holdResponse = (rules[i].rule.id, timeout)
        }
        return out
    }

    private func note(_ i: Int, _ did: String) -> Intervention {
        let r = rules[i].rule
        return Intervention(rule: r.id, kind: r.kind.rawValue, title: r.title, did: did)
    }

    /// The rule's title and kind for a rule id (breakpoints name the rule that held).
    public func rule(id: String) -> InterceptRule? { rules.first { $0.rule.id == id }?.rule }
}

/// A compiled regex; immutable once compiled (see NetworkFilter.Pattern).
struct RegexBox: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>
}

// MARK: - Making and changing messages

extension RuleEngine {
    /// A mock's response; `problem` when its file could not be read (the
    /// response then says so, with status 500, rather than pretending).
    static func mockResponse(status: Int, headers: [Header], body: MockBody) -> (response: InterceptedResponse, problem: String?) {
        var response = InterceptedResponse(status: status, headers: headers)
        switch body {
        case .none: break
        case .text(let t): response.body = Array(t.utf8)
        case .bytes(let b): response.body = b
        case .file(let path):
            switch LocalFile.read(path, limit: InterceptRule.maximumFileSize) {
            case .success(let bytes):
                response.body = bytes
                if headers.first("Content-Type") == nil { response.headers.append(Header("Content-Type", LocalFile.mediaType(path))) }
            case .failure(let why):
                return (failedFile(why.message), "could not serve its body file: \(why) (answered 500)")
            }
        }
        RuleEngine.setContentLength(&response.headers, response.body.count)
        return (response, nil)
    }

    public static func localFile(_ path: String) -> (response: InterceptedResponse, problem: String?) {
        switch LocalFile.read(path, limit: InterceptRule.maximumFileSize) {
        case .success(let bytes):
            var headers = [Header("Content-Type", LocalFile.mediaType(path))]
            setContentLength(&headers, bytes.count)
            return (InterceptedResponse(status: 200, statusText: "OK", headers: headers, body: bytes), nil)
        case .failure(let why):
            return (failedFile(why.message), "could not serve \(path): \(why) (answered 500)")
        }
    }

    private static func failedFile(_ why: String) -> InterceptedResponse {
        let text = Array("Pincer map-local/mock: \(why)\n".utf8)
        var headers = [Header("Content-Type", "text/plain; charset=utf-8")]
        setContentLength(&headers, text.count)
        return InterceptedResponse(status: 500, statusText: "Internal Server Error", headers: headers, body: text)
    }

    /// `url` sent to `to`: its scheme, host and port; its path replaces
    /// `stripPrefix` at the start of the path. Query and fragment stay.
    static func mapRemote(_ url: String, to: String, stripPrefix: String) -> String? {
        guard let from = URLParts(url), let target = URLParts(to) else { return nil }
        var path = from.path
        if !stripPrefix.isEmpty, path.hasPrefix(stripPrefix) { path = String(path.dropFirst(stripPrefix.count)) }
        var base = target.path
        if base.hasSuffix("/") { base.removeLast() }
        if !path.hasPrefix("/") { path = "/" + path }
        var out = "\(target.scheme)://\(target.host)"
        if let port = target.port { out += ":\(port)" }
        out += base + path
        if let q = from.query { out += "?" + q }
        if let f = from.fragment { out += "#" + f }
        return out
    }

    static func setContentLength(_ headers: inout [Header], _ count: Int) {
        if let i = headers.firstIndex(where: { $0.name.lowercased() == "content-length" }) {
            headers[i].value = String(count)
            headers.removeAll { $0.name.lowercased() == "content-length" && $0.value != String(count) }
        }
    }

    static func apply(_ ops: [RewriteOperation], side: ExchangeSide, regexes: [Int: RegexBox], request r: inout InterceptedRequest, done: inout [String]) {
        for (i, op) in ops.enumerated() where op.side == .request {
            switch op {
            case .setQuery(let name, let value):
                r.url = Query.set(r.url, name: name, value: value)
                done.append("set query \(name)")
            case .removeQuery(let name):
                let before = r.url
                r.url = Query.set(r.url, name: name, value: nil)
                if r.url != before { done.append("removed query \(name)") }
            default:
                var body = r.body
                if change(op, regex: regexes[i], headers: &r.headers, body: &body, done: &done) {
                    r.body = body
                    setContentLength(&r.headers, body.count)
                }
            }
        }
    }

    static func apply(_ ops: [RewriteOperation], regexes: [Int: RegexBox], response r: inout InterceptedResponse, done: inout [String]) {
        for (i, op) in ops.enumerated() where op.side == .response {
            if case .status(let code) = op {
                done.append("status \(r.status) → \(code)")
                r.status = code
                r.statusText = ""
                continue
            }
            var body = r.body
            if change(op, regex: regexes[i], headers: &r.headers, body: &body, done: &done) {
                r.body = body
                setContentLength(&r.headers, body.count)
            }
        }
    }

    /// A header or body change; true when the body changed.
    private static func change(_ op: RewriteOperation, regex: RegexBox?, headers: inout [Header], body: inout [UInt8], done: inout [String]) -> Bool {
        switch op {
        case .setHeader(let side, let name, let value):
            let lower = name.lowercased()
            if let at = headers.firstIndex(where: { $0.name.lowercased() == lower }) {
                headers[at] = Header(name, value)
                var seen = false
                headers.removeAll { h in
                    guard h.name.lowercased() == lower else { return false }
                    defer { seen = true }
                    return seen
                }
            } else {
                headers.append(Header(name, value))
            }
            done.append("set \(side.rawValue) header \(name)")
        case .addHeader(let side, let name, let value):
            headers.append(Header(name, value))
            done.append("added \(side.rawValue) header \(name)")
        case .removeHeader(let side, let name):
            let before = headers.count
            headers.removeAll { $0.name.lowercased() == name.lowercased() }
            if headers.count != before { done.append("removed \(side.rawValue) header \(name)") }
        case .replaceBody(let side, let find, _, let with):
            guard let text = String(validating: body, as: UTF8.self) else {
                done.append("left the \(side.rawValue) body alone (not UTF-8 text)")
                return false
            }
            let replaced = regex.map { text.replacing($0.regex, with: with) } ?? text.replacing(find, with: with)
            guard replaced != text else { return false }
            body = Array(replaced.utf8)
            done.append("replaced \(regex == nil ? "" : "regex ")\"\(find)\" in the \(side.rawValue) body")
            return true
        case .setJSON(let side, let path, let value):
            return changeJSON(value, side: side, path: path, body: &body, done: &done)
        case .removeJSON(let side, let path):
            return changeJSON(nil, side: side, path: path, body: &body, done: &done)
        default:
            break
        }
        return false
    }

    private static func changeJSON(_ value: JSON?, side: ExchangeSide, path: String, body: inout [UInt8], done: inout [String]) -> Bool {
        guard let root = try? JSON.parse(bytes: body), let changed = JSONPath(path).apply(value, to: root) else {
            done.append("left the \(side.rawValue) body alone (not JSON, or \(path) crosses a value that is not an object or array)")
            return false
        }
        body = changed.serializedBytes()
        done.append("\(value == nil ? "removed" : "set") \(path) in the \(side.rawValue) JSON")
        return true
    }
}

/// Query parameters of a URL, changed by name.
enum Query {
    /// `url` with every `name` parameter replaced by one `name=value`
    /// (appended when absent), or removed when `value` is nil. The value is
    /// percent-encoded where the query syntax needs it.
    static func set(_ url: String, name: String, value: String?) -> String {
        var head = Substring(url), fragment = ""
        if let hash = head.firstIndex(of: "#") { fragment = String(head[hash...]); head = head[..<hash] }
        var query = ""
        if let q = head.firstIndex(of: "?") { query = String(head[head.index(after: q)...]); head = head[..<q] }
        let encodedName = encode(name)
        var pairs = query.isEmpty ? [] : query.split(separator: "&", omittingEmptySubsequences: false).map(String.init)
        let matchesName: (String) -> Bool = { pair in
            let key = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            return key == encodedName || (key.removingPercentEncodingLossy == name)
        }
        if let value {
            let pair = "\(encodedName)=\(encode(value))"
            if let at = pairs.firstIndex(where: matchesName) {
                pairs[at] = pair
                var seen = false
                pairs.removeAll { p in
                    guard matchesName(p) else { return false }
                    defer { seen = true }
                    return seen
                }
            } else {
                pairs.append(pair)
            }
        } else {
            pairs.removeAll(where: matchesName)
        }
        return String(head) + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")) + fragment
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            switch b {
            case 0x20, 0x23, 0x25, 0x26, 0x2B, 0x3D, 0x00...0x1F, 0x7F...0xFF:
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            default:
                out.unicodeScalars.append(Unicode.Scalar(b))
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }

    /// Percent-decoded, invalid sequences kept as written.
    fileprivate var removingPercentEncodingLossy: String {
        let u = Array(utf8)
        var out: [UInt8] = []
        var i = 0
        while i < u.count {
            if u[i] == 0x25, i + 2 < u.count, let v = UInt8(String(decoding: u[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(v); i += 3
            } else {
                out.append(u[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Files a mock or map-local rule serves.
public enum LocalFile {
    /// The whole file, or why not (missing, a directory, over `limit` bytes).
    public static func read(_ path: String, limit: Int) -> Result<[UInt8], RulesError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(RulesError("cannot open \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(RulesError("cannot stat \(path): \(String(cString: strerror(errno)))")) }
        guard st.st_mode & S_IFMT == S_IFREG else { return .failure(RulesError("\(path) is not a regular file")) }
        guard st.st_size <= limit else { return .failure(RulesError("\(path) is \(st.st_size) bytes, over the \(limit >> 20) MiB limit")) }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, $0.count - got) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return .failure(RulesError(n == 0 ? "\(path) shrank while being read" : "cannot read \(path): \(String(cString: strerror(errno)))")) }
            got += n
        }
        return .success(bytes)
    }

    /// The media type for a file name's extension (application/octet-stream when unknown).
    public static func mediaType(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt", "text": return "text/plain; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "xml": return "application/xml"
        case "csv": return "text/csv; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "pdf": return "application/pdf"
        case "zip": return "application/zip"
        case "gz": return "application/gzip"
        case "wasm": return "application/wasm"
        case "mp4": return "video/mp4"
        case "mp3": return "audio/mpeg"
        case "woff": return "font/woff"
        case "woff2": return "font/woff2"
        case "har": return "application/json"
        case "proto", "pb", "bin": return "application/octet-stream"
        default: return "application/octet-stream"
        }
    }
}
