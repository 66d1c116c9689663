import Dispatch
import XCTest
import GeoRoutes

final class PlaybackTests: XCTestCase {
    // MARK: Helpers

    private let origin = Coordinate(latitude: 37.3349, longitude: -122.0090)

    private func wp(_ c: Coordinate, altitude: Double? = nil, time: Double? = nil, speed: Double? = nil) -> Waypoint {
        Waypoint(c, altitude: altitude, time: time, speed: speed)
    }

    private func route(_ segments: [[Waypoint]], suggestedSpeed: Double? = nil) -> Route {
        Route(name: "test", kind: .list, segments: segments, suggestedSpeed: suggestedSpeed)
    }

    private func timeline(_ route: Route, _ options: PlaybackOptions = PlaybackOptions(),
                          file: StaticString = #filePath, line: UInt = #line) throws -> Timeline {
        do throws(LocationError) {
            return try Timeline(route: route, options: options)
        } catch {
            XCTFail("Timeline refused the route: \(error)", file: file, line: line)
            throw error
        }
    }

    private func error(_ route: Route, _ options: PlaybackOptions = PlaybackOptions()) -> LocationError? {
        do throws(LocationError) {
            _ = try Timeline(route: route, options: options)
            return nil
        } catch {
            return error
        }
    }

    /// The point `distance` metres from `c` along the geodesic leaving at
    /// `bearing`: playback measures legs on the ellipsoid, so a leg built this
    /// way is exactly `distance` long.
    private func destination(_ c: Coordinate, bearing: Double, distance: Double) -> Coordinate {
        Ellipsoidal.direct(c, bearing: bearing, distance: distance).coordinate
    }

    private func assertNear(_ a: Coordinate, _ b: Coordinate, within metres: Double = 0.01,
                            file: StaticString = #filePath, line: UInt = #line) {
        let d = Spherical.distance(a, b)
        XCTAssertLessThanOrEqual(d, metres, "\(a) is \(d) m from \(b)", file: file, line: line)
    }

    /// True when `c` lies on the great-circle leg a–b (within a centimetre).
    private func isOn(_ c: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        abs(Spherical.distance(a, c) + Spherical.distance(c, b) - Spherical.distance(a, b)) < 0.01
    }

    /// A, B 12 km east, C 18 km north of B, D 6 km south-west of C: 36 km,
    /// one hour at 10 m/s.
    private func hourLegs() -> [Coordinate] {
        let a = origin
        let b = destination(a, bearing: 90, distance: 12_000)
        let c = destination(b, bearing: 0, distance: 18_000)
        let d = destination(c, bearing: 225, distance: 6_000)
        return [a, b, c, d]
    }

    private func hourRoute() -> Route { route([hourLegs().map { wp($0) }]) }

    private func hourOptions(_ change: (inout PlaybackOptions) -> Void = { _ in }) -> PlaybackOptions {
        var o = PlaybackOptions()
        o.speed = 10
        change(&o)
        return o
    }

    /// Where the hour route should be at route time t (seconds).
    private func expectedHourPosition(_ t: Double) -> Coordinate {
        let p = hourLegs()
        var start = 0.0
        for i in 1..<p.count {
            let duration = Ellipsoidal.inverse(p[i - 1], p[i]).distance / 10
            if t <= start + duration { return Spherical.intermediate(p[i - 1], p[i], fraction: (t - start) / duration) }
            start += duration
        }
        return p[p.count - 1]
    }

    // MARK: Timing

