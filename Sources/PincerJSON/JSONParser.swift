// A strict RFC 8259 JSON parser, without Foundation.
//
// - Exactly one value, optionally surrounded by whitespace (space, tab, LF, CR).
//   Nothing else is accepted: no comments, trailing commas, single quotes,
//   NaN/Infinity, leading zeros, "+1", ".5", "1." or trailing garbage.
// - A single UTF-8 byte order mark at the very start of the input is skipped
//   (RFC 8259 section 8.1 allows parsers to ignore it); anywhere else it is an error.
// - Numbers: integers (no fraction, no exponent) that fit Int64 become `.int`;
//   non-negative integers that fit UInt64 but not Int64 become `.uint`; every
//   other number becomes `.double`. A number whose magnitude overflows Double
//   (e.g. 1e400) is an error; one that underflows becomes (signed) zero.
// - Strings: all escapes including \uXXXX with surrogate pairs. Lone surrogates,
//   raw control characters (< 0x20) and invalid UTF-8 are errors.
// - Objects keep every member in input order, duplicates included.
// - Arrays and objects may nest at most `JSON.maximumNestingDepth` (512) deep.
//   The parser is iterative, so deep input never exhausts the call stack.

/// A syntax error with the position of the offending input.
///
/// `line` is 1-based; LF, CR and CRLF each end a line. `column` is 1-based and
/// counts UTF-8 bytes (not characters) from the start of the line, so a
/// column after "é" is 3 higher than the column before it, not 2. At the end
/// of the input the position is one past the last byte.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line number.
    public let line: Int
    /// 1-based column, in UTF-8 bytes from the start of the line.
    public let column: Int
    /// What was expected and what was found, e.g.
    /// "expected ',' or '}' after an object member, found 'x'".
    public let message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSON {
    /// The deepest nesting of arrays and objects `parse` accepts.
    public static let maximumNestingDepth = 512

    /// Parses one JSON text (RFC 8259): whitespace around one value, nothing after it.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSON {
        var text = text
        // Native strings are contiguous UTF-8; this only copies for bridged ones.
        let result = text.withUTF8 { buffer in
            var parser = JSONParser(buffer)
            return Result { () throws(JSONSyntaxError) -> JSON in try parser.parseDocument() }
        }
        return try result.get()
    }

    /// Checks that `bytes` are one JSON text exactly as `parse(bytes:)` would
    /// accept them (same grammar, UTF-8 checks, depth limit and errors) without
    /// building the value: nothing is allocated per string or container, so a
    /// file of hundreds of megabytes can be checked before it is read piece by piece.
    public static func validate(bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) {
        try validate(bytes: bytes, enclosingDepth: 0)
    }

    /// `validate` for a value that sits inside `enclosingDepth` arrays and
    /// objects of a larger text (an element of a big array, checked on its
    /// own): the nesting limit counts those containers too, so the pieces
    /// of a text pass exactly when the whole would. Line and column count
    /// from the start of `bytes`.
    public static func validate(bytes: UnsafeBufferPointer<UInt8>, enclosingDepth: Int) throws(JSONSyntaxError) {
        var parser = JSONParser(bytes)
        parser.building = false
        parser.enclosingDepth = max(0, enclosingDepth)
        _ = try parser.parseDocument()
    }

    /// The index just past the quote that closes the string whose opening
    /// quote is at `quote` (the first quote not escaped by a backslash), or
    /// nil when the bytes end first. Nothing else is checked: for text that
    /// `validate` accepted, or for a scan that checks it later (a HAR file's
    /// entries are found this way before they are read). Eight bytes at a
    /// time: bodies held in strings have an escaped quote every few bytes,
    /// and a memchr per quote was the scan's cost.
    public static func endOfString(in bytes: UnsafeBufferPointer<UInt8>, openingQuoteAt quote: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* 0x22, backslashes = ones &* 0x5C
        var i = quote + 1
        while true {
            while bytes.count - i >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let q = word ^ quotes, b = word ^ backslashes
                let found = (((q &- ones) & ~q) | ((b &- ones) & ~b)) & highs
                if found != 0 { i += found.trailingZeroBitCount >> 3; break }
                i += 8
            }
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case 0x22: return i + 1
            case 0x5C: i += 2  // the escaped byte, whatever it is
            default: i += 1
            }
            if i > bytes.count { return nil }
        }
    }

    /// `validate`, telling `visitor` what it reads on the way (see
    /// `JSONScanVisitor`): one pass that both checks a text and lets the
    /// caller act on its structure, without building the value (the
    /// redactor splices bodies this way).
    public static func scan(bytes: UnsafeBufferPointer<UInt8>, visitor: any JSONScanVisitor) throws(JSONSyntaxError) {
        var parser = JSONParser(bytes)
        parser.building = false
        parser.visitor = visitor
        _ = try parser.parseDocument()
    }

    /// Parses one JSON text (RFC 8259) given as UTF-8 bytes. Invalid UTF-8 is an error.
    public static func parse(bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSON {
        let parse = { (buffer: UnsafeBufferPointer<UInt8>) -> Result<JSON, JSONSyntaxError> in
            var parser = JSONParser(buffer)
            return Result { () throws(JSONSyntaxError) -> JSON in try parser.parseDocument() }
        }
        let result = bytes.withContiguousStorageIfAvailable(parse) ?? Array(bytes).withUnsafeBufferPointer(parse)
        return try result.get()
    }
}

