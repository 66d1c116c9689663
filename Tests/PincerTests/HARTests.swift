import Foundation
import PincerJSON
import PincerPluginKit
import XCTest
@testable import NetworkLog

/// HAR export (validated against the HAR 1.2 JSON Schema with the Debian
/// python3-jsonschema, plus the rules the schema misses), HAR import of every
/// fixture in ../shared/fixtures/har, round trips, Base64 and the text dump.
final class HARTests: XCTestCase {

    // MARK: Base64

    func testBase64MatchesFoundationAndDecodesLeniently() {
        var generator = SeededRandom(seed: 7)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded, Data(bytes).base64EncodedString(), "length \(length)")
            XCTAssertEqual(Base64.decode(encoded), bytes)
            // Line-wrapped (76 columns, CRLF), unpadded, with spaces and tabs.
            let wrapped = Data(bytes).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
            XCTAssertEqual(Base64.decode(wrapped), bytes)
            XCTAssertEqual(Base64.decode(String(encoded.filter { $0 != "=" })), bytes)
            XCTAssertEqual(Base64.decode(" \t" + encoded + "\n"), bytes)
        }
        XCTAssertEqual(Base64.decode(""), [])
        XCTAssertEqual(Base64.decode("TWFu"), Array("Man".utf8))
        XCTAssertEqual(Base64.decode("TWE"), Array("Ma".utf8))
        XCTAssertEqual(Base64.decode("TQ=="), Array("M".utf8))
        for garbage in ["TW$u", "T", "TQ=x", "TQ===", "TWE==", "TWFu=", "=TWFu", "TW-u", "TW_u", "TWFué"] {
            XCTAssertNil(Base64.decode(garbage), garbage)
        }
    }

    // MARK: Export

    func testExportValidatesAgainstSchemaAndOwnRules() throws {
        let entries = harSampleEntries()
        var chunks: [[UInt8]] = []
        HARExport.write(entries, creator: (name: "Pincer", version: "1.0"), chunkSize: 512) { chunks.append($0) }
        XCTAssertGreaterThan(chunks.count, 2, "the export streams in chunks")
        let document = chunks.flatMap { $0 }
        XCTAssertEqual(document, HARExport.document(entries, creator: (name: "Pincer", version: "1.0")))

        let directory = harTemporaryDirectory()
        let path = directory + "/sample.har"
        try Data(document).write(to: URL(fileURLWithPath: path))
        try harValidateWithSchema([path])
        let json = try JSON.parse(bytes: document)
        try harCheckRulesTheSchemaMisses(json, entryCount: entries.count)

        let list = try XCTUnwrap(json["log"]?["entries"]?.arrayValue)
        // 0: text JSON response, query string, cookies.
        let first = list[0]
        XCTAssertEqual(first["serverIPAddress"]?.stringValue, "93.184.216.34")
        XCTAssertEqual(first["response"]?["content"]?["text"]?.stringValue, #"{"ok":true,"name":"café"}"#)
        XCTAssertNil(first["response"]?["content"]?["encoding"])
        let query = try XCTUnwrap(first["request"]?["queryString"]?.arrayValue)
        XCTAssertEqual(query.map { $0["name"]!.stringValue! }, ["q", "page", "flag", "empty", "plus"])
        XCTAssertEqual(query.map { $0["value"]!.stringValue! }, ["café", "2", "", "", "a b"])
        XCTAssertEqual(first["request"]?["cookies"]?.arrayValue?.map { $0["name"]!.stringValue! }, ["session", "theme"])
        let setCookie = try XCTUnwrap(first["response"]?["cookies"]?.arrayValue?.first)
        XCTAssertEqual(setCookie["name"]?.stringValue, "id")
        XCTAssertEqual(setCookie["httpOnly"]?.boolValue, true)
        XCTAssertEqual(setCookie["path"]?.stringValue, "/")
        XCTAssertEqual(first["time"]?.doubleValue ?? 0, 1.5 + 2 + 30 + 0.5 + 100.25 + 3, accuracy: 1e-9)
        XCTAssertEqual(first["startedDateTime"]?.stringValue, "2023-11-14T22:13:20.123Z")
        XCTAssertNil(first["pageref"])
        // 1: form post with params; IPv6 server address without brackets.
        let form = try XCTUnwrap(list[1]["request"]?["postData"])
        XCTAssertEqual(form["text"]?.stringValue, "name=J%C3%B6rg+M&city=&tag=a%26b")
        XCTAssertEqual(form["params"]?.arrayValue?.map { $0["value"]!.stringValue! }, ["Jörg M", "", "a&b"])
        XCTAssertEqual(list[1]["request"]?["bodySize"]?.int64Value, 32)
        XCTAssertEqual(list[1]["serverIPAddress"]?.stringValue, "2001:db8::1")
        // 2: a binary response is base64 (HAR's content.encoding); a binary
        // request body is latin-1 text, one character per byte, which is how
        // mitmproxy reads an image/png postData (HAR 1.2 has no postData.encoding).
        let binaryContent = try XCTUnwrap(list[2]["response"]?["content"])
        XCTAssertEqual(binaryContent["encoding"]?.stringValue, "base64")
        XCTAssertEqual(binaryContent["text"]?.stringValue.flatMap { Base64.decode($0) }, harPNGBytes)
        let binaryPost = try XCTUnwrap(list[2]["request"]?["postData"])
        XCTAssertNil(binaryPost["encoding"], "HAR 1.2 defines no postData.encoding")
        XCTAssertEqual(binaryPost["_encoding"]?.stringValue, "latin-1")
        XCTAssertEqual(binaryPost["text"]?.stringValue?.unicodeScalars.map { UInt8($0.value) }, harPNGBytes)
        // 3: failed; unknown server IP ("") omitted.
        let failed = try XCTUnwrap(list[3]["response"])
        XCTAssertEqual(failed["_error"]?.stringValue, "The Internet connection appears to be offline.")
        XCTAssertNil(list[3]["serverIPAddress"])
        // 4: pending exports as a failure too.
        XCTAssertEqual(list[4]["response"]?["status"]?.int64Value, 0)
        XCTAssertNotNil(list[4]["response"]?["_error"]?.stringValue)
        // 5: withheld request body, skipped response body.
        let withheld = try XCTUnwrap(list[5]["request"]?["postData"])
        XCTAssertEqual(withheld["text"]?.stringValue, "", "HAR 1.2 requires postData.text")
        XCTAssertEqual(withheld["_bodyWithheld"]?.stringValue, "over the 1 MiB per-body cap")
        XCTAssertEqual(withheld["comment"]?.stringValue, "body not included (withheld): over the 1 MiB per-body cap")
        XCTAssertEqual(list[5]["request"]?["bodySize"]?.int64Value, 5_000_000)
        XCTAssertEqual(list[5]["response"]?["content"]?["size"]?.int64Value, 1234)
        XCTAssertEqual(list[5]["response"]?["content"]?["_bodyState"]?.stringValue, "skipped")
        XCTAssertNil(list[5]["response"]?["content"]?["text"])
        // 6: odd URL made a URI; invalid IP omitted; bad timings normalised.
        XCTAssertEqual(list[6]["request"]?["url"]?.stringValue,
                       "http://[::1]:8080/a%20b/%5Bx%5D?q=%22quoted%22&u=%C3%BC%7C%7B%7D%25zz#f%23g")
        XCTAssertNil(list[6]["serverIPAddress"])
        XCTAssertEqual(list[6]["_stubbed"]?.boolValue, true)
        XCTAssertEqual(list[6]["timings"]?["connect"]?.doubleValue, 12, "ssl is inside connect")
        // 7: text/plain declared latin-1 is its latin-1 text: every reader gets the bytes back.
        XCTAssertNil(list[7]["response"]?["content"]?["encoding"])
        XCTAssertEqual(list[7]["response"]?["content"]?["text"]?.stringValue, "café")
        // 8: redirect.
        XCTAssertEqual(list[8]["response"]?["redirectURL"]?.stringValue, "https://example.com/next")
    }

    /// The validator must reject what it should, or the schema test proves nothing.
    func testSchemaValidatorCatchesBrokenDocuments() throws {
        let good = HARExport.document([harSampleEntries()[0]], creator: (name: "t", version: "1"))
        let text = String(decoding: good, as: UTF8.self)
        let directory = harTemporaryDirectory()
        let broken = [
            "ip": text.replacingOccurrences(of: "\"serverIPAddress\":\"93.184.216.34\"", with: "\"serverIPAddress\":\"\""),
            "time": text.replacingOccurrences(of: "\"time\":", with: "\"_time\":"),
            "status": text.replacingOccurrences(of: "\"status\":200", with: "\"status\":\"200\""),
        ]
        for (name, doc) in broken {
            XCTAssertNotEqual(doc, text)
            let path = directory + "/\(name).har"
            try doc.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try harRunProcess(Consumer.require(Consumer.debianPython), [harValidatorScript(), harSchemaDirectory, path])
            XCTAssertNotEqual(result.status, 0, "\(name) should be invalid: \(result.output)")
        }
    }

    /// 100,000 entries in release builds; 10,000 in debug builds, where
    /// building entries is slow (the chunk bound is what matters).
    func testExportStreamsLargeLogsInBoundedChunks() throws {
        var template = harSampleEntries()[0]
        template.responseBody = Body(payload: .stored(Array(repeating: UInt8(ascii: "x"), count: 200)), size: 200, mimeType: "text/plain")
        #if DEBUG
        let count = 10_000
        #else
        let count = 100_000
        #endif
        let lazyEntries = (1...count).lazy.map { i -> NetworkEntry in
            var e = template
            e.id = UInt64(i)
            e.url = "https://example.com/item/\(i)"
            return e
        }
        var total = 0, chunks = 0, largest = 0
        var tail: [UInt8] = []
        HARExport.write(lazyEntries, creator: (name: "Pincer", version: "1")) { chunk in
            total += chunk.count
            chunks += 1
            largest = max(largest, chunk.count)
            tail = Array(chunk.suffix(4))
        }
        let oneEntry = HARExport.entryJSON(template).serialized().utf8.count
        XCTAssertGreaterThan(total, count * oneEntry / 2)
        XCTAssertLessThanOrEqual(largest, (1 << 16) + oneEntry + 64, "no chunk holds much more than 64 KiB")
        XCTAssertGreaterThan(chunks, total / (1 << 17))
        XCTAssertEqual(tail, Array("]}}\n".utf8))
    }

    // MARK: Import

    /// Every fixture imports (imported + skipped = entries in the file) or is
    /// rejected with a message; the imported entries export to valid HAR.
    func testImportEveryFixture() throws {
        let directory = try harFixtureDirectory
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.contains("LICENSE") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 20)
        let out = harTemporaryDirectory()
        var exported: [(path: String, entries: Int)] = []
        var rejected: [String] = []
        var report: [String] = []
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
            let expected = harIndependentEntryCount(bytes)
            do {
                let result = try HARImport.read(bytes)
                let count = try XCTUnwrap(expected, "\(file) imported but Foundation finds no log.entries")
                XCTAssertEqual(result.entries.count + result.skipped.count, count, file)
                for entry in result.entries { XCTAssertEqual(entry.source, .imported, file) }
                for skip in result.skipped { XCTAssertFalse(skip.reason.isEmpty, file) }
                report.append("\(file): \(result.entries.count) imported, \(result.skipped.count) skipped"
                              + result.skipped.map { " [#\($0.index): \($0.reason)]" }.joined())
                let path = out + "/" + file + ".har"
                try Data(HARExport.document(result.entries, creator: (name: "Pincer", version: "test"))).write(to: URL(fileURLWithPath: path))
                exported.append((path, result.entries.count))
            } catch {
                rejected.append(file)
                XCTAssertNil(expected, "\(file) was rejected but has \(expected ?? 0) entries: \(error)")
                XCTAssertTrue("\(error)".hasPrefix("not a HAR file: "), "\(error)")
                report.append("\(file): rejected: \(error)")
            }
        }
        print("HAR fixture import:\n  " + report.joined(separator: "\n  "))
        XCTAssertEqual(rejected, ["mitmproxy-broken_headers.json", "mitmproxy-brokenfile.har", "postman-noEntries.har"])
        try harValidateWithSchema(exported.map(\.path))
        for (path, count) in exported {
            try harCheckRulesTheSchemaMisses(JSON.parse(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))), entryCount: count)
        }
    }

    func testFixtureDetails() throws {
        func load(_ name: String) throws -> HARImportResult {
            try HARImport.read([UInt8](Data(contentsOf: URL(fileURLWithPath: harFixtureDirectory + "/" + name))))
        }
        // Not JSON: line and column from the parser.
        XCTAssertThrowsError(try load("mitmproxy-brokenfile.har")) { error in
            guard let e = error as? HARImportError, case .notJSON = e else { return XCTFail("\(error)") }
            XCTAssertEqual(e.line, 5)
            XCTAssertEqual(e.column, 1)
        }
        XCTAssertThrowsError(try load("mitmproxy-broken_headers.json")) { error in
            XCTAssertEqual(error as? HARImportError, .notHAR("no \"log\" object at the top level"))
        }
        XCTAssertThrowsError(try load("postman-noEntries.har")) { error in
            XCTAssertEqual(error as? HARImportError, .notHAR("\"log\" has no \"entries\" array"))
        }
        let noRequest = try load("postman-noRequest.har")
        XCTAssertEqual(noRequest.entries.count, 0)
        XCTAssertEqual(noRequest.skipped.first?.index, 0)
        XCTAssertEqual(noRequest.skipped.first?.reason, "the entry has no request")

        let errorLog = try load("mitmproxy-error_log.har")
        XCTAssertEqual(errorLog.entries[0].state, .failed)
        XCTAssertTrue(errorLog.entries[0].error?.contains("Connect call failed") ?? false)
        XCTAssertNil(errorLog.entries[0].status)
        XCTAssertEqual(errorLog.entries[1].status, 405)
        XCTAssertEqual(errorLog.entries[1].requestBody.bytes, Array("key1=value1&key2=value2".utf8))
        XCTAssertEqual(errorLog.creator, "mitmproxy 1.2.3")

        let chrome = try load("mitmproxy-chrome.har")
        XCTAssertEqual(chrome.entries[1].state, .failed)
        XCTAssertEqual(chrome.entries[1].error, "net::ERR_INTERNET_DISCONNECTED")
        XCTAssertNil(chrome.entries[1].serverIP)
        let png = try XCTUnwrap(chrome.entries[2].responseBody.bytes)
        XCTAssertEqual(png.count, 7108)
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(chrome.entries[2].responseBody.mimeType, "image/png")
        XCTAssertEqual(chrome.entries[0].httpVersion, "http/2.0")

        let charles = try load("mitmproxy-charles.har")
        XCTAssertEqual(charles.entries[0].redirectURL, "")
        XCTAssertEqual(charles.entries[0].status, 200)
        XCTAssertEqual(charles.entries[0].startedAt, try harISOSeconds("2023-03-30T00:37:42.482Z"), accuracy: 0.0005)
        XCTAssertEqual(charles.entries[0].timings.ssl, 26)

        let firefox = try load("mitmproxy-firefox.har")
        XCTAssertEqual(firefox.entries.count, 14)
        XCTAssertEqual(firefox.entries[1].responseBody.payload, .withheld(reason: "Response bodies are not included."))
        XCTAssertEqual(firefox.entries[1].timings, Timings())
        XCTAssertEqual(firefox.entries[13].responseBody.bytes?.count, 98065)

        let invalidVersion = try load("postman-invalidVersion.har")
        XCTAssertEqual(invalidVersion.entries.map(\.state), [.failed, .failed, .failed])
        XCTAssertEqual(invalidVersion.entries[1].error, "net::ERR_ABORTED")

        let incomplete = try load("mitmproxy-incomplete_log.har")
        XCTAssertEqual(incomplete.entries.map(\.error), Array(repeating: "no response (status 0 in HAR)", count: 4))
        XCTAssertEqual(incomplete.entries[2].requestBody.payload, BodyPayload.none)

        let bom = try load("mitmproxy-with-bom.har")
        XCTAssertEqual(bom.entries.first?.requestBody.bytes?.count, 1310)
        XCTAssertEqual(bom.entries.first?.requestBody.mimeType, "text/plain")

        let gzip = try load("mitmproxy-corrupted_gzip_body.har")
        XCTAssertEqual(gzip.entries[0].responseBody.bytes?.count, 24)

        let multipart = try load("postman-formdataParams.har")
        let body = try XCTUnwrap(multipart.entries[0].requestBody.bytes)
        XCTAssertTrue(String(decoding: body, as: UTF8.self).hasPrefix("------WebKitFormBoundary"))
        XCTAssertEqual(multipart.entries[0].requestBody.mimeType, "multipart/form-data")
    }

    func testImportLineWrappedBase64HeaderObjectsAndParams() throws {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let wrapped = Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        XCTAssertTrue(wrapped.contains("\r\n"))
        let unpadded = Data(bytes.prefix(100)).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
            .replacingOccurrences(of: "=", with: "")
        let har = """
        {"log": {"version": 1.2, "creator": {"name": "hand", "version": "0"}, "entries": [
          {"startedDateTime": "2024-01-02T03:04:05.5+01:00", "time": 42,
           "request": {"method": "POST", "url": "https://example.com/upload", "httpVersion": "HTTP/1.1",
                       "headers": {"Content-Type": "application/octet-stream", "X-Multi": ["a", "b"], "X-Number": 7},
                       "postData": {"mimeType": "application/octet-stream", "text": \(harJSONString(unpadded)), "encoding": "base64"},
                       "headersSize": null, "bodySize": 100},
           "response": {"status": 201, "statusText": "Created", "httpVersion": "HTTP/1.1",
                        "headers": [["Content-Type", "image/png"], {"name": "X-Ok", "value": "1"}, 17],
                        "content": {"size": 300, "mimeType": "image/png", "text": \(harJSONString(wrapped)), "encoding": "base64"},
                        "redirectURL": null, "headersSize": null, "bodySize": -1},
           "cache": {}, "timings": {}},
          {"startedDateTime": "2024-01-02T03:04:05Z", "time": 3,
           "request": {"method": "POST", "url": "https://example.com/form", "headers": [],
                       "postData": {"mimeType": "application/x-www-form-urlencoded",
                                    "params": [{"name": "a b", "value": "ü&="}, {"name": "empty"}]}},
           "response": {"status": 0, "_error": "net::ERR_FAILED", "content": {}},
           "timings": {"send": 1, "wait": 2, "receive": -1}},
          {"startedDateTime": "2024-01-02T03:04:05Z",
           "request": {"method": "GET", "url": "https://example.com/nothing"}},
          {"request": {"method": "GET"}, "response": {"status": 200}},
          "not an entry",
          {"startedDateTime": "yesterday", "request": {"method": "GET", "url": "https://example.com/bad-b64"},
           "response": {"status": 200, "content": {"size": 4, "mimeType": "image/gif", "text": "R0l*", "encoding": "base64"}, "_error": "net::ERR_ABORTED"}}
        ]}}
        """
        let result = try HARImport.read(Array(har.utf8))
        XCTAssertEqual(result.entries.count, 4)
        XCTAssertEqual(result.skipped.map(\.index), [3, 4])
        XCTAssertEqual(result.skipped.map(\.reason), ["the request has no url", "the entry is a string, not an object"])

        let upload = result.entries[0]
        XCTAssertEqual(upload.requestBody.bytes, Array(bytes.prefix(100)))
        XCTAssertEqual(upload.responseBody.bytes, bytes)
        XCTAssertEqual(upload.responseBody.size, 300)
        XCTAssertEqual(upload.requestHeaders.map(\.name), ["Content-Type", "X-Multi", "X-Multi", "X-Number"])
        XCTAssertEqual(upload.requestHeaders.map(\.value), ["application/octet-stream", "a", "b", "7"])
        XCTAssertEqual(upload.responseHeaders.map(\.name), ["Content-Type", "X-Ok"])
        XCTAssertTrue(upload.notes.contains("HAR import: 1 malformed response header dropped"), "\(upload.notes)")
        XCTAssertEqual(upload.redirectURL, "")
        XCTAssertEqual(upload.startedAt, try harISOSeconds("2024-01-02T02:04:05.500Z"), accuracy: 0.0005)
        XCTAssertEqual(upload.timings.wait, 42, "time without timings goes into wait")
        XCTAssertEqual(upload.duration, 42)

        let form = result.entries[1]
        XCTAssertEqual(form.requestBody.bytes, Array("a+b=%C3%BC%26%3D&empty=".utf8))
        XCTAssertEqual(form.state, .failed)
        XCTAssertEqual(form.error, "net::ERR_FAILED")
        XCTAssertEqual(form.timings.receive, 0)
        XCTAssertEqual(form.duration, 3)

        let nothing = result.entries[2]
        XCTAssertEqual(nothing.state, .failed)
        XCTAssertEqual(nothing.error, "no response in HAR")

        let bad = result.entries[3]
        XCTAssertEqual(bad.responseBody.payload, .withheld(reason: "the HAR file's base64 is not valid"))
        XCTAssertEqual(bad.startedAt, 0)
        XCTAssertTrue(bad.notes.contains("HAR _error: net::ERR_ABORTED"))
        XCTAssertTrue(bad.notes.contains("HAR import: startedDateTime missing or not a date"))
    }

    func testRejectsNonHARWithMessages() {
        func error(_ text: String) -> HARImportError? {
            do { _ = try HARImport.read(Array(text.utf8)); return nil } catch { return error }
        }
        let syntax = error("{\n  \"log\": x\n}")
        XCTAssertEqual(syntax?.line, 2)
        XCTAssertEqual(syntax?.column, 10)
        XCTAssertTrue(syntax?.description.contains("line 2, column 10") ?? false)
        XCTAssertEqual(error(""), .notJSON(JSONSyntaxError(line: 1, column: 1, message: "expected a JSON value, found end of input")))
        XCTAssertEqual(error("[1]"), .notHAR("the top level is an array, not an object with \"log\""))
        XCTAssertEqual(error("{\"log\": []}"), .notHAR("\"log\" is an array, not an object"))
        XCTAssertEqual(error("{\"log\": {\"entries\": {}}}"), .notHAR("\"log.entries\" is an object, not an array"))
        XCTAssertNil(error("\u{FEFF}{\"log\": {\"entries\": []}}"))
        XCTAssertNotNil(error("\u{FEFF}\u{FEFF}{}"))
    }

    // MARK: Charsets

    /// mitmproxy's infer_content_encoding, case by case (mitmproxy/net/http/headers.py).
    func testCharsetRulesFollowMitmproxyAndTheDeclaredCharset() {
        let html = Array("<html><head><META http-equiv=x content='text/html; charset=UTF-8'></head>".utf8)
        let cases: [(String?, [UInt8]?, HARCharset)] = [
            (nil, nil, .latin1), ("", nil, .latin1), ("application/octet-stream", nil, .latin1), ("text/plain", nil, .latin1),
            ("text/plain; charset=utf-8", nil, .utf8), ("text/plain;charset=UTF8", nil, .utf8),
            ("text/plain; charset=ISO-8859-1", nil, .latin1), ("text/plain; charset=us-ascii", nil, .ascii),
            ("application/json", nil, .utf8), ("application/problem+json", nil, .utf8), ("application/x-json-stream", nil, .utf8),
            ("text/plain; Charset=utf-8", nil, .latin1), // mitmproxy's parameter names are case-sensitive
            ("text/plain; charset=\"utf-8\"", nil, .utf8), // its values keep their quotes, which Python's codec lookup drops
            ("text/plain; charset=utf-8; charset=latin-1", nil, .latin1), // the last one wins, as in a dict
            ("nonsense; charset=utf-8", nil, .latin1), // no type/subtype: no parameters
            ("text/plain; charset=shift_jis", nil, .other("shift_jis")),
            ("text/html", nil, .latin1), ("text/html", html, .utf8), ("text/html", Array("<meta charset=\"koi8-r\">".utf8), .other("koi8-r")),
            ("text/css", Array("@charset \"utf-8\"; body {}".utf8), .utf8), ("text/css", Array(" @charset \"utf-8\";".utf8), .latin1),
        ]
        for (contentType, body, expected) in cases {
            XCTAssertEqual(HARCharset.mitmproxy(contentType, body: body), expected, "\(contentType ?? "nil") \(body.map { String(decoding: $0, as: UTF8.self) } ?? "")")
        }
        XCTAssertEqual(HARCharset.declared("text/plain; Charset=\"UTF-8\""), .utf8)
        XCTAssertEqual(HARCharset.declared("text/plain; charset=latin1"), .latin1)
        XCTAssertNil(HARCharset.declared("application/json"))
        XCTAssertEqual(HARCharset.named("ISO_8859-1:1987"), .latin1)
        XCTAssertEqual(HARCharset.latin1.encode("café"), [0x63, 0x61, 0x66, 0xE9])
        XCTAssertNil(HARCharset.latin1.encode("€"))
        XCTAssertNil(HARCharset.ascii.encode("é"))
        XCTAssertEqual(HARCharset.latin1Text([0x00, 0x41, 0xFF]).unicodeScalars.map(\.value), [0, 0x41, 0xFF])
    }

    /// The body forms the export chooses: every stored byte comes back.
    func testExportedBodyFormsRoundTripEveryByte() throws {
        let all = [UInt8](0...255)
        let cases: [(String?, [UInt8], String?)] = [
            // (request Content-Type, body, the postData _encoding expected)
            ("application/octet-stream", all, "latin-1"), (nil, all, "latin-1"), ("text/plain", Array("café".utf8), "latin-1"),
            ("application/json", Array(#"{"a":"é✓"}"#.utf8), nil), ("text/plain; charset=utf-8", Array("é✓".utf8), nil),
            ("application/json", [0x7B, 0xFF, 0x7D], "base64"), ("text/plain; charset=shift_jis", [0x82, 0xA0], "base64"),
            ("text/plain", Array("plain ascii\n".utf8), nil),
        ]
        var entries: [NetworkEntry] = []
        for (i, (contentType, body, _)) in cases.enumerated() {
            var e = NetworkEntry(source: .manual, startedAt: 1_700_000_000, method: "POST", url: "https://example.com/\(i)")
            if let contentType { e.requestHeaders = [Header("Content-Type", contentType)] }
            e.requestBody = Body(payload: .stored(body), size: body.count, mimeType: mediaType(contentType))
            e.state = .complete
            e.status = 200
            if let contentType { e.responseHeaders = [Header("Content-Type", contentType)] }
            e.responseBody = e.requestBody
            entries.append(e)
        }
        let document = HARExport.document(entries, creator: (name: "pincer", version: "test"))
        let list = try XCTUnwrap(JSON.parse(bytes: document)["log"]?["entries"]?.arrayValue)
        for (i, (contentType, _, expected)) in cases.enumerated() {
            XCTAssertEqual(list[i]["request"]?["postData"]?["_encoding"]?.stringValue, expected, "\(contentType ?? "nil")")
        }
        let back = try HARImport.read(document)
        XCTAssertEqual(back.entries.map { $0.requestBody.bytes }, entries.map { $0.requestBody.bytes })
        XCTAssertEqual(back.entries.map { $0.responseBody.bytes }, entries.map { $0.responseBody.bytes })
        // Responses are text only where no reader can take other bytes from it.
        XCTAssertEqual(list.map { $0["response"]?["content"]?["encoding"]?.stringValue },
                       ["base64", "base64", "base64", nil, nil, "base64", "base64", nil])
    }

    /// mitmproxy writes binary and unlabelled bodies as latin-1 text; a file
    /// it created is read with its rule, other files with the declared charset or UTF-8.
    func testImportReadsMitmproxyLatin1Text() throws {
        let all = [UInt8](0...255)
        func har(creator: String) -> [UInt8] {
            let latin1 = JSON.quote(HARCharset.latin1Text(all))
            return Array("""
            {"log": {"version": "1.2", "creator": {"name": \(JSON.quote(creator)), "version": "11.0.2"}, "entries": [
              {"startedDateTime": "2024-01-02T03:04:05+00:00", "time": 1,
               "request": {"method": "POST", "url": "http://127.0.0.1:8080/upload", "httpVersion": "HTTP/1.1",
                           "headers": [{"name": "Content-Type", "value": "application/octet-stream"}],
                           "postData": {"mimeType": "application/octet-stream", "text": \(latin1), "params": []}},
               "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                            "headers": [{"name": "Content-Type", "value": "text/plain"}],
                            "content": {"size": 4, "mimeType": "text/plain", "text": "caf\\u00e9"}}},
              {"startedDateTime": "2024-01-02T03:04:05+00:00", "time": 1,
               "request": {"method": "POST", "url": "http://127.0.0.1:8080/json", "httpVersion": "HTTP/1.1",
                           "headers": [{"name": "Content-Type", "value": "application/json"}],
                           "postData": {"mimeType": "application/json", "text": "{\\"a\\":\\"\\u00e9\\"}"}},
               "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                            "headers": [{"name": "Content-Type", "value": "text/html"}],
                            "content": {"size": 30, "mimeType": "text/html", "text": "<meta charset=utf-8>\\u00e9"}}}
            ]}}
            """.utf8)
        }
        let mitm = try HARImport.read(har(creator: "mitmproxy"))
        XCTAssertEqual(mitm.entries[0].requestBody.bytes, all, "latin-1 text, one byte per character")
        XCTAssertEqual(mitm.entries[0].requestBody.size, 256)
        XCTAssertEqual(mitm.entries[0].responseBody.bytes, [0x63, 0x61, 0x66, 0xE9], "unlabelled text/plain is latin-1 to mitmproxy")
        XCTAssertEqual(mitm.entries[1].requestBody.bytes, Array(#"{"a":"é"}"#.utf8), "JSON is UTF-8")
        XCTAssertEqual(mitm.entries[1].responseBody.bytes, Array("<meta charset=utf-8>é".utf8), "the HTML names its charset")
        XCTAssertTrue(mitm.entries.allSatisfy { $0.notes.isEmpty }, "\(mitm.entries.map(\.notes))")

        let other = try HARImport.read(har(creator: "WebInspector"))
        XCTAssertEqual(other.entries[0].requestBody.bytes, Array(HARCharset.latin1Text(all).utf8), "other writers: UTF-8")
        XCTAssertEqual(other.entries[0].responseBody.bytes, Array("café".utf8))
    }

    // MARK: Round trip

    func testRoundTrip() throws {
        let entries = harSampleEntries()
        let result = try HARImport.read(HARExport.document(entries, creator: (name: "Pincer", version: "1")))
        XCTAssertEqual(result.skipped.count, 0)
        XCTAssertEqual(result.entries.count, entries.count)
        for (original, back) in zip(entries, result.entries) {
            let label = original.url
            XCTAssertEqual(back.method, original.method, label)
            XCTAssertEqual(back.url, URIText.escaped(original.url), label)
            XCTAssertEqual(back.httpVersion, original.httpVersion, label)
            XCTAssertEqual(back.requestHeaders, original.requestHeaders, label)
            XCTAssertEqual(back.requestBody.payload, original.requestBody.payload, label)
            XCTAssertEqual(back.requestBody.size, original.requestBody.size, label)
            let started = original.startedAt.isFinite ? (original.startedAt * 1000).rounded() / 1000 : 0
            XCTAssertEqual(back.startedAt, started, accuracy: 1e-6, label)
            XCTAssertEqual(back.stubbed, original.stubbed, label)
            XCTAssertEqual(back.notes, original.notes, label)
            XCTAssertEqual(back.serverIP, original.serverIP.flatMap(IPAddress.normalized), label)
            let t = original.timings.harNormalized
            XCTAssertEqual(back.timings.blocked, t.blocked, label)
            XCTAssertEqual(back.timings.connect, t.connect, label)
            XCTAssertEqual(back.timings.ssl, t.ssl, label)
            XCTAssertEqual(back.timings.wait, t.wait, label)
            XCTAssertEqual(back.duration, t.total, accuracy: 1e-9, label)
            if original.state == .complete {
                XCTAssertEqual(back.state, .complete, label)
                XCTAssertEqual(back.status, original.status, label)
                XCTAssertEqual(back.statusText, original.statusText, label)
                XCTAssertEqual(back.responseHeaders, original.responseHeaders, label)
                XCTAssertEqual(back.responseBody.payload, original.responseBody.payload, label)
                XCTAssertEqual(back.responseBody.size, original.responseBody.size, label)
                XCTAssertEqual(back.redirectURL, original.redirectURL, label)
                XCTAssertEqual(back.error, original.error, label)
            } else {
                XCTAssertEqual(back.state, .failed, label)
                XCTAssertNil(back.status, label)
                XCTAssertEqual(back.error, original.error ?? "no response yet (the request was still pending)", label)
            }
        }
        // A second trip changes nothing.
        let again = try HARImport.read(HARExport.document(result.entries, creator: (name: "Pincer", version: "1")))
        XCTAssertEqual(again.entries, result.entries)
    }

    // MARK: Text

    func testTextExport() {
        let entries = harSampleEntries()
        let text = TextExport.render(entries[0])
        XCTAssertTrue(text.hasPrefix("#1 GET https://api.example.com/v1/items?"), text)
        XCTAssertTrue(text.contains("> Accept: application/json\n"))
        XCTAssertTrue(text.contains("< 200 OK  (137.3 ms)\n"), text)
        XCTAssertTrue(text.contains("{\"ok\":true,\"name\":\"café\"}\n"))
        XCTAssertTrue(text.contains("timings (ms): blocked 1.5  dns 2.0  connect 30.0 (ssl 20.0)  send 0.5  wait 100.3  receive 3.0  total 137.3"), text)
        XCTAssertTrue(TextExport.render(entries[2]).contains("(\(harPNGBytes.count) bytes of binary data, not shown)"))
        XCTAssertTrue(TextExport.render(entries[7]).contains("\n<\ncafé\n"), "declared latin-1 is shown as text")
        XCTAssertTrue(TextExport.render(entries[3]).contains("< (failed: The Internet connection appears to be offline.)"))
        XCTAssertTrue(TextExport.render(entries[4]).contains("< (pending: no response yet)"))
        let withheld = TextExport.render(entries[5])
        XCTAssertTrue(withheld.contains("(5000000 bytes, withheld: over the 1 MiB per-body cap)"), withheld)
        XCTAssertTrue(withheld.contains("(1234 bytes, skipped: a metadata-only capture rule matched)"), withheld)
        let odd = TextExport.render(entries[6])
        XCTAssertTrue(odd.contains("notes:\n  - response stubbed by test\n"), odd)
        XCTAssertTrue(odd.contains("> X-Control: a\\u{1B}[31mred\\u{7}"), odd)
        XCTAssertTrue(TextExport.render(entries[8]).contains("redirect to https://example.com/next"))
    }
}

// MARK: - Sample entries

private let harPNGBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0xFF, 0xFE, 0x00, 0x80]

private func harSampleEntries() -> [NetworkEntry] {
    var list: [NetworkEntry] = []

    var e = NetworkEntry(source: .captured, startedAt: 1_700_000_000.123, method: "GET",
                         url: "https://api.example.com/v1/items?q=caf%C3%A9&page=2&flag&empty=&plus=a+b#frag")
    e.id = 1
    e.requestHeaders = [Header("Accept", "application/json"), Header("Cookie", "session=[redacted]; theme=dark")]
    e.state = .complete
    e.status = 200
    e.statusText = "OK"
    e.responseHeaders = [Header("Content-Type", "application/json; charset=utf-8"),
                         Header("Set-Cookie", "id=abc; Path=/; Domain=example.com; HttpOnly; Secure; Expires=Wed, 21 Oct 2026 07:28:00 GMT")]
    e.responseBody = Body(payload: .stored(Array(#"{"ok":true,"name":"café"}"#.utf8)), size: 26, mimeType: "application/json")
    e.timings.blocked = 1.5
    e.timings.dns = 2
    e.timings.connect = 30
    e.timings.ssl = 20
    e.timings.send = 0.5
    e.timings.wait = 100.25
    e.timings.receive = 3
    e.serverIP = "93.184.216.34"
    list.append(e)

    e = NetworkEntry(source: .manual, startedAt: 1_700_000_001, method: "POST", url: "https://example.com/form")
    e.id = 2
    let form = "name=J%C3%B6rg+M&city=&tag=a%26b"
    e.requestHeaders = [Header("Content-Type", "application/x-www-form-urlencoded")]
    e.requestBody = Body(payload: .stored(Array(form.utf8)), size: form.utf8.count, mimeType: "application/x-www-form-urlencoded")
    e.state = .complete
    e.status = 204
    e.serverIP = "[2001:db8::1]"
    e.httpVersion = "HTTP/2"
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_002.5, method: "PUT", url: "https://example.com/image.png")
    e.requestHeaders = [Header("Content-Type", "image/png")]
    e.requestBody = Body(payload: .stored(harPNGBytes), size: harPNGBytes.count, mimeType: "image/png")
    e.state = .complete
    e.status = 200
    e.statusText = "OK"
    e.responseHeaders = [Header("Content-Type", "image/png")]
    e.responseBody = Body(payload: .stored(harPNGBytes), size: harPNGBytes.count, mimeType: "image/png")
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_003, method: "GET", url: "https://offline.example.com/")
    e.state = .failed
    e.error = "The Internet connection appears to be offline."
    e.serverIP = ""
    e.timings.blocked = 4
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_004, method: "GET", url: "https://slow.example.com/")
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_005, method: "POST", url: "https://example.com/upload")
    e.requestHeaders = [Header("Content-Type", "application/json")]
    e.requestBody = Body(payload: .withheld(reason: "over the 1 MiB per-body cap"), size: 5_000_000, mimeType: "application/json")
    e.state = .complete
    e.status = 200
    e.responseHeaders = [Header("Content-Type", "application/json")]
    e.responseBody = Body(payload: .skipped, size: 1234, mimeType: "application/json")
    e.notes = ["request body withheld: over the 1 MiB per-body cap"]
    list.append(e)

    e = NetworkEntry(source: .manual, startedAt: .nan, method: "DELETE",
                     url: "http://[::1]:8080/a b/[x]?q=\"quoted\"&u=ü|{}%zz#f#g")
    e.requestHeaders = [Header("X-Control", "a\u{1B}[31mred\u{07}")]
    e.state = .complete
    e.status = 500
    e.statusText = "Internal Server Error"
    e.responseBody = Body(payload: .dropped, size: 99, mimeType: "")
    e.serverIP = "not-an-ip"
    e.stubbed = true
    e.notes = ["response stubbed by test", "second note"]
    e.timings.blocked = .nan
    e.timings.dns = -5
    e.timings.ssl = 12
    e.timings.send = -1
    e.timings.wait = .infinity
    e.timings.receive = 0.125
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_007, method: "GET", url: "https://example.com/latin1.txt")
    e.state = .complete
    e.status = 200
    e.responseHeaders = [Header("Content-Type", "text/plain; charset=iso-8859-1")]
    e.responseBody = Body(payload: .stored([0x63, 0x61, 0x66, 0xE9]), size: 4, mimeType: "text/plain")
    list.append(e)

    e = NetworkEntry(source: .captured, startedAt: 1_700_000_008, method: "HEAD", url: "http://example.com/old")
    e.state = .complete
    e.status = 301
    e.statusText = "Moved Permanently"
    e.responseHeaders = [Header("Location", "https://example.com/next")]
    e.redirectURL = "https://example.com/next"
    e.serverIP = "127.0.0.1"
    list.append(e)
    return list
}

