// The rules document: what is stored in the state directory, exported and
// imported. Strict on the way in: an unknown key, a wrong type or a figure out
// of range refuses the whole document, naming where (line and column for
// JSON syntax, the rule's index and id and the key for the rest), so a typo
// never silently turns a rule into another.
import PincerJSON
import PincerPluginKit

/// Interception rules with their master switch and global conditioning.
public struct RulesDocument: Sendable, Equatable {
    public static let format = "pincer.net-rules"
    public static let version = 1

    /// The master switch: off, no rule applies (they are kept).
    public var enabled = true
    /// Conditioning for every request no `delay` rule matches; nil for none.
    public var conditioning: Conditioning?
    public var rules: [InterceptRule] = []
    /// The id the next added rule gets (ids are never reused).
    public var nextID = 1

    public init(enabled: Bool = true, conditioning: Conditioning? = nil, rules: [InterceptRule] = [], nextID: Int = 1) {
        self.enabled = enabled
        self.conditioning = conditioning
        self.rules = rules
        self.nextID = nextID
    }

    /// Adds `rule` at the end (or at `position`, 1-based) with a new id; returns the id.
    @discardableResult
    public mutating func add(_ rule: InterceptRule, at position: Int? = nil) -> String {
        var rule = rule
        rule.id = String(nextID)
        nextID += 1
        let at = position.map { min(max($0 - 1, 0), rules.count) } ?? rules.count
        rules.insert(rule, at: at)
        return rule.id
    }

    public func index(of id: String) -> Int? { rules.firstIndex { $0.id == id } }

    // MARK: JSON

    public var json: JSON {
        .object([
            ("format", .string(RulesDocument.format)), ("version", .int(Int64(RulesDocument.version))),
            ("enabled", .bool(enabled)), ("conditioning", conditioning.map(RulesCodec.json) ?? .null),
            ("nextId", .int(Int64(nextID))), ("rules", .array(rules.map(RulesCodec.json))),
        ])
    }

    /// The document in `text`, or why it is refused.
    public static func decode(_ text: String) -> Result<RulesDocument, RulesError> {
        let root: JSON
        do { root = try JSON.parse(text) } catch { return .failure(RulesError(error.description)) }
        do { return .success(try RulesCodec.document(root)) } catch let error as RulesError { return .failure(error) } catch {
            return .failure(RulesError("\(error)"))
        }
    }
}

/// Why a rules document or rule is refused: where, and what was wrong.
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// JSON for rules and their parts, both ways.
public enum RulesCodec {
    // MARK: reading

    static func document(_ root: JSON) throws -> RulesDocument {
        let o = try Fields(root, at: "the document")
        let format = try o.string("format")
        guard format == RulesDocument.format else {
            throw RulesError("the document's format is '\(format ?? "(none)")', not '\(RulesDocument.format)'")
        }
        guard let version = try o.int("version"), version == RulesDocument.version else {
            throw RulesError("the document's version is not \(RulesDocument.version) (this Pincer reads version \(RulesDocument.version))")
        }
        var d = RulesDocument()
        d.enabled = try o.bool("enabled") ?? true
        if let c = o["conditioning"], c != .null { d.conditioning = try conditioning(Fields(c, at: "conditioning")) }
        let rules = try o.array("rules") ?? []
        var ids = Set<String>()
        var highest = 0
        for (i, r) in rules.enumerated() {
            let rule = try self.rule(r, at: "rules[\(i)]")
            guard !rule.id.isEmpty else { throw RulesError("rules[\(i)]: no id") }
            guard ids.insert(rule.id).inserted else { throw RulesError("rules[\(i)]: id '\(rule.id)' is used twice") }
            highest = max(highest, Int(rule.id) ?? 0)
            d.rules.append(rule)
        }
        d.nextID = max(try o.int("nextId") ?? 1, highest + 1)
        try o.rejectUnknown(["format", "version", "enabled", "conditioning", "nextId", "rules"])
        return d
    }

