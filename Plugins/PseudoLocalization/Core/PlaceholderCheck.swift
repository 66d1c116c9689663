/// Finds placeholder mistakes a translator can make: arguments a
/// translation drops, adds or formats with another type, named
/// placeholders renamed or lost, positional arguments with gaps, and
/// kinds of arguments mixed. The rules follow what formats the string:
/// `msgfmt -c` for gettext's c-format, python-format and
/// python-brace-format messages.
public enum PlaceholderCheck {
    /// One problem, worded for a person.
    public struct Issue: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case missing, extra, typeMismatch = "type-mismatch", positionalGap = "positional-gap", mixed, invalid
        }
        public var kind: Kind
        public var message: String
    }

    /// Which placeholders count: those of the code that formats the string.
    public enum Grammar: String, Sendable, Equatable {
        /// Every placeholder the scanner knows: printf in Apple's grammar
        /// with C's argument types, Python's `%(name)s`, stringsdict
        /// variables, `{name}` and ICU arguments. For files that do not say.
        case any
        /// gettext `c-format`: printf specifiers only (`{name}` is text).
        case c
        /// gettext `python-format`: `%(name)s` by name or `%s` in order (not
        /// both, and no `%1$s`), typed by Python's conversion classes.
        case python
        /// gettext `python-brace-format`: `{name}` only.
        case pythonBrace = "python-brace"
        /// gettext `no-c-format` and the like: not a format string.
        case literal

        /// The grammar a `.po` entry's `#,` flags name: c-format,
        /// python-format or python-brace-format; `no-…-format` alone makes
        /// the message literal; anything else reads as `.any`.
        public init(poFlags flags: [String]) {
            if flags.contains("python-format") { self = .python }
            else if flags.contains("python-brace-format") { self = .pythonBrace }
            else if flags.contains("c-format") { self = .c }
            else if flags.contains(where: { $0.hasPrefix("no-") && $0.hasSuffix("-format") })
                        && !flags.contains(where: { !$0.hasPrefix("no-") && $0.hasSuffix("-format") }) { self = .literal }
            else { self = .any }
        }
    }

    /// The arguments a format string consumes: by position (1-based) the
    /// printf specifiers' types; and named placeholders (`%(name)`,
    /// stringsdict variables, `{name}`, ICU arguments) by how they are
    /// written, with the types `%(name)s` formats them as (none for the others).
    public struct Arguments: Sendable, Equatable {
        public var positional: [Int: [String]] = [:]
        public var named: [String: [String]] = [:]
        public var usesExplicitPositions = false
        public var usesSequentialPositions = false
        /// Python's `%(name)s` seen (Python cannot mix it with `%s`).
        public var usesNamedPrintf = false
        /// Specifiers the grammar does not have (`%1$s` in Python), as written.
        public var invalid: [String] = []
        /// Specifiers numbering an argument beyond `maximumPosition`, as written.
        public var outOfRange: [String] = []
        /// Specifiers numbering argument 0 (`%0$@`), which printf does not have, as written.
        public var zeroPosition: [String] = []
    }

    /// The highest argument number a specifier may name (`%4096$@`):
    /// glibc's NL_ARGMAX. Beyond it no printf takes the argument, and the
    /// check would list every gap up to it.
    public static let maximumPosition = 4096

    public static func arguments(_ string: String, style: EscapeStyle, grammar: Grammar = .any) -> Arguments {
        var result = Arguments()
        guard grammar != .literal else { return result }
        let printf = grammar == .any || grammar == .c || grammar == .python
        var next = 1
        for piece in PlaceholderScanner(style: style).placeholders(string) {
            switch piece.kind {
            case .printf where printf:
                guard let spec = Specifier(piece.text, python: grammar == .python) else { continue }
                if ([spec.position] + spec.starArguments).contains(where: { ($0 ?? 0) > maximumPosition }) {
                    result.outOfRange.append(piece.text)
                    continue
                }
                // printf counts arguments from 1: `%0$@` names none (found by Fuzz/placeholders).
                if ([spec.position] + spec.starArguments).contains(where: { $0 == 0 }) {
                    result.zeroPosition.append(piece.text)
                    continue
                }
                if grammar == .python, spec.position != nil || spec.starArguments.contains(where: { $0 != nil }) {
                    result.invalid.append(piece.text)
                    continue
                }
                for star in spec.starArguments {
                    let index = star ?? next
                    if star == nil { next += 1; result.usesSequentialPositions = true } else { result.usesExplicitPositions = true }
                    result.positional[index, default: []].append("int (* width)")
                }
                let index: Int
                if let explicit = spec.position {
                    index = explicit
                    result.usesExplicitPositions = true
                } else {
                    index = next
                    next += 1
                    result.usesSequentialPositions = true
                }
                result.positional[index, default: []].append(spec.type)
            case .named where grammar == .any || grammar == .python:
                // %(name)s: by name, typed by its conversion.
                guard let spec = Specifier(piece.text, python: grammar == .python), let name = spec.name else { continue }
                result.named["%(\(name))", default: []].append(spec.type)
                result.usesNamedPrintf = true
            case .variable where grammar == .any:
                // %#@name@ (optionally %1$#@name@): the variable also consumes an argument.
                let text = piece.text
                let name = String(text.split(separator: "@", omittingEmptySubsequences: false).dropFirst().first ?? "")
                result.named["%#@\(name)@", default: []] += []
            case .brace where grammar == .any || grammar == .pythonBrace, .icu where grammar == .any || grammar == .pythonBrace:
                let name = piece.text.drop { $0 == "{" || $0 == " " }.prefix { $0 != "," && $0 != "}" && $0 != " " }
                if !name.isEmpty { result.named["{\(name)}", default: []] += [] }
            default:
                continue
            }
        }
        return result
    }

    /// Problems of one string on its own: gaps in explicit positions,
    /// kinds of arguments mixed, one argument formatted two ways, and
    /// specifiers the grammar does not have.
    public static func check(_ string: String, style: EscapeStyle, grammar: Grammar = .any) -> [Issue] {
        check(arguments(string, style: style, grammar: grammar), grammar: grammar)
    }

    static func check(_ args: Arguments, grammar: Grammar) -> [Issue] {
        var issues: [Issue] = []
        for text in args.invalid {
            issues.append(Issue(kind: .invalid, message: "\(text) is not a Python format (Python has no numbered arguments)"))
        }
        for text in args.outOfRange {
            issues.append(Issue(kind: .invalid, message: "\(text) numbers an argument beyond \(maximumPosition), the most printf takes"))
        }
        for text in args.zeroPosition {
            issues.append(Issue(kind: .invalid, message: "\(text) numbers argument 0; printf counts arguments from 1"))
        }
        if args.usesExplicitPositions, args.usesSequentialPositions {
            issues.append(Issue(kind: .mixed, message: "mixes numbered (%1$@) and unnumbered (%@) arguments"))
        }
        if grammar == .python, args.usesNamedPrintf, !args.positional.isEmpty {
            issues.append(Issue(kind: .mixed, message: "mixes named (%(name)s) and unnamed (%s) arguments"))
        }
        if let highest = args.positional.keys.max() {
            let gaps = (1...highest).filter { args.positional[$0] == nil }
            if !gaps.isEmpty {
                issues.append(Issue(kind: .positionalGap, message: "argument\(gaps.count == 1 ? "" : "s") \(gaps.map(String.init).joined(separator: ", ")) of \(highest) never used"))
            }
        }
        for (index, types) in args.positional.sorted(by: { $0.key < $1.key }) where Set(types).count > 1 {
            issues.append(Issue(kind: .typeMismatch, message: "argument \(index) is formatted as \(Set(types).sorted().joined(separator: " and "))"))
        }
        for (name, types) in args.named.sorted(by: { $0.key < $1.key }) where Set(types).count > 1 {
            issues.append(Issue(kind: .typeMismatch, message: "\(name) is formatted as \(Set(types).sorted().joined(separator: " and "))"))
        }
        return issues
    }

    /// Problems of `translation` against its `source`. `relaxed` is
    /// msgfmt's rule for a plural form used for only a few counts (German
    /// msgstr[0], n == 1 alone): it may leave out trailing arguments and
    /// named ones ("eine Datei" for "%d file"), never add any.
    public static func compare(source: String, translation: String, style: EscapeStyle, grammar: Grammar = .any,
                               relaxed: Bool = false) -> [Issue] {
        let s = arguments(source, style: style, grammar: grammar), t = arguments(translation, style: style, grammar: grammar)
        var issues = check(t, grammar: grammar)
        let highestUsed = t.positional.keys.max() ?? 0
        for index in Set(s.positional.keys).union(t.positional.keys).sorted() {
            switch (s.positional[index].map { Set($0) }, t.positional[index].map { Set($0) }) {
            case let (want?, nil) where !(relaxed && index > highestUsed):
                issues.append(Issue(kind: .missing, message: "argument \(index) (\(want.sorted().joined(separator: "/"))) is missing"))
            case let (nil, got?):
                issues.append(Issue(kind: .extra, message: "argument \(index) (\(got.sorted().joined(separator: "/"))) is not in the source"))
            case let (want?, got?) where want != got:
                issues.append(Issue(kind: .typeMismatch, message: "argument \(index) is \(want.sorted().joined(separator: "/")) in the source but \(got.sorted().joined(separator: "/")) here"))
            default:
                break
            }
        }
        for name in Set(s.named.keys).union(t.named.keys).sorted() {
            switch (s.named[name].map { Set($0) }, t.named[name].map { Set($0) }) {
            case (_?, nil) where !relaxed:
                issues.append(Issue(kind: .missing, message: "\(name) is missing"))
            case (nil, _?):
                issues.append(Issue(kind: .extra, message: "\(name) is not in the source"))
            case let (want?, got?) where want != got:
                issues.append(Issue(kind: .typeMismatch, message: "\(name) is \(want.sorted().joined(separator: "/")) in the source but \(got.sorted().joined(separator: "/")) here"))
            default:
                break
            }
        }
        return issues
    }
}

