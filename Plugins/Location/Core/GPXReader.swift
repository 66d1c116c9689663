// GPX reading: a small strict XML 1.0 reader that keeps character data (GPX
// puts its values in elements: <time>, <ele>, <name>, <speed>), and the walk
// from its tree to routes.
//
// The XML reader works on UTF-8 bytes. Accepted: elements, self-closing
// tags, attributes quoted with " or ', the five predefined entities, decimal
// and hexadecimal character references, comments, processing instructions
// (the <?xml ...?> declaration first of all), CDATA sections (their text is
// kept), a UTF-8 byte order mark. Line ends in text are normalised to LF as
// XML requires. Refused, with the line and column (columns count characters,
// from 1): empty input, UTF-16, invalid UTF-8 or control characters,
// mismatched or unclosed tags, unknown entities or '&' without ';',
// attributes without a value or quotes, duplicate attributes, '<' in an
// attribute value, text or a second element after the root, text before the
// root, DOCTYPE, nesting deeper than `GPXXML.maximumDepth`. Namespaces are
// not interpreted: GPX elements are matched by their local name (the part
// after any prefix), so `gpx:trkpt` and `trkpt` are the same.

#if canImport(Glibc)
import Glibc
#endif

/// One element of a parsed document.
struct GPXNode: Sendable {
    /// The qualified name as written (`gpxtpx:speed`).
    var name: String
    /// In document order, references resolved, attribute-value
    /// normalisation applied (a literal tab or line break becomes a space).
    var attributes: [(name: String, value: String)]
    var children: [GPXNode]
    /// The element's own character data (not its children's), CDATA
    /// included, references resolved, line ends normalised to LF.
    var text: String
    /// Byte offset of the `<` of the start tag.
    var offset: Int

    /// The name without its namespace prefix.
    var localName: Substring {
        if let colon = name.lastIndex(of: ":") { return name[name.index(after: colon)...] }
        return name[...]
    }

    func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }
}

struct GPXDocument: Sendable {
    var root: GPXNode
    /// Byte offsets where each line starts (for positions in messages).
    fileprivate var lineStarts: [Int]
    fileprivate var bytes: [UInt8]

    /// The 1-based line and column (in characters) of a byte offset.
    func position(of offset: Int) -> (line: Int, column: Int) {
        GPXXML.position(of: offset, lineStarts: lineStarts, bytes: bytes)
    }

    func line(of node: GPXNode) -> Int { position(of: node.offset).line }
}

enum GPXXML {
    /// Deeper documents are refused; GPX needs about six levels.
    static let maximumDepth = 256

    static func parse(_ bytes: [UInt8]) throws(LocationError) -> GPXDocument {
        var reader = XMLReader(bytes: bytes)
        let root = try reader.document()
        return GPXDocument(root: root, lineStarts: reader.lineStarts, bytes: bytes)
    }

    fileprivate static func position(of offset: Int, lineStarts: [Int], bytes: [UInt8]) -> (line: Int, column: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        var column = 1
        var i = lineStarts[low]
        let end = min(offset, bytes.count)
        while i < end {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return (low + 1, column)
    }
}

private struct XMLReader {
    let bytes: [UInt8]
    var i = 0
    var lineStarts: [Int] = [0]

    init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Errors

    func error(at offset: Int, _ message: String) -> LocationError {
        let p = GPXXML.position(of: offset, lineStarts: lineStarts, bytes: bytes)
        return LocationError("line \(p.line), column \(p.column): \(message)")
    }

    func describe(_ offset: Int) -> String {
        let p = GPXXML.position(of: offset, lineStarts: lineStarts, bytes: bytes)
        return "line \(p.line), column \(p.column)"
    }

    // MARK: Bytes

    var atEnd: Bool { i >= bytes.count }

    func peek(_ ahead: Int = 0) -> UInt8? {
        i + ahead < bytes.count ? bytes[i + ahead] : nil
    }

    func startsWith(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard i + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { buffer in
            for k in 0..<count where bytes[i + k] != buffer[k] { return false }
            return true
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    /// Bytes >= 0x80 (parts of non-ASCII characters) are accepted in names.
    static func isNameStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x3A || b >= 0x80
    }

    static func isNameChar(_ b: UInt8) -> Bool {
        isNameStart(b) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E
    }

    static func isXMLChar(_ c: UInt32) -> Bool {
        c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF)
    }

