import PincerPluginKit
import GeoRoutes
#if canImport(Glibc)
import Glibc
#endif

/// The loc.* commands.
struct LocationCommands {
    let store: FirstUse<LocationStore>
    let routes: Routes

    func register(with host: PluginHost) throws {
        let state = self.store, routes = self.routes
        try host.addCommand("presets() -> string", summary: "Preset places (cities, edge cases) and places added with loc.add",
                            jsonResult: true) { _ in
            .string(JSON.array(try state.get().places().map(LocationCommands.json)).serialized())
        }
        try host.addCommand("set(place: string, longitude: string = \"\") -> string",
                            summary: "Spoof a place: loc.set paris, or loc.set 48.8566 2.3522 (persisted)",
                            details: "With one argument, a preset or added place id (loc.presets). With two, latitude -90...90 and longitude -180...180 in degrees.",
                            changesState: true) { args in
            let store = try state.get()
            if args[1].string.isEmpty {
                guard let place = store.place(args[0].string) else {
                    throw LocError.notFound("no place '\(args[0].string)'; give an id from loc.presets, or latitude and longitude")
                }
                try store.set(place.coordinate, name: place.name, source: place.kind == .custom ? "custom" : "preset")
                return .string("spoofing \(place.name) (\(place.coordinate))")
            }
            let c = try LocationCommands.coordinate(args[0].string, args[1].string)
            try store.set(c, name: nil, source: "custom")
            return .string("spoofing \(c)")
        }
        try host.addCommand("off() -> string", summary: "Stop spoofing (persisted)", changesState: true) { _ in
            try state.get().off()
            return .string("spoofing is off")
        }
        try host.addCommand("current() -> string", summary: "The current spoofed fix, or spoofing: false", jsonResult: true) { _ in
            let store = try state.get()
            let s = store.snapshot
            guard s.spoofing, let fix = store.currentFix else { return .string(#"{"spoofing":false}"#) }
            var fields: [(String, JSON)] = [("spoofing", .bool(true)), ("source", .string(s.source))]
            if let name = s.currentName { fields.append(("name", .string(name))) }
            return .string(JSON.object(fields + LocationCommands.fields(fix)).serialized())
        }
        try host.addCommand("add(id: string, latitude: f64, longitude: f64, name: string = \"\") -> string",
                            summary: "Add a named place (persisted); loc.set <id> then spoofs it", changesState: true) { args in
            let id = args[0].string.lowercased()
            guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw LocError.invalid("place id '\(args[0].string)' must be letters, digits, - and _")
            }
            let c: Coordinate
            do throws(LocationError) { c = try Coordinate.validated(latitude: args[1].f64, longitude: args[2].f64) } catch { throw LocError.invalid(error.message) }
            try state.get().add(Place(id: id, name: args[3].string.isEmpty ? id : args[3].string, coordinate: c, kind: .custom))
            return .string("added \(id) at \(c)")
        }
        try host.addCommand("remove(id: string) -> string", summary: "Remove a place added with loc.add", changesState: true) { args in
            try state.get().remove(args[0].string.lowercased())
            return .string("removed \(args[0].string)")
        }
        try host.addCommand("routes() -> string", summary: "Built-in scenarios and imported routes: length, duration, speed, bounds, time imported",
                            jsonResult: true) { _ in
            // From the summaries kept beside the routes: no point is read.
            .string(JSON.array(try routes.summaries().map { r in
                JSON.object([("name", .string(r.name)), ("kind", .string(r.kind.rawValue)),
                             ("points", .int(Int64(r.points))), ("segments", .int(Int64(r.segments))),
                             ("metres", r.metres.map { .double(($0 * 10).rounded() / 10) } ?? .null),
                             ("seconds", r.seconds.map { .double(($0 * 10).rounded() / 10) } ?? .null),
                             ("speed", r.suggestedSpeed.map(JSON.double) ?? .null),
                             ("bounds", r.bounds.map { .array([.double($0.south), .double($0.west), .double($0.north), .double($0.east)]) } ?? .null),
                             ("imported", r.kind == .scenario ? .null : .string(ISOTime.format(r.created)))])
            }).serialized())
        }
        try host.addCommand("import(file: string, name: string = \"\", replace: bool = false) -> string",
                            summary: "Import routes from GPX 1.0/1.1 (tracks, routes, waypoints) or GeoJSON (persisted)",
                            details: """
                                Each track, route and the waypoint list of a GPX file becomes a route; --name renames a file's \
                                single route. A route of the same name imported before is kept and the import refused, unless \
                                --replace is given; the result lists the routes replaced. Routes of one file that share a name get \
                                " (2)", " (3)" … (with a note). Bad files are refused with the line.
                                """,
                            changesState: true, jsonResult: true) { args in
            let bytes = try TextFile.readBytes(args[0].string)
            var (routes, notes): ([Route], [String])
            do throws(LocationError) { (routes, notes) = try RouteFormats.read(bytes) } catch { throw LocError.invalid("\(args[0].string): \(error.message)") }
            if !args[1].string.isEmpty {
                guard routes.count == 1 else { throw LocError.invalid("--name needs a file with one route; \(args[0].string) has \(routes.count)") }
                routes[0].name = args[1].string
            }
            notes += LocationCommands.uniqueNames(&routes)
            let replaced = try self.routes.save(routes, replace: args[2].bool, hint: routes.count == 1 ? ", or --name to import it under another name" : "")
            return .string(JSON.object([("imported", .array(routes.map { .string($0.name) })),
                                        ("replaced", .array(replaced.map(JSON.string))),
                                        ("points", .int(Int64(routes.reduce(0) { $0 + $1.points.count }))),
                                        ("notes", .array(notes.map(JSON.string)))]).serialized())
        }
        try host.addCommand("waypoints(name: string, points: string, speed: f64 = 0, replace: bool = false) -> string",
                            summary: "Make a route from waypoints: loc.waypoints walk \"37.33,-122.03 37.34,-122.02\" (persisted)",
                            details: "A route of the same name made or imported before is kept and the command refused, unless --replace is given.",
                            changesState: true) { args in
            var route: Route
            do throws(LocationError) { route = try RouteFormats.parseWaypointList(args[1].string) } catch { throw LocError.invalid(error.message) }
            route.name = args[0].string
            if args[2].f64 > 0 { route.suggestedSpeed = args[2].f64 }
            let replaced = try routes.save([route], replace: args[3].bool, hint: "")
            return .string("\(replaced.isEmpty ? "route" : "replaced route") \(route.name): \(route.points.count) waypoints")
        }
        try host.addCommand("export(route: string, file: string, playback: bool = false, speed: f64 = 0, interval: f64 = 0, distance: f64 = 0) -> string",
                            summary: "Write a route (or, with --playback true, the fixes a playback would emit) as GPX 1.1 or GeoJSON",
                            details: """
                                The format follows the extension: .gpx (GPX 1.1, valid against its XSD) or .geojson/.json \
                                (RFC 7946; a line crossing the antimeridian is cut there into a MultiLineString). With \
                                --playback true, the fixes of one pass at --speed, --interval or --distance, their times \
                                starting now and spaced by route time.
                                """) { args in
            guard let route = try routes.route(args[0].string) else { throw LocError.notFound("no route '\(args[0].string)' (see loc.routes)") }
            var out = route
            if args[2].bool {
                let timeline = try LocationCommands.timeline(route, speed: args[3].f64, interval: args[4].f64, distance: args[5].f64)
                let fixes = timeline.fixes(startTime: LocationStore.wallClock())
                out = Route(name: route.name + " (playback)", kind: .track, segments: [fixes.map {
                    Waypoint($0.coordinate, altitude: $0.altitude, time: $0.timestamp, speed: $0.speed)
                }])
            }
            let path = args[1].string
            let bytes: [UInt8]
            if path.hasSuffix(".gpx") {
                bytes = RouteFormats.writeGPX([out], creator: "pincer loc")
            } else if path.hasSuffix(".geojson") || path.hasSuffix(".json") {
                bytes = RouteFormats.writeGeoJSON([out])
            } else {
                throw LocError.invalid("the file must end in .gpx, .geojson or .json: \(path)")
            }
            try TextFile.writeAtomically(to: path) { write in try write(bytes) }
            return .string("wrote \(out.points.count) points to \(path)")
        }
        try host.addCommand("""
            play(route: string, speed: f64 = 0, interval: f64 = 0, distance: f64 = 0, loop: bool = false, reverse: bool = false, \
            rate: f64 = 1) -> string
            """,
                            summary: "Play a route and stream its fixes (simctl-style --speed, --interval or --distance)",
                            details: """
                                Speed comes from the route's times, then its recorded speeds, then --speed (m/s; default the \
                                scenario's, else 20 m/s as simctl). Lengths are measured on the WGS-84 ellipsoid; positions \
                                between waypoints follow the great circle. One fix every --interval seconds (default 1) or \
                                every --distance metres of route. --rate N plays N times faster than real time. --loop repeats \
                                (stop with Ctrl-C). The fixes also reach apps through pincer.location/1.

                                Each fix's speed is the simulated speed over the route, whatever --rate. Its timestamp is the \
                                wall clock when it is produced, not simulated time: apps drop fixes that are stale or in the \
                                future, and simulated time would run ahead of the device's clock at --rate above 1 (and behind \
                                it after a pause). So at --rate N the position moves N times as far between two timestamps as \
                                the speed says; routeTime (t+ in text) is the simulated clock, seconds into the route.

                                With --json every line is a JSON object: one per fix (latitude, longitude, altitude, course, \
                                speed, horizontalAccuracy, timestamp, routeTime, simulated), then the shell's result object.
                                """, changesState: true) { args in
            guard let route = try routes.route(args[0].string) else { throw LocError.notFound("no route '\(args[0].string)' (see loc.routes)") }
            var options = try LocationCommands.options(speed: args[1].f64, interval: args[2].f64, distance: args[3].f64)
            options.loop = args[4].bool
            options.reverse = args[5].bool
            options.rate = args[6].f64
            let timeline: Timeline
            do throws(LocationError) { timeline = try Timeline(route: route, options: options) } catch { throw LocError.invalid(error.message) }
            let player = Player(timeline: timeline, clock: SystemClock(), startTime: LocationStore.wallClock())
            let store = try state.get()
            try store.set(route.points.first!.coordinate, name: route.name, source: "route")
            var count = 0
            let json = args.wantsJSON
            // Until the route ends or the caller cancels (Ctrl-C, --timeout: the only end of --loop).
            while !args.isCancelled {
                for fix in player.due() {
                    store.publish(fix)
                    count += 1
                    if json { args.output(json: .object(LocationCommands.fields(fix))) } else { args.output(LocationCommands.line(fix) + "\n") }
                }
                if player.isFinished { break }
                usleep(20_000)
            }
            let rate = options.rate == 1 ? "" : " at ×\(options.rate == options.rate.rounded() ? NumberText.fixed(options.rate, 0) : String(options.rate))"
            return .string("played \(route.name): \(count) fixes over \(Format.metres(timeline.length)), \(Format.seconds(timeline.duration)) of route time\(rate)")
        }
        try host.addCommand("pause() -> string", summary: "Pause the route an app is playing through pincer.location/1") { _ in
            try LocationCommands.player(state) { (p: Player) throws(LocError) in p.pause() }
            return .string("paused")
        }
        try host.addCommand("resume() -> string", summary: "Resume the route an app is playing") { _ in
            try LocationCommands.player(state) { (p: Player) throws(LocError) in p.resume() }
            return .string("resumed")
        }
        try host.addCommand("seek(seconds: f64) -> string", summary: "Move the route an app is playing to this many seconds from its start") { args in
            let at = try LocationCommands.player(state) { (p: Player) throws(LocError) -> Double in
                p.seek(to: args[0].f64)
                return p.routeTime
            }
            return .string("at \(NumberText.fixed(at, 1)) s")
        }
        try host.addCommand("stop() -> string", summary: "Stop the route an app is playing through pincer.location/1") { _ in
            state.ifOpen?.stopPlayer()   // nothing plays in a process that never opened the store
            return .string("stopped")
        }
        try host.addCommand("map(route: string, file: string) -> string", summary: "Draw a route and its waypoints: file.svg or file.png") { args in
            guard let route = try routes.route(args[0].string) else { throw LocError.notFound("no route '\(args[0].string)' (see loc.routes)") }
            try PictureFile.write(svg: RouteMap.svg(route), to: args[1].string)
            return .string("wrote \(args[1].string)")
        }
    }

    // MARK: helpers

    /// The route an app plays in this process; a process that never opened
    /// the store plays none, and asking does not open it.
    static func player<R>(_ state: FirstUse<LocationStore>, _ body: (Player) throws(LocError) -> R) throws(LocError) -> R {
        guard let store = state.ifOpen else {
            throw .notFound("no route is playing in this process (an app starts one with pincer.location/1 play)")
        }
        return try store.withPlayer(body)
    }

    static func coordinate(_ lat: String, _ lon: String) throws -> Coordinate {
        guard let la = Double(lat), let lo = Double(lon) else {
            throw LocError.invalid("'\(lat) \(lon)' is not a latitude and longitude in degrees")
        }
        do { return try Coordinate.validated(latitude: la, longitude: lo) } catch { throw LocError.invalid(error.message) }
    }

    static func options(speed: Double, interval: Double, distance: Double) throws -> PlaybackOptions {
        var options = PlaybackOptions()
        if speed < 0 || interval < 0 || distance < 0 { throw LocError.invalid("--speed, --interval and --distance must be positive") }
        if interval > 0, distance > 0 { throw LocError.invalid("give --interval or --distance, not both") }
        if speed > 0 { options.speed = speed }
        if interval > 0 { options.step = .interval(interval) }
        if distance > 0 { options.step = .distance(distance) }
        return options
    }

    static func timeline(_ route: Route, speed: Double, interval: Double, distance: Double) throws -> Timeline {
        do { return try Timeline(route: route, options: try options(speed: speed, interval: interval, distance: distance)) } catch let e as LocationError {
            throw LocError.invalid(e.message)
        }
    }

    static func json(_ p: Place) -> JSON {
        .object([("id", .string(p.id)), ("name", .string(p.name)), ("kind", .string(p.kind.rawValue)),
                 ("latitude", .double(p.coordinate.latitude)), ("longitude", .double(p.coordinate.longitude))])
    }

    static func fields(_ fix: Fix) -> [(String, JSON)] {
        [("latitude", .double(fix.coordinate.latitude)), ("longitude", .double(fix.coordinate.longitude)),
         ("altitude", fix.altitude.map(JSON.double) ?? .null), ("course", .double(fix.course)), ("speed", .double(fix.speed)),
         ("horizontalAccuracy", .double(fix.horizontalAccuracy)), ("timestamp", .double(fix.timestamp)),
         ("routeTime", fix.routeTime.map(JSON.double) ?? .null), ("simulated", .bool(fix.simulated))]
    }

    static func line(_ fix: Fix) -> String {
        "\(ISOTime.format(fix.timestamp))  \(NumberText.fixed(fix.coordinate.latitude, 6)), \(NumberText.fixed(fix.coordinate.longitude, 6))"
            + "  \(NumberText.fixed(fix.speed, 1)) m/s  course \(NumberText.fixed(fix.course, 1))°"
            + (fix.routeTime.map { "  t+\(NumberText.fixed($0, 1)) s" } ?? "")
    }

    /// Gives the second and later of several routes sharing a name " (2)",
    /// " (3)" …, so that importing a file keeps all of them; the notes say so.
    static func uniqueNames(_ routes: inout [Route]) -> [String] {
        var taken = Set<String>(), notes: [String] = []
        for i in routes.indices {
            let name = routes[i].name
            guard taken.contains(name) else { taken.insert(name); continue }
            var n = 2
            while taken.contains("\(name) (\(n))") { n += 1 }
            routes[i].name = "\(name) (\(n))"
            taken.insert(routes[i].name)
            notes.append("route \(i + 1) of the file is also named '\(name)' and was imported as '\(routes[i].name)'")
        }
        return notes
    }
}

enum Format {
    static func metres(_ m: Double) -> String { m >= 1000 ? NumberText.fixed(m / 1000, 2) + " km" : NumberText.fixed(m, 0) + " m" }

    static func seconds(_ s: Double) -> String {
        s >= 3600 ? NumberText.fixed(s / 3600, 2) + " h" : s >= 60 ? NumberText.fixed(s / 60, 1) + " min" : NumberText.fixed(s, 1) + " s"
    }
}
