// GNU gettext `.po`/`.pot`: entries of comments (`# `, `#.`, `#:`, `#,`,
// `#|`; `#~` obsolete entries are kept as comments), optional `msgctxt`,
// `msgid`, optional `msgid_plural`, and `msgstr` or `msgstr[n]`, each followed
// by one or more quoted strings. Values are the escaped text between the
// quotes, continuation lines concatenated (`EscapeStyle.backslash`).

struct POFile: Sendable {
    /// A keyword's strings: the ranges inside the quotes of each segment.
    struct Value: Sendable {
        var segments: [Range<Int>]
        /// Offset of the keyword.
        var keywordStart: Int
        /// Offset just past the closing quote of the last segment.
        var end: Int
    }

    struct Entry: Sendable {
        var translatorComments: [String] = []
        var extractedComments: [String] = []
        var flags: [String] = []
        /// Each `#,` line, from the "#" to the end of the line.
        var flagLines: [Range<Int>] = []
        var context: Value?
        var msgid: Value?
        var plural: Value?
        var msgstr: [Value] = []
        var isPlural = false
        /// Leading whitespace of the first msgstr line.
        var indent = ""
    }

    let text: SourceText
    let entries: [Entry]
    /// Index of the header entry (empty msgid, no msgctxt), if any.
    let header: Int?
    /// For each listed string: the entry and whether it is the msgid_plural.
    let stringEntries: [(entry: Int, plural: Bool)]

    struct Parsed {
        var file: POFile
        var strings: [CatalogString]
        var translations: [CatalogTranslation]
    }
}

extension POFile {
    func raw(_ v: Value) -> String {
        v.segments.count == 1 ? text.string(v.segments[0]) : text.string(v.segments)
    }

    /// Where a value's text starts: its first non-empty segment.
    func start(_ v: Value) -> Int {
        (v.segments.first { !$0.isEmpty } ?? v.segments[0]).lowerBound
    }

    static func parse(_ t: SourceText, table: String) throws(CatalogError) -> Parsed {
        var reader = POReader(t: t)
        let entries = try reader.entries()
        var header: Int?
        var seen: [String: Int] = [:]
        seen.reserveCapacity(entries.count)
        var strings: [CatalogString] = []
        var translations: [CatalogTranslation] = []
        var stringEntries: [(entry: Int, plural: Bool)] = []
        /// Translations of plural entries with several forms: index and form.
        var pluralForms: [(translation: Int, form: Int)] = []
        var file = POFile(text: t, entries: entries, header: nil, stringEntries: [])

        for (n, entry) in entries.enumerated() {
            guard let msgid = entry.msgid else { continue }
            let id = try unescape(t, msgid)
            let key = try entry.context.map { (c) throws(CatalogError) -> String in try unescape(t, c) + "\u{4}" + id } ?? id
            if let first = seen.updateValue(t.position(msgid.keywordStart).line, forKey: key) {
                throw t.error(at: msgid.keywordStart,
                              "duplicate message \"\(id)\"\(entry.context == nil ? "" : " in its context"): first defined on line \(first)")
            }
            if let plural = entry.plural { try checkEscapes(t, plural) }
            for msgstr in entry.msgstr { try checkEscapes(t, msgstr) }
            if entry.context == nil && id.isEmpty && header == nil {
                header = n
                continue
            }
            var comments = entry.translatorComments
            comments += entry.extractedComments
            let comment = comments.isEmpty ? nil : comments.joined(separator: "\n")
            let grammar = PlaceholderCheck.Grammar(poFlags: entry.flags)
            func string(_ v: Value, part: String) -> CatalogString {
                let pos = t.position(file.start(v))
                return CatalogString(key: key, table: table, raw: file.raw(v), style: .backslash, part: part,
                                     comment: comment, line: pos.line, column: pos.column, grammar: grammar)
            }
            let source = string(msgid, part: "")
            strings.append(source)
            stringEntries.append((n, false))
            var pluralSource: CatalogString?
            if let plural = entry.plural {
                let s = string(plural, part: "plural")
                pluralSource = s
                strings.append(s)
                stringEntries.append((n, true))
            }
            for (k, msgstr) in entry.msgstr.enumerated() {
                if msgstr.segments.allSatisfy(\.isEmpty) { continue }
                let translated = string(msgstr, part: entry.isPlural ? "[\(k)]" : "")
                if translated.raw.isEmpty { continue }
                translations.append(CatalogTranslation(language: "", source: k == 0 ? source : pluralSource ?? source,
                                                       translated: translated, fuzzy: entry.flags.contains("fuzzy")))
                if entry.isPlural && entry.msgstr.count > 1 { pluralForms.append((translations.count - 1, k)) }
            }
        }
        file = POFile(text: t, entries: entries, header: header, stringEntries: stringEntries)
        if let header, let language = file.headerField("Language", in: entries[header]), !language.isEmpty {
            for k in translations.indices { translations[k].language = language }
        }
        // msgfmt checks a plural form strictly only when the formula uses it
        // often; without a formula it checks none strictly.
        let often = header.flatMap { file.headerField("Plural-Forms", in: entries[$0]) }.flatMap(PluralForms.init(header:))?.often
        for (index, form) in pluralForms {
            translations[index].fewCounts = !(often.map { form < $0.count && $0[form] } ?? false)
        }
        return Parsed(file: file, strings: strings, translations: translations)
    }

