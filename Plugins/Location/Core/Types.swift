#if canImport(Glibc)
import Glibc
#endif

/// A position on the WGS-84 ellipsoid, in degrees.
public struct Coordinate: Sendable, Equatable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A coordinate checked for range: latitude -90...90, longitude -180...180.
    public static func validated(latitude: Double, longitude: Double) throws(LocationError) -> Coordinate {
        guard latitude.isFinite, latitude >= -90, latitude <= 90 else {
            throw LocationError("latitude \(latitude) is outside -90...90")
        }
        guard longitude.isFinite, longitude >= -180, longitude <= 180 else {
            throw LocationError("longitude \(longitude) is outside -180...180")
        }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    public var description: String { "\(latitude), \(longitude)" }
}

/// One point of a route.
public struct Waypoint: Sendable, Equatable {
    public var coordinate: Coordinate
    /// Metres above the ellipsoid / sea level as the source gave it.
    public var altitude: Double?
    /// Seconds since 1970-01-01 UTC.
    public var time: Double?
    /// Metres per second, when the source recorded it (GPX 1.0 <speed>, extensions).
    public var speed: Double?
    public var name: String?

    public init(_ coordinate: Coordinate, altitude: Double? = nil, time: Double? = nil, speed: Double? = nil, name: String? = nil) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.time = time
        self.speed = speed
        self.name = name
    }
}

/// A route: segments played one after the other. Between segments there is
/// a gap: playback jumps, it never interpolates across it.
public struct Route: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// GPX <trk> (recorded), GPX <rte> (planned), GPX <wpt> list, GeoJSON, command line, built-in scenario.
        case track, route, waypoints, geojson, list, scenario
    }

    public var name: String
    public var kind: Kind
    public var segments: [[Waypoint]]
    /// The speed the route is meant to be played at (m/s), for scenarios.
    public var suggestedSpeed: Double?

    public init(name: String, kind: Kind, segments: [[Waypoint]], suggestedSpeed: Double? = nil) {
        self.name = name
        self.kind = kind
        self.segments = segments
        self.suggestedSpeed = suggestedSpeed
    }

    public var points: [Waypoint] { segments.flatMap { $0 } }
}

/// One simulated position, as a location provider reports it.
public struct Fix: Sendable, Equatable {
    public var coordinate: Coordinate
    public var altitude: Double?
    /// Degrees clockwise from true north, 0..<360.
    public var course: Double
    /// Metres per second over the ground of the route: the simulated speed,
    /// whatever the playback rate.
    public var speed: Double
    /// Metres.
    public var horizontalAccuracy: Double
    /// Seconds since 1970-01-01 UTC. From a `Player`, the wall clock when the
    /// fix fell due; from `Timeline`, the start time plus route time.
    public var timestamp: Double
    /// Seconds into the route (0...duration of one pass) for a fix from
    /// playback; nil for a place.
    public var routeTime: Double?
    /// Always true: every fix from Pincer is simulated.
    public var simulated: Bool

    public init(coordinate: Coordinate, altitude: Double?, course: Double, speed: Double, horizontalAccuracy: Double = 5,
                timestamp: Double, routeTime: Double? = nil, simulated: Bool = true) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.course = course
        self.speed = speed
        self.horizontalAccuracy = horizontalAccuracy
        self.timestamp = timestamp
        self.routeTime = routeTime
        self.simulated = simulated
    }
}

/// Bad input: what was wrong and where.
public struct LocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
