// Loc: GPX parse throughput of the location library (GeoRoutes), against
// gpxpy (PyPI) on the same file in the same run, and interpolated fixes per
// second of route playback.
//
// - A GPX 1.1 file is generated the same way every run (a seeded
//   generator): metadata, a few named <wpt>, then four tracks (a ride, a
//   run, a hike, a commute; more sets of four for --points above 240,000)
//   of 2-3 segments each, 200,000 track points in all by default, each with
//   lat/lon (7 decimals), <ele> and <time> (ISO 8601 with Z, 1 s apart
//   within a segment; a pause between segments). The ride carries Garmin
//   TrackPointExtension <gpxtpx:hr>/<gpxtpx:cad> on every point, the run
//   and the commute on some; there are stops (repeated positions). It is written,
//   indented as devices export it, to a temporary directory.
// - Ours: RouteFormats.readGPX of the bytes already in memory, the median
//   of `rounds` rounds; for information, the same with the file read first
//   (once: a round takes seconds). Counts of tracks, segments, points,
//   times and elevations are checked against what was generated.
// - Theirs: scripts/bench-loc-baseline.py reads the file into memory once
//   and times gpxpy.parse(text), the median of as many rounds: the same
//   statistic of the same number of rounds on both sides (a round of
//   gpxpy takes about 15 s here, so the part takes about a minute); its
//   counts must equal ours.
// - Playback: a Timeline (PlaybackOptions step .interval(0.1)) of the
//   longest track as read (64,000 points, 17.8 h of route time by default),
//   and Timeline.fixes(startTime:), the median of the rounds; the pass must
//   give about duration / 0.1 fixes and end at the end of the route.
import GeoRoutes
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

struct LocFigures: Sendable {
    /// What was generated.
    var fileBytes: Int
    var tracks: Int
    var segments: Int
    var points: Int
    var pointsWithExtensions: Int
    var stops: Int
    var waypoints: Int
    /// Track points of each track, in order.
    var perTrack: [Int]
    var rounds: Int
    var fileRounds: Int

    /// Median round of RouteFormats.readGPX from bytes in memory.
    var parseNanoseconds: UInt64
    /// One round (or the median of `fileRounds`) of reading the file, then RouteFormats.readGPX.
    var fileParseNanoseconds: UInt64
    /// The reader's notes (there should be none for this file).
    var notes: [String]

    /// gpxpy's figures; nil when it could not run (see baselineError).
    var baseline: LocBaselineFigures?
    var baselineError: String?

    var playback: PlaybackFigures?
    var playbackError: String?

    var pointRate: Double { Double(points) * 1e9 / Double(max(parseNanoseconds, 1)) }
    var megabytesPerSecond: Double { Double(fileBytes) * 1e3 / Double(max(parseNanoseconds, 1)) }
    var filePointRate: Double { Double(points) * 1e9 / Double(max(fileParseNanoseconds, 1)) }
    var fileMegabytesPerSecond: Double { Double(fileBytes) * 1e3 / Double(max(fileParseNanoseconds, 1)) }
    /// Our rate over gpxpy's: higher is better; nil without a baseline.
    var ratio: Double? { baseline.map { pointRate / max($0.pointRate, 1e-9) } }

    /// What gpxpy counted differently from us, if anything.
    var countMismatch: String? {
        guard let b = baseline else { return nil }
        var differences: [String] = []
        func compare(_ what: String, _ theirs: Int, _ ours: Int) {
            if theirs != ours { differences.append("\(what) \(theirs) (ours \(ours))") }
        }
        compare("tracks", b.tracks, tracks)
        compare("segments", b.segments, segments)
        compare("track points", b.points, points)
        compare("points with a time", b.pointsWithTime, points)
        compare("points with an elevation", b.pointsWithElevation, points)
        compare("waypoints", b.waypoints, waypoints)
        if differences.isEmpty, b.pointsPerTrack != perTrack { differences.append("points per track \(b.pointsPerTrack) (ours \(perTrack))") }
        return differences.isEmpty ? nil : "gpxpy counted " + differences.joined(separator: ", ")
    }

