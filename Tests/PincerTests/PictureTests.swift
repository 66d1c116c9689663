import Foundation
import XCTest
@testable import PincerPluginKit
import NetworkLog
import GeoRoutes
import PincerXML
@testable import A11yAudit

/// Pictures: the kit's PictureFile (SVG as is, PNG through the real
/// librsvg), the audit overlay read back as pixels, the commands that write
/// pictures run through the real `pincer`, and one golden SVG per picture
/// kind (compared structurally, and rendered by rsvg-convert).
final class PictureTests: XCTestCase {
    // MARK: PictureFile

    func testKindByExtension() throws {
        XCTAssertEqual(try PictureFile.kind(of: "w.png"), .png)
        XCTAssertEqual(try PictureFile.kind(of: "/tmp/a.b/W.PNG"), .png)
        XCTAssertEqual(try PictureFile.kind(of: "map.Svg"), .svg)
        for bad in ["w.jpg", "w", "png", "/tmp/x.png/", "dir.png/file", ".png", "w.png.gz"] {
            XCTAssertThrowsError(try PictureFile.kind(of: bad), bad) { error in
                XCTAssertEqual("\(error)", "cannot write the picture \(bad): the file must end in .png or .svg")
            }
        }
    }

    static let twoHalves = """
        <svg xmlns="http://www.w3.org/2000/svg" width="40" height="30.5" viewBox="0 0 40 30.5">
        <rect width="20" height="30.5" fill="#ff0000"/><rect x="20" width="20" height="30.5" fill="#0000ff"/></svg>
        """