// MARK: - Accessors

extension JSON {
    /// The members when this is an object, in order, duplicates included.
    public var objectValue: [(String, JSON)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The value of the first member named `key`; nil when this is not an
    /// object or has no such member.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        // By index: iterating copied (and retained) every member passed over.
        for i in members.indices where members[i].0 == key { return members[i].1 }
        return nil
    }

    /// The elements when this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Any number as a Double (large integers may be rounded).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The number as an Int64 when it is one exactly: `.int`, `.uint` up to
    /// Int64.max, and doubles that are whole numbers in range.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .uint(let u): return Int64(exactly: u)
        case .double(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    /// "null", "boolean", "number", "string", "array" or "object", for messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .uint, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

// MARK: - Parser

private enum ASCII {
    static let tab: UInt8 = 0x09, lf: UInt8 = 0x0A, cr: UInt8 = 0x0D, space: UInt8 = 0x20
    static let quote: UInt8 = 0x22, plus: UInt8 = 0x2B, comma: UInt8 = 0x2C, minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E, slash: UInt8 = 0x2F, zero: UInt8 = 0x30, nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A, backslash: UInt8 = 0x5C
    static let openBracket: UInt8 = 0x5B, closeBracket: UInt8 = 0x5D
    static let openBrace: UInt8 = 0x7B, closeBrace: UInt8 = 0x7D
    static let upperE: UInt8 = 0x45, lowerE: UInt8 = 0x65
}

/// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`: the escapes of two bytes.
@inline(__always)
private func isOneByteEscape(_ byte: UInt8) -> Bool {
    switch byte {
    case ASCII.quote, ASCII.backslash, ASCII.slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        return true
    default:
        return false
    }
}

/// What `JSON.scan` reports, in input order, while it checks a text: each
/// container's start and end, each member's key (with where its value
/// starts) and end, and each string value. Byte offsets are into the
/// scanned bytes; a string's range is its content between the quotes
/// (escapes not decoded). `depth` counts the arrays and objects open around
/// a container's contents, itself included (1 at the top). Called on the
/// thread that called `scan`, during the call, only for what has been read
/// so far: a text that turns out invalid later has still been reported up
/// to there, and `scan` throws.
public protocol JSONScanVisitor: AnyObject {
    func objectStart(depth: Int)
    func objectEnd()
    func arrayStart(depth: Int)
    func arrayEnd()
    /// A member's key; its value starts at `valueStart`.
    func key(_ content: Range<Int>, escaped: Bool, valueStart: Int)
    /// The innermost open object's current member's value ended just before `end`.
    func memberEnd(_ end: Int)
    /// A string that is a value (not a key).
    func string(_ content: Range<Int>, escaped: Bool)
}

/// Where a value is expected; picks the wording of "expected a value" errors.
private enum ValueContext {
    case topLevel, arrayStart, afterArrayComma, afterColon
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// One entry per open container: true for an object, false for an array.
    var openIsObject: [Bool] = []
    /// The elements and members read so far of every open array and object,
    /// innermost last, and where each open container's own begin: a closed
    /// container takes its part as one array of exactly its size (growing an
    /// array per container, member by member, was a third of parsing).
    var elements: [JSON] = []
    var members: [(String, JSON)] = []
    var openStarts: [Int] = []
    var pendingKeys: [String] = []
    /// False for `validate`: every check runs, but strings are not decoded
    /// into Strings and containers stay empty.
    var building = true
    /// Containers around the text being read (`validate(bytes:enclosingDepth:)`).
    var enclosingDepth = 0
    /// `JSON.scan`'s listener (nil for parse and validate).
    var visitor: (any JSONScanVisitor)?
    /// Whether the string `parseString` read last had an escape.
    var lastStringEscaped = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: Document

    mutating func parseDocument() throws(JSONSyntaxError) -> JSON {
        // A UTF-8 byte order mark may precede the text (RFC 8259 section 8.1).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        var context = ValueContext.topLevel
        parsing: while true {
            var value: JSON
            guard index < bytes.count else { throw expectedValue(context) }
            switch bytes[index] {
            case ASCII.openBracket:
                try checkDepth()
                index += 1
                visitor?.arrayStart(depth: openIsObject.count + 1)
                skipWhitespace()
                if index < bytes.count, bytes[index] == ASCII.closeBracket {
                    index += 1
                    visitor?.arrayEnd()
                    value = .array([])
                } else {
                    openIsObject.append(false)
                    if building { openStarts.append(elements.count) }
                    context = .arrayStart
                    continue parsing
                }
            case ASCII.openBrace:
                try checkDepth()
                index += 1
                visitor?.objectStart(depth: openIsObject.count + 1)
                skipWhitespace()
                if index < bytes.count, bytes[index] == ASCII.closeBrace {
                    index += 1
                    visitor?.objectEnd()
                    value = .object([])
                } else {
                    let key = try parseKey(after: "expected a string key or '}' in an object")
                    openIsObject.append(true)
                    // Members and their keys are kept only when building (not for validate or scan).
                    if building {
                        openStarts.append(members.count)
                        pendingKeys.append(key)
                    }
                    context = .afterColon
                    continue parsing
                }
            default:
                value = try parseScalar(context)
            }

            // A value is complete: add it to the innermost open container and
            // close as many containers as end here.
            while let isObject = openIsObject.last {
                if isObject { visitor?.memberEnd(index) }
                skipWhitespace()
                let next: UInt8? = index < bytes.count ? bytes[index] : nil
                if isObject {
                    if building { members.append((pendingKeys.removeLast(), value)) }
                    if next == ASCII.comma {
                        index += 1
                        skipWhitespace()
                        let key = try parseKey(after: "expected a string key after ',' in an object")
                        if building { pendingKeys.append(key) }
                        context = .afterColon
                        continue parsing
                    } else if next == ASCII.closeBrace {
                        index += 1
                        visitor?.objectEnd()
                        openIsObject.removeLast()
                        if building {
                            let start = openStarts.removeLast()
                            value = .object(Array(members[start...]))
                            members.removeSubrange(start...)
                        }
                    } else {
                        throw unexpected("expected ',' or '}' after an object member")
                    }
                } else {
                    if building { elements.append(value) }
                    if next == ASCII.comma {
                        index += 1
                        skipWhitespace()
                        context = .afterArrayComma
                        continue parsing
                    } else if next == ASCII.closeBracket {
                        index += 1
                        visitor?.arrayEnd()
                        openIsObject.removeLast()
                        if building {
                            let start = openStarts.removeLast()
                            value = .array(Array(elements[start...]))
                            elements.removeSubrange(start...)
                        }
                    } else {
                        throw unexpected("expected ',' or ']' after an array element")
                    }
                }
            }

            skipWhitespace()
            guard index == bytes.count else {
                throw unexpected("expected end of input after the JSON value")
            }
            return value
        }
    }

    mutating func checkDepth() throws(JSONSyntaxError) {
        if openIsObject.count + enclosingDepth >= JSON.maximumNestingDepth {
            throw error("nesting is deeper than the maximum of \(JSON.maximumNestingDepth) arrays and objects, found \(describe(at: index))")
        }
    }

    /// Parses `"key"`, whitespace and the ':' that follows, leaving the index
    /// at the start of the member's value.
    mutating func parseKey(after expectation: String) throws(JSONSyntaxError) -> String {
        guard index < bytes.count, bytes[index] == ASCII.quote else {
            throw unexpected(expectation)
        }
        let start = index
        let key = try parseString()
        let end = index
        skipWhitespace()
        guard index < bytes.count, bytes[index] == ASCII.colon else {
            throw unexpected("expected ':' after an object key")
        }
        index += 1
        skipWhitespace()
        visitor?.key((start + 1)..<(end - 1), escaped: lastStringEscaped, valueStart: index)
        return key
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case ASCII.space, ASCII.lf, ASCII.cr, ASCII.tab: index += 1
            default: return
            }
        }
    }