    var errors: [(part: String, message: String)] {
        [("gpxpy", baselineError), ("counts", countMismatch), ("playback", playbackError)].compactMap { part, message in
            message.map { (part, $0) }
        }
    }

    /// Both parsers ran over the same file and counted the same points, and
    /// playback gave the expected number of fixes (there is no numeric target).
    var passed: Bool { errors.isEmpty && baseline != nil && playback != nil }
}

struct LocBaselineFigures: Sendable {
    var rounds: Int
    /// Median of gpxpy's rounds, as of ours.
    var medianSeconds: Double
    var bytes: Int
    var tracks: Int
    var segments: Int
    var points: Int
    var pointsPerTrack: [Int]
    var pointsWithTime: Int
    var pointsWithElevation: Int
    var waypoints: Int
    var python: String
    var version: String
    /// The command run, for the report.
    var command: String

    var pointRate: Double { Double(points) / max(medianSeconds, 1e-12) }
    var megabytesPerSecond: Double { Double(bytes) / 1e6 / max(medianSeconds, 1e-12) }
}

struct PlaybackFigures: Sendable {
    var interval: Double
    /// The track played (the longest) and its points.
    var track: String
    var points: Int
    var rounds: Int
    /// Route seconds of one pass.
    var duration: Double
    var fixes: Int
    /// Median round of Timeline.fixes(startTime:).
    var nanoseconds: UInt64
    /// Median round of Timeline(route:options:).
    var buildNanoseconds: UInt64

    var rate: Double { Double(fixes) * 1e9 / Double(max(nanoseconds, 1)) }
    var nanosecondsPerFix: Double { Double(nanoseconds) / Double(max(fixes, 1)) }
}

enum LocBench {
    /// Rounds of each side's parse (ours and gpxpy's), of which the median
    /// is compared: odd, so that the median is a round that ran.
    static let rounds = 3
    /// Reading the file, then parsing: information only, and a round of
    /// 200,000 points takes a second or two.
    static let fileRounds = 1
    static let interval = 0.1
    static let install = "bash scripts/deps installs it into .build/consumers (or: pip install gpxpy)"
    /// Most points a track gets, so that one pass at `interval` stays below
    /// Timeline.maximumFixesPerPass.
    static let pointsPerSet = 240_000

    static func run(points count: Int) throws(BenchError) -> LocFigures {
        let generated = LocCorpus.gpx(points: count)
        let bytes = generated.bytes
        let directory = try TemporaryDirectory(prefix: "pincer-bench-loc")
        defer { directory.remove() }
        let path = "\(directory.path)/bench.gpx"
        try writeFile(path, bytes)

        // Ours: from memory, the median of the rounds; then (information)
        // reading the file first, once.
        var times: [UInt64] = []
        var parsed: (routes: [Route], notes: [String]) = ([], [])
        for _ in 0..<rounds {
            parsed = ([], [])
            let start = monotonicNanoseconds()
            parsed = try parse(bytes)
            times.append(monotonicNanoseconds() - start)
            try check(parsed.routes, against: generated)
        }
        parsed = ([], [])
        var fileTimes: [UInt64] = []
        for _ in 0..<fileRounds {
            parsed = ([], [])
            let start = monotonicNanoseconds()
            let read = try readFileBytes(path)
            parsed = try parse(read)
            fileTimes.append(monotonicNanoseconds() - start)
        }
        try check(parsed.routes, against: generated)

        var figures = LocFigures(fileBytes: bytes.count, tracks: generated.tracks.count,
                                 segments: generated.tracks.reduce(0) { $0 + $1.segments.count },
                                 points: generated.points, pointsWithExtensions: generated.pointsWithExtensions,
                                 stops: generated.stops, waypoints: generated.waypoints,
                                 perTrack: generated.tracks.map { $0.segments.reduce(0, +) }, rounds: rounds, fileRounds: fileRounds,
                                 parseNanoseconds: median(times), fileParseNanoseconds: median(fileTimes), notes: parsed.notes)
        // Playback of the longest track as read (the rate hardly depends on which).
        let longest = parsed.routes.filter { $0.kind == .track }.max { $0.points.count < $1.points.count }
        parsed = ([], [])
        do { figures.baseline = try baseline(path: path, bytes: bytes.count) } catch { figures.baselineError = error.message }
        do throws(BenchError) {
            guard let longest else { throw BenchError("no track to play") }
            figures.playback = try playback(longest, generated: generated)
        } catch { figures.playbackError = error.message }
        return figures
    }

