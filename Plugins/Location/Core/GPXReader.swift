// GPX reading: the walk from a parsed XML tree to routes. The XML itself is
// read by PincerXML's strict reader, which keeps character data (GPX puts its
// values in elements: <time>, <ele>, <name>, <speed>); its syntax errors
// become `LocationError`s "line L, column C: ...". Namespaces are not
// interpreted: GPX elements are matched by their local name (the part after
// any prefix), so `gpx:trkpt` and `trkpt` are the same.

#if canImport(Glibc)
import Glibc
#endif
import PincerXML

typealias GPXNode = XMLReader.Node
typealias GPXDocument = XMLReader.Document

extension XMLReader.Node {
    /// The name without its namespace prefix.
    fileprivate var localName: Substring {
        if let colon = name.lastIndex(of: ":") { return name[name.index(after: colon)...] }
        return name[...]
    }
}

enum GPXXML {
    /// Deeper documents are refused; GPX needs about six levels.
    static let maximumDepth = 256

    static func parse(_ bytes: [UInt8]) throws(LocationError) -> GPXDocument {
        do {
            return try XMLReader.parse(bytes, maximumDepth: maximumDepth, keepText: true)
        } catch {
            throw LocationError(error.description)
        }
    }
}

// MARK: - GPX

/// From a parsed GPX document to routes.
enum GPXReader {
    static func read(_ bytes: [UInt8]) throws(LocationError) -> (routes: [Route], notes: [String]) {
        let document = try GPXXML.parse(bytes)
        var walker = Walker(document: document)
        return try walker.read()
    }

    private struct Walker {
        let document: GPXDocument
        var notes: [String] = []
        var zonelessTimes = 0
        var firstZonelessLine = 0

        init(document: GPXDocument) { self.document = document }

        func line(_ node: GPXNode) -> Int { document.line(of: node) }

        mutating func read() throws(LocationError) -> (routes: [Route], notes: [String]) {
            let root = document.root
            guard root.localName == "gpx" else {
                throw LocationError("line \(line(root)): the root element is <\(root.name)>, not <gpx> (this is not a GPX file)")
            }
            if let version = root.attribute("version"), version != "1.0", version != "1.1" {
                notes.append("GPX version \(version) is neither 1.0 nor 1.1; read as 1.1")
            }

            // The <wpt> list is named after the file: <metadata><name> (GPX
            // 1.1) or <gpx><name> (GPX 1.0).
            var fileName: String?
            for child in root.children where fileName == nil {
                if child.localName == "name" { fileName = Walker.nonEmpty(child.text) }
                if child.localName == "metadata" {
                    fileName = child.children.first { $0.localName == "name" }.flatMap { Walker.nonEmpty($0.text) }
                }
            }

            var routes: [Route] = []
            var waypointsIndex: Int?
            var waypoints: [Waypoint] = []
            var trackNumber = 0, routeNumber = 0
            var emptySegments = 0

            for child in root.children {
                switch child.localName {
                case "wpt":
                    let point = try self.point(child)
                    if waypointsIndex == nil {
                        waypointsIndex = routes.count
                        routes.append(Route(name: fileName ?? "waypoints", kind: .waypoints, segments: []))
                    }
                    waypoints.append(point)
                case "rte":
                    routeNumber += 1
                    var name: String?
                    var points: [Waypoint] = []
                    for item in child.children {
                        switch item.localName {
                        case "name": name = name ?? Walker.nonEmpty(item.text)
                        case "rtept": points.append(try self.point(item))
                        default: continue
                        }
                    }
                    let routeName = name ?? "route \(routeNumber)"
                    if points.isEmpty {
                        notes.append("route '\(routeName)' (line \(line(child))) has no points and was skipped")
                    } else {
                        routes.append(Route(name: routeName, kind: .route, segments: [points]))
                    }
                case "trk":
                    trackNumber += 1
                    var name: String?
                    var segments: [[Waypoint]] = []
                    for item in child.children {
                        switch item.localName {
                        case "name": name = name ?? Walker.nonEmpty(item.text)
                        case "trkseg":
                            var points: [Waypoint] = []
                            for p in item.children where p.localName == "trkpt" {
                                points.append(try self.point(p))
                            }
                            if points.isEmpty { emptySegments += 1 } else { segments.append(points) }
                        default: continue
                        }
                    }
                    let trackName = name ?? "track \(trackNumber)"
                    if segments.isEmpty {
                        notes.append("track '\(trackName)' (line \(line(child))) has no points and was skipped")
                    } else {
                        routes.append(Route(name: trackName, kind: .track, segments: segments))
                    }
                default:
                    continue
                }
            }
            if let waypointsIndex { routes[waypointsIndex].segments = [waypoints] }
            guard !routes.isEmpty else {
                throw LocationError("line \(line(root)): no waypoints, routes or tracks (the GPX file has no points)")
            }
            if emptySegments > 0 {
                notes.insert("\(emptySegments) empty track segment\(emptySegments == 1 ? "" : "s") dropped", at: 0)
            }
            if zonelessTimes > 0 {
                notes.append("\(zonelessTimes) time\(zonelessTimes == 1 ? " has" : "s have") no time zone (first at line \(firstZonelessLine)) and \(zonelessTimes == 1 ? "was" : "were") read as UTC")
            }
            return (routes, notes)
        }

