import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
import PincerPluginKit
import PincerJSON
@testable import NetworkLog

final class NetworkStatsTests: XCTestCase {
    // MARK: Helpers

    /// An entry whose duration is `ms` (all in `wait`).
    private func entry(_ method: String = "GET", _ url: String = "https://api.example.com/",
                       status: Int? = 200, ms: Double = 100, state: EntryState = .complete,
                       stubbed: Bool = false, startedAt: Double = 1000) -> NetworkEntry {
        var e = NetworkEntry(source: .captured, startedAt: startedAt, method: method, url: url)
        e.state = state
        e.status = state == .complete ? status : nil
        e.timings.wait = ms
        e.stubbed = stubbed
        return e
    }

    private func json(_ text: String) -> Body {
        Body(payload: .stored(Array(text.utf8)), size: text.utf8.count, mimeType: "application/json")
    }

    // MARK: Percentiles

    func testNearestRank() {
        let stats = TrafficStats((1...20).map { entry(ms: Double($0)) }.shuffled())
        XCTAssertEqual(stats.durations.count, 20)
        XCTAssertEqual(stats.durations.median, 10)
        XCTAssertEqual(stats.durations.p95, 19)
        XCTAssertNil(stats.durations.fastest)
        XCTAssertNil(stats.durations.slowest)

        XCTAssertEqual(TrafficStats.nearestRank(50, [1, 2, 3, 4, 5]), 3)
        XCTAssertEqual(TrafficStats.nearestRank(95, [1, 2, 3, 4, 5]), 5)
        XCTAssertEqual(TrafficStats.nearestRank(50, [1, 2, 3, 4, 5, 6]), 3)
        XCTAssertEqual(TrafficStats.nearestRank(95, Array(1...100).map(Double.init)), 95)
        XCTAssertEqual(TrafficStats.nearestRank(95, Array(1...101).map(Double.init)), 96)
        XCTAssertEqual(TrafficStats.nearestRank(100, [1, 2, 3]), 3)
        XCTAssertEqual(TrafficStats.nearestRank(50, [7]), 7)
        XCTAssertNil(TrafficStats.nearestRank(50, []))
    }

    func testFewerThanFiveReportsFastestAndSlowest() {
        // Four finished, three pending: pending entries are not measured.
        var entries = [30.0, 10, 40, 20].map { entry(ms: $0) }
        entries += (0..<3).map { _ in entry(ms: 0, state: .pending) }
        let stats = TrafficStats(entries)
        XCTAssertEqual(stats.durations, TrafficStats.Durations(count: 4, median: nil, p95: nil, fastest: 10, slowest: 40))
        XCTAssertTrue(stats.text.contains("fastest 10 ms, slowest 40 ms"), stats.text)
        let durations = stats.json["durations"]
        XCTAssertEqual(durations, .object([("count", .int(4)), ("median", .null), ("p95", .null),
                                           ("fastest", .double(10)), ("slowest", .double(40))]))

        // The fifth finished entry (a transport error counts) switches to median and p95.
        entries.append(entry(ms: 50, state: .failed))
        let five = TrafficStats(entries)
        XCTAssertEqual(five.durations, TrafficStats.Durations(count: 5, median: 30, p95: 50, fastest: nil, slowest: nil))

        let none = TrafficStats([entry(state: .pending)])
        XCTAssertEqual(none.durations, TrafficStats.Durations(count: 0))
        XCTAssertTrue(none.text.contains("none finished"), none.text)
    }

    // MARK: Counts

    func testFailureRateDenominator() {
        let entries = [
            entry(status: 200), entry(status: 201), entry(status: 302), entry(status: 500), // network, 1 failure
            entry(state: .failed),                                                         // network failure
            entry(status: 200, stubbed: true), entry(status: 500, stubbed: true),            // stubs: not in the rate
            entry(state: .pending),                                                        // in flight: not in the rate
        ]
        let stats = TrafficStats(entries)
        XCTAssertEqual(stats.requests, 8)
        XCTAssertEqual(stats.stubbed, 2)
        XCTAssertEqual(stats.pending, 1)
        XCTAssertEqual(stats.failures, 3) // 500, transport error, stubbed 500
        XCTAssertEqual(stats.networkRequests, 5)
        XCTAssertEqual(stats.networkFailures, 2)
        XCTAssertEqual(stats.failureRate, 0.4)
        XCTAssertTrue(stats.text.contains("failure rate 40.0% (2 of 5 network requests)"), stats.text)
        XCTAssertEqual(stats.json["failureRate"], .double(0.4))

        // 404 is a failure; 399 is not.
        XCTAssertEqual(TrafficStats([entry(status: 404), entry(status: 399)]).failureRate, 0.5)

        // Only stubs and pending: no rate at all.
        let noNetwork = TrafficStats([entry(stubbed: true), entry(state: .pending)])
        XCTAssertNil(noNetwork.failureRate)
        XCTAssertEqual(noNetwork.json["failureRate"], .null)
        XCTAssertTrue(noNetwork.text.contains("no network requests finished"), noNetwork.text)
    }

