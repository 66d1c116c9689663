import Foundation
import XCTest
import PincerXML

/// PincerXML itself: its limits and the source positions a lossless
/// rewrite needs (the catalogs use them; the GPX and layout importers'
/// tests cover the messages).
final class XMLReaderTests: XCTestCase {
    private func error(_ text: String, maximumDepth: Int = XMLReader.defaultMaximumDepth, allowDoctype: Bool = false) -> String {
        do {
            _ = try XMLReader.parse(Array(text.utf8), maximumDepth: maximumDepth, allowDoctype: allowDoctype)
            return "parsed"
        } catch {
            return error.description
        }
    }

    /// 100,000 levels are refused at the limit (the reader keeps open
    /// elements on a stack of its own, so nothing recurses); the limit
    /// itself is read.
    func testDepthLimit() throws {
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        XCTAssertEqual(error(deep), "line 1, column 3001: elements nested more than 1000 levels (the limit)")
        let atLimit = String(repeating: "<a>", count: 1000) + String(repeating: "</a>", count: 1000)
        XCTAssertEqual(error(atLimit), "parsed")
        XCTAssertEqual(error("<a><b><c/></b></a>", maximumDepth: 2), "line 1, column 7: elements nested more than 2 levels (the limit)")
    }

    /// Character references are read with checked arithmetic: beyond
    /// U+10FFFF, and beyond UInt32, they are refused, not wrapped into
    /// some other character.
    func testCharacterReferencesAreChecked() {
        XCTAssertEqual(error("<a>&#99999999999;</a>"), "line 1, column 4: &#99999999999; is not a valid character reference")
        XCTAssertEqual(error("<a>&#x110000;</a>"), "line 1, column 4: &#x110000; is not a valid character reference")
        XCTAssertEqual(error("<a>&#4294967361;</a>"), "line 1, column 4: &#4294967361; is not a valid character reference") // 2^32 + 'A'
        XCTAssertTrue(error("<a>&#000000000000000065;</a>").hasPrefix("line 1, column 4: '&' must start a reference"))
        XCTAssertEqual(try XMLReader.parse(Array("<a>&#65;&#x1F600;</a>".utf8)).root.text, "A😀")
    }

    /// At most 256 attributes on one element (the duplicate check compares
    /// each with those before it).
    func testAttributeLimit() {
        func tag(_ n: Int) -> String { "<a" + (0..<n).map { " x\($0)=\"\"" }.joined() + "/>" }
        XCTAssertEqual(error(tag(256)), "parsed")
        XCTAssertEqual(error(tag(257)), "line 1, column \(3 + (0..<256).map { " x\($0)=\"\"".count }.reduce(0, +) + 1): <a> has more than 256 attributes (the limit)")
    }

    /// A DOCTYPE is refused unless asked for; then one without an internal
    /// subset (a plist's) is skipped, and an internal subset is refused.
    func testDoctype() {
        let plist = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist/>"
        XCTAssertEqual(error(plist), "line 2, column 1: DOCTYPE is not supported")
        XCTAssertEqual(error(plist, allowDoctype: true), "parsed")
        XCTAssertEqual(error("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>", allowDoctype: true),
                       "line 1, column 13: a DOCTYPE with an internal subset ('[...]') is not supported")
        XCTAssertEqual(error("<!DOCTYPE a \"x>\"", allowDoctype: true), "line 1, column 1: unterminated DOCTYPE (no '>')")
    }

    /// With keepSource, each element says where its tags, content and
    /// attributes are, and lists its content in order as byte ranges.
    func testSourcePositions() throws {
        let text = "<r a=\"1\"  bé=\"2\">t&amp;x<!-- c --><e/><![CDATA[d]]><?p i?><f>g</f>\n</r>"
        let bytes = Array(text.utf8)
        let root = try XMLReader.parse(bytes, keepSource: true).root
        func s(_ r: Range<Int>) -> String { String(decoding: bytes[r], as: UTF8.self) }
        XCTAssertEqual(root.attributeOffsets.map { s($0..<($0 + 3)) }, ["a=\"", "bé"])
        XCTAssertEqual(s(root.contentRange), "t&amp;x<!-- c --><e/><![CDATA[d]]><?p i?><f>g</f>\n")
        XCTAssertEqual(root.end, bytes.count)
        XCTAssertFalse(root.selfClosing)
        XCTAssertEqual(root.text, "t&xd\n")
        let items = root.items.map { item -> String in
            switch item {
            case .element(let k): return "element \(root.children[k].name)"
            case .text(let r): return "text \(s(r))"
            case .cdata(let r): return "cdata \(s(r))"
            case .comment(let r): return "comment \(s(r))"
            case .instruction(let r): return "instruction \(s(r))"
            }
        }
        XCTAssertEqual(items, ["text t&amp;x", "comment <!-- c -->", "element e", "cdata <![CDATA[d]]>", "instruction <?p i?>", "element f", "text \n"])
        let e = root.children[0]
        XCTAssertTrue(e.selfClosing)
        XCTAssertEqual(s(e.offset..<e.end), "<e/>")
        XCTAssertEqual(e.contentRange.lowerBound, e.end - 2)
        XCTAssertTrue(e.contentRange.isEmpty)
        XCTAssertEqual(s(root.children[1].contentRange), "g")
        // Without keepSource nothing is listed (the importers do not pay for it).
        XCTAssertEqual(try XMLReader.parse(bytes).root.items, [])
    }
}
