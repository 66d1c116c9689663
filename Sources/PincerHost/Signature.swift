// The command signature language of SDK/include/pincer/command.h.
// One parsed signature drives argument conversion, validation, usage lines,
// help and completion, so nothing about a command is written twice.

/// A type a parameter or result can have.
public enum ValueType: String, Sendable, CaseIterable {
    case void, bool, i32, i64, u64, f64, string

    /// The SDK's PINCER_TYPE_* tag.
    var tag: UInt32 {
        switch self {
        case .void: 0
        case .bool: 1
        case .i32: 2
        case .i64: 3
        case .u64: 4
        case .f64: 5
        case .string: 6
        }
    }
}

/// A converted argument or result.
public enum Value: Sendable, Equatable, CustomStringConvertible {
    case void
    case bool(Bool)
    case i32(Int32)
    case i64(Int64)
    case u64(UInt64)
    case f64(Double)
    case string(String)

    public var type: ValueType {
        switch self {
        case .void: .void
        case .bool: .bool
        case .i32: .i32
        case .i64: .i64
        case .u64: .u64
        case .f64: .f64
        case .string: .string
        }
    }

    /// How the shell prints the value.
    public var description: String {
        switch self {
        case .void: ""
        case .bool(let v): v ? "true" : "false"
        case .i32(let v): String(v)
        case .i64(let v): String(v)
        case .u64(let v): String(v)
        case .f64(let v): String(v)
        case .string(let v): v
        }
    }
}

public struct Parameter: Sendable, Equatable {
    public let name: String
    public let type: ValueType
    public let isSecret: Bool
    /// Present for optional parameters.
    public let defaultValue: Value?
    /// `name: string...`: zero or more strings, always the last parameter (ABI 1.2).
    public let isRest: Bool

    public var isOptional: Bool { defaultValue != nil }

    /// How the shell spells the parameter: the signature identifier in
    /// kebab-case (`body_cap` is `--body-cap`). Identifiers cannot hold
    /// `-`, so the mapping is one to one.
    public var optionName: String { String(name.map { $0 == "_" ? "-" : $0 }) }
}

public struct Signature: Sendable, Equatable {
    public let name: String
    public let parameters: [Parameter]
    public let result: ValueType
    /// The signature as registered, for display.
    public let text: String

    /// The parameter an option word names (without its `--`): the
    /// kebab-case spelling, or the identifier itself, which older scripts
    /// use (`body_cap`); `deprecated` is true for the latter when the two differ.
    public func parameterIndex(option: String) -> (index: Int, deprecated: Bool)? {
        if let i = parameters.firstIndex(where: { $0.optionName == option }) { return (i, false) }
        if let i = parameters.firstIndex(where: { $0.name == option }) { return (i, true) }
        return nil
    }

    public func parameter(named name: String) -> Parameter? {
        parameters.first { $0.name == name }
    }

    /// The trailing `name: string...` parameter, if the signature has one.
    public var restParameter: Parameter? {
        guard let last = parameters.last, last.isRest else { return nil }
        return last
    }

    /// The parameters that take exactly one value each: all but the rest parameter.
    public var fixedParameters: ArraySlice<Parameter> {
        restParameter == nil ? parameters[...] : parameters.dropLast()
    }

    /// `name <a:i64> [b:f64=1.5] [c:string...]`: the usage line for a command whose full name is `fullName`.
    public func usage(fullName: String) -> String {
        var parts = [fullName]
        for p in parameters {
            let typ = p.isSecret ? "secret \(p.type.rawValue)" : p.type.rawValue
            if p.isRest {
                parts.append("[\(p.optionName):\(typ)...]")
            } else if let d = p.defaultValue {
                parts.append("[\(p.optionName):\(typ)=\(Signature.literal(d))]")
            } else {
                parts.append("<\(p.optionName):\(typ)>")
            }
        }
        return parts.joined(separator: " ")
    }

    static func literal(_ value: Value) -> String {
        if case .string(let s) = value {
            var out = "\""
            for ch in s.unicodeScalars {
                switch ch {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                default: out.unicodeScalars.append(ch)
                }
            }
            return out + "\""
        }
        return value.description
    }
}

/// Why a signature was refused, with the 1-based column of the problem.
public struct SignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    public let column: Int
    public let message: String
    public var description: String { "column \(column): \(message)" }
}

extension Signature {
    static let maxNameLength = 64

    /// Parses `text` by the grammar in command.h.
    public static func parse(_ text: String) throws(SignatureError) -> Signature {
        var p = SignatureParser(Array(text.utf8))
        return try p.parse(text: text)
    }
}

