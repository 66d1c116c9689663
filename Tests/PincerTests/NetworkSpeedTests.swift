import Foundation
import PincerJSON
import XCTest
@testable import NetworkLog

/// Issue 17, import at speed: the cached name verdicts and the batched,
/// parallel store path redact exactly what the uncached, one-by-one path
/// does; JSON.validate accepts what JSON.parse accepts; the streamed HAR
/// import is all-or-nothing for the file's syntax and names the entry and
/// its byte offset; clear gives memory back.
final class NetworkSpeedTests: XCTestCase {

    // MARK: cached verdicts = uncached verdicts

    /// Every entry of every shared HAR fixture, stored through a redactor with
    /// the verdict cache and through one without, twice over (the second
    /// pass answers from a warm cache): the stored entries are identical.
    func testCachedVerdictsRedactTheFixturesAsBefore() throws {
        let directory = try harFixtureDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".har") || $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThan(names.count, 5)
        var compared = 0
        for name in names {
            guard let result = try? HARImport.read([UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))) else { continue }
            let cached = NetworkStore(limits: LogLimits(entryLimit: 10_000), redactor: Redactor(extraNames: ["x-custom"]))
            let fresh = NetworkStore(limits: LogLimits(entryLimit: 10_000), redactor: Redactor(extraNames: ["x-custom"], cachingVerdicts: false))
            for _ in 0..<2 {
                cached.add(contentsOf: result.entries)
                for e in result.entries { _ = fresh.add(e) }
            }
            let a = cached.entries().map(Self.comparable), b = fresh.entries().map(Self.comparable)
            XCTAssertEqual(a, b, name)
            compared += a.count
        }
        XCTAssertGreaterThan(compared, 50, "the fixtures hold entries to compare")
    }

    /// Hostile names: escaped key names, keys longer than the cache keeps,
    /// invalid UTF-8 (repaired to U+FFFD in headers and queries), deep
    /// nesting, names that normalise alike but are different bytes, and more
    /// distinct names than the cache holds. Cached and uncached agree, and
    /// the known secrets are gone.
    func testCachedVerdictsOnHostileInput() {
        let cached = Redactor(), fresh = Redactor(extraNames: [], cachingVerdicts: false)
        let long = String(repeating: "k", count: 300)
        var bodies: [String] = [
            #"{"pass\u0077ord":"hunter2","p\u0061ss":"x","tok\u0065n":{"a":[1,2]}}"#,
            #"{"\#(long)password":"s1","\#(long)":"kept","\#(long)Key":"kept2"}"#,
            #"{"api_key":"a","API%5FKEY":"b","ａｐｉ＿ｋｅｙ":"c","apikey":"d","author":"kept"}"#,
            String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
            String(repeating: #"{"a":"#, count: 60) + #"{"secret":"deep"}"# + String(repeating: "}", count: 60),
            #"{"password":"a","password":"dup"}"#,
        ]
        // More distinct keys than the cache keeps: it starts again empty, verdicts stay right.
        var many = "{"
        for i in 0..<(NameVerdicts.maximumEntries + 500) { many += "\"field\(i)\":\(i)," }
        many += #""session_id":"gone"}"#
        bodies.append(many)
        for round in 0..<2 {
            for body in bodies {
                let bytes = Array(body.utf8)
                XCTAssertEqual(cached.body(bytes, contentType: "application/json"), fresh.body(bytes, contentType: "application/json"),
                               "round \(round): \(body.prefix(80))")
            }
        }
        guard case .stored(let escaped) = cached.body(Array(bodies[0].utf8), contentType: "application/json") else { return XCTFail("withheld") }
        XCTAssertFalse(String(decoding: escaped, as: UTF8.self).contains("hunter2"))
        guard case .stored(let longKeys) = cached.body(Array(bodies[1].utf8), contentType: "application/json") else { return XCTFail("withheld") }
        let longText = String(decoding: longKeys, as: UTF8.self)
        XCTAssertFalse(longText.contains("s1"))
        XCTAssertTrue(longText.contains("kept") && longText.contains("kept2"))
        guard case .stored(let manyOut) = cached.body(Array(many.utf8), contentType: "application/json") else { return XCTFail("withheld") }
        XCTAssertFalse(String(decoding: manyOut, as: UTF8.self).contains("gone"))

        let invalid = String(decoding: [0x74, 0x6F, 0x6B, 0xFF, 0x65, 0x6E] as [UInt8], as: UTF8.self) // "tok\u{FFFD}en"
        let headers = [Header("X-Api-Key", "a"), Header("x_api_key", "b"), Header(invalid, "c"), Header("Authorization", "Bearer abcdefgh12345678"),
                       Header("X-\(long)-Key", "d"), Header("Monkey", "kept"), Header("Cookie", "sid=1; theme=dark")]
        for _ in 0..<2 {
            XCTAssertEqual(cached.headers(headers), fresh.headers(headers))
            for url in ["https://h/p?token=1&a=2;password=3&\(long)=4&%61pi_key=5&q=\(invalid)", "https://u:p@h/p#access_token=x"] {
                XCTAssertEqual(cached.url(url), fresh.url(url))
            }
            for text in ["password=abc and Bearer abcdef123456789", "\(long)password: 'quoted-secret'"] {
                XCTAssertEqual(cached.text(text), fresh.text(text))
            }
        }
        XCTAssertEqual(cached.headers(headers)[0].value, Redactor.marker)
        XCTAssertEqual(cached.headers(headers)[5].value, "kept")
    }

    func testVerdictCacheIsBounded() {
        let redactor = Redactor()
        for i in 0..<(NameVerdicts.maximumEntries * 2 + 7) { _ = redactor.isSensitiveField("header-\(i)") }
        XCTAssertTrue(redactor.isSensitiveField("X-Api-Key"))
        XCTAssertFalse(redactor.isSensitiveField("Accept"))
        // Header values: past the memo's bound (it starts again), over its key
        // length, as text and as URLs, each header still comes out as the
        // redactor without memos makes it, first time and again.
        let fresh = Redactor(extraNames: [], cachingVerdicts: false)
        let long = String(repeating: "v", count: HeaderValues.maximumValueBytes) + " password=hunter2"
        var headers: [Header] = []
        for i in 0..<(HeaderValues.maximumEntries + 300) {
            headers.append(Header("X-Note", "value \(i) token=t\(i)"))
            if i % 97 == 0 { headers += [Header("Referer", "https://h/p?token=\(i)"), Header("X-Long", long), Header("Accept", "text/html")] }
        }
        for _ in 0..<2 {
            let memoized = redactor.headers(headers)
            XCTAssertEqual(memoized, fresh.headers(headers))
            XCTAssertFalse(memoized.contains { $0.value.contains("hunter2") || $0.value.contains("token=t") })
        }
    }

    /// `textMayChange` is only a shortcut: wherever it says a text cannot
    /// change, the full scan leaves the text as it is. Texts built from
    /// every kind of piece the scan redacts (schemes and tokens, names and
    /// separators, URLs, JWTs, high-entropy runs) and from prose, in many
    /// combinations; both verdicts occur often.
    func testTextShortcutNeverSkipsAChange() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
        let pieces = ["Bearer", "bearer", "token", "password", "api_key", "session", "lorem", "ipsum", "dolor", " ", " ", "\t", ",",
                      "abcdefgh", "abcdefgH", "abcdefg1", "a1", "ABCDEFGHIJKLMNOP", "Zq3xY7wP2mK9vL4nR8tQ", "hunter42", jwt, "x.y.z",
                      "u1@example.com", "=", ":", "\"", "'", "https", "//h/p", "v1.2.3", "~/+", "[REDACTED]", "é", "-"]
        let redactor = Redactor()
        var random = SystemRandomNumberGenerator()
        var skipped = 0, scanned = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...7, using: &random) { text += pieces.randomElement(using: &random)! }
            let bytes = Array(text.utf8)
            var out = RedactionOutput(capacity: bytes.count)
            redactor.scanText(bytes[...], into: &out, depth: 0)
            if Redactor.textMayChange(bytes[...]) {
                scanned += 1
            } else {
                skipped += 1
                XCTAssertFalse(out.changed, "the shortcut skips \(text.debugDescription), which the scan changes")
                XCTAssertEqual(out.bytes, bytes, text.debugDescription)
            }
        }
        XCTAssertGreaterThan(skipped, 1000)
        XCTAssertGreaterThan(scanned, 1000)
    }

    /// The splicer compares plain ASCII keys as bytes and every other key
    /// as a String: duplicates are found across the two (U+212A KELVIN SIGN
    /// is canonically "K"; an escaped key equals its plain spelling), past
    /// the number of keys compared as bytes, and only within one object.
    func testDuplicateKeysAcrossSpellingsAndManyKeys() {
        let redactor = Redactor()
        func reason(_ body: String) -> String? {
            if case .withheld(let why) = redactor.body(Array(body.utf8), contentType: "application/json") { return why }
            return nil
        }
        XCTAssertEqual(reason("{\"K\":1,\"\u{212A}\":2}"), "duplicate key \"\u{212A}\" in a JSON object at depth 1")
        XCTAssertEqual(reason("{\"\u{212A}\":1,\"K\":2}"), "duplicate key \"K\" in a JSON object at depth 1")
        XCTAssertEqual(reason(#"{"a":1,"b":2,"\u0061":3}"#), "duplicate key \"a\" in a JSON object at depth 1")
        var many = (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        XCTAssertNil(reason("{" + many + "}"))
        XCTAssertEqual(reason("{" + many + ",\"k3\":0}"), "duplicate key \"k3\" in a JSON object at depth 1")
        XCTAssertEqual(reason("{" + many + ",\"k1\\u0039\":0}"), "duplicate key \"k19\" in a JSON object at depth 1")
        many = (0..<11).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        XCTAssertEqual(reason("{" + many + ",\"k0\":0}"), "duplicate key \"k0\" in a JSON object at depth 1")
        // The same keys in a parent and its children, and in siblings, are not duplicates.
        let nested = #"{"id":1,"a":{"id":2,"a":{"id":3}},"b":[{"id":4,"a":5},{"id":6,"a":7}],"token":{"id":8}}"#
        guard case .stored(let out) = redactor.body(Array(nested.utf8), contentType: "application/json") else { return XCTFail("withheld") }
        XCTAssertEqual(String(decoding: out, as: UTF8.self), #"{"id":1,"a":{"id":2,"a":{"id":3}},"b":[{"id":4,"a":5},{"id":6,"a":7}],"token":"[REDACTED]"}"#)
    }

    // MARK: JSON.validate

    func testValidateAgreesWithParse() {
        let samples = [
            "", " ", "{}", "[]", "[1,2,3]", #"{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}"#, "01", "1.", "-", "1e400", "1e-400",
            #""\ud800""#, #""\udc00x""#, "[1,]", #"{"a" 1}"#, "tru", "nul", "\u{FEFF}{}", #""a\x""#, "\"\u{01}\"", "[" + String(repeating: "[", count: 600),
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512), "{\"a\":1} x", "\"\\", "123456789012345678901234567890",
        ]
        var inputs = samples.map { Array($0.utf8) }
        inputs.append([0x22, 0xC3, 0x28, 0x22]) // invalid UTF-8 in a string
        inputs.append([0x22, 0xED, 0xA0, 0x80, 0x22]) // an encoded surrogate
        // Each kind of byte the eight-at-a-time string scan must stop at, at
        // every position of a word and across word boundaries.
        for special: [UInt8] in [[0x22], [0x5C, 0x6E], [0x5C, 0x22], [0x5C, 0x78], [0x01], [0x1F], [0x7F], [0xC3, 0xA9], [0xC3], [0xFF], [0xE2, 0x82]] {
            for position in 0..<19 {
                inputs.append([0x22] + Array(repeating: 0x61, count: position) + special + Array(repeating: 0x62, count: 9) + [0x22])
            }
        }
        for bytes in inputs {
            let parsed = Result { () throws(JSONSyntaxError) -> JSON in try JSON.parse(bytes: bytes) }
            let validated = Result { () throws(JSONSyntaxError) in try bytes.withUnsafeBufferPointer { b throws(JSONSyntaxError) in try JSON.validate(bytes: b) } }
            // Where a string ends, as the scan that splits a HAR file finds it.
            if bytes.first == 0x22 {
                let end = bytes.withUnsafeBufferPointer { JSON.endOfString(in: $0, openingQuoteAt: 0) }
                if case .success = parsed { XCTAssertEqual(end, bytes.count, String(decoding: bytes, as: UTF8.self)) }
                if end == nil { XCTAssertThrowsError(try JSON.parse(bytes: bytes)) }
            }
            switch (parsed, validated) {
            case (.success(let value), .success):
                // What the scan skipped is in the string, byte for byte.
                if bytes.first == 0x22, let text = value.stringValue, !bytes.contains(0x5C) {
                    XCTAssertEqual(Array(text.utf8), Array(bytes.dropFirst().dropLast()))
                }
            case (.failure(let a), .failure(let b)): XCTAssertEqual(a, b, String(decoding: bytes.prefix(40), as: UTF8.self))
            default: XCTFail("parse and validate disagree on \(String(decoding: bytes.prefix(40), as: UTF8.self))")
            }
        }
    }

    // MARK: streamed import

    static func document(_ count: Int) -> [UInt8] {
        var entries: [NetworkEntry] = []
        for i in 0..<count {
            var e = NetworkEntry(source: .captured, startedAt: 1_750_000_000 + Double(i), method: "GET", url: "https://h.example/items/\(i)?token=t\(i)")
            e.state = .complete
            e.status = 200
            e.responseHeaders = [Header("Content-Type", "application/json")]
            e.responseBody = Body(payload: .stored(Array(#"{"n":\#(i),"password":"p\#(i)"}"#.utf8)), size: 24, mimeType: "application/json")
            entries.append(e)
        }
        return HARExport.document(entries, creator: (name: "test", version: "1"))
    }

    /// Entries come in file order, in batches of at most `batchSize`, the
    /// same as the whole-tree conversion; an unusable entry is skipped with
    /// its index and the byte offset where it starts.
    func testStreamHandsOverBatchesInOrder() throws {
        var bytes = Self.document(2_500)
        // Make entry 1,700 unusable (valid JSON, no request).
        let found = try XCTUnwrap(EntriesSplitter.scan(bytes))
        let target = found.elements[1_700]
        let start = bytes.withUnsafeBufferPointer { EntriesSplitter.valueStart(target, in: $0) }
        let replacement = Array(#"{"x":1}"#.utf8)
        bytes.replaceSubrange(target, with: replacement + Array(repeating: 0x20, count: target.count - replacement.count))
        var batches: [[NetworkEntry]] = []
        let summary = try bytes.withUnsafeBufferPointer { b throws(HARImportError) in try HARImport.stream(b) { batches.append($0) } }
        XCTAssertEqual(summary.read, 2_499)
        XCTAssertTrue(batches.allSatisfy { $0.count <= HARImport.batchSize })
        XCTAssertEqual(batches.count, 3)
        XCTAssertEqual(summary.skipped.count, 1)
        XCTAssertEqual(summary.skipped.first?.index, 1_700)
        XCTAssertEqual(summary.skipped.first?.offset, start)
        XCTAssertEqual(summary.skipped.first?.reason, "the entry has no request")
        let (log, list) = try HARImport.logAndEntries(try JSON.parse(bytes: bytes))
        let whole = HARImport.result(log: log, list.map { HARImport.entry($0) })
        XCTAssertEqual(batches.flatMap { $0 }, whole.entries)
    }

    /// A syntax error in entry 1,234 of 2,000: nothing is handed over (the
    /// whole file is checked first) and the error names the entry's index
    /// and byte offset, with the parser's line and column.
    func testSyntaxErrorImportsNothingAndNamesTheEntry() throws {
        var bytes = Self.document(2_000)
        let found = try XCTUnwrap(EntriesSplitter.scan(bytes))
        let target = found.elements[1_234]
        let start = bytes.withUnsafeBufferPointer { EntriesSplitter.valueStart(target, in: $0) }
        let colon = try XCTUnwrap(bytes[target].firstIndex(of: UInt8(ascii: ":")))
        bytes[colon] = UInt8(ascii: ";")
        var handed = 0
        XCTAssertThrowsError(try bytes.withUnsafeBufferPointer { b throws(HARImportError) in try HARImport.stream(b) { handed += $0.count } }) { error in
            guard case .notJSON(let syntax) = error as? HARImportError else { return XCTFail("\(error)") }
            XCTAssertEqual(syntax.line, 1)
            XCTAssertEqual(syntax.column, colon + 1)
            XCTAssertTrue(syntax.message.hasPrefix("in log.entries[1234] (which starts at byte \(start)): "), syntax.message)
        }
        XCTAssertEqual(handed, 0, "nothing is half-imported")
    }

    /// The file's syntax is checked piece by piece on every processor (the
    /// skeleton, then each element of log.entries as deep as it sits): that
    /// accepts exactly what one pass over the whole file accepts, and a
    /// refused file gets the whole-file check's error. The edges: what lies
    /// between the elements (a trailing or doubled comma, none at all), a
    /// byte order mark opening an element, and nesting that only the whole
    /// file exceeds.
    func testPieceByPieceSyntaxCheckAcceptsWhatTheWholeFileCheckAccepts() throws {
        let e = #"{"startedDateTime":"2024-05-01T10:00:00Z","time":1,"request":{"method":"GET","url":"https://a.example/","headers":[]},"response":{"status":200,"headers":[],"content":{"size":0,"mimeType":"text/plain"}}}"#
        func deep(_ k: Int) -> String {
            String(e.dropLast()) + #","_x":"# + String(repeating: "[", count: k) + String(repeating: "]", count: k) + "}"
        }
        let bom = "\u{FEFF}"
        // (inside the entries array, whether the piece check may say yes)
        let cases: [(String, Bool)] = [
            (e, true), ("\(e),\(e)", true), (" \n\(e) ,\t\(e)\n", true), ("", true), (" ", true), ("1,\"s\",null", true),
            (deep(508), true), (deep(509), false), ("\(e),", false), (",\(e)", false), ("\(e),,\(e)", false), ("\(e) \(e)", false),
            (bom + e, false), ("\(e),\(bom)\(e)", false), (" \(bom)\(e)", false), ("\(e)]", false), ("\(e)}", false), ("[\(e)", false),
            ("\(e),{\"a\" 1}", false), ("\(e),\"\\x\"", false),
        ]
        for (inner, piecewise) in cases {
            let bytes = Array(#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["#.utf8) + Array(inner.utf8) + Array("]}}".utf8)
            let label = String(inner.prefix(60))
            let whole = bytes.withUnsafeBufferPointer { b in Result { () throws(JSONSyntaxError) in try JSON.validate(bytes: b) } }
            if EntriesSplitter.scan(bytes) != nil {
                let pieces = bytes.withUnsafeBufferPointer { EntriesSplitter.scanPieces(SharedBytes($0)).piecesValid }
                XCTAssertEqual(pieces, piecewise, label)
                if pieces, case .failure(let error) = whole { XCTFail("\(label): the pieces pass, the whole fails: \(error)") }
            } else {
                XCTAssertFalse(piecewise, "\(label): the scan does not follow it")
            }
            let read = Result { () throws(HARImportError) in try HARImport.read(bytes) }
            switch (whole, read) {
            case (.success, .success): break
            case (.success, .failure(let error)):
                if case .notJSON = error { XCTFail("\(label): valid JSON refused: \(error)") }
            case (.failure(let w), .failure(let error)):
                guard case .notJSON(let syntax) = error else { XCTFail("\(label): \(error)"); continue }
                XCTAssertEqual(syntax.line, w.line, label)
                XCTAssertEqual(syntax.column, w.column, label)
            case (.failure(let w), .success): XCTFail("\(label): invalid JSON imported (\(w))")
            }
        }
    }

    /// The command: a damaged file imports nothing into a persisted log, and
    /// says which entry; a good one imports every entry.
    func testImportCommandIsAllOrNothing() throws {
        let state = NSTemporaryDirectory() + "pincer-netspeed-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        XCTAssertEqual(try Fixture.pincer(["run", "net.persist", "7"], stateDir: state).status, 0)
        var bytes = Self.document(600)
        let found = try XCTUnwrap(EntriesSplitter.scan(bytes))
        let colon = try XCTUnwrap(bytes[found.elements[500]].firstIndex(of: UInt8(ascii: ":")))
        bytes[colon] = UInt8(ascii: ";")
        let bad = state + "-bad.har", good = state + "-good.har"
        defer { unlink(bad); unlink(good) }
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        try Data(Self.document(600)).write(to: URL(fileURLWithPath: good))
        let failed = try Fixture.pincer(["--json", "run", "net.import-har", bad], stateDir: state)
        XCTAssertNotEqual(failed.status, 0)
        XCTAssertTrue(failed.stdout.contains("log.entries[500]") || failed.stderr.contains("log.entries[500]"), failed.stdout + failed.stderr)
        let empty = try Fixture.pincer(["--json", "run", "net.limits"], stateDir: state)
        XCTAssertEqual((Fixture.json(empty.stdout)["result"] as? [String: Any])?["held"] as? Int, 0, empty.stdout)
        let imported = try Fixture.pincer(["--json", "run", "net.import-har", good], stateDir: state)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual((Fixture.json(imported.stdout)["result"] as? [String: Any])?["imported"] as? Int, 600, imported.stdout)

        // Entries an ignore rule matches are dropped where they are redacted
        // and counted: /items/1, /items/10-19 and /items/100-199 of 0..<600.
        XCTAssertEqual(try Fixture.pincer(["run", "net.ignore-host", "h.example", "/items/1"], stateDir: state).status, 0)
        let filtered = try Fixture.pincer(["--json", "run", "net.import-har", good], stateDir: state)
        XCTAssertEqual(filtered.status, 0, filtered.stderr)
        let result = Fixture.json(filtered.stdout)["result"] as? [String: Any]
        XCTAssertEqual(result?["imported"] as? Int, 489, filtered.stdout)
        XCTAssertEqual(result?["ignored"] as? Int, 111, filtered.stdout)
        XCTAssertEqual(result?["total"] as? Int, 600, filtered.stdout)
        let rows = try Fixture.run(Consumer.require(Consumer.sqlite3), ["-readonly", state + "/network-log.sqlite",
                                                                        "SELECT count(*), count(*) FILTER (WHERE url LIKE 'https://h.example/items/1%') FROM entries"])
        XCTAssertEqual(rows.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "1089|111", rows.stderr)
    }

    /// A pipe cannot be mapped: it is read into memory and imported the same;
    /// a directory is refused with a message that says so.
    func testImportReadsAPipeAndRefusesADirectory() throws {
        let state = NSTemporaryDirectory() + "pincer-netspeed-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let text = String(decoding: Self.document(300), as: UTF8.self)
        let piped = try Fixture.pincer(["--json", "run", "net.import-har", "/dev/stdin"], stateDir: state, input: text)
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual((Fixture.json(piped.stdout)["result"] as? [String: Any])?["imported"] as? Int, 300, piped.stdout)
        let directory = try Fixture.pincer(["run", "net.import-har", NSTemporaryDirectory()], stateDir: state)
        XCTAssertNotEqual(directory.status, 0)
        XCTAssertTrue(directory.stderr.contains("it is a directory"), directory.stderr)
    }

    // MARK: batched store path = one by one

    func testAddContentsOfStoresWhatAddStores() throws {
        let result = try HARImport.read(Self.document(3_000))
        let rules = [CaptureRule(kind: .ignore, host: "h.example", pathPrefix: "/items/7")]
        let batched = NetworkStore(limits: LogLimits(entryLimit: 5_000), rules: rules)
        let single = NetworkStore(limits: LogLimits(entryLimit: 5_000), rules: rules)
        let stored = batched.add(contentsOf: result.entries)
        var one = 0
        for e in result.entries where single.add(e) != nil { one += 1 }
        XCTAssertEqual(stored, one)
        XCTAssertLessThan(stored, 3_000, "the ignore rule matched some")
        XCTAssertEqual(batched.entries().map(\.id), single.entries().map(\.id))
        XCTAssertEqual(batched.entries().map(Self.comparable), single.entries().map(Self.comparable))
        XCTAssertFalse(batched.entries().contains { String(decoding: $0.responseBody.bytes ?? [], as: UTF8.self).contains("\"p1") })
    }

    // MARK: memory given back

    /// 150 MB of bodies held, then clear: RSS comes back to within 50 MB of
    /// where it was (glibc kept it all before malloc_trim). Measured in a
    /// process of its own (this test binary, running only this test), where
    /// no other test's threads allocate meanwhile: in the whole suite's
    /// process they moved the figure by tens of MB.
    func testClearGivesMemoryBack() throws {
        if ProcessInfo.processInfo.environment["PINCER_TEST_MEMORY_CHILD"] == "1" {
            let store = NetworkStore(limits: LogLimits(entryLimit: 15_000, bodyCap: 1 << 20, bodyBudget: 1 << 30))
            store.clear()
            let before = Self.residentBytes()
            var batch: [NetworkEntry] = []
            for i in 0..<15_000 {
                var e = NetworkEntry(source: .captured, startedAt: 1_750_000_000, method: "GET", url: "https://h.example/\(i)")
                e.state = .complete
                e.status = 200
                e.responseBody = Body(payload: .stored(Array(repeating: UInt8(ascii: "a") &+ UInt8(i % 20), count: 10_000)), size: 10_000,
                                      mimeType: "application/octet-stream")
                batch.append(e)
                if batch.count == 1_000 { store.add(contentsOf: batch); batch = [] }
            }
            let stored = store.storedBodyBytes
            let holding = Self.residentBytes()
            store.clear()
            print("MEMORY \(stored) \(before) \(holding) \(Self.residentBytes())")
            return
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PINCER_TEST_MEMORY_CHILD"] = "1"
        let child = try Fixture.run(CommandLine.arguments[0], ["PincerTests.NetworkSpeedTests/testClearGivesMemoryBack"], environment: environment)
        let line = child.stdout.split(separator: "\n").first { $0.hasPrefix("MEMORY ") } ?? ""
        let figures = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard figures.count == 4 else { return XCTFail("the child printed no figures (status \(child.status)): \(child.stdout.suffix(500))") }
        let (stored, before, holding, after) = (figures[0], figures[1], figures[2], figures[3])
        XCTAssertEqual(stored, 150_000_000)
        XCTAssertGreaterThan(holding - before, 140_000_000, "the bodies are resident")
        XCTAssertLessThan(after - before, 50 << 20, "after clear: \(after >> 20) MiB, before \(before >> 20) MiB, holding \(holding >> 20) MiB")
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// What a stored entry holds, without the time it was recorded.
    static func comparable(_ e: NetworkEntry) -> String {
        var e = e
        e.recordedAt = 0
        return "\(e)"
    }
}
