// Route import and export: GPX 1.0/1.1 (GPXReader.swift), GeoJSON, and
// "lat,lon lat,lon" lists from the command line. No Foundation.

#if canImport(Glibc)
import Glibc
#endif
import PincerJSON
import PincerPluginKit

public enum RouteFormats {
    /// GPX 1.0 or 1.1: every <trk> (each <trkseg> a segment; empty segments
    /// dropped and counted), <rte> (one segment), and the <wpt> list (one
    /// route of kind .waypoints, placed where the first <wpt> is) — every
    /// route in the file, in document order, named from <name> or "track 1",
    /// "route 1" (numbered among the file's <trk> or <rte>); the <wpt> list
    /// is named after the file (<metadata><name>, GPX 1.0 <gpx><name>) or
    /// "waypoints". Tracks and routes without any point are skipped
    /// (with a note).
    ///
    /// Times: ISO 8601 with Z, with a zone offset, with fractional seconds,
    /// or without a zone (then UTC, and `notes` says so); missing times are
    /// nil. Speeds: GPX 1.0 <speed>, else the first <speed> inside
    /// <extensions> (Garmin TrackPointExtension <gpxtpx:speed>).
    /// Unknown elements are skipped.
    ///
    /// Errors name the place: "line L, column C: ..." for XML syntax,
    /// "line L: <trkpt> has no lat attribute", "line L: latitude 91.0 is
    /// outside -90...90", "line L: <time> '2020-13-01' is not an ISO 8601
    /// time". A file without any point is refused ("no waypoints, routes or
    /// tracks").
    public static func readGPX(_ bytes: [UInt8]) throws(LocationError) -> (routes: [Route], notes: [String]) {
        try GPXReader.read(bytes)
    }

    /// GeoJSON: a LineString or MultiLineString geometry, a Feature or a
    /// FeatureCollection of them ([lon, lat(, alt)] positions;
    /// properties.name; properties.coordTimes or properties.times: ISO 8601
    /// strings or null, nested per line for a MultiLineString or flat;
    /// properties.speeds likewise, in m/s). Routes are of kind .geojson, named
    /// from properties.name or "route 1" etc. A line of exactly two equal
    /// positions (with equal times and speeds) is read as one point, the way
    /// `writeGeoJSON` writes a single-point segment; lines cut at the
    /// antimeridian stay separate segments (playback jumps between the two
    /// ends of the cut, which are the same place). Errors name the JSON path
    /// ("features[1].geometry.coordinates[3]: latitude 91.0 is outside
    /// -90...90") or, for syntax, "line L, column C: ...".
    public static func readGeoJSON(_ bytes: [UInt8]) throws(LocationError) -> [Route] {
        try GeoJSONReader.read(bytes).routes
    }

