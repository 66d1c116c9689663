/// The JSON form of an entry: what `net.entry` prints and what a persisted
/// log file holds, one entry per line. Decoding it back gives the same entry
/// (bodies as text when they are UTF-8, else base64).
import PincerPluginKit
extension NetworkEntry {
    /// The entry's JSON as a tree (what `jsonBytes` writes, parsed back).
    public var json: JSON {
        // The writer's output is JSON by construction.
        (try? JSON.parse(bytes: jsonBytes)) ?? .null
    }

    /// The entry's JSON text, written straight through JSONWriter (headers
    /// from their packed bytes): the persisted log serialises every entry
    /// it stores through here.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter(capacity: requestBody.storedByteCount + responseBody.storedByteCount + 2048)
        write(into: &w)
        return w.finish()
    }

    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.uint(id)
        w.field("source", source.rawValue)
        w.field("state", state.rawValue)
        w.field("method", method)
        w.field("url", url)
        w.field("httpVersion", httpVersion)
        w.field("startedAt", startedAt)
        w.field("recordedAt", recordedAt)
        w.field("duration", duration)
        w.key("status")
        if let status { w.int(Int64(status)) } else { w.null() }
        w.field("statusText", statusText)
        w.key("requestHeaders")
        Header.write(requestHeaderList, into: &w)
        w.key("requestBody")
        requestBody.write(into: &w)
        w.key("responseHeaders")
        Header.write(responseHeaderList, into: &w)
        w.key("responseBody")
        responseBody.write(into: &w)
        w.field("redirectURL", redirectURL)
        w.key("error")
        if let error { w.string(error) } else { w.null() }
        w.key("serverIP")
        if let serverIP { w.string(serverIP) } else { w.null() }
        w.field("stubbed", stubbed)
        w.key("timings")
        timings.write(into: &w)
        w.key("notes")
        w.beginArray()
        for note in notes { w.string(note) }
        w.endArray()
        if !interventions.isEmpty {
            w.key("interventions")
            w.beginArray()
            for i in interventions { w.value(i.json) }
            w.endArray()
        }
        if let replayOf {
            w.key("replayOf")
            w.value(.uint(replayOf))
        }
        w.endObject()
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
        interventions = json["interventions"]?.arrayValue?.compactMap(Intervention.init(json:)) ?? []
        replayOf = json["replayOf"]?.int64Value.flatMap { $0 > 0 ? UInt64($0) : nil }
    }
}

public struct EntryDecodingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension Header {
    /// `[{"name": ..., "value": ...}]` from the packed bytes (no Strings made).
    static func write(_ headers: HeaderList, into w: inout JSONWriter) {
        w.beginArray()
        headers.forEach { name, value in
            w.beginObject()
            w.key("name")
            w.string(utf8: name)
            w.key("value")
            w.string(utf8: value)
            w.endObject()
        }
        w.endArray()
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
    /// The body's JSON as a tree (what `write(into:)` writes, parsed back).
    public var json: JSON {
        var w = JSONWriter()
        write(into: &w)
        return (try? JSON.parse(bytes: w.finish())) ?? .null
    }

    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("size", Int64(size))
        w.field("mimeType", mimeType)
        switch payload {
        case .none: w.field("payload", "none")
        case .stored(let bytes):
            w.field("payload", "stored")
            if let text = String(validating: bytes, as: UTF8.self) {
                w.field("text", text)
            } else {
                w.field("base64", Base64.encode(bytes))
            }
        case .withheld(let reason):
            w.field("payload", "withheld")
            w.field("reason", reason)
        case .skipped: w.field("payload", "skipped")
        case .dropped: w.field("payload", "dropped")
        }
        w.endObject()
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
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("blocked", blocked)
        w.field("dns", dns)
        w.field("connect", connect)
        w.field("ssl", ssl)
        w.field("send", send)
        w.field("wait", wait)
        w.field("receive", receive)
        w.endObject()
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
