/// The pseudo-localisation modes. Each can be combined with the others.
public struct PseudoModes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Letters replaced by accented look-alikes: `Hello` → `Ĥéļļö`.
    public static let accented = PseudoModes(rawValue: 1 << 0)
    /// Padded to the length translations typically reach (IBM's table).
    public static let lengthened = PseudoModes(rawValue: 1 << 1)
    /// Brackets around each string, so truncation shows.
    public static let boundaries = PseudoModes(rawValue: 1 << 2)
    /// Each word forced right-to-left with bidi controls (as AOSP's ar-XB).
    public static let rightToLeft = PseudoModes(rawValue: 1 << 3)
    /// The table and key instead of the text.
    public static let showKeys = PseudoModes(rawValue: 1 << 4)

    /// Every mode with its name, in the order they are listed and applied.
    public static let named: [(mode: PseudoModes, name: String)] = [
        (.accented, "accented"), (.lengthened, "lengthened"), (.boundaries, "boundaries"),
        (.rightToLeft, "rtl"), (.showKeys, "keys"),
    ]

    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = match.mode
    }

    public var names: [String] { Self.named.filter { contains($0.mode) }.map(\.name) }
}

/// Which letters the accented mode replaces.
public enum AccentMap: String, Sendable, CaseIterable {
    /// Every ASCII letter and `! ? $` (AOSP's en-XA map, with non-ASCII
    /// replacements for q, v, F, Q and V so that applying it twice changes nothing).
    case full
    /// Consonants only: vowels stay, so the text stays easy to read.
    case consonants
}

/// What `PseudoLocalizer.transform` did to one string.
public struct PseudoResult: Sendable, Equatable {
    /// The transformed string, or the input when it was left alone.
    public var text: String
    /// Why the input was left alone, when a transform would have changed its
    /// placeholders; nil otherwise.
    public var problem: String?

    public init(text: String, problem: String? = nil) {
        self.text = text
        self.problem = problem
    }
}

/// Applies the selected modes to strings without breaking what they hold:
/// placeholders, markup, addresses and escapes pass through unchanged
/// (`PlaceholderScanner`), and the result is checked: when its ordered list
/// of placeholders differs from the input's, the input comes back untouched
/// with a `problem`.
///
/// - Grapheme clusters, not scalars, are changed: a letter carrying a
///   combining mark keeps it and is not accented again.
/// - Idempotent: the markers this adds (brackets, padding, bidi controls)
///   are recognised and removed before transforming again, so
///   `transform(transform(s)) == transform(s)`.
/// - Strings of one grapheme (access keys, "%" signs) are left alone.
/// - Newlines at either end stay at that end, outside the brackets and
///   padding: gettext requires a msgstr to begin and end with "\n" exactly
///   when its msgid does, and a bracket belongs to the text it closes.
public struct PseudoLocalizer: Sendable {
    public var modes: PseudoModes
    public var accentMap: AccentMap

    public init(modes: PseudoModes, accentMap: AccentMap = .full) {
        self.modes = modes
        self.accentMap = accentMap
    }

    // Markers. U+2060 WORD JOINER is invisible and never breaks a line; it
    // tells this transform's own brackets and padding from the string's.
    static let open = "[\u{2060}"
    static let close = "\u{2060}]"
    static let paddingMark: Unicode.Scalar = "\u{2060}"
    // AOSP's ar-XB wrapping of each word: RLM RLO word PDF RLM.
    static let rtlOpen = "\u{200F}\u{202E}"
    static let rtlClose = "\u{202C}\u{200F}"
    /// Padding text, as AOSP pads: counting words.
    static let paddingWords = " one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"