    /// "lat,lon lat,lon ..." or "lat,lon;lat,lon" from the command line
    /// (spaces around commas and semicolons are allowed). One route of kind
    /// .list named "waypoint list", with one segment.
    public static func parseWaypointList(_ text: String) throws(LocationError) -> Route {
        // Join "lat, lon" into "lat,lon" so that spaces only separate points.
        var compact: [Character] = []
        var pendingSpace = false
        for c in text {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                pendingSpace = true
                continue
            }
            if pendingSpace, c != ",", c != ";", let last = compact.last, last != ",", last != ";" {
                compact.append(" ")
            }
            pendingSpace = false
            compact.append(c)
        }
        let items = String(compact).split(whereSeparator: { $0 == " " || $0 == ";" })
        guard !items.isEmpty else {
            throw LocationError("no points given (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
        }
        var points: [Waypoint] = []
        for (index, item) in items.enumerated() {
            let parts = item.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw LocationError("point \(index + 1) '\(item)' is not 'lat,lon' (expected \"lat,lon lat,lon ...\" or \"lat,lon;lat,lon\")")
            }
            guard let latitude = number(parts[0]) else {
                throw LocationError("point \(index + 1) '\(item)': latitude '\(parts[0])' is not a number")
            }
            guard let longitude = number(parts[1]) else {
                throw LocationError("point \(index + 1) '\(item)': longitude '\(parts[1])' is not a number")
            }
            do {
                points.append(Waypoint(try Coordinate.validated(latitude: latitude, longitude: longitude)))
            } catch {
                throw LocationError("point \(index + 1) '\(item)': \(error.message)")
            }
        }
        return Route(name: "waypoint list", kind: .list, segments: [points])
    }

    /// GPX 1.1: .waypoints routes as <wpt> (first, as the schema orders
    /// them; when there is one such route its name goes in
    /// <metadata><name>, where readGPX takes it from), .route routes as <rte> (one per segment), every other kind as
    /// <trk> with one <trkseg> per non-empty segment. Times as ISO 8601 UTC,
    /// with milliseconds when fractional; speeds in Garmin's
    /// TrackPointExtension v2 (<gpxtpx:speed>); numbers as plain decimals;
    /// longitude 180 as -180 (the schema's range is -180..<180). Valid
    /// against the GPX 1.1 XSD.
    public static func writeGPX(_ routes: [Route], creator: String) -> [UInt8] {
        GPXWriter.write(routes, creator: creator)
    }

    /// RFC 7946: a FeatureCollection with one Feature per route: a
    /// LineString (a MultiLineString for several non-empty segments, or for a
    /// segment cut at the antimeridian) of [lon, lat(, alt)], properties.name,
    /// properties.coordTimes (ISO 8601 UTC or null, nested per line for a
    /// MultiLineString) when any point has a time, and properties.speeds
    /// likewise when any point has a speed. Coordinates to 7 decimal places,
    /// altitudes and speeds to 3; a single-point segment is a line of that
    /// point twice; a route without points has a null geometry. See
    /// `GeoJSONWriter` for the antimeridian.
    public static func writeGeoJSON(_ routes: [Route]) -> [UInt8] {
        GeoJSONWriter.write(routes)
    }

    /// Detect by content: '<' → GPX, '{' → GeoJSON (after a byte order mark
    /// and white space).
    public static func read(_ bytes: [UInt8]) throws(LocationError) -> (routes: [Route], notes: [String]) {
        var k = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { k = 3 }
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            throw LocationError("line 1, column 1: the file is UTF-16; only UTF-8 is supported")
        }
        while k < bytes.count, bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x0A || bytes[k] == 0x0D { k += 1 }
        guard k < bytes.count else { throw LocationError("the file is empty (expected GPX or GeoJSON)") }
        switch bytes[k] {
        case UInt8(ascii: "<"): return try readGPX(bytes)
        case UInt8(ascii: "{"): return try GeoJSONReader.read(bytes)
        default:
            var line = 1, column = 1
            for b in bytes[..<k] {
                if b == 0x0A { line += 1; column = 1 } else if b != 0x0D { column += 1 }
            }
            throw LocationError("line \(line), column \(column): neither GPX nor GeoJSON (expected '<' or '{' first)")
        }
    }

    // MARK: Shared helpers

    /// A decimal number as XML Schema and GPX write them ("-12.5", "3",
    /// ".5", optionally with an exponent), without surrounding white space;
    /// nil for anything else ("nan", "inf", "0x1p3", "", "1,5") or an
    /// infinite result.
    static func number(_ text: some StringProtocol) -> Double? {
        let t = trimmed(Substring(text))
        var digits = 0, k = t.utf8.startIndex
        let utf8 = t.utf8
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        if k < utf8.endIndex, utf8[k] == UInt8(ascii: "+") || utf8[k] == UInt8(ascii: "-") { k = utf8.index(after: k) }
        while k < utf8.endIndex, isDigit(utf8[k]) { digits += 1; k = utf8.index(after: k) }
        if k < utf8.endIndex, utf8[k] == UInt8(ascii: ".") {
            k = utf8.index(after: k)
            while k < utf8.endIndex, isDigit(utf8[k]) { digits += 1; k = utf8.index(after: k) }
        }
        guard digits > 0 else { return nil }
        if k < utf8.endIndex, utf8[k] == UInt8(ascii: "e") || utf8[k] == UInt8(ascii: "E") {
            k = utf8.index(after: k)
            if k < utf8.endIndex, utf8[k] == UInt8(ascii: "+") || utf8[k] == UInt8(ascii: "-") { k = utf8.index(after: k) }
            var exponentDigits = 0
            while k < utf8.endIndex, isDigit(utf8[k]) { exponentDigits += 1; k = utf8.index(after: k) }
            guard exponentDigits > 0 else { return nil }
        }
        guard k == utf8.endIndex, let value = Double(String(t)), value.isFinite else { return nil }
        return value
    }

    /// Without leading and trailing XML white space.
    static func trimmed(_ text: Substring) -> Substring {
        func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }

    /// A finite double as a plain decimal (no exponent: xsd:decimal has
    /// none) that reads back as the same double. Magnitudes below 1e-6 are
    /// rounded to 23 decimal places first, so that no value needs more than
    /// 24 digits (libxml2's limit for xsd:decimal; 1e-23 degrees is far
    /// below any meaning).
    static func decimal(_ value: Double) -> String {
        let shortest = String(value)
        guard let e = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return shortest }
        guard let exponent = Int(shortest[shortest.index(after: e)...]) else { return shortest }
        var mantissa = shortest[..<e]
        var negative = false
        if mantissa.hasPrefix("-") { negative = true; mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integerPart = String(parts[0])
        let fractionPart = parts.count > 1 ? String(parts[1]) : ""
        var digits = Array(integerPart + fractionPart)
        var point = integerPart.count + exponent // digits before the decimal point
        if point <= 0 {
            digits = Array(repeating: "0", count: 1 - point) + digits
            point = 1
        } else if point > digits.count {
            digits += Array(repeating: "0", count: point - digits.count)
        }
        if digits.count - point > 23 {
            // Round half up to 23 places, carrying leftwards.
            let roundUp = digits[point + 23] >= "5"
            digits.removeLast(digits.count - point - 23)
            var k = digits.count - 1
            var carry = roundUp
            while carry, k >= 0 {
                if digits[k] == "9" { digits[k] = "0"; k -= 1 } else { digits[k] = Character(UnicodeScalar(digits[k].asciiValue! + 1)); carry = false }
            }
            if carry { digits.insert("1", at: 0); point += 1 }
        }
        var integer = String(digits[..<point])
        var fraction = String(digits[point...])
        while fraction.hasSuffix("0") { fraction.removeLast() }
        while integer.count > 1, integer.hasPrefix("0") { integer.removeFirst() }
        let body = fraction.isEmpty ? integer + ".0" : integer + "." + fraction
        return negative && body != "0.0" ? "-" + body : body
    }
}

