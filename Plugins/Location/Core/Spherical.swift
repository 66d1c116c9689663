#if canImport(Glibc)
import Glibc
#endif

/// Great-circle geometry on a sphere (Chris Veness's "latlon-spherical"
/// formulas): what playback interpolates along. Angles in degrees.
public enum Spherical {
    /// The mean Earth radius (IUGG), metres.
    public static let meanRadius = 6_371_008.8

    static func radians(_ d: Double) -> Double { d * .pi / 180 }
    static func degrees(_ r: Double) -> Double { r * 180 / .pi }

    /// Haversine distance in metres.
    public static func distance(_ a: Coordinate, _ b: Coordinate, radius: Double = meanRadius) -> Double {
        let φ1 = radians(a.latitude), φ2 = radians(b.latitude)
        let Δφ = φ2 - φ1, Δλ = radians(b.longitude - a.longitude)
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return radius * 2 * atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    /// Initial bearing from `a` towards `b`, 0..<360; nil for the same point.
    public static func initialBearing(_ a: Coordinate, _ b: Coordinate) -> Double? {
        guard a != b else { return nil }
        let φ1 = radians(a.latitude), φ2 = radians(b.latitude), Δλ = radians(b.longitude - a.longitude)
        let y = sin(Δλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)
        let θ = degrees(atan2(y, x))
        return (θ + 360).truncatingRemainder(dividingBy: 360)
    }

    /// The point `fraction` (0...1) of the way from `a` to `b` along the great circle.
    public static func intermediate(_ a: Coordinate, _ b: Coordinate, fraction f: Double) -> Coordinate {
        if a == b || f <= 0 { return a }
        if f >= 1 { return b }
        let φ1 = radians(a.latitude), λ1 = radians(a.longitude), φ2 = radians(b.latitude), λ2 = radians(b.longitude)
        let δ = distance(a, b, radius: 1)
        guard δ > 1e-15 else { return a }
        let A = sin((1 - f) * δ) / sin(δ), B = sin(f * δ) / sin(δ)
        let x = A * cos(φ1) * cos(λ1) + B * cos(φ2) * cos(λ2)
        let y = A * cos(φ1) * sin(λ1) + B * cos(φ2) * sin(λ2)
        let z = A * sin(φ1) + B * sin(φ2)
        let φ3 = atan2(z, (x * x + y * y).squareRoot()), λ3 = atan2(y, x)
        return Coordinate(latitude: degrees(φ3), longitude: normalisedLongitude(degrees(λ3)))
    }

    /// The latitude at which the great circle through `a` and `b` meets the
    /// meridian `longitude` (Ed Williams, Aviation Formulary, "latitude of
    /// point on great circle"); the great circle must not be a meridian
    /// (a and b on the same or opposite meridians).
    public static func crossingLatitude(_ a: Coordinate, _ b: Coordinate, longitude: Double) -> Double {
        let φ1 = radians(a.latitude), φ2 = radians(b.latitude)
        let λ1 = radians(a.longitude), λ2 = radians(b.longitude), λ = radians(longitude)
        let numerator = sin(φ1) * cos(φ2) * sin(λ - λ2) - sin(φ2) * cos(φ1) * sin(λ - λ1)
        let denominator = cos(φ1) * cos(φ2) * sin(λ1 - λ2)
        return degrees(atan(numerator / denominator))
    }

    /// The point `distance` metres from `a` on initial bearing `bearing`.
    public static func destination(_ a: Coordinate, bearing: Double, distance: Double, radius: Double = meanRadius) -> Coordinate {
        let δ = distance / radius, θ = radians(bearing)
        let φ1 = radians(a.latitude), λ1 = radians(a.longitude)
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        return Coordinate(latitude: degrees(φ2), longitude: normalisedLongitude(degrees(λ2)))
    }

    /// Longitude into -180...180.
    public static func normalisedLongitude(_ λ: Double) -> Double {
        var l = (λ + 180).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l - 180
    }
}