    /// The middle value (the mean of the two middle ones for an even count),
    /// as Python's statistics.median takes it.
    static func median(_ values: [UInt64]) -> UInt64 {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    @inline(never)
    static func parse(_ bytes: [UInt8]) throws(BenchError) -> (routes: [Route], notes: [String]) {
        do { return try RouteFormats.readGPX(bytes) } catch {
            throw BenchError("RouteFormats.readGPX of the generated file: \(error)")
        }
    }

    /// The routes read are the tracks generated, point for point in number,
    /// every point with a time and an elevation, times 1 s apart, and the
    /// waypoints.
    static func check(_ routes: [Route], against generated: GeneratedGPX) throws(BenchError) {
        let tracks = routes.filter { $0.kind == .track }
        guard tracks.count == generated.tracks.count else {
            throw BenchError("readGPX gave \(tracks.count) tracks, \(generated.tracks.count) were generated")
        }
        for (t, (route, expected)) in zip(tracks, generated.tracks).enumerated() {
            let counts = route.segments.map(\.count)
            guard route.name == expected.name, counts == expected.segments else {
                throw BenchError("track \(t + 1) read as '\(route.name)' with segments of \(counts) points; generated '\(expected.name)' with \(expected.segments)")
            }
            for segment in route.segments {
                guard let first = segment.first?.time, let last = segment.last?.time,
                      last - first == Double(segment.count - 1),
                      segment.allSatisfy({ $0.time != nil && $0.altitude != nil }) else {
                    throw BenchError("a segment of track '\(route.name)' lacks times or elevations, or its times are not 1 s apart")
                }
            }
        }
        let waypoints = routes.filter { $0.kind == .waypoints }.reduce(0) { $0 + $1.points.count }
        guard waypoints == generated.waypoints else {
            throw BenchError("readGPX gave \(waypoints) waypoints, \(generated.waypoints) were generated")
        }
    }

    // MARK: the baseline

    static func baseline(path: String, bytes: Int) throws(BenchError) -> LocBaselineFigures {
        let arguments = [path, "--rounds", String(rounds)]
        let (parsed, command) = try PythonBaseline.run("bench-loc-baseline.py", arguments: arguments,
                                                       shown: [path: "<bench.gpx>"], library: "gpxpy", install: install)
        func int(_ key: String) -> Int? { parsed[key]?.int64Value.map { Int($0) } }
        guard let size = int("bytes"), let seconds = parsed["median_seconds"]?.doubleValue, seconds > 0,
              let points = int("points"), let tracks = int("tracks"), let segments = int("segments"),
              let perTrack = parsed["points_per_track"]?.arrayValue?.compactMap({ $0.int64Value.map { Int($0) } }),
              let withTime = int("points_with_time"), let withElevation = int("points_with_elevation"),
              let waypoints = int("waypoints") else {
            throw BenchError("`\(command)` printed \(parsed.serialized(pretty: false).prefix(300)), not bytes, median_seconds and the counts")
        }
        guard size == bytes else {
            throw BenchError("`\(command)` read \(size) bytes of the \(bytes)-byte file")
        }
        guard int("rounds") == rounds else {
            throw BenchError("`\(command)` ran \(int("rounds") ?? 0) rounds, not \(rounds)")
        }
        return LocBaselineFigures(rounds: rounds, medianSeconds: seconds, bytes: size, tracks: tracks, segments: segments, points: points,
                                  pointsPerTrack: perTrack, pointsWithTime: withTime, pointsWithElevation: withElevation,
                                  waypoints: waypoints, python: parsed["python"]?.stringValue ?? "?",
                                  version: parsed["gpxpy"]?.stringValue ?? "?", command: command)
    }

    // MARK: playback

    static func playback(_ route: Route, generated: GeneratedGPX) throws(BenchError) -> PlaybackFigures {
        let options = PlaybackOptions(step: .interval(interval))
        guard let track = generated.tracks.first(where: { $0.name == route.name }) else {
            throw BenchError("track '\(route.name)' was not generated")
        }
        var times: [UInt64] = [], buildTimes: [UInt64] = []
        var timeline: Timeline?
        var count = 0
        for _ in 0..<rounds {
            timeline = nil
            let start = monotonicNanoseconds()
            do { timeline = try Timeline(route: route, options: options) } catch {
                throw BenchError("Timeline of track '\(route.name)': \(error)")
            }
            buildTimes.append(monotonicNanoseconds() - start)
            guard let timeline else { continue }

            let (nanoseconds, fixes) = play(timeline, startTime: track.start)
            times.append(nanoseconds)
            count = fixes
            // About duration / interval fixes a pass (the start, every step, the end).
            let expected = timeline.duration / interval + 1
            guard abs(Double(count) - expected) <= 1.5 else {
                throw BenchError("track '\(route.name)' of \(Format.fixed(timeline.duration, 1)) s gave \(count < 0 ? "fixes not ending at its end" : "\(count) fixes") at \(interval) s, expected about \(Format.fixed(expected, 0))")
            }
        }
        guard let timeline else { throw BenchError("no playback round ran") }
        // Route time is the track's recorded time: 1 s a leg, no time across the pauses.
        let expectedDuration = Double(track.segments.reduce(0) { $0 + $1 - 1 })
        guard abs(timeline.duration - expectedDuration) < 1e-6 * expectedDuration else {
            throw BenchError("the timeline of '\(route.name)' lasts \(Format.fixed(timeline.duration, 3)) s, its times \(Format.fixed(expectedDuration, 0)) s")
        }
        return PlaybackFigures(interval: interval, track: route.name, points: route.points.count, rounds: rounds,
                               duration: timeline.duration, fixes: count, nanoseconds: median(times), buildNanoseconds: median(buildTimes))
    }

    /// One pass of Timeline.fixes: its time and number of fixes (-1 when the
    /// last one is not at the end of the route).
    @inline(never)
    static func play(_ timeline: Timeline, startTime: Double) -> (UInt64, Int) {
        let start = monotonicNanoseconds()
        let fixes = timeline.fixes(startTime: startTime)
        let elapsed = monotonicNanoseconds() - start
        let endsRight = fixes.last.map { abs($0.timestamp - (startTime + timeline.duration)) < 1e-6 } ?? false
        return (elapsed, endsRight ? fixes.count : -1)
    }
}

// MARK: - the GPX file

struct GeneratedGPX: Sendable {
    struct Track: Sendable {
        var name: String
        /// Points per segment.
        var segments: [Int]
        /// Time of the first point, seconds since 1970.
        var start: Double
    }

