import PincerPluginKit
import GeoRoutes
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A refused operation, with the SDK status it maps to.
struct LocError: StatusError {
    let status: pincer_status_t
    let message: String
    var description: String { message }

    static func invalid(_ m: String) -> LocError { LocError(status: PINCER_INVALID_ARGUMENT, message: m) }
    static func notFound(_ m: String) -> LocError { LocError(status: PINCER_NOT_FOUND, message: m) }
    static func storage(_ m: String) -> LocError { LocError(status: PINCER_FAILED, message: m) }
}

/// Spoofing state, places and the route being played. The fixed part
/// (spoofing on/off, the current place, places the developer added) is one
/// JSON document in the plugin's settings, read when the store is made (at
/// the plugin's first use, never in init); imported routes are in the
/// route store (`Routes`). Subscribers are told of every new fix outside
/// the lock.
final class LocationStore: @unchecked Sendable {
    struct Persisted: Sendable, Equatable {
        var spoofing = false
        var current: Coordinate?
        var currentName: String?
        var source = "off"
        var places: [Place] = []
        /// Speeds chosen with loc.waypoints --speed when routes were GPX
        /// files: read once, when the route store migrates those files, and
        /// carried through unchanged (the route store keeps speeds now).
        var routeSpeeds: [String: Double] = [:]
    }

    private static let key = "state"
    let host: PluginHost
    private let state: Mutex<Persisted>
    private let live = Mutex<(fix: Fix?, player: Player?, token: UInt64)>((nil, nil, 0))
    private let subscribers = Mutex<(next: UInt64, list: [(UInt64, @Sendable (Fix?) -> Void)])>((1, []))

    init(host: PluginHost) {
        self.host = host
        let loaded = host.storedDocument(LocationStore.key, what: "location settings") { text in LocationStore.decode(text) } ?? Persisted()
        state = Mutex(loaded)
        if loaded.spoofing, let c = loaded.current {
            live.withLock { $0.fix = Fix(coordinate: c, altitude: nil, course: 0, speed: 0, horizontalAccuracy: 5, timestamp: LocationStore.wallClock()) }
        }
    }

    var snapshot: Persisted { state.withLock { $0 } }
    var currentFix: Fix? { state.withLock { $0.spoofing } ? live.withLock { $0.fix } : nil }
    var isPlaying: Bool { live.withLock { $0.player != nil } }

    // MARK: places

    func places() -> [Place] { Presets.all + snapshot.places }

    func place(_ id: String) -> Place? { places().first { $0.id == id.lowercased() } }

    func add(_ place: Place) throws(LocError) {
        guard Presets.all.first(where: { $0.id == place.id }) == nil else {
            throw .invalid("'\(place.id)' is a preset; choose another id")
        }
        try change { s in
            s.places.removeAll { $0.id == place.id }
            s.places.append(place)
        }
    }

    func remove(_ id: String) throws(LocError) {
        // Checked against the stored places, in the transaction: one another process added counts.
        try change { s throws(LocError) in
            guard s.places.contains(where: { $0.id == id }) else { throw .notFound("no place '\(id)' added with loc.add") }
            s.places.removeAll { $0.id == id }
        }
    }

    // MARK: spoofing

    func set(_ coordinate: Coordinate, name: String?, source: String) throws(LocError) {
        stopPlayer()
        try change { s in
            s.spoofing = true
            s.current = coordinate
            s.currentName = name
            s.source = source
        }
        publish(Fix(coordinate: coordinate, altitude: nil, course: 0, speed: 0, horizontalAccuracy: 5, timestamp: LocationStore.wallClock()))
    }

    func off() throws(LocError) {
        stopPlayer()
        try change { s in
            s.spoofing = false
            s.source = "off"
        }
        live.withLock { $0.fix = nil }
        notify(nil)
    }

    // MARK: playing

    /// Plays `route` on a background thread against the system clock,
    /// publishing each fix as it falls due.
    func play(_ route: Route, options: PlaybackOptions) throws(LocError) {
        let name = route.name
        let timeline: Timeline
        do throws(LocationError) { timeline = try Timeline(route: route, options: options) } catch { throw .invalid(error.message) }
        let player = Player(timeline: timeline, clock: SystemClock(), startTime: LocationStore.wallClock())
        try change { s in
            s.spoofing = true
            s.source = "route"
            s.currentName = name
        }
        let token: UInt64 = live.withLock { l in
            l.player = player
            l.token += 1
            return l.token
        }
        let started = BackgroundThread.start { [self] in
            while live.withLock({ $0.token == token }) {
                for fix in player.due() { publish(fix) }
                if player.isFinished { break }
                usleep(50_000)
            }
            live.withLock { l in if l.token == token { l.player = nil } }
        }
        guard started else { throw .storage("could not start a playback thread") }
    }

