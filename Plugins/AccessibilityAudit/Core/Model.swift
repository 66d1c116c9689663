import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// A rectangle in points, in screen coordinates (origin top left).
public struct Rect: Sendable, Equatable, CustomStringConvertible {
    public var x: Double, y: Double, width: Double, height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var area: Double { isEmpty ? 0 : width * height }

    /// The overlap of two rectangles (empty when they do not overlap).
    public func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(maxX, other.maxX), bottom = min(maxY, other.maxY)
        guard right > left, bottom > top else { return Rect(x: left, y: top, width: 0, height: 0) }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// Whether `other` lies entirely inside this rectangle.
    public func contains(_ other: Rect) -> Bool {
        other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    public var description: String { "(\(Format.number(x)), \(Format.number(y)), \(Format.number(width)) × \(Format.number(height)))" }
}

/// An sRGB colour with alpha, channels 0...1.
public struct Color: Sendable, Equatable, CustomStringConvertible {
    public var red: Double, green: Double, blue: Double, alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// 8-bit channels.
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.init(red: Double(r) / 255, green: Double(g) / 255, blue: Double(b) / 255, alpha: Double(a) / 255)
    }

    /// Reads "#rgb", "#rrggbb", "#rrggbbaa", "rgb(r, g, b)", "rgba(r, g, b, a)"
    /// (channels 0-255, alpha 0-1) and a few names (black, white, red, ...).
    public init?(css text: String) {
        let s = text.lowercased().filter { $0 != " " }
        if let named = Color.names[s] { self = named; return }
        if s.hasPrefix("#") {
            let hex = Array(s.dropFirst())
            func value(_ chars: ArraySlice<Character>) -> Double? {
                guard let v = UInt8(String(chars), radix: 16) else { return nil }
                return Double(v) / 255
            }
            switch hex.count {
            case 3:
                guard let r = value([hex[0], hex[0]][...]), let g = value([hex[1], hex[1]][...]), let b = value([hex[2], hex[2]][...]) else { return nil }
                self.init(red: r, green: g, blue: b)
            case 6, 8:
                guard let r = value(hex[0..<2]), let g = value(hex[2..<4]), let b = value(hex[4..<6]) else { return nil }
                let a = hex.count == 8 ? value(hex[6..<8]) : 1
                guard let a else { return nil }
                self.init(red: r, green: g, blue: b, alpha: a)
            default:
                return nil
            }
            return
        }
        for prefix in ["rgba(", "rgb("] where s.hasPrefix(prefix) && s.hasSuffix(")") {
            let parts = s.dropFirst(prefix.count).dropLast().split(separator: ",").map(String.init)
            guard parts.count == (prefix == "rgb(" ? 3 : 4) else { return nil }
            let channels = parts.prefix(3).compactMap { Double($0) }
            guard channels.count == 3, channels.allSatisfy({ $0 >= 0 && $0 <= 255 }) else { return nil }
            let alpha = parts.count == 4 ? Double(parts[3]) : 1
            guard let alpha, alpha >= 0, alpha <= 1 else { return nil }
            self.init(red: channels[0] / 255, green: channels[1] / 255, blue: channels[2] / 255, alpha: alpha)
            return
        }
        return nil
    }

    static let names: [String: Color] = [
        "black": Color(red: 0, green: 0, blue: 0), "white": Color(red: 1, green: 1, blue: 1),
        "red": Color(red: 1, green: 0, blue: 0), "green": Color(red: 0, green: 128.0 / 255, blue: 0),
        "blue": Color(red: 0, green: 0, blue: 1), "transparent": Color(red: 0, green: 0, blue: 0, alpha: 0),
    ]

    /// WCAG 2.x relative luminance. The sRGB threshold is 0.04045 (the sRGB
    /// standard; WCAG's text says 0.03928, which gives the same result for
    /// every 8-bit value).
    public var relativeLuminance: Double {
        func linear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// This colour drawn over `background` (source-over).
    public func composited(over background: Color) -> Color {
        let a = alpha
        return Color(red: red * a + background.red * (1 - a), green: green * a + background.green * (1 - a),
                     blue: blue * a + background.blue * (1 - a), alpha: 1)
    }

    /// "#rrggbb" (and "aa" when not opaque).
    public var description: String {
        func hex(_ c: Double) -> String {
            let v = Int((c * 255).rounded())
            return String(v, radix: 16).count == 1 ? "0" + String(v, radix: 16) : String(v, radix: 16)
        }
        return "#" + hex(red) + hex(green) + hex(blue) + (alpha < 1 ? hex(alpha) : "")
    }
}

/// WCAG contrast ratio (L1 + 0.05) / (L2 + 0.05), lighter over darker.
public func contrastRatio(_ a: Color, _ b: Color) -> Double {
    let la = a.relativeLuminance, lb = b.relativeLuminance
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

/// What an element is to assistive technology.
public struct Traits: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let button = Traits(rawValue: 1 << 0)
    public static let link = Traits(rawValue: 1 << 1)
    public static let staticText = Traits(rawValue: 1 << 2)
    public static let image = Traits(rawValue: 1 << 3)
    public static let adjustable = Traits(rawValue: 1 << 4)
    public static let disabled = Traits(rawValue: 1 << 5)
    public static let header = Traits(rawValue: 1 << 6)
    public static let searchField = Traits(rawValue: 1 << 7)
    public static let textField = Traits(rawValue: 1 << 8)
    public static let toggle = Traits(rawValue: 1 << 9)
    public static let selected = Traits(rawValue: 1 << 10)
    public static let keyboardKey = Traits(rawValue: 1 << 11)
    public static let tab = Traits(rawValue: 1 << 12)

    /// Every trait with its name in the layout format.
    public static let named: [(trait: Traits, name: String)] = [
        (.button, "button"), (.link, "link"), (.staticText, "staticText"), (.image, "image"), (.adjustable, "adjustable"),
        (.disabled, "disabled"), (.header, "header"), (.searchField, "searchField"), (.textField, "textField"),
        (.toggle, "toggle"), (.selected, "selected"), (.keyboardKey, "keyboardKey"), (.tab, "tab"),
    ]

    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.name == name }) else { return nil }
        self = match.trait
    }

    public var names: [String] { Self.named.filter { contains($0.trait) }.map(\.name) }

    /// Traits a person activates: a touch target.
    public static let interactive: Traits = [.button, .link, .adjustable, .searchField, .textField, .toggle, .keyboardKey, .tab]
}