    /// One rule from JSON (`at` names it in errors). An id is optional here
    /// (a rule to add gets one); `RulesDocument.decode` requires it.
    public static func rule(_ json: JSON, at place: String) throws -> InterceptRule {
        var o = try Fields(json, at: place)
        let id = try o.string("id") ?? ""
        if !id.isEmpty { o.place = "\(place) (id \(id))" }
        guard let kindName = try o.string("kind") else { throw RulesError("\(o.place): no kind (one of \(kinds))") }
        guard let kind = RuleKind(rawValue: kindName) else { throw RulesError("\(o.place): unknown kind '\(kindName)' (one of \(kinds))") }
        let common = ["id", "title", "enabled", "match", "kind", "origin"]
        let action: RuleAction
        switch kind {
        case .mock:
            let status = try o.int("status") ?? 200
            let headers = try (o.array("headers") ?? []).enumerated().map { i, h in
                let f = try Fields(h, at: "\(o.place).headers[\(i)]")
                guard let name = try f.string("name"), let value = try f.string("value") else {
                    throw RulesError("\(f.place): a header needs a name and a value")
                }
                try f.rejectUnknown(["name", "value"])
                return Header(name, value)
            }
            let text = try o.string("body"), base64 = try o.string("bodyBase64"), file = try o.string("bodyFile")
            guard [text, base64, file].compactMap({ $0 }).count <= 1 else {
                throw RulesError("\(o.place): give at most one of body, bodyBase64 and bodyFile")
            }
            var body = MockBody.none
            if let text { body = .text(text) }
            if let base64 {
                guard let bytes = Base64.decode(base64) else { throw RulesError("\(o.place).bodyBase64 is not base64") }
                body = .bytes(bytes)
            }
            if let file { body = .file(file) }
            action = .mock(status: status, headers: headers, body: body)
            try o.rejectUnknown(common + ["status", "headers", "body", "bodyBase64", "bodyFile"])
        case .mapLocal:
            action = .mapLocal(path: try o.string("file") ?? "")
            try o.rejectUnknown(common + ["file"])
        case .mapRemote:
            action = .mapRemote(to: try o.string("to") ?? "", stripPrefix: try o.string("stripPrefix") ?? "")
            try o.rejectUnknown(common + ["to", "stripPrefix"])
        case .rewrite:
            let ops = try (o.array("operations") ?? []).enumerated().map { i, op in try operation(op, at: "\(o.place).operations[\(i)]") }
            action = .rewrite(ops)
            try o.rejectUnknown(common + ["operations"])
        case .block:
            let name = try o.string("error") ?? NetworkFailure.offline.rawValue
            guard let failure = NetworkFailure(rawValue: name) else {
                throw RulesError("\(o.place): unknown error '\(name)' (one of \(NetworkFailure.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            action = .block(failure)
            try o.rejectUnknown(common + ["error"])
        case .delay:
            action = .delay(try conditioning(o))
        case .breakpoint:
            action = .breakpoint(request: try o.bool("request") ?? true, response: try o.bool("response") ?? false,
                                 timeoutSeconds: try o.int("timeoutSeconds") ?? 60)
            try o.rejectUnknown(common + ["request", "response", "timeoutSeconds"])
        }
        let rule = InterceptRule(id: id, title: try o.string("title") ?? "", enabled: try o.bool("enabled") ?? true,
                                 match: try o.string("match") ?? "", action: action, origin: try o.string("origin") ?? "")
        if let problem = rule.problem { throw RulesError("\(o.place): \(problem)") }
        return rule
    }

    static var kinds: String { RuleKind.allCases.map(\.rawValue).joined(separator: ", ") }

    static let conditioningKeys = ["preset", "latencyMs", "jitterMs", "downloadBytesPerSecond", "uploadBytesPerSecond", "failureRate", "offline"]

    /// A preset, optionally with figures that override its own.
    static func conditioning(_ o: Fields) throws -> Conditioning {
        var c = Conditioning()
        if let name = try o.string("preset"), !name.isEmpty {
            guard let preset = Conditioning.preset(name) else {
                throw RulesError("\(o.place): unknown preset '\(name)' (one of \(Conditioning.presets.map(\.name).joined(separator: ", ")))")
            }
            c = preset
        }
        if let v = try o.double("latencyMs") { c.latencyMs = v }
        if let v = try o.double("jitterMs") { c.jitterMs = v }
        if let v = try o.int("downloadBytesPerSecond") { c.downloadBytesPerSecond = Int64(v) }
        if let v = try o.int("uploadBytesPerSecond") { c.uploadBytesPerSecond = Int64(v) }
        if let v = try o.double("failureRate") { c.failureRate = v }
        if let v = try o.bool("offline") { c.offline = v }
        if let problem = c.problem { throw RulesError("\(o.place): \(problem)") }
        let parent = o.place.hasPrefix("rules[") ? ["id", "title", "enabled", "match", "kind", "origin"] : []
        try o.rejectUnknown(parent + conditioningKeys)
        return c
    }

    public static func operation(_ json: JSON, at place: String) throws -> RewriteOperation {
        let o = try Fields(json, at: place)
        guard let name = try o.string("op") else { throw RulesError("\(place): no op") }
        func side(default fallback: ExchangeSide) throws -> ExchangeSide {
            guard let text = try o.string("side") else { return fallback }
            guard let side = ExchangeSide(rawValue: text) else { throw RulesError("\(place): side '\(text)' is neither request nor response") }
            return side
        }
        func required(_ key: String) throws -> String {
            guard let value = try o.string(key) else { throw RulesError("\(place): \(name) needs \(key)") }
            return value
        }
        let op: RewriteOperation, keys: [String]
        switch name {
        case "set-header": op = .setHeader(try side(default: .response), name: try required("name"), value: try required("value")); keys = ["side", "name", "value"]
        case "add-header": op = .addHeader(try side(default: .response), name: try required("name"), value: try required("value")); keys = ["side", "name", "value"]
        case "remove-header": op = .removeHeader(try side(default: .response), name: try required("name")); keys = ["side", "name"]
        case "set-query": op = .setQuery(name: try required("name"), value: try required("value")); keys = ["name", "value"]
        case "remove-query": op = .removeQuery(name: try required("name")); keys = ["name"]
        case "status":
            guard let status = try o.int("status") else { throw RulesError("\(place): status needs status") }
            op = .status(status); keys = ["status"]
        case "replace-body":
            op = .replaceBody(try side(default: .response), find: try required("find"), regex: try o.bool("regex") ?? false, with: try o.string("with") ?? "")
            keys = ["side", "find", "regex", "with"]
        case "set-json":
            guard let value = o["value"] else { throw RulesError("\(place): set-json needs value") }
            op = .setJSON(try side(default: .response), path: try required("path"), value: value); keys = ["side", "path", "value"]
        case "remove-json": op = .removeJSON(try side(default: .response), path: try required("path")); keys = ["side", "path"]
        default:
            throw RulesError("\(place): unknown op '\(name)' (one of set-header, add-header, remove-header, set-query, remove-query, status, replace-body, set-json, remove-json)")
        }
        try o.rejectUnknown(["op"] + keys)
        if let problem = RewriteOperation.problem(op) { throw RulesError("\(place): \(problem)") }
        return op
    }

    // MARK: writing

    public static func json(_ rule: InterceptRule) -> JSON {
        var f: [(String, JSON)] = [("id", .string(rule.id)), ("title", .string(rule.title)), ("enabled", .bool(rule.enabled)),
                                   ("match", .string(rule.match)), ("kind", .string(rule.kind.rawValue))]
        if !rule.origin.isEmpty { f.append(("origin", .string(rule.origin))) }
        switch rule.action {
        case .mock(let status, let headers, let body):
            f.append(("status", .int(Int64(status))))
            f.append(("headers", .array(headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })))
            switch body {
            case .none: break
            case .text(let t): f.append(("body", .string(t)))
            case .bytes(let b): f.append(("bodyBase64", .string(Base64.encode(b))))
            case .file(let p): f.append(("bodyFile", .string(p)))
            }
        case .mapLocal(let path): f.append(("file", .string(path)))
        case .mapRemote(let to, let strip):
            f.append(("to", .string(to)))
            if !strip.isEmpty { f.append(("stripPrefix", .string(strip))) }
        case .rewrite(let ops): f.append(("operations", .array(ops.map(json))))
        case .block(let failure): f.append(("error", .string(failure.rawValue)))
        case .delay(let c):
            if case .object(let members) = json(c) { f += members }
        case .breakpoint(let request, let response, let timeout):
            f += [("request", .bool(request)), ("response", .bool(response)), ("timeoutSeconds", .int(Int64(timeout)))]
        }
        return .object(f)
    }

    public static func json(_ c: Conditioning) -> JSON {
        var f: [(String, JSON)] = []
        if !c.preset.isEmpty { f.append(("preset", .string(c.preset))) }
        f += [("latencyMs", .double(c.latencyMs)), ("jitterMs", .double(c.jitterMs)),
              ("downloadBytesPerSecond", .int(c.downloadBytesPerSecond)), ("uploadBytesPerSecond", .int(c.uploadBytesPerSecond)),
              ("failureRate", .double(c.failureRate)), ("offline", .bool(c.offline))]
        return .object(f)
    }

    static func json(_ op: RewriteOperation) -> JSON {
        switch op {
        case .setHeader(let s, let n, let v): .object([("op", .string("set-header")), ("side", .string(s.rawValue)), ("name", .string(n)), ("value", .string(v))])
        case .addHeader(let s, let n, let v): .object([("op", .string("add-header")), ("side", .string(s.rawValue)), ("name", .string(n)), ("value", .string(v))])
        case .removeHeader(let s, let n): .object([("op", .string("remove-header")), ("side", .string(s.rawValue)), ("name", .string(n))])
        case .setQuery(let n, let v): .object([("op", .string("set-query")), ("name", .string(n)), ("value", .string(v))])
        case .removeQuery(let n): .object([("op", .string("remove-query")), ("name", .string(n))])
        case .status(let c): .object([("op", .string("status")), ("status", .int(Int64(c)))])
        case .replaceBody(let s, let find, let regex, let with):
            .object([("op", .string("replace-body")), ("side", .string(s.rawValue)), ("find", .string(find)), ("regex", .bool(regex)), ("with", .string(with))])
        case .setJSON(let s, let p, let v): .object([("op", .string("set-json")), ("side", .string(s.rawValue)), ("path", .string(p)), ("value", v)])
        case .removeJSON(let s, let p): .object([("op", .string("remove-json")), ("side", .string(s.rawValue)), ("path", .string(p))])
        }
    }
}

/// An object's members, read with type checks that name the place.
struct Fields {
    let members: [(String, JSON)]
    var place: String