    func testPNGHasTheSVGsSizeAndPixels() throws {
        let raster = try PictureFile.png(svg: Self.twoHalves)
        XCTAssertEqual(Array(raster.bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        // IHDR: width and height, big-endian, right after the signature and the chunk header.
        func word(_ at: Int) -> Int { raster.bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        XCTAssertEqual(Array(raster.bytes[12..<16]), Array("IHDR".utf8))
        XCTAssertEqual(word(16), 40)
        XCTAssertEqual(word(20), 31, "30.5 pixels round up")
        XCTAssertEqual(raster.width, 40)
        XCTAssertEqual(raster.height, 31)
        let image = try Bitmap.readPNG(raster.bytes)
        XCTAssertEqual(image.width, 40)
        XCTAssertEqual(image.height, 31)
        XCTAssertEqual(image[5, 5], Color(r: 255, g: 0, b: 0))
        XCTAssertEqual(image[35, 5], Color(r: 0, g: 0, b: 255))
        // Below the drawing (the half pixel row) is transparent, not painted.
        let edge = image.rgba(x: 5, y: 30).a
        XCTAssert(edge > 0 && edge < 255, "\(edge)")
    }

    func testBadSVGIsRefusedWithTheReason() {
        XCTAssertThrowsError(try PictureFile.png(svg: "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"")) { error in
            XCTAssertTrue("\(error)".hasPrefix("the SVG does not parse: "), "\(error)")
        }
        XCTAssertThrowsError(try PictureFile.png(svg: "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 10 10\"/>")) { error in
            XCTAssertTrue("\(error)".contains("no width and height"), "\(error)")
        }
        XCTAssertThrowsError(try PictureFile.png(svg: "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40000\" height=\"10\"/>")) { error in
            XCTAssertTrue("\(error)".contains("not between 1 and 32768"), "\(error)")
        }
    }

    /// Without librsvg a PNG cannot be made, and the message says what to install.
    func testMissingLibrsvgIsNamed() {
        guard case .failure(let error) = PictureFile.Librsvg.load(rsvg: "librsvg-missing-for-test.so.2") else {
            return XCTFail("a library that does not exist loaded")
        }
        XCTAssertTrue(error.message.hasPrefix("PNG pictures need librsvg (Debian's librsvg2-2; run `bash scripts/deps`), "
                                              + "and librsvg-missing-for-test.so.2 cannot be loaded: "), error.message)
        XCTAssertTrue(error.message.hasSuffix("write an .svg instead"), error.message)
        guard case .success = PictureFile.Librsvg.load() else { return XCTFail("librsvg2-2 is installed by scripts/deps") }
    }

    func testWriteByExtensionIsAtomic() throws {
        let dir = Fixture.temporaryDirectory("pincer-picture")
        XCTAssertEqual(try PictureFile.write(svg: Self.twoHalves, to: "\(dir)/a.png"), .png)
        XCTAssertEqual(try Bitmap.readPNG(path: "\(dir)/a.png").width, 40)
        XCTAssertEqual(try PictureFile.write(svg: Self.twoHalves, to: "\(dir)/a.SVG"), .svg)
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/a.SVG", encoding: .utf8), Self.twoHalves)
        XCTAssertThrowsError(try PictureFile.write(svg: Self.twoHalves, to: "\(dir)/a.gif"))
        // A PNG that cannot be drawn leaves the old file alone, and no temporary file behind.
        XCTAssertThrowsError(try PictureFile.write(svg: "<svg", to: "\(dir)/a.png")) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot write the picture \(dir)/a.png: the SVG does not parse"), "\(error)")
        }
        XCTAssertEqual(try Bitmap.readPNG(path: "\(dir)/a.png").width, 40)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["a.SVG", "a.png"])
        XCTAssertThrowsError(try PictureFile.write(svg: Self.twoHalves, to: "\(dir)/missing/a.png")) { error in
            XCTAssertTrue("\(error)".contains("\(dir)/missing/a.png"), "\(error)")
        }
    }

    // MARK: The audit overlay, read back as pixels

    static let shotColor = Color(r: 200, g: 230, b: 200)

    /// 100 × 200 points at 2x: a button, a panel with a label, a hidden view.
    func screen(size: Rect = Rect(x: 0, y: 0, width: 100, height: 200), scale: Double = 2) -> Screen {
        let button = Element(id: "pay", type: "UIButton", frame: Rect(x: 10, y: 20, width: 40, height: 30), label: "Pay & <go>")
        let panel = Element(type: "UIView", frame: Rect(x: 5, y: 90, width: 90, height: 100), label: "Panel",
                            children: [Element(type: "UILabel", frame: Rect(x: 20, y: 120, width: 60, height: 20), label: "Total: 12 €")])
        let hidden = Element(type: "UIView", frame: Rect(x: 0, y: 0, width: 100, height: 200), label: "Secret", isHidden: true)
        let root = Element(type: "UIWindow", frame: size, children: [button, panel, hidden])
        return Screen(name: "Checkout <test>", size: size, scale: scale, root: root)
    }

    static let boxes = [
        PictureBox(number: 1, frame: Rect(x: 10, y: 20, width: 40, height: 30), severity: .error),
        PictureBox(number: 2, frame: Rect(x: 60, y: 100, width: 30, height: 30), severity: .warning),
        PictureBox(number: 3, frame: Rect(x: -20, y: 150, width: 50, height: 20), severity: .note),
        PictureBox(number: 4, frame: Rect(x: 150, y: 50, width: 20, height: 20), severity: .error),
    ]

    func render(_ svg: String, file: StaticString = #filePath, line: UInt = #line) throws -> Bitmap {
        try Bitmap.readPNG(PictureFile.png(svg: svg).bytes)
    }

    typealias Pixel = (r: UInt8, g: UInt8, b: UInt8, a: UInt8)
    func isRed(_ p: Pixel) -> Bool { p.r >= 190 && p.g <= 40 && p.b <= 40 }
    func isLight(_ p: Pixel) -> Bool { p.r >= 225 && p.g >= 225 && p.b >= 225 }
    func isDark(_ p: Pixel) -> Bool { p.r <= 60 && p.g <= 60 && p.b <= 60 }

    func testOverlayOnAScreenshotAtItsPixelSize() throws {
        let svg = Picture.svg(screen: screen(), screenshot: Bitmap(width: 200, height: 400, fill: Self.shotColor), boxes: Self.boxes)
        let picture = try render(svg)
        // The screenshot's pixels, and the legend band beneath: three lines on a screen this narrow.
        let legend = Picture.Legend(Self.boxes, width: 100)
        XCTAssertEqual(legend.entries.map(\.line), [0, 1, 2])
        XCTAssertEqual(Picture.Legend(Self.boxes, width: 390).entries.map(\.line), [0, 0, 0])
        XCTAssertEqual(Picture.Legend(Self.boxes, width: 390).height, 22)
        XCTAssertEqual(picture.width, 200)
        XCTAssertEqual(picture.height, Int(((200 + legend.height) * 2).rounded(.up)))
        // Box 1 spans pixels 20...100 × 40...100: red inside its edge, a dark rim, a light halo outside.
        XCTAssert(isRed(picture.rgba(x: 22, y: 80)), "\(picture.rgba(x: 22, y: 80))")
        XCTAssert(isRed(picture.rgba(x: 60, y: 97)), "\(picture.rgba(x: 60, y: 97))")
        XCTAssert(isDark(picture.rgba(x: 19, y: 80)), "\(picture.rgba(x: 19, y: 80))")
        XCTAssert(isLight(picture.rgba(x: 17, y: 80)), "\(picture.rgba(x: 17, y: 80))")
        XCTAssertEqual(picture[60, 70], Self.shotColor, "inside the box the screenshot shows")
        XCTAssertEqual(picture[150, 20], Self.shotColor)
        // Box 2 is orange.
        let orange = picture.rgba(x: 122, y: 250)
        XCTAssert(orange.r >= 230 && orange.g >= 130 && orange.g <= 170 && orange.b <= 30, "\(orange)")
        // Box 4 is off the right edge: no outline there, but its badge is inside the picture.
        XCTAssertEqual(picture[190, 160], Self.shotColor)
        // The legend band is light, with text in it.
        var dark = 0
        picture.forEachPixel(in: PixelRect(x: 0, y: 400, width: 200, height: picture.height - 400)) { _, _, r, g, b, _ in if r < 100 && g < 100 && b < 100 { dark += 1 } }
        XCTAssertGreaterThan(dark, 100, "legend text")
    }

    /// The outline shows on a black screenshot and on a white one.
    func testOutlinesShowOnAnyBackground() throws {
        for fill in [Color(r: 0, g: 0, b: 0), Color(r: 255, g: 255, b: 255)] {
            let svg = Picture.svg(screen: screen(), screenshot: Bitmap(width: 200, height: 400, fill: fill), boxes: [Self.boxes[0]])
            let picture = try render(svg)
            XCTAssert(isLight(picture.rgba(x: 17, y: 80)), "\(fill): light halo \(picture.rgba(x: 17, y: 80))")
            XCTAssert(isDark(picture.rgba(x: 19, y: 80)), "\(fill): dark rim \(picture.rgba(x: 19, y: 80))")
            XCTAssert(isRed(picture.rgba(x: 22, y: 80)), "\(fill): red line")
        }
    }

    /// Badges as the SVG places them (inside the `ring` of each badge group).
    func badges(_ svg: String) throws -> [Int: Rect] {
        let doc = try SVGTree(svg)
        var out: [Int: Rect] = [:]
        for group in doc.all(where: { $0.name == "g" && ($0.attributes["id"] ?? "").hasPrefix("badge-") }) {
            let number = Int(group.attributes["id"]!.dropFirst(6))!
            // The dark ring is the badge's outer edge, a point outside its place.
            let ring = try XCTUnwrap(group.children.first { $0.attributes["class"] == "ring" })
            out[number] = Rect(x: ring.double("x") + 1, y: ring.double("y") + 1, width: ring.double("width") - 2, height: ring.double("height") - 2)
        }
        return out
    }

    func testBadgesKeepApartAndOffSmallElements() throws {
        // A row of small buttons 20 points apart, three findings on one of them, and a large box.
        var boxes: [PictureBox] = []
        for i in 0..<6 { boxes.append(PictureBox(number: boxes.count + 1, frame: Rect(x: 8 + Double(i) * 20, y: 60, width: 16, height: 16), severity: .error)) }
        for _ in 0..<2 { boxes.append(PictureBox(number: boxes.count + 1, frame: Rect(x: 48, y: 60, width: 16, height: 16), severity: .warning)) }
        boxes.append(PictureBox(number: boxes.count + 1, frame: Rect(x: 10, y: 120, width: 160, height: 60), severity: .note))
        let screen = Screen(size: Rect(x: 0, y: 0, width: 180, height: 200), scale: 1, root: Element(frame: Rect(x: 0, y: 0, width: 180, height: 200)))
        let svg = Picture.svg(screen: screen, screenshot: nil, boxes: boxes)
        let placed = try badges(svg)
        XCTAssertEqual(placed.count, boxes.count)
        let numbers = placed.keys.sorted()
        for (i, a) in numbers.enumerated() {
            let ra = placed[a]!
            XCTAssertTrue(Rect(x: 0, y: 0, width: 180, height: 200).intersection(ra) == ra, "badge \(a) inside the picture")
            for b in numbers[(i + 1)...] {
                // Badges keep 3 points apart, so between their rings (a point wide) at least a point stays free.
                XCTAssertTrue(ra.inflated(by: 1.45).intersection(placed[b]!.inflated(by: 1.45)).isEmpty, "badges \(a) and \(b) touch: \(ra) \(placed[b]!)")
            }
            for box in boxes where box.frame.width < 40 {
                XCTAssertTrue(ra.intersection(box.frame).isEmpty, "badge \(a) covers the small box of #\(box.number)")
            }
        }
        // The large box keeps its badge inside, at its top right.
        let large = placed[9]!
        XCTAssertEqual(large.maxX, 167, accuracy: 0.01)
        XCTAssertEqual(large.y, 123, accuracy: 0.01)
        // Three digits make a pill, wider than it is high.
        let pillNumber = PictureBox(number: 100, frame: Rect(x: 10, y: 120, width: 160, height: 60), severity: .error)
        let pill = try XCTUnwrap(try badges(Picture.svg(screen: screen, screenshot: nil, boxes: [pillNumber]))[100])
        XCTAssertGreaterThan(pill.width, pill.height + 5)
    }

    /// Numbers follow reading order, and the report and the picture agree.
    func testNumbersFollowReadingOrder() throws {
        func button(_ id: String, _ x: Double, _ y: Double) -> Element {
            Element(id: id, type: "UIButton", frame: Rect(x: x, y: y, width: 30, height: 30), isAccessibilityElement: true, traits: [.button])
        }
        // Tree order is scrambled: bottom row first, the right one of the top row before the left one.
        let root = Element(type: "UIWindow", frame: Rect(x: 0, y: 0, width: 300, height: 300), children: [
            button("bottom", 10, 200), button("top-right", 200, 12), button("top-left", 10, 10), button("middle", 100, 100),
        ])
        let screen = Screen(size: Rect(x: 0, y: 0, width: 300, height: 300), scale: 1, root: root)
        let report = Auditor(checks: [.labels]).audit(screen, screenshot: nil, time: "2026-01-01T00:00:00Z")
        XCTAssertEqual(report.findings.map(\.element), ["top-left", "top-right", "middle", "bottom"])
        XCTAssertEqual(report.findings.map(\.number), [1, 2, 3, 4])
        XCTAssertTrue(report.text().contains("#2 error   missing-label      top-right"), report.text())
        let placed = try badges(Picture.svg(screen: screen, screenshot: nil, boxes: report.boxes))
        XCTAssertLessThan(placed[1]!.x, placed[2]!.x)
        XCTAssertLessThan(placed[2]!.y, placed[3]!.y)
        XCTAssertLessThan(placed[3]!.y, placed[4]!.y)
    }

    func testWireframeShowsEachElementsTextClippedAndEscaped() throws {
        let messages = [1: "Touch target 40 × 30 < 44 × 44 & \"too small\" \u{1}", 4: "Off <screen>"]
        let svg = Picture.svg(screen: screen(), screenshot: nil, boxes: Self.boxes, messages: messages)
        let doc = try SVGTree(svg)
        XCTAssertEqual(doc.root.attributes["width"], "200")
        let band = Picture.Legend(Self.boxes, width: 100).height
        XCTAssertEqual(doc.root.double("height"), (200 + band) * 2, accuracy: 0.01)
        XCTAssertEqual(doc.root.attributes["viewBox"], "0 0 100 \(Format.number(200 + band))")
        XCTAssertEqual(doc.all { $0.attributes["class"] == "element" }.count, 4)  // window, button, panel, label; not the hidden view
        // Texts: the innermost labelled elements (the panel's label speaks for it), clipped to their frames.
        let texts = doc.all { $0.attributes["class"] == "element-text" }
        XCTAssertEqual(texts.map(\.text), ["Pay & <go>", "Total: 12 €"])
        XCTAssertTrue(svg.contains(">Pay &amp; &lt;go&gt;</text>"))
        for text in texts {
            let id = try XCTUnwrap(text.attributes["clip-path"]).dropFirst(5).dropLast()
            let clip = try XCTUnwrap(doc.all { $0.name == "clipPath" && $0.attributes["id"] == String(id) }.first?.children.first)
            let frame = text.text.hasPrefix("Pay") ? Rect(x: 10, y: 20, width: 40, height: 30) : Rect(x: 20, y: 120, width: 60, height: 20)
            XCTAssertEqual([clip.double("x"), clip.double("y"), clip.double("width"), clip.double("height")],
                           [frame.x, frame.y, frame.width, frame.height])
        }
        // One box per finding, the titles escaped, the legend counting each severity.
        XCTAssertEqual(doc.all { $0.attributes["class"] == "box" }.count, Self.boxes.count)
        XCTAssertTrue(svg.contains("<title>#1 error: Touch target 40 × 30 &lt; 44 × 44 &amp; &quot;too small&quot; \u{FFFD}</title>"), svg)
        XCTAssertTrue(svg.contains("<title>#2 warning</title>"))
        XCTAssertTrue(svg.contains("<title>Accessibility audit: Checkout &lt;test&gt;</title>"))
        XCTAssertEqual(doc.all { ($0.attributes["class"] ?? "").hasPrefix("legend-entry") }.map(\.text), ["error (2)", "warning (1)", "note (1)"])
        XCTAssertFalse(svg.contains("data:image/png"))
        // Drawn, the label's text darkens its box; the unlabelled part of the panel stays plain.
        let picture = try render(svg)
        var inked = 0, plain = 0
        picture.forEachPixel(in: PixelRect(x: 42, y: 242, width: 72, height: 36)) { _, _, r, _, _, _ in if r < 120 { inked += 1 } }
        picture.forEachPixel(in: PixelRect(x: 70, y: 300, width: 100, height: 70)) { _, _, r, _, _, _ in if r < 120 { plain += 1 } }
        XCTAssertGreaterThan(inked, 40)
        XCTAssertEqual(plain, 0)
    }

    func testOverlayEmbedsTheScreenshot() throws {
        var shot = Bitmap(width: 200, height: 400, fill: Self.shotColor)
        shot.fill(PixelRect(x: 150, y: 300, width: 30, height: 7), with: Color(r: 1, g: 2, b: 3))
        let svg = Picture.svg(screen: screen(), screenshot: shot, boxes: Self.boxes)
        let doc = try SVGTree(svg)
        XCTAssertEqual(doc.all { $0.attributes["class"] == "element" }.count, 0, "no wireframe over a screenshot")
        let image = try XCTUnwrap(doc.all { $0.name == "image" }.first)
        let href = try XCTUnwrap(image.attributes["xlink:href"])
        XCTAssertTrue(href.hasPrefix("data:image/png;base64,"))
        let data = try XCTUnwrap(Data(base64Encoded: String(href.dropFirst(22))), "invalid base64")
        XCTAssertEqual(try Bitmap.readPNG(Array(data)), shot)
        // And librsvg draws it: the dark strip is there in the PNG.
        XCTAssertEqual(try render(svg)[160, 302], Color(r: 1, g: 2, b: 3))
    }

    // MARK: Through the real pincer

    func testPincerWritesPicturesByExtension() throws {
        let state = Fixture.temporaryDirectory("pincer-pictures")
        let out = Fixture.temporaryDirectory("pincer-pictures-out")
        func run(_ args: String...) throws -> Fixture.ProcessResult { try Fixture.pincer(["run"] + args, stateDir: state) }
        XCTAssertEqual(try run("net.persist", "1").status, 0)
        let imported = try run("net.import-har", Consumer.shared + "/har/mitmproxy-firefox.har")
        XCTAssertEqual(imported.status, 0, imported.stderr)

        // net.waterfall: PNG and SVG of the same size.
        var r = try run("net.waterfall", "\(out)/w.png")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try run("net.waterfall", "\(out)/w.svg").status, 0)
        let waterfall = try Bitmap.readPNG(path: "\(out)/w.png")
        let svg = try SVGTree(String(contentsOfFile: "\(out)/w.svg", encoding: .utf8))
        XCTAssertEqual(Double(waterfall.width), svg.root.double("width"))
        XCTAssertEqual(Double(waterfall.height), svg.root.double("height"))
        XCTAssertGreaterThan(distinctColours(waterfall), 8, "a drawn chart, not a blank page")
        r = try run("net.waterfall", "\(out)/w.jpg")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot write the picture \(out)/w.jpg: the file must end in .png or .svg"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(out)/w.jpg"))

