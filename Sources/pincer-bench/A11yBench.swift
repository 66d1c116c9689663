// A11y: the time of a full accessibility audit pass (A11yAudit.Auditor) over
// a 5,000-element screen with a 1080 × 2400 screenshot, against the same walk
// with the contrast check off.
//
// - The screen is built the same way every run (a seeded generator): a
//   UIKit-like tree of exactly 5,000 elements, 1080 × 2400 px at @2.75x
//   (about 392.7 × 872.7 pt), 9 levels deep: a window, a table view (clips to
//   its bounds) of grouped sections of list rows (a cell with an icon, a
//   title, often a subtitle, and a switch, a text button, a tiny info button,
//   a link or a disclosure chevron), a mini player drawn over the list (an
//   opaque overlay), a tab bar and a navigation bar drawn over the table.
//   Some rows are hidden, some fully transparent, some dimmed; a few are
//   scrolled off the top of the screen, most lie below the fold (5,000
//   elements at realistic sizes do not fit on one phone screen). A few
//   elements carry their colours (tinted buttons, destructive titles,
//   badges); most do not, so the contrast check samples the screenshot.
// - The screenshot is painted from the same tree, in drawing order: grouped
//   background, white cells, coloured icons with a white glyph, text as dark
//   or grey anti-aliased strokes inside the text frames, switches, pills,
//   bars. Some crops are flat (an empty subtitle, an icon still loading), so
//   the contrast check cannot measure them.
// - Timed: Auditor.audit with every check and the screenshot, against the
//   same with every check but contrast; best of the rounds, interleaved.
//   The walk must cover all 5,000 elements and find something, and the
//   contrast check must read some elements.
import A11yAudit
#if canImport(Glibc)
import Glibc
#endif

struct A11yFigures: Sendable {
    static let targetMilliseconds = 50.0

    var elements: Int
    var walked: Int
    /// Levels below the window in the deepest branch.
    var depth: Int
    var pixelWidth: Int
    var pixelHeight: Int
    var scale: Double
    var rounds: Int

    /// Best round: every check, with the screenshot.
    var fullNanoseconds: UInt64
    /// Best round: every check but contrast, same screen and screenshot.
    var withoutContrastNanoseconds: UInt64

    /// The contrast check: elements it applies to, read, and how.
    var contrastApplicable: Int
    var contrastRead: Int
    var contrastFromPixels: Int
    var contrastKnownColours: Int
    var contrastNotMeasurable: Int { contrastApplicable - contrastRead }

    var findings: Int
    /// Findings per check, in the checks' order (every check, zeros too).
    var findingsByCheck: [(check: String, count: Int)]

    var fullMilliseconds: Double { Double(fullNanoseconds) / 1e6 }
    var withoutContrastMilliseconds: Double { Double(withoutContrastNanoseconds) / 1e6 }
    /// Full pass time over the time without contrast.
    var ratio: Double { Double(fullNanoseconds) / Double(max(withoutContrastNanoseconds, 1)) }
    /// The extra time of the contrast check per element it measured from pixels.
    var contrastMicrosecondsPerCrop: Double? {
        guard contrastFromPixels > 0, fullNanoseconds > withoutContrastNanoseconds else { return nil }
        return Double(fullNanoseconds - withoutContrastNanoseconds) / 1e3 / Double(contrastFromPixels)
    }

    var passed: Bool { fullMilliseconds < A11yFigures.targetMilliseconds }
}

enum A11yBench {
    static let rounds = 7
    static let elementCount = 5000
    static let pixelWidth = 1080, pixelHeight = 2400
    static let scale = 2.75
    /// Far beyond a pass: the budget must never cut one short.
    static let limits = AuditLimits(maximumDepth: 100, maximumNodes: elementCount, timeBudget: 10)
    static let time = "2025-01-01T00:00:00Z"