    var bytes: [UInt8]
    var tracks: [Track]
    var points: Int
    var pointsWithExtensions: Int
    var stops: Int
    var waypoints: Int
}

/// A realistic GPX 1.1 file, the same every run (a seeded generator).
enum LocCorpus {
    struct Activity {
        var name: String
        var type: String
        /// Share of the points.
        var share: Double
        var segments: Int
        /// Metres per second: typical and spread.
        var speed: Double
        var speedSpread: Double
        /// Percent of the points with hr/cad extensions.
        var extensions: Int
        var cadence: ClosedRange<Int>
        var origin: (latitude: Double, longitude: Double, elevation: Double)
        /// Metres of climb per metre, at most.
        var grade: Double
    }

    static let activities: [Activity] = [
        Activity(name: "Morning ride", type: "cycling", share: 0.32, segments: 2, speed: 7.5, speedSpread: 2.5, extensions: 100,
                 cadence: 70...98, origin: (47.376_887, 8.541_694, 408), grade: 0.04),
        Activity(name: "Lunch run", type: "running", share: 0.205, segments: 3, speed: 3.1, speedSpread: 0.5, extensions: 40,
                 cadence: 80...92, origin: (47.366_512, 8.545_030, 406), grade: 0.03),
        Activity(name: "Hike to the Faulhorn", type: "hiking", share: 0.285, segments: 2, speed: 1.15, speedSpread: 0.4, extensions: 0,
                 cadence: 0...0, origin: (46.648_210, 8.035_401, 1_034), grade: 0.18),
        Activity(name: "Commute & errands", type: "cycling", share: 0.19, segments: 3, speed: 5.0, speedSpread: 2.0, extensions: 20,
                 cadence: 60...90, origin: (47.391_054, 8.513_387, 428), grade: 0.03),
    ]

