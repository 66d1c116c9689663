// HTTP/1.1 message heads and chunked bodies as the loopback proxy
// (net.proxy) reads them from clients and servers it does not trust: every
// limit is checked before memory grows, sizes use checked arithmetic, and a
// refusal says what was wrong and where (RFC 9112).

/// A refusal of a message head or body, for a 400 or 502 and the log.
public struct HTTPMessageError: Error, CustomStringConvertible, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Limits on what one head may hold.
public struct HTTPLimits: Sendable {
    /// The request or status line and every header line together.
    public var headBytes = 64 << 10
    public var headerCount = 200
    /// Chunk-size lines (with extensions) and trailer lines.
    public var lineBytes = 8 << 10
    public init() {}

    static func size(_ n: Int) -> String { n >= 1024 && n % 1024 == 0 ? "\(n / 1024) KiB" : "\(n) bytes" }
}

/// A request or status line and its headers.
public struct HTTPHead: Sendable, Equatable {
    /// Request: method, target, version. Response: version, status code, reason.
    public var start: (String, String, String)
    public var headers: [Header]

    public static func == (a: HTTPHead, b: HTTPHead) -> Bool {
        a.start == b.start && a.headers == b.headers
    }

    /// Where the head ends in `buffer` (just past the blank line), or nil
    /// when it has not all arrived; an error once it is over the limit.
    public static func end(in buffer: ArraySlice<UInt8>, limits: HTTPLimits) throws(HTTPMessageError) -> Int? {
        var i = buffer.startIndex
        // A blank line before the request line is tolerated (RFC 9112 §2.2).
        while i < buffer.endIndex, buffer[i] == 13 || buffer[i] == 10 { i += 1 }
        var lineStart = i
        while i < buffer.endIndex {
            if buffer[i] == 10 {
                let line = buffer[lineStart..<i]
                if line.isEmpty || line == [13] { return i + 1 }
                lineStart = i + 1
            }
            i += 1
            if i - buffer.startIndex > limits.headBytes {
                throw HTTPMessageError("the head (request line and headers) is over \(HTTPLimits.size(limits.headBytes))")
            }
        }
        return nil
    }

    /// Parses a complete head (what `end` measured, blank line included).
    public static func parse(_ bytes: ArraySlice<UInt8>, isRequest: Bool, limits: HTTPLimits) throws(HTTPMessageError) -> HTTPHead {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        for i in bytes.indices where bytes[i] == 10 {
            var line = bytes[start..<i]
            if line.last == 13 { line = line.dropLast() }
            lines.append(line)
            start = i + 1
        }
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        guard let first = lines.first else { throw HTTPMessageError("the message has no \(isRequest ? "request" : "status") line") }
        guard lines.count - 1 <= limits.headerCount else { throw HTTPMessageError("more than \(limits.headerCount) header lines") }
        let startLine = try Self.text(first, "the \(isRequest ? "request" : "status") line")
        let parts = startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let head: (String, String, String)
        if isRequest {
            guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(Self.isToken), !parts[1].isEmpty,
                  !parts[1].contains(" "), parts[2].hasPrefix("HTTP/1.") else {
                throw HTTPMessageError("the request line '\(Self.shown(startLine))' is not 'METHOD target HTTP/1.1'")
            }
            head = (parts[0], parts[1], parts[2])
        } else {
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]), (100...999).contains(code) else {
                throw HTTPMessageError("the status line '\(Self.shown(startLine))' is not 'HTTP/1.1 200 OK'")
            }
            head = (parts[0], parts[1], parts.count == 3 ? parts[2] : "")
        }
        var headers: [Header] = []
        headers.reserveCapacity(lines.count - 1)
        for (n, line) in lines.dropFirst().enumerated() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HTTPMessageError("header line \(n + 1) has no colon")
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(Self.isToken) else {
                // Whitespace before the colon or an obsolete folded line (RFC 9112 §5.1, §5.2): refused, not guessed at.
                throw HTTPMessageError("header line \(n + 1) has a name that is not a token (a space before the colon, or a folded line)")
            }
            var value = line[(colon + 1)...]
            while let c = value.first, c == 32 || c == 9 { value = value.dropFirst() }
            while let c = value.last, c == 32 || c == 9 { value = value.dropLast() }
            guard !value.contains(0), !value.contains(13) else { throw HTTPMessageError("header line \(n + 1) has a NUL or CR in its value") }
            headers.append(Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return HTTPHead(start: head, headers: headers)
    }

    private static func text(_ b: ArraySlice<UInt8>, _ what: String) throws(HTTPMessageError) -> String {
        guard !b.contains(0) else { throw HTTPMessageError("\(what) has a NUL byte") }
        return String(decoding: b, as: UTF8.self)
    }

    private static func shown(_ s: String) -> String { s.count > 80 ? String(s.prefix(80)) + "…" : s }

    /// tchar of RFC 9110 §5.6.2.
    static func isToken(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
    }

    public func first(_ name: String) -> String? { headers.first(name) }

    /// How the body that follows is delimited (RFC 9112 §6.3).
    public enum Framing: Sendable, Equatable {
        case none
        case length(UInt64)
        case chunked
        /// Until the sender closes the connection (responses only).
        case untilClose
    }

    /// The framing of a request's body; an error for what a proxy must refuse (smuggling).
    public func requestFraming() throws(HTTPMessageError) -> Framing {
        try framing(defaultFraming: .none)
    }

    /// The framing of a response's body to a request with `method`.
    public func responseFraming(requestMethod: String) throws(HTTPMessageError) -> Framing {
        let status = Int(start.1) ?? 0
        if requestMethod == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 { return .none }
        return try framing(defaultFraming: .untilClose)
    }

    private func framing(defaultFraming: Framing) throws(HTTPMessageError) -> Framing {
        let encodings = headers.filter { $0.name.lowercased() == "transfer-encoding" }
            .flatMap { $0.value.lowercased().split(separator: ",").map { $0.filter { $0 != " " && $0 != "\t" } } }
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        if !encodings.isEmpty {
            guard lengths.isEmpty else { throw HTTPMessageError("both Transfer-Encoding and Content-Length are set (refused: the two could disagree)") }
            guard encodings.last == "chunked" else { throw HTTPMessageError("Transfer-Encoding '\(encodings.joined(separator: ", "))' does not end in chunked") }
            return .chunked
        }
        guard let first = lengths.first else { return defaultFraming }
        // Repeated values ("5, 5" or two headers) must agree (RFC 9110 §8.6).
        let values = lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.filter { $0 != " " && $0 != "\t" } } }
        guard let v = values.first, !v.isEmpty, v.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = UInt64(v), values.allSatisfy({ $0 == v }) else {
            throw HTTPMessageError("Content-Length '\(first)' is not one decimal number")
        }
        return n == 0 ? .none : .length(n)
    }
}