    mutating func skipSpace() {
        while let b = peek(), XMLReader.isSpace(b) { i += 1 }
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count < 4 ? String(repeating: "0", count: 4 - digits.count) + digits : digits
    }

    static func byteHex(_ b: UInt8) -> String {
        let digits = String(b, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }

    /// Checks the whole input is UTF-8 made of XML characters and records
    /// where lines start (CR LF, CR and LF each end a line).
    mutating func scanLines() throws(LocationError) {
        var k = 0
        while k < bytes.count {
            let b = bytes[k]
            if b < 0x80 {
                if b == 0x0A {
                    lineStarts.append(k + 1)
                } else if b == 0x0D {
                    if k + 1 < bytes.count, bytes[k + 1] == 0x0A { k += 1 }
                    lineStarts.append(k + 1)
                } else if b < 0x20 && b != 0x09 {
                    throw error(at: k, "control character U+\(XMLReader.hex(UInt32(b))) is not allowed in XML")
                }
                k += 1
                continue
            }
            let length: Int, initial: UInt32
            switch b {
            case 0xC2...0xDF: length = 2; initial = UInt32(b & 0x1F)
            case 0xE0...0xEF: length = 3; initial = UInt32(b & 0x0F)
            case 0xF0...0xF4: length = 4; initial = UInt32(b & 0x07)
            default: throw error(at: k, "invalid UTF-8 (byte 0x\(XMLReader.byteHex(b))); the file must be UTF-8")
            }
            guard k + length <= bytes.count else { throw error(at: k, "invalid UTF-8 (truncated character at the end)") }
            var scalar = initial
            for n in 1..<length {
                let c = bytes[k + n]
                guard c & 0xC0 == 0x80 else {
                    throw error(at: k, "invalid UTF-8 (byte 0x\(XMLReader.byteHex(b)) is not followed by the rest of its character); the file must be UTF-8")
                }
                scalar = scalar << 6 | UInt32(c & 0x3F)
            }
            let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                throw error(at: k, "invalid UTF-8 (overlong or out-of-range character)")
            }
            guard XMLReader.isXMLChar(scalar) else { throw error(at: k, "character U+\(XMLReader.hex(scalar)) is not allowed in XML") }
            k += length
        }
    }

    // MARK: Document

    mutating func document() throws(LocationError) -> GPXNode {
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            throw LocationError("line 1, column 1: the file is UTF-16; only UTF-8 is supported")
        }
        try scanLines()
        if startsWith("\u{FEFF}") { i += 3 }
        let contentStart = i
        skipSpace()
        guard !atEnd else { throw error(at: i, "empty input (no root element)") }

        while true {
            skipSpace()
            guard !atEnd else { throw error(at: i, "no root element") }
            if startsWith("<?") {
                let start = i
                try instruction()
                if isDeclaration(at: start), start != contentStart {
                    throw error(at: start, "the <?xml ...?> declaration must come first in the input")
                }
            } else if startsWith("<!--") {
                try comment()
            } else if startsWith("<!DOCTYPE") {
                throw error(at: i, "DOCTYPE is not supported")
            } else if peek() == UInt8(ascii: "<") {
                break
            } else {
                throw error(at: i, "text before the root element (this is not XML)")
            }
        }

        let root = try element()

        while true {
            skipSpace()
            if atEnd { break }
            if startsWith("<!--") {
                try comment()
            } else if startsWith("<?") {
                let start = i
                try instruction()
                if isDeclaration(at: start) { throw error(at: start, "the <?xml ...?> declaration must come first in the input") }
            } else if peek() == UInt8(ascii: "<") {
                throw error(at: i, "a second element after the root element <\(root.name)>")
            } else {
                throw error(at: i, "text after the root element <\(root.name)>")
            }
        }
        return root
    }

    func isDeclaration(at offset: Int) -> Bool {
        guard offset + 5 < bytes.count else { return false }
        let target = bytes[(offset + 2)..<(offset + 5)].map { $0 | 0x20 }
        return target == Array("xml".utf8) && (XMLReader.isSpace(bytes[offset + 5]) || bytes[offset + 5] == UInt8(ascii: "?"))
    }