    static func run() throws(BenchError) -> A11yFigures {
        let model = A11yModel.build(elements: elementCount, pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
        let screen = model.screen, shot = model.screenshot
        let full = Auditor(checks: Set(CheckID.allCases), limits: limits, minimumSeverity: .note)
        let noContrast = Auditor(checks: Set(CheckID.allCases).subtracting([.contrast]), limits: limits, minimumSeverity: .note)

        // Warm up, and check the pass did the work.
        let report = full.audit(screen, screenshot: shot, time: time)
        guard report.totalElements == elementCount else {
            throw BenchError("the model has \(report.totalElements) elements, not \(elementCount)")
        }
        guard report.walkedElements == elementCount, report.stoppedBy == nil else {
            throw BenchError("the walk covered \(report.walkedElements) of \(report.totalElements) elements (stopped by \(report.stoppedBy ?? "nothing"))")
        }
        guard let contrast = report.checks.first(where: { $0.check == .contrast }) else {
            throw BenchError("the full pass has no contrast report")
        }
        guard contrast.read > 0 else { throw BenchError("the contrast check read no element (of \(contrast.applicable))") }
        let findings = report.checks.reduce(0) { $0 + $1.findings.count }
        guard findings > 0, !report.findings.isEmpty else { throw BenchError("the full pass found nothing") }
        // Without the screenshot only the known colours are read: the rest of
        // the full pass's reads came from the pixels.
        let colourOnly = full.audit(screen, screenshot: nil, time: time)
        let known = colourOnly.checks.first(where: { $0.check == .contrast })?.read ?? 0
        let other = noContrast.audit(screen, screenshot: shot, time: time)
        guard other.walkedElements == elementCount, other.stoppedBy == nil,
              !other.checks.contains(where: { $0.check == .contrast }) else {
            throw BenchError("the pass without contrast walked \(other.walkedElements) elements or ran contrast")
        }

        var best = (full: UInt64.max, without: UInt64.max)
        for round in 0..<rounds {
            // Alternate which side goes first, so neither always runs warm.
            for side in round % 2 == 0 ? [0, 1] : [1, 0] {
                let auditor = side == 0 ? full : noContrast
                let start = monotonicNanoseconds()
                let found = pass(auditor, screen, shot)
                let elapsed = monotonicNanoseconds() - start
                guard found > 0 else { throw BenchError("a timed pass found nothing") }
                if side == 0 { best.full = min(best.full, elapsed) } else { best.without = min(best.without, elapsed) }
            }
        }
        let byCheck = CheckID.allCases.map { id in
            (check: id.rawValue, count: report.checks.first(where: { $0.check == id })?.findings.count ?? 0)
        }
        return A11yFigures(elements: report.totalElements, walked: report.walkedElements, depth: model.depth,
                           pixelWidth: shot.width, pixelHeight: shot.height, scale: screen.scale, rounds: rounds,
                           fullNanoseconds: best.full, withoutContrastNanoseconds: best.without,
                           contrastApplicable: contrast.applicable, contrastRead: contrast.read,
                           contrastFromPixels: contrast.read - known, contrastKnownColours: known,
                           findings: findings, findingsByCheck: byCheck)
    }

    /// One timed pass; the finding count keeps the work observable.
    @inline(never)
    static func pass(_ auditor: Auditor, _ screen: Screen, _ shot: Bitmap) -> Int {
        let report = auditor.audit(screen, screenshot: shot, time: time)
        return report.findings.count + report.walkedElements
    }
}

// MARK: - the model

/// The screen and its screenshot, built the same way every run.
struct A11yModel {
    var screen: Screen
    var screenshot: Bitmap
    var depth: Int

    static func build(elements: Int, pixelWidth: Int, pixelHeight: Int, scale: Double) -> A11yModel {
        var builder = ModelBuilder(width: Double(pixelWidth) / scale, height: Double(pixelHeight) / scale)
        let root = builder.window(elements: elements)
        var painter = Painter(width: pixelWidth, height: pixelHeight, scale: scale)
        painter.paint(root, opacity: 1)
        var depth = 0
        let element = root.element(depth: 0, deepest: &depth)
        let screen = Screen(name: "Settings (generated)", origin: "pincer",
                            size: Rect(x: 0, y: 0, width: builder.width, height: builder.height), scale: scale, root: element)
        return A11yModel(screen: screen, screenshot: Bitmap(width: pixelWidth, height: pixelHeight, pixels: painter.pixels), depth: depth)
    }
}

/// An element with how it is drawn, before it becomes an `Element`.
private struct Part {
    var element: Element
    var paint: Paint
    var children: [Part] = []

    init(_ element: Element, _ paint: Paint = .none, _ children: [Part] = []) {
        self.element = element
        self.paint = paint
        self.children = children
    }

    var count: Int { children.reduce(1) { $0 + $1.count } }

