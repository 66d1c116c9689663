import PincerJSON

// net.replay: a logged request sent again through the app's own session.
// The log holds requests redacted, so what was redacted cannot be sent
// again as it was: a header whose value was redacted is left out (the
// session may add its own, as it did the first time) or supplied by the
// person (--header 'Authorization: ...'); a URL or body with redacted
// values is refused, never sent with "[REDACTED]" in it.

/// The mark a replayed request carries to the app's session and back into
/// the log (PINCER_NETWORK_REPLAY_HEADER): "<original id>.<token>". The
/// store reads and drops it when the request begins; the capture does not
/// send it.
public enum ReplayMark {
    public static let header = "X-Pincer-Replay"

    public static func value(original: UInt64, token: String) -> String { "\(original).\(token)" }

    /// Removes the mark from `headers`; what it said, when it was there and well formed.
    static func take(from headers: inout [Header]) -> (original: UInt64, token: String)? {
        guard let i = headers.firstIndex(where: { $0.name.lowercased() == "x-pincer-replay" }) else { return nil }
        let value = headers.remove(at: i).value
        guard let dot = value.firstIndex(of: "."), let original = UInt64(value[..<dot]) else { return nil }
        return (original, String(value[value.index(after: dot)...]))
    }
}

/// A logged request made ready to send again.
public struct ReplayPlan: Sendable {
    public var method: String
    public var url: String
    public var headers: [Header]
    public var body: [UInt8]
    /// Headers whose value was redacted and nobody supplied: not sent.
    public var leftOut: [String] = []
    /// Headers the person gave (--header).
    public var supplied: [String] = []

    /// Methods that may be repeated without repeating their effect (RFC 9110 §9.2.2).
    public static let idempotent: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// Headers the sending stack sets itself for the new exchange.
    static let recomputed: Set<String> = ["content-length", "host", "connection", "transfer-encoding"]

    /// The plan for `entry` (as the log holds it) with `supplied` headers;
    /// the error says what stands in the way.
    public static func make(_ entry: NetworkEntry, supplied: [Header], confirmed: Bool) throws(ReplayRefusal) -> ReplayPlan {
        let method = entry.method.uppercased()
        guard confirmed || idempotent.contains(method) else {
            throw ReplayRefusal("\(method) is not idempotent: sending #\(entry.id) again may repeat what it did (an order, a payment); add --yes to send it")
        }
        guard !entry.url.contains(Redactor.marker) else {
            throw ReplayRefusal("the URL of #\(entry.id) has redacted values (\(entry.url)); they were never stored, so it cannot be sent again")
        }
        var body: [UInt8] = []
        switch entry.requestBody.payload {
        case .stored(let b):
            guard !contains(b, Redactor.marker) else {
                throw ReplayRefusal("the request body of #\(entry.id) has redacted values; they were never stored, so it cannot be sent again")
            }
            body = b
        case .none:
            break
        case .withheld(let reason):
            throw ReplayRefusal("the log does not hold the request body of #\(entry.id) (\(reason)), so it cannot be sent again")
        case .skipped, .dropped:
            if entry.requestBody.size > 0 {
                throw ReplayRefusal("the log does not hold the request body of #\(entry.id) (\(entry.requestBody.size) bytes), so it cannot be sent again")
            }
        }
        var plan = ReplayPlan(method: entry.method, url: entry.url, headers: [], body: body)
        let given = Set(supplied.map { $0.name.lowercased() })
        for h in entry.requestHeaders {
            let name = h.name.lowercased()
            if recomputed.contains(name) || given.contains(name) || name == "x-pincer-replay" { continue }
            if h.value.contains(Redactor.marker) {
                if !plan.leftOut.contains(h.name) { plan.leftOut.append(h.name) }
                continue
            }
            plan.headers.append(h)
        }
        plan.headers += supplied
        plan.supplied = supplied.map(\.name)
        return plan
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for i in 0...(bytes.count - needle.count) where bytes[i] == needle[0] {
            if bytes[i..<(i + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

public struct ReplayRefusal: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What changed between an entry and its replay, for the person who asked.
public enum ReplayComparison {
    /// Headers that differ between two responses: added, removed, changed.
    public static func headerChanges(_ before: [Header], _ after: [Header]) -> [JSON] {
        func table(_ list: [Header]) -> [(String, String)] {
            var out: [(String, String)] = []
            for h in list {
                if let i = out.firstIndex(where: { $0.0.lowercased() == h.name.lowercased() }) { out[i].1 += ", " + h.value } else { out.append((h.name, h.value)) }
            }
            return out
        }
        let a = table(before), b = table(after)
        var out: [JSON] = []
        for (name, value) in a {
            if let other = b.first(where: { $0.0.lowercased() == name.lowercased() }) {
                if other.1 != value { out.append(.object([("header", .string(name)), ("change", .string("changed")), ("before", .string(value)), ("after", .string(other.1))])) }
            } else {
                out.append(.object([("header", .string(name)), ("change", .string("removed")), ("before", .string(value)), ("after", .null)]))
            }
        }
        for (name, value) in b where !a.contains(where: { $0.0.lowercased() == name.lowercased() }) {
            out.append(.object([("header", .string(name)), ("change", .string("added")), ("before", .null), ("after", .string(value))]))
        }
        return out
    }

    /// The comparison net.replay prints: status, size, duration, response headers that changed.
    public static func json(original o: NetworkEntry, replay r: NetworkEntry, plan: ReplayPlan) -> JSON {
        func status(_ e: NetworkEntry) -> JSON { e.status.map { .int(Int64($0)) } ?? .string(e.error ?? e.state.rawValue) }
        func row(_ what: String, _ a: JSON, _ b: JSON) -> JSON { .object([("what", .string(what)), ("original", a), ("replay", b)]) }
        return .object([
            ("original", .uint(o.id)), ("replay", .uint(r.id)), ("method", .string(r.method)), ("url", .string(r.url)),
            ("left_out", .array(plan.leftOut.map(JSON.string))), ("supplied", .array(plan.supplied.map(JSON.string))),
            ("comparison", .array([
                row("status", status(o), status(r)),
                row("size", .int(Int64(o.responseBody.size)), .int(Int64(r.responseBody.size))),
                row("duration_ms", .double((o.duration * 10).rounded() / 10), .double((r.duration * 10).rounded() / 10)),
            ])),
            ("headers_changed", .array(headerChanges(o.responseHeaders, r.responseHeaders))),
        ])
    }
}
