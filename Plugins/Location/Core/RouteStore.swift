// Imported routes in one SQLite file (<state>/routes.sqlite, through
// PincerSQLite): a row per route with what a listing shows, and the points in
// a table of their own that only playing, exporting or drawing a route reads.
// Listing a thousand routes of 100,000 points each reads no point.
import PincerPluginKit
import PincerSQLite
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `loc.routes` shows of a route, kept beside it so a listing never
/// reads its points.
public struct RouteSummary: Sendable, Equatable {
    public var name: String
    public var kind: Route.Kind
    public var points: Int
    public var segments: Int
    /// Geodesic length and the duration of one pass with default playback
    /// options; nil when the route cannot be played (a single point).
    public var metres: Double?
    public var seconds: Double?
    public var bounds: (south: Double, west: Double, north: Double, east: Double)?
    public var suggestedSpeed: Double?
    /// Seconds since 1970 (UTC) when it was imported or made.
    public var created: Double

    public init(_ route: Route, created: Double) {
        name = route.name
        kind = route.kind
        let all = route.points
        points = all.count
        segments = route.segments.count
        if let timeline = try? Timeline(route: route, options: PlaybackOptions()) {
            metres = timeline.length
            seconds = timeline.duration
        }
        if let first = all.first?.coordinate {
            var b = (south: first.latitude, west: first.longitude, north: first.latitude, east: first.longitude)
            for p in all {
                b.south = min(b.south, p.coordinate.latitude)
                b.north = max(b.north, p.coordinate.latitude)
                b.west = min(b.west, p.coordinate.longitude)
                b.east = max(b.east, p.coordinate.longitude)
            }
            bounds = b
        }
        suggestedSpeed = route.suggestedSpeed
        self.created = created
    }

    public static func == (a: RouteSummary, b: RouteSummary) -> Bool {
        a.name == b.name && a.kind == b.kind && a.points == b.points && a.segments == b.segments && a.metres == b.metres
            && a.seconds == b.seconds && a.bounds.map { [$0.south, $0.west, $0.north, $0.east] } == b.bounds.map { [$0.south, $0.west, $0.north, $0.east] }
            && a.suggestedSpeed == b.suggestedSpeed && a.created == b.created
    }
}

/// Why the route store refused or failed.
public enum RouteStoreError: Error, Sendable, CustomStringConvertible {
    /// Routes of these names are kept already and `replace` was not given.
    case exists([String])
    /// The file could not be opened, read or written: says which and why.
    case storage(String)

    public var description: String {
        switch self {
        case .exists(let names): "route\(names.count == 1 ? "" : "s") \(names.map { "'\($0)'" }.joined(separator: ", ")) exist\(names.count == 1 ? "s" : "") already"
        case .storage(let m): m
        }
    }
}

/// The imported routes of one state directory. Each change is one
/// transaction, so two processes importing the same name at once cannot
/// both win. Safe from any thread (one connection behind a mutex).
public final class RouteStore: @unchecked Sendable {
    public static let fileName = "routes.sqlite"
    /// Where routes were kept before this store: one GPX file per route.
    public static let legacyDirectory = "routes"

    static let schema = SQLiteSchema(migrations: [
        """
        CREATE TABLE routes (
            name TEXT PRIMARY KEY NOT NULL,
            kind TEXT NOT NULL,
            points INTEGER NOT NULL,
            segments INTEGER NOT NULL,
            metres REAL, seconds REAL,
            south REAL, west REAL, north REAL, east REAL,
            speed REAL,
            created REAL NOT NULL
        );
        -- The points, as the GPX 1.1 document of the one route (read back with
        -- the same bounded reader as an imported file). Only played, exported
        -- or drawn routes read it.
        CREATE TABLE route_points (
            name TEXT PRIMARY KEY NOT NULL REFERENCES routes(name) ON DELETE CASCADE,
            gpx BLOB NOT NULL
        );
        CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
        """,
    ], synchronousFull: true, quickCheckAtOpen: false)

    public let path: String
    /// Set when a damaged file was set aside at open: names both paths.
    public let setAsideWarning: String?
    /// What the one-time migration of the GPX directory did (empty when it had nothing to do).
    public private(set) var migrationNotes: [String] = []
    private let file: Mutex<SQLiteFileBox>

    private struct SQLiteFileBox: @unchecked Sendable { let file: SQLiteFile }

