// Reading and rewriting localisation catalogs.
//
// Every format is read into Unicode scalars (UTF-8, or UTF-16 LE/BE with a
// byte order mark), parsed strictly, and remembered with the exact place of
// every value, so a rewrite replaces values and nothing else. Positions are
// 1-based lines (LF, CR and CRLF each end a line) and 1-based columns counted
// in Unicode scalars; a byte order mark is not a column.

/// A localisation catalog: its translatable strings, the translations it
/// already holds, and a way to write it back with new values.
public struct Catalog: Sendable {
    public let format: CatalogFormat
    public let table: String
    /// Every translatable source string, in file order.
    public let strings: [CatalogString]
    /// Translations already in the file, paired with their source
    /// (.po msgstr with msgid; .xcstrings every non-source language; empty for the others).
    public let translations: [CatalogTranslation]

    let storage: CatalogStorage

    /// Reads a catalog. Malformed input throws `CatalogError` with the line
    /// and column of the problem and a message naming what was wrong.
    public init(bytes: [UInt8], format: CatalogFormat, table: String) throws(CatalogError) {
        self.format = format
        self.table = table
        switch format {
        case .strings:
            let text = try SourceText(bytes: bytes)
            let parsed = try StringsFile.parse(text, table: table)
            strings = parsed.strings
            translations = []
            storage = .spliced(text, parsed.slots)
        case .stringsdict:
            let text = try SourceText(bytes: bytes)
            let parsed = try StringsdictFile.parse(text, table: table)
            strings = parsed.strings
            translations = []
            storage = .spliced(text, parsed.slots)
        case .android:
            let text = try SourceText(bytes: bytes)
            let parsed = try AndroidFile.parse(text, table: table)
            strings = parsed.strings
            translations = []
            storage = .spliced(text, parsed.slots)
        case .po:
            let text = try SourceText(bytes: bytes)
            let parsed = try POFile.parse(text, table: table)
            strings = parsed.strings
            translations = parsed.translations
            storage = .po(parsed.file)
        case .xcstrings:
            let parsed = try XCStringsFile.parse(bytes: bytes, table: table)
            strings = parsed.strings
            translations = parsed.translations
            storage = .xcstrings(parsed.file)
        }
    }

    /// The format for a path by extension: .strings, .stringsdict, .xcstrings,
    /// .po (and .pot), .xml (Android). nil otherwise.
    public static func format(forPath path: String) -> CatalogFormat? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "strings": return .strings
        case "stringsdict": return .stringsdict
        case "xcstrings": return .xcstrings
        case "po", "pot": return .po
        case "xml": return .android
        default: return nil
        }
    }

    /// The pseudo-localised catalog: `transform` gets each entry of `strings`
    /// and returns its new text, already escaped for the string's style.
    public func rewritten(locale: String, transform: (CatalogString) -> String) -> [UInt8] {
        switch storage {
        case .spliced(let text, let slots):
            var edits: [TextEdit] = []
            edits.reserveCapacity(slots.count)
            for (string, slot) in zip(strings, slots) {
                let new = transform(string)
                edits.append(slot.edit(newText: new, oldText: string.raw))
            }
            return text.encode(text.applying(edits))
        case .po(let file):
            return file.rewritten(strings: strings, locale: locale, transform: transform)
        case .xcstrings(let file):
            return file.rewritten(strings: strings, locale: locale, transform: transform)
        }
    }
}

enum CatalogStorage: Sendable {
    /// The text and, for each string, where its value sits.
    case spliced(SourceText, [ValueSlot])
    case po(POFile)
    case xcstrings(XCStringsFile)
}

/// A replacement of `range` (scalar offsets into the text) by `text`.
struct TextEdit: Sendable {
    var range: Range<Int>
    var text: String
}

/// Where a value sits in the text.
struct ValueSlot: Sendable {
    enum Kind: Sendable {
        /// The value is exactly `range`.
        case inner
        /// An unquoted `.strings` word: quoted when it changes.
        case unquotedWord
        /// A self-closing XML element (`<string/>`, range covers it whole)
        /// that becomes `open + text + close` when the text is not empty.
        case selfClosing(open: String, close: String)
    }
    var range: Range<Int>
    var kind: Kind = .inner

