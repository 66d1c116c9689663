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
        case .strings, .stringsdict, .android:
            let text = try SourceText(bytes: bytes)
            let parsed: SplicedParse
            switch format {
            case .strings: parsed = try StringsFile.parse(text, table: table)
            case .stringsdict: parsed = try StringsdictFile.parse(text, table: table)
            default: parsed = try AndroidFile.parse(text, table: table)
            }
            strings = parsed.strings
            translations = []
            storage = .spliced(text, parsed.slots, removals: parsed.removals)
        case .po:
            let parsed = try POFile.parse(try POText(bytes: bytes), table: table, collect: true)
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
    /// Android's untranslatable resources are left out.
    public func rewritten(locale: String, transform: (CatalogString) -> String) -> [UInt8] {
        switch storage {
        case .spliced(let text, let slots, let removals):
            var edits: [TextEdit] = []
            edits.reserveCapacity(slots.count + removals.count)
            for (string, slot) in zip(strings, slots) {
                let new = transform(string)
                edits.append(slot.edit(newText: new, oldText: string.raw))
            }
            edits += removals.map { TextEdit(range: $0, text: "") }
            return text.encodedApplying(edits)
        case .po(let file):
            return file.rewritten(locale: locale, transform: transform)
        case .xcstrings(let file):
            return file.rewritten(strings: strings, locale: locale, transform: transform)
        }
    }
}

/// A catalog read to be rewritten once, with the output handed out in
/// pieces (to a file, say). Read and checked as `Catalog` reads it, so a
/// malformed file throws before anything is written; but a `.po` keeps only
/// its bytes: each entry's strings are made as it is written and the output
/// never collects whole, so a 10 MB catalog costs about 10 MB, not the
/// strings, entries and output of `Catalog` (several times the file).
public struct CatalogRewrite: Sendable {
    public let format: CatalogFormat
    /// How many strings the rewrite hands its transform.
    public let stringCount: Int
    private let storage: Storage

    private enum Storage: Sendable {
        case po(POFile)
        case whole(Catalog)
    }

    /// Bytes of output collected before they are handed out.
    static let pieceBytes = 1 << 16

    public init(bytes: [UInt8], format: CatalogFormat, table: String) throws(CatalogError) {
        self.format = format
        if format == .po {
            let file = try POFile.parse(try POText(bytes: bytes), table: table, collect: false).file
            stringCount = file.stringCount
            storage = .po(file)
        } else {
            let catalog = try Catalog(bytes: bytes, format: format, table: table)
            stringCount = catalog.strings.count
            storage = .whole(catalog)
        }
    }

    /// Writes what `Catalog.rewritten(locale:transform:)` returns, in order,
    /// through `write`: `transform` gets each string as `Catalog.strings`
    /// lists it, in that order. Throws what `write` throws.
    public func write(locale: String, transform: (CatalogString) -> String, to write: ([UInt8]) throws -> Void) throws {
        switch storage {
        case .po(let file):
            try file.write(locale: locale, transform: transform, flushingAt: CatalogRewrite.pieceBytes, to: write)
        case .whole(let catalog):
            try write(catalog.rewritten(locale: locale, transform: transform))
        }
    }
}

enum CatalogStorage: Sendable {
    /// The text, for each string where its value sits, and what is left out.
    case spliced(SourceText, [ValueSlot], removals: [Range<Int>])
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
struct SourceText: Sendable, ScannedText {
    enum Encoding: Sendable { case utf8, utf16LE, utf16BE }

    let encoding: Encoding
    let hasBOM: Bool
    let s: [Unicode.Scalar]
    /// Scalar offset of the first scalar of each line.
    let lineStarts: [Int]

