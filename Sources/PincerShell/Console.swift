#if canImport(Glibc)
import Glibc
#endif

/// Where the shell writes. Tests capture into strings; the executable
/// writes to file descriptors 1 and 2.
public protocol Console: AnyObject {
    func out(_ text: String)
    func err(_ text: String)
    /// Whether standard output is a terminal (colour, alignment, progress).
    var isTerminal: Bool { get }
}

public final class StandardConsole: Console {
    public init() {}
    public func out(_ text: String) { Self.write(1, text) }
    public func err(_ text: String) { Self.write(2, text) }
    public var isTerminal: Bool { isatty(1) == 1 }

    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}

public final class CapturingConsole: Console {
    public private(set) var stdout = ""
    public private(set) var stderr = ""
    public init() {}
    public func out(_ text: String) { stdout += text }
    public func err(_ text: String) { stderr += text }
    public var isTerminal: Bool { false }
}

/// Documented exit codes (README "Exit codes").
public enum ExitCode: Int32, Sendable {
    case ok = 0
    case commandFailed = 1
    case usage = 2
    case notFound = 3
    case pluginLoadFailure = 4
    case storeError = 5
}

/// A failure that ends one shell command with an exit code and a message.
struct ShellError: Error {
    let code: ExitCode
    let message: String
    /// A usage line to print after the message.
    var usage: String?

    static func usage(_ message: String, usage: String? = nil) -> ShellError {
        ShellError(code: .usage, message: message, usage: usage)
    }
    static func notFound(_ message: String) -> ShellError { ShellError(code: .notFound, message: message) }
    static func failed(_ message: String) -> ShellError { ShellError(code: .commandFailed, message: message) }
}