// MARK: - Checks

/// The HAR rules the schema does not check (see the fixtures README).
func harCheckRulesTheSchemaMisses(_ json: JSON, entryCount: Int, file: StaticString = #filePath, line: UInt = #line) throws {
    let log = try XCTUnwrap(json["log"], file: file, line: line)
    XCTAssertEqual(log["version"]?.stringValue, "1.2", file: file, line: line)
    XCTAssertEqual(log["pages"]?.arrayValue?.count ?? 0, 0, file: file, line: line)
    let entries = try XCTUnwrap(log["entries"]?.arrayValue, file: file, line: line)
    XCTAssertEqual(entries.count, entryCount, file: file, line: line)
    for (i, entry) in entries.enumerated() {
        let label = "entry \(i)"
        XCTAssertNil(entry["pageref"], label, file: file, line: line)
        let timings = try XCTUnwrap(entry["timings"], label, file: file, line: line)
        var sum = 0.0
        for key in ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"] {
            let v = try XCTUnwrap(timings[key]?.doubleValue, "\(label) timings.\(key)", file: file, line: line)
            XCTAssertTrue(v.isFinite, label, file: file, line: line)
            if ["send", "wait", "receive"].contains(key) {
                XCTAssertGreaterThanOrEqual(v, 0, "\(label) \(key)", file: file, line: line)
            } else {
                XCTAssertTrue(v == -1 || v >= 0, "\(label) \(key) = \(v)", file: file, line: line)
            }
            if key != "ssl" && v != -1 { sum += v }
        }
        let ssl = timings["ssl"]!.doubleValue!, connect = timings["connect"]!.doubleValue!
        if ssl >= 0 { XCTAssertGreaterThanOrEqual(connect, ssl, "\(label): ssl is part of connect", file: file, line: line) }
        let time = try XCTUnwrap(entry["time"]?.doubleValue, file: file, line: line)
        XCTAssertEqual(time, sum, accuracy: max(1e-9, sum * 1e-12), "\(label): time is the sum of the timings", file: file, line: line)
        if let ip = entry["serverIPAddress"] {
            XCTAssertFalse(ip.stringValue?.isEmpty ?? true, label, file: file, line: line)
        }
        let request = try XCTUnwrap(entry["request"], file: file, line: line)
        XCTAssertEqual(request["headersSize"]?.int64Value, -1, label, file: file, line: line)
        XCTAssertGreaterThanOrEqual(request["bodySize"]?.int64Value ?? -1, 0, label, file: file, line: line)
        if let post = request["postData"] {
            XCTAssertNotNil(post["mimeType"]?.stringValue, label, file: file, line: line)
            for param in post["params"]?.arrayValue ?? [] {
                XCTAssertNotNil(param["name"]?.stringValue, "\(label) params need a name", file: file, line: line)
                if let value = param["value"] { XCTAssertNotNil(value.stringValue, label, file: file, line: line) }
            }
            harCheckBody(post, label: label + " postData", file: file, line: line)
        }
        let response = try XCTUnwrap(entry["response"], file: file, line: line)
        let content = try XCTUnwrap(response["content"], file: file, line: line)
        harCheckBody(content, label: label + " content", file: file, line: line)
        XCTAssertNotNil(entry["cache"]?.objectValue, label, file: file, line: line)
        if response["status"]?.int64Value == 0 {
            XCTAssertEqual(response["statusText"]?.stringValue, "", label, file: file, line: line)
            XCTAssertEqual(content["size"]?.int64Value, 0, label, file: file, line: line)
            XCTAssertEqual(content["mimeType"]?.stringValue, "x-unknown", label, file: file, line: line)
            XCTAssertFalse(response["_error"]?.stringValue?.isEmpty ?? true, "\(label) needs _error", file: file, line: line)
        }
    }
}