    init(bytes: [UInt8]) throws(CatalogError) {
        let scalars: [Unicode.Scalar]
        if bytes.count >= 2 && ((bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF)) {
            let little = bytes[0] == 0xFF
            encoding = little ? .utf16LE : .utf16BE
            hasBOM = true
            if bytes.count % 2 != 0 {
                throw SourceText.positionError(in: [], "UTF-16 text has an odd number of bytes")
            }
            let (decoded, ok) = SourceText.decodeUTF16(bytes, little: little)
            if !ok { throw SourceText.positionError(in: decoded, "invalid UTF-16 (unpaired surrogate)") }
            scalars = decoded
        } else {
            encoding = .utf8
            var start = 0
            if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
                hasBOM = true
                start = 3
            } else {
                hasBOM = false
            }
            let (decoded, ok) = SourceText.decodeUTF8(bytes, from: start)
            if !ok { throw SourceText.positionError(in: decoded, "invalid UTF-8") }
            scalars = decoded
        }
        s = scalars
        lineStarts = SourceText.lineStarts(of: scalars)
    }

    /// The scalars of well-formed UTF-8 `bytes[start...]`; on an ill-formed
    /// sequence, the scalars before it and `false`.
    private static func decodeUTF8(_ bytes: [UInt8], from start: Int) -> ([Unicode.Scalar], Bool) {
        var ok = true
        let scalars = bytes.withUnsafeBufferPointer { b -> [Unicode.Scalar] in
            let n = b.count
            return [Unicode.Scalar](unsafeUninitializedCapacity: max(n - start, 0)) { out, count in
                var k = start, j = 0
                while k < n {
                    let c = b[k]
                    if c < 0x80 {
                        out[j] = Unicode.Scalar(c); j += 1; k += 1
                        continue
                    }
                    var v: UInt32 = 0
                    var length = 0
                    // Well-formed sequences (Unicode Table 3-7).
                    if c >= 0xC2 && c <= 0xDF {
                        if k + 1 < n && b[k + 1] & 0xC0 == 0x80 {
                            v = UInt32(c & 0x1F) << 6 | UInt32(b[k + 1] & 0x3F); length = 2
                        }
                    } else if c >= 0xE0 && c <= 0xEF {
                        if k + 2 < n {
                            let c1 = b[k + 1], c2 = b[k + 2]
                            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80, hi: UInt8 = c == 0xED ? 0x9F : 0xBF
                            if c1 >= lo && c1 <= hi && c2 & 0xC0 == 0x80 {
                                v = UInt32(c & 0x0F) << 12 | UInt32(c1 & 0x3F) << 6 | UInt32(c2 & 0x3F); length = 3
                            }
                        }
                    } else if c >= 0xF0 && c <= 0xF4 {
                        if k + 3 < n {
                            let c1 = b[k + 1], c2 = b[k + 2], c3 = b[k + 3]
                            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80, hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
                            if c1 >= lo && c1 <= hi && c2 & 0xC0 == 0x80 && c3 & 0xC0 == 0x80 {
                                v = UInt32(c & 0x07) << 18 | UInt32(c1 & 0x3F) << 12 | UInt32(c2 & 0x3F) << 6 | UInt32(c3 & 0x3F)
                                length = 4
                            }
                        }
                    }
                    guard length > 0, let scalar = Unicode.Scalar(v) else { ok = false; break }
                    out[j] = scalar; j += 1; k += length
                }
                count = j
            }
        }
        return (scalars, ok)
    }

