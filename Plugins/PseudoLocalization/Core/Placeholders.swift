/// Splits a string into text a transform may change and pieces it must keep
/// whole: format placeholders, markup, addresses and the escapes of the
/// file the string came from. Works on the UTF-8 bytes: every piece of
/// syntax is ASCII, and a byte of a multi-byte scalar never matches one.
///
/// Recognised, in this order at each position:
/// - escapes of the string's `EscapeStyle` (`\n`, `\U2192`, and in XML
///   files entities: `&amp;`...);
/// - printf specifiers in Apple's grammar: `%` [`n$`] [flags `-+ #0'`]
///   [width: digits, `*` or `*n$`] [`.` precision, the same] [length `hh h l
///   ll q L z t j`] conversion (`@ d D i u U x X o O f F e E g G c C s S p a A`,
///   and Python's `r`),
///   and `%%`; Python's named `%(name)s` (its own kind, with `r` among its
///   conversions), so a check can tell a renamed name from a moved
///   argument; stringsdict variables `%#@name@` and `%1$#@name@`;
/// - ICU message syntax: `{arg}`, `{arg, type[, style]}`, and the complex
///   arguments plural / selectordinal / select whose option bodies are
///   messages again (with `#` a placeholder inside plural bodies); apostrophe
///   quoting (`''`, `'{...}'`) applies in a string that has a complex or
///   typed argument; `{{name}}` and `{name}` otherwise;
/// - HTML/XML tags (`<b>`, `</a>`, `<br/>`, `<!-- -->`) and, in plain
///   text, HTML entities;
/// - URLs (`scheme://...`, `www.`) and email addresses.
///
/// Limits: ICU complex arguments are scanned as messages recursively to
/// `maximumNesting` levels; one nested deeper is kept whole as a single ICU
/// piece (not transformed, compared as written), so hostile input cannot
/// exhaust the stack. Numbers in specifiers are only skipped here;
/// `PlaceholderCheck` reads them with checked arithmetic.
public struct PlaceholderScanner: Sendable {
    /// How deep ICU plural/select bodies are scanned (real messages nest two or three).
    public static let maximumNesting = 20

    public enum Kind: String, Sendable {
        /// `named` is Python's `%(name)s`; `printf` every other specifier.
        case text, printf, named, variable, brace, icu, pound, tag, entity, url, email, escape, quoted
    }

    public struct Piece: Sendable, Equatable {
        public var kind: Kind
        public var text: String
        public init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }
    }

    public let style: EscapeStyle

    public init(style: EscapeStyle = .none) {
        self.style = style
    }

    /// The pieces of `string`, in order; concatenated they give it back.
    public func pieces(_ string: String) -> [Piece] {
        var copy = string
        return copy.withUTF8 { bytes in
            spans(bytes).map { Piece($0.kind, String(decoding: UnsafeBufferPointer(rebasing: bytes[$0.range]), as: UTF8.self)) }
        }
    }

    /// The placeholders of `string` in order: everything but text, escapes
    /// and quoted ICU literals. Two strings with the same list format the
    /// same arguments the same way.
    public func placeholders(_ string: String) -> [Piece] {
        pieces(string).filter { $0.kind.isPlaceholder }
    }

    /// One piece as a byte range of the scanned buffer.
    struct Span {
        var kind: Kind
        var range: Range<Int>
    }

    /// The pieces of UTF-8 `bytes` as ranges, in order, covering all of it.
    func spans(_ bytes: UnsafeBufferPointer<UInt8>) -> [Span] {
        var scan = Scan(bytes: bytes, style: style)
        scan.icuQuoting = Scan.hasICUArgument(bytes)
        scan.message(from: 0, to: bytes.count, inPlural: false)
        scan.flushText(upTo: bytes.count)
        return scan.spans
    }
}

extension PlaceholderScanner.Kind {
    /// Placeholders are compared before and after a transform; text,
    /// escapes and quoted ICU literals are not placeholders.
    var isPlaceholder: Bool { self != .text && self != .escape && self != .quoted }
}

