/// A named place the location can be set to.
public struct Place: Sendable, Equatable {
    public enum Kind: String, Sendable { case city, edge, custom }
    /// Lower-case id used on the command line ("paris", "null-island").
    public var id: String
    public var name: String
    public var coordinate: Coordinate
    public var kind: Kind

    public init(id: String, name: String, coordinate: Coordinate, kind: Kind) {
        self.id = id
        self.name = name
        self.coordinate = coordinate
        self.kind = kind
    }
}

/// The built-in places: cities on every continent, and edge cases that
/// break naive code (the antimeridian, a high latitude, Null Island, the
/// southern hemisphere west of Greenwich).
public enum Presets {
    public static let all: [Place] = cities + edges

    static func place(_ id: String, _ name: String, _ lat: Double, _ lon: Double, _ kind: Place.Kind) -> Place {
        Place(id: id, name: name, coordinate: Coordinate(latitude: lat, longitude: lon), kind: kind)
    }

    public static let cities: [Place] = [
        place("cupertino", "Apple Park, Cupertino", 37.3349, -122.0090, .city),
        place("san-francisco", "San Francisco", 37.7793, -122.4193, .city),
        place("new-york", "New York", 40.7128, -74.0060, .city),
        place("toronto", "Toronto", 43.6532, -79.3832, .city),
        place("mexico-city", "Mexico City", 19.4326, -99.1332, .city),
        place("sao-paulo", "São Paulo", -23.5505, -46.6333, .city),
        place("buenos-aires", "Buenos Aires", -34.6037, -58.3816, .city),
        place("london", "London", 51.5074, -0.1278, .city),
        place("paris", "Paris", 48.8566, 2.3522, .city),
        place("berlin", "Berlin", 52.5200, 13.4050, .city),
        place("madrid", "Madrid", 40.4168, -3.7038, .city),
        place("rome", "Rome", 41.9028, 12.4964, .city),
        place("istanbul", "Istanbul", 41.0082, 28.9784, .city),
        place("moscow", "Moscow", 55.7558, 37.6173, .city),
        place("cairo", "Cairo", 30.0444, 31.2357, .city),
        place("lagos", "Lagos", 6.5244, 3.3792, .city),
        place("nairobi", "Nairobi", -1.2921, 36.8219, .city),
        place("cape-town", "Cape Town", -33.9249, 18.4241, .city),
        place("dubai", "Dubai", 25.2048, 55.2708, .city),
        place("mumbai", "Mumbai", 19.0760, 72.8777, .city),
        place("singapore", "Singapore", 1.3521, 103.8198, .city),
        place("hong-kong", "Hong Kong", 22.3193, 114.1694, .city),
        place("seoul", "Seoul", 37.5665, 126.9780, .city),
        place("tokyo", "Tokyo", 35.6762, 139.6503, .city),
        place("sydney", "Sydney", -33.8688, 151.2093, .city),
        place("auckland", "Auckland", -36.8485, 174.7633, .city),
        place("honolulu", "Honolulu", 21.3069, -157.8583, .city),
    ]

    public static let edges: [Place] = [
        place("null-island", "Null Island (0°, 0°)", 0, 0, .edge),
        place("antimeridian-east", "Taveuni, Fiji, just east of 180°", -16.7920, 179.9990, .edge),
        place("antimeridian-west", "Taveuni, Fiji, just west of 180°", -16.7920, -179.9990, .edge),
        place("svalbard", "Longyearbyen, Svalbard (78° N)", 78.2232, 15.6267, .edge),
        place("mcmurdo", "McMurdo Station, Antarctica (77.8° S)", -77.8463, 166.6681, .edge),
        place("north-pole", "North Pole", 90, 0, .edge),
        place("greenwich", "Royal Observatory, Greenwich (0° longitude)", 51.4769, -0.0005, .edge),
    ]
}