    func element(depth: Int, deepest: inout Int) -> Element {
        deepest = max(deepest, depth)
        var e = element
        e.children = children.map { $0.element(depth: depth + 1, deepest: &deepest) }
        return e
    }
}

private enum Paint {
    case none
    /// The frame, with rounded corners (points).
    case fill(Color, radius: Double)
    /// One line of text drawn as strokes, left-aligned or centred in the frame.
    case text(String, size: Double, bold: Bool, color: Color, centred: Bool)
    /// A rounded square of `color` with a white glyph.
    case icon(Color)
    case toggle(on: Bool)
    /// A capsule of `background` with centred text.
    case pill(background: Color, text: String, size: Double, color: Color)
    case chevron(Color)
    case infoButton(Color)
    case plus(Color)
}

private enum Palette {
    static func hex(_ v: UInt32) -> Color { Color(r: UInt8(v >> 16 & 0xFF), g: UInt8(v >> 8 & 0xFF), b: UInt8(v & 0xFF)) }
    static let groupedBackground = hex(0xF2F2F7)
    static let white = hex(0xFFFFFF)
    static let bar = hex(0xF9F9F9)
    static let miniPlayer = hex(0xF7F7F7)
    static let label = hex(0x000000)
    static let darkSecondary = hex(0x6C6C70)
    static let secondary = hex(0x8A8A8E)
    static let tertiary = hex(0xC4C4C6)
    static let header = hex(0x6D6D72)
    static let blue = hex(0x007AFF)
    static let red = hex(0xFF3B30)
    static let green = hex(0x34C759)
    static let offTrack = hex(0xE9E9EA)
    static let separator = hex(0xC6C6C8)
    static let placeholder = hex(0xE5E5EA)
    static let pill = hex(0xEEEEF3)
    static let tabGrey = hex(0x999999)
    static let icons: [Color] = [0xFF9500, 0x34C759, 0x007AFF, 0x5856D6, 0xFF2D55, 0x8E8E93, 0xAF52DE, 0x1C1C1E, 0xFF3B30, 0x30B0C7].map(hex)
}

private struct ModelBuilder {
    let width: Double, height: Double
    var random = SplitMix64(seed: 0xA11_5EED_2025)
    var rows = 0

    static let statusBar = 54.0, navigationBar = 44.0, tabBar = 83.0
    /// How far the table is scrolled: its first rows are above the screen or under the navigation bar.
    static let contentOffset = 150.0

    static let titles = [
        "Wi-Fi", "Bluetooth", "Cellular", "Personal Hotspot", "Notifications", "Sounds & Haptics", "Focus", "Screen Time",
        "General", "Control Centre", "Display & Brightness", "Home Screen", "Accessibility", "Wallpaper", "Siri & Search",
        "Face ID & Passcode", "Emergency SOS", "Exposure Notifications", "Battery", "Privacy & Security", "App Store",
        "Wallet & Apple Pay", "Passwords", "Mail", "Contacts", "Calendar", "Notes", "Reminders", "Voice Memos", "Phone",
        "Messages", "FaceTime", "Safari", "Weather", "Translate", "Maps", "Compass", "Measure", "Shortcuts", "Health",
        "Music", "TV", "Photos", "Camera", "Books", "Podcasts", "Game Center", "Software Update", "Storage", "Background Refresh",
        "Date & Time", "Keyboard", "Fonts", "Language & Region", "Dictionary", "VPN & Device Management", "Legal & Regulatory",
        "Transfer or Reset", "Auto-Lock", "Text Size", "Bold Text", "Night Shift", "True Tone", "Raise to Wake",
    ]
    static let subtitles = [
        "On", "Off", "Connected", "Not Connected", "Home Network", "Automatic", "Never", "30 seconds", "Updated today",
        "Last backup 2 hours ago", "12.4 GB of 128 GB used", "Allow notifications and badges", "Immediate delivery",
        "Requires restart", "3 apps use this", "Shared with family", "Downloads over cellular", "Turned on by Siri",
        "Sign in to sync your data", "Low Power Mode is off", "Ask before joining networks", "Every day at 22:00",
    ]
    static let buttons = ["Edit", "Open", "Get", "Turn On", "Set Up", "Update", "Retry"]
    static let sections = ["Connectivity", "Alerts", "System", "Apps", "Privacy", "Display", "Storage", "Accounts", "Media", "Other"]

