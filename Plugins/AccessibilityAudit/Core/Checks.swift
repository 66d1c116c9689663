/// The checks, each with its own switch.
public enum CheckID: String, CaseIterable, Sendable, Comparable {
    case labels = "missing-label"
    case touchTargets = "touch-target"
    case contrast = "contrast"
    case duplicateBounds = "duplicate-bounds"
    case redundantTrait = "redundant-trait"
    case conflictingTraits = "conflicting-traits"

    public static func < (a: CheckID, b: CheckID) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    public var title: String {
        switch self {
        case .labels: "Missing labels"
        case .touchTargets: "Touch targets"
        case .contrast: "Contrast"
        case .duplicateBounds: "Duplicate clickable bounds"
        case .redundantTrait: "Label repeats the trait"
        case .conflictingTraits: "Conflicting traits"
        }
    }

    public var summary: String {
        switch self {
        case .labels: "An element a screen reader lands on says nothing: no label, no text, no value."
        case .touchTargets: "Interactive elements under 24 pt on their shortest side (WCAG 2.5.8), or under Apple's 44 × 44 pt."
        case .contrast: "Text below 4.5:1 (3:1 when large), non-text below 3:1 (WCAG 1.4.3, 1.4.11)."
        case .duplicateBounds: "Two interactive elements with the same frame: one of them cannot be reached by touch."
        case .redundantTrait: "A label that says its role (\"Play button\"): the screen reader already announces it."
        case .conflictingTraits: "Traits that contradict each other (button and link, text and text field)."
        }
    }

    public var helpURI: String {
        switch self {
        case .labels: "https://www.w3.org/WAI/WCAG22/Understanding/name-role-value.html"
        case .touchTargets: "https://www.w3.org/WAI/WCAG22/Understanding/target-size-minimum.html"
        case .contrast: "https://www.w3.org/WAI/WCAG22/Understanding/contrast-minimum.html"
        case .duplicateBounds: "https://developer.android.com/guide/topics/ui/accessibility/testing#accessibility-scanner"
        case .redundantTrait: "https://developer.apple.com/documentation/uikit/uiaccessibilityelement/accessibilitylabel"
        case .conflictingTraits: "https://developer.apple.com/documentation/uikit/uiaccessibilitytraits"
        }
    }
}

/// One problem on one element.
public struct Finding: Sendable, Equatable {
    /// 1-based, in reading order (top to bottom, left to right); the picture uses the same numbers.
    public var number: Int
    public var check: CheckID
    public var severity: Severity
    public var message: String
    public var element: String
    public var frame: Rect
    public var source: String?
    /// Tree order of the element, for sorting.
    var order: Int
}

/// What one check did: its findings and how much of the screen it read.
public struct CheckReport: Sendable {
    public var check: CheckID
    public var findings: [Finding] = []
    /// Elements the check applies to (seen, and of the kind it checks).
    public var applicable = 0
    /// Of those, the ones it could read (contrast: colours known or measured).
    public var read = 0
    /// Ran over every applicable element of the whole screen.
    public var complete = true
    /// Why something was not read, with counts.
    public var notes: [String] = []

    public var coverage: String {
        "\(check.title) read \(read) of \(applicable) element\(applicable == 1 ? "" : "s")"
    }
}

/// The checks over one walk.
struct CheckRunner {
    let walk: Walk
    let enabled: Set<CheckID>
    let screenshot: Bitmap?

    /// Visibility, computed once per node.
    let seen: [Invisibility?]

    init(walk: Walk, enabled: Set<CheckID>, screenshot: Bitmap?) {
        self.walk = walk
        self.enabled = enabled
        self.screenshot = screenshot
        seen = walk.nodes.indices.map { walk.visibility($0) }
    }

    func reachable(_ i: Int) -> Bool { seen[i] == nil && !walk.nodes[i].accessibilityHidden }