    static let places: [(name: String, latitude: Double, longitude: Double, elevation: Double, symbol: String)] = [
        ("Start: Bahnhofstrasse", 47.376_887, 8.539_694, 408.0, "Flag, Green"),
        ("Water fountain", 47.369_011, 8.547_522, 410.5, "Drinking Water"),
        ("Bäckerei & Café \"Sonne\"", 47.372_355, 8.534_911, 411.0, "Restaurant"),
        ("Bike shop", 47.388_402, 8.520_018, 425.2, "Shopping Center"),
        ("Faulhorn summit", 46.675_103, 8.016_845, 2_681.0, "Summit"),
        ("Lookout <Bachalpsee>", 46.669_700, 8.023_100, 2_265.0, "Scenic Area"),
    ]

    static let namespace = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"

    static func gpx(points total: Int) -> GeneratedGPX {
        var g = SplitMix64(seed: 0x6E0_2011)
        var out = ""
        out.reserveCapacity(total * 280 + 4096)
        let firstStart = 1_716_010_937.0  // 2024-05-18T05:42:17Z
        out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
        out += "<gpx version=\"1.1\" creator=\"pincer-bench (loc part)\" xmlns=\"http://www.topografix.com/GPX/1/1\""
        out += " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:gpxtpx=\"\(namespace)\""
        out += " xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd"
        out += " \(namespace) http://www8.garmin.com/xmlschemas/TrackPointExtensionv1.xsd\">\n"
        out += "  <metadata>\n    <name>pincer-bench activities</name>\n"
        out += "    <desc>Generated by pincer-bench: rides, runs, a hike; 1 s recording.</desc>\n"
        out += "    <link href=\"https://example.com/pincer\">\n      <text>Pincer</text>\n    </link>\n"
        out += "    <time>\(ISOTime.format(firstStart))</time>\n  </metadata>\n"
        for p in places {
            out += "  <wpt lat=\"\(Format.fixed(p.latitude, 7))\" lon=\"\(Format.fixed(p.longitude, 7))\">\n"
            out += "    <ele>\(Format.fixed(p.elevation, 1))</ele>\n"
            out += "    <name>\(escaped(p.name))</name>\n    <sym>\(p.symbol)</sym>\n  </wpt>\n"
        }

        // Sets of the four activities, so that no track is longer than
        // Timeline.maximumFixesPerPass allows at the playback interval.
        let sets = max(1, (total + LocBench.pointsPerSet - 1) / LocBench.pointsPerSet)
        var plan: [(activity: Activity, name: String, points: Int)] = []
        for s in 0..<sets {
            for a in activities {
                plan.append((a, sets == 1 ? a.name : "\(a.name) \(s + 1)", Int((Double(total) * a.share / Double(sets)).rounded(.down))))
            }
        }
        plan[0].points += total - plan.reduce(0) { $0 + $1.points }

        var tracks: [GeneratedGPX.Track] = []
        var withExtensions = 0, stops = 0
        var clock = firstStart
        for item in plan {
            let a = item.activity
            // Segment sizes around equal shares, at least two points each.
            var sizes: [Int] = []
            var left = item.points
            for k in 0..<a.segments {
                let remaining = a.segments - k
                if remaining == 1 { sizes.append(left); break }
                let even = left / remaining
                let size = max(2, even - even / 5 + g.below(max(1, even * 2 / 5)))
                sizes.append(size)
                left -= size
            }
            tracks.append(.init(name: item.name, segments: sizes, start: clock))

            out += "  <trk>\n    <name>\(escaped(item.name))</name>\n    <type>\(a.type)</type>\n"
            var latitude = a.origin.latitude + Double(g.below(2000)) * 1e-6
            var longitude = a.origin.longitude + Double(g.below(2000)) * 1e-6
            var elevation = a.origin.elevation
            var heading = Double(g.below(360))
            var speed = a.speed
            var heartRate = 95.0
            var stopLeft = 0
            for size in sizes {
                out += "    <trkseg>\n"
                for _ in 0..<size {
                    out += "      <trkpt lat=\"\(Format.fixed(latitude, 7))\" lon=\"\(Format.fixed(longitude, 7))\">\n"
                    out += "        <ele>\(Format.fixed(elevation, 1))</ele>\n"
                    out += "        <time>\(ISOTime.format(clock))</time>\n"
                    if a.extensions > 0 && (a.extensions == 100 || g.chance(a.extensions)) {
                        withExtensions += 1
                        let cadence = stopLeft > 0 ? 0 : a.cadence.lowerBound + g.below(a.cadence.count)
                        out += "        <extensions>\n          <gpxtpx:TrackPointExtension>\n"
                        out += "            <gpxtpx:hr>\(Int(heartRate.rounded()))</gpxtpx:hr>\n"
                        out += "            <gpxtpx:cad>\(cadence)</gpxtpx:cad>\n"
                        out += "          </gpxtpx:TrackPointExtension>\n        </extensions>\n"
                    }
                    out += "      </trkpt>\n"

                    // The next second: a stop now and then (traffic lights,
                    // a view), else a step along a slowly turning heading.
                    clock += 1
                    if stopLeft > 0 {
                        stopLeft -= 1
                        heartRate += (90 - heartRate) * 0.05
                        continue
                    }
                    if g.below(1000) < 2 {
                        stopLeft = 5 + g.below(40)
                        stops += 1
                    }
                    heading += (g.unit() - 0.5) * 12
                    if g.below(500) == 0 { heading += Double(g.below(181)) - 90 }
                    speed += (a.speed - speed) * 0.05 + (g.unit() - 0.5) * a.speedSpread * 0.3
                    speed = min(max(speed, a.speed * 0.2), a.speed + 2 * a.speedSpread)
                    let radians = heading * .pi / 180
                    latitude += speed * cos(radians) / 111_320
                    longitude += speed * sin(radians) / (111_320 * cos(latitude * .pi / 180))
                    elevation += speed * a.grade * sin(Double(Int(clock) % 3600) * .pi / 1800) + (g.unit() - 0.5) * 0.2
                    heartRate += (110 + speed * 9 - heartRate) * 0.02 + (g.unit() - 0.5) * 2
                    heartRate = min(max(heartRate, 60), 195)
                }
                out += "    </trkseg>\n"
                // A pause before the next segment.
                clock += Double(180 + g.below(1200))
            }
            out += "  </trk>\n"
            // Hours until the next activity.
            clock += Double(3600 * (2 + g.below(6)))
        }
        out += "</gpx>\n"
        return GeneratedGPX(bytes: Array(out.utf8), tracks: tracks, points: total, pointsWithExtensions: withExtensions,
                            stops: stops, waypoints: places.count)
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

extension SplitMix64 {
    /// Uniform in 0..<1.
    fileprivate mutating func unit() -> Double { Double(next() >> 11) / 9_007_199_254_740_992 }
}
