// A small blocking client of the control protocol (Protocol.swift): what
// `pincer ps`, `attach` and `tail` use, and what tests drive.
import PincerJSON
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why talking to an app failed.
public struct ControlError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// Nothing at the socket path.
        case noSocket
        /// A socket file that no process listens on: the app has exited.
        case refused
        /// The socket belongs to another user.
        case permissionDenied
        /// The app closed the connection (it stopped, or refused our uid).
        case closed
        /// No answer within the client's timeout.
        case timedOut
        /// The app sent something that is not the protocol, or a request would be too long.
        case protocolError
        /// The app answered with a JSON-RPC error: `code`, `message`, `data`.
        case remote
    }

    public let kind: Kind
    public let message: String
    /// The JSON-RPC error code of a `.remote` error.
    public let code: Int64?
    public let data: JSON?

    public init(_ kind: Kind, _ message: String, code: Int64? = nil, data: JSON? = nil) {
        self.kind = kind
        self.message = message
        self.code = code
        self.data = data
    }

    public var errorCode: ControlProtocol.ErrorCode? { code.flatMap(ControlProtocol.ErrorCode.init(rawValue:)) }
    public var description: String { message }
}

/// A message from the app without an id: "output", "event" or "dropped".
public struct ControlNotification: Sendable {
    public let method: String
    public let params: JSON

    public var kind: ControlProtocol.Notification? { ControlProtocol.Notification(rawValue: method) }
}

/// One connection to an app's control socket.
///
/// Threads: any thread may send; whichever thread waits reads for everyone
/// (one at a time), keeping other threads' responses for them, so "one
/// thread calls while another listens" works, and so does a single thread
/// that reads inline while it waits for its own response. Notifications go
/// to the handler on the thread that read them, in order; the handler must
/// not call back into the client.
public final class ControlClient: @unchecked Sendable {
    public typealias NotificationHandler = @Sendable (ControlNotification) -> Void

    public let path: String
    private let fd: Int32
    private let handler: NotificationHandler
    private let timeoutMilliseconds: Int
    /// The last request id; held while a request is written, so lines never interleave.
    private let writer = Mutex<Int64>(0)
    /// The app's limit on one message (from `hello`).
    private let requestLimit = Atomic<Int>(ControlProtocol.maxMessageBytes)

    private let state = ConditionLock()
    // Guarded by `state`.
    private var responses: [Int64: JSON] = [:]
    private var isReading = false
    private var failure: ControlError?
    /// Used only by the thread that set `isReading`.
    private var reader: MessageReader

