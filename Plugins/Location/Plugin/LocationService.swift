import PincerPluginKit
import GeoRoutes

/// The "pincer.location/1" table (SDK/include/pincer/location.h).
final class LocationService: ServiceObject<pincer_location_service_t>, @unchecked Sendable {
    /// Opened by the first call that needs the location settings.
    let state: FirstUse<LocationStore>
    let routes: Routes

    init(store: FirstUse<LocationStore>, routes: Routes) {
        state = store
        self.routes = routes
        super.init(table: LocationService.makeTable(), header: \.header)
    }

    /// The store, opened now if this is the first use.
    func store() throws(LocError) -> LocationStore {
        do { return try state.get() } catch { throw .storage("could not open the location settings: \(error)") }
    }

    /// The store for a call that cannot report an error (never nil for a
    /// settings document, whose unreadable text is set aside).
    var opened: LocationStore? { try? state.get() }

    /// A C function and its context, carried into a Sendable closure; the
    /// subscriber promised in location.h that the context stays valid.
    private struct Callback: @unchecked Sendable {
        let fn: pincer_location_fix_fn_t
        let context: UnsafeMutableRawPointer?
    }

    static func cFix(_ fix: Fix?, moving: Bool) -> pincer_location_fix_t {
        var c = pincer_location_fix_t()
        c.struct_size = UInt32(MemoryLayout<pincer_location_fix_t>.size)
        guard let fix else {
            c.latitude = .nan
            c.longitude = .nan
            return c
        }
        c.flags = PINCER_LOCATION_FIX_SIMULATED | (fix.altitude != nil ? PINCER_LOCATION_FIX_HAS_ALTITUDE : 0)
            | (moving ? PINCER_LOCATION_FIX_MOVING : 0)
        c.latitude = fix.coordinate.latitude
        c.longitude = fix.coordinate.longitude
        c.altitude = fix.altitude ?? 0
        c.course = fix.course
        c.speed = fix.speed
        c.horizontal_accuracy = fix.horizontalAccuracy
        c.timestamp = fix.timestamp
        return c
    }

    private static func makeTable() -> pincer_location_service_t {
        var t = pincer_location_service_t()
        t.header.version_minor = 0
        t.is_spoofing = { ctx in LocationService.with(ctx) { $0.opened?.snapshot.spoofing ?? false } }
        t.current = { ctx, out in
            LocationService.with(ctx) { s in
                guard let out, let store = s.opened, let fix = store.currentFix else { return false }
                let size = Int(out.pointee.struct_size)
                var c = LocationService.cFix(fix, moving: store.isPlaying)
                withUnsafeBytes(of: &c) { bytes in
                    UnsafeMutableRawPointer(out).copyMemory(from: bytes.baseAddress!, byteCount: min(size, bytes.count))
                }
                out.pointee.struct_size = UInt32(size)
                return true
            }
        }
        t.set = { ctx, latitude, longitude in
            LocationService.with(ctx) { s in
                s.perform { () throws(LocError) in
                    let c: Coordinate
                    do throws(LocationError) { c = try Coordinate.validated(latitude: latitude, longitude: longitude) } catch { throw .invalid(error.message) }
                    try s.store().set(c, name: nil, source: "custom")
                }
            }
        }
        t.set_place = { ctx, id in
            LocationService.with(ctx) { s in
                guard let id else { return s.fail(PINCER_INVALID_ARGUMENT, "set_place: id is NULL") }
                let name = String(cString: id)
                return s.perform { () throws(LocError) in
                    let store = try s.store()
                    guard let place = store.place(name) else { throw .notFound("no place '\(name)' (see loc.presets)") }
                    try store.set(place.coordinate, name: place.name, source: place.kind == .custom ? "custom" : "preset")
                }
            }
        }
        t.play = { ctx, route, rate, loop in
            LocationService.with(ctx) { s in
                guard let route else { return s.fail(PINCER_INVALID_ARGUMENT, "play: route is NULL") }
                var options = PlaybackOptions()
                options.rate = rate
                options.loop = loop
                return s.perform { () throws(LocError) in
                    let route = try s.routes.require(String(cString: route))
                    try s.store().play(route, options: options)
                }
            }
        }
        t.stop = { ctx in LocationService.with(ctx) { s in s.state.ifOpen?.stopPlayer(); return PINCER_OK } }
        t.off = { ctx in LocationService.with(ctx) { s in s.perform { () throws(LocError) in try s.store().off() } } }
        t.subscribe = { ctx, fn, fnContext in
            LocationService.with(ctx) { s in
                guard let fn else {
                    _ = s.fail(PINCER_INVALID_ARGUMENT, "subscribe: callback is NULL")
                    return 0
                }
                let callback = Callback(fn: fn, context: fnContext)
                guard let store = s.opened else {
                    _ = s.fail(PINCER_FAILED, "subscribe: the location settings could not be opened")
                    return 0
                }
                return store.subscribe { fix in
                    var c = LocationService.cFix(fix, moving: store.isPlaying)
                    callback.fn(callback.context, &c)
                }
            }
        }
        t.unsubscribe = { ctx, token in LocationService.with(ctx) { $0.state.ifOpen?.unsubscribe(token) } }
        t.last_error = { ctx in LocationService.with(ctx) { $0.errors.pointer } }
        return t
    }
}
