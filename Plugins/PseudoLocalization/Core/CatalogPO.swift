// GNU gettext `.po`/`.pot`: entries of comments (`# `, `#.`, `#:`, `#,`,
// `#|`; `#~` obsolete entries are kept as comments), optional `msgctxt`,
// `msgid`, optional `msgid_plural`, and `msgstr` or `msgstr[n]`, each followed
// by one or more quoted strings. Values are the escaped text between the
// quotes, continuation lines concatenated (`EscapeStyle.backslash`).
//
// Memory: a catalog is held as its UTF-8 bytes and nothing per entry but a
// hash for the duplicate check. Reading checks the whole file; rewriting
// reads it again, entry by entry, making each entry's strings as it writes
// them and handing the output out in pieces, so a 10 MB catalog rewritten
// to a file costs about its own size (`CatalogRewrite`).

/// A .po file's text: its UTF-8 bytes, read in place (a UTF-16 file is
/// transcoded). Offsets are byte offsets into `bytes`; a UTF-8 byte order
/// mark stays in front of `start`. Lines and columns are counted as
/// `SourceText` counts them (columns in Unicode scalars).
struct POText: Sendable, ScannedText {
    let bytes: [UInt8]
    /// Offset of the first byte after the byte order mark.
    let start: Int
    /// The file's encoding, which the rewritten file keeps.
    let encoding: SourceText.Encoding
    let hasBOM: Bool
    /// Byte offset of the first byte of each line (32 bits: see `maxBytes`).
    let lineStarts: [UInt32]

    /// The largest .po catalog read: offsets are kept in 32 bits.
    static let maxBytes = Int(UInt32.max)

    init(bytes input: [UInt8]) throws(CatalogError) {
        if input.count >= 2 && ((input[0] == 0xFF && input[1] == 0xFE) || (input[0] == 0xFE && input[1] == 0xFF)) {
            // Rare: decoded (and checked) as the other formats are, then held as UTF-8.
            let decoded = try SourceText(bytes: input)
            var utf8: [UInt8] = []
            utf8.reserveCapacity(decoded.count)
            decoded.appendUTF8(0..<decoded.count, to: &utf8)
            try self.init(utf8: utf8, start: 0, encoding: decoded.encoding, hasBOM: true)
        } else {
            let bom = input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF
            try self.init(utf8: input, start: bom ? 3 : 0, encoding: .utf8, hasBOM: bom)
        }
    }

    private init(utf8: [UInt8], start: Int, encoding: SourceText.Encoding, hasBOM: Bool) throws(CatalogError) {
        guard utf8.count <= POText.maxBytes else {
            throw CatalogError(line: 1, column: 1, message: "a .po catalog of \(utf8.count) bytes: more than the \(POText.maxBytes) it may hold")
        }
        bytes = utf8
        self.start = start
        self.encoding = encoding
        self.hasBOM = hasBOM
        lineStarts = POText.lineStarts(of: utf8, from: start)
        if let bad = POText.firstIllFormedUTF8(utf8, from: start) { throw error(at: bad, "invalid UTF-8") }
    }

    private static func lineStarts(of bytes: [UInt8], from start: Int) -> [UInt32] {
        var starts = [UInt32(start)]
        bytes.withUnsafeBufferPointer { b in
            let n = b.count
            var i = start
            while i < n {
                let c = b[i]
                if c <= 0x0D {
                    if c == 0x0A {
                        starts.append(UInt32(i + 1))
                    } else if c == 0x0D {
                        if i + 1 < n && b[i + 1] == 0x0A { i += 1 }
                        starts.append(UInt32(i + 1))
                    }
                }
                i += 1
            }
        }
        return starts
    }

    /// Offset of the first ill-formed UTF-8 sequence (Unicode Table 3-7, as
    /// `SourceText` decodes), nil when there is none.
    private static func firstIllFormedUTF8(_ bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { b -> Int? in
            let n = b.count
            var k = start
            while k < n {
                let c = b[k]
                if c < 0x80 { k += 1; continue }
                var length = 0
                if c >= 0xC2 && c <= 0xDF {
                    if k + 1 < n && b[k + 1] & 0xC0 == 0x80 { length = 2 }
                } else if c >= 0xE0 && c <= 0xEF {
                    if k + 2 < n {
                        let c1 = b[k + 1], c2 = b[k + 2]
                        let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80, hi: UInt8 = c == 0xED ? 0x9F : 0xBF
                        if c1 >= lo && c1 <= hi && c2 & 0xC0 == 0x80 { length = 3 }
                    }
                } else if c >= 0xF0 && c <= 0xF4 {
                    if k + 3 < n {
                        let c1 = b[k + 1], c2 = b[k + 2], c3 = b[k + 3]
                        let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80, hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
                        if c1 >= lo && c1 <= hi && c2 & 0xC0 == 0x80 && c3 & 0xC0 == 0x80 { length = 4 }
                    }
                }
                if length == 0 { return k }
                k += length
            }
            return nil
        }
    }