    func testOneHourRouteGivesAFixEveryIntervalOnTheGreatCircle() throws {
        let p = hourLegs()
        let t = try timeline(hourRoute(), hourOptions())
        XCTAssertEqual(t.length, 36_000, accuracy: 0.01)
        XCTAssertEqual(t.duration, 3_600, accuracy: 0.001)

        let fixes = t.fixes(startTime: 1_000_000)
        XCTAssertEqual(fixes.count, 3_601, "0, 1, … 3599 s and the final point")
        for (k, fix) in fixes.enumerated() {
            XCTAssertEqual(fix.timestamp, 1_000_000 + Double(k), accuracy: 1e-6)
            XCTAssertTrue(fix.simulated)
            XCTAssertEqual(fix.speed, 10, accuracy: 1e-9)
        }
        for k in stride(from: 0, through: 3_600, by: 60) {
            assertNear(fixes[k].coordinate, expectedHourPosition(Double(k)))
        }
        assertNear(fixes[0].coordinate, p[0])
        assertNear(fixes[1_200].coordinate, p[1])
        assertNear(fixes[3_000].coordinate, p[2])
        assertNear(fixes[3_600].coordinate, p[3])

        // fix(at:) between fixes, straight from Spherical.intermediate.
        assertNear(t.fix(at: 600, startTime: 0).coordinate, Spherical.intermediate(p[0], p[1], fraction: 0.5))
        assertNear(t.fix(at: 1_500.5, startTime: 0).coordinate, Spherical.intermediate(p[1], p[2], fraction: 300.5 / 1_800))
        assertNear(t.fix(at: 3_300, startTime: 0).coordinate, Spherical.intermediate(p[2], p[3], fraction: 0.5))
        XCTAssertEqual(t.fix(at: 1_500, startTime: 50).timestamp, 1_550)
        // Clamped outside 0...duration.
        assertNear(t.fix(at: -10, startTime: 0).coordinate, p[0])
        assertNear(t.fix(at: 99_999, startTime: 0).coordinate, p[3])

        // Course of each leg.
        XCTAssertEqual(t.fix(at: 100, startTime: 0).course, Spherical.initialBearing(p[0], p[1])!, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 2_000, startTime: 0).course, Spherical.initialBearing(p[1], p[2])!, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 3_500, startTime: 0).course, Spherical.initialBearing(p[2], p[3])!, accuracy: 1e-9)
    }

    func testPlayerDeliversOneFixPerIntervalAgainstTheManualClock() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock(500)
        let player = Player(timeline: t, clock: clock, startTime: 1_000)
        let expected = t.fixes(startTime: 1_000)

        let first = player.due()
        XCTAssertEqual(first.count, 1, "the start is due at once")
        XCTAssertEqual(first.first?.timestamp, 1_000)
        XCTAssertEqual(player.due().count, 0, "nothing more until the clock moves")

        var got = first
        for _ in 0..<3_600 {
            clock.advance(by: 1)
            let batch = player.due()
            XCTAssertEqual(batch.count, 1)
            got += batch
        }
        XCTAssertEqual(got.count, expected.count)
        for (a, b) in zip(got, expected) {
            assertNear(a.coordinate, b.coordinate, within: 1e-6)
            XCTAssertEqual(a.timestamp, b.timestamp, accuracy: 1e-6)
        }
        XCTAssertTrue(player.isFinished)
        clock.advance(by: 1)
        XCTAssertNil(player.current(), "nil after the end")
        XCTAssertEqual(player.due(), [])
    }

    func testCurrentFollowsTheClock() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        clock.advance(by: 1_234.5)
        XCTAssertEqual(player.routeTime, 1_234.5, accuracy: 1e-9)
        let fix = try XCTUnwrap(player.current())
        assertNear(fix.coordinate, expectedHourPosition(1_234.5))
        XCTAssertEqual(fix.timestamp, 1_234.5, accuracy: 1e-9)
        XCTAssertEqual(fix.speed, 10, accuracy: 1e-9)
        XCTAssertFalse(player.isFinished)
    }

    // MARK: Speeds

    func testSpeedsFromTimesBeatRecordedSpeedsBeatTheChosenSpeed() throws {
        let a = origin
        let b = destination(a, bearing: 90, distance: 1_000)
        let c = destination(b, bearing: 90, distance: 600)
        let d = destination(c, bearing: 90, distance: 700)
        let e = destination(d, bearing: 90, distance: 500)
        let r = route([[
            wp(a, time: 5_000, speed: 99),   // a–b: times on both ends → 1000 m / 250 s = 4 m/s
            wp(b, time: 5_250, speed: 2),    // b–c: c has no time → recorded (2 + 4) / 2 = 3 m/s
            wp(c, speed: 4),                 // c–d: only c recorded → 4 m/s
            wp(d, time: 9_000),              // d–e: no time at e, nothing recorded → the chosen 7 m/s
            wp(e),
        ]])
        var options = PlaybackOptions()
        options.speed = 7
        let t = try timeline(r, options)
        XCTAssertEqual(t.fix(at: 100, startTime: 0).speed, 4, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 250 + 100, startTime: 0).speed, 3, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 250 + 200 + 100, startTime: 0).speed, 4, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 250 + 200 + 175 + 10, startTime: 0).speed, 7, accuracy: 1e-9)
        XCTAssertEqual(t.duration, 250 + 200 + 175 + 500.0 / 7, accuracy: 1e-6)
        // Xcode plays the spacing of GPX times, not their absolute values.
        XCTAssertEqual(t.fixes(startTime: 0).first?.timestamp, 0)
    }

    func testNonIncreasingTimesFallBack() throws {
        let a = origin
        let b = destination(a, bearing: 0, distance: 100)
        let c = destination(b, bearing: 0, distance: 100)
        let r = route([[wp(a, time: 100, speed: 5), wp(b, time: 100), wp(c, time: 50)]])
        let t = try timeline(r, PlaybackOptions(speed: 2))
        XCTAssertEqual(t.fix(at: 1, startTime: 0).speed, 5, accuracy: 1e-9, "Δt = 0: the recorded speed present")
        XCTAssertEqual(t.fix(at: 30, startTime: 0).speed, 2, accuracy: 1e-9, "Δt < 0, nothing recorded: the chosen speed")
        XCTAssertEqual(t.duration, 20 + 50, accuracy: 1e-9)
    }

    func testSuggestedSpeedThenTwentyMetresPerSecond() throws {
        let a = origin, b = destination(origin, bearing: 45, distance: 1_200)
        let suggested = try timeline(route([[wp(a), wp(b)]], suggestedSpeed: 3))
        XCTAssertEqual(suggested.duration, 400, accuracy: 1e-6)
        let chosen = try timeline(route([[wp(a), wp(b)]], suggestedSpeed: 3), PlaybackOptions(speed: 6))
        XCTAssertEqual(chosen.duration, 200, accuracy: 1e-6)
        let simctlDefault = try timeline(route([[wp(a), wp(b)]]))
        XCTAssertEqual(simctlDefault.duration, 60, accuracy: 1e-6)
        XCTAssertEqual(simctlDefault.fix(at: 1, startTime: 0).speed, 20)
    }

    // MARK: Distance stepping

    func testDistanceStepping() throws {
        let a = origin
        let b = destination(a, bearing: 30, distance: 600)
        let c = destination(b, bearing: 120, distance: 450)
        let t = try timeline(route([[wp(a), wp(b), wp(c)]]), PlaybackOptions(speed: 5, step: .distance(100)))
        let fixes = t.fixes(startTime: 10)
        XCTAssertEqual(fixes.count, 12, "0, 100, … 1000 m and the final point at 1050 m")
        for k in 0...6 {
            assertNear(fixes[k].coordinate, Spherical.intermediate(a, b, fraction: Double(k) * 100 / 600))
            XCTAssertEqual(fixes[k].timestamp, 10 + Double(k) * 20, accuracy: 1e-6)
        }
        for k in 7...10 {
            assertNear(fixes[k].coordinate, Spherical.intermediate(b, c, fraction: (Double(k) * 100 - 600) / 450))
        }
        assertNear(fixes[11].coordinate, c)
        XCTAssertEqual(fixes[11].timestamp, 10 + 1_050 / 5, accuracy: 1e-6)

        // The player steps by distance too.
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        XCTAssertEqual(player.due().count, 1)
        clock.advance(by: 45)
        XCTAssertEqual(player.due().count, 2, "100 m and 200 m fall due in 45 s at 5 m/s")
    }

    // MARK: Segments, stops and courses

    func testGapBetweenSegmentsIsJumped() throws {
        let a = origin
        let b = destination(a, bearing: 90, distance: 300)
        let c = destination(b, bearing: 90, distance: 5_000)
        let d = destination(c, bearing: 0, distance: 300)
        let t = try timeline(route([[wp(a), wp(b)], [wp(c), wp(d)]]), PlaybackOptions(speed: 10))
        XCTAssertEqual(t.duration, 60, accuracy: 1e-6, "the gap takes no time")
        XCTAssertEqual(t.length, 600, accuracy: 1e-4, "Vincenty direct and inverse agree to micrometres")
        let fixes = t.fixes(startTime: 0)
        XCTAssertEqual(fixes.count, 61)
        for fix in fixes {
            XCTAssertTrue(isOn(fix.coordinate, a, b) || isOn(fix.coordinate, c, d), "\(fix.coordinate) is in the gap")
        }
        assertNear(fixes[29].coordinate, Spherical.intermediate(a, b, fraction: 29.0 / 30))
        // At 30 s the first segment ends and the second starts: either end of the gap.
        XCTAssertTrue(Spherical.distance(fixes[30].coordinate, b) < 0.01 || Spherical.distance(fixes[30].coordinate, c) < 0.01)
        assertNear(fixes[31].coordinate, Spherical.intermediate(c, d, fraction: 1.0 / 30))
        // Sampled finely across the jump: never strictly between b and c.
        for step in 0...200 {
            let fix = t.fix(at: 29 + Double(step) / 100, startTime: 0)
            XCTAssertTrue(isOn(fix.coordinate, a, b) || isOn(fix.coordinate, c, d), "\(fix.coordinate) is in the gap")
        }
        XCTAssertEqual(t.fix(at: 31, startTime: 0).course, 0, accuracy: 1e-6, "the second segment heads north")
    }

    func testCourseKeptOnZeroLengthLegsAndStopsKeepTheirTime() throws {
        let a = origin
        let b = destination(a, bearing: 90, distance: 100)
        let c = destination(b, bearing: 0, distance: 100)
        let r = route([[wp(a, time: 0), wp(b, time: 10), wp(b, time: 40), wp(b), wp(c)]])
        let t = try timeline(r, PlaybackOptions(speed: 10))
        XCTAssertEqual(t.duration, 10 + 30 + 0 + 10, accuracy: 1e-6)
        let east = try XCTUnwrap(Spherical.initialBearing(a, b))
        let stop = t.fix(at: 25, startTime: 0)
        assertNear(stop.coordinate, b)
        XCTAssertEqual(stop.speed, 0, "a stop")
        XCTAssertEqual(stop.course, east, accuracy: 1e-9, "course kept from the previous leg")
        XCTAssertEqual(t.fix(at: 45, startTime: 0).course, Spherical.initialBearing(b, c)!, accuracy: 1e-9)

        // A route that starts standing still takes the first real course.
        let t2 = try timeline(route([[wp(a), wp(a), wp(b)]]))
        XCTAssertEqual(t2.fix(at: 0, startTime: 0).course, east, accuracy: 1e-9)
        // A single point: no movement at all.
        let point = try timeline(route([[wp(a)]]))
        XCTAssertEqual(point.duration, 0)
        XCTAssertEqual(point.fixes(startTime: 7).map(\.coordinate), [a])
        XCTAssertEqual(point.fix(at: 0, startTime: 0).course, 0)
    }

    func testAltitudeInterpolatedWhenBothEndsHaveOne() throws {
        let a = origin
        let b = destination(a, bearing: 0, distance: 100)
        let c = destination(b, bearing: 0, distance: 100)
        let t = try timeline(route([[wp(a, altitude: 10), wp(b, altitude: 30), wp(c)]]), PlaybackOptions(speed: 10))
        XCTAssertEqual(t.fix(at: 2.5, startTime: 0).altitude ?? .nan, 15, accuracy: 1e-9)
        XCTAssertNil(t.fix(at: 15, startTime: 0).altitude, "c has no altitude")
    }

    // MARK: Loop and reverse

    func testLoopWrapsToTheStart() throws {
        let t = try timeline(hourRoute(), hourOptions { $0.loop = true; $0.step = .interval(600) })
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        XCTAssertEqual(player.due().count, 1)
        clock.advance(by: 3_600 + 30)
        XCTAssertEqual(player.routeTime, 30, accuracy: 1e-6)
        assertNear(try XCTUnwrap(player.current()).coordinate, expectedHourPosition(30))
        XCTAssertFalse(player.isFinished)
        let due = player.due()
        // 600 … 3000, the end at 3600, then the start of pass two (the route is open, so it jumps back).
        XCTAssertEqual(due.count, 7)
        assertNear(due[5].coordinate, hourLegs()[3])
        assertNear(due[6].coordinate, hourLegs()[0])
        XCTAssertEqual(due[6].timestamp, 3_600, accuracy: 1e-6)
        clock.advance(by: 7_200 * 10)
        XCTAssertNotNil(player.current())
        XCTAssertLessThanOrEqual(player.due().count, 14, "a subscriber far behind gets at most the last pass")
    }

    func testClosedLoopDoesNotRepeatItsStart() throws {
        let run = Scenarios.cityRun
        let t = try timeline(run, PlaybackOptions(step: .interval(60), loop: true))
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        _ = player.due()
        clock.advance(by: t.duration * 2)
        let fixes = player.due()
        for (x, y) in zip(fixes, fixes.dropFirst()) {
            XCTAssertGreaterThan(Spherical.distance(x.coordinate, y.coordinate), 1, "no repeated point at the wrap")
        }
    }

    func testReversePlaysBackwards() throws {
        let p = hourLegs()
        let t = try timeline(hourRoute(), hourOptions { $0.reverse = true })
        XCTAssertEqual(t.duration, 3_600, accuracy: 1e-6)
        assertNear(t.fix(at: 0, startTime: 0).coordinate, p[3])
        assertNear(t.fix(at: 3_600, startTime: 0).coordinate, p[0])
        assertNear(t.fix(at: 300, startTime: 0).coordinate, Spherical.intermediate(p[3], p[2], fraction: 0.5))
        XCTAssertEqual(t.fix(at: 300, startTime: 0).course, Spherical.initialBearing(p[3], p[2])!, accuracy: 1e-9)
        XCTAssertEqual(t.fix(at: 3_000, startTime: 0).course, Spherical.initialBearing(p[1], p[0])!, accuracy: 1e-9)
        for (k, fix) in t.fixes(startTime: 0).enumerated() where k % 100 == 0 {
            assertNear(fix.coordinate, expectedHourPosition(3_600 - Double(k)))
        }

        // GPX time spacing survives reversal: the 100 s leg stays 100 s.
        let a = origin, b = destination(origin, bearing: 0, distance: 50), c = destination(b, bearing: 0, distance: 500)
        let timed = try timeline(route([[wp(a, time: 0), wp(b, time: 100), wp(c)]]), PlaybackOptions(speed: 10, reverse: true))
        XCTAssertEqual(timed.duration, 50 + 100, accuracy: 1e-6)
        XCTAssertEqual(timed.fix(at: 120, startTime: 0).speed, 0.5, accuracy: 1e-9)
    }

    // MARK: Pause, resume, seek, rate

    func testPauseHoldsThePositionAndResumeContinues() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock(100)
        let player = Player(timeline: t, clock: clock, startTime: 0)
        clock.advance(by: 10)
        XCTAssertEqual(player.due().count, 11)
        player.pause()
        XCTAssertTrue(player.isPaused)
        let held = try XCTUnwrap(player.current())
        clock.advance(by: 500)
        XCTAssertEqual(player.routeTime, 10, accuracy: 1e-9, "the clock advanced, the route did not")
        let still = try XCTUnwrap(player.current())
        XCTAssertEqual(still.coordinate, held.coordinate)
        XCTAssertEqual(still.speed, 0, "standing still while paused")
        XCTAssertEqual(still.timestamp, 510, accuracy: 1e-9, "timestamps stay fresh")
        XCTAssertEqual(player.due(), [])

        player.resume()
        XCTAssertFalse(player.isPaused)
        clock.advance(by: 5)
        XCTAssertEqual(player.routeTime, 15, accuracy: 1e-9)
        assertNear(try XCTUnwrap(player.current()).coordinate, expectedHourPosition(15))
        let due = player.due()
        XCTAssertEqual(due.count, 5)
        XCTAssertEqual(due.last?.timestamp ?? 0, 515, accuracy: 1e-9)
    }

    func testFixesDueBeforeAPauseAreKept() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        clock.advance(by: 3)
        player.pause()
        clock.advance(by: 100)
        XCTAssertEqual(player.due().map(\.timestamp), [0, 1, 2, 3])
    }

    func testSeek() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        _ = player.due()
        player.seek(to: 1_800)
        XCTAssertEqual(player.routeTime, 1_800, accuracy: 1e-9)
        assertNear(try XCTUnwrap(player.current()).coordinate, expectedHourPosition(1_800))
        XCTAssertEqual(player.due().count, 1, "the fix where the seek lands")
        clock.advance(by: 2)
        let after = player.due()
        XCTAssertEqual(after.count, 2)
        assertNear(after[1].coordinate, expectedHourPosition(1_802))

        player.seek(to: -50)
        XCTAssertEqual(player.routeTime, 0)
        player.seek(to: 1e9)
        XCTAssertEqual(player.routeTime, 3_600, accuracy: 1e-6)
        XCTAssertFalse(player.isFinished, "the end fix has not been collected yet")
        XCTAssertEqual(player.due().count, 2, "the two seeks' landing fixes")
        XCTAssertTrue(player.isFinished)

        // Seeking while paused moves the position; time stays put.
        player.seek(to: 100)
        player.pause()
        player.seek(to: 200)
        clock.advance(by: 50)
        XCTAssertEqual(player.routeTime, 200, accuracy: 1e-9)
        assertNear(try XCTUnwrap(player.current()).coordinate, expectedHourPosition(200))
    }

    func testRateTimesTen() throws {
        let t = try timeline(hourRoute(), hourOptions { $0.rate = 10 })
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 1_000)
        clock.advance(by: 36)
        XCTAssertEqual(player.routeTime, 360, accuracy: 1e-9)
        let fix = try XCTUnwrap(player.current())
        assertNear(fix.coordinate, expectedHourPosition(360))
        XCTAssertEqual(fix.speed, 10, accuracy: 1e-9, "the simulated speed, not ten times it")
        XCTAssertEqual(fix.timestamp, 1_036, accuracy: 1e-9, "wall clock: 36 s after the start")
        XCTAssertEqual(try XCTUnwrap(fix.routeTime), 360, accuracy: 1e-9, "the simulated clock")
        let due = player.due()
        XCTAssertEqual(due.count, 361)
        XCTAssertEqual(due[10].timestamp, 1_001, accuracy: 1e-9, "ten route seconds every second of clock")
        XCTAssertEqual(try XCTUnwrap(due[10].routeTime), 10, accuracy: 1e-9)
        XCTAssertTrue(due.allSatisfy { abs($0.speed - 10) < 1e-9 }, "every fix reports the route's 10 m/s")
        // Between two fixes the position moves rate × speed × Δtimestamp, and speed × ΔrouteTime.
        let moved = Ellipsoidal.inverse(due[100].coordinate, due[200].coordinate).distance
        XCTAssertEqual(moved, 10 * (due[200].routeTime! - due[100].routeTime!), accuracy: 0.05)
        XCTAssertEqual(moved, 10 * 10 * (due[200].timestamp - due[100].timestamp), accuracy: 0.05)
        clock.advance(by: 324)
        XCTAssertEqual(player.routeTime, 3_600, accuracy: 1e-6)
        XCTAssertEqual(player.due().count, 3_240)
        XCTAssertTrue(player.isFinished)
    }

    /// Lengths and durations come from the ellipsoid: Land's End to John o'
    /// Groats is 969,954.166 m (Vincenty; GeographicLib agrees, see
    /// RouteConformanceTests), not the sphere's 968,876 m, and at 10 m/s
    /// takes a tenth of that in seconds.
    func testLengthsAndDurationsAreEllipsoidal() throws {
        let le = Coordinate(latitude: 50.06632, longitude: -5.71475), jog = Coordinate(latitude: 58.64402, longitude: -3.07009)
        XCTAssertEqual(Spherical.distance(le, jog), 968_876, accuracy: 1, "the sphere's figure, for contrast")
        let t = try timeline(route([[wp(le), wp(jog)]]), PlaybackOptions(speed: 10))
        XCTAssertEqual(t.length, 969_954.166, accuracy: 0.001)
        XCTAssertEqual(t.duration, 96_995.4166, accuracy: 0.0001)
        XCTAssertEqual(t.fix(at: 1_000, startTime: 0).speed, 10)
        // Distance stepping counts ellipsoidal metres: 10 km steps give 97 fixes and the end.
        let stepped = try timeline(route([[wp(le), wp(jog)]]), PlaybackOptions(speed: 10, step: .distance(10_000)))
        XCTAssertEqual(stepped.fixes(startTime: 0).count, 98)
        XCTAssertEqual(stepped.fixes(startTime: 0)[1].timestamp, 1_000, accuracy: 1e-6)
        // GPX times: the speed is the ellipsoidal length over the time taken.
        let timed = try timeline(route([[wp(le, time: 0), wp(jog, time: 48_497.7083)]]))
        XCTAssertEqual(timed.fix(at: 10, startTime: 0).speed, 20, accuracy: 1e-6)
        // Positions stay on the great circle: halfway in time is halfway along it.
        assertNear(t.fix(at: t.duration / 2, startTime: 0).coordinate, Spherical.intermediate(le, jog, fraction: 0.5), within: 1e-6)
    }

    func testWholeHourPlaysInWellUnderASecond() throws {
        let t = try timeline(hourRoute(), hourOptions())
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        let started = ContinuousClock.now
        var count = 0
        var ticks = 0
        while !player.isFinished {
            count += player.due().count
            clock.advance(by: 0.05)
            ticks += 1
            XCTAssertLessThan(ticks, 100_000)
        }
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(count, 3_601, "every fix, the final one included")
        XCTAssertLessThan(elapsed, .seconds(1), "an hour of route played in \(elapsed)")
    }

    func testDriveFromOneThreadWhileAnotherPausesAndSeeks() throws {
        let t = try timeline(hourRoute(), hourOptions { $0.loop = true })
        let clock = ManualClock()
        let player = Player(timeline: t, clock: clock, startTime: 0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<2_000 {
                switch worker {
                case 0: clock.advance(by: 0.7); _ = player.due()
                case 1: if i % 2 == 0 { player.pause() } else { player.resume() }
                case 2: if i % 50 == 0 { player.seek(to: Double(i)) }; _ = player.current()
                default: _ = (player.routeTime, player.isFinished, player.isPaused)
                }
            }
        }
        player.resume()
        let fix = try XCTUnwrap(player.current())
        XCTAssertTrue((0...3_600).contains(player.routeTime))
        XCTAssertTrue(fix.coordinate.latitude.isFinite && fix.coordinate.longitude.isFinite)
    }

    func testSystemClockIsMonotonic() {
        let clock = SystemClock()
        let a = clock.now(), b = clock.now()
        XCTAssertGreaterThanOrEqual(b, a)
        let manual = ManualClock(5)
        manual.advance(by: -3)
        manual.advance(by: .nan)
        XCTAssertEqual(manual.now(), 5)
    }

    // MARK: Errors

    func testRefusals() {
        let a = origin, b = destination(origin, bearing: 0, distance: 10)
        let good = route([[wp(a), wp(b)]])
        XCTAssertEqual(error(route([]))?.message.contains("no waypoints"), true)
        XCTAssertEqual(error(route([[], []]))?.message.contains("no waypoints"), true)
        for speed in [0, -1, Double.nan, .infinity] {
            XCTAssertEqual(error(good, PlaybackOptions(speed: speed))?.message.contains("speed"), true, "speed \(speed)")
        }
        for seconds in [0, -1, Double.nan] {
            XCTAssertEqual(error(good, PlaybackOptions(step: .interval(seconds)))?.message.contains("interval"), true)
        }
        for metres in [0, -5, Double.infinity] {
            XCTAssertEqual(error(good, PlaybackOptions(step: .distance(metres)))?.message.contains("distance"), true)
        }
        for rate in [0, -2, Double.nan] {
            XCTAssertEqual(error(good, PlaybackOptions(rate: rate))?.message.contains("rate"), true)
        }
        XCTAssertEqual(error(route([[wp(a), wp(b)]], suggestedSpeed: 0))?.message.contains("speed"), true)
        XCTAssertNil(error(route([[wp(a), wp(b)]], suggestedSpeed: 0), PlaybackOptions(speed: 4)), "the chosen speed overrides")
        XCTAssertEqual(error(good, PlaybackOptions(step: .interval(1e-7)))?.message.contains("larger step"), true)
        XCTAssertEqual(error(route([[wp(a), wp(Coordinate(latitude: .nan, longitude: 0))]]))?.message.contains("invalid coordinate"), true)
        XCTAssertNil(error(good))
    }

    // MARK: Scenarios

    func testScenarios() throws {
        XCTAssertEqual(Scenarios.all.map(\.name), ["city-run", "city-bicycle-ride", "freeway-drive"])
        let expected: [(String, Double, ClosedRange<Double>)] = [
            ("city-run", 3, 4_000...6_000), ("city-bicycle-ride", 7, 8_500...11_500), ("freeway-drive", 30, 35_000...45_000),
        ]
        for (name, speed, lengths) in expected {
            let r = try XCTUnwrap(Scenarios.named(name))
            XCTAssertEqual(r.kind, .scenario)
            XCTAssertEqual(r.suggestedSpeed, speed)
            XCTAssertTrue(r.points.allSatisfy { $0.time == nil }, name)
            XCTAssertTrue((20...40).contains(r.points.count), "\(name): \(r.points.count) waypoints")
            let t = try timeline(r)
            XCTAssertTrue(lengths.contains(t.length), "\(name): \(t.length) m")
            XCTAssertEqual(t.duration, t.length / speed, accuracy: 1e-6)
            for w in r.points {
                XCTAssertEqual(w.coordinate.latitude, 37.4, accuracy: 0.2, name)
                XCTAssertEqual(w.coordinate.longitude, -122.1, accuracy: 0.3, name)
            }
            for (x, y) in zip(r.points, r.points.dropFirst()) {
                XCTAssertLessThan(Spherical.distance(x.coordinate, y.coordinate), 2_500, "\(name): waypoints far apart")
            }
        }
        XCTAssertNil(Scenarios.named("moon-walk"))
    }
}
