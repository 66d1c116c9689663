import PincerJSON
import PincerXML

/// Importers for real UI dumps: they turn an Android `uiautomator dump` (or
/// the Appium UiAutomator2 page source, the same tree with class names as
/// element names) and an Appium / WebDriverAgent iOS page source into the
/// layout model, and route our own JSON format to `LayoutJSON.read`.
///
/// Neither dump has colours, fonts, alpha or pixels: `foreground`,
/// `background` and `text` stay nil (the contrast and text-size checks say
/// they could not measure), `alpha` is 1, nothing is opaque or clipping, and
/// no screenshot is attached. Strings that are empty in the dump (an empty
/// `text=""`, `label=""`) are treated as absent (nil).
///
/// ## uiautomator (`origin` "uiautomator")
///
/// - Geometry: `bounds="[left,top][right,bottom]"` is in pixels (spaces
///   around the numbers are tolerated). Points = pixels / `scale`. The dump
///   carries no density, so the scale comes from the caller; the default,
///   `defaultAndroidScale` = 2.625, is a common 420 dpi phone (420 / 160).
///   Reports built on an import with the default should say the scale was
///   assumed. A node without `bounds` gets an empty frame at its parent's
///   origin and is hidden; bounds that do not parse or have a negative width
///   or height are refused (naming the attribute, node path and line).
/// - Screen size: the `width`/`height` of `<hierarchy>` (written by Appium)
///   when present and large enough to hold every top-level node; otherwise
///   the extent of the top-level nodes (their largest right and bottom
///   edges). The root element is a synthetic "hierarchy" element covering the
///   screen; the dump's nodes are its children.
/// - id = `resource-id`; type = `class` (or the element name when it is not
///   `node`); hint = `hint` (newer Appium dumps).
/// - label: what TalkBack speaks: `content-desc` if non-empty, else `text` if
///   non-empty; value = `text` when `content-desc` is set and the text differs.
///   A focused container without its own text is spoken by TalkBack as the
///   text of its non-focusable descendants, so its label is that text joined
///   with ", " (a Settings row reads its title and summary).
/// - isAccessibilityElement (after TalkBack's and ATF's focus rules): a node
///   is *actionable* when clickable, long-clickable or focusable, except a
///   scrollable node with children (its content is focused, not the list).
///   An actionable node is focused when it is a leaf, has its own text or
///   content-desc, is checkable, or has non-actionable descendants with text.
///   A node that is not actionable is focused when it has its own text or
///   content-desc and no focused ancestor (whose speech includes it). Hidden
///   nodes (and everything under them) are never focused.
/// - isHidden: `visible-to-user="false"` or `displayed="false"` (Appium), or
///   no bounds.
/// - traits, from the attributes and the class's last name component:
///   clickable or long-clickable → button; a class containing "EditText" or
///   "AutoCompleteTextView" → textField (instead of button); "CheckBox",
///   "Switch", "ToggleButton", "RadioButton", "CheckedTextView", or
///   checkable="true" → toggle (instead of button); "ImageButton" → image and
///   button; "ImageView" → image; "SeekBar", "RatingBar" → adjustable (instead
///   of button); another class ending in "Button" → button; a class
///   containing "TextView" → staticText; "TabView" → tab. enabled="false" →
///   disabled; selected="true" → selected. scrollable does not make a target,
///   checked is state not a trait, password="true" changes nothing (the dump
///   already masks the text).
/// - source: an XPath to the node, positions counted among siblings of the
///   same element name from 1, e.g. "/hierarchy/node[1]/node[3]".
///
/// ## Appium iOS page source (`origin` "appium-ios")
///
/// - Elements are `XCUIElementType<Kind>` with `type`, `name`, `label`,
///   `value`, `enabled`, `visible`, `accessible`, `x`, `y`, `width`, `height`
///   in points. `scale` defaults to `defaultIOSScale` = 3 (current iPhones;
///   the page source does not say). The `<AppiumAUT>` wrapper is skipped: its
///   single child (the XCUIElementTypeApplication) is the root, and its frame
///   gives the screen size. A missing `x` or `y` is 0; a missing `width` or
///   `height` gives an empty, hidden element; values that do not parse or are
///   negative are refused.
/// - id = `name`, except when `name` equals `label`: WebDriverAgent falls back
///   to the label when there is no accessibility identifier, so the id is then
///   nil (reports show the label). type = `type` (or the element name),
///   label = `label`, value = `value`.
/// - isAccessibilityElement = accessible == "true". Older WebDriverAgent
///   versions do not write `accessible`; then an element counts as accessible
///   when its kind is a control or text VoiceOver stops on (Button, Link,
///   StaticText, TextField, SecureTextField, TextView, SearchField, Switch,
///   Toggle, CheckBox, RadioButton, Slider, Stepper, PickerWheel,
///   PageIndicator, Key, Tab, MenuItem, MenuButton, PopUpButton,
///   ProgressIndicator, ActivityIndicator) or an Image/Icon with a label.
/// - isHidden = visible == "false".
/// - traits from the kind: Button, MenuItem, MenuButton, PopUpButton → button;
///   Link → link; StaticText → staticText; Image, Icon → image; Slider,
///   Stepper, Picker, PickerWheel, PageIndicator → adjustable; TextField,
///   SecureTextField, TextView → textField; SearchField → searchField;
///   Switch, Toggle, CheckBox, RadioButton → toggle; Key → keyboardKey; Tab →
///   tab (a tab is already a touch target). enabled == "false" → disabled;
///   selected == "true" → selected.
/// - source: an XPath like "/AppiumAUT/XCUIElementTypeApplication[1]/XCUIElementTypeWindow[1]".
public enum LayoutImport {
    /// Pixels per point assumed for uiautomator dumps: a 420 dpi phone (2.625).
    public static let defaultAndroidScale = 2.625
    /// Pixels per point assumed for iOS page sources (3, current iPhones).
    public static let defaultIOSScale = 3.0