    // MARK: Scalars

    mutating func parseScalar(_ context: ValueContext) throws(JSONSyntaxError) -> JSON {
        switch bytes[index] {
        case ASCII.quote:
            guard let visitor else { return .string(try parseString()) }
            let start = index
            let text = try parseString()
            visitor.string((start + 1)..<(index - 1), escaped: lastStringEscaped)
            return .string(text)
        case ASCII.minus, ASCII.zero...ASCII.nine: return try parseNumber()
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        default: throw expectedValue(context)
        }
    }

    mutating func parseLiteral(_ word: StaticString) throws(JSONSyntaxError) {
        guard hasPrefix(word) else { throw unexpected("expected '\(word)'") }
        index += word.utf8CodeUnitCount
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSON {
        let start = index
        let negative = bytes[index] == ASCII.minus
        if negative { index += 1 }

        // Integer part: '0' or a non-zero digit followed by digits.
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw unexpected("expected a digit after '-' in a number", valueHints: true)
        }
        let integerStart = index
        if bytes[index] == ASCII.zero {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw error("numbers cannot have leading zeros, found \(describe(at: index)) after '0'", at: index - 1)
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let integerEnd = index

        var fractionStart = index, fractionEnd = index
        if index < bytes.count, bytes[index] == ASCII.dot {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw unexpected("expected a digit after '.' in a number")
            }
            fractionStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            fractionEnd = index
        }
        let hasFraction = fractionEnd > fractionStart

        var exponent = 0
        var hasExponent = false
        if index < bytes.count, bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE {
            hasExponent = true
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
                exponentNegative = bytes[index] == ASCII.minus
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw unexpected("expected a digit in the exponent of a number")
            }
            while index < bytes.count, isDigit(bytes[index]) {
                // Clamp: anything this large overflows or underflows anyway.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(bytes[index] - ASCII.zero) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        if !hasFraction && !hasExponent {
            // Integers: exact when they fit Int64 or UInt64.
            var magnitude: UInt64 = 0
            var overflow = false
            for k in integerStart..<integerEnd {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[k] - ASCII.zero))
                if o1 || o2 { overflow = true; break }
                magnitude = sum
            }
            if !overflow {
                if !negative {
                    if let i = Int64(exactly: magnitude) { return .int(i) }
                    return .uint(magnitude)
                }
                if magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
                if magnitude == UInt64(Int64.max) + 1 { return .int(.min) }
            }
        }

        // Fast path (Clinger): up to 2^53 in the significand and a power of
        // ten up to 10^22 are both exact, so one multiply or divide rounds correctly.
        var significand: UInt64 = 0
        var digits = 0
        var exact = true
        for k in integerStart..<fractionEnd where k < integerEnd || k >= fractionStart {
            let digit = UInt64(bytes[k] - ASCII.zero)
            if significand == 0 && digit == 0 { continue }
            digits += 1
            if digits > 16 { exact = false; break }
            significand = significand * 10 + digit
        }
        let power = exponent - (fractionEnd - fractionStart)
        var value: Double
        if exact && significand <= (1 << 53) && power >= -22 && power <= 22 {
            value = Double(significand)
            if power >= 0 { value *= powersOfTen[power] } else { value /= powersOfTen[-power] }
            if negative { value = -value }
        } else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let parsed = Double(text) else {
                throw error("invalid number '\(text)'", at: start)
            }
            value = parsed
        }
        guard value.isFinite else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            throw error("number \(text) is too large to represent as a Double", at: start)
        }
        return .double(value)
    }

    // MARK: Strings

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let quoteStart = index
        index += 1
        let segmentStart = index
        var escaped = false
        while true {
            skipPlainASCII()
            guard index < bytes.count else {
                let opening = error("", at: quoteStart)
                throw error("unterminated string (opened at line \(opening.line), column \(opening.column)), found end of input", at: index)
            }
            let byte = bytes[index]
            if byte == ASCII.quote {
                let content = segmentStart..<index
                index += 1
                lastStringEscaped = escaped
                if !building { return "" }
                if !escaped { return String(decoding: UnsafeBufferPointer(rebasing: bytes[content]), as: UTF8.self) }
                return decodeEscaped(content)
            } else if byte == ASCII.backslash {
                // Checked here, decoded once the whole string is known good.
                escaped = true
                if index + 1 < bytes.count, isOneByteEscape(bytes[index + 1]) {
                    index += 2  // the common case (`\"` in a body held as a string), without a call
                } else {
                    try parseEscape()
                }
            } else if byte < 0x20 {
                throw error("control characters must be escaped in a string, found \(describe(at: index))", at: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// The text of a string's content (between its quotes) that
    /// `parseString` found valid and that has escapes: written straight into
    /// the String's storage, which the decoded text never outgrows. Bodies
    /// inside HAR strings are JSON with an escape every few bytes; decoding
    /// while checking (through a scratch buffer) cost twice as much.
    func decodeEscaped(_ content: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: content.count) { out in
            let source = bytes.baseAddress!
            let target = out.baseAddress!
            var k = content.lowerBound, n = 0
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let backslashes = ones &* UInt64(ASCII.backslash)
            while k < content.upperBound {
                // Eight bytes at a time up to the next backslash (as in
                // `skipPlainASCII`). The decoded text is never longer than
                // what it came from, so n + 8 stays inside the storage.
                while content.upperBound - k >= 8 {
                    let word = UnsafeRawPointer(source + k).loadUnaligned(as: UInt64.self)
                    UnsafeMutableRawPointer(target + n).storeBytes(of: word, as: UInt64.self)
                    let b = UInt64(littleEndian: word) ^ backslashes
                    let found = (b &- ones) & ~b & highs
                    let plain = found == 0 ? 8 : found.trailingZeroBitCount >> 3
                    k += plain
                    n += plain
                    if plain < 8 { break }
                }
                guard k < content.upperBound else { break }
                let byte = source[k]
                if byte != ASCII.backslash {
                    target[n] = byte
                    n += 1
                    k += 1
                    continue
                }
                let escape = source[k + 1]
                k += 2
                switch escape {
                case UInt8(ascii: "b"): target[n] = 0x08
                case UInt8(ascii: "f"): target[n] = 0x0C
                case UInt8(ascii: "n"): target[n] = ASCII.lf
                case UInt8(ascii: "r"): target[n] = ASCII.cr
                case UInt8(ascii: "t"): target[n] = ASCII.tab
                case UInt8(ascii: "u"):
                    var value = UInt32(hexValue(at: k))
                    k += 4
                    if value >= 0xD800 && value <= 0xDBFF {  // a high surrogate: its low one follows (checked)
                        value = 0x10000 + ((value - 0xD800) << 10) + (UInt32(hexValue(at: k + 2)) - 0xDC00)
                        k += 6
                    }
                    for unit in UTF8.encode(Unicode.Scalar(value)!)! {
                        target[n] = unit
                        n += 1
                    }
                    continue
                default: target[n] = escape  // \" \\ \/
                }
                n += 1
            }
            return n
        }
    }

    /// Four hex digits that `parseHex4` accepted.
    func hexValue(at position: Int) -> UInt16 {
        var value: UInt16 = 0
        for k in position..<(position + 4) {
            let byte = bytes[k]
            let digit = byte <= ASCII.nine ? byte - ASCII.zero : (byte | 0x20) - UInt8(ascii: "a") + 10
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Skips the bytes of a string that need no check (printable ASCII other
    /// than the quote and the backslash) eight at a time: most of a HAR file
    /// is inside strings, and a byte at a time was the parser's hot loop.
    @inline(__always)
    mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* UInt64(ASCII.quote), backslashes = ones &* UInt64(ASCII.backslash), spaces = ones &* 0x20
        while bytes.count - index >= 8 {
            // Byte k of the input is byte k of the value, counted from the least significant.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            // The high bit of a byte of `special` is set where the byte is a
            // quote or backslash (XOR gives zero), below 0x20, or not ASCII.
            // A borrow can flag a byte only above (after) a true one, so the
            // lowest flagged byte is the first that needs a look: go there.
            let q = word ^ quotes, b = word ^ backslashes
            let special = (((q &- ones) & ~q) | ((b &- ones) & ~b) | ((word &- spaces) & ~word) | word) & highs
            if special != 0 {
                index += special.trailingZeroBitCount >> 3
                return
            }
            index += 8
        }
    }

    /// Validates the multi-byte UTF-8 sequence at `index` (RFC 3629: no
    /// overlong forms, no surrogates, nothing above U+10FFFF) and skips it.
    mutating func skipUTF8Sequence() throws(JSONSyntaxError) {
        let length = utf8SequenceLength(at: index)
        guard length > 0 else {
            throw error("invalid UTF-8: \(describeInvalidUTF8(at: index))", at: index)
        }
        index += length
    }

    /// The length of the valid multi-byte UTF-8 sequence at `position`, or 0.
    func utf8SequenceLength(at position: Int) -> Int {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // range of the second byte
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return 0
        }
        guard position + length <= bytes.count else { return 0 }
        let second = bytes[position + 1]
        guard second >= low && second <= high else { return 0 }
        for k in 2..<max(length, 2) where bytes[position + k] & 0xC0 != 0x80 { return 0 }
        return length
    }

    func describeInvalidUTF8(at position: Int) -> String {
        let lead = bytes[position]
        switch lead {
        case 0x80...0xBF:
            return "unexpected continuation byte \(hex(lead))"
        case 0xC0, 0xC1, 0xF5...0xFF:
            return "byte \(hex(lead)) never appears in UTF-8"
        default:
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            for k in 1..<length {
                guard position + k < bytes.count else {
                    return "sequence starting with byte \(hex(lead)) is cut short by the end of input"
                }
                if bytes[position + k] & 0xC0 != 0x80 {
                    return "sequence starting with byte \(hex(lead)) is cut short, found byte \(hex(bytes[position + k]))"
                }
            }
            return "sequence starting with byte \(hex(lead)) is an overlong form, a surrogate or above U+10FFFF"
        }
    }

    /// Checks one escape sequence starting at its backslash and skips it
    /// (`decodeEscaped` decodes it later).
    mutating func parseEscape() throws(JSONSyntaxError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else {
            throw error("unterminated escape sequence in a string, found end of input", at: index)
        }
        let byte = bytes[index]
        index += 1
        switch byte {
        case ASCII.quote, ASCII.backslash, ASCII.slash, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
             UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == ASCII.backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("lone high surrogate \\u\(hex4(unit)) in a string: it must be followed by a \\uDC00-\\uDFFF low surrogate", at: escapeStart)
                }
                let lowStart = index
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("high surrogate \\u\(hex4(unit)) is followed by \\u\(hex4(low)), not by a \\uDC00-\\uDFFF low surrogate", at: lowStart)
                }
            case 0xDC00...0xDFFF:
                throw error("lone low surrogate \\u\(hex4(unit)) in a string: it must follow a \\uD800-\\uDBFF high surrogate", at: escapeStart)
            default:
                break
            }
        default:
            index -= 1
            throw error("invalid escape sequence in a string: found \(describe(at: index)) after '\\'; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: escapeStart)
        }
    }

    /// Parses the four hex digits after `\u`.
    mutating func parseHex4() throws(JSONSyntaxError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw error("expected 4 hex digits after '\\u' in a string, found end of input", at: index)
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw error("expected 4 hex digits after '\\u' in a string, found \(describe(at: index))", at: index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    // MARK: Errors

    func expectedValue(_ context: ValueContext) -> JSONSyntaxError {
        switch context {
        case .topLevel: return unexpected("expected a JSON value", valueHints: true)
        case .arrayStart: return unexpected("expected a JSON value or ']' in an array", valueHints: true)
        case .afterArrayComma: return unexpected("expected a JSON value after ',' in an array", valueHints: true)
        case .afterColon: return unexpected("expected a JSON value after ':' in an object", valueHints: true)
        }
    }

    /// "<expectation>, found <what is at index>", plus a hint for common
    /// non-JSON input; `valueHints` adds the hints about numbers.
    func unexpected(_ expectation: String, valueHints: Bool = false) -> JSONSyntaxError {
        var message = "\(expectation), found \(describe(at: index))"
        if index < bytes.count {
            switch bytes[index] {
            case ASCII.slash, UInt8(ascii: "#"): message += " (JSON has no comments)"
            case UInt8(ascii: "'"): message += " (JSON strings use double quotes)"
            case UInt8(ascii: "N") where valueHints && hasPrefix("NaN"),
                 UInt8(ascii: "I") where valueHints && hasPrefix("Infinity"):
                message += " (NaN and Infinity are not JSON numbers)"
            case ASCII.plus where valueHints: message += " (JSON numbers have no '+' sign)"
            case ASCII.dot where valueHints: message += " (JSON numbers need a digit before '.')"
            default: break
            }
        }
        return error(message, at: index)
    }

    func hasPrefix(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for k in 0..<count where bytes[index + k] != word.utf8Start[k] { return false }
        return true
    }

    /// Describes the input at `position` for "found ..." messages.
    func describe(at position: Int) -> String {
        guard position < bytes.count else { return "end of input" }
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            // Show a whole word: "found 'NaN'", "found 'tru'".
            var end = position + 1
            while end < bytes.count, end - position < 24, isWordByte(bytes[end]) { end += 1 }
            return "'" + String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self) + "'"
        case UInt8(ascii: "'"): return "\"'\""
        case 0x21...0x7E: return "'" + String(UnicodeScalar(byte)) + "'"
        case ASCII.space: return "a space"
        case ASCII.tab: return "a tab (U+0009)"
        case ASCII.lf: return "a line feed (U+000A)"
        case ASCII.cr: return "a carriage return (U+000D)"
        case 0x00..<0x20, 0x7F: return "control character U+\(hex4(UInt16(byte)))"
        default:
            let length = utf8SequenceLength(at: position)
            guard length > 0 else { return "invalid UTF-8 byte \(hex(byte))" }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<position + length]), as: UTF8.self)
            let scalar = text.unicodeScalars.first!
            let digits = String(scalar.value, radix: 16, uppercase: true)
            return "'\(text)' (U+\(String(repeating: "0", count: max(0, 4 - digits.count)) + digits))"
        }
    }

    /// An error at byte offset `position`, converted to a line and column.
    func error(_ message: String, at position: Int) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        var k = 0
        let end = min(position, bytes.count)
        while k < end {
            let byte = bytes[k]
            if byte == ASCII.lf || (byte == ASCII.cr && !(k + 1 < bytes.count && bytes[k + 1] == ASCII.lf)) {
                line += 1
                lineStart = k + 1
            }
            k += 1
        }
        return JSONSyntaxError(line: line, column: position - lineStart + 1, message: message)
    }

    func error(_ message: String) -> JSONSyntaxError { error(message, at: index) }
}

private func isWordByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), ASCII.zero...ASCII.nine, UInt8(ascii: "_"):
        return true
    default:
        return false
    }
}

@inline(__always)
private func isDigit(_ byte: UInt8) -> Bool { byte &- ASCII.zero < 10 }

private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return "0x" + (digits.count < 2 ? "0" : "") + digits
}

private func hex4(_ value: UInt16) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - digits.count) + digits
}

private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]
