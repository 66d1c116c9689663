import Foundation
import XCTest
import A11yAudit
@testable import PincerHost

/// The audit on models written here (every visibility rule, limit and
/// summary wording), the contrast maths against published vectors, the
/// pixel estimate on synthesised crops, and the real dumps in
/// ../shared/fixtures/layouts.
final class A11yAuditTests: XCTestCase {
    private let screenRect = Rect(x: 0, y: 0, width: 390, height: 844)

    private func screen(_ children: [Element], name: String = "test") -> Screen {
        Screen(name: name, size: screenRect, scale: 3, root: Element(type: "UIWindow", frame: screenRect, children: children, source: "root"))
    }

    private func button(_ label: String?, _ frame: Rect, id: String, traits: Traits = [.button]) -> Element {
        Element(id: id, type: "UIButton", frame: frame, isAccessibilityElement: true, label: label, traits: traits, source: id)
    }

    private func audit(_ s: Screen, checks: Set<CheckID> = Set(CheckID.allCases), limits: AuditLimits = AuditLimits(),
                       minimum: Severity = .note, screenshot: Bitmap? = nil) -> AuditReport {
        Auditor(checks: checks, limits: limits, minimumSeverity: minimum).audit(s, screenshot: screenshot, time: "2026-11-29T12:00:00Z")
    }

    private func ids(_ report: AuditReport, _ check: CheckID) -> [String] {
        report.findings.filter { $0.check == check }.map(\.element)
    }

    // MARK: - Contrast maths (WCAG, published vectors)

    func testContrastRatiosMatchThePublishedVectors() throws {
        func ratio(_ a: String, _ b: String) throws -> Double {
            contrastRatio(try XCTUnwrap(Color(css: a)), try XCTUnwrap(Color(css: b)))
        }
        XCTAssertEqual(try ratio("black", "white"), 21, accuracy: 1e-9)
        XCTAssertEqual(try ratio("#767676", "#fff"), 4.542224959605253, accuracy: 1e-9)
        XCTAssertEqual(try ratio("#777777", "#ffffff"), 4.478089453577214, accuracy: 1e-9)
        XCTAssertEqual(try ratio("#959595", "#ffffff"), 2.9953461357088114, accuracy: 1e-9)
        XCTAssertEqual(try ratio("red", "white"), 3.9984767707539985, accuracy: 1e-9)
        XCTAssertEqual(try ratio("rgb(0,198,0)", "rgb(0,0,198)"), 5.000229313902297, accuracy: 1e-9)
        XCTAssertGreaterThanOrEqual(try ratio("#767676", "#fff"), ContrastRequirement.text)
        XCTAssertLessThan(try ratio("#777777", "#fff"), ContrastRequirement.text)
        XCTAssertLessThan(try ratio("#959595", "#fff"), ContrastRequirement.nonText)
        // No rounding before comparison: 4.499 is a failure and is shown as one.
        XCTAssertEqual(ContrastRequirement.describe(4.499, against: 4.5), "4.4990:1")
        XCTAssertEqual(ContrastRequirement.describe(4.478089453577214, against: 4.5), "4.48:1")
        XCTAssertEqual(ContrastRequirement.forText(size: 18, bold: false).ratio, 3)
        XCTAssertEqual(ContrastRequirement.forText(size: 14, bold: true).ratio, 3)
        XCTAssertEqual(ContrastRequirement.forText(size: 17.9, bold: false).ratio, 4.5)
        XCTAssertFalse(ContrastRequirement.forText(size: nil, bold: true).sizeKnown)
        XCTAssertNil(Color(css: "#12345"))
        XCTAssertNil(Color(css: "rgb(300, 0, 0)"))
    }