    /// A header field's value (e.g. "Language").
    func headerField(_ name: String, in entry: Entry) -> String? {
        guard let msgstr = entry.msgstr.first, let text = try? POFile.unescape(self.text, msgstr) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 && parts[0].trimmingCharacters(in: " \t") == name {
                return String(parts[1]).trimmedSpaces
            }
        }
        return nil
    }

    static func unescape(_ t: SourceText, _ v: Value) throws(CatalogError) -> String {
        var out: [UInt8] = []
        try unescape(t, v, into: &out, build: true)
        return String(decoding: out, as: UTF8.self)
    }

    /// Throws what `unescape` throws, without building the text.
    static func checkEscapes(_ t: SourceText, _ v: Value) throws(CatalogError) {
        var out: [UInt8] = []
        try unescape(t, v, into: &out, build: false)
    }

    /// The unescaped text as UTF-8 (when `build`), or only the checks.
    static func unescape(_ t: SourceText, _ v: Value, into out: inout [UInt8], build: Bool) throws(CatalogError) {
        if build {
            var total = 0
            for r in v.segments { total += r.count }
            out.reserveCapacity(total + total / 2)
        }
        for r in v.segments {
            var i = r.lowerBound
            while i < r.upperBound {
                // A run without escapes.
                var k = i
                while k < r.upperBound && t.s[k].value != Ch.backslash { k += 1 }
                if k > i {
                    if build { t.appendUTF8(i..<k, to: &out) }
                    i = k
                    continue
                }
                let e = t[i + 1]
                var mapped: UInt32
                switch e {
                case 0x6E: mapped = 0x0A
                case 0x74: mapped = 0x09
                case 0x72: mapped = 0x0D
                case 0x61: mapped = 0x07
                case 0x62: mapped = 0x08
                case 0x66: mapped = 0x0C
                case 0x76: mapped = 0x0B
                case Ch.quote, Ch.backslash, Ch.apos, Ch.question: mapped = e
                case 0x30...0x37:
                    let (value, k) = t.octalEscape(at: i, end: r.upperBound)
                    if build { CatalogUTF8.append(Unicode.Scalar(value)?.value ?? 0xFFFD, to: &out) }
                    i += k
                    continue
                case 0x78: // x
                    var value: UInt32 = 0
                    var k = 2
                    while i + k < r.upperBound && Ch.isHex(t[i + k]) && k < 10 {
                        value = value << 4 | Ch.hexValue(t[i + k])
                        k += 1
                    }
                    if k == 2 { throw t.error(at: i, "invalid \\x escape: expected hex digits") }
                    if build { CatalogUTF8.append(Unicode.Scalar(value)?.value ?? 0xFFFD, to: &out) }
                    i += k
                    continue
                default:
                    throw t.error(at: i, "invalid escape sequence '\\\(i + 1 < r.upperBound ? String(Character(t.s[i + 1])) : "")'")
                }
                if build { out.append(UInt8(mapped)) }
                i += 2
            }
        }
    }

    // MARK: Rewriting

    func rewritten(strings: [CatalogString], locale: String, transform: (CatalogString) -> String) -> [UInt8] {
        let nl = text.newline
        var newID = [String?](repeating: nil, count: entries.count)
        var newPlural = [String?](repeating: nil, count: entries.count)
        for (string, place) in zip(strings, stringEntries) {
            let value = transform(string)
            if place.plural { newPlural[place.entry] = value } else { newID[place.entry] = value }
        }
        var w = CatalogSplicer(text, extra: strings.count * 8)
        // How many msgstr[n] the plural entries have: what Plural-Forms must say.
        let pluralForms = entries.lazy.filter(\.isPlural).map(\.msgstr.count).max()
        for (n, entry) in entries.enumerated() {
            guard let first = entry.msgstr.first, let last = entry.msgstr.last else { continue }
            if n == header {
                for edit in headerEdits(entry, locale: locale, pluralForms: pluralForms, nl: nl) { w.replace(edit.range, with: edit.text) }
                continue
            }
            guard let id = newID[n] else { continue }
            for edit in clearingFuzzy(entry) { w.replace(edit.range, with: edit.text) }
            w.copy(to: first.keywordStart)
            if entry.isPlural {
                for k in entry.msgstr.indices {
                    if k > 0 { w.append(nl); w.append(entry.indent) }
                    w.append("msgstr[")
                    w.append(String(k))
                    w.append("] ")
                    POFile.writeQuoted(k == 0 ? id : newPlural[n] ?? id, nl: nl, indent: entry.indent, into: &w.out)
                }
            } else {
                w.append("msgstr ")
                POFile.writeQuoted(id, nl: nl, indent: entry.indent, into: &w.out)
            }
            w.at = last.end
        }
        return w.finish()
    }

    /// `value` quoted the gettext way: on one line, or, when it holds a `\n`
    /// before its end, `""` then one line per segment each ending in `\n`.
    static func quoted(_ value: String, nl: String, indent: String) -> String {
        var out: [UInt8] = []
        writeQuoted(value, nl: nl, indent: indent, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `quoted(value, nl:, indent:)` as UTF-8 to `out`.
    static func writeQuoted(_ value: String, nl: String, indent: String, into out: inout [UInt8]) {
        var value = value
        value.withUTF8 { b in
            let n = b.count
            // Where each segment but the last ends: after a `\n` escape that is not at the end.
            var i = 0
            var segmentStart = 0
            var split = false
            while i < n {
                if b[i] == 0x5C && i + 1 < n {
                    i += 2
                    if b[i - 1] == 0x6E && i < n {
                        if !split {
                            split = true
                            out.append(0x22); out.append(0x22)
                        }
                        out.append(contentsOf: nl.utf8); out.append(contentsOf: indent.utf8); out.append(0x22)
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: b[segmentStart..<i]))
                        out.append(0x22)
                        segmentStart = i
                    }
                    continue
                }
                i += 1
            }
            if split { out.append(contentsOf: nl.utf8); out.append(contentsOf: indent.utf8) }
            out.append(0x22)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[segmentStart..<n]))
            out.append(0x22)
        }
    }

    /// The header made true of the file written: Language set to `locale`;
    /// Content-Type's charset UTF-8 (what is written); and, when the file
    /// has plural entries and no Plural-Forms formula that fits them (a
    /// .pot's "nplurals=INTEGER; plural=EXPRESSION;"), English's. Each field
    /// is replaced where it is, or added (after `after`, else at the end).
    func headerEdits(_ entry: Entry, locale: String, pluralForms: Int?, nl: String) -> [TextEdit] {
        var edits = [fieldEdit(entry, "Language", value: locale, after: "Language-Team", nl: nl)]
        let contentType = headerField("Content-Type", in: entry)
        if contentType.map({ !$0.lowercased().replacingSpaces().contains("charset=utf-8") }) ?? true {
            edits.append(fieldEdit(entry, "Content-Type", value: "text/plain; charset=UTF-8", after: "MIME-Version", nl: nl))
        }
        if let forms = pluralForms, headerField("Plural-Forms", in: entry).flatMap(PluralForms.init(header:))?.count != forms {
            let formula = forms == 1 ? "nplurals=1; plural=0;" : "nplurals=\(forms); plural=(n != 1);"
            edits.append(fieldEdit(entry, "Plural-Forms", value: formula, after: "Content-Transfer-Encoding", nl: nl))
        }
        return edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
    }

    /// The edit setting header field `name` to `value` (escaped here).
    func fieldEdit(_ entry: Entry, _ name: String, value: String, after: String, nl: String) -> TextEdit {
        var escaped = ""
        for c in value.unicodeScalars {
            if c == "\"" || c == "\\" { escaped += "\\" }
            escaped.unicodeScalars.append(c)
        }
        let field = Array((name + ":").unicodeScalars)
        let msgstr = entry.msgstr[0]
        for r in msgstr.segments {
            // A field starts at the start of a segment or after a "\n" escape.
            var i = r.lowerBound
            var atFieldStart = true
            while i < r.upperBound {
                if atFieldStart && i + field.count <= r.upperBound && Array(text.s[i..<i + field.count]) == field {
                    var end = i + field.count
                    while end < r.upperBound && !(text[end] == Ch.backslash && text[end + 1] == 0x6E) {
                        end += text[end] == Ch.backslash ? 2 : 1
                    }
                    return TextEdit(range: i..<min(end, r.upperBound), text: name + ": " + escaped)
                }
                atFieldStart = false
                if text[i] == Ch.backslash {
                    atFieldStart = text[i + 1] == 0x6E
                    i += 2
                } else {
                    i += 1
                }
            }
        }
        // Not there: a line of its own after `after`, or at the end.
        let rawSegments = msgstr.segments.map { text.string($0) }
        var at = msgstr.segments.count - 1
        if let previous = rawSegments.firstIndex(where: { $0.hasPrefix(after + ":") && $0.hasSuffix("\\n") }) {
            at = previous
        }
        let needsNewline = !rawSegments[at].isEmpty && !rawSegments[at].hasSuffix("\\n")
        let insertAt = msgstr.segments[at].upperBound + 1
        return TextEdit(range: insertAt..<insertAt,
                        text: nl + entry.indent + "\"" + (needsNewline ? "\\n" : "") + name + ": " + escaped + "\\n\"")
    }

    /// An entry's `#,` lines without "fuzzy": a pseudo-translation is made
    /// from the msgid, so it is exact, and gettext leaves fuzzy ones out.
    /// A line left with no flags goes, newline included.
    func clearingFuzzy(_ entry: Entry) -> [TextEdit] {
        entry.flagLines.compactMap { line in
            let flags = text.string(line).dropFirst(2).split(separator: ",").map { String($0).trimmedSpaces }.filter { !$0.isEmpty }
            guard flags.contains("fuzzy") else { return nil }
            let kept = flags.filter { $0 != "fuzzy" }
            if !kept.isEmpty { return TextEdit(range: line, text: "#, " + kept.joined(separator: ", ")) }
            var end = line.upperBound
            if end < text.count, text[end] == Ch.cr { end += 1 }
            if end < text.count, text[end] == Ch.lf { end += 1 }
            return TextEdit(range: line.lowerBound..<end, text: "")
        }
    }
}

