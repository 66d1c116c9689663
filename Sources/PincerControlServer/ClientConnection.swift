import PincerControl
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One request being worked on, so `cancel` can find it and its output and
/// result can be dropped once it is cancelled.
final class RequestToken: Sendable {
    let id: RequestID
    /// Also what the request's plugin command reads through
    /// pincer_call_t.is_cancelled, so `cancel` stops a command that polls it.
    let cancellation = Cancellation()

    init(id: RequestID) { self.id = id }

    var isCancelled: Bool { cancellation.isCancelled }
    func cancel() { cancellation.cancel() }
}

/// One connected client. The server's poller thread reads its requests
/// (answering the quick ones itself and handing the others to the request
/// pool) and writes what the socket would not take at once; replies,
/// output and events are queued in `queue`, bounded in bytes. Nothing the
/// app does waits for the client.
final class ClientConnection: Sendable {
    /// Requests worked on at once; more are refused with `busy`.
    static let maxConcurrentRequests = 16

    let core: ServerCore
    let fd: Int32
    let queue: OutboundQueue
    /// Requests in progress by id; a cancelled one is removed at once.
    private let requests = Mutex<[RequestID: RequestToken]>([:])
    private let runningWorkers = Atomic<Int>(0)
    /// The client closed its side (read end of file): no more requests.
    private let ended = Atomic<Bool>(false)
    /// Questions of running shell requests (pincer_call_t.ask) by request:
    /// nil while waiting, then the answer (whose own nil is "none").
    private let questions = Mutex<[RequestID: String??]>([:])

    init(fd: Int32, core: ServerCore) {
        self.fd = fd
        self.core = core
        queue = OutboundQueue(fd: fd, budget: core.queueBudget, wake: { [core] in core.wakePoller() })
    }

    var maxMessageBytes: Int { core.options.maxMessageBytes }

    // MARK: lifecycle

    /// Disconnects: the queue stops and frees what it held; the poller
    /// closes the socket.
    func close() { queue.close() }

    /// Whether the poller should read from the client.
    var wantsRead: Bool { !ended.load(ordering: .relaxed) }

    /// Whether the poller is done with the client (then it calls `retire`).
    var isFinished: Bool { queue.isFinished }

    /// Reads what the socket holds, on the poller thread, and handles every
    /// complete request.
    func readAvailable(_ reader: inout MessageReader, scratch: inout [UInt8]) {
        while true {
            switch reader.next(scratch: &scratch) {
            case .message(let line): handle(line)
            case .tooLarge:
                sendReply(ControlProtocol.error(id: .null, .tooLarge, "a message is longer than the limit of \(maxMessageBytes) bytes; it was skipped"))
            case .timedOut: return // nothing more for now
            case .end:
                // The client closed its side: what is queued still goes out.
                ended.store(true, ordering: .relaxed)
                queue.drain()
                return
            }
        }
    }

    /// The poller's last word: the descriptor is closed and the client forgotten.
    func retire() {
        queue.descriptorClosed()
        Glibc.close(fd)
        core.router.removeAll(of: self)
        // A command still running for a client that is gone (a watch, a
        // question) learns it through is_cancelled, and stops.
        for token in requests.withLock({ table in defer { table.removeAll() }; return Array(table.values) }) { token.cancel() }
    }

    // MARK: requests

    private func handle(_ line: [UInt8]) {
        let request: Request
        switch Request.parse(line) {
        case .failure(let rejection):
            let e = rejection.error
            sendReply(ControlProtocol.error(id: rejection.id, e.code, e.message, data: e.data))
            return
        case .success(let r):
            request = r
        }
        let token = RequestToken(id: request.id)
        switch request.method {
        case .hello, .cancel, .unsubscribe, .answer:
            // Quick and free of plugin calls: answered here, in order, even
            // when every worker is busy.
            sendResponse(request.id, Result { () throws(MethodError) -> JSON in try perform(request, token) })
        default:
            startWorker(request, token)
        }
    }

    private func startWorker(_ request: Request, _ token: RequestToken) {
        let registered = requests.withLock { table -> Bool in
            guard table[request.id] == nil else { return false }
            table[request.id] = token
            return true
        }
        guard registered else {
            sendResponse(request.id, .failure(MethodError(.invalidRequest, "id \(request.id.json.serialized()) is already used by a request in progress")))
            return
        }
        if runningWorkers.add(1, ordering: .relaxed).newValue > Self.maxConcurrentRequests {
            runningWorkers.subtract(1, ordering: .relaxed)
            _ = unregister(token)
            sendResponse(request.id, .failure(MethodError(.busy, "\(Self.maxConcurrentRequests) requests of this connection are in progress; wait for one to finish")))
            return
        }
        let started = WorkerPool.shared.run { [self] in
            let call = core.running.begin(request, host: host)
            let result = Result { () throws(MethodError) -> JSON in try perform(request, token) }
            core.running.end(call)
            // Counted out before the response goes, so a client that sends
            // its next request on reading it is not refused.
            runningWorkers.subtract(1, ordering: .relaxed)
            if request.method == .subscribe, case .success(let r) = result, let id = r["subscription"]?.int64Value {
                // Its events were held back so that they follow the response.
                core.router.start(id) { complete(token, result) }
            } else {
                _ = complete(token, result)
            }
        }
        if !started {
            runningWorkers.subtract(1, ordering: .relaxed)
            _ = complete(token, .failure(MethodError(.internalError, "the app could not start a thread for the request")))
        }
    }