    func testBytesAndElapsed() {
        var a = entry(ms: 500, startedAt: 100)
        a.responseBody = Body(payload: .skipped, size: 1500, mimeType: "")
        var b = entry(ms: 1000, startedAt: 100.25)
        b.responseBody = Body(payload: .none, size: 2500, mimeType: "")
        let c = entry(ms: 0, state: .pending, startedAt: 100.5)
        let stats = TrafficStats([c, b, a])
        XCTAssertEqual(stats.bytesReceived, 4000)
        XCTAssertEqual(stats.elapsed, 1.25, accuracy: 1e-9)
        XCTAssertTrue(stats.text.contains("Received   4.0 kB in 1.25 s"), stats.text)

        let empty = TrafficStats([])
        XCTAssertEqual(empty.requests, 0)
        XCTAssertEqual(empty.elapsed, 0)
        XCTAssertEqual(empty.text, "Requests   0\n")
        XCTAssertEqual(empty.json["hosts"], .array([]))
    }

    // MARK: Grouping

    func testEndpointCollapsing() {
        func name(_ method: String, _ url: String) -> String { TrafficStats.endpointName(entry(method, url)) }
        XCTAssertEqual(name("get", "https://api.example.com/users/123?expand=1"), "GET api.example.com/users/:id")
        XCTAssertEqual(name("GET", "https://api.example.com/users/456"), "GET api.example.com/users/:id")
        XCTAssertEqual(name("GET", "https://api.example.com/v2/orders/3F2504E0-4F89-11D3-9A0C-0305E82C3301/items/7"),
                       "GET api.example.com/v2/orders/:id/items/:id")
        XCTAssertEqual(name("DELETE", "https://API.example.com:8443/files/123e4567-e89b-12d3-a456-426614174000/"),
                       "DELETE api.example.com:8443/files/:id/")
        // Not ids: mixed segments, almost-UUIDs.
        XCTAssertEqual(name("GET", "https://api.example.com/users/12a/v1"), "GET api.example.com/users/12a/v1")
        XCTAssertEqual(name("GET", "https://api.example.com/x/123e4567-e89b-12d3-a456-42661417400g"),
                       "GET api.example.com/x/123e4567-e89b-12d3-a456-42661417400g")
        XCTAssertEqual(name("GET", "https://api.example.com"), "GET api.example.com/")
        XCTAssertEqual(name("GET", "not a url"), "GET not a url")
    }