    mutating func instruction() throws(LocationError) {
        let start = i
        i += 2
        guard let b = peek(), XMLReader.isNameStart(b) else { throw error(at: i, "expected a processing instruction name after '<?'") }
        while !atEnd {
            if startsWith("?>") { i += 2; return }
            i += 1
        }
        throw error(at: start, "unterminated processing instruction (no '?>')")
    }

    mutating func comment() throws(LocationError) {
        let start = i
        i += 4
        while !atEnd {
            if startsWith("--") {
                guard peek(2) == UInt8(ascii: ">") else { throw error(at: i, "'--' is not allowed inside a comment") }
                i += 3
                return
            }
            i += 1
        }
        throw error(at: start, "unterminated comment (no '-->')")
    }

    /// A CDATA section at `<![CDATA[`; its text is appended to `text`.
    mutating func cdata(into text: inout [UInt8]) throws(LocationError) {
        let start = i
        i += 9
        while !atEnd {
            if startsWith("]]>") { i += 3; return }
            XMLReader.appendNormalised(bytes[i], next: peek(1), into: &text, skip: &i)
        }
        throw error(at: start, "unterminated CDATA section (no ']]>')")
    }

    /// Appends one byte of character data with XML line-end normalisation
    /// (CR LF and lone CR become LF) and advances past it.
    static func appendNormalised(_ b: UInt8, next: UInt8?, into text: inout [UInt8], skip i: inout Int) {
        if b == 0x0D {
            text.append(0x0A)
            i += next == 0x0A ? 2 : 1
        } else {
            text.append(b)
            i += 1
        }
    }