    func testContrastCheckFromKnownColours() {
        let white = Color(r: 255, g: 255, b: 255)
        func text(_ id: String, _ fg: String, size: Double?, weight: Double? = nil, y: Double, disabled: Bool = false) -> Element {
            Element(id: id, type: "UILabel", frame: Rect(x: 20, y: y, width: 200, height: 30), isAccessibilityElement: true, label: id,
                    traits: disabled ? [.staticText, .disabled] : [.staticText], text: TextStyle(size: size, weight: weight),
                    foreground: Color(css: fg), source: id)
        }
        var root = Element(type: "UIView", frame: screenRect, background: white, children: [
            text("grey-767676", "#767676", size: 15, y: 100),
            text("grey-777777", "#777777", size: 15, y: 140),
            text("large-959595", "#959595", size: 18, y: 180),
            text("bold-999999", "#999999", size: 14, weight: 700, y: 220),
            text("unknown-size", "#777777", size: nil, y: 260),
            text("disabled", "#bbbbbb", size: 15, y: 300, disabled: true),
            text("translucent", "rgba(0,0,0,0.4)", size: 15, y: 340),
        ])
        root.source = "content"
        let report = audit(screen([root]), checks: [.contrast])
        XCTAssertEqual(ids(report, .contrast), ["grey-777777", "large-959595", "bold-999999", "unknown-size", "translucent"])
        XCTAssertTrue(report.findings.allSatisfy { $0.severity == .error }, "known colours give exact results: errors")
        XCTAssertTrue(report.findings.first { $0.element == "unknown-size" }!.message.contains("text size unknown"))
        XCTAssertTrue(report.findings.first { $0.element == "grey-777777" }!.message.contains("4.48:1 is below 4.5:1"))
        let contrast = report.checks[0]
        XCTAssertEqual(contrast.applicable, 6, "the disabled label is exempt")
        XCTAssertEqual(contrast.read, 6)
        XCTAssertEqual(contrast.coverage, "Contrast read 6 of 6 elements")
    }

    // MARK: - Pixels

    /// A white crop with "text": dark strokes with anti-aliased edges.
    private func textCrop(ink: (UInt8, UInt8, UInt8), width: Int = 120, height: Int = 40) -> Bitmap {
        var b = Bitmap(width: width, height: height, fill: Color(r: 255, g: 255, b: 255))
        for stroke in stride(from: 10, to: width - 10, by: 12) {
            b.fill(PixelRect(x: stroke, y: 10, width: 4, height: 20), with: Color(r: ink.0, g: ink.1, b: ink.2))
            // Anti-aliasing: half-tone columns either side.
            b.fill(PixelRect(x: stroke - 1, y: 10, width: 1, height: 20), with: Color(r: ink.0, g: ink.1, b: ink.2, a: 128))
            b.fill(PixelRect(x: stroke + 4, y: 10, width: 1, height: 20), with: Color(r: ink.0, g: ink.1, b: ink.2, a: 64))
        }
        return b
    }

    private func estimate(_ b: Bitmap) -> PixelContrast {
        b.pixels.withUnsafeBufferPointer { PixelSampler.estimate($0, width: b.width, height: b.height, stride: b.width * 4) }
    }

    func testPixelEstimateFindsTheTwoColoursDespiteAntiAliasing() throws {
        guard case .measured(let fg, let bg, let ratio) = estimate(textCrop(ink: (0, 0, 0))) else { return XCTFail("not measured") }
        XCTAssertEqual(fg, Color(r: 0, g: 0, b: 0))
        XCTAssertEqual(bg, Color(r: 255, g: 255, b: 255))
        XCTAssertEqual(ratio, 21, accuracy: 1e-9)
        guard case .measured(let grey, _, let greyRatio) = estimate(textCrop(ink: (0x77, 0x77, 0x77))) else { return XCTFail("not measured") }
        XCTAssertEqual(grey, Color(r: 0x77, g: 0x77, b: 0x77))
        XCTAssertEqual(greyRatio, 4.478089453577214, accuracy: 1e-9)
        // A small icon: an 8 × 8 glyph in a 44 × 44 target.
        var icon = Bitmap(width: 44, height: 44, fill: Color(r: 0xF2, g: 0xF2, b: 0xF7))
        icon.fill(PixelRect(x: 18, y: 18, width: 8, height: 8), with: Color(r: 0x0A, g: 0x84, b: 0xFF))
        guard case .measured(let blue, let light, _) = estimate(icon) else { return XCTFail("icon not measured") }
        XCTAssertEqual(blue, Color(r: 0x0A, g: 0x84, b: 0xFF))
        XCTAssertEqual(light, Color(r: 0xF2, g: 0xF2, b: 0xF7))
    }