private func harCheckBody(_ json: JSON, label: String, file: StaticString, line: UInt) {
    if json["_bodyWithheld"] != nil {
        // postData needs text (HAR 1.2, and mitmproxy refuses the file without it); content may omit it.
        XCTAssertEqual(json["text"]?.stringValue ?? "", "", "\(label): a withheld body has no bytes", file: file, line: line)
        XCTAssertNotNil(json["_bodyState"]?.stringValue, label, file: file, line: line)
        XCTAssertFalse(json["comment"]?.stringValue?.isEmpty ?? true, "\(label): the comment says why", file: file, line: line)
    }
    if label.hasSuffix("postData") {
        XCTAssertNotNil(json["text"]?.stringValue, "\(label): HAR 1.2 requires postData.text", file: file, line: line)
        XCTAssertNil(json["encoding"], "\(label): HAR 1.2 defines no postData.encoding", file: file, line: line)
    }
    if let encoding = json["encoding"] {
        XCTAssertEqual(encoding.stringValue, "base64", label, file: file, line: line)
        XCTAssertNotNil(json["text"]?.stringValue.flatMap { Base64.decode($0) }, "\(label): base64 text", file: file, line: line)
    }
}

// MARK: - Helpers

/// A folder of ../shared/fixtures; the test fails when the shared fixtures
/// are not beside the checkout (a skip would pass a suite that checked nothing).
private func harShared(_ folder: String) throws -> String {
    let path = URL(fileURLWithPath: Consumer.shared + "/" + folder).standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: path) else { throw Consumer.Missing(tool: path) }
    return path
}

