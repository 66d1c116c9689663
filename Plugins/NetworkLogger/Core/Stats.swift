// Traffic statistics over the network log, as Scyther defines them.
//
// Definitions (every count is over the entries given):
//
// - requests: every entry.
// - stubbed: entries answered by a stub or mock (`entry.stubbed`).
// - pending: entries still waiting for a response (`state == .pending`).
// - failures: entries with a status >= 400 or no response because of a
//   transport error (`state == .failed`); stubbed entries count too, since
//   the app saw them fail. Pending entries are never failures.
// - network requests: entries that went to the network and finished:
//   not stubbed and not pending.
// - network failures: failures among the network requests.
// - failure rate: network failures / network requests, between 0 and 1;
//   none (JSON null) when there are no network requests. Stubs and requests
//   still in flight neither help nor hurt it.
// - durations: `entry.duration` (HAR `time`, ms) of every finished entry
//   (complete or failed, stubbed included; pending excluded). With five or
//   more, the nearest-rank median and 95th percentile; with one to four, the
//   fastest and slowest instead. Nearest rank: the value at 1-based position
//   ceil(p/100 × n) of the sorted durations (1...20 → median 10, p95 19).
// - bytes received: the sum of `responseBody.size` (original sizes, stored or not).
// - elapsed: seconds from the earliest `startedAt` to the latest end,
//   `startedAt + duration / 1000`; 0 without entries.
// - slowest endpoints: finished entries grouped by `METHOD host/path`: the
//   query is dropped, path segments that are all digits or a UUID become
//   `:id`, and a GraphQL operation name is appended in parentheses
//   (`POST api.example.com/graphql (GetUser)`). GraphQL requests are those
//   with a `graphql` or `gql` path segment or whose JSON request body has
//   an `operationName` or `query` string; the name is `operationName`, else
//   the name after the first `query`/`mutation`/`subscription` in the query
//   text (for GET, the `operationName` URL parameter). Batched bodies list
//   every name: `(A, B)`. Sorted by median, slowest first.
// - by host: per host (with port when the URL has one): requests,
//   failures, failure rate and median duration, defined as above. Worst
//   first: highest failure rate (none last), then most failures, then
//   slowest median (none last), then host name.
//
// `json` field names (stable; times in ms unless noted):
//
//     {"requests": Int, "stubbed": Int, "pending": Int, "failures": Int,
//      "networkRequests": Int, "networkFailures": Int, "failureRate": Double|null,
//      "durations": {"count": Int, "median": Double|null, "p95": Double|null,
//                    "fastest": Double|null, "slowest": Double|null},
//      "bytesReceived": Int, "elapsedSeconds": Double,
//      "slowestEndpoints": [{"endpoint": String, "requests": Int, "failures": Int,
//                            "median": Double, "slowest": Double}],
//      "hosts": [{"host": String, "requests": Int, "failures": Int,
//                 "failureRate": Double|null, "median": Double|null}]}
//
// `median`/`p95` are null with fewer than five finished entries, and
// `fastest`/`slowest` null with five or more (or none).

import PincerJSON
import PincerPluginKit

/// Summary statistics of a set of entries (definitions at the top of Stats.swift).
public struct TrafficStats: Sendable {
    /// Durations of the finished entries, in ms.
    public struct Durations: Sendable, Equatable {
        /// Finished (non-pending) entries measured.
        public var count: Int
        /// Nearest-rank median, with five or more entries.
        public var median: Double?
        /// Nearest-rank 95th percentile, with five or more entries.
        public var p95: Double?
        /// The shortest, with one to four entries.
        public var fastest: Double?
        /// The longest, with one to four entries.
        public var slowest: Double?
    }

    /// One group of "slowest endpoints".
    public struct Endpoint: Sendable, Equatable {
        /// `METHOD host/path` with ids collapsed, plus ` (Operation)` for GraphQL.
        public var endpoint: String
        /// Entries in the group, pending included.
        public var requests: Int
        public var failures: Int
        /// Nearest-rank median duration of the finished entries, in ms.
        public var median: Double
        /// Longest duration, in ms.
        public var slowest: Double
    }

