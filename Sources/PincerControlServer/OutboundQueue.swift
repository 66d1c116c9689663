import PincerControl
import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// What one client is owed, in order, bounded by `budget` bytes
/// (Protocol.swift, FLOW CONTROL), and the writing of it to the client's
/// non-blocking socket. Pushing never blocks: the app's threads push
/// (events arrive on the emitting thread) and must never wait for a slow
/// client. A push writes what the socket takes at once; the rest waits for
/// the poller, which calls `flush` when the socket has room.
final class OutboundQueue: @unchecked Sendable {
    enum Kind {
        /// May be dropped when the queue is full; counted and reported.
        case event
        /// Responses, output and notices: dropping one would break the
        /// client's view, so a queue full of them ends the connection.
        case reply
    }

    enum Outcome {
        case queued
        /// An event that did not fit: counted for the next "dropped" notice.
        case dropped
        /// A reply did not fit and no event could make room, or the socket
        /// failed: the connection is over (the queue is closed).
        case overflow
        case closed
    }

    private struct Item {
        let kind: Kind
        let bytes: [UInt8]
    }

    /// The most bytes queued at once (what is being written included).
    let budget: Int
    private let fd: Int32
    /// Called (outside the lock) when bytes are left that the socket did
    /// not take, or the queue closed: the poller must look at this client.
    private let wake: @Sendable () -> Void
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var items: [Item] = []
    private var head = 0
    /// Bytes of items[head] already written.
    private var offset = 0
    private var bytes = 0
    private var droppedEvents = 0
    private var isClosed = false
    /// No more pushes; what is queued still goes out (the client closed its side).
    private var isDraining = false
    /// `fd` was closed by the poller: never write to the number again.
    private var fdGone = false
    /// The poller was told there is something to write and not yet answered.
    private var pending = false

    init(fd: Int32, budget: Int, wake: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.budget = max(1, budget)
        self.wake = wake
    }

    /// Bytes queued now (for tests and the byte budget).
    var queuedBytes: Int { lock.withLock { bytes } }

    /// Whether bytes wait for the socket to take them.
    var wantsWrite: Bool { lock.withLock { bytes > 0 && !isClosed && !fdGone } }

    /// Whether nothing more will be written: closed, or drained after the client's end.
    var isFinished: Bool { lock.withLock { isClosed || fdGone || (isDraining && bytes == 0) } }

    func push(_ message: [UInt8], _ kind: Kind) -> Outcome {
        let (outcome, wakePoller) = lock.withLock { () -> (Outcome, Bool) in
            if isClosed || isDraining || fdGone { return (.closed, false) }
            if bytes + message.count > budget {
                guard kind == .reply else {
                    droppedEvents += 1
                    return (.dropped, false)
                }
                // Room for a reply: drop the newest queued events (never one partly written).
                var i = items.count - 1
                while bytes + message.count > budget && i >= head + (offset > 0 ? 1 : 0) {
                    if items[i].kind == .event {
                        bytes -= items[i].bytes.count
                        items.remove(at: i)
                        droppedEvents += 1
                    }
                    i -= 1
                }
                if bytes + message.count > budget {
                    // Full of replies it does not read: holding more would only grow the app.
                    discard()
                    return (.overflow, true)
                }
            }
            items.append(Item(kind: kind, bytes: message))
            bytes += message.count
            let failed = !write()
            return (failed ? .overflow : .queued, failed || notePending())
        }
        if wakePoller { wake() }
        return outcome
    }

    /// Counts an event that was never queued (longer than the message limit).
    func countDropped() {
        let wakePoller = lock.withLock { () -> Bool in
            droppedEvents += 1
            if isClosed || isDraining || fdGone { return false }
            reportDropped()
            return !write() || notePending()
        }
        if wakePoller { wake() }
    }

    /// Writes what the socket takes (the poller calls this when it has
    /// room); false when the connection is over.
    @discardableResult
    func flush() -> Bool {
        lock.withLock {
            pending = false
            if isClosed || fdGone { return false }
            guard write() else { return false }
            _ = notePending()
            return true
        }
    }

    /// Stops the queue and frees what it holds: nothing more is written.
    func close() {
        let first = lock.withLock { () -> Bool in
            defer { discard() }
            return !isClosed
        }
        if first { wake() }
    }

    /// No more pushes; what is queued still goes out.
    func drain() { lock.withLock { isDraining = true } }

    /// The poller closed the descriptor: never write to that number again.
    func descriptorClosed() {
        lock.withLock {
            fdGone = true
            discard()
        }
    }

    // MARK: under `lock`

    /// Sends queued bytes until the socket would block; false when it failed (closed then).
    private func write() -> Bool {
        while head < items.count {
            let item = items[head]
            let n = item.bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            if n <= 0 {
                discard()
                return false
            }
            offset += n
            if offset < item.bytes.count { continue }
            bytes -= item.bytes.count
            offset = 0
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            // Room again: tell the client what it missed, after what was queued before.
            reportDropped()
        }
        // Empty: give the memory back rather than keep the largest backlog's capacity.
        items = []
        head = 0
        return true
    }

    /// Whether the poller must now be told to wait for room (bytes left, not told yet).
    private func notePending() -> Bool {
        guard bytes > 0, !pending else { return false }
        pending = true
        return true
    }

    /// Queues the "dropped" notice when there is room for it.
    private func reportDropped() {
        guard droppedEvents > 0, !isClosed, !isDraining, !fdGone else { return }
        let notice = ControlProtocol.notification(.dropped, .object([("count", .int(Int64(droppedEvents)))])).serializedBytes() + [UInt8(ascii: "\n")]
        guard bytes + notice.count <= budget else { return }
        items.append(Item(kind: .reply, bytes: notice))
        bytes += notice.count
        droppedEvents = 0
    }

    private func discard() {
        isClosed = true
        items = []
        head = 0
        offset = 0
        bytes = 0
    }
}