/// The scanned bytes, read as scalars: a byte of a multi-byte scalar reads
/// as a Latin-1 scalar at or above U+0080, which no syntax character is.
private struct ByteScalars {
    let bytes: UnsafeBufferPointer<UInt8>
    @inline(__always) subscript(i: Int) -> Unicode.Scalar { Unicode.Scalar(bytes[i]) }
}

private struct Scan {
    let scalars: ByteScalars
    let count: Int
    let style: EscapeStyle
    var icuQuoting = false
    /// Whether the string has an "@" / a ":" at all: most have neither, and
    /// then no word start needs an email or URL look-ahead.
    let hasAt: Bool
    let hasColonOrW: Bool
    var spans: [PlaceholderScanner.Span] = []
    /// Where the text not yet emitted starts.
    var textStart = 0
    /// ICU complex arguments around the current position.
    var nesting = 0

    init(bytes: UnsafeBufferPointer<UInt8>, style: EscapeStyle) {
        scalars = ByteScalars(bytes: bytes)
        count = bytes.count
        hasAt = bytes.contains(0x40)
        hasColonOrW = bytes.contains(0x3A) || bytes.contains(0x77) || bytes.contains(0x57)
        self.style = style
        spans.reserveCapacity(8)
    }

    mutating func flushText(upTo end: Int) {
        guard textStart < end else { return }
        spans.append(.init(kind: .text, range: textStart..<end))
        textStart = end
    }

    mutating func emit(_ kind: PlaceholderScanner.Kind, _ range: Range<Int>) {
        flushText(upTo: range.lowerBound)
        if kind == .icu, let last = spans.last, last.kind == .icu, last.range.upperBound == range.lowerBound {
            spans[spans.count - 1].range = last.range.lowerBound..<range.upperBound
        } else {
            spans.append(.init(kind: kind, range: range))
        }
        textStart = range.upperBound
    }

    /// Scans a message (the whole string, or an ICU option body).
    mutating func message(from start: Int, to end: Int, inPlural: Bool) {
        var i = start
        while i < end {
            let c = scalars[i]
            // Fast path: bytes that start no piece.
            if c.value >= 0x80 || (isASCIIAlphanumeric(c) && !(isWordStart(i) && (hasAt || hasColonOrW))) || c == " " {
                i += 1
                continue
            }
            if let n = escape(at: i, end: end) {
                emit(.escape, i..<(i + n)); i += n; continue
            }
            if icuQuoting, c == "'" {
                if i + 1 < end, scalars[i + 1] == "'" { emit(.escape, i..<(i + 2)); i += 2; continue }
                if i + 1 < end, isQuoteStart(scalars[i + 1]) {
                    var j = i + 1
                    while j < end {
                        if scalars[j] == "'" {
                            if j + 1 < end, scalars[j + 1] == "'" { j += 2; continue }
                            break
                        }
                        j += 1
                    }
                    let close = min(j + 1, end)
                    emit(.quoted, i..<close); i = close; continue
                }
            }
            if c == "%", let (n, kind) = printf(at: i, end: end) {
                emit(kind, i..<(i + n)); i += n; continue
            }
            if c == "{", let n = brace(at: i, end: end) {
                i += n; continue
            }
            if inPlural, c == "#" {
                emit(.pound, i..<(i + 1)); i += 1; continue
            }
            if c == "<", let n = tag(at: i, end: end) {
                emit(.tag, i..<(i + n)); i += n; continue
            }
            // The end of a CDATA section whose start was kept as a tag.
            if c == "]", style == .android || style == .xml, hasPrefix("]]>", at: i, end: end) {
                emit(.tag, i..<(i + 3)); i += 3; continue
            }
            // In an XML file an entity is the file's escape (kept, not compared);
            // in plain text it is HTML the app renders.
            if c == "&", style != .backslash, let n = entity(at: i, end: end) {
                emit(style == .xml || style == .android ? .escape : .entity, i..<(i + n)); i += n; continue
            }
            if hasColonOrW, isWordStart(i), let n = url(at: i, end: end) {
                emit(.url, i..<(i + n)); i += n; continue
            }
            if hasAt, isWordStart(i), let n = email(at: i, end: end) {
                emit(.email, i..<(i + n)); i += n; continue
            }
            i += 1
        }
    }