    var count: Int { bytes.count }

    subscript(i: Int) -> UInt32 { i < bytes.count ? UInt32(bytes[i]) : 0 }

    /// 1-based line and column (in Unicode scalars) of byte offset `i`.
    func position(_ i: Int) -> (line: Int, column: Int) {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if Int(lineStarts[mid]) <= i { lo = mid } else { hi = mid - 1 }
        }
        let lineStart = Int(lineStarts[lo])
        var column = 1
        var k = lineStart
        let end = min(i, bytes.count)
        while k < end {
            if bytes[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return (lo + 1, column)
    }

    func error(at i: Int, _ message: String) -> CatalogError {
        let p = position(i)
        return CatalogError(line: p.line, column: p.column, message: message)
    }

    /// The text of `r`, which starts and ends between scalars.
    func string(_ r: Range<Int>) -> String {
        if r.isEmpty { return "" }
        return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[r]), as: UTF8.self) }
    }

    /// The concatenated text of `ranges`.
    func string(_ ranges: [Range<Int>]) -> String {
        var out: [UInt8] = []
        var total = 0
        for r in ranges { total += r.count }
        out.reserveCapacity(total)
        for r in ranges { appendUTF8(r, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    func appendUTF8(_ r: Range<Int>, to out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[r])) }
    }


    /// The character whose first byte is at `i` (U+FFFD if none starts there).
    func character(at i: Int) -> String {
        guard i < bytes.count else { return "" }
        let c = bytes[i]
        let length = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0
        guard length > 0, i + length <= bytes.count else { return "\u{FFFD}" }
        return String(Character(String(decoding: bytes[i..<i + length], as: UTF8.self).unicodeScalars.first ?? "\u{FFFD}"))
    }

    /// "'x'", "end of file" or "a newline", for messages.
    func describe(at i: Int) -> String {
        guard i < bytes.count else { return "end of file" }
        switch bytes[i] {
        case 0x0A, 0x0D: return "a newline"
        case 0x09: return "a tab"
        default: return "'\(character(at: i))'"
        }
    }

    /// The newline the file uses ("\r\n", "\r" or "\n"), for lines it gains.
    var newline: String {
        let n = bytes.count
        var k = start
        while k < n {
            let c = bytes[k]
            if c == 0x0A { return k > start && bytes[k - 1] == 0x0D ? "\r\n" : "\n" }
            if c == 0x0D && (k + 1 >= n || bytes[k + 1] != 0x0A) { return "\r" }
            k += 1
        }
        return "\n"
    }
}

struct POFile: Sendable {
    /// A keyword's strings: the ranges inside the quotes of each segment.
    struct Value: Sendable {
        var segments: [Range<Int>]
        /// Offset of the keyword.
        var keywordStart: Int
        /// Offset just past the closing quote of the last segment.
        var end: Int
    }

    /// One entry, as the reader makes it (briefly: entries are not kept).
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

    let text: POText
    let table: String
    /// Index of the header entry (empty msgid, no msgctxt), if any, and the entry.
    let header: Int?
    let headerEntry: Entry?
    /// How many strings the file lists (msgids and msgid_plurals, not the header's).
    let stringCount: Int
    /// How many msgstr[n] the plural entries have at most: what Plural-Forms must say.
    let pluralForms: Int?

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

    /// An entry's key (its msgctxt and msgid as "ctxt\u{4}msgid") and msgid, unescaped.
    static func key(_ t: POText, _ entry: Entry) throws(CatalogError) -> (key: String, id: String) {
        let id = try unescape(t, entry.msgid!)
        return (try entry.context.map { (c) throws(CatalogError) -> String in try unescape(t, c) + "\u{4}" + id } ?? id, id)
    }