    func frame(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    /// The whole tree with exactly `elements` elements.
    mutating func window(elements: Int) -> Part {
        let full = frame(0, 0, width, height)
        let navigation = navigationBar()
        let player = miniPlayer()
        let tabs = tabBar()
        // Window, layout container, table view, wrapper: 4; the rest is rows.
        let fixed = 4 + navigation.count + player.count + tabs.count
        let table = tableContent(budget: elements - fixed, top: ModelBuilder.statusBar + ModelBuilder.navigationBar + 18 - ModelBuilder.contentOffset)
        let tableView = Part(Element(id: "settings.table", type: "UITableView", frame: full, clipsToBounds: true,
                                     background: Palette.groupedBackground),
                             .fill(Palette.groupedBackground, radius: 0),
                             [Part(Element(type: "UITableViewWrapperView", frame: full), .none, table)])
        let container = Part(Element(type: "UILayoutContainerView", frame: full), .none, [tableView, player, tabs, navigation])
        return Part(Element(type: "UIWindow", frame: full, isOpaque: true, background: Palette.groupedBackground),
                    .fill(Palette.groupedBackground, radius: 0), [container])
    }

    // MARK: bars

    mutating func navigationBar() -> Part {
        let top = ModelBuilder.statusBar, h = ModelBuilder.navigationBar
        let back = Part(Element(id: "nav.back", type: "UIButton", frame: frame(8, top, 96, h), isAccessibilityElement: true,
                                label: "Settings", traits: .button, foreground: Palette.blue),
                        .text("Settings", size: 17, bold: false, color: Palette.blue, centred: true),
                        [Part(Element(type: "UIImageView", frame: frame(8, top + 12, 12, 20)), .chevron(Palette.blue))])
        let title = Part(Element(type: "UILabel", frame: frame(width / 2 - 60, top + 11, 120, 22), isAccessibilityElement: true,
                                 label: "General", traits: [.staticText, .header], text: TextStyle(size: 17, weight: 600)),
                         .text("General", size: 17, bold: true, color: Palette.label, centred: true))
        let add = Part(Element(id: "nav.add", type: "UIButton", frame: frame(width - 52, top, 44, h), isAccessibilityElement: true,
                               label: "Add", traits: .button), .plus(Palette.blue))
        // A tiny unlabelled button: a missing label and a small target.
        let info = Part(Element(type: "UIButton", frame: frame(width - 78, top + 12, 20, 20), isAccessibilityElement: true,
                                traits: .button), .infoButton(Palette.blue))
        let content = Part(Element(type: "_UINavigationBarContentView", frame: frame(0, top, width, h)), .none, [back, title, add, info])
        return Part(Element(id: "nav.bar", type: "UINavigationBar", frame: frame(0, 0, width, top + h), isOpaque: true,
                            background: Palette.bar), .fill(Palette.bar, radius: 0), [content])
    }

    mutating func tabBar() -> Part {
        let y = height - ModelBuilder.tabBar, w = width / 5
        let names = ["Home", "Search", "Library", "Activity", "Profile"]
        let tabs = names.enumerated().map { i, name -> Part in
            let x = Double(i) * w
            let colour = i == 0 ? Palette.blue : Palette.tabGrey
            let icon = Part(Element(type: "UITabBarSwappableImageView", frame: frame(x + w / 2 - 14, y + 5, 28, 26)),
                            .fill(colour, radius: 7))
            let label = Part(Element(type: "UITabBarButtonLabel", frame: frame(x + 4, y + 33, w - 8, 13), traits: .staticText,
                                     text: TextStyle(size: 10, weight: 500)),
                             .text(name, size: 10, bold: false, color: colour, centred: true))
            return Part(Element(id: "tab.\(name.lowercased())", type: "UITabBarButton", frame: frame(x, y, w, 49),
                                isAccessibilityElement: true, label: i == 3 ? "Activity tab" : name,
                                traits: i == 0 ? [.button, .tab, .selected] : [.button, .tab]),
                        .none, [icon, label])
        }
        return Part(Element(id: "tab.bar", type: "UITabBar", frame: frame(0, y, width, ModelBuilder.tabBar), isOpaque: true,
                            background: Palette.bar), .fill(Palette.bar, radius: 0), tabs)
    }

    /// An opaque mini player drawn over the bottom of the list.
    mutating func miniPlayer() -> Part {
        let y = height - ModelBuilder.tabBar - 70, x = 8.0, w = width - 16
        let art = Part(Element(id: "player.artwork", type: "UIButton", frame: frame(x + 8, y + 9, 44, 44), isAccessibilityElement: true,
                               label: "Album artwork", traits: [.button, .image]), .icon(Palette.icons[6]))
        let title = Part(Element(type: "UILabel", frame: frame(x + 62, y + 12, w - 160, 20), isAccessibilityElement: true,
                                 label: "Midnight City", traits: .staticText, text: TextStyle(size: 15, weight: 600)),
                         .text("Midnight City", size: 15, bold: true, color: Palette.label, centred: false))
        // The artist is a link to its page (small, as links in text are).
        let artist = Part(Element(id: "player.artist", type: "UIButton", frame: frame(x + 62, y + 33, 40, 17), isAccessibilityElement: true,
                                  label: "M83", traits: .link, text: TextStyle(size: 13)),
                          .text("M83", size: 13, bold: false, color: Palette.secondary, centred: false))
        // A button and link at once over the artwork, with its frame: both
        // conflicting traits and a duplicate target.
        let open = Part(Element(id: "player.open", type: "UIButton", frame: frame(x + 8, y + 9, 44, 44), isAccessibilityElement: true,
                                label: "Open Now Playing", traits: [.button, .link]))
        let play = Part(Element(id: "player.play", type: "UIButton", frame: frame(x + w - 92, y + 11, 40, 40), isAccessibilityElement: true,
                                label: "Play button", traits: .button), .fill(Palette.label, radius: 6))
        let next = Part(Element(id: "player.next", type: "UIButton", frame: frame(x + w - 48, y + 11, 40, 40), isAccessibilityElement: true,
                                label: "Next", traits: .button), .plus(Palette.label))
        return Part(Element(id: "player", type: "MiniPlayerView", frame: frame(x, y, w, 62), isOpaque: true,
                            background: Palette.miniPlayer), .fill(Palette.miniPlayer, radius: 0), [art, open, title, artist, play, next])
    }

    // MARK: the list

    /// Sections of rows using exactly `budget` elements, from `top` (screen y) down.
    mutating func tableContent(budget: Int, top: Double) -> [Part] {
        var parts: [Part] = []
        var used = 0, y = top, section = 0
        // A section is the section view, a header view and its label, then rows
        // of at most 10 elements; footer lines take up what is left.
        while budget - used >= 3 + 10 + 12 {
            var rowsLeft = 8 + random.below(17)
            let sectionTop = y
            let name = ModelBuilder.sections[section % ModelBuilder.sections.count].uppercased()
            let label = Part(Element(type: "UILabel", frame: frame(32, y + 14, width - 64, 18), isAccessibilityElement: true,
                                     label: name, traits: [.staticText, .header], text: TextStyle(size: 13)),
                             .text(name, size: 13, bold: false, color: Palette.header, centred: false))
            let header = Part(Element(type: "UITableViewHeaderFooterView", frame: frame(0, y, width, 38)), .none, [label])
            y += 38
            used += 3
            var cells: [Part] = []
            while rowsLeft > 0, budget - used >= 10 + 12 {
                let (cell, advance) = row(y: y)
                cells.append(cell)
                used += cell.count
                y += advance
                rowsLeft -= 1
            }
            y += 18
            parts.append(Part(Element(type: "UIView", frame: frame(0, sectionTop, width, y - sectionTop)), .none, [header] + cells))
            section += 1
        }
        var line = 0
        while used < budget {
            let text = "Footer note \(line + 1): settings sync across your devices."
            parts.append(Part(Element(type: "UILabel", frame: frame(32, y, width - 64, 18), isAccessibilityElement: true, label: text,
                                      traits: .staticText, text: TextStyle(size: 13)),
                              .text(text, size: 13, bold: false, color: Palette.secondary, centred: false)))
            used += 1
            y += 20
            line += 1
        }
        return parts
    }

    enum Accessory { case toggle, chevron, button, info, link }

    /// One cell (8 to 10 elements) at screen y, and how far it moves the next one.
    mutating func row(y: Double) -> (Part, Double) {
        rows += 1
        let n = rows
        let x = 16.0, w = width - 32
        let accessory: Accessory = {
            let roll = random.below(100)
            return roll < 35 ? .toggle : roll < 62 ? .chevron : roll < 82 ? .button : roll < 92 ? .link : .info
        }()
        let hasSubtitle = accessory == .link || random.chance(60)
        let h = hasSubtitle ? (random.chance(25) ? 68.0 : 60.0) : 44.0
        let titleText = random.pick(ModelBuilder.titles)

        // Icon, in a container.
        let iconFrame = frame(x + 16, y + (h - 29) / 2, 29, 29)
        let iconPaint: Paint = random.chance(10) ? .fill(Palette.placeholder, radius: 6.5) : .icon(random.pick(Palette.icons))
        var icon = Element(id: "row.\(n).icon", type: "UIImageView", frame: iconFrame, traits: .image)
        if random.chance(30) {
            icon.isAccessibilityElement = true
            let roll = random.below(10)
            icon.label = roll < 2 ? nil : roll < 4 ? "\(titleText) icon" : titleText
        }
        let iconPart = Part(Element(type: "UIView", frame: iconFrame), .none, [Part(icon, iconPaint)])

        // Accessory on the right.
        var accessoryPart: Part
        let accessoryWidth: Double
        switch accessory {
        case .toggle:
            let on = random.chance(60)
            let disabled = random.chance(3)
            accessoryWidth = 51
            accessoryPart = Part(Element(id: "row.\(n).switch", type: "UISwitch", frame: frame(x + w - 16 - 51, y + (h - 31) / 2, 51, 31),
                                         isAccessibilityElement: true, label: titleText, value: on ? "1" : "0",
                                         traits: disabled ? [.button, .toggle, .disabled] : [.button, .toggle], alpha: disabled ? 0.5 : 1),
                                 .toggle(on: on))
        case .chevron, .link:
            accessoryWidth = 8
            accessoryPart = Part(Element(type: "UIImageView", frame: frame(x + w - 16 - 8, y + (h - 13) / 2, 8, 13)), .chevron(Palette.tertiary))
        case .button:
            let text = random.pick(ModelBuilder.buttons)
            let bw = 20 + Double(text.count) * 8.5
            accessoryWidth = bw
            let bf = frame(x + w - 16 - bw, y + (h - 30) / 2, bw, 30)
            // Half carry their tint (known colours), half are pills measured from pixels.
            let tinted = random.chance(50)
            var button = Element(id: "row.\(n).button", type: "UIButton", frame: bf, isAccessibilityElement: true, label: text,
                                 traits: random.chance(3) ? [.button, .link] : .button)
            if tinted { button.foreground = Palette.blue }
            accessoryPart = Part(button, tinted ? .text(text, size: 15, bold: false, color: Palette.blue, centred: true)
                                 : .pill(background: Palette.pill, text: text.uppercased(), size: 15, color: Palette.blue))
        case .info:
            accessoryWidth = 22
            accessoryPart = Part(Element(id: "row.\(n).info", type: "UIButton", frame: frame(x + w - 16 - 22, y + (h - 22) / 2, 22, 22),
                                         isAccessibilityElement: true, label: random.chance(30) ? nil : "More Info", traits: .button),
                                 .infoButton(Palette.blue))
        }

        // Title and subtitle in a stack.
        let labelsX = x + 60, labelsWidth = x + w - 16 - accessoryWidth - 8 - labelsX
        var labels: [Part] = []
        let destructive = random.chance(3)
        let titleSize = random.pick([17.0, 17, 17, 16, 15])
        let bold = titleSize == 15 || random.chance(10)
        let titleY = hasSubtitle ? y + (h - 44) / 2 + 3 : y + 11
        var title = Element(id: "row.\(n).title", type: "UILabel", frame: frame(labelsX, titleY, labelsWidth, 22),
                            isAccessibilityElement: true, label: titleText, traits: .staticText,
                            text: TextStyle(size: titleSize, weight: bold ? 700 : 400))
        if destructive { title.foreground = Palette.red }
        labels.append(Part(title, .text(titleText, size: titleSize, bold: bold, color: destructive ? Palette.red : Palette.label, centred: false)))
        if hasSubtitle {
            let subFrame = frame(labelsX, titleY + 23, labelsWidth, 18)
            let size = random.pick([13.0, 13, 14, 15])
            if accessory == .link {
                let text = "Learn more…"
                let tinted = random.chance(50)
                labels.append(Part(Element(id: "row.\(n).link", type: "UIButton", frame: frame(labelsX, titleY + 23, 86, 17),
                                           isAccessibilityElement: true, label: "Learn more", traits: .link,
                                           text: TextStyle(size: 13), foreground: tinted ? Palette.blue : nil),
                                   .text(text, size: 13, bold: false, color: Palette.blue, centred: false)))
            } else if random.chance(10) {
                // An empty detail label: a flat crop.
                labels.append(Part(Element(type: "UILabel", frame: subFrame, traits: .staticText, text: TextStyle(size: size))))
            } else {
                let text = random.pick(ModelBuilder.subtitles)
                let roll = random.below(10)
                let colour = roll < 6 ? Palette.secondary : roll < 8 ? Palette.darkSecondary : Palette.tertiary
                labels.append(Part(Element(type: "UILabel", frame: subFrame, isAccessibilityElement: true, label: text,
                                           traits: .staticText, text: TextStyle(size: size)),
                                   .text(text, size: size, bold: false, color: colour, centred: false)))
            }
        }
        let stack = Part(Element(type: "UIStackView", frame: frame(labelsX, y, labelsWidth, h)), .none, labels)

        var content = [iconPart, stack, accessoryPart]
        if random.chance(8) {
            let count = String(1 + random.below(12))
            let badgeX = x + w - 16 - accessoryWidth - 8 - 24
            content.append(Part(Element(type: "UILabel", frame: frame(badgeX, y + (h - 22) / 2, 24, 22), isAccessibilityElement: true,
                                        label: count, traits: .staticText, text: TextStyle(size: 13, weight: 700),
                                        foreground: Palette.white, background: Palette.red),
                                .pill(background: Palette.red, text: count, size: 13, color: Palette.white)))
        }
        content.append(Part(Element(type: "_UITableViewCellSeparatorView", frame: frame(labelsX, y + h - 0.5, x + w - labelsX, 0.5)),
                            .fill(Palette.separator, radius: 0)))

        // Some rows are hidden (collapsed: they take no room), some fully
        // transparent (fading in), a few dimmed.
        let roll = random.below(100)
        let hidden = roll < 4, transparent = roll >= 4 && roll < 7, dimmed = roll >= 7 && roll < 9
        let cell = Element(id: "row.\(n)", type: "UITableViewCell", frame: frame(x, y, w, h), isHidden: hidden,
                           alpha: transparent ? 0 : dimmed ? 0.45 : 1, isOpaque: !dimmed && !transparent, background: Palette.white)
        let contentView = Part(Element(type: "UITableViewCellContentView", frame: frame(x, y, w, h)), .none, content)
        return (Part(cell, .fill(Palette.white, radius: 0), [contentView]), hidden ? 0 : h)
    }
}

// MARK: - the screenshot

/// Paints parts into RGBA pixels (opaque), anti-aliased, in drawing order.
private struct Painter {
    let width: Int, height: Int, scale: Double
    var pixels: [UInt8]

