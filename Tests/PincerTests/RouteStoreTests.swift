import Foundation
import XCTest
import GeoRoutes
import PincerHost

/// Imported routes in <state>/routes.sqlite, through the built `pincer`:
/// listing reads no points, the old GPX folder is migrated once (several
/// processes at once) with its files kept, and two processes importing the
/// same name cannot both win.
final class RouteStoreTests: XCTestCase {
    var state = ""
    override func setUp() { state = Fixture.temporaryDirectory("pincer-route-store") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: state) }

    func pincer(_ args: String..., environment: [String: String] = [:]) throws -> Fixture.ProcessResult {
        try pincer(args, environment: environment)
    }

    func pincer(_ args: [String], environment: [String: String] = [:]) throws -> Fixture.ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        for (k, v) in environment { env[k] = v }
        return try Fixture.run(Fixture.pincer, args, environment: env)
    }

    func routes() throws -> [[String: Any]] {
        let r = try pincer("run", "loc.routes", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        return (Fixture.json(r.stdout)["result"] as? [[String: Any]]) ?? []
    }

    func sqlite(_ sql: String) throws -> String {
        let r = try Fixture.run(try Consumer.require(Consumer.sqlite3), [state + "/routes.sqlite", sql])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// The points are read only to play, export or draw a route: with a
    /// route's points damaged, the listing is what it was, byte for byte,
    /// and the commands that need the points say which route is damaged.
    func testListingReadsNoPoints() throws {
        XCTAssertEqual(try pincer("run", "loc.import", Consumer.shared + "/gpx/route.gpx", "--name", "fixture").status, 0)
        XCTAssertEqual(try pincer("run", "loc.waypoints", "walk", "1,1 1,1.001 1.001,1.001", "--speed", "2").status, 0)
        let before = try pincer("run", "loc.routes", "--json")
        XCTAssertEqual(before.status, 0, before.stderr)
        let fixture = try XCTUnwrap(try routes().first { $0["name"] as? String == "fixture" })
        XCTAssertEqual(fixture["points"] as? Int, 55)
        XCTAssertEqual(fixture["kind"] as? String, "route")
        XCTAssertNotNil(fixture["metres"] as? Double)

        XCTAssertEqual(try sqlite("UPDATE route_points SET gpx = X'3c67707820' WHERE name = 'fixture'; SELECT changes();"), "1")
        let after = try pincer("run", "loc.routes", "--json")
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertEqual(after.stdout, before.stdout, "the listing read the damaged points")
        XCTAssertEqual(after.stderr, "")
        for command in [["loc.export", "fixture", state + "/out.gpx"], ["loc.play", "fixture", "--rate", "1000"], ["loc.map", "fixture", state + "/out.svg"]] {
            let r = try pincer(["run"] + command)
            XCTAssertEqual(r.status, 1, "\(command)")
            XCTAssertTrue(r.stderr.contains("route store \(state)/routes.sqlite: the points of route 'fixture' are damaged"), "\(command): \(r.stderr)")
        }
        // The other route is whole, and its speed was kept beside it.
        let walk = try XCTUnwrap(try routes().first { $0["name"] as? String == "walk" })
        XCTAssertEqual(walk["speed"] as? Double, 2)
        XCTAssertEqual(walk["bounds"] as? [Double], [1, 1, 1.001, 1.001], "south, west, north, east")
        XCTAssertTrue((walk["imported"] as? String)?.hasSuffix("Z") == true, "\(walk)")
        let metres = try XCTUnwrap(walk["metres"] as? Double)
        XCTAssertEqual(try XCTUnwrap(walk["seconds"] as? Double), (metres / 2 * 10).rounded() / 10, accuracy: 0.11)
        XCTAssertEqual(try pincer("run", "loc.export", "walk", state + "/walk.gpx").status, 0)
        let back = try RouteFormats.read(Array(try Data(contentsOf: URL(fileURLWithPath: state + "/walk.gpx"))))
        XCTAssertEqual(back.routes.first?.points.count, 3)
        // A listing query never touches the points table (SQLite's plan for it).
        XCTAssertFalse(try sqlite("EXPLAIN QUERY PLAN SELECT name, kind, points, segments, metres, seconds, south, west, north, east, speed, created FROM routes")
            .contains("route_points"))
    }

    /// Routes kept as GPX files (one a file, its speed in the settings
    /// document) are moved into the store once, by one of four processes
    /// started at once; the folder is renamed with every file in it, an
    /// unreadable file is named and kept, and later runs change nothing.
    func testTheGPXFolderIsMigratedOnceKeepingTheFiles() throws {
        let folder = state + "/routes"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let files: [String: [UInt8]] = [
            "a.gpx": RouteFormats.writeGPX([Route(name: "a", kind: .track, segments: [[Waypoint(c(1, 1)), Waypoint(c(1, 1.01))]])], creator: "old"),
            "b_20c.gpx": RouteFormats.writeGPX([Route(name: "b c", kind: .route, segments: [[Waypoint(c(2, 2)), Waypoint(c(2, 2.01)), Waypoint(c(2.01, 2.01))]])], creator: "old"),
            "broken.gpx": Array("<gpx version=\"1.1\"><trk>".utf8),
        ]
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        let settings = try SettingsStore(directory: state)
        let document = #"{"spoofing":false,"source":"off","places":[],"route_speeds":{"a":7.5}}"#
        try settings.set(namespace: "dev.pincer.location", key: "state", value: document)

        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["run", "loc.routes", "--json"], stateDir: state,
                                                  extraEnvironment: ["PINCER_LOG": "info"], inputs: Array(repeating: "", count: 4))
        for r in results { XCTAssertEqual(r.status, 0, r.stderr) }
        let listings = results.map { r in ((Fixture.json(r.stdout)["result"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }
        for names in listings { XCTAssertEqual(names, ["city-bicycle-ride", "city-run", "freeway-drive", "a", "b c"]) }
        XCTAssertEqual(results.filter { $0.stderr.contains("moved 2 routes from the GPX files in \(folder) into \(state)/routes.sqlite; the files are kept in \(folder).migrated") }.count, 1,
                       results.map(\.stderr).joined(separator: "\n---\n"))
        XCTAssertEqual(results.filter { $0.stderr.contains("route file \(folder)/broken.gpx could not be read and was not migrated (it is kept)") }.count, 1)
        XCTAssertEqual(try sqlite("SELECT count(*) FROM routes; SELECT count(*) FROM route_points; SELECT value FROM meta"), "2\n2\n\(folder)")

        // The folder is renamed, every file in it as it was.
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder))
        for (name, bytes) in files {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: folder + ".migrated/" + name)), Data(bytes), name)
        }
        // The speed came from the settings document, which is left as it was.
        let a = try XCTUnwrap(try routes().first { $0["name"] as? String == "a" })
        XCTAssertEqual(try XCTUnwrap(a["seconds"] as? Double), ((a["metres"] as? Double ?? 0) / 7.5 * 10).rounded() / 10, accuracy: 0.11)
        XCTAssertEqual(try settings.get(namespace: "dev.pincer.location", key: "state"), document)

        // Later runs find nothing to do, even when a folder of that name appears again.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(files["a.gpx"]!).write(to: URL(fileURLWithPath: folder + "/again.gpx"))
        let again = try pincer("run", "loc.routes", "--json", environment: ["PINCER_LOG": "info"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(again.stderr.contains("moved"), again.stderr)
        XCTAssertEqual(try sqlite("SELECT count(*) FROM routes"), "2")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/again.gpx"))
    }

    /// Eight processes import a route under the same name at once: one
    /// transaction each, so exactly one keeps it and seven are refused with
    /// the --replace message; with --replace, all eight succeed.
    func testConcurrentImportsOfOneNameExactlyOneWins() throws {
        let gpx = Consumer.shared + "/gpx/route.gpx"
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["run", "loc.import", gpx, "--name", "same"], stateDir: state,
                                                  inputs: Array(repeating: "", count: 8))
        XCTAssertEqual(results.filter { $0.status == 0 }.count, 1, results.map(\.stderr).joined(separator: "\n"))
        let refused = results.filter { $0.status == 1 }
        XCTAssertEqual(refused.count, 7)
        for r in refused {
            XCTAssertEqual(r.stderr, "pincer: loc.import: route 'same' exists already; nothing was saved. Give --replace to replace it, or --name to import it under another name\n")
        }
        XCTAssertEqual(try sqlite("SELECT count(*) FROM routes; SELECT count(*) FROM route_points"), "1\n1")

        let replacing = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["run", "loc.import", gpx, "--name", "same", "--replace"],
                                                    stateDir: state, inputs: Array(repeating: "", count: 8))
        for r in replacing { XCTAssertEqual(r.status, 0, r.stderr) }
        XCTAssertEqual(try sqlite("SELECT count(*) FROM routes; SELECT points FROM routes"), "1\n55")
    }
}
