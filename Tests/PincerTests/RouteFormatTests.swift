import Foundation
import XCTest
import GeoRoutes

/// GPX, GeoJSON and waypoint-list import and export (GeoRoutes).
final class RouteFormatTests: XCTestCase {

    // MARK: Helpers

    /// ../shared/fixtures/gpx beside the package root.
    static var fixtureDirectory: String { Consumer.shared + "/gpx" }

    /// The fixture directory; a failure (not a skip) when it is missing.
    func fixtureDirectory() throws -> String {
        let path = RouteFormatTests.fixtureDirectory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            struct Missing: Error, CustomStringConvertible { let path: String; var description: String { "no GPX fixtures at \(path)" } }
            throw Missing(path: path)
        }
        return path
    }

    func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: try fixtureDirectory() + "/" + name)))
    }

    func readFixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> (routes: [Route], notes: [String]) {
        do {
            return try RouteFormats.readGPX(try fixture(name))
        } catch let error as LocationError {
            XCTFail("\(name) was refused: \(error)", file: file, line: line)
            throw error
        }
    }

    func gpxError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let result = try RouteFormats.readGPX(Array(text.utf8))
            XCTFail("accepted: \(result.routes)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    func geoJSONError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let routes = try RouteFormats.readGeoJSON(Array(text.utf8))
            XCTFail("accepted: \(routes)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    func listError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let route = try RouteFormats.parseWaypointList(text)
            XCTFail("accepted: \(route)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    func gpx(_ text: String) throws -> (routes: [Route], notes: [String]) {
        try RouteFormats.readGPX(Array(text.utf8))
    }

    static func seconds(_ text: String) -> Double {
        ISOTime.parse(text)!.seconds
    }

    /// Runs Debian's python3 (Consumer.debianPython) with a script; fails
    /// when it is missing. Standard error follows standard output.
    func python(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try Consumer.python(Consumer.debianPython, script, arguments)
        return (result.status, result.stdout + result.stderr)
    }

    func temporaryFile(_ bytes: [UInt8], suffix: String) throws -> String {
        let path = NSTemporaryDirectory() + "/route-format-\(UUID().uuidString)\(suffix)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Equal except times, which may differ by the writer's millisecond rounding.
    func assertSameRoutes(_ a: [Route], _ b: [Route], timeTolerance: Double, _ label: String,
                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, "\(label): route count", file: file, line: line)
        for (x, y) in zip(a, b) {
            XCTAssertEqual(x.name, y.name, label, file: file, line: line)
            XCTAssertEqual(x.kind, y.kind, label, file: file, line: line)
            XCTAssertEqual(x.segments.map(\.count), y.segments.map(\.count), "\(label): \(x.name)", file: file, line: line)
            for (p, q) in zip(x.points, y.points) {
                var p2 = p, q2 = q
                if let s = p.time, let t = q.time {
                    XCTAssertEqual(s, t, accuracy: timeTolerance, "\(label): \(x.name)", file: file, line: line)
                    p2.time = nil
                    q2.time = nil
                }
                XCTAssertEqual(p2, q2, "\(label): \(x.name)", file: file, line: line)
            }
        }
    }

    // MARK: Fixtures

    enum Expectation {
        /// Route name, kind and points per segment; notes that must appear (substrings).
        case imports([(String, Route.Kind, [Int])], notes: [String])
        /// A substring of the message (which must also carry a line number).
        case refused(String)
    }

    static let expectations: [String: Expectation] = [
        "Mojstrovka.gpx": .imports([("track 1", .track, [184])], notes: []),
        "cerknicko-without-times.gpx": .imports([
            ("waypoints", .waypoints, [7]),
            ("ACTIVE LOG #2", .track, [173]), ("ACTIVE LOG #3", .track, [52]), ("ACTIVE LOG #4", .track, [2]),
            ("ACTIVE LOG #5", .track, [44]), ("ACTIVE LOG #6", .track, [2]), ("ACTIVE LOG #7", .track, [2]),
            ("ACTIVE LOG #8", .track, [21]),
        ], notes: ["1 empty track segment dropped", "track 'ACTIVE LOG' (line 58) has no points and was skipped"]),
        "gpx1.0_with_all_fields.gpx": .imports([
            ("example name", .waypoints, [2]), ("example name", .route, [3]), ("second route", .route, [2]),
            ("example name t", .track, [1]),
        ], notes: ["1 empty track segment dropped", "track 'track 2' (line 110) has no points", "no time zone (first at line 87)"]),
        "gpx1.1_with_all_fields.gpx": .imports([
            ("example name", .waypoints, [2]), ("example name", .route, [3]), ("second route", .route, [2]),
            ("example name t", .track, [1]),
        ], notes: ["1 empty track segment dropped", "track 'track 2' (line 159) has no points", "no time zone (first at line 131)"]),
        "gpx_with_garmin_extension.gpx": .imports([("waypoints", .waypoints, [1])], notes: []),
        "korita-zbevnica.gpx": .imports([
            ("waypoints", .waypoints, [2]), ("03-OCT-10 #2", .track, [358]), ("ACTIVE LOG", .track, [176]),
            ("ACTIVE LOG #2", .track, [337]),
        ], notes: ["1 empty track segment dropped", "track '03-OCT-10' (line 22) has no points"]),
        "route.gpx": .imports([("route 1", .route, [55])], notes: []),
        "track-with-empty-segment.gpx": .imports([("2013-07-06T14:59:00Z", .track, [9])], notes: ["1 empty track segment dropped"]),
        "track-with-extremes.gpx": .imports([("Untitled Path", .track, [25])], notes: []),
        "track_with_speed.gpx": .imports([("track 1", .track, [3])], notes: []),
        "unicode_with_bom.gpx": .imports([("waypoints", .waypoints, [1])], notes: []),
        // Not GPX at all: refused at the first non-space character.
        "gpxpy.LICENSE.txt": .refused("text before the root element"),
    ]

    func testEveryFixtureImportsOrIsRefusedWithALine() throws {
        let directory = try fixtureDirectory()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        XCTAssertFalse(names.isEmpty)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            let outcome: Result<(routes: [Route], notes: [String]), LocationError> = Result { () throws(LocationError) in
                try RouteFormats.readGPX(bytes)
            }
            switch (outcome, RouteFormatTests.expectations[name]) {
            case (.success(let result), .imports(let routes, let notes)?):
                XCTAssertEqual(result.routes.map(\.name), routes.map(\.0), name)
                XCTAssertEqual(result.routes.map(\.kind), routes.map(\.1), name)
                XCTAssertEqual(result.routes.map { $0.segments.map(\.count) }, routes.map(\.2), name)
                for note in notes {
                    XCTAssertTrue(result.notes.contains { $0.contains(note) }, "\(name): no note '\(note)' in \(result.notes)")
                }
                if notes.isEmpty { XCTAssertEqual(result.notes, [], name) }
                XCTAssertTrue(result.routes.allSatisfy { !$0.segments.isEmpty && $0.segments.allSatisfy { !$0.isEmpty } }, name)
            case (.failure(let error), .refused(let message)?):
                XCTAssertTrue(error.message.contains(message), "\(name): \(error.message)")
                XCTAssertTrue(error.message.hasPrefix("line "), "\(name): \(error.message)")
            case (.success(let result), nil):
                XCTFail("\(name) is a new fixture: it imports \(result.routes.map(\.name)); add its expectation")
            case (.failure(let error), nil):
                XCTFail("\(name) is a new fixture: it is refused (\(error.message)); add its expectation")
            case (.success(let result), .refused?):
                XCTFail("\(name) should be refused, imported \(result.routes.map(\.name))")
            case (.failure(let error), .imports?):
                XCTFail("\(name) should import, refused: \(error.message)")
            }
        }
    }

    /// The point count matches an independent reader (python's xml.etree):
    /// every wpt, rtept and trkpt element becomes one point.
    func testPointCountsMatchPythonXML() throws {
        let directory = try fixtureDirectory()
        let script = """
        import sys, xml.etree.ElementTree as ET
        for path in sys.argv[1:]:
            n = sum(1 for e in ET.parse(path).iter() if e.tag.split('}')[-1] in ('wpt', 'rtept', 'trkpt'))
            print(n)
        """
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".gpx") }.sorted()
        let result = try python(script, names.map { directory + "/" + $0 })
        XCTAssertEqual(result.status, 0, result.output)
        let counts = result.output.split(separator: "\n").map { Int($0)! }
        XCTAssertEqual(counts.count, names.count)
        for (name, count) in zip(names, counts) {
            let routes = try readFixture(name).routes
            XCTAssertEqual(routes.reduce(0) { $0 + $1.points.count }, count, name)
        }
    }

    func testFirstPointsOfFixtures() throws {
        // GPX 1.0 with pre-1970 times and seven fractional digits.
        let mojstrovka = try readFixture("Mojstrovka.gpx").routes[0].points[0]
        XCTAssertEqual(mojstrovka.coordinate, Coordinate(latitude: 46.434981, longitude: 13.748273))
        XCTAssertEqual(mojstrovka.altitude, 1614.678)
        XCTAssertEqual(mojstrovka.time!, -2_147_483_648 + 0.2073437, accuracy: 1e-6)

        // GPX 1.0 with every field; the track point's time has no zone (UTC).
        let all10 = try readFixture("gpx1.0_with_all_fields.gpx").routes
        XCTAssertEqual(all10[0].points[0], Waypoint(Coordinate(latitude: 12.3, longitude: 45.6), altitude: 75.1,
                                                    time: 1_357_092_180, name: "example name"))
        XCTAssertEqual(all10[0].points[1], Waypoint(Coordinate(latitude: 13.4, longitude: 46.7)))
        XCTAssertEqual(all10[1].points[0], Waypoint(Coordinate(latitude: 10, longitude: 20), altitude: 75.1,
                                                    time: RouteFormatTests.seconds("2013-01-02T02:03:03Z"), name: "example name r"))
        XCTAssertEqual(all10[3].points[0], Waypoint(Coordinate(latitude: 10.1, longitude: -20.2), altitude: 11.1,
                                                    time: RouteFormatTests.seconds("2013-01-01T12:00:04Z"), name: "example name t"))

        // GPX 1.1 gives the same points (extensions and links skipped).
        let all11 = try readFixture("gpx1.1_with_all_fields.gpx").routes
        XCTAssertEqual(all11, all10)

        // Garmin TrackPointExtension with a heart rate only: no speed.
        let garmin = try readFixture("gpx_with_garmin_extension.gpx").routes[0].points[0]
        XCTAssertEqual(garmin, Waypoint(Coordinate(latitude: 37.778259, longitude: -122.391386), altitude: 3.4,
                                        time: RouteFormatTests.seconds("2016-06-17T23:41:03Z")))

        // A byte order mark, a negative elevation and a fractional second.
        let bom = try readFixture("unicode_with_bom.gpx").routes[0].points[0]
        XCTAssertEqual(bom, Waypoint(Coordinate(latitude: 43.309634, longitude: 3.515386), altitude: -14.6,
                                     time: 1_464_343_727.8, name: "test"))

        // A route without times; rtept names kept.
        let route = try readFixture("route.gpx").routes[0]
        XCTAssertEqual(route.points[0], Waypoint(Coordinate(latitude: 45.2787641494, longitude: 13.726695478), name: "#001"))
        XCTAssertEqual(route.points[54].name, "#055")
        XCTAssertTrue(route.points.allSatisfy { $0.time == nil && $0.altitude == nil })

        // Extremes: the elevation spike and the far point are kept as given.
        let extremes = try readFixture("track-with-extremes.gpx").routes[0].points
        XCTAssertEqual(extremes.compactMap(\.altitude).max(), 30)
        XCTAssertEqual(extremes.map(\.coordinate.latitude).max(), 45.485465008)
        XCTAssertEqual(extremes.map(\.coordinate.longitude).max(), 13.520498463)
        XCTAssertTrue(extremes.allSatisfy { $0.time == nil })

        // Waypoint names and a waypoint without elevation.
        let cerknicko = try readFixture("cerknicko-without-times.gpx").routes
        XCTAssertEqual(cerknicko[0].points.map(\.name), ["001", "BACK T TH", "BIRDS NEST", "FAGGIO", "RAKOV12", "RAKV SKCJN", "VANSHNG LK"])
        XCTAssertNil(cerknicko[0].points[0].altitude)
        XCTAssertEqual(cerknicko[0].points[1].altitude, -0.11438)
        XCTAssertEqual(cerknicko[1].points[0].coordinate, Coordinate(latitude: 45.772175035, longitude: 14.357659249))
    }

    func testSpeedsAndEmptySegment() throws {
        let speed = try readFixture("track_with_speed.gpx").routes[0]
        XCTAssertEqual(speed.points.map(\.speed), [1.2, 2.2, 3.2])
        XCTAssertEqual(speed.points.map(\.altitude), [48.962041, 58.166437, 53.381747])
        XCTAssertEqual(speed.points.map(\.time), ["2009-03-02T14:05:52Z", "2009-03-02T14:05:58Z", "2009-03-02T14:06:05Z"].map(RouteFormatTests.seconds))
        XCTAssertEqual(speed.points[0].coordinate, Coordinate(latitude: 52.330848, longitude: 5.541371))

        let (routes, notes) = try readFixture("track-with-empty-segment.gpx")
        XCTAssertEqual(routes.count, 1)
        XCTAssertEqual(routes[0].segments.count, 1, "the empty <trkseg> is dropped")
        XCTAssertEqual(routes[0].segments[0].count, 9)
        XCTAssertEqual(notes, ["1 empty track segment dropped"])
        XCTAssertEqual(routes[0].points[0], Waypoint(Coordinate(latitude: 50.7772126, longitude: 6.0819695), altitude: 191.5999756,
                                                     time: RouteFormatTests.seconds("2013-07-06T17:26:26Z")))
        XCTAssertEqual(routes[0].points[8].time, RouteFormatTests.seconds("2013-07-06T17:27:42Z"))
    }

    // MARK: GPX details and errors

    func testGarminSpeedExtensionAndPrefixes() throws {
        let text = """
        <?xml version="1.0"?>
        <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" version="1.1">
          <g:trk><g:name><![CDATA[Run & <walk>]]></g:name><g:trkseg>
            <g:trkpt lat="1" lon="2"><g:extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>150</gpxtpx:hr><gpxtpx:speed>4.5</gpxtpx:speed></gpxtpx:TrackPointExtension></g:extensions></g:trkpt>
            <g:trkpt lat='1.5' lon='2.5'><g:speed>1</g:speed><g:extensions><gpxtpx:speed>9</gpxtpx:speed></g:extensions></g:trkpt>
            <g:trkpt lat=" 2 " lon="3"><g:name>A &amp; B &#x263A; &#65;</g:name><g:unknown><g:ele>7</g:ele></g:unknown></g:trkpt>
          </g:trkseg></g:trk>
        </g:gpx>
        """
        let (routes, notes) = try gpx(text)
        XCTAssertEqual(notes, [])
        XCTAssertEqual(routes.count, 1)
        XCTAssertEqual(routes[0].name, "Run & <walk>")
        XCTAssertEqual(routes[0].points.map(\.speed), [4.5, 1, nil], "GPX 1.0 <speed> wins over an extension")
        XCTAssertEqual(routes[0].points[2].name, "A & B \u{263A} A")
        XCTAssertNil(routes[0].points[2].altitude, "<ele> inside an unknown element is skipped")
        XCTAssertEqual(routes[0].points[2].coordinate, Coordinate(latitude: 2, longitude: 3))
    }

    func testTimeZonesInGPX() throws {
        let text = """
        <gpx><trk><trkseg>
        <trkpt lat="0" lon="0"><time>2020-06-01T12:00:00+02:00</time></trkpt>
        <trkpt lat="0" lon="0"><time>2020-06-01T10:00:01.250Z</time></trkpt>
        <trkpt lat="0" lon="0"><time>2020-06-01T10:00:02</time></trkpt>
        <trkpt lat="0" lon="0"><time>2020-06-01T10:00:03</time></trkpt>
        <trkpt lat="0" lon="0"><time>  </time></trkpt>
        </trkseg></trk></gpx>
        """
        let (routes, notes) = try gpx(text)
        let base = RouteFormatTests.seconds("2020-06-01T10:00:00Z")
        XCTAssertEqual(routes[0].points.map(\.time), [base, base + 1.25, base + 2, base + 3, nil])
        XCTAssertEqual(notes, ["2 times have no time zone (first at line 4) and were read as UTC"])
    }

    func testGPXErrorsNameTheLine() {
        XCTAssertEqual(gpxError("<gpx>\n<trk><trkseg>\n<trkpt lon=\"1\"/>\n</trkseg></trk></gpx>"),
                       "line 3: <trkpt> has no lat attribute")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\"/>\n</gpx>"), "line 2: <wpt> has no lon attribute")
        XCTAssertEqual(gpxError("<gpx>\n<rte>\n<rtept lat=\"91\" lon=\"1\"/>\n</rte></gpx>"),
                       "line 3: latitude 91.0 is outside -90...90")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\" lon=\"-180.5\"/>\n</gpx>"), "line 2: longitude -180.5 is outside -180...180")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"north\" lon=\"1\"/>\n</gpx>"), "line 2: <wpt> lat 'north' is not a number")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"nan\" lon=\"1\"/>\n</gpx>"), "line 2: <wpt> lat 'nan' is not a number")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\" lon=\"1\">\n<ele>1</ele>\n<time>2020-13-01</time></wpt>\n</gpx>"),
                       "line 4: <time> '2020-13-01' is not an ISO 8601 time")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\" lon=\"1\">\n<time>2019-02-29T00:00:00Z</time></wpt>\n</gpx>"),
                       "line 3: <time> '2019-02-29T00:00:00Z' is not an ISO 8601 time")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\" lon=\"1\"><ele>high</ele></wpt>\n</gpx>"), "line 2: <ele> 'high' is not a number")
        XCTAssertEqual(gpxError("<gpx>\n<trk><trkseg><trkpt lat=\"1\" lon=\"1\">\n<speed>-2</speed></trkpt></trkseg></trk>\n</gpx>"),
                       "line 3: <speed> '-2' is not a speed in metres per second")
        // CR LF and lone CR end lines too.
        XCTAssertEqual(gpxError("<gpx>\r\n<wpt lat=\"1\"/>\r</gpx>"), "line 2: <wpt> has no lon attribute")

        // No points at all.
        XCTAssertTrue(gpxError("<gpx version=\"1.1\" creator=\"x\">\n<metadata><name>n</name></metadata>\n<trk><trkseg/></trk>\n</gpx>")
            .contains("no waypoints, routes or tracks"))
        XCTAssertTrue(gpxError("<gpx/>").contains("no waypoints, routes or tracks"))
        XCTAssertEqual(gpxError("<?xml version=\"1.0\"?>\n<kml><Placemark/></kml>"),
                       "line 2: the root element is <kml>, not <gpx> (this is not a GPX file)")
    }

    func testXMLSyntaxErrorsNameLineAndColumn() {
        XCTAssertEqual(gpxError("<gpx>\n<trk>\n</gpx>"),
                       "line 3, column 1: end tag </gpx> does not match <trk> opened at line 2, column 1")
        XCTAssertEqual(gpxError("<gpx>\n  <wpt lat=\"1\" lon=\"2\">"),
                       "line 2, column 3: <wpt> is never closed (the input ends at line 2, column 24)")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=1 lon=\"2\"/></gpx>"), "line 2, column 10: the value of attribute lat of <wpt> is not in quotes")
        XCTAssertEqual(gpxError("<gpx>\n<wpt lat=\"1\" lat=\"2\"/></gpx>"), "line 2, column 14: attribute lat appears twice in <wpt>")
        XCTAssertEqual(gpxError("<gpx><name>Tom & Jerry</name></gpx>"),
                       "line 1, column 16: '&' must start a reference such as &amp; &lt; &gt; &quot; &apos; or &#...; (write '&amp;' for '&')")
        XCTAssertEqual(gpxError("<gpx><name>&nbsp;</name></gpx>"),
                       "line 1, column 12: unknown entity &nbsp; (only &amp; &lt; &gt; &quot; &apos; and character references are defined)")
        XCTAssertEqual(gpxError("<gpx>\n<!-- a -- b -->\n</gpx>"), "line 2, column 8: '--' is not allowed inside a comment")
        XCTAssertEqual(gpxError("<gpx></gpx>\n<gpx></gpx>"), "line 2, column 1: a second element after the root element <gpx>")
        XCTAssertEqual(gpxError("\n\n<?xml version=\"1.0\"?><gpx/>"), "line 3, column 1: the <?xml ...?> declaration must come first in the input")
        XCTAssertEqual(gpxError("<!DOCTYPE gpx><gpx/>"), "line 1, column 1: DOCTYPE is not supported")
        XCTAssertEqual(gpxError(""), "line 1, column 1: empty input (no root element)")
        XCTAssertEqual(gpxError("<gpx><name>é\u{1}</name></gpx>"), "line 1, column 13: control character U+0001 is not allowed in XML")
        XCTAssertEqual(gpxError("<gpx><name>a]]>b</name></gpx>"), "line 1, column 13: ']]>' is not allowed in text")
        XCTAssertEqual(gpxError("<gpx><name><![CDATA[x</name></gpx>"), "line 1, column 12: unterminated CDATA section (no ']]>')")

        // Bytes that are not UTF-8, and UTF-16.
        XCTAssertThrowsError(try RouteFormats.readGPX(Array("<gpx>\n<name>".utf8) + [0xE9] + Array("</name></gpx>".utf8))) { error in
            XCTAssertEqual((error as? LocationError)?.message, "line 2, column 7: invalid UTF-8 (byte 0xE9 is not followed by the rest of its character); the file must be UTF-8")
        }
        XCTAssertThrowsError(try RouteFormats.readGPX([0xFF, 0xFE, 0x3C, 0x00])) { error in
            XCTAssertEqual((error as? LocationError)?.message, "line 1, column 1: the file is UTF-16; only UTF-8 is supported")
        }
        // Deep nesting is refused, not a stack overflow.
        let deep = "<gpx>" + String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300) + "</gpx>"
        XCTAssertTrue(gpxError(deep).contains("nested more than"))
    }

    // MARK: GPX round trips

    func testGPXRoundTripOfEveryFixture() throws {
        let directory = try fixtureDirectory()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where name.hasSuffix(".gpx") {
            let first = try readFixture(name).routes
            let written = RouteFormats.writeGPX(first, creator: "Pincer tests")
            let (second, notes) = try RouteFormats.readGPX(written)
            XCTAssertEqual(notes, [], name)
            // Times are written to the millisecond (Mojstrovka has seven digits).
            assertSameRoutes(first, second, timeTolerance: 0.0005, name)
            if name != "Mojstrovka.gpx" { XCTAssertEqual(first, second, name) }
            // Writing what was read back is byte for byte the same.
            XCTAssertEqual(RouteFormats.writeGPX(second, creator: "Pincer tests"), written, name)
            XCTAssertEqual(try RouteFormats.readGPX(RouteFormats.writeGPX(second, creator: "Pincer tests")).routes, second, name)
        }
    }

    func testGPXWriterOutput() throws {
        let routes = [
            Route(name: "pins", kind: .waypoints, segments: [[Waypoint(Coordinate(latitude: 1, longitude: 2), name: "a \"b\" <c> & d")]]),
            Route(name: "plan", kind: .route, segments: [[Waypoint(Coordinate(latitude: 0.00001, longitude: -1e-7)), Waypoint(Coordinate(latitude: 3, longitude: 4))]]),
            Route(name: "drive\r\nhome", kind: .scenario, segments: [
                [Waypoint(Coordinate(latitude: 46.05, longitude: 14.5), altitude: 295.25, time: 1_700_000_000.5, speed: 13.9),
                 Waypoint(Coordinate(latitude: 46.06, longitude: 14.51), time: -0.001)],
                [],
                [Waypoint(Coordinate(latitude: -90, longitude: 180), altitude: 1e-5, time: 0)],
            ]),
        ]
        let bytes = RouteFormats.writeGPX(routes, creator: "Pincer & co")
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"Pincer &amp; co\""))
        XCTAssertTrue(text.contains("<name>a \"b\" &lt;c&gt; &amp; d</name>"))
        XCTAssertTrue(text.contains("<rtept lat=\"0.00001\" lon=\"-0.0000001\"/>"), text)
        XCTAssertTrue(text.contains("<time>2023-11-14T22:13:20.500Z</time>"), text)
        XCTAssertTrue(text.contains("<time>1969-12-31T23:59:59.999Z</time>"), text)
        XCTAssertTrue(text.contains("<time>1970-01-01T00:00:00Z</time>"), text)
        XCTAssertTrue(text.contains("<ele>0.00001</ele>"), text)
        XCTAssertTrue(text.contains("<gpxtpx:speed>13.9</gpxtpx:speed>"), text)
        XCTAssertFalse(text.contains("e-"), "no exponents in xsd:decimal values")

        // Tiny magnitudes are rounded to 23 places (at most 24 digits, libxml2's limit for xsd:decimal).
        let tiny = String(decoding: RouteFormats.writeGPX([Route(name: "", kind: .track, segments: [[
            Waypoint(Coordinate(latitude: 1.2345678901234567e-10, longitude: -1e-300), altitude: 1e21)]])], creator: "t"), as: UTF8.self)
        XCTAssertTrue(tiny.contains("<trkpt lat=\"0.00000000012345678901235\" lon=\"0.0\">"), tiny)
        XCTAssertTrue(tiny.contains("<ele>1000000000000000000000.0</ele>"), tiny)
        XCTAssertFalse(tiny.contains("<name>"), "no <name> for an unnamed route")

        let (back, notes) = try RouteFormats.readGPX(bytes)
        XCTAssertEqual(notes, [])
        XCTAssertEqual(back.map(\.name), ["pins", "plan", "drive\r\nhome"])
        XCTAssertTrue(text.contains("<metadata>\n    <name>pins</name>\n  </metadata>\n  <wpt "), text)
        XCTAssertEqual(back.map(\.kind), [.waypoints, .route, .track])
        XCTAssertEqual(back[0].points, routes[0].points)
        XCTAssertEqual(back[1].points, routes[1].points)
        // Longitude 180 is written as -180, the same meridian (GPX longitudes are -180..<180).
        XCTAssertTrue(text.contains("<trkpt lat=\"-90.0\" lon=\"-180.0\">"), text)
        var expected = routes[2].segments.filter { !$0.isEmpty }
        expected[1][0].coordinate.longitude = -180
        XCTAssertEqual(back[2].segments, expected)
    }

    /// Written GPX is well formed for python's xml.etree, in the GPX 1.1
    /// namespace, with the elements where the schema puts them.
    func testWrittenGPXIsWellFormed() throws {
        var routes = try readFixture("gpx1.1_with_all_fields.gpx").routes
        routes += try readFixture("track_with_speed.gpx").routes
        routes.append(Route(name: "odd <name> & \u{1}", kind: .list, segments: [[Waypoint(Coordinate(latitude: 1e-9, longitude: 0))]]))
        let path = try temporaryFile(RouteFormats.writeGPX(routes, creator: "Pincer"), suffix: ".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
        import sys, xml.etree.ElementTree as ET
        root = ET.parse(sys.argv[1]).getroot()
        ns = '{http://www.topografix.com/GPX/1/1}'
        assert root.tag == ns + 'gpx', root.tag
        assert root.get('version') == '1.1' and root.get('creator') == 'Pincer'
        order = [c.tag for c in root]
        kinds = [t[len(ns):] for t in order]
        assert kinds[0] == 'metadata' and root.find(ns + 'metadata/' + ns + 'name').text == 'example name', kinds
        kinds = kinds[1:]
        assert kinds == sorted(kinds, key=['wpt', 'rte', 'trk'].index), kinds
        print(len(root.findall(ns + 'wpt')), len(root.findall(ns + 'rte')), len(root.findall(ns + 'trk')), len(root.findall('.//' + ns + 'trkpt')))
        """
        let result = try python(script, [path])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(result.output, "2 2 3 5\n")
    }

    func testWrittenGPXValidatesAgainstTheXSD() throws {
        var routes = try readFixture("gpx1.1_with_all_fields.gpx").routes
        routes += try readFixture("track_with_speed.gpx").routes
        routes += try readFixture("Mojstrovka.gpx").routes
        routes.append(Route(name: "edges <&>", kind: .route, segments: [
            [Waypoint(Coordinate(latitude: 90, longitude: 180), altitude: 1e-9, time: -1e-3, speed: 1e-7, name: "\u{1}\r\n"),
             Waypoint(Coordinate(latitude: -90, longitude: -180), altitude: -1e21, time: 0)],
            [Waypoint(Coordinate(latitude: 1e-300, longitude: -1e-300))],
        ]))
        let path = try temporaryFile(RouteFormats.writeGPX(routes, creator: "Pincer"), suffix: ".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try RouteFormatTests.xmllint([path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stderr, "\(path) validates\n")
    }

    /// `xmllint --noout --nonet --schema <shared>/schemas/gpx.xsd files…`:
    /// exit 0 when every file validates. Fails when xmllint or the schema is missing.
    static func xmllint(_ files: [String]) throws -> Fixture.ProcessResult {
        let xsd = Consumer.schemas + "/gpx.xsd"
        guard FileManager.default.fileExists(atPath: xsd) else {
            struct Missing: Error, CustomStringConvertible { let path: String; var description: String { "no GPX 1.1 schema at \(path)" } }
            throw Missing(path: xsd)
        }
        return try Fixture.run(Consumer.require(Consumer.xmllint), ["--noout", "--nonet", "--schema", xsd] + files)
    }

    // MARK: GeoJSON

    func testGeoJSONReading() throws {
        let line = try RouteFormats.readGeoJSON(Array(#"{"type":"LineString","coordinates":[[14.5,46.1,300],[14.6,46.2]]}"#.utf8))
        XCTAssertEqual(line, [Route(name: "route 1", kind: .geojson, segments: [[
            Waypoint(Coordinate(latitude: 46.1, longitude: 14.5), altitude: 300),
            Waypoint(Coordinate(latitude: 46.2, longitude: 14.6)),
        ]])])

        let collection = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "properties": {"name": "morning", "coordTimes": ["2020-01-01T10:00:00Z", null]},
           "geometry": {"type": "LineString", "coordinates": [[1, 2], [3, 4, 5]]}},
          {"type": "Feature", "properties": null,
           "geometry": {"type": "MultiLineString", "coordinates": [[[1, 2]], [], [[5, 6], [7, 8]]]}},
          {"type": "Feature", "properties": {"times": [["2020-01-01T12:00:00+01:00"], ["2020-01-01T11:00:01", "2020-01-01T11:00:02.5Z"]]},
           "geometry": {"type": "MultiLineString", "coordinates": [[[1, 2]], [[5, 6], [7, 8]]]}}
        ]}
        """
        let (routes, notes) = try RouteFormats.read(Array(collection.utf8))
        XCTAssertEqual(routes.map(\.name), ["morning", "route 2", "route 3"])
        XCTAssertEqual(routes.map { $0.segments.map(\.count) }, [[2], [1, 2], [1, 2]])
        let ten = RouteFormatTests.seconds("2020-01-01T10:00:00Z"), eleven = RouteFormatTests.seconds("2020-01-01T11:00:00Z")
        XCTAssertEqual(routes[0].points.map(\.time), [ten, nil])
        XCTAssertEqual(routes[0].points[1], Waypoint(Coordinate(latitude: 4, longitude: 3), altitude: 5))
        XCTAssertEqual(routes[2].points.map(\.time), [eleven, eleven + 1, eleven + 2.5])
        XCTAssertEqual(notes, ["1 empty line dropped", "1 time has no time zone and was read as UTC"])

        XCTAssertEqual(try RouteFormats.readGeoJSON(Array(#"{"type":"Feature","properties":{"name":"x"},"geometry":{"type":"LineString","coordinates":[[0,0]]}}"#.utf8)).map(\.name), ["x"])
    }

    func testGeoJSONErrorsNameThePlace() {
        XCTAssertEqual(geoJSONError(#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[0,0],[0,91]]}}]}"#),
                       "features[0].geometry.coordinates[1]: latitude 91.0 is outside -90...90")
        XCTAssertEqual(geoJSONError(#"{"type":"MultiLineString","coordinates":[[[0,0]],[[200,0]]]}"#),
                       "coordinates[1][0]: longitude 200.0 is outside -180...180")
        XCTAssertEqual(geoJSONError(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]}}]}"#),
                       "features[0].geometry: geometry type Point is not supported (only LineString and MultiLineString)")
        XCTAssertEqual(geoJSONError(#"{"type":"Feature","properties":{"coordTimes":["2020-01-01T00:00:00Z"]},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}"#),
                       "properties.coordTimes: 1 values for 2 positions")
        XCTAssertEqual(geoJSONError(#"{"type":"Feature","properties":{"coordTimes":["2020-01-01T00:00:00Z","yesterday"]},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}"#),
                       "properties.coordTimes[1]: 'yesterday' is not an ISO 8601 time")
        XCTAssertEqual(geoJSONError(#"{"type":"LineString","coordinates":[[0,0],[1]]}"#),
                       "coordinates[1]: a position must be [longitude, latitude] or [longitude, latitude, altitude]")
        XCTAssertEqual(geoJSONError(#"{"type":"Feature","geometry":null}"#), "geometry: the Feature has no geometry")
        XCTAssertEqual(geoJSONError(#"{"type":"Point","coordinates":[0,0]}"#),
                       "the top level: GeoJSON type Point is not supported (expected a LineString or MultiLineString, or a Feature or FeatureCollection of them)")
        XCTAssertEqual(geoJSONError(#"{"coordinates":[]}"#), "the top level: the object has no \"type\" string")
        XCTAssertTrue(geoJSONError(#"{"type":"FeatureCollection","features":[]}"#).contains("no waypoints, routes or tracks"))
        XCTAssertEqual(geoJSONError("{\"type\":\n  \"LineString\",]"), "line 2, column 16: expected a string key after ',' in an object, found ']'")
    }

    func testGeoJSONRoundTrip() throws {
        let directory = try fixtureDirectory()
        var routes: [Route] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where name.hasSuffix(".gpx") {
            routes += try readFixture(name).routes
        }
        routes.append(Route(name: "two parts", kind: .scenario, segments: [
            [Waypoint(Coordinate(latitude: 1e-7, longitude: -179.999), altitude: -3.5, time: 1_700_000_000.25, speed: 2)],
            [Waypoint(Coordinate(latitude: 89.9, longitude: 180)), Waypoint(Coordinate(latitude: 0, longitude: 0), time: 12, speed: 0)],
        ]))
        // GeoJSON keeps no point names, makes every route .geojson, and
        // keeps 7 decimal places of coordinates, 3 of altitudes and speeds,
        // milliseconds of times.
        func round(_ x: Double, _ scale: Double) -> Double { (x * scale).rounded() / scale }
        let expected = routes.map { route in
            Route(name: route.name, kind: .geojson, segments: route.segments.map { $0.map { point in
                var point = point
                point.name = nil
                point.coordinate = Coordinate(latitude: round(point.coordinate.latitude, 1e7), longitude: round(point.coordinate.longitude, 1e7))
                point.altitude = point.altitude.map { round($0, 1e3) }
                point.speed = point.speed.map { round($0, 1e3) }
                if let time = point.time { point.time = ISOTime.parse(ISOTime.format(time))!.seconds }
                return point
            } })
        }
        XCTAssertTrue(expected.contains { $0.segments.contains { $0.count == 1 } }, "single-point segments are in the test")
        let written = RouteFormats.writeGeoJSON(routes)
        let back = try RouteFormats.readGeoJSON(written)
        XCTAssertEqual(back, expected)
        XCTAssertEqual(RouteFormats.writeGeoJSON(back), written)

        // The shape other tools expect.
        let object = try JSONSerialization.jsonObject(with: Data(written)) as! [String: Any]
        XCTAssertEqual(object["type"] as? String, "FeatureCollection")
        let features = object["features"] as! [[String: Any]]
        let last = features.last!
        XCTAssertEqual((last["geometry"] as! [String: Any])["type"] as? String, "MultiLineString")
        let properties = last["properties"] as! [String: Any]
        XCTAssertEqual(properties["name"] as? String, "two parts")
        XCTAssertEqual((properties["coordTimes"] as! [[Any]]).first?.first as? String, "2023-11-14T22:13:20.250Z")
        let speedFeature = features.first { ($0["properties"] as! [String: Any])["speeds"] != nil }!
        XCTAssertEqual((speedFeature["properties"] as! [String: Any])["speeds"] as? [Double], [1.2, 2.2, 3.2])
        let firstCoordinates = (features[0]["geometry"] as! [String: Any])["coordinates"] as! [[Double]]
        XCTAssertEqual(firstCoordinates[0], [13.748273, 46.434981, 1614.678], "[lon, lat, alt]")
    }

    // MARK: Detection

    func testReadDetectsTheFormat() throws {
        XCTAssertEqual(try RouteFormats.read(Array("\u{FEFF}\n  <gpx><wpt lat=\"1\" lon=\"2\"/></gpx>".utf8)).routes.map(\.kind), [.waypoints])
        XCTAssertEqual(try RouteFormats.read(Array(" \n{\"type\":\"LineString\",\"coordinates\":[[2,1]]}".utf8)).routes.map(\.kind), [.geojson])
        XCTAssertThrowsError(try RouteFormats.read(Array("\n  lat,lon".utf8))) { error in
            XCTAssertEqual((error as? LocationError)?.message, "line 2, column 3: neither GPX nor GeoJSON (expected '<' or '{' first)")
        }
        XCTAssertThrowsError(try RouteFormats.read(Array(" \n".utf8))) { error in
            XCTAssertEqual((error as? LocationError)?.message, "the file is empty (expected GPX or GeoJSON)")
        }
    }

    // MARK: Waypoint lists

    func testWaypointList() throws {
        let expected = [Waypoint(Coordinate(latitude: 46.05, longitude: 14.5)), Waypoint(Coordinate(latitude: -46.06, longitude: -14.51))]
        for text in ["46.05,14.5 -46.06,-14.51", "46.05,14.5;-46.06,-14.51", " 46.05, 14.5 ;  -46.06 ,-14.51 ", "46.05,14.5\n-46.06,-14.51;"] {
            let route = try RouteFormats.parseWaypointList(text)
            XCTAssertEqual(route.kind, .list, text)
            XCTAssertEqual(route.segments, [expected], text)
        }
        XCTAssertEqual(try RouteFormats.parseWaypointList("0,0").points, [Waypoint(Coordinate(latitude: 0, longitude: 0))])
        XCTAssertEqual(try RouteFormats.parseWaypointList("90,180 -90,-180").points.count, 2)

        XCTAssertEqual(listError(""), "no points given (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
        XCTAssertEqual(listError(" ; "), "no points given (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
        XCTAssertEqual(listError("46.05"), "point 1 '46.05' is not 'lat,lon' (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
        XCTAssertEqual(listError("1,2 3,4,5"), "point 2 '3,4,5' is not 'lat,lon' (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
        XCTAssertEqual(listError("46,14 91,0"), "point 2 '91,0': latitude 91.0 is outside -90...90")
        XCTAssertEqual(listError("46,14;0,181"), "point 2 '0,181': longitude 181.0 is outside -180...180")
        XCTAssertEqual(listError("46,abc"), "point 1 '46,abc': longitude 'abc' is not a number")
        XCTAssertEqual(listError("nan,0"), "point 1 'nan,0': latitude 'nan' is not a number")
        XCTAssertEqual(listError("46.0.1,0"), "point 1 '46.0.1,0': latitude '46.0.1' is not a number")
    }

    // MARK: ISO 8601

    func testISOTimeVectors() {
        func check(_ text: String, _ seconds: Double, zone: Bool, line: UInt = #line) {
            guard let parsed = ISOTime.parse(text) else { return XCTFail("\(text) refused", line: line) }
            XCTAssertEqual(parsed.seconds, seconds, accuracy: 1e-6, text, line: line)
            XCTAssertEqual(parsed.hadZone, zone, text, line: line)
        }
        check("1970-01-01T00:00:00Z", 0, zone: true)
        check("2013-01-02T02:03:00Z", 1_357_092_180, zone: true)
        check("2013-01-02T04:03:00+02:00", 1_357_092_180, zone: true)
        check("2013-01-02T00:03:00-0200", 1_357_092_180, zone: true)
        check("2013-01-02T07:33:00+05:30", 1_357_092_180, zone: true)
        check("2013-01-02t02:03:00z", 1_357_092_180, zone: true)
        check("2013-01-02 02:03:00Z", 1_357_092_180, zone: true)
        check("2013-01-02T02:03:00", 1_357_092_180, zone: false)
        check("2016-05-27T10:08:47.8Z", 1_464_343_727.8, zone: true)
        check("2016-05-27T10:08:47.123456Z", 1_464_343_727.123456, zone: true)
        check("2016-05-27T12:08:47.5+02:00", 1_464_343_727.5, zone: true)
        check("1901-12-13T20:45:52Z", -2_147_483_648, zone: true)
        check("2020-02-29T00:00:00Z", 1_582_934_400, zone: true)
        check("2000-02-29T12:00:00Z", 951_825_600, zone: true)
        check("2020-12-31T24:00:00Z", 1_609_459_200, zone: true)
        check("2016-12-31T23:59:60Z", 1_483_228_800, zone: true)
        check("  2013-01-02T02:03:00Z\n", 1_357_092_180, zone: true)

        for bad in ["", "2020-13-01", "2020-13-01T00:00:00Z", "2020-00-10T00:00:00Z", "2019-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
                    "2020-04-31T00:00:00Z", "2020-01-01T25:00:00Z", "2020-01-01T24:00:01Z", "2020-01-01T00:60:00Z", "2020-01-01T00:00:61Z",
                    "2020-01-01", "2020-01-01T00:00Z", "2020-01-01T00:00:00+2:00", "2020-01-01T00:00:00+24:00", "2020-01-01T00:00:00.Z",
                    "2020-01-01T00:00:00Zjunk", "20200101T000000Z", "2020-1-01T00:00:00Z", "yesterday"] {
            XCTAssertNil(ISOTime.parse(bad), bad)
        }

        XCTAssertEqual(ISOTime.format(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(ISOTime.format(1_357_092_180), "2013-01-02T02:03:00Z")
        XCTAssertEqual(ISOTime.format(1_464_343_727.8), "2016-05-27T10:08:47.800Z")
        XCTAssertEqual(ISOTime.format(1_464_343_727.0004), "2016-05-27T10:08:47Z")
        XCTAssertEqual(ISOTime.format(-0.5), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(ISOTime.format(-2_147_483_648 + 0.2073437), "1901-12-13T20:45:52.207Z")
        XCTAssertEqual(ISOTime.format(951_825_600), "2000-02-29T12:00:00Z")
        XCTAssertEqual(ISOTime.format(253_402_300_799.999), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(ISOTime.format(.nan), "")
        XCTAssertEqual(ISOTime.format(.infinity), "")
    }

    /// Against Foundation's formatter over two centuries, and format ∘ parse
    /// is the identity on millisecond times.
    func testISOTimeAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &generator)
            let seconds = Double(milliseconds) / 1000
            let foundation = formatter.string(from: Date(timeIntervalSince1970: seconds))
            guard let parsed = ISOTime.parse(foundation) else { return XCTFail(foundation) }
            XCTAssertEqual(parsed.seconds, seconds, accuracy: 0.0011, foundation)
            let ours = ISOTime.format(seconds)
            XCTAssertEqual(ISOTime.parse(ours)?.seconds, seconds, ours)
            XCTAssertEqual(String(ours.prefix(19)), String(foundation.prefix(19)), "\(seconds)")
        }
    }
}