    func run() -> [CheckReport] {
        var reports: [CheckReport] = []
        for check in CheckID.allCases where enabled.contains(check) {
            var report = CheckReport(check: check)
            switch check {
            case .labels: labels(&report)
            case .touchTargets: touchTargets(&report)
            case .contrast: contrast(&report)
            case .duplicateBounds: duplicateBounds(&report)
            case .redundantTrait: redundantTraits(&report)
            case .conflictingTraits: conflictingTraits(&report)
            }
            reports.append(report)
        }
        return reports
    }

    private func finding(_ check: CheckID, _ severity: Severity, _ i: Int, _ message: String) -> Finding {
        let e = walk.nodes[i].element
        return Finding(number: 0, check: check, severity: severity, message: message, element: e.displayName,
                       frame: e.frame, source: e.source, order: i)
    }

    // MARK: missing labels

    /// What a screen reader says for an element: its label, else its value.
    static func spokenText(_ e: Element) -> String? {
        for text in [e.label, e.value] {
            if let text, text.contains(where: { !$0.isWhitespace }) { return text }
        }
        return nil
    }

    private func labels(_ report: inout CheckReport) {
        for i in walk.nodes.indices where reachable(i) && walk.nodes[i].element.isAccessibilityElement {
            report.applicable += 1
            report.read += 1
            let e = walk.nodes[i].element
            guard CheckRunner.spokenText(e) == nil else { continue }
            let what = e.traits.contains(.image) ? "image" : e.traits.isDisjoint(with: .interactive) ? "element" : "control"
            let why = (e.label ?? "").isEmpty ? "no label and no value" : "a label of only white space"
            report.findings.append(finding(.labels, .error, i, "this \(what) has \(why): a screen reader lands on it and says nothing useful"))
        }
    }

    // MARK: touch targets

    static let minimumTarget = 24.0 // WCAG 2.5.8 Target Size (Minimum)
    static let recommendedTarget = 44.0 // Apple Human Interface Guidelines

    private func touchTargets(_ report: inout CheckReport) {
        for i in walk.nodes.indices where seen[i] == nil {
            let node = walk.nodes[i], e = node.element
            guard !e.traits.isDisjoint(with: .interactive), !e.traits.contains(.disabled) else { continue }
            report.applicable += 1
            report.read += 1
            // As ATF: measured on what is visible. A side that touches the
            // screen edge is not held against the element (the target goes on
            // under the bezel: touching the left or right edge exempts the
            // width, the top or bottom the height). A target that fails only
            // because an ancestor clips it is a warning, not an error.
            let visible = node.visibleRect, screen = walk.screen.size
            let widthExempt = e.frame.x <= screen.x + 0.5 || e.frame.maxX >= screen.maxX - 0.5
            let heightExempt = e.frame.y <= screen.y + 0.5 || e.frame.maxY >= screen.maxY - 0.5
            var sides: [(name: String, visible: Double, full: Double)] = []
            if !widthExempt { sides.append(("wide", visible.width, e.frame.width)) }
            if !heightExempt { sides.append(("tall", visible.height, e.frame.height)) }
            guard let shortest = sides.min(by: { $0.visible < $1.visible }) else {
                report.notes.append("\(e.displayName): touches the screen edge on both axes, not measured")
                report.read -= 1
                continue
            }
            let exempt = widthExempt ? " (its width is not measured: it touches the screen edge)"
                : heightExempt ? " (its height is not measured: it touches the screen edge)" : ""
            let size = "\(Format.number(shortest.visible)) pt \(shortest.name)"
            for (limit, rule) in [(CheckRunner.minimumTarget, "the 24 × 24 pt minimum of WCAG 2.5.8 Target Size"),
                                  (CheckRunner.recommendedTarget, "Apple's recommended 44 × 44 pt touch target")] where shortest.visible < limit {
                var severity: Severity = limit == CheckRunner.minimumTarget ? .error : .warning
                var why = ""
                if severity == .error, e.traits.contains(.link) {
                    severity = .warning
                    why = "; a link, and links in text are exempt, so a warning"
                } else if severity == .error, node.clippedByAncestor, shortest.full >= limit {
                    severity = .warning
                    why = "; an ancestor clips it (unclipped it is \(Format.number(shortest.full)) pt), so a warning"
                }
                report.findings.append(finding(.touchTargets, severity, i, "\(size): under \(rule)\(why)\(exempt)"))
                break
            }
        }
    }

