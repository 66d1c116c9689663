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
        case .int(let i): out += String(i).utf8
        case .uint(let u): out += String(u).utf8
        case .double(let d): out += (d.isFinite ? String(d) : "null").utf8
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
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            let n = bytes.count
            var start = 0
            var i = 0
            while i < n {
                let b = base[i]
                if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") {
                    i &+= 1
                    continue
                }
                if start < i { out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: i - start)) }
                out.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
                default:
                    out.append(UInt8(ascii: "u"))
                    out.append(UInt8(ascii: "0"))
                    out.append(UInt8(ascii: "0"))
                    out.append(hexDigit(b >> 4))
                    out.append(hexDigit(b & 0xF))
                }
                i &+= 1
                start = i
            }
            if start < n { out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: n - start)) }
        }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x61 + v - 10 }
}