    init(width: Int, height: Int, scale: Double) {
        self.width = width
        self.height = height
        self.scale = scale
        pixels = [UInt8](repeating: 255, count: width * height * 4)
    }

    mutating func paint(_ part: Part, opacity: Double) {
        let e = part.element
        let o = opacity * e.alpha
        guard !e.isHidden, o > 0.01 else { return }
        let f = e.frame
        let onScreen = f.maxX > 0 && f.maxY > 0 && f.x * scale < Double(width) && f.y * scale < Double(height)
        if onScreen { draw(part.paint, in: f, opacity: o) }
        for child in part.children { paint(child, opacity: o) }
    }

    mutating func draw(_ paint: Paint, in f: Rect, opacity: Double) {
        switch paint {
        case .none:
            break
        case .fill(let colour, let radius):
            fill(f, colour, opacity, radius: radius)
        case .text(let text, let size, let bold, let colour, let centred):
            self.text(text, in: f, size: size, bold: bold, colour, opacity, centred: centred)
        case .icon(let colour):
            fill(f, colour, opacity, radius: f.width * 0.225)
            let g = f.width * 0.16
            fill(Rect(x: f.x + f.width * 0.28, y: f.y + f.height * 0.28, width: f.width * 0.44, height: g), Palette.white, opacity)
            fill(Rect(x: f.x + f.width * 0.28, y: f.y + f.height * 0.28, width: g, height: f.height * 0.44), Palette.white, opacity)
            fill(Rect(x: f.x + f.width * 0.5, y: f.y + f.height * 0.5, width: f.width * 0.22, height: f.height * 0.22), Palette.white, opacity,
                 radius: f.width * 0.11)
        case .toggle(let on):
            fill(f, on ? Palette.green : Palette.offTrack, opacity, radius: f.height / 2)
            let knob = f.height - 4
            fill(Rect(x: on ? f.maxX - 2 - knob : f.x + 2, y: f.y + 2, width: knob, height: knob), Palette.white, opacity, radius: knob / 2)
        case .pill(let background, let text, let size, let colour):
            fill(f, background, opacity, radius: f.height / 2)
            self.text(text, in: f, size: size, bold: true, colour, opacity, centred: true)
        case .chevron(let colour):
            let s = f.width * 0.3
            fill(Rect(x: f.x, y: f.y, width: f.width * 0.7, height: s), colour, opacity)
            fill(Rect(x: f.x + f.width * 0.7 - s, y: f.y, width: s, height: f.height), colour, opacity)
        case .infoButton(let colour):
            fill(f, colour, opacity, radius: f.width / 2)
            fill(f.insetBy(1.6), Palette.white, opacity, radius: f.width / 2 - 1.6)
            fill(Rect(x: f.x + f.width / 2 - 1, y: f.y + f.height * 0.42, width: 2, height: f.height * 0.34), colour, opacity)
            fill(Rect(x: f.x + f.width / 2 - 1.1, y: f.y + f.height * 0.24, width: 2.2, height: 2.2), colour, opacity, radius: 1.1)
        case .plus(let colour):
            let c = (x: f.x + f.width / 2, y: f.y + f.height / 2), arm = min(f.width, f.height) * 0.22
            fill(Rect(x: c.x - arm, y: c.y - 1, width: arm * 2, height: 2), colour, opacity)
            fill(Rect(x: c.x - 1, y: c.y - arm, width: 2, height: arm * 2), colour, opacity)
        }
    }

