#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// How a route is played: the counterpart of `xcrun simctl location start`'s
/// `--speed`, `--interval` and `--distance`, plus looping, reversing and a
/// playback rate.
public struct PlaybackOptions: Sendable, Equatable {
    /// Metres per second for legs whose speed the route does not give
    /// (neither GPX times nor recorded speeds). nil: the route's suggested
    /// speed, else 20 m/s (simctl's default).
    public var speed: Double? = nil
    /// How often a fix is produced.
    public enum Step: Sendable, Equatable {
        /// Every so many route seconds (simctl `--interval`).
        case interval(Double)
        /// Every so many metres along the route (simctl `--distance`).
        case distance(Double)
    }
    public var step: Step = .interval(1)
    /// Start again from the beginning after the end.
    public var loop = false
    /// Play the route from its last point to its first.
    public var reverse = false
    /// Playback speed multiplier (×N): route time passes N times faster than the clock.
    public var rate = 1.0

    public init(speed: Double? = nil, step: Step = .interval(1), loop: Bool = false, reverse: Bool = false, rate: Double = 1) {
        self.speed = speed
        self.step = step
        self.loop = loop
        self.reverse = reverse
        self.rate = rate
    }
}

/// A route prepared for playback: per-leg distances, durations and courses.
///
/// Distances (and so lengths, and the durations and speeds derived from
/// them) are geodesic lengths on the WGS-84 ellipsoid (`Ellipsoidal`,
/// Vincenty): what a device would measure. Positions between waypoints are
/// interpolated along the great circle (`Spherical.intermediate`), at the
/// fraction of the leg's ellipsoidal length covered. On the legs of a
/// recorded track the two agree to a millimetre (2 km leg) or a centimetre
/// (7 km); on a single 970 km leg (Land's End to John o' Groats) the
/// interpolated position strays up to 175 m from the geodesic's, on New
/// York to Paris up to 2.6 km (GeographicLib, at 5% steps). A course is the
/// great circle's initial bearing: the direction the interpolated position
/// moves in.
///
/// Route time runs from 0 to `duration`. Each segment of the route is a run
/// of legs between consecutive waypoints; between segments the position
/// jumps, taking no time. A leg's speed comes from its GPX times when both
/// ends have one (a zero-length leg with times is a stop), else from the
/// waypoints' recorded speeds, else from `options.speed`, the route's
/// suggested speed, or 20 m/s.
public struct Timeline: Sendable {
    /// One leg (or a single-point segment: `from == to`, no duration);
    /// `distance` is its length on the ellipsoid.
    struct Leg: Sendable {
        var from: Coordinate
        var to: Coordinate
        var fromAltitude: Double?
        var toAltitude: Double?
        var distance: Double
        var duration: Double
        var speed: Double
        var course = 0.0
        var startTime = 0.0
        var startDistance = 0.0
        var endTime: Double { startTime + duration }
        var endDistance: Double { startDistance + distance }
    }

    /// The most fixes one pass may produce: a guard against a step so small
    /// that `fixes` would exhaust memory.
    public static let maximumFixesPerPass = 1_000_000

    public let route: Route
    public let options: PlaybackOptions
    let legs: [Leg]
    /// Route seconds for one pass.
    public let duration: Double
    /// Metres along the route on the WGS-84 ellipsoid (gaps between segments count nothing).
    public let length: Double
    /// Samples in one pass are indices 0...lastSample; the last one is the end of the route.
    let lastSample: Int