    /// Transforms `text`, escaped per `style`. `key` and `table` are used by
    /// the show-keys mode.
    ///
    /// Works on the UTF-8 bytes in one pass per step (scan, build, re-scan to
    /// check): the syntax is ASCII, and only the scalars next to a letter or
    /// between words are decoded.
    public func transform(_ text: String, style: EscapeStyle = .none, key: String? = nil, table: String? = nil) -> PseudoResult {
        guard !modes.isEmpty, !Self.isAtMostOneCharacter(text) else { return PseudoResult(text: text) }
        let scanner = PlaceholderScanner(style: style)
        var base = Array(text.utf8)
        Self.removeMarkers(&base)
        let (lead, trail) = Self.edgeNewlines(base, style: style)
        if lead > 0 || trail > 0 {
            guard lead + trail < base.count else { return PseudoResult(text: text) }
            let inner = transform(String(decoding: base[lead..<(base.count - trail)], as: UTF8.self), style: style, key: key, table: table)
            if let problem = inner.problem { return PseudoResult(text: text, problem: problem) }
            return PseudoResult(text: String(decoding: base[..<lead], as: UTF8.self) + inner.text
                                + String(decoding: base[(base.count - trail)...], as: UTF8.self))
        }
        var out: [UInt8] = []
        let expected: [PlaceholderScanner.Span] = base.withUnsafeBufferPointer { input in
            let spans = scanner.spans(input)
            out.reserveCapacity(input.count * 3 + 32)
            if modes.contains(.boundaries) { out.append(contentsOf: Self.openBytes) }
            if modes.contains(.showKeys), let key {
                appendKey(key, table: table, style: style, spans: spans, input: input, scanner: scanner, to: &out)
            } else {
                appendBody(spans, input: input, to: &out)
            }
            if modes.contains(.boundaries) { out.append(contentsOf: Self.closeBytes) }
            return spans.filter { $0.kind.isPlaceholder }
        }
        let unchanged: Bool = base.withUnsafeBufferPointer { input in
            out.withUnsafeBufferPointer { output in
                Self.samePlaceholders(expected, in: input, as: scanner.spans(output).filter { $0.kind.isPlaceholder }, in: output)
            }
        }
        guard unchanged else {
            let before = scanner.placeholders(String(decoding: base, as: UTF8.self)).map(\.text).joined(separator: " ")
            let after = scanner.placeholders(String(decoding: out, as: UTF8.self)).map(\.text).joined(separator: " ")
            return PseudoResult(text: text, problem: "placeholders would change from [\(before)] to [\(after)]")
        }
        return PseudoResult(text: String(decoding: out, as: UTF8.self))
    }

