import PincerJSON

/// The layout model as JSON ("pincer.layout/1"), documented in the README:
///
///     {"format": "pincer.layout/1", "name": "Checkout", "scale": 3,
///      "size": [390, 844], "screenshot": "checkout.png",
///      "root": {"type": "UIWindow", "frame": [0, 0, 390, 844], "children": [
///        {"type": "UIButton", "id": "pay", "frame": [16, 780, 358, 48],
///         "accessible": true, "label": "Pay", "traits": ["button"],
///         "font": {"size": 17, "weight": 600}, "foreground": "#ffffff", "background": "#0a84ff"}]}}
///
/// Element keys: id, type, frame [x, y, width, height] in points in screen
/// coordinates, accessible, label, value, hint, traits, hidden, alpha,
/// clipsToBounds, accessibilityElementsHidden, modal, opaque, font {size,
/// weight, minimumScaleFactor}, foreground, background (CSS colours),
/// children. Unknown keys are refused, so a typo is not silently ignored.
public enum LayoutJSON {
    public static let formatID = "pincer.layout/1"

    public static func read(_ bytes: [UInt8]) throws(LayoutError) -> Screen {
        let doc: JSON
        do { doc = try JSON.parse(bytes: bytes) } catch { throw LayoutError("not JSON: \(error)") }
        guard let top = doc.objectValue else { throw LayoutError("the layout must be a JSON object, found \(doc.typeName)") }
        try checkKeys(top, allowed: ["format", "name", "scale", "size", "screenshot", "root", "origin"], at: "the layout")
        if let format = doc["format"] {
            guard format.stringValue == formatID else { throw LayoutError("format: expected \"\(formatID)\", found \(format.serialized())") }
        }
        guard let scale = doc["scale"]?.doubleValue, scale > 0, scale <= 10 else {
            throw LayoutError("scale: expected the pixels per point, a number in (0, 10], found \(doc["scale"]?.serialized() ?? "nothing")")
        }
        guard let sizeValues = doc["size"]?.arrayValue?.compactMap(\.doubleValue), sizeValues.count == 2,
              sizeValues.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
            throw LayoutError("size: expected [width, height] in points (0 for an empty screen), found \(doc["size"]?.serialized() ?? "nothing")")
        }
        guard let rootValue = doc["root"] else { throw LayoutError("root: missing (the element tree)") }
        var counter = 0
        let root = try element(rootValue, path: "root", depth: 0, counter: &counter)
        return Screen(name: doc["name"]?.stringValue, origin: doc["origin"]?.stringValue ?? "pincer", size: Rect(x: 0, y: 0, width: sizeValues[0], height: sizeValues[1]),
                      scale: scale, root: root, screenshot: doc["screenshot"]?.stringValue)
    }

    /// Deeper trees are refused when read (the audit walks at most 100 levels
    /// and reports the rest; reading stops far beyond that).
    public static let maximumReadDepth = 1000

    static let elementKeys: Set<String> = ["id", "type", "frame", "accessible", "label", "value", "hint", "traits", "hidden", "alpha",
                                           "clipsToBounds", "accessibilityElementsHidden", "modal", "opaque", "font", "foreground",
                                           "background", "children"]

    static func element(_ value: JSON, path: String, depth: Int, counter: inout Int) throws(LayoutError) -> Element {
        guard depth < maximumReadDepth else { throw LayoutError("\(path): nested more than \(maximumReadDepth) levels") }
        guard let fields = value.objectValue else { throw LayoutError("\(path): expected an element object, found \(value.typeName)") }
        try checkKeys(fields, allowed: elementKeys, at: path)
        counter += 1
        guard let frameValues = value["frame"]?.arrayValue?.compactMap(\.doubleValue), frameValues.count == 4,
              frameValues.allSatisfy(\.isFinite), frameValues[2] >= 0, frameValues[3] >= 0 else {
            throw LayoutError("\(path).frame: expected [x, y, width, height] with width and height >= 0, found \(value["frame"]?.serialized() ?? "nothing")")
        }
        func string(_ key: String) throws(LayoutError) -> String? {
            guard let v = value[key], v != .null else { return nil }
            guard let s = v.stringValue else { throw LayoutError("\(path).\(key): expected a string, found \(v.typeName)") }
            return s
        }
        func bool(_ key: String) throws(LayoutError) -> Bool {
            guard let v = value[key], v != .null else { return false }
            guard let b = v.boolValue else { throw LayoutError("\(path).\(key): expected true or false, found \(v.serialized())") }
            return b
        }
        func color(_ key: String) throws(LayoutError) -> Color? {
            guard let text = try string(key) else { return nil }
            guard let c = Color(css: text) else { throw LayoutError("\(path).\(key): '\(text)' is not a colour (#rgb, #rrggbb, #rrggbbaa, rgb(), rgba())") }
            return c
        }
        var traits: Traits = []
        if let list = value["traits"] {
            guard let items = list.arrayValue else { throw LayoutError("\(path).traits: expected an array of names, found \(list.typeName)") }
            for item in items {
                guard let name = item.stringValue, let trait = Traits(name: name) else {
                    throw LayoutError("\(path).traits: unknown trait \(item.serialized()) (known: \(Traits.named.map(\.name).joined(separator: ", ")))")
                }
                traits.insert(trait)
            }
        }
        var alpha = 1.0
        if let a = value["alpha"] {
            guard let v = a.doubleValue, v >= 0, v <= 1 else { throw LayoutError("\(path).alpha: expected a number in [0, 1], found \(a.serialized())") }
            alpha = v
        }
        var text: TextStyle?
        if let font = value["font"] {
            guard let f = font.objectValue else { throw LayoutError("\(path).font: expected an object, found \(font.typeName)") }
            try checkKeys(f, allowed: ["size", "weight", "minimumScaleFactor"], at: "\(path).font")
            func number(_ key: String, _ range: ClosedRange<Double>) throws(LayoutError) -> Double? {
                guard let v = font[key], v != .null else { return nil }
                guard let d = v.doubleValue, range.contains(d) else {
                    throw LayoutError("\(path).font.\(key): expected a number in \(range.lowerBound)...\(range.upperBound), found \(v.serialized())")
                }
                return d
            }
            text = TextStyle(size: try number("size", 0.1...1000), weight: try number("weight", 1...1000),
                             minimumScaleFactor: try number("minimumScaleFactor", 0...1))
        }
        var children: [Element] = []
        if let list = value["children"] {
            guard let items = list.arrayValue else { throw LayoutError("\(path).children: expected an array, found \(list.typeName)") }
            children.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                children.append(try element(item, path: "\(path).children[\(i)]", depth: depth + 1, counter: &counter))
            }
        }
        return Element(id: try string("id"), type: try string("type"),
                       frame: Rect(x: frameValues[0], y: frameValues[1], width: frameValues[2], height: frameValues[3]),
                       isAccessibilityElement: try bool("accessible"), label: try string("label"), value: try string("value"),
                       hint: try string("hint"), traits: traits, isHidden: try bool("hidden"), alpha: alpha,
                       clipsToBounds: try bool("clipsToBounds"), accessibilityElementsHidden: try bool("accessibilityElementsHidden"),
                       isModal: try bool("modal"), isOpaque: try bool("opaque"), text: text,
                       foreground: try color("foreground"), background: try color("background"), children: children, source: path)
    }

    static func checkKeys(_ fields: [(String, JSON)], allowed: Set<String>, at path: String) throws(LayoutError) {
        for (key, _) in fields where !allowed.contains(key) {
            throw LayoutError("\(path): unknown key \"\(key)\" (known: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// The screen as a layout document (what the importers' output looks like
    /// in our format).
    public static func write(_ screen: Screen) -> JSON {
        func element(_ e: Element) -> JSON {
            var fields: [(String, JSON)] = []
            if let id = e.id { fields.append(("id", .string(id))) }
            if let type = e.type { fields.append(("type", .string(type))) }
            fields.append(("frame", .array([e.frame.x, e.frame.y, e.frame.width, e.frame.height].map { .double($0) })))
            if e.isAccessibilityElement { fields.append(("accessible", .bool(true))) }
            if let label = e.label { fields.append(("label", .string(label))) }
            if let value = e.value { fields.append(("value", .string(value))) }
            if let hint = e.hint { fields.append(("hint", .string(hint))) }
            if !e.traits.isEmpty { fields.append(("traits", .array(e.traits.names.map(JSON.string)))) }
            if e.isHidden { fields.append(("hidden", .bool(true))) }
            if e.alpha != 1 { fields.append(("alpha", .double(e.alpha))) }
            if e.clipsToBounds { fields.append(("clipsToBounds", .bool(true))) }
            if e.accessibilityElementsHidden { fields.append(("accessibilityElementsHidden", .bool(true))) }
            if e.isModal { fields.append(("modal", .bool(true))) }
            if e.isOpaque { fields.append(("opaque", .bool(true))) }
            if let t = e.text {
                var font: [(String, JSON)] = []
                if let s = t.size { font.append(("size", .double(s))) }
                if let w = t.weight { font.append(("weight", .double(w))) }
                if let m = t.minimumScaleFactor { font.append(("minimumScaleFactor", .double(m))) }
                fields.append(("font", .object(font)))
            }
            if let c = e.foreground { fields.append(("foreground", .string(c.description))) }
            if let c = e.background { fields.append(("background", .string(c.description))) }
            if !e.children.isEmpty { fields.append(("children", .array(e.children.map(element)))) }
            return .object(fields)
        }
        var top: [(String, JSON)] = [("format", .string(formatID))]
        if let name = screen.name { top.append(("name", .string(name))) }
        top.append(("origin", .string(screen.origin)))
        top.append(("scale", .double(screen.scale)))
        top.append(("size", .array([.double(screen.size.width), .double(screen.size.height)])))
        if let shot = screen.screenshot { top.append(("screenshot", .string(shot))) }
        top.append(("root", element(screen.root)))
        return .object(top)
    }
}