private struct SignatureParser {
    let bytes: [UInt8]
    var pos = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String, at position: Int? = nil) -> SignatureError {
        SignatureError(column: (position ?? pos) + 1, message: message)
    }

    var current: UInt8? { pos < bytes.count ? bytes[pos] : nil }

    var describeCurrent: String {
        guard let c = current else { return "end of signature" }
        if c >= 0x21 && c < 0x7f { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16))"
    }

    mutating func skipSpace() {
        while let c = current, c == 0x20 || c == 0x09 { pos += 1 }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(SignatureError) {
        skipSpace()
        guard current == byte else { throw fail("expected \(what), found \(describeCurrent)") }
        pos += 1
    }

    static func isLower(_ c: UInt8) -> Bool { c >= 0x61 && c <= 0x7a }
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// Command names allow '-', parameter names do not (they become `--name` flags either way).
    mutating func identifier(_ what: String, allowDash: Bool) throws(SignatureError) -> String {
        skipSpace()
        let start = pos
        guard let first = current, Self.isLower(first) || (!allowDash && first == 0x5f) else {
            throw fail("expected \(what) (a lowercase letter first), found \(describeCurrent)")
        }
        pos += 1
        while let c = current, Self.isLower(c) || Self.isDigit(c) || c == 0x5f || (allowDash && c == 0x2d) {
            pos += 1
        }
        if pos - start > Signature.maxNameLength {
            throw fail("\(what) is longer than \(Signature.maxNameLength) bytes", at: start)
        }
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    mutating func word() -> (String, Int) {
        skipSpace()
        let start = pos
        while let c = current, Self.isLower(c) || Self.isDigit(c) || c == 0x5f { pos += 1 }
        return (String(decoding: bytes[start..<pos], as: UTF8.self), start)
    }

    mutating func type(allowVoid: Bool) throws(SignatureError) -> ValueType {
        let (w, start) = word()
        guard let t = ValueType(rawValue: w), allowVoid || t != .void else {
            let expected = allowVoid ? "void, bool, i32, i64, u64, f64 or string" : "bool, i32, i64, u64, f64 or string"
            let found = w.isEmpty ? describeCurrent : "'\(w)'"
            throw fail("expected a type (\(expected)), found \(found)", at: start)
        }
        return t
    }

    mutating func parse(text: String) throws(SignatureError) -> Signature {
        let name = try identifier("a command name", allowDash: true)
        try expect(0x28, "'(' after the command name")
        var params: [Parameter] = []
        skipSpace()
        if current == 0x29 {
            pos += 1
        } else {
            while true {
                skipSpace()
                let nameStart = pos
                let pname = try identifier("a parameter name", allowDash: false)
                if let rest = params.last, rest.isRest {
                    throw fail("parameter '\(pname)' follows rest parameter '\(rest.name)', which must be the last", at: nameStart)
                }
                if params.contains(where: { $0.name == pname }) {
                    throw fail("parameter '\(pname)' appears twice", at: nameStart)
                }
                try expect(0x3a, "':' after parameter '\(pname)'")
                let (w, wstart) = word()
                var secret = false
                if w == "secret" {
                    secret = true
                } else {
                    pos = wstart
                }
                skipSpace()
                let typeStart = pos
                let t = try type(allowVoid: false)
                if secret && t != .string {
                    throw fail("only string parameters can be secret", at: typeStart)
                }
                let isRest = try restMarker(type: t, secret: secret ? wstart : nil, parameter: pname)
                skipSpace()
                var defaultValue: Value?
                if current == 0x3d {
                    if isRest { throw fail("rest parameter '\(pname)' cannot have a default value (it takes zero or more)") }
                    pos += 1
                    defaultValue = try literal(for: t, parameter: pname)
                } else if params.last?.isOptional == true && !isRest {
                    throw fail("parameter '\(pname)' needs a default value because an earlier parameter has one", at: nameStart)
                }
                params.append(Parameter(name: pname, type: t, isSecret: secret, defaultValue: defaultValue, isRest: isRest))
                skipSpace()
                if current == 0x2c { pos += 1; continue }
                if current == 0x29 { pos += 1; break }
                throw fail("expected ',' or ')' after parameter '\(pname)', found \(describeCurrent)")
            }
        }
        skipSpace()
        var result = ValueType.void
        if current == 0x2d {
            pos += 1
            guard current == 0x3e else { throw fail("expected '->' before the result type") }
            pos += 1
            result = try type(allowVoid: true)
        }
        skipSpace()
        if current != nil { throw fail("unexpected \(describeCurrent) after the signature") }
        return Signature(name: name, parameters: params, result: result, text: text)
    }

    /// Reads an optional `...` after a parameter's type. Only plain strings
    /// can be rest parameters: the C side receives them as one array of
    /// `const char *`, and a secret list would have no single value to mask.
    /// `secret` is the column of the `secret` keyword, if there was one.
    mutating func restMarker(type: ValueType, secret: Int?, parameter: String) throws(SignatureError) -> Bool {
        skipSpace()
        guard current == 0x2e else { return false }
        let start = pos
        guard pos + 2 < bytes.count, bytes[pos + 1] == 0x2e, bytes[pos + 2] == 0x2e else {
            throw fail("expected '...' after the type of '\(parameter)'", at: start)
        }
        if type != .string {
            throw fail("only string parameters can be rest parameters ('\(parameter): \(type.rawValue)...')", at: start)
        }
        if let secret {
            throw fail("rest parameter '\(parameter)' cannot be secret", at: secret)
        }
        pos += 3
        return true
    }

    mutating func literal(for type: ValueType, parameter: String) throws(SignatureError) -> Value {
        skipSpace()
        let start = pos
        if type == .string {
            guard current == 0x22 else { throw fail("expected a quoted string default for '\(parameter)', found \(describeCurrent)") }
            pos += 1
            var out: [UInt8] = []
            while true {
                guard let c = current else { throw fail("unterminated string default for '\(parameter)'", at: start) }
                pos += 1
                if c == 0x22 { break }
                if c == 0x5c {
                    guard let e = current else { throw fail("unterminated string default for '\(parameter)'", at: start) }
                    pos += 1
                    switch e {
                    case 0x22, 0x5c: out.append(e)
                    case 0x6e: out.append(0x0a)
                    case 0x74: out.append(0x09)
                    default: throw fail("unknown escape '\\\(Character(Unicode.Scalar(e)))' in default for '\(parameter)'", at: pos - 2)
                    }
                } else {
                    out.append(c)
                }
            }
            guard let s = String(validating: out, as: UTF8.self) else {
                throw fail("default for '\(parameter)' is not valid UTF-8", at: start)
            }
            return .string(s)
        }
        while let c = current, c != 0x2c && c != 0x29 && c != 0x20 && c != 0x09 { pos += 1 }
        let token = String(decoding: bytes[start..<pos], as: UTF8.self)
        if token.isEmpty { throw fail("expected a default value for '\(parameter)', found \(describeCurrent)") }
        switch ValueConversion.convert(token, to: type) {
        case .success(let v): return v
        case .failure(let why): throw fail("default for '\(parameter)': \(why)", at: start)
        }
    }
}

/// Text → typed value, shared by signature defaults and shell arguments.
public enum ValueConversion {
    public static func convert(_ text: String, to type: ValueType) -> Result<Value, ConversionError> {
        switch type {
        case .void:
            return .failure(ConversionError("void takes no value"))
        case .string:
            return .success(.string(text))
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "on", "1": return .success(.bool(true))
            case "false", "no", "off", "0": return .success(.bool(false))
            default: return .failure(ConversionError("'\(text)' is not a bool (true/false, yes/no, on/off, 1/0)"))
            }
        case .i32:
            guard let v = Int32(text) else { return .failure(integerError(text, "i32", Int32.min, Int32.max)) }
            return .success(.i32(v))
        case .i64:
            guard let v = Int64(text) else { return .failure(integerError(text, "i64", Int64.min, Int64.max)) }
            return .success(.i64(v))
        case .u64:
            let v: UInt64?
            if text.hasPrefix("0x") || text.hasPrefix("0X") {
                v = UInt64(text.dropFirst(2), radix: 16)
            } else {
                v = UInt64(text)
            }
            guard let v else { return .failure(integerError(text, "u64", UInt64.min, UInt64.max)) }
            return .success(.u64(v))
        case .f64:
            // Only finite decimal reals: "nan", "inf" and hex floats are refused.
            let allowed = text.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || c == 0x2e || c == 0x2d || c == 0x2b || c == 0x65 || c == 0x45
            }
            guard allowed, let v = Double(text), v.isFinite else {
                return .failure(ConversionError("'\(text)' is not a finite decimal number (f64)"))
            }
            return .success(.f64(v))
        }
    }

    private static func integerError<T: FixedWidthInteger>(_ text: String, _ name: String, _ lo: T, _ hi: T) -> ConversionError {
        let looksNumeric = !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x2b }
        if looksNumeric {
            return ConversionError("'\(text)' is out of range for \(name) (\(lo)...\(hi))")
        }
        return ConversionError("'\(text)' is not an integer (\(name))")
    }
}

public struct ConversionError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