    /// Connects to `path`. A positive `timeoutMilliseconds` bounds the
    /// connect and every wait for a message (`ps` asks with 1000).
    /// `maxMessageBytes` bounds a message from the app.
    public init(path: String, timeoutMilliseconds: Int = 0, maxMessageBytes: Int = 64 << 20,
                notifications: @escaping NotificationHandler = { _ in }) throws(ControlError) {
        guard let address = UnixSocket.address(path) else {
            throw ControlError(.noSocket, "\(path) is not a usable socket path (empty, or longer than \(UnixSocket.maxPathBytes) bytes)")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlError(.protocolError, "cannot create a socket: \(UnixSocket.errorText())") }
        if timeoutMilliseconds > 0 { UnixSocket.setTimeout(fd, milliseconds: timeoutMilliseconds) }
        var rc: Int32
        repeat {
            rc = UnixSocket.withSockaddr(address) { connect(fd, $0, $1) }
        } while rc != 0 && errno == EINTR
        if rc != 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT, ENOTDIR:
                throw ControlError(.noSocket, "no app socket at \(path)")
            case ECONNREFUSED, ENOTSOCK:
                throw ControlError(.refused, "no app listens on \(path) (it has exited)")
            case EACCES, EPERM:
                throw ControlError(.permissionDenied, "permission denied for \(path) (it belongs to another user)")
            case EAGAIN, EINPROGRESS, ETIMEDOUT:
                throw ControlError(.timedOut, "the app at \(path) did not accept the connection within \(timeoutMilliseconds) ms")
            default:
                throw ControlError(.refused, "cannot connect to \(path): \(UnixSocket.errorText(code))")
            }
        }
        self.path = path
        self.fd = fd
        self.handler = notifications
        self.timeoutMilliseconds = timeoutMilliseconds
        reader = MessageReader(fd: fd, maxBytes: maxMessageBytes)
    }

    deinit { Glibc.close(fd) }

    /// Ends the connection; waiting threads get `.closed`.
    public func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    // MARK: requests

    /// Sends a request and returns its id; the response comes from `response(to:)`.
    public func send(_ method: ControlProtocol.Method, _ params: JSON = .object([])) throws(ControlError) -> Int64 {
        let limit = requestLimit.load(ordering: .relaxed)
        return try writer.withLock { (lastID: inout Int64) throws(ControlError) -> Int64 in
            lastID += 1
            var bytes = ControlProtocol.request(id: lastID, method, params).serializedBytes()
            guard bytes.count <= limit else {
                throw ControlError(.protocolError, "the \(method.rawValue) request is \(bytes.count) bytes, more than the app's limit of \(limit)")
            }
            bytes.append(UInt8(ascii: "\n"))
            guard UnixSocket.sendAll(fd, bytes) else { throw ControlError(.closed, "the app closed the connection") }
            return lastID
        }
    }

    /// Waits for the response to request `id`: its result, or its error
    /// thrown as `.remote`. Notifications read meanwhile go to the handler.
    public func response(to id: Int64) throws(ControlError) -> JSON {
        guard let message = try wait(for: id) else { throw ControlError(.closed, "the app closed the connection") }
        if let error = message["error"] {
            throw ControlError(.remote, error["message"]?.stringValue ?? "error without a message",
                               code: error["code"]?.int64Value, data: error["data"])
        }
        return message["result"] ?? .null
    }

    /// A request and its response.
    public func call(_ method: ControlProtocol.Method, _ params: JSON = .object([])) throws(ControlError) -> JSON {
        try response(to: send(method, params))
    }

    /// `hello`: who the app is. Also learns the app's message limit.
    @discardableResult
    public func hello() throws(ControlError) -> JSON {
        let result = try call(.hello)
        if let limit = result["max_message_bytes"]?.int64Value, limit > 0 {
            requestLimit.store(Int(clamping: limit), ordering: .relaxed)
        }
        return result
    }

    /// Reads until the app closes the connection, handing every
    /// notification to the handler (what `pincer tail` does).
    public func listen() throws(ControlError) {
        _ = try wait(for: nil)
    }

    // MARK: reading

    private enum Turn {
        case response(JSON)
        case failed(ControlError)
        case read
    }

    /// The message answering `id` (nil: none, read until the end). nil
    /// when the connection ended without it and `id` is nil.
    private func wait(for id: Int64?) throws(ControlError) -> JSON? {
        while true {
            let turn: Turn = state.withLock {
                while true {
                    if let id, let message = responses.removeValue(forKey: id) { return .response(message) }
                    if let failure { return .failed(failure) }
                    if !isReading {
                        isReading = true
                        return .read
                    }
                    state.wait()
                }
            }
            switch turn {
            case .response(let message): return message
            case .failed(let error):
                if id == nil && error.kind == .closed { return nil }
                throw error
            case .read: break
            }
            let next = reader.next()
            var notification: ControlNotification?
            var timedOut = false
            state.withLock {
                switch next {
                case .message(let bytes):
                    switch Self.classify(bytes) {
                    case .response(let responseID, let message): responses[responseID] = message
                    case .notification(let n): notification = n
                    case .unmatched: break // an error about no request of ours (id null): nothing waits for it
                    case .invalid(let why): failure = ControlError(.protocolError, "the app sent \(why)")
                    }
                case .tooLarge:
                    failure = ControlError(.protocolError, "the app sent a message longer than this client's limit")
                case .timedOut:
                    timedOut = true
                case .end:
                    failure = ControlError(.closed, "the app closed the connection")
                }
            }
            // Still the reader while the handler runs, so notifications stay in order.
            if let notification { handler(notification) }
            state.withLock {
                isReading = false
                state.broadcast()
            }
            if timedOut {
                throw ControlError(.timedOut, "no answer from the app within \(timeoutMilliseconds) ms")
            }
        }
    }

    private enum Incoming {
        case response(Int64, JSON)
        case notification(ControlNotification)
        case unmatched
        case invalid(String)
    }

    private static func classify(_ bytes: [UInt8]) -> Incoming {
        guard let message = try? JSON.parse(bytes: bytes), message.objectValue != nil else { return .invalid("a line that is not a JSON object") }
        if let method = message["method"]?.stringValue {
            return .notification(ControlNotification(method: method, params: message["params"] ?? .object([])))
        }
        guard let id = message["id"] else { return .invalid("a response without an id") }
        guard let number = id.int64Value else { return id == .null ? .unmatched : .invalid("a response with id \(id.serialized())") }
        return .response(number, message)
    }
}
