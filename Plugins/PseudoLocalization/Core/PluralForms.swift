/// A `.po` header's `Plural-Forms: nplurals=N; plural=EXPRESSION;`, with
/// the expression evaluated as gettext does (C operators on unsigned
/// integers: `?:`, `||`, `&&`, `==`, `!=`, `<`, `>`, `<=`, `>=`, `+`, `-`,
/// `*`, `/`, `%`, `!`, `n`, numbers, parentheses).
///
/// Limits, as the header is untrusted input: nplurals at most
/// `maximumCount`, the formula at most `maximumFormulaLength` bytes and
/// `maximumNesting` levels of parentheses, `?:` and `!` (the parser and the
/// evaluator recurse; a longer formula is refused rather than risk the
/// stack). Numbers are read with checked arithmetic; evaluation is C's
/// unsigned arithmetic, which wraps by definition.
struct PluralForms: Sendable {
    static let maximumCount = 100
    static let maximumFormulaLength = 1000
    static let maximumNesting = 50

    let count: Int
    private let expression: Node

    /// nil when the field is missing, does not parse or is beyond the limits.
    init?(header field: String) {
        var count: Int?
        var formula: String?
        for part in field.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            switch pair[0].filter({ $0 != " " && $0 != "\t" }) {
            case "nplurals": count = Int(pair[1].filter { $0 != " " && $0 != "\t" })
            case "plural": formula = String(pair[1])
            default: break
            }
        }
        guard let count, count > 0, count <= PluralForms.maximumCount, let formula,
              formula.utf8.count <= PluralForms.maximumFormulaLength else { return nil }
        var parser = Parser(Array(formula.utf8))
        guard let node = parser.conditional(), parser.atEnd else { return nil }
        self.count = count
        expression = node
    }

    /// The form for `n`; nil on a division by zero.
    func form(_ n: UInt64) -> UInt64? { expression.value(n) }

    /// For each form, whether gettext counts it as used "often": for at
    /// least 5 of the counts 0...1000 (msgfmt's check_plural_eval). Forms
    /// used less often may leave out arguments. nil when the formula
    /// fails for some count or picks a form beyond nplurals.
    var often: [Bool]? {
        var hits = [Int](repeating: 0, count: count)
        for n in UInt64(0)...1000 {
            guard let form = form(n), form < UInt64(count) else { return nil }
            hits[Int(form)] = min(hits[Int(form)] + 1, 5)
        }
        return hits.map { $0 >= 5 }
    }

    private indirect enum Node: Sendable {
        case n
        case number(UInt64)
        case not(Node)
        case binary(UInt8, Node, Node)
        case and(Node, Node), or(Node, Node)
        case conditional(Node, Node, Node)

        func value(_ n: UInt64) -> UInt64? {
            switch self {
            case .n: return n
            case .number(let v): return v
            case .not(let a): return a.value(n).map { $0 == 0 ? 1 : 0 }
            case .and(let a, let b):
                guard let x = a.value(n) else { return nil }
                return x == 0 ? 0 : b.value(n).map { $0 != 0 ? 1 : 0 }
            case .or(let a, let b):
                guard let x = a.value(n) else { return nil }
                return x != 0 ? 1 : b.value(n).map { $0 != 0 ? 1 : 0 }
            case .conditional(let c, let a, let b):
                guard let x = c.value(n) else { return nil }
                return x != 0 ? a.value(n) : b.value(n)
            case .binary(let op, let a, let b):
                guard let x = a.value(n), let y = b.value(n) else { return nil }
                switch op {
                case UInt8(ascii: "*"): return x &* y
                case UInt8(ascii: "/"): return y == 0 ? nil : x / y
                case UInt8(ascii: "%"): return y == 0 ? nil : x % y
                case UInt8(ascii: "+"): return x &+ y
                case UInt8(ascii: "-"): return x &- y
                case UInt8(ascii: "<"): return x < y ? 1 : 0
                case UInt8(ascii: ">"): return x > y ? 1 : 0
                case Op.lessEqual: return x <= y ? 1 : 0
                case Op.greaterEqual: return x >= y ? 1 : 0
                case Op.equal: return x == y ? 1 : 0
                default: return x != y ? 1 : 0
                }
            }
        }
    }

    /// Two-character operators, as one byte each.
    private enum Op {
        static let lessEqual: UInt8 = 1, greaterEqual: UInt8 = 2, equal: UInt8 = 3, notEqual: UInt8 = 4
    }

    /// Recursive descent, lowest precedence first.
    private struct Parser {
        let b: [UInt8]
        var i = 0
        /// Open parentheses, `?:` and `!` around the current position.
        var nesting = 0
        init(_ bytes: [UInt8]) { b = bytes }

        var atEnd: Bool {
            mutating get { skipSpace(); return i == b.count }
        }

        mutating func skipSpace() {
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
        }

        mutating func take(_ s: String) -> Bool {
            skipSpace()
            let u = Array(s.utf8)
            guard i + u.count <= b.count, Array(b[i..<i + u.count]) == u else { return false }
            i += u.count
            return true
        }

        mutating func conditional() -> Node? {
            nesting += 1
            defer { nesting -= 1 }
            guard nesting <= PluralForms.maximumNesting, let c = or() else { return nil }
            guard take("?") else { return c }
            guard let a = conditional(), take(":"), let e = conditional() else { return nil }
            return .conditional(c, a, e)
        }

        mutating func or() -> Node? {
            guard var left = and() else { return nil }
            while take("||") { guard let right = and() else { return nil }; left = .or(left, right) }
            return left
        }

        mutating func and() -> Node? {
            guard var left = equality() else { return nil }
            while take("&&") { guard let right = equality() else { return nil }; left = .and(left, right) }
            return left
        }

        mutating func equality() -> Node? {
            guard var left = comparison() else { return nil }
            while true {
                let op: UInt8
                if take("==") { op = Op.equal } else if take("!=") { op = Op.notEqual } else { return left }
                guard let right = comparison() else { return nil }
                left = .binary(op, left, right)
            }
        }

        mutating func comparison() -> Node? {
            guard var left = additive() else { return nil }
            while true {
                let op: UInt8
                if take("<=") { op = Op.lessEqual } else if take(">=") { op = Op.greaterEqual }
                else if take("<") { op = UInt8(ascii: "<") } else if take(">") { op = UInt8(ascii: ">") } else { return left }
                guard let right = additive() else { return nil }
                left = .binary(op, left, right)
            }
        }

        mutating func additive() -> Node? {
            guard var left = multiplicative() else { return nil }
            while true {
                let op: UInt8
                if take("+") { op = UInt8(ascii: "+") } else if take("-") { op = UInt8(ascii: "-") } else { return left }
                guard let right = multiplicative() else { return nil }
                left = .binary(op, left, right)
            }
        }

        mutating func multiplicative() -> Node? {
            guard var left = unary() else { return nil }
            while true {
                let op: UInt8
                if take("*") { op = UInt8(ascii: "*") } else if take("/") { op = UInt8(ascii: "/") }
                else if take("%") { op = UInt8(ascii: "%") } else { return left }
                guard let right = unary() else { return nil }
                left = .binary(op, left, right)
            }
        }

        mutating func unary() -> Node? {
            // "!=" is an operator, not "!" before "=".
            skipSpace()
            if i + 1 < b.count, b[i] == UInt8(ascii: "!"), b[i + 1] != UInt8(ascii: "=") {
                i += 1
                nesting += 1
                defer { nesting -= 1 }
                guard nesting <= PluralForms.maximumNesting else { return nil }
                return unary().map { .not($0) }
            }
            if take("(") {
                guard let inner = conditional(), take(")") else { return nil }
                return inner
            }
            if take("n") { return .n }
            var value: UInt64 = 0
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (v, o2) = m.addingReportingOverflow(UInt64(b[i] - 0x30))
                guard !o1, !o2 else { return nil }
                value = v
                i += 1
            }
            return i > start ? .number(value) : nil
        }
    }
}
