import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The picture of an audited screen, as SVG: the screenshot (or a wireframe
/// of the element frames, each labelled with its text) with each finding's
/// box outlined in its severity's colour and numbered as in the report, and a
/// legend of the severities beneath. `PictureFile` writes it as SVG or PNG.
///
/// Geometry: the `viewBox` is the screen in points (`screen.size`, its x/y
/// the top-left corner) plus the legend band; `width`/`height` are that in
/// pixels (points × `screen.scale`), so a PNG has the screenshot's
/// resolution. A box partly off the screen is clipped to it; a box entirely
/// off it gets no outline but still gets its badge, at the nearest edge.
///
/// Legibility: outlines are three strokes (light, dark, then the severity's
/// colour) so they show on light and dark screenshots alike; badges are
/// circles (pills past two digits) with a light rim and a dark ring, kept
/// `badgeGap` apart so `1` beside `2` never reads as `12`; a badge sits
/// inside a large box's top-right corner (text starts at the left), else
/// beside the box so it does not hide a small element, and never over
/// another small box. Boxes are drawn notes first and errors last (errors on top); badges are drawn after every outline.
public enum Picture {
    /// The picture as SVG text. Each finding is a
    /// `<g class="finding SEVERITY" id="finding-N">` holding a `<title>`
    /// ("#3 error: MESSAGE", the message from `messages[number]`, or just
    /// "#3 error"), the outline as `<rect class="halo">`, `<rect class="rim">`
    /// and exactly one `<rect class="box">`; its badge is a
    /// `<g class="badge SEVERITY" id="badge-N">` in the `badges` group, with
    /// the number as a `<text>`. The screenshot is embedded as a base64
    /// `data:image/png` URI in an `<image class="screenshot">` (or, if it cannot
    /// be encoded, the wireframe is drawn), else the wireframe is
    /// `<rect class="element">`s over a `<rect class="background">`, with each
    /// element's label (or value) as a `<text class="element-text">` clipped to
    /// its frame. Text is escaped and characters XML cannot hold become
    /// U+FFFD (`XMLText.escape`), so the result is well-formed XML.
    public static func svg(screen: Screen, screenshot: Bitmap?, boxes: [PictureBox], messages: [Int: String] = [:]) -> String {
        let origin = (x: finite(screen.size.x), y: finite(screen.size.y))
        var width = finite(screen.size.width), height = finite(screen.size.height)
        let scale = screen.scale.isFinite && screen.scale > 0 ? screen.scale : 1
        if width <= 0 || height <= 0, let screenshot {
            width = Double(screenshot.width) / scale
            height = Double(screenshot.height) / scale
        }
        width = max(width, 1)
        height = max(height, 1)
        let key = Legend(boxes, width: width)
        let band = key.height
        let n = Format.number
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\""
        out += " width=\"\(n(width * scale))\" height=\"\(n((height + band) * scale))\""
        out += " viewBox=\"\(n(origin.x)) \(n(origin.y)) \(n(width)) \(n(height + band))\">\n"
        out += "<title>\(XMLText.escape("Accessibility audit" + (screen.name.map { ": " + $0 } ?? "")))</title>\n"

        var embedded = false
        if let screenshot, screenshot.width > 0, screenshot.height > 0, let png = try? screenshot.pngBytes() {
            out += "<image class=\"screenshot\" x=\"\(n(origin.x))\" y=\"\(n(origin.y))\" width=\"\(n(width))\" height=\"\(n(height))\""
            out += " preserveAspectRatio=\"none\" xlink:href=\"data:image/png;base64,"
            out += Base64.encode(png)
            out += "\"/>\n"
            embedded = true
        }
        if !embedded { out += wireframe(screen.root, origin: origin, width: width, height: height) }

        let bounds = Rect(x: origin.x, y: origin.y, width: width, height: height)
        let inReadingOrder = boxes.sorted { $0.number < $1.number }
        var badges: [Int: Rect] = [:]
        var placed: [Rect] = []
        // Small boxes a badge must not hide, its own or another finding's.
        let small = boxes.map { sanitized($0.frame).intersection(bounds) }
            .filter { !$0.isEmpty && !($0.width >= 3 * Style.badgeHeight && $0.height >= 2 * Style.badgeHeight) }
        // Text a badge should rather not hide: the labelled elements the wireframe writes in.
        var texts: [Rect] = []
        visit(screen.root) { element in
            if shownText(element) != nil, !hasLabelledDescendant(element) { texts.append(sanitized(element.frame).intersection(bounds)) }
        }
        for box in inReadingOrder {
            let frame = sanitized(box.frame)
            let nearby = texts.filter { !$0.isEmpty && $0.intersection(frame).isEmpty }
            let badge = placeBadge(for: frame, size: badgeSize(box.number), within: bounds, avoiding: placed, uncovering: small, preferablyNot: nearby)
            placed.append(badge)
            badges[box.number] = badge
        }

        out += "<g class=\"findings\" fill=\"none\">\n"
        for box in drawingOrder(boxes) {
            let severity = box.severity.rawValue
            out += "<g class=\"finding \(severity)\" id=\"finding-\(box.number)\">"
            out += "<title>\(XMLText.escape(title(box, messages)))</title>"
            // Off-screen boxes get empty rects, so there is still one box rect per finding.
            let visible = sanitized(box.frame).intersection(bounds)
            let inset = min(Style.boxLineWidth / 2, visible.width / 2, visible.height / 2)
            let r = visible.isEmpty ? Rect(x: bounds.x, y: bounds.y, width: 0, height: 0)
                : Rect(x: visible.x + inset, y: visible.y + inset, width: visible.width - 2 * inset, height: visible.height - 2 * inset)
            let geometry = "x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\""
            let shown = !visible.isEmpty
            out += "<rect class=\"halo\" \(geometry) stroke=\"\(Style.light)\" stroke-opacity=\"0.9\" stroke-width=\"\(shown ? n(Style.boxLineWidth + 3.5) : "0")\"/>"
            out += "<rect class=\"rim\" \(geometry) stroke=\"\(Style.dark)\" stroke-width=\"\(shown ? n(Style.boxLineWidth + 1.5) : "0")\"/>"
            out += "<rect class=\"box\" \(geometry) stroke=\"\(Style.color(box.severity))\" stroke-width=\"\(shown ? n(Style.boxLineWidth) : "0")\"/>"
            out += "</g>\n"
        }
        out += "</g>\n"

        // Leaders join a badge set apart from its box; under every badge, so none crosses one.
        out += "<g class=\"leaders\" stroke=\"\(Style.dark)\" stroke-opacity=\"0.6\" stroke-width=\"1\">\n"
        for box in inReadingOrder {
            guard let badge = badges[box.number] else { continue }
            let frame = sanitized(box.frame).intersection(bounds)
            guard !frame.isEmpty, frame.intersection(badge.inflated(by: 3)).isEmpty else { continue }
            let centre = (x: badge.x + badge.width / 2, y: badge.y + badge.height / 2)
            let target = (x: min(max(centre.x, frame.x), frame.maxX), y: min(max(centre.y, frame.y), frame.maxY))
            out += "<line class=\"leader\" x1=\"\(n(centre.x))\" y1=\"\(n(centre.y))\" x2=\"\(n(target.x))\" y2=\"\(n(target.y))\"/>\n"
        }
        out += "</g>\n"
        // Badges above every outline and leader.
        out += "<g class=\"badges\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-weight=\"bold\" font-size=\"\(n(Style.badgeFont))\" text-anchor=\"middle\">\n"
        for box in inReadingOrder {
            guard let badge = badges[box.number] else { continue }
            out += "<g class=\"badge \(box.severity.rawValue)\" id=\"badge-\(box.number)\">"
            out += "<title>\(XMLText.escape(title(box, messages)))</title>"
            out += pill(badge, fill: Style.color(box.severity))
            out += "<text x=\"\(n(badge.x + badge.width / 2))\" y=\"\(n(badge.y + badge.height / 2 + Style.badgeFont * 0.36))\""
            out += " fill=\"\(Style.textColor(box.severity))\">\(box.number)</text>"
            out += "</g>\n"
        }
        out += "</g>\n"
        out += key.svg(x: origin.x, y: origin.y + height, width: width)
        out += "</svg>\n"
        return out
    }

    static func title(_ box: PictureBox, _ messages: [Int: String]) -> String {
        var title = "#\(box.number) \(box.severity.rawValue)"
        if let message = messages[box.number], !message.isEmpty { title += ": " + message }
        return title
    }

    // MARK: Wireframe

    /// The element frames over a light background, shaded darker the deeper
    /// they nest, each with its label (or value) clipped to its frame. Only
    /// the innermost labelled elements are labelled, and one of several on
    /// the same frame, so texts do not overprint.
    static func wireframe(_ root: Element, origin: (x: Double, y: Double), width: Double, height: Double) -> String {
        let n = Format.number
        var out = "<rect class=\"background\" x=\"\(n(origin.x))\" y=\"\(n(origin.y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(Style.wireframeBackground)\"/>\n"
        out += "<g class=\"wireframe\" fill=\"#000000\" fill-opacity=\"0.02\" stroke=\"\(Style.wireframeLine)\" stroke-width=\"0.5\">\n"
        var labels: [(frame: Rect, text: String)] = []
        visit(root) { element in
            let f = element.frame
            guard f.x.isFinite, f.y.isFinite, f.width.isFinite, f.height.isFinite, f.width >= 0, f.height >= 0 else { return }
            out += "<rect class=\"element\" x=\"\(n(f.x))\" y=\"\(n(f.y))\" width=\"\(n(f.width))\" height=\"\(n(f.height))\"/>\n"
            // Elements stacked on one frame (duplicates) show the first one's text only.
            if let text = shownText(element), f.width >= 4, f.height >= 4, !hasLabelledDescendant(element),
               !labels.contains(where: { $0.frame == f }) {
                labels.append((f, text))
            }
        }
        out += "</g>\n"
        guard !labels.isEmpty else { return out }
        out += "<defs>\n"
        for (i, label) in labels.enumerated() {
            let f = label.frame
            out += "<clipPath id=\"clip-\(i + 1)\"><rect x=\"\(n(f.x))\" y=\"\(n(f.y))\" width=\"\(n(f.width))\" height=\"\(n(f.height))\"/></clipPath>\n"
        }
        out += "</defs>\n<g class=\"element-texts\" font-family=\"DejaVu Sans, Verdana, sans-serif\" fill=\"\(Style.wireframeText)\">\n"
        for (i, label) in labels.enumerated() {
            let f = label.frame
            let size = max(5, min(11, f.height * 0.7))
            // Centred in a box a few lines high, else at its top.
            let middle = f.height <= 3 * size ? f.height / 2 : size * 0.8
            out += "<text class=\"element-text\" clip-path=\"url(#clip-\(i + 1))\" x=\"\(n(f.x + 3))\" y=\"\(n(f.y + middle + size * 0.36))\""
            out += " font-size=\"\(n(size))\">\(XMLText.escape(label.text))</text>\n"
        }
        return out + "</g>\n"
    }

    /// What a wireframe box says: its label, else its value; on one line.
    static func shownText(_ element: Element) -> String? {
        for candidate in [element.label, element.value] {
            guard let text = candidate else { continue }
            let line = String(text.map { $0.isNewline ? " " : $0 }.drop { $0 == " " })
            if line.contains(where: { $0 != " " }) { return line.count > 200 ? String(line.prefix(199)) + "…" : line }
        }
        return nil
    }

    static func hasLabelledDescendant(_ element: Element) -> Bool {
        element.children.contains { !$0.isHidden && (shownText($0) != nil || hasLabelledDescendant($0)) }
    }

    // MARK: Badges and legend

    /// A badge's size in points: a circle for one or two digits, a pill past that.
    static func badgeSize(_ number: Int) -> (width: Double, height: Double) {
        let digits = Double(String(number).count)
        return (max(Style.badgeHeight, digits * Style.badgeFont * 0.7 + 7), Style.badgeHeight)
    }

    /// A badge: the severity's colour with a light rim, inside a dark ring.
    static func pill(_ r: Rect, fill: String) -> String {
        let n = Format.number
        let radius = r.height / 2
        var out = "<rect class=\"ring\" x=\"\(n(r.x - 1))\" y=\"\(n(r.y - 1))\" width=\"\(n(r.width + 2))\" height=\"\(n(r.height + 2))\""
        out += " rx=\"\(n(radius + 1))\" fill=\"\(Style.dark)\"/>"
        out += "<rect class=\"pill\" x=\"\(n(r.x + 0.75))\" y=\"\(n(r.y + 0.75))\" width=\"\(n(r.width - 1.5))\" height=\"\(n(r.height - 1.5))\""
        out += " rx=\"\(n(radius - 0.75))\" fill=\"\(fill)\" stroke=\"\(Style.light)\" stroke-width=\"1.5\"/>"
        return out
    }

    /// Where a box's badge goes: inside its top-right corner (text starts at the
    /// left, so less is hidden there) when the box is
    /// large enough to keep most of itself in view, else beside it (left,
    /// above, right, below, by room); never within `badgeGap` of a badge
    /// already placed nor over a `small` box where another place is free,
    /// and over none of the `soft` rects (text) if it can help it; always
    /// inside `bounds` (at the nearest edge for a box off the screen).
    static func placeBadge(for frame: Rect, size: (width: Double, height: Double), within bounds: Rect, avoiding placed: [Rect],
                           uncovering small: [Rect] = [], preferablyNot soft: [Rect] = []) -> Rect {
        let (w, h) = size
        let gap = Style.badgeGap
        func clamp(_ r: Rect) -> Rect {
            var r = r
            r.x = max(bounds.x + 1, min(r.x, bounds.maxX - r.width - 1))
            r.y = max(bounds.y + 1, min(r.y, bounds.maxY - r.height - 1))
            return r
        }
        func free(_ r: Rect) -> Bool { !placed.contains { !$0.inflated(by: gap).intersection(r).isEmpty } }
        let visible = frame.intersection(bounds)
        let large = visible.width >= 3 * w && visible.height >= 2 * h
        var candidates: [Rect] = []
        if large { candidates.append(Rect(x: visible.maxX - w - 3, y: visible.y + 3, width: w, height: h)) }
        candidates += [
            Rect(x: frame.x - w - gap, y: frame.y + min(0, frame.height / 2 - h / 2), width: w, height: h),   // left
            Rect(x: frame.x, y: frame.y - h - gap, width: w, height: h),                                     // above
            Rect(x: frame.maxX + gap, y: frame.y + min(0, frame.height / 2 - h / 2), width: w, height: h),  // right
            Rect(x: frame.x, y: frame.maxY + gap, width: w, height: h),                                      // below
        ]
        // First a place that hides no text either, then one that hides no small box.
        for avoidText in [true, false] {
            for candidate in candidates {
                let r = clamp(candidate)
                // Beside a small box, a badge pushed back over it by the edge is no good.
                let coversSmall = !large && !visible.isEmpty && !r.intersection(visible).isEmpty
                    || small.contains { !$0.intersection(r).isEmpty }
                let coversText = avoidText && soft.contains { !$0.intersection(r).isEmpty }
                if free(r), !coversSmall, !coversText { return r }
            }
        }
        // Crowded: the nearest free place on a grid of half-badge steps around
        // the box, first one hiding neither a small box nor text, then no small
        // box, then any; only what is near
        // is looked at, so a screen with many findings stays fast.
        let step = h / 2, reach = 8.0
        let around = Rect(x: frame.x - reach * h - w, y: frame.y - reach * h - h,
                          width: frame.width + 2 * (reach * h + w), height: frame.height + 2 * (reach * h + h))
        let nearPlaced = placed.filter { !$0.intersection(around).isEmpty }
        let nearSmall = small.filter { !$0.intersection(around).isEmpty }
        let nearText = soft.filter { !$0.intersection(around).isEmpty }
        let centre = (x: frame.x + frame.width / 2, y: frame.y + frame.height / 2)
        var offsets: [(dx: Double, dy: Double)] = []
        let n = Int(reach * 2)
        for i in -n...n { for j in -n...n { offsets.append((Double(i) * step, Double(j) * step)) } }
        offsets.sort { ($0.dx * $0.dx + $0.dy * $0.dy, $0.dy, $0.dx) < ($1.dx * $1.dx + $1.dy * $1.dy, $1.dy, $1.dx) }
        for (avoidSmall, avoidText) in [(true, true), (true, false), (false, false)] {
            for o in offsets {
                let r = clamp(Rect(x: centre.x + o.dx - w / 2, y: centre.y + o.dy - h / 2, width: w, height: h))
                guard !nearPlaced.contains(where: { !$0.inflated(by: gap).intersection(r).isEmpty }) else { continue }
                if avoidSmall, nearSmall.contains(where: { !$0.intersection(r).isEmpty }) { continue }
                if avoidText, nearText.contains(where: { !$0.intersection(r).isEmpty }) { continue }
                return r
            }
        }
        return clamp(candidates[0])
    }

    /// The band beneath the screen: each severity's badge colour, name and
    /// count, on as many lines as the screen's width needs (a screen too
    /// narrow for even one entry gets the legend smaller).
    struct Legend {
        var entries: [(severity: Severity, text: String, x: Double, line: Int)] = []
        var shrink = 1.0
        var height: Double

        static let lineHeight = 18.0

        init(_ boxes: [PictureBox], width: Double) {
            let texts = Severity.allCases.map { severity in (severity, "\(severity.rawValue) (\(boxes.filter { $0.severity == severity }.count))") }
            // DejaVu Sans at 11 points averages under 6 points a character (lower case and digits).
            let widths = texts.map { 17 + Double($0.1.count) * 5.8 + 10 }
            let room = max(width - 16, 1)
            shrink = min(1, room / (widths.max() ?? 1))
            var x = 0.0, line = 0
            for ((severity, text), w) in zip(texts, widths) {
                if x > 0, (x + w) * shrink > room { x = 0; line += 1 }
                entries.append((severity, text, x, line))
                x += w
            }
            height = 4 + Double(line + 1) * Legend.lineHeight * shrink
        }

        func svg(x: Double, y: Double, width: Double) -> String {
            let n = Format.number
            var out = "<g class=\"legend\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\" fill=\"\(Style.dark)\">\n"
            out += "<rect class=\"legend-band\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(Style.light)\" stroke=\"\(Style.wireframeLine)\" stroke-width=\"0.5\"/>\n"
            out += "<g transform=\"translate(\(n(x + 8)) \(n(y + 2 + Legend.lineHeight * shrink / 2))) scale(\(n(shrink)))\">\n"
            for entry in entries {
                let top = Double(entry.line) * Legend.lineHeight
                let swatch = Rect(x: entry.x, y: top - 6, width: 12, height: 12)
                out += "<g class=\"legend-entry \(entry.severity.rawValue)\">" + pill(swatch, fill: Style.color(entry.severity))
                out += "<text x=\"\(n(entry.x + 17))\" y=\"\(n(top + 4))\">\(entry.text)</text></g>\n"
            }
            return out + "</g>\n</g>\n"
        }
    }

    // MARK: Geometry

    /// Notes first, errors last, so errors end on top; the same severity in number order.
    static func drawingOrder(_ boxes: [PictureBox]) -> [PictureBox] {
        boxes.sorted { a, b in a.severity != b.severity ? a.severity > b.severity : a.number < b.number }
    }

    /// Every element not hidden, parents before children.
    static func visit(_ element: Element, _ body: (Element) -> Void) {
        guard !element.isHidden else { return }
        body(element)
        for child in element.children { visit(child, body) }
    }

    /// A frame with non-finite values replaced (NaN as 0, infinities as ±1e7) and negative sizes as 0.
    static func sanitized(_ frame: Rect) -> Rect {
        Rect(x: finite(frame.x), y: finite(frame.y), width: max(0, finite(frame.width)), height: max(0, finite(frame.height)))
    }

    static func finite(_ value: Double) -> Double {
        if value.isNaN { return 0 }
        return min(max(value, -1e7), 1e7)
    }

    /// Colours (as SVG writes them) and sizes in points.
    enum Style {
        // Red and orange differ in lightness too, so they stay apart for colour-blind readers.
        static let error = "#d40000"
        static let warning = "#f59c00"
        static let note = "#0072b2"
        static let light = "#ffffff"
        static let dark = "#1a1a1a"
        static let wireframeBackground = "#f0f0f0"
        static let wireframeLine = "#969696"
        static let wireframeText = "#3c3c3c"
        static let boxLineWidth = 2.0
        static let badgeHeight = 17.0
        static let badgeFont = 11.0
        /// The least room between two badges.
        static let badgeGap = 3.0

        static func color(_ severity: Severity) -> String {
            switch severity {
            case .error: error
            case .warning: warning
            case .note: note
            }
        }

        /// White on red and blue, black on orange (white on orange is too faint).
        static func textColor(_ severity: Severity) -> String { severity == .warning ? "#000000" : "#ffffff" }
    }
}

extension Rect {
    func inflated(by d: Double) -> Rect { Rect(x: x - d, y: y - d, width: width + 2 * d, height: height + 2 * d) }
}