    /// Accents, pads and wraps the text; copies every other piece.
    private func appendBody(_ spans: [PlaceholderScanner.Span], input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let accents = modes.contains(.accented) ? (accentMap == .full ? Self.fullBytes : Self.consonantBytes) : nil
        let rtl = modes.contains(.rightToLeft)
        var visible = 0
        for span in spans {
            switch span.kind {
            case .text:
                visible += Self.appendText(input, span.range, accents: accents, rtl: rtl, to: &out)
            case .brace where rtl:
                // As AOSP's ar-XB: a {name} argument shows right to left too.
                out.append(contentsOf: Self.rtlOpenBytes)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: input[span.range]))
                out.append(contentsOf: Self.rtlCloseBytes)
            case .entity, .escape:
                visible += 1
                out.append(contentsOf: UnsafeBufferPointer(rebasing: input[span.range]))
            default:
                out.append(contentsOf: UnsafeBufferPointer(rebasing: input[span.range]))
            }
        }
        if modes.contains(.lengthened) {
            let count = Self.paddingLength(forVisibleLength: visible)
            if count > 0 {
                out.append(contentsOf: Self.paddingMarkBytes)
                let pad = Self.paddingBytes(count)
                pad.withUnsafeBufferPointer { _ = Self.appendText($0, 0..<$0.count, accents: nil, rtl: rtl, to: &out) }
            }
        }
    }

    /// Copies text bytes, accenting single-letter clusters and wrapping
    /// words for right to left; returns the number of visible characters.
    @inline(__always)
    private static func appendText(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, accents: [[UInt8]]?, rtl: Bool,
                                   to out: inout [UInt8]) -> Int {
        var visible = 0
        var inWord = false
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            let byte = input[i]
            let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            let next = min(i + length, end)
            var separator: Bool
            var extender = false
            if byte < 0x80 {
                separator = byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
            } else {
                let scalar = decode(input, i, next)
                separator = scalar == paddingMark || scalar.properties.isWhitespace
                extender = isGraphemeExtender(scalar)
            }
            if rtl {
                if separator, inWord { out.append(contentsOf: rtlCloseBytes); inWord = false }
                if !separator, !inWord, !extender { out.append(contentsOf: rtlOpenBytes); inWord = true }
            }
            if !extender { visible += 1 }
            if byte < 0x80, let accents, !accents[Int(byte)].isEmpty, !(next < end && startsExtender(input, next, end)) {
                out.append(contentsOf: accents[Int(byte)])
            } else {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<next]))
            }
            i = next
        }
        if rtl, inWord { out.append(contentsOf: rtlCloseBytes) }
        return visible
    }

    /// The scalar whose UTF-8 bytes are `input[start..<end]`.
    @inline(__always)
    static func decode(_ input: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Unicode.Scalar {
        var value = UInt32(input[start])
        switch end - start {
        case 2: value &= 0x1F
        case 3: value &= 0x0F
        case 4: value &= 0x07
        default: break
        }
        var j = start + 1
        while j < end {
            value = value << 6 | UInt32(input[j] & 0x3F)
            j += 1
        }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    /// Whether a scalar joins the cluster before it: combining marks, ZWJ,
    /// variation selectors, emoji skin tones.
    static func isGraphemeExtender(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x300 { return false }
        if v == 0x200D || (0xFE00...0xFE0F).contains(v) || (0x1F3FB...0x1F3FF).contains(v) || (0xE0100...0xE01EF).contains(v) { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Whether the scalar starting at `i` joins the cluster before it.
    @inline(__always)
    static func startsExtender(_ input: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int) -> Bool {
        let byte = input[i]
        // Every extender is at or above U+0300 (UTF-8 lead byte 0xCC).
        guard byte >= 0xCC else { return false }
        let length = byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
        return isGraphemeExtender(decode(input, i, min(i + length, end)))
    }

    private func appendKey(_ key: String, table: String?, style: EscapeStyle, spans: [PlaceholderScanner.Span],
                           input: UnsafeBufferPointer<UInt8>, scanner: PlaceholderScanner, to out: inout [UInt8]) {
        // The key is plain text; the output is in the file's escaping.
        let label = Array(Self.escaped((table.map { $0 + ":" } ?? "") + key, style: style).utf8)
        let placeholders = spans.filter { $0.kind.isPlaceholder }
        out.append(contentsOf: label)
        // The string's placeholders follow the key, so formatting it still
        // consumes the same arguments.
        let labelMatches = label.withUnsafeBufferPointer { l in
            Self.samePlaceholders(placeholders, in: input, as: scanner.spans(l).filter { $0.kind.isPlaceholder }, in: l)
        }
        guard !placeholders.isEmpty, !labelMatches else { return }
        for span in placeholders {
            out.append(0x20)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: input[span.range]))
        }
    }

    /// `text` escaped for a string of `style`: what a key (read unescaped)
    /// needs before it goes into the file in keys mode.
    static func escaped(_ text: String, style: EscapeStyle) -> String {
        guard style != .none else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for c in text.unicodeScalars {
            switch (c, style) {
            case ("&", .xml), ("&", .android): out += "&amp;"
            case ("<", .xml), ("<", .android): out += "&lt;"
            case (">", .xml), (">", .android): out += "&gt;"
            case ("\\", .backslash), ("\\", .android): out += "\\\\"
            case ("\"", .backslash), ("\"", .android): out += "\\\""
            case ("'", .android): out += "\\'"
            case ("\n", .backslash), ("\n", .android): out += "\\n"
            case ("\t", .backslash), ("\t", .android): out += "\\t"
            case ("\r", .backslash): out += "\\r"
            // Other control characters have no escape in every format (none in XML): a space shows where they were.
            case _ where c.value < 0x20 && !(style == .xml && (c == "\n" || c == "\t" || c == "\r")): out += " "
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func samePlaceholders(_ a: [PlaceholderScanner.Span], in aBytes: UnsafeBufferPointer<UInt8>,
                                 as b: [PlaceholderScanner.Span], in bBytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            guard x.kind == y.kind, x.range.count == y.range.count,
                  UnsafeBufferPointer(rebasing: aBytes[x.range]).elementsEqual(UnsafeBufferPointer(rebasing: bBytes[y.range])) else { return false }
        }
        return true
    }

    /// "" or one grapheme cluster (an access key, a lone "%").
    static func isAtMostOneCharacter(_ text: String) -> Bool {
        if text.utf8.count <= 1 { return true }
        var characters = text.makeIterator()
        _ = characters.next()
        return characters.next() == nil
    }

    static let openBytes = Array(open.utf8), closeBytes = Array(close.utf8)
    static let rtlOpenBytes = Array(rtlOpen.utf8), rtlCloseBytes = Array(rtlClose.utf8)
    static let paddingMarkBytes = Array(String(paddingMark).utf8)

    // MARK: accents

    /// The full map: AOSP Pseudolocalizer's en-XA accents, except that q, v,
    /// F, Q and V (ASCII or missing there) get accented forms, so that every
    /// replacement is outside ASCII and a second pass changes nothing.
    public static let fullMapTable: [(Unicode.Scalar, Unicode.Scalar)] = [
        ("a", "\u{00E5}"), ("b", "\u{0253}"), ("c", "\u{00E7}"), ("d", "\u{00F0}"), ("e", "\u{00E9}"),
        ("f", "\u{0192}"), ("g", "\u{011D}"), ("h", "\u{0125}"), ("i", "\u{00EE}"), ("j", "\u{0135}"),
        ("k", "\u{0137}"), ("l", "\u{013C}"), ("m", "\u{1E3F}"), ("n", "\u{00F1}"), ("o", "\u{00F6}"),
        ("p", "\u{00FE}"), ("q", "\u{02A0}"), ("r", "\u{0155}"), ("s", "\u{0161}"), ("t", "\u{0163}"),
        ("u", "\u{00FB}"), ("v", "\u{1E7D}"), ("w", "\u{0175}"), ("x", "\u{0445}"), ("y", "\u{00FD}"),
        ("z", "\u{017E}"),
        ("A", "\u{00C5}"), ("B", "\u{03B2}"), ("C", "\u{00C7}"), ("D", "\u{00D0}"), ("E", "\u{00C9}"),
        ("F", "\u{0191}"), ("G", "\u{011C}"), ("H", "\u{0124}"), ("I", "\u{00CE}"), ("J", "\u{0134}"),
        ("K", "\u{0136}"), ("L", "\u{013B}"), ("M", "\u{1E3E}"), ("N", "\u{00D1}"), ("O", "\u{00D6}"),
        ("P", "\u{00DE}"), ("Q", "\u{01EA}"), ("R", "\u{0154}"), ("S", "\u{0160}"), ("T", "\u{0162}"),
        ("U", "\u{00DB}"), ("V", "\u{1E7C}"), ("W", "\u{0174}"), ("X", "\u{00D7}"), ("Y", "\u{00DD}"),
        ("Z", "\u{017D}"),
        ("!", "\u{00A1}"), ("?", "\u{00BF}"), ("$", "\u{20AC}"),
    ]

    static let fullMap: [Unicode.Scalar: Unicode.Scalar] = Dictionary(uniqueKeysWithValues: fullMapTable)
    static let consonantMap: [Unicode.Scalar: Unicode.Scalar] = fullMap.filter { key, _ in
        key.properties.isAlphabetic && !"aeiouyAEIOUY".unicodeScalars.contains(key)
    }

    /// The maps as UTF-8 replacements indexed by ASCII byte ([] for none).
    static let fullBytes = byteTable(fullMap)
    static let consonantBytes = byteTable(consonantMap)

    private static func byteTable(_ map: [Unicode.Scalar: Unicode.Scalar]) -> [[UInt8]] {
        (0..<128).map { byte in map[Unicode.Scalar(UInt8(byte))].map { Array(String($0).utf8) } ?? [] }
    }

    // MARK: length

    /// IBM's guideline for how much space translations of English need
    /// (Globalization Design Guideline A3, "Providing for UI expansion"), by
    /// the English length in characters: the total length a string is padded
    /// to, as a percentage of its visible length, taking the lower figure of
    /// each band (up to 10: 100-200% more; 11-20: 80-100%; 21-30: 60-80%;
    /// 31-50: 40-60%; 51-70: 31-40%; over 70: 30%).
    public static let expansionTable: [(upTo: Int, percent: Int)] = [
        (10, 200), (20, 180), (30, 160), (50, 140), (70, 131), (Int.max, 130),
    ]

    /// At least `count` characters of the counting words, ending at the end
    /// of a word (as AOSP pads); the words repeat for very long strings.
    static func padding(_ count: Int) -> [Unicode.Scalar] {
        let words = Array(paddingWords.unicodeScalars)
        var out: [Unicode.Scalar] = []
        var i = 0
        while out.count < count || (i % words.count != 0 && words[i % words.count] != " ") {
            out.append(words[i % words.count])
            i += 1
        }
        return out
    }

    /// How many characters of padding a string of `visible` characters gets.
    public static func paddingLength(forVisibleLength visible: Int) -> Int {
        guard visible > 0 else { return 0 }
        let percent = expansionTable.first { visible <= $0.upTo }?.percent ?? 130
        return (visible * percent + 99) / 100 - visible
    }

    // MARK: markers

    /// How many bytes of newlines `bytes` starts and ends with: line feeds,
    /// carriage returns and, in backslash-escaped styles, `\n` escapes.
    static func edgeNewlines(_ bytes: [UInt8], style: EscapeStyle) -> (lead: Int, trail: Int) {
        let escapes = style == .backslash || style == .android
        let n = bytes.count
        var lead = 0
        while lead < n {
            if bytes[lead] == 0x0A || bytes[lead] == 0x0D { lead += 1 }
            else if escapes, lead + 1 < n, bytes[lead] == 0x5C, bytes[lead + 1] == 0x6E { lead += 2 }
            else { break }
        }
        var end = n
        while end > lead {
            if bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1; continue }
            guard escapes, end - 2 >= lead, bytes[end - 1] == 0x6E, bytes[end - 2] == 0x5C else { break }
            // "\\n" is an escaped backslash and an n: the run of backslashes must be odd.
            var k = end - 2, run = 0
            while k >= lead, bytes[k] == 0x5C { run += 1; k -= 1 }
            guard run % 2 == 1 else { break }
            end -= 2
        }
        return (lead, n - end)
    }

    /// Removes the brackets, padding and bidi wrapping a previous transform
    /// added, so a second pass gives the first pass's result.
    static func removeMarkers(_ bytes: inout [UInt8]) {
        // Every marker contains U+2060 (E2 81 A0) or RLO (E2 80 AE).
        guard bytes.contains(0xE2) else { return }
        let rlm: [UInt8] = [0xE2, 0x80, 0x8F], rlo: [UInt8] = [0xE2, 0x80, 0xAE], pdf: [UInt8] = [0xE2, 0x80, 0xAC]
        func matches(_ i: Int, _ pattern: [UInt8]) -> Bool {
            i + pattern.count <= bytes.count && bytes[i..<(i + pattern.count)].elementsEqual(pattern)
        }
        if (0..<bytes.count).contains(where: { matches($0, rlo) }) {
            var kept: [UInt8] = []
            kept.reserveCapacity(bytes.count)
            var i = 0
            while i < bytes.count {
                if (matches(i, rlm) && matches(i + 3, rlo)) || (matches(i, pdf) && matches(i + 3, rlm)) {
                    i += 6
                    continue
                }
                kept.append(bytes[i])
                i += 1
            }
            bytes = kept
        }
        if bytes.count >= openBytes.count + closeBytes.count, bytes.starts(with: openBytes), bytes.reversed().starts(with: closeBytes.reversed()) {
            bytes = Array(bytes[openBytes.count..<(bytes.count - closeBytes.count)])
        }
        // Padding: the mark, then only padding letters to the end.
        var i = bytes.count - 1
        while i >= 0, bytes[i] == 0x20 || (bytes[i] >= 0x61 && bytes[i] <= 0x7A) { i -= 1 }
        if i >= 2, bytes[(i - 2)...i].elementsEqual(paddingMarkBytes) {
            bytes.removeSubrange((i - 2)...)
        }
    }

    /// The padding as UTF-8 bytes (all ASCII).
    static func paddingBytes(_ count: Int) -> [UInt8] {
        padding(count).map { UInt8($0.value) }
    }
}
