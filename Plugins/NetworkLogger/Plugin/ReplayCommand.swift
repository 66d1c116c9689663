import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The function net.replay sends through: the app's own session, set by
/// the app (set_replayer; NetworkRecorder.enableReplay in Swift).
final class Replayer: Sendable {
    struct Sender: @unchecked Sendable {
        let send: pincer_network_replay_fn_t
        let context: UnsafeMutableRawPointer?
    }

    private let current = Mutex<Sender?>(nil)

    func set(_ sender: Sender?) { current.withLock { $0 = sender } }
    var sender: Sender? { current.withLock { $0 } }
}

/// net.replay: sends a logged request again through the app's session and
/// compares the two exchanges.
struct ReplayCommand {
    let state: FirstUse<LoggerState>
    let replayer: Replayer
    private static let tokens = Atomic<UInt64>(0)

    func register(with host: PluginHost) throws {
        let command = self
        try host.addCommand("replay(id: u64, yes: bool = false, header: string...) -> string",
                            summary: "Send a logged request again through the app's own session and compare the answers",
                            details: """
                                Runs in the app (pincer attach <pid> net.replay ID), whose session adds its cookies and credentials as it did the first time. Headers whose value the log redacted are left out, or sent as you give them: --header 'Authorization: Bearer ...' (repeat it for several). A URL or body with redacted values is refused: they were never stored. Methods that are not idempotent (POST, PATCH, ...) need --yes. The new entry is marked as a replay of the original (net.show, net.entry "replayOf", HAR "_replayOf"), and the result compares status, size, duration and the response headers that changed.
                                """,
                            changesState: true, jsonResult: true, concurrent: true) { args in
            try command.replay(args[0].u64, confirmed: args[1].bool, supplied: try InterceptCommands.headers(args.rest(from: 2).joined(separator: "\n")))
        }
    }

    private func replay(_ id: UInt64, confirmed: Bool, supplied: [Header]) throws -> CommandValue {
        let logger = try state.get()
        guard let original = try logger.entry(id) else {
            throw CommandError("no entry #\(id) (the log holds \(try logger.count()) entries; ids are in net.list)", status: PINCER_NOT_FOUND)
        }
        guard let sender = replayer.sender else {
            throw CommandError("this process sends no requests for net.replay: run it in the app (pincer attach <pid> net.replay \(id)); the app enables it with NetworkRecorder.enableReplay(through: session) or set_replayer",
                               status: PINCER_UNSUPPORTED)
        }
        let plan: ReplayPlan
        do { plan = try ReplayPlan.make(original, supplied: supplied, confirmed: confirmed) } catch { throw CommandError.invalidArgument(error.message) }
        let token = String(Self.tokens.add(1, ordering: .relaxed).newValue)
        let marked = plan.headers + [Header(ReplayMark.header, ReplayMark.value(original: id, token: token))]
        let status = CRequest.with(method: plan.method, url: plan.url, headers: marked, body: plan.body) { sender.send(sender.context, $0) }
        guard status == PINCER_OK else {
            throw CommandError("the app's session could not send the replay of #\(id)")
        }
        try logger.flush()
        guard let newID = logger.store.replayEntry(token: token), let replayed = try logger.entry(newID) else {
            throw CommandError("the replay of #\(id) was sent, but the log did not record it: the app's session does not go through Pincer's capture")
        }
        return .string(ReplayComparison.json(original: original, replay: replayed, plan: plan).serialized())
    }
}

/// A borrowed pincer_network_request_t for the length of one call.
enum CRequest {
    static func with<R>(method: String, url: String, headers: [Header], body: [UInt8], _ call: (UnsafePointer<pincer_network_request_t>) -> R) -> R {
        let memory = CMemory()
        var r = pincer_network_request_t()
        r.struct_size = UInt32(MemoryLayout<pincer_network_request_t>.size)
        r.method = memory.string(method)
        r.url = memory.string(url)
        (r.headers, r.header_count) = memory.headers(headers)
        (r.body, r.body_length) = memory.bytes(body)
        return withExtendedLifetime(memory) { withUnsafePointer(to: &r) { call($0) } }
    }
}
