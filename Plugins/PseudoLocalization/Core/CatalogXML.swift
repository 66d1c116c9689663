// The XML catalogs (.stringsdict, Android strings.xml) are read by PincerXML,
// the one XML reader (its limits and checks are set, and fuzzed, once). This
// maps its byte offsets onto the catalog's scalar offsets, so values can be
// read raw and replaced in place while every other character is kept.

import PincerXML

struct XMLAttribute: Sendable {
    var name: String
    /// The value with references resolved.
    var value: String
    /// Offset of the attribute name.
    var start: Int
}

struct XMLElement: Sendable {
    var name: String
    var attributes: [XMLAttribute]
    /// Offset of the `<` of the start tag.
    var start: Int
    /// Content range: after the start tag's `>` up to the `<` of the end
    /// tag; empty (at the `/` of `/>`) for a self-closing element.
    var content: Range<Int>
    /// Offset just past the end tag (or `/>`).
    var end: Int
    var selfClosing: Bool
    var children: [XMLNode]
    /// The element's own character data, references resolved, CDATA unwrapped.
    var text: String

    func attribute(_ name: String) -> XMLAttribute? {
        attributes.first { $0.name == name }
    }

    var childElements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
    }
}

enum XMLNode: Sendable {
    case element(XMLElement)
    /// Character data as written; range in the text.
    case text(Range<Int>)
    /// A whole `<![CDATA[...]]>` section.
    case cdata(Range<Int>)
    /// A comment: its whole range and its trimmed text.
    case comment(Range<Int>, String)
    /// A processing instruction.
    case instruction(Range<Int>)
}

struct XMLDocument: Sendable {
    /// Catalogs nest a few levels (a stringsdict's plist, dict, rule dict,
    /// string; markup in an Android string); deeper input is refused, which
    /// also bounds the recursion of the readers over the tree.
    static let maximumDepth = 100

    var root: XMLElement

    static func parse(_ t: SourceText) throws(CatalogError) -> XMLDocument {
        // UTF-8 for PincerXML (a UTF-16 file is re-encoded) and, when some
        // character takes more than one byte, for each byte offset the
        // scalar offset it falls in (else the two are the same).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(t.count + t.count / 4)
        t.appendUTF8(0..<t.count, to: &bytes)
        var scalarAt: [Int32] = []
        if bytes.count != t.count {
            guard t.count < Int(Int32.max) else { throw t.error(at: 0, "the file is larger than \(Int32.max) characters") }
            scalarAt.reserveCapacity(bytes.count + 1)
            for (k, scalar) in t.s.enumerated() {
                for _ in 0..<CatalogUTF8.length(scalar.value) { scalarAt.append(Int32(truncatingIfNeeded: k)) }
            }
            scalarAt.append(Int32(truncatingIfNeeded: t.count))
        }
        let document: XMLReader.Document
        do {
            document = try XMLReader.parse(bytes, maximumDepth: maximumDepth, keepText: true, keepSource: true, allowDoctype: true)
        } catch {
            // PincerXML counts lines and columns as the catalog does (LF, CR,
            // CR LF end a line; a column is a character).
            throw CatalogError(line: error.line, column: error.column, message: error.message)
        }
        return XMLDocument(root: element(document.root, t, Offsets(scalarAt: scalarAt)))
    }

    /// Byte offset to scalar offset.
    private struct Offsets {
        /// Empty when every character is one byte.
        let scalarAt: [Int32]
        subscript(_ byte: Int) -> Int { scalarAt.isEmpty ? byte : Int(scalarAt[byte]) }
    }

    /// Recursion bounded by `maximumDepth`.
    private static func element(_ node: XMLReader.Node, _ t: SourceText, _ at: Offsets) -> XMLElement {
        func range(_ r: Range<Int>) -> Range<Int> { at[r.lowerBound]..<at[r.upperBound] }
        var children: [XMLNode] = []
        children.reserveCapacity(node.items.count)
        for item in node.items {
            switch item {
            case .element(let index): children.append(.element(element(node.children[index], t, at)))
            case .text(let r): children.append(.text(range(r)))
            case .cdata(let r): children.append(.cdata(range(r)))
            case .instruction(let r): children.append(.instruction(range(r)))
            case .comment(let r):
                let whole = range(r)
                children.append(.comment(whole, t.string(whole.lowerBound + 4..<whole.upperBound - 3).trimmedSpaces))
            }
        }
        let attributes = zip(node.attributes, node.attributeOffsets).map { XMLAttribute(name: $0.name, value: $0.value, start: at[$1]) }
        return XMLElement(name: node.name, attributes: attributes, start: at[node.offset], content: range(node.contentRange),
                          end: at[node.end], selfClosing: node.selfClosing, children: children, text: node.text)
    }
}
