/// A JSON value with a writer. The host and plugins avoid Foundation to keep
/// start-up fast; objects keep their key order so output is stable.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSON])
    /// Keys keep their order, so output is stable.
    case object([(String, JSON)])

    /// Structural equality; objects compare in order, integers by value
    /// whether stored as int or uint.
    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.int(x), .int(y)): x == y
        case let (.uint(x), .uint(y)): x == y
        case let (.int(x), .uint(y)), let (.uint(y), .int(x)): x >= 0 && UInt64(x) == y
        case let (.double(x), .double(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The UTF-8 text, written straight into bytes (exports stream these).
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out, pretty: pretty)
        return out
    }

    /// Appends the UTF-8 text to `out`.
    public func write(into out: inout [UInt8], pretty: Bool = false, indent: Int = 0) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let i): JSON.appendInteger(i, into: &out)
        case .uint(let u): JSON.appendInteger(u, into: &out)
        case .double(let d): JSON.appendDouble(d, into: &out)
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent + 1) }
                item.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            if fields.isEmpty { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent + 1) }
                JSON.quote(key, into: &out)
                out += (pretty ? ": " : ":").utf8
                value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Decimal digits of an integer, written in place (String(i) would
    /// allocate for every number of an export).
    static func appendInteger<T: FixedWidthInteger>(_ value: T, into out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        // 20 digits hold UInt64.max and Int64.min's magnitude.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = value.magnitude
            var n = 20
            while v != 0 {
                let (q, r) = v.quotientAndRemainder(dividingBy: 10)
                n -= 1
                digits[n] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: r)
                v = q
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n..<20]))
        }
    }

    /// Swift's shortest round-tripping form ("20.0", "1.5e-07"); null when not finite.
    static func appendDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out += "null".utf8; return }
        // Whole numbers of up to 15 digits print as "<digits>.0", as String(d) does, without formatting.
        if d == d.rounded(.towardZero), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            appendInteger(Int64(d), into: &out)
            out += ".0".utf8
            return
        }
        out += String(d).utf8
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(UInt8(ascii: "\n"))
        out += repeatElement(UInt8(ascii: " "), count: 2 * indent)
    }

    public static func quote(_ s: String) -> String {
        var out: [UInt8] = []
        quote(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes `s` as a JSON string: runs of bytes that need no escape are
    /// copied whole (UTF-8 passes through; only ", \ and controls change).
    /// Exports write every body through here: a plain loop over the bytes
    /// and appends of raw buffers, no per-escape String or array.
    public static func quote(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { quote(utf8: $0, into: &out) }
    }

    /// `quote` of text already known to be valid UTF-8 (a String's bytes):
    /// writers that hold text as bytes need not make a String of it.
    public static func quote(utf8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        // Short text with nothing to escape (names, ids, summaries: most
        // of a listing) is appended whole, without making room first.
        if bytes.count <= 64, !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return
        }
        var used = out.count
        quote(utf8: bytes, into: &out, at: &used)
        out.removeLast(out.count - used)
    }

    /// Writes the quoted text at `used` in `out`, whose bytes from `used` on
    /// are room to write in (grown, zero-filled, when short), and moves
    /// `used` past it. Eight bytes are checked and copied at a time; only a
    /// block holding a byte to escape is walked byte by byte, and every
    /// byte is stored through a pointer (an append per escape was most of
    /// the cost of a JSON body, whose every quote is escaped).
    static func quote(utf8 src: UnsafeBufferPointer<UInt8>, into out: inout [UInt8], at used: inout Int) {
        let n = src.count
        // Room for the text, its quotes and a few escapes; more when needed.
        reserve(&out, used, n + n / 8 + 16)
        var i = 0
        var first = true
        while true {
            var done = false
            out.withUnsafeMutableBufferPointer { dst in
                guard let d = dst.baseAddress else { return }
                var o = used
                // Past `limit` an escape (six bytes) and the closing quote might not fit.
                let limit = dst.count - 7
                if first { d[o] = UInt8(ascii: "\""); o &+= 1 }
                if let s = src.baseAddress {
                    while i < n && o <= limit {
                        if n &- i >= 8 && o &+ 8 <= limit {
                            let word = UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self)
                            if !needsEscape(UInt64(littleEndian: word)) {
                                UnsafeMutableRawPointer(d + o).storeBytes(of: word, as: UInt64.self)
                                i &+= 8
                                o &+= 8
                                continue
                            }
                        }
                        let b = s[i]
                        i &+= 1
                        if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") {
                            d[o] = b
                            o &+= 1
                            continue
                        }
                        d[o] = UInt8(ascii: "\\")
                        switch b {
                        case UInt8(ascii: "\""): d[o &+ 1] = UInt8(ascii: "\""); o &+= 2
                        case UInt8(ascii: "\\"): d[o &+ 1] = UInt8(ascii: "\\"); o &+= 2
                        case UInt8(ascii: "\n"): d[o &+ 1] = UInt8(ascii: "n"); o &+= 2
                        case UInt8(ascii: "\r"): d[o &+ 1] = UInt8(ascii: "r"); o &+= 2
                        case UInt8(ascii: "\t"): d[o &+ 1] = UInt8(ascii: "t"); o &+= 2
                        default:
                            d[o &+ 1] = UInt8(ascii: "u")
                            d[o &+ 2] = UInt8(ascii: "0")
                            d[o &+ 3] = UInt8(ascii: "0")
                            d[o &+ 4] = hexDigit(b >> 4)
                            d[o &+ 5] = hexDigit(b & 0xF)
                            o &+= 6
                        }
                    }
                }
                if i >= n {
                    d[o] = UInt8(ascii: "\"")
                    o &+= 1
                    done = true
                }
                used = o
            }
            if done { return }
            first = false
            reserve(&out, used, n - i + 16)
        }
    }

    /// Makes `out` hold at least `room` bytes after `used` (zeros): within
    /// its capacity just those, past it at least twice its size (growth
    /// stays geometric, and a small append to a big array fills little).
    @inline(__always)
    static func reserve(_ out: inout [UInt8], _ used: Int, _ room: Int) {
        let needed = used + room
        guard needed > out.count else { return }
        let target = needed <= out.capacity ? needed : max(needed, 2 * out.count)
        out.append(contentsOf: repeatElement(0, count: target - out.count))
    }

    /// Whether any of the eight bytes is a control (< 0x20), '"' or '\'
    /// (the classic "has a byte less than n" and "has a zero byte" tests;
    /// exact for "any", which is all that is asked).
    @inline(__always)
    static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w & high
        let q = w ^ (ones &* 0x22), quote = (q &- ones) & ~q & high
        let s = w ^ (ones &* 0x5C), backslash = (s &- ones) & ~s & high
        return control | quote | backslash != 0
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x61 + v - 10 }
}

