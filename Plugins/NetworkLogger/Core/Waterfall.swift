// A waterfall picture of the network log as a standalone SVG 1.1 document.
//
// One row per entry, in start order: on the left the method and a
// shortened URL, then the status ("ERR" for transport errors, "…" while
// pending, "stub" marks stubs); on the right a bar from the entry's start
// with the length of its duration, on a shared time axis (ticks at 1, 2 or
// 5 × 10ⁿ ms, labelled in ms or s). Bars are coloured by outcome, each bar a
// `<rect class="bar OUTCOME">` with OUTCOME one of:
//
// - `success`: a 1xx, 2xx or 3xx response
// - `failure`: a 4xx or 5xx response
// - `error`:   a transport error, no response
// - `pending`: no response yet; the bar runs to the end of the timeline
// - `stubbed`: answered by a stub or mock (whatever the status)
//
// When more than one timing phase is known, the bar is shaded by phase
// (`<rect class="phase phase-NAME">`: blocked, dns, connect, ssl within
// connect, send, wait, receive). Each row has a `<title>` tooltip with the
// full URL, status and time. A legend explains colours and phases. All text
// is escaped for XML, and characters XML cannot hold are replaced with U+FFFD.
import PincerPluginKit

/// Renders network entries as a waterfall chart.
public enum Waterfall {
    static let width = 1200.0
    static let margin = 16.0
    static let labelWidth = 430.0
    static let statusWidth = 70.0
    static var chartX: Double { margin + labelWidth + statusWidth }
    static var chartWidth: Double { width - chartX - margin }
    static let rowsTop = 70.0
    static let rowHeight = 20.0
    static let barHeight = 12.0
    /// Label characters that fit in `labelWidth` at 12px monospace.
    static let labelCharacters = 58