// MARK: - ISO 8601

/// ISO 8601 date-times (the xsd:dateTime and RFC 3339 profile GPX and
/// GeoJSON tools write) parsed and formatted without Foundation.
public enum ISOTime {
    /// "YYYY-MM-DDThh:mm:ss", optionally with a fraction of a second (any
    /// number of digits), then "Z", "+hh:mm", "-hh:mm", "+hhmm", "+hh" or no
    /// zone (`hadZone` false: the caller decides; GPX reading takes UTC).
    /// "t", "z" and a space instead of "T" are accepted; 24:00:00 is the end
    /// of the day; second 60 (a leap second) is accepted. Returns seconds
    /// since 1970-01-01T00:00:00Z, or nil for anything else, including
    /// impossible dates ("2020-13-01", "2019-02-29").
    public static func parse(_ text: String) -> (seconds: Double, hadZone: Bool)? {
        let s = Array(RouteFormats.trimmed(text[...]).utf8)
        var k = 0
        func digits(_ count: Int) -> Int? {
            guard k + count <= s.count else { return nil }
            var value = 0
            for n in 0..<count {
                let b = s[k + n]
                guard b >= 0x30, b <= 0x39 else { return nil }
                value = value * 10 + Int(b - 0x30)
            }
            k += count
            return value
        }
        func expect(_ c: Character) -> Bool {
            guard k < s.count, s[k] == c.asciiValue! else { return false }
            k += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else { return nil }
        guard k < s.count, s[k] == UInt8(ascii: "T") || s[k] == UInt8(ascii: "t") || s[k] == UInt8(ascii: " ") else { return nil }
        k += 1
        guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2) else { return nil }
        var fraction: [UInt8] = []
        if k < s.count, s[k] == UInt8(ascii: ".") || s[k] == UInt8(ascii: ",") {
            let start = k
            k += 1
            while k < s.count, s[k] >= 0x30, s[k] <= 0x39 { k += 1 }
            guard k > start + 1 else { return nil }
            // Digits past the 18th cannot change a Double of a time.
            fraction = Array(s[(start + 1)..<min(k, start + 19)])
            while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        }
        var offset = 0
        var hadZone = false
        if k < s.count {
            hadZone = true
            if s[k] == UInt8(ascii: "Z") || s[k] == UInt8(ascii: "z") {
                k += 1
            } else if s[k] == UInt8(ascii: "+") || s[k] == UInt8(ascii: "-") {
                let sign = s[k] == UInt8(ascii: "-") ? -1 : 1
                k += 1
                guard let zoneHours = digits(2), zoneHours <= 23 else { return nil }
                var zoneMinutes = 0
                if k < s.count {
                    _ = expect(":")
                    guard let m = digits(2), m <= 59 else { return nil }
                    zoneMinutes = m
                }
                offset = sign * (zoneHours * 3600 + zoneMinutes * 60)
            } else {
                return nil
            }
        }
        guard k == s.count else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        guard minute <= 59, second <= 60 else { return nil }
        guard hour <= 23 || (hour == 24 && minute == 0 && second == 0 && fraction.isEmpty) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return (seconds(whole: whole, fraction: fraction), hadZone)
    }