    /// Removes a request from the table; false when `cancel` already did.
    private func unregister(_ token: RequestToken) -> Bool {
        requests.withLock { table in
            guard table[token.id] === token else { return false }
            table[token.id] = nil
            return true
        }
    }

    /// Sends a finished request's response unless it was cancelled; true when sent.
    private func complete(_ token: RequestToken, _ result: Result<JSON, MethodError>) -> Bool {
        guard unregister(token) else { return false }
        sendResponse(token.id, result)
        return true
    }

    /// `cancel`: answers the request with `cancelled` now; its worker's result will be dropped.
    func cancel(_ id: RequestID) -> Bool {
        guard let token = requests.withLock({ $0.removeValue(forKey: id) }) else { return false }
        token.cancel()
        sendResponse(id, .failure(MethodError(.cancelled, "cancelled by the client")))
        return true
    }

    // MARK: questions

    /// pincer_call_t.ask for a shell request whose client answers: sends an
    /// "ask" notification and waits for the `answer`; nil when the request
    /// is cancelled or the client goes first.
    func ask(_ token: RequestToken, _ question: String) -> String? {
        guard !token.isCancelled else { return nil }
        questions.withLock { $0[token.id] = .some(nil) }
        defer { _ = questions.withLock { $0.removeValue(forKey: token.id) } }
        push(ControlProtocol.notification(.ask, .object([("id", token.id.json), ("question", .string(question))])).serializedBytes(), .reply)
        while !token.isCancelled && !ended.load(ordering: .relaxed) {
            // A person answers: polling every 20 ms costs nothing they notice.
            if case .some(.some(let answer)) = questions.withLock({ $0[token.id] }) { return answer }
            usleep(20_000)
        }
        return nil
    }

    /// `answer`: hands `text` to the question request `id` waits on.
    func answer(_ id: RequestID, _ text: String?) -> Bool {
        questions.withLock { table in
            guard case .some(.none) = table[id] else { return false }
            table[id] = .some(.some(text))
            return true
        }
    }

    // MARK: sending

    private func sendResponse(_ id: RequestID, _ result: Result<JSON, MethodError>) {
        let message: JSON
        switch result {
        case .success(let value): message = ControlProtocol.response(id: id.json, result: value)
        case .failure(let e): message = ControlProtocol.error(id: id.json, e.code, e.message, data: e.data)
        }
        var bytes = message.serializedBytes()
        if bytes.count > maxMessageBytes {
            bytes = ControlProtocol.error(id: id.json, .tooLarge, "the response is \(bytes.count) bytes, more than the limit of \(maxMessageBytes)").serializedBytes()
        }
        push(bytes, .reply)
    }

    private func sendReply(_ message: JSON) { push(message.serializedBytes(), .reply) }

    /// An event notification; dropped (and counted) when it does not fit.
    func sendEvent(_ params: JSON) {
        let bytes = ControlProtocol.notification(.event, params).serializedBytes()
        guard bytes.count <= maxMessageBytes else { return countDroppedEvent() }
        push(bytes, .event)
    }

    /// An event that was never queued: reported in the next "dropped" notice.
    func countDroppedEvent() { queue.countDropped() }

    /// Output of a running request, split when one message would be too long.
    func sendOutput(_ token: RequestToken, stream: String, text: String) {
        guard !token.isCancelled, !text.isEmpty else { return }
        let bytes = ControlProtocol.notification(.output, .object([("id", token.id.json), ("stream", .string(stream)), ("text", .string(text))])).serializedBytes()
        if bytes.count <= maxMessageBytes {
            push(bytes, .reply)
        } else if text.count > 1 {
            let middle = text.index(text.startIndex, offsetBy: text.count / 2)
            sendOutput(token, stream: stream, text: String(text[..<middle]))
            sendOutput(token, stream: stream, text: String(text[middle...]))
        }
    }

    private func push(_ bytes: [UInt8], _ kind: OutboundQueue.Kind) {
        // .overflow: the queue closed itself (over budget, or the socket
        // failed) and woke the poller, which disconnects the client.
        _ = queue.push(bytes + [UInt8(ascii: "\n")], kind)
    }
}