    public init(route: Route, options: PlaybackOptions) throws(LocationError) {
        if let speed = options.speed, !(speed.isFinite && speed > 0) {
            throw LocationError("speed must be a positive number of metres per second, not \(speed)")
        }
        if options.speed == nil, let speed = route.suggestedSpeed, !(speed.isFinite && speed > 0) {
            throw LocationError("route '\(route.name)' suggests a speed of \(speed) m/s; it must be positive")
        }
        switch options.step {
        case .interval(let seconds):
            guard seconds.isFinite, seconds > 0 else { throw LocationError("interval must be a positive number of seconds, not \(seconds)") }
        case .distance(let metres):
            guard metres.isFinite, metres > 0 else { throw LocationError("distance must be a positive number of metres, not \(metres)") }
        }
        guard options.rate.isFinite, options.rate > 0 else {
            throw LocationError("rate must be a positive multiplier, not \(options.rate)")
        }
        let fallback = options.speed ?? route.suggestedSpeed ?? 20

        var legs: [Leg] = []
        for (s, segment) in route.segments.enumerated() {
            for (i, point) in segment.enumerated() {
                let c = point.coordinate
                guard c.latitude.isFinite, c.longitude.isFinite, abs(c.latitude) <= 90, abs(c.longitude) <= 180 else {
                    throw LocationError("waypoint \(i + 1) of segment \(s + 1) of route '\(route.name)' has an invalid coordinate (\(c))")
                }
            }
            if segment.count == 1 {
                let p = segment[0]
                legs.append(Leg(from: p.coordinate, to: p.coordinate, fromAltitude: p.altitude, toAltitude: p.altitude,
                                distance: 0, duration: 0, speed: 0))
                continue
            }
            for (a, b) in zip(segment, segment.dropFirst()) {
                let distance = Ellipsoidal.inverse(a.coordinate, b.coordinate).distance
                var speed: Double, duration: Double
                if let ta = a.time, let tb = b.time, ta.isFinite, tb.isFinite, tb - ta > 0 {
                    duration = tb - ta
                    speed = distance / duration
                } else {
                    speed = Timeline.recordedSpeed(a, b) ?? fallback
                    duration = distance / speed
                }
                legs.append(Leg(from: a.coordinate, to: b.coordinate, fromAltitude: a.altitude, toAltitude: b.altitude,
                                distance: distance, duration: duration, speed: speed))
            }
        }
        guard !legs.isEmpty else { throw LocationError("route '\(route.name)' has no waypoints to play") }

        if options.reverse {
            legs = legs.reversed().map { leg in
                var r = leg
                swap(&r.from, &r.to)
                swap(&r.fromAltitude, &r.toAltitude)
                return r
            }
        }

        // Courses: a zero-length leg keeps the previous leg's course (or, at
        // the start, the first real one); start times and distances.
        var previous: Double?
        var time = 0.0, along = 0.0
        for i in legs.indices {
            if let bearing = Spherical.initialBearing(legs[i].from, legs[i].to) { previous = bearing }
            legs[i].course = previous ?? 0
            legs[i].startTime = time
            legs[i].startDistance = along
            time += legs[i].duration
            along += legs[i].distance
        }
        if let first = legs.firstIndex(where: { Spherical.initialBearing($0.from, $0.to) != nil }) {
            for i in 0..<first { legs[i].course = legs[first].course }
        }
        guard time.isFinite else { throw LocationError("route '\(route.name)' would take forever to play: a leg's speed is too low") }

        self.route = route
        self.options = options
        self.legs = legs
        self.duration = time
        self.length = along

        let steps: Double
        switch options.step {
        case .interval(let seconds):
            let span = time - Timeline.epsilon(time)
            steps = span > 0 ? (span / seconds).rounded(.up) : 0
        case .distance(let metres):
            let span = along - Timeline.epsilon(along)
            steps = span > 0 ? (span / metres).rounded(.up) : (time > 0 ? 1 : 0)
        }
        guard steps < Double(Timeline.maximumFixesPerPass) else {
            let what: String
            switch options.step {
            case .interval(let s): what = "an interval of \(s) s"
            case .distance(let m): what = "a distance of \(m) m"
            }
            throw LocationError("\(what) gives more than \(Timeline.maximumFixesPerPass) fixes for one pass of route '\(route.name)'; choose a larger step")
        }
        lastSample = Int(steps)
    }