    init(_ json: JSON, at place: String) throws {
        guard case .object(let members) = json else { throw RulesError("\(place) is \(Fields.described(json)), not an object") }
        self.members = members
        self.place = place
    }

    subscript(key: String) -> JSON? { members.first { $0.0 == key }?.1 }

    private func typed<T>(_ key: String, _ what: String, _ read: (JSON) -> T?) throws -> T? {
        guard let value = self[key], value != .null else { return nil }
        guard let typed = read(value) else { throw RulesError("\(place).\(key) is \(Fields.described(value)), not \(what)") }
        return typed
    }

    func string(_ key: String) throws -> String? { try typed(key, "a string") { $0.stringValue } }
    func bool(_ key: String) throws -> Bool? { try typed(key, "true or false") { $0.boolValue } }
    func double(_ key: String) throws -> Double? { try typed(key, "a number") { $0.doubleValue } }
    func array(_ key: String) throws -> [JSON]? { try typed(key, "an array") { $0.arrayValue } }
    func int(_ key: String) throws -> Int? {
        try typed(key, "an integer") { v in v.int64Value.flatMap { Int(exactly: $0) } }
    }

    /// "a string", "an array", "null".
    static func described(_ value: JSON) -> String {
        let name = value.typeName
        if value == .null { return name }
        return ("aeiou".contains(name.first ?? "x") ? "an " : "a ") + name
    }

