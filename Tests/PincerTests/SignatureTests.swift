import XCTest
@testable import PincerHost

final class SignatureTests: XCTestCase {
    func testParsesEveryTypeDefaultsAndSecret() throws {
        let s = try Signature.parse("add(a: i64, b: f64 = 1.5) -> f64")
        XCTAssertEqual(s.name, "add")
        XCTAssertEqual(s.result, .f64)
        XCTAssertEqual(s.parameters.map(\.type), [.i64, .f64])
        XCTAssertEqual(s.parameters[1].defaultValue, .f64(1.5))
        XCTAssertEqual(s.usage(fullName: "x.add"), "x.add <a:i64> [b:f64=1.5]")

        let all = try Signature.parse(#"m(a: bool = true, b: i32 = -7, c: i64 = 9223372036854775807, d: u64 = 0xff, e: f64 = 2e3, f: string = "q\"\\\n")"#)
        XCTAssertEqual(all.result, .void)
        XCTAssertEqual(all.parameters.compactMap(\.defaultValue),
                       [.bool(true), .i32(-7), .i64(.max), .u64(255), .f64(2000), .string("q\"\\\n")])

        let secret = try Signature.parse("login(user: string, token: secret string) -> string")
        XCTAssertTrue(secret.parameters[1].isSecret)
        XCTAssertFalse(secret.parameters[0].isSecret)
        XCTAssertEqual(try Signature.parse("set-user(id: string)").name, "set-user")
        XCTAssertEqual(try Signature.parse("  ping ( ) ->  string ").parameters.count, 0)
    }

    /// Each bad signature is refused with the column where it goes wrong.
    func testErrorsNameTheColumn() {
        let cases: [(String, Int, String)] = [
            ("", 1, "expected a command name"),
            ("Add(a: i64)", 1, "expected a command name"),
            ("add a: i64)", 5, "expected '('"),
            ("add(a i64)", 7, "expected ':'"),
            ("add(a: int)", 8, "expected a type"),
            ("add(a: i64, b: f64 = )", 22, "expected a default value"),
            ("add(a: i64 = 1, b: f64)", 17, "needs a default value"),
            ("add(a: i64, a: f64)", 13, "appears twice"),
            ("add(a: i32 = 99999999999)", 14, "out of range for i32"),
            ("add(a: f64 = nan)", 14, "not a finite decimal"),
            ("add(a: bool = maybe)", 15, "not a bool"),
            ("add(a: string = unquoted)", 17, "expected a quoted string"),
            ("add(a: string = \"open)", 17, "unterminated string"),
            ("add(a: secret i64)", 15, "only string parameters can be secret"),
            ("add(a: i64) -> void x", 21, "unexpected"),
            ("add(a: i64) - f64", 14, "expected '->'"),
            ("add(a: i64,", 12, "expected a parameter name"),
            ("add(a: i64) -> float", 16, "expected a type"),
            ("add(a: void)", 8, "expected a type"),
        ]
        assertRefused(cases)
    }

    /// `name: string...` (ABI 1.2): zero or more strings, last, after optional parameters too.
    func testParsesRestParameters() throws {
        let q = try Signature.parse("query(db: string, sql: string, params: string...) -> string")
        XCTAssertEqual(q.parameters.map(\.isRest), [false, false, true])
        XCTAssertEqual(q.restParameter?.name, "params")
        XCTAssertEqual(q.fixedParameters.map(\.name), ["db", "sql"])
        XCTAssertNil(q.restParameter?.defaultValue)
        XCTAssertFalse(q.restParameter?.isSecret ?? true)
        XCTAssertEqual(q.usage(fullName: "db.query"), "db.query <db:string> <sql:string> [params:string...]")

        let afterOptional = try Signature.parse("insert(table: string, n: i64 = 1, values: string ...)")
        XCTAssertEqual(afterOptional.restParameter?.name, "values")
        XCTAssertEqual(afterOptional.usage(fullName: "db.insert"), "db.insert <table:string> [n:i64=1] [values:string...]")
        let only = try Signature.parse("echo(words:string...)")
        XCTAssertEqual(only.fixedParameters.count, 0)
        XCTAssertEqual(only.usage(fullName: "x.echo"), "x.echo [words:string...]")
        // Without one, nothing changes.
        let plain = try Signature.parse("add(a: i64, b: f64 = 1.5) -> f64")
        XCTAssertNil(plain.restParameter)
        XCTAssertEqual(plain.fixedParameters.count, 2)
        XCTAssertFalse(plain.parameters.contains(where: \.isRest))
    }

    /// Only a plain string can be a rest parameter, with no default, and only last.
    func testRestParameterErrorsNameTheColumn() {
        let cases: [(String, Int, String)] = [
            ("q(a: i64...)", 9, "only string parameters can be rest parameters"),
            ("q(a: secret string...)", 6, "cannot be secret"),
            ("q(a: string... = \"x\")", 16, "cannot have a default value"),
            ("q(a: string..., b: i64)", 17, "follows rest parameter 'a'"),
            ("q(a: string..., b: string...)", 17, "follows rest parameter 'a'"),
            ("q(a: string.., b: i64)", 12, "expected '...'"),
            ("q(a: string.)", 12, "expected '...'"),
            ("q(a: string...a)", 15, "expected ',' or ')'"),
            ("q(a: string....)", 15, "expected ',' or ')'"),
        ]
        assertRefused(cases)
    }

    func testValueConversionNamesTheType() {
        XCTAssertEqual(try ValueConversion.convert("yes", to: .bool).get(), .bool(true))
        XCTAssertEqual(try ValueConversion.convert("-2147483648", to: .i32).get(), .i32(.min))
        XCTAssertEqual(try ValueConversion.convert("18446744073709551615", to: .u64).get(), .u64(.max))
        XCTAssertEqual(try ValueConversion.convert("0xFFFF", to: .u64).get(), .u64(65535))
        XCTAssertEqual(try ValueConversion.convert("-1.25e2", to: .f64).get(), .f64(-125))
        guard case .failure(let e1) = ValueConversion.convert("2147483648", to: .i32) else { return XCTFail() }
        XCTAssertTrue(e1.description.contains("out of range for i32"))
        guard case .failure(let e2) = ValueConversion.convert("-1", to: .u64) else { return XCTFail() }
        XCTAssertTrue(e2.description.contains("u64"))
        guard case .failure(let e3) = ValueConversion.convert("inf", to: .f64) else { return XCTFail() }
        XCTAssertTrue(e3.description.contains("f64"))
        guard case .failure = ValueConversion.convert("12abc", to: .i64) else { return XCTFail() }
    }

    /// Each signature is refused at its column with a message containing the fragment.
    func assertRefused(_ cases: [(String, Int, String)], file: StaticString = #filePath, line: UInt = #line) {
        for (text, column, fragment) in cases {
            do {
                _ = try Signature.parse(text)
                XCTFail("accepted: \(text)", file: file, line: line)
            } catch {
                XCTAssertEqual(error.column, column, "\(text): \(error)", file: file, line: line)
                XCTAssertTrue(error.message.contains(fragment), "\(text): \(error.message)", file: file, line: line)
            }
        }
    }
}
