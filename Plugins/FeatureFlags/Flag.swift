import PincerPluginKit

/// The four flag types of flags.h.
enum FlagType: String, CaseIterable, Sendable {
    case bool, int, double, string

    var sdk: pincer_flag_type_t {
        switch self {
        case .bool: PINCER_FLAG_BOOL
        case .int: PINCER_FLAG_INT
        case .double: PINCER_FLAG_DOUBLE
        case .string: PINCER_FLAG_STRING
        }
    }
}

/// A typed flag value.
enum FlagValue: Equatable, Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)

    var type: FlagType {
        switch self {
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        }
    }

    /// The text form people type and the menu shows.
    var text: String {
        switch self {
        case .bool(let b): b ? "true" : "false"
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .string(let s): s
        }
    }

    var json: JSON {
        switch self {
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        }
    }

    /// Parses text typed by a person as `type`.
    static func parse(_ text: String, as type: FlagType) -> Result<FlagValue, FlagError> {
        switch type {
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .success(.bool(true))
            case "false", "0", "no", "off": return .success(.bool(false))
            default: return .failure(.invalid("'\(text)' is not a bool (true/false, 1/0, yes/no, on/off)"))
            }
        case .int:
            guard let i = Int64(text) else { return .failure(.invalid("'\(text)' is not a 64-bit integer")) }
            return .success(.int(i))
        case .double:
            guard let d = Double(text), d.isFinite else { return .failure(.invalid("'\(text)' is not a finite number")) }
            return .success(.double(d))
        case .string:
            return .success(.string(text))
        }
    }

    /// Reads a JSON value as `type`: booleans, integers (exact), numbers, strings.
    static func from(_ json: JSON, as type: FlagType) -> FlagValue? {
        switch (type, json) {
        case (.bool, .bool(let b)): .bool(b)
        case (.int, _): json.int64Value.map(FlagValue.int)
        case (.double, _): json.doubleValue.flatMap { $0.isFinite ? .double($0) : nil }
        case (.string, .string(let s)): .string(s)
        default: nil
        }
    }
}

/// Why a resolution produced its value (flags.h reasons).
enum Reason: Sendable {
    case remote, override, notRegistered, typeMismatch, error

    var sdk: pincer_flag_reason_t {
        switch self {
        case .remote: PINCER_FLAG_REASON_REMOTE
        case .override: PINCER_FLAG_REASON_OVERRIDE
        case .notRegistered: PINCER_FLAG_REASON_DEFAULT
        case .typeMismatch: PINCER_FLAG_REASON_TYPE_MISMATCH
        case .error: PINCER_FLAG_REASON_ERROR
        }
    }

    var name: String { String(cString: pincer_flag_reason_name(sdk)) }
}

/// A registered flag: its remote value and, maybe, a local override.
struct Flag: Sendable {
    let key: String
    var remote: FlagValue
    var summary: String
    var override: FlagValue?
    /// Registered by code or a command in this process (not only loaded from the store).
    var registeredHere: Bool

    var type: FlagType { remote.type }

    func resolved(overridesEnabled: Bool) -> (FlagValue, Reason) {
        if overridesEnabled, let override { return (override, .override) }
        return (remote, .remote)
    }
}

/// A refused flag operation, mapped to a status at the C boundary.
enum FlagError: StatusError {
    case invalid(String)
    case notFound(String)
    case conflict(String)
    case storage(String)

    var description: String {
        switch self {
        case .invalid(let m), .notFound(let m), .conflict(let m), .storage(let m): m
        }
    }

    var status: pincer_status_t {
        switch self {
        case .invalid: PINCER_INVALID_ARGUMENT
        case .notFound: PINCER_NOT_FOUND
        case .conflict: PINCER_DUPLICATE
        case .storage: PINCER_FAILED
        }
    }
}

enum FlagKey {
    static let reserved: Set<String> = ["overrides-enabled", "clear-all"]

    /// Keys double as menu entry ids, so they follow the entry id rule.
    static func check(_ key: String) -> FlagError? {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), bytes.count <= 64,
              bytes.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                  || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            return .invalid("flag key '\(key)' is not [a-z][a-z0-9_-]* of at most 64 bytes")
        }
        if reserved.contains(key) { return .invalid("flag key '\(key)' is reserved for the flags menu") }
        return nil
    }
}