private extension String {
    func replacingSpaces() -> String { String(unicodeScalars.filter { $0 != " " && $0 != "\t" }) }
}

/// Reads the entries of a .po file line by line.
private struct POReader {
    let t: SourceText
    var i = 0

    enum Keyword: Equatable {
        case msgctxt, msgid, msgidPlural, msgstr, msgstrIndex(Int)
    }

    func describe(_ k: Keyword) -> String {
        switch k {
        case .msgctxt: return "msgctxt"
        case .msgid: return "msgid"
        case .msgidPlural: return "msgid_plural"
        case .msgstr: return "msgstr"
        case .msgstrIndex(let n): return "msgstr[\(n)]"
        }
    }

    mutating func skipBlanks() {
        while i < t.count && (t[i] == Ch.space || t[i] == Ch.tab) { i += 1 }
    }

    var atLineEnd: Bool { i >= t.count || t[i] == Ch.lf || t[i] == Ch.cr }

    mutating func skipLineEnd() {
        if t[i] == Ch.cr && i < t.count { i += 1 }
        if t[i] == Ch.lf && i < t.count { i += 1 }
    }

    /// A quoted string at `i`; returns the range inside the quotes.
    mutating func quotedString() throws(CatalogError) -> Range<Int> {
        let open = i
        guard t[i] == Ch.quote, i < t.count else {
            throw t.error(at: i, "expected a quoted string, found \(t.describe(at: i))")
        }
        i += 1
        let start = i
        while true {
            if atLineEnd { throw t.error(at: open, "unterminated string: the '\"' opened here has no closing '\"' on its line") }
            if t[i] == Ch.quote { break }
            i += t[i] == Ch.backslash && !(t[i + 1] == Ch.lf || t[i + 1] == Ch.cr) ? 2 : 1
        }
        let range = start..<i
        i += 1
        skipBlanks()
        if !atLineEnd {
            throw t.error(at: i, "unexpected \(t.describe(at: i)) after the closing '\"' (write \\\" for a quote inside a string)")
        }
        return range
    }