    /// A standalone SVG 1.1 document picturing `entries` (any order).
    public static func svg(_ entries: [NetworkEntry], title: String = "Network waterfall") -> String {
        let rows = entries.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        let start = rows.first?.startedAt ?? 0
        // The timeline ends with the last response (pending bars run to it).
        let endMs = rows.map { ($0.startedAt - start) * 1000 + max(0, $0.duration) }.max() ?? 0
        let (step, axisEnd) = axis(spanMs: rows.isEmpty ? 1000 : endMs)
        let scale = chartWidth / axisEnd

        let rowsBottom = rowsTop + Double(max(rows.count, 1)) * rowHeight
        let legendTop = rowsBottom + 24
        let height = legendTop + 2 * rowHeight + margin

        var svg = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="monospace" font-size="12">
        <style type="text/css">
        .title{font-size:16px;font-weight:bold;fill:#202124}
        .subtitle,.tick,.legend{fill:#5f6368}
        .label{fill:#202124}
        .status{fill:#202124}
        .status.failure,.status.error{fill:#c5221f}
        .grid{stroke:#dadce0;stroke-width:1}
        .stripe{fill:#f8f9fa}
        .bar.success{fill:#34a853}
        .bar.failure{fill:#ea4335}
        .bar.error{fill:#9c1c1c}
        .bar.pending{fill:#bdc1c6;fill-opacity:0.6;stroke:#5f6368;stroke-dasharray:3 2}
        .bar.stubbed{fill:#a142f4}
        .phase-blocked{fill:#ffffff;fill-opacity:0.6}
        .phase-dns{fill:#ffffff;fill-opacity:0.45}
        .phase-connect{fill:#ffffff;fill-opacity:0.3}
        .phase-ssl{fill:#000000;fill-opacity:0.15}
        .phase-send{fill:#ffffff;fill-opacity:0.15}
        .phase-wait{fill:#000000;fill-opacity:0}
        .phase-receive{fill:#000000;fill-opacity:0.3}
        .swatch.phase{fill:#34a853}
        </style>

        """
        svg += "<text class=\"title\" x=\"\(n(margin))\" y=\"24\">\(XMLText.escape(title))</text>\n"
        let summary = rows.isEmpty ? "no requests"
            : "\(rows.count) request\(rows.count == 1 ? "" : "s") over \(TrafficStats.milliseconds(endMs))"
        svg += "<text class=\"subtitle\" x=\"\(n(margin))\" y=\"42\">\(XMLText.escape(summary))</text>\n"

        // Time axis: gridlines and tick labels.
        svg += "<g class=\"axis\">\n"
        let ticks = Int((axisEnd / step).rounded())
        for k in 0...ticks {
            let tick = Double(k) * step
            let x = chartX + tick * scale
            // The last label ends at its tick so it stays inside the picture.
            let anchor = k == ticks && k > 0 ? "end" : "middle"
            svg += "<line class=\"grid\" x1=\"\(n(x))\" y1=\"\(n(rowsTop - 8))\" x2=\"\(n(x))\" y2=\"\(n(rowsBottom))\"/>"
            svg += "<text class=\"tick\" x=\"\(n(x))\" y=\"\(n(rowsTop - 12))\" text-anchor=\"\(anchor)\">\(XMLText.escape(tickLabel(tick, step: step, axisEnd: axisEnd)))</text>\n"
        }
        svg += "</g>\n"

        if rows.isEmpty {
            svg += "<text class=\"subtitle\" x=\"\(n(chartX))\" y=\"\(n(rowsTop + 14))\">No requests</text>\n"
        }

        for (i, entry) in rows.enumerated() {
            let y = rowsTop + Double(i) * rowHeight
            let outcome = outcome(entry)
            let offset = (entry.startedAt - start) * 1000
            let x = chartX + offset * scale
            var durationMs = max(0, entry.duration)
            if outcome == "pending" { durationMs = max(durationMs, endMs - offset) }
            let w = max(durationMs * scale, 1)
            let barY = y + (rowHeight - barHeight) / 2

            svg += "<g class=\"row\">"
            svg += "<title>\(XMLText.escape(tooltip(entry)))</title>"
            if i % 2 == 1 {
                svg += "<rect class=\"stripe\" x=\"0\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(rowHeight))\"/>"
            }
            svg += "<text class=\"label\" x=\"\(n(margin))\" y=\"\(n(y + 14))\">\(XMLText.escape(label(entry)))</text>"
            svg += "<text class=\"status \(outcome)\" x=\"\(n(margin + labelWidth))\" y=\"\(n(y + 14))\">\(XMLText.escape(statusText(entry)))</text>"
            svg += "<rect class=\"bar \(outcome)\" x=\"\(n(x))\" y=\"\(n(barY))\" width=\"\(n(w))\" height=\"\(n(barHeight))\"/>"
            if outcome != "pending" {
                for phase in phases(entry.timings) {
                    svg += "<rect class=\"phase phase-\(phase.name)\" x=\"\(n(x + phase.start * scale))\" y=\"\(n(barY))\" width=\"\(n(phase.length * scale))\" height=\"\(n(barHeight))\"/>"
                }
            }
            svg += "</g>\n"
        }

        // Legend: outcomes, then phases.
        svg += "<g class=\"key\">\n"
        var x = margin
        for (outcome, text) in [("success", "2xx/3xx"), ("failure", "4xx/5xx"), ("error", "transport error"),
                                ("pending", "pending"), ("stubbed", "stubbed")] {
            svg += "<rect class=\"swatch \(outcome)\" x=\"\(n(x))\" y=\"\(n(legendTop))\" width=\"14\" height=\"\(n(barHeight))\" style=\"\(swatchStyle(outcome))\"/>"
            svg += "<text class=\"legend\" x=\"\(n(x + 20))\" y=\"\(n(legendTop + 11))\">\(XMLText.escape(text))</text>\n"
            x += 20 + Double(text.count) * 7.2 + 24
        }
        x = margin
        let phaseTop = legendTop + rowHeight
        svg += "<text class=\"legend\" x=\"\(n(x))\" y=\"\(n(phaseTop + 11))\">phases:</text>\n"
        x += 64
        for name in ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"] {
            svg += "<rect class=\"swatch phase\" x=\"\(n(x))\" y=\"\(n(phaseTop))\" width=\"14\" height=\"\(n(barHeight))\"/>"
            svg += "<rect class=\"phase-\(name)\" x=\"\(n(x))\" y=\"\(n(phaseTop))\" width=\"14\" height=\"\(n(barHeight))\"/>"
            svg += "<text class=\"legend\" x=\"\(n(x + 20))\" y=\"\(n(phaseTop + 11))\">\(name)</text>\n"
            x += 20 + Double(name.count) * 7.2 + 24
        }
        svg += "</g>\n</svg>\n"
        return svg
    }

    // MARK: Pieces

    /// The colour class of an entry's bar.
    static func outcome(_ e: NetworkEntry) -> String {
        switch e.state {
        case .pending: return "pending"
        case .failed: return "error"
        case .complete:
            if e.stubbed { return "stubbed" }
            return (e.status ?? 0) >= 400 ? "failure" : "success"
        }
    }

    /// Legend swatches repeat the bar colours (class selectors there are `.bar.X`).
    static func swatchStyle(_ outcome: String) -> String {
        switch outcome {
        case "success": "fill:#34a853"
        case "failure": "fill:#ea4335"
        case "error": "fill:#9c1c1c"
        case "pending": "fill:#bdc1c6;fill-opacity:0.6;stroke:#5f6368;stroke-dasharray:3 2"
        default: "fill:#a142f4"
        }
    }

    static func statusText(_ e: NetworkEntry) -> String {
        switch e.state {
        case .pending: return "…"
        case .failed: return "ERR"
        case .complete:
            let status = e.status.map(String.init) ?? "—"
            return e.stubbed ? status + " stub" : status
        }
    }

    /// "GET host/path?query", shortened in the middle to fit the label column.
    static func label(_ e: NetworkEntry) -> String {
        var url = e.url
        if let parts = URLParts(e.url) {
            url = parts.host + (parts.port.map { ":\($0)" } ?? "") + parts.path + (parts.query.map { "?" + $0 } ?? "")
        }
        let text = Array((e.method.uppercased() + " " + url).map { $0.isNewline ? " " : $0 })
        guard text.count > labelCharacters else { return String(text) }
        let head = (labelCharacters - 1) * 3 / 5
        let tail = labelCharacters - 1 - head
        return String(text[..<head]) + "…" + String(text[(text.count - tail)...])
    }

    static func tooltip(_ e: NetworkEntry) -> String {
        var parts = [e.method.uppercased() + " " + e.url]
        switch e.state {
        case .pending: parts.append("pending")
        case .failed: parts.append("failed" + (e.error.map { ": " + $0 } ?? ""))
        case .complete:
            parts.append(((e.status.map(String.init) ?? "") + " " + e.statusText).trimmingCharacters(in: " "))
        }
        if e.stubbed { parts.append("stubbed") }
        if e.state != .pending { parts.append(TrafficStats.milliseconds(e.duration)) }
        return parts.joined(separator: " — ")
    }

    struct Phase: Equatable {
        var name: String
        /// ms from the start of the request.
        var start: Double
        var length: Double
    }

    /// The known phases in order (ssl inside connect, at its end); empty
    /// unless more than one phase is known, since one phase is the whole bar.
    static func phases(_ t: Timings) -> [Phase] {
        var result: [Phase] = []
        var at = 0.0
        for (name, value) in [("blocked", t.blocked), ("dns", t.dns), ("connect", t.connect),
                              ("send", t.send), ("wait", t.wait), ("receive", t.receive)] where value > 0 {
            result.append(Phase(name: name, start: at, length: value))
            if name == "connect", t.ssl > 0 {
                let ssl = min(t.ssl, value)
                result.append(Phase(name: "ssl", start: at + value - ssl, length: ssl))
            }
            at += value
        }
        return result.filter { $0.name != "ssl" }.count > 1 ? result : []
    }

    /// A tick step of 1, 2 or 5 × 10ⁿ ms giving at most 8 intervals, and the
    /// axis end (a whole number of steps covering the span).
    static func axis(spanMs: Double) -> (step: Double, end: Double) {
        let span = max(spanMs, 1)
        var magnitude = 0.1
        while true {
            for m in [1.0, 2.0, 5.0] {
                let step = m * magnitude
                if span / step <= 8 {
                    return (step, max(1, (span / step).rounded(.up)) * step)
                }
            }
            magnitude *= 10
        }
    }

    static func tickLabel(_ ms: Double, step: Double, axisEnd: Double) -> String {
        if axisEnd >= 2000 {
            let stepSeconds = step / 1000
            let decimals = stepSeconds >= 1 ? 0 : (stepSeconds >= 0.1 ? 1 : 2)
            return TrafficStats.fixed(ms / 1000, decimals) + " s"
        }
        return TrafficStats.fixed(ms, step >= 1 ? 0 : 1) + " ms"
    }

    /// A coordinate with at most one decimal.
    static func n(_ x: Double) -> String {
        let s = TrafficStats.fixed(x, 1)
        return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
    }
}
