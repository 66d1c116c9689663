import Foundation
import XCTest
import A11yAudit
@testable import PincerHost

/// The real `a11y` plugin in a real host: commands on model files written
/// here (with a real PNG screenshot) and on the real dumps.
final class A11yPluginTests: XCTestCase {
    /// A model with a screenshot beside it: a low-contrast label drawn in
    /// the PNG, an unlabelled button, a tiny target.
    private func writeModel(in dir: String) throws -> String {
        var shot = Bitmap(width: 390, height: 300, fill: Color(r: 255, g: 255, b: 255))
        for x in stride(from: 24, to: 200, by: 10) {
            shot.fill(PixelRect(x: x, y: 44, width: 4, height: 16), with: Color(r: 0xAA, g: 0xAA, b: 0xAA))
        }
        try Data(try shot.pngBytes()).write(to: URL(fileURLWithPath: "\(dir)/screen.png"))
        let model = """
            {"format": "pincer.layout/1", "name": "Settings", "scale": 1, "size": [390, 300], "screenshot": "screen.png",
             "root": {"type": "UIWindow", "frame": [0, 0, 390, 300], "children": [
               {"id": "title", "type": "UILabel", "frame": [20, 40, 200, 24], "accessible": true, "label": "Faint title",
                "traits": ["staticText"], "font": {"size": 15}},
               {"id": "save", "type": "UIButton", "frame": [20, 100, 120, 48], "accessible": true, "traits": ["button"],
                "foreground": "#ffffff", "background": "#0a60ff"},
               {"id": "info", "type": "UIButton", "frame": [200, 100, 18, 18], "accessible": true, "label": "Info",
                "traits": ["button"], "foreground": "#000000", "background": "#ffffff"}
             ]}}
            """
        let path = "\(dir)/settings.json"
        try Data(model.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testAuditWritesEveryFormatAndPicture() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-a11y")
        let model = try writeModel(in: dir)

        let text = try app.text("a11y.audit", model)
        XCTAssertTrue(text.contains("3 Issues Found"), text)
        XCTAssertTrue(text.contains("#1 warning contrast"), text)
        XCTAssertTrue(text.contains("#2 error   missing-label      save"), text)
        XCTAssertTrue(text.contains("#3 error   touch-target"), text)
        XCTAssertTrue(text.contains("Contrast read 3 of 3 elements"), text)

        let json = try JSON.parse(try app.text("a11y.audit", model, "", "json"))
        XCTAssertEqual(json["summary"]?["title"]?.stringValue, "3 Issues Found")
        XCTAssertEqual(json["findings"]?.arrayValue?.map { $0["check"]?.stringValue ?? "" }, ["contrast", "missing-label", "touch-target"])

        let sarif = try JSON.parse(try app.text("a11y.audit", model, "", "sarif"))
        XCTAssertEqual(sarif["version"]?.stringValue, "2.1.0")
        XCTAssertEqual(sarif["runs"]?.arrayValue?.first?["results"]?.arrayValue?.count, 3)

        // Pictures: PNG at the screenshot's size plus the legend band beneath, and SVG.
        _ = try app.text("a11y.audit", model, "", "text", "\(dir)/boxes.png")
        let picture = try Bitmap.readPNG(path: "\(dir)/boxes.png")
        XCTAssertEqual(picture.width, 390)
        XCTAssertEqual(picture.height, 300 + 22)
        _ = try app.text("a11y.audit", model, "", "text", "\(dir)/boxes.svg")
        let svg = try String(contentsOfFile: "\(dir)/boxes.svg", encoding: .utf8)
        XCTAssertTrue(svg.hasPrefix("<?xml") || svg.hasPrefix("<svg"), String(svg.prefix(80)))
        XCTAssertTrue(svg.contains(">3<"), "the third box is numbered")

        // --checks and --min_severity.
        let onlyLabels = try app.text("a11y.audit", model, "missing-label")
        XCTAssertTrue(onlyLabels.contains("1 Issue Found"), onlyLabels)
        let errorsOnly = try JSON.parse(try app.text("a11y.audit", model, "", "json", "", "", "0", "error"))
        XCTAssertEqual(errorsOnly["hidden"]?.int64Value, 1)
        XCTAssertEqual(errorsOnly["findings"]?.arrayValue?.count, 2)
    }

    func testBadInputIsNamed() throws {
        let app = AppHost(withApp: false)
        let dir = Fixture.temporaryDirectory("pincer-a11y-bad")
        let model = try writeModel(in: dir)
        XCTAssertTrue(app.failure("a11y.audit", model, "sparkle").contains("unknown check 'sparkle'"))
        XCTAssertTrue(app.failure("a11y.audit", model, "", "yaml").contains("--format must be text, json or sarif"))
        XCTAssertTrue(app.failure("a11y.audit", model, "", "text", "\(dir)/x.gif").contains("cannot write the picture \(dir)/x.gif: the file must end in .png or .svg"))
        let bad = "\(dir)/bad.json"
        try Data(#"{"scale": 1, "size": [390, 300], "root": {"frame": [0, 0, 390], "children": []}}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let message = app.failure("a11y.audit", bad)
        XCTAssertTrue(message.contains("bad.json") && message.contains("root.frame"), message)
        try Data("not a png".utf8).write(to: URL(fileURLWithPath: "\(dir)/screen.png"))
        XCTAssertTrue(app.failure("a11y.audit", model).contains("screenshot"), "a broken screenshot is named")
    }

    func testContrastCommand() throws {
        let app = AppHost(withApp: false)
        let grey = try app.json("a11y.contrast", "#777777", "#ffffff")
        XCTAssertEqual(grey["ratio"]?.doubleValue ?? 0, 4.478089453577214, accuracy: 1e-12)
        XCTAssertEqual(grey["text"]?["passes"]?.boolValue, false)
        XCTAssertEqual(grey["text"]?["sizeKnown"]?.boolValue, false)
        XCTAssertEqual(grey["nonText"]?["passes"]?.boolValue, true)
        let large = try app.json("a11y.contrast", "#777777", "#ffffff", "18")
        XCTAssertEqual(large["text"]?["passes"]?.boolValue, true)
        XCTAssertEqual(try app.json("a11y.contrast", "rgb(0,198,0)", "rgb(0,0,198)")["ratio"]?.doubleValue ?? 0, 5.000229313902297, accuracy: 1e-12)
        XCTAssertTrue(app.failure("a11y.contrast", "#12", "#fff").contains("is not a colour"))
    }

    func testSwitchesPersistAndDumpsAudit() throws {
        let app = AppHost(withApp: false)
        let entry = try XCTUnwrap(app.host.entry(id: "a11y.contrast"))
        try app.host.setValue("false", of: entry)
        let checks = try app.json("a11y.checks").arrayValue ?? []
        XCTAssertEqual(checks.first { $0["check"]?.stringValue == "contrast" }?["on"]?.boolValue, false)
        app.restart(withApp: false)
        XCTAssertEqual((try app.json("a11y.checks").arrayValue ?? []).first { $0["check"]?.stringValue == "contrast" }?["on"]?.boolValue, false)

        let dump = "\(Fixture.packageRoot)/../shared/fixtures/layouts/uiautomator-SettingsTopScreen.xml"
        let text = try app.text("a11y.audit", dump)
        XCTAssertTrue(text.contains("(uiautomator,"), text)
        XCTAssertFalse(text.contains("Checks: missing-label, touch-target, contrast"), "contrast is switched off")
        let model = try app.json("a11y.import", dump)
        XCTAssertEqual(model["origin"]?.stringValue, "uiautomator")
    }
}