    /// One row of the by-host breakdown.
    public struct Host: Sendable, Equatable {
        public var host: String
        public var requests: Int
        public var failures: Int
        /// Network failures / network requests; nil without network requests.
        public var failureRate: Double?
        /// Nearest-rank median duration of the finished entries, in ms.
        public var median: Double?
    }

    public var requests = 0
    public var stubbed = 0
    public var pending = 0
    public var failures = 0
    /// Finished, not stubbed: the failure rate's denominator.
    public var networkRequests = 0
    /// Failures among `networkRequests`: the failure rate's numerator.
    public var networkFailures = 0
    /// `networkFailures / networkRequests`; nil when there are no network requests.
    public var failureRate: Double?
    public var durations = Durations(count: 0)
    public var bytesReceived = 0
    /// Seconds from the first start to the last end.
    public var elapsed = 0.0
    /// At most `endpointLimit` groups, slowest median first.
    public var slowestEndpoints: [Endpoint] = []
    /// Every host, worst first.
    public var hosts: [Host] = []

    /// Computes the statistics of `entries`; `endpointLimit` bounds `slowestEndpoints`.
    public init(_ entries: [NetworkEntry], endpointLimit: Int = 10) {
        requests = entries.count
        var finished: [Double] = []
        var groups: [String: [NetworkEntry]] = [:]
        var byHost: [String: [NetworkEntry]] = [:]
        for entry in entries {
            if entry.stubbed { stubbed += 1 }
            if entry.state == .pending { pending += 1 }
            if entry.isFailure { failures += 1 }
            if entry.state != .pending {
                finished.append(entry.duration)
                if !entry.stubbed {
                    networkRequests += 1
                    if entry.isFailure { networkFailures += 1 }
                }
            }
            bytesReceived += max(0, entry.responseBody.size)
            let parts = URLParts(entry.url)
            groups[TrafficStats.endpointName(entry, parts: parts), default: []].append(entry)
            byHost[TrafficStats.hostName(parts), default: []].append(entry)
        }
        failureRate = TrafficStats.rate(networkFailures, networkRequests)

        finished.sort()
        durations.count = finished.count
        if finished.count >= 5 {
            durations.median = TrafficStats.nearestRank(50, finished)
            durations.p95 = TrafficStats.nearestRank(95, finished)
        } else if !finished.isEmpty {
            durations.fastest = finished.first
            durations.slowest = finished.last
        }

        if let start = entries.map(\.startedAt).min(),
           let end = entries.map({ $0.startedAt + $0.duration / 1000 }).max() {
            elapsed = max(0, end - start)
        }

        slowestEndpoints = groups.compactMap { name, group -> Endpoint? in
            let times = group.filter { $0.state != .pending }.map(\.duration).sorted()
            guard let median = TrafficStats.nearestRank(50, times), let slowest = times.last else { return nil }
            return Endpoint(endpoint: name, requests: group.count, failures: group.count(where: \.isFailure),
                            median: median, slowest: slowest)
        }
        .sorted { a, b in
            if a.median != b.median { return a.median > b.median }
            if a.slowest != b.slowest { return a.slowest > b.slowest }
            return a.endpoint < b.endpoint
        }
        slowestEndpoints = Array(slowestEndpoints.prefix(max(0, endpointLimit)))

        hosts = byHost.map { host, group in
            let network = group.filter { !$0.stubbed && $0.state != .pending }
            let times = group.filter { $0.state != .pending }.map(\.duration).sorted()
            return Host(host: host, requests: group.count, failures: group.count(where: \.isFailure),
                        failureRate: TrafficStats.rate(network.count(where: \.isFailure), network.count),
                        median: TrafficStats.nearestRank(50, times))
        }
        .sorted { a, b in
            if a.failureRate != b.failureRate { return (a.failureRate ?? -1) > (b.failureRate ?? -1) }
            if a.failures != b.failures { return a.failures > b.failures }
            if a.median != b.median { return (a.median ?? -1) > (b.median ?? -1) }
            return a.host < b.host
        }
    }

