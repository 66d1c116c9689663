import Foundation
import XCTest
@testable import NetworkLog

/// Per-worker results from concurrentPerform.
private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var byWorker: [Int: [[Bool]]] = [:]
    func set(_ worker: Int, _ runs: [[Bool]]) { lock.withLock { byWorker[worker] = runs } }
    func get(_ worker: Int) -> [[Bool]] { lock.withLock { byWorker[worker] ?? [] } }
}

final class NetworkFilterTests: XCTestCase {
    // MARK: Helpers

    private func entry(_ method: String = "GET", _ url: String = "https://example.com/yes",
                       status: Int? = 200, state: EntryState = .complete) -> NetworkEntry {
        var e = NetworkEntry(source: .captured, startedAt: 1000, method: method, url: url)
        e.state = state
        e.status = state == .complete ? status : nil
        return e
    }

    private func body(_ text: String, mime: String = "text/plain") -> Body {
        Body(payload: .stored(Array(text.utf8)), size: text.utf8.count, mimeType: mime)
    }

    private func filter(_ expression: String, file: StaticString = #filePath, line: UInt = #line) -> NetworkFilter? {
        do throws(FilterError) {
            return try NetworkFilter(expression)
        } catch {
            XCTFail("\(expression.debugDescription) did not parse: \(error)", file: file, line: line)
            return nil
        }
    }

    private func assertMatch(_ expression: String, _ entry: NetworkEntry, _ expected: Bool = true,
                             file: StaticString = #filePath, line: UInt = #line) {
        guard let f = filter(expression, file: file, line: line) else { return }
        XCTAssertEqual(f.matches(entry), expected,
                       "\(expression.debugDescription) on \(entry.method) \(entry.url)", file: file, line: line)
    }

    private func assertNoMatch(_ expression: String, _ entry: NetworkEntry, file: StaticString = #filePath, line: UInt = #line) {
        assertMatch(expression, entry, false, file: file, line: line)
    }

