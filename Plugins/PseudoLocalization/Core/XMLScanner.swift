// A small strict XML 1.0 reader for catalogs: it builds a tree that keeps the
// scalar offsets of every element, its content and its attributes, so values
// can be read raw and replaced in place. It rejects what is not well formed:
// mismatched or unclosed tags, unterminated comments/CDATA/processing
// instructions, unquoted or duplicate attributes, references other than the
// five predefined entities and character references, `&` without `;`,
// `--` inside comments, `]]>` in text, control characters, content outside
// the root element. Namespaces are not interpreted (`xliff:g` is a name).

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

    func attribute(_ name: String) -> XMLAttribute? {
        attributes.first { $0.name == name }
    }

    var childElements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
    }
}

enum XMLNode: Sendable {
    case element(XMLElement)
    /// Character data (references checked); range in the text.
    case text(Range<Int>)
    /// A whole `<![CDATA[...]]>` section.
    case cdata(Range<Int>)
    /// A comment: its whole range and its trimmed text.
    case comment(Range<Int>, String)
    /// A processing instruction.
    case instruction(Range<Int>)
}

struct XMLDocument: Sendable {
    var root: XMLElement

    static func parse(_ t: SourceText) throws(CatalogError) -> XMLDocument {
        var p = XMLReader(t: t)
        return try p.document()
    }
}

private struct XMLReader {
    let t: SourceText
    var i = 0

    init(t: SourceText) { self.t = t }

    func err(_ at: Int, _ message: String) -> CatalogError { t.error(at: at, message) }

