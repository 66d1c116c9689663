@testable import PincerJSON
import PincerPluginKit
import XCTest
@testable import NetworkLog

/// The streaming writer (JSONWriter), the eight-bytes-at-a-time string
/// quoting and the in-place numbers against the tree writer and simple
/// references; the packed headers (HeaderList) against `[Header]`.
final class JSONWriterTests: XCTestCase {
    /// The quoting before it went eight bytes at a time: one byte per step.
    private func referenceQuote(_ s: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case UInt8(ascii: "\n"): out += Array("\\n".utf8)
            case UInt8(ascii: "\r"): out += Array("\\r".utf8)
            case UInt8(ascii: "\t"): out += Array("\\t".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    /// Strings of every length up to 80 (the word loop's edges at 8, 16...),
    /// mixing plain ASCII, UTF-8, quotes, backslashes and every control byte
    /// at every position, and long runs of escapes (the room-growing path).
    private func strings() -> [String] {
        var random = SeededRandom(seed: 17)
        let pieces: [String] = ["a", "Z", "é", "€", "😀", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", " ", "~", "\u{7F}"]
        var out: [String] = ["", "\"", "\\", String(repeating: "\"", count: 1000), String(repeating: "\u{1}", count: 3000),
                             String(repeating: "x", count: 5000) + "\u{2}"]
        for length in 0...80 {
            for _ in 0..<20 {
                var s = ""
                for _ in 0..<length { s += pieces[Int(random.next() % UInt64(pieces.count))] }
                out.append(s)
            }
        }
        for c in 0..<0x20 {
            for at in 0..<17 { out.append(String(repeating: "p", count: at) + String(UnicodeScalar(UInt8(c))) + "tail-of-text") }
        }
        return out
    }

    func testQuoteMatchesTheByteByByteReference() {
        for s in strings() {
            let want = referenceQuote(s)
            XCTAssertEqual(Array(JSON.quote(s).utf8), want, "quote of \(s.debugDescription)")
            // Appending to bytes already there keeps them.
            var out: [UInt8] = Array("prefix".utf8)
            JSON.quote(s, into: &out)
            XCTAssertEqual(out, Array("prefix".utf8) + want)
            var w = JSONWriter()
            w.string(s)
            XCTAssertEqual(w.finish(), want)
        }
    }

    func testNeedsEscapeIsExactForEveryByteInEveryLane() {
        for b in 0...255 {
            for lane in 0..<8 {
                let word = (UInt64(0x61) &* 0x0101_0101_0101_0101) & ~(UInt64(0xFF) << (8 * lane)) | UInt64(b) << (8 * lane)
                let expected = b < 0x20 || b == 0x22 || b == 0x5C
                XCTAssertEqual(JSON.needsEscape(word), expected, "byte \(b) in lane \(lane)")
            }
        }
    }

    func testNumbersAsTheTreeWritesThem() {
        let ints: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 123_456_789, Int64.max, Int64.min, Int64.min + 1]
        for i in ints {
            XCTAssertEqual(JSON.int(i).serialized(), String(i))
            var w = JSONWriter()
            w.int(i)
            XCTAssertEqual(String(decoding: w.finish(), as: UTF8.self), String(i))
        }
        for u: UInt64 in [0, 7, UInt64.max] {
            XCTAssertEqual(JSON.uint(u).serialized(), String(u))
        }
        let doubles: [Double] = [0, -0.0, 1, -3, 20, 0.1, 1.5e-7, 123_456_789_012_345, 999_999_999_999_999, 1e15, 1e16, -1e300,
                                 .pi, .infinity, -.infinity, .nan, 4_503_599_627_370_496, 0.25, Double.leastNonzeroMagnitude]
        for d in doubles {
            let want = d.isFinite ? String(d) : "null"
            XCTAssertEqual(JSON.double(d).serialized(), want, "\(d)")
            var w = JSONWriter()
            w.double(d)
            XCTAssertEqual(String(decoding: w.finish(), as: UTF8.self), want, "\(d)")
        }
    }

    /// A random tree written through the writer's calls gives what the
    /// tree writer gives.
    func testWriterMatchesTheTreeWriter() {
        var random = SeededRandom(seed: 4)
        let texts = strings()
        func tree(_ depth: Int) -> JSON {
            switch random.next() % (depth > 3 ? 6 : 8) {
            case 0: return .null
            case 1: return .bool(random.next() % 2 == 0)
            case 2: return .int(Int64(bitPattern: random.next()) >> (random.next() % 63))
            case 3: return .uint(random.next())
            case 4: return .double(Double(bitPattern: random.next()))
            case 5: return .string(texts[Int(random.next() % UInt64(texts.count))])
            case 6: return .array((0..<Int(random.next() % 5)).map { _ in tree(depth + 1) })
            default:
                return .object((0..<Int(random.next() % 5)).map { _ in (texts[Int(random.next() % UInt64(texts.count))], tree(depth + 1)) })
            }
        }
        func emit(_ json: JSON, _ w: inout JSONWriter) {
            switch json {
            case .null: w.null()
            case .bool(let b): w.bool(b)
            case .int(let i): w.int(i)
            case .uint(let u): w.uint(u)
            case .double(let d): w.double(d)
            case .string(let s): w.string(s)
            case .array(let items):
                w.beginArray()
                for item in items { emit(item, &w) }
                w.endArray()
            case .object(let fields):
                w.beginObject()
                for (key, value) in fields {
                    w.key(key)
                    emit(value, &w)
                }
                w.endObject()
            }
        }
        for _ in 0..<300 {
            let t = tree(0)
            var w = JSONWriter(capacity: Int(random.next() % 100))
            emit(t, &w)
            XCTAssertEqual(w.finish(), t.serializedBytes())
            var v = JSONWriter()
            v.beginArray()
            v.value(t)
            v.value(t)
            v.endArray()
            XCTAssertEqual(v.finish(), JSON.array([t, t]).serializedBytes())
        }
    }

    func testHeaderListKeepsEveryHeaderInOrder() {
        let lists: [[Header]] = [
            [],
            [Header("", "")],
            [Header("Content-Type", "application/json"), Header("content-type", "text/plain"), Header("X-Empty", "")],
            [Header("X-Long", String(repeating: "v", count: 200)), Header(String(repeating: "n", count: 128), "é😀")],
            [Header("X-Huge", String(repeating: "w", count: 70_000))],
        ]
        for headers in lists {
            let packed = HeaderList(headers)
            XCTAssertEqual(packed.headers, headers)
            XCTAssertEqual(packed.isEmpty, headers.isEmpty)
            for name in ["content-type", "CONTENT-TYPE", "X-Empty", "x-long", "missing", "", "é"] {
                XCTAssertEqual(packed.first(name), headers.first(name), "first(\(name))")
            }
            var e = NetworkEntry(source: .manual, startedAt: 0, method: "GET", url: "https://a/")
            e.requestHeaders = headers
            XCTAssertEqual(e.requestHeaders, headers)
            XCTAssertEqual(e.requestHeaderList, packed)
        }
        let mixed = [Header("Cookie", "a=1"), Header("X", "y"), Header("cookie", "b=2"), Header("\u{212A}ookie", "k"), Header("COOKIES", "no")]
        XCTAssertEqual(HeaderList(mixed).all(named: "cookie"), mixed.filter { $0.name.lowercased() == "cookie" })
        XCTAssertEqual(HeaderList(mixed).all(named: "Set-Cookie"), [])
        // A non-ASCII name that lowercases to an ASCII one is found as [Header].first finds it.
        let kelvin = [Header("\u{212A}ey", "kelvin"), Header("key", "ascii")]
        XCTAssertEqual(HeaderList(kelvin).first("key"), kelvin.first("key"))
        // Equal as String equality says: a precomposed and a decomposed é.
        XCTAssertEqual(HeaderList([Header("n", "\u{E9}")]), HeaderList([Header("n", "e\u{301}")]))
        XCTAssertNotEqual(HeaderList([Header("n", "a")]), HeaderList([Header("n", "b")]))
    }

    func testCommonMediaTypesAreInterned() {
        let built = String(decoding: Array("application/json".utf8), as: UTF8.self)
        var body = Body(payload: .none, size: 0, mimeType: built)
        XCTAssertEqual(body.mimeType, "application/json")
        body.mimeType = String(decoding: Array("application/x-www-form-urlencoded".utf8), as: UTF8.self)
        XCTAssertEqual(body.mimeType, "application/x-www-form-urlencoded")
        body.mimeType = "text/x-uncommon-type-of-text"
        XCTAssertEqual(body.mimeType, "text/x-uncommon-type-of-text")
    }
}

/// An entry's JSON (the persisted log's rows, `net.entry`) and a HAR entry,
/// now written through JSONWriter, against the trees they were built as.
final class EntryWriterTests: XCTestCase {
    /// The tree NetworkEntry.json built before it was written directly.
    private func referenceTree(_ e: NetworkEntry) -> JSON {
        func headers(_ hs: [Header]) -> JSON { .array(hs.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) }) }
        func body(_ b: Body) -> JSON {
            var fields: [(String, JSON)] = [("size", .int(Int64(b.size))), ("mimeType", .string(b.mimeType))]
            switch b.payload {
            case .none: fields.append(("payload", .string("none")))
            case .stored(let bytes):
                fields.append(("payload", .string("stored")))
                if let text = String(validating: bytes, as: UTF8.self) { fields.append(("text", .string(text))) } else {
                    fields.append(("base64", .string(Base64.encode(bytes))))
                }
            case .withheld(let reason): fields += [("payload", .string("withheld")), ("reason", .string(reason))]
            case .skipped: fields.append(("payload", .string("skipped")))
            case .dropped: fields.append(("payload", .string("dropped")))
            }
            return .object(fields)
        }
        let t = e.timings
        return .object([
            ("id", .uint(e.id)), ("source", .string(e.source.rawValue)), ("state", .string(e.state.rawValue)),
            ("method", .string(e.method)), ("url", .string(e.url)), ("httpVersion", .string(e.httpVersion)),
            ("startedAt", .double(e.startedAt)), ("recordedAt", .double(e.recordedAt)), ("duration", .double(e.duration)),
            ("status", e.status.map { .int(Int64($0)) } ?? .null), ("statusText", .string(e.statusText)),
            ("requestHeaders", headers(e.requestHeaders)), ("requestBody", body(e.requestBody)),
            ("responseHeaders", headers(e.responseHeaders)), ("responseBody", body(e.responseBody)),
            ("redirectURL", .string(e.redirectURL)), ("error", e.error.map(JSON.string) ?? .null),
            ("serverIP", e.serverIP.map(JSON.string) ?? .null), ("stubbed", .bool(e.stubbed)),
            ("timings", .object([("blocked", .double(t.blocked)), ("dns", .double(t.dns)), ("connect", .double(t.connect)), ("ssl", .double(t.ssl)),
                                 ("send", .double(t.send)), ("wait", .double(t.wait)), ("receive", .double(t.receive))])),
            ("notes", .array(e.notes.map(JSON.string))),
        ])
    }