    /// `whole` plus the decimal fraction `0.<digits>`, correctly rounded
    /// (through a decimal string, so that "1969-12-31T23:59:59.999Z" is
    /// exactly -0.001 and format ∘ parse keeps millisecond times).
    private static func seconds(whole: Int, fraction digits: [UInt8]) -> Double {
        guard !digits.isEmpty else { return Double(whole) }
        let text = String(decoding: digits, as: UTF8.self)
        if whole >= 0 { return Double("\(whole).\(text)") ?? Double(whole) }
        // whole + 0.d = -((|whole| - 1) + (1 - 0.d)); 1 - 0.d = (10^n - d) / 10^n.
        var power: UInt64 = 1
        for _ in digits { power *= 10 }
        let complement = power - (UInt64(text) ?? 0)
        return Double("-\(-whole - 1).\(pad(Int(complement), digits.count))") ?? Double(whole)
    }

    /// "YYYY-MM-DDThh:mm:ssZ" in UTC, with ".mmm" when the time rounded to
    /// milliseconds has a fraction. An empty string for a time that is not
    /// finite or lies beyond year ±100000 or so.
    public static func format(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 3e12 else { return "" }
        let milliseconds = Int64((seconds * 1000).rounded())
        var whole = milliseconds / 1000, millis = milliseconds % 1000
        if millis < 0 { millis += 1000; whole -= 1 }
        var days = whole / 86_400, secondOfDay = whole % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civilFromDays(Int(days))
        let hour = Int(secondOfDay / 3600), minute = Int(secondOfDay / 60 % 60), second = Int(secondOfDay % 60)
        var text = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        text += "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
        if millis != 0 { text += "." + pad(Int(millis), 3) }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
    }

    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
    /// days_from_civil).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (civil_from_days).
    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

// MARK: - GeoJSON reading

enum GeoJSONReader {
    static func read(_ bytes: [UInt8]) throws(LocationError) -> (routes: [Route], notes: [String]) {
        let json: JSON
        do {
            json = try JSON.parse(bytes: bytes)
        } catch {
            throw LocationError(error.description)
        }
        var reader = Walker()
        try reader.top(json)
        guard !reader.routes.isEmpty else {
            throw LocationError("no waypoints, routes or tracks (the GeoJSON has no LineString or MultiLineString with points)")
        }
        var notes: [String] = []
        if reader.emptyLines > 0 {
            notes.append("\(reader.emptyLines) empty line\(reader.emptyLines == 1 ? "" : "s") dropped")
        }
        if reader.zonelessTimes > 0 {
            notes.append("\(reader.zonelessTimes) time\(reader.zonelessTimes == 1 ? " has" : "s have") no time zone and \(reader.zonelessTimes == 1 ? "was" : "were") read as UTC")
        }
        return (reader.routes, notes)
    }

    private struct Walker {
        var routes: [Route] = []
        var number = 0
        var emptyLines = 0
        var zonelessTimes = 0

        static func place(_ path: String) -> String { path.isEmpty ? "the top level" : path }

        static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