var harFixtureDirectory: String { get throws { try harShared("har") } }

var harSchemaDirectory: String { get throws { try harShared("har-schema") } }

/// Counts log.entries with Foundation, independently of PincerJSON; nil when
/// the file is not JSON or has no log.entries array.
private func harIndependentEntryCount(_ bytes: [UInt8]) -> Int? {
    var data = Data(bytes)
    if data.starts(with: [0xEF, 0xBB, 0xBF]) { data = data.dropFirst(3) }
    guard let root = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any],
          let log = root["log"] as? [String: Any], let entries = log["entries"] as? [Any] else { return nil }
    return entries.count
}

private func harISOSeconds(_ text: String) throws -> Double {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return try XCTUnwrap(formatter.date(from: text)).timeIntervalSince1970
}

private func harJSONString(_ s: String) -> String { JSON.quote(s) }

private func harTemporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "/har-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private struct HARProcessOutput {
    let status: Int32
    let output: String
}

private func harRunProcess(_ executable: String, _ arguments: [String]) throws -> HARProcessOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return HARProcessOutput(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}

/// Validates HAR files with python3-jsonschema (draft-06, the schema's
/// `$id`s mapped to its files, format checker for ipv4/ipv6/uri).
func harValidateWithSchema(_ paths: [String], file: StaticString = #filePath, line: UInt = #line) throws {
    let result = try harRunProcess(Consumer.require(Consumer.debianPython), [harValidatorScript(), harSchemaDirectory] + paths)
    XCTAssertEqual(result.status, 0, "schema validation failed:\n\(result.output)", file: file, line: line)
}