    /// The scalars of UTF-16 `bytes[2...]`; on an unpaired surrogate, the
    /// scalars before it and `false`.
    private static func decodeUTF16(_ bytes: [UInt8], little: Bool) -> ([Unicode.Scalar], Bool) {
        var ok = true
        let scalars = bytes.withUnsafeBufferPointer { b -> [Unicode.Scalar] in
            let units = (b.count - 2) / 2
            return [Unicode.Scalar](unsafeUninitializedCapacity: max(units, 0)) { out, count in
                func unit(_ u: Int) -> UInt32 {
                    let k = 2 + 2 * u
                    return little ? UInt32(b[k]) | UInt32(b[k + 1]) << 8 : UInt32(b[k]) << 8 | UInt32(b[k + 1])
                }
                var u = 0, j = 0
                while u < units {
                    let w = unit(u)
                    if w < 0xD800 || w > 0xDFFF {
                        out[j] = Unicode.Scalar(w).unsafelyUnwrapped; j += 1; u += 1
                    } else if w < 0xDC00 && u + 1 < units, case let w2 = unit(u + 1), w2 >= 0xDC00 && w2 <= 0xDFFF {
                        out[j] = Unicode.Scalar(0x10000 + ((w - 0xD800) << 10) + (w2 - 0xDC00)).unsafelyUnwrapped
                        j += 1; u += 2
                    } else {
                        ok = false; break
                    }
                }
                count = j
            }
        }
        return (scalars, ok)
    }

    init(scalars: [Unicode.Scalar]) {
        encoding = .utf8
        hasBOM = false
        s = scalars
        lineStarts = SourceText.lineStarts(of: scalars)
    }

