import XCTest
import PseudoL10n

/// The transforms against the references' published vectors (AOSP aapt2's
/// Pseudolocalizer_test.cpp, SwiftGen's StringPlaceholderTypeTests) where our
/// modes share their behaviour, and our own vectors for every placeholder form.
final class PseudoLocalizerTests: XCTestCase {
    private let accented = PseudoLocalizer(modes: [.accented])
    private let rtl = PseudoLocalizer(modes: [.rightToLeft])
    private let everything = PseudoLocalizer(modes: [.accented, .lengthened, .boundaries, .rightToLeft])

    private static let rlm = "\u{200F}", rlo = "\u{202E}", pdf = "\u{202C}"
    private static func wrapped(_ word: String) -> String { rlm + rlo + word + pdf + rlm }

    // MARK: - AOSP en-XA (accents)

    /// AOSP's expected output without what our accented mode deliberately
    /// leaves to other modes or does not do: the brackets (our boundaries
    /// mode), the " one two ..." padding (our lengthened mode pads by IBM's
    /// table instead) and the »« it puts around placeholders (we leave
    /// placeholders exactly as they are).
    private static func aospBody(_ expected: String) -> String {
        var s = expected.replacingOccurrences(of: "»", with: "").replacingOccurrences(of: "«", with: "")
        for words in ["one two three four five", "one two three four", "one two three", "one two", "one"] {
            s = s.replacingOccurrences(of: " " + words + "}", with: "}")
            if s.hasSuffix(" " + words + "]") { s = String(s.dropLast(words.count + 2)) + "]" }
        }
        if s.hasPrefix("["), s.hasSuffix("]") { s = String(s.dropFirst().dropLast()) }
        return s
    }

    func testAOSPAccentVectors() {
        let vectors: [(String, String)] = [
            ("Hello, world", "[Ĥéļļö, ŵöŕļð one two]"),
            ("Hello, %1d", "[Ĥéļļö, »%1d« one two]"),
            ("Battery %1d%%", "[βåţţéŕý »%1d«%% one two]"),
            ("{placeholder}", "[»{placeholder}«]"),
            ("{USER} is offline", "[»{USER}« îš öƒƒļîñé one two]"),
            ("Copy from {path1} to {path2}", "[Çöþý ƒŕöḿ »{path1}« ţö »{path2}« one two three]"),
            ("Today is {1,date} {1,time}", "[Ţöðåý îš »{1,date}« »{1,time}« one two]"),
            ("'{USER'} is offline", "['{ÛŠÉŔ'} îš öƒƒļîñé one two three]"),
            ("{COUNT, plural, one {Delete a file} other {Delete {COUNT} files}}",
             "[{COUNT, plural, one {Ðéļéţé å ƒîļé one two} other {Ðéļéţé »{COUNT}« ƒîļéš one two}}]"),
            ("Distance is {COUNT, plural, one {# mile} other {# miles}}",
             "[Ðîšţåñçé îš {COUNT, plural, one {# ḿîļé one two} other {# ḿîļéš one two}}]"),
            ("{1, select, female {{1} added you} male {{1} added you} other {{1} added you}}",
             "[{1, select, female {»{1}« åððéð ýöû one two} male {»{1}« åððéð ýöû one two} other {»{1}« åððéð ýöû one two}}]"),
        ]
        for (input, expected) in vectors {
            XCTAssertEqual(accented.transform(input).text, Self.aospBody(expected), input)
        }
    }

    func testAOSPNestedICUVector() {
        let input = "{person, select, female {{num_circles, plural,=0{{person} didn't add you to any of her circles.}"
            + "=1{{person} added you to one of her circles.}other{{person} added you to her # circles.}}}"
            + "male {{num_circles, plural,=0{{person} didn't add you to any of his circles.}"
            + "=1{{person} added you to one of his circles.}other{{person} added you to his # circles.}}}"
            + "other {{num_circles, plural,=0{{person} didn't add you to any of their circles.}"
            + "=1{{person} added you to one of their circles.}other{{person} added you to their # circles.}}}}"
        let expected = "[{person, select, female {{num_circles, plural,=0{»{person}« ðîðñ'ţ åðð ýöû ţö åñý öƒ ĥéŕ çîŕçļéš. one two three four five}"
            + "=1{»{person}« åððéð ýöû ţö öñé öƒ ĥéŕ çîŕçļéš. one two three four}other{»{person}« åððéð ýöû ţö ĥéŕ # çîŕçļéš. one two three four}}}"
            + "male {{num_circles, plural,=0{»{person}« ðîðñ'ţ åðð ýöû ţö åñý öƒ ĥîš çîŕçļéš. one two three four five}"
            + "=1{»{person}« åððéð ýöû ţö öñé öƒ ĥîš çîŕçļéš. one two three four}other{»{person}« åððéð ýöû ţö ĥîš # çîŕçļéš. one two three four}}}"
            + "other {{num_circles, plural,=0{»{person}« ðîðñ'ţ åðð ýöû ţö åñý öƒ ţĥéîŕ çîŕçļéš. one two three four five}"
            + "=1{»{person}« åððéð ýöû ţö öñé öƒ ţĥéîŕ çîŕçļéš. one two three four}other{»{person}« åððéð ýöû ţö ţĥéîŕ # çîŕçļéš. one two three four}}}}]"
        XCTAssertEqual(accented.transform(input).text, Self.aospBody(expected))
    }