    // MARK: escapes

    func escape(at i: Int, end: Int) -> Int? {
        let c = scalars[i]
        switch style {
        case .none, .xml:
            return nil
        case .backslash, .android:
            guard c == "\\", i + 1 < end else { return nil }
            let next = scalars[i + 1]
            if next == "U" || next == "u" {
                var j = i + 2
                while j < end, j < i + 6, scalars[j].properties.isASCIIHexDigit { j += 1 }
                return j - i
            }
            return 1 + scalarLength(at: i + 1, end: end)
        }
    }

    /// The length in bytes of the UTF-8 scalar starting at `i`.
    func scalarLength(at i: Int, end: Int) -> Int {
        let lead = scalars.bytes[i]
        let length = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        return min(length, end - i)
    }

    func entity(at i: Int, end: Int) -> Int? {
        var j = i + 1
        if j < end, scalars[j] == "#" {
            j += 1
            if j < end, scalars[j] == "x" || scalars[j] == "X" { j += 1 }
        }
        let first = j
        while j < end, j - i < 40, isASCIIAlphanumeric(scalars[j]) { j += 1 }
        guard j > first, j < end, scalars[j] == ";" else { return nil }
        return j + 1 - i
    }

    // MARK: printf

    /// A printf specifier or stringsdict variable at `i` (a "%").
    func printf(at i: Int, end: Int) -> (Int, PlaceholderScanner.Kind)? {
        var j = i + 1
        guard j < end else { return nil }
        if scalars[j] == "%" { return (2, .printf) }
        // Python's %(name)s: flags, width and precision as printf's.
        if scalars[j] == "(" {
            var k = j + 1
            while k < end, scalars[k] != ")", k - j < 64 { k += 1 }
            guard k < end, scalars[k] == ")", k > j + 1 else { return nil }
            j = k + 1
            guard let (n, _) = conversionTail(from: j, start: i, end: end) else { return nil }
            return (n, .named)
        }
        // Positional argument n$.
        j = skipArgument(from: j, end: end)
        // stringsdict variable: %#@name@
        if j + 1 < end, scalars[j] == "#", scalars[j + 1] == "@" {
            var k = j + 2
            while k < end, scalars[k] != "@", isIdentifier(scalars[k]) { k += 1 }
            guard k < end, scalars[k] == "@", k > j + 2 else { return nil }
            return (k + 1 - i, .variable)
        }
        return conversionTail(from: j, start: i, end: end)
    }

    /// Flags, width, precision, length and conversion after "%" [n$].
    func conversionTail(from start: Int, start origin: Int, end: Int) -> (Int, PlaceholderScanner.Kind)? {
        var j = start
        while j < end, isFlag(scalars[j]) { j += 1 }
        j = widthOrPrecision(from: j, end: end)
        if j < end, scalars[j] == "." {
            j = widthOrPrecision(from: j + 1, end: end)
        }
        // Length modifiers: hh h l ll q L z t j.
        if j + 1 < end, (scalars[j] == "h" && scalars[j + 1] == "h") || (scalars[j] == "l" && scalars[j + 1] == "l") {
            j += 2
        } else if j < end, isLengthModifier(scalars[j]) {
            j += 1
        }
        guard j < end, isConversion(scalars[j]) else { return nil }
        return (j + 1 - origin, .printf)
    }

    func isFlag(_ c: Unicode.Scalar) -> Bool {
        switch c { case "-", "+", " ", "#", "0", "'": true; default: false }
    }

    func isLengthModifier(_ c: Unicode.Scalar) -> Bool {
        switch c { case "h", "l", "q", "L", "z", "t", "j": true; default: false }
    }

