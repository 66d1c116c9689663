import PincerJSON

// Apple String Catalogs (`.xcstrings`): JSON of
// { "sourceLanguage", "strings" : { key : { "comment", "localizations" : {
// language : unit } } }, "version" }, where a unit holds a "stringUnit"
// { "state", "value" }, "variations" { "plural" | "device" : { name : unit } }
// and "substitutions" { name : { "argNum", "formatSpecifier", "variations" } }.
//
// PincerJSON checks the syntax (and places syntax errors); a second reader
// here keeps every string as it is written (`EscapeStyle.backslash`: the
// JSON-escaped text between the quotes) with its position, so the rewrite
// writes the values back exactly. The rewrite writes Xcode's layout: 2-space
// indentation, `"key" : value`, `{\n\n}` for empty objects, object keys
// sorted by code point, except the keys of "strings" and of each
// "localizations", which keep their order (Xcode's own), a new language
// being inserted before the first language that sorts after it.

struct XCStringsFile: Sendable {
    struct JStr: Sendable {
        /// The text between the quotes, escapes as written.
        var raw: String
        /// The decoded text.
        var text: String
        /// Offset of the first scalar after the opening quote.
        var start: Int
    }

    enum Node: Sendable {
        case object([Member])
        case array([Value])
        case string(JStr)
        /// A number, true, false or null, as written.
        case literal(String)
    }

    struct Value: Sendable {
        var node: Node
        var pos: Int

        var members: [Member]? {
            if case .object(let m) = node { return m }
            return nil
        }

        func member(_ key: String) -> Value? {
            members?.first { $0.key.text == key }?.value
        }

        var isString: Bool {
            if case .string = node { return true }
            return false
        }

        var typeName: String {
            switch node {
            case .object: return "an object"
            case .array: return "an array"
            case .string: return "a string"
            case .literal(let l):
                if l == "true" || l == "false" { return "a boolean" }
                return l == "null" ? "null" : "a number"
            }
        }
    }

    struct Member: Sendable {
        var key: JStr
        var value: Value
    }

    /// A key of "strings" that is rewritten.
    struct Entry: Sendable {
        /// Index of the member in "strings".
        var member: Int
        /// Index of its first string in `strings`, and the parts in order.
        var firstString: Int
        var parts: [String]
        /// The source language has no value: the key is the source.
        var usesKey: Bool
    }

    let text: SourceText
    let root: Value
    let sourceLanguage: String
    let entries: [Entry]
    let endsWithNewline: Bool

    struct Parsed {
        var file: XCStringsFile
        var strings: [CatalogString]
        var translations: [CatalogTranslation]
    }

    static func parse(bytes: [UInt8], table: String) throws(CatalogError) -> Parsed {
        let t = try SourceText(bytes: bytes)
        guard t.encoding == .utf8 else { throw CatalogError(line: 1, column: 1, message: "an .xcstrings file must be UTF-8 JSON") }
        do throws(JSONSyntaxError) {
            _ = try JSON.parse(bytes: bytes)
        } catch {
            throw CatalogError(line: error.line, column: scalarColumn(bytes, line: error.line, byteColumn: error.column),
                               message: error.message)
        }
        var reader = JSONReader(t: t)
        let root = try reader.document()
        return try build(t, root: root, table: table)
    }

    /// Converts PincerJSON's byte column into a column of scalars (a byte
    /// order mark is not counted).
    static func scalarColumn(_ bytes: [UInt8], line: Int, byteColumn: Int) -> Int {
        var currentLine = 1
        var k = 0
        while currentLine < line && k < bytes.count {
            if bytes[k] == 0x0A {
                currentLine += 1
            } else if bytes[k] == 0x0D {
                if k + 1 < bytes.count && bytes[k + 1] == 0x0A { k += 1 }
                currentLine += 1
            }
            k += 1
        }
        // A byte order mark is not a column.
        let start = line == 1 && bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : k
        var column = 1
        let end = min(bytes.count, k + byteColumn - 1)
        if start < end {
            for b in bytes[start..<end] where b & 0xC0 != 0x80 { column += 1 }
        }
        return column
    }

