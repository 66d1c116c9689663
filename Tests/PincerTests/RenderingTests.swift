import XCTest
@testable import PincerShell
import PincerJSON

/// How JSON results look for people (text tables) and for spreadsheets (--csv).
final class RenderingTests: XCTestCase {
    func parse(_ text: String) throws -> JSON { try JSON.parse(text) }

    /// `columns` + `rows`: names as given (repeats allowed), NULL for null,
    /// other scalar fields below; arrays and objects beside the table are
    /// for --json only.
    func testTableShapeRendersAsATable() throws {
        let value = try parse("""
            {"columns": ["id", "Name", "name", "extra"],
             "rows": [[1, "Ada", null, {"a": [1, 2]}], [22, "-", "x", true]],
             "elapsed_ms": 3.5, "truncated": false, "note": null, "empty": [],
             "warnings": ["w1"], "plan": {"scan": "t"}}
            """)
        XCTAssertEqual(JSONRendering.render(value), """
            id  Name  name  extra
            1   Ada   NULL  {"a":[1,2]}
            22  -     x     true
            elapsed_ms  3.5
            truncated   false

            """)
    }

    func testTableCellsStayOnOneBoundedLine() throws {
        let long = String(repeating: "é", count: 70)
        let value = JSON.object([
            ("columns", .array([.string("text"), .string("tab\tcol")])),
            ("rows", .array([
                .array([.string("a\nb\tc\u{1B}[0m\r"), .string(long)]),
                .array([.string(String(repeating: "x", count: 60)), .null]),
            ])),
        ])
        let lines = JSONRendering.render(value).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 4)
        XCTAssertTrue(lines[0].hasSuffix("tab\\tcol"), String(lines[0]))
        XCTAssertTrue(lines[1].hasPrefix("a\\nb\\tc\\u{1B}[0m\\u{D}"), String(lines[1]))
        XCTAssertTrue(lines[1].hasSuffix(String(repeating: "é", count: 59) + "…"), String(lines[1]))
        // Exactly 60 characters is not cut.
        XCTAssertTrue(lines[2].hasPrefix(String(repeating: "x", count: 60) + "  NULL"), String(lines[2]))
        XCTAssertEqual(JSONRendering.oneLine(String(repeating: "y", count: 61)).count, 60)
    }

    /// An object that only looks like a table (ragged rows, non-string names) renders as an object.
    func testAlmostTablesRenderAsObjects() throws {
        XCTAssertNil(TableShape(try parse(#"{"columns": ["a", "b"], "rows": [[1]]}"#)))
        XCTAssertNil(TableShape(try parse(#"{"columns": ["a", 2], "rows": []}"#)))
        XCTAssertNil(TableShape(try parse(#"{"columns": ["a"], "rows": [1]}"#)))
        XCTAssertEqual(JSONRendering.render(try parse(#"{"columns": ["a", "b"], "rows": [[1]]}"#)),
                       "columns:\n  a\n  b\nrows:\n  [1]\n")
        // Arrays of objects keep their upper-case headers and "-" for null.
        XCTAssertEqual(JSONRendering.render(try parse(#"[{"k": "a", "v": null}, {"k": "b", "w": 1}]"#)),
                       "K  V  W\na  -\nb     1\n")
    }

    func testCSVOfTableShape() throws {
        let value = try parse("""
            {"columns": ["id", "name", "name", "note"],
             "rows": [[1, "a,b", "say \\"hi\\"", null],
                      [2.5, "two\\nlines", " padded ", {"k": [true]}],
                      [-3, "", "tab\\there", false]],
             "elapsed_ms": 1}
            """)
        XCTAssertEqual(JSONRendering.csv(value),
                       "id,name,name,note\n" + "1,\"a,b\",\"say \"\"hi\"\"\",\n"
                       + "2.5,\"two\nlines\",\" padded \",\"{\"\"k\"\":[true]}\"\n" + "-3,,tab\there,false\n")
    }

    func testCSVOfArrayOfObjects() throws {
        let value = try parse(#"[{"a": 1, "b": "x\r\ny"}, {"c": null, "a": "long text that is not cut at all, ever, not even past sixty characters"}]"#)
        XCTAssertEqual(JSONRendering.csv(value),
                       "a,b,c\n1,\"x\r\ny\",\n\"long text that is not cut at all, ever, not even past sixty characters\",,\n")
        XCTAssertEqual(JSONRendering.csv(.array([])), "")
    }

    func testCSVOfDocuments() throws {
        // An object of scalars: name,value rows (servers.vars).
        XCTAssertEqual(JSONRendering.csv(try parse(#"{"a": 1, "b": "x,y", "c": null}"#)), "name,value\na,1\nb,\"x,y\"\nc,\n")
        // One array of objects beside scalars: that array (flags.list).
        XCTAssertEqual(JSONRendering.csv(try parse(#"{"on": true, "flags": [{"k": "a"}, {"k": "b", "v": 2}]}"#)), "k,v\na,\nb,2\n")
        // Values JSON cannot hold, as result sets carry them.
        XCTAssertEqual(JSONRendering.csv(try parse(#"[{"r": {"real": "NaN"}, "b": {"base64": "AP8="}, "o": {"real": "x"}}]"#)),
                       "r,b,o\nNaN,\\x00ff,\"{\"\"real\"\":\"\"x\"\"}\"\n")
    }

    func testCSVRefusesOtherShapes() throws {
        XCTAssertNil(JSONRendering.csv(try parse(#"{"a": 1, "nested": {"b": 2}}"#)))
        XCTAssertNil(JSONRendering.csv(try parse(#"{"one": [{"a": 1}], "two": [{"b": 2}]}"#)))
        XCTAssertNil(JSONRendering.csv(try parse(#"[1, 2]"#)))
        XCTAssertNil(JSONRendering.csv(try parse(#"[{"a": 1}, 2]"#)))
        XCTAssertNil(JSONRendering.csv(.string("text")))
        XCTAssertNil(JSONRendering.csv(try parse(#"{"columns": ["a"], "rows": [[1, 2]]}"#)))
    }

    func testCSVFieldQuoting() {
        XCTAssertEqual(JSONRendering.csvField("plain"), "plain")
        XCTAssertEqual(JSONRendering.csvField(""), "")
        XCTAssertEqual(JSONRendering.csvField("a,b"), "\"a,b\"")
        XCTAssertEqual(JSONRendering.csvField("\""), "\"\"\"\"")
        XCTAssertEqual(JSONRendering.csvField("a\rb"), "\"a\rb\"")
        XCTAssertEqual(JSONRendering.csvField(" x"), "\" x\"")
        XCTAssertEqual(JSONRendering.csvField("x "), "\"x \"")
        XCTAssertEqual(JSONRendering.csvField("in side"), "in side")
    }
}
