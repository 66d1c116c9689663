import Foundation
import XCTest
import A11yAudit
import PincerJSON

/// The importers against real dumps (../shared/fixtures/layouts, from
/// shirates-core) and small inline inputs for the XML reader's errors.
final class A11yImportTests: XCTestCase {

    // MARK: - Fixtures

    static let fixtureDirectory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/PincerTests/<file> → package root
        return url.appendingPathComponent("../shared/fixtures/layouts").standardizedFileURL
    }()

    /// The shared fixtures are part of the checkout: without them the test fails, it does not skip.
    struct MissingFixture: Error, CustomStringConvertible {
        let path: String
        var description: String { "the fixture \(path) is missing (the shared fixtures sit beside the repository)" }
    }

    func fixtureNames() throws -> [String] {
        let path = Self.fixtureDirectory.path
        guard FileManager.default.fileExists(atPath: path) else { throw MissingFixture(path: path) }
        return try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".xml") }.sorted()
    }

    func fixture(_ name: String) throws -> [UInt8] {
        let url = Self.fixtureDirectory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw MissingFixture(path: url.path) }
        return [UInt8](try Data(contentsOf: url))
    }

    enum Expected {
        /// Imported: the origin, all elements (with the synthetic uiautomator
        /// root), and those a screen reader lands on.
        case screen(origin: String, elements: Int, accessible: Int)
        /// Refused with a message containing this text.
        case refused(String)
    }

    /// Every fixture and what importing it gives. "NodeForRootElementNotFound":
    /// the iOS one is an empty <AppiumAUT> (refused: nothing to audit); the
    /// Android one still holds one layout node with no content, which imports
    /// as a screen where nothing is accessible.
    static let expected: [String: Expected] = [
        "appium-ios-AccessibilityScreen.xml": .screen(origin: "appium-ios", elements: 60, accessible: 14),
        "appium-ios-DateAndTime_ja.xml": .screen(origin: "appium-ios", elements: 95, accessible: 39),
        "appium-ios-KeyboardScreen.xml": .screen(origin: "appium-ios", elements: 93, accessible: 45),
        "appium-ios-NodeForRootElementNotFound.xml": .screen(origin: "appium-ios", elements: 1, accessible: 0),
        "appium-ios-RelativeCoordinateTest.xml": .screen(origin: "appium-ios", elements: 26, accessible: 15),
        "appium-ios-RelativeCoordinateTest2.xml": .screen(origin: "appium-ios", elements: 26, accessible: 15),
        "appium-ios-RelativeMisc_radio.xml": .screen(origin: "appium-ios", elements: 18, accessible: 6),
        "appium-ios-RelativeTest.xml": .screen(origin: "appium-ios", elements: 13, accessible: 6),
        "appium-ios-SettingsTopScreen.xml": .screen(origin: "appium-ios", elements: 93, accessible: 31),
        "appium-ios-iOS1.xml": .screen(origin: "appium-ios", elements: 70, accessible: 45),
        "uiautomator-Android1.xml": .screen(origin: "uiautomator", elements: 63, accessible: 10),
        "uiautomator-AppIsNotResponding.xml": .screen(origin: "uiautomator", elements: 13, accessible: 3),
        "uiautomator-ConnectedDevicesScreen.xml": .screen(origin: "uiautomator", elements: 32, accessible: 6),
        "uiautomator-DateAndTime_en.xml": .screen(origin: "uiautomator", elements: 54, accessible: 10),
        "uiautomator-DateAndTime_ja.xml": .screen(origin: "uiautomator", elements: 52, accessible: 10),
        "uiautomator-FlowTest.xml": .screen(origin: "uiautomator", elements: 20, accessible: 10),
        "uiautomator-Languages.xml": .screen(origin: "uiautomator", elements: 30, accessible: 5),
        "uiautomator-NetworkAndInternetScreen.xml": .screen(origin: "uiautomator", elements: 57, accessible: 10),
        "uiautomator-NodeForRootElementNotFound.xml": .screen(origin: "uiautomator", elements: 2, accessible: 0),
        "uiautomator-PlayStoreGamesScreen.xml": .screen(origin: "uiautomator", elements: 94, accessible: 19),
        "uiautomator-RelativeCoordinateTest.xml": .screen(origin: "uiautomator", elements: 30, accessible: 18),
        "uiautomator-RelativeCoordinateTest2.xml": .screen(origin: "uiautomator", elements: 32, accessible: 0),
        "uiautomator-RelativeMisc_check.xml": .screen(origin: "uiautomator", elements: 6, accessible: 3),
        "uiautomator-RelativeMisc_radio.xml": .screen(origin: "uiautomator", elements: 7, accessible: 3),
        "uiautomator-RelativeTest.xml": .screen(origin: "uiautomator", elements: 31, accessible: 23),
        "uiautomator-SecurityScreen.xml": .screen(origin: "uiautomator", elements: 71, accessible: 16),
        "uiautomator-SecurityScreen2.xml": .screen(origin: "uiautomator", elements: 33, accessible: 6),
        "uiautomator-SettingsTopScreen.xml": .screen(origin: "uiautomator", elements: 80, accessible: 13),
        "uiautomator-SpecialData.xml": .screen(origin: "uiautomator", elements: 5, accessible: 1),
        "uiautomator-clock_Alarm.xml": .screen(origin: "uiautomator", elements: 63, accessible: 16),
    ]

    // MARK: - Helpers

    func all(_ element: Element) -> [Element] {
        var out: [Element] = []
        var stack = [element]
        while let e = stack.popLast() {
            out.append(e)
            stack.append(contentsOf: e.children.reversed())
        }
        return out
    }

    struct Missing: Error {}

    func find(_ screen: Screen, file: StaticString = #filePath, line: UInt = #line,
              _ predicate: (Element) -> Bool) throws -> Element {
        guard let e = all(screen.root).first(where: predicate) else {
            XCTFail("no such element", file: file, line: line)
            throw Missing()
        }
        return e
    }

    func assertFrame(_ frame: Rect, _ x: Double, _ y: Double, _ width: Double, _ height: Double,
                     file: StaticString = #filePath, line: UInt = #line) {
        let tolerance = 1e-9
        XCTAssertEqual(frame.x, x, accuracy: tolerance, "x", file: file, line: line)
        XCTAssertEqual(frame.y, y, accuracy: tolerance, "y", file: file, line: line)
        XCTAssertEqual(frame.width, width, accuracy: tolerance, "width", file: file, line: line)
        XCTAssertEqual(frame.height, height, accuracy: tolerance, "height", file: file, line: line)
    }

    /// The error message of a refused import (fails when it imports).
    func refusal(_ body: () throws(LayoutError) -> Screen, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try body()
            XCTFail("expected a LayoutError", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: - Every fixture

    func testEveryFixtureImportsOrIsRefused() throws {
        let names = try fixtureNames()
        XCTAssertEqual(Set(names), Set(Self.expected.keys), "every fixture needs an expectation (and every expectation a fixture)")
        for name in names {
            guard let expected = Self.expected[name] else { continue }
            let input = try fixture(name)
            switch expected {
            case .screen(let origin, let elements, let accessible):
                let screen: Screen
                do { screen = try LayoutImport.read(input) } catch {
                    XCTFail("\(name): refused: \(error)")
                    continue
                }
                let tree = all(screen.root)
                XCTAssertEqual(screen.origin, origin, name)
                XCTAssertEqual(tree.count, elements, "\(name): elements")
                XCTAssertEqual(tree.filter(\.isAccessibilityElement).count, accessible, "\(name): accessible elements")
                // An empty page source is an empty screen; every other has a size.
                XCTAssertEqual(screen.size.width > 0 && screen.size.height > 0, elements > 1, name)
                XCTAssertEqual(screen.scale, origin == "uiautomator" ? 2.625 : 3, name)
                XCTAssertNil(screen.screenshot, name)
                for e in tree {
                    // The dumps have no colours, fonts or pixels.
                    XCTAssertNil(e.foreground, name)
                    XCTAssertNil(e.background, name)
                    XCTAssertNil(e.text, name)
                    XCTAssertGreaterThanOrEqual(e.frame.width, 0, name)
                    XCTAssertGreaterThanOrEqual(e.frame.height, 0, name)
                    XCTAssertNotNil(e.source, name)
                }
                // The explicit importer gives the same tree as detection.
                let direct = origin == "uiautomator" ? try LayoutImport.uiautomator(input) : try LayoutImport.appiumIOS(input)
                XCTAssertEqual(all(direct.root).count, elements, name)
            case .refused(let text):
                let message = refusal { () throws(LayoutError) in try LayoutImport.read(input) }
                XCTAssertTrue(message.contains(text), "\(name): \(message)")
            }
        }
    }

    func testEveryImportRoundTripsThroughLayoutJSON() throws {
        for name in try fixtureNames() {
            guard case .screen = Self.expected[name] else { continue }
            let screen = try LayoutImport.read(try fixture(name))
            let json = LayoutJSON.write(screen).serializedBytes()
            let back = try LayoutJSON.read(json)
            let detected = try LayoutImport.read(json)
            XCTAssertEqual(detected.origin, screen.origin, "\(name): the origin survives the round trip")
            for copy in [back, detected] {
                XCTAssertEqual(copy.size, screen.size, name)
                XCTAssertEqual(copy.scale, screen.scale, name)
                let a = all(screen.root), b = all(copy.root)
                XCTAssertEqual(a.count, b.count, name)
                for (x, y) in zip(a, b) {
                    XCTAssertEqual(x.frame, y.frame, name)
                    XCTAssertEqual(x.id, y.id, name)
                    XCTAssertEqual(x.type, y.type, name)
                    XCTAssertEqual(x.label, y.label, name)
                    XCTAssertEqual(x.value, y.value, name)
                    XCTAssertEqual(x.hint, y.hint, name)
                    XCTAssertEqual(x.traits, y.traits, name)
                    XCTAssertEqual(x.isAccessibilityElement, y.isAccessibilityElement, name)
                    XCTAssertEqual(x.isHidden, y.isHidden, name)
                    XCTAssertEqual(x.children.count, y.children.count, name)
                }
            }
        }
    }

    // MARK: - Known elements

    func testAlarmClockButtonsSwitchesAndTabs() throws {
        let screen = try LayoutImport.read(try fixture("uiautomator-clock_Alarm.xml"))
        XCTAssertEqual(screen.origin, "uiautomator")
        XCTAssertEqual(screen.size, Rect(x: 0, y: 0, width: 1080 / 2.625, height: 2088 / 2.625))
        XCTAssertEqual(screen.root.type, "hierarchy")

        // bounds="[408,1560][672,1824]", content-desc="Add alarm"
        let add = try find(screen) { $0.id == "com.google.android.deskclock:id/fab" }
        XCTAssertEqual(add.type, "android.widget.Button")
        XCTAssertEqual(add.label, "Add alarm")
        XCTAssertNil(add.value)
        XCTAssertTrue(add.isAccessibilityElement)
        XCTAssertEqual(add.traits, .button)
        assertFrame(add.frame, 408 / 2.625, 1560 / 2.625, 264 / 2.625, 264 / 2.625)
        XCTAssertEqual(add.source, "/hierarchy/android.widget.FrameLayout[1]/android.widget.LinearLayout[1]/android.widget.FrameLayout[1]"
                       + "/android.widget.LinearLayout[1]/android.widget.FrameLayout[1]/android.view.ViewGroup[1]/android.view.ViewGroup[1]"
                       + "/android.view.ViewGroup[1]/android.view.ViewGroup[2]/android.widget.Button[1]")

        // checkable, clickable Switch with no text: a toggle TalkBack focuses, unlabelled.
        let toggle = try find(screen) { $0.id == "com.google.android.deskclock:id/onoff" }
        XCTAssertEqual(toggle.traits, .toggle)
        XCTAssertTrue(toggle.isAccessibilityElement)
        XCTAssertNil(toggle.label)

        // The selected tab.
        let alarmTab = try find(screen) { $0.id == "com.google.android.deskclock:id/tab_menu_alarm" }
        XCTAssertTrue(alarmTab.traits.contains(.selected))
        XCTAssertEqual(alarmTab.label, "Alarm")
        let clockTab = try find(screen) { $0.id == "com.google.android.deskclock:id/tab_menu_clock" }
        XCTAssertFalse(clockTab.traits.contains(.selected))

        // Another scale: points follow.
        let scaled = try LayoutImport.uiautomator(try fixture("uiautomator-clock_Alarm.xml"), scale: 3)
        XCTAssertEqual(scaled.scale, 3)
        assertFrame(try find(scaled) { $0.id == "com.google.android.deskclock:id/fab" }.frame, 136, 520, 88, 88)
        XCTAssertEqual(scaled.size, Rect(x: 0, y: 0, width: 360, height: 696))
    }

    func testSettingsRowsSpeakTheirTextAndDisabledRows() throws {
        let settings = try LayoutImport.read(try fixture("uiautomator-SettingsTopScreen.xml"))
        // A clickable row without text of its own reads its title and summary;
        // the texts themselves are not separate stops.
        let row = try find(settings) { $0.isAccessibilityElement && ($0.label ?? "").hasPrefix("Network & internet") }
        XCTAssertEqual(row.type, "android.widget.LinearLayout")
        XCTAssertEqual(row.traits, .button)
        let title = try find(settings) { $0.label == "Network & internet" }
        XCTAssertEqual(title.id, "android:id/title")
        XCTAssertEqual(title.traits, .staticText)
        XCTAssertFalse(title.isAccessibilityElement)

        let dates = try LayoutImport.read(try fixture("uiautomator-DateAndTime_en.xml"))
        let dateRow = try find(dates) { $0.isAccessibilityElement && $0.label == "Date, December 15, 2023" }
        XCTAssertEqual(dateRow.traits, [.button, .disabled])
        assertFrame(dateRow.frame, 0, 720 / 2.625, 1080 / 2.625, 215 / 2.625)
        let dateText = try find(dates) { $0.label == "Date" }
        XCTAssertEqual(dateText.traits, [.staticText, .disabled])

        // A node without bounds (a hand-written dump) is hidden, with an empty frame.
        let android1 = try LayoutImport.read(try fixture("uiautomator-Android1.xml"))
        let image3 = try find(android1) { $0.label == "Image3" }
        XCTAssertTrue(image3.isHidden)
        XCTAssertFalse(image3.isAccessibilityElement)
        XCTAssertTrue(image3.frame.isEmpty)
        XCTAssertEqual(image3.traits, .image)
    }

    func testIOSKeyboardSettings() throws {
        let screen = try LayoutImport.read(try fixture("appium-ios-KeyboardScreen.xml"))
        XCTAssertEqual(screen.origin, "appium-ios")
        XCTAssertEqual(screen.scale, 3)
        XCTAssertEqual(screen.size, Rect(x: 0, y: 0, width: 390, height: 844))
        XCTAssertEqual(screen.root.type, "XCUIElementTypeApplication", "the <AppiumAUT> wrapper is skipped")
        XCTAssertEqual(screen.root.source, "/AppiumAUT/XCUIElementTypeApplication[1]")

        // name == label: no separate identifier. No `accessible` attribute in
        // this dump: a Switch is accessible by its kind.
        let autoCorrection = try find(screen) { $0.type == "XCUIElementTypeSwitch" && $0.label == "Auto-Correction" }
        XCTAssertNil(autoCorrection.id)
        XCTAssertEqual(autoCorrection.value, "0")
        XCTAssertEqual(autoCorrection.traits, .toggle)
        XCTAssertTrue(autoCorrection.isAccessibilityElement)
        assertFrame(autoCorrection.frame, 319, 355, 51, 31)

        let heading = try find(screen) { $0.id == "KEYBOARDS" }
        XCTAssertEqual(heading.label, "Keyboards")
        XCTAssertEqual(heading.traits, .staticText)

        // enabled="false" visible="false"
        let chevron = try find(screen) { $0.label == "chevron" }
        XCTAssertEqual(chevron.traits, [.button, .disabled])
        XCTAssertTrue(chevron.isHidden)

        let link = try find(screen) { $0.type == "XCUIElementTypeLink" }
        XCTAssertEqual(link.traits, .link)
        XCTAssertEqual(link.label, "About Dictation and Privacy…")

        let hiddenSwitch = try find(screen) { $0.label == "Memoji Stickers" && $0.type == "XCUIElementTypeSwitch" }
        XCTAssertTrue(hiddenSwitch.isHidden)
    }

    func testIOSAccessibleAttributeIsUsedWhenPresent() throws {
        let screen = try LayoutImport.read(try fixture("appium-ios-DateAndTime_ja.xml"))
        XCTAssertEqual(screen.root.label, "カレンダー")
        XCTAssertFalse(screen.root.isAccessibilityElement)
        XCTAssertEqual(screen.size, Rect(x: 0, y: 0, width: 390, height: 844))
        let button = try find(screen) { $0.label == "12月" }
        XCTAssertEqual(button.type, "XCUIElementTypeButton")
        XCTAssertTrue(button.isAccessibilityElement)
        XCTAssertEqual(button.traits, .button)
        XCTAssertNil(button.id)
        assertFrame(button.frame, 0, 47, 65, 44)
        let scroll = try find(screen) { $0.id == "scroll-view1" }
        XCTAssertFalse(scroll.isAccessibilityElement)
    }

    // MARK: - Detection

    func testReadDetectsEachKind() throws {
        XCTAssertEqual(try LayoutImport.read(try fixture("uiautomator-SpecialData.xml")).origin, "uiautomator")
        XCTAssertEqual(try LayoutImport.read(try fixture("appium-ios-iOS1.xml")).origin, "appium-ios")

        let json = bytes("""
            {"format": "pincer.layout/1", "scale": 2, "size": [100, 200],
             "root": {"type": "UIWindow", "frame": [0, 0, 100, 200]}}
            """)
        let ours = try LayoutImport.read(json)
        XCTAssertEqual(ours.origin, "pincer")
        XCTAssertEqual(ours.scale, 2, "our JSON keeps its own scale")
        XCTAssertEqual(try LayoutImport.read([0xEF, 0xBB, 0xBF] + bytes("\n  ") + json, scale: 5).scale, 2)

        // The plain `uiautomator dump` form: <node> elements, no width/height.
        let dump = bytes("""
            <?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
            <hierarchy rotation="0">
              <node index="0" text="" resource-id="" class="android.widget.FrameLayout" content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2400]">
                <node index="0" text="OK" resource-id="com.example:id/ok" class="android.widget.Button" content-desc="" clickable="true" enabled="true" bounds="[0,0][210,126]" />
                <node index="1" text="Wi‑Fi" resource-id="" class="android.widget.Switch" content-desc="Wireless" checkable="true" clickable="true" selected="true" bounds="[0,126][210,252]" />
                <node index="2" text="secret" class="android.widget.EditText" password="true" clickable="true" focusable="true" enabled="false" bounds="[0,252][210,378]" visible-to-user="false" />
              </node>
            </hierarchy>
            """)
        let android = try LayoutImport.read(dump)
        XCTAssertEqual(android.origin, "uiautomator")
        XCTAssertEqual(android.size, Rect(x: 0, y: 0, width: 1080 / 2.625, height: 2400 / 2.625))
        let frame = android.root.children[0]
        XCTAssertNil(frame.id, "an empty resource-id is no id")
        XCTAssertEqual(frame.source, "/hierarchy/node[1]")
        XCTAssertFalse(frame.isAccessibilityElement)
        let ok = frame.children[0]
        XCTAssertEqual(ok.source, "/hierarchy/node[1]/node[1]")
        XCTAssertEqual(ok.id, "com.example:id/ok")
        XCTAssertEqual(ok.label, "OK")
        XCTAssertNil(ok.value)
        XCTAssertEqual(ok.traits, .button)
        XCTAssertTrue(ok.isAccessibilityElement)
        assertFrame(ok.frame, 0, 0, 80, 48)
        let wifi = frame.children[1]
        XCTAssertEqual(wifi.source, "/hierarchy/node[1]/node[2]")
        XCTAssertEqual(wifi.label, "Wireless", "content-desc wins")
        XCTAssertEqual(wifi.value, "Wi‑Fi", "the differing text is the value")
        XCTAssertEqual(wifi.traits, [.toggle, .selected])
        let secret = frame.children[2]
        XCTAssertEqual(secret.traits, [.textField, .disabled])
        XCTAssertTrue(secret.isHidden)
        XCTAssertFalse(secret.isAccessibilityElement)

        // A page source without the <AppiumAUT> wrapper.
        let bare = try LayoutImport.read(bytes("""
            <XCUIElementTypeApplication type="XCUIElementTypeApplication" name="App" label="App" x="0" y="0" width="390" height="844">
              <XCUIElementTypeButton type="XCUIElementTypeButton" name="pay" label="Pay" enabled="false" visible="true" accessible="true" x="16" y="780" width="358" height="48"/>
              <XCUIElementTypeTab type="XCUIElementTypeTab" label="Home" selected="true" x="0" y="800" width="97" height="44"/>
            </XCUIElementTypeApplication>
            """), scale: 2)
        XCTAssertEqual(bare.origin, "appium-ios")
        XCTAssertEqual(bare.scale, 2)
        XCTAssertEqual(bare.root.source, "/XCUIElementTypeApplication")
        let pay = bare.root.children[0]
        XCTAssertEqual(pay.id, "pay")
        XCTAssertEqual(pay.label, "Pay")
        XCTAssertEqual(pay.traits, [.button, .disabled])
        assertFrame(pay.frame, 16, 780, 358, 48)
        XCTAssertEqual(bare.root.children[1].traits, [.tab, .selected])
        XCTAssertTrue(bare.root.children[1].isAccessibilityElement)

        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(self.bytes("<html><body/></html>")) }
            .contains("unknown XML dump: the root element is <html>"))
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(self.bytes("  \n ")) }.contains("empty input"))
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(self.bytes("hello")) }.contains("not a layout"))
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(self.bytes("{\"scale\": 2")) }.contains("not JSON"))
        let ios = try fixture("appium-ios-RelativeTest.xml")
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.uiautomator(ios) }.contains("not a uiautomator dump: the root element is <AppiumAUT>"))
        let hierarchy = try fixture("uiautomator-SpecialData.xml")
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.appiumIOS(hierarchy) }.contains("not an Appium iOS page source"))
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.uiautomator(hierarchy, scale: 0) }.contains("scale"))
    }

    // MARK: - Refusals of bad values

    func testBadGeometryIsRefusedWithAttributePathAndLine() {
        let badBounds = bytes("""
            <hierarchy>
              <node bounds="[0,0][100,100]">
                <node bounds="[0,0][100,100]"/>
                <node bounds="[0,0][abc]"/>
              </node>
            </hierarchy>
            """)
        XCTAssertEqual(refusal { () throws(LayoutError) in try LayoutImport.read(badBounds) },
                       "bounds=\"[0,0][abc]\" of /hierarchy/node[1]/node[2] (line 4): expected \"[left,top][right,bottom]\" in pixels")
        let negative = bytes("<hierarchy>\n<node bounds=\"[10,0][5,5]\"/>\n</hierarchy>")
        XCTAssertEqual(refusal { () throws(LayoutError) in try LayoutImport.read(negative) },
                       "bounds=\"[10,0][5,5]\" of /hierarchy/node[1] (line 2): negative width (right 5 < left 10)")
        let empty = bytes("<hierarchy rotation=\"0\">\n</hierarchy>")
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(empty) }.contains("has no nodes"))

        let iosNegative = bytes("""
            <AppiumAUT>
              <XCUIElementTypeApplication type="XCUIElementTypeApplication" x="0" y="0" width="390" height="844">
                <XCUIElementTypeButton type="XCUIElementTypeButton" x="0" y="0" width="-3" height="44"/>
              </XCUIElementTypeApplication>
            </AppiumAUT>
            """)
        XCTAssertEqual(refusal { () throws(LayoutError) in try LayoutImport.read(iosNegative) },
                       "width=\"-3\" of /AppiumAUT/XCUIElementTypeApplication[1]/XCUIElementTypeButton[1] (line 3): negative width")
        let iosText = bytes("<AppiumAUT>\n<XCUIElementTypeApplication x=\"zero\" width=\"1\" height=\"1\"/>\n</AppiumAUT>")
        XCTAssertEqual(refusal { () throws(LayoutError) in try LayoutImport.read(iosText) },
                       "x=\"zero\" of /AppiumAUT/XCUIElementTypeApplication[1] (line 2): expected a number of points")
        let foreign = bytes("<AppiumAUT>\n<XCUIElementTypeApplication width=\"1\" height=\"1\">\n<div/></XCUIElementTypeApplication>\n</AppiumAUT>")
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(foreign) }
            .contains("expected an XCUIElementType… element, found <div> at /AppiumAUT/XCUIElementTypeApplication[1]/div[1] (line 3)"))
        let sizeless = bytes("<AppiumAUT><XCUIElementTypeApplication/></AppiumAUT>")
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read(sizeless) }.contains("cannot tell the screen size"))
    }

    // MARK: - XML syntax

    func xmlError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        refusal({ () throws(LayoutError) in try LayoutImport.uiautomator(self.bytes(text)) }, file: file, line: line)
    }

    /// A dump 999 levels deep crashed `a11y.audit` (SIGSEGV) on any stack
    /// under about 5 MB: the converters recurse per level. Dumps are now
    /// refused past `LayoutImport.maximumDumpDepth` (256), which runs in a
    /// 2 MB stack; the child `pincer` runs with `ulimit -s 2048`.
    func testDeepDumpsAreRefusedBeforeTheStackRunsOut() throws {
        func android(_ n: Int) -> String {
            "<hierarchy rotation=\"0\">" + String(repeating: "<node class=\"android.widget.FrameLayout\" bounds=\"[0,0][100,100]\" clickable=\"true\">", count: n)
                + String(repeating: "</node>", count: n) + "</hierarchy>"
        }
        func ios(_ n: Int) -> String {
            "<AppiumAUT>" + String(repeating: "<XCUIElementTypeOther x=\"0\" y=\"0\" width=\"10\" height=\"10\" visible=\"true\">", count: n)
                + String(repeating: "</XCUIElementTypeOther>", count: n) + "</AppiumAUT>"
        }
        let dir = Fixture.temporaryDirectory("pincer-a11y-deep")
        let state = Fixture.temporaryDirectory("pincer-a11y-deep-state")
        func audit(_ name: String, _ text: String) throws -> Fixture.ProcessResult {
            let path = "\(dir)/\(name)"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            var env = ProcessInfo.processInfo.environment
            env["PINCER_STATE_DIR"] = state
            env.removeValue(forKey: "PINCER_PLUGIN_PATH")
            return try Fixture.run("/bin/sh", ["-c", "ulimit -s 2048 && exec \"$0\" run a11y.audit \"$1\"", Fixture.pincer, path], environment: env)
        }
        for (name, make) in [("android", android), ("ios", ios)] {
            let deep = try audit("\(name)-999.xml", make(999))
            XCTAssertEqual(deep.status, 1, "\(name): \(deep.stderr.suffix(300))")
            XCTAssertTrue(deep.stderr.contains("elements nested more than 256 levels (the limit)"), deep.stderr)
            // At the limit the dump is read (and audited: exit 0 or 1 with findings, never a signal).
            let limit = try audit("\(name)-255.xml", make(255))
            XCTAssertTrue([0, 1].contains(limit.status), "\(name): \(limit.status) \(limit.stderr.suffix(300))")
            XCTAssertFalse(limit.stderr.contains("nested more than"), limit.stderr)
        }
    }

    func testXMLErrorsNameLineAndColumn() {
        XCTAssertEqual(xmlError("<hierarchy>\n  <node bounds=\"[0,0][1,1]\">\n  </nod>\n</hierarchy>"),
                       "XML line 3, column 3: end tag </nod> does not match <node> opened at line 2, column 3")
        XCTAssertEqual(xmlError("<hierarchy>\n<node>"),
                       "XML line 2, column 1: <node> is never closed (the input ends at line 2, column 7)")
        XCTAssertEqual(xmlError("<hierarchy>\n <node text=\"a &foo; b\"/>\n</hierarchy>"),
                       "XML line 2, column 16: unknown entity &foo; (only &amp; &lt; &gt; &quot; &apos; and character references are defined)")
        XCTAssertTrue(xmlError("<hierarchy>\n<node text=\"a & b\"/></hierarchy>").hasPrefix("XML line 2, column 15: '&' must start a reference"))
        XCTAssertTrue(xmlError("<hierarchy><node text=\"&#0;\"/></hierarchy>").hasPrefix("XML line 1, column 24: &#0; is not a valid character reference"))
        XCTAssertEqual(xmlError("<hierarchy>\n<node text=abc/>\n</hierarchy>"),
                       "XML line 2, column 12: the value of attribute text of <node> is not in quotes")
        XCTAssertEqual(xmlError("<hierarchy>\n<node text/>\n</hierarchy>"),
                       "XML line 2, column 7: attribute text of <node> has no value (expected text=\"...\")")
        XCTAssertEqual(xmlError("<hierarchy></hierarchy>\nhello"), "XML line 2, column 1: text after the root element <hierarchy>")
        XCTAssertEqual(xmlError("<hierarchy/>\n<hierarchy/>"), "XML line 2, column 1: a second element after the root element <hierarchy>")
        XCTAssertEqual(xmlError(""), "XML line 1, column 1: empty input (no root element)")
        XCTAssertEqual(xmlError("\n   "), "XML line 2, column 4: empty input (no root element)")
        XCTAssertEqual(xmlError("<?xml version=\"1.0\"?>\n<!-- only a comment -->\n"), "XML line 3, column 1: no root element")
        XCTAssertEqual(xmlError("hello <hierarchy/>"), "XML line 1, column 1: text before the root element")
        XCTAssertEqual(xmlError("<hierarchy>\n<node a=\"1\" a=\"2\"/></hierarchy>"), "XML line 2, column 13: attribute a appears twice in <node>")
        XCTAssertEqual(xmlError("<hierarchy>\n<node a=\"1\"b=\"2\"/></hierarchy>"),
                       "XML line 2, column 12: expected a space before the next attribute in <node>")
        XCTAssertEqual(xmlError("<hierarchy>\n<node a=\"<\"/></hierarchy>"),
                       "XML line 2, column 10: '<' is not allowed in the value of attribute a (write '&lt;')")
        XCTAssertEqual(xmlError("<hierarchy><!-- a -- b --></hierarchy>"), "XML line 1, column 19: '--' is not allowed inside a comment")
        XCTAssertEqual(xmlError(" <?xml version=\"1.0\"?><hierarchy/>"),
                       "XML line 1, column 2: the <?xml ...?> declaration must come first in the input")
        // Columns count characters, not bytes; CR LF is one line break.
        XCTAssertEqual(xmlError("<hierarchy>\r\n<node text=\"日本\" x=1/>\r\n</hierarchy>"),
                       "XML line 2, column 19: the value of attribute x of <node> is not in quotes")
        XCTAssertEqual(xmlError("<hierarchy>\n<node>\u{1}</node></hierarchy>"),
                       "XML line 2, column 7: control character U+0001 is not allowed in XML")
        XCTAssertTrue(xmlError("<hierarchy>\n<node text=\"a\"").hasPrefix("XML line 2, column 1: unterminated start tag <node"))
        XCTAssertTrue(refusal { () throws(LayoutError) in try LayoutImport.read([0x3C, 0x61, 0xFF, 0x3E]) }
            .hasPrefix("XML line 1, column 3: invalid UTF-8"))
    }

    func testXMLValuesEntitiesCommentsAndQuotes() throws {
        let text = """
            <?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
            <!-- uiautomator dump -->
            <hierarchy rotation='0'>
              <!-- a comment > with markup <node/> inside -->
              <node class='android.widget.TextView' text='a&#10;b&#x41;&lt;&gt;&amp;&quot;&apos;"' content-desc="it's" bounds='[0,0][105,105]'>
                <![CDATA[ <not> markup ]]>
              </node>
              <node class="android.widget.TextView" text="line
            break	tab" bounds="[0,105][105,210]"></node>
            </hierarchy>
            <!-- trailing comment -->

            """
        let screen = try LayoutImport.read(bytes(text))
        XCTAssertEqual(screen.root.children.count, 2)
        let first = screen.root.children[0]
        XCTAssertEqual(first.label, "it's")
        XCTAssertEqual(first.value, "a\nbA<>&\"'\"")
        assertFrame(first.frame, 0, 0, 40, 40)
        XCTAssertEqual(screen.root.children[1].label, "line break tab", "literal line breaks and tabs in attributes are spaces")
    }
}
