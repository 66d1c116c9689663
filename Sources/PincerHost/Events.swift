/// Topic-based events between plugins and the host. Delivery is synchronous
/// on the emitting thread, outside any host lock, so a subscriber may emit
/// or subscribe in turn.
public final class EventBus: @unchecked Sendable {
    public typealias Handler = @Sendable (_ topic: String, _ payload: String?) -> Void

    private struct Subscription {
        let token: UInt64
        let topic: String
        let owner: String
        let handler: Handler
    }

    private let lock = Lock()
    private var subscriptions: [Subscription] = []
    private var nextToken: UInt64 = 1
    /// Run before each delivery: the host loads plugins known from the
    /// registry that subscribed to the topic, so they hear it.
    private var preparation: (@Sendable (String) -> Void)?

    func prepareDelivery(_ body: @escaping @Sendable (String) -> Void) {
        lock.withLock { preparation = body }
    }

    /// The topics a plugin subscribed to, in order, without repeats.
    func topics(owner: String) -> [String] {
        lock.withLock {
            var seen = Set<String>()
            return subscriptions.filter { $0.owner == owner && seen.insert($0.topic).inserted }.map(\.topic)
        }
    }

    /// Subscribes to `topic`, or to every topic with "*". Returns the token for unsubscribe.
    public func subscribe(topic: String, owner: String = "host", handler: @escaping Handler) -> UInt64 {
        lock.withLock {
            let token = nextToken
            nextToken += 1
            subscriptions.append(Subscription(token: token, topic: topic, owner: owner, handler: handler))
            return token
        }
    }

    public func unsubscribe(_ token: UInt64) {
        lock.withLock { subscriptions.removeAll { $0.token == token } }
    }

    /// Drops every subscription of a plugin (used when its init fails or it shuts down).
    func unsubscribeAll(owner: String) {
        lock.withLock { subscriptions.removeAll { $0.owner == owner } }
    }

    public func emit(topic: String, payload: String?) {
        lock.withLock { preparation }?(topic)
        let targets = lock.withLock { subscriptions.filter { $0.topic == topic || $0.topic == "*" } }
        for s in targets { s.handler(topic, payload) }
    }
}

public enum LogLevel: Int, Sendable, Comparable, CustomStringConvertible {
    case debug = 0, info, warning, error

    init(sdk: UInt32) { self = LogLevel(rawValue: Int(min(sdk, 3))) ?? .info }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    public var description: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

public struct LogRecord: Sendable {
    public let level: LogLevel
    /// The plugin id, or "pincer" for the host itself.
    public let source: String
    public let message: String

    public init(level: LogLevel, source: String, message: String) {
        self.level = level
        self.source = source
        self.message = message
    }
}