private func harValidatorScript() throws -> String {
    let path = harTemporaryDirectory() + "/validate_har.py"
    try """
    import glob, json, os, sys
    from jsonschema import Draft6Validator, FormatChecker, RefResolver
    schema_dir = sys.argv[1]
    store = {}
    for f in glob.glob(os.path.join(schema_dir, '*.json')):
        with open(f) as fh:
            s = json.load(fh)
        store[s['$id']] = s
        store[s['$id'].split('#')[0]] = s
    root = store['har.json']
    checker = FormatChecker()
    assert 'ipv4' in checker.checkers and 'ipv6' in checker.checkers, 'no ip format checkers'
    validator = Draft6Validator(root, resolver=RefResolver(base_uri='har.json', referrer=root, store=store),
                                format_checker=checker)
    bad = 0
    for path in sys.argv[2:]:
        with open(path, encoding='utf-8') as fh:
            doc = json.load(fh)
        assert len(doc['log']['entries']) >= 0
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            print('%s: /%s: %s' % (os.path.basename(path), '/'.join(map(str, e.absolute_path)), e.message[:300]))
        bad += 1 if errors else 0
    print('%d of %d documents valid' % (len(sys.argv) - 2 - bad, len(sys.argv) - 2))
    sys.exit(1 if bad else 0)
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}
