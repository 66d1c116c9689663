import Foundation
import PincerJSON
import PincerPluginKit
import XCTest
@testable import NetworkLog

/// HAR from `net.export-har` as its real consumers take it: mitmproxy 11
/// (`mitmdump -r file.har`) must turn every exported entry into a flow with
/// the same body bytes, and the file must validate against the HAR 1.2
/// schema (../shared/fixtures/har-schema). And the other way: a HAR that
/// mitmproxy itself wrote from real loopback traffic imports with the bytes
/// that crossed the wire. Everything runs through the built `pincer`, in a
/// temporary state directory with persistence on, so the bytes the log holds
/// can be read back from its own database (network-log.sqlite).
final class HARConformanceTests: XCTestCase {
    /// Fixtures that are not HAR at all (pincer and mitmproxy both refuse them).
    static let notHAR: Set<String> = ["mitmproxy-broken_headers.json", "mitmproxy-brokenfile.har", "postman-noEntries.har"]

    func testExportOfEveryFixtureIsReadByMitmproxyByteForByteAndValidates() throws {
        let mitmdump = try Consumer.require(Consumer.mitmdump)
        let state = Fixture.temporaryDirectory("pincer-har-conformance")
        try pincer(["run", "net.persist", "7"], state)
        try pincer(["run", "net.limits", "100000"], state)

        // Every fixture, plus bodies the fixtures lack: binary uploads, a
        // latin-1 response, UTF-8 JSON, a body withheld for being invalid JSON.
        let fixtures = try harFixtureDirectory
        var files = try FileManager.default.contentsOfDirectory(atPath: fixtures)
            .filter { !$0.contains("LICENSE") }.sorted().map { fixtures + "/" + $0 }
        XCTAssertGreaterThanOrEqual(files.count, 20)
        let extra = state + "/bodies.har"
        try Data(Self.bodiesHAR.utf8).write(to: URL(fileURLWithPath: extra))
        files.append(extra)
        var imported = 0
        for file in files {
            let name = (file as NSString).lastPathComponent
            let result = try Fixture.pincer(["run", "net.import-har", file, "--json"], stateDir: state)
            if Self.notHAR.contains(name) {
                XCTAssertNotEqual(result.status, 0, "\(name) is not HAR: \(result.stdout)")
                continue
            }
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let report = try XCTUnwrap(Fixture.json(result.stdout)["result"] as? [String: Any], name)
            XCTAssertEqual(report["persisted"] as? Bool, true, name)
            imported += try XCTUnwrap(report["imported"] as? Int, name)
        }
        XCTAssertGreaterThan(imported, 40)

        let out = state + "/export.har"
        let export = try Fixture.pincer(["run", "net.export-har", out], stateDir: state)
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertTrue(export.stdout.hasPrefix("wrote \(imported) entries ("), export.stdout)

        // What the log holds: the redacted entries, one JSON line each, in export order.
        let held = try Self.persistedEntries(state)
        XCTAssertEqual(held.count, imported)
        let document = try JSON.parse(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: out))))
        let exported = try XCTUnwrap(document["log"]?["entries"]?.arrayValue)
        XCTAssertEqual(exported.count, imported)

        // (b) The HAR 1.2 schema, and the rules it misses.
        try harValidateWithSchema([out])
        try harCheckRulesTheSchemaMisses(document, entryCount: imported)

        // (a) mitmproxy: one flow per entry, bodies byte for byte.
        let flows = try Self.mitmproxyFlows(mitmdump, reading: out, in: state)
        XCTAssertEqual(flows.count, imported, "mitmproxy made \(flows.count) flows of \(imported) entries")
        var exact = (request: 0, response: 0, binaryRequest: 0, latin1Response: 0, withheldRequest: 0)
        for (i, (flow, entry)) in zip(flows, held).enumerated() {
            let label = "entry \(i) \(entry["method"] as? String ?? "?") \(entry["url"] as? String ?? "?")"
            XCTAssertEqual(flow["method"] as? String, entry["method"] as? String, label)
            XCTAssertEqual(flow["status"] as? Int, (entry["status"] as? Int) ?? 0, label)
            let post = exported[i]["request"]?["postData"]
            let requestBody = try XCTUnwrap(entry["requestBody"] as? [String: Any], label)
            let flowRequest = try Self.bytes(flow["request"], label)
            if let bytes = try Self.storedBytes(requestBody, label) {
                if post?["_encoding"]?.stringValue == "base64" {
                    // The one documented case mitmproxy cannot read exactly: it gets the base64 text.
                    XCTAssertEqual(flowRequest, Array((post?["text"]?.stringValue ?? "").utf8), label)
                } else {
                    XCTAssertEqual(flowRequest, bytes, "\(label): request body")
                    exact.request += 1
                    if bytes.contains(where: { $0 >= 0x80 }) && String(validating: bytes, as: UTF8.self) == nil { exact.binaryRequest += 1 }
                }
            } else {
                XCTAssertEqual(flowRequest, [], "\(label): a body the log does not hold is empty")
                if requestBody["payload"] as? String == "withheld" { exact.withheldRequest += 1 }
            }
            let responseBody = try XCTUnwrap(entry["responseBody"] as? [String: Any], label)
            if let bytes = try Self.storedBytes(responseBody, label) {
                XCTAssertEqual(try Self.bytes(flow["response"], label), bytes, "\(label): response body")
                exact.response += 1
                let content = exported[i]["response"]?["content"]
                if content?["encoding"] == nil && bytes.contains(where: { $0 >= 0x80 }) && String(validating: bytes, as: UTF8.self) == nil {
                    exact.latin1Response += 1
                }
            }
        }
        print("mitmproxy read \(flows.count) flows; byte-exact: \(exact)")
        XCTAssertGreaterThanOrEqual(exact.request, 8)
        XCTAssertGreaterThanOrEqual(exact.response, 24, "XML bodies (mitmproxy-firefox.har) are withheld, not checked")
        XCTAssertGreaterThanOrEqual(exact.binaryRequest, 2, "the binary uploads of bodies.har")
        XCTAssertGreaterThanOrEqual(exact.latin1Response, 1, "the latin-1 response of bodies.har")
        XCTAssertGreaterThanOrEqual(exact.withheldRequest, 2, "postData with text \"\" for withheld bodies")
    }

    /// mitmproxy, in front of a real loopback server, saves the traffic as
    /// HAR (`--set hardump`); it writes binary and unlabelled request bodies
    /// as latin-1 text. pincer imports that file with the bytes that crossed
    /// the wire, and its export of them reads back in mitmproxy the same.
    func testMitmproxyWrittenHARImportsByteForByte() throws {
        let mitmdump = try Consumer.require(Consumer.mitmdump)
        let state = Fixture.temporaryDirectory("pincer-har-mitm")
        try pincer(["run", "net.persist", "7"], state)
        var generator = SeededRandom(seed: 15)
        let all = [UInt8](0...255) + [UInt8](0...255)
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let latin1Reply: [UInt8] = Array("caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve ".utf8) + [0xFF, 0xFE]
        let html = Array("<html><head><meta charset=\"utf-8\"></head><body>é ✓</body></html>".utf8)
        let requests: [(method: String, path: String, type: String, body: [UInt8])] = [
            ("POST", "/upload", "application/octet-stream", all),
            ("PUT", "/image", "image/png", png),
            ("POST", "/text", "text/plain", Array("héllo wörld ✓".utf8)),
            ("POST", "/json", "application/json", Array(#"{"name":"Jörg","n":[1,2]}"#.utf8)),
            ("GET", "/html", "", []),
        ]
        let replies: [String: (type: String, body: [UInt8])] = [
            "/upload": ("application/octet-stream", all), "/image": ("image/png", png), "/text": ("text/plain", latin1Reply),
            "/json": ("application/json", Array(#"{"ok":"sí"}"#.utf8)), "/html": ("text/html", html),
        ]
        let server = try LoopbackServer { request in
            let reply = replies[request.path] ?? ("text/plain", Array("?".utf8))
            return .init(status: 200, headers: [.init("Content-Type", reply.type)], body: Data(reply.body))
        }
        defer { server.stop() }

        let har = state + "/mitmproxy.har"
        let plan = JSON.array(requests.map { r in
            .object([("method", .string(r.method)), ("path", .string(r.path)), ("type", .string(r.type)), ("body", .string(Base64.encode(r.body)))])
        }).serialized()
        let driver = try Fixture.run(Consumer.require(Consumer.venvPython),
                                     ["-c", Self.proxyDriver, mitmdump, String(server.port), har, state + "/mitmproxy-conf"], input: plan)
        XCTAssertEqual(driver.status, 0, "driver: \(driver.stdout)\n\(driver.stderr)")
        let run = Fixture.json(driver.stdout)
        let answers = try XCTUnwrap(run["results"] as? [[String: Any]], driver.stdout)
        XCTAssertEqual(answers.map { $0["status"] as? Int }, Array(repeating: 200, count: requests.count), driver.stdout)
        XCTAssertEqual(server.requests.map(\.path), requests.map(\.path))
        for (request, received) in zip(requests, server.requests) { XCTAssertEqual([UInt8](received.body), request.body, request.path) }

        // The file is mitmproxy's, with the latin-1 form: read as UTF-8 it would be larger.
        let written = try JSON.parse(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: har))))
        XCTAssertEqual(written["log"]?["creator"]?["name"]?.stringValue, "mitmproxy")
        let upload = try XCTUnwrap(written["log"]?["entries"]?.arrayValue?.first?["request"]?["postData"])
        let uploadText = try XCTUnwrap(upload["text"]?.stringValue)
        XCTAssertNil(upload["encoding"])
        XCTAssertEqual(uploadText.unicodeScalars.count, all.count)
        XCTAssertGreaterThan(uploadText.utf8.count, all.count)

        let imported = try Fixture.pincer(["run", "net.import-har", har, "--json"], stateDir: state)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual((Fixture.json(imported.stdout)["result"] as? [String: Any])?["imported"] as? Int, requests.count, imported.stdout)
        let held = try Self.persistedEntries(state)
        XCTAssertEqual(held.count, requests.count)
        for (entry, request) in zip(held, requests) {
            let label = "\(request.method) \(request.path)"
            let sent = try Self.storedBytes(XCTUnwrap(entry["requestBody"] as? [String: Any]), label)
            XCTAssertEqual(sent ?? [], request.body, "\(label): request body as sent")
            XCTAssertEqual((entry["requestBody"] as? [String: Any])?["size"] as? Int, request.body.count, label)
            let got = try Self.storedBytes(XCTUnwrap(entry["responseBody"] as? [String: Any]), label)
            XCTAssertEqual(got, replies[request.path]?.body, "\(label): response body as received")
        }

        // And back: pincer's export of those entries reads in mitmproxy with the same bytes.
        let out = state + "/again.har"
        XCTAssertEqual(try Fixture.pincer(["run", "net.export-har", out], stateDir: state).status, 0)
        try harValidateWithSchema([out])
        let flows = try Self.mitmproxyFlows(mitmdump, reading: out, in: state)
        XCTAssertEqual(flows.count, requests.count)
        for (flow, request) in zip(flows, requests) {
            XCTAssertEqual(try Self.bytes(flow["request"], request.path), request.body, "\(request.path): request after the round trip")
            XCTAssertEqual(try Self.bytes(flow["response"], request.path), replies[request.path]?.body, "\(request.path): response after the round trip")
        }
    }

    // MARK: - Helpers

    @discardableResult
    private func pincer(_ arguments: [String], _ state: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try Fixture.pincer(arguments, stateDir: state)
        XCTAssertEqual(result.status, 0, "pincer \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result.stdout
    }

    /// The entries of the state directory's persisted log, in order, as the
    /// sqlite3 CLI reads them from its database.
    /// Each row's JSON with its stored bodies put back from their BLOB
    /// columns (as base64; "-" marks a NULL column: the JSON says what the body is).
    static func persistedEntries(_ state: String) throws -> [[String: Any]] {
        let sql = "SELECT json, CASE WHEN request_body IS NULL THEN '-' ELSE hex(request_body) END, "
            + "CASE WHEN response_body IS NULL THEN '-' ELSE hex(response_body) END FROM entries ORDER BY id"
        let read = try Fixture.run(Consumer.require(Consumer.sqlite3), ["-readonly", "-separator", "\u{1F}", state + "/network-log.sqlite", sql])
        XCTAssertEqual(read.status, 0, read.stderr)
        return try read.stdout.split(separator: "\n").map { line in
            let columns = line.split(separator: "\u{1F}", omittingEmptySubsequences: false)
            XCTAssertEqual(columns.count, 3, String(line.prefix(200)))
            var entry = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(columns[0].utf8)) as? [String: Any], String(line.prefix(200)))
            for (key, hex) in zip(["requestBody", "responseBody"], columns.dropFirst()) where hex != "-" {
                var body = try XCTUnwrap(entry[key] as? [String: Any], key)
                var bytes: [UInt8] = []
                var digits = hex.makeIterator()
                while let high = digits.next(), let low = digits.next() { bytes.append(UInt8(String([high, low]), radix: 16)!) }
                body["text"] = nil
                body["base64"] = Data(bytes).base64EncodedString()
                entry[key] = body
            }
            return entry
        }
    }

    /// A body's bytes as the log holds them (net.entry's form), nil when it holds none.
    static func storedBytes(_ body: [String: Any], _ label: String) throws -> [UInt8]? {
        guard body["payload"] as? String == "stored" else { return nil }
        if let text = body["text"] as? String { return Array(text.utf8) }
        return try bytes(body["base64"], label)
    }

    static func bytes(_ base64: Any?, _ label: String) throws -> [UInt8] {
        let text = try XCTUnwrap(base64 as? String, "\(label): no base64")
        return [UInt8](try XCTUnwrap(Data(base64Encoded: text), "\(label): not base64"))
    }

    /// Reads a HAR with `mitmdump -n -r`, an addon writing each flow's
    /// method, status and decoded bodies (base64) as a JSON line. mitmdump
    /// exits 0 even when it refuses the file, so its log is checked too.
    static func mitmproxyFlows(_ mitmdump: String, reading har: String, in directory: String) throws -> [[String: Any]] {
        let addon = directory + "/flows_addon.py"
        let out = directory + "/flows-\(UUID().uuidString).ndjson"
        try """
        import base64, json
        class Flows:
            def __init__(self):
                self.out = open(\(JSON.quote(out)), "w")
            def response(self, flow):
                r = flow.response
                self.out.write(json.dumps({
                    "method": flow.request.method,
                    "url": flow.request.url,
                    "status": r.status_code,
                    "request": base64.b64encode(flow.request.get_content(strict=False) or b"").decode(),
                    "response": base64.b64encode(r.get_content(strict=False) or b"").decode(),
                }) + "\\n")
                self.out.flush()
            def done(self):
                self.out.close()
        addons = [Flows()]
        """.write(toFile: addon, atomically: true, encoding: .utf8)
        let run = try Fixture.run(mitmdump, ["-n", "-q", "-r", har, "-s", addon, "--set", "confdir=\(directory)/mitmproxy-conf"])
        let log = run.stdout + run.stderr
        XCTAssertEqual(run.status, 0, log)
        for refusal in ["corrupted", "failed to read", "traceback", "error"] {
            XCTAssertFalse(log.lowercased().contains(refusal), "mitmdump: \(log)")
        }
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Starts mitmdump as a reverse proxy (a port it picks) in front of the
    /// loopback server, sends the planned requests (JSON on stdin) through
    /// it, stops it with SIGINT so it writes the HAR, and prints what came back.
    static let proxyDriver = """
    import base64, http.client, json, re, signal, subprocess, sys
    mitmdump, upstream, har, confdir = sys.argv[1:5]
    plan = json.load(sys.stdin)
    proxy = subprocess.Popen([mitmdump, "--mode", "reverse:http://127.0.0.1:" + upstream, "--listen-host", "127.0.0.1",
                              "-p", "0", "--set", "confdir=" + confdir, "--set", "hardump=" + har, "--flow-detail", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port, seen = None, []
    for line in proxy.stdout:
        seen.append(line)
        found = re.search(r"listening at 127\\.0\\.0\\.1:(\\d+)", line)
        if found:
            port = int(found.group(1))
            break
    if port is None:
        proxy.kill()
        print(json.dumps({"error": "mitmdump did not start", "log": "".join(seen)}))
        sys.exit(1)
    results = []
    for r in plan:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": r["type"]} if r["type"] else {}
        body = base64.b64decode(r["body"]) if r["body"] else None
        connection.request(r["method"], r["path"], body=body, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        results.append({"status": answer.status, "body": base64.b64encode(data).decode()})
    proxy.send_signal(signal.SIGINT)
    rest = proxy.communicate(timeout=60)[0]
    print(json.dumps({"results": results, "log": "".join(seen) + rest, "exit": proxy.returncode}))
    """

    /// Bodies the shared fixtures lack, as another tool would write them.
    static let bodiesHAR: String = {
        let all = Base64.encode([UInt8](0...255))
        let png = Base64.encode([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x80, 0x7F])
        func entry(_ method: String, _ path: String, request: String, response: String) -> String {
            """
            {"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 5,
             "request": {"method": "\(method)", "url": "https://bodies.example.com\(path)", "httpVersion": "HTTP/1.1",
                         "headers": [\(request.isEmpty ? "" : #"{"name": "Content-Type", "value": "\#(request.split(separator: "|")[0])"}"#)],
                         \(request.isEmpty ? "" : #""postData": {"mimeType": "\#(request.split(separator: "|")[0])", "text": "\#(request.split(separator: "|")[1])"\#(request.hasSuffix("|b64") ? #", "encoding": "base64""# : "")},"#)
                         "queryString": [], "cookies": [], "headersSize": -1, "bodySize": -1},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                          "headers": [{"name": "Content-Type", "value": "\(response.split(separator: "|")[0])"}],
                          "content": {"size": -1, "mimeType": "\(response.split(separator: "|")[0])", "text": "\(response.split(separator: "|")[1])"\(response.hasSuffix("|b64") ? #", "encoding": "base64""# : "")},
                          "redirectURL": "", "headersSize": -1, "bodySize": -1},
             "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}}
            """
        }
        let entries = [
            entry("POST", "/upload", request: "application/octet-stream|\(all)|b64", response: "application/octet-stream|\(all)|b64"),
            entry("PUT", "/image", request: "image/png|\(png)|b64", response: "image/png|\(png)|b64"),
            entry("GET", "/latin1", request: "", response: "text/plain; charset=iso-8859-1|Y2Fm6SBuYe92ZQ==|b64"),
            entry("POST", "/json", request: #"application/json; charset=utf-8|{\"name\":\"J\u00f6rg \u2713\"}"#,
                  response: #"application/json|{\"ok\":\"s\u00ed\"}"#),
            entry("POST", "/not-json", request: #"application/json|{\"a\":1,"#, response: "text/plain|ok"),
            entry("POST", "/form", request: "application/x-www-form-urlencoded|a=1&b=%C3%BC", response: "text/plain; charset=utf-8|d\\u00e9j\\u00e0"),
        ]
        return #"{"log": {"version": "1.2", "creator": {"name": "hand", "version": "1"}, "entries": ["# + entries.joined(separator: ",\n") + "]}}"
    }()
}