    // MARK: contrast

    enum ContrastKind { case text(size: Double?, bold: Bool), nonText }

    static func contrastKind(_ e: Element) -> ContrastKind? {
        if e.traits.contains(.disabled) { return nil } // WCAG exempts inactive components
        let hasLabel = CheckRunner.spokenText(e) != nil
        if e.text != nil || !e.traits.isDisjoint(with: [.staticText, .textField, .searchField])
            || (!e.traits.isDisjoint(with: [.button, .link, .tab]) && hasLabel && !e.traits.contains(.image) && e.foreground != nil) {
            return .text(size: e.text?.size, bold: e.text?.isBold ?? false)
        }
        if e.traits.contains(.image) || !e.traits.isDisjoint(with: .interactive) { return .nonText }
        return nil
    }

    private func contrast(_ report: inout CheckReport) {
        var unmeasured: [String: Int] = [:]
        for i in walk.nodes.indices where seen[i] == nil {
            let node = walk.nodes[i], e = node.element
            guard let kind = CheckRunner.contrastKind(e) else { continue }
            if walk.isOutOfTime {
                report.complete = false
                report.notes.append("stopped at the time budget before \(e.displayName)")
                break
            }
            report.applicable += 1
            let (threshold, describeKind, sizeNote): (Double, String, String)
            switch kind {
            case .text(let size, let bold):
                let t = ContrastRequirement.forText(size: size, bold: bold)
                threshold = t.ratio
                describeKind = t.large ? "large text" : "text"
                sizeNote = t.sizeKnown ? "" : " (text size unknown, so the strict 4.5:1 applies)"
            case .nonText:
                threshold = ContrastRequirement.nonText
                describeKind = "a non-text element"
                sizeNote = ""
            }
            // Known colours: exact.
            if let foreground = e.foreground, let background = e.background ?? node.inheritedBackground {
                report.read += 1
                let fg = foreground.alpha < 1 ? foreground.composited(over: background) : foreground
                let ratio = contrastRatio(fg, background)
                if ratio < threshold {
                    report.findings.append(finding(.contrast, .error, i,
                        "contrast \(ContrastRequirement.describe(ratio, against: threshold)) is below \(Format.number(threshold)):1 for \(describeKind)\(sizeNote) (\(fg) on \(background))"))
                }
                continue
            }
            // Pixels: an estimate, never more than a warning.
            guard let screenshot else {
                unmeasured["no colours in the model and no screenshot", default: 0] += 1
                continue
            }
            switch sample(screenshot, node.visibleRect) {
            case .measured(let fg, let bg, let ratio):
                report.read += 1
                if ratio < threshold {
                    report.findings.append(finding(.contrast, .warning, i,
                        "estimated contrast \(ContrastRequirement.describe(ratio, against: threshold)) is below \(Format.number(threshold)):1 for \(describeKind)\(sizeNote) (\(fg) on \(bg), from the screenshot's pixels)"))
                }
            case .notMeasurable(let why):
                unmeasured["could not be measured from the screenshot: \(why)", default: 0] += 1
            }
        }
        for (why, count) in unmeasured.sorted(by: { $0.key < $1.key }) {
            report.notes.append("\(count) element\(count == 1 ? "" : "s"): \(why)")
        }
    }

