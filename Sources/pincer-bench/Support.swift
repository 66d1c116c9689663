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

    static func removeTree(_ path: String) {
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

/// A host with built-in plugins from beside this executable: one, loaded by
/// path (the parts measure one plugin each), or every one, as an app that
/// embeds Pincer loads them.
enum BuiltPlugin {
    static func host(loading shortName: String, everyBuiltin: Bool = false, state: TemporaryDirectory) throws(BenchError) -> Host {
        guard let directory = Host.executableDirectory() else {
            throw BenchError("cannot find this executable's directory (readlink /proc/self/exe failed)")
        }
        let pluginPath = "\(directory)/\(Host.builtinPrefix)\(shortName).so"
        guard access(pluginPath, R_OK) == 0 else {
            throw BenchError("\(pluginPath) is missing; build it beside pincer-bench: swift build -c release --product pincer-plugin-\(shortName) (or simply swift build -c release)")
        }
        var options = Host.Options(stateDirectory: state.path)
        options.builtinDirectory = everyBuiltin ? directory : nil
        options.pluginPaths = everyBuiltin ? [] : [pluginPath]
        let host = Host(options: options)
        host.loadAll()
        if let failure = host.failures.first {
            host.shutdown()
            throw BenchError("\(everyBuiltin ? "a built-in" : "the \(shortName)") plugin was refused: \(failure)")
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

// MARK: - files, child processes and the Python baselines

/// Writes `bytes` to `path` (created or truncated, mode 0644).
func writeFile(_ path: String, _ bytes: [UInt8]) throws(BenchError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BenchError("writing \(path): \(message)")
        }
    }
    guard close(fd) == 0 else { throw BenchError("closing \(path): \(String(cString: strerror(errno)))") }
}

/// The whole of the file at `path`.
func readFileBytes(_ path: String) throws(BenchError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { throw BenchError("fstat \(path): \(String(cString: strerror(errno)))") }
    let size = Int(st.st_size)
    var bytes = [UInt8](repeating: 0, count: size)
    var offset = 0
    while offset < size {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, size - offset) }
        if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else {
            throw BenchError("reading \(path): \(n == 0 ? "it shrank while being read" : String(cString: strerror(errno)))")
        }
    }
    return bytes
}

/// The executable `name` in a directory of $PATH, or nil.
func findInPath(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
        let candidate = "\(directory)/\(name)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// "status N" or "signal N" for a wait status.
func describeWaitStatus(_ status: Int32) -> String {
    let signal = status & 0x7f
    return signal == 0 ? "status \((status >> 8) & 0xff)" : "signal \(signal)"
}

/// Runs `path` with `arguments` (this process's environment), stdout
/// and stderr each through a pipe; returns the wait status and both.
func runCapturing(_ path: String, _ arguments: [String]) throws(BenchError) -> (Int32, [UInt8], [UInt8]) {
    var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
    guard pipe(&out) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
    guard pipe(&err) == 0 else {
        close(out[0]); close(out[1])
        throw BenchError("pipe: \(String(cString: strerror(errno)))")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out[1], 1)
    posix_spawn_file_actions_adddup2(&actions, err[1], 2)
    for fd in out + err { posix_spawn_file_actions_addclose(&actions, fd) }

    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid = pid_t()
    let rc = argv.withUnsafeBufferPointer { a in
        posix_spawn(&pid, path, &actions, nil, a.baseAddress!, environ)
    }
    close(out[1]); close(err[1])
    guard rc == 0 else {
        close(out[0]); close(err[0])
        throw BenchError("posix_spawn \(path): \(String(cString: strerror(rc)))")
    }
    // Read both pipes to the end without either filling up.
    var outBytes: [UInt8] = [], errBytes: [UInt8] = []
    var fds = [pollfd(fd: out[0], events: Int16(POLLIN), revents: 0), pollfd(fd: err[0], events: Int16(POLLIN), revents: 0)]
    var remaining = 2
    var buffer = [UInt8](repeating: 0, count: 65536)
    while remaining > 0 {
        guard poll(&fds, 2, -1) >= 0 else {
            if errno == EINTR { continue }
            break
        }
        for k in 0..<2 where fds[k].fd >= 0 && fds[k].revents != 0 {
            let n = buffer.withUnsafeMutableBytes { read(fds[k].fd, $0.baseAddress, $0.count) }
            if n > 0 {
                if k == 0 { outBytes += buffer[0..<n] } else { errBytes += buffer[0..<n] }
            } else if n == 0 || errno != EINTR {
                close(fds[k].fd)
                fds[k].fd = -1
                remaining -= 1
            }
        }
    }
    for k in 0..<2 where fds[k].fd >= 0 { close(fds[k].fd) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw BenchError("waitpid \(path): \(String(cString: strerror(errno)))") }
    }
    return (status, outBytes, errBytes)
}

/// A file of the package this benchmark was compiled from, else relative
/// to the current directory; nil when neither is readable.
enum PackageFile {
    static func path(_ relative: String) -> String? {
        var components = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        // .../Sources/pincer-bench/Support.swift -> the package root.
        if components.count > 3 {
            components.removeLast(3)
            let path = components.joined(separator: "/") + "/" + relative
            if access(path, R_OK) == 0 { return path }
        }
        return access(relative, R_OK) == 0 ? relative : nil
    }
}

/// A baseline measured by a Python script of the package (scripts/NAME)
/// that prints one JSON object as its last line of output ({"error": ...}
/// when its library is missing).
enum PythonBaseline {
    /// scripts/`name` of the package this file was compiled from, else of
    /// the current directory.
    static func scriptPath(_ name: String) -> String? { PackageFile.path("scripts/\(name)") }

    /// Runs `python3 scripts/<script> <arguments>` and returns its last line
    /// parsed, and the command as the report shows it (`shown` replaces
    /// arguments such as temporary paths). Fails with a message naming
    /// `install` when python3 is missing, when the script reports an error
    /// (the library cannot be imported) or when it exits without its JSON.
    static func run(_ script: String, arguments: [String], shown: [String: String] = [:],
                    library: String, install: String) throws(BenchError) -> (output: JSON, command: String) {
        guard let path = scriptPath(script) else {
            throw BenchError("cannot find scripts/\(script) (looked beside the package sources and in the current directory)")
        }
        // The interpreter scripts/deps set up with the baselines' libraries, else python3 on PATH.
        let venv = PackageFile.path(".build/consumers/bin/python3").flatMap { access($0, X_OK) == 0 ? $0 : nil }
        guard let python = venv ?? findInPath("python3") else {
            throw BenchError("python3 is not on PATH; the baseline needs Python 3 with \(library): \(install)")
        }
        let allArguments = [path] + arguments
        let command = ([venv == nil ? "python3" : ".build/consumers/bin/python3"] + allArguments.map { shown[$0] ?? $0 }).joined(separator: " ")
        let (status, output, errorOutput) = try runCapturing(python, allArguments)
        let text = String(decoding: output, as: UTF8.self)
        let line = text.split(whereSeparator: { $0 == "\n" }).last.map(String.init) ?? ""
        let parsed = try? JSON.parse(line)
        if let message = parsed?["error"]?.stringValue {
            throw BenchError(message)
        }
        guard status == 0, let parsed else {
            let tail = String(decoding: errorOutput.suffix(600), as: UTF8.self).split(separator: "\n").suffix(4).joined(separator: " | ")
            throw BenchError("`\(command)` exited with \(describeWaitStatus(status))\(tail.isEmpty ? "" : ": \(tail)"); is \(library) installed? \(install)")
        }
        return (parsed, command)
    }
}
