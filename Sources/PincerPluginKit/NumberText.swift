/// Numbers as plugins print them, without Foundation.
public enum NumberText {
    /// `value` with exactly `decimals` digits after the point ("4.48",
    /// "-0.5", "12"); "–" for NaN and infinities.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        var scale: Int64 = 1
        for _ in 0..<max(0, decimals) { scale *= 10 }
        let magnitude = (abs(value) * Double(scale)).rounded()
        guard magnitude < 9e15 else { return String(value) }
        let n = Int64(magnitude)
        var s = (value < 0 && n != 0 ? "-" : "") + String(n / scale)
        if decimals > 0 {
            let fraction = String(n % scale)
            s += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return s
    }
}

extension NumberText {
    /// `value` with at most three decimals and no trailing zeros ("10", "1.5", "0.125").
    public static func trimmed(_ value: Double) -> String {
        var s = fixed(value, 3)
        guard s.contains(".") else { return s }
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
}