    static func build(_ t: SourceText, root: Value, table: String) throws(CatalogError) -> Parsed {
        guard let top = root.members else {
            throw t.error(at: root.pos, "the root of an .xcstrings file must be an object, found \(root.typeName)")
        }
        guard let sourceValue = root.member("sourceLanguage") else {
            throw t.error(at: root.pos, "missing \"sourceLanguage\" in the root object")
        }
        guard case .string(let source) = sourceValue.node else {
            throw t.error(at: sourceValue.pos, "\"sourceLanguage\" must be a string, found \(sourceValue.typeName)")
        }
        guard let stringsIndex = top.firstIndex(where: { $0.key.text == "strings" }) else {
            throw t.error(at: root.pos, "missing \"strings\" in the root object")
        }
        let stringsValue = top[stringsIndex].value
        guard let members = stringsValue.members else {
            throw t.error(at: stringsValue.pos, "\"strings\" must be an object, found \(stringsValue.typeName)")
        }
        if let version = root.member("version"), !version.isString {
            throw t.error(at: version.pos, "\"version\" must be a string, found \(version.typeName)")
        }
        let sourceLanguage = source.text
        var strings: [CatalogString] = []
        var translations: [CatalogTranslation] = []
        var entries: [Entry] = []
        var seenKeys: [String: Int] = [:]

        for (n, member) in members.enumerated() {
            let key = member.key.text
            let entry = member.value
            if let first = seenKeys[key] {
                throw t.error(at: member.key.start - 1, "duplicate key \"\(key)\" in \"strings\": first on line \(first)")
            }
            seenKeys[key] = t.position(member.key.start).line
            guard entry.members != nil else {
                throw t.error(at: entry.pos, "the entry \"\(key)\" must be an object, found \(entry.typeName)")
            }
            var comment: String?
            if let c = entry.member("comment") {
                guard case .string(let s) = c.node else {
                    throw t.error(at: c.pos, "\"comment\" of \"\(key)\" must be a string, found \(c.typeName)")
                }
                comment = s.text
            }
            var translatable = true
            if let st = entry.member("shouldTranslate") {
                guard case .literal(let l) = st.node, l == "true" || l == "false" else {
                    throw t.error(at: st.pos, "\"shouldTranslate\" of \"\(key)\" must be a boolean, found \(st.typeName)")
                }
                translatable = l == "true"
            }
            var localizations: [Member] = []
            if let l = entry.member("localizations") {
                guard let ms = l.members else {
                    throw t.error(at: l.pos, "\"localizations\" of \"\(key)\" must be an object, found \(l.typeName)")
                }
                var seenLanguages: Set<String> = []
                for m in ms {
                    guard seenLanguages.insert(m.key.text).inserted else {
                        throw t.error(at: m.key.start - 1, "duplicate language \"\(m.key.text)\" in the localizations of \"\(key)\"")
                    }
                }
                localizations = ms
            }
            var units: [String: [(part: String, value: JStr)]] = [:]
            for m in localizations {
                var found: [(part: String, value: JStr)] = []
                try collectUnits(m.value, prefix: "", t, key: key, into: &found)
                units[m.key.text] = found
            }
            guard translatable else { continue }

            func catalogString(_ s: JStr, part: String) -> CatalogString {
                let pos = t.position(s.start)
                return CatalogString(key: key, table: table, raw: s.raw, style: .backslash, part: part, comment: comment,
                                     line: pos.line, column: pos.column)
            }
            // The source value(s); the key itself when the source language has none.
            let ownUnits = units[sourceLanguage] ?? []
            let sourceUnits = ownUnits.isEmpty ? [(part: "", value: member.key)] : ownUnits
            let first = strings.count
            var bySourcePart: [String: CatalogString] = [:]
            for u in sourceUnits {
                let s = catalogString(u.value, part: u.part)
                strings.append(s)
                bySourcePart[u.part] = s
            }
            entries.append(Entry(member: n, firstString: first, parts: sourceUnits.map(\.part), usesKey: ownUnits.isEmpty))
            for m in localizations where m.key.text != sourceLanguage {
                for u in units[m.key.text] ?? [] {
                    guard let source = matchingSource(u.part, bySourcePart) ?? strings[first...].first else { continue }
                    translations.append(CatalogTranslation(language: m.key.text, source: source,
                                                           translated: catalogString(u.value, part: u.part)))
                }
            }
        }
        let endsWithNewline = t.s.last.map { $0.value == Ch.lf || $0.value == Ch.cr } ?? false
        let file = XCStringsFile(text: t, root: root, sourceLanguage: sourceLanguage, entries: entries,
                                 endsWithNewline: endsWithNewline)
        return Parsed(file: file, strings: strings, translations: translations)
    }