    mutating func name(what: String) throws(LocationError) -> String {
        let start = i
        guard let b = peek(), XMLReader.isNameStart(b) else {
            if let b = peek() {
                throw error(at: i, "expected \(what), found \(b < 0x80 ? "'\(Character(Unicode.Scalar(b)))'" : "a non-name character")")
            }
            throw error(at: i, "expected \(what), found the end of the input")
        }
        i += 1
        while let b = peek(), XMLReader.isNameChar(b) { i += 1 }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    /// An entity or character reference at `&`; appends the character.
    mutating func reference(into out: inout [UInt8]) throws(LocationError) {
        let start = i
        i += 1
        var end = i
        while end < bytes.count, end - i < 12, bytes[end] != UInt8(ascii: ";"),
              XMLReader.isNameChar(bytes[end]) || bytes[end] == UInt8(ascii: "#") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"), end > i else {
            throw error(at: start, "'&' must start a reference such as &amp; &lt; &gt; &quot; &apos; or &#...; (write '&amp;' for '&')")
        }
        let body = String(decoding: bytes[i..<end], as: UTF8.self)
        i = end + 1
        switch body {
        case "lt": out.append(UInt8(ascii: "<")); return
        case "gt": out.append(UInt8(ascii: ">")); return
        case "amp": out.append(UInt8(ascii: "&")); return
        case "quot": out.append(UInt8(ascii: "\"")); return
        case "apos": out.append(UInt8(ascii: "'")); return
        default: break
        }
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") {
                let hexDigits = digits.dropFirst()
                value = !hexDigits.isEmpty && hexDigits.allSatisfy(\.isHexDigit) ? UInt32(hexDigits, radix: 16) : nil
            } else {
                value = !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? UInt32(digits, radix: 10) : nil
            }
            guard let value, XMLReader.isXMLChar(value), let scalar = Unicode.Scalar(value) else {
                throw error(at: start, "&\(body); is not a valid character reference")
            }
            out.append(contentsOf: String(Character(scalar)).utf8)
            return
        }
        throw error(at: start, "unknown entity &\(body); (only &amp; &lt; &gt; &quot; &apos; and character references are defined)")
    }

    /// A start tag at `<`. Returns the node (without children or text) and
    /// whether it closed itself.
    mutating func startTag() throws(LocationError) -> (GPXNode, selfClosing: Bool) {
        let start = i
        i += 1
        let tagName = try name(what: "an element name after '<'")
        var attributes: [(name: String, value: String)] = []
        while true {
            let hadSpace = peek().map(XMLReader.isSpace) ?? false
            skipSpace()
            guard let b = peek() else { throw error(at: start, "unterminated start tag <\(tagName) (no '>')") }
            if b == UInt8(ascii: ">") {
                i += 1
                return (GPXNode(name: tagName, attributes: attributes, children: [], text: "", offset: start), false)
            }
            if b == UInt8(ascii: "/") {
                guard peek(1) == UInt8(ascii: ">") else { throw error(at: i, "expected '/>' or '>' to end the start tag <\(tagName)>") }
                i += 2
                return (GPXNode(name: tagName, attributes: attributes, children: [], text: "", offset: start), true)
            }
            guard hadSpace else { throw error(at: i, "expected a space before the next attribute in <\(tagName)>") }
            let attributeStart = i
            let attributeName = try name(what: "an attribute name or '>' in <\(tagName)>")
            skipSpace()
            guard peek() == UInt8(ascii: "=") else {
                throw error(at: attributeStart, "attribute \(attributeName) of <\(tagName)> has no value (expected \(attributeName)=\"...\")")
            }
            i += 1
            skipSpace()
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw error(at: i, "the value of attribute \(attributeName) of <\(tagName)> is not in quotes")
            }
            i += 1
            var value: [UInt8] = []
            while true {
                guard let c = peek() else { throw error(at: attributeStart, "unterminated value of attribute \(attributeName) (no closing quote)") }
                if c == quote { i += 1; break }
                switch c {
                case UInt8(ascii: "<"):
                    throw error(at: i, "'<' is not allowed in the value of attribute \(attributeName) (write '&lt;')")
                case UInt8(ascii: "&"):
                    try reference(into: &value)
                case 0x0D:
                    value.append(0x20)
                    i += 1
                    if peek() == 0x0A { i += 1 }
                case 0x09, 0x0A:
                    value.append(0x20)
                    i += 1
                default:
                    value.append(c)
                    i += 1
                }
            }
            if attributes.contains(where: { $0.name == attributeName }) {
                throw error(at: attributeStart, "attribute \(attributeName) appears twice in <\(tagName)>")
            }
            attributes.append((attributeName, String(decoding: value, as: UTF8.self)))
        }
    }

    /// The root element and everything in it, without recursion.
    mutating func element() throws(LocationError) -> GPXNode {
        var stack: [(node: GPXNode, text: [UInt8])] = []

        let (first, firstClosed) = try startTag()
        if firstClosed { return first }
        stack.append((first, []))

        while true {
            guard let b = peek() else {
                let open = stack[stack.count - 1].node
                throw error(at: open.offset, "<\(open.name)> is never closed (the input ends at \(describe(bytes.count)))")
            }
            if b == UInt8(ascii: "<") {
                if startsWith("</") {
                    let endStart = i
                    i += 2
                    let endName = try name(what: "an element name after '</'")
                    skipSpace()
                    guard peek() == UInt8(ascii: ">") else { throw error(at: i, "expected '>' to end the end tag </\(endName)") }
                    i += 1
                    var (open, text) = stack.removeLast()
                    guard open.name == endName else {
                        throw error(at: endStart, "end tag </\(endName)> does not match <\(open.name)> opened at \(describe(open.offset))")
                    }
                    open.text = String(decoding: text, as: UTF8.self)
                    if stack.isEmpty { return open }
                    stack[stack.count - 1].node.children.append(open)
                } else if startsWith("<!--") {
                    try comment()
                } else if startsWith("<![CDATA[") {
                    try cdata(into: &stack[stack.count - 1].text)
                } else if startsWith("<?") {
                    let start = i
                    try instruction()
                    if isDeclaration(at: start) { throw error(at: start, "the <?xml ...?> declaration must come first in the input") }
                } else if startsWith("<!") {
                    throw error(at: i, "unexpected markup '<!' (only comments and CDATA are allowed in content)")
                } else {
                    guard stack.count < GPXXML.maximumDepth else {
                        throw error(at: i, "elements nested more than \(GPXXML.maximumDepth) levels")
                    }
                    let (node, selfClosing) = try startTag()
                    if selfClosing {
                        stack[stack.count - 1].node.children.append(node)
                    } else {
                        stack.append((node, []))
                    }
                }
            } else if b == UInt8(ascii: "&") {
                try reference(into: &stack[stack.count - 1].text)
            } else if b == UInt8(ascii: ">"), i >= 2, bytes[i - 1] == UInt8(ascii: "]"), bytes[i - 2] == UInt8(ascii: "]") {
                throw error(at: i - 2, "']]>' is not allowed in text")
            } else {
                XMLReader.appendNormalised(b, next: peek(1), into: &stack[stack.count - 1].text, skip: &i)
            }
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
