// Android `res/values/strings.xml`: <resources> holding <string name>,
// <plurals name> of <item quantity> and <string-array name> of <item>.
// Values are the raw inner XML (`EscapeStyle.android`): markup, entities and
// CDATA sections as they stand. translatable="false" resources are not
// listed and are left out of the rewritten file, with the comment just
// before them: a locale's copy of them is what aapt and lint warn about.

enum AndroidFile {
    typealias Parsed = SplicedParse

    static func parse(_ t: SourceText, table: String) throws(CatalogError) -> Parsed {
        let doc = try XMLDocument.parse(t)
        let root = doc.root
        guard root.name == "resources" else {
            throw t.error(at: root.start, "the root element of an Android string resource file must be <resources>, found <\(root.name)>")
        }
        var parsed = Parsed(strings: [], slots: [])
        var pendingComment: String?
        /// Where the comment just before the next element starts.
        var pendingCommentStart: Int?

        func add(_ e: XMLElement, key: String, part: String, comment: String?, into parsed: inout Parsed) {
            let pos = t.position(e.content.lowerBound)
            parsed.strings.append(CatalogString(key: key, table: table, raw: t.string(e.content), style: .android,
                                                part: part, comment: comment, line: pos.line, column: pos.column))
            if e.selfClosing {
                let open = t.string(e.start..<e.content.lowerBound).trimmingTrailingSpaces + ">"
                parsed.slots.append(ValueSlot(range: e.start..<e.end, kind: .selfClosing(open: open, close: "</\(e.name)>")))
            } else {
                parsed.slots.append(ValueSlot(range: e.content))
            }
        }

        for child in root.children {
            let e: XMLElement
            switch child {
            case .comment(let range, let text):
                pendingComment = text
                pendingCommentStart = range.lowerBound
                continue
            case .text(let r):
                if let k = r.first(where: { !Ch.isSpace(t.s[$0].value) }) {
                    throw t.error(at: k, "unexpected text inside <resources>")
                }
                continue
            case .cdata(let r):
                throw t.error(at: r.lowerBound, "unexpected CDATA section inside <resources>")
            case .instruction:
                continue
            case .element(let element):
                e = element
            }
            let comment = pendingComment, commentStart = pendingCommentStart
            pendingComment = nil
            pendingCommentStart = nil
            guard e.name == "string" || e.name == "plurals" || e.name == "string-array" else { continue }
            guard let name = e.attribute("name")?.value else {
                throw t.error(at: e.start, "<\(e.name)> has no name attribute")
            }
            if e.attribute("translatable")?.value == "false" {
                parsed.removals.append(wholeLines(t, from: commentStart ?? e.start, to: e.end))
                continue
            }
            switch e.name {
            case "string":
                add(e, key: name, part: "", comment: comment, into: &parsed)
            case "plurals":
                var itemComment: String?
                var quantities: Set<String> = []
                for node in e.children {
                    switch node {
                    case .comment(_, let text): itemComment = text
                    case .text(let r):
                        if let k = r.first(where: { !Ch.isSpace(t.s[$0].value) }) {
                            throw t.error(at: k, "unexpected text inside <plurals name=\"\(name)\">")
                        }
                    case .cdata(let r): throw t.error(at: r.lowerBound, "unexpected CDATA section inside <plurals>")
                    case .instruction: break
                    case .element(let item):
                        guard item.name == "item" else {
                            throw t.error(at: item.start, "expected <item quantity=\"...\"> in <plurals name=\"\(name)\">, found <\(item.name)>")
                        }
                        guard let quantity = item.attribute("quantity")?.value else {
                            throw t.error(at: item.start, "<item> in <plurals name=\"\(name)\"> has no quantity attribute")
                        }
                        guard ["zero", "one", "two", "few", "many", "other"].contains(quantity) else {
                            throw t.error(at: item.start, "unknown plural quantity \"\(quantity)\" in <plurals name=\"\(name)\"> (expected zero, one, two, few, many or other)")
                        }
                        guard quantities.insert(quantity).inserted else {
                            throw t.error(at: item.start, "duplicate quantity \"\(quantity)\" in <plurals name=\"\(name)\">")
                        }
                        add(item, key: name, part: quantity, comment: itemComment ?? comment, into: &parsed)
                        itemComment = nil
                    }
                }
            default: // string-array
                var index = 0
                var itemComment: String?
                for node in e.children {
                    switch node {
                    case .comment(_, let text): itemComment = text
                    case .text(let r):
                        if let k = r.first(where: { !Ch.isSpace(t.s[$0].value) }) {
                            throw t.error(at: k, "unexpected text inside <string-array name=\"\(name)\">")
                        }
                    case .cdata(let r): throw t.error(at: r.lowerBound, "unexpected CDATA section inside <string-array>")
                    case .instruction: break
                    case .element(let item):
                        guard item.name == "item" else {
                            throw t.error(at: item.start, "expected <item> in <string-array name=\"\(name)\">, found <\(item.name)>")
                        }
                        add(item, key: name, part: "[\(index)]", comment: itemComment ?? comment, into: &parsed)
                        itemComment = nil
                        index += 1
                    }
                }
            }
        }
        return parsed
    }

    /// `start..<end` widened to the blanks before it on its first line and
    /// to the end of its last line, newline included, when nothing else
    /// shares those lines; else `start..<end` itself.
    static func wholeLines(_ t: SourceText, from start: Int, to end: Int) -> Range<Int> {
        var lo = start
        while lo > 0, t[lo - 1] == Ch.space || t[lo - 1] == Ch.tab { lo -= 1 }
        var hi = end
        while hi < t.count, t[hi] == Ch.space || t[hi] == Ch.tab { hi += 1 }
        let startsLine = lo == 0 || t[lo - 1] == Ch.lf || t[lo - 1] == Ch.cr
        guard startsLine, hi == t.count || t[hi] == Ch.lf || t[hi] == Ch.cr else { return start..<end }
        if hi < t.count, t[hi] == Ch.cr { hi += 1 }
        if hi < t.count, t[hi] == Ch.lf { hi += 1 }
        return lo..<hi
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        let u = utf8
        var hi = u.endIndex
        while hi > u.startIndex && Ch.isSpace(UInt32(u[u.index(before: hi)])) { hi = u.index(before: hi) }
        return hi == u.endIndex ? self : String(Substring(unicodeScalars[..<hi]))
    }
}
