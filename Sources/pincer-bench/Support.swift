import PincerHost
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

    /// Calls (or other units) per second in millions: "12.3 M calls/s".
    static func rate(_ perSecond: Double, unit: String = "calls") -> String { "\(short(perSecond / 1e6)) M \(unit)/s" }

    static func milliseconds(_ ns: Double) -> String { "\(fixed(ns / 1e6, 2)) ms" }

    static func ratio(_ value: Double) -> String { "\(short(value))x" }

    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func leftPadded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}

/// The report uses the host's JSON writer; this adds rounding.
extension JSON {
    /// A number rounded to `digits` decimals (null when not finite).
    static func rounded(_ value: Double, _ digits: Int) -> JSON {
        guard value.isFinite else { return .null }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return .double((value * scale).rounded() / scale)
    }
}

/// A host with one built-in plugin from beside this executable, loaded by
/// path (the parts measure one plugin each).
enum BuiltPlugin {
    static func host(loading shortName: String, state: TemporaryDirectory) throws(BenchError) -> Host {
        guard let directory = Host.executableDirectory() else {
            throw BenchError("cannot find this executable's directory (readlink /proc/self/exe failed)")
        }
        let pluginPath = "\(directory)/\(Host.builtinPrefix)\(shortName).so"
        guard access(pluginPath, R_OK) == 0 else {
            throw BenchError("\(pluginPath) is missing; build it beside pincer-bench: swift build -c release --product pincer-plugin-\(shortName) (or simply swift build -c release)")
        }
        var options = Host.Options(stateDirectory: state.path)
        options.builtinDirectory = nil
        options.pluginPaths = [pluginPath]
        let host = Host(options: options)
        host.loadAll()
        if let failure = host.failures.first {
            host.shutdown()
            throw BenchError("the \(shortName) plugin was refused: \(failure)")
        }
        return host
    }
}

/// A small deterministic generator (SplitMix64): the same data every run.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    mutating func hex(_ digits: Int) -> String {
        let alphabet = Array("0123456789abcdef")
        return String((0..<digits).map { _ in alphabet[Int(next() & 15)] })
    }
    mutating func uuid() -> String {
        let c = Array(hex(32))
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }
}
