import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// WCAG 2.x contrast requirements (1.4.3 text, 1.4.11 non-text).
public enum ContrastRequirement {
    public static let text = 4.5
    public static let largeText = 3.0
    public static let nonText = 3.0

    /// The threshold for text of `size` points (bold or not): large text is
    /// 18 pt, or 14 pt bold. Unknown size: the strict text threshold, and
    /// `sizeKnown` is false so the finding can say so.
    public static func forText(size: Double?, bold: Bool) -> (ratio: Double, large: Bool, sizeKnown: Bool) {
        guard let size else { return (text, false, false) }
        let large = size >= 18 || (bold && size >= 14)
        return (large ? largeText : text, large, true)
    }

    /// The ratio as people read it: two decimals, or four when two would
    /// round a failure up to the threshold (4.499 is not 4.50).
    public static func describe(_ ratio: Double, against threshold: Double) -> String {
        let two = (ratio * 100).rounded() / 100
        if ratio < threshold && two >= threshold { return NumberText.fixed(ratio, 4) + ":1" }
        return NumberText.fixed(ratio, 2) + ":1"
    }
}

/// A contrast estimated from the pixels of a crop.
public enum PixelContrast: Sendable, Equatable {
    /// Two tonal groups: each represented by the colour most of it is; the
    /// smaller group is taken as the foreground.
    case measured(foreground: Color, background: Color, ratio: Double)
    /// No two-group structure (a flat area, a gradient or a photo).
    case notMeasurable(String)
}

/// Estimates foreground and background from pixels: split the crop into two
/// tonal groups by luminance (Otsu's threshold), represent each group by
/// its most frequent colour (so anti-aliased edge pixels do not shift it),
/// and accept the split only when both groups are substantial and well
/// separated. Anything else could not be measured.
public enum PixelSampler {
    /// At most this many pixels are read per crop (an even grid).
    public static let maximumSamples = 4096
    /// The smaller group must be at least this share of the samples...
    public static let minimumMinorShare = 0.02
    /// ... and this many samples.
    public static let minimumMinorCount = 6
    /// Between-group variance over total variance (Otsu's separability):
    /// below this the tones are a continuum, not two groups. An even ramp
    /// scores exactly 0.75; text on a plain background scores above 0.9.
    public static let minimumSeparability = 0.85

    /// `rgba` holds `width` × `height` pixels, 4 bytes each, rows `stride`
    /// bytes apart, starting at the crop's top-left pixel.
    public static func estimate(_ rgba: UnsafeBufferPointer<UInt8>, width: Int, height: Int, stride rowStride: Int) -> PixelContrast {
        guard width > 0, height > 0 else { return .notMeasurable("the element has no pixels on the screenshot") }
        let total = width * height
        let step = max(1, Int((Double(total) / Double(maximumSamples)).squareRoot().rounded(.up)))
        // Luminance histogram (256 bins) and a quantised colour per sample.
        var histogram = [Int](repeating: 0, count: 256)
        var samples: [(bin: UInt8, colour: UInt32)] = []
        samples.reserveCapacity(min(total, maximumSamples * 2))
        var y = 0
        while y < height {
            var x = 0
            let row = y * rowStride
            while x < width {
                let o = row + x * 4
                let r = rgba[o], g = rgba[o + 1], b = rgba[o + 2]
                let l = luminanceTable[Int(r)] * 0.2126 + luminanceTable[Int(g)] * 0.7152 + luminanceTable[Int(b)] * 0.0722
                // Bins on a perceptual scale, so dark tones are not crowded.
                let bin = UInt8(min(255, Int((l.squareRoot() * 255).rounded())))
                histogram[Int(bin)] += 1
                samples.append((bin, UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)))
                x += step
            }
            y += step
        }
        let n = samples.count
        // Otsu: the threshold that maximises between-group variance.
        var sumAll = 0.0
        for (i, c) in histogram.enumerated() { sumAll += Double(i * c) }
        let mean = sumAll / Double(n)
        var totalVariance = 0.0
        for (i, c) in histogram.enumerated() where c > 0 { totalVariance += Double(c) * (Double(i) - mean) * (Double(i) - mean) }
        totalVariance /= Double(n)
        guard totalVariance > 1 else { return .notMeasurable("the area is a single tone") }
        var best = (threshold: 0, variance: -1.0)
        var countBelow = 0, sumBelow = 0.0
        for t in 0..<255 {
            countBelow += histogram[t]
            sumBelow += Double(t * histogram[t])
            let countAbove = n - countBelow
            guard countBelow > 0, countAbove > 0 else { continue }
            let m0 = sumBelow / Double(countBelow), m1 = (sumAll - sumBelow) / Double(countAbove)
            let between = Double(countBelow) * Double(countAbove) * (m0 - m1) * (m0 - m1) / Double(n * n)
            if between > best.variance { best = (t, between) }
        }
        let separability = best.variance / totalVariance
        let below = histogram[0...best.threshold].reduce(0, +), above = n - below
        let minor = min(below, above)
        guard minor >= minimumMinorCount, Double(minor) >= minimumMinorShare * Double(n) else {
            return .notMeasurable("one tone covers almost all of it (\(Format.percent(Double(n - minor) / Double(n))))")
        }
        guard separability >= minimumSeparability else {
            return .notMeasurable("its tones do not fall into two groups (separability \(NumberText.fixed(separability, 2)))")
        }
        // Each group's most frequent colour.
        var dark: [UInt32: Int] = [:], light: [UInt32: Int] = [:]
        for s in samples {
            if Int(s.bin) <= best.threshold { dark[s.colour, default: 0] += 1 } else { light[s.colour, default: 0] += 1 }
        }
        func mode(_ counts: [UInt32: Int]) -> Color {
            let c = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!.key
            return Color(r: UInt8(c >> 16 & 0xFF), g: UInt8(c >> 8 & 0xFF), b: UInt8(c & 0xFF))
        }
        let darkColour = mode(dark), lightColour = mode(light)
        let foreground = below <= above ? darkColour : lightColour
        let background = below <= above ? lightColour : darkColour
        return .measured(foreground: foreground, background: background, ratio: contrastRatio(foreground, background))
    }

    /// sRGB channel value (0-255) to linear light.
    static let luminanceTable: [Double] = (0..<256).map { v in
        let c = Double(v) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }
}

extension Format {
    static func percent(_ share: Double) -> String { NumberText.fixed(share * 100, 1) + "%" }
}
