import PincerControl
import PincerJSON

/// A request id: JSON-RPC allows strings and numbers; integers only here,
/// since a fractional id cannot be matched reliably.
enum RequestID: Hashable, Sendable {
    case int(Int64)
    case string(String)

    init?(_ json: JSON) {
        switch json {
        case .string(let s): self = .string(s)
        case .int(let i): self = .int(i)
        case .uint(let u): guard let i = Int64(exactly: u) else { return nil }; self = .int(i)
        default: return nil
        }
    }

    var json: JSON {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }
}

/// A method failed: a JSON-RPC error object.
struct MethodError: Error {
    let code: ControlProtocol.ErrorCode
    let message: String
    var data: JSON?

    init(_ code: ControlProtocol.ErrorCode, _ message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    static func params(_ message: String) -> MethodError { MethodError(.invalidParams, message) }
}

/// A well-formed request.
struct Request: Sendable {
    let id: RequestID
    let method: ControlProtocol.Method
    let params: Params

    /// Checks one line; a failure is the error response to send (id null
    /// when the id could not be read).
    static func parse(_ line: [UInt8]) -> Result<Request, Rejection> {
        let message: JSON
        do { message = try JSON.parse(bytes: line) } catch {
            return .failure(Rejection(id: .null, MethodError(.parseError, "parse error: \(error)")))
        }
        guard message.objectValue != nil else {
            let why = message.arrayValue != nil ? "batches (arrays) are not supported" : "a request is a JSON object, not \(message.typeName)"
            return .failure(Rejection(id: .null, MethodError(.invalidRequest, why)))
        }
        func invalid(_ id: JSON, _ why: String) -> Result<Request, Rejection> { .failure(Rejection(id: id, MethodError(.invalidRequest, why))) }
        guard let rawID = message["id"] else {
            return invalid(.null, "the request has no id (every request is answered, so it needs one)")
        }
        guard let id = RequestID(rawID) else {
            return invalid(.null, "id must be a string or an integer, not \(rawID.serialized())")
        }
        guard message["jsonrpc"] == .string("2.0") else { return invalid(id.json, "\"jsonrpc\" must be \"2.0\"") }
        guard let name = message["method"]?.stringValue else { return invalid(id.json, "\"method\" (a string) is missing") }
        var params: [(String, JSON)] = []
        if let p = message["params"] {
            guard let object = p.objectValue else { return invalid(id.json, "params must be an object, not \(p.typeName)") }
            params = object
        }
        guard let method = ControlProtocol.Method(rawValue: name) else {
            let known = ControlProtocol.Method.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(Rejection(id: id.json, MethodError(.methodNotFound, "no method '\(name)' (methods: \(known))")))
        }
        return .success(Request(id: id, method: method, params: Params(params)))
    }

    struct Rejection: Error {
        let id: JSON
        let error: MethodError
        init(id: JSON, _ error: MethodError) { self.id = id; self.error = error }
    }
}

/// A request's params object, with checked access that names the field.
struct Params: Sendable {
    let members: [(String, JSON)]

    init(_ members: [(String, JSON)]) { self.members = members }

    subscript(name: String) -> JSON? { members.first { $0.0 == name }?.1 }

    func string(_ name: String) throws(MethodError) -> String {
        guard let value = self[name] else { throw .params("params.\(name) is missing (a string)") }
        guard let s = value.stringValue else { throw .params("params.\(name) must be a string, not \(value.typeName)") }
        return s
    }

    func stringArray(_ name: String) throws(MethodError) -> [String] {
        guard let value = self[name] else { throw .params("params.\(name) is missing (an array of strings)") }
        guard let items = value.arrayValue else { throw .params("params.\(name) must be an array of strings, not \(value.typeName)") }
        var strings: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.stringValue else { throw .params("params.\(name)[\(i)] must be a string, not \(item.typeName)") }
            strings.append(s)
        }
        return strings
    }

    func int(_ name: String) throws(MethodError) -> Int64 {
        guard let value = self[name] else { throw .params("params.\(name) is missing (an integer)") }
        guard let i = value.int64Value else { throw .params("params.\(name) must be an integer, not \(value.serialized())") }
        return i
    }
}
