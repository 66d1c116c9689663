import Foundation
import XCTest
@testable import GeoRoutes

/// Ellipsoidal (Vincenty + fallback) and spherical geodesy, against Chris
/// Veness's published vectors and against GeographicLib.
final class GeodesyTests: XCTestCase {
    private func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// Smallest difference between two bearings, degrees.
    private func angleDifference(_ x: Double, _ y: Double) -> Double {
        let d = abs(x - y).truncatingRemainder(dividingBy: 360)
        return min(d, 360 - d)
    }

    // MARK: Ellipsoid vectors (Veness, test/latlon-ellipsoidal-vincenty-tests.js)

    func testLandsEndToJohnOGroats() throws {
        // 50°03′58.76″N 005°42′53.10″W → 58°38′38.48″N 003°04′12.34″W, as decimals in Veness's tests.
        let le = c(50.06632, -5.71475), jog = c(58.64402, -3.07009)
        let r = Ellipsoidal.inverse(le, jog)
        XCTAssertEqual(r.method, .vincenty)
        XCTAssertEqual(r.distance, 969_954.166, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(r.initialBearing), 9.1418775, accuracy: 1e-7)
        XCTAssertEqual(try XCTUnwrap(r.finalBearing), 11.2972204, accuracy: 1e-7)

        let d = Ellipsoidal.direct(le, bearing: 9.1418775, distance: 969_954.166)
        XCTAssertEqual(d.coordinate.latitude, jog.latitude, accuracy: 1e-6)
        XCTAssertEqual(d.coordinate.longitude, jog.longitude, accuracy: 1e-6)
        XCTAssertEqual(d.finalBearing, 11.2972204, accuracy: 1e-6)
    }

    func testGeoscienceAustralia() throws {
        // Flinders Peak 37°57′03.72030″S 144°25′29.52440″E → Buninyong 37°39′10.15610″S 143°55′35.38390″E.
        let flinders = c(-(37 + 57.0 / 60 + 3.72030 / 3600), 144 + 25.0 / 60 + 29.52440 / 3600)
        let buninyong = c(-(37 + 39.0 / 60 + 10.15610 / 3600), 143 + 55.0 / 60 + 35.38390 / 3600)
        let r = Ellipsoidal.inverse(flinders, buninyong)
        XCTAssertEqual(r.distance, 54_972.271, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(r.initialBearing), 306 + 52.0 / 60 + 5.37 / 3600, accuracy: 0.005 / 3600)
        XCTAssertEqual(try XCTUnwrap(r.finalBearing) - 180, 127 + 10.0 / 60 + 25.07 / 3600, accuracy: 0.005 / 3600)
    }

    func testEquatorAndQuadrants() {
        XCTAssertEqual(Ellipsoidal.inverse(c(0, 0), c(0, 1)).distance, 111_319.491, accuracy: 0.001)
        XCTAssertEqual(Ellipsoidal.inverse(c(30, 120), c(30, -120)).distance, 10_825_924.089, accuracy: 0.001)
        for (sa, sb) in [(1.0, 1.0), (1, -1), (-1, -1), (-1, 1)] {
            for (p, q) in [((30.0, 30.0), (60.0, 60.0)), ((60, 60), (30, 30)), ((30, 60), (60, 30)), ((60, 30), (30, 60))] {
                let d = Ellipsoidal.inverse(c(sa * p.0, sb * p.1), c(sa * q.0, sb * q.1)).distance
                XCTAssertEqual(d, 4_015_703.021, accuracy: 0.001)
            }
        }
    }

    func testJFKToParis() throws {
        let r = Ellipsoidal.inverse(c(40.6, -73.8), c(49.01666667, 2.55))
        XCTAssertEqual(r.method, .vincenty)
        XCTAssertEqual(r.distance.rounded(), 5_853_226)
        XCTAssertEqual(try XCTUnwrap(r.initialBearing), 53.47022, accuracy: 1e-5)
    }

    func testCoincidentPoints() {
        let le = c(50.06632, -5.71475)
        let r = Ellipsoidal.inverse(le, le)
        XCTAssertEqual(r.distance, 0)
        XCTAssertNil(r.initialBearing)
        XCTAssertNil(r.finalBearing)
        XCTAssertEqual(Ellipsoidal.inverse(c(10, 180), c(10, -180)).distance, 0)
        let d = Ellipsoidal.direct(le, bearing: 0, distance: 0).coordinate
        XCTAssertEqual(d.latitude, le.latitude, accuracy: 1e-12)
        XCTAssertEqual(d.longitude, le.longitude, accuracy: 1e-12)
        // One metre north and back (Veness: 'dest pt has distanceTo() method').
        let p = c(1, 1)
        XCTAssertEqual(Ellipsoidal.inverse(Ellipsoidal.direct(p, bearing: 0, distance: 1).coordinate, p).distance, 1, accuracy: 1e-6)
    }