    /// The source string a translated part corresponds to: the same part,
    /// else the "other" form of the same variation, else the plain value.
    static func matchingSource(_ part: String, _ sources: [String: CatalogString]) -> CatalogString? {
        if let s = sources[part] { return s }
        if let dot = part.lastIndex(of: ".") {
            if let s = sources[part[..<dot] + ".other"] { return s }
        }
        return sources[""]
    }

    static func join(_ prefix: String, _ part: String) -> String {
        prefix.isEmpty ? part : prefix + "." + part
    }

    /// The strings of a localization or variation unit, with their parts.
    static func collectUnits(_ unit: Value, prefix: String, _ t: SourceText, key: String,
                             into out: inout [(part: String, value: JStr)]) throws(CatalogError) {
        guard let members = unit.members else {
            throw t.error(at: unit.pos, "a localization of \"\(key)\" must be an object, found \(unit.typeName)")
        }
        for m in members {
            switch m.key.text {
            case "stringUnit":
                guard m.value.members != nil else {
                    throw t.error(at: m.value.pos, "\"stringUnit\" of \"\(key)\" must be an object, found \(m.value.typeName)")
                }
                guard let value = m.value.member("value") else {
                    throw t.error(at: m.value.pos, "\"stringUnit\" of \"\(key)\" has no \"value\"")
                }
                guard case .string(let s) = value.node else {
                    throw t.error(at: value.pos, "the \"value\" of a stringUnit of \"\(key)\" must be a string, found \(value.typeName)")
                }
                if let state = m.value.member("state"), !state.isString {
                    throw t.error(at: state.pos, "the \"state\" of a stringUnit of \"\(key)\" must be a string, found \(state.typeName)")
                }
                out.append((prefix, s))
            case "variations":
                try collectVariations(m.value, prefix: prefix, t, key: key, into: &out)
            case "substitutions":
                guard let subs = m.value.members else {
                    throw t.error(at: m.value.pos, "\"substitutions\" of \"\(key)\" must be an object, found \(m.value.typeName)")
                }
                for sub in subs {
                    guard sub.value.members != nil else {
                        throw t.error(at: sub.value.pos, "the substitution \"\(sub.key.text)\" of \"\(key)\" must be an object, found \(sub.value.typeName)")
                    }
                    if let variations = sub.value.member("variations") {
                        try collectVariations(variations, prefix: join(prefix, "substitutions." + sub.key.text), t, key: key, into: &out)
                    }
                }
            default:
                continue
            }
        }
    }

    static func collectVariations(_ value: Value, prefix: String, _ t: SourceText, key: String,
                                  into out: inout [(part: String, value: JStr)]) throws(CatalogError) {
        guard let kinds = value.members else {
            throw t.error(at: value.pos, "\"variations\" of \"\(key)\" must be an object, found \(value.typeName)")
        }
        for kind in kinds {
            guard let cases = kind.value.members else {
                throw t.error(at: kind.value.pos, "the \"\(kind.key.text)\" variations of \"\(key)\" must be an object, found \(kind.value.typeName)")
            }
            for c in cases {
                try collectUnits(c.value, prefix: join(prefix, kind.key.text + "." + c.key.text), t, key: key, into: &out)
            }
        }
    }

