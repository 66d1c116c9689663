import Foundation
import XCTest
import GeoRoutes
import CPincerSDK
@testable import PincerHost

/// The real `loc` plugin in a real host: an app in plain C (app_client.c)
/// reads, sets and follows the location through "pincer.location/1"; the
/// commands work on real GPX files.
final class LocationPluginTests: XCTestCase {
    func testPresetsAndPlacesPersist() throws {
        let app = AppHost(withApp: false)
        let presets = try app.json("loc.presets").arrayValue ?? []
        XCTAssertGreaterThanOrEqual(presets.filter { $0["kind"]?.stringValue == "city" }.count, 20)
        let edges = Set(presets.filter { $0["kind"]?.stringValue == "edge" }.compactMap { $0["id"]?.stringValue })
        XCTAssertTrue(edges.isSuperset(of: ["null-island", "antimeridian-east", "antimeridian-west", "svalbard"]))

        XCTAssertEqual(try app.text("loc.set", "paris"), "spoofing Paris (48.8566, 2.3522)")
        XCTAssertTrue(app.failure("loc.set", "91", "0").contains("latitude 91.0 is outside -90...90"))
        XCTAssertTrue(app.failure("loc.set", "10", "-180.5").contains("longitude -180.5 is outside -180...180"))
        XCTAssertTrue(app.failure("loc.set", "atlantis").contains("no place 'atlantis'"))
        XCTAssertEqual(try app.text("loc.add", "office", "52.52", "13.405", "Berlin office"), "added office at 52.52, 13.405")
        XCTAssertTrue(app.failure("loc.add", "paris", "1", "1").contains("is a preset"))

        app.restart(withApp: false)
        let current = try app.json("loc.current")
        XCTAssertEqual(current["spoofing"]?.boolValue, true)
        XCTAssertEqual(current["latitude"]?.doubleValue, 48.8566)
        XCTAssertEqual(current["simulated"]?.boolValue, true)
        XCTAssertEqual(try app.text("loc.set", "office"), "spoofing Berlin office (52.52, 13.405)")
        XCTAssertEqual(try app.text("loc.off"), "spoofing is off")
        XCTAssertEqual(try app.json("loc.current")["spoofing"]?.boolValue, false)
    }

    func testAnAppFollowsTheLocationThroughTheService() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("app.where"), "off")
        XCTAssertEqual(try app.text("app.locate", "-16.792", "179.999"), "ok")
        XCTAssertEqual(try app.text("app.where"), "-16.7920,179.9990|1")
        XCTAssertTrue(try app.text("app.locate", "0", "200").contains("longitude 200.0 is outside"))

        // A short route, played fast: the app's callback hears every fix.
        _ = try app.text("loc.waypoints", "block", "37.3349,-122.0090 37.3352,-122.0080 37.3345,-122.0075", "10")
        XCTAssertEqual(try app.text("app.drive", "block", "50"), "playing")
        let deadline = Date().addingTimeInterval(10)
        var heard = ""
        while Date() < deadline {
            heard = try app.text("app.heard")
            if let count = Int(heard.split(separator: "|")[0]), count >= 5, try app.json("loc.current")["source"]?.stringValue == "route",
               heard.contains("37.33450,-122.00750") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let parts = heard.split(separator: "|")
        XCTAssertGreaterThanOrEqual(Int(parts[0]) ?? 0, 5, heard)
        XCTAssertEqual(parts[1], "37.33450,-122.00750", "the last fix is the route's end: \(heard)")
        XCTAssertEqual(UInt32(parts[3]).map { $0 & PINCER_LOCATION_FIX_SIMULATED }, PINCER_LOCATION_FIX_SIMULATED)
        XCTAssertTrue(try app.text("app.drive", "nowhere", "1").contains("no route 'nowhere'"))

        // Pause, seek and resume the route the app plays.
        XCTAssertTrue(app.failure("loc.pause").contains("no route is playing"))
        XCTAssertEqual(try app.text("app.drive", "freeway-drive", "1"), "playing")
        XCTAssertEqual(try app.text("loc.pause"), "paused")
        XCTAssertEqual(try app.text("loc.seek", "600"), "at 600.0 s")
        XCTAssertEqual(try app.text("loc.resume"), "resumed")
        XCTAssertEqual(try app.text("loc.stop"), "stopped")
    }

    func testImportExportMapAndPlay() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-loc")
        let gpx = Consumer.shared + "/gpx/route.gpx"
        let imported = try app.json("loc.import", gpx, "fixture-route")
        XCTAssertEqual(imported["imported"]?.arrayValue?.first?.stringValue, "fixture-route")
        let routes = try app.json("loc.routes").arrayValue ?? []
        XCTAssertEqual(Set(routes.compactMap { $0["name"]?.stringValue }).isSuperset(of: ["city-run", "city-bicycle-ride", "freeway-drive", "fixture-route"]), true)

        // Round trips through both formats keep every point.
        let points = try XCTUnwrap(imported["points"]?.int64Value)
        _ = try app.text("loc.export", "fixture-route", "\(dir)/out.gpx")
        _ = try app.text("loc.export", "fixture-route", "\(dir)/out.geojson")
        for file in ["out.gpx", "out.geojson"] {
            let back = try RouteFormats.read(Array(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(file)"))))
            XCTAssertEqual(back.routes.first?.points.count, Int(points), file)
        }
        // A playback recording: fixes with timestamps.
        _ = try app.text("loc.export", "city-run", "\(dir)/run.gpx", "true", "0", "30")
        let recorded = try RouteFormats.read(Array(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/run.gpx"))))
        XCTAssertGreaterThan(recorded.routes.first?.points.count ?? 0, 10)
        XCTAssertNotNil(recorded.routes.first?.points.last?.time)

        _ = try app.text("loc.map", "city-run", "\(dir)/run.svg")
        let svg = try String(contentsOfFile: "\(dir)/run.svg", encoding: .utf8)
        XCTAssertTrue(svg.contains("<polyline"))
        XCTAssertTrue(app.failure("loc.map", "city-run", "\(dir)/run.gif").contains("must end in .png or .svg"))

        // Bad input is named, with its line.
        try Data("<gpx version=\"1.1\"><trk><trkseg><trkpt lon=\"1\"/></trkseg></trk></gpx>".utf8).write(to: URL(fileURLWithPath: "\(dir)/bad.gpx"))
        XCTAssertTrue(app.failure("loc.import", "\(dir)/bad.gpx").contains("line 1"))

        // Play a short route quickly (RouteConformanceTests plays through the shell, with --json).
        _ = try app.text("loc.waypoints", "hop", "0,0 0,0.001", "10")
        let done = try app.text("loc.play", "hop", "0", "1", "0", "false", "false", "20")
        XCTAssertEqual(done, "played hop: 13 fixes over 111 m, 11.1 s of route time at ×20")
        XCTAssertTrue(app.failure("loc.play", "hop", "0", "1", "5").contains("not both"))
    }
}
