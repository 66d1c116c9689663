/// The JSON form of an entry: what `net.entry` prints and what a persisted
/// log file holds, one entry per line. Decoding it back gives the same entry
/// (bodies as text when they are UTF-8, else base64).
import PincerPluginKit
extension NetworkEntry {
    public var json: JSON {
        let fields: [(String, JSON)] = [
            ("id", .uint(id)), ("source", .string(source.rawValue)), ("state", .string(state.rawValue)),
            ("method", .string(method)), ("url", .string(url)), ("httpVersion", .string(httpVersion)),
            ("startedAt", .double(startedAt)), ("recordedAt", .double(recordedAt)), ("duration", .double(duration)),
            ("status", status.map { .int(Int64($0)) } ?? .null), ("statusText", .string(statusText)),
            ("requestHeaders", Header.json(requestHeaders)), ("requestBody", requestBody.json),
            ("responseHeaders", Header.json(responseHeaders)), ("responseBody", responseBody.json),
            ("redirectURL", .string(redirectURL)), ("error", error.map(JSON.string) ?? .null),
            ("serverIP", serverIP.map(JSON.string) ?? .null), ("stubbed", .bool(stubbed)),
            ("timings", timings.json), ("notes", .array(notes.map(JSON.string))),
        ]
        return .object(fields)
    }

    /// One line of `net.list`.
    public var summaryJSON: JSON {
        .object([("id", .uint(id)), ("method", .string(method)), ("url", .string(url)),
                 ("status", status.map { .int(Int64($0)) } ?? .null), ("state", .string(state.rawValue)),
                 ("duration", .double((duration * 10).rounded() / 10)), ("size", .int(Int64(responseBody.size))),
                 ("source", .string(source.rawValue))])
    }

    /// `net.list` rows made to fit `width` terminal columns as the shell lays
    /// a table out (each column as wide as its widest cell or its header,
    /// two spaces between, nulls as "-"): the URL column gets what the
    /// others leave, at least 12 characters, and a longer URL ends in "…".
    /// Control characters in text cells become visible escapes, so a logged
    /// URL cannot drive the terminal.
    public static func fit(_ rows: [JSON], width: Int) -> [JSON] {
        func cell(_ v: JSON) -> String {
            switch v {
            case .null: "-"
            case .string(let s): s
            default: v.serialized()
            }
        }
        let cleaned: [[(String, JSON)]] = rows.map { row in
            (row.objectValue ?? []).map { key, value in
                if case .string(let s) = value { return (key, JSON.string(TextExport.clean(s))) }
                return (key, value)
            }
        }
        var columns: [String] = []
        for row in cleaned { for (key, _) in row where !columns.contains(key) { columns.append(key) } }
        guard columns.contains("url") else { return cleaned.map(JSON.object) }
        var others = 2 * (columns.count - 1)
        for key in columns where key != "url" {
            others += cleaned.reduce(key.count) { widest, row in max(widest, row.first { $0.0 == key }.map { cell($0.1).count } ?? 0) }
        }
        let budget = max(12, width - others)
        return cleaned.map { row in
            .object(row.map { key, value in
                guard key == "url", case .string(let url) = value, url.count > budget else { return (key, value) }
                return (key, .string(String(url.prefix(budget - 1)) + "…"))
            })
        }
    }