    // MARK: Rewriting

    func rewritten(strings: [CatalogString], locale: String, transform: (CatalogString) -> String) -> [UInt8] {
        let results = strings.map(transform)
        guard var top = root.members, let stringsIndex = top.firstIndex(where: { $0.key.text == "strings" }),
              var members = top[stringsIndex].value.members else { return text.encode(text.s) }
        let localeKey = XCStringsFile.newString(XCStringsFile.jsonEscaped(locale))
        for entry in entries {
            var texts: [String: String] = [:]
            for (k, part) in entry.parts.enumerated() { texts[part] = results[entry.firstString + k] }
            var value = members[entry.member].value
            guard var fields = value.members else { continue }
            let source = value.member("localizations")?.member(sourceLanguage)
            let newLocalization: Value
            if let source, !entry.usesKey {
                newLocalization = XCStringsFile.rebuild(source, prefix: "", texts: texts)
            } else {
                newLocalization = XCStringsFile.object([("stringUnit", XCStringsFile.stringUnit(texts[""] ?? ""))])
            }
            var localizations = value.member("localizations")?.members ?? []
            if let existing = localizations.firstIndex(where: { $0.key.text == locale }) {
                localizations[existing].value = newLocalization
            } else {
                let at = localizations.firstIndex { XCStringsFile.precedes(locale, $0.key.text) } ?? localizations.count
                localizations.insert(Member(key: localeKey, value: newLocalization), at: at)
            }
            let newValue = Value(node: .object(localizations), pos: 0)
            if let k = fields.firstIndex(where: { $0.key.text == "localizations" }) {
                fields[k].value = newValue
            } else {
                fields.append(Member(key: XCStringsFile.newString("localizations"), value: newValue))
            }
            value.node = .object(fields)
            members[entry.member].value = value
        }
        top[stringsIndex].value.node = .object(members)
        var out: [UInt8] = []
        out.reserveCapacity(text.count + text.count / 2 + 16)
        if text.hasBOM { out += [0xEF, 0xBB, 0xBF] }
        XCStringsFile.write(Value(node: .object(top), pos: 0), indent: 0, path: Path(), into: &out)
        if endsWithNewline { out.append(0x0A) }
        return text.encodeUTF8(out)
    }

    /// Code point order (the same as the order of UTF-8 bytes).
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    static func newString(_ raw: String) -> JStr {
        JStr(raw: raw, text: raw, start: 0)
    }

    static func jsonEscaped(_ s: String) -> String {
        let quoted = JSON.quote(s)
        return String(quoted.dropFirst().dropLast())
    }

    static func object(_ fields: [(String, Value)]) -> Value {
        Value(node: .object(fields.map { Member(key: newString($0.0), value: $0.1) }), pos: 0)
    }

    static func stringUnit(_ raw: String) -> Value {
        object([("state", Value(node: .string(newString("translated")), pos: 0)),
                ("value", Value(node: .string(newString(raw)), pos: 0))])
    }

    /// A copy of the source localization `unit` with every stringUnit
    /// replaced by a translated one holding the new text of its part.
    static func rebuild(_ unit: Value, prefix: String, texts: [String: String]) -> Value {
        guard let members = unit.members else { return unit }
        var out: [Member] = []
        for m in members {
            var m = m
            switch m.key.text {
            case "stringUnit":
                m.value = stringUnit(texts[prefix] ?? "")
            case "variations":
                m.value = rebuildVariations(m.value, prefix: prefix, texts: texts)
            case "substitutions":
                guard let subs = m.value.members else { break }
                m.value.node = .object(subs.map { sub in
                    var sub = sub
                    if let fields = sub.value.members {
                        sub.value.node = .object(fields.map { field in
                            var field = field
                            if field.key.text == "variations" {
                                field.value = rebuildVariations(field.value, prefix: join(prefix, "substitutions." + sub.key.text), texts: texts)
                            }
                            return field
                        })
                    }
                    return sub
                })
            default:
                break
            }
            out.append(m)
        }
        return Value(node: .object(out), pos: unit.pos)
    }

