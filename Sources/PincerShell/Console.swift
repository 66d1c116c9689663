#if canImport(Glibc)
import Glibc
#endif

/// Where the shell writes. Tests capture into strings; the executable
/// writes to file descriptors 1 and 2.
public protocol Console: AnyObject {
    func out(_ text: String)
    /// `out` of UTF-8 text already in bytes (a long listing), which a
    /// console may write without making a String of it first.
    func out(utf8 bytes: [UInt8])
    func err(_ text: String)
    /// Whether standard output is a terminal (colour, alignment, progress).
    var isTerminal: Bool { get }
    /// Whether `ask` can reach a person who answers (pincer_call_t.ask).
    var canAsk: Bool { get }
    /// Shows `question` and reads one line of answer; nil when none comes.
    func ask(_ question: String) -> String?
}

extension Console {
    public func out(utf8 bytes: [UInt8]) { out(String(decoding: bytes, as: UTF8.self)) }
    public var canAsk: Bool { false }
    public func ask(_ question: String) -> String? { nil }
}

public final class StandardConsole: Console {
    public init() {}
    public func out(_ text: String) { Self.write(1, text) }
    public func err(_ text: String) { Self.write(2, text) }
    public var isTerminal: Bool { isatty(1) == 1 }
    /// A person at the keyboard, or lines piped in (the REPL's input).
    public var canAsk: Bool { true }

    public func ask(_ question: String) -> String? {
        Self.write(1, question)
        let line = readLine(strippingNewline: true)
        // A terminal echoed the person's Enter; from a pipe, end the prompt's line ourselves.
        if isatty(0) != 1 { Self.write(1, "\n") }
        return line
    }

    public func out(utf8 bytes: [UInt8]) {
        // Bytes with nothing to escape go out as they are; others take the String path.
        if TerminalText.needsNoEscape(bytes) { Self.writeAll(1, bytes) } else { out(String(decoding: bytes, as: UTF8.self)) }
    }

    /// Everything the shell prints passes here, so text from plugins and
    /// from captured traffic cannot drive the terminal (see TerminalText).
    static func write(_ fd: Int32, _ text: String) { writeAll(fd, TerminalText.escaped(text)) }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
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
    /// A plugin command was cancelled (Ctrl-C) or ran past --timeout.
    case cancelled = 6
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

/// Text on its way to a terminal or pipe. Plugins and captured traffic
/// (a URL, a header, a failure message) put any characters in text, and a
/// terminal obeys escape sequences in it: a title change, a cleared
/// screen, a fake prompt, a line reversed by a bidi override.
public enum TerminalText {
    /// `text` as UTF-8 with control characters written out as `\uXXXX`:
    /// C0 controls except newline and tab (so multi-line results keep
    /// their shape; carriage return is escaped, it overwrites a line),
    /// DEL, C1 controls (U+0080-U+009F) and the bidi controls (U+061C,
    /// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). The form is JSON's,
    /// so `--json` output, where such characters can only sit inside
    /// strings (PincerJSON escapes C0 there already), stays valid JSON
    /// with the same value.
    public static func escaped(_ text: String) -> [UInt8] {
        // Fast path: no byte that can start one of those characters (a
        // loop over the contiguous bytes: a command listing is 250 KB).
        var text = text
        if text.withUTF8({ needsNoEscape($0) }) { return Array(text.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar.value) {
                out += Array("\\u".utf8)
                let hex = Array("0123456789ABCDEF".utf8)
                for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int((scalar.value >> UInt32(shift)) & 0xF)]) }
            } else {
                out += Array(String(scalar).utf8)
            }
        }
        return out
    }

    /// No byte of this UTF-8 text can start a character `escaped` changes.
    static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        // Eight bytes at a time: a block of printable ASCII (the whole of a
        // JSON listing but its newline) needs no look at its bytes.
        var i = 0
        // Thirty-two bytes at a time first: four words checked together.
        while i &+ 32 <= bytes.count {
            let p = UnsafeRawPointer(base + i)
            let a = p.loadUnaligned(as: UInt64.self), b = p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let c = p.loadUnaligned(fromByteOffset: 16, as: UInt64.self), d = p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
            if mayNeedEscape(a) || mayNeedEscape(b) || mayNeedEscape(c) || mayNeedEscape(d) { break }
            i &+= 32
        }
        while i &+ 8 <= bytes.count {
            let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
            if mayNeedEscape(w) {
                for b in UnsafeBufferPointer(start: base + i, count: 8) where needsEscape(byte: b) { return false }
            }
            i &+= 8
        }
        for b in UnsafeBufferPointer(rebasing: bytes[i...]) where needsEscape(byte: b) { return false }
        return true
    }

    static func needsNoEscape(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { needsNoEscape($0) } }

    /// A byte that can start a character `escaped` changes.
    @inline(__always)
    private static func needsEscape(byte b: UInt8) -> Bool {
        (b < 0x20 && b != 0x0A && b != 0x09) || b == 0x7F || b == 0xC2 || b == 0xD8 || b == 0xE2
    }

    /// Whether any of the eight bytes is a control, DEL or not ASCII (the
    /// "has a byte less than n" and "has a zero byte" tests, exact for "any").
    @inline(__always)
    private static func mayNeedEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w & high
        let d = w ^ (ones &* 0x7F), del = (d &- ones) & ~d & high
        return control | del | (w & high) != 0
    }

    static func needsEscape(_ v: UInt32) -> Bool {
        switch v {
        case 0x0A, 0x09: false
        case 0..<0x20, 0x7F, 0x80...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Longest message (warning, error, log line) echoed whole, in characters.
    public static let messageLimit = 1_000

    /// A message cut to about `limit` characters: its start and its end
    /// (where the reason usually is) around "… (N bytes cut) …", so a 2 MB
    /// signature or argument echoed in a warning does not flood the terminal.
    public static func shortened(_ text: String, limit: Int = messageLimit) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        let head = text.prefix(limit * 2 / 3)
        let tail = text.suffix(limit / 4)
        let cut = text.utf8.count - head.utf8.count - tail.utf8.count
        return "\(head)… (\(cut) bytes cut) …\(tail)"
    }
}