/// Writes JSON text straight into bytes, value by value, with no JSON tree
/// in between: what big exports (HAR) stream through. The same output as
/// `JSON.write(into:)` of the tree the calls describe (compact form); the
/// writer places the commas, the caller the structure: every `key` is
/// followed by one value, every `begin` by its `end`.
public struct JSONWriter {
    /// The text is `buffer[..<used]`; the rest is room to write in.
    private var buffer: [UInt8]
    private var used = 0
    /// A value was written in the current container: the next one needs a comma.
    private var afterValue = false

    /// `capacity`: bytes reserved up front (an export knows roughly what an entry takes).
    public init(capacity: Int = 0) {
        buffer = [UInt8](repeating: 0, count: max(capacity, 64))
    }

    /// The text written so far.
    public var bytes: [UInt8] { Array(buffer[..<used]) }

    /// The text written, handed over without a copy; the writer is empty after.
    public mutating func finish() -> [UInt8] {
        buffer.removeLast(buffer.count - used)
        defer { buffer = []; used = 0; afterValue = false }
        return buffer
    }

    @inline(__always)
    private mutating func raw(_ text: StaticString) {
        JSON.reserve(&buffer, used, text.utf8CodeUnitCount)
        let n = text.utf8CodeUnitCount
        buffer.withUnsafeMutableBufferPointer { d in
            UnsafeMutableRawPointer(d.baseAddress! + used).copyMemory(from: text.utf8Start, byteCount: n)
        }
        used += n
    }