    /// What every string of an entry shares: its key, comment and format flag.
    struct StringContext {
        var key: String
        var comment: String?
        var grammar: PlaceholderCheck.Grammar

        init(_ entry: Entry, key: String) {
            self.key = key
            var comments = entry.translatorComments
            comments += entry.extractedComments
            comment = comments.isEmpty ? nil : comments.joined(separator: "\n")
            grammar = PlaceholderCheck.Grammar(poFlags: entry.flags)
        }
    }

    func string(_ v: Value, part: String, _ c: StringContext) -> CatalogString {
        let pos = text.position(start(v))
        return CatalogString(key: c.key, table: table, raw: raw(v), style: .backslash, part: part,
                             comment: c.comment, line: pos.line, column: pos.column, grammar: c.grammar)
    }

    /// Reads and checks the whole file. With `collect`, also makes its
    /// strings and translations (what `Catalog` holds); without, keeps only
    /// what a rewrite needs. A syntax error anywhere is reported before an
    /// error of meaning (a bad escape, a duplicate), as when the entries
    /// were read first and checked after.
    static func parse(_ t: POText, table: String, collect: Bool) throws(CatalogError) -> Parsed {
        var reader = POReader(t: t)
        var header: Int?
        var headerEntry: Entry?
        var stringCount = 0
        var pluralForms: Int?
        /// Each entry checked: its key's hash (high 32 bits) and its offset, for the duplicate check after the read.
        var keys: [UInt64] = []
        /// The first error of meaning, thrown once the whole file has read.
        var problem: CatalogError?
        var strings: [CatalogString] = []
        var translations: [CatalogTranslation] = []
        /// Translations of plural entries with several forms: index and form.
        var pluralFormIndexes: [(translation: Int, form: Int)] = []
        var n = -1
        while true {
            let entryStart = reader.i
            guard let entry = try reader.next() else { break }
            n += 1
            if entry.isPlural { pluralForms = max(pluralForms ?? 0, entry.msgstr.count) }
            guard problem == nil else { continue }
            let key: String, id: String
            do throws(CatalogError) {
                (key, id) = try POFile.key(t, entry)
                keys.append(UInt64(UInt32(truncatingIfNeeded: key.hashValue)) << 32 | UInt64(entryStart))
                if let plural = entry.plural { try checkEscapes(t, plural) }
                for msgstr in entry.msgstr { try checkEscapes(t, msgstr) }
            } catch {
                problem = error
                continue
            }
            if entry.context == nil && id.isEmpty && header == nil {
                header = n
                headerEntry = entry
                continue
            }
            stringCount += entry.plural == nil ? 1 : 2
            guard collect else { continue }
            let file = POFile(text: t, table: table, header: nil, headerEntry: nil, stringCount: 0, pluralForms: nil)
            let context = StringContext(entry, key: key)
            let source = file.string(entry.msgid!, part: "", context)
            strings.append(source)
            let pluralSource = entry.plural.map { file.string($0, part: "plural", context) }
            if let pluralSource { strings.append(pluralSource) }
            for (k, msgstr) in entry.msgstr.enumerated() {
                if msgstr.segments.allSatisfy(\.isEmpty) { continue }
                let translated = file.string(msgstr, part: entry.isPlural ? "[\(k)]" : "", context)
                if translated.raw.isEmpty { continue }
                translations.append(CatalogTranslation(language: "", source: k == 0 ? source : pluralSource ?? source,
                                                       translated: translated, fuzzy: entry.flags.contains("fuzzy")))
                if entry.isPlural && entry.msgstr.count > 1 { pluralFormIndexes.append((translations.count - 1, k)) }
            }
        }
        // Duplicates: entries whose key hashes are equal, compared by key (as
        // String compares: canonically equivalent keys are the same message).
        // The first in file order is reported, as a check in order would.
        if let duplicate = try firstDuplicate(t, keys) { throw duplicate }
        if let problem { throw problem }
        let file = POFile(text: t, table: table, header: header, headerEntry: headerEntry, stringCount: stringCount,
                          pluralForms: pluralForms)
        if let headerEntry, let language = file.headerField("Language", in: headerEntry), !language.isEmpty {
            for k in translations.indices { translations[k].language = language }
        }
        // msgfmt checks a plural form strictly only when the formula uses it
        // often; without a formula it checks none strictly.
        let often = headerEntry.flatMap { file.headerField("Plural-Forms", in: $0) }.flatMap(PluralForms.init(header:))?.often
        for (index, form) in pluralFormIndexes {
            translations[index].fewCounts = !(often.map { form < $0.count && $0[form] } ?? false)
        }
        return Parsed(file: file, strings: strings, translations: translations)
    }