    /// One line of text as glyph-like strokes: stems, bars and bowls of the
    /// font's cap and x heights, on the frame's vertical centre.
    mutating func text(_ text: String, in f: Rect, size: Double, bold: Bool, _ colour: Color, _ opacity: Double, centred: Bool) {
        let stroke = size * (bold ? 0.12 : 0.08), capHeight = size * 0.7, xHeight = size * 0.5
        func advance(_ s: Unicode.Scalar) -> Double {
            s == " " ? size * 0.27 : s.properties.isUppercase ? size * 0.64 : size * 0.52
        }
        let total = text.unicodeScalars.reduce(0) { $0 + advance($1) }
        var pen = centred ? f.x + max(0, (f.width - total) / 2) : f.x
        let baseline = f.y + f.height / 2 + capHeight / 2
        for s in text.unicodeScalars {
            let a = advance(s)
            guard pen + a <= f.maxX + 0.5 else { break }
            defer { pen += a }
            if s == " " { continue }
            let tall = s.properties.isUppercase || (s.properties.numericType != nil) || "bdfhklt".unicodeScalars.contains(s)
            let h = tall ? capHeight : xHeight, top = baseline - h
            let gw = a - size * 0.12
            switch s.value % 4 {
            case 0:
                fill(Rect(x: pen, y: top, width: stroke, height: h), colour, opacity)
                fill(Rect(x: pen, y: top, width: gw, height: stroke), colour, opacity)
            case 1:
                fill(Rect(x: pen, y: top, width: stroke, height: h), colour, opacity)
                fill(Rect(x: pen + gw - stroke, y: baseline - xHeight, width: stroke, height: xHeight), colour, opacity)
                fill(Rect(x: pen, y: baseline - xHeight, width: gw, height: stroke), colour, opacity)
            case 2:
                // A bowl: a box of four strokes.
                let bowlTop = baseline - xHeight
                fill(Rect(x: pen, y: bowlTop, width: gw, height: stroke), colour, opacity)
                fill(Rect(x: pen, y: baseline - stroke, width: gw, height: stroke), colour, opacity)
                fill(Rect(x: pen, y: tall ? top : bowlTop, width: stroke, height: tall ? h : xHeight), colour, opacity)
                fill(Rect(x: pen + gw - stroke, y: bowlTop, width: stroke, height: xHeight), colour, opacity)
            default:
                fill(Rect(x: pen + gw / 2 - stroke / 2, y: top, width: stroke, height: h), colour, opacity)
            }
        }
    }