    func testPixelEstimateSaysWhenThereIsNoStructure() {
        // A flat area.
        guard case .notMeasurable = estimate(Bitmap(width: 50, height: 50, fill: Color(r: 30, g: 60, b: 90))) else { return XCTFail("flat measured") }
        // A gradient: a continuum of tones, no two groups.
        var ramp = Bitmap(width: 256, height: 20, fill: Color(r: 0, g: 0, b: 0))
        for x in 0..<256 { ramp.fill(PixelRect(x: x, y: 0, width: 1, height: 20), with: Color(r: UInt8(x), g: UInt8(x), b: UInt8(x))) }
        guard case .notMeasurable = estimate(ramp) else { return XCTFail("gradient measured") }
        // A speck: one dark pixel in 40 × 40 is not text.
        var speck = Bitmap(width: 40, height: 40, fill: Color(r: 255, g: 255, b: 255))
        speck.fill(PixelRect(x: 20, y: 20, width: 1, height: 1), with: Color(r: 0, g: 0, b: 0))
        guard case .notMeasurable = estimate(speck) else { return XCTFail("speck measured") }
        // Noise (a photo-like crop).
        var noise = Bitmap(width: 64, height: 64, fill: Color(r: 0, g: 0, b: 0))
        var seed: UInt32 = 12345
        for y in 0..<64 {
            for x in 0..<64 {
                seed = seed &* 1_103_515_245 &+ 12345
                let v = UInt8(truncatingIfNeeded: seed >> 16)
                noise.fill(PixelRect(x: x, y: y, width: 1, height: 1), with: Color(r: v, g: v, b: v))
            }
        }
        guard case .notMeasurable = estimate(noise) else { return XCTFail("noise measured") }
    }

    func testScreenshotEstimatesAreWarningsAndUnmeasurableAreCounted() throws {
        // 390 × 844 pt at 1x for a small bitmap: grey text at (20, 100), a flat area at (20, 200).
        var shot = Bitmap(width: 390, height: 844, fill: Color(r: 255, g: 255, b: 255))
        let crop = textCrop(ink: (0x77, 0x77, 0x77), width: 200, height: 30)
        for y in 0..<30 {
            for x in 0..<200 {
                let o = (y * 200 + x) * 4
                shot.fill(PixelRect(x: 20 + x, y: 100 + y, width: 1, height: 1),
                          with: Color(r: crop.pixels[o], g: crop.pixels[o + 1], b: crop.pixels[o + 2]))
            }
        }
        let s = Screen(name: "shot", size: screenRect, scale: 1, root: Element(frame: screenRect, children: [
            Element(id: "grey", frame: Rect(x: 20, y: 100, width: 200, height: 30), isAccessibilityElement: true, label: "grey",
                    traits: [.staticText], text: TextStyle(size: 15), source: "grey"),
            Element(id: "blank", frame: Rect(x: 20, y: 200, width: 200, height: 30), isAccessibilityElement: true, label: "blank",
                    traits: [.staticText], text: TextStyle(size: 15), source: "blank"),
        ]))
        let report = audit(s, checks: [.contrast], screenshot: shot)
        XCTAssertEqual(report.findings.count, 1)
        XCTAssertEqual(report.findings.first?.severity, .warning, "a pixel estimate is never more than a warning")
        XCTAssertTrue(report.findings.first?.message.contains("estimated contrast 4.48:1") == true, report.findings.first?.message ?? "")
        XCTAssertEqual(report.checks[0].read, 1)
        XCTAssertEqual(report.checks[0].applicable, 2)
        XCTAssertTrue(report.checks[0].notes.contains { $0.contains("could not be measured") })
        XCTAssertEqual(report.summary, .issuesFound)
    }

    // MARK: - Visibility

