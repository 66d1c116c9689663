import CPincerSDK
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A caller giving up on a call (Ctrl-C, --timeout, a JSON-RPC `cancel`):
/// what pincer_call_t.is_cancelled (ABI 1.4) reports to the plugin. Set
/// from any thread, read by the plugin's; it never turns back.
public final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func cancel() { flag.store(true, ordering: .releasing) }
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// Collects what a plugin hands back through a `pincer_call_t`: a failure
/// message, a text result, page rows. Every string is copied on the way in,
/// which is what lets plugins in any language free their buffers at once.
final class Reply {
    var failure: String?
    var text: String?
    var rows: [MenuRow] = []
    /// Where live output goes (pincer_call_t.output); nil drops it.
    var output: (@Sendable (String) -> Void)?
    /// What pincer_call_t.output_format reports (PINCER_OUTPUT_TEXT or _JSON).
    var outputFormat: UInt32 = PINCER_OUTPUT_TEXT
    /// What pincer_call_t.is_cancelled reads; nil is never cancelled.
    var cancellation: Cancellation?
    /// Answers pincer_call_t.ask; nil: nobody can answer.
    var ask: (@Sendable (String) -> String?)?
    /// The last answer, kept as C text until the next ask or the reply's end.
    private var answer: UnsafeMutablePointer<CChar>?

    deinit { free(answer) }

    func reset() {
        failure = nil
        text = nil
        if !rows.isEmpty { rows.removeAll(keepingCapacity: true) }
    }

    /// A `pincer_call_t` whose slots write into this reply. The caller keeps
    /// the reply alive while the plugin may use the handle.
    func makeHandle() -> pincer_call_t {
        var call = pincer_call_t()
        call.struct_size = UInt32(MemoryLayout<pincer_call_t>.size)
        call.host_data = Unmanaged.passUnretained(self).toOpaque()
        call.fail = { call, message in
            guard let reply = Reply.from(call) else { return }
            reply.failure = message.map { String(cString: $0) } ?? ""
        }
        call.return_string = { call, text in
            guard let reply = Reply.from(call) else { return }
            reply.text = text.map { String(cString: $0) }
        }
        call.add_row = { call, title, value in
            guard let reply = Reply.from(call) else { return }
            reply.rows.append(MenuRow(title: title.map { String(cString: $0) } ?? "",
                                      value: value.map { String(cString: $0) }))
        }
        call.output = { call, text in
            guard let reply = Reply.from(call), let text else { return }
            reply.output?(String(cString: text))
        }
        call.output_format = { call in Reply.from(call)?.outputFormat ?? PINCER_OUTPUT_TEXT }
        call.is_cancelled = { call in Reply.from(call)?.cancellation?.isCancelled ?? false }
        call.ask = { call, question in
            guard let reply = Reply.from(call), let ask = reply.ask, let question else { return nil }
            if reply.cancellation?.isCancelled == true { return nil }
            free(reply.answer)
            reply.answer = nil
            guard let line = ask(String(cString: question)) else { return nil }
            reply.answer = strdup(line)
            return UnsafePointer(reply.answer)
        }
        return call
    }

    static func from(_ call: UnsafeMutablePointer<pincer_call_t>?) -> Reply? {
        guard let data = call?.pointee.host_data else { return nil }
        return Unmanaged<Reply>.fromOpaque(data).takeUnretainedValue()
    }

    /// Runs `body` with a handle to a fresh reply, returning the reply.
    static func collect(_ body: (UnsafeMutablePointer<pincer_call_t>) -> UInt32) -> (status: UInt32, reply: Reply) {
        let reply = Reply()
        var handle = reply.makeHandle()
        let status = withExtendedLifetime(reply) { withUnsafeMutablePointer(to: &handle) { body($0) } }
        return (status, reply)
    }
}

/// One row of a page entry.
public struct MenuRow: Sendable, Equatable {
    public let title: String
    public let value: String?
}

/// Names for the SDK's status codes, for messages.
public enum Status {
    public static func name(_ status: UInt32) -> String {
        switch status {
        case 0: "PINCER_OK"
        case 1: "PINCER_FAILED"
        case 2: "PINCER_INVALID_ARGUMENT"
        case 3: "PINCER_NOT_FOUND"
        case 4: "PINCER_DUPLICATE"
        case 5: "PINCER_UNSUPPORTED"
        case 6: "PINCER_CANCELLED"
        default: "status \(status)"
        }
    }
}