    // MARK: Definitions

    /// The nearest-rank percentile `p` (1...100) of ascending `sorted`: the
    /// value at 1-based rank ceil(p/100 × n); nil when empty.
    public static func nearestRank(_ p: Int, _ sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let p = min(max(p, 1), 100)
        let rank = (p * sorted.count + 99) / 100
        return sorted[rank - 1]
    }

    static func rate(_ part: Int, _ whole: Int) -> Double? {
        whole > 0 ? Double(part) / Double(whole) : nil
    }

    static func hostName(_ parts: URLParts?) -> String {
        guard let parts, !parts.host.isEmpty else { return "(no host)" }
        return parts.port.map { "\(parts.host):\($0)" } ?? parts.host
    }

    /// The group an entry falls in: `METHOD host/path`, ids collapsed, GraphQL name kept.
    public static func endpointName(_ entry: NetworkEntry) -> String {
        endpointName(entry, parts: URLParts(entry.url))
    }

    static func endpointName(_ entry: NetworkEntry, parts: URLParts?) -> String {
        let method = entry.method.uppercased()
        guard let parts else { return method + " " + entry.url }
        let path = parts.path.split(separator: "/", omittingEmptySubsequences: false)
            .map { isIdentifier($0) ? ":id" : String($0) }
            .joined(separator: "/")
        var name = method + " " + hostName(parts) + path
        if let operation = graphQLOperation(entry, parts: parts) { name += " (\(operation))" }
        return name
    }