        static func type(of value: JSON, at path: String) throws(LocationError) -> String {
            guard value.objectValue != nil else {
                throw LocationError("\(place(path)): expected a GeoJSON object, found \(value.typeName)")
            }
            guard let type = value["type"]?.stringValue else {
                throw LocationError("\(place(path)): the object has no \"type\" string")
            }
            return type
        }

        mutating func top(_ json: JSON) throws(LocationError) {
            switch try Walker.type(of: json, at: "") {
            case "FeatureCollection":
                guard let features = json["features"]?.arrayValue else {
                    throw LocationError("the top level: a FeatureCollection needs a \"features\" array")
                }
                for (index, feature) in features.enumerated() {
                    let path = "features[\(index)]"
                    let type = try Walker.type(of: feature, at: path)
                    guard type == "Feature" else {
                        throw LocationError("\(path): expected a Feature, found a \(type)")
                    }
                    try self.feature(feature, at: path)
                }
            case "Feature":
                try feature(json, at: "")
            case "LineString", "MultiLineString":
                try geometry(json, properties: nil, at: "", propertiesPath: "")
            case let other:
                throw LocationError("the top level: GeoJSON type \(other) is not supported (expected a LineString or MultiLineString, or a Feature or FeatureCollection of them)")
            }
        }

        mutating func feature(_ feature: JSON, at path: String) throws(LocationError) {
            let propertiesPath = Walker.join(path, "properties")
            var properties: JSON?
            switch feature["properties"] {
            case nil, .null?: properties = nil
            case let value? where value.objectValue != nil: properties = value
            case let value?: throw LocationError("\(propertiesPath): expected an object or null, found \(value.typeName)")
            }
            let geometryPath = Walker.join(path, "geometry")
            guard let geometry = feature["geometry"], geometry != .null else {
                throw LocationError("\(geometryPath): the Feature has no geometry")
            }
            let type = try Walker.type(of: geometry, at: geometryPath)
            guard type == "LineString" || type == "MultiLineString" else {
                throw LocationError("\(geometryPath): geometry type \(type) is not supported (only LineString and MultiLineString)")
            }
            try self.geometry(geometry, properties: properties, at: geometryPath, propertiesPath: propertiesPath)
        }

        mutating func geometry(_ geometry: JSON, properties: JSON?, at path: String, propertiesPath: String) throws(LocationError) {
            number += 1
            let coordinatesPath = Walker.join(path, "coordinates")
            guard let coordinates = geometry["coordinates"]?.arrayValue else {
                throw LocationError("\(coordinatesPath): expected an array of positions")
            }
            var lines: [[JSON]] = []
            var linePaths: [String] = []
            if geometry["type"]?.stringValue == "LineString" {
                lines = [coordinates]
                linePaths = [coordinatesPath]
            } else {
                for (index, line) in coordinates.enumerated() {
                    guard let positions = line.arrayValue else {
                        throw LocationError("\(coordinatesPath)[\(index)]: expected an array of positions, found \(line.typeName)")
                    }
                    lines.append(positions)
                    linePaths.append("\(coordinatesPath)[\(index)]")
                }
            }
            var segments: [[Waypoint]] = []
            for (line, linePath) in zip(lines, linePaths) {
                var points: [Waypoint] = []
                for (index, position) in line.enumerated() {
                    points.append(try Walker.position(position, at: "\(linePath)[\(index)]"))
                }
                segments.append(points)
            }

            var name = "route \(number)"
            if let properties {
                if let value = properties["name"], value != .null {
                    guard let text = value.stringValue else {
                        throw LocationError("\(Walker.join(propertiesPath, "name")): expected a string, found \(value.typeName)")
                    }
                    name = text
                }
                let timesKey = properties["coordTimes"] != nil ? "coordTimes" : "times"
                if let times = properties[timesKey], times != .null {
                    let path = Walker.join(propertiesPath, timesKey)
                    let values = try Walker.perPoint(times, segments: segments, at: path)
                    for (s, segment) in values.enumerated() {
                        for (p, item) in segment.enumerated() {
                            let (value, itemPath) = item
                            if value == .null { continue }
                            guard let text = value.stringValue else {
                                throw LocationError("\(itemPath): expected an ISO 8601 time string or null, found \(value.typeName)")
                            }
                            guard let parsed = ISOTime.parse(text) else {
                                throw LocationError("\(itemPath): '\(text)' is not an ISO 8601 time")
                            }
                            if !parsed.hadZone { zonelessTimes += 1 }
                            segments[s][p].time = parsed.seconds
                        }
                    }
                }
                if let speeds = properties["speeds"], speeds != .null {
                    let values = try Walker.perPoint(speeds, segments: segments, at: Walker.join(propertiesPath, "speeds"))
                    for (s, segment) in values.enumerated() {
                        for (p, item) in segment.enumerated() {
                            let (value, itemPath) = item
                            if value == .null { continue }
                            guard let speed = value.doubleValue, speed >= 0 else {
                                throw LocationError("\(itemPath): expected a speed in metres per second or null")
                            }
                            segments[s][p].speed = speed
                        }
                    }
                }
            }
            // A line of one point written twice (a single-point segment, as
            // GeoJSONWriter writes it: RFC 7946 lines have two positions or more) is that point.
            for i in segments.indices where segments[i].count == 2 && segments[i][0] == segments[i][1] {
                segments[i].removeLast()
            }
            let kept = segments.filter { !$0.isEmpty }
            emptyLines += segments.count - kept.count
            if !kept.isEmpty {
                routes.append(Route(name: name, kind: .geojson, segments: kept))
            }
        }

