// A waterfall picture of the network log as a standalone SVG 1.1 document.
//
// One row per entry, in start order: on the left the method and a
// shortened URL, then the status ("ERR" for transport errors, "…" while
// pending, "stub" marks stubs); on the right a bar from the entry's start
// with the length of its duration, its duration written beside it, on a
// shared time axis (ticks at 1, 2 or 5 × 10ⁿ ms, labelled in ms or s). Bars
// are coloured by outcome, each bar a `<rect class="bar OUTCOME">` with
// OUTCOME one of:
//
// - `success`: a 1xx, 2xx or 3xx response
// - `failure`: a 4xx or 5xx response
// - `error`:   a transport error, no response
// - `pending`: no response yet; the bar runs to the end of the timeline
// - `stubbed`: answered by a stub or mock (whatever the status)
//
// When more than one timing phase is known, the bar is painted by phase
// (`<rect class="phase phase-NAME">`: blocked, dns, connect, ssl within
// connect, send, wait, receive) in the Okabe-Ito colours, which stay apart
// for colour-blind readers; the outcome's colour stays visible as a strip
// along the bar's foot. Outcome colours are not phase colours.
//
// Idle gaps: a log can span months. A gap between bursts of traffic longer
// than both 2 s and the longest burst is collapsed to a narrow break on the
// axis (`<g class="break">`, two slanted strokes and the idle time), and
// each burst's ticks count from its own start, under its UTC start time.
//
// Each row has a `<title>` tooltip with the full URL, status and time. A
// legend explains colours and phases. All text is escaped for XML, and
// characters XML cannot hold are replaced with U+FFFD.
import PincerPluginKit

/// Renders network entries as a waterfall chart.
public enum Waterfall {
    static let width = 1200.0
    static let margin = 16.0
    static let labelWidth = 430.0
    static let statusWidth = 70.0
    static var chartX: Double { margin + labelWidth + statusWidth }
    static var chartWidth: Double { width - chartX - margin }
    static let rowHeight = 20.0
    static let barHeight = 12.0
    /// The outcome strip below a bar painted by phase.
    static let stripHeight = 3.0
    /// Label characters that fit in `labelWidth` at 12px monospace.
    static let labelCharacters = 58
    /// Monospace 12px advance, for fitting labels.
    static let charWidth = 7.2

    static let outcomeColours: [(name: String, fill: String, legend: String)] = [
        ("success", "#5a6470", "2xx/3xx"), ("failure", "#d55e00", "4xx/5xx"), ("error", "#000000", "transport error"),
        ("pending", "#dddddd", "pending"), ("stubbed", "#882255", "stubbed"),
    ]
    /// Okabe-Ito, one colour a phase.
    static let phaseColours: [(name: String, fill: String)] = [
        ("blocked", "#999999"), ("dns", "#56b4e9"), ("connect", "#e69f00"), ("ssl", "#cc79a7"),
        ("send", "#f0e442"), ("wait", "#009e73"), ("receive", "#0072b2"),
    ]

