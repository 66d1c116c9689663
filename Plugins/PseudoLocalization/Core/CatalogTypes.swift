/// The catalog formats `l10n.catalog` and `l10n.check` read and write.
public enum CatalogFormat: String, CaseIterable, Sendable {
    /// Apple `.strings`: `"key" = "value";` with C comments; UTF-8 or UTF-16 (BOM).
    case strings
    /// Apple `.stringsdict`: an XML property list of plural rules.
    case stringsdict
    /// Apple String Catalog `.xcstrings` (JSON).
    case xcstrings
    /// Android `res/values/strings.xml`.
    case android
    /// GNU gettext `.po`.
    case po
}

/// How the text of a catalog string is escaped in its file. Transforms work
/// on the escaped text as it stands in the file and keep every escape whole,
/// so a rewritten catalog needs no re-escaping.
public enum EscapeStyle: Sendable, Equatable {
    /// Plain text: nothing is an escape.
    case none
    /// Backslash escapes (`\"`, `\\`, `\n`, `\t`, `\U2192`, `\u00e9`...):
    /// `.strings`, `.po`, and JSON strings in `.xcstrings`.
    case backslash
    /// XML character data: entities (`&amp;`, `&#233;`) are escapes.
    /// `.stringsdict` values.
    case xml
    /// Android resource text: XML entities and markup tags, plus Android's
    /// backslash escapes (`\'`, `\"`, `\n`, `\@`, `\?`, `\u2192`).
    case android
}

/// One translatable string of a catalog, as the transform sees it.
public struct CatalogString: Sendable, Equatable {
    /// The key (`.strings` key, stringsdict dictionary key, xcstrings key,
    /// Android `name`, `.po` msgid with its msgctxt as "ctxt\u{4}msgid").
    public var key: String
    /// The key as a person reads it: a `.po` msgctxt and msgid as "ctxt|msgid".
    public var displayKey: String {
        key.split(separator: "\u{4}", omittingEmptySubsequences: false).joined(separator: "|")
    }
    /// The table: the file's base name (`Localizable` for `Localizable.strings`).
    public var table: String
    /// The text, escaped as in the file (`style`).
    public var raw: String
    public var style: EscapeStyle
    /// Where inside an entry the text sits, for plural forms and variants:
    /// "" for a plain value; "one", "other"... for a plural variant; the
    /// stringsdict variable and category ("count.one"); "[1]" for `.po`
    /// msgstr[1]; "NSStringLocalizedFormatKey" for a stringsdict format.
    public var part: String
    /// The translator comment attached to the entry, if any (unescaped).
    public var comment: String?
    /// 1-based line and column of the text's first byte in the file.
    public var line: Int
    public var column: Int
    /// Which placeholders the code formatting it reads: a `.po` entry's
    /// format flag (c-format, python-format...), `.any` elsewhere.
    public var grammar: PlaceholderCheck.Grammar

    public init(key: String, table: String, raw: String, style: EscapeStyle, part: String = "",
                comment: String? = nil, line: Int = 0, column: Int = 0, grammar: PlaceholderCheck.Grammar = .any) {
        self.key = key
        self.table = table
        self.raw = raw
        self.style = style
        self.part = part
        self.comment = comment
        self.line = line
        self.column = column
        self.grammar = grammar
    }
}

/// A catalog that cannot be read: what was wrong, and where.
public struct CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A translation a catalog already holds (`.po` msgstr, the other languages
/// of an `.xcstrings`), paired with its source, for `l10n.check`.
public struct CatalogTranslation: Sendable, Equatable {
    /// The language of `translated` ("" when the file does not say).
    public var language: String
    public var source: CatalogString
    public var translated: CatalogString
    /// A `.po` plural form the Plural-Forms formula picks for fewer than 5
    /// of the counts 0...1000 (msgstr[0] with `plural=(n != 1)`): as for
    /// msgfmt, it may leave arguments out ("eine Datei" for "%d file").
    public var fewCounts: Bool
    /// A `.po` translation marked fuzzy: gettext does not use it (msgfmt
    /// leaves it out and does not check it) until a translator confirms it.
    public var fuzzy: Bool

    public init(language: String, source: CatalogString, translated: CatalogString, fewCounts: Bool = false,
                fuzzy: Bool = false) {
        self.language = language
        self.source = source
        self.translated = translated
        self.fewCounts = fewCounts
        self.fuzzy = fuzzy
    }
}
