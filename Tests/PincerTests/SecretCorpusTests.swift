import Foundation
import XCTest
@testable import NetworkLog
@testable import PincerHost
import PincerNetworkCapture

/// Issue 16's secret corpus: more than 100 distinct random secrets planted
/// in every place and encoding a client can put one (URL credentials,
/// query, fragment, nested encoded URLs, headers, cookies, forms, JSON at
/// depth, multipart, text bodies, XML, failure messages and status texts
/// through pincer.network/1 from C, names added from the shell, C and
/// Swift, HAR import's free texts), then every output is searched for them:
/// the persisted log file, an exported HAR, cURL commands, the waterfall
/// SVG, net.show, net.entry, net.list --json and net.tail (text and --json,
/// in other processes). None may be found. Ordinary text is kept byte for byte.
final class SecretCorpusTests: XCTestCase {
    /// Planted secrets and where each was put.
    final class Corpus {
        var planted: [(place: String, secret: String)] = []
        private var generator = SystemRandomNumberGenerator()
        private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

        /// A new random secret: 24 letters and digits, with a digit and an
        /// inner capital, as real keys have.
        func secret(_ place: String) -> String {
            var chars = (0..<24).map { _ in Corpus.alphabet.randomElement(using: &generator)! }
            chars[5] = Character(String(Int.random(in: 0...9, using: &generator)))
            chars[11] = Character(String(UnicodeScalar(UInt8(ascii: "A") + UInt8.random(in: 0...25, using: &generator))))
            let s = String(chars)
            planted.append((place, s))
            return s
        }

        /// A JWT whose signature (the secret part) is new and random.
        func jwt(_ place: String) -> String {
            let head = Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8).base64URL
            let body = Data(#"{"sub":"user-1","iat":1516239022}"#.utf8).base64URL
            let signature = (0..<43).map { _ in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").randomElement(using: &generator)! }
            let s = String(signature)
            planted.append((place + " (JWT signature)", s))
            return "\(head).\(body).\(s)"
        }
    }