    private func sample(_ bitmap: Bitmap, _ rect: Rect) -> PixelContrast {
        let sx = Double(bitmap.width) / walk.screen.size.width, sy = Double(bitmap.height) / walk.screen.size.height
        let x0 = max(0, Int((rect.x * sx).rounded(.down))), y0 = max(0, Int((rect.y * sy).rounded(.down)))
        let x1 = min(bitmap.width, Int((rect.maxX * sx).rounded(.up))), y1 = min(bitmap.height, Int((rect.maxY * sy).rounded(.up)))
        guard x1 > x0, y1 > y0 else { return .notMeasurable("it is outside the screenshot") }
        return bitmap.pixels.withUnsafeBufferPointer { all in
            let start = (y0 * bitmap.width + x0) * 4
            return PixelSampler.estimate(UnsafeBufferPointer(rebasing: all[start...]), width: x1 - x0, height: y1 - y0,
                                         stride: bitmap.width * 4)
        }
    }

    // MARK: beyond Scyther

    private func duplicateBounds(_ report: inout CheckReport) {
        var first: [String: Int] = [:]
        for i in walk.nodes.indices where seen[i] == nil {
            let e = walk.nodes[i].element
            guard !e.traits.isDisjoint(with: .interactive), !e.frame.isEmpty else { continue }
            report.applicable += 1
            report.read += 1
            let f = e.frame
            let key = [f.x, f.y, f.width, f.height].map { Format.number(($0 * 2).rounded() / 2) }.joined(separator: ",")
            if let other = first[key] {
                report.findings.append(finding(.duplicateBounds, .warning, i,
                    "same frame \(f) as \(walk.nodes[other].element.displayName): only one of them can be reached by touch"))
            } else {
                first[key] = i
            }
        }
    }

    /// Words a label need not contain, by trait: the screen reader already says them.
    static let traitWords: [(Traits, [String])] = [
        (.button, ["button", "btn"]), (.link, ["link"]), (.image, ["image", "picture", "photo", "icon", "graphic"]),
        (.tab, ["tab"]), (.header, ["heading", "header"]), (.searchField, ["search field"]), (.adjustable, ["slider", "adjustable"]),
        (.toggle, ["switch", "toggle"]),
    ]

    private func redundantTraits(_ report: inout CheckReport) {
        for i in walk.nodes.indices where reachable(i) && walk.nodes[i].element.isAccessibilityElement {
            let e = walk.nodes[i].element
            guard let label = e.label, !label.isEmpty else { continue }
            report.applicable += 1
            report.read += 1
            // As GTXiLib: the label ends with the role ("Play button"); a
            // role word inside a description ("Profile picture of Ann") is fine.
            let words = label.lowercased().split { !$0.isLetter }.map(String.init)
            let ending = " " + words.joined(separator: " ")
            for (trait, names) in CheckRunner.traitWords where e.traits.contains(trait) {
                if let word = names.first(where: { ending.hasSuffix(" \($0)") }) {
                    report.findings.append(finding(.redundantTrait, .warning, i,
                        "the label \"\(label)\" says \"\(word)\", which the \(trait.names.first ?? "") trait already announces"))
                    break
                }
            }
        }
    }

    static let conflicts: [(Traits, Traits, String)] = [
        (.button, .link, "a button and a link"),
        (.staticText, .textField, "static text and a text field"),
        (.staticText, .searchField, "static text and a search field"),
        (.adjustable, .button, "adjustable and a button"),
        (.textField, .button, "a text field and a button"),
    ]

    private func conflictingTraits(_ report: inout CheckReport) {
        for i in walk.nodes.indices where reachable(i) {
            let e = walk.nodes[i].element
            guard !e.traits.isEmpty else { continue }
            report.applicable += 1
            report.read += 1
            for (a, b, words) in CheckRunner.conflicts where e.traits.contains(a) && e.traits.contains(b) {
                report.findings.append(finding(.conflictingTraits, .warning, i,
                    "marked as \(words) at once: assistive technology announces one role and the element behaves as the other"))
            }
        }
    }
}