    /// The duplicate message error for the first entry (in file order)
    /// whose key an earlier entry has, if any.
    private static func firstDuplicate(_ t: POText, _ keys: [UInt64]) throws(CatalogError) -> CatalogError? {
        let sorted = keys.sorted()
        var found: (second: Int, first: Int)?
        var g = 0
        while g < sorted.count {
            var e = g + 1
            while e < sorted.count && sorted[e] >> 32 == sorted[g] >> 32 { e += 1 }
            if e - g > 1 {
                // Equal hashes, in file order: read those entries again and compare their keys.
                let offsets = sorted[g..<e].map { Int($0 & 0xFFFF_FFFF) }
                var entryKeys: [String] = []
                for offset in offsets { entryKeys.append(try key(t, try entry(t, at: offset)).key) }
                for j in 1..<offsets.count {
                    guard let k = (0..<j).first(where: { entryKeys[$0] == entryKeys[j] }) else { continue }
                    if found.map({ offsets[j] < $0.second }) ?? true { found = (offsets[j], offsets[k]) }
                    break
                }
            }
            g = e
        }
        guard let found else { return nil }
        let second = try entry(t, at: found.second), first = try entry(t, at: found.first)
        let id = try unescape(t, second.msgid!)
        return t.error(at: second.msgid!.keywordStart,
                       "duplicate message \"\(id)\"\(second.context == nil ? "" : " in its context"): first defined on line \(t.position(first.msgid!.keywordStart).line)")
    }