    private static func lineStarts(of s: [Unicode.Scalar]) -> [Int] {
        var starts = [0]
        s.withUnsafeBufferPointer { b in
            let n = b.count
            var i = 0
            while i < n {
                let c = b[i].value
                if c <= 0x0D {
                    if c == 0x0A {
                        starts.append(i + 1)
                    } else if c == 0x0D {
                        if i + 1 < n && b[i + 1].value == 0x0A { i += 1 }
                        starts.append(i + 1)
                    }
                }
                i += 1
            }
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
        if r.isEmpty { return "" }
        return s.withUnsafeBufferPointer { b in
            var length = 0
            for k in r { length += CatalogUTF8.length(b[k].value) }
            return String(unsafeUninitializedCapacity: length) { out in
                var j = 0
                for k in r { CatalogUTF8.put(b[k].value, into: out, at: &j) }
                return j
            }
        }
    }

    /// The concatenated text of `ranges`.
    func string(_ ranges: [Range<Int>]) -> String {
        var out: [UInt8] = []
        var total = 0
        for r in ranges { total += r.count }
        out.reserveCapacity(total + total / 2)
        for r in ranges { appendUTF8(r, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the UTF-8 of the scalars in `r` to `out`.
    func appendUTF8(_ r: Range<Int>, to out: inout [UInt8]) {
        s.withUnsafeBufferPointer { b in
            for k in r {
                let v = b[k].value
                if v < 0x80 { out.append(UInt8(v)) } else { CatalogUTF8.append(v, to: &out) }
            }
        }
    }

    subscript(i: Int) -> UInt32 { i < s.count ? s[i].value : 0 }


    /// "'x'", "end of file" or "a newline", for messages.
    func describe(at i: Int) -> String {
        guard i < s.count else { return "end of file" }
        switch s[i].value {
        case 0x0A, 0x0D: return "a newline"
        case 0x09: return "a tab"
        default: return "'\(Character(s[i]))'"
        }
    }

    /// The text with `edits` (not overlapping) applied, in its encoding.
    func encodedApplying(_ edits: [TextEdit]) -> [UInt8] {
        var sorted = true
        var k = 1
        while k < edits.count {
            if edits[k].range.lowerBound < edits[k - 1].range.lowerBound { sorted = false; break }
            k += 1
        }
        let ordered = sorted ? edits : edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound })
        var w = CatalogSplicer(self, extra: ordered.count * 8)
        for edit in ordered { w.replace(edit.range, with: edit.text) }
        return w.finish()
    }

    /// `scalars` in this text's encoding, with its byte order mark.
    func encode(_ scalars: [Unicode.Scalar]) -> [UInt8] {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(scalars.count + 3)
        if encoding == .utf8 && hasBOM { utf8 += [0xEF, 0xBB, 0xBF] }
        scalars.withUnsafeBufferPointer { b in
            for c in b { CatalogUTF8.append(c.value, to: &utf8) }
        }
        return encodeUTF8(utf8)
    }

    /// UTF-8 `bytes` (with the byte order mark already in place for a UTF-8
    /// text) in this text's encoding.
    func encodeUTF8(_ bytes: [UInt8]) -> [UInt8] {
        guard encoding != .utf8 else { return bytes }
        return SourceText.encodeUTF8(bytes, littleEndian: encoding == .utf16LE, byteOrderMark: true)
    }

    /// Well-formed UTF-8 `bytes` as UTF-16, after a byte order mark if `byteOrderMark`.
    static func encodeUTF8(_ bytes: [UInt8], littleEndian little: Bool, byteOrderMark: Bool) -> [UInt8] {
        // At most two bytes of UTF-16 per byte of UTF-8.
        return [UInt8](unsafeUninitializedCapacity: bytes.count * 2 + 2) { out, count in
            var j = 0
            @inline(__always) func unit(_ u: UInt32) {
                if little {
                    out[j] = UInt8(u & 0xFF); out[j + 1] = UInt8(u >> 8)
                } else {
                    out[j] = UInt8(u >> 8); out[j + 1] = UInt8(u & 0xFF)
                }
                j += 2
            }
            if byteOrderMark { unit(0xFEFF) }
            bytes.withUnsafeBufferPointer { b in
                var k = 0
                let n = b.count
                while k < n {
                    let c = b[k]
                    var v: UInt32
                    if c < 0x80 {
                        v = UInt32(c); k += 1
                    } else if c < 0xE0 {
                        v = UInt32(c & 0x1F) << 6 | UInt32(b[k + 1] & 0x3F); k += 2
                    } else if c < 0xF0 {
                        v = UInt32(c & 0x0F) << 12 | UInt32(b[k + 1] & 0x3F) << 6 | UInt32(b[k + 2] & 0x3F); k += 3
                    } else {
                        v = UInt32(c & 0x07) << 18 | UInt32(b[k + 1] & 0x3F) << 12 | UInt32(b[k + 2] & 0x3F) << 6 | UInt32(b[k + 3] & 0x3F)
                        k += 4
                    }
                    if v >= 0x10000 {
                        v -= 0x10000
                        unit(0xD800 + (v >> 10)); unit(0xDC00 + (v & 0x3FF))
                    } else {
                        unit(v)
                    }
                }
            }
            count = j
        }
    }
}

/// Characters for byte/scalar comparisons.
/// A catalog's text as the readers scan it: scalars (SourceText) or UTF-8
/// bytes (POText), each read as a UInt32 that is 0 past the end.
protocol ScannedText {
    var count: Int { get }
    subscript(i: Int) -> UInt32 { get }
}

extension ScannedText {
    /// A C-style octal escape whose backslash is at `i`: up to three octal
    /// digits before `end`, as .po and .strings files write them. Returns
    /// the value and the escape's length, backslash included.
    func octalEscape(at i: Int, end: Int) -> (value: UInt32, length: Int) {
        var value: UInt32 = 0
        var k = 1
        while k <= 3 && i + k < end && self[i + k] >= 0x30 && self[i + k] <= 0x37 {
            value = value * 8 + self[i + k] - 0x30
            k += 1
        }
        return (value, k)
    }

    /// Whether the text at `i` starts with the ASCII `literal`.
    func hasPrefix(_ literal: String, at i: Int) -> Bool {
        var k = i
        for b in literal.utf8 {
            guard k < count, self[k] == UInt32(b) else { return false }
            k += 1
        }
        return true
    }
}

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
        let u = utf8
        guard let f = u.first, let l = u.last, Ch.isSpace(UInt32(f)) || Ch.isSpace(UInt32(l)) else { return self }
        var lo = u.startIndex, hi = u.endIndex
        while lo < hi && Ch.isSpace(UInt32(u[lo])) { lo = u.index(after: lo) }
        while hi > lo && Ch.isSpace(UInt32(u[u.index(before: hi)])) { hi = u.index(before: hi) }
        return String(Substring(unicodeScalars[lo..<hi]))
    }
}

