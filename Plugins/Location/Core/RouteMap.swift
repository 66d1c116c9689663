import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// A picture of a route as a standalone SVG: the track in Web Mercator,
/// fitted to the page; each segment its own line (gaps stay gaps); every
/// waypoint a dot (numbered when the route has few, each number placed
/// clear of the others), the start a large green disc and the end a smaller
/// red one on top (both show on a loop); a legend, a scale bar and the
/// route's length.
public enum RouteMap {
    static let width = 800.0, height = 600.0, margin = 40.0

    public static func svg(_ route: Route) -> String {
        let points = route.points
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="sans-serif">
            <rect width="100%" height="100%" fill="#f6f8fa"/>
            <title>\(XMLText.escape(route.name))</title>

            """
        guard !points.isEmpty else { return out + "<text x=\"\(n(margin))\" y=\"\(n(margin))\">no points</text>\n</svg>\n" }
        // Longitudes unwrapped along the route, so one crossing the antimeridian stays in one piece.
        var unwrapped: [Double] = []
        for p in points {
            var λ = p.coordinate.longitude
            if let last = unwrapped.last {
                while λ - last > 180 { λ -= 360 }
                while λ - last < -180 { λ += 360 }
            }
            unwrapped.append(λ)
        }
        func mercatorY(_ φ: Double) -> Double {
            let clamped = max(-85.05, min(85.05, φ))
            return log(tan(.pi / 4 + clamped * .pi / 360))
        }
        let xs = unwrapped.map { $0 * .pi / 180 }, ys = points.map { mercatorY($0.coordinate.latitude) }
        let minX = xs.min()!, maxX = xs.max()!, minY = ys.min()!, maxY = ys.max()!
        let spanX = max(maxX - minX, 1e-9), spanY = max(maxY - minY, 1e-9)
        let scale = min((width - 2 * margin) / spanX, (height - 2 * margin - 30) / spanY)
        let offsetX = (width - spanX * scale) / 2, offsetY = (height - 30 - spanY * scale) / 2
        func page(_ i: Int) -> (Double, Double) { (offsetX + (xs[i] - minX) * scale, offsetY + (maxY - ys[i]) * scale) }

        var index = 0
        var length = 0.0
        for segment in route.segments {
            let range = index..<(index + segment.count)
            index += segment.count
            guard !range.isEmpty else { continue }
            let path = range.map { i -> String in let (x, y) = page(i); return "\(n(x)),\(n(y))" }.joined(separator: " ")
            out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"#0a60ff\" stroke-width=\"3\" stroke-linejoin=\"round\"/>\n"
            // On the ellipsoid, as loc.routes and playback measure it.
            for i in range.dropFirst() { length += Ellipsoidal.inverse(points[i - 1].coordinate, points[i].coordinate).distance }
        }
        // Waypoints: small dots (smaller still on a dense track), then the start as a
        // large green disc and the end as a red dot ringed in white on top, so a
        // loop that ends where it began shows both.
        let numbered = points.count <= 60
        let dot = numbered ? 3.5 : 2.0
        for i in points.indices.dropFirst().dropLast() {
            let (x, y) = page(i)
            out += "<circle class=\"waypoint\" cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(dot))\" fill=\"#0a60ff\"\(numbered ? " stroke=\"#ffffff\" stroke-width=\"1\"" : "")>"
                + "<title>\(tooltip(i))</title></circle>\n"
        }
        let (sx, sy) = page(0)
        out += "<circle class=\"start\" cx=\"\(n(sx))\" cy=\"\(n(sy))\" r=\"8\" fill=\"#1a9e3a\" stroke=\"#ffffff\" stroke-width=\"1.5\"><title>start \(tooltip(0))</title></circle>\n"
        if points.count > 1 {
            let (ex, ey) = page(points.count - 1)
            out += "<circle class=\"end\" cx=\"\(n(ex))\" cy=\"\(n(ey))\" r=\"4.5\" fill=\"#d62828\" stroke=\"#ffffff\" stroke-width=\"1.5\"><title>end \(tooltip(points.count - 1))</title></circle>\n"
        }
        if numbered {
            // Each number in the first free corner beside its point, so neighbours never run together.
            var taken: [(x0: Double, y0: Double, x1: Double, y1: Double)] = []
            for i in points.indices {
                let (x, y) = page(i)
                let text = String(i + 1)
                let w = Double(text.count) * 6.2, h = 10.0
                let r = i == 0 ? 9.0 : 5.0
                let corners = [(x + r, y - r), (x + r, y + r + h), (x - r - w, y - r), (x - r - w, y + r + h)]
                let free = corners.first { c in !taken.contains { c.0 < $0.x1 && $0.x0 < c.0 + w && c.1 - h < $0.y1 && $0.y0 < c.1 } }
                guard let (lx, ly) = free else { continue }
                taken.append((lx, ly - h, lx + w, ly))
                out += "<text class=\"number\" x=\"\(n(lx))\" y=\"\(n(ly))\" font-size=\"10\" fill=\"#333\">\(text)</text>\n"
            }
        }
        func tooltip(_ i: Int) -> String {
            let point = points[i]
            let label = [point.name, point.time.map { ISOTime.format($0) }].compactMap { $0 }.joined(separator: " ")
            return "#\(i + 1) \(point.coordinate)\(label.isEmpty ? "" : " " + XMLText.escape(label))"
        }
        // Legend: what the two large dots mean, right-aligned above the summary line.
        let lx = width - margin, ly = height - 42
        out += "<g class=\"legend\" font-size=\"12\" fill=\"#333\">"
        out += "<circle cx=\"\(n(lx - 94))\" cy=\"\(n(ly - 4))\" r=\"6\" fill=\"#1a9e3a\"/><text x=\"\(n(lx - 84))\" y=\"\(n(ly))\">start</text>"
        out += "<circle cx=\"\(n(lx - 30))\" cy=\"\(n(ly - 4))\" r=\"4.5\" fill=\"#d62828\"/><text x=\"\(n(lx - 21))\" y=\"\(n(ly))\">end</text></g>\n"
        // Scale bar: a round distance near a quarter of the width, at the middle latitude.
        let midφ = (points.map(\.coordinate.latitude).min()! + points.map(\.coordinate.latitude).max()!) / 2
        let metresPerPixel = 6_371_008.8 * cos(midφ * .pi / 180) / scale
        let target = metresPerPixel * (width / 4)
        let magnitude = pow(10, floor(log10(max(target, 1))))
        let bar = [1.0, 2, 5, 10].map { $0 * magnitude }.last { $0 <= target } ?? magnitude
        let barPixels = bar / metresPerPixel
        let baseY = height - 20
        out += "<line x1=\"\(n(margin))\" y1=\"\(n(baseY))\" x2=\"\(n(margin + barPixels))\" y2=\"\(n(baseY))\" stroke=\"#333\" stroke-width=\"3\"/>\n"
        out += "<text x=\"\(n(margin))\" y=\"\(n(baseY - 8))\" font-size=\"12\" fill=\"#333\">\(bar >= 1000 ? n(bar / 1000) + " km" : n(bar) + " m")</text>\n"
        out += "<text x=\"\(n(width - margin))\" y=\"\(n(baseY))\" font-size=\"13\" fill=\"#333\" text-anchor=\"end\">"
            + "\(XMLText.escape(route.name)): \(points.count) points, \(route.segments.count) segment\(route.segments.count == 1 ? "" : "s"), "
            + "\(n((length / 100).rounded() / 10)) km</text>\n"
        return out + "</svg>\n"
    }

    /// A coordinate with at most one decimal.
    static func n(_ x: Double) -> String {
        let r = (x * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}