    /// The entry that starts at `offset` (where the reader began it).
    private static func entry(_ t: POText, at offset: Int) throws(CatalogError) -> Entry {
        var reader = POReader(t: t, at: offset)
        guard let entry = try reader.next() else { throw t.error(at: offset, "no entry where one was read") }
        return entry
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

    static func unescape(_ t: POText, _ v: Value) throws(CatalogError) -> String {
        var out: [UInt8] = []
        try unescape(t, v, into: &out, build: true)
        return String(decoding: out, as: UTF8.self)
    }

    /// Throws what `unescape` throws, without building the text.
    static func checkEscapes(_ t: POText, _ v: Value) throws(CatalogError) {
        var out: [UInt8] = []
        try unescape(t, v, into: &out, build: false)
    }

    /// The unescaped text as UTF-8 (when `build`), or only the checks.
    static func unescape(_ t: POText, _ v: Value, into out: inout [UInt8], build: Bool) throws(CatalogError) {
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
                while k < r.upperBound && t.bytes[k] != 0x5C { k += 1 }
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
                    throw t.error(at: i, "invalid escape sequence '\\\(i + 1 < r.upperBound ? t.character(at: i + 1) : "")'")
                }
                if build { out.append(UInt8(mapped)) }
                i += 2
            }
        }
    }

    // MARK: Rewriting

    /// The rewritten file, whole (`Catalog.rewritten`).
    func rewritten(locale: String, transform: (CatalogString) -> String) -> [UInt8] {
        var result: [UInt8] = []
        do {
            try write(locale: locale, transform: transform, flushingAt: .max) { result = $0 }
        } catch {
            // The sink does not throw, and the text read once reads again.
            preconditionFailure("a .po catalog that read could not be rewritten: \(error)")
        }
        return result
    }

    /// Writes the file with each msgstr made from its msgid by `transform`,
    /// handing `sink` the output (in the file's encoding) each time
    /// `flushingAt` bytes of UTF-8 have collected, and the rest at the end.
    /// The entries are read again one at a time, so nothing per entry is kept.
    func write(locale: String, transform: (CatalogString) -> String, flushingAt: Int,
               to sink: ([UInt8]) throws -> Void) throws {
        let nl = text.newline
        var reader = POReader(t: text)
        var w = POWriter(text, capacity: flushingAt == .max ? text.count + text.count / 4 + stringCount * 8 + 16 : flushingAt + 4096)
        var n = -1
        while let entry = try reader.next() {
            n += 1
            if w.out.count >= flushingAt { try w.flush(to: sink) }
            guard let first = entry.msgstr.first, let last = entry.msgstr.last else { continue }
            if n == header {
                for edit in headerEdits(entry, locale: locale, pluralForms: pluralForms, nl: nl) { w.replace(edit.range, with: edit.text) }
                continue
            }
            let context = StringContext(entry, key: try POFile.key(text, entry).key)
            let id = transform(string(entry.msgid!, part: "", context))
            let plural = entry.plural.map { transform(string($0, part: "plural", context)) }
            for edit in clearingFuzzy(entry) { w.replace(edit.range, with: edit.text) }
            w.copy(to: first.keywordStart)
            if entry.isPlural {
                for k in entry.msgstr.indices {
                    if k > 0 { w.append(nl); w.append(entry.indent) }
                    w.append("msgstr[")
                    w.append(String(k))
                    w.append("] ")
                    POFile.writeQuoted(k == 0 ? id : plural ?? id, nl: nl, indent: entry.indent, into: &w.out)
                }
            } else {
                w.append("msgstr ")
                POFile.writeQuoted(id, nl: nl, indent: entry.indent, into: &w.out)
            }
            w.at = last.end
        }
        w.copy(to: text.count)
        try w.flush(to: sink, last: true)
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
        let field = name + ":"
        let fieldLength = field.utf8.count
        let msgstr = entry.msgstr[0]
        for r in msgstr.segments {
            // A field starts at the start of a segment or after a "\n" escape.
            var i = r.lowerBound
            var atFieldStart = true
            while i < r.upperBound {
                if atFieldStart && i + fieldLength <= r.upperBound && text.hasPrefix(field, at: i) {
                    var end = i + fieldLength
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
struct POReader {
    let t: POText
    var i: Int

    init(t: POText, at offset: Int? = nil) {
        self.t = t
        i = offset ?? t.start
    }

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

    /// The next entry (one with a msgid and a msgstr), nil at the end of
    /// the file (comments after the last entry belong to none). An entry
    /// ends where the next begins: `i` is left at the start of that line.
    mutating func next() throws(CatalogError) -> POFile.Entry? {
        var entry = POFile.Entry()
        var last: Keyword?

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
                if !entry.msgstr.isEmpty {
                    i = lineStart
                    return entry
                }
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
            if (keyword == .msgctxt || keyword == .msgid) && !entry.msgstr.isEmpty {
                i = lineStart
                return entry
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
        if let msgid = entry.msgid {
            guard !entry.msgstr.isEmpty else {
                throw t.error(at: t.count, "the msgid on line \(t.position(msgid.keywordStart).line) has no msgstr")
            }
            return entry
        } else if let ctxt = entry.context {
            throw t.error(at: t.count, "the msgctxt on line \(t.position(ctxt.keywordStart).line) has no msgid")
        }
        return nil
    }

    func lineStartOfLine(_ i: Int) -> Int {
        var k = i
        while k > t.start && t[k - 1] != Ch.lf && t[k - 1] != Ch.cr { k -= 1 }
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

/// The rewritten text, as UTF-8 in a buffer handed out in pieces (then in
/// the file's encoding). The input's bytes are copied as they are, byte
/// order mark included.
private struct POWriter {
    let text: POText
    var out: [UInt8] = []
    /// Offset of the first byte not yet copied or replaced.
    var at = 0
    /// Whether a piece went out (a UTF-16 file's byte order mark goes with the first).
    var flushed = false

    init(_ text: POText, capacity: Int) {
        self.text = text
        out.reserveCapacity(capacity)
    }

    mutating func copy(to end: Int) {
        guard end > at else { return }
        text.appendUTF8(at..<end, to: &out)
        at = end
    }

    mutating func replace(_ range: Range<Int>, with string: String) {
        copy(to: range.lowerBound)
        out.append(contentsOf: string.utf8)
        at = range.upperBound
    }

    mutating func append(_ string: String) { out.append(contentsOf: string.utf8) }

    /// Hands out what has collected (whole characters: it is called between
    /// entries or at the end); `last` keeps the buffer, which the sink may keep.
    mutating func flush(to sink: ([UInt8]) throws -> Void, last: Bool = false) throws {
        if text.encoding == .utf8 {
            try sink(out)
        } else {
            try sink(SourceText.encodeUTF8(out, littleEndian: text.encoding == .utf16LE, byteOrderMark: !flushed))
        }
        flushed = true
        if !last { out.removeAll(keepingCapacity: true) }
    }
}
