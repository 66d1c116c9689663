// Timing, temporary directories, number formatting and a small JSON writer.
#if canImport(Glibc)
import Glibc
#endif

/// A failure that stops a measurement (not a missed target).
struct BenchError: Error, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// A fresh private directory under $TMPDIR (or /tmp), removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let path: String

    init(prefix: String) throws(BenchError) {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty { base = "/tmp" }
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else {
            throw BenchError("cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))")
        }
        path = made
    }

    /// Removes the directory and everything in it (files and subdirectories).
    func remove() { TemporaryDirectory.removeTree(path) }

    private static func removeTree(_ path: String) {
        if let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names {
                let child = "\(path)/\(name)"
                var st = stat()
                if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                    removeTree(child)
                } else {
                    unlink(child)
                }
            }
        }
        rmdir(path)
    }
}

enum Format {
    /// Fixed-point with `digits` decimals (no Foundation needed).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let negative = value < 0
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return String(value) }
        let n = UInt64(scaled)
        let whole = n / UInt64(scale)
        var text = String(whole)
        if digits > 0 {
            var frac = String(n % UInt64(scale))
            while frac.count < digits { frac = "0" + frac }
            text += "." + frac
        }
        return (negative && scaled != 0 ? "-" : "") + text
    }

    /// Three significant figures or so: 1234 -> "1234", 45.67 -> "45.7", 2.345 -> "2.35".
    static func short(_ value: Double) -> String {
        let a = abs(value)
        if a >= 100 { return fixed(value, 0) }
        if a >= 10 { return fixed(value, 1) }
        return fixed(value, 2)
    }

    /// Calls per second in millions: "12.3 M calls/s".
    static func rate(_ perSecond: Double) -> String { "\(short(perSecond / 1e6)) M calls/s" }

    static func milliseconds(_ ns: Double) -> String { "\(fixed(ns / 1e6, 2)) ms" }

    static func ratio(_ value: Double) -> String { "\(short(value))x" }

    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func leftPadded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}

/// Just enough JSON to print the report, keys in insertion order.
indirect enum JSON: Sendable {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null

    /// A number rounded to `digits` decimals (null when not finite).
    static func rounded(_ value: Double, _ digits: Int) -> JSON {
        guard value.isFinite else { return .null }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return .number((value * scale).rounded() / scale)
    }

    func render(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent)
        let inner = String(repeating: "  ", count: indent + 1)
        switch self {
        case .object(let members):
            if members.isEmpty { return "{}" }
            let body = members.map { "\(inner)\(JSON.quote($0.0)): \($0.1.render(indent: indent + 1))" }
            return "{\n" + body.joined(separator: ",\n") + "\n\(pad)}"
        case .array(let items):
            if items.isEmpty { return "[]" }
            let body = items.map { "\(inner)\($0.render(indent: indent + 1))" }
            return "[\n" + body.joined(separator: ",\n") + "\n\(pad)]"
        case .string(let s): return JSON.quote(s)
        case .number(let x):
            guard x.isFinite else { return "null" }
            if x == x.rounded(), abs(x) < 1e15 { return String(Int64(x)) }
            return String(x)
        case .integer(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