    /// Opens (creating) `<directory>/routes.sqlite`; a damaged file is set
    /// aside with `setAsideWarning`. Once per state directory, routes kept
    /// as GPX files in `<directory>/routes` are copied in (their suggested
    /// speeds from `legacySpeeds`, read only then) and the folder is renamed
    /// `routes.migrated`, its files kept.
    public init(directory: String, legacySpeeds: () -> [String: Double] = { [:] }) throws(RouteStoreError) {
        path = directory + "/" + RouteStore.fileName
        let opened: SQLiteFile
        do { opened = try SQLiteFile.open(path: path, what: "route store", schema: RouteStore.schema) } catch {
            throw .storage(error.description)
        }
        setAsideWarning = opened.setAsideWarning
        file = Mutex(SQLiteFileBox(file: opened))
        try migrate(from: directory + "/" + RouteStore.legacyDirectory, legacySpeeds: legacySpeeds)
    }

    private func withFile<T: Sendable>(_ body: (SQLiteFile) throws(SQLiteError) -> T) throws(RouteStoreError) -> T {
        let result: Result<T, SQLiteError> = file.withLock { box in
            do throws(SQLiteError) { return .success(try body(box.file)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw .storage(error.description)
        }
    }

    // MARK: reading

    /// Every route's summary, by name; reads no points.
    public func summaries() throws(RouteStoreError) -> [RouteSummary] {
        try withFile { f throws(SQLiteError) in
            let s = try f.statement("SELECT name, kind, points, segments, metres, seconds, south, west, north, east, speed, created FROM routes")
            defer { s.reset() }
            var list: [RouteSummary] = []
            while try s.step("listing routes") {
                var r = RouteSummary(Route(name: s.text(0), kind: Route.Kind(rawValue: s.text(1)) ?? .track, segments: []), created: s.double(11))
                r.points = Int(s.int64(2))
                r.segments = Int(s.int64(3))
                r.metres = s.isNull(4) ? nil : s.double(4)
                r.seconds = s.isNull(5) ? nil : s.double(5)
                r.bounds = s.isNull(6) ? nil : (s.double(6), s.double(7), s.double(8), s.double(9))
                r.suggestedSpeed = s.isNull(10) ? nil : s.double(10)
                list.append(r)
            }
            return list
        }.sorted { $0.name < $1.name }
    }

    /// The names kept, without their points.
    public func names() throws(RouteStoreError) -> [String] { try summaries().map(\.name) }

    /// The route with its points, or nil when none has this name. Damaged
    /// points are an error naming the route.
    public func route(_ name: String) throws(RouteStoreError) -> Route? {
        let row: (kind: String, speed: Double?, gpx: [UInt8])? = try withFile { f throws(SQLiteError) in
            let s = try f.statement("SELECT r.kind, r.speed, p.gpx FROM routes r JOIN route_points p ON p.name = r.name WHERE r.name = ?1")
            defer { s.reset() }
            try s.bind(1, text: name)
            guard try s.step("reading route '\(name)'") else { return nil }
            return (s.text(0), s.isNull(1) ? nil : s.double(1), s.bytes(2))
        }
        guard let row else { return nil }
        let routes: [Route]
        do throws(LocationError) { routes = try RouteFormats.readGPX(row.gpx).routes } catch {
            throw .storage("route store \(path): the points of route '\(name)' are damaged (\(error.message)); import it again with --replace")
        }
        guard routes.count == 1, var route = routes.first else {
            throw .storage("route store \(path): the points of route '\(name)' are damaged (\(routes.count) routes where one was kept); import it again with --replace")
        }
        route.name = name
        route.kind = Route.Kind(rawValue: row.kind) ?? route.kind
        route.suggestedSpeed = row.speed
        return route
    }

    // MARK: changes

    /// Keeps `routes` (names distinct) in one transaction. A name kept
    /// already is replaced only with `replace`; otherwise nothing is saved
    /// and `.exists` names them all. Returns the names replaced.
    @discardableResult
    public func save(_ routes: [Route], replace: Bool, now: Double) throws(RouteStoreError) -> [String] {
        // Summaries and GPX are made before the write lock is taken.
        let rows = routes.map { (summary: RouteSummary($0, created: now), gpx: RouteFormats.writeGPX([$0], creator: "pincer loc")) }
        var existing: [String] = []
        try withFile { f throws(SQLiteError) in
            try f.transaction("saving routes") { () throws(SQLiteError) in
                existing = []
                let exists = try f.statement("SELECT 1 FROM routes WHERE name = ?1")
                for r in rows {
                    try exists.bind(1, text: r.summary.name)
                    if try exists.step("checking route '\(r.summary.name)'") { existing.append(r.summary.name) }
                    exists.reset()
                }
                guard existing.isEmpty || replace else { return }
                for r in rows { try RouteStore.insert(r.summary, gpx: r.gpx, into: f, orReplace: true) }
            }
            RouteStore.truncateLog(f)
        }
        if !existing.isEmpty && !replace { throw .exists(existing) }
        return existing
    }

    private static func insert(_ r: RouteSummary, gpx: [UInt8], into f: SQLiteFile, orReplace: Bool) throws(SQLiteError) {
        let verb = orReplace ? "INSERT OR REPLACE" : "INSERT OR IGNORE"
        let s = try f.statement("\(verb) INTO routes (name, kind, points, segments, metres, seconds, south, west, north, east, speed, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")
        try s.bind(1, text: r.name)
        try s.bind(2, text: r.kind.rawValue)
        try s.bind(3, int64: Int64(r.points))
        try s.bind(4, int64: Int64(r.segments))
        if let m = r.metres { try s.bind(5, double: m) }
        if let d = r.seconds { try s.bind(6, double: d) }
        if let b = r.bounds {
            try s.bind(7, double: b.south)
            try s.bind(8, double: b.west)
            try s.bind(9, double: b.north)
            try s.bind(10, double: b.east)
        }
        if let v = r.suggestedSpeed { try s.bind(11, double: v) }
        try s.bind(12, double: r.created)
        try s.run("saving route '\(r.name)'")
        guard f.changes > 0 else { return }   // OR IGNORE: kept already
        let p = try f.statement("\(verb) INTO route_points (name, gpx) VALUES (?1, ?2)")
        try p.bind(1, text: r.name)
        try p.bind(2, blob: gpx)
        try p.run("saving the points of route '\(r.name)'")
    }

    // MARK: migration from the GPX folder

    /// Copies the routes of the old GPX folder in, once: the copy and the
    /// mark that it happened are one transaction, so two processes opening
    /// at once copy once; a route of the same name kept already wins. Then
    /// the folder is renamed (never deleted), so nothing is lost.
    private func migrate(from folder: String, legacySpeeds: () -> [String: Double]) throws(RouteStoreError) {
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return }
        var notes: [String] = []
        var moved = 0, migratedHere = false
        try withFile { f throws(SQLiteError) in
            try f.transaction("migrating the routes of \(folder)") { () throws(SQLiteError) in
                notes = []
                moved = 0
                guard try f.scalar("SELECT count(*) FROM meta WHERE key = 'gpx-folder-migrated'") == 0 else { return }
                migratedHere = true
                let speeds = legacySpeeds()
                let created = RouteStore.wallClock()
                for name in RouteStore.gpxFiles(in: folder) {
                    let gpxPath = folder + "/" + name
                    let routes: [Route]
                    do {
                        let bytes = try TextFile.readBytes(gpxPath)
                        routes = try RouteFormats.readGPX(bytes).routes
                    } catch {
                        notes.append("route file \(gpxPath) could not be read and was not migrated (it is kept): \(error)")
                        continue
                    }
                    for var route in routes {
                        route.suggestedSpeed = speeds[route.name]
                        try RouteStore.insert(RouteSummary(route, created: created), gpx: RouteFormats.writeGPX([route], creator: "pincer loc"),
                                              into: f, orReplace: false)
                        moved += 1
                    }
                }
                let mark = try f.statement("INSERT INTO meta (key, value) VALUES ('gpx-folder-migrated', ?1)")
                try mark.bind(1, text: folder)
                try mark.run("marking the migration of \(folder)")
            }
            if migratedHere { RouteStore.truncateLog(f) }
        }
        // After the commit, by the process that copied: a crash before the
        // rename leaves the folder in place, and the mark keeps it from
        // being copied twice.
        guard migratedHere else { return }
        var target = folder + ".migrated"
        var n = 2
        while access(target, F_OK) == 0 {
            target = folder + ".migrated-\(n)"
            n += 1
        }
        if rename(folder, target) == 0 {
            notes.append("moved \(moved) route\(moved == 1 ? "" : "s") from the GPX files in \(folder) into \(path); the files are kept in \(target)")
        } else if errno != ENOENT {
            notes.append("could not rename \(folder) to \(target) after migrating it: \(String(cString: strerror(errno)))")
        }
        migrationNotes = notes
    }

    /// Copies the write-ahead log into the file and empties it. An import
    /// of a large route leaves megabytes of log, which every later process
    /// would otherwise read again at open (the command line's processes end
    /// without closing the file). Best effort: a reader holding the log
    /// open only makes it wait for the next write.
    private static func truncateLog(_ f: SQLiteFile) {
        try? f.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static func gpxFiles(in folder: String) -> [String] {
        guard let handle = opendir(folder) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".gpx") { names.append(name) }
        }
        return names.sorted()
    }

    static func wallClock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