    func edit(newText: String, oldText: String) -> TextEdit {
        switch kind {
        case .inner:
            return TextEdit(range: range, text: newText)
        case .unquotedWord:
            return TextEdit(range: range, text: newText == oldText ? newText : "\"" + newText + "\"")
        case .selfClosing(let open, let close):
            return newText.isEmpty ? TextEdit(range: range.lowerBound..<range.lowerBound, text: "")
                : TextEdit(range: range, text: open + newText + close)
        }
    }
}

/// A decoded text file: its scalars (without the byte order mark), its
/// encoding, and where each line starts.
struct SourceText: Sendable {
    enum Encoding: Sendable { case utf8, utf16LE, utf16BE }

    let encoding: Encoding
    let hasBOM: Bool
    let s: [Unicode.Scalar]
    /// Scalar offset of the first scalar of each line.
    let lineStarts: [Int]

    init(bytes: [UInt8]) throws(CatalogError) {
        var scalars: [Unicode.Scalar] = []
        if bytes.count >= 2 && ((bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF)) {
            let little = bytes[0] == 0xFF
            encoding = little ? .utf16LE : .utf16BE
            hasBOM = true
            if bytes.count % 2 != 0 {
                throw SourceText.positionError(in: scalars, "UTF-16 text has an odd number of bytes")
            }
            scalars.reserveCapacity(bytes.count / 2)
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2 - 1)
            var k = 2
            while k + 1 < bytes.count {
                units.append(little ? UInt16(bytes[k]) | UInt16(bytes[k + 1]) << 8 : UInt16(bytes[k]) << 8 | UInt16(bytes[k + 1]))
                k += 2
            }
            var iterator = units.makeIterator()
            var decoder = UTF16()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let v): scalars.append(v)
                case .emptyInput: break loop
                case .error: throw SourceText.positionError(in: scalars, "invalid UTF-16 (unpaired surrogate)")
                }
            }
        } else {
            encoding = .utf8
            var start = 0
            if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
                hasBOM = true
                start = 3
            } else {
                hasBOM = false
            }
            scalars.reserveCapacity(bytes.count - start)
            var iterator = bytes[start...].makeIterator()
            var decoder = UTF8()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let v): scalars.append(v)
                case .emptyInput: break loop
                case .error: throw SourceText.positionError(in: scalars, "invalid UTF-8")
                }
            }
        }
        s = scalars
        lineStarts = SourceText.lineStarts(of: scalars)
    }

    init(scalars: [Unicode.Scalar]) {
        encoding = .utf8
        hasBOM = false
        s = scalars
        lineStarts = SourceText.lineStarts(of: scalars)
    }

    private static func lineStarts(of s: [Unicode.Scalar]) -> [Int] {
        var starts = [0]
        var i = 0
        while i < s.count {
            let c = s[i].value
            if c == 0x0A {
                starts.append(i + 1)
            } else if c == 0x0D {
                if i + 1 < s.count && s[i + 1].value == 0x0A { i += 1 }
                starts.append(i + 1)
            }
            i += 1
        }
        return starts
    }

    /// An error placed after the scalars decoded so far.
    private static func positionError(in scalars: [Unicode.Scalar], _ message: String) -> CatalogError {
        let text = SourceText(scalars: scalars)
        return text.error(at: scalars.count, message)
    }

    var count: Int { s.count }

    /// 1-based line and column of scalar offset `i`.
    func position(_ i: Int) -> (line: Int, column: Int) {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        return (lo + 1, i - lineStarts[lo] + 1)
    }

    func error(at i: Int, _ message: String) -> CatalogError {
        let p = position(i)
        return CatalogError(line: p.line, column: p.column, message: message)
    }

    func string(_ r: Range<Int>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: s[r])
        return String(view)
    }

    subscript(i: Int) -> UInt32 { i < s.count ? s[i].value : 0 }

    /// Whether the text at `i` starts with the ASCII `literal`.
    func hasPrefix(_ literal: String, at i: Int) -> Bool {
        var k = i
        for b in literal.utf8 {
            guard k < s.count, s[k].value == UInt32(b) else { return false }
            k += 1
        }
        return true
    }

    /// "'x'", "end of file" or "a newline", for messages.
    func describe(at i: Int) -> String {
        guard i < s.count else { return "end of file" }
        switch s[i].value {
        case 0x0A, 0x0D: return "a newline"
        case 0x09: return "a tab"
        default: return "'\(Character(s[i]))'"
        }
    }

    /// The scalars with `edits` (sorted, not overlapping) applied.
    func applying(_ edits: [TextEdit]) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(s.count + s.count / 4)
        var at = 0
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            out.append(contentsOf: s[at..<edit.range.lowerBound])
            out.append(contentsOf: edit.text.unicodeScalars)
            at = edit.range.upperBound
        }
        out.append(contentsOf: s[at...])
        return out
    }

    /// `scalars` in this text's encoding, with its byte order mark.
    func encode(_ scalars: [Unicode.Scalar]) -> [UInt8] {
        var out: [UInt8] = []
        switch encoding {
        case .utf8:
            out.reserveCapacity(scalars.count + 3)
            if hasBOM { out += [0xEF, 0xBB, 0xBF] }
            for c in scalars { UTF8.encode(c) { out.append($0) } }
        case .utf16LE, .utf16BE:
            let little = encoding == .utf16LE
            out.reserveCapacity(scalars.count * 2 + 2)
            out += little ? [0xFF, 0xFE] : [0xFE, 0xFF]
            for c in scalars {
                UTF16.encode(c) { unit in
                    if little {
                        out.append(UInt8(unit & 0xFF)); out.append(UInt8(unit >> 8))
                    } else {
                        out.append(UInt8(unit >> 8)); out.append(UInt8(unit & 0xFF))
                    }
                }
            }
        }
        return out
    }

    /// The newline the file uses ("\r\n" or "\n"), for lines it gains.
    var newline: String {
        for (k, c) in s.enumerated() {
            if c.value == 0x0A { return k > 0 && s[k - 1].value == 0x0D ? "\r\n" : "\n" }
            if c.value == 0x0D && (k + 1 >= s.count || s[k + 1].value != 0x0A) { return "\r" }
        }
        return "\n"
    }
}