/// Decodes a chunked body as its bytes arrive, with bounded memory: each
/// call hands the data bytes of `input` to `data` and keeps at most one
/// partial size or trailer line.
public struct ChunkedDecoder: Sendable {
    private enum State: Sendable { case size, data(UInt64), dataEnd, trailer, done }
    private var state = State.size
    private var line: [UInt8] = []
    private let limits: HTTPLimits
    /// Data bytes decoded so far.
    public private(set) var total: UInt64 = 0

    public init(limits: HTTPLimits = HTTPLimits()) { self.limits = limits }

    public var isDone: Bool { if case .done = state { return true } else { return false } }

    /// Feeds bytes; returns how many of them belong to this body (the rest
    /// is the next message's, once done).
    public mutating func feed(_ input: UnsafeRawBufferPointer, data: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        var i = 0
        while i < input.count {
            switch state {
            case .done:
                return i
            case .data(let left):
                let n = Int(min(left, UInt64(input.count - i)))
                try data(UnsafeRawBufferPointer(rebasing: input[i..<(i + n)]))
                i += n
                total += UInt64(n)
                state = left == UInt64(n) ? .dataEnd : .data(left - UInt64(n))
            case .size, .dataEnd, .trailer:
                let c = input[i]
                i += 1
                guard c == 10 else {
                    guard line.count < limits.lineBytes else { throw HTTPMessageError("a chunk line is over \(HTTPLimits.size(limits.lineBytes))") }
                    line.append(c)
                    continue
                }
                if line.last == 13 { line.removeLast() }
                defer { line.removeAll(keepingCapacity: true) }
                try endOfLine()
            }
        }
        return i
    }

    private mutating func endOfLine() throws(HTTPMessageError) {
        switch state {
        case .dataEnd:
            guard line.isEmpty else { throw HTTPMessageError("a chunk's data is not followed by CRLF") }
            state = .size
        case .size:
            let digits = line.prefix { $0 != UInt8(ascii: ";") && $0 != 32 && $0 != 9 }
            guard !digits.isEmpty, digits.count <= 16 else { throw HTTPMessageError("a chunk size is not 1–16 hex digits") }
            var size: UInt64 = 0
            for d in digits {
                let v: UInt64
                switch d {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt64(d - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): v = UInt64(d - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): v = UInt64(d - UInt8(ascii: "A") + 10)
                default: throw HTTPMessageError("a chunk size has the character '\(Character(Unicode.Scalar(d)))'")
                }
                size = size << 4 | v // 16 digits at most: no overflow
            }
            let (sum, overflow) = total.addingReportingOverflow(size)
            guard !overflow, sum < UInt64(Int64.max) else { throw HTTPMessageError("the chunked body is larger than 2^63 bytes") }
            state = size == 0 ? .trailer : .data(size)
        case .trailer:
            if line.isEmpty { state = .done }
        case .data, .done:
            break
        }
    }
}