/// The text attributes of an element that draws text.
public struct TextStyle: Sendable, Equatable {
    /// Point size, when known.
    public var size: Double?
    /// CSS-style weight 100-900 (700 is bold), when known.
    public var weight: Double?
    /// The smallest scale the text may shrink to (UIKit's minimumScaleFactor).
    public var minimumScaleFactor: Double?

    public init(size: Double? = nil, weight: Double? = nil, minimumScaleFactor: Double? = nil) {
        self.size = size
        self.weight = weight
        self.minimumScaleFactor = minimumScaleFactor
    }

    public var isBold: Bool { (weight ?? 400) >= 700 }
}

/// One element of a rendered screen.
public struct Element: Sendable {
    /// A stable name for reports: the identifier, resource-id or accessibility id.
    public var id: String?
    /// The view class or element type (UIButton, android.widget.Button, XCUIElementTypeButton).
    public var type: String?
    /// In points, in screen coordinates.
    public var frame: Rect
    /// Whether a screen reader lands on it (UIKit isAccessibilityElement,
    /// Android importantForAccessibility / focusable content).
    public var isAccessibilityElement: Bool
    public var label: String?
    public var value: String?
    public var hint: String?
    public var traits: Traits
    public var isHidden: Bool
    public var alpha: Double
    public var clipsToBounds: Bool
    /// UIKit accessibilityElementsHidden: hides its descendants from assistive technology.
    public var accessibilityElementsHidden: Bool
    /// UIKit accessibilityViewIsModal: only this subtree is reachable.
    public var isModal: Bool
    /// Fills its frame with an opaque colour, hiding what is drawn beneath.
    public var isOpaque: Bool
    public var text: TextStyle?
    public var foreground: Color?
    public var background: Color?
    public var children: [Element]
    /// Where the element came from in its input (a path or node number), for reports.
    public var source: String?

    public init(id: String? = nil, type: String? = nil, frame: Rect, isAccessibilityElement: Bool = false,
                label: String? = nil, value: String? = nil, hint: String? = nil, traits: Traits = [],
                isHidden: Bool = false, alpha: Double = 1, clipsToBounds: Bool = false,
                accessibilityElementsHidden: Bool = false, isModal: Bool = false, isOpaque: Bool = false,
                text: TextStyle? = nil, foreground: Color? = nil, background: Color? = nil,
                children: [Element] = [], source: String? = nil) {
        self.id = id
        self.type = type
        self.frame = frame
        self.isAccessibilityElement = isAccessibilityElement
        self.label = label
        self.value = value
        self.hint = hint
        self.traits = traits
        self.isHidden = isHidden
        self.alpha = alpha
        self.clipsToBounds = clipsToBounds
        self.accessibilityElementsHidden = accessibilityElementsHidden
        self.isModal = isModal
        self.isOpaque = isOpaque
        self.text = text
        self.foreground = foreground
        self.background = background
        self.children = children
        self.source = source
    }

    /// How reports name the element: its id, else its label, else its type and frame.
    public var displayName: String {
        if let id, !id.isEmpty { return id }
        if let label, !label.isEmpty { return "\"\(label)\"" }
        return "\(type ?? "element") at \(frame)"
    }
}

/// One rendered screen: the element tree, its size and scale, and optionally
/// a screenshot of it.
public struct Screen: Sendable {
    public var name: String?
    /// Where the tree came from: "pincer", "uiautomator", "appium-ios".
    public var origin: String
    /// The screen in points.
    public var size: Rect
    /// Pixels per point.
    public var scale: Double
    public var root: Element
    /// Path of a PNG screenshot (size × scale pixels), resolved against the model file.
    public var screenshot: String?

    public init(name: String? = nil, origin: String = "pincer", size: Rect, scale: Double, root: Element, screenshot: String? = nil) {
        self.name = name
        self.origin = origin
        self.size = size
        self.scale = scale
        self.root = root
        self.screenshot = screenshot
    }
}

/// A layout that cannot be read: what was wrong and where.
public struct LayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

enum Format {
    /// Up to two decimals, without trailing zeros.
    static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
        let scaled = (value * 100).rounded() / 100
        var text = "\(scaled)"
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}