        static func nonEmpty(_ text: String) -> String? {
            let trimmed = RouteFormats.trimmed(text[...])
            return trimmed.isEmpty ? nil : String(trimmed)
        }

        /// A <wpt>, <rtept> or <trkpt>.
        mutating func point(_ node: GPXNode) throws(LocationError) -> Waypoint {
            let at = line(node)
            let tag = node.name
            guard let latText = node.attribute("lat") else { throw LocationError("line \(at): <\(tag)> has no lat attribute") }
            guard let lonText = node.attribute("lon") else { throw LocationError("line \(at): <\(tag)> has no lon attribute") }
            guard let latitude = RouteFormats.number(latText) else {
                throw LocationError("line \(at): <\(tag)> lat '\(latText)' is not a number")
            }
            guard let longitude = RouteFormats.number(lonText) else {
                throw LocationError("line \(at): <\(tag)> lon '\(lonText)' is not a number")
            }
            let coordinate: Coordinate
            do {
                coordinate = try Coordinate.validated(latitude: latitude, longitude: longitude)
            } catch {
                throw LocationError("line \(at): \(error.message)")
            }
            var waypoint = Waypoint(coordinate)
            var extensionSpeed: Double?
            for child in node.children {
                switch child.localName {
                case "ele":
                    guard waypoint.altitude == nil, let text = Walker.nonEmpty(child.text) else { continue }
                    guard let value = RouteFormats.number(text) else {
                        throw LocationError("line \(line(child)): <\(child.name)> '\(text)' is not a number")
                    }
                    waypoint.altitude = value
                case "time":
                    guard waypoint.time == nil, let text = Walker.nonEmpty(child.text) else { continue }
                    guard let parsed = ISOTime.parse(text) else {
                        throw LocationError("line \(line(child)): <\(child.name)> '\(text)' is not an ISO 8601 time")
                    }
                    if !parsed.hadZone {
                        if zonelessTimes == 0 { firstZonelessLine = line(child) }
                        zonelessTimes += 1
                    }
                    waypoint.time = parsed.seconds
                case "name":
                    if waypoint.name == nil { waypoint.name = Walker.nonEmpty(child.text) }
                case "speed":
                    if waypoint.speed == nil { waypoint.speed = try speed(child) }
                case "extensions":
                    if extensionSpeed == nil { extensionSpeed = try speedInExtensions(child) }
                default:
                    continue
                }
            }
            if waypoint.speed == nil { waypoint.speed = extensionSpeed }
            return waypoint
        }

        func speed(_ node: GPXNode) throws(LocationError) -> Double? {
            guard let text = Walker.nonEmpty(node.text) else { return nil }
            guard let value = RouteFormats.number(text), value >= 0 else {
                throw LocationError("line \(line(node)): <\(node.name)> '\(text)' is not a speed in metres per second")
            }
            return value
        }

        /// The first <speed> (any prefix: gpxtpx:speed in Garmin's
        /// TrackPointExtension, or a bare speed) inside <extensions>.
        func speedInExtensions(_ node: GPXNode) throws(LocationError) -> Double? {
            var pending = node.children.reversed() as [GPXNode]
            while let next = pending.popLast() {
                if next.localName == "speed" { return try speed(next) }
                pending.append(contentsOf: next.children.reversed())
            }
            return nil
        }
    }
}
