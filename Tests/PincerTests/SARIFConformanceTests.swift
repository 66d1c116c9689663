import Foundation
import XCTest
@testable import A11yAudit

/// The audit's SARIF against the official SARIF 2.1.0 schema (draft-04),
/// checked by Debian's python3-jsonschema, for every layout fixture and for
/// the plugin's own output; artifact URIs are also checked as RFC 3986 URI
/// references (draft-04 has no `uri-reference` format) with python3-rfc3987.
final class SARIFConformanceTests: XCTestCase {
    static let validator = #"""
import json, sys, jsonschema, rfc3987, re
schema = json.load(open(sys.argv[1]))
jsonschema.Draft4Validator.check_schema(schema)
validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
problems, results = 0, 0
for path in sys.argv[2:]:
    doc = json.load(open(path))
    for error in validator.iter_errors(doc):
        problems += 1
        print("%s: %s: %s" % (path, "/".join(map(str, error.absolute_path)), error.message[:300]))
    for run in doc["runs"]:
        if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", run["invocations"][0]["startTimeUtc"]):
            problems += 1
            print("%s: startTimeUtc %r is not an RFC 3339 UTC time" % (path, run["invocations"][0]["startTimeUtc"]))
        uris = [a["location"]["uri"] for a in run.get("artifacts", [])]
        for result in run["results"]:
            results += 1
            uris += [l["physicalLocation"]["artifactLocation"]["uri"] for l in result["locations"]]
        for uri in uris:
            if rfc3987.match(uri, rule="URI_reference") is None:
                problems += 1
                print("%s: %r is not a URI reference" % (path, uri))
print("checked %d files, %d results, %d problems" % (len(sys.argv) - 2, results, problems))
sys.exit(1 if problems else 0)
"""#

    func validate(_ files: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let schema = Consumer.schemas + "/sarif-schema-2.1.0.json"
        let result = try Consumer.python(Consumer.debianPython, Self.validator, [schema] + files)
        XCTAssertEqual(result.status, 0, "SARIF does not validate:\n\(result.stdout)\(result.stderr)", file: file, line: line)
        return result.stdout
    }

    func testEveryLayoutFixtureValidates() throws {
        let folder = Consumer.shared + "/layouts"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".xml") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 30, "the layout fixtures in \(folder)")
        let out = Fixture.temporaryDirectory("pincer-sarif")
        var files: [String] = [], results = 0
        for name in names {
            let path = "\(folder)/\(name)"
            let screen = try LayoutImport.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            let report = Auditor().audit(screen, screenshot: nil, time: "2026-12-01T12:00:00Z")
            results += report.findings.count
            let file = "\(out)/\(name).sarif"
            try report.sarif(artifact: path, toolVersion: "1.0.0").serialized(pretty: true).write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        XCTAssertGreaterThan(results, 0, "the fixtures have findings, so results are validated too")
        let summary = try validate(files)
        XCTAssertTrue(summary.contains("checked \(names.count) files, \(results) results, 0 problems"), summary)
    }

    /// A path with spaces, non-ASCII letters and URI delimiters becomes a
    /// valid URI reference that decodes back to the path.
    func testArtifactPathsBecomeURIReferences() throws {
        XCTAssertEqual(AuditReport.uriReference("screen.json"), "screen.json")
        XCTAssertEqual(AuditReport.uriReference("../dumps/a b#1?.xml"), "../dumps/a%20b%231%3F.xml")
        XCTAssertEqual(AuditReport.uriReference("/tmp/é:x.xml"), "file:///tmp/%C3%A9%3Ax.xml")
        XCTAssertEqual(AuditReport.uriReference("c:/x 100%.xml"), "c%3A/x%20100%25.xml")
        let report = Auditor().audit(Screen(size: Rect(x: 0, y: 0, width: 100, height: 100), scale: 1, root: Element(
            frame: Rect(x: 0, y: 0, width: 100, height: 100),
            children: [Element(id: "b", frame: Rect(x: 0, y: 0, width: 10, height: 10), isAccessibilityElement: true, traits: [.button])])),
                                     screenshot: nil, time: "2026-12-01T12:00:00Z")
        let file = Fixture.temporaryDirectory("pincer-sarif-uri") + "/odd.sarif"
        try report.sarif(artifact: "/tmp/with space é/a#b.xml", toolVersion: "1.0.0").serialized().write(toFile: file, atomically: true, encoding: .utf8)
        _ = try validate([file])
    }

    /// What `pincer run a11y.audit --format sarif` prints validates too.
    func testPluginOutputValidates() throws {
        let state = Fixture.temporaryDirectory("pincer-sarif-cli")
        let dump = Consumer.shared + "/layouts/uiautomator-SettingsTopScreen.xml"
        let result = try Fixture.pincer(["run", "a11y.audit", dump, "--format", "sarif"], stateDir: state)
        XCTAssertEqual(result.status, 0, result.stderr)
        let file = state + "/out.sarif"
        try result.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let summary = try validate([file])
        XCTAssertTrue(summary.contains("checked 1 files, 1 results, 0 problems"), summary)
    }
}