    func testOneVisibilityRuleForEveryCheck() {
        let frame = Rect(x: 40, y: 100, width: 120, height: 50)
        var clipper = Element(id: "clipper", frame: Rect(x: 0, y: 300, width: 390, height: 40), clipsToBounds: true,
                              children: [button(nil, Rect(x: 40, y: 400, width: 120, height: 50), id: "clipped-away")])
        clipper.source = "clipper"
        let report = audit(screen([
            button(nil, frame, id: "visible"),
            button(nil, frame.offset(y: 60), id: "hidden").with { $0.isHidden = true },
            button(nil, frame.offset(y: 120), id: "transparent").with { $0.alpha = 0 },
            clipper,
            button(nil, Rect(x: 500, y: 100, width: 120, height: 50), id: "off-screen"),
            button(nil, Rect(x: 40, y: 600, width: 120, height: 50), id: "covered"),
            Element(id: "cover", frame: Rect(x: 0, y: 580, width: 390, height: 100), isOpaque: true, source: "cover"),
            Element(id: "ax-hidden", frame: Rect(x: 0, y: 700, width: 390, height: 60), accessibilityElementsHidden: true,
                    children: [button(nil, Rect(x: 40, y: 700, width: 120, height: 50), id: "under-ax-hidden")], source: "ax"),
        ]), checks: [.labels])
        XCTAssertEqual(ids(report, .labels), ["visible"])
        XCTAssertEqual(report.checks[0].applicable, 1)

        // A modal view: only its subtree can be seen.
        let modal = audit(screen([
            button(nil, frame, id: "behind"),
            Element(id: "sheet", frame: Rect(x: 0, y: 400, width: 390, height: 444), isModal: true,
                    children: [button(nil, Rect(x: 40, y: 500, width: 120, height: 50), id: "in-sheet")], source: "sheet"),
        ]), checks: [.labels, .touchTargets])
        XCTAssertEqual(ids(modal, .labels), ["in-sheet"])
    }

    // MARK: - Limits

    func testEveryLimitStopsTheWalkAndSaysWhatWasNotChecked() {
        // Depth: a chain 150 levels deep.
        var chain = button("deep", Rect(x: 40, y: 100, width: 100, height: 50), id: "leaf")
        for level in 0..<150 { chain = Element(id: "level-\(level)", frame: screenRect, children: [chain], source: "level-\(level)") }
        let deep = audit(screen([chain]))
        XCTAssertNotNil(deep.stoppedBy)
        XCTAssertTrue(deep.stoppedBy!.contains("depth limit (100"), deep.stoppedBy!)
        XCTAssertEqual(deep.walkedElements, 100)
        XCTAssertEqual(deep.totalElements, 152)
        XCTAssertEqual(deep.summary, .nothingWasChecked, "the only labelled element was below the limit")
        XCTAssertTrue(deep.headline.detail.contains("52 of 152 elements not checked"), deep.headline.detail)
        // With something read above the limit, the wording changes.
        let shallow = audit(screen([button("Top", Rect(x: 40, y: 300, width: 100, height: 50), id: "top"), chain]), checks: [.labels])
        XCTAssertEqual(shallow.summary, .noIssuesInWhatWasChecked)

        // Nodes: 6,000 elements.
        let many = (0..<6000).map { button("b\($0)", Rect(x: 40, y: 100, width: 60, height: 60), id: "b\($0)") }
        let big = audit(screen(many), checks: [.labels])
        XCTAssertTrue(big.stoppedBy?.contains("node limit (5000") == true)
        XCTAssertEqual(big.walkedElements, 5000)
        XCTAssertTrue(big.text().contains("Walked 5000 of 6001 elements; stopped at the node limit (5000 elements) before b4999"), big.text())

        // Time: no budget at all.
        let rushed = audit(screen(many), checks: [.labels], limits: AuditLimits(timeBudget: 0))
        XCTAssertTrue(rushed.stoppedBy?.contains("time budget") == true, rushed.stoppedBy ?? "nil")
        XCTAssertNotEqual(rushed.summary, .noIssuesFound)
    }

    // MARK: - Summary wording

    func testSummaryWordsNeverMeanTwoSituations() {
        var good = button("Pay", Rect(x: 40, y: 100, width: 120, height: 50), id: "pay")
        good.foreground = Color(r: 255, g: 255, b: 255)
        good.background = Color(r: 0, g: 0x40, b: 0xA0)
        XCTAssertEqual(audit(screen([good])).summary, .noIssuesFound)
        XCTAssertEqual(audit(screen([good])).headline.detail, "every enabled check read every element it applies to")
        XCTAssertEqual(audit(screen([good]), checks: []).summary, .nothingWasChecked)
        XCTAssertEqual(audit(screen([good]), checks: []).headline.detail, "no check was enabled")
        // Contrast alone on a model without colours: it read nothing.
        let plain = button("Pay", Rect(x: 40, y: 100, width: 120, height: 50), id: "plain")
        XCTAssertEqual(audit(screen([plain]), checks: [.contrast]).summary, .nothingWasChecked)
        // Labels read everything, contrast nothing: not "No Issues Found".
        let partial = audit(screen([plain]), checks: [.labels, .contrast])
        XCTAssertEqual(partial.summary, .noIssuesInWhatWasChecked)
        XCTAssertTrue(partial.headline.detail.contains("contrast read 0 of 1"), partial.headline.detail)
        // A warning hidden by the severity filter.
        let small = button("Pay", Rect(x: 40, y: 100, width: 30, height: 30), id: "small")
        let hidden = audit(screen([small]), checks: [.touchTargets], minimum: .error)
        XCTAssertEqual(hidden.summary, .findingsHidden)
        XCTAssertEqual(hidden.headline.detail, "1 finding below error not shown")
        let shown = audit(screen([small]), checks: [.touchTargets])
        XCTAssertEqual(shown.summary, .issuesFound)
        XCTAssertEqual(shown.headline.title, "1 Issue Found")
        // Every report carries the time and the checks that ran.
        XCTAssertTrue(shown.text().contains("at 2026-11-29T12:00:00Z"))
        XCTAssertTrue(shown.text().contains("Checks: touch-target"))
    }

