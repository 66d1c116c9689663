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
    public func transform(_ text: String, style: EscapeStyle = .none, key: String? = nil, table: String? = nil) -> PseudoResult {
        guard !modes.isEmpty, text.count > 1 else { return PseudoResult(text: text) }
        let scanner = PlaceholderScanner(style: style)
        let base = Self.removingMarkers(text)
        let pieces = scanner.pieces(base)
        let expected = pieces.filter(Self.isPlaceholder)

        var output: String
        if modes.contains(.showKeys), let key {
            output = showKey(key, table: table, placeholders: expected, scanner: scanner)
        } else {
            output = body(pieces)
        }
        if modes.contains(.boundaries) { output = Self.open + output + Self.close }

        let found = scanner.pieces(output).filter(Self.isPlaceholder)
        guard found == expected else {
            let before = expected.map(\.text).joined(separator: " "), after = found.map(\.text).joined(separator: " ")
            return PseudoResult(text: text, problem: "placeholders would change from [\(before)] to [\(after)]")
        }
        return PseudoResult(text: output)
    }

    static func isPlaceholder(_ piece: PlaceholderScanner.Piece) -> Bool {
        piece.kind != .text && piece.kind != .escape && piece.kind != .quoted
    }

    /// Accents, pads and wraps the text pieces; keeps every other piece.
    private func body(_ pieces: [PlaceholderScanner.Piece]) -> String {
        var parts = pieces
        if modes.contains(.accented) {
            for i in parts.indices where parts[i].kind == .text { parts[i].text = accent(parts[i].text) }
        }
        if modes.contains(.lengthened) {
            let visible = parts.reduce(0) { count, piece in
                switch piece.kind {
                case .text: count + piece.text.count
                case .entity, .escape: count + 1
                default: count
                }
            }
            let padding = Self.paddingLength(forVisibleLength: visible)
            if padding > 0 {
                var pad = String(Self.paddingMark)
                pad.unicodeScalars.append(contentsOf: Self.padding(padding))
                parts.append(.init(.text, pad))
            }
        }
        if modes.contains(.rightToLeft) {
            for i in parts.indices {
                switch parts[i].kind {
                case .text: parts[i].text = Self.wrapWords(parts[i].text)
                // As AOSP's ar-XB: a {name} argument shows right to left too.
                case .brace: parts[i].text = Self.rtlOpen + parts[i].text + Self.rtlClose
                default: break
                }
            }
        }
        return parts.map(\.text).joined()
    }

    private func showKey(_ key: String, table: String?, placeholders: [PlaceholderScanner.Piece],
                         scanner: PlaceholderScanner) -> String {
        let label = (table.map { $0 + ":" } ?? "") + key
        // The string's placeholders follow the key, so formatting it still
        // consumes the same arguments.
        let keyPlaceholders = scanner.pieces(label).filter(Self.isPlaceholder)
        if keyPlaceholders == placeholders || placeholders.isEmpty { return label }
        return label + " " + placeholders.map(\.text).joined(separator: " ")
    }

    // MARK: accents

    private func accent(_ text: String) -> String {
        let map = accentMap == .full ? Self.fullMap : Self.consonantMap
        var out = String.UnicodeScalarView()
        for character in text {
            let scalars = character.unicodeScalars
            if scalars.count == 1, let scalar = scalars.first, scalar.isASCII, let mapped = map[scalar] {
                out.append(mapped)
            } else {
                out.append(contentsOf: scalars)
            }
        }
        return String(out)
    }

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

    // MARK: right to left

    /// Wraps each run of non-space characters in RLM RLO ... PDF RLM.
    static func wrapWords(_ text: String) -> String {
        var out = ""
        var word = ""
        for character in text {
            // The padding mark stays outside the wrapping, like white space.
            if character.isWhitespace || character == Character(paddingMark) {
                if !word.isEmpty { out += rtlOpen + word + rtlClose; word = "" }
                out.append(character)
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { out += rtlOpen + word + rtlClose }
        return out
    }

    // MARK: markers

    /// `text` without the brackets, padding and bidi wrapping a previous
    /// transform added.
    static func removingMarkers(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == paddingMark || $0 == "\u{202E}" }) else { return text }
        var scalars = Array(text.unicodeScalars)
        // Bidi wrapping: RLM RLO ... PDF RLM.
        if scalars.contains("\u{202E}") {
            var kept: [Unicode.Scalar] = []
            var i = 0
            while i < scalars.count {
                if i + 1 < scalars.count,
                   (scalars[i] == "\u{200F}" && scalars[i + 1] == "\u{202E}") || (scalars[i] == "\u{202C}" && scalars[i + 1] == "\u{200F}") {
                    i += 2
                    continue
                }
                kept.append(scalars[i])
                i += 1
            }
            scalars = kept
        }
        let open = Array(Self.open.unicodeScalars), close = Array(Self.close.unicodeScalars)
        if scalars.count >= open.count + close.count, Array(scalars.prefix(open.count)) == open, Array(scalars.suffix(close.count)) == close {
            scalars = Array(scalars[open.count..<(scalars.count - close.count)])
        }
        // Padding: the mark, then only padding letters to the end.
        if let mark = scalars.lastIndex(of: paddingMark),
           scalars[(mark + 1)...].allSatisfy({ $0 == " " || ("a"..."z").contains($0) }) {
            scalars.removeSubrange(mark...)
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}
