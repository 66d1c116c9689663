// Apple `.strings`: `"key" = "value";` entries with C comments (old-style
// property list syntax). Keys and values may be quoted strings or unquoted
// words ([A-Za-z0-9_$+/:.-]); every entry needs `=` and `;`.

enum StringsFile {
    typealias Parsed = SplicedParse

    static func parse(_ t: SourceText, table: String) throws(CatalogError) -> Parsed {
        var p = Parser(t: t)
        var strings: [CatalogString] = []
        var slots: [ValueSlot] = []
        var seen: [String: Int] = [:]
        var lastEntryEndLine = 0
        while true {
            let comment = try p.skipSpaceAndComments(afterLine: lastEntryEndLine)
            if p.i >= t.count { break }
            let keyStart = p.i
            guard let key = try p.token(what: "a key") else {
                throw t.error(at: p.i, "expected a quoted key, found \(t.describe(at: p.i))")
            }
            let keyText = key.quoted ? try unescape(t, key.range) : t.string(key.range)
            _ = try p.skipSpaceAndComments(afterLine: 0)
            guard t[p.i] == Ch.equal, p.i < t.count else {
                throw t.error(at: p.i, "expected '=' after the key \"\(keyText)\", found \(t.describe(at: p.i))")
            }
            p.i += 1
            _ = try p.skipSpaceAndComments(afterLine: 0)
            guard let value = try p.token(what: "a value") else {
                throw t.error(at: p.i, "expected a quoted value after '=' for the key \"\(keyText)\", found \(t.describe(at: p.i))")
            }
            if value.quoted { try checkEscapes(t, value.range) }
            _ = try p.skipSpaceAndComments(afterLine: 0)
            guard t[p.i] == Ch.semicolon, p.i < t.count else {
                throw t.error(at: p.i, "expected ';' after the value of \"\(keyText)\", found \(t.describe(at: p.i))")
            }
            let keyLine = t.position(keyStart).line
            if let first = seen[keyText] {
                throw t.error(at: keyStart, "duplicate key \"\(keyText)\": defined on line \(first) and again on line \(keyLine)")
            }
            seen[keyText] = keyLine
            lastEntryEndLine = t.position(p.i).line
            p.i += 1
            let pos = t.position(value.range.lowerBound)
            strings.append(CatalogString(key: keyText, table: table, raw: t.string(value.range), style: .backslash,
                                         comment: comment, line: pos.line, column: pos.column))
            slots.append(ValueSlot(range: value.range, kind: value.quoted ? .inner : .unquotedWord))
        }
        return Parsed(strings: strings, slots: slots)
    }

    struct Token {
        var range: Range<Int>
        var quoted: Bool
    }

    struct Parser {
        let t: SourceText
        var i = 0

        /// Skips whitespace and comments; returns the text of the last comment
        /// that does not start on `afterLine` (a trailing comment of the
        /// previous entry), consecutive `//` lines joined.
        mutating func skipSpaceAndComments(afterLine: Int) throws(CatalogError) -> String? {
            var comment: String?
            var lastLineCommentLine = -1
            while i < t.count {
                let c = t[i]
                if Ch.isSpace(c) {
                    i += 1
                } else if c == Ch.slash && t[i + 1] == Ch.star && i + 1 < t.count {
                    let start = i
                    i += 2
                    while i < t.count && !(t[i] == Ch.star && t[i + 1] == Ch.slash && i + 1 < t.count) { i += 1 }
                    if i >= t.count { throw t.error(at: start, "unterminated comment: '/*' has no closing '*/'") }
                    i += 2
                    if t.position(start).line != afterLine {
                        comment = t.string(start + 2..<i - 2).trimmedSpaces
                    }
                    lastLineCommentLine = -1
                } else if c == Ch.slash && t[i + 1] == Ch.slash && i + 1 < t.count {
                    let start = i
                    while i < t.count && t[i] != Ch.lf && t[i] != Ch.cr { i += 1 }
                    let line = t.position(start).line
                    if line != afterLine {
                        let text = t.string(start + 2..<i).trimmedSpaces
                        if lastLineCommentLine == line - 1, let previous = comment {
                            comment = previous + "\n" + text
                        } else {
                            comment = text
                        }
                        lastLineCommentLine = line
                    }
                } else {
                    break
                }
            }
            return comment
        }

