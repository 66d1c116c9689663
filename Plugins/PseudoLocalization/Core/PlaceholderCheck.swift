/// Finds placeholder mistakes a translator can make: arguments a
/// translation drops, adds or formats with another type, positional
/// arguments with gaps, and positional and sequential arguments mixed.
public enum PlaceholderCheck {
    /// One problem, worded for a person.
    public struct Issue: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case missing, extra, typeMismatch = "type-mismatch", positionalGap = "positional-gap", mixed
        }
        public var kind: Kind
        public var message: String
    }

    /// The arguments a format string consumes: by position (1-based) the
    /// printf specifiers' types; and named placeholders (stringsdict
    /// variables, `{name}`, ICU arguments) by name.
    public struct Arguments: Sendable, Equatable {
        public var positional: [Int: [String]] = [:]
        public var named: [String: Int] = [:]
        public var usesExplicitPositions = false
        public var usesSequentialPositions = false
    }

    public static func arguments(_ string: String, style: EscapeStyle) -> Arguments {
        var result = Arguments()
        var next = 1
        for piece in PlaceholderScanner(style: style).placeholders(string) {
            switch piece.kind {
            case .printf:
                guard let spec = Specifier(piece.text) else { continue }
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
            case .variable:
                // %#@name@ (optionally %1$#@name@): the variable also consumes an argument.
                let text = piece.text
                let name = String(text.split(separator: "@", omittingEmptySubsequences: false).dropFirst().first ?? "")
                result.named["%#@\(name)@", default: 0] += 1
            case .brace, .icu:
                let name = piece.text.drop { $0 == "{" || $0 == " " }.prefix { $0 != "," && $0 != "}" && $0 != " " }
                if !name.isEmpty { result.named["{\(name)}", default: 0] += 1 }
            default:
                continue
            }
        }
        return result
    }

    /// Problems of one string on its own: gaps in explicit positions, and
    /// explicit and sequential positions mixed.
    public static func check(_ string: String, style: EscapeStyle) -> [Issue] {
        let args = arguments(string, style: style)
        var issues: [Issue] = []
        if args.usesExplicitPositions, args.usesSequentialPositions {
            issues.append(Issue(kind: .mixed, message: "mixes numbered (%1$@) and unnumbered (%@) arguments"))
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
        return issues
    }

    /// Problems of `translation` against its `source`.
    public static func compare(source: String, translation: String, style: EscapeStyle) -> [Issue] {
        let s = arguments(source, style: style), t = arguments(translation, style: style)
        var issues = check(translation, style: style)
        for index in Set(s.positional.keys).union(t.positional.keys).sorted() {
            switch (s.positional[index].map { Set($0) }, t.positional[index].map { Set($0) }) {
            case let (want?, nil):
                issues.append(Issue(kind: .missing, message: "argument \(index) (\(want.sorted().joined(separator: "/"))) is missing"))
            case let (nil, got?):
                issues.append(Issue(kind: .extra, message: "argument \(index) (\(got.sorted().joined(separator: "/"))) is not in the source"))
            case let (want?, got?) where want != got:
                issues.append(Issue(kind: .typeMismatch, message: "argument \(index) is \(want.sorted().joined(separator: "/")) in the source but \(got.sorted().joined(separator: "/")) here"))
            default:
                break
            }
        }
        for name in Set(s.named.keys).union(t.named.keys).sorted() where s.named[name] != t.named[name] {
            if t.named[name] == nil {
                issues.append(Issue(kind: .missing, message: "\(name) is missing"))
            } else if s.named[name] == nil {
                issues.append(Issue(kind: .extra, message: "\(name) is not in the source"))
            }
        }
        return issues
    }
}

/// One printf specifier: its position, `*` arguments and value type.
struct Specifier {
    var position: Int?
    /// Width or precision taken from arguments: nil for the next one, n for `*n$`.
    var starArguments: [Int?] = []
    var type: String

    init?(_ text: String) {
        var s = Array(text.unicodeScalars.dropFirst())
        guard let conversion = s.popLast(), conversion != "%" else { return nil }
        var i = 0
        func number() -> Int? {
            var value = 0, digits = 0
            while i < s.count, let d = Int(String(s[i])) { value = value * 10 + d; i += 1; digits += 1 }
            return digits > 0 ? value : nil
        }
        if s.first == "(" {
            // %(name)s: a named argument, typed by its conversion.
            position = nil
            type = Specifier.typeName(length: "", conversion: conversion)
            return
        }
        let start = i
        if let n = number(), i < s.count, s[i] == "$" { position = n; i += 1 } else { i = start }
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
        type = Specifier.typeName(length: length, conversion: conversion)
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
}
