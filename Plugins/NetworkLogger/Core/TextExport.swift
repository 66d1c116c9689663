// A plain-text dump of one entry, for `net.show`.
//
//     #12 POST https://api.example.com/login  HTTP/1.1
//     started 2024-05-01T10:00:00.000Z  source captured  server 93.184.216.34
//
//     > Content-Type: application/json
//     >
//     {"user":"ann","password":"[redacted]"}
//
//     < 200 OK  (183.4 ms)
//     < Content-Type: application/json
//     <
//     {"token":"[redacted]"}
//
//     timings (ms): blocked 1.0  dns -  connect 20.0 (ssl 12.0)  send 0.2  wait 150.0  receive 2.0
//     notes:
//       - request body withheld: ...
//
// Bodies: text when valid UTF-8 (or latin-1, when the Content-Type says so)
// with a textual media type; otherwise "(N bytes of binary data, not
// shown)"; bodies the log does not hold show why. With a body limit, a text
// body longer than the limit is cut at a character boundary and a line
// says how much was left out and how to see all of it.
// Control characters other than tab and line breaks are shown as U+XXXX escapes,
// so dumping an entry cannot drive the terminal.

public enum TextExport {
    /// `bodyLimit`: the most bytes of each body printed (0: all); `showAll`
    /// ends the line that says what a cut left out ("net.show 3 --limit 0
    /// prints all of it").
    public static func render(_ entry: NetworkEntry, bodyLimit: Int = 0, showAll: String = "") -> String {
        func body(_ b: Body, contentType: String?) -> String? {
            TextExport.body(b, contentType: contentType, limit: bodyLimit, showAll: showAll)
        }
        var lines: [String] = []
        let id = entry.id > 0 ? "#\(entry.id) " : ""
        lines.append(id + clean(entry.method) + " " + clean(entry.url) + "  " + clean(entry.httpVersion))
        var meta = "started \(HARDate.format(entry.startedAt))  source \(entry.source.rawValue)"
        if let ip = entry.serverIP { meta += "  server " + clean(ip) }
        if entry.stubbed { meta += "  stubbed" }
        lines.append(meta)
        lines.append("")
        for h in entry.requestHeaders { lines.append("> " + clean(h.name) + ": " + clean(h.value)) }
        lines.append(">")
        if let body = body(entry.requestBody, contentType: entry.requestHeaders.first("Content-Type")) { lines.append(body) }
        lines.append("")

        switch entry.state {
        case .pending:
            lines.append("< (pending: no response yet)")
        case .failed:
            lines.append("< (failed: " + clean(entry.error ?? "no response") + ")  (\(milliseconds(entry.duration)) ms)")
        case .complete:
            var status = "< \(entry.status.map(String.init) ?? "?")"
            if !entry.statusText.isEmpty { status += " " + clean(entry.statusText) }
            status += "  (\(milliseconds(entry.duration)) ms)"
            lines.append(status)
            for h in entry.responseHeaders { lines.append("< " + clean(h.name) + ": " + clean(h.value)) }
            lines.append("<")
            if let body = body(entry.responseBody, contentType: entry.responseHeaders.first("Content-Type")) { lines.append(body) }
            if !entry.redirectURL.isEmpty { lines.append("redirect to " + clean(entry.redirectURL)) }
            if let error = entry.error { lines.append("error: " + clean(error)) }
        }
        lines.append("")
        let t = entry.timings.harNormalized
        func phase(_ v: Double) -> String { v < 0 ? "-" : milliseconds(v) }
        var timing = "timings (ms): blocked \(phase(t.blocked))  dns \(phase(t.dns))  connect \(phase(t.connect))"
        if t.ssl >= 0 { timing += " (ssl \(phase(t.ssl)))" }
        timing += "  send \(phase(t.send))  wait \(phase(t.wait))  receive \(phase(t.receive))  total \(phase(t.total))"
        lines.append(timing)
        if let of = entry.replayOf { lines.append("replay of #\(of) (net.replay)") }
        if !entry.interventions.isEmpty {
            lines.append("interception rules applied\(entry.stubbed ? " (the response did not come from the server)" : ""):")
            for i in entry.interventions { lines.append("  - " + clean(i.line)) }
        }
        if !entry.notes.isEmpty {
            lines.append("notes:")
            for n in entry.notes { lines.append("  - " + clean(n)) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func body(_ body: Body, contentType: String?, limit: Int, showAll: String) -> String? {
        switch body.payload {
        case .none:
            return body.size > 0 ? "(\(body.size) bytes, not recorded)" : nil
        case .stored(let bytes):
            if bytes.isEmpty { return nil }
            let mediaType = BodyText.mediaTypeOf(body, contentType: contentType)
            var text = BodyText.text(bytes, mediaType: mediaType)
            var latin1 = false
            if text == nil, BodyText.isTextual(mediaType), HARCharset.declared(contentType) == .latin1 {
                text = HARCharset.latin1Text(bytes)
                latin1 = true
            }
            guard let text else { return "(\(bytes.count) bytes of binary data, not shown)" }
            guard limit > 0, bytes.count > limit else { return clean(text, keepLineBreaks: true) }
            // Cut at a character boundary at or before `limit` bytes of the body.
            var end = text.unicodeScalars.endIndex
            var used = 0
            for c in text.unicodeScalars.indices {
                let n = latin1 ? 1 : text.unicodeScalars[c].utf8.count
                if used + n > limit { end = c; break }
                used += n
            }
            let shown = text.unicodeScalars[..<end]
            let rest = text.unicodeScalars[end...]
            let restLines = rest.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) } + (rest.last == "\n" ? 0 : 1)
            var line = "… (\(bytes.count - used) more bytes, \(restLines) line\(restLines == 1 ? "" : "s"), of \(bytes.count) not shown"
            line += showAll.isEmpty ? ")" : "; \(showAll))"
            var cut = clean(String(shown), keepLineBreaks: true)
            if !cut.hasSuffix("\n") { cut += "\n" }
            return cut + line
        case .withheld, .skipped, .dropped:
            return "(\(body.size) bytes, " + clean(BodyText.missingReason(body.payload) ?? "") + ")"
        }
    }

    /// One decimal place.
    static func milliseconds(_ v: Double) -> String {
        guard v.isFinite else { return "-" }
        if v < 0 { return "-" + milliseconds(-v) }
        let tenths = (v * 10).rounded()
        let whole = Int64(tenths / 10)
        let frac = Int64(tenths.truncatingRemainder(dividingBy: 10))
        return "\(whole).\(frac)"
    }

    /// Replaces control characters (and, unless `keepLineBreaks`, line
    /// breaks) with visible escapes.
    public static func clean(_ s: String, keepLineBreaks: Bool = false) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            if scalar == "\t" || (keepLineBreaks && scalar == "\n") {
                out.unicodeScalars.append(scalar)
            } else if keepLineBreaks && scalar == "\r" {
                continue
            } else if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) || Curl.isInvisible(scalar) {
                let h = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + h + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