    mutating func entries() throws(CatalogError) -> [POFile.Entry] {
        var entries: [POFile.Entry] = []
        var entry = POFile.Entry()
        var last: Keyword?

        func finish(_ entry: inout POFile.Entry, at: Int) throws(CatalogError) {
            if entry.msgid != nil {
                guard !entry.msgstr.isEmpty else {
                    let p = t.position(entry.msgid!.keywordStart)
                    throw t.error(at: at, "the msgid on line \(p.line) has no msgstr")
                }
                entries.append(entry)
            } else if let ctxt = entry.context {
                throw t.error(at: at, "the msgctxt on line \(t.position(ctxt.keywordStart).line) has no msgid")
            }
            entry = POFile.Entry()
        }

        while i < t.count {
            skipBlanks()
            let lineStart = i
            if atLineEnd {
                skipLineEnd()
                continue
            }
            let c = t[i]
            if c == Ch.hash {
                // A comment starts a new entry once the current one has a msgstr.
                if !entry.msgstr.isEmpty { try finish(&entry, at: i); last = nil }
                if entry.msgid != nil {
                    throw t.error(at: i, "a comment between the keywords of an entry (expected msgstr)")
                }
                let kind = t[i + 1]
                var end = i
                while !(end >= t.count || t[end] == Ch.lf || t[end] == Ch.cr) { end += 1 }
                switch kind {
                case 0x2E: entry.extractedComments.append(t.string(min(i + 2, end)..<end).trimmedSpaces) // #.
                case 0x2C: // #,
                    let body = t.string(min(i + 2, end)..<end)
                    entry.flags += body.split(separator: ",").map { String($0).trimmedSpaces }.filter { !$0.isEmpty }
                    entry.flagLines.append(i..<end)
                case 0x3A, 0x7C, 0x7E: break // #: #| #~
                default:
                    if kind == Ch.space || kind == Ch.tab || kind == Ch.lf || kind == Ch.cr || i + 1 >= t.count {
                        let text = t.string(min(i + 1, end)..<end).trimmedSpaces
                        if !text.isEmpty { entry.translatorComments.append(text) }
                    }
                }
                i = end
                skipLineEnd()
                continue
            }
            if c == Ch.quote {
                guard let keyword = last else {
                    throw t.error(at: i, "a string without a keyword (expected msgid, msgstr... before it)")
                }
                let range = try quotedString()
                switch keyword {
                case .msgctxt: entry.context!.segments.append(range); entry.context!.end = range.upperBound + 1
                case .msgid: entry.msgid!.segments.append(range); entry.msgid!.end = range.upperBound + 1
                case .msgidPlural: entry.plural!.segments.append(range); entry.plural!.end = range.upperBound + 1
                case .msgstr, .msgstrIndex:
                    let k = entry.msgstr.count - 1
                    entry.msgstr[k].segments.append(range)
                    entry.msgstr[k].end = range.upperBound + 1
                }
                skipLineEnd()
                continue
            }
            // A keyword.
            var end = i
            while end < t.count && !Ch.isSpace(t[end]) && t[end] != Ch.quote { end += 1 }
            let word = t.string(i..<end)
            let keyword: Keyword
            switch word {
            case "msgctxt": keyword = .msgctxt
            case "msgid": keyword = .msgid
            case "msgid_plural": keyword = .msgidPlural
            case "msgstr": keyword = .msgstr
            default:
                if word.hasPrefix("msgstr["), word.hasSuffix("]"), let n = Int(word.dropFirst(7).dropLast()), n >= 0 {
                    keyword = .msgstrIndex(n)
                } else {
                    throw t.error(at: i, "unknown keyword '\(word)' (expected msgctxt, msgid, msgid_plural, msgstr or msgstr[n])")
                }
            }
            let indent = t.string(lineStartOfLine(lineStart)..<lineStart)
            i = end
            skipBlanks()
            if i == end && !atLineEnd && t[i] != Ch.quote {
                throw t.error(at: i, "expected a quoted string after \(word), found \(t.describe(at: i))")
            }
            let range = try quotedString()
            let value = POFile.Value(segments: [range], keywordStart: lineStart, end: range.upperBound + 1)
            switch keyword {
            case .msgctxt, .msgid:
                if !entry.msgstr.isEmpty { try finish(&entry, at: lineStart) }
                if keyword == .msgctxt {
                    if entry.context != nil || entry.msgid != nil {
                        throw t.error(at: lineStart, "msgctxt must come before msgid and only once per entry")
                    }
                    entry.context = value
                } else {
                    if let previous = entry.msgid {
                        throw t.error(at: lineStart, "a second msgid: the msgid on line \(t.position(previous.keywordStart).line) has no msgstr")
                    }
                    entry.msgid = value
                }
            case .msgidPlural:
                guard entry.msgid != nil, entry.msgstr.isEmpty, entry.plural == nil else {
                    throw t.error(at: lineStart, "msgid_plural must follow a msgid (and come before its msgstr)")
                }
                entry.plural = value
                entry.isPlural = true
            case .msgstr:
                guard entry.msgid != nil else { throw t.error(at: lineStart, "msgstr without a preceding msgid") }
                guard entry.msgstr.isEmpty else { throw t.error(at: lineStart, "a second msgstr in the same entry") }
                guard !entry.isPlural else {
                    throw t.error(at: lineStart, "an entry with msgid_plural needs msgstr[0], msgstr[1]... instead of msgstr")
                }
                entry.msgstr.append(value)
                entry.indent = indent
            case .msgstrIndex(let n):
                guard entry.msgid != nil else { throw t.error(at: lineStart, "\(word) without a preceding msgid") }
                guard entry.isPlural else {
                    throw t.error(at: lineStart, "\(word) in an entry without msgid_plural (use msgstr)")
                }
                guard n == entry.msgstr.count else {
                    throw t.error(at: lineStart, "expected msgstr[\(entry.msgstr.count)], found \(word)")
                }
                if n == 0 { entry.indent = indent }
                entry.msgstr.append(value)
            }
            last = keyword
            skipLineEnd()
        }
        try finish(&entry, at: t.count)
        return entries
    }

    func lineStartOfLine(_ i: Int) -> Int {
        var k = i
        while k > 0 && t[k - 1] != Ch.lf && t[k - 1] != Ch.cr { k -= 1 }
        return k
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
