import Foundation
import XCTest
import GeoRoutes

/// What Pincer writes, read by the programs people open it with: GPX
/// validated by xmllint against the GPX 1.1 XSD and read back by gpxpy,
/// GeoJSON checked against RFC 7946 (antimeridian cut, position order,
/// precision), lengths against GeographicLib, and the `loc` commands run
/// through the built `pincer` (import refusing to replace, `loc.play --json`).
/// A missing consumer fails the test (`bash scripts/deps` installs them).
final class RouteConformanceTests: XCTestCase {
    var state = ""
    override func setUp() { state = Fixture.temporaryDirectory("pincer-loc-conformance") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: state) }

    func pincer(_ args: String...) throws -> Fixture.ProcessResult { try Fixture.pincer(args, stateDir: state) }

    /// The command's result under --json, failing when it did not succeed.
    func result(_ args: String..., file: StaticString = #filePath, line: UInt = #line) throws -> Any? {
        let r = try Fixture.pincer(args + ["--json"], stateDir: state)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        return Fixture.json(r.stdout, file: file, line: line)["result"]
    }

    func gpxFixtures() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: RouteFormatTests.fixtureDirectory).filter { $0.hasSuffix(".gpx") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 11, "the shared GPX fixtures")
        return names.map { RouteFormatTests.fixtureDirectory + "/" + $0 }
    }

    func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    // MARK: GPX: xmllint and gpxpy

    /// Every shared fixture imported with `loc.import`, then each of its
    /// routes exported with `loc.export`: the exported files and the GPX
    /// documents the route store keeps the points in (written out with the
    /// sqlite3 CLI's writefile) all validate against the GPX 1.1 XSD.
    func testEveryFixtureImportedThenExportedValidates() throws {
        let out = Fixture.temporaryDirectory("pincer-loc-exports")
        defer { try? FileManager.default.removeItem(atPath: out) }
        var files: [String] = []
        for (f, fixture) in try gpxFixtures().enumerated() {
            try? FileManager.default.removeItem(atPath: state)
            state = Fixture.temporaryDirectory("pincer-loc-conformance")   // a fresh store: fixtures share route names
            let imported = try XCTUnwrap(try result("loc.import", fixture) as? [String: Any], fixture)
            let names = try XCTUnwrap(imported["imported"] as? [String], fixture)
            XCTAssertFalse(names.isEmpty, fixture)
            for (r, name) in names.enumerated() {
                let path = "\(out)/\(f)-\(r).gpx"
                let exported = try pincer("loc.export", name, path)
                XCTAssertEqual(exported.status, 0, "\(fixture) '\(name)': \(exported.stderr)")
                files.append(path)
            }
            let prefix = "\(out)/\(f)-kept-"
            let kept = try Fixture.run(try Consumer.require(Consumer.sqlite3), [state + "/routes.sqlite",
                "SELECT writefile('\(prefix)' || rowid || '.gpx', gpx) FROM route_points ORDER BY rowid"])
            XCTAssertEqual(kept.status, 0, kept.stderr)
            let written = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("\(f)-kept-") }
            XCTAssertEqual(written.count, names.count, "\(fixture): one kept document per route \(names): \(written)")
            files += written.map { out + "/" + $0 }
        }
        XCTAssertGreaterThan(files.count, 50)
        let validation = try RouteFormatTests.xmllint(files)
        XCTAssertEqual(validation.status, 0, validation.stderr)
        XCTAssertEqual(validation.stderr.split(separator: "\n").filter { $0.hasSuffix(" validates") }.count, files.count, validation.stderr)
    }

    /// gpxpy (the venv's, as users have it) reads what writeGPX wrote with the
    /// same points: latitude, longitude, elevation, time and speed equal to
    /// what Pincer reads back from the same bytes, and those equal to the
    /// routes written, to the written precision (times to the millisecond,
    /// magnitudes below 1e-23 to zero).
    func testGpxpyReadsTheSamePoints() throws {
        var routes: [Route] = []
        for fixture in try gpxFixtures() { routes += try RouteFormats.readGPX(try read(fixture)).routes }
        routes.append(Route(name: "edges <&>", kind: .route, segments: [
            [Waypoint(Coordinate(latitude: 90, longitude: 180), altitude: 1e-9, time: -1e-3, speed: 1e-7),
             Waypoint(Coordinate(latitude: -90, longitude: -180), altitude: -1e21, time: 0),
             Waypoint(Coordinate(latitude: 1e-300, longitude: -0.1 + 0.2), altitude: 8848.86, time: 1_700_000_000.123, speed: 0)],
        ]))
        routes.append(Route(name: "fixes", kind: .track, segments: [[
            Waypoint(Coordinate(latitude: 51.477928123456789, longitude: -0.001545678901234), altitude: 45.123456, time: 1_796_150_000.5, speed: 13.888889),
            Waypoint(Coordinate(latitude: -16.792, longitude: 179.999_999_9), time: 253_402_300_799.999),
        ]]))
        let bytes = RouteFormats.writeGPX(routes, creator: "Pincer")
        let path = NSTemporaryDirectory() + "/route-conformance-\(getpid()).gpx"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(try RouteFormatTests.xmllint([path]).status, 0)

        let script = """
        import sys, gpxpy
        with open(sys.argv[1], encoding='utf-8') as f:
            gpx = gpxpy.parse(f.read())
        def speed(p):
            for e in p.extensions:
                for x in e.iter():
                    if x.tag.endswith('}speed'):
                        return x.text.strip()
            return '-'
        def out(where, p):
            print(where, repr(p.latitude), repr(p.longitude), '-' if p.elevation is None else repr(p.elevation),
                  '-' if p.time is None else p.time.isoformat(), speed(p), sep='\\t')
        for p in gpx.waypoints: out('wpt', p)
        for i, r in enumerate(gpx.routes):
            for p in r.points: out('rte%d' % i, p)
        for i, t in enumerate(gpx.tracks):
            for j, s in enumerate(t.segments):
                for p in s.points: out('trk%d.%d' % (i, j), p)
        """
        let gpxpy = try Consumer.python(Consumer.venvPython, script, [path])
        XCTAssertEqual(gpxpy.status, 0, gpxpy.stderr)
        let lines = gpxpy.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }

        // Ours, in the same order: <wpt>, then each <rte>, then each <trk> by segment.
        let back = try RouteFormats.readGPX(bytes).routes
        var ours: [(String, Waypoint)] = []
        var rte = 0, trk = 0
        for route in back where route.kind == .waypoints { ours += route.points.map { ("wpt", $0) } }
        for route in back where route.kind == .route {
            ours += route.points.map { ("rte\(rte)", $0) }
            rte += 1
        }
        for route in back where route.kind == .track {
            for (j, segment) in route.segments.enumerated() { ours += segment.map { ("trk\(trk).\(j)", $0) } }
            trk += 1
        }
        XCTAssertEqual(lines.count, ours.count, "gpxpy read \(lines.count) points, Pincer \(ours.count)")
        XCTAssertEqual(ours.count, routes.reduce(0) { $0 + $1.points.count })
        func number(_ text: String) -> Double? { text == "-" ? nil : Double(text) }
        for (k, (fields, (place, point))) in zip(lines, ours).enumerated() {
            XCTAssertEqual(fields.count, 6, "line \(k): \(fields)")
            guard fields.count == 6 else { continue }
            let label = "point \(k) (\(place)): gpxpy \(fields)"
            XCTAssertEqual(fields[0], place, label)
            XCTAssertEqual(number(fields[1]), point.coordinate.latitude, label)
            XCTAssertEqual(number(fields[2]), point.coordinate.longitude, label)
            XCTAssertEqual(number(fields[3]), point.altitude, label)
            XCTAssertEqual(fields[4] == "-" ? nil : ISOTime.parse(fields[4])?.seconds, point.time, label)
            XCTAssertEqual(number(fields[5]), point.speed, label)
        }
        // And what Pincer read back is what it wrote, to the written precision.
        let written = routes.flatMap(\.points)
        // writeGPX's order: every .waypoints route, then every .route, then the rest as tracks.
        let reordered = (routes.filter { $0.kind == .waypoints } + routes.filter { $0.kind == .route }
            + routes.filter { $0.kind != .waypoints && $0.kind != .route }).flatMap(\.points)
        XCTAssertEqual(reordered.count, written.count)
        for (k, (original, (_, read))) in zip(reordered, ours).enumerated() {
            let longitude = original.coordinate.longitude == 180 ? -180 : original.coordinate.longitude
            XCTAssertEqual(read.coordinate.latitude, original.coordinate.latitude, accuracy: 1e-23, "point \(k)")
            XCTAssertEqual(read.coordinate.longitude, longitude, accuracy: 1e-23, "point \(k)")
            XCTAssertEqual(read.altitude == nil, original.altitude == nil, "point \(k)")
            if let a = read.altitude, let b = original.altitude { XCTAssertEqual(a, b, accuracy: 1e-23, "point \(k)") }
            XCTAssertEqual(read.time == nil, original.time == nil, "point \(k)")
            if let a = read.time, let b = original.time { XCTAssertEqual(a, b, accuracy: 0.0005, "point \(k)") }
            XCTAssertEqual(read.speed, original.speed, "point \(k)")
        }
    }

    // MARK: GeoJSON: RFC 7946

    private func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// The positions of each line of the one Feature written for `route`.
    private func lines(_ route: Route) throws -> (type: String, lines: [[[Double]]], properties: [String: Any]) {
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(RouteFormats.writeGeoJSON([route]))) as? [String: Any])
        let feature = try XCTUnwrap((object["features"] as? [[String: Any]])?.first)
        let geometry = try XCTUnwrap(feature["geometry"] as? [String: Any])
        let type = try XCTUnwrap(geometry["type"] as? String)
        let lines = type == "LineString" ? [try XCTUnwrap(geometry["coordinates"] as? [[Double]])]
            : try XCTUnwrap(geometry["coordinates"] as? [[[Double]]])
        return (type, lines, feature["properties"] as? [String: Any] ?? [:])
    }

    /// Where the great circle from a to b meets the 180th meridian, found
    /// independently of the writer: the direction common to the circle's
    /// plane and the meridian's (vectors), on the 180° side.
    private func crossing(_ a: Coordinate, _ b: Coordinate) -> Double {
        func v(_ p: Coordinate) -> SIMD3<Double> {
            let φ = p.latitude * .pi / 180, λ = p.longitude * .pi / 180
            return SIMD3(cos(φ) * cos(λ), cos(φ) * sin(λ), sin(φ))
        }
        func cross(_ x: SIMD3<Double>, _ y: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(x.y * y.z - x.z * y.y, x.z * y.x - x.x * y.z, x.x * y.y - x.y * y.x)
        }
        var d = cross(cross(v(a), v(b)), SIMD3(0, 1, 0))
        if d.x > 0 { d = -d }
        return atan2(d.z, -d.x) * 180 / .pi
    }

    func testALineAcrossTheAntimeridianIsCutInTwo() throws {
        // Suva, Fiji to Apia, Samoa, eastwards over 180°, with times, altitudes and speeds.
        let suva = c(-18.1416, 178.4419), apia = c(-13.8333, -171.75)
        let route = Route(name: "fiji-samoa", kind: .track, segments: [[
            Waypoint(c(-18.5, 177.5), altitude: 10, time: 0, speed: 200),
            Waypoint(suva, altitude: 100, time: 1_000, speed: 250),
            Waypoint(apia, altitude: 20, time: 5_000, speed: 230),
        ]])
        let (type, parts, properties) = try lines(route)
        XCTAssertEqual(type, "MultiLineString")
        guard parts.count == 2, parts[0].count == 3, parts[1].count == 2 else { return XCTFail("not cut in two: \(parts)") }
        let latitude = crossing(suva, apia)
        XCTAssertEqual(parts[0][0], [177.5, -18.5, 10], "[longitude, latitude, altitude]")
        XCTAssertEqual(parts[0][1], [178.4419, -18.1416, 100])
        XCTAssertEqual(parts[0][2][0], 180)
        XCTAssertEqual(parts[0][2][1], latitude, accuracy: 1e-7)
        XCTAssertEqual(parts[1][0][0], -180)
        XCTAssertEqual(parts[1][0][1], parts[0][2][1], "the same crossing point on both sides")
        XCTAssertEqual(parts[1][1], [-171.75, -13.8333, 20])
        for part in parts {
            XCTAssertGreaterThanOrEqual(part.count, 2)
            for (p, q) in zip(part, part.dropFirst()) { XCTAssertLessThanOrEqual(abs(q[0] - p[0]), 180, "\(part)") }
        }
        // The crossing's time, altitude and speed at its fraction of the leg (the great circle's angle).
        let cut = c(latitude, 180)
        let f = Spherical.distance(suva, cut) / Spherical.distance(suva, apia)
        XCTAssertTrue(f > 0.1 && f < 0.9, "\(f)")
        let times = try XCTUnwrap(properties["coordTimes"] as? [[String]])
        XCTAssertEqual(times.map(\.count), [3, 2], "nested per line, one per position")
        XCTAssertEqual(times[0][2], times[1][0])
        XCTAssertEqual(try XCTUnwrap(ISOTime.parse(times[0][2])?.seconds), (1_000 + 4_000 * f), accuracy: 0.0005)
        XCTAssertEqual(parts[0][2][2], ((100 - 80 * f) * 1000).rounded() / 1000, accuracy: 1e-9)
        let speeds = try XCTUnwrap(properties["speeds"] as? [[Double]])
        XCTAssertEqual(speeds[0][2], ((250 - 20 * f) * 1000).rounded() / 1000, accuracy: 1e-9)

        // Westwards, Samoa to Fiji: the same cut, mirrored.
        let west = try lines(Route(name: "samoa-fiji", kind: .list, segments: [[Waypoint(apia), Waypoint(suva)]]))
        XCTAssertEqual(west.lines.map { $0.map { $0[0] } }, [[-171.75, -180], [180, 178.4419]])
        XCTAssertEqual(west.lines[0][1][1], latitude, accuracy: 1e-7)

        // Over and back: three lines. A point on the antimeridian starts the next line without a new point.
        let zigzag = try lines(Route(name: "zigzag", kind: .list, segments: [[
            Waypoint(c(0, 179)), Waypoint(c(1, -179)), Waypoint(c(2, 179.5)), Waypoint(c(3, 180)), Waypoint(c(4, -179.5)),
        ]]))
        XCTAssertEqual(zigzag.lines.map { $0.map { $0[0] } }, [[179, 180], [-180, -179, -180], [180, 179.5, 180], [-180, -179.5]])
        XCTAssertEqual(zigzag.lines[2][2], [180, 3])
        XCTAssertEqual(zigzag.lines[3][0], [-180, 3])

        // Read back: the cut parts are segments that meet at the same place.
        let back = try RouteFormats.readGeoJSON(RouteFormats.writeGeoJSON([route]))
        XCTAssertEqual(back[0].segments.map(\.count), [3, 2])
        XCTAssertEqual(Spherical.distance(back[0].segments[0][2].coordinate, back[0].segments[1][0].coordinate), 0, accuracy: 1e-6)
    }

    func testALineThatDoesNotCrossStaysWhole() throws {
        // Auckland to Suva: near the antimeridian, never over it.
        let north = try lines(Route(name: "auckland-suva", kind: .list, segments: [[Waypoint(c(-36.8485, 174.7633)), Waypoint(c(-18.1416, 178.4419))]]))
        XCTAssertEqual(north.type, "LineString")
        XCTAssertEqual(north.lines, [[[174.7633, -36.8485], [178.4419, -18.1416]]])
        // Over Greenwich: longitudes change sign, the line stays whole.
        let greenwich = try lines(Route(name: "greenwich", kind: .list, segments: [[Waypoint(c(51.4769, -0.5)), Waypoint(c(51.4769, 0.5))]]))
        XCTAssertEqual(greenwich.lines, [[[-0.5, 51.4769], [0.5, 51.4769]]])
        // Exactly 180° apart: over the pole, not across the antimeridian.
        let pole = try lines(Route(name: "pole", kind: .list, segments: [[Waypoint(c(80, 10)), Waypoint(c(80, -170))]]))
        XCTAssertEqual(pole.lines.count, 1)
        // On the antimeridian itself: the point takes its neighbour's side.
        let edge = try lines(Route(name: "edge", kind: .list, segments: [[Waypoint(c(-16, -180)), Waypoint(c(-17, 179.9)), Waypoint(c(-18, -180))]]))
        XCTAssertEqual(edge.lines, [[[180, -16], [179.9, -17], [180, -18]]])
    }

    func testGeoJSONPrecisionAndSinglePoints() throws {
        let route = Route(name: "precise", kind: .track, segments: [
            [Waypoint(c(51.477928123456789, -0.001545678901234), altitude: 45.123456, speed: 13.888888889),
             Waypoint(c(51.4779, -0.0015))],
            [Waypoint(c(-33.8688, 151.2093), altitude: 3)],
        ])
        let text = String(decoding: RouteFormats.writeGeoJSON([route]), as: UTF8.self)
        XCTAssertTrue(text.contains("[-0.0015457,51.4779281,45.123]"), text)
        XCTAssertTrue(text.contains("13.889"), text)
        // RFC 7946 §3.1.4: a line has two positions or more; one point is written twice.
        XCTAssertTrue(text.contains("[[151.2093,-33.8688,3.0],[151.2093,-33.8688,3.0]]"), text)
        XCTAssertEqual(try RouteFormats.readGeoJSON(Array(text.utf8))[0].segments.map(\.count), [2, 1])
        // No number carries more than 7 decimals.
        for number in text.split(whereSeparator: { !"0123456789.-e".contains($0) }) where number.contains(".") {
            XCTAssertLessThanOrEqual(number.split(separator: ".")[1].count, 7, "\(number)")
        }
        // A route without points: a Feature with a null geometry (§3.2).
        let empty = String(decoding: RouteFormats.writeGeoJSON([Route(name: "none", kind: .list, segments: [])]), as: UTF8.self)
        XCTAssertTrue(empty.contains("\"geometry\":null"), empty)
    }

    /// Through the shell: `loc.export` of routes that cross and do not cross,
    /// checked by Python's json module against RFC 7946's shape.
    func testExportedGeoJSONThroughPincer() throws {
        let out = Fixture.temporaryDirectory("pincer-loc-geojson")
        defer { try? FileManager.default.removeItem(atPath: out) }
        for (name, points) in [("fiji-samoa", "-18.1416,178.4419 -13.8333,-171.75"), ("auckland-suva", "-36.8485,174.7633 -18.1416,178.4419")] {
            XCTAssertEqual(try pincer("loc.waypoints", name, points, "250").status, 0)
            XCTAssertEqual(try pincer("loc.export", name, "\(out)/\(name).geojson").status, 0)
        }
        // A playback recording across the antimeridian: fixes with times.
        let recorded = try pincer("loc.export", "fiji-samoa", "\(out)/played.geojson", "--playback", "--interval", "600")
        XCTAssertEqual(recorded.status, 0, recorded.stderr)
        let script = """
        import json, sys
        def check(path):
            doc = json.load(open(path))
            assert doc['type'] == 'FeatureCollection' and 'crs' not in doc, doc.keys()
            f, = doc['features']
            assert f['type'] == 'Feature' and 'properties' in f, f.keys()
            g = f['geometry']
            lines = [g['coordinates']] if g['type'] == 'LineString' else g['coordinates']
            assert g['type'] in ('LineString', 'MultiLineString')
            for line in lines:
                assert len(line) >= 2, line
                for p in line:
                    assert len(p) in (2, 3) and -180 <= p[0] <= 180 and -90 <= p[1] <= 90, p
                    assert round(p[0], 7) == p[0] and round(p[1], 7) == p[1], p
                for p, q in zip(line, line[1:]):
                    assert abs(q[0] - p[0]) <= 180, (p, q)
            times = f['properties'].get('coordTimes')
            if times is not None:
                nested = times if g['type'] == 'MultiLineString' else [times]
                assert [len(t) for t in nested] == [len(l) for l in lines], (times, lines)
            print(path.rsplit('/', 1)[1], g['type'], len(lines), lines[0][0][0], lines[0][0][1], lines[-1][-1][0], lines[-1][-1][1],
                  'times' if times else 'no-times')
        for path in sys.argv[1:]:
            check(path)
        """
        let checked = try Consumer.python(Consumer.debianPython, script, ["auckland-suva", "fiji-samoa", "played"].map { "\(out)/\($0).geojson" })
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertEqual(checked.stdout, """
            auckland-suva.geojson LineString 1 174.7633 -36.8485 178.4419 -18.1416 no-times
            fiji-samoa.geojson MultiLineString 2 178.4419 -18.1416 -171.75 -13.8333 no-times
            played.geojson MultiLineString 2 178.4419 -18.1416 -171.75 -13.8333 times

            """)
    }

    // MARK: Lengths against GeographicLib, through the shell

    /// Land's End to John o' Groats as a route of those two points:
    /// `loc.routes` gives GeographicLib's geodesic length (969,954.17 m, not
    /// the sphere's 968,876 m) and the duration at the route's speed, and a
    /// playback ends at that route time.
    func testLandsEndToJohnOGroatsThroughPincer() throws {
        let reference = try Consumer.python(Consumer.debianPython, """
            from geographiclib.geodesic import Geodesic
            print(repr(Geodesic.WGS84.Inverse(50.06632, -5.71475, 58.64402, -3.07009)['s12']))
            """)
        XCTAssertEqual(reference.status, 0, reference.stderr)
        let s12 = try XCTUnwrap(Double(reference.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), reference.stdout)
        XCTAssertEqual(s12, 969_954.166, accuracy: 0.001)

        XCTAssertEqual(try pincer("loc.waypoints", "lejog", "50.06632,-5.71475 58.64402,-3.07009", "--speed", "25").status, 0)
        let routes = try XCTUnwrap(try result("loc.routes") as? [[String: Any]])
        let lejog = try XCTUnwrap(routes.first { $0["name"] as? String == "lejog" })
        XCTAssertEqual(try XCTUnwrap(lejog["metres"] as? Double), (s12 * 10).rounded() / 10)
        XCTAssertEqual(try XCTUnwrap(lejog["seconds"] as? Double), (s12 / 25 * 10).rounded() / 10, "25 m/s, kept across runs")

        let played = try pincer("loc.play", "lejog", "--interval", "10000", "--rate", "200000", "--json")
        XCTAssertEqual(played.status, 0, played.stderr)
        let lines = played.stdout.split(separator: "\n").map { Fixture.json(String($0)) }
        let fixes = lines.dropLast()
        XCTAssertEqual(fixes.count, 5, "0, 10000, 20000, 30000 s and the end")
        XCTAssertEqual(try XCTUnwrap(fixes.last?["routeTime"] as? Double), s12 / 25, accuracy: 1e-6)
        XCTAssertTrue(fixes.allSatisfy { $0["speed"] as? Double == 25 }, "\(fixes)")
        XCTAssertEqual(lines.last?["result"] as? String, "played lejog: 5 fixes over 969.95 km, 10.78 h of route time at ×200000")
    }

    // MARK: loc.play --json, through the shell

    /// Every line on standard output is a JSON object: one per fix, then the
    /// shell's result object. At --rate 20 each fix reports the route's speed
    /// (not 20 times it), timestamps are the wall clock and routeTime the
    /// simulated one.
    func testPlayJSONIsOnlyJSONLines() throws {
        XCTAssertEqual(try pincer("loc.waypoints", "hop", "0,0 0,0.001", "10").status, 0)
        let played = try pincer("--json", "run", "loc.play", "hop", "--rate", "20")
        XCTAssertEqual(played.status, 0, played.stderr)
        let lines = played.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertTrue(played.stdout.hasSuffix("}\n"), played.stdout)
        var objects: [[String: Any]] = []
        for (k, line) in lines.enumerated() {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            XCTAssertNotNil(object, "line \(k + 1) is not a JSON object: \(line)")
            objects.append(object ?? [:])
        }
        let last = try XCTUnwrap(objects.last)
        XCTAssertEqual(last["command"] as? String, "loc.play")
        XCTAssertEqual(last["ok"] as? Bool, true)
        XCTAssertEqual(last["result"] as? String, "played hop: 13 fixes over 111 m, 11.1 s of route time at ×20")
        let fixes = objects.dropLast()
        XCTAssertEqual(fixes.count, 13)
        for fix in fixes {
            XCTAssertEqual(fix["speed"] as? Double, 10, "the simulated speed: \(fix)")
            XCTAssertEqual(fix["simulated"] as? Bool, true)
        }
        let times = fixes.compactMap { $0["timestamp"] as? Double }, routeTimes = fixes.compactMap { $0["routeTime"] as? Double }
        XCTAssertEqual(routeTimes.first, 0)
        XCTAssertEqual(try XCTUnwrap(routeTimes.last), 111.319_490_793 / 10, accuracy: 1e-6)
        XCTAssertEqual(times.sorted(), times)
        let span = try XCTUnwrap(times.last) - times[0]
        XCTAssertLessThan(span, 11.13 / 2, "wall clock: about 11.1 / 20 s, not 11.1 s of route time")
        XCTAssertGreaterThan(span, 11.13 / 20 * 0.9)
        XCTAssertEqual(abs(Date().timeIntervalSince1970 - times[0]), 0, accuracy: 60, "a wall-clock timestamp")
        // Without --json: text lines, then the result.
        let text = try pincer("loc.play", "hop", "--rate", "20")
        XCTAssertTrue(text.stdout.hasSuffix("  10.0 m/s  course 90.0°  t+11.1 s\nplayed hop: 13 fixes over 111 m, 11.1 s of route time at ×20\n"), text.stdout)
        // The old undocumented `json` parameter is gone; help documents the timestamps.
        let help = try XCTUnwrap(try pincer("help", "loc.play", "--json").stdout.data(using: .utf8))
        let command = try XCTUnwrap(try JSONSerialization.jsonObject(with: help) as? [String: Any])
        XCTAssertEqual((command["parameters"] as? [[String: Any]])?.compactMap { $0["name"] as? String },
                       ["route", "speed", "interval", "distance", "loop", "reverse", "rate"])
        let usage = try pincer("help", "loc.play").stdout
        XCTAssertTrue(usage.contains("Its timestamp is the wall clock when it is produced, not simulated time"), usage)
    }

    // MARK: import --replace, through the shell

    func testImportRefusesToReplaceARouteWithoutReplace() throws {
        let gpx = RouteFormatTests.fixtureDirectory
        let first = try XCTUnwrap(try result("loc.import", "\(gpx)/route.gpx", "--name", "mine") as? [String: Any])
        XCTAssertEqual(first["imported"] as? [String], ["mine"])
        XCTAssertEqual(first["replaced"] as? [String], [])
        func points(_ name: String) throws -> Int? {
            let routes = try XCTUnwrap(try result("loc.routes") as? [[String: Any]])
            return routes.first { $0["name"] as? String == name }?["points"] as? Int
        }
        XCTAssertEqual(try points("mine"), 55)

        // The same name again, from another file: refused, nothing changed.
        let refused = try pincer("loc.import", "\(gpx)/track_with_speed.gpx", "--name", "mine")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("route 'mine' exists already; nothing was saved. Give --replace to replace it, or --name to import it under another name"), refused.stderr)
        XCTAssertEqual(try points("mine"), 55)

        // With --replace: replaced, and said so; kept across runs, as one route.
        let replaced = try XCTUnwrap(try result("loc.import", "\(gpx)/track_with_speed.gpx", "--name", "mine", "--replace") as? [String: Any])
        XCTAssertEqual(replaced["imported"] as? [String], ["mine"])
        XCTAssertEqual(replaced["replaced"] as? [String], ["mine"])
        XCTAssertEqual(try points("mine"), 3)
        let rows = try Fixture.run(try Consumer.require(Consumer.sqlite3), [state + "/routes.sqlite", "SELECT name, points FROM routes; SELECT count(*) FROM route_points"])
        XCTAssertEqual(rows.stdout, "mine|3\n1\n", rows.stderr)

        // GeoJSON the same way; several routes: all named, none saved.
        let geojson = "\(state)/line.geojson"
        try Data(#"{"type":"LineString","coordinates":[[14.5,46.1],[14.6,46.2]]}"#.utf8).write(to: URL(fileURLWithPath: geojson))
        XCTAssertEqual(try pincer("loc.import", geojson, "--name", "mine").status, 1)
        XCTAssertEqual(try points("mine"), 3)
        XCTAssertEqual((try result("loc.import", geojson, "--name", "mine", "--replace") as? [String: Any])?["replaced"] as? [String], ["mine"])
        XCTAssertEqual(try points("mine"), 2)
        _ = try result("loc.import", "\(gpx)/korita-zbevnica.gpx")
        let many = try pincer("loc.import", "\(gpx)/korita-zbevnica.gpx")
        XCTAssertEqual(many.status, 1)
        XCTAssertTrue(many.stderr.contains("routes 'waypoints', '03-OCT-10 #2', 'ACTIVE LOG', 'ACTIVE LOG #2' exist already; nothing was saved. Give --replace to replace them"), many.stderr)

        // Routes of one file sharing a name are all kept.
        let all = try XCTUnwrap(try result("loc.import", "\(gpx)/gpx1.1_with_all_fields.gpx") as? [String: Any])
        XCTAssertEqual(all["imported"] as? [String], ["example name", "example name (2)", "second route", "example name t"])
        XCTAssertTrue((all["notes"] as? [String] ?? []).contains("route 2 of the file is also named 'example name' and was imported as 'example name (2)'"))
        XCTAssertEqual(try points("example name"), 2)
        XCTAssertEqual(try points("example name (2)"), 3)

        // loc.waypoints follows the same rule.
        XCTAssertEqual(try pincer("loc.waypoints", "mine", "1,1 2,2").status, 1)
        XCTAssertEqual(try pincer("loc.waypoints", "mine", "1,1 2,2 3,3", "--replace").stdout, "replaced route mine: 3 waypoints\n")
        XCTAssertEqual(try points("mine"), 3)
    }

    /// A route kept as a GPX file by an older version (under the file name
    /// of an older naming, too) is migrated into the route store: it is
    /// there, replaced only with --replace, and its old file is kept aside.
    func testReplacingARouteKeptUnderAnOldFileName() throws {
        try FileManager.default.createDirectory(atPath: state + "/routes", withIntermediateDirectories: true)
        let old = RouteFormats.writeGPX([Route(name: "old name", kind: .track, segments: [[Waypoint(c(1, 1)), Waypoint(c(1, 2))]])], creator: "t")
        try Data(old).write(to: URL(fileURLWithPath: state + "/routes/old_name.gpx"))
        XCTAssertEqual(try pincer("loc.waypoints", "old name", "5,5 6,6 7,7").status, 1, "the old route is there")
        XCTAssertEqual(try pincer("loc.waypoints", "old name", "5,5 6,6 7,7", "--replace").status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: state + "/routes.migrated"), ["old_name.gpx"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/routes.migrated/old_name.gpx")), Data(old))
        let routes = try XCTUnwrap(try result("loc.routes") as? [[String: Any]])
        XCTAssertEqual(routes.first { $0["name"] as? String == "old name" }?["points"] as? Int, 3)
    }
}
