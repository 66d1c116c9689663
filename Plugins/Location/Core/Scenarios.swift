/// The built-in routes, like Xcode's "City Run", "City Bicycle Ride" and
/// "Freeway Drive" simulations: each a `.scenario` route with a suggested
/// speed and no times, so it plays at that speed unless the caller picks
/// another. The coordinates follow real streets and a real freeway closely
/// enough to look right on a map; they are not surveyed.
public enum Scenarios {
    public static let all: [Route] = [cityRun, cityBicycleRide, freewayDrive]

    /// The scenario called `name` ("city-run", "city-bicycle-ride", "freeway-drive").
    public static func named(_ name: String) -> Route? { all.first { $0.name == name } }

    static func p(_ latitude: Double, _ longitude: Double, _ name: String? = nil) -> Waypoint {
        Waypoint(Coordinate(latitude: latitude, longitude: longitude), name: name)
    }

    /// A ~5.1 km run at ~3 m/s (a 5:30 min/km pace) around Apple Park,
    /// Cupertino: west along Homestead Rd, south on N Wolfe Rd over I-280,
    /// east along Stevens Creek Blvd, north on N Tantau Ave past the Visitor
    /// Center, back to the start. A closed loop.
    public static let cityRun = Route(name: "city-run", kind: .scenario, segments: [[
        p(37.33720, -122.00330, "Homestead Rd & N Tantau Ave"),
        p(37.33725, -122.00560),
        p(37.33730, -122.00790),
        p(37.33735, -122.01020),
        p(37.33740, -122.01250),
        p(37.33745, -122.01480, "Homestead Rd & N Wolfe Rd"),
        p(37.33564, -122.01479),
        p(37.33382, -122.01478),
        p(37.33201, -122.01476),
        p(37.33020, -122.01475, "N Wolfe Rd & Pruneridge Ave"),
        p(37.32858, -122.01472),
        p(37.32695, -122.01470),
        p(37.32532, -122.01468),
        p(37.32370, -122.01465, "N Wolfe Rd & Stevens Creek Blvd"),
        p(37.32362, -122.01238),
        p(37.32354, -122.01011),
        p(37.32346, -122.00784),
        p(37.32338, -122.00557),
        p(37.32330, -122.00330, "Stevens Creek Blvd & N Tantau Ave"),
        p(37.32498, -122.00331),
        p(37.32665, -122.00332),
        p(37.32832, -122.00334),
        p(37.33000, -122.00335, "N Tantau Ave & Pruneridge Ave (Apple Park Visitor Center)"),
        p(37.33180, -122.00334),
        p(37.33360, -122.00332),
        p(37.33540, -122.00331),
        p(37.33720, -122.00330)
    ]], suggestedSpeed: 3)

    /// A ~9.5 km ride at ~7 m/s (25 km/h) through Cupertino and Santa Clara:
    /// Homestead Rd west to N De Anza Blvd, south to Stevens Creek Blvd, east
    /// to Lawrence Expwy, north to Homestead Rd and west back to N Tantau Ave.
    /// A closed loop.
    public static let cityBicycleRide = Route(name: "city-bicycle-ride", kind: .scenario, segments: [[
        p(37.33720, -122.00330, "Homestead Rd & N Tantau Ave"),
        p(37.33724, -122.00651),
        p(37.33729, -122.00972),
        p(37.33733, -122.01293),
        p(37.33738, -122.01614),
        p(37.33742, -122.01936),
        p(37.33747, -122.02257),
        p(37.33751, -122.02578),
        p(37.33756, -122.02899),
        p(37.33760, -122.03220, "Homestead Rd & N De Anza Blvd"),
        p(37.33523, -122.03218),
        p(37.33287, -122.03217),
        p(37.33050, -122.03215),
        p(37.32813, -122.03213),
        p(37.32577, -122.03212),
        p(37.32340, -122.03210, "N De Anza Blvd & Stevens Creek Blvd"),
        p(37.32337, -122.02912),
        p(37.32335, -122.02613),
        p(37.32332, -122.02315),
        p(37.32330, -122.02017),
        p(37.32327, -122.01718),
        p(37.32325, -122.01420),
        p(37.32323, -122.01122),
        p(37.32320, -122.00823),
        p(37.32317, -122.00525),
        p(37.32315, -122.00227),
        p(37.32312, -121.99928),
        p(37.32310, -121.99630, "Stevens Creek Blvd & Lawrence Expwy"),
        p(37.32553, -121.99632),
        p(37.32797, -121.99633),
        p(37.33040, -121.99635),
        p(37.33283, -121.99637),
        p(37.33527, -121.99638),
        p(37.33770, -121.99640, "Lawrence Expwy & Homestead Rd"),
        p(37.33745, -121.99985),
        p(37.33720, -122.00330)
    ]], suggestedSpeed: 7)

    /// A ~43 km drive at ~30 m/s (108 km/h) north-west along I-280 from the
    /// I-880 interchange in San Jose past Cupertino, Los Altos Hills, Palo
    /// Alto and Woodside to the CA-92 interchange in San Mateo.
    public static let freewayDrive = Route(name: "freeway-drive", kind: .scenario, segments: [[
        p(37.31850, -121.94750, "I-280 / I-880 interchange, San Jose"),
        p(37.31985, -121.96225),
        p(37.32120, -121.97700, "Saratoga Ave"),
        p(37.32370, -121.99600, "Lawrence Expwy"),
        p(37.32430, -122.01460, "Wolfe Rd"),
        p(37.32330, -122.03300, "De Anza Blvd"),
        p(37.32815, -122.04600),
        p(37.33300, -122.05900, "CA-85 interchange"),
        p(37.34100, -122.06700),
        p(37.34900, -122.07500),
        p(37.35700, -122.08300, "Magdalena Ave, Los Altos Hills"),
        p(37.36600, -122.09900, "El Monte Rd"),
        p(37.37152, -122.11113),
        p(37.37705, -122.12325),
        p(37.38258, -122.13537),
        p(37.38810, -122.14750, "Page Mill Rd"),
        p(37.39357, -122.16100),
        p(37.39903, -122.17450),
        p(37.40450, -122.18800, "Alpine Rd"),
        p(37.41300, -122.20025),
        p(37.42150, -122.21250, "Sand Hill Rd"),
        p(37.42633, -122.22467),
        p(37.43117, -122.23683),
        p(37.43600, -122.24900, "Woodside Rd (CA-84)"),
        p(37.44338, -122.25850),
        p(37.45075, -122.26800),
        p(37.45812, -122.27750),
        p(37.46550, -122.28700, "Edgewood Rd"),
        p(37.47367, -122.29400),
        p(37.48183, -122.30100),
        p(37.49000, -122.30800, "Crystal Springs Reservoir"),
        p(37.50083, -122.31817),
        p(37.51167, -122.32833),
        p(37.52250, -122.33850, "CA-92 interchange, San Mateo")
    ]], suggestedSpeed: 30)
}
