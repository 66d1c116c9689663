import PincerControl
import PincerHost
import Synchronization

/// A subscription's topic: "*" (everything), "prefix.*" (every topic that
/// starts with "prefix."), or one exact topic.
struct TopicPattern: Sendable, Equatable {
    let text: String

    func matches(_ topic: String) -> Bool {
        if text == "*" { return true }
        if text.hasSuffix(".*") { return topic.hasPrefix(text.dropLast()) }
        return topic == text
    }

    /// The short name of the plugin whose entries make the snapshot; nil for "*" (every plugin).
    var pluginShortName: String? {
        if text == "*" { return nil }
        return String(text.prefix { $0 != "." })
    }
}

/// Hears every host event once (one "*" subscription on the bus), numbers
/// it, and hands it to the client subscriptions whose patterns match.
/// Numbering and queueing happen under one lock, so every client receives
/// events in `seq` order; queueing never blocks (OutboundQueue).
final class EventRouter: Sendable {
    private struct Subscription {
        let id: Int64
        let patterns: [TopicPattern]
        let client: ClientConnection
        /// Events that arrived before the subscribe response was queued;
        /// nil once released. Holding them keeps "response, then events".
        var held: [JSON]? = []
    }

    private struct State {
        /// The number of the last event heard.
        var seq: Int64 = 0
        var lastSubscriptionID: Int64 = 0
        var subscriptions: [Subscription] = []
    }

    private let state = Mutex(State())
    /// Events held for one subscription before it is released, at most.
    private let limit: Int

    init(heldLimit: Int) { limit = max(1, heldLimit) }

    /// Starts hearing the bus's events; returns the bus token to unsubscribe with.
    func listen(to bus: EventBus) -> UInt64 {
        bus.subscribe(topic: "*", owner: "pincer.control") { [self] topic, payload in deliver(topic, payload) }
    }

    private func deliver(_ topic: String, _ payload: String?) {
        state.withLock { s in
            s.seq += 1
            guard s.subscriptions.contains(where: { $0.patterns.contains { $0.matches(topic) } }) else { return }
            // A payload that is JSON goes as JSON; anything else as a string.
            let value: JSON = payload.map { (try? JSON.parse($0)) ?? .string($0) } ?? .null
            for i in s.subscriptions.indices where s.subscriptions[i].patterns.contains(where: { $0.matches(topic) }) {
                let t = s.subscriptions[i]
                let event = JSON.object([("subscription", .int(t.id)), ("seq", .int(s.seq)), ("topic", .string(topic)), ("payload", value)])
                if t.held == nil {
                    t.client.sendEvent(event)
                } else if t.held!.count < limit {
                    s.subscriptions[i].held!.append(event)
                } else {
                    t.client.countDroppedEvent()
                }
            }
        }
    }

    /// Answers a new subscription and starts its events: `answer` queues
    /// the subscribe response, then the events held since it started go,
    /// then every event as it comes. One lock, so no event can come between
    /// (or before) the response. When `answer` returns false (the request
    /// was cancelled) the subscription ends instead.
    func start(_ id: Int64, answer: () -> Bool) {
        state.withLock { s in
            guard let i = s.subscriptions.firstIndex(where: { $0.id == id }) else { return }
            guard answer() else {
                s.subscriptions.remove(at: i)
                return
            }
            for event in s.subscriptions[i].held ?? [] { s.subscriptions[i].client.sendEvent(event) }
            s.subscriptions[i].held = nil
        }
    }

    /// Adds a subscription; returns its id and the number of the last event before it.
    func subscribe(_ client: ClientConnection, _ patterns: [TopicPattern]) -> (id: Int64, seq: Int64) {
        state.withLock { s in
            s.lastSubscriptionID += 1
            s.subscriptions.append(Subscription(id: s.lastSubscriptionID, patterns: patterns, client: client))
            return (s.lastSubscriptionID, s.seq)
        }
    }

    /// Removes a subscription of `client`; false when it has none with this id.
    func unsubscribe(_ id: Int64, of client: ClientConnection) -> Bool {
        state.withLock { s in
            guard let i = s.subscriptions.firstIndex(where: { $0.id == id && $0.client === client }) else { return false }
            s.subscriptions.remove(at: i)
            return true
        }
    }

    func removeAll(of client: ClientConnection) {
        state.withLock { s in s.subscriptions.removeAll { $0.client === client } }
    }

    func removeAll() {
        state.withLock { s in s.subscriptions.removeAll() }
    }
}