    // MARK: - Checks

    func testLabelsReadTextAndValues() {
        let report = audit(screen([
            Element(id: "static", type: "UILabel", frame: Rect(x: 10, y: 10, width: 100, height: 20), isAccessibilityElement: true,
                    label: "Total", traits: [.staticText], source: "static"),
            Element(id: "slider", frame: Rect(x: 10, y: 40, width: 200, height: 44), isAccessibilityElement: true, value: "50%",
                    traits: [.adjustable], source: "slider"),
            button("   ", Rect(x: 10, y: 100, width: 100, height: 44), id: "blank"),
            Element(id: "photo", frame: Rect(x: 10, y: 200, width: 100, height: 100), isAccessibilityElement: true, traits: [.image], source: "photo"),
            Element(id: "container", frame: Rect(x: 0, y: 300, width: 390, height: 100), source: "container"),
        ]), checks: [.labels])
        XCTAssertEqual(ids(report, .labels), ["blank", "photo"])
        XCTAssertTrue(report.findings[0].message.contains("white space"))
        XCTAssertTrue(report.findings[1].message.contains("image"))
    }

    func testTouchTargets() {
        var scroller = Element(id: "scroller", frame: Rect(x: 0, y: 500, width: 390, height: 20), clipsToBounds: true,
                               children: [button("Clipped", Rect(x: 100, y: 495, width: 60, height: 50), id: "clipped")])
        scroller.source = "scroller"
        let report = audit(screen([
            button("Tiny", Rect(x: 40, y: 100, width: 20, height: 20), id: "tiny"),
            button("Small", Rect(x: 40, y: 140, width: 30, height: 60), id: "small"),
            button("Fine", Rect(x: 40, y: 220, width: 44, height: 44), id: "fine"),
            button("More", Rect(x: 40, y: 280, width: 40, height: 16), id: "link", traits: [.link]),
            button("Edge", Rect(x: 0, y: 320, width: 16, height: 60), id: "edge"),
            button("Off", Rect(x: 100, y: 400, width: 20, height: 20), id: "disabled", traits: [.button, .disabled]),
            scroller,
        ]), checks: [.touchTargets])
        let byID = Dictionary(uniqueKeysWithValues: report.findings.map { ($0.element, $0) })
        XCTAssertEqual(byID["tiny"]?.severity, .error)
        XCTAssertTrue(byID["tiny"]?.message.contains("WCAG 2.5.8") == true)
        XCTAssertEqual(byID["small"]?.severity, .warning)
        XCTAssertTrue(byID["small"]?.message.contains("44 × 44") == true)
        XCTAssertNil(byID["fine"])
        XCTAssertEqual(byID["link"]?.severity, .warning, "links are capped at warning")
        XCTAssertNil(byID["edge"], "the width of an element at the screen edge is not held against it; its height passes")
        XCTAssertNil(byID["disabled"])
        XCTAssertEqual(byID["clipped"]?.severity, .warning, "clipped by an ancestor and large enough unclipped: a warning")
        XCTAssertTrue(byID["clipped"]?.message.contains("unclipped it is 50 pt") == true, byID["clipped"]?.message ?? "")
    }