    private func assertError(_ expression: String, _ description: String, file: StaticString = #filePath, line: UInt = #line) {
        do throws(FilterError) {
            _ = try NetworkFilter(expression)
            XCTFail("\(expression.debugDescription) parsed; expected \(description)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.description, description, file: file, line: line)
        }
    }

    /// Hostile filters are refused at a limit, not by running the stack
    /// out: the parser, matching and freeing the tree all recurse.
    func testNestingAndLengthAreLimited() throws {
        let ok = String(repeating: "(", count: 100) + "x" + String(repeating: ")", count: 100)
        XCTAssertNoThrow(try NetworkFilter(ok))
        assertError(String(repeating: "(", count: 101) + "x" + String(repeating: ")", count: 101),
                    "column 101: '(' and '!' nested more than 100 deep (the limit)")
        assertError(String(repeating: "!", count: 101) + "x", "column 101: '(' and '!' nested more than 100 deep (the limit)")
        assertError(String(repeating: "(!", count: 60) + "x", "column 101: '(' and '!' nested more than 100 deep (the limit)")
        assertError(String(repeating: "(", count: 200_000), "column 101: '(' and '!' nested more than 100 deep (the limit)")
        XCTAssertNoThrow(try NetworkFilter(Array(repeating: "a", count: 1000).joined(separator: " ")))
        assertError(Array(repeating: "a", count: 1001).joined(separator: " | "), "column 4001: more than 1000 terms (the limit)")
        assertError(String(repeating: "a ", count: 100_000), "column 2001: more than 1000 terms (the limit)")
    }

    // MARK: Basics

    func testEmptyExpressionMatchesEverything() {
        for text in ["", "   ", "\t\n"] {
            guard let f = filter(text) else { continue }
            XCTAssertEqual(f.expression, text)
            XCTAssertTrue(f.matches(entry()))
            XCTAssertTrue(f.matches(entry(state: .pending)))
            XCTAssertTrue(f.matches(entry(state: .failed)))
        }
    }

    /// One parsed filter is shared by every thread that lists or exports:
    /// NetworkFilter must be Sendable (the compiler checks the requirement
    /// below) and give the same answers when used from many threads at once.
    func testOneFilterUsedFromManyThreadsAgrees() throws {
        func requireSendable<T: Sendable>(_: T.Type) {}
        requireSendable(NetworkFilter.self)
        let f = try XCTUnwrap(filter(#"~m ^(GET|POST)$ & ~u /items/[0-9]+ & !~c 404 | ~b needle"#))
        let entries = (0..<400).map { i -> NetworkEntry in
            var e = entry(i % 3 == 0 ? "POST" : i % 3 == 1 ? "GET" : "PUT", "https://example.com/items/\(i)", status: i % 5 == 0 ? 404 : 200)
            if i % 7 == 0 { e.responseBody = body("has a needle in it") }
            return e
        }
        let expected = entries.map(f.matches)
        XCTAssertTrue(expected.contains(true) && expected.contains(false), "the filter must split the entries")
        let results = LockedResults()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            results.set(worker, (0..<20).map { _ in entries.map(f.matches) })
        }
        for worker in 0..<8 {
            XCTAssertEqual(results.get(worker).count, 20, "worker \(worker) ran")
            for run in results.get(worker) { XCTAssertEqual(run, expected, "worker \(worker)") }
        }
    }

    // MARK: Precedence

    func testPrecedence() {
        let e = entry("GET", "https://example.com/yes")
        // "yes" matches, "no" does not.
        assertMatch("yes", e)
        assertNoMatch("no", e)
        // | binds loosest: yes | (yes & no), not (yes | yes) & no.
        assertMatch("yes | yes & no", e)
        assertNoMatch("(yes | yes) & no", e)
        assertMatch("no & no | yes", e)
        // ! binds tightest: (!no) & no, not !(no & no).
        assertNoMatch("!no & no", e)
        assertMatch("!(no & no)", e)
        assertMatch("!no & yes", e)
        assertNoMatch("!yes | no", e)
        assertMatch("!!yes", e)
        // Implicit & binds like &: (no yes) | yes.
        assertMatch("no yes | yes", e)
        assertNoMatch("no (yes | yes)", e)
        assertNoMatch("yes no", e)
        assertMatch("yes yes", e)
        // Nesting and spacing.
        assertMatch("((yes))", e)
        assertMatch("!(no|no)&(yes)", e)
        assertNoMatch("( yes & ( no | !yes ) )", e)
        assertMatch("~all", e)
        assertNoMatch("!~all", e)
    }

    func testIssueExamples() {
        let expression = "~m POST & ~c 500 | !~d example.com"
        var post500 = entry("POST", "https://example.com/a", status: 500)
        assertMatch(expression, post500)
        post500.method = "post"
        assertMatch(expression, post500)
        assertNoMatch(expression, entry("GET", "https://example.com/a", status: 500))
        assertNoMatch(expression, entry("POST", "https://example.com/a", status: 200))
        assertMatch(expression, entry("GET", "https://other.org/a", status: 200))

        let devtools = "method:POST status-code:5xx domain:*.example.com larger-than:10k"
        var e = entry("POST", "https://api.example.com/upload", status: 503)
        e.responseBody = Body(payload: .none, size: 20_000, mimeType: "application/json")
        assertMatch(devtools, e)
        var apex = e
        apex.url = "https://example.com/upload"
        assertNoMatch(devtools, apex)
        var small = e
        small.responseBody.size = 10_000
        assertNoMatch(devtools, small)
        var notFound = e
        notFound.status = 404
        assertNoMatch(devtools, notFound)
        var get = e
        get.method = "GET"
        assertNoMatch(devtools, get)
    }

    // MARK: mitmproxy operators

    func testMethodURLDomainCode() {
        let e = entry("POST", "https://api.example.com:8443/v1/users/42?q=x", status: 201)
        assertMatch("~m POST", e)
        assertMatch("~m post", e)
        assertMatch("~m ^P", e)
        assertNoMatch("~m GET", e)
        assertMatch("~u users/\\d+", e)
        assertMatch("~u \"users/\\d+\\?q=X\"", e)
        assertNoMatch("~u ^http:", e)
        assertMatch("~d ^api\\.example\\.com$", e) // host without port
        assertMatch("~d EXAMPLE", e)
        assertNoMatch("~d users", e) // the path is not the domain
        assertMatch("~c 201", e)
        assertMatch("~c201", e)
        assertNoMatch("~c 20", e)
        assertNoMatch("~c 200", e)
        assertNoMatch("~c 200", entry(state: .pending))
        // A regex searches anywhere; a bare word is plain text.
        let x = entry("GET", "https://example.com/xay")
        assertMatch("~u x.y", x)
        assertNoMatch("x.y", x)
        assertMatch("XAY", x)
        assertMatch("example.com/x", x)
        assertNoMatch("a+", x)
    }

    func testHeaders() {
        var e = entry()
        e.requestHeaders = [Header("X-Trace", "abc 123"), Header("Accept", "*/*")]
        e.responseHeaders = [Header("Content-Type", "application/json; charset=utf-8"), Header("Set-Cookie", "a=b")]
        assertMatch("~h x-trace", e)
        assertMatch("~h \"^X-Trace: abc 123$\"", e)
        assertMatch("~h set-cookie", e)
        assertMatch("~hq trace", e)
        assertNoMatch("~hs trace", e)
        assertMatch("~hs 'cookie: a=b'", e)
        assertNoMatch("~hq cookie", e)
        assertNoMatch("~h nothing", e)
    }

    func testBodies() {
        var e = entry("POST")
        e.requestBody = body("{\"user\":\"Ada\"}", mime: "application/json")
        e.responseBody = body("it's fine")
        assertMatch("~b ada", e)
        assertMatch("~bq '\"user\":\"ada\"'", e)
        assertNoMatch("~bs ada", e)
        assertMatch("~bs 'it\\'s'", e)
        assertMatch("~b \"FINE$\"", e)
        assertNoMatch("~bq fine", e)
        // Only stored bodies are searched.
        var withheld = e
        withheld.requestBody = Body(payload: .withheld(reason: "too big"), size: 5_000_000, mimeType: "application/json")
        withheld.responseBody = Body(payload: .dropped, size: 9, mimeType: "text/plain")
        assertNoMatch("~b .", withheld)
        assertNoMatch("~b too", withheld)
        // Invalid UTF-8 is decoded lossily.
        var binary = entry()
        binary.responseBody = Body(payload: .stored([0x61, 0xFF, 0x62]), size: 3, mimeType: "")
        assertMatch("~bs a.b", binary)
    }

    func testContentTypeAndStates() {
        var e = entry("POST")
        e.requestHeaders = [Header("Content-Type", "application/x-www-form-urlencoded")]
        e.responseHeaders = [Header("content-type", "Application/JSON")]
        assertMatch("~t form", e)
        assertMatch("~t json", e)
        assertMatch("~t ^application/json$", e)
        assertNoMatch("~t html", e)
        var noHeader = entry()
        noHeader.responseBody = Body(payload: .none, size: 0, mimeType: "text/html")
        assertMatch("~t html", noHeader)

        let pending = entry(state: .pending), failed = entry(state: .failed), done = entry(status: 404)
        assertMatch("~q", pending); assertNoMatch("~q", failed); assertNoMatch("~q", done)
        assertMatch("~e", failed); assertNoMatch("~e", pending); assertNoMatch("~e", done)
        assertMatch("~s", done); assertNoMatch("~s", pending); assertNoMatch("~s", failed)
        assertMatch("~all", pending)
        assertMatch("!~q&~s", done)
        assertMatch("~q|~e", failed)
    }

    func testAssets() {
        func withMime(_ mime: String, _ url: String = "https://example.com/x") -> NetworkEntry {
            var e = entry("GET", url)
            e.responseBody = Body(payload: .none, size: 10, mimeType: mime)
            return e
        }
        for mime in ["text/css", "application/javascript", "text/javascript", "image/png", "image/svg+xml",
                     "font/woff2", "application/font-woff", "application/vnd.ms-fontobject"] {
            assertMatch("~a", withMime(mime))
        }
        assertNoMatch("~a", withMime("application/json", "https://example.com/app.js"))
        assertNoMatch("~a", withMime("text/html"))
        // Unknown media type: the URL's extension decides.
        assertMatch("~a", withMime("", "https://cdn.example.com/app.min.JS?v=3"))
        assertMatch("~a", withMime("", "https://cdn.example.com/logo.png"))
        assertNoMatch("~a", withMime("", "https://example.com/api/users"))
        var header = entry()
        header.responseHeaders = [Header("Content-Type", "image/jpeg")]
        assertMatch("~a", header)
    }

    func testQuoting() {
        var e = entry("GET", "https://example.com/a(b)?x=1&y=2")
        e.requestHeaders = [Header("X-Note", "hello world"), Header("X-Path", "C:\\temp")]
        assertMatch("~hq \"X-Note: hello world\"", e)
        assertMatch("~hq 'hello world'", e)
        assertMatch("~u \"a\\(b\\)\"", e)          // other backslashes stay for the regex
        assertMatch("~hq 'C:\\\\\\\\temp'", e)     // \\\\ in quotes is \\ in the regex: one backslash
        assertMatch("\"a(b)\"", e)                 // a quoted bare word
        assertMatch("x=1&y=2", e)                  // & inside a word is text
        assertMatch("\"\"", e)                     // empty text is in every URL
        assertMatch("~u ''", e)
        var port = entry("GET", "http://localhost:8080/health")
        assertMatch("localhost:8080", port)
        assertMatch("\"LOCALHOST:8080\"", port)
        assertMatch("http://localhost", port)
        port.url = "http://127.0.0.1/health"
        assertNoMatch("localhost:8080", port)
    }

    // MARK: DevTools keys

    func testDevToolsKeys() {
        var e = entry("PATCH", "https://API.Example.com/v1/items", status: 404)
        e.responseHeaders = [Header("Set-Cookie", "a=b"), Header("Content-Type", "application/json")]
        e.responseBody = Body(payload: .none, size: 1500, mimeType: "application/json")

        assertMatch("method:PATCH", e)
        assertMatch("method:patch", e)
        assertMatch("METHOD:Patch", e)
        assertNoMatch("method:PAT", e)
        assertNoMatch("method:GET", e)

        assertMatch("status-code:404", e)
        assertMatch("status-code:4xx", e)
        assertMatch("status-code:4XX", e)
        assertMatch("status-code:40x", e)
        assertNoMatch("status-code:5xx", e)
        assertNoMatch("status-code:2xx", e)
        assertMatch("status-code:2xx", entry(status: 204))
        assertNoMatch("status-code:2xx", entry(state: .pending))

        assertMatch("domain:api.example.com", e)
        assertMatch("domain:API.EXAMPLE.COM", e)
        assertMatch("domain:*.example.com", e)
        assertMatch("domain:*example.com", e)
        assertMatch("domain:api.*", e)
        assertMatch("domain:*", e)
        assertNoMatch("domain:example.com", e)
        assertNoMatch("domain:*.example.org", e)
        let apex = entry("GET", "https://example.com/")
        assertNoMatch("domain:*.example.com", apex) // subdomains only
        assertMatch("domain:*example.com", apex)
        assertMatch("domain:example.com", apex)
        assertMatch("domain:*.example.com", entry("GET", "https://a.b.example.com/"))
        assertNoMatch("domain:*.example.com", entry("GET", "https://badexample.com/"))

        assertMatch("mime-type:application/json", e)
        assertMatch("mime-type:Application/JSON", e)
        assertMatch("mime-type:application/*", e)
        assertNoMatch("mime-type:text/html", e)
        assertNoMatch("mime-type:application/js", e)

        assertMatch("scheme:https", e)
        assertMatch("scheme:HTTPS", e)
        assertNoMatch("scheme:http", e)
        assertMatch("scheme:http", entry("GET", "http://example.com/"))

        assertMatch("has-response-header:Set-Cookie", e)
        assertMatch("has-response-header:set-cookie", e)
        assertNoMatch("has-response-header:ETag", e)

        assertMatch("is:running", entry(state: .pending))
        assertMatch("is:RUNNING", entry(state: .pending))
        assertNoMatch("is:running", e)
        assertNoMatch("is:running", entry(state: .failed))
    }

    func testNegatedKeysAndMixing() {
        let cdn = entry("GET", "https://cdn.example.com/app.js")
        let api = entry("POST", "https://api.example.com/login", status: 401)
        assertNoMatch("-domain:cdn.example.com", cdn)
        assertMatch("-domain:cdn.example.com", api)
        assertMatch("-method:GET", api)
        assertNoMatch("-method:GET", cdn)
        assertMatch("-status-code:2xx -is:running", api)
        assertMatch("-domain:cdn.example.com & ~m POST | ~d cdn", cdn)
        assertMatch("-domain:cdn.example.com & ~m POST | ~d cdn", api)
        assertMatch("!(method:GET) status-code:4xx", api)
        assertMatch("(-domain:cdn.* | ~c 200) method:post", api)
        // A leading - on a word that is not a key is text.
        assertMatch("-login", entry("GET", "https://example.com/auto-login"))
    }

    func testLargerThanUnits() {
        func sized(_ n: Int) -> NetworkEntry {
            var e = entry()
            e.responseBody = Body(payload: .skipped, size: n, mimeType: "")
            return e
        }
        assertNoMatch("larger-than:10k", sized(10_000)) // strictly larger
        assertMatch("larger-than:10k", sized(10_001))
        assertMatch("larger-than:10K", sized(10_001))
        assertMatch("larger-than:10kb", sized(10_001))
        assertMatch("larger-than:10KB", sized(10_001))
        assertNoMatch("larger-than:10kB", sized(9_999))
        assertNoMatch("larger-than:1.5M", sized(1_500_000))
        assertMatch("larger-than:1.5M", sized(1_500_001))
        assertMatch("larger-than:1.5m", sized(1_500_001))
        assertMatch("larger-than:2MB", sized(2_000_001))
        assertNoMatch("larger-than:2MB", sized(2_000_000))
        assertMatch("larger-than:500", sized(501))
        assertNoMatch("larger-than:500", sized(500))
        assertMatch("larger-than:500b", sized(501))
        assertMatch("larger-than:0.5k", sized(501))
        assertNoMatch("larger-than:0", sized(0))

        XCTAssertEqual(NetworkFilter.Parser.size("10k"), 10_000)
        XCTAssertEqual(NetworkFilter.Parser.size("1.5M"), 1_500_000)
        XCTAssertEqual(NetworkFilter.Parser.size("2mb"), 2_000_000)
        XCTAssertEqual(NetworkFilter.Parser.size("7"), 7)
        for bad in ["10q", "k", "", "1.2.3", "-5", ".5", "5.", "1e3", "10 k", "10kk", "10bk"] {
            XCTAssertNil(NetworkFilter.Parser.size(bad), bad)
        }
    }

    // MARK: Errors

    func testErrorMessagesWithColumns() {
        assertError("~s & ~d", "column 8: expected a regex after ~d, found end of input")
        assertError("~d", "column 3: expected a regex after ~d, found end of input")
        assertError("~d )", "column 4: expected a regex after ~d, found ')'")
        assertError("~d (a|b)", "column 4: expected a regex after ~d, found '('")
        assertError("~d | ~s", "column 4: expected a regex after ~d, found '|'")
        assertError("~c abc", "column 4: expected a status code after ~c, found 'abc'")
        assertError("~s ~x foo", "column 4: unknown operator '~x' (expected one of ~m ~u ~d ~c ~h ~hq ~hs ~b ~bq ~bs ~t ~q ~e ~s ~a ~all)")
        assertError("~dom x", "column 1: unknown operator '~dom' (expected one of ~m ~u ~d ~c ~h ~hq ~hs ~b ~bq ~bs ~t ~q ~e ~s ~a ~all)")
        assertError("~s5", "column 1: unknown operator '~s5'")
        assertError("~", "column 2: expected an operator name after '~', found end of input")
        assertError("~m GET foo:bar",
                    "column 8: unknown key 'foo:' (expected one of method: status-code: domain: larger-than: mime-type: scheme: has-response-header: is: path: graphql:)")
        assertError("-Foo:x", "column 2: unknown key 'Foo:' (expected one of method: status-code: domain: larger-than: mime-type: scheme: has-response-header: is: path: graphql:)")
        assertError("(~s | ~q", "column 9: expected ')' to close '(' at column 1, found end of input")
        assertError("((~s) ~q", "column 9: expected ')' to close '(' at column 1, found end of input")
        assertError("~s)", "column 3: unbalanced ')': no '(' to close")
        assertError("(~s))", "column 5: unbalanced ')': no '(' to close")
        assertError(")", "column 1: unbalanced ')': no '(' to close")
        assertError("()", "column 2: expected a filter after '(', found ')'")
        assertError("~s &", "column 5: expected a filter after '&', found end of input")
        assertError("~s | & ~q", "column 6: expected a filter after '|', found '&'")
        assertError("| ~s", "column 1: expected a filter, found '|'")
        assertError("~s & )", "column 6: unbalanced ')': no '(' to close")
        assertError("(~s & )", "column 7: expected a filter after '&', found ')'")
        assertError("!", "column 2: expected a filter after '!', found end of input")
        assertError("larger-than:10q",
                    "column 13: bad size '10q' after larger-than: (expected bytes with an optional k or M, e.g. 500, 10k, 1.5M)")
        assertError("status-code:5x",
                    "column 13: bad status code '5x' after status-code: (expected three digits, x for any digit, e.g. 404 or 5xx)")
        assertError("is:done", "column 4: unknown value 'done' after is: (expected running)")
        assertError("method:", "column 8: expected a value after method:, found end of input")
        assertError("method: POST", "column 8: expected a value after method:, found whitespace")
        assertError("~u \"abc", "column 4: unterminated string: no closing \" before end of input")
        assertError("~s 'a\\'", "column 4: unterminated string: no closing ' before end of input")
        assertError("~u [a", "column 4: invalid regex '[a' after ~u: expected ']'")
        assertError("~m GET ~u \"a(b\"", "column 11: invalid regex 'a(b' after ~u: expected ')'")
        // Columns count characters, not bytes.
        assertError("é ~d", "column 5: expected a regex after ~d, found end of input")

        do throws(FilterError) {
            _ = try NetworkFilter("~q ~d")
            XCTFail("parsed")
        } catch {
            XCTAssertEqual(error.column, 6)
            XCTAssertEqual(error.message, "expected a regex after ~d, found end of input")
            XCTAssertEqual(error, FilterError(column: 6, message: "expected a regex after ~d, found end of input"))
        }
    }
}