    static func encoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    func testNoPlantedSecretReachesAnyOutput() throws {
        let c = Corpus()
        let app = AppHost()
        let state = app.stateDirectory
        try app.run("net.persist", "1")
        try app.run("net.limits", "1000")
        // Names added three ways: the shell command, C (add_redact_name), Swift (NetworkRecorder).
        XCTAssertTrue(try app.text("net.redact-name", "X-Tenant-PIN").contains("xtenantpin"))
        XCTAssertEqual(try app.text("app.redact-name", "Account_Number"), "ok")
        let recorder = try XCTUnwrap(NetworkRecorder(service: app.host.service(id: NetworkRecorder.serviceID)))
        XCTAssertTrue(recorder.canAddRedactedNames)
        XCTAssertTrue(recorder.addRedactedName("customer.ref"), recorder.lastError)

        // (1) Through pincer.network/1 from C. Each tuple is one exchange.
        struct Exchange {
            var method = "GET", url: String, requestHeaders: [String] = [], requestBody = ""
            var status = 200, statusText = "OK", responseHeaders: [String] = [], responseBody = ""
            var redirect = "", serverIP = "", error = ""
        }
        var exchanges: [Exchange] = []
        exchanges.append(Exchange(url: "https://ann:\(c.secret("URL password"))@api.example.com/login?page=2"))
        exchanges.append(Exchange(url: "https://\(c.secret("URL user token"))@github.com/o/r.git"))
        exchanges.append(Exchange(url: "https://api.example.com/v1/items?api_key=\(c.secret("query api_key"))&access_token=\(c.secret("query access_token"))&key=\(c.secret("query key"))&client_secret=\(c.secret("query client_secret"))&sort=asc"))
        exchanges.append(Exchange(url: "https://app.example.com/cb#access_token=\(c.secret("fragment access_token"))&id_token=\(c.secret("fragment id_token"))&state=ok"))
        exchanges.append(Exchange(url: "https://app.example.com/p?a=1;token=\(c.secret("semicolon token"))&b=2"))
        exchanges.append(Exchange(url: "https://id.example.com/authorize?client_id=app&redirect_uri="
            + Self.encoded("https://app.example.com/cb?token=\(c.secret("nested encoded query"))&x=1")
            + "&next=" + Self.encoded(Self.encoded("https://x.example.com/?password=\(c.secret("doubly encoded nested query"))"))
            + "&back=" + Self.encoded("https://u:\(c.secret("nested encoded userinfo"))@h.example.com/")
            + "&jump=https://j.example.com/?session_id=\(c.secret("unencoded nested query"))"))
        exchanges.append(Exchange(url: "https://api.example.com/verify/\(c.jwt("JWT in path"))?id=\(c.jwt("JWT in query"))"))
        exchanges.append(Exchange(url: "https://api.example.com/headers", requestHeaders: [
            "Authorization: Bearer \(c.secret("Authorization bearer"))",
            "Proxy-Authorization: Basic \(c.secret("Proxy-Authorization basic"))",
            "X-API-Key: \(c.secret("X-API-Key header"))",
            "X-Tenant-Key: \(c.secret("-key header"))",
            "Key: \(c.secret("Key header"))",
            "X-Session-Token: \(c.secret("-token header"))",
            "X-Signing-Secret: \(c.secret("-secret header"))",
            "X-Functions-Key: \(c.secret("X-Functions-Key header"))",
            "Cookie: theme=\(c.secret("cookie theme")); sessionid=\(c.secret("cookie sessionid"))",
            "X-Debug: user=ann; password=\(c.secret("password= in an ordinary header")); mode=1",
            "X-Trace: Bearer \(c.secret("bearer in an ordinary header"))",
            "X-Info: \(c.jwt("JWT in an ordinary header"))",
            "Referer: https://bob:\(c.secret("Referer password"))@app.example.com/?access_token=\(c.secret("Referer token"))",
            "X-Tenant-PIN: \(c.secret("added name (shell) header"))",
        ], responseHeaders: [
            "Set-Cookie: session=\(c.secret("Set-Cookie value")); Path=/; HttpOnly",
            "Set-Cookie: a=\(c.secret("folded Set-Cookie 1")); Path=/, b=\(c.secret("folded Set-Cookie 2")); Secure",
            "Location: https://app.example.com/cb?code=1&access_token=\(c.secret("Location token"))",
            "Link: <https://api.example.com/next?page=2&access_token=\(c.secret("Link header token"))>; rel=\"next\"",
        ]))
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/form",
                                  requestHeaders: ["Content-Type: application/x-www-form-urlencoded"],
                                  requestBody: "username=ann&password=\(c.secret("form password"))&client_secret=\(c.secret("form client_secret"))&redirect_uri="
                                      + Self.encoded("https://h.example.com/?refresh_token=\(c.secret("form nested URL"))") + "&x_tenant_pin=\(c.secret("added name (shell) form"))"))
        let deepJSON = """
        {"data": {"users": [{"name": "ann", "auth": {"credentials": {"password": "\(c.secret("JSON at depth 5"))"}}}]},
         "refresh_token": "\(c.secret("JSON refresh_token"))", "apiKey": ["\(c.secret("JSON array under a sensitive key"))"],
         "message": "sent Bearer \(c.secret("JSON string bearer")) to https://u:\(c.secret("JSON string URL password"))@h.example.com/",
         "id": "\(c.jwt("JSON string JWT"))", "account-number": "\(c.secret("added name (C) JSON"))",
         "X-Tenant-Pin": "\(c.secret("added name (shell) JSON"))",
         "customerRef": "\(c.secret("added name (Swift) JSON"))"}
        """
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/json?customer_ref=\(c.secret("added name (Swift) query"))",
                                  requestHeaders: ["Content-Type: application/json"], requestBody: deepJSON,
                                  responseHeaders: ["Content-Type: application/json; charset=utf-8"],
                                  responseBody: #"{"token": {"nested": ["\#(c.secret("JSON response token object"))"]}, "ok": true}"#))
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/upload",
                                  requestHeaders: ["Content-Type: multipart/form-data; boundary=XyZ"],
                                  requestBody: "--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(c.secret("multipart field"))\r\n--XyZ--\r\n"))
        exchanges.append(Exchange(url: "https://api.example.com/text", responseHeaders: ["Content-Type: text/plain"], responseBody: """
            Your session token is \(c.jwt("text/plain JWT")).
            Use it as Authorization: Bearer \(c.secret("text/plain bearer")) on every call,
            or add token=\(c.secret("text/plain token=")) to the query; api_key: \(c.secret("text/plain api_key:")).
            The session token \(c.secret("text/plain high-entropy after a name")) expires tomorrow.
            Account_Number=\(c.secret("added name (C) text"))
            """))
        exchanges.append(Exchange(url: "https://api.example.com/html", responseHeaders: ["Content-Type: text/html"],
                                  responseBody: "<html><body><p>access_token=\(c.secret("text/html token"))</p><a href=\"https://h.example.com/?sig=1&signature=\(c.secret("text/html link signature"))\">x</a></body></html>"))
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/soap",
                                  requestHeaders: ["Content-Type: text/xml; charset=utf-8"],
                                  requestBody: "<?xml version=\"1.0\"?><Envelope><Body><Login><Password>\(c.secret("XML element"))</Password></Login></Body></Envelope>",
                                  responseHeaders: ["Content-Type: application/xml"],
                                  responseBody: "<result secret=\"\(c.secret("XML attribute"))\"/>"))
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/sniff", requestBody: "password=\(c.secret("untyped form body"))&a=1",
                                  responseBody: #"{"session": "\#(c.secret("untyped JSON body"))"}"#))
        let downIndex = exchanges.count
        exchanges.append(Exchange(url: "https://api.example.com/down",
                                  error: "connect to https://ann:\(c.secret("failure message URL password"))@api.example.com/down?token=\(c.secret("failure message token=")) failed; sent Authorization: Bearer \(c.secret("failure message bearer"))"))
        exchanges.append(Exchange(url: "https://api.example.com/down2", error: "TLS failed; password: \(c.secret("failure message password:")), \(c.jwt("failure message JWT"))"))
        exchanges.append(Exchange(url: "https://api.example.com/status", status: 302,
                                  statusText: "Found token=\(c.secret("status text"))",
                                  redirect: "https://app.example.com/cb?access_token=\(c.secret("redirect URL"))",
                                  serverIP: "10.0.0.1 session=\(c.secret("server IP"))"))
        exchanges.append(Exchange(url: "https://api.example.com/encoded-names?API%5FKEY=\(c.secret("percent-encoded name"))&%EF%BC%A1%EF%BC%B0%EF%BC%A9%EF%BC%BF%EF%BC%AB%EF%BC%A5%EF%BC%B9=\(c.secret("fullwidth name"))&X-Amz-Signature=\(c.secret("X-Amz-Signature"))&X-Amz-Security-Token=\(c.secret("X-Amz-Security-Token"))#redirect="
            + Self.encoded("https://app.example.com/#id_token=\(c.secret("nested URL in a fragment"))"),
                                  requestHeaders: ["Ocp-Apim-Subscription-Key: \(c.secret("Ocp-Apim-Subscription-Key"))",
                                                   "X-CSRF-Token: \(c.secret("X-CSRF-Token"))",
                                                   "Authorization: Digest username=\"ann\", response=\"\(c.secret("Digest response"))\""]))
        exchanges.append(Exchange(url: "https://api.example.com/app.js", responseHeaders: ["Content-Type: application/javascript"],
                                  responseBody: "var apiKey = \"\(c.secret("JavaScript apiKey"))\"; const secret = '\(c.secret("JavaScript secret"))';\nfetch(u, {headers: {Authorization: 'Basic \(c.secret("JavaScript basic"))'}});"))
        exchanges.append(Exchange(method: "PUT", url: "https://api.example.com/json2", requestHeaders: ["Content-Type: application/vnd.api+json"],
                                  requestBody: #"{"items": [[{"config": {"client_secret": "\#(c.secret("+json at depth 4"))"}}]], "Authorization": "Bearer \#(c.secret("JSON Authorization key"))", "log": "login ok, password=\#(c.secret("JSON string password="))"}"#,
                                  responseHeaders: ["Content-Type: text/plain"],
                                  responseBody: "{\"refresh_token\": \"\(c.secret("JSON-looking text/plain"))\", \"scope\": \"read\"}\nBasic \(c.secret("text/plain basic"))\n"))
        // Ordinary text, which must come back byte for byte.
        let prose = "The quick brown fox jumps over the lazy dog. Password: required; token expired.\nSee https://example.com/docs?lang=en#auth (section 2).\n"
        let plainJSON = #"{"name": "ann", "count": 1.50, "tags": ["a", "b"], "note": "token_type=bearer"}"#
        exchanges.append(Exchange(method: "POST", url: "https://api.example.com/plain?page=2&q=%E2%9C%93", requestHeaders: ["Content-Type: application/json"],
                                  requestBody: plainJSON, responseHeaders: ["Content-Type: text/plain; charset=utf-8"], responseBody: prose))

        // net.tail in two other processes follows the persisted log while the entries arrive.
        let harEntries = try Self.harEntries(c)
        let total = exchanges.count + harEntries.count
        let tails = try [false, true].map { json in try Self.startTail(state: state, limit: total, json: json) }
        usleep(700_000)

        var ids: [String] = []
        for e in exchanges {
            ids.append(try app.text("app.record-exchange", e.method, e.url, e.requestHeaders.joined(separator: "\n"), e.requestBody,
                                    String(e.status), e.statusText, e.responseHeaders.joined(separator: "\n"), e.responseBody,
                                    e.redirect, e.serverIP, e.error))
        }
        // (2) HAR import.
        let harPath = state + "/corpus.har"
        let har: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "corpus", "version": "1"], "entries": harEntries]]
        try JSONSerialization.data(withJSONObject: har).write(to: URL(fileURLWithPath: harPath))
        let report = try app.json("net.import-har", harPath)
        XCTAssertEqual(report["imported"]?.int64Value, Int64(harEntries.count), "\(report)")
        XCTAssertGreaterThanOrEqual(c.planted.count, 100)
        XCTAssertEqual(Set(c.planted.map(\.secret)).count, c.planted.count, "distinct secrets")

        // Every output.
        let entryIDs = (1...total).map(String.init)
        var outputs: [(name: String, text: String)] = []
        outputs.append(("net.list --json", try app.text("net.list")))
        for id in entryIDs {
            outputs.append(("net.entry \(id)", try app.text("net.entry", id)))
            outputs.append(("net.show \(id)", try app.text("net.show", id, "0")))
            outputs.append(("net.curl \(id)", try app.text("net.curl", id)))
        }
        let exported = state + "/out.har"
        try app.run("net.export-har", exported)
        outputs.append(("exported HAR", try String(contentsOfFile: exported, encoding: .utf8)))
        let svg = state + "/waterfall.svg"
        try app.run("net.waterfall", svg)
        outputs.append(("waterfall SVG", try String(contentsOfFile: svg, encoding: .utf8)))
        // The persisted log as the sqlite3 CLI reads it: each entry's JSON, and the whole file's dump.
        let sqlite3 = try Consumer.require(Consumer.sqlite3)
        let rows = try Fixture.run(sqlite3, ["-readonly", state + "/network-log.sqlite", "SELECT json FROM entries ORDER BY id"])
        XCTAssertEqual(rows.status, 0, rows.stderr)
        outputs.append(("persisted log file", rows.stdout))
        // Stored bodies live in BLOB columns beside the JSON (.dump shows them as hex): read as text.
        let bodies = try Fixture.run(sqlite3, ["-readonly", state + "/network-log.sqlite",
                                               "SELECT CAST(request_body AS TEXT), CAST(response_body AS TEXT) FROM entries ORDER BY id"])
        XCTAssertEqual(bodies.status, 0, bodies.stderr)
        outputs.append(("persisted log bodies", bodies.stdout))
        let dump = try Fixture.run(sqlite3, ["-readonly", state + "/network-log.sqlite", ".dump"])
        XCTAssertEqual(dump.status, 0, dump.stderr)
        outputs.append(("persisted log database dump", dump.stdout))
        for (json, tail) in zip([false, true], tails) {
            outputs.append(("net.tail\(json ? " --json" : "")", try Self.finish(tail)))
        }

        var leaks: [String] = []
        for (name, text) in outputs {
            XCTAssertFalse(text.isEmpty, name)
            for (place, secret) in c.planted where text.contains(secret) { leaks.append("\(place) in \(name)") }
        }
        XCTAssertEqual(leaks, [], "\(leaks.count) leaks of \(c.planted.count) secrets")
        print("secret corpus: \(c.planted.count) secrets, \(total) entries, \(outputs.count) outputs, \(leaks.count) found")

        // The outputs are not empty of meaning: redaction markers, and the entries' ordinary parts.
        let log = outputs.first { $0.name == "persisted log file" }!.text
        XCTAssertEqual(log.split(separator: "\n").count, total)
        XCTAssertTrue(outputs.first { $0.name == "net.tail" }!.text.contains("followed \(total) entries"))
        XCTAssertTrue(log.contains("page=2"))
        // Ordinary text is kept byte for byte.
        let plain = try app.json("net.entry", ids.last!)
        XCTAssertEqual(plain["requestBody"]?["text"]?.stringValue, plainJSON)
        XCTAssertEqual(plain["responseBody"]?["text"]?.stringValue, prose)
        XCTAssertEqual(plain["url"]?.stringValue, "https://api.example.com/plain?page=2&q=%E2%9C%93")
        // The failure message keeps what is not secret.
        let down = try app.json("net.entry", ids[downIndex])
        XCTAssertTrue(down["error"]?.stringValue?.hasPrefix("connect to https://ann:[REDACTED]@api.example.com/down?token=[REDACTED] failed") == true, "\(down["error"] ?? .null)")
    }

    /// HAR entries with secrets in every field the import reads.
    static func harEntries(_ c: Corpus) throws -> [[String: Any]] {
        func entry(_ request: [String: Any], _ response: [String: Any]?, extra: [String: Any] = [:]) -> [String: Any] {
            var e: [String: Any] = ["startedDateTime": "2024-05-01T10:00:00.000Z", "time": 12, "request": request,
                                    "timings": ["send": 1, "wait": 10, "receive": 1]]
            if let response { e["response"] = response }
            for (k, v) in extra { e[k] = v }
            return e
        }
        return [
            entry(["method": "POST", "url": "https://carol:\(c.secret("HAR URL password"))@har.example.com/login?token=\(c.secret("HAR query token"))",
                   "httpVersion": "HTTP/1.1",
                   "headers": [["name": "Authorization", "value": "Bearer \(c.secret("HAR Authorization"))"],
                               ["name": "X-Auth-Token", "value": c.secret("HAR X-Auth-Token")],
                               ["name": "Cookie", "value": "sid=\(c.secret("HAR cookie"))"]],
                   "postData": ["mimeType": "application/json", "text": #"{"user": {"password": "\#(c.secret("HAR postData JSON"))"}}"#]],
                  ["status": 200, "statusText": "OK api_key=\(c.secret("HAR statusText"))", "httpVersion": "HTTP/1.1",
                   "headers": [["name": "Set-Cookie", "value": "session=\(c.secret("HAR Set-Cookie")); Path=/"],
                               ["name": "Content-Type", "value": "text/plain"]],
                   "content": ["size": 60, "mimeType": "text/plain", "text": "here: \(c.jwt("HAR text/plain JWT")) ok"],
                   "redirectURL": "https://har.example.com/next?access_token=\(c.secret("HAR redirectURL"))", "_error": "late error token=\(c.secret("HAR _error beside a status"))"],
                  extra: ["serverIPAddress": "password=\(c.secret("HAR serverIPAddress"))", "_notes": ["a note with Bearer \(c.secret("HAR _notes"))"]]),
            entry(["method": "POST", "url": "https://har.example.com/form", "headers": [],
                   "postData": ["mimeType": "application/x-www-form-urlencoded",
                                "params": [["name": "password", "value": c.secret("HAR postData params")], ["name": "a", "value": "1"]]]],
                  ["status": 0, "statusText": "", "headers": [], "content": ["size": 0, "mimeType": "x-unknown"],
                   "_error": "proxy said: https://dave:\(c.secret("HAR _error URL password"))@p.example.com/ refused Bearer \(c.secret("HAR _error bearer"))"]),
            entry(["method": "GET", "url": "https://har.example.com/withheld", "headers": []],
                  ["status": 200, "statusText": "OK", "headers": [],
                   "content": ["size": 100, "mimeType": "application/octet-stream", "comment": "cut, secret=\(c.secret("HAR content comment"))"]]),
            entry(["method": "GET", "url": "https://har.example.com/withheld2", "headers": []],
                  ["status": 200, "statusText": "OK", "headers": [],
                   "content": ["size": 100, "mimeType": "text/plain", "_bodyState": "withheld", "_bodyWithheld": "reason with token=\(c.secret("HAR _bodyWithheld"))"]]),
            entry(["method": "GET", "url": "https://har.example.com/none#access_token=\(c.secret("HAR URL fragment"))",
                   "headers": ["X-Api-Key": c.secret("HAR headers as an object"), "Accept": "*/*"]], nil),
            entry(["method": "POST", "url": "https://har.example.com/text", "headers": [["name": "Content-Type", "value": "text/plain"]],
                   "postData": ["mimeType": "text/plain", "text": "token=\(c.secret("HAR postData text"))"]],
                  ["status": 401, "statusText": "Unauthorized", "headers": [["name": "WWW-Authenticate", "value": "Bearer realm=\"x\", error=\"invalid_token\""]],
                   "content": ["size": 40, "mimeType": "application/json", "text": #"{"error": "bad", "session_id": "\#(c.secret("HAR content JSON"))"}"#]]),
        ]
    }

    static func startTail(state: String, limit: Int, json: Bool) throws -> (Process, Pipe) {
        let tail = Process()
        tail.executableURL = URL(fileURLWithPath: Fixture.pincer)
        tail.arguments = ["run", "net.tail", "--limit", String(limit)] + (json ? ["--json"] : [])
        tail.environment = ["PINCER_STATE_DIR": state]
        let out = Pipe()
        tail.standardOutput = out
        try tail.run()
        return (tail, out)
    }

    static func finish(_ tail: (Process, Pipe)) throws -> String {
        let deadline = Date().addingTimeInterval(15)
        while tail.0.isRunning && Date() < deadline { usleep(50_000) }
        let stillRunning = tail.0.isRunning
        if stillRunning { tail.0.terminate() }
        XCTAssertFalse(stillRunning, "net.tail did not stop after every entry")
        return String(decoding: tail.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

private extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }
}