        /// A per-point property: nested per line (as togeojson writes
        /// coordTimes for a MultiLineString) or one flat array.
        static func perPoint(_ value: JSON, segments: [[Waypoint]], at path: String) throws(LocationError) -> [[(JSON, String)]] {
            guard let items = value.arrayValue else {
                throw LocationError("\(path): expected an array, found \(value.typeName)")
            }
            let total = segments.reduce(0) { $0 + $1.count }
            let nested = segments.count > 1 || items.first?.arrayValue != nil
            if nested, items.count == segments.count, items.allSatisfy({ $0.arrayValue != nil }) {
                var result: [[(JSON, String)]] = []
                for (s, item) in items.enumerated() {
                    let inner = item.arrayValue!
                    guard inner.count == segments[s].count else {
                        throw LocationError("\(path)[\(s)]: \(inner.count) values for \(segments[s].count) positions")
                    }
                    result.append(inner.enumerated().map { ($0.element, "\(path)[\(s)][\($0.offset)]") })
                }
                return result
            }
            guard items.count == total else {
                throw LocationError("\(path): \(items.count) values for \(total) positions")
            }
            var result: [[(JSON, String)]] = []
            var k = 0
            for segment in segments {
                var inner: [(JSON, String)] = []
                for _ in segment {
                    inner.append((items[k], "\(path)[\(k)]"))
                    k += 1
                }
                result.append(inner)
            }
            return result
        }