    /// A standalone SVG 1.1 document picturing `entries` (any order).
    public static func svg(_ entries: [NetworkEntry], title: String = "Network waterfall") -> String {
        let rows = entries.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        let start = rows.first?.startedAt ?? 0
        // The timeline ends with the last response (pending bars run to it).
        let endMs = rows.map { ($0.startedAt - start) * 1000 + max(0, $0.duration) }.max() ?? 0
        let time = Timeline(rows.map { (($0.startedAt - start) * 1000, $0.state == .pending ? 0 : max(0, $0.duration)) }, endMs: endMs)

        let rowsTop = time.bursts.count > 1 ? 100.0 : 70.0
        let rowsBottom = rowsTop + Double(max(rows.count, 1)) * rowHeight
        let legendTop = rowsBottom + 24
        let height = legendTop + 2 * rowHeight + margin

        var svg = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="DejaVu Sans Mono, monospace" font-size="12">
        <style type="text/css">
        .title{font-size:16px;font-weight:bold;fill:#202124}
        .subtitle,.tick,.legend,.burst-start{fill:#5f6368}
        .label,.status{fill:#202124}
        .status.failure,.status.error{fill:#b34700;font-weight:bold}
        .duration{fill:#3c4043;font-size:10px}
        .duration.inside{fill:#ffffff;stroke:#202124;stroke-width:2px;paint-order:stroke}
        .grid{stroke:#dadce0;stroke-width:1}
        .stripe{fill:#f8f9fa}
        .gap{fill:#eceff1}
        .break-mark{stroke:#5f6368;stroke-width:1.5}
        .break-label{fill:#202124;font-size:10px}
        \(outcomeColours.map { ".bar.\($0.name),.swatch.\($0.name){fill:\($0.fill)}" }.joined(separator: "\n"))
        .bar.pending,.swatch.pending{stroke:#5f6368;stroke-dasharray:3 2}
        \(phaseColours.map { ".phase-\($0.name){fill:\($0.fill)}" }.joined(separator: "\n"))
        </style>

        """
        svg += "<text class=\"title\" x=\"\(n(margin))\" y=\"24\">\(XMLText.escape(title))</text>\n"
        var summary = rows.isEmpty ? "no requests"
            : "\(rows.count) request\(rows.count == 1 ? "" : "s") over \(span(endMs))"
        if time.bursts.count > 1 {
            summary += " (\(time.bursts.count - 1) idle gap\(time.bursts.count == 2 ? "" : "s") collapsed, busy \(span(time.shownMs)))"
        }
        svg += "<text class=\"subtitle\" x=\"\(n(margin))\" y=\"42\">\(XMLText.escape(summary))</text>\n"

        // Time axis: per burst gridlines and ticks; breaks between bursts.
        var labelled = Occupancy(), breaksLabelled = Occupancy()
        svg += "<g class=\"axis\">\n"
        for (i, gap) in time.gaps.enumerated() {
            let x0 = time.bursts[i].x + time.bursts[i].pixels
            let x1 = time.bursts[i + 1].x
            let mid = (x0 + x1) / 2
            let text = "+" + span(gap)
            labelled.claim(mid - 7, mid + 7)  // the break's strokes cross the tick row
            svg += "<g class=\"break\"><title>\(XMLText.escape(span(gap) + " idle"))</title><rect class=\"gap\" x=\"\(n(x0 + 2))\" y=\"\(n(rowsTop - 8))\" width=\"\(n(max(1, x1 - x0 - 4)))\" height=\"\(n(rowsBottom - rowsTop + 8))\"/>"
            for dx in [-2.5, 2.5] {
                svg += "<line class=\"break-mark\" x1=\"\(n(mid + dx - 3))\" y1=\"\(n(rowsTop - 4))\" x2=\"\(n(mid + dx + 3))\" y2=\"\(n(rowsTop - 22))\"/>"
            }
            if breaksLabelled.claim(mid - Double(text.count) * 3.1 - 3, mid + Double(text.count) * 3.1 + 3) {
                svg += "<text class=\"break-label\" x=\"\(n(mid))\" y=\"\(n(rowsTop - 30))\" text-anchor=\"middle\">\(XMLText.escape(text))</text>"
            }
            svg += "</g>\n"
        }
        var startsLabelled = Occupancy()
        for (b, burst) in time.bursts.enumerated() {
            if time.bursts.count > 1 {
                // Where each burst starts, in UTC to the second, above its ticks.
                let stamp = utcStamp(start + burst.startMs / 1000)
                let w = Double(stamp.count) * 6.2
                // Near the right edge the stamp ends at the edge instead.
                let left = min(burst.x, width - margin - w)
                if startsLabelled.claim(left, left + w + 8) {
                    let anchor = left < burst.x ? " text-anchor=\"end\"" : ""
                    svg += "<text class=\"burst-start\" x=\"\(n(left < burst.x ? width - margin : burst.x))\" y=\"\(n(rowsTop - 46))\" font-size=\"10\"\(anchor)>\(stamp)</text>\n"
                }
            }
            let ticks = Int((burst.width / time.step + 1e-9).rounded(.down))
            for k in 0...max(0, ticks) {
                let tick = Double(k) * time.step
                let x = burst.x + tick * time.scale
                let text = tickLabel(tick, step: time.step, axisEnd: time.axisEnd)
                // The last label ends at its tick, and a burst's first after a break starts at it, so both stay clear.
                let last = b == time.bursts.count - 1 && k == ticks && k > 0 && x > width - margin - 40
                let first = b > 0 && k == 0
                let anchor = last ? "end" : first ? "start" : "middle"
                let w = Double(text.count) * charWidth
                let (left, right) = last ? (x - w, x) : first ? (x, x + w) : (x - w / 2, x + w / 2)
                svg += "<line class=\"grid\" x1=\"\(n(x))\" y1=\"\(n(rowsTop - 8))\" x2=\"\(n(x))\" y2=\"\(n(rowsBottom))\"/>"
                if labelled.claim(left - 4, right + 4) {
                    svg += "<text class=\"tick\" x=\"\(n(x))\" y=\"\(n(rowsTop - 12))\" text-anchor=\"\(anchor)\">\(XMLText.escape(text))</text>"
                }
                svg += "\n"
            }
        }
        svg += "</g>\n"

        if rows.isEmpty {
            svg += "<text class=\"subtitle\" x=\"\(n(chartX))\" y=\"\(n(rowsTop + 14))\">No requests</text>\n"
        }

        for (i, entry) in rows.enumerated() {
            let y = rowsTop + Double(i) * rowHeight
            let outcome = outcome(entry)
            let offset = (entry.startedAt - start) * 1000
            let x = time.x(offset)
            var durationMs = max(0, entry.duration)
            if outcome == "pending" { durationMs = max(durationMs, endMs - offset) }
            // Pending bars are at least a few pixels, so their dashes show.
            let w = max(time.x(offset + durationMs) - x, outcome == "pending" ? 6 : 1)
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
                    let px = time.x(offset + phase.start)
                    let pw = max(time.x(offset + phase.start + phase.length) - px, 0.5)
                    // ssl lies within connect: drawn thinner so connect shows round it.
                    let (py, ph) = phase.name == "ssl" ? (barY + 2.5, barHeight - stripHeight - 5) : (barY, barHeight - stripHeight)
                    svg += "<rect class=\"phase phase-\(phase.name)\" x=\"\(n(px))\" y=\"\(n(py))\" width=\"\(n(pw))\" height=\"\(n(ph))\"/>"
                }
                // The duration beside the bar: after it, else before it, else inside its end.
                let text = TrafficStats.milliseconds(entry.duration)
                let tw = Double(text.count) * 6.1
                let textY = n(y + 14)
                if x + w + 4 + tw <= width - margin {
                    svg += "<text class=\"duration\" x=\"\(n(x + w + 4))\" y=\"\(textY)\">\(text)</text>"
                } else if x - 4 - tw >= chartX {
                    svg += "<text class=\"duration\" x=\"\(n(x - 4))\" y=\"\(textY)\" text-anchor=\"end\">\(text)</text>"
                } else {
                    svg += "<text class=\"duration inside\" x=\"\(n(x + w - 4))\" y=\"\(textY)\" text-anchor=\"end\">\(text)</text>"
                }
            }
            svg += "</g>\n"
        }

        // Legend: outcomes, then phases.
        svg += "<g class=\"key\">\n"
        var x = margin
        svg += "<text class=\"legend\" x=\"\(n(x))\" y=\"\(n(legendTop + 11))\">outcome:</text>\n"
        x += 72
        for (outcome, _, text) in outcomeColours {
            svg += "<rect class=\"swatch \(outcome)\" x=\"\(n(x))\" y=\"\(n(legendTop))\" width=\"14\" height=\"\(n(barHeight))\"/>"
            svg += "<text class=\"legend\" x=\"\(n(x + 20))\" y=\"\(n(legendTop + 11))\">\(XMLText.escape(text))</text>\n"
            x += 20 + Double(text.count) * charWidth + 24
        }
        x = margin
        let phaseTop = legendTop + rowHeight
        svg += "<text class=\"legend\" x=\"\(n(x))\" y=\"\(n(phaseTop + 11))\">phases:</text>\n"
        x += 72
        for (name, _) in phaseColours {
            svg += "<rect class=\"swatch phase-\(name)\" x=\"\(n(x))\" y=\"\(n(phaseTop))\" width=\"14\" height=\"\(n(barHeight))\"/>"
            svg += "<text class=\"legend\" x=\"\(n(x + 20))\" y=\"\(n(phaseTop + 11))\">\(name)</text>\n"
            x += 20 + Double(name.count) * charWidth + 24
        }
        svg += "</g>\n</svg>\n"
        return svg
    }

    // MARK: Time axis

    /// Where times fall on the chart: bursts of traffic drawn to one scale,
    /// with the idle gaps between them collapsed to breaks (see the top).
    struct Timeline {
        struct Burst {
            var startMs: Double
            /// In ms.
            var width: Double
            var x: Double
            /// Its room on the chart, at least its width to scale.
            var pixels: Double
        }
        var bursts: [Burst] = []
        /// Idle time between burst i and i + 1, in ms.
        var gaps: [Double] = []
        var step: Double, axisEnd: Double, scale: Double
        /// The time the bursts cover, in ms.
        var shownMs: Double

        /// `intervals`: each entry's (start, duration) in ms from the first start.
        init(_ intervals: [(start: Double, duration: Double)], endMs: Double) {
            var merged: [(start: Double, end: Double)] = []
            for (s, d) in intervals.sorted(by: { $0.start < $1.start }) {
                if let last = merged.last, s <= last.end { merged[merged.count - 1].end = max(last.end, s + d) }
                else { merged.append((s, s + d)) }
            }
            if merged.isEmpty { merged = [(0, 0)] }
            merged[merged.count - 1].end = max(merged[merged.count - 1].end, endMs)
            let longest = merged.map { $0.end - $0.start }.max() ?? 0
            let threshold = max(2000, longest)
            var spans: [(start: Double, end: Double)] = [merged[0]]
            for m in merged.dropFirst() {
                if m.start - spans[spans.count - 1].end > threshold { spans.append(m) } else { spans[spans.count - 1].end = m.end }
            }
            for i in spans.indices.dropLast() { gaps.append(spans[i + 1].start - spans[i].end) }
            shownMs = spans.reduce(0) { $0 + ($1.end - $1.start) }
            if spans.count == 1 {
                (step, axisEnd) = Waterfall.axis(spanMs: intervals.isEmpty ? 1000 : endMs)
                scale = Waterfall.chartWidth / axisEnd
                bursts = [Burst(startMs: 0, width: axisEnd, x: Waterfall.chartX, pixels: Waterfall.chartWidth)]
                return
            }
            // Breaks take 28 px each, less when there are many; every burst
            // gets room for a label or two, its time drawn to the common scale.
            let breakWidth = max(10, min(28, Waterfall.chartWidth * 0.4 / Double(gaps.count)))
            let room = Waterfall.chartWidth - breakWidth * Double(gaps.count)
            let minimum = min(64, room / Double(spans.count))
            let lengths = spans.map { max($0.end - $0.start, 0) }
            (step, axisEnd) = Waterfall.axis(spanMs: shownMs)
            // The scale at which the bursts, each at least `minimum` wide, fill the room.
            var low = 0.0, high = room / max(lengths.max() ?? 1, 1e-9)
            for _ in 0..<60 {
                let mid = (low + high) / 2
                if lengths.reduce(0, { $0 + max(minimum, $1 * mid) }) > room { high = mid } else { low = mid }
            }
            scale = low
            var x = Waterfall.chartX
            for (s, length) in zip(spans, lengths) {
                bursts.append(Burst(startMs: s.start, width: length, x: x, pixels: max(minimum, length * scale)))
                x += max(minimum, length * scale) + breakWidth
            }
        }

        /// The chart x of a time (ms from the first start).
        func x(_ ms: Double) -> Double {
            let burst = bursts.last { $0.startMs <= ms } ?? bursts[0]
            return burst.x + min(max(0, ms - burst.startMs), burst.width) * scale
        }
    }

    /// Horizontal ranges already labelled, so labels never overprint.
    struct Occupancy {
        var taken: [(Double, Double)] = []
        /// Takes the range if it is free; false when it is not.
        @discardableResult
        mutating func claim(_ a: Double, _ b: Double) -> Bool {
            guard !taken.contains(where: { a < $0.1 && $0.0 < b }) else { return false }
            taken.append((a, b))
            return true
        }
    }

    /// A length of time in the largest fitting unit: "350 ms", "2.40 s", "5.0 min", "3.2 h", "41 d".
    static func span(_ ms: Double) -> String {
        let s = ms / 1000
        if s < 60 { return TrafficStats.milliseconds(ms) }
        if s < 3600 { return TrafficStats.fixed(s / 60, 1) + " min" }
        if s < 86400 * 2 { return TrafficStats.fixed(s / 3600, 1) + " h" }
        return TrafficStats.fixed(s / 86400, s < 86400 * 20 ? 1 : 0) + " d"
    }

    /// "2026-03-01 14:20:05 UTC".
    static func utcStamp(_ seconds: Double) -> String {
        let iso = HARDate.format(seconds)
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + " UTC"
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