/// Characters for byte/scalar comparisons.
enum Ch {
    static let tab: UInt32 = 0x09, lf: UInt32 = 0x0A, cr: UInt32 = 0x0D, space: UInt32 = 0x20
    static let quote: UInt32 = 0x22, hash: UInt32 = 0x23, amp: UInt32 = 0x26, apos: UInt32 = 0x27
    static let star: UInt32 = 0x2A, slash: UInt32 = 0x2F, semicolon: UInt32 = 0x3B, lt: UInt32 = 0x3C
    static let equal: UInt32 = 0x3D, gt: UInt32 = 0x3E, question: UInt32 = 0x3F, bang: UInt32 = 0x21
    static let lbracket: UInt32 = 0x5B, backslash: UInt32 = 0x5C, rbracket: UInt32 = 0x5D
    static let minus: UInt32 = 0x2D

    static func isSpace(_ c: UInt32) -> Bool { c == space || c == tab || c == lf || c == cr }
    static func isHex(_ c: UInt32) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }
    static func hexValue(_ c: UInt32) -> UInt32 {
        if c >= 0x30 && c <= 0x39 { return c - 0x30 }
        if c >= 0x41 && c <= 0x46 { return c - 0x41 + 10 }
        return c - 0x61 + 10
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and newlines.
    var trimmedSpaces: String {
        let scalars = Array(unicodeScalars)
        var lo = 0, hi = scalars.count
        while lo < hi && Ch.isSpace(scalars[lo].value) { lo += 1 }
        while hi > lo && Ch.isSpace(scalars[hi - 1].value) { hi -= 1 }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[lo..<hi])
        return String(view)
    }
}
