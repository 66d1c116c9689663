// Apple `.stringsdict`: an XML property list whose root dictionary maps each
// key to a dictionary holding `NSStringLocalizedFormatKey` and one dictionary
// per variable (plural, device or width rules) of category → <string>.
// Values are raw character data (`EscapeStyle.xml`).

enum StringsdictFile {
    typealias Parsed = SplicedParse

    /// Keys of a rule dictionary that describe it rather than hold text.
    static let ruleKeys: Set<String> = ["NSStringFormatSpecTypeKey", "NSStringFormatValueTypeKey"]

    static func parse(_ t: SourceText, table: String) throws(CatalogError) -> Parsed {
        let doc = try XMLDocument.parse(t)
        guard doc.root.name == "plist" else {
            throw t.error(at: doc.root.start, "the root element must be <plist>, found <\(doc.root.name)>")
        }
        let top = try significantChildren(of: doc.root, t)
        guard top.count == 1, top[0].name == "dict" else {
            let at = top.first?.start ?? doc.root.content.lowerBound
            throw t.error(at: at, "a <plist> must hold exactly one <dict>\(top.first.map { ", found <\($0.name)>" } ?? "")")
        }
        var parsed = Parsed(strings: [], slots: [])
        var seen: Set<String> = []
        for (key, keyElement, value) in try pairs(of: top[0], t) {
            guard value.name == "dict" else {
                throw t.error(at: value.start, "a stringsdict maps each key to a <dict>; \"\(key)\" maps to <\(value.name)>")
            }
            guard seen.insert(key).inserted else {
                throw t.error(at: keyElement.start, "duplicate key \"\(key)\"")
            }
            try collect(value, key: key, path: "", t, table: table, into: &parsed)
        }
        return parsed
    }

    /// Child elements, rejecting stray text (comments are fine).
    static func significantChildren(of e: XMLElement, _ t: SourceText) throws(CatalogError) -> [XMLElement] {
        var out: [XMLElement] = []
        for child in e.children {
            switch child {
            case .element(let c): out.append(c)
            case .text(let r):
                if let k = r.first(where: { !Ch.isSpace(t.s[$0].value) }) {
                    throw t.error(at: k, "unexpected text inside <\(e.name)>")
                }
            case .cdata(let r): throw t.error(at: r.lowerBound, "unexpected CDATA section inside <\(e.name)>")
            case .comment, .instruction: break
            }
        }
        return out
    }

    /// The (key, key element, value) pairs of a <dict>.
    static func pairs(of dict: XMLElement, _ t: SourceText) throws(CatalogError) -> [(String, XMLElement, XMLElement)] {
        let children = try significantChildren(of: dict, t)
        var out: [(String, XMLElement, XMLElement)] = []
        var k = 0
        while k < children.count {
            let keyElement = children[k]
            guard keyElement.name == "key" else {
                throw t.error(at: keyElement.start, "expected <key> in <dict>, found <\(keyElement.name)>")
            }
            if keyElement.childElements.first != nil {
                throw t.error(at: keyElement.childElements[0].start, "unexpected element inside <key>")
            }
            let key = keyElement.text
            guard k + 1 < children.count else {
                throw t.error(at: keyElement.end, "the key \"\(key)\" has no value")
            }
            let value = children[k + 1]
            if value.name == "key" {
                throw t.error(at: value.start, "the key \"\(key)\" has no value: found another <key>")
            }
            out.append((key, keyElement, value))
            k += 2
        }
        return out
    }

    static func collect(_ dict: XMLElement, key: String, path: String, _ t: SourceText, table: String,
                        into parsed: inout Parsed) throws(CatalogError) {
        var seen: Set<String> = []
        for (name, keyElement, value) in try pairs(of: dict, t) {
            guard seen.insert(name).inserted else {
                throw t.error(at: keyElement.start, "duplicate key \"\(name)\" in the dictionary of \"\(key)\"")
            }
            let part = path.isEmpty ? name : path + "." + name
            switch value.name {
            case "dict":
                try collect(value, key: key, path: part, t, table: table, into: &parsed)
            case "string":
                if ruleKeys.contains(name) { continue }
                if let child = value.childElements.first {
                    throw t.error(at: child.start, "unexpected element <\(child.name)> inside <string>")
                }
                let pos = t.position(value.content.lowerBound)
                parsed.strings.append(CatalogString(key: key, table: table, raw: t.string(value.content),
                                                    style: .xml, part: part, line: pos.line, column: pos.column))
                parsed.slots.append(value.selfClosing
                    ? ValueSlot(range: value.start..<value.end, kind: .selfClosing(open: "<string>", close: "</string>"))
                    : ValueSlot(range: value.content))
            default:
                continue
            }
        }
    }
}