    func isConversion(_ c: Unicode.Scalar) -> Bool {
        switch c {
        // `r` is Python's repr (`%r`, `%(name)r`); no C conversion, so kept whole.
        case "@", "d", "D", "i", "u", "U", "x", "X", "o", "O", "f", "F", "e", "E", "g", "G", "c", "C", "s", "S", "p", "a", "A", "r": true
        default: false
        }
    }

    func isQuoteStart(_ c: Unicode.Scalar) -> Bool {
        c == "{" || c == "}" || c == "#" || c == "|"
    }

    /// Digits followed by "$", else nothing.
    func skipArgument(from start: Int, end: Int) -> Int {
        var j = start
        while j < end, isDigit(scalars[j]) { j += 1 }
        if j > start, j < end, scalars[j] == "$" { return j + 1 }
        return start
    }

    /// Digits, "*", or "*n$".
    func widthOrPrecision(from start: Int, end: Int) -> Int {
        var j = start
        if j < end, scalars[j] == "*" {
            j += 1
            let k = skipArgument(from: j, end: end)
            return k
        }
        while j < end, isDigit(scalars[j]) { j += 1 }
        return j
    }

    // MARK: braces and ICU

    /// An ICU argument or brace placeholder at `i` (a "{"): emits its pieces
    /// (option bodies scanned as messages) and returns its length, or nil
    /// when the brace does not open one.
    mutating func brace(at i: Int, end: Int) -> Int? {
        // {{name}}
        if i + 1 < end, scalars[i + 1] == "{" {
            var j = i + 2
            while j + 1 < end, !(scalars[j] == "}" && scalars[j + 1] == "}"), scalars[j] != "{" { j += 1 }
            guard j + 1 < end, scalars[j] == "}", scalars[j + 1] == "}" else { return nil }
            emit(.brace, i..<(j + 2))
            return j + 2 - i
        }
        var j = skipSpace(i + 1, end)
        let nameStart = j
        while j < end, isIdentifier(scalars[j]) || scalars[j] == "." || scalars[j] == "-" { j += 1 }
        guard j > nameStart else { return nil }
        j = skipSpace(j, end)
        guard j < end else { return nil }
        if scalars[j] == "}" {
            emit(.brace, i..<(j + 1))
            return j + 1 - i
        }
        guard scalars[j] == "," else { return nil }
        j = skipSpace(j + 1, end)
        let typeStart = j
        while j < end, isIdentifier(scalars[j]) { j += 1 }
        let typeEnd = j
        guard typeEnd > typeStart else { return nil }
        j = skipSpace(j, end)
        guard j < end else { return nil }
        let select = equals(typeStart..<typeEnd, "select")
        if select || equals(typeStart..<typeEnd, "plural") || equals(typeStart..<typeEnd, "selectordinal") {
            guard scalars[j] == "," else { return nil }
            return complexArgument(at: i, optionsFrom: j + 1, end: end, plural: !select)
        } else {
            // {arg, number} or {arg, date, short}: kept whole, to its matching brace.
            guard let close = matchingBrace(from: i, end: end) else { return nil }
            emit(.icu, i..<(close + 1))
            return close + 1 - i
        }
    }

    /// `{name, plural, [offset:n] key {body} key {body} ...}`: the head,
    /// keys and braces are kept; each body is a message.
    mutating func complexArgument(at i: Int, optionsFrom start: Int, end: Int, plural: Bool) -> Int? {
        guard let close = matchingBrace(from: i, end: end) else { return nil }
        var bodies: [(Int, Int)] = []
        var j = start
        while true {
            j = skipSpace(j, close)
            if j >= close { break }
            // A selector: a keyword, =n, or offset:n.
            let keyStart = j
            while j < close, !isSpace(scalars[j]), scalars[j] != "{" { j += 1 }
            guard j > keyStart else { return nil }
            j = skipSpace(j, close)
            if j < close, scalars[j] != "{" { continue } // offset:1 and the like
            guard j < close, scalars[j] == "{", let bodyClose = matchingBrace(from: j, end: close + 1), bodyClose < close else { return nil }
            bodies.append((j + 1, bodyClose))
            j = bodyClose + 1
        }
        guard !bodies.isEmpty else { return nil }
        guard nesting < PlaceholderScanner.maximumNesting else {
            emit(.icu, i..<(close + 1))
            return close + 1 - i
        }
        nesting += 1
        defer { nesting -= 1 }
        var kept = i
        for (bodyStart, bodyEnd) in bodies {
            emit(.icu, kept..<bodyStart)
            message(from: bodyStart, to: bodyEnd, inPlural: plural)
            flushText(upTo: bodyEnd)
            kept = bodyEnd
        }
        emit(.icu, kept..<(close + 1))
        return close + 1 - i
    }