    func testAntipodalPairsUseTheFallback() throws {
        let halfMeridian = 40_007_862.918 / 2
        // Veness: converges.
        let near = Ellipsoidal.inverse(c(0, 0), c(0.5, 179.5))
        XCTAssertEqual(near.method, .vincenty)
        XCTAssertEqual(near.distance, 19_936_288.579, accuracy: 0.001)
        // Veness: λ > π and non-convergence (NaN there); GeographicLib's answers here.
        let lambda = Ellipsoidal.inverse(c(0, 0), c(0.5, 179.7))
        XCTAssertEqual(lambda.method, .fallback)
        XCTAssertEqual(lambda.distance, 19_944_127.420750458, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(lambda.initialBearing), 15.556882793490544, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(lambda.finalBearing), 164.44251389085494, accuracy: 1e-6)
        let slow = Ellipsoidal.inverse(c(5, 0), c(-5.1, 179.4))
        XCTAssertEqual(slow.method, .fallback)
        XCTAssertEqual(slow.distance, 19_965_379.710466072, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(slow.initialBearing), 128.1161322113034, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(slow.finalBearing), 51.89505868599564, accuracy: 1e-6)
        // Exactly antipodal: half a meridian, over a pole.
        let equatorial = Ellipsoidal.inverse(c(0, 0), c(0, 180))
        XCTAssertEqual(equatorial.distance, halfMeridian, accuracy: 0.001)
        let overPole = try XCTUnwrap(equatorial.initialBearing)
        XCTAssertLessThan(min(angleDifference(overPole, 0), angleDifference(overPole, 180)), 1e-9)
        XCTAssertEqual(Ellipsoidal.inverse(c(90, 0), c(-90, 0)).distance, halfMeridian, accuracy: 0.001)
        XCTAssertEqual(Ellipsoidal.inverse(c(30, 40), c(-30, -140)).distance, halfMeridian, accuracy: 0.001)
    }

    func testDirectInverseRoundTrips() throws {
        var rng = SeededRandom(seed: 0x5eed_0001)
        var bearingsChecked = 0
        for _ in 0..<300 {
            let start = c(asin(2 * rng.unit() - 1) * 180 / .pi, 360 * rng.unit() - 180)
            let bearing = 360 * rng.unit()
            let distance = 19_000_000 * rng.unit() + 1
            let (end, finalBearing) = Ellipsoidal.direct(start, bearing: bearing, distance: distance)
            let back = Ellipsoidal.inverse(start, end)
            XCTAssertEqual(back.distance, distance, accuracy: 0.001, "\(start) \(bearing) \(distance)")
            if abs(start.latitude) < 89.9 && abs(end.latitude) < 89.9 {
                bearingsChecked += 1
                XCTAssertLessThan(angleDifference(try XCTUnwrap(back.initialBearing), bearing), 1e-7, "\(start) \(bearing) \(distance)")
                XCTAssertLessThan(angleDifference(try XCTUnwrap(back.finalBearing), finalBearing), 1e-7, "\(start) \(bearing) \(distance)")
            }
        }
        XCTAssertGreaterThan(bearingsChecked, 290, "bearings away from the poles are checked")
    }

    // MARK: Sphere vectors (Veness, latlon-spherical)

    func testSpherical() throws {
        let cambridge = c(52.205, 0.119), paris = c(48.857, 2.351)
        XCTAssertEqual(Spherical.distance(cambridge, paris, radius: 6_371_000), 404_279, accuracy: 1)
        XCTAssertEqual(try XCTUnwrap(Spherical.initialBearing(cambridge, paris)), 156.2, accuracy: 0.05)
        let half = Spherical.intermediate(cambridge, paris, fraction: 0.5)
        XCTAssertEqual(half.latitude, 50.5363, accuracy: 1e-4)
        XCTAssertEqual(half.longitude, 1.2746, accuracy: 1e-4)
        let greenwich = c(51.4778, -0.0015)
        let dest = Spherical.destination(greenwich, bearing: 300.7, distance: 7794, radius: 6_371_000)
        XCTAssertEqual(dest.latitude, 51.5135, accuracy: 1e-4)
        XCTAssertEqual(dest.longitude, -0.0983, accuracy: 1e-4)
    }

    // MARK: Against GeographicLib