        // a11y.audit --picture: the overlay at the screen's pixel size plus the legend.
        let model = "\(out)/screen.json"
        try Data("""
            {"format": "pincer.layout/1", "name": "Small", "scale": 2, "size": [120, 90],
             "root": {"type": "UIWindow", "frame": [0, 0, 120, 90], "children": [
               {"id": "tiny", "type": "UIButton", "frame": [50, 30, 16, 16], "accessible": true, "traits": ["button"]}]}}
            """.utf8).write(to: URL(fileURLWithPath: model))
        r = try run("a11y.audit", model, "--picture", "\(out)/a.png")
        XCTAssertEqual(r.status, 0, r.stderr)
        let overlay = try Bitmap.readPNG(path: "\(out)/a.png")
        XCTAssertEqual(overlay.width, 240)
        XCTAssertEqual(Double(overlay.height), ((90 + Picture.Legend([], width: 120).height) * 2).rounded(.up))
        XCTAssert(isRed(overlay.rgba(x: 101, y: 80)), "the tiny button's outline: \(overlay.rgba(x: 101, y: 80))")
        r = try run("a11y.audit", model, "--picture", "\(out)/a.bmp")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("cannot write the picture \(out)/a.bmp: the file must end in .png or .svg"), r.stderr)

        // loc.map: a built-in route.
        r = try run("loc.map", "city-run", "\(out)/m.png")
        XCTAssertEqual(r.status, 0, r.stderr)
        let map = try Bitmap.readPNG(path: "\(out)/m.png")
        XCTAssertEqual([map.width, map.height], [800, 600])
        XCTAssertGreaterThan(distinctColours(map), 8)
    }

    /// librsvg is loaded on the first PNG written, not when plugins start
    /// (the dynamic loader's own trace, LD_DEBUG=libs, says what it opened).
    func testLibrsvgLoadsOnlyForPNG() throws {
        let state = Fixture.temporaryDirectory("pincer-lazy-rsvg")
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env["LD_DEBUG"] = "libs"
        func loads(_ args: [String]) throws -> Bool {
            let r = try Fixture.run(Fixture.pincer, ["run"] + args, environment: env)
            XCTAssertEqual(r.status, 0, r.stderr.suffix(500).description)
            XCTAssertTrue(r.stderr.contains("calling init:"), "LD_DEBUG traced the run")
            return r.stderr.contains("librsvg-2.so.2")
        }
        XCTAssertFalse(try loads(["net.waterfall", "\(state)/w.svg"]), "SVG needs no librsvg")
        XCTAssertFalse(try loads(["a11y.checks"]))
        XCTAssertTrue(try loads(["net.waterfall", "\(state)/w.png"]), "PNG loads librsvg")
    }

    func distinctColours(_ image: Bitmap) -> Int {
        var seen = Set<UInt32>()
        image.forEachPixel(in: image.bounds) { _, _, r, g, b, a in seen.insert(UInt32(r) << 24 | UInt32(g) << 16 | UInt32(b) << 8 | UInt32(a)) }
        return seen.count
    }

    // MARK: Golden pictures

    static var goldenDirectory: String { Fixture.packageRoot + "/Tests/Fixtures/pictures" }

    /// One example of every picture kind, made from fixed inputs.
    static func examples() throws -> [(name: String, svg: String)] {
        // The waterfall: phases, every outcome, and a month-long idle gap.
        func entry(_ url: String, at: Double, status: Int? = 200, wait: Double, state: EntryState = .complete) -> NetworkEntry {
            var e = NetworkEntry(source: .captured, startedAt: at, method: "GET", url: url)
            e.state = state
            e.status = state == .complete ? status : nil
            e.timings.wait = wait
            return e
        }
        var page = entry("https://example.com/", at: 1_767_225_600, wait: 80)
        page.timings.dns = 12
        page.timings.connect = 40
        page.timings.ssl = 25
        page.timings.send = 2
        page.timings.receive = 30
        var stub = entry("https://api.example.com/flags", at: 1_767_225_600.3, wait: 3)
        stub.stubbed = true
        var failed = entry("https://down.example.com/", at: 1_767_225_600.25, wait: 300, state: .failed)
        failed.error = "connection refused"
        let entries = [page, entry("https://example.com/app.js", at: 1_767_225_600.2, wait: 120),
                       entry("https://example.com/missing.png", at: 1_767_225_600.21, status: 404, wait: 40), failed, stub,
                       entry("https://example.com/poll", at: 1_769_904_000, wait: 60),
                       entry("https://example.com/poll", at: 1_769_904_000.5, wait: 0, state: .pending)]
        let waterfall = Waterfall.svg(entries, title: "Example <page> & polling")

        // The overlay, on a screenshot and as a wireframe: a light header over a dark list.
        var shot = Bitmap(width: 360, height: 240, fill: Color(r: 250, g: 250, b: 250))
        shot.fill(PixelRect(x: 0, y: 110, width: 360, height: 130), with: Color(r: 20, g: 24, b: 32))
        let root = Element(type: "UIWindow", frame: Rect(x: 0, y: 0, width: 180, height: 120), children: [
            Element(id: "title", type: "UILabel", frame: Rect(x: 10, y: 8, width: 120, height: 18), label: "Cart & <checkout>"),
            Element(id: "back", type: "UIButton", frame: Rect(x: 10, y: 34, width: 14, height: 14), label: "Back", traits: [.button]),
            Element(id: "share", type: "UIButton", frame: Rect(x: 28, y: 34, width: 14, height: 14), label: "Share button", traits: [.button]),
            Element(id: "row", type: "UILabel", frame: Rect(x: 10, y: 70, width: 160, height: 36), label: "Total: 12 € (incl. VAT)"),
            Element(id: "pay", type: "UIButton", frame: Rect(x: 10, y: 112, width: 160, height: 0), traits: [.button]),
        ])
        let screen = Screen(name: "Golden", size: Rect(x: 0, y: 0, width: 180, height: 120), scale: 2, root: root)
        let boxes = [PictureBox(number: 1, frame: Rect(x: 10, y: 34, width: 14, height: 14), severity: .error),
                     PictureBox(number: 2, frame: Rect(x: 28, y: 34, width: 14, height: 14), severity: .error),
                     PictureBox(number: 3, frame: Rect(x: 28, y: 34, width: 14, height: 14), severity: .warning),
                     PictureBox(number: 4, frame: Rect(x: 10, y: 70, width: 160, height: 36), severity: .note),
                     PictureBox(number: 5, frame: Rect(x: 170, y: 130, width: 20, height: 20), severity: .error)]
        let messages = [1: "14 pt < 24 pt", 3: "the label says \"button\"", 5: "off <screen>"]

        // The route map: a loop, so start and end meet.
        let corners = [(46.05, 14.50), (46.05, 14.52), (46.04, 14.52), (46.04, 14.50), (46.05, 14.50)]
        let points = corners.enumerated().map { i, c in Waypoint(Coordinate(latitude: c.0, longitude: c.1), time: 1_767_225_600 + Double(i) * 300) }
        let route = Route(name: "Loop <test>", kind: .track, segments: [points])
        return [("waterfall", waterfall),
                ("overlay-screenshot", Picture.svg(screen: screen, screenshot: shot, boxes: boxes, messages: messages)),
                ("overlay-wireframe", Picture.svg(screen: screen, screenshot: nil, boxes: boxes, messages: messages)),
                ("route-map", RouteMap.svg(route))]
    }

    /// Each example matches its golden file element by element (names,
    /// attributes, text; numbers within 0.01), so a change to a picture is
    /// a reviewed change to the golden. PINCER_UPDATE_GOLDENS=1 rewrites them
    /// (and fails, so an update is never silent).
    func testPicturesMatchTheirGoldens() throws {
        let update = ProcessInfo.processInfo.environment["PINCER_UPDATE_GOLDENS"] == "1"
        for (name, svg) in try Self.examples() {
            let path = "\(Self.goldenDirectory)/\(name).svg"
            if update {
                try FileManager.default.createDirectory(atPath: Self.goldenDirectory, withIntermediateDirectories: true)
                try svg.write(toFile: path, atomically: true, encoding: .utf8)
                XCTFail("rewrote \(path): review the change and run again without PINCER_UPDATE_GOLDENS")
                continue
            }
            let golden = try SVGTree(String(contentsOfFile: path, encoding: .utf8))
            let made = try SVGTree(svg)
            let differences = SVGTree.differences(golden.root, made.root, path: name)
            XCTAssertEqual(differences, [], "\(name) differs from \(path) (PINCER_UPDATE_GOLDENS=1 rewrites it):\n"
                           + differences.prefix(10).joined(separator: "\n"))
        }
    }

    /// rsvg-convert (librsvg's own tool) draws every golden at its declared
    /// size, as the kit does, and xmllint finds it well-formed.
    func testGoldensRenderWithRsvgConvert() throws {
        let rsvg = try Consumer.require(Consumer.rsvgConvert)
        let xmllint = try Consumer.require(Consumer.xmllint)
        let out = Fixture.temporaryDirectory("pincer-golden-render")
        for (name, _) in try Self.examples() {
            let path = "\(Self.goldenDirectory)/\(name).svg"
            let lint = try Fixture.run(xmllint, ["--noout", path])
            XCTAssertEqual(lint.status, 0, "\(name): \(lint.stderr)")
            let result = try Fixture.run(rsvg, [path, "-o", "\(out)/\(name).png"])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let drawn = try Bitmap.readPNG(path: "\(out)/\(name).png")
            let ours = try PictureFile.png(svg: String(contentsOfFile: path, encoding: .utf8))
            XCTAssertEqual([drawn.width, drawn.height], [ours.width, ours.height], name)
            let root = try SVGTree(String(contentsOfFile: path, encoding: .utf8)).root
            XCTAssertEqual(Double(drawn.width), root.double("width").rounded(.up), name)
            XCTAssertEqual(Double(drawn.height), root.double("height").rounded(.up), name)
            XCTAssertGreaterThan(distinctColours(drawn), 8, "\(name) is drawn")
        }
    }
}

