import PincerControl
import PincerJSON

/// What one client is owed, in order, bounded by `limit` messages
/// (Protocol.swift, FLOW CONTROL). Pushing never blocks: the app's threads
/// push (events arrive on the emitting thread) and must never wait for a
/// slow client. The client's writer thread pops.
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
        /// A reply did not fit and no event could make room: disconnect.
        case overflow
        case closed
    }

    private struct Item {
        let kind: Kind
        let bytes: [UInt8]
    }

    let limit: Int
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var items: [Item] = []
    private var head = 0
    private var droppedEvents = 0
    private var isClosed = false
    /// Closed, but what is queued still goes out (the client closed its side).
    private var isDraining = false

    init(limit: Int) { self.limit = max(1, limit) }

    private var count: Int { items.count - head }

    func push(_ bytes: [UInt8], _ kind: Kind) -> Outcome {
        lock.withLock {
            if isClosed || isDraining { return .closed }
            if count >= limit {
                guard kind == .reply else {
                    droppedEvents += 1
                    return .dropped
                }
                // Room for a reply: drop the newest queued event, if any.
                guard let newest = items[head...].lastIndex(where: { $0.kind == .event }) else { return .overflow }
                items.remove(at: newest)
                droppedEvents += 1
            }
            items.append(Item(kind: kind, bytes: bytes))
            lock.broadcast()
            return .queued
        }
    }

    /// Counts an event that was never queued (longer than the message limit).
    func countDropped() {
        lock.withLock {
            droppedEvents += 1
            reportDropped()
        }
    }

    /// Queues the "dropped" notice when there is room for it; call under `lock`.
    private func reportDropped() {
        guard droppedEvents > 0, count < limit, !isClosed, !isDraining else { return }
        let notice = ControlProtocol.notification(.dropped, .object([("count", .int(Int64(droppedEvents)))]))
        items.append(Item(kind: .reply, bytes: notice.serializedBytes() + [UInt8(ascii: "\n")]))
        droppedEvents = 0
        lock.broadcast()
    }

    /// The next message, waiting for one; nil once the queue is closed (and
    /// drained, when closed with `drain`).
    func pop() -> [UInt8]? {
        lock.withLock {
            while count == 0 && !isClosed && !isDraining { lock.wait() }
            if isClosed || count == 0 { return nil }
            let item = items[head]
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            // Room again: tell the client what it missed, after what was queued before.
            reportDropped()
            return item.bytes
        }
    }

    /// Stops the queue: `pop` returns nil at once, or after what is queued
    /// when `drain` is true.
    func close(drain: Bool = false) {
        lock.withLock {
            if drain { isDraining = true } else { isClosed = true }
            lock.broadcast()
        }
    }
}
