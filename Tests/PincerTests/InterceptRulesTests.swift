import Foundation
import XCTest
@testable import NetworkLog
import PincerJSON

/// The rules engine on its own: each kind, matching and order, the
/// document's format and its refusals. (Through real HTTP: InterceptCaptureTests.)
final class InterceptRulesTests: XCTestCase {
    private func engine(_ rules: [InterceptRule], enabled: Bool = true, conditioning: Conditioning? = nil) -> RuleEngine {
        var d = RulesDocument(enabled: enabled, conditioning: conditioning)
        for r in rules {
            XCTAssertNil(r.problem, "\(r)")
            d.add(r)
        }
        return RuleEngine(document: d)
    }

    private let get = InterceptedRequest(method: "GET", url: "https://api.example.com/v1/users/7?x=1",
                                         headers: [Header("Accept", "application/json")])

    func testAMockAnswersWithoutSendingAndSaysSo() {
        let e = engine([InterceptRule(title: "down", match: "domain:api.example.com & path:/v1/users/*",
                                      action: .mock(status: 503, headers: [Header("Content-Type", "application/json")], body: .text("{\"e\":1}")))])
        let d = e.decide(get)
        guard case .respond(let r) = d.outcome else { return XCTFail("not answered: \(d.outcome)") }
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "{\"e\":1}")
        XCTAssertTrue(d.stubbed)
        XCTAssertEqual(d.interventions.map(\.line), ["mock 1 (down): answered 503 with 7 bytes (not sent)"])
        // Another host, another path: untouched.
        XCTAssertTrue(e.decide(InterceptedRequest(method: "GET", url: "https://other.example.com/v1/users/7")).isUntouched)
        XCTAssertTrue(e.decide(InterceptedRequest(method: "GET", url: "https://api.example.com/v2/users/7")).isUntouched)
    }

    func testTheFirstMatchingRuleOfEachKindAppliesInOrder() {
        let e = engine([
            InterceptRule(match: "~m POST", action: .mock(status: 201, headers: [], body: .none)),
            InterceptRule(match: "domain:api.example.com", action: .mock(status: 500, headers: [], body: .none)),
            InterceptRule(match: "", action: .mock(status: 404, headers: [], body: .none)),
            InterceptRule(match: "", action: .mapRemote(to: "http://127.0.0.1:9", stripPrefix: "")),
        ])
        guard case .respond(let r) = e.decide(get).outcome else { return XCTFail() }
        XCTAssertEqual(r.status, 500, "the first matching mock in order, not the later catch-all")
        guard case .respond(let p) = e.decide(InterceptedRequest(method: "POST", url: "https://api.example.com/")).outcome else { return XCTFail() }
        XCTAssertEqual(p.status, 201)
        // A mock answers, so the map-remote never applies (and is not listed).
        XCTAssertEqual(e.decide(get).interventions.map(\.kind), ["mock"])
    }

    func testBlockBeatsMockAndDisabledRulesAndTheSwitchAreHonoured() {
        var block = InterceptRule(match: "", action: .block(.timedOut))
        let mock = InterceptRule(match: "", action: .mock(status: 200, headers: [], body: .none))
        XCTAssertEqual(engine([mock, block]).decide(get).outcome, .fail(.timedOut))
        block.enabled = false
        guard case .respond = engine([mock, block]).decide(get).outcome else { return XCTFail("a disabled block applied") }
        XCTAssertTrue(engine([mock, block], enabled: false).decide(get).isUntouched, "the master switch is off")
    }

    func testMapRemoteKeepsTheRestOfTheURL() {
        XCTAssertEqual(RuleEngine.mapRemote("https://api.example.com/v1/users?id=3#top", to: "http://127.0.0.1:8080", stripPrefix: ""),
                       "http://127.0.0.1:8080/v1/users?id=3#top")
        XCTAssertEqual(RuleEngine.mapRemote("https://api.example.com/v1/users", to: "https://staging.example.com/v2/", stripPrefix: "/v1"),
                       "https://staging.example.com/v2/users")
        XCTAssertEqual(RuleEngine.mapRemote("https://api.example.com/v1/users", to: "https://[::1]:8443/base", stripPrefix: ""),
                       "https://[::1]:8443/base/v1/users")
        let d = engine([InterceptRule(match: "domain:api.example.com", action: .mapRemote(to: "https://staging.example.com", stripPrefix: ""))])
            .decide(InterceptedRequest(method: "GET", url: "https://api.example.com/a?b=1", headers: [Header("Host", "api.example.com")]))
        XCTAssertEqual(d.request.url, "https://staging.example.com/a?b=1")
        XCTAssertTrue(d.request.headers.isEmpty, "an explicit Host header would send the old host")
        XCTAssertEqual(d.interventions.first?.did, "sent to https://staging.example.com/a?b=1")
        XCTAssertFalse(d.stubbed)
    }

    func testRewritesChangeBothSides() throws {
        let ops: [RewriteOperation] = [
            .setHeader(.request, name: "X-Env", value: "staging"), .removeHeader(.request, name: "accept"),
            .setQuery(name: "x", value: "a b&c"), .removeQuery(name: "missing"),
            .status(418), .addHeader(.response, name: "X-Mocked", value: "1"),
            .replaceBody(.response, find: "4\\d", regex: true, with: "0"),
            .setJSON(.response, path: "user.items[1]", value: .string("two")),
        ]
        let e = engine([InterceptRule(match: "domain:api.example.com", action: .rewrite(ops))])
        let d = e.decide(get)
        XCTAssertEqual(d.request.url, "https://api.example.com/v1/users/7?x=a%20b%26c")
        XCTAssertEqual(d.request.headers, [Header("X-Env", "staging")])
        XCTAssertEqual(d.interventions.map(\.did), ["set request header X-Env; removed request header accept; set query x"])
        let response = InterceptedResponse(status: 200, headers: [Header("Content-Length", "27")], body: Array("{\"user\":{\"id\":42,\"items\":[1]}}".utf8))
        let r = e.respond(d, request: d.request, response: response)
        XCTAssertEqual(r.response.status, 418)
        let json = try JSON.parse(bytes: r.response.body)
        XCTAssertEqual(json, JSON.object([("user", .object([("id", .int(0)), ("items", .array([.int(1), .string("two")]))]))]))
        XCTAssertEqual(r.response.headers, [Header("Content-Length", String(r.response.body.count)), Header("X-Mocked", "1")])
        XCTAssertEqual(r.interventions.count, 1)
    }

    func testJSONPathAndQueryEdits() throws {
        let root = try JSON.parse(#"{"a":{"b":[1,2]},"c":true}"#)
        XCTAssertEqual(JSONPath("a.b[0]").apply(.int(9), to: root)?.serialized(), #"{"a":{"b":[9,2]},"c":true}"#)
        XCTAssertEqual(JSONPath("$.a.new.deep").apply(.bool(false), to: root)?.serialized(), #"{"a":{"b":[1,2],"new":{"deep":false}},"c":true}"#)
        XCTAssertEqual(JSONPath("c").apply(nil, to: root)?.serialized(), #"{"a":{"b":[1,2]}}"#)
        XCTAssertNil(JSONPath("c.d").apply(.int(1), to: root), "c is a boolean: the path cannot cross it")
        XCTAssertNotNil(JSONPath("a..b").problem)
        XCTAssertNotNil(JSONPath("a[x]").problem)
        XCTAssertEqual(Query.set("https://h/p?a=1&b=2&a=3#f", name: "a", value: "9"), "https://h/p?a=9&b=2#f")
        XCTAssertEqual(Query.set("https://h/p?a=1", name: "a", value: nil), "https://h/p")
        XCTAssertEqual(Query.set("https://h/p", name: "q", value: "é"), "https://h/p?q=%C3%A9")
    }

    func testResponseSideMatchesWaitForTheResponse() {
        let e = engine([InterceptRule(match: "~c 500", action: .rewrite([.status(503), .setHeader(.response, name: "Retry-After", value: "1")]))])
        let d = e.decide(get)
        XCTAssertFalse(d.isUntouched, "the rule must be asked again with the response")
        XCTAssertEqual(e.respond(d, request: get, response: InterceptedResponse(status: 200)).response.status, 200)
        let r = e.respond(d, request: get, response: InterceptedResponse(status: 500))
        XCTAssertEqual(r.response.status, 503)
        XCTAssertEqual(r.response.headers, [Header("Retry-After", "1")])
        XCTAssertEqual(r.interventions.map(\.did), ["status 500 → 503; set response header Retry-After"])
        // A rule that acts before there is a response may not test it.
        XCTAssertNotNil(InterceptRule(match: "~c 500", action: .mock(status: 200, headers: [], body: .none)).problem)
        XCTAssertNotNil(InterceptRule(match: "~c 500", action: .rewrite([.setHeader(.request, name: "A", value: "b")])).problem)
        XCTAssertNil(InterceptRule(match: "~c 500", action: .breakpoint(request: false, response: true, timeoutSeconds: 60)).problem)
    }

    func testMapLocalServesFilesWithTheirMediaType() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pincer-maplocal-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("user.json").path
        try Data("{\"id\":1}".utf8).write(to: URL(fileURLWithPath: file))
        let e = engine([InterceptRule(match: "path:/v1/users/*", action: .mapLocal(path: file))])
        guard case .respond(let r) = e.decide(get).outcome else { return XCTFail() }
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(r.body, Array("{\"id\":1}".utf8))
        // Missing and oversized files answer 500 and say why: never an empty 200.
        let missing = engine([InterceptRule(match: "", action: .mapLocal(path: dir.appendingPathComponent("nope.json").path))]).decide(get)
        guard case .respond(let m) = missing.outcome else { return XCTFail() }
        XCTAssertEqual(m.status, 500)
        XCTAssertTrue(missing.interventions[0].did.contains("No such file"), missing.interventions[0].did)
        let big = dir.appendingPathComponent("big.bin").path
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        XCTAssertEqual(truncate(big, off_t(InterceptRule.maximumFileSize + 1)), 0)
        guard case .failure(let why) = LocalFile.read(big, limit: InterceptRule.maximumFileSize) else { return XCTFail() }
        XCTAssertTrue(why.message.contains("over the 10 MiB limit"), why.message)
        XCTAssertEqual(LocalFile.mediaType("/a/b.PNG"), "image/png")
        XCTAssertEqual(LocalFile.mediaType("/a/b"), "application/octet-stream")
    }

    func testConditioningPresetsAndFailures() {
        XCTAssertEqual(Conditioning.preset("3g")?.latencyMs, 100)
        XCTAssertEqual(Conditioning.preset("3G")?.downloadBytesPerSecond, 100_000)
        XCTAssertEqual(Conditioning.preset("very-bad")?.failureRate, 0.1)
        let slow = engine([InterceptRule(match: "domain:api.example.com", action: .delay(Conditioning(latencyMs: 200, jitterMs: 50, downloadBytesPerSecond: 1000)))])
        XCTAssertEqual(slow.decide(get, random: { 1 }).latencyMs, 250)
        XCTAssertEqual(slow.decide(get, random: { 0 }).latencyMs, 150)
        XCTAssertEqual(slow.decide(get, random: { 0.5 }).downloadBytesPerSecond, 1000)
        let flaky = engine([], conditioning: Conditioning.preset("very-bad"))
        XCTAssertEqual(flaky.decide(get, random: { 0.05 }).outcome, .fail(.connectionLost))
        XCTAssertEqual(flaky.decide(get, random: { 0.5 }).outcome, .send)
        XCTAssertEqual(flaky.decide(get, random: { 0.5 }).interventions.first?.rule, "conditioning")
        XCTAssertEqual(engine([], conditioning: Conditioning.preset("offline")).decide(get).outcome, .fail(.offline))
        XCTAssertEqual(Conditioning(latencyMs: 60_000).problem, "latency 60000.0 ms is outside 0–30000 ms")
        XCTAssertEqual(Conditioning(latencyMs: 29_990, jitterMs: 100).latency(random: 1), 30_000, "capped at 30 s")
    }

    func testTheDocumentRoundTripsAndRefusesWhatItCannotRead() throws {
        var d = RulesDocument(conditioning: Conditioning.preset("4g"))
        d.add(InterceptRule(title: "mock", match: "path:/a", action: .mock(status: 201, headers: [Header("A", "b")], body: .bytes([0, 255]))))
        d.add(InterceptRule(match: "", action: .rewrite([.setJSON(.response, path: "a", value: .array([.null]))])))
        d.add(InterceptRule(enabled: false, match: "~m GET", action: .breakpoint(request: true, response: true, timeoutSeconds: 30)))
        d.add(InterceptRule(match: "", action: .delay(Conditioning.preset("edge")!)))
        let text = d.json.serialized(pretty: true)
        XCTAssertEqual(try RulesDocument.decode(text).get(), d)
        XCTAssertEqual(d.nextID, 5)

        func refused(_ text: String) -> String {
            guard case .failure(let e) = RulesDocument.decode(text) else { XCTFail("accepted: \(text)"); return "" }
            return e.message
        }
        XCTAssertEqual(refused("{\"format\": \"pincer.net-rules\",\n \"version\": 1,\n \"rules\": [}"),
                       "line 3, column 12: expected a JSON value or ']' in an array, found '}'")
        XCTAssertEqual(refused(#"{"format":"other","version":1}"#), "the document's format is 'other', not 'pincer.net-rules'")
        let head = #"{"format":"pincer.net-rules","version":1,"rules":["#
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"mock","stauts":500}]}"#),
                       "rules[0] (id 1): unknown key 'stauts' (expected id, title, enabled, match, kind, origin, status, headers, body, bodyBase64, bodyFile)")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"mock","status":"500"}]}"#), "rules[0] (id 1).status is a string, not an integer")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"mock","status":99}]}"#), "rules[0] (id 1): status 99 is outside 100–599")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"teleport"}]}"#),
                       "rules[0] (id 1): unknown kind 'teleport' (one of mock, map-local, map-remote, rewrite, block, delay, breakpoint)")
        XCTAssertTrue(refused(head + #"{"id":"1","kind":"block","match":"~d ("}]}"#).hasPrefix("rules[0] (id 1): match \"~d (\": column "))
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"block"},{"id":"1","kind":"block"}]}"#), "rules[1]: id '1' is used twice")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"rewrite","operations":[{"op":"set-json","path":"a..b","value":1}]}]}"#),
                       "rules[0] (id 1).operations[0]: JSON path 'a..b' has an empty key")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"delay","preset":"5g"}]}"#),
                       "rules[0] (id 1): unknown preset '5g' (one of wifi, 4g, 3g, edge, very-bad, offline)")
        XCTAssertEqual(refused(head + #"{"id":"1","kind":"breakpoint","timeoutSeconds":1}]}"#),
                       "rules[0] (id 1): breakpoint timeout 1 s is outside 5–300 s")
    }

    func testFilterTermsForRules() throws {
        var e = NetworkEntry(source: .captured, startedAt: 0, method: "POST", url: "https://api.example.com/graphql?x=1")
        e.requestBody = Body(payload: .stored(Array(#"{"query":"query GetUser { user { id } }"}"#.utf8)), size: 40, mimeType: "application/json")
        XCTAssertTrue(try NetworkFilter("graphql:GetUser").matches(e))
        XCTAssertTrue(try NetworkFilter("graphql:get*").matches(e))
        XCTAssertFalse(try NetworkFilter("graphql:Other").matches(e))
        XCTAssertTrue(try NetworkFilter("path:/graphql").matches(e))
        XCTAssertFalse(try NetworkFilter("path:/GRAPHQL").matches(e), "paths are case-sensitive")
        XCTAssertEqual(try NetworkFilter("domain:API.example.com & ~m POST").requiredHost, "api.example.com")
        XCTAssertNil(try NetworkFilter("domain:*.example.com").requiredHost)
        XCTAssertNil(try NetworkFilter("domain:a.com | domain:b.com").requiredHost)
        XCTAssertTrue(try NetworkFilter("~m GET & !status-code:2xx").needsResponse)
        XCTAssertFalse(try NetworkFilter("~h Authorization").needsResponse)
        XCTAssertTrue(try NetworkFilter("~hs Set-Cookie").needsResponse)
    }

    func testAThousandHostIndexedRulesFindTheirOwn() {
        var rules: [InterceptRule] = []
        for i in 0..<1000 {
            rules.append(InterceptRule(match: "domain:h\(i).example.com & path:/v1/*", action: .mock(status: 200 + i % 100, headers: [], body: .none)))
        }
        let e = engine(rules)
        XCTAssertEqual(e.byHost.count, 1000)
        guard case .respond(let r) = e.decide(InterceptedRequest(method: "GET", url: "https://h999.example.com/v1/x")).outcome else { return XCTFail() }
        XCTAssertEqual(r.status, 299)
        XCTAssertTrue(e.decide(InterceptedRequest(method: "GET", url: "https://none.example.com/v1/x")).isUntouched)
    }

    /// net.export-rules writes what the log would hold: header and query
    /// values, mock bodies and texts through the redactor; the stored rules
    /// keep theirs, and a rule with nothing secret is written as it is.
    func testExportedRulesAreRedactedAndStoredOnesAreNot() throws {
        let app = AppHost(withApp: false)
        _ = try app.text("net.add-mock", ["path:/login", "200", #"{"access_token":"tok-abcdef123456","user":"ann"}"#, "", "application/json", "Set-Cookie: session=s3cr3tvalue99"])
        _ = try app.text("net.add-rewrite", ["path:/api/*", "set-header", "request", "Authorization", "Bearer live-token-123456"])
        _ = try app.text("net.add-rewrite", ["path:/q", "set-query", "", "api_key", "k-9876543210"])
        _ = try app.text("net.add-block", ["domain:ads.example.com", "not-connected"])
        let file = Fixture.temporaryDirectory("pincer-export-rules") + "/rules.json"
        let said = try app.text("net.export-rules", file)
        XCTAssertTrue(said.hasPrefix("wrote 4 rules to \(file); values that could be secrets are [REDACTED] in rules 1, 2, 3"), said)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        for secret in ["tok-abcdef123456", "s3cr3tvalue99", "live-token-123456", "k-9876543210"] {
            XCTAssertFalse(text.contains(secret), "\(secret) left the app in \(text)")
        }
        XCTAssertTrue(text.contains("Bearer [REDACTED]"), text)
        XCTAssertTrue(text.contains(#"\"user\":\"ann\""#), "what is not secret stays: \(text)")
        let stored = try app.text("net.intercept-rules")
        let document = try RulesDocument.decode(String(contentsOfFile: try XCTUnwrap(Fixture.json(stored)["file"] as? String), encoding: .utf8)).get()
        XCTAssertEqual(document.rules[1].action, .rewrite([.setHeader(.request, name: "Authorization", value: "Bearer live-token-123456")]), "the stored rule still works")
    }

    /// Rules without a host are indexed by their path's first segment; the
    /// order of rules of all three kinds of index stays the order they are in.
    func testPathIndexedRulesKeepTheirOrder() throws {
        XCTAssertEqual(try NetworkFilter("path:/v1/users/*").requiredFirstSegment, "/v1")
        XCTAssertEqual(try NetworkFilter("~m GET & path:/v1").requiredFirstSegment, "/v1")
        XCTAssertNil(try NetworkFilter("path:/v*").requiredFirstSegment, "a wildcard inside the first segment")
        XCTAssertNil(try NetworkFilter("path:/*/users").requiredFirstSegment)
        XCTAssertNil(try NetworkFilter("path:/a | path:/b").requiredFirstSegment)
        var rules: [InterceptRule] = []
        for i in 0..<1000 { rules.append(InterceptRule(match: "path:/v\(i)/items/*", action: .mock(status: 200 + i % 100, headers: [], body: .none))) }
        rules.insert(InterceptRule(match: "path:/v*/items/special", action: .mock(status: 401, headers: [], body: .none)), at: 500)
        rules.insert(InterceptRule(match: "domain:api.example.com & path:/v7/items/*", action: .mock(status: 402, headers: [], body: .none)), at: 3)
        let e = engine(rules)
        XCTAssertEqual(e.bySegment.count, 1000)
        func status(_ url: String) -> Int? {
            guard case .respond(let r) = e.decide(InterceptedRequest(method: "GET", url: url)).outcome else { return nil }
            return r.status
        }
        XCTAssertEqual(status("https://x.example.com/v999/items/1"), 299)
        XCTAssertEqual(status("https://api.example.com/v7/items/1"), 402, "the host rule comes before /v7's")
        XCTAssertEqual(status("https://x.example.com/v7/items/1"), 207)
        XCTAssertEqual(status("https://x.example.com/v1/items/special"), 201, "/v1's rule is before the unindexed one")
        XCTAssertEqual(status("https://x.example.com/v600/items/special"), 401, "the unindexed rule is before /v600's")
        XCTAssertNil(status("https://x.example.com/w1/items/1"))
    }
}

/// The rules file: re-read when another process changes it, a damaged one
/// refused with where it is wrong while the rules read before stay in force.
final class RuleBookTests: XCTestCase {
    func testADamagedFileKeepsThePreviousRulesAndRefusesChanges() throws {
        let dir = Fixture.temporaryDirectory("pincer-rulebook")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let book = RuleBook(directory: dir), other = RuleBook(directory: dir)
        try book.update { $0.add(InterceptRule(match: "path:/a", action: .block(.timedOut))) }
        let request = InterceptedRequest(method: "GET", url: "https://h/a")
        XCTAssertEqual(other.engine.decide(request).outcome, .fail(.timedOut), "another process sees the rule")

        // Written by hand, wrongly: refused, the rule read before stays.
        let path = dir + "/" + RuleBook.fileName
        try Data("{\"format\": \"pincer.net-rules\",\n \"version\": 1,\n \"rules\": [ {\"id\": \"1\" \"kind\": \"block\"} ]}\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(other.engine.decide(request).outcome, .fail(.timedOut))
        let problem = try XCTUnwrap(other.problem)
        XCTAssertTrue(problem.contains("line 3, column 24"), problem)
        XCTAssertTrue(problem.hasSuffix("the rules read before stay in force"), problem)
        XCTAssertThrowsError(try other.update { $0.enabled = false }) { error in
            XCTAssertTrue("\(error)".contains("is damaged"), "\(error)")
        }
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains("\"id\": \"1\" \"kind\""), "the file is left as the person wrote it")

        // Fixed: read again.
        try Data(#"{"format":"pincer.net-rules","version":1,"enabled":false,"rules":[]}"#.utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertNil(other.problem)
        XCTAssertTrue(other.engine.decide(request).isUntouched)
        try book.update { $0.enabled = true }
        XCTAssertEqual(try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777, 0o600,
                       "Pincer writes the rules owner-only")
    }

    func testTransientRulesComeFirstAndAreNotStored() throws {
        let dir = Fixture.temporaryDirectory("pincer-rulebook")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let book = RuleBook(directory: dir)
        try book.update { $0.add(InterceptRule(match: "", action: .mock(status: 200, headers: [], body: .none))) }
        let id = try book.addTransient(InterceptRule(match: "", action: .mock(status: 500, headers: [], body: .none)))
        XCTAssertEqual(id, "t1")
        guard case .respond(let r) = book.engine.decide(InterceptedRequest(method: "GET", url: "https://h/")).outcome else { return XCTFail() }
        XCTAssertEqual(r.status, 500, "transient rules come before stored ones")
        XCTAssertEqual(RuleBook(directory: dir).transient.count, 0, "another process does not see them")
        XCTAssertThrowsError(try book.addTransient(InterceptRule(match: "(", action: .block(.offline))))
        XCTAssertTrue(book.removeTransient(id))
        guard case .respond(let back) = book.engine.decide(InterceptedRequest(method: "GET", url: "https://h/")).outcome else { return XCTFail() }
        XCTAssertEqual(back.status, 200)
    }
}