        static func position(_ value: JSON, at path: String) throws(LocationError) -> Waypoint {
            guard let items = value.arrayValue, items.count >= 2 else {
                throw LocationError("\(path): a position must be [longitude, latitude] or [longitude, latitude, altitude]")
            }
            guard let longitude = items[0].doubleValue, let latitude = items[1].doubleValue else {
                throw LocationError("\(path): longitude and latitude must be numbers")
            }
            let coordinate: Coordinate
            do {
                coordinate = try Coordinate.validated(latitude: latitude, longitude: longitude)
            } catch {
                throw LocationError("\(path): \(error.message)")
            }
            var altitude: Double?
            if items.count >= 3, items[2] != .null {
                guard let value = items[2].doubleValue else { throw LocationError("\(path): the altitude must be a number") }
                altitude = value
            }
            return Waypoint(coordinate, altitude: altitude)
        }
    }
}

// MARK: - Writers

/// RFC 7946 output. Positions are [longitude, latitude(, altitude)] with
/// longitude and latitude rounded to 7 decimal places (1.1 cm: more than any
/// receiver resolves, and what devices record; §11.2 asks for no more
/// precision than is meaningful) and altitudes and speeds to 3 (a
/// millimetre). A line is never drawn across the antimeridian (§3.1.9): a
/// leg whose shorter way crosses it (longitudes more than 180° apart) is
/// cut where its great circle meets ±180, the crossing point written at the
/// end of one line and the start of the next (a MultiLineString), with its
/// time, altitude and speed interpolated at its fraction of the leg when
/// both ends have one. A line has at least two positions (§3.1.4): a
/// single-point segment is written as that point twice, which the reader
/// reads back as one.
enum GeoJSONWriter {
    static func write(_ routes: [Route]) -> [UInt8] {
        var features: [JSON] = []
        for route in routes {
            let lines = route.segments.filter { !$0.isEmpty }.flatMap(cutAtAntimeridian)
            let geometry: JSON
            switch lines.count {
            case 0: geometry = .null   // RFC 7946 §3.2: an unlocated Feature
            case 1: geometry = .object([("type", .string("LineString")), ("coordinates", line(lines[0]))])
            default: geometry = .object([("type", .string("MultiLineString")), ("coordinates", .array(lines.map(line)))])
            }
            func perPoint(_ value: (Waypoint) -> JSON) -> JSON {
                let values = lines.map { JSON.array($0.map(value)) }
                return values.count == 1 ? values[0] : .array(values)
            }
            var properties: [(String, JSON)] = [("name", .string(route.name))]
            let points = lines.flatMap { $0 }
            if points.contains(where: { $0.time.map { !ISOTime.format($0).isEmpty } ?? false }) {
                properties.append(("coordTimes", perPoint { point in
                    guard let time = point.time else { return .null }
                    let text = ISOTime.format(time)
                    return text.isEmpty ? .null : .string(text)
                }))
            }
            if points.contains(where: { $0.speed?.isFinite ?? false }) {
                properties.append(("speeds", perPoint { point in
                    guard let speed = point.speed, speed.isFinite else { return .null }
                    return .double(rounded(speed, 3))
                }))
            }
            features.append(.object([("type", .string("Feature")), ("properties", .object(properties)), ("geometry", geometry)]))
        }
        var out = JSON.object([("type", .string("FeatureCollection")), ("features", .array(features))]).serializedBytes()
        out.append(0x0A)
        return out
    }

    static func line(_ points: [Waypoint]) -> JSON {
        .array(points.map { point in
            var position: [JSON] = [.double(rounded(point.coordinate.longitude, 7)), .double(rounded(point.coordinate.latitude, 7))]
            if let altitude = point.altitude, altitude.isFinite { position.append(.double(rounded(altitude, 3))) }
            return .array(position)
        })
    }

    /// `x` to `places` decimal places (the nearest double to the rounded
    /// decimal, which prints as that decimal).
    static func rounded(_ x: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        guard abs(x) < 1e15 else { return x }
        let r = (x * scale).rounded() / scale
        return r == 0 ? 0 : r   // no "-0.0"
    }

    /// One segment as lines none of which crosses the antimeridian, each of
    /// at least two positions.
    static func cutAtAntimeridian(_ segment: [Waypoint]) -> [[Waypoint]] {
        var points = segment
        // A point on the antimeridian takes the side of the point before it
        // (the first point: of the first point after it off the meridian),
        // so that only legs between the two sides are cut.
        for i in points.indices where abs(points[i].coordinate.longitude) == 180 {
            let neighbour = i > 0 ? points[i - 1].coordinate.longitude
                : points.first(where: { abs($0.coordinate.longitude) != 180 })?.coordinate.longitude
            if let neighbour { points[i].coordinate.longitude = neighbour < 0 ? -180 : 180 }
        }
        guard let first = points.first else { return [] }
        var lines: [[Waypoint]] = [[first]]
        for (p, q) in zip(points, points.dropFirst()) {
            let a = p.coordinate, b = q.coordinate
            if abs(b.longitude - a.longitude) > 180 {
                let side: Double = a.longitude < 0 ? -1 : 1
                if abs(a.longitude) == 180 {
                    // p is on the antimeridian already: the next line starts there, on q's side.
                    var start = p
                    start.coordinate.longitude = -side * 180
                    lines.append([start])
                } else {
                    var latitude = Spherical.crossingLatitude(a, b, longitude: 180)
                    if !latitude.isFinite { latitude = (a.latitude + b.latitude) / 2 }   // both at a pole
                    let crossing = Coordinate(latitude: latitude, longitude: side * 180)
                    let whole = Spherical.distance(a, b, radius: 1)
                    let f = whole > 0 ? min(1, max(0, Spherical.distance(a, crossing, radius: 1) / whole)) : 0
                    func between(_ x: Double?, _ y: Double?) -> Double? {
                        guard let x, let y, x.isFinite, y.isFinite else { return nil }
                        return x + (y - x) * f
                    }
                    var end = Waypoint(crossing, altitude: between(p.altitude, q.altitude), time: between(p.time, q.time),
                                       speed: between(p.speed, q.speed))
                    lines[lines.count - 1].append(end)
                    end.coordinate.longitude = -side * 180
                    lines.append([end])
                }
            }
            lines[lines.count - 1].append(q)
        }
        return lines.map { $0.count == 1 ? [$0[0], $0[0]] : $0 }
    }
}

enum GPXWriter {
    static let trackPointExtensionV2 = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"