    /// All ASCII digits, or a UUID (8-4-4-4-12 hex digits).
    static func isIdentifier(_ segment: Substring) -> Bool {
        let utf8 = Array(segment.utf8)
        if utf8.isEmpty { return false }
        if utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        guard utf8.count == 36 else { return false }
        for (i, byte) in utf8.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !isHexDigit(byte) {
                return false
            }
        }
        return true
    }

    static func isHexDigit(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
    }

    // MARK: GraphQL

    /// The GraphQL operation name(s) of a request, or nil when it is not
    /// GraphQL or its operation is anonymous.
    static func graphQLOperation(_ entry: NetworkEntry, parts: URLParts) -> String? {
        let graphQLPath = parts.path.split(separator: "/").contains {
            let s = $0.lowercased()
            return s == "graphql" || s == "gql"
        }
        if let bytes = entry.requestBody.bytes, let first = bytes.first(where: { !isSpace($0) }),
           first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           let json = try? JSON.parse(bytes: bytes) {
            let operations = json.arrayValue ?? [json]
            let names = operations.compactMap(operationName(in:))
            if !names.isEmpty { return names.joined(separator: ", ") }
        }
        if graphQLPath, let query = parts.query {
            for pair in query.split(separator: "&") where pair.hasPrefix("operationName=") {
                let value = pair.dropFirst("operationName=".count)
                if !value.isEmpty, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return String(value) }
            }
        }
        return nil
    }

    /// `operationName`, else the name parsed from `query`, of one request object.
    static func operationName(in object: JSON) -> String? {
        if let name = object["operationName"]?.stringValue, !name.isEmpty { return name }
        if let query = object["query"]?.stringValue { return operationName(inQuery: query) }
        return nil
    }

    static func isSpace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x2C // GraphQL ignores commas
    }

    static func isNameStart(_ b: UInt8) -> Bool {
        (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == UInt8(ascii: "_")
    }

    /// The name after the first `query`, `mutation` or `subscription` at the
    /// top level of a GraphQL document (skipping comments, strings and
    /// selection sets); nil for anonymous operations.
    static func operationName(inQuery text: String) -> String? {
        let s = Array(text.utf8)
        var i = 0
        var depth = 0
        func name() -> String {
            let start = i
            while i < s.count, isNameStart(s[i]) || (0x30...0x39).contains(s[i]) { i += 1 }
            return String(decoding: s[start..<i], as: UTF8.self)
        }
        func skipIgnored() {
            while i < s.count {
                if isSpace(s[i]) { i += 1 }
                else if s[i] == UInt8(ascii: "#") { while i < s.count, s[i] != 0x0A, s[i] != 0x0D { i += 1 } }
                else { return }
            }
        }
        while i < s.count {
            let c = s[i]
            if c == UInt8(ascii: "#") || isSpace(c) {
                skipIgnored()
            } else if c == UInt8(ascii: "\"") {
                // "..." with escapes, or """block""".
                if s[i...].starts(with: [0x22, 0x22, 0x22]) {
                    i += 3
                    while i < s.count, !s[i...].starts(with: [0x22, 0x22, 0x22]) { i += s[i] == 0x5C ? 2 : 1 }
                    i += 3
                } else {
                    i += 1
                    while i < s.count, s[i] != 0x22 { i += s[i] == 0x5C ? 2 : 1 }
                    i += 1
                }
            } else if c == UInt8(ascii: "{") {
                depth += 1; i += 1
            } else if c == UInt8(ascii: "}") {
                depth = max(0, depth - 1); i += 1
            } else if depth == 0, isNameStart(c) {
                let word = name()
                if word == "query" || word == "mutation" || word == "subscription" {
                    skipIgnored()
                    guard i < s.count, isNameStart(s[i]) else { return nil }
                    return name()
                }
            } else {
                i += 1
            }
        }
        return nil
    }

    // MARK: Output

    /// The statistics as JSON (field names at the top of Stats.swift).
    public var json: JSON {
        // Rates (below 1) keep 4 decimals, milliseconds 1: finer digits are noise.
        func number(_ d: Double?) -> JSON {
            guard let d else { return .null }
            return .double(abs(d) < 1 ? (d * 10_000).rounded() / 10_000 : (d * 10).rounded() / 10)
        }
        return .object([
            ("requests", .int(Int64(requests))),
            ("stubbed", .int(Int64(stubbed))),
            ("pending", .int(Int64(pending))),
            ("failures", .int(Int64(failures))),
            ("networkRequests", .int(Int64(networkRequests))),
            ("networkFailures", .int(Int64(networkFailures))),
            ("failureRate", number(failureRate)),
            ("durations", .object([
                ("count", .int(Int64(durations.count))),
                ("median", number(durations.median)),
                ("p95", number(durations.p95)),
                ("fastest", number(durations.fastest)),
                ("slowest", number(durations.slowest)),
            ])),
            ("bytesReceived", .int(Int64(bytesReceived))),
            ("elapsedSeconds", .double((elapsed * 1000).rounded() / 1000)),
            ("slowestEndpoints", .array(slowestEndpoints.map {
                .object([
                    ("endpoint", .string($0.endpoint)),
                    ("requests", .int(Int64($0.requests))),
                    ("failures", .int(Int64($0.failures))),
                    ("median", number($0.median)),
                    ("slowest", number($0.slowest)),
                ])
            })),
            ("hosts", .array(hosts.map {
                .object([
                    ("host", .string($0.host)),
                    ("requests", .int(Int64($0.requests))),
                    ("failures", .int(Int64($0.failures))),
                    ("failureRate", number($0.failureRate)),
                    ("median", number($0.median)),
                ])
            })),
        ])
    }

    /// The statistics for people.
    public var text: String {
        var lines: [String] = []
        var head = "Requests   \(requests)"
        var notes: [String] = []
        if stubbed > 0 { notes.append("\(stubbed) stubbed") }
        if pending > 0 { notes.append("\(pending) pending") }
        if !notes.isEmpty { head += " (" + notes.joined(separator: ", ") + ")" }
        lines.append(head)
        if requests == 0 { return lines.joined(separator: "\n") + "\n" }

        var failureLine = "Failures   \(failures)"
        if let failureRate {
            failureLine += "; failure rate \(TrafficStats.percent(failureRate))"
                + " (\(networkFailures) of \(networkRequests) network request\(networkRequests == 1 ? "" : "s"))"
        } else {
            failureLine += "; no network requests finished"
        }
        lines.append(failureLine)

        if let median = durations.median, let p95 = durations.p95 {
            lines.append("Durations  median \(TrafficStats.milliseconds(median)), p95 \(TrafficStats.milliseconds(p95)) (\(durations.count) finished)")
        } else if let fastest = durations.fastest, let slowest = durations.slowest {
            lines.append("Durations  fastest \(TrafficStats.milliseconds(fastest)), slowest \(TrafficStats.milliseconds(slowest))"
                + " (only \(durations.count) finished; median and p95 need 5)")
        } else {
            lines.append("Durations  none finished")
        }
        lines.append("Received   \(TrafficStats.bytes(bytesReceived)) in \(TrafficStats.fixed(elapsed, 2)) s")

        if !slowestEndpoints.isEmpty {
            lines.append("")
            lines.append("Slowest endpoints (median, slowest, requests)")
            let rows = slowestEndpoints.map {
                [TrafficStats.milliseconds($0.median), TrafficStats.milliseconds($0.slowest), "\($0.requests)×", $0.endpoint]
            }
            lines += TrafficStats.table(rows, rightAligned: 3)
        }
        if !hosts.isEmpty {
            lines.append("")
            lines.append("By host, worst first (requests, failures, failure rate, median)")
            let rows = hosts.map {
                [$0.host, "\($0.requests)", "\($0.failures)",
                 $0.failureRate.map(TrafficStats.percent) ?? "–", $0.median.map(TrafficStats.milliseconds) ?? "–"]
            }
            lines += TrafficStats.table(rows, rightAligned: 5, leftFirst: true)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Rows in columns two spaces apart, indented by two; the first
    /// `rightAligned` columns are right-aligned (after the first, if `leftFirst`).
    static func table(_ rows: [[String]], rightAligned: Int, leftFirst: Bool = false) -> [String] {
        guard let columns = rows.first?.count else { return [] }
        let widths = (0..<columns).map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            var cells: [String] = []
            for (c, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                let right = c < rightAligned && !(leftFirst && c == 0)
                let last = c == columns - 1
                cells.append(right ? pad + cell : (last ? cell : cell + pad))
            }
            return "  " + cells.joined(separator: "  ")
        }
    }

    // MARK: Formatting (no Foundation)

    /// `x` with exactly `decimals` digits after the point, rounded half away from zero.
    static func fixed(_ x: Double, _ decimals: Int) -> String { NumberText.fixed(x, decimals) }

    /// "0.4 ms", "12 ms", "1.25 s".
    static func milliseconds(_ ms: Double) -> String {
        if ms < 10 { return fixed(ms, 1) + " ms" }
        if ms < 1000 { return fixed(ms, 0) + " ms" }
        return fixed(ms / 1000, 2) + " s"
    }

    /// Decimal units, as DevTools: "512 B", "1.2 kB", "3.4 MB", "1.1 GB".
    static func bytes(_ n: Int) -> String {
        let d = Double(n)
        if d < 1000 { return "\(n) B" }
        if d < 1_000_000 { return fixed(d / 1000, 1) + " kB" }
        if d < 1_000_000_000 { return fixed(d / 1_000_000, 1) + " MB" }
        return fixed(d / 1_000_000_000, 1) + " GB"
    }

    /// A rate between 0 and 1 as "12.5%".
    static func percent(_ rate: Double) -> String { fixed(rate * 100, 1) + "%" }
}
