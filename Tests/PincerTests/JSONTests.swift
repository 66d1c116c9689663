import Foundation
import XCTest
import PincerJSON

final class JSONTests: XCTestCase {
    // MARK: Helpers

    /// The error `parse` throws for `text`; fails the test when it parses.
    private func syntaxError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONSyntaxError? {
        do throws(JSONSyntaxError) {
            let value = try JSON.parse(text)
            XCTFail("expected a syntax error for \(text.debugDescription), parsed \(value.serialized())", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func syntaxError(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONSyntaxError? {
        do throws(JSONSyntaxError) {
            let value = try JSON.parse(bytes: bytes)
            XCTFail("expected a syntax error for bytes \(bytes), parsed \(value.serialized())", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Checks the exact position and message of the error for `text`.
    private func assertError(_ text: String, line: Int, column: Int, _ message: String,
                             file: StaticString = #filePath, sourceLine: UInt = #line) {
        guard let error = syntaxError(text, file: file, line: sourceLine) else { return }
        XCTAssertEqual(error, JSONSyntaxError(line: line, column: column, message: message),
                       "input \(text.debugDescription)", file: file, line: sourceLine)
    }

    /// A nested value exercising every case, unicode and every escape the writer emits.
    private var sample: JSON {
        .object([
            ("null", .null),
            ("flags", .array([.bool(true), .bool(false)])),
            ("ints", .array([.int(0), .int(-1), .int(42), .int(.max), .int(.min)])),
            ("uint", .uint(.max)),
            ("doubles", .array([.double(0.1), .double(-2.5e-300), .double(1e300), .double(1.0), .double(-0.0),
                                .double(123456.789), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude)])),
            ("text", .string("plain")),
            ("escapes", .string("quote \" backslash \\ slash / newline \n return \r tab \t bell \u{7} nul \u{0} unit \u{1F}")),
            ("unicode", .string("é ü 中文 😀 👩‍👩‍👧 e\u{301} \u{FEFF} \u{10FFFF}")),
            ("ключ 🔑", .string("value with key in Cyrillic")),
            ("", .string("")),
            ("empty", .object([])),
            ("emptyArray", .array([])),
            ("nested", .array([.array([.array([.object([("deep", .array([.null]))])])])])),
            ("dup", .int(1)),
            ("dup", .int(2)),
        ])
    }

    // MARK: Round trips and values

    func testRoundTripOfNestedValues() throws {
        let value = sample
        for pretty in [false, true] {
            let text = value.serialized(pretty: pretty)
            let parsed = try JSON.parse(text)
            XCTAssertEqual(parsed, value)
            XCTAssertEqual(parsed.serialized(pretty: pretty), text)
            XCTAssertEqual(try JSON.parse(bytes: Array(text.utf8)), value)
        }
        let parsed = try JSON.parse(value.serialized())
        // Case-level checks: == compares serializations, these compare the cases.
        guard case .uint(UInt64.max)? = parsed["uint"] else { return XCTFail("uint: \(String(describing: parsed["uint"]))") }
        guard case .double(let one)? = parsed["doubles"]?.arrayValue?[3], one == 1 else { return XCTFail("1.0 must stay a double") }
        guard case .double(let negativeZero)? = parsed["doubles"]?.arrayValue?[4] else { return XCTFail("-0.0") }
        XCTAssertEqual(negativeZero, 0)
        XCTAssertEqual(negativeZero.sign, .minus)
        XCTAssertEqual(parsed["escapes"]?.stringValue, sample["escapes"]?.stringValue)
        XCTAssertEqual(parsed["unicode"]?.stringValue, "é ü 中文 😀 👩‍👩‍👧 e\u{301} \u{FEFF} \u{10FFFF}")
        XCTAssertEqual(parsed["ключ 🔑"]?.stringValue, "value with key in Cyrillic")
        XCTAssertEqual(parsed["ints"]?.arrayValue?.compactMap(\.int64Value), [0, -1, 42, .max, .min])
    }

    func testScalarsAndWhitespace() throws {
        XCTAssertEqual(try JSON.parse(" \t\r\n true \n\r\t "), .bool(true))
        XCTAssertEqual(try JSON.parse("false"), .bool(false))
        XCTAssertEqual(try JSON.parse("null"), .null)
        XCTAssertEqual(try JSON.parse(#""hi""#), .string("hi"))
        XCTAssertEqual(try JSON.parse("[ 1 , 2 ]\n"), .array([.int(1), .int(2)]))
        XCTAssertEqual(try JSON.parse(#"{ "a" : [ ] , "b" : { } }"#), .object([("a", .array([])), ("b", .object([]))]))
        guard case .int(0) = try JSON.parse("-0") else { return XCTFail("-0 is the integer 0") }
        guard case .double(let d) = try JSON.parse("-0.0"), d == 0, d.sign == .minus else { return XCTFail("-0.0") }
        guard case .double(100) = try JSON.parse("1E+2") else { return XCTFail("1E+2") }
        guard case .double(0.0005) = try JSON.parse("0.5e-3") else { return XCTFail("0.5e-3") }
        guard case .double(1) = try JSON.parse("1.0") else { return XCTFail("1.0") }
        guard case .double(0) = try JSON.parse("1e-400") else { return XCTFail("underflow goes to zero") }
    }

    func testIntegerRanges() throws {
        guard case .int(Int64.max) = try JSON.parse("9223372036854775807") else { return XCTFail("Int64.max") }
        guard case .int(Int64.min) = try JSON.parse("-9223372036854775808") else { return XCTFail("Int64.min") }
        guard case .uint(9_223_372_036_854_775_808) = try JSON.parse("9223372036854775808") else { return XCTFail("Int64.max + 1") }
        guard case .uint(UInt64.max) = try JSON.parse("18446744073709551615") else { return XCTFail("UInt64.max") }
        guard case .double(let above) = try JSON.parse("18446744073709551616") else { return XCTFail("UInt64.max + 1") }
        XCTAssertEqual(above, 18446744073709551616.0)
        guard case .double(let below) = try JSON.parse("-9223372036854775809") else { return XCTFail("Int64.min - 1") }
        XCTAssertEqual(below, -9223372036854775809.0)
        guard case .int(9_007_199_254_740_993) = try JSON.parse("9007199254740993") else { return XCTFail("2^53 + 1 stays exact") }
        guard case .double(let huge) = try JSON.parse(String(repeating: "9", count: 300)) else { return XCTFail("300 digits") }
        XCTAssertEqual(huge, 1e300)

        assertError("1e400", line: 1, column: 1, "number 1e400 is too large to represent as a Double")
        assertError("[0, -1e400]", line: 1, column: 5, "number -1e400 is too large to represent as a Double")
        assertError("1" + String(repeating: "0", count: 400), line: 1, column: 1,
                    "number 1\(String(repeating: "0", count: 400)) is too large to represent as a Double")
        assertError("2e99999999999999999999", line: 1, column: 1, "number 2e99999999999999999999 is too large to represent as a Double")
    }

    /// Doubles must round exactly like the standard library's correctly rounded parser.
    func testDoublesMatchTheStandardLibrary() throws {
        var fixed = ["0.1", "0.2", "0.3", "1.7976931348623157e308", "2.2250738585072011e-308", "2.2250738585072014e-308",
                     "4.9e-324", "9007199254740993.0", "9007199254740992.5", "1e22", "1e23", "1.5e-22", "123456789012345678e-5",
                     "0.000000000000000000000000000001", "3.141592653589793238462643383279", "-12.5E3", "6.02214076e23"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 11
        }
        for _ in 0..<5000 {
            let integer = next() % 10_000_000_000
            let fraction = next() % 1_000_000_000
            let exponent = Int(next() % 80) - 40
            fixed.append("\(next() % 2 == 0 ? "-" : "")\(integer).\(fraction)e\(exponent)")
        }
        for text in fixed {
            guard case .double(let parsed) = try JSON.parse(text) else { return XCTFail("\(text) is not a double") }
            XCTAssertEqual(parsed.bitPattern, Double(text)!.bitPattern, text)
        }
    }

    func testStringEscapes() throws {
        let text = #""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u00E9 \u4e2d \u0000 \u001f""#
        XCTAssertEqual(try JSON.parse(text).stringValue, "\" \\ / \u{8} \u{C} \n \r \t A é é 中 \u{0} \u{1F}")
        XCTAssertEqual(try JSON.parse(#""raw é 中 😀""#).stringValue, "raw é 中 😀")
        XCTAssertEqual(try JSON.parse(#"{"k\"ey":"v\\al"}"#)["k\"ey"]?.stringValue, "v\\al")
    }

    /// Strings with escapes are checked first and decoded afterwards, and
    /// plain runs are skipped eight bytes at a time: random mixtures of every
    /// escape, raw UTF-8 and plain runs of every length decode as Foundation's
    /// JSONSerialization decodes them.
    func testEscapedStringsDecodeAsFoundationDoes() throws {
        let pieces = [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0041"#, #"\u00e9"#, #"\u4E2D"#, #"\u0000"#,
                      #"\ud83d\ude00"#, #"\uDBFF\uDFFF"#, "é", "中", "😀", "a", "abcdefg", "abcdefghijklmnopq", " ", "{", "\u{7F}"]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            var text = "\""
            for _ in 0..<Int.random(in: 0...12, using: &random) { text += pieces.randomElement(using: &random)! }
            text += "\""
            let expected = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) as? String
            XCTAssertEqual(try JSON.parse(text).stringValue, expected, text)
            XCTAssertEqual(try JSON.parse(bytes: Array(text.utf8)).stringValue, expected, text)
        }
    }

    /// `scan` reports, in order, what a splice needs: containers with their
    /// depth, keys with the start of their values, where members end, and
    /// string values (not keys), ranges between the quotes.
    func testScanReportsTheStructureInOrder() throws {
        final class Recorder: JSONScanVisitor {
            let text: [UInt8]
            var events: [String] = []
            init(_ text: [UInt8]) { self.text = text }
            func show(_ r: Range<Int>) -> String { String(decoding: text[r], as: UTF8.self) }
            func objectStart(depth: Int) { events.append("{\(depth)") }
            func objectEnd() { events.append("}") }
            func arrayStart(depth: Int) { events.append("[\(depth)") }
            func arrayEnd() { events.append("]") }
            func key(_ content: Range<Int>, escaped: Bool, valueStart: Int) {
                events.append("key \(show(content))\(escaped ? " escaped" : "") value at \(valueStart)")
            }
            func memberEnd(_ end: Int) { events.append("end \(end)") }
            func string(_ content: Range<Int>, escaped: Bool) { events.append("string \(show(content))\(escaped ? " escaped" : "")") }
        }
        let text = Array(#"{"a": [1, "x", {}], "b\n" : "y\"z" , "c":{"d":[]}}"#.utf8)
        let recorder = Recorder(text)
        try text.withUnsafeBufferPointer { b throws(JSONSyntaxError) in try JSON.scan(bytes: b, visitor: recorder) }
        XCTAssertEqual(recorder.events, [
            "{1", "key a value at 6", "[2", "string x", "{3", "}", "]", "end 18",
            "key b\\n escaped value at 28", "string y\\\"z escaped", "end 34",
            "key c value at 41", "{2", "key d value at 46", "[3", "]", "end 48", "}", "end 49", "}",
        ])
        // Invalid text: reported up to where it fails, then the parser's own error.
        let bad = Array(#"{"a":1 "b":2}"#.utf8)
        let partial = Recorder(bad)
        XCTAssertThrowsError(try bad.withUnsafeBufferPointer { b throws(JSONSyntaxError) in try JSON.scan(bytes: b, visitor: partial) })
        XCTAssertEqual(partial.events, ["{1", "key a value at 5", "end 6"])
    }

    func testSurrogatePairs() throws {
        XCTAssertEqual(try JSON.parse(#""\ud83d\ude00""#).stringValue, "😀")
        XCTAssertEqual(try JSON.parse(#""\uD83D\uDE00 and \uDBFF\uDFFF""#).stringValue, "😀 and \u{10FFFF}")
        XCTAssertEqual(try JSON.parse(#""a\uD834\uDD1Eb""#).stringValue, "a𝄞b")

        assertError(#""\ud83d""#, line: 1, column: 2,
                    #"lone high surrogate \uD83D in a string: it must be followed by a \uDC00-\uDFFF low surrogate"#)
        assertError(#""\ud83dx""#, line: 1, column: 2,
                    #"lone high surrogate \uD83D in a string: it must be followed by a \uDC00-\uDFFF low surrogate"#)
        assertError(#""\ude00""#, line: 1, column: 2,
                    #"lone low surrogate \uDE00 in a string: it must follow a \uD800-\uDBFF high surrogate"#)
        assertError(#""\ud83d\u0041""#, line: 1, column: 8,
                    #"high surrogate \uD83D is followed by \u0041, not by a \uDC00-\uDFFF low surrogate"#)
        assertError(#""\ud83d\ud83d""#, line: 1, column: 8,
                    #"high surrogate \uD83D is followed by \uD83D, not by a \uDC00-\uDFFF low surrogate"#)
    }

    func testStringErrors() {
        assertError("\"a\nb\"", line: 1, column: 3, "control characters must be escaped in a string, found a line feed (U+000A)")
        assertError("\"\t\"", line: 1, column: 2, "control characters must be escaped in a string, found a tab (U+0009)")
        assertError("[\"\u{1}\"]", line: 1, column: 3, "control characters must be escaped in a string, found control character U+0001")
        assertError(#""abc"#, line: 1, column: 5, "unterminated string (opened at line 1, column 1), found end of input")
        assertError("[1,\n  \"abc", line: 2, column: 7, "unterminated string (opened at line 2, column 3), found end of input")
        assertError(#""\x""#, line: 1, column: 2,
                    #"invalid escape sequence in a string: found 'x' after '\'; expected one of \" \\ \/ \b \f \n \r \t \uXXXX"#)
        assertError(#""\'""#, line: 1, column: 2,
                    #"invalid escape sequence in a string: found "'" after '\'; expected one of \" \\ \/ \b \f \n \r \t \uXXXX"#)
        assertError(#""\u12G4""#, line: 1, column: 6, #"expected 4 hex digits after '\u' in a string, found 'G4'"#)
        assertError(#""\u12"#, line: 1, column: 6, #"expected 4 hex digits after '\u' in a string, found end of input"#)
        assertError(#""\"#, line: 1, column: 3, "unterminated escape sequence in a string, found end of input")
    }

    func testInvalidUTF8NamesThePosition() throws {
        let quote: UInt8 = 0x22
        // Valid multi-byte sequences pass.
        XCTAssertEqual(try JSON.parse(bytes: [quote, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80, quote]).stringValue, "é😀")

        let cases: [([UInt8], Int, Int, String)] = [
            ([quote, 0x61, 0xFF, quote], 1, 3, "invalid UTF-8: byte 0xFF never appears in UTF-8"),
            ([quote, 0x80, quote], 1, 2, "invalid UTF-8: unexpected continuation byte 0x80"),
            ([quote, 0xE2, 0x82, quote], 1, 2, "invalid UTF-8: sequence starting with byte 0xE2 is cut short, found byte 0x22"),
            ([quote, 0xE2, 0x82], 1, 2, "invalid UTF-8: sequence starting with byte 0xE2 is cut short by the end of input"),
            ([quote, 0xC0, 0xAF, quote], 1, 2, "invalid UTF-8: byte 0xC0 never appears in UTF-8"),
            ([quote, 0xE0, 0x80, 0xAF, quote], 1, 2,
             "invalid UTF-8: sequence starting with byte 0xE0 is an overlong form, a surrogate or above U+10FFFF"),
            ([quote, 0xED, 0xA0, 0x80, quote], 1, 2,
             "invalid UTF-8: sequence starting with byte 0xED is an overlong form, a surrogate or above U+10FFFF"),
            ([quote, 0xF4, 0x90, 0x80, 0x80, quote], 1, 2,
             "invalid UTF-8: sequence starting with byte 0xF4 is an overlong form, a surrogate or above U+10FFFF"),
            (Array("{\n\"a\":\n\"ok ".utf8) + [0xFE] + Array("\"}".utf8), 3, 5, "invalid UTF-8: byte 0xFE never appears in UTF-8"),
            ([0x5B, 0xFF, 0x5D], 1, 2, "expected a JSON value or ']' in an array, found invalid UTF-8 byte 0xFF"),
        ]
        for (bytes, line, column, message) in cases {
            XCTAssertEqual(syntaxError(bytes: bytes), JSONSyntaxError(line: line, column: column, message: message), "\(bytes)")
        }
    }

    // MARK: Rejections

    func testRejectsNonJSONWithExactPositions() {
        let cases: [(String, Int, Int, String)] = [
            ("", 1, 1, "expected a JSON value, found end of input"),
            ("  \n ", 2, 2, "expected a JSON value, found end of input"),
            ("[1,2,]", 1, 6, "expected a JSON value after ',' in an array, found ']'"),
            (#"{"a":1,}"#, 1, 8, "expected a string key after ',' in an object, found '}'"),
            ("01", 1, 1, "numbers cannot have leading zeros, found '1' after '0'"),
            ("-007", 1, 2, "numbers cannot have leading zeros, found '0' after '0'"),
            ("+1", 1, 1, "expected a JSON value, found '+' (JSON numbers have no '+' sign)"),
            (".5", 1, 1, "expected a JSON value, found '.' (JSON numbers need a digit before '.')"),
            ("[-.5]", 1, 3, "expected a digit after '-' in a number, found '.' (JSON numbers need a digit before '.')"),
            ("1.", 1, 3, "expected a digit after '.' in a number, found end of input"),
            ("1.e5", 1, 3, "expected a digit after '.' in a number, found 'e5'"),
            ("1e", 1, 3, "expected a digit in the exponent of a number, found end of input"),
            ("1e+", 1, 4, "expected a digit in the exponent of a number, found end of input"),
            ("-", 1, 2, "expected a digit after '-' in a number, found end of input"),
            ("NaN", 1, 1, "expected a JSON value, found 'NaN' (NaN and Infinity are not JSON numbers)"),
            ("[Infinity]", 1, 2, "expected a JSON value or ']' in an array, found 'Infinity' (NaN and Infinity are not JSON numbers)"),
            ("-Infinity", 1, 2, "expected a digit after '-' in a number, found 'Infinity' (NaN and Infinity are not JSON numbers)"),
            ("'a'", 1, 1, #"expected a JSON value, found "'" (JSON strings use double quotes)"#),
            ("{'a':1}", 1, 2, #"expected a string key or '}' in an object, found "'" (JSON strings use double quotes)"#),
            ("// comment\n1", 1, 1, "expected a JSON value, found '/' (JSON has no comments)"),
            ("[1 /* c */]", 1, 4, "expected ',' or ']' after an array element, found '/' (JSON has no comments)"),
            ("1 # c", 1, 3, "expected end of input after the JSON value, found '#' (JSON has no comments)"),
            ("1 2", 1, 3, "expected end of input after the JSON value, found '2'"),
            ("{} x", 1, 4, "expected end of input after the JSON value, found 'x'"),
            ("truex", 1, 5, "expected end of input after the JSON value, found 'x'"),
            ("[1]]", 1, 4, "expected end of input after the JSON value, found ']'"),
            ("tru", 1, 1, "expected 'true', found 'tru'"),
            ("[nul]", 1, 2, "expected 'null', found 'nul'"),
            ("True", 1, 1, "expected a JSON value, found 'True'"),
            ("[", 1, 2, "expected a JSON value or ']' in an array, found end of input"),
            ("[1", 1, 3, "expected ',' or ']' after an array element, found end of input"),
            ("[1 2]", 1, 4, "expected ',' or ']' after an array element, found '2'"),
            ("{", 1, 2, "expected a string key or '}' in an object, found end of input"),
            ("{1:2}", 1, 2, "expected a string key or '}' in an object, found '1'"),
            (#"{"a""#, 1, 5, "expected ':' after an object key, found end of input"),
            (#"{"a" 1}"#, 1, 6, "expected ':' after an object key, found '1'"),
            (#"{"a":}"#, 1, 6, "expected a JSON value after ':' in an object, found '}'"),
            (#"{"a":1 x}"#, 1, 8, "expected ',' or '}' after an object member, found 'x'"),
            (#"{"a":1"#, 1, 7, "expected ',' or '}' after an object member, found end of input"),
            (#"{"a":1]"#, 1, 7, "expected ',' or '}' after an object member, found ']'"),
            ("[1}", 1, 3, "expected ',' or ']' after an array element, found '}'"),
            // Line counting: LF, CRLF and a lone CR each end a line.
            ("[1,\n 2,\n x]", 3, 2, "expected a JSON value after ',' in an array, found 'x'"),
            ("{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':' after an object key, found '2'"),
            ("[1,\r\n\r\n  ?]", 3, 3, "expected a JSON value after ',' in an array, found '?'"),
            ("[\r\r?", 3, 1, "expected a JSON value or ']' in an array, found '?'"),
            // Columns count UTF-8 bytes: "é" is two.
            ("[\"é\", ?]", 1, 8, "expected a JSON value after ',' in an array, found '?'"),
            ("[é]", 1, 2, "expected a JSON value or ']' in an array, found 'é' (U+00E9)"),
            // A byte order mark is only skipped at the very start.
            (" \u{FEFF}1", 1, 2, "expected a JSON value, found '\u{FEFF}' (U+FEFF)"),
            ("[\u{7F}]", 1, 2, "expected a JSON value or ']' in an array, found control character U+007F"),
        ]
        for (text, line, column, message) in cases {
            assertError(text, line: line, column: column, message)
        }
    }

    func testByteOrderMarkAtStartIsSkipped() throws {
        XCTAssertEqual(try JSON.parse("\u{FEFF}[1]"), .array([.int(1)]))
        XCTAssertEqual(try JSON.parse(bytes: [0xEF, 0xBB, 0xBF, 0x20, 0x31]), .int(1))
        XCTAssertEqual(syntaxError("\u{FEFF}")?.message, "expected a JSON value, found end of input")
    }

    func testErrorDescription() {
        let error = syntaxError("{\n  \"a\": 1,\n  \"b\" 2\n}")
        XCTAssertEqual(error?.description, "line 3, column 7: expected ':' after an object key, found '2'")
        XCTAssertEqual(error.map { "\($0)" }, "line 3, column 7: expected ':' after an object key, found '2'")
    }

    func testDepthLimit() throws {
        XCTAssertEqual(JSON.maximumNestingDepth, 512)
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try JSON.parse(deepest)
        var depth = 1
        while let items = value.arrayValue, let first = items.first {
            value = first
            depth += 1
        }
        XCTAssertEqual(depth, 512)
        XCTAssertEqual(value, .array([]))

        let message = "nesting is deeper than the maximum of 512 arrays and objects, found '['"
        assertError(String(repeating: "[", count: 513) + String(repeating: "]", count: 513), line: 1, column: 513, message)
        // Far deeper input fails at the same place without exhausting the stack.
        assertError(String(repeating: "[", count: 200_000), line: 1, column: 513, message)

        let objects = String(repeating: #"{"a":"#, count: 512) + "1" + String(repeating: "}", count: 512)
        XCTAssertNotNil(try JSON.parse(objects)["a"]?["a"])
        assertError(String(repeating: #"{"a":"#, count: 512) + "{}" + String(repeating: "}", count: 512),
                    line: 1, column: 512 * 5 + 1, "nesting is deeper than the maximum of 512 arrays and objects, found '{'")
    }

    // MARK: Accessors

    func testDuplicateKeysKeepEveryMemberInOrder() throws {
        let value = try JSON.parse(#"{"a":1,"b":2,"a":3}"#)
        XCTAssertEqual(value.objectValue?.map(\.0), ["a", "b", "a"])
        XCTAssertEqual(value.objectValue?.compactMap(\.1.int64Value), [1, 2, 3])
        XCTAssertEqual(value["a"], .int(1))
        XCTAssertEqual(value.serialized(), #"{"a":1,"b":2,"a":3}"#)
    }

    func testAccessors() throws {
        let value = try JSON.parse(#"{"s":"x","b":true,"i":-3,"u":18446744073709551615,"d":2.5,"w":4.0,"n":null,"a":[1],"o":{}}"#)
        XCTAssertEqual(value.objectValue?.count, 9)
        XCTAssertNil(value["missing"])
        XCTAssertNil(value["a"]?["s"])
        XCTAssertNil(JSON.string("s")["s"])
        XCTAssertEqual(value["s"]?.stringValue, "x")
        XCTAssertNil(value["b"]?.stringValue)
        XCTAssertEqual(value["b"]?.boolValue, true)
        XCTAssertNil(value["n"]?.boolValue)
        XCTAssertEqual(value["a"]?.arrayValue, [.int(1)])
        XCTAssertNil(value["o"]?.arrayValue)
        XCTAssertEqual(value["o"]?.objectValue?.count, 0)
        XCTAssertNil(value["a"]?.objectValue)

        XCTAssertEqual(value["i"]?.doubleValue, -3)
        XCTAssertEqual(value["u"]?.doubleValue, 18446744073709551615.0)
        XCTAssertEqual(value["d"]?.doubleValue, 2.5)
        XCTAssertNil(value["s"]?.doubleValue)

        XCTAssertEqual(value["i"]?.int64Value, -3)
        XCTAssertNil(value["u"]?.int64Value)
        XCTAssertEqual(JSON.uint(7).int64Value, 7)
        XCTAssertEqual(JSON.uint(UInt64(Int64.max)).int64Value, .max)
        XCTAssertNil(value["d"]?.int64Value)
        XCTAssertEqual(value["w"]?.int64Value, 4)
        XCTAssertEqual(JSON.double(-9.2e18).int64Value, -9_200_000_000_000_000_000)
        XCTAssertNil(JSON.double(9.3e18).int64Value)
        XCTAssertNil(JSON.double(.nan).int64Value)
        XCTAssertNil(JSON.double(.infinity).int64Value)
        XCTAssertNil(value["b"]?.int64Value)

        let names = ["s", "b", "i", "u", "d", "n", "a", "o"].map { value[$0]?.typeName }
        XCTAssertEqual(names, ["string", "boolean", "number", "number", "number", "null", "array", "object"])
    }

    func testByteInputs() throws {
        let text = #"{"k":[1,"é",null]}"#
        let expected = try JSON.parse(text)
        XCTAssertEqual(try JSON.parse(bytes: Array(text.utf8)), expected)
        XCTAssertEqual(try JSON.parse(bytes: text.utf8), expected)
        XCTAssertEqual(try JSON.parse(bytes: Data(text.utf8)), expected)
        XCTAssertEqual(try JSON.parse(bytes: Array(("xx" + text).utf8).dropFirst(2)), expected)
        // A collection without contiguous storage is copied first.
        XCTAssertEqual(try JSON.parse(bytes: Array(text.utf8).lazy.map { $0 }), expected)
        // Positions in a slice count from the slice's start.
        XCTAssertEqual(syntaxError(bytes: Array("[1,]".utf8))?.column, 4)
        do throws(JSONSyntaxError) {
            _ = try JSON.parse(bytes: Array("xx[1,]".utf8).dropFirst(2))
            XCTFail("parsed a trailing comma")
        } catch {
            XCTAssertEqual(error, JSONSyntaxError(line: 1, column: 4, message: "expected a JSON value after ',' in an array, found ']'"))
        }
    }

    // MARK: Larger documents

    /// Builds a HAR-like document of about `bytes` bytes.
    private func harLikeDocument(approximateBytes bytes: Int) -> (JSON, entries: Int) {
        var entries: [JSON] = []
        var size = 0
        var i = 0
        while size < bytes {
            let entry = JSON.object([
                ("startedDateTime", .string("2024-05-0\(i % 9 + 1)T12:00:00.\(i % 1000)Z")),
                ("time", .double(Double(i) * 1.25 + 0.125)),
                ("request", .object([
                    ("method", .string(i % 3 == 0 ? "POST" : "GET")),
                    ("url", .string("https://example.com/api/items/\(i)?q=caf\u{E9}&n=\(i * 7)")),
                    ("httpVersion", .string("HTTP/2")),
                    ("headers", .array((0..<6).map { .object([("name", .string("x-header-\($0)")), ("value", .string("value \"\($0)\" \\ \u{1F600}"))]) })),
                    ("headersSize", .int(-1)),
                    ("bodySize", .int(Int64(i * 13))),
                ])),
                ("response", .object([
                    ("status", .int(200)),
                    ("content", .object([
                        ("size", .uint(UInt64(i) + 9_223_372_036_854_775_808)),
                        ("mimeType", .string("application/json; charset=utf-8")),
                        ("text", .string(String(repeating: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", count: 8) + "\n\t{\"nested\": \"json\"}")),
                    ])),
                    ("redirectURL", .null),
                ])),
                ("cache", .object([])),
                ("timings", .object([("send", .int(0)), ("wait", .double(12.5e-3)), ("receive", .bool(i % 2 == 0))])),
            ])
            size += entry.serialized().utf8.count
            entries.append(entry)
            i += 1
        }
        let document = JSON.object([("log", .object([
            ("version", .string("1.2")),
            ("creator", .object([("name", .string("JSONTests")), ("version", .string("1"))])),
            ("entries", .array(entries)),
        ]))])
        return (document, entries.count)
    }

    func testParsesAGeneratedOneMegabyteDocument() throws {
        let (document, count) = harLikeDocument(approximateBytes: 1_000_000)
        for pretty in [false, true] {
            let text = document.serialized(pretty: pretty)
            XCTAssertGreaterThan(text.utf8.count, 1_000_000)
            let parsed = try JSON.parse(text)
            let entries = try XCTUnwrap(parsed["log"]?["entries"]?.arrayValue)
            XCTAssertEqual(entries.count, count)
            XCTAssertEqual(entries.last?["request"]?["url"]?.stringValue,
                           "https://example.com/api/items/\(count - 1)?q=café&n=\((count - 1) * 7)")
            XCTAssertEqual(entries.first?["request"]?["headers"]?.arrayValue?[2]["value"]?.stringValue, "value \"2\" \\ 😀")
            guard case .uint(let size)? = entries[1]["response"]?["content"]?["size"] else { return XCTFail("size must be .uint") }
            XCTAssertEqual(size, 9_223_372_036_854_775_809)
            XCTAssertEqual(parsed, document)
        }
    }

    // MARK: Real files

    /// Every HAR file in the shared fixtures parses to an object with a "log"
    /// member, except the one that upstream keeps deliberately broken. The
    /// fixtures are part of the checkout: their absence is a failure.
    func testParsesSharedHARFixtures() throws {
        let fixtures = URL(fileURLWithPath: Consumer.shared).standardizedFileURL
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil),
                                       "no shared fixtures directory at \(fixtures.path)")
        let files = enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "har" }.sorted { $0.path < $1.path }
        XCTAssertFalse(files.isEmpty, "no *.har files under \(fixtures.path)")

        // mitmproxy keeps a deliberately broken file; it must fail at the right place.
        let knownBroken = ["mitmproxy-brokenfile.har": JSONSyntaxError(
            line: 5, column: 1, message: "expected ',' or '}' after an object member, found '\"'")]
        var parsedCount = 0
        for file in files {
            let bytes = try Data(contentsOf: file)
            do throws(JSONSyntaxError) {
                let document = try JSON.parse(bytes: bytes)
                XCTAssertNil(knownBroken[file.lastPathComponent], "\(file.lastPathComponent) should not parse")
                XCTAssertEqual(document.typeName, "object", file.lastPathComponent)
                XCTAssertEqual(document["log"]?.typeName, "object", "\(file.lastPathComponent) has no \"log\" object")
                // What was parsed survives a round trip through the writer.
                XCTAssertEqual(try JSON.parse(document.serialized()), document, file.lastPathComponent)
                parsedCount += 1
            } catch {
                XCTAssertEqual(error, knownBroken[file.lastPathComponent], "\(file.lastPathComponent): \(error)")
            }
        }
        XCTAssertEqual(parsedCount + knownBroken.count, files.count)
    }
}