        static func isWordChar(_ c: UInt32) -> Bool {
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x24 || c == 0x2B || c == 0x2F || c == 0x3A || c == 0x2E || c == 0x2D
        }

        /// A quoted string (range inside the quotes) or an unquoted word; nil
        /// when neither starts here.
        mutating func token(what: String) throws(CatalogError) -> Token? {
            guard i < t.count else { return nil }
            if t[i] == Ch.quote {
                let open = i
                i += 1
                let start = i
                while i < t.count && t[i] != Ch.quote {
                    i += t[i] == Ch.backslash ? 2 : 1
                }
                if i >= t.count { throw t.error(at: open, "unterminated string: the '\"' opened here has no closing '\"'") }
                i += 1
                return Token(range: start..<i - 1, quoted: true)
            }
            guard Parser.isWordChar(t[i]) else { return nil }
            let start = i
            while i < t.count && Parser.isWordChar(t[i]) { i += 1 }
            return Token(range: start..<i, quoted: false)
        }
    }

    /// The text of a quoted string, with escapes resolved; a malformed
    /// `\U`/`\u` escape is an error.
    static func unescape(_ t: SourceText, _ r: Range<Int>) throws(CatalogError) -> String {
        var out: [UInt8] = []
        try unescape(t, r, into: &out, build: true)
        return String(decoding: out, as: UTF8.self)
    }

    /// Throws what `unescape` throws, without building the text.
    static func checkEscapes(_ t: SourceText, _ r: Range<Int>) throws(CatalogError) {
        var out: [UInt8] = []
        try unescape(t, r, into: &out, build: false)
    }

    /// The unescaped text as UTF-8 (when `build`), or only the checks.
    static func unescape(_ t: SourceText, _ r: Range<Int>, into out: inout [UInt8], build: Bool) throws(CatalogError) {
        if build { out.reserveCapacity(r.count + r.count / 2) }
        var i = r.lowerBound
        var pendingHigh: UInt32?
        func flushHigh(_ out: inout [UInt8]) {
            if pendingHigh != nil { if build { CatalogUTF8.append(0xFFFD, to: &out) }; pendingHigh = nil }
        }
        while i < r.upperBound {
            // A run without escapes.
            var k = i
            while k < r.upperBound && t.s[k].value != Ch.backslash { k += 1 }
            if k > i {
                flushHigh(&out)
                if build { t.appendUTF8(i..<k, to: &out) }
                i = k
                continue
            }
            let e = t[i + 1]
            switch e {
            case 0x55, 0x75: // U u
                var v: UInt32 = 0
                for k in 2..<6 {
                    guard i + k < r.upperBound, Ch.isHex(t[i + k]) else {
                        throw t.error(at: i, "invalid \\\(Character(t.s[i + 1])) escape: expected 4 hex digits")
                    }
                    v = v << 4 | Ch.hexValue(t[i + k])
                }
                i += 6
                if v >= 0xD800 && v < 0xDC00 {
                    flushHigh(&out)
                    pendingHigh = v
                } else if v >= 0xDC00 && v < 0xE000 {
                    if let high = pendingHigh {
                        if build { CatalogUTF8.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (v - 0xDC00))?.value ?? 0xFFFD, to: &out) }
                        pendingHigh = nil
                    } else {
                        if build { CatalogUTF8.append(0xFFFD, to: &out) }
                    }
                } else {
                    flushHigh(&out)
                    if build { CatalogUTF8.append(Unicode.Scalar(v)?.value ?? 0xFFFD, to: &out) }
                }
                continue
            case 0x30...0x37:
                flushHigh(&out)
                let (v, k) = t.octalEscape(at: i, end: r.upperBound)
                if build { CatalogUTF8.append(Unicode.Scalar(v)?.value ?? 0xFFFD, to: &out) }
                i += k
                continue
            default:
                flushHigh(&out)
                let mapped: UInt32
                switch e {
                case 0x6E: mapped = 0x0A // n
                case 0x74: mapped = 0x09 // t
                case 0x72: mapped = 0x0D // r
                case 0x61: mapped = 0x07 // a
                case 0x62: mapped = 0x08 // b
                case 0x66: mapped = 0x0C // f
                case 0x76: mapped = 0x0B // v
                default: mapped = e
                }
                if build { CatalogUTF8.append(Unicode.Scalar(mapped)?.value ?? 0xFFFD, to: &out) }
                i += 2
            }
        }
        flushHigh(&out)
    }
}