    func testAccentMapFollowsAOSPExceptWhereItWouldNotBeIdempotent() {
        XCTAssertEqual(accented.transform("Hello").text, "Ĥéļļö")
        // AOSP maps q->Q, Q->q, v->V (ASCII: a second pass would change them
        // again) and leaves F alone; ours are accented forms.
        XCTAssertEqual(accented.transform("qQvVF").text, "\u{02A0}\u{01EA}\u{1E7D}\u{1E7C}\u{0191}")
        for (from, to) in PseudoLocalizer.fullMapTable {
            XCTAssertFalse(to.isASCII, "\(from) maps to ASCII \(to)")
        }
        XCTAssertEqual(PseudoLocalizer(modes: [.accented], accentMap: .consonants).transform("Hello, World!").text, "Ĥeļļo, Ŵoŕļð!")
    }

    // MARK: - AOSP ar-XB (bidi)

    func testAOSPBidiVectors() {
        let w = Self.wrapped
        XCTAssertEqual(rtl.transform("").text, "")
        XCTAssertEqual(rtl.transform("word").text, w("word"))
        XCTAssertEqual(rtl.transform("  word  ").text, "  " + w("word") + "  ")
        XCTAssertEqual(rtl.transform("hello\n  world\n").text, w("hello") + "\n  " + w("world") + "\n")
        XCTAssertEqual(rtl.transform("{placeholder}").text, w("{placeholder}"))
        XCTAssertEqual(rtl.transform("{COUNT, plural, one {one} other {other}}").text,
                       "{COUNT, plural, one {" + w("one") + "} other {" + w("other") + "}}")
    }

