import CPincerSDK

/// Why an embedding call failed. `description` is the whole message, naming
/// the service and passing on the plugin's own `last_error` text.
public struct PincerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// `Pincer.start` while Pincer runs with different options.
        case alreadyRunning
        /// An option was malformed (empty app name, bad allow-list entry...).
        case invalidOptions
        /// The settings store in the state directory could not be opened.
        case stateDirectory
        /// The control socket could not be started.
        case controlSocket
        /// The service's plugin is not loaded (not found, refused, or left
        /// out by the allow-list), or its table is unusable.
        case unavailable
        /// Pincer was stopped; start it again for a new instance.
        case stopped
        /// The service refused the call; `status` is its pincer_status_t.
        case service(status: UInt32)
    }

    public let kind: Kind
    public let message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The C status this error maps to (what pincer/embed.h returns).
    public var status: pincer_status_t {
        switch kind {
        case .alreadyRunning: PINCER_DUPLICATE
        case .invalidOptions: PINCER_INVALID_ARGUMENT
        case .stateDirectory, .controlSocket, .stopped: PINCER_FAILED
        case .unavailable: PINCER_NOT_FOUND
        case .service(let status): status
        }
    }

    /// The name of a pincer_status_t, for messages.
    static func statusName(_ status: pincer_status_t) -> String {
        switch status {
        case PINCER_OK: "ok"
        case PINCER_FAILED: "failed"
        case PINCER_INVALID_ARGUMENT: "invalid argument"
        case PINCER_NOT_FOUND: "not found"
        case PINCER_DUPLICATE: "duplicate"
        case PINCER_UNSUPPORTED: "unsupported"
        case PINCER_CANCELLED: "cancelled"
        default: "status \(status)"
        }
    }
}