    static func isNameStart(_ c: UInt32) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x3A || (c >= 0xC0 && c != 0xD7 && c != 0xF7)
    }

    static func isNameChar(_ c: UInt32) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2E || c == 0xB7
    }

    static func isAllowedChar(_ c: UInt32) -> Bool {
        c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000
    }

    mutating func skipSpace() {
        while i < t.count && Ch.isSpace(t[i]) { i += 1 }
    }

    mutating func name(_ what: String) throws(CatalogError) -> String {
        let start = i
        guard i < t.count, XMLReader.isNameStart(t[i]) else {
            throw err(i, "expected \(what), found \(t.describe(at: i))")
        }
        while i < t.count && XMLReader.isNameChar(t[i]) { i += 1 }
        return t.string(start..<i)
    }

    mutating func document() throws(CatalogError) -> XMLDocument {
        var root: XMLElement?
        while true {
            skipSpace()
            guard i < t.count else { break }
            guard t[i] == Ch.lt else {
                if root == nil {
                    throw err(i, "expected '<' to start the document's root element, found \(t.describe(at: i))")
                }
                throw err(i, "text after the end of the root element <\(root!.name)>")
            }
            if t.hasPrefix("<?", at: i) {
                let start = i
                _ = try instruction()
                if start != 0 && t.hasPrefix("<?xml", at: start) && !XMLReader.isNameChar(t[start + 5]) {
                    throw err(start, "the XML declaration '<?xml ...?>' must be at the very start of the file")
                }
            } else if t.hasPrefix("<!--", at: i) {
                _ = try comment()
            } else if t.hasPrefix("<!DOCTYPE", at: i) {
                if root != nil { throw err(i, "<!DOCTYPE> after the root element") }
                try doctype()
            } else if t.hasPrefix("</", at: i) {
                throw err(i, "end tag without a matching start tag")
            } else {
                if let r = root { throw err(i, "a second root element after <\(r.name)>") }
                root = try element()
            }
        }
        guard let root else { throw err(i, "no root element") }
        return XMLDocument(root: root)
    }

    mutating func instruction() throws(CatalogError) -> XMLNode {
        let start = i
        i += 2
        _ = try name("a processing instruction target after '<?'")
        while i < t.count && !(t[i] == Ch.question && t[i + 1] == Ch.gt) { i += 1 }
        guard i < t.count else { throw err(start, "unterminated processing instruction: '<?' has no closing '?>'") }
        i += 2
        return .instruction(start..<i)
    }

    mutating func comment() throws(CatalogError) -> XMLNode {
        let start = i
        i += 4
        while i < t.count {
            if t[i] == Ch.minus && t[i + 1] == Ch.minus {
                if t[i + 2] == Ch.gt {
                    i += 3
                    return .comment(start..<i, t.string(start + 4..<i - 3).trimmedSpaces)
                }
                throw err(i, "'--' is not allowed inside a comment")
            }
            guard XMLReader.isAllowedChar(t[i]) else { throw err(i, "control character U+\(hex(t[i])) in a comment") }
            i += 1
        }
        throw err(start, "unterminated comment: '<!--' has no closing '-->'")
    }

    mutating func doctype() throws(CatalogError) {
        let start = i
        i += 9
        var depth = 0
        while i < t.count {
            let c = t[i]
            if c == Ch.quote || c == Ch.apos {
                let q = c
                i += 1
                while i < t.count && t[i] != q { i += 1 }
            } else if c == Ch.lbracket {
                depth += 1
            } else if c == Ch.rbracket {
                depth -= 1
            } else if c == Ch.gt && depth <= 0 {
                i += 1
                return
            }
            i += 1
        }
        throw err(start, "unterminated <!DOCTYPE>: no closing '>'")
    }

    func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Checks a reference at `i` (which is at `&`) and returns its value;
    /// `i` moves past the `;`.
    mutating func reference() throws(CatalogError) -> String {
        let start = i
        i += 1
        if t[i] == Ch.hash {
            i += 1
            var v: UInt32 = 0
            let isHex = t[i] == 0x78 // x
            if isHex { i += 1 }
            let digitsStart = i
            while i < t.count && (isHex ? Ch.isHex(t[i]) : (t[i] >= 0x30 && t[i] <= 0x39)) {
                v = v > 0x10FFFF ? v : (isHex ? v * 16 + Ch.hexValue(t[i]) : v * 10 + t[i] - 0x30)
                i += 1
            }
            guard i > digitsStart else {
                throw err(start, "malformed character reference: expected \(isHex ? "hex " : "")digits after '&#\(isHex ? "x" : "")'")
            }
            guard t[i] == Ch.semicolon, i < t.count else {
                throw err(start, "character reference '\(t.string(start..<i))' is not terminated by ';'")
            }
            i += 1
            guard XMLReader.isAllowedChar(v), v <= 0x10FFFF, let scalar = Unicode.Scalar(v) else {
                throw err(start, "character reference '\(t.string(start..<i))' is not a valid XML character")
            }
            return String(Character(scalar))
        }
        guard i < t.count, XMLReader.isNameStart(t[i]) else {
            throw err(start, "'&' must start an entity reference such as '&amp;' (write '&amp;' for a literal '&')")
        }
        while i < t.count && XMLReader.isNameChar(t[i]) { i += 1 }
        let name = t.string(start + 1..<i)
        guard t[i] == Ch.semicolon, i < t.count else {
            throw err(start, "entity reference '&\(name)' is not terminated by ';'")
        }
        i += 1
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default: throw err(start, "unknown entity '&\(name);' (XML knows only &amp; &lt; &gt; &quot; &apos; and character references)")
        }
    }

    mutating func element() throws(CatalogError) -> XMLElement {
        let start = i
        i += 1
        let name = try name("an element name after '<'")
        var attributes: [XMLAttribute] = []
        while true {
            let beforeSpace = i
            skipSpace()
            guard i < t.count else { throw err(start, "unterminated start tag <\(name): no closing '>'") }
            if t[i] == Ch.gt {
                i += 1
                break
            }
            if t[i] == Ch.slash {
                guard t[i + 1] == Ch.gt else { throw err(i + 1, "expected '>' after '/' in <\(name)>, found \(t.describe(at: i + 1))") }
                let slash = i
                i += 2
                return XMLElement(name: name, attributes: attributes, start: start, content: slash..<slash, end: i,
                                  selfClosing: true, children: [])
            }
            if i == beforeSpace { throw err(i, "expected whitespace, '>' or '/>' in <\(name)>, found \(t.describe(at: i))") }
            let attrStart = i
            let attrName = try self.name("an attribute name, '>' or '/>' in <\(name)>")
            skipSpace()
            guard t[i] == Ch.equal, i < t.count else {
                throw err(i, "expected '=' after the attribute \(attrName) in <\(name)>, found \(t.describe(at: i))")
            }
            i += 1
            skipSpace()
            let q = t[i]
            guard q == Ch.quote || q == Ch.apos, i < t.count else {
                throw err(i, "the value of the attribute \(attrName) in <\(name)> must be quoted, found \(t.describe(at: i))")
            }
            let open = i
            i += 1
            var value: [UInt8] = []
            while i < t.count && t[i] != q {
                if t[i] == Ch.lt { throw err(i, "'<' is not allowed in the value of the attribute \(attrName)") }
                if t[i] == Ch.amp {
                    value.append(contentsOf: try reference().utf8)
                } else {
                    guard XMLReader.isAllowedChar(t[i]) else { throw err(i, "control character U+\(hex(t[i])) in an attribute value") }
                    CatalogUTF8.append(t.s[i].value, to: &value)
                    i += 1
                }
            }
            guard i < t.count else { throw err(open, "unterminated value of the attribute \(attrName) in <\(name)>") }
            i += 1
            if attributes.contains(where: { $0.name == attrName }) {
                throw err(attrStart, "duplicate attribute \(attrName) in <\(name)>")
            }
            attributes.append(XMLAttribute(name: attrName, value: String(decoding: value, as: UTF8.self), start: attrStart))
        }
        let contentStart = i
        var children: [XMLNode] = []
        var textStart: Int?
        func flushText(_ end: Int) {
            if let s = textStart { children.append(.text(s..<end)); textStart = nil }
        }
        while true {
            guard i < t.count else {
                let p = t.position(start)
                throw err(i, "<\(name)> opened at line \(p.line), column \(p.column) is never closed")
            }
            let c = t[i]
            if c == Ch.lt {
                flushText(i)
                if t.hasPrefix("</", at: i) {
                    let endStart = i
                    i += 2
                    let endName = try self.name("an element name after '</'")
                    skipSpace()
                    guard t[i] == Ch.gt, i < t.count else {
                        throw err(i, "expected '>' to close </\(endName), found \(t.describe(at: i))")
                    }
                    i += 1
                    guard endName == name else {
                        let p = t.position(start)
                        throw err(endStart, "mismatched end tag </\(endName)>: expected </\(name)> (opened at line \(p.line), column \(p.column))")
                    }
                    return XMLElement(name: name, attributes: attributes, start: start, content: contentStart..<endStart,
                                      end: i, selfClosing: false, children: children)
                } else if t.hasPrefix("<!--", at: i) {
                    children.append(try comment())
                } else if t.hasPrefix("<![CDATA[", at: i) {
                    let cdStart = i
                    i += 9
                    while i < t.count && !t.hasPrefix("]]>", at: i) { i += 1 }
                    guard i < t.count else { throw err(cdStart, "unterminated CDATA section: '<![CDATA[' has no closing ']]>'") }
                    i += 3
                    children.append(.cdata(cdStart..<i))
                } else if t.hasPrefix("<?", at: i) {
                    children.append(try instruction())
                } else if t.hasPrefix("<!", at: i) {
                    throw err(i, "unexpected '<!' (only comments and CDATA sections may start with '<!' here)")
                } else {
                    children.append(.element(try element()))
                }
            } else {
                if textStart == nil { textStart = i }
                if c == Ch.amp {
                    _ = try reference()
                } else if c == Ch.rbracket && t.hasPrefix("]]>", at: i) {
                    throw err(i, "']]>' is not allowed in character data")
                } else {
                    guard XMLReader.isAllowedChar(c) else { throw err(i, "control character U+\(hex(c)) is not allowed in XML") }
                    i += 1
                }
            }
        }
    }
}