    func testBeyondScyther() {
        let frame = Rect(x: 40, y: 100, width: 120, height: 50)
        let report = audit(screen([
            button("Play button", frame, id: "play"),
            button("Play", frame, id: "play-twin"),
            button("Open", Rect(x: 40, y: 200, width: 120, height: 50), id: "both", traits: [.button, .link]),
            Element(id: "logo", frame: Rect(x: 40, y: 300, width: 50, height: 50), isAccessibilityElement: true, label: "Company logo image",
                    traits: [.image], source: "logo"),
        ]), checks: [.duplicateBounds, .redundantTrait, .conflictingTraits])
        XCTAssertEqual(ids(report, .duplicateBounds), ["play-twin"])
        XCTAssertEqual(ids(report, .redundantTrait), ["play", "logo"])
        XCTAssertEqual(ids(report, .conflictingTraits), ["both"])
    }

    // MARK: - Outputs

    func testJSONAndSARIF() throws {
        let report = audit(screen([button(nil, Rect(x: 40, y: 100, width: 20, height: 20), id: "bad")]))
        XCTAssertEqual(report.findings.map(\.number), [1, 2])
        let json = report.json()
        XCTAssertEqual(json["summary"]?["result"]?.stringValue, "Issues Found")
        XCTAssertEqual(json["findings"]?.arrayValue?.count, 2)
        XCTAssertEqual(json["checksRun"]?.arrayValue?.count, CheckID.allCases.count)
        let sarif = report.sarif(artifact: "screen.json", toolVersion: "1.0.0")
        XCTAssertEqual(sarif["version"]?.stringValue, "2.1.0")
        let run = try XCTUnwrap(sarif["runs"]?.arrayValue?.first)
        let rules = try XCTUnwrap(run["tool"]?["driver"]?["rules"]?.arrayValue)
        XCTAssertEqual(rules.map { $0["id"]?.stringValue ?? "" }, CheckID.allCases.map(\.rawValue))
        let results = try XCTUnwrap(run["results"]?.arrayValue)
        XCTAssertEqual(results.count, 2)
        for result in results {
            let id = try XCTUnwrap(result["ruleId"]?.stringValue)
            let index = try XCTUnwrap(result["ruleIndex"]?.int64Value)
            XCTAssertEqual(rules[Int(index)]["id"]?.stringValue, id, "ruleIndex points at the rule")
            XCTAssertTrue(["error", "warning", "note"].contains(result["level"]?.stringValue ?? ""))
            XCTAssertNotNil(result["message"]?["text"]?.stringValue)
            XCTAssertEqual(result["locations"]?.arrayValue?.first?["physicalLocation"]?["artifactLocation"]?["uri"]?.stringValue, "screen.json")
            XCTAssertEqual(result["locations"]?.arrayValue?.first?["logicalLocations"]?.arrayValue?.first?["fullyQualifiedName"]?.stringValue, "bad")
        }
        XCTAssertEqual(run["invocations"]?.arrayValue?.first?["executionSuccessful"]?.boolValue, true)
    }

    // MARK: - Real dumps

    func testEveryFixtureLayoutAuditsWithoutError() throws {
        let folder = "\(Fixture.packageRoot)/../shared/fixtures/layouts"
        // A missing folder is an error (the fixtures are part of the checkout), not a skip.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        XCTAssertTrue(names.contains("appium-ios-NodeForRootElementNotFound.xml"), "the empty-screen fixture is checked below")
        var audited = 0
        for name in names.sorted() where name.hasSuffix(".xml") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)")))
            let screen = try LayoutImport.read(bytes)
            let report = audit(screen)
            XCTAssertEqual(report.walkedElements, report.totalElements, name)
            XCTAssertNotEqual(report.summary, .noIssuesFound, "\(name): no colours or pixels, so contrast cannot have read everything")
            if name == "appium-ios-NodeForRootElementNotFound.xml" {
                XCTAssertEqual(report.headline.title, "Nothing Was Checked")
                XCTAssertEqual(report.headline.detail, "the input describes an empty screen")
            }
            XCTAssertFalse(report.text().isEmpty)
            audited += 1
        }
        XCTAssertEqual(audited, names.filter { $0.hasSuffix(".xml") }.count, "every layout in the folder")
    }
}

private extension Rect {
    func offset(y dy: Double) -> Rect { Rect(x: x, y: y + dy, width: width, height: height) }
}

private extension Element {
    func with(_ change: (inout Element) -> Void) -> Element {
        var copy = self
        change(&copy)
        return copy
    }
}