    /// The index of the "}" matching the "{" at `i`, honouring ICU quoting.
    func matchingBrace(from i: Int, end: Int) -> Int? {
        var depth = 0
        var j = i
        var quoted = false
        while j < end {
            let c = scalars[j]
            if icuQuoting, c == "'" {
                if j + 1 < end, scalars[j + 1] == "'" { j += 2; continue }
                if quoted { quoted = false } else if j + 1 < end, isQuoteStart(scalars[j + 1]) { quoted = true }
                j += 1; continue
            }
            if !quoted {
                if c == "{" { depth += 1 }
                if c == "}" {
                    depth -= 1
                    if depth == 0 { return j }
                }
            }
            j += 1
        }
        return nil
    }

    /// Whether the string has an ICU typed or complex argument (then ICU
    /// apostrophe quoting applies to the whole string).
    static func hasICUArgument(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let s = ByteScalars(bytes: bytes), count = bytes.count
        var i = 0
        while i < count {
            if s[i] == "{" {
                var j = i + 1
                while j < count, s[j] == " " { j += 1 }
                let nameStart = j
                while j < count, isNameByte(s[j]) { j += 1 }
                if j > nameStart {
                    while j < count, s[j] == " " { j += 1 }
                    if j < count, s[j] == "," { return true }
                }
            }
            i += 1
        }
        return false
    }

    /// ASCII letters, digits, "_", and any byte of a non-ASCII scalar.
    static func isNameByte(_ c: Unicode.Scalar) -> Bool {
        c.value > 0x7F || c == "_" || (c.value >= 0x30 && c.value <= 0x39) || ((c.value | 0x20) >= 0x61 && (c.value | 0x20) <= 0x7A)
    }

    // MARK: markup and addresses