    /// 500 seeded pairs: uniform over the globe, nearly antipodal, near the poles, short.
    static func samplePairs() -> [(Coordinate, Coordinate)] {
        var rng = SeededRandom(seed: 20_240_607)
        func uniform() -> Coordinate {
            Coordinate(latitude: asin(2 * rng.unit() - 1) * 180 / .pi, longitude: 360 * rng.unit() - 180)
        }
        func jitter(_ p: Coordinate, _ degrees: Double) -> Coordinate {
            Coordinate(latitude: max(-90, min(90, p.latitude + degrees * (2 * rng.unit() - 1))),
                       longitude: Spherical.normalisedLongitude(p.longitude + degrees * (2 * rng.unit() - 1)))
        }
        var pairs: [(Coordinate, Coordinate)] = []
        for i in 0..<500 {
            let a = uniform()
            let antipode = Coordinate(latitude: -a.latitude, longitude: Spherical.normalisedLongitude(a.longitude + 180))
            switch i % 5 {
            case 0, 1: pairs.append((a, uniform()))
            case 2: pairs.append((a, jitter(antipode, i % 10 == 2 ? 1 : 0.05)))
            case 3:
                let pole = Coordinate(latitude: rng.unit() < 0.5 ? 90 - rng.unit() : -90 + rng.unit(), longitude: 360 * rng.unit() - 180)
                let other = rng.unit() < 0.5 ? jitter(pole, 2) : jitter(Coordinate(latitude: -pole.latitude, longitude: pole.longitude + 180), 1)
                pairs.append((pole, other))
            default: pairs.append((a, jitter(a, 0.01)))
            }
        }
        return pairs
    }

    func testAgainstGeographicLib() throws {
        let pairs = Self.samplePairs()
        let reference = try geographicLibInverse(pairs)
        var maxVincenty = 0.0, maxFallback = 0.0, fallbacks = 0, bearingsChecked = 0
        for ((a, b), (s12, azi1)) in zip(pairs, reference) {
            let r = Ellipsoidal.inverse(a, b)
            let error = abs(r.distance - s12)
            switch r.method {
            case .vincenty:
                maxVincenty = max(maxVincenty, error)
                XCTAssertLessThan(error, 1e-4, "vincenty \(a) → \(b): \(r.distance) vs \(s12)")
            case .fallback:
                fallbacks += 1
                maxFallback = max(maxFallback, error)
                XCTAssertLessThan(error, 1e-4, "fallback \(a) → \(b): \(r.distance) vs \(s12)")
            }
            // Bearings, where they are well defined (not at a pole, not nearly antipodal).
            if s12 > 0, s12 < 19_990_000, abs(a.latitude) < 89.99, abs(b.latitude) < 89.99 {
                bearingsChecked += 1
                let bearing = try XCTUnwrap(r.initialBearing, "no bearing for \(a) → \(b)")
                XCTAssertLessThan(angleDifference(bearing, azi1), 1e-5, "bearing \(a) → \(b): \(bearing) vs \(azi1)")
            }
        }
        XCTAssertEqual(reference.count, pairs.count)
        XCTAssertGreaterThan(fallbacks, 50, "the sample reaches the fallback")
        XCTAssertGreaterThan(bearingsChecked, 300, "most pairs have their bearing checked")
        print("GeodesyTests: \(pairs.count) pairs, \(fallbacks) fallbacks; max |Δs| vincenty \(maxVincenty) m, fallback \(maxFallback) m")
    }

    /// Runs GeographicLib's Geodesic.WGS84.Inverse over the pairs with
    /// Debian's python3 (python3-geographiclib); (s12, azi1) each. Fails when
    /// the interpreter or the module is missing.
    private func geographicLibInverse(_ pairs: [(Coordinate, Coordinate)]) throws -> [(Double, Double)] {
        let script = """
        import sys, json
        from geographiclib.geodesic import Geodesic
        with open(sys.argv[1]) as f:
            pairs = json.load(f)
        for lat1, lon1, lat2, lon2 in pairs:
            r = Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2)
            print(repr(r['s12']), repr(r['azi1']))
        """
        // Shortest round-trip decimals: Python reads back the same doubles.
        let json = "[" + pairs.map { "[\($0.0.latitude), \($0.0.longitude), \($0.1.latitude), \($0.1.longitude)]" }
            .joined(separator: ",") + "]"
        let inputPath = NSTemporaryDirectory() + "/geodesy-pairs-\(getpid()).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: inputPath))
        defer { try? FileManager.default.removeItem(atPath: inputPath) }
        let result = try Consumer.python(Consumer.debianPython, script, [inputPath])
        XCTAssertEqual(result.status, 0, "GeographicLib (python3-geographiclib, `bash scripts/deps`): \(result.stderr)")
        let rows = result.stdout.split(separator: "\n").compactMap { line -> (Double, Double)? in
            let fields = line.split(separator: " ").compactMap { Double($0) }
            return fields.count == 2 ? (fields[0], fields[1]) : nil
        }
        guard rows.count == pairs.count else {
            XCTFail("GeographicLib answered \(rows.count) of \(pairs.count) pairs: \(result.stderr)")
            return []
        }
        return rows
    }
}