    static func rebuildVariations(_ value: Value, prefix: String, texts: [String: String]) -> Value {
        guard let kinds = value.members else { return value }
        return Value(node: .object(kinds.map { kind in
            var kind = kind
            if let cases = kind.value.members {
                kind.value.node = .object(cases.map { c in
                    var c = c
                    c.value = rebuild(c.value, prefix: join(prefix, kind.key.text + "." + c.key.text), texts: texts)
                    return c
                })
            }
            return kind
        }), pos: value.pos)
    }

    /// What `write` needs of the chain of keys to a value: its length, and
    /// whether it starts with "strings" and its third key is "localizations".
    struct Path {
        var count = 0
        var firstIsStrings = false
        var thirdIsLocalizations = false

        func appending(_ key: String) -> Path {
            var p = self
            if count == 0 { p.firstIsStrings = key == "strings" }
            if count == 2 { p.thirdIsLocalizations = key == "localizations" }
            p.count += 1
            return p
        }

        /// `["strings"]` or `["strings", _, "localizations"]`.
        var keepsOrder: Bool {
            firstIsStrings && (count == 1 || (count == 3 && thirdIsLocalizations))
        }
    }

    static func spaces(_ n: Int, into out: inout [UInt8]) {
        for _ in 0..<n { out.append(0x20) }
    }

    /// Writes `value` in Xcode's layout as UTF-8. `path` describes the chain of keys to it.
    static func write(_ value: Value, indent: Int, path: Path, into out: inout [UInt8]) {
        switch value.node {
        case .string(let s):
            out.append(0x22); out.append(contentsOf: s.raw.utf8); out.append(0x22)
        case .literal(let l):
            out.append(contentsOf: l.utf8)
        case .array(let items):
            if items.isEmpty {
                out.append(0x5B); out.append(0x0A); out.append(0x0A); spaces(indent, into: &out); out.append(0x5D)
                return
            }
            out.append(0x5B); out.append(0x0A)
            let inner = path.appending("[]")
            for (k, item) in items.enumerated() {
                spaces(indent + 2, into: &out)
                write(item, indent: indent + 2, path: inner, into: &out)
                if k + 1 < items.count { out.append(0x2C) }
                out.append(0x0A)
            }
            spaces(indent, into: &out); out.append(0x5D)
        case .object(let members):
            if members.isEmpty {
                out.append(0x7B); out.append(0x0A); out.append(0x0A); spaces(indent, into: &out); out.append(0x7D)
                return
            }
            let ordered = path.keepsOrder ? members : sortedStable(members)
            out.append(0x7B); out.append(0x0A)
            for (k, m) in ordered.enumerated() {
                spaces(indent + 2, into: &out)
                out.append(0x22); out.append(contentsOf: m.key.raw.utf8)
                out.append(0x22); out.append(0x20); out.append(0x3A); out.append(0x20)
                write(m.value, indent: indent + 2, path: path.appending(m.key.text), into: &out)
                if k + 1 < ordered.count { out.append(0x2C) }
                out.append(0x0A)
            }
            spaces(indent, into: &out); out.append(0x7D)
        }
    }

    static func sortedStable(_ members: [Member]) -> [Member] {
        var k = 1
        while k < members.count {
            if precedes(members[k].key.text, members[k - 1].key.text) { break }
            k += 1
        }
        if k >= members.count { return members }
        return members.enumerated().sorted { a, b in
            if precedes(a.element.key.text, b.element.key.text) { return true }
            if precedes(b.element.key.text, a.element.key.text) { return false }
            return a.offset < b.offset
        }.map(\.element)
    }
}

/// Reads JSON that PincerJSON has already accepted, keeping strings as written.
private struct JSONReader {
    let t: SourceText
    var i = 0

    mutating func skipSpace() {
        while i < t.count && Ch.isSpace(t[i]) { i += 1 }
    }

    func unexpected() -> CatalogError {
        t.error(at: i, "unexpected \(t.describe(at: i))")
    }