/// An SVG read into a tree with PincerXML (the project's XML reader), for structural checks.
struct SVGTree {
    final class Node {
        let name: String
        let attributes: [String: String]
        let children: [Node]
        let ownText: String
        init(_ node: XMLReader.Node) {
            name = node.name
            attributes = Dictionary(node.attributes.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
            children = node.children.map(Node.init)
            ownText = node.text
        }
        /// All text beneath, in order.
        var text: String { ownText + children.map(\.text).joined() }
        func double(_ key: String) -> Double { Double(attributes[key] ?? "") ?? .nan }
    }

    let root: Node

    init(_ text: String) throws {
        root = Node(try XMLReader.parse(Array(text.utf8)).root)
    }

    func all(where test: (Node) -> Bool) -> [Node] {
        var out: [Node] = []
        func walk(_ n: Node) { if test(n) { out.append(n) }; n.children.forEach(walk) }
        walk(root)
        return out
    }

    /// What differs between two trees: element names, attribute names,
    /// attribute values and text with numbers compared within 0.01 (embedded
    /// PNGs by their pixels), and the number of children.
    static func differences(_ a: Node, _ b: Node, path: String) -> [String] {
        var out: [String] = []
        let here = "\(path)/\(a.name)" + (a.attributes["class"].map { "[\($0)]" } ?? "")
        guard a.name == b.name else { return ["\(here): <\(a.name)> became <\(b.name)>"] }
        if Set(a.attributes.keys) != Set(b.attributes.keys) {
            out.append("\(here): attributes \(a.attributes.keys.sorted()) became \(b.attributes.keys.sorted())")
        }
        for (key, value) in a.attributes.sorted(by: { $0.key < $1.key }) {
            guard let other = b.attributes[key] else { continue }
            // Embedded PNGs are compared by their pixels: another zlib may compress them differently.
            let png = "data:image/png;base64,"
            if value.hasPrefix(png), other.hasPrefix(png) {
                let pixels = [value, other].map { Data(base64Encoded: String($0.dropFirst(png.count))).flatMap { try? Bitmap.readPNG(Array($0)) } }
                if pixels[0] == nil || pixels[0] != pixels[1] { out.append("\(here) @\(key): the embedded PNG differs") }
                continue
            }
            if !same(value, other) { out.append("\(here) @\(key): \(value.prefix(80)) became \(other.prefix(80))") }
        }
        if !same(a.ownText.trimmingCharacters(in: .whitespacesAndNewlines), b.ownText.trimmingCharacters(in: .whitespacesAndNewlines)) {
            out.append("\(here): text \(a.ownText.debugDescription) became \(b.ownText.debugDescription)")
        }
        if a.children.count != b.children.count {
            out.append("\(here): \(a.children.count) children became \(b.children.count)")
        }
        for (i, (x, y)) in zip(a.children, b.children).enumerated() {
            out += differences(x, y, path: "\(here)/\(i)")
        }
        return out
    }

    /// Equal with every number in them equal within 0.01 ("1.50" and "1.5" alike).
    static func same(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let (sa, na) = split(a), (sb, nb) = split(b)
        return sa == sb && na.count == nb.count && zip(na, nb).allSatisfy { abs($0 - $1) <= 0.01 }
    }

    /// The text with each number replaced by "#", and the numbers.
    static func split(_ s: String) -> (String, [Double]) {
        var skeleton = "", numbers: [Double] = [], current = ""
        func flush() {
            if let v = Double(current) { numbers.append(v); skeleton += "#" } else { skeleton += current }
            current = ""
        }
        for ch in s {
            if ch.isASCII && (ch.isNumber || ch == "." || (ch == "-" && current.isEmpty)) { current.append(ch) } else { flush(); skeleton.append(ch) }
        }
        flush()
        return (skeleton, numbers)
    }
}