    /// Fills a rectangle in points (rounded corners of `radius` points) with
    /// anti-aliased edges.
    mutating func fill(_ r: Rect, _ colour: Color, _ opacity: Double, radius: Double = 0) {
        fillPixels(r, radius: radius) { p, i, coverage in
            let a = coverage * opacity * colour.alpha
            p[i] = Painter.mix(p[i], colour.red, a)
            p[i + 1] = Painter.mix(p[i + 1], colour.green, a)
            p[i + 2] = Painter.mix(p[i + 2], colour.blue, a)
        }
    }

    static func mix(_ under: UInt8, _ over: Double, _ a: Double) -> UInt8 {
        UInt8(max(0, min(255, (Double(under) * (1 - a) + over * 255 * a).rounded())))
    }

    /// Calls `body` for every pixel a rounded rectangle touches, with the
    /// share of the pixel it covers (a signed-distance estimate).
    mutating func fillPixels(_ r: Rect, radius: Double, _ body: (UnsafeMutableBufferPointer<UInt8>, Int, Double) -> Void) {
        let x0 = r.x * scale, y0 = r.y * scale, x1 = r.maxX * scale, y1 = r.maxY * scale
        guard x1 > x0, y1 > y0 else { return }
        let ix0 = max(0, Int(x0.rounded(.down))), ix1 = min(width, Int(x1.rounded(.up)))
        let iy0 = max(0, Int(y0.rounded(.down))), iy1 = min(height, Int(y1.rounded(.up)))
        guard ix1 > ix0, iy1 > iy0 else { return }
        let cx = (x0 + x1) / 2, cy = (y0 + y1) / 2, hw = (x1 - x0) / 2, hh = (y1 - y0) / 2
        let rad = max(0, min(radius * scale, hw, hh))
        let w = width
        pixels.withUnsafeMutableBufferPointer { p in
            for py in iy0..<iy1 {
                let qy = abs(Double(py) + 0.5 - cy) - (hh - rad)
                for px in ix0..<ix1 {
                    let qx = abs(Double(px) + 0.5 - cx) - (hw - rad)
                    let ox = max(qx, 0), oy = max(qy, 0)
                    let d = (ox * ox + oy * oy).squareRoot() + min(max(qx, qy), 0) - rad
                    let coverage = min(1, max(0, 0.5 - d))
                    if coverage > 0 { body(p, (py * w + px) * 4, coverage) }
                }
            }
        }
    }
}

private extension Rect {
    func insetBy(_ d: Double) -> Rect { Rect(x: x + d, y: y + d, width: width - 2 * d, height: height - 2 * d) }
}