    mutating func document() throws(CatalogError) -> XCStringsFile.Value {
        skipSpace()
        let v = try value(depth: 0)
        skipSpace()
        guard i >= t.count else { throw unexpected() }
        return v
    }

    mutating func value(depth: Int) throws(CatalogError) -> XCStringsFile.Value {
        let start = i
        guard depth < 512 else { throw t.error(at: i, "nesting too deep") }
        switch t[i] {
        case 0x7B: // {
            i += 1
            var members: [XCStringsFile.Member] = []
            skipSpace()
            if t[i] == 0x7D { i += 1; return XCStringsFile.Value(node: .object(members), pos: start) }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                guard t[i] == 0x3A else { throw unexpected() }
                i += 1
                skipSpace()
                let v = try value(depth: depth + 1)
                members.append(XCStringsFile.Member(key: key, value: v))
                skipSpace()
                if t[i] == 0x2C { i += 1; continue }
                guard t[i] == 0x7D else { throw unexpected() }
                i += 1
                return XCStringsFile.Value(node: .object(members), pos: start)
            }
        case 0x5B: // [
            i += 1
            var items: [XCStringsFile.Value] = []
            skipSpace()
            if t[i] == 0x5D { i += 1; return XCStringsFile.Value(node: .array(items), pos: start) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                if t[i] == 0x2C { i += 1; continue }
                guard t[i] == 0x5D else { throw unexpected() }
                i += 1
                return XCStringsFile.Value(node: .array(items), pos: start)
            }
        case Ch.quote:
            return XCStringsFile.Value(node: .string(try string()), pos: start)
        default:
            while i < t.count && !Ch.isSpace(t[i]) && t[i] != 0x2C && t[i] != 0x7D && t[i] != 0x5D { i += 1 }
            guard i > start else { throw unexpected() }
            return XCStringsFile.Value(node: .literal(t.string(start..<i)), pos: start)
        }
    }

    mutating func string() throws(CatalogError) -> XCStringsFile.JStr {
        guard t[i] == Ch.quote else { throw unexpected() }
        i += 1
        let start = i
        // Without escapes the text is the raw text.
        while i < t.count && t[i] != Ch.quote && t[i] != Ch.backslash { i += 1 }
        if i < t.count && t[i] == Ch.quote {
            let raw = t.string(start..<i)
            i += 1
            return XCStringsFile.JStr(raw: raw, text: raw, start: start)
        }
        var text: [UInt8] = []
        t.appendUTF8(start..<i, to: &text)
        var pendingHigh: UInt32?
        while i < t.count && t[i] != Ch.quote {
            if t[i] == Ch.backslash {
                let e = t[i + 1]
                if e == 0x75 { // u
                    var v: UInt32 = 0
                    for k in 2..<6 { v = v << 4 | Ch.hexValue(t[i + k]) }
                    i += 6
                    if v >= 0xD800 && v < 0xDC00 {
                        pendingHigh = v
                    } else if v >= 0xDC00 && v < 0xE000, let high = pendingHigh {
                        CatalogUTF8.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (v - 0xDC00))?.value ?? 0xFFFD, to: &text)
                        pendingHigh = nil
                    } else {
                        CatalogUTF8.append(Unicode.Scalar(v)?.value ?? 0xFFFD, to: &text)
                    }
                    continue
                }
                switch e {
                case 0x6E: text.append(0x0A)
                case 0x74: text.append(0x09)
                case 0x72: text.append(0x0D)
                case 0x62: text.append(0x08)
                case 0x66: text.append(0x0C)
                default: CatalogUTF8.append(t.s[i + 1].value, to: &text)
                }
                i += 2
            } else {
                CatalogUTF8.append(t.s[i].value, to: &text)
                i += 1
            }
        }
        guard i < t.count else { throw t.error(at: start - 1, "unterminated string") }
        let raw = t.string(start..<i)
        i += 1
        return XCStringsFile.JStr(raw: raw, text: String(decoding: text, as: UTF8.self), start: start)
    }
}