extension SourceText {
    /// Character data with references resolved and CDATA sections unwrapped
    /// (comments and elements skipped), for keys and names.
    func xmlText(of element: XMLElement) -> String {
        var out = ""
        for child in element.children {
            switch child {
            case .text(let r): out += decodeXMLReferences(r)
            case .cdata(let r): out += string(r.lowerBound + 9..<r.upperBound - 3)
            case .element(let e): out += xmlText(of: e)
            case .comment, .instruction: break
            }
        }
        return out
    }

    /// `r` with the (already checked) references resolved.
    func decodeXMLReferences(_ r: Range<Int>) -> String {
        var k = r.lowerBound
        while k < r.upperBound && s[k].value != Ch.amp { k += 1 }
        if k == r.upperBound { return string(r) }
        var out = String.UnicodeScalarView()
        var i = r.lowerBound
        while i < r.upperBound {
            guard s[i].value == Ch.amp else { out.append(s[i]); i += 1; continue }
            var k = i + 1
            while k < r.upperBound && s[k].value != Ch.semicolon { k += 1 }
            let name = string(i + 1..<k)
            switch name {
            case "amp": out.append("&")
            case "lt": out.append("<")
            case "gt": out.append(">")
            case "quot": out.append("\"")
            case "apos": out.append("'")
            default:
                let digits = name.dropFirst()
                let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
                out.append(value.flatMap(Unicode.Scalar.init) ?? "\u{FFFD}")
            }
            i = k + 1
        }
        return String(out)
    }
}