    public init(json: JSON) throws(EntryDecodingError) {
        func need<T>(_ key: String, _ read: (JSON) -> T?) throws(EntryDecodingError) -> T {
            guard let v = json[key], let t = read(v) else { throw EntryDecodingError(message: "missing or malformed \"\(key)\"") }
            return t
        }
        let source = EntrySource(rawValue: try need("source") { $0.stringValue }) ?? .imported
        self.init(source: source, startedAt: try need("startedAt") { $0.doubleValue },
                  method: try need("method") { $0.stringValue }, url: try need("url") { $0.stringValue })
        id = try need("id") { $0.int64Value.map { UInt64(max($0, 0)) } }
        state = EntryState(rawValue: try need("state") { $0.stringValue }) ?? .complete
        recordedAt = json["recordedAt"]?.doubleValue ?? startedAt
        httpVersion = json["httpVersion"]?.stringValue ?? "HTTP/1.1"
        status = json["status"]?.int64Value.map { Int($0) }
        statusText = json["statusText"]?.stringValue ?? ""
        requestHeaders = try Header.decode(json["requestHeaders"])
        responseHeaders = try Header.decode(json["responseHeaders"])
        requestBody = try Body(json: json["requestBody"])
        responseBody = try Body(json: json["responseBody"])
        redirectURL = json["redirectURL"]?.stringValue ?? ""
        error = json["error"]?.stringValue
        serverIP = json["serverIP"]?.stringValue
        stubbed = json["stubbed"]?.boolValue ?? false
        if let t = json["timings"] { timings = Timings(json: t) }
        notes = json["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

public struct EntryDecodingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension Header {
    static func json(_ headers: [Header]) -> JSON {
        .array(headers.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    static func decode(_ json: JSON?) throws(EntryDecodingError) -> [Header] {
        guard let list = json?.arrayValue else { return [] }
        var out: [Header] = []
        for item in list {
            guard let n = item["name"]?.stringValue, let v = item["value"]?.stringValue else {
                throw EntryDecodingError(message: "a header without a name or value")
            }
            out.append(Header(n, v))
        }
        return out
    }
}

extension Body {
    public var json: JSON {
        var fields: [(String, JSON)] = [("size", .int(Int64(size))), ("mimeType", .string(mimeType))]
        switch payload {
        case .none: fields.append(("payload", .string("none")))
        case .stored(let bytes):
            fields.append(("payload", .string("stored")))
            if let text = String(validating: bytes, as: UTF8.self) {
                fields.append(("text", .string(text)))
            } else {
                fields.append(("base64", .string(Base64.encode(bytes))))
            }
        case .withheld(let reason):
            fields.append(("payload", .string("withheld")))
            fields.append(("reason", .string(reason)))
        case .skipped: fields.append(("payload", .string("skipped")))
        case .dropped: fields.append(("payload", .string("dropped")))
        }
        return .object(fields)
    }

    init(json: JSON?) throws(EntryDecodingError) {
        guard let json else { self = .empty; return }
        let size = Int(json["size"]?.int64Value ?? 0)
        let mime = json["mimeType"]?.stringValue ?? ""
        let payload: BodyPayload
        switch json["payload"]?.stringValue ?? "none" {
        case "stored":
            if let text = json["text"]?.stringValue {
                payload = .stored(Array(text.utf8))
            } else if let b64 = json["base64"]?.stringValue, let bytes = Base64.decode(b64) {
                payload = .stored(bytes)
            } else {
                throw EntryDecodingError(message: "a stored body without text or valid base64")
            }
        case "withheld": payload = .withheld(reason: json["reason"]?.stringValue ?? "")
        case "skipped": payload = .skipped
        case "dropped": payload = .dropped
        default: payload = .none
        }
        self.init(payload: payload, size: size, mimeType: mime)
    }
}

extension Timings {
    var json: JSON {
        .object([("blocked", .double(blocked)), ("dns", .double(dns)), ("connect", .double(connect)), ("ssl", .double(ssl)),
                 ("send", .double(send)), ("wait", .double(wait)), ("receive", .double(receive))])
    }

    init(json: JSON) {
        self.init()
        blocked = json["blocked"]?.doubleValue ?? -1
        dns = json["dns"]?.doubleValue ?? -1
        connect = json["connect"]?.doubleValue ?? -1
        ssl = json["ssl"]?.doubleValue ?? -1
        send = json["send"]?.doubleValue ?? 0
        wait = json["wait"]?.doubleValue ?? 0
        receive = json["receive"]?.doubleValue ?? 0
    }
}