    func tag(at i: Int, end: Int) -> Int? {
        guard i + 1 < end else { return nil }
        let next = scalars[i + 1]
        // CDATA in a resource file: its text is text, its markers are kept.
        if (style == .android || style == .xml), hasPrefix("<![CDATA[", at: i, end: end) { return 9 }
        // Android's untranslatable span: <xliff:g ...>kept as is</xliff:g>.
        if style == .android, hasPrefix("<xliff:g", at: i, end: end) {
            var j = i + 8
            while j + 10 <= end {
                if hasPrefix("</xliff:g>", at: j, end: end) { return j + 10 - i }
                j += 1
            }
            return nil
        }
        if next == "!" {
            // <!-- comment --> or <![CDATA[ ... ]]>: to the closing marker.
            let closing: StaticString = hasPrefix("<!--", at: i, end: end) ? "-->" : hasPrefix("<![CDATA[", at: i, end: end) ? "]]>" : ">"
            let length = closing.utf8CodeUnitCount
            var j = i + 2
            while j + length <= end {
                if hasPrefix(closing, at: j, end: end) { return j + length - i }
                j += 1
            }
            return nil
        }
        guard next == "/" || next == "?" || isASCIILetter(next) else { return nil }
        var j = i + 1
        var quote: Unicode.Scalar?
        while j < end {
            let c = scalars[j]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                // A quote opens an attribute value only after "=".
                var k = j - 1
                while k > i, scalars[k] == " " { k -= 1 }
                if scalars[k] == "=" { quote = c }
            } else if c == ">" {
                return j + 1 - i
            } else if c == "<" || c == "\n" && j - i > 200 {
                return nil
            }
            j += 1
        }
        return nil
    }

    func url(at i: Int, end: Int) -> Int? {
        guard isASCIILetter(scalars[i]) else { return nil }
        var j = i
        if hasPrefix("www.", at: i, end: end) {
            j = i + 4
        } else {
            while j < end, isASCIILetter(scalars[j]) || scalars[j] == "+" || scalars[j] == "-" || scalars[j] == "." { j += 1 }
            guard j > i, j - i <= 16, hasPrefix("://", at: j, end: end) else { return nil }
            j += 3
        }
        let bodyStart = j
        while j < end, isURLScalar(scalars[j]), escape(at: j, end: end) == nil { j += 1 }
        // Trailing punctuation belongs to the sentence.
        while j > bodyStart, isTrailingPunctuation(scalars[j - 1]) { j -= 1 }
        guard j > bodyStart else { return nil }
        return j - i
    }

    func email(at i: Int, end: Int) -> Int? {
        var j = i
        while j < end, isASCIIAlphanumeric(scalars[j]) || scalars[j] == "." || scalars[j] == "_" || scalars[j] == "%"
                || scalars[j] == "+" || scalars[j] == "-" { j += 1 }
        guard j > i, j < end, scalars[j] == "@" else { return nil }
        j += 1
        let domainStart = j
        var lastDot = -1
        while j < end, isASCIIAlphanumeric(scalars[j]) || scalars[j] == "-" || scalars[j] == "." {
            if scalars[j] == "." { lastDot = j }
            j += 1
        }
        while j > domainStart, scalars[j - 1] == "." { j -= 1 }
        guard lastDot > domainStart, lastDot < j - 2 else { return nil }
        return j - i
    }

    // MARK: scalar classes

    func isWordStart(_ i: Int) -> Bool {
        i == 0 || !(isASCIIAlphanumeric(scalars[i - 1]) || scalars[i - 1] == "." || scalars[i - 1] == "_")
    }

    /// Whether the bytes in `range` are exactly `word`.
    func equals(_ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        var k = 0
        for j in range {
            guard scalars.bytes[j] == word.utf8Start[k] else { return false }
            k += 1
        }
        return true
    }

    /// Whether `prefix` (ASCII; letters compared without case) starts at `i`.
    func hasPrefix(_ prefix: StaticString, at i: Int, end: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard end - i >= count else { return false }
        for k in 0..<count {
            let p = prefix.utf8Start[k], c = scalars.bytes[i + k]
            guard c == p || (isASCIILetter(Unicode.Scalar(p)) && c | 0x20 == p | 0x20) else { return false }
        }
        return true
    }

    func skipSpace(_ i: Int, _ end: Int) -> Int {
        var j = i
        while j < end, isSpace(scalars[j]) { j += 1 }
        return j
    }

    func isSpace(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" }
    func isDigit(_ c: Unicode.Scalar) -> Bool { c.value >= 0x30 && c.value <= 0x39 }
    func isASCIILetter(_ c: Unicode.Scalar) -> Bool { (c.value | 0x20) >= 0x61 && (c.value | 0x20) <= 0x7A }
    func isASCIIAlphanumeric(_ c: Unicode.Scalar) -> Bool { isDigit(c) || isASCIILetter(c) }
    func isIdentifier(_ c: Unicode.Scalar) -> Bool { Scan.isNameByte(c) }
    func isTrailingPunctuation(_ c: Unicode.Scalar) -> Bool {
        switch c { case ".", ",", ";", ":", "!", "?", ")", "'", "\"": true; default: false }
    }
    func isURLScalar(_ c: Unicode.Scalar) -> Bool {
        guard c.value > 0x20, c.value < 0x7F else { return false }
        switch c { case "<", ">", "\"", "{", "}", "|", "\\", "^", "`", " ": return false; default: return true }
    }
}