    /// Average of the recorded speeds present at either end, when positive.
    static func recordedSpeed(_ a: Waypoint, _ b: Waypoint) -> Double? {
        let speeds = [a.speed, b.speed].compactMap { $0 }.filter { $0.isFinite && $0 >= 0 }
        guard !speeds.isEmpty else { return nil }
        let average = speeds.reduce(0, +) / Double(speeds.count)
        return average > 0 ? average : nil
    }

    static func epsilon(_ x: Double) -> Double { 1e-9 * max(1, abs(x)) }

    /// The leg playing at route time `t`: the last leg starting at or before
    /// `t` (so at a gap or after a zero-duration leg the later leg wins), and
    /// the fraction of it done.
    func locate(time t: Double) -> (leg: Int, fraction: Double) {
        var lo = 0, hi = legs.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if legs[mid].startTime <= t { lo = mid } else { hi = mid - 1 }
        }
        let leg = legs[lo]
        let f = leg.duration > 0 ? (t - leg.startTime) / leg.duration : 1
        return (lo, min(max(f, 0), 1))
    }

    /// The first moment the route has covered `s` metres (arrival: before
    /// any stop there).
    func locate(distance s: Double) -> (leg: Int, fraction: Double) {
        guard s > 0 else { return locate(time: 0) }
        var lo = 0, hi = legs.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if legs[mid].endDistance >= s { hi = mid } else { lo = mid + 1 }
        }
        let leg = legs[lo]
        let f = leg.distance > 0 ? (s - leg.startDistance) / leg.distance : 1
        return (lo, min(max(f, 0), 1))
    }

    /// Sample `k` (0...lastSample) of one pass: its route time, leg and fraction.
    func sample(_ k: Int) -> (time: Double, leg: Int, fraction: Double) {
        if k >= lastSample { return (duration, legs.count - 1, 1) }
        switch options.step {
        case .interval(let seconds):
            let t = Double(k) * seconds
            let (leg, f) = locate(time: t)
            return (t, leg, f)
        case .distance(let metres):
            let (leg, f) = locate(distance: Double(k) * metres)
            return (legs[leg].startTime + f * legs[leg].duration, leg, f)
        }
    }

    /// The first sample strictly after route time `t` (lastSample + 1 when none).
    func firstSample(after t: Double) -> Int {
        var lo = 0, hi = lastSample + 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if sample(mid).time > t { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    func fix(leg index: Int, fraction f: Double, routeTime: Double, timestamp: Double) -> Fix {
        let leg = legs[index]
        let altitude: Double?
        switch (leg.fromAltitude, leg.toAltitude) {
        case let (a?, b?): altitude = a + (b - a) * f
        case let (a?, nil): altitude = f <= 0 ? a : nil
        case let (nil, b?): altitude = f >= 1 ? b : nil
        case (nil, nil): altitude = nil
        }
        return Fix(coordinate: Spherical.intermediate(leg.from, leg.to, fraction: f), altitude: altitude,
                   course: leg.course, speed: leg.speed, timestamp: timestamp, routeTime: routeTime)
    }

    /// The fix at route time t (0...duration): great-circle interpolation
    /// within a leg; at a gap between segments the position jumps (no
    /// interpolation across it); course kept from the previous leg on
    /// zero-length legs; speed of the leg; altitude interpolated linearly
    /// when both ends have one. Timestamp: `startTime + t`; route time `t`.
    public func fix(at t: Double, startTime: Double) -> Fix {
        let t = t.isNaN ? 0 : min(max(t, 0), duration)
        if t >= duration { return fix(leg: legs.count - 1, fraction: 1, routeTime: duration, timestamp: startTime + duration) }
        let (leg, f) = locate(time: t)
        return fix(leg: leg, fraction: f, routeTime: t, timestamp: startTime + t)
    }

    /// Every fix of one pass with the configured step (interval: every
    /// `interval` route-seconds plus the final point; distance: every
    /// `distance` metres along the route plus the final point). Timestamps
    /// are `startTime` + route time.
    public func fixes(startTime: Double) -> [Fix] {
        (0...lastSample).map { k in
            let (t, leg, f) = sample(k)
            return fix(leg: leg, fraction: f, routeTime: t, timestamp: startTime + t)
        }
    }
}

/// A monotonic source of seconds that drives a `Player`.
public protocol PlaybackClock: Sendable {
    /// Seconds, monotonic; the origin is arbitrary.
    func now() -> Double
}

/// CLOCK_MONOTONIC.
public struct SystemClock: PlaybackClock {
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// A clock that moves only when told: tests play a one-hour route in milliseconds.
public final class ManualClock: PlaybackClock, Sendable {
    private let seconds: Mutex<Double>

    public init(_ start: Double = 0) { seconds = Mutex(start) }

    /// Moves the clock forward; negative or non-finite amounts are ignored (the clock is monotonic).
    public func advance(by delta: Double) {
        guard delta.isFinite, delta > 0 else { return }
        seconds.withLock { $0 += delta }
    }

    public func now() -> Double { seconds.withLock { $0 } }
}

/// Drives a Timeline against a clock: pause, resume, seek, loop, rate.
///
/// Playback time advances `rate` times as fast as the clock while playing.
/// A fix's speed is the simulated speed: the leg's speed on the route,
/// whatever the rate (0 while paused). Its timestamp is wall-clock time:
/// `startTime` plus the clock seconds elapsed since the player was made, so
/// that an app, which drops fixes that are old or in the future, takes every
/// one: fresh after a pause, never ahead of the device's clock at rates
/// above 1. At rate N the position therefore moves N times as far between
/// two timestamps as `speed` says; `routeTime` is the simulated clock
/// (seconds into the route). Thread-safe: a timer thread may call `due()`
/// while commands pause or seek.
public final class Player: Sendable {
    public let timeline: Timeline
    private let clock: any PlaybackClock
    private let startTime: Double
    private let clockStart: Double
    /// The end of a pass equals its start, so a loop does not repeat the point.
    private let closed: Bool

    private struct State {
        /// Playback time (route seconds since the start, across passes) at `anchorClock`.
        var anchorTime = 0.0
        var anchorClock: Double
        var paused = false
        /// The next sample `due()` delivers.
        var pass = 0
        var sample = 0
        /// Fixes that fell due before a pause or seek and have not been collected.
        var pending: [Fix] = []
        /// `due()` has been called: `isFinished` waits for the stream to drain.
        var streaming = false
    }

    private let state: Mutex<State>

    /// - Parameter startTime: wall-clock seconds since 1970 for the first fix.
    public init(timeline: Timeline, clock: any PlaybackClock, startTime: Double) {
        self.timeline = timeline
        self.clock = clock
        self.startTime = startTime
        let now = clock.now()
        clockStart = now
        let first = timeline.sample(0)
        closed = timeline.fix(leg: first.leg, fraction: first.fraction, routeTime: 0, timestamp: 0).coordinate
            == timeline.fix(at: timeline.duration, startTime: 0).coordinate
        state = Mutex(State(anchorClock: now))
    }

    private var looping: Bool { timeline.options.loop && timeline.duration > 0 }
    private var rate: Double { timeline.options.rate }

    private func playbackTime(_ s: State, _ now: Double) -> Double {
        s.paused ? s.anchorTime : s.anchorTime + max(0, now - s.anchorClock) * rate
    }

    /// Pass number and route time within it for playback time `time`.
    private func position(_ time: Double) -> (pass: Int, routeTime: Double) {
        let d = timeline.duration
        guard looping else { return (0, min(time, d)) }
        let pass = (time / d).rounded(.down)
        guard pass < Double(Int.max / 2) else { return (0, 0) }
        return (Int(pass), min(max(time - pass * d, 0), d))
    }

    private func timestamp(clock c: Double) -> Double { startTime + (c - clockStart) }

    /// Moves the fixes that have fallen due by `now` into `pending`.
    private func settle(_ s: inout State, _ now: Double) {
        let time = playbackTime(s, now)
        let d = timeline.duration
        if looping {
            // A subscriber that fell more than a pass behind gets the latest pass only.
            let current = position(time).pass
            if s.pass < current - 1 { (s.pass, s.sample) = (current - 1, 0) }
        }
        while true {
            if s.sample > timeline.lastSample {
                guard looping else { return }
                s.pass += 1
                s.sample = closed ? 1 : 0
                if s.sample > timeline.lastSample { return }
            }
            let (t, leg, f) = timeline.sample(s.sample)
            let due = Double(s.pass) * d + t
            guard due <= time + Timeline.epsilon(time) else { return }
            let at = s.paused ? s.anchorClock : s.anchorClock + max(0, due - s.anchorTime) / rate
            let fix = timeline.fix(leg: leg, fraction: f, routeTime: t, timestamp: timestamp(clock: min(at, now)))
            s.pending.append(fix)
            s.sample += 1
        }
    }

    /// The fix for the clock's now; nil after the end unless looping.
    public func current() -> Fix? {
        state.withLock { s -> Fix? in
            let now = clock.now()
            let time = playbackTime(s, now)
            if !timeline.options.loop && time > timeline.duration + Timeline.epsilon(timeline.duration) { return nil }
            var fix = timeline.fix(at: position(time).routeTime, startTime: 0)
            fix.timestamp = timestamp(clock: now)
            if s.paused { fix.speed = 0 }
            return fix
        }
    }

    /// Stops playback time; the clock runs on, the position stays.
    public func pause() {
        state.withLock { s in
            let now = clock.now()
            guard !s.paused else { return }
            settle(&s, now)
            s.anchorTime = playbackTime(s, now)
            s.anchorClock = now
            s.paused = true
        }
    }

    /// Continues from where `pause()` stopped.
    public func resume() {
        state.withLock { s in
            let now = clock.now()
            guard s.paused else { return }
            s.anchorClock = now
            s.paused = false
        }
    }

    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Jumps to `routeTime` (clamped to 0...duration) within the current
    /// pass. The next `due()` delivers the fix there, then carries on at the
    /// configured step.
    public func seek(to routeTime: Double) {
        let target = routeTime.isNaN ? 0 : min(max(routeTime, 0), timeline.duration)
        state.withLock { s in
            let now = clock.now()
            settle(&s, now)
            let pass = position(playbackTime(s, now)).pass
            s.anchorTime = Double(pass) * timeline.duration + target
            s.anchorClock = now
            s.pass = pass
            s.sample = timeline.firstSample(after: target)
            var fix = timeline.fix(at: target, startTime: 0)
            fix.timestamp = timestamp(clock: now)
            if s.paused { fix.speed = 0 }
            s.pending.append(fix)
        }
    }

    /// Route seconds into the current pass (0...duration).
    public var routeTime: Double {
        state.withLock { s in position(playbackTime(s, clock.now())).routeTime }
    }

    /// Not looping, the end has been reached and, when `due()` is in use,
    /// every fix up to the end has been collected.
    public var isFinished: Bool {
        state.withLock { s in
            let now = clock.now()
            guard !timeline.options.loop else { return false }
            let d = timeline.duration
            guard playbackTime(s, now) + Timeline.epsilon(d) >= d else { return false }
            return !s.streaming || (s.pending.isEmpty && s.sample > timeline.lastSample)
        }
    }

    /// The fixes due between the last call and now, at the configured step
    /// (what a streaming shell or a subscriber receives). The first call
    /// includes the fix at the start; a seek adds the fix where it lands.
    public func due() -> [Fix] {
        state.withLock { s in
            let now = clock.now()
            s.streaming = true
            settle(&s, now)
            let out = s.pending
            s.pending = []
            return out
        }
    }
}