    func testGraphQLNames() {
        func name(_ body: String, url: String = "https://api.example.com/graphql") -> String {
            var e = entry("POST", url)
            e.requestBody = json(body)
            return TrafficStats.endpointName(e)
        }
        XCTAssertEqual(name(#"{"operationName":"GetUser","query":"query GetUser { me { id } }"}"#),
                       "POST api.example.com/graphql (GetUser)")
        // operationName wins over the query text.
        XCTAssertEqual(name(#"{"operationName":"Chosen","query":"query Other { a } query Chosen { b }"}"#),
                       "POST api.example.com/graphql (Chosen)")
        // Parsed from the query: variables, comments, fragments first.
        XCTAssertEqual(name(#"{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":1}}"#),
                       "POST api.example.com/graphql (GetUser)")
        XCTAssertEqual(name(##"{"query":"# list\n  mutation   AddItem { add { id } }"}"##),
                       "POST api.example.com/graphql (AddItem)")
        XCTAssertEqual(name(#"{"query":"fragment F on User { id } subscription OnPing { ping { ...F } }"}"#),
                       "POST api.example.com/graphql (OnPing)")
        XCTAssertEqual(name(#"{"query":"{ field(arg: \"query Fake\") } query Real { x }"}"#),
                       "POST api.example.com/graphql (Real)")
        // null operationName falls back to the query.
        XCTAssertEqual(name(#"{"operationName":null,"query":"query Q1 { a }"}"#), "POST api.example.com/graphql (Q1)")
        // Anonymous operations keep the plain path.
        XCTAssertEqual(name(#"{"query":"{ me { id } }"}"#), "POST api.example.com/graphql")
        XCTAssertEqual(name(#"{"query":"query { me { id } }"}"#), "POST api.example.com/graphql")
        // Batches list every name.
        XCTAssertEqual(name(#"[{"operationName":"A","query":"query A { a }"},{"query":"query B { b }"}]"#),
                       "POST api.example.com/graphql (A, B)")
        // A gql segment, and a JSON body on another path.
        XCTAssertEqual(name(#"{"operationName":"Feed"}"#, url: "https://example.com/api/gql"),
                       "POST example.com/api/gql (Feed)")
        XCTAssertEqual(name(#"{"query":"query Search { s }"}"#, url: "https://example.com/api"),
                       "POST example.com/api (Search)")
        XCTAssertEqual(name(#"{"query":"shoes"}"#, url: "https://shop.example.com/search"),
                       "POST shop.example.com/search")
        // Not JSON: no name.
        XCTAssertEqual(name("query=GetUser"), "POST api.example.com/graphql")
        // GET with operationName in the URL.
        XCTAssertEqual(TrafficStats.endpointName(entry("GET", "https://api.example.com/graphql?query=%7Bx%7D&operationName=Feed")),
                       "GET api.example.com/graphql (Feed)")
        XCTAssertEqual(TrafficStats.endpointName(entry("GET", "https://api.example.com/search?operationName=Feed")),
                       "GET api.example.com/search")
    }

    func testSlowestEndpoints() {
        var entries: [NetworkEntry] = []
        for (id, ms) in [(1, 100.0), (2, 300), (3, 200)] {
            entries.append(entry("GET", "https://api.example.com/users/\(id)", ms: ms))
        }
        var gql = entry("POST", "https://api.example.com/graphql", status: 500, ms: 900)
        gql.requestBody = json(#"{"operationName":"GetUser","query":"query GetUser { me { id } }"}"#)
        entries.append(gql)
        entries.append(entry("GET", "https://cdn.example.com/app.js", ms: 50))
        entries.append(entry("GET", "https://cdn.example.com/never", state: .pending)) // no finished entries: not listed

        let stats = TrafficStats(entries)
        XCTAssertEqual(stats.slowestEndpoints, [
            .init(endpoint: "POST api.example.com/graphql (GetUser)", requests: 1, failures: 1, median: 900, slowest: 900),
            .init(endpoint: "GET api.example.com/users/:id", requests: 3, failures: 0, median: 200, slowest: 300),
            .init(endpoint: "GET cdn.example.com/app.js", requests: 1, failures: 0, median: 50, slowest: 50),
        ])
        XCTAssertEqual(TrafficStats(entries, endpointLimit: 1).slowestEndpoints.map(\.endpoint),
                       ["POST api.example.com/graphql (GetUser)"])
        XCTAssertEqual(stats.json["slowestEndpoints"]?.arrayValue?.first,
                       .object([("endpoint", .string("POST api.example.com/graphql (GetUser)")), ("requests", .int(1)),
                                ("failures", .int(1)), ("median", .double(900)), ("slowest", .double(900))]))
        XCTAssertTrue(stats.text.contains("900 ms  900 ms  1×  POST api.example.com/graphql (GetUser)"), stats.text)
    }

    func testByHostOrdering() {
        var entries: [NetworkEntry] = []
        // a: 0% failures, median 100.   d: 0% failures, median 300 (slower: before a).
        entries += [entry("GET", "https://a.test/", ms: 100), entry("GET", "https://a.test/", ms: 100)]
        entries += [entry("GET", "https://d.test/", ms: 300)]
        // b: 50%, 1 failure.   c: 50%, 2 failures (more failures: before b).
        entries += [entry("GET", "https://b.test/", status: 500), entry("GET", "https://b.test/")]
        entries += [entry("GET", "https://c.test/", status: 404), entry("GET", "https://c.test/", state: .failed),
                    entry("GET", "https://c.test/"), entry("GET", "https://c.test/")]
        // e: only stubs, so no failure rate although it has a failure: last.
        entries += [entry("GET", "https://e.test/", status: 500, stubbed: true)]
        // f: 100%, with a pending request that counts as a request but not in the rate.
        entries += [entry("GET", "https://f.test:8080/", status: 503, ms: 10), entry("GET", "https://f.test:8080/", state: .pending)]

        let hosts = TrafficStats(entries.shuffled()).hosts
        XCTAssertEqual(hosts.map(\.host), ["f.test:8080", "c.test", "b.test", "d.test", "a.test", "e.test"])
        XCTAssertEqual(hosts[0], .init(host: "f.test:8080", requests: 2, failures: 1, failureRate: 1, median: 10))
        XCTAssertEqual(hosts[1], .init(host: "c.test", requests: 4, failures: 2, failureRate: 0.5, median: 100))
        XCTAssertEqual(hosts[5], .init(host: "e.test", requests: 1, failures: 1, failureRate: nil, median: 100))

        let json = TrafficStats(entries).json["hosts"]?.arrayValue?.last
        XCTAssertEqual(json, .object([("host", .string("e.test")), ("requests", .int(1)), ("failures", .int(1)),
                                      ("failureRate", .null), ("median", .double(100))]))
    }

    func testJSONFieldNamesAndText() throws {
        let stats = TrafficStats((1...6).map { entry(ms: Double($0) * 10) })
        let keys = stats.json.objectValue?.map(\.0)
        XCTAssertEqual(keys, ["requests", "stubbed", "pending", "failures", "networkRequests", "networkFailures",
                              "failureRate", "durations", "bytesReceived", "elapsedSeconds", "slowestEndpoints", "hosts"])
        // The output is valid JSON.
        XCTAssertEqual(try JSON.parse(stats.json.serialized()), stats.json)
        XCTAssertTrue(stats.text.contains("median 30 ms, p95 60 ms (6 finished)"), stats.text)
        XCTAssertTrue(stats.text.hasPrefix("Requests   6\n"), stats.text)
    }

    func testFormatting() {
        XCTAssertEqual(TrafficStats.fixed(1.25, 1), "1.3")
        XCTAssertEqual(TrafficStats.fixed(3, 2), "3.00")
        XCTAssertEqual(TrafficStats.fixed(-0.04, 1), "0.0")
        XCTAssertEqual(TrafficStats.fixed(-2.5, 0), "-3")
        XCTAssertEqual(TrafficStats.fixed(0.05, 2), "0.05")
        XCTAssertEqual(TrafficStats.milliseconds(3.21), "3.2 ms")
        XCTAssertEqual(TrafficStats.milliseconds(120.4), "120 ms")
        XCTAssertEqual(TrafficStats.milliseconds(1250), "1.25 s")
        XCTAssertEqual(TrafficStats.bytes(999), "999 B")
        XCTAssertEqual(TrafficStats.bytes(1234), "1.2 kB")
        XCTAssertEqual(TrafficStats.bytes(3_400_000), "3.4 MB")
        XCTAssertEqual(TrafficStats.percent(1.0 / 3), "33.3%")
    }

    // MARK: Waterfall

    /// Parses the SVG and collects the class of every element that has one.
    private final class Collector: NSObject, XMLParserDelegate {
        var classes: [(element: String, class: String)] = []
        var root = ""
        var text = ""

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes: [String: String] = [:]) {
            if root.isEmpty { root = elementName }
            if let c = attributes["class"] { classes.append((elementName, c)) }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
    }

    private func parse(_ svg: String, file: StaticString = #filePath, line: UInt = #line) -> Collector {
        let collector = Collector()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = collector
        XCTAssertTrue(parser.parse(), "not well-formed: \(String(describing: parser.parserError))\n\(svg)", file: file, line: line)
        XCTAssertEqual(collector.root, "svg", file: file, line: line)
        return collector
    }

    private func bars(_ c: Collector) -> [String] {
        c.classes.filter { $0.element == "rect" && $0.class.hasPrefix("bar ") }.map { String($0.class.dropFirst(4)) }
    }

    func testWaterfallBarsAndColours() {
        let entries = [
            entry("GET", "https://example.com/ok", status: 200, ms: 120, startedAt: 10.0),
            entry("GET", "https://example.com/moved", status: 302, ms: 30, startedAt: 10.1),
            entry("GET", "https://example.com/missing", status: 404, ms: 40, startedAt: 10.2),
            entry("POST", "https://example.com/boom", status: 500, ms: 900, startedAt: 10.3),
            entry("GET", "https://down.example.com/", ms: 2000, state: .failed, startedAt: 10.4),
            entry("GET", "https://example.com/wait", state: .pending, startedAt: 10.5),
            entry("GET", "https://example.com/stub", status: 200, ms: 1, stubbed: true, startedAt: 10.6),
        ]
        let svg = Waterfall.svg(entries.reversed(), title: "Run 1")
        XCTAssertTrue(svg.hasPrefix("<?xml version=\"1.0\""))
        XCTAssertTrue(svg.contains("version=\"1.1\""))
        XCTAssertTrue(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""))
        let c = parse(svg)
        // One bar per entry, in start order, coloured by outcome.
        XCTAssertEqual(bars(c), ["success", "success", "failure", "failure", "error", "pending", "stubbed"])
        XCTAssertTrue(c.text.contains("Run 1"))
        XCTAssertTrue(c.text.contains("GET example.com/ok"))
        XCTAssertTrue(c.text.contains("ERR"))
        XCTAssertTrue(c.text.contains("200 stub"))
        // Axis ticks and a legend.
        XCTAssertGreaterThanOrEqual(c.classes.filter { $0.class == "tick" }.count, 3)
        XCTAssertTrue(c.text.contains("0.0 s") && c.text.contains("2.5 s"), c.text)
        XCTAssertTrue(c.text.contains("transport error"))
        XCTAssertTrue(c.text.contains("receive"))
    }

    func testWaterfallEscapesText() {
        let url = "https://example.com/search?q=<script>&a=\"b\"&c='d'\u{01}"
        let svg = Waterfall.svg([entry("GET", url)], title: "A & B <C>")
        XCTAssertFalse(svg.contains("<script>"))
        XCTAssertTrue(svg.contains("q=&lt;script&gt;&amp;a=&quot;b&quot;&amp;c=&apos;d&apos;\u{FFFD}"), svg)
        XCTAssertTrue(svg.contains("A &amp; B &lt;C&gt;"))
        let c = parse(svg)
        XCTAssertEqual(bars(c), ["success"])
        XCTAssertTrue(c.text.contains("A & B <C>"))
        XCTAssertTrue(c.text.contains(#"a="b""#))
        XCTAssertEqual(XMLText.escape("<&\">'"), "&lt;&amp;&quot;&gt;&apos;")
    }

    func testWaterfallEmptyAndPending() {
        let empty = Waterfall.svg([])
        let c = parse(empty)
        XCTAssertEqual(bars(c), [])
        XCTAssertTrue(c.text.contains("No requests"))

        // Only pending entries: bars still have a positive width.
        let svg = Waterfall.svg([entry(state: .pending, startedAt: 5), entry(state: .pending, startedAt: 5)])
        let p = parse(svg)
        XCTAssertEqual(bars(p), ["pending", "pending"])
        XCTAssertFalse(svg.contains("width=\"0\""))
        XCTAssertFalse(svg.contains("nan"))
        XCTAssertFalse(svg.contains("inf"))
    }

    func testWaterfallPhasesAndLabels() {
        var detailed = entry(ms: 50)
        detailed.timings.blocked = 2
        detailed.timings.dns = 10
        detailed.timings.connect = 30
        detailed.timings.ssl = 20
        detailed.timings.send = 1
        detailed.timings.receive = 9
        let plain = entry(ms: 80)
        let c = parse(Waterfall.svg([detailed, plain]))
        let phases = c.classes.filter { $0.class.hasPrefix("phase ") }.map(\.class)
        XCTAssertEqual(phases, ["phase phase-blocked", "phase phase-dns", "phase phase-connect", "phase phase-ssl",
                                "phase phase-send", "phase phase-wait", "phase phase-receive"]) // none for `plain`

        let ssl = Waterfall.phases(detailed.timings).first { $0.name == "ssl" }
        XCTAssertEqual(ssl, Waterfall.Phase(name: "ssl", start: 22, length: 20)) // the end of connect
        XCTAssertEqual(Waterfall.phases(plain.timings), [])

        let long = entry("GET", "https://example.com/" + String(repeating: "segment/", count: 20) + "end")
        let label = Waterfall.label(long)
        XCTAssertEqual(label.count, Waterfall.labelCharacters)
        XCTAssertTrue(label.hasPrefix("GET example.com/segment/"))
        XCTAssertTrue(label.hasSuffix("/end"))
        XCTAssertTrue(label.contains("…"))

        XCTAssertEqual(Waterfall.axis(spanMs: 1000).step, 200)
        XCTAssertEqual(Waterfall.axis(spanMs: 1000).end, 1000)
        XCTAssertEqual(Waterfall.axis(spanMs: 1234).end, 1400)
        XCTAssertEqual(Waterfall.axis(spanMs: 0).end, 1)
    }
}