    /// Dumps nested deeper are refused (an XML error naming the line and
    /// column). The converters recurse once per level with large frames (a
    /// 999-level dump needed more than 4 MB of stack in a debug build and
    /// crashed any thread with less); 256 levels fit in well under 2 MB, and
    /// the audit walks only 100 (`AuditLimits`). Real dumps nest a few dozen.
    public static let maximumDumpDepth = 256

    /// Detects the kind of input from its bytes: our JSON ("pincer.layout/1"
    /// or any JSON object) → `LayoutJSON.read`; XML with a `<hierarchy>` root
    /// → `uiautomator`; XML whose root is `<AppiumAUT>` or an
    /// XCUIElementType… element, or which holds XCUIElementType… elements →
    /// `appiumIOS`. Throws `LayoutError` naming what was wrong and where (line
    /// and column for XML syntax errors). `scale` applies to the dumps only:
    /// our JSON carries its own.
    public static func read(_ bytes: [UInt8], scale: Double? = nil) throws(LayoutError) -> Screen {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, isSpace(bytes[start]) { start += 1 }
        guard start < bytes.count else {
            throw LayoutError("empty input: expected a layout (pincer.layout/1 JSON, a uiautomator dump or an Appium iOS page source)")
        }
        switch bytes[start] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return try LayoutJSON.read(Array(bytes[start...]))
        case UInt8(ascii: "<"):
            let document = try parseDump(bytes)
            let root = document.root
            if root.name == "hierarchy" { return try uiautomator(document, scale: scale) }
            if root.name == "AppiumAUT" || isXCUIElement(root) || containsXCUIElement(root) {
                return try appiumIOS(document, scale: scale)
            }
            throw LayoutError("unknown XML dump: the root element is <\(root.name)> (line \(document.line(of: root))); expected <hierarchy> "
                              + "(uiautomator dump) or <AppiumAUT> / XCUIElementType… elements (Appium iOS page source)")
        default:
            let shown = String(decoding: bytes[start..<min(start + 20, bytes.count)], as: UTF8.self)
            throw LayoutError("not a layout: expected a JSON object or an XML dump, found \"\(shown)\"…")
        }
    }

    /// An Android `uiautomator dump` (or Appium UiAutomator2 page source).
    /// `scale` is the pixels per point (default 2.625, see the type's rules).
    public static func uiautomator(_ bytes: [UInt8], scale: Double? = nil) throws(LayoutError) -> Screen {
        try uiautomator(try parseDump(bytes), scale: scale)
    }

    /// An Appium / WebDriverAgent iOS page source. `scale` is the pixels per
    /// point (default 3).
    public static func appiumIOS(_ bytes: [UInt8], scale: Double? = nil) throws(LayoutError) -> Screen {
        try appiumIOS(try parseDump(bytes), scale: scale)
    }

    // MARK: - Shared

    /// A dump's XML, read strictly (PincerXML) without its character data (the
    /// dumps carry everything in attributes), no deeper than `maximumDumpDepth`.
    /// Syntax errors read "XML line L, column C: ...".
    static func parseDump(_ bytes: [UInt8]) throws(LayoutError) -> XMLReader.Document {
        do {
            return try XMLReader.parse(bytes, maximumDepth: maximumDumpDepth, keepText: false)
        } catch {
            throw LayoutError("XML \(error.description)")
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    static func checkedScale(_ scale: Double?, default fallback: Double) throws(LayoutError) -> Double {
        guard let scale else { return fallback }
        guard scale.isFinite, scale > 0, scale <= 10 else {
            throw LayoutError("scale: expected the pixels per point, a number in (0, 10], found \(Format.number(scale))")
        }
        return scale
    }

    /// The value when it is present and not empty.
    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Whether the text has something to speak (not only spaces).
    static func speakable(_ value: String?) -> String? {
        guard let value, value.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) else { return nil }
        return value
    }

    /// Child paths: "<parent>/<name>[n]", n counting same-named siblings from 1.
    static func childPaths(_ node: XMLReader.Node, under path: String) -> [String] {
        var seen: [String: Int] = [:]
        return node.children.map { child in
            let n = (seen[child.name] ?? 0) + 1
            seen[child.name] = n
            return "\(path)/\(child.name)[\(n)]"
        }
    }

    static func location(_ path: String, _ node: XMLReader.Node, _ document: XMLReader.Document) -> String {
        "\(path) (line \(document.line(of: node)))"
    }

    // MARK: - uiautomator

    static func uiautomator(_ document: XMLReader.Document, scale requested: Double?) throws(LayoutError) -> Screen {
        let root = document.root
        guard root.name == "hierarchy" else {
            throw LayoutError("not a uiautomator dump: the root element is <\(root.name)> (line \(document.line(of: root))), expected <hierarchy>")
        }
        let scale = try checkedScale(requested, default: defaultAndroidScale)
        guard !root.children.isEmpty else {
            throw LayoutError("the uiautomator dump has no nodes: <hierarchy> (line \(document.line(of: root))) is empty, so there is nothing to audit")
        }
        let paths = childPaths(root, under: "/hierarchy")

        // Screen size in pixels.
        var right = 0.0, bottom = 0.0
        for (child, path) in zip(root.children, paths) {
            if let b = try androidBounds(child, path: path, document) {
                right = max(right, b.maxX)
                bottom = max(bottom, b.maxY)
            }
        }
        var width = right, height = bottom
        if let w = root.attribute("width").flatMap(Double.init), let h = root.attribute("height").flatMap(Double.init),
           w.isFinite, h.isFinite, w > 0, h > 0, w >= right, h >= bottom {
            width = w
            height = h
        }
        guard width > 0, height > 0 else {
            throw LayoutError("cannot tell the screen size: no top-level node of the uiautomator dump has a non-empty bounds attribute")
        }

        let converter = AndroidConverter(document: document, scale: scale)
        var children: [Element] = []
        children.reserveCapacity(root.children.count)
        for (child, path) in zip(root.children, paths) {
            children.append(try converter.element(child, path: path, depth: 1, parentOrigin: (0, 0), hiddenAbove: false, absorbed: false))
        }
        let size = Rect(x: 0, y: 0, width: width / scale, height: height / scale)
        return Screen(origin: "uiautomator", size: size, scale: scale,
                      root: Element(type: "hierarchy", frame: size, children: children, source: "/hierarchy"))
    }

    /// The bounds in pixels; nil when the node has none.
    static func androidBounds(_ node: XMLReader.Node, path: String, _ document: XMLReader.Document) throws(LayoutError) -> Rect? {
        guard let raw = node.attribute("bounds") else { return nil }
        let bytes = Array(raw.utf8)
        var i = 0
        func fail() -> LayoutError {
            LayoutError("bounds=\"\(raw)\" of \(location(path, node, document)): expected \"[left,top][right,bottom]\" in pixels")
        }
        func skip() { while i < bytes.count, bytes[i] == 0x20 { i += 1 } }
        func expect(_ c: Character) throws(LayoutError) {
            skip()
            guard i < bytes.count, bytes[i] == c.asciiValue! else { throw fail() }
            i += 1
        }
        func number() throws(LayoutError) -> Double {
            skip()
            let start = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
            while i < bytes.count, (bytes[i] >= 0x30 && bytes[i] <= 0x39) || bytes[i] == UInt8(ascii: ".") { i += 1 }
            guard let v = Double(String(decoding: bytes[start..<i], as: UTF8.self)), v.isFinite else { throw fail() }
            return v
        }
        try expect("[")
        let left = try number()
        try expect(",")
        let top = try number()
        try expect("]")
        try expect("[")
        let right = try number()
        try expect(",")
        let bottom = try number()
        try expect("]")
        skip()
        guard i == bytes.count else { throw fail() }
        guard right >= left else {
            throw LayoutError("bounds=\"\(raw)\" of \(location(path, node, document)): negative width (right \(Format.number(right)) < left \(Format.number(left)))")
        }
        guard bottom >= top else {
            throw LayoutError("bounds=\"\(raw)\" of \(location(path, node, document)): negative height (bottom \(Format.number(bottom)) < top \(Format.number(top)))")
        }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    struct AndroidConverter {
        let document: XMLReader.Document
        let scale: Double

        static func flag(_ node: XMLReader.Node, _ name: String) -> Bool { node.attribute(name) == "true" }

        static func isShown(_ node: XMLReader.Node) -> Bool {
            node.attribute("bounds") != nil && node.attribute("visible-to-user") != "false" && node.attribute("displayed") != "false"
        }

        /// Clickable, long-clickable or focusable, and not a scrolling container.
        static func isActionable(_ node: XMLReader.Node) -> Bool {
            (flag(node, "clickable") || flag(node, "long-clickable") || flag(node, "focusable"))
                && !(flag(node, "scrollable") && !node.children.isEmpty)
        }

        static func ownSpeech(_ node: XMLReader.Node) -> String? {
            speakable(node.attribute("content-desc")) ?? speakable(node.attribute("text"))
        }

        /// What TalkBack adds to a focused node from its descendants: the text of
        /// shown, non-actionable descendants, stopping at actionable ones.
        static func descendantSpeech(_ node: XMLReader.Node, into speech: inout [String]) {
            for child in node.children where isShown(child) && !isActionable(child) {
                if let s = ownSpeech(child) { speech.append(s) }
                descendantSpeech(child, into: &speech)
            }
        }

        static func className(_ node: XMLReader.Node) -> String? {
            nonEmpty(node.attribute("class")) ?? (node.name == "node" ? nil : node.name)
        }

        static func traits(_ node: XMLReader.Node) -> Traits {
            var traits: Traits = []
            let full = className(node) ?? ""
            let short = String(full.split(separator: ".").last ?? "")
            func has(_ part: String) -> Bool { short.contains(part) }
            if flag(node, "clickable") || flag(node, "long-clickable") { traits.insert(.button) }
            if has("EditText") || has("AutoCompleteTextView") {
                traits.remove(.button)
                traits.insert(.textField)
            } else if has("CheckBox") || has("Switch") || has("ToggleButton") || has("RadioButton") || has("CheckedTextView")
                        || flag(node, "checkable") {
                traits.remove(.button)
                traits.insert(.toggle)
            } else if has("ImageButton") {
                traits.formUnion([.image, .button])
            } else if has("ImageView") {
                traits.insert(.image)
            } else if has("SeekBar") || has("RatingBar") {
                traits.remove(.button)
                traits.insert(.adjustable)
            } else if short.hasSuffix("Button") {
                traits.insert(.button)
            } else if has("TextView") {
                traits.insert(.staticText)
            }
            if has("TabView") { traits.insert(.tab) }
            if node.attribute("enabled") == "false" { traits.insert(.disabled) }
            if flag(node, "selected") { traits.insert(.selected) }
            return traits
        }

        func element(_ node: XMLReader.Node, path: String, depth: Int, parentOrigin: (x: Double, y: Double),
                              hiddenAbove: Bool, absorbed: Bool) throws(LayoutError) -> Element {
            let pixels = try androidBounds(node, path: path, document)
            let frame = pixels.map { Rect(x: $0.x / scale, y: $0.y / scale, width: $0.width / scale, height: $0.height / scale) }
                ?? Rect(x: parentOrigin.x, y: parentOrigin.y, width: 0, height: 0)
            let hidden = !Self.isShown(node)
            let shown = !hidden && !hiddenAbove

            let description = nonEmpty(node.attribute("content-desc"))
            let text = nonEmpty(node.attribute("text"))
            var label = description ?? text
            let value = description != nil && text != nil && text != description ? text : nil

            let own = Self.ownSpeech(node)
            let actionable = Self.isActionable(node)
            var accessible = false
            if shown {
                if actionable {
                    var speech: [String] = []
                    if own == nil { Self.descendantSpeech(node, into: &speech) }
                    let leaf = !node.children.contains(where: Self.isShown)
                    accessible = own != nil || Self.flag(node, "checkable") || leaf || !speech.isEmpty
                    if accessible, label == nil, !speech.isEmpty { label = speech.joined(separator: ", ") }
                } else {
                    accessible = own != nil && !absorbed
                }
            }

            var children: [Element] = []
            if !node.children.isEmpty {
                guard depth < maximumDumpDepth else {
                    throw LayoutError("\(location(path, node, document)): nested more than \(maximumDumpDepth) levels")
                }
                children.reserveCapacity(node.children.count)
                for (child, childPath) in zip(node.children, childPaths(node, under: path)) {
                    children.append(try element(child, path: childPath, depth: depth + 1, parentOrigin: (frame.x, frame.y),
                                                hiddenAbove: !shown, absorbed: absorbed || (accessible && actionable)))
                }
            }
            return Element(id: nonEmpty(node.attribute("resource-id")), type: Self.className(node), frame: frame,
                           isAccessibilityElement: accessible, label: label, value: value, hint: nonEmpty(node.attribute("hint")),
                           traits: Self.traits(node), isHidden: hidden, children: children, source: path)
        }
    }

    // MARK: - Appium iOS

    static let xcuiPrefix = "XCUIElementType"

    static func isXCUIElement(_ node: XMLReader.Node) -> Bool { node.name.hasPrefix(xcuiPrefix) }

    static func containsXCUIElement(_ node: XMLReader.Node) -> Bool {
        var stack = [node]
        while let next = stack.popLast() {
            if isXCUIElement(next) { return true }
            stack.append(contentsOf: next.children)
        }
        return false
    }

    static func appiumIOS(_ document: XMLReader.Document, scale requested: Double?) throws(LayoutError) -> Screen {
        let root = document.root
        let tops: [XMLReader.Node], paths: [String]
        if isXCUIElement(root) {
            tops = [root]
            paths = ["/\(root.name)"]
        } else if root.name == "AppiumAUT" {
            tops = root.children
            paths = childPaths(root, under: "/AppiumAUT")
        } else {
            throw LayoutError("not an Appium iOS page source: the root element is <\(root.name)> (line \(document.line(of: root))), "
                              + "expected <AppiumAUT> or an XCUIElementType… element")
        }
        let scale = try checkedScale(requested, default: defaultIOSScale)
        // WebDriverAgent described no application: an empty screen, which
        // the audit reports as "Nothing Was Checked" rather than an error.
        guard !tops.isEmpty else {
            return Screen(name: nil, origin: "appium-ios", size: .zero, scale: scale,
                          root: Element(type: "AppiumAUT", frame: .zero, source: "/AppiumAUT"))
        }
        var elements: [Element] = []
        for (top, path) in zip(tops, paths) {
            elements.append(try iosElement(top, path: path, depth: 1, document))
        }
        let first = elements[0]
        guard first.frame.width > 0, first.frame.height > 0 else {
            throw LayoutError("cannot tell the screen size: \(location(paths[0], tops[0], document)) has no positive width and height")
        }
        let size = Rect(x: 0, y: 0, width: first.frame.width, height: first.frame.height)
        let rootElement: Element
        if elements.count == 1 {
            rootElement = first
        } else {
            rootElement = Element(type: "AppiumAUT", frame: size, children: elements, source: "/AppiumAUT")
        }
        return Screen(origin: "appium-ios", size: size, scale: scale, root: rootElement)
    }

    /// Kinds VoiceOver stops on, for page sources without `accessible`.
    static let iosAccessibleKinds: Set<String> = [
        "Button", "Link", "StaticText", "TextField", "SecureTextField", "TextView", "SearchField", "Switch", "Toggle",
        "CheckBox", "RadioButton", "Slider", "Stepper", "PickerWheel", "PageIndicator", "Key", "Tab", "MenuItem",
        "MenuButton", "PopUpButton", "ProgressIndicator", "ActivityIndicator",
    ]

    static let iosTraits: [String: Traits] = [
        "Button": .button, "MenuItem": .button, "MenuButton": .button, "PopUpButton": .button,
        "Link": .link, "StaticText": .staticText, "Image": .image, "Icon": .image,
        "Slider": .adjustable, "Stepper": .adjustable, "Picker": .adjustable, "PickerWheel": .adjustable, "PageIndicator": .adjustable,
        "TextField": .textField, "SecureTextField": .textField, "TextView": .textField, "SearchField": .searchField,
        "Switch": .toggle, "Toggle": .toggle, "CheckBox": .toggle, "RadioButton": .toggle,
        "Key": .keyboardKey, "Tab": .tab,
    ]

    static func iosElement(_ node: XMLReader.Node, path: String, depth: Int, _ document: XMLReader.Document) throws(LayoutError) -> Element {
        guard isXCUIElement(node) else {
            throw LayoutError("expected an XCUIElementType… element, found <\(node.name)> at \(location(path, node, document))")
        }
        func number(_ key: String) throws(LayoutError) -> Double? {
            guard let raw = node.attribute(key) else { return nil }
            guard let v = Double(raw.trimmingSpaces), v.isFinite else {
                throw LayoutError("\(key)=\"\(raw)\" of \(location(path, node, document)): expected a number of points")
            }
            return v
        }
        let x = try number("x") ?? 0, y = try number("y") ?? 0
        let width = try number("width"), height = try number("height")
        for (key, v) in [("width", width), ("height", height)] {
            if let v, v < 0 { throw LayoutError("\(key)=\"\(Format.number(v))\" of \(location(path, node, document)): negative \(key)") }
        }
        let type = nonEmpty(node.attribute("type")) ?? node.name
        let kind = type.hasPrefix(xcuiPrefix) ? String(type.dropFirst(xcuiPrefix.count)) : type
        let name = nonEmpty(node.attribute("name")), label = nonEmpty(node.attribute("label"))
        let accessible: Bool
        if let flag = node.attribute("accessible") {
            accessible = flag == "true"
        } else {
            accessible = iosAccessibleKinds.contains(kind) || ((kind == "Image" || kind == "Icon") && speakable(label) != nil)
        }
        var traits = iosTraits[kind] ?? []
        if node.attribute("enabled") == "false" { traits.insert(.disabled) }
        if node.attribute("selected") == "true" { traits.insert(.selected) }

        var children: [Element] = []
        if !node.children.isEmpty {
            guard depth < maximumDumpDepth else {
                throw LayoutError("\(location(path, node, document)): nested more than \(maximumDumpDepth) levels")
            }
            children.reserveCapacity(node.children.count)
            for (child, childPath) in zip(node.children, childPaths(node, under: path)) {
                children.append(try iosElement(child, path: childPath, depth: depth + 1, document))
            }
        }
        return Element(id: name == label ? nil : name, type: type,
                       frame: Rect(x: x, y: y, width: width ?? 0, height: height ?? 0),
                       isAccessibilityElement: accessible, label: label, value: nonEmpty(node.attribute("value")),
                       traits: traits, isHidden: node.attribute("visible") == "false" || width == nil || height == nil,
                       children: children, source: path)
    }
}

extension String {
    /// Without leading and trailing ASCII spaces.
    fileprivate var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " })!
        return String(scalars[first...last])
    }
}