/// UTF-8 encoding of scalar values (known valid) into byte buffers.
enum CatalogUTF8 {
    @inline(__always)
    static func length(_ v: UInt32) -> Int {
        v < 0x80 ? 1 : v < 0x800 ? 2 : v < 0x10000 ? 3 : 4
    }

    @inline(__always)
    static func put(_ v: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at j: inout Int) {
        if v < 0x80 {
            out[j] = UInt8(v); j += 1
        } else if v < 0x800 {
            out[j] = UInt8(0xC0 | v >> 6); out[j + 1] = UInt8(0x80 | v & 0x3F); j += 2
        } else if v < 0x10000 {
            out[j] = UInt8(0xE0 | v >> 12); out[j + 1] = UInt8(0x80 | (v >> 6) & 0x3F)
            out[j + 2] = UInt8(0x80 | v & 0x3F); j += 3
        } else {
            out[j] = UInt8(0xF0 | v >> 18); out[j + 1] = UInt8(0x80 | (v >> 12) & 0x3F)
            out[j + 2] = UInt8(0x80 | (v >> 6) & 0x3F); out[j + 3] = UInt8(0x80 | v & 0x3F); j += 4
        }
    }

    @inline(__always)
    static func append(_ v: UInt32, to out: inout [UInt8]) {
        if v < 0x80 {
            out.append(UInt8(v))
        } else if v < 0x800 {
            out.append(UInt8(0xC0 | v >> 6)); out.append(UInt8(0x80 | v & 0x3F))
        } else if v < 0x10000 {
            out.append(UInt8(0xE0 | v >> 12)); out.append(UInt8(0x80 | (v >> 6) & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
        } else {
            out.append(UInt8(0xF0 | v >> 18)); out.append(UInt8(0x80 | (v >> 12) & 0x3F))
            out.append(UInt8(0x80 | (v >> 6) & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
        }
    }
}

/// Writes a text with replacements, in order, as UTF-8 into one buffer,
/// then in the text's encoding.
struct CatalogSplicer {
    let text: SourceText
    var out: [UInt8] = []
    /// Scalar offset of the first scalar not yet copied or replaced.
    var at = 0

    init(_ text: SourceText, extra: Int = 0) {
        self.text = text
        out.reserveCapacity(text.count + text.count / 4 + extra + 16)
        if text.encoding == .utf8 && text.hasBOM { out += [0xEF, 0xBB, 0xBF] }
    }

    /// Copies the text up to scalar offset `end`.
    mutating func copy(to end: Int) {
        guard end > at else { return }
        let from = at
        text.s.withUnsafeBufferPointer { b in
            var k = from
            while k < end {
                // A run of ASCII in one append, then one other scalar.
                var e = k
                while e < end && b[e].value < 0x80 { e += 1 }
                if e > k {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[k..<e]).lazy.map { UInt8(truncatingIfNeeded: $0.value) })
                    k = e
                }
                if k < end {
                    CatalogUTF8.append(b[k].value, to: &out)
                    k += 1
                }
            }
        }
        at = end
    }

    mutating func replace(_ range: Range<Int>, with string: String) {
        copy(to: range.lowerBound)
        out.append(contentsOf: string.utf8)
        at = range.upperBound
    }

    mutating func append(_ string: String) { out.append(contentsOf: string.utf8) }

    /// The whole result in the text's encoding.
    mutating func finish() -> [UInt8] {
        copy(to: text.count)
        return text.encodeUTF8(out)
    }
}

/// What the formats rewritten in place (.strings, .stringsdict, Android)
/// read: the strings, and where each value sits in the text.
struct SplicedParse {
    var strings: [CatalogString]
    var slots: [ValueSlot]
    /// Text the rewritten file leaves out (Android's untranslatable resources).
    var removals: [Range<Int>] = []
}