/// One printf specifier: its position or Python name, `*` arguments and value type.
struct Specifier {
    var position: Int?
    /// Python's `%(name)s`.
    var name: String?
    /// Width or precision taken from arguments: nil for the next one, n for `*n$`.
    var starArguments: [Int?] = []
    var type: String

    /// `python`: types by Python's conversion classes (`%d` and `%x` are
    /// both integers there, `%s` and `%r` both take any object).
    init?(_ text: String, python: Bool = false) {
        var s = Array(text.unicodeScalars.dropFirst())
        guard let conversion = s.popLast(), conversion != "%" else { return nil }
        var i = 0
        // Checked: an overlong number saturates at Int.max (then reads as
        // beyond every limit) instead of trapping.
        func number() -> Int? {
            var value = 0, digits = 0
            while i < s.count, let d = Int(String(s[i])) {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (v, o2) = m.addingReportingOverflow(d)
                value = o1 || o2 ? Int.max : v
                i += 1; digits += 1
            }
            return digits > 0 ? value : nil
        }
        if s.first == "(", let close = s.firstIndex(of: ")") {
            name = String(String.UnicodeScalarView(s[1..<close]))
            i = close + 1
        }
        let start = i
        if name == nil, let n = number(), i < s.count, s[i] == "$" { position = n; i += 1 } else { i = start }
        while i < s.count, ["-", "+", " ", "#", "0", "'"].contains(s[i]) { i += 1 }
        for _ in 0..<2 {
            if i < s.count, s[i] == "*" {
                i += 1
                let save = i
                if let n = number(), i < s.count, s[i] == "$" { starArguments.append(n); i += 1 } else { i = save; starArguments.append(nil) }
            } else {
                _ = number()
            }
            if i < s.count, s[i] == "." { i += 1 } else { break }
        }
        let length = String(String.UnicodeScalarView(s[i...]))
        type = python ? Specifier.pythonTypeName(conversion) : Specifier.typeName(length: length, conversion: conversion)
    }

    static func typeName(length: String, conversion: Unicode.Scalar) -> String {
        switch conversion {
        case "@": return "object"
        case "d", "i", "D": return length.isEmpty ? "int" : "int (\(length))"
        case "u", "U", "x", "X", "o", "O": return length.isEmpty ? "unsigned" : "unsigned (\(length))"
        case "f", "F", "e", "E", "g", "G", "a", "A": return length == "L" ? "long double" : "double"
        case "c", "C": return "char"
        case "s", "S": return "C string"
        case "p": return "pointer"
        default: return String(conversion)
        }
    }

    /// Python's classes, as gettext's format-python tells them apart.
    static func pythonTypeName(_ conversion: Unicode.Scalar) -> String {
        switch conversion {
        case "s", "r", "a": return "object"
        case "c": return "char"
        case "d", "i", "u", "o", "x", "X": return "integer"
        case "e", "E", "f", "F", "g", "G": return "float"
        default: return String(conversion)
        }
    }
}