    private func entries() -> [NetworkEntry] {
        var out: [NetworkEntry] = []
        var a = NetworkEntry(source: .captured, startedAt: 1_750_000_000.25, method: "POST", url: "https://api.example.com/v2/x?q=\"a b\"&k=é")
        a.id = 42
        a.recordedAt = 1_750_000_001.5
        a.requestHeaders = [Header("Content-Type", "application/json; charset=utf-8"), Header("Cookie", "s=1; t=2"), Header("X-Ctl", "a\u{1}\tb")]
        a.requestBody = Body(payload: .stored(Array(#"{"password":"[REDACTED]","n":1}"#.utf8)), size: 40, mimeType: "application/json")
        a.state = .complete
        a.status = 201
        a.statusText = "Created"
        a.responseHeaders = [Header("Set-Cookie", "id=9; Path=/; HttpOnly"), Header("Content-Type", "image/png")]
        a.responseBody = Body(payload: .stored([0x89, 0x50, 0xFF, 0x00, 0x0A]), size: 5, mimeType: "image/png")
        a.serverIP = "93.184.216.34"
        a.stubbed = true
        a.timings.blocked = 0.5
        a.timings.wait = 20
        a.timings.receive = .nan
        a.notes = ["request body withheld: \"why\""]
        out.append(a)
        var b = NetworkEntry(source: .imported, startedAt: 0, method: "GET", url: "http://[::1]:8080/")
        b.state = .failed
        b.error = "The request timed out."
        b.requestBody = Body(payload: .withheld(reason: "larger than the 1 MiB body cap"), size: 2 << 20, mimeType: "text/plain")
        b.responseBody = Body(payload: .dropped, size: 12, mimeType: "")
        out.append(b)
        var c = NetworkEntry(source: .manual, startedAt: -1.5e-7, method: "PUT", url: "https://h/")
        c.state = .pending
        c.requestBody = Body(payload: .skipped, size: 3, mimeType: "application/x-www-form-urlencoded")
        c.requestHeaders = [Header("Content-Type", "application/x-www-form-urlencoded")]
        out.append(c)
        var d = c
        d.requestBody = Body(payload: .stored(Array("a=1&b=%20x+y&c".utf8)), size: 15, mimeType: "application/x-www-form-urlencoded")
        d.responseBody = Body(payload: .stored(Array("caf\u{E9} text".utf8)), size: 10, mimeType: "text/plain")
        d.responseHeaders = [Header("Content-Type", "text/plain; charset=iso-8859-1")]
        d.state = .complete
        d.status = 200
        out.append(d)
        return out
    }

    func testEntryJSONIsWhatTheTreeWrote() throws {
        for e in entries() {
            let want = referenceTree(e).serializedBytes()
            XCTAssertEqual(String(decoding: e.jsonBytes, as: UTF8.self), String(decoding: want, as: UTF8.self))
            XCTAssertEqual(e.json.serializedBytes(), want)
            XCTAssertEqual(e.requestBody.json.serializedBytes(), try XCTUnwrap(referenceTree(e)["requestBody"]).serializedBytes())
            // And it reads back as the same entry (the persisted log's round trip).
            let back = try NetworkEntry(json: JSON.parse(bytes: e.jsonBytes))
            XCTAssertEqual(back.requestHeaders, e.requestHeaders)
            XCTAssertEqual(back.responseHeaders, e.responseHeaders)
            XCTAssertEqual(back.requestBody, e.requestBody)
            XCTAssertEqual(back.url, e.url)
        }
    }

    /// A HAR entry written straight through the writer parses to the same
    /// document as before: the fields of every kind of body and response.
    func testHAREntriesAreValidJSONWithTheirBodies() throws {
        for e in entries() {
            let bytes = HARExport.entryBytes(e)
            let tree = try JSON.parse(bytes: bytes)
            XCTAssertEqual(tree.serializedBytes(), bytes, "the writer's output is the compact form of its tree")
            XCTAssertEqual(HARExport.entryJSON(e), tree)
            let request = try XCTUnwrap(tree["request"])
            XCTAssertEqual(request["headers"]?.arrayValue?.count, e.requestHeaders.count)
            if e.requestHeaders.first("Cookie") != nil { XCTAssertEqual(request["cookies"]?.arrayValue?.count, 2) }
            if case .stored(let bytes) = e.requestBody.payload, bytes.allSatisfy({ $0 < 0x80 }) {
                XCTAssertEqual(request["postData"]?["text"]?.stringValue, String(decoding: bytes, as: UTF8.self))
            }
            if e.state == .complete, let status = e.status {
                XCTAssertEqual(tree["response"]?["status"]?.int64Value, Int64(status))
                if case .stored(let bytes) = e.responseBody.payload, let content = tree["response"]?["content"] {
                    if content["encoding"]?.stringValue == "base64" {
                        XCTAssertEqual(Base64.decode(content["text"]?.stringValue ?? ""), bytes)
                    } else {
                        XCTAssertNotNil(content["text"]?.stringValue)
                    }
                }
            } else {
                XCTAssertEqual(tree["response"]?["status"]?.int64Value, 0)
                XCTAssertNotNil(tree["response"]?["_error"]?.stringValue)
            }
        }
    }
}
