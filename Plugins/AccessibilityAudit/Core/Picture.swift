import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The picture of an audited screen: the screenshot (or a wireframe of the
/// element frames) with each finding's box outlined in its severity's colour
/// and numbered as in the report.
///
/// Geometry: frames are in points in screen coordinates; a point is
/// `screen.scale` pixels and `screen.size.x/y` is the picture's top-left
/// corner. A box partly off the screen is clipped to it (its visible part is
/// outlined all round); a box entirely off the screen gets no outline but
/// still gets its number tag, at the nearest edge. Tags sit inside the box's
/// top-left corner, are kept inside the picture, and are moved aside when
/// they would cover an earlier tag. Boxes are drawn notes first and errors
/// last, so errors are on top.
public enum Picture {
    /// The audit picture as PNG: the screenshot scaled to the screen's pixel
    /// size (or, when there is none, a wireframe drawn from the element frames:
    /// light grey background, each visible element's frame outlined in grey and
    /// shaded darker the deeper it is nested), with each box outlined (error:
    /// red, warning: orange, note: blue; 2 points wide) and its number drawn in
    /// a filled tag at the box's top-left corner.
    public static func png(screen: Screen, screenshot: Bitmap?, boxes: [PictureBox]) throws(LayoutError) -> [UInt8] {
        try bitmap(screen: screen, screenshot: screenshot, boxes: boxes).pngBytes()
    }

    /// The audit picture as an image (what ``png(screen:screenshot:boxes:)`` encodes).
    public static func bitmap(screen: Screen, screenshot: Bitmap?, boxes: [PictureBox]) throws(LayoutError) -> Bitmap {
        let canvas = try Canvas(screen: screen, screenshot: screenshot)
        var image: Bitmap
        if let screenshot, screenshot.width > 0, screenshot.height > 0 {
            image = Bitmap(width: canvas.pixelWidth, height: canvas.pixelHeight, fill: Color(red: 1, green: 1, blue: 1))
            image.draw(screenshot.resized(width: canvas.pixelWidth, height: canvas.pixelHeight), x: 0, y: 0)
        } else {
            image = Bitmap(width: canvas.pixelWidth, height: canvas.pixelHeight, fill: Style.wireframeBackground)
            let line = max(1, Int((canvas.scale * 0.5).rounded()))
            visit(screen.root) { element in
                let rect = canvas.pixelRect(element.frame)
                image.fill(rect, with: Style.wireframeShade)
                image.strokeRect(rect, width: line, color: Style.wireframeLine)
            }
        }

        let ordered = order(boxes)
        let lineWidth = max(2, Int((Style.boxLineWidth * canvas.scale).rounded()))
        let halo = max(1, lineWidth / 3)
        for box in ordered {
            let visible = canvas.pixelRect(box.frame).intersection(image.bounds)
            guard !visible.isEmpty else { continue }
            // A thin light line outside the outline keeps it visible on any background.
            image.strokeRect(visible.insetBy(-halo), width: halo, color: Style.halo)
            image.strokeRect(visible, width: lineWidth, color: Style.color(box.severity))
        }

        let textScale = max(2, Int((canvas.scale * 4 / 3).rounded()))
        let padding = textScale
        var placed: [PixelRect] = []
        for box in ordered {
            let text = String(box.number)
            let size = Bitmap.textSize(text, scale: textScale)
            let tagWidth = size.width + 2 * padding, tagHeight = size.height + 2 * padding
            let corner = canvas.pixelRect(box.frame)
            let tag = place(PixelRect(x: corner.x, y: corner.y, width: tagWidth, height: tagHeight),
                            within: image.bounds, avoiding: placed)
            placed.append(tag)
            image.fill(tag, with: Style.color(box.severity))
            image.drawText(text, x: tag.x + padding, y: tag.y + padding, scale: textScale, color: Style.tagText(box.severity))
        }
        return image
    }

    /// The same picture as SVG text, sized in points (`viewBox` in the
    /// screen's point coordinates): the screenshot embedded as a base64
    /// `data:image/png` URI in an `<image>` when given (or, if it cannot be
    /// encoded, the wireframe), else the wireframe as `<rect class="element">`s
    /// over a `<rect class="background">`. Each box is a
    /// `<g class="finding SEVERITY" id="finding-N">` holding a `<title>`
    /// ("#3 error: MESSAGE", the message from `messages[number]`, or just
    /// "#3 error" without one), exactly one `<rect class="box">`, its tag as a
    /// `<path class="tag">` and its number as a `<text>`. Text is escaped and
    /// characters XML cannot hold become U+FFFD (`XMLText.escape`), so the result is well-formed XML.
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
        let n = Format.number
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\""
        out += " width=\"\(n(width))\" height=\"\(n(height))\" viewBox=\"\(n(origin.x)) \(n(origin.y)) \(n(width)) \(n(height))\">\n"
        out += "<title>\(XMLText.escape("Accessibility audit" + (screen.name.map { ": " + $0 } ?? "")))</title>\n"

        var embedded = false
        if let screenshot, screenshot.width > 0, screenshot.height > 0, let png = try? screenshot.pngBytes() {
            out += "<image class=\"screenshot\" x=\"\(n(origin.x))\" y=\"\(n(origin.y))\" width=\"\(n(width))\" height=\"\(n(height))\""
            out += " preserveAspectRatio=\"none\" xlink:href=\"data:image/png;base64,"
            out += Base64.encode(png)
            out += "\"/>\n"
            embedded = true
        }
        if !embedded {
            out += "<rect class=\"background\" x=\"\(n(origin.x))\" y=\"\(n(origin.y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(Style.wireframeBackground)\"/>\n"
            out += "<g class=\"wireframe\" fill=\"#000000\" fill-opacity=\"\(n(Style.wireframeShade.alpha))\" stroke=\"\(Style.wireframeLine)\" stroke-width=\"0.5\">\n"
            visit(screen.root) { element in
                let f = element.frame
                guard f.x.isFinite, f.y.isFinite, f.width.isFinite, f.height.isFinite, f.width >= 0, f.height >= 0 else { return }
                out += "<rect class=\"element\" x=\"\(n(f.x))\" y=\"\(n(f.y))\" width=\"\(n(f.width))\" height=\"\(n(f.height))\"/>\n"
            }
            out += "</g>\n"
        }

        let bounds = Rect(x: origin.x, y: origin.y, width: width, height: height)
        let stroke = Style.boxLineWidth
        let tagHeight = 14.0, fontSize = 12.0, charWidth = 7.5
        var placed: [Rect] = []
        out += "<g class=\"findings\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-weight=\"bold\" font-size=\"\(n(fontSize))\" text-anchor=\"middle\">\n"
        for box in order(boxes) {
            let severity = box.severity.rawValue
            let color = Style.color(box.severity)
            var title = "#\(box.number) \(severity)"
            if let message = messages[box.number], !message.isEmpty { title += ": " + message }
            out += "<g class=\"finding \(severity)\" id=\"finding-\(box.number)\">"
            out += "<title>\(XMLText.escape(title))</title>"
            let frame = sanitized(box.frame)
            let visible = frame.intersection(bounds)
            // The outline lies inside the box, as in the PNG. Off-screen boxes get
            // an empty (invisible) rect, so there is still one rect per box.
            let inset = min(stroke / 2, visible.width / 2, visible.height / 2)
            out += "<rect class=\"box\" x=\"\(n(visible.x + inset))\" y=\"\(n(visible.y + inset))\""
            out += " width=\"\(n(max(0, visible.width - 2 * inset)))\" height=\"\(n(max(0, visible.height - 2 * inset)))\""
            out += " fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(visible.isEmpty ? "0" : n(stroke))\"/>"

            let text = String(box.number)
            let tagWidth = Double(text.count) * charWidth + 6
            let tag = place(Rect(x: frame.x, y: frame.y, width: tagWidth, height: tagHeight), within: bounds, avoiding: placed)
            placed.append(tag)
            out += "<path class=\"tag\" d=\"M\(n(tag.x)) \(n(tag.y))h\(n(tag.width))v\(n(tag.height))h\(n(-tag.width))z\" fill=\"\(color)\"/>"
            out += "<text x=\"\(n(tag.x + tag.width / 2))\" y=\"\(n(tag.y + 11))\" fill=\"\(Style.tagText(box.severity))\">\(text)</text>"
            out += "</g>\n"
        }
        out += "</g>\n</svg>\n"
        return out
    }

    // MARK: Layout

    /// Points to pixels for one picture.
    struct Canvas {
        var pixelWidth: Int, pixelHeight: Int
        var scale: Double
        var originX: Double, originY: Double

        init(screen: Screen, screenshot: Bitmap?) throws(LayoutError) {
            guard screen.scale.isFinite, screen.scale > 0 else {
                throw LayoutError("cannot draw the picture: the scale \(screen.scale) is not a positive number")
            }
            scale = screen.scale
            originX = finite(screen.size.x)
            originY = finite(screen.size.y)
            let width = finite(screen.size.width) * scale, height = finite(screen.size.height) * scale
            if width >= 0.5, height >= 0.5 {
                guard width <= 32768, height <= 32768 else {
                    throw LayoutError("cannot draw the picture: \(Format.number(width)) × \(Format.number(height)) pixels is too large")
                }
                pixelWidth = Int(width.rounded())
                pixelHeight = Int(height.rounded())
            } else if let screenshot, screenshot.width > 0, screenshot.height > 0 {
                pixelWidth = screenshot.width
                pixelHeight = screenshot.height
            } else {
                throw LayoutError("cannot draw the picture: the screen has no size and there is no screenshot")
            }
            guard pixelWidth * pixelHeight <= Bitmap.maximumPixelCount else {
                throw LayoutError("cannot draw the picture: \(pixelWidth) × \(pixelHeight) pixels is too large")
            }
        }

        /// The pixels a frame covers (at least one pixel each way), unclipped.
        func pixelRect(_ frame: Rect) -> PixelRect {
            let f = sanitized(frame)
            func pixel(_ value: Double) -> Double { min(max(value, -1e7), 1e7) }
            let x0 = Int(pixel(((f.x - originX) * scale).rounded(.down)))
            let y0 = Int(pixel(((f.y - originY) * scale).rounded(.down)))
            let x1 = Int(pixel(((f.maxX - originX) * scale).rounded(.up)))
            let y1 = Int(pixel(((f.maxY - originY) * scale).rounded(.up)))
            return PixelRect(x: x0, y: y0, width: max(1, x1 - x0), height: max(1, y1 - y0))
        }
    }

    /// Errors first is how reports list them; drawing goes the other way so errors end on top.
    static func order(_ boxes: [PictureBox]) -> [PictureBox] {
        boxes.enumerated().sorted { a, b in
            if a.element.severity != b.element.severity { return a.element.severity > b.element.severity }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// Every element not hidden, parents before children.
    static func visit(_ element: Element, _ body: (Element) -> Void) {
        guard !element.isHidden else { return }
        body(element)
        for child in element.children { visit(child, body) }
    }

    /// `tag` moved inside `bounds` (at the nearest edge when outside), then
    /// stepped right (wrapping down a row) past any tag already placed.
    static func place(_ tag: PixelRect, within bounds: PixelRect, avoiding placed: [PixelRect]) -> PixelRect {
        func points(_ r: PixelRect) -> Rect { Rect(x: Double(r.x), y: Double(r.y), width: Double(r.width), height: Double(r.height)) }
        let r = place(points(tag), within: points(bounds), avoiding: placed.map(points), gap: 1)
        return PixelRect(x: Int(r.x.rounded()), y: Int(r.y.rounded()), width: tag.width, height: tag.height)
    }

    static func place(_ tag: Rect, within bounds: Rect, avoiding placed: [Rect], gap: Double = 0.5) -> Rect {
        func clamp(_ r: Rect) -> Rect {
            var r = r
            r.x = max(bounds.x, min(r.x, bounds.maxX - r.width))
            r.y = max(bounds.y, min(r.y, bounds.maxY - r.height))
            return r
        }
        let start = clamp(tag)
        var candidate = start
        for _ in 0..<64 {
            guard let blocker = placed.first(where: { !$0.intersection(candidate).isEmpty }) else { return candidate }
            candidate.x = blocker.maxX + gap
            if candidate.maxX > bounds.maxX {
                candidate.x = start.x
                candidate.y = blocker.maxY + gap
            }
            candidate = clamp(candidate)
        }
        return start
    }

    /// A frame with non-finite values replaced (NaN as 0, infinities as ±1e7) and negative sizes as 0.
    static func sanitized(_ frame: Rect) -> Rect {
        Rect(x: finite(frame.x), y: finite(frame.y), width: max(0, finite(frame.width)), height: max(0, finite(frame.height)))
    }

    static func finite(_ value: Double) -> Double {
        if value.isNaN { return 0 }
        return min(max(value, -1e7), 1e7)
    }

    /// Colours and line widths shared by the PNG and the SVG.
    enum Style {
        static let error = Color(r: 220, g: 0, b: 0)
        static let warning = Color(r: 255, g: 136, b: 0)
        static let note = Color(r: 0, g: 102, b: 255)
        static let halo = Color(r: 255, g: 255, b: 255, a: 200)
        static let wireframeBackground = Color(r: 240, g: 240, b: 240)
        static let wireframeLine = Color(r: 150, g: 150, b: 150)
        static let wireframeShade = Color(red: 0, green: 0, blue: 0, alpha: 0.04)
        /// The outline of a box, in points.
        static let boxLineWidth = 2.0

        static func color(_ severity: Severity) -> Color {
            switch severity {
            case .error: error
            case .warning: warning
            case .note: note
            }
        }

        /// White on red and blue, black on orange (white on orange is too faint).
        static func tagText(_ severity: Severity) -> Color {
            severity == .warning ? Color(r: 0, g: 0, b: 0) : Color(r: 255, g: 255, b: 255)
        }
    }
}
