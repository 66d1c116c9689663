// Mocks made from traffic: a logged entry (net.mock-from) or the entries of a
// HAR file (net.mock-from-har, Scyther's import). The entry is the redacted
// one, so a secret that was redacted stays redacted in the mock; the mock
// lists where ("[REDACTED]" in the Set-Cookie header, in the body) so no one
// takes it for the server's value.
import PincerJSON

public enum MockFrom {
    /// Headers that describe the transfer, not the content: the mock's body
    /// is the decoded one and its length is the mock's own.
    static let transferHeaders: Set<String> = ["content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive"]

    /// The mock rule for `entry`, and what the mock could not keep (for people).
    public static func rule(_ entry: NetworkEntry, origin: String) -> (rule: InterceptRule, caveats: [String])? {
        guard entry.state == .complete, let status = entry.status, (100...599).contains(status) else { return nil }
        var caveats: [String] = []
        let headers = entry.responseHeaders.filter { !transferHeaders.contains($0.name.lowercased()) }
        let redactedHeaders = headers.filter { $0.value.contains(Redactor.marker) }.map(\.name)
        if !redactedHeaders.isEmpty {
            caveats.append("redacted values stay redacted in header\(redactedHeaders.count == 1 ? "" : "s") \(redactedHeaders.joined(separator: ", "))")
        }
        var body = MockBody.none
        switch entry.responseBody.payload {
        case .stored(let bytes):
            body = String(validating: bytes, as: UTF8.self).map(MockBody.text) ?? .bytes(bytes)
            if bytes.count < entry.responseBody.size {
                caveats.append("the log kept \(bytes.count) of the body's \(entry.responseBody.size) bytes; the mock serves those")
            }
            if bytes.count >= Redactor.marker.utf8.count, String(decoding: bytes, as: UTF8.self).contains(Redactor.marker) {
                caveats.append("redacted values stay redacted in the body")
            }
        case .none: break
        case .withheld(let reason): caveats.append("the log withheld the body (\(reason)); the mock answers without one")
        case .skipped, .dropped: caveats.append("the log did not keep the body; the mock answers without one")
        }
        let parts = URLParts(entry.url)
        var match = "method:\(entry.method)"
        if let parts {
            match += " domain:\(quoted(parts.host)) path:\(quoted(parts.path.isEmpty ? "/" : parts.path))"
        }
        let title = "\(entry.method) \(parts.map { $0.host + $0.path } ?? entry.url) → \(status)"
        let rule = InterceptRule(title: title, match: match, action: .mock(status: status, headers: headers, body: body), origin: origin)
        return (rule, caveats)
    }

    /// A value for a filter `key:value` term, quoted when it holds a space,
    /// a quote or a parenthesis.
    static func quoted(_ text: String) -> String {
        guard text.contains(where: { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "(" || $0 == ")" || $0 == "\\" }) else { return text }
        return "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}
