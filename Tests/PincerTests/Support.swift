import Foundation
import XCTest
@testable import PincerHost

/// Paths and helpers shared by the tests. Everything here is real: plugins
/// are compiled with the system C compiler and loaded with dlopen, the
/// shell is the built `pincer` executable.
enum Fixture {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static var sdkInclude: String { packageRoot + "/SDK/include" }

    /// The build directory holding the `pincer` executable and the built-in plugins.
    static var buildDirectory: String { PincerHost.Host.executableDirectory()! }

    static var pincer: String { buildDirectory + "/pincer" }

    static func temporaryDirectory(_ label: String = "pincer-test") -> String {
        var template = Array((NSTemporaryDirectory() + "/\(label)-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }!
        return String(cString: path)
    }

    /// Compiles Tests/Fixtures/plugins/<name>.c into `directory` as <name>.so.
    static func buildPlugin(_ name: String, into directory: String, extraFlags: [String] = []) throws -> String {
        let output = "\(directory)/\(name).so"
        let source = "\(packageRoot)/Tests/Fixtures/plugins/\(name).c"
        let result = try run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-shared", "-fPIC",
                                             "-I", sdkInclude] + extraFlags + [source, "-o", output])
        guard result.status == 0 else {
            throw NSError(domain: "fixture", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "cc failed for \(name): \(result.stderr)"])
        }
        return output
    }

    struct ProcessResult {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs a program to completion (in `directory`, if given), feeding
    /// `input` on standard input.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    input: String? = nil, directory: String? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        if let input { inp.fileHandleForWriting.write(input.data(using: .utf8)!) }
        try inp.fileHandleForWriting.close()
        // Read both pipes before waiting so a large output cannot block the child.
        let errData = LockedData()
        let errThread = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        errThread.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errData.isSet { usleep(1000) }
        return ProcessResult(status: process.terminationStatus,
                             stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData.value, as: UTF8.self))
    }

    /// Runs `pincer` with an isolated state directory and plugin set.
    static func pincer(_ arguments: [String], stateDir: String, pluginPath: String? = nil, builtins: Bool = true,
                       input: String? = nil) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = stateDir
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        if let pluginPath { env["PINCER_PLUGIN_PATH"] = pluginPath }
        return try run(pincer, (builtins ? [] : ["--no-builtin"]) + arguments, environment: env, input: input)
    }

    static func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let data = text.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            XCTFail("not a JSON object: \(text)", file: file, line: line)
            return [:]
        }
        return object
    }
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var done = false
    func set(_ d: Data) { lock.lock(); data = d; done = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data }
}

/// Collects host log lines for assertions.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [LogRecord] = []
    func append(_ r: LogRecord) { lock.lock(); records.append(r); lock.unlock() }
    var all: [LogRecord] { lock.lock(); defer { lock.unlock() }; return records }
}

/// SplitMix64: a small seeded generator, so generated test data is the
/// same on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