    /// The route an app is playing through the service, for pause, resume and seek.
    func withPlayer<R>(_ body: (Player) throws(LocError) -> R) throws(LocError) -> R {
        guard let player = live.withLock({ $0.player }) else {
            throw .notFound("no route is playing in this process (an app starts one with pincer.location/1 play)")
        }
        return try body(player)
    }

    func stopPlayer() {
        live.withLock { l in
            l.player = nil
            l.token += 1
        }
    }

    // MARK: subscribers

    func subscribe(_ callback: @escaping @Sendable (Fix?) -> Void) -> UInt64 {
        subscribers.withLock { s in
            let token = s.next
            s.next += 1
            s.list.append((token, callback))
            return token
        }
    }

    func unsubscribe(_ token: UInt64) {
        subscribers.withLock { s in s.list.removeAll { $0.0 == token } }
    }

    /// Makes `fix` current, remembers the position, tells subscribers.
    func publish(_ fix: Fix) {
        live.withLock { $0.fix = fix }
        state.withLock { $0.current = fix.coordinate }
        notify(fix)
    }

    private func notify(_ fix: Fix?) {
        let list = subscribers.withLock { $0.list }
        for (_, callback) in list { callback(fix) }
        let s = snapshot
        var fields: [(String, JSON)] = [("spoofing", .bool(s.spoofing)), ("source", .string(s.source))]
        if let fix {
            fields += [("latitude", .double(fix.coordinate.latitude)), ("longitude", .double(fix.coordinate.longitude))]
        }
        if let name = s.currentName { fields.append(("name", .string(name))) }
        // Route playback would flood the event bus: events mark changes of source only.
        if s.source != "route" || fix == nil { host.emit(PINCER_LOCATION_CHANGED_EVENT, payload: JSON.object(fields).serialized()) }
    }

    // MARK: persistence

    /// Applies `body` to the stored document, re-read in the same
    /// transaction of the settings store as the write, so places and route
    /// speeds another process adds at the same moment are kept, not
    /// overwritten by this process's older copy.
    private func change(_ body: (inout Persisted) throws(LocError) -> Void) throws(LocError) {
        let result: Result<Void, LocError> = state.withLock { s in
            var changed: Persisted?
            var refusal: LocError?
            do {
                try host.updateDocument(LocationStore.key, what: "location settings",
                                        decode: { LocationStore.decode($0) }) { stored in
                    var next = stored ?? Persisted()
                    do throws(LocError) { try body(&next) } catch {
                        refusal = error
                        throw error
                    }
                    changed = next
                    return LocationStore.encode(next)
                }
            } catch {
                return .failure(refusal ?? .storage("could not save the location settings: \(error)"))
            }
            if let changed { s = changed }
            return .success(())
        }
        try result.get()
    }

    static func encode(_ s: Persisted) -> String {
        var fields: [(String, JSON)] = [("spoofing", .bool(s.spoofing)), ("source", .string(s.source))]
        if let c = s.current { fields.append(("current", .array([.double(c.latitude), .double(c.longitude)]))) }
        if let n = s.currentName { fields.append(("name", .string(n))) }
        fields.append(("places", .array(s.places.map { p in
            .object([("id", .string(p.id)), ("name", .string(p.name)),
                     ("latitude", .double(p.coordinate.latitude)), ("longitude", .double(p.coordinate.longitude))])
        })))
        if !s.routeSpeeds.isEmpty {
            fields.append(("route_speeds", .object(s.routeSpeeds.sorted { $0.key < $1.key }.map { ($0.key, .double($0.value)) })))
        }
        return JSON.object(fields).serialized()
    }

    static func decode(_ text: String) -> Result<Persisted, LocError> {
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { return .failure(.invalid("\(error)")) }
        var s = Persisted()
        s.spoofing = doc["spoofing"]?.boolValue ?? false
        s.source = doc["source"]?.stringValue ?? (s.spoofing ? "custom" : "off")
        s.currentName = doc["name"]?.stringValue
        if let pair = doc["current"]?.arrayValue, pair.count == 2, let lat = pair[0].doubleValue, let lon = pair[1].doubleValue,
           let c = try? Coordinate.validated(latitude: lat, longitude: lon) {
            s.current = c
        }
        for p in doc["places"]?.arrayValue ?? [] {
            guard let id = p["id"]?.stringValue, let lat = p["latitude"]?.doubleValue, let lon = p["longitude"]?.doubleValue,
                  let c = try? Coordinate.validated(latitude: lat, longitude: lon) else { continue }
            s.places.append(Place(id: id, name: p["name"]?.stringValue ?? id, coordinate: c, kind: .custom))
        }
        for (name, value) in doc["route_speeds"]?.objectValue ?? [] {
            if let speed = value.doubleValue, speed.isFinite, speed > 0 { s.routeSpeeds[name] = speed }
        }
        return .success(s)
    }

    static func wallClock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