    func rejectUnknown(_ known: [String]) throws {
        if let unknown = members.first(where: { !known.contains($0.0) }) {
            throw RulesError("\(place): unknown key '\(unknown.0)' (expected \(known.joined(separator: ", ")))")
        }
    }
}

// MARK: - Export

extension InterceptRule {
    /// The rule as net.export-rules writes it: every value that could be a
    /// secret through the log's redactor (header values, query values, mock
    /// bodies, texts), so a shared rules file holds no more than the log
    /// would. The stored rules keep their values: they must still work.
    /// Whether anything changed, for the command to say so.
    public func redacted(by redactor: Redactor) -> (rule: InterceptRule, changed: Bool) {
        var r = self
        r.title = redactor.text(title)
        r.match = redactor.text(match)
        r.origin = redactor.text(origin)
        func header(_ name: String, _ value: String) -> String { redactor.headers([Header(name, value)]).first?.value ?? Redactor.marker }
        func body(_ bytes: [UInt8], _ contentType: String?) -> [UInt8] {
            if case .stored(let b) = redactor.body(bytes, contentType: contentType) { return b }
            return bytes.isEmpty ? [] : Array(Redactor.marker.utf8)
        }
        switch action {
        case .mock(let status, let headers, let mockBody):
            let type = headers.first("Content-Type")
            let b: MockBody
            switch mockBody {
            case .text(let t): b = .text(String(decoding: body(Array(t.utf8), type), as: UTF8.self))
            case .bytes(let bytes): b = .bytes(body(bytes, type))
            case .none, .file: b = mockBody
            }
            r.action = .mock(status: status, headers: redactor.headers(headers), body: b)
        case .mapRemote(let to, let strip):
            r.action = .mapRemote(to: redactor.url(to), stripPrefix: strip)
        case .rewrite(let ops):
            r.action = .rewrite(ops.map { op in
                switch op {
                case .setHeader(let side, let name, let value): .setHeader(side, name: name, value: header(name, value))
                case .addHeader(let side, let name, let value): .addHeader(side, name: name, value: header(name, value))
                case .setQuery(let name, let value):
                    // name=value as the redactor reads it in a query.
                    .setQuery(name: name, value: String(redactor.text("\(name)=\(value)").dropFirst(name.count + 1)))
                case .replaceBody(let side, let find, let regex, let with): .replaceBody(side, find: redactor.text(find), regex: regex, with: redactor.text(with))
                case .setJSON(let side, let path, let value):
                    .setJSON(side, path: path, value: (try? JSON.parse(String(decoding: body(Array(value.serialized().utf8), "application/json"), as: UTF8.self))) ?? .string(Redactor.marker))
                case .removeHeader, .removeQuery, .status, .removeJSON: op
                }
            })
        case .mapLocal, .block, .delay, .breakpoint:
            break
        }
        return (r, r != self)
    }
}