    static func write(_ routes: [Route], creator: String) -> [UInt8] {
        let hasSpeeds = routes.contains { $0.segments.contains { $0.contains { $0.speed?.isFinite ?? false } } }
        var out = ""
        out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<gpx version=\"1.1\" creator=\"\(XMLText.escape(creator, attribute: true))\""
        out += " xmlns=\"http://www.topografix.com/GPX/1/1\""
        out += " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\""
        if hasSpeeds { out += " xmlns:gpxtpx=\"\(trackPointExtensionV2)\"" }
        out += " xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd"
        if hasSpeeds { out += " \(trackPointExtensionV2) http://www.garmin.com/xmlschemas/TrackPointExtensionv2.xsd" }
        out += "\">\n"
        // The schema's order: <metadata>, every <wpt>, then every <rte>, then every <trk>.
        let waypointLists = routes.filter { $0.kind == .waypoints }
        if waypointLists.count == 1, !waypointLists[0].name.isEmpty {
            out += "  <metadata>\n    <name>\(XMLText.escape(waypointLists[0].name, attribute: false))</name>\n  </metadata>\n"
        }
        for route in routes where route.kind == .waypoints {
            for point in route.points { writePoint(point, tag: "wpt", indent: "  ", into: &out) }
        }
        for route in routes where route.kind == .route {
            for segment in route.segments where !segment.isEmpty {
                out += "  <rte>\n"
                if !route.name.isEmpty { out += "    <name>\(XMLText.escape(route.name, attribute: false))</name>\n" }
                for point in segment { writePoint(point, tag: "rtept", indent: "    ", into: &out) }
                out += "  </rte>\n"
            }
        }
        for route in routes where route.kind != .route && route.kind != .waypoints {
            out += "  <trk>\n"
            if !route.name.isEmpty { out += "    <name>\(XMLText.escape(route.name, attribute: false))</name>\n" }
            for segment in route.segments where !segment.isEmpty {
                out += "    <trkseg>\n"
                for point in segment { writePoint(point, tag: "trkpt", indent: "      ", into: &out) }
                out += "    </trkseg>\n"
            }
            out += "  </trk>\n"
        }
        out += "</gpx>\n"
        return Array(out.utf8)
    }

    static func writePoint(_ point: Waypoint, tag: String, indent: String, into out: inout String) {
        // The schema's longitudes are -180..<180: the 180th meridian is written as -180.
        let longitude = point.coordinate.longitude == 180 ? -180 : point.coordinate.longitude
        out += "\(indent)<\(tag) lat=\"\(RouteFormats.decimal(point.coordinate.latitude))\" lon=\"\(RouteFormats.decimal(longitude))\""
        var body = ""
        let inner = indent + "  "
        // wptType's order: ele, time, ..., name, ..., extensions.
        if let altitude = point.altitude, altitude.isFinite {
            body += "\(inner)<ele>\(RouteFormats.decimal(altitude))</ele>\n"
        }
        if let time = point.time {
            let text = ISOTime.format(time)
            if !text.isEmpty { body += "\(inner)<time>\(text)</time>\n" }
        }
        if let name = point.name { body += "\(inner)<name>\(XMLText.escape(name, attribute: false))</name>\n" }
        if let speed = point.speed, speed.isFinite {
            body += "\(inner)<extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>\(RouteFormats.decimal(speed))</gpxtpx:speed></gpxtpx:TrackPointExtension></extensions>\n"
        }
        if body.isEmpty {
            out += "/>\n"
        } else {
            out += ">\n" + body + "\(indent)</\(tag)>\n"
        }
    }
}