    func testRightToLeftKeepsPrintfAndEscapesOutsideWords() {
        let w = Self.wrapped
        XCTAssertEqual(rtl.transform("Hello %@ world").text, w("Hello") + " %@ " + w("world"))
        // A \n escape in a .strings value separates words, as AOSP's bidi treats it.
        XCTAssertEqual(rtl.transform(#"one\ntwo"#, style: .backslash).text, w("one") + #"\n"# + w("two"))
    }

    // MARK: - Boundaries, length, keys

    func testBoundariesAndLengthening() {
        let boundaries = PseudoLocalizer(modes: [.boundaries])
        XCTAssertEqual(boundaries.transform("Hello").text, "[\u{2060}Hello\u{2060}]")
        // IBM: up to 10 characters need 100% more; whole words of padding.
        let lengthened = PseudoLocalizer(modes: [.lengthened])
        XCTAssertEqual(lengthened.transform("Hello").text, "Hello\u{2060} one two")
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 10), 10)
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 20), 16)
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 30), 18)
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 50), 20)
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 70), 22)
        XCTAssertEqual(PseudoLocalizer.paddingLength(forVisibleLength: 100), 30)
        // Only visible text counts: placeholders and tags do not.
        let shown = lengthened.transform("<b>%1$@</b> Hi").text
        XCTAssertEqual(shown, "<b>%1$@</b> Hi\u{2060} one", "3 visible characters (space included): 3 of padding, to the word's end")
        // Padding longer than the word list repeats it.
        let long = String(repeating: "word ", count: 100)
        XCTAssertGreaterThanOrEqual(lengthened.transform(long).text.count, long.count * 13 / 10)
    }

    func testShowKeysKeepsThePlaceholders() {
        let keys = PseudoLocalizer(modes: [.showKeys, .boundaries])
        XCTAssertEqual(keys.transform("Welcome back", key: "home.title", table: "Localizable").text, "[\u{2060}Localizable:home.title\u{2060}]")
        XCTAssertEqual(keys.transform("%1$@ sent %2$lld files", key: "sent.files", table: "Main").text,
                       "[\u{2060}Main:sent.files %1$@ %2$lld\u{2060}]")
        // A key holding other placeholders than the text cannot be shown safely.
        let refused = keys.transform("Hello %d", key: "welcome %@", table: "Localizable")
        XCTAssertEqual(refused.text, "Hello %d")
        XCTAssertNotNil(refused.problem)
    }

    // MARK: - Never broken

    /// Every placeholder form, in strings transformed with all modes: each
    /// placeholder comes out verbatim, in order.
    func testEveryPlaceholderFormSurvivesEveryMode() {
        let forms: [(String, EscapeStyle, [String])] = [
            ("Hi %@, you have %lld new %1$@", .none, ["%@", "%lld", "%1$@"]),
            ("Total %.2f%% of %-5d items (%*d, %.*f, %1$*2$d)", .none, ["%.2f", "%%", "%-5d", "%*d", "%.*f", "%1$*2$d"]),
            ("%+08.3Lf %hhd %zu %tx %jd %qd %#x %'d %C %S %p %a %E %G", .none,
             ["%+08.3Lf", "%hhd", "%zu", "%tx", "%jd", "%qd", "%#x", "%'d", "%C", "%S", "%p", "%a", "%E", "%G"]),
            ("You have %#@count@ in %1$#@folders@", .none, ["%#@count@", "%1$#@folders@"]),
            ("Hello %(name)s, %(count)d left, %(raw)r %r", .none, ["%(name)s", "%(count)d", "%(raw)r", "%r"]),
            ("Hi {name}, see {{mustache}}", .none, ["{name}", "{{mustache}}"]),
            ("{count, plural, one {# file for {owner}} other {# files for {owner}}} left", .none,
             ["{count, plural, one {", "#", "{owner}", "} other {", "#", "{owner}", "}}"]),
            ("It''s '{literal}' {when, date, short}", .none, ["{when, date, short}"]),
            ("Tap <a href=\"https://x.org?a=1&b=2\">here</a> &amp; &#233; &#x1F600; <br/>", .none,
             ["<a href=\"https://x.org?a=1&b=2\">", "</a>", "&amp;", "&#233;", "&#x1F600;", "<br/>"]),
            ("Visit https://example.com/path?q=1#top or www.example.org.", .none, ["https://example.com/path?q=1#top", "www.example.org"]),
            ("Mail first.last+tag@mail.example.co.uk today", .none, ["first.last+tag@mail.example.co.uk"]),
        ]
        let scanner = PlaceholderScanner()
        for (input, style, expected) in forms {
            XCTAssertEqual(PlaceholderScanner(style: style).placeholders(input).map(\.text), expected, input)
            for modes in Self.modeCombinations {
                let result = PseudoLocalizer(modes: modes).transform(input, style: style)
                XCTAssertNil(result.problem, "\(input) with \(modes.names)")
                XCTAssertEqual(scanner.placeholders(result.text).map(\.text), expected, "\(input) with \(modes.names)")
            }
        }
    }

    func testEscapesOfEachFileStyleStayWhole() {
        let all = everything
        let strings = all.transform(#"Say \"hi\"\nthen \U2192 go"#, style: .backslash).text
        for escape in [#"\""#, #"\n"#, #"\U2192"#] { XCTAssertTrue(strings.contains(escape), "\(escape) in \(strings)") }
        let android = all.transform(#"Don\'t <b>stop</b> \@ &lt;now&gt;"#, style: .android).text
        for escape in [#"\'"#, "<b>", "</b>", #"\@"#, "&lt;", "&gt;"] { XCTAssertTrue(android.contains(escape), "\(escape) in \(android)") }
        // Android: an xliff:g span is kept whole; CDATA text is text, its markers are kept.
        XCTAssertEqual(accented.transform(#"Hi <xliff:g id="brand">Pincer</xliff:g> <![CDATA[<b>bold</b>]]>"#, style: .android).text,
                       #"Ĥî <xliff:g id="brand">Pincer</xliff:g> <![CDATA[<b>ɓöļð</b>]]>"#)
        // Without a backslash style, "\n" is text: the n is accented.
        XCTAssertEqual(accented.transform(#"a\n"#).text, "å\\ñ")
    }

    /// Newlines at either end stay there (gettext wants msgid and msgstr to
    /// begin and end alike); an escaped backslash before an n is no newline.
    func testNewlinesAtTheEndsStayOutsideTheMarkers() {
        let marked = PseudoLocalizer(modes: [.boundaries, .lengthened])
        let po = marked.transform(#"\nTwo\nlines\n"#, style: .backslash).text
        XCTAssertTrue(po.hasPrefix(#"\n[\#u{2060}Two\nlines"#), po)
        XCTAssertTrue(po.hasSuffix("\u{2060}]" + #"\n"#), po)
        XCTAssertEqual(marked.transform(po, style: .backslash).text, po, "twice is once")
        XCTAssertEqual(PseudoLocalizer(modes: [.boundaries]).transform(#"a\\n"#, style: .backslash).text, "[\u{2060}" + #"a\\n"# + "\u{2060}]")
        XCTAssertEqual(PseudoLocalizer(modes: [.boundaries]).transform("Hi\r\n").text, "[\u{2060}Hi\u{2060}]\r\n")
        XCTAssertEqual(PseudoLocalizer(modes: [.boundaries]).transform(#"\n\n"#, style: .backslash).text, #"\n\n"#, "only newlines: left alone")
    }

    /// Keys mode writes the key (read unescaped) in the file's escaping.
    func testKeysAreEscapedForTheFile() {
        let keys = PseudoLocalizer(modes: [.showKeys])
        XCTAssertEqual(keys.transform("x y", style: .backslash, key: "say \"hi\"\tnow\n\\", table: "T").text, #"T:say \"hi\"\tnow\n\\"#)
        XCTAssertEqual(keys.transform("x y", style: .android, key: "a&b's <i>", table: "T").text, #"T:a&amp;b\'s &lt;i&gt;"#)
        XCTAssertEqual(keys.transform("x y", style: .xml, key: "Tom & Jerry", table: "T").text, "T:Tom &amp; Jerry")
        XCTAssertEqual(keys.transform("x y", style: .none, key: "a\"b", table: "T").text, "T:a\"b")
    }

    func testTwiceIsOnce() {
        let corpus = ["Hello, world", "Save 50% now", "%1$@ has %2$lld files", "{count, plural, one {# file} other {# files}}",
                      "<b>Bold</b> &amp; more", "[Draft] notes", "Ĥéļļö already", "Tab\tand\nnewline", "e\u{301}cole 👍🏽 한국어",
                      String(repeating: "long text ", count: 20)]
        for modes in Self.modeCombinations {
            let localizer = PseudoLocalizer(modes: modes)
            for text in corpus {
                let once = localizer.transform(text, key: "k", table: "T")
                XCTAssertEqual(localizer.transform(once.text, key: "k", table: "T").text, once.text, "\(text) with \(modes.names)")
            }
        }
    }

    func testGraphemeClustersAndAccessKeys() {
        // A letter with a combining mark is one cluster: left as it is.
        XCTAssertEqual(accented.transform("e\u{301}te").text, "e\u{301}ţé")
        XCTAssertEqual(accented.transform("👍🏽 ok").text, "👍🏽 öķ")
        for single in ["A", "&", "%", "e\u{301}", "👍🏽"] {
            XCTAssertEqual(everything.transform(single).text, single, "one-character strings are left alone")
        }
    }

    // MARK: - Placeholder check (SwiftGen's vectors)

    func testArgumentTypesByPositionAsSwiftGenReadsThem() {
        func types(_ format: String) -> [String] {
            let args = PlaceholderCheck.arguments(format, style: .none)
            return args.positional.keys.sorted().filter { $0 > 0 }.compactMap { args.positional[$0]?.first }
        }
        XCTAssertEqual(types("%@"), ["object"])
        XCTAssertEqual(types("%g-%e"), ["double", "double"])
        XCTAssertEqual(types("%1.2f : %.3f : %+3f : %-6.2f"), ["double", "double", "double", "double"])
        XCTAssertEqual(types("%d-%i-%o-%u-%x"), ["int", "int", "unsigned", "unsigned", "unsigned"])
        XCTAssertEqual(types("%c-%s"), ["char", "C string"])
        XCTAssertEqual(types("%2$d-%4$f-%3$@-%c"), ["char", "int", "object", "double"])
        XCTAssertEqual(types("%2$1.3d - %4$-.7f - %3$@ - %% - %5$+3c - %%"), ["int", "object", "double", "char"])
        XCTAssertEqual(types("%@ - %d - %f - %5$d - %04$f - %6$d - %007$@ - %8$3.2f - %11$1.2f - %9$@ - %10$d"),
                       ["object", "int", "double", "double", "int", "int", "object", "double", "object", "int", "double"])
        XCTAssertEqual(types("%_9d %_9f %_9@ %!9@"), [])
        XCTAssertEqual(types("Text: %1$@; %1$@."), ["object"])
        XCTAssertEqual(types("%%foo"), [])
    }

    func testCheckFindsWhatATranslatorCanBreak() {
        func kinds(_ source: String, _ translation: String) -> [String] {
            PlaceholderCheck.compare(source: source, translation: translation, style: .none).map(\.kind.rawValue)
        }
        XCTAssertEqual(kinds("%1$@ has %2$lld files", "%2$lld Dateien hat %1$@"), [])
        XCTAssertEqual(kinds("%1$@ has %2$lld files", "%1$@ hat Dateien"), ["missing"])
        XCTAssertEqual(kinds("%d items", "%@ Elemente"), ["type-mismatch"])
        XCTAssertEqual(kinds("%lld items", "%d Elemente"), ["type-mismatch"])
        XCTAssertEqual(kinds("Hi {name}", "Hallo"), ["missing"])
        XCTAssertEqual(kinds("Hi", "Hallo %@"), ["extra"])
        XCTAssertEqual(PlaceholderCheck.check("%1$@ and %3$@", style: .none).map(\.kind.rawValue), ["positional-gap"])
        XCTAssertEqual(PlaceholderCheck.check("%1$@ and %@", style: .none).map(\.kind.rawValue), ["mixed"])
        XCTAssertEqual(PlaceholderCheck.check("Text: %1$@; %1$ld.", style: .none).map(\.kind.rawValue), ["type-mismatch"])
    }

    /// Python's %(name)s is its own kind and is compared by name: a renamed
    /// one is one missing and one extra, wherever it stands.
    func testPythonNamedPlaceholdersAreComparedByName() {
        XCTAssertEqual(PlaceholderScanner().placeholders("Hi %(name)s and %s %(n)-5.2f").map(\.kind), [.named, .printf, .named])
        func kinds(_ source: String, _ translation: String, _ grammar: PlaceholderCheck.Grammar = .any) -> [String] {
            PlaceholderCheck.compare(source: source, translation: translation, style: .none, grammar: grammar).map(\.kind.rawValue)
        }
        XCTAssertEqual(kinds("Hello %(name)s", "Hallo %(user)s"), ["missing", "extra"])
        XCTAssertEqual(kinds("Hello %(name)s", "Hallo %(user)s", .python), ["missing", "extra"])
        XCTAssertEqual(kinds("%(a)s and %(b)s", "%(b)s und %(a)s", .python), [])
        XCTAssertEqual(kinds("%(n)s", "%(n)d", .python), ["type-mismatch"])
        // Python's classes: %d and %x are both integers, %s and %r both any object; C tells them apart.
        XCTAssertEqual(kinds("%(n)d %(v)s", "%(n)x %(v)r", .python), [])
        XCTAssertEqual(kinds("%d", "%x", .python), [])
        XCTAssertEqual(kinds("%d", "%x", .c), ["type-mismatch"])
        XCTAssertEqual(kinds("%(a)s", "%(a)s %s", .python), ["mixed", "extra"])
        XCTAssertEqual(kinds("%s", "%1$s", .python), ["invalid", "missing"])
        // Each grammar reads only its own placeholders.
        XCTAssertEqual(kinds("Hi {name} %s", "Hallo {user} %s", .c), [])
        XCTAssertEqual(kinds("Hi {name} %s", "Hallo {user} %d", .pythonBrace), ["missing", "extra"])
        XCTAssertEqual(kinds("100%d", "100%s", .literal), [])
        // A plural form used for few counts may leave arguments out, not add them.
        XCTAssertEqual(PlaceholderCheck.compare(source: "%d file", translation: "eine Datei", style: .none, grammar: .c, relaxed: true), [])
        XCTAssertEqual(PlaceholderCheck.compare(source: "%d file", translation: "eine Datei", style: .none, grammar: .c).map(\.kind), [.missing])
        XCTAssertEqual(PlaceholderCheck.compare(source: "%d file", translation: "%d Datei %s", style: .none, grammar: .c,
                                                relaxed: true).map(\.kind), [.extra])
        XCTAssertEqual(PlaceholderCheck.compare(source: "%(n)d file", translation: "eine Datei", style: .none, grammar: .python,
                                                relaxed: true), [])
    }

    func testGrammarFromPOFlags() {
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["fuzzy", "python-format"]), .python)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["c-format"]), .c)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["python-brace-format"]), .pythonBrace)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["no-c-format"]), .literal)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["no-c-format", "java-format"]), .any)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: ["fuzzy"]), .any)
        XCTAssertEqual(PlaceholderCheck.Grammar(poFlags: []), .any)
    }

    /// Every combination of the four text modes.
    private static let modeCombinations: [PseudoModes] = (0..<16).map { PseudoModes(rawValue: UInt32($0)) }
}