    @inline(__always)
    private mutating func byte(_ b: UInt8) {
        JSON.reserve(&buffer, used, 1)
        buffer[used] = b
        used += 1
    }

    @inline(__always)
    private mutating func separate() {
        if afterValue { byte(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() {
        separate()
        byte(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func endObject() {
        byte(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func beginArray() {
        separate()
        byte(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func endArray() {
        byte(UInt8(ascii: "]"))
        afterValue = true
    }

    public mutating func key(_ key: String) {
        separate()
        quoted(key)
        byte(UInt8(ascii: ":"))
        afterValue = false
    }

    private mutating func quoted(_ s: String) {
        var s = s
        s.withUTF8 { JSON.quote(utf8: $0, into: &buffer, at: &used) }
    }

    public mutating func string(_ s: String) {
        separate()
        quoted(s)
        afterValue = true
    }

    /// A string from bytes that are valid UTF-8 (a String's, or checked).
    public mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        separate()
        JSON.quote(utf8: utf8, into: &buffer, at: &used)
        afterValue = true
    }

    private mutating func integer<T: FixedWidthInteger>(_ value: T) {
        // 20 digits and a sign hold any 64-bit integer.
        JSON.reserve(&buffer, used, 21)
        if value == 0 {
            buffer[used] = UInt8(ascii: "0")
            used += 1
            return
        }
        var digits = 0
        var v = value.magnitude
        while v != 0 { digits += 1; v /= 10 }
        let negative = value < 0
        buffer.withUnsafeMutableBufferPointer { d in
            let start = used + (negative ? 1 : 0)
            if negative { d[used] = UInt8(ascii: "-") }
            var v = value.magnitude
            var at = start + digits
            while v != 0 {
                let (q, r) = v.quotientAndRemainder(dividingBy: 10)
                at -= 1
                d[at] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: r)
                v = q
            }
            used = start + digits
        }
    }

    public mutating func int(_ i: Int64) {
        separate()
        integer(i)
        afterValue = true
    }

    public mutating func uint(_ u: UInt64) {
        separate()
        integer(u)
        afterValue = true
    }

    /// As `JSON.double` is written (JSON.appendDouble): null when not finite.
    public mutating func double(_ d: Double) {
        separate()
        if !d.isFinite {
            raw("null")
        } else if d == d.rounded(.towardZero), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            integer(Int64(d))
            raw(".0")
        } else {
            var text = String(d)
            text.withUTF8 { t in
                JSON.reserve(&buffer, used, t.count)
                buffer.withUnsafeMutableBufferPointer { b in
                    UnsafeMutableRawPointer(b.baseAddress! + used).copyMemory(from: t.baseAddress!, byteCount: t.count)
                }
                used += t.count
            }
        }
        afterValue = true
    }

    public mutating func bool(_ b: Bool) {
        separate()
        if b { raw("true") } else { raw("false") }
        afterValue = true
    }

    public mutating func null() {
        separate()
        raw("null")
        afterValue = true
    }

    /// A whole value from a tree.
    public mutating func value(_ json: JSON) {
        separate()
        var text: [UInt8] = []
        json.write(into: &text)
        text.withUnsafeBufferPointer { t in
            JSON.reserve(&buffer, used, t.count)
            buffer.withUnsafeMutableBufferPointer { b in
                if t.count > 0 { UnsafeMutableRawPointer(b.baseAddress! + used).copyMemory(from: t.baseAddress!, byteCount: t.count) }
            }
            used += t.count
        }
        afterValue = true
    }

    // key-value pairs, the common case of an object's body
    public mutating func field(_ name: String, _ s: String) { key(name); string(s) }
    public mutating func field(_ name: String, _ i: Int64) { key(name); int(i) }
    public mutating func field(_ name: String, _ d: Double) { key(name); double(d) }
    public mutating func field(_ name: String, _ b: Bool) { key(name); bool(b) }
    public mutating func field(_ name: String, _ json: JSON) { key(name); value(json) }
}
