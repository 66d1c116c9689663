import PincerJSON
import PincerPluginKit

/// Runs the enabled checks over one screen.
public struct Auditor: Sendable {
    public var checks: Set<CheckID>
    public var limits: AuditLimits
    /// Findings below this severity are counted but not shown.
    public var minimumSeverity: Severity

    public init(checks: Set<CheckID> = Set(CheckID.allCases), limits: AuditLimits = AuditLimits(), minimumSeverity: Severity = .note) {
        self.checks = checks
        self.limits = limits
        self.minimumSeverity = minimumSeverity
    }

    /// `time` is the moment of the pass (ISO 8601 UTC), carried by the report.
    public func audit(_ screen: Screen, screenshot: Bitmap?, time: String) -> AuditReport {
        let walk = Walk(screen: screen, limits: limits)
        var reports = CheckRunner(walk: walk, enabled: checks, screenshot: screenshot).run()
        if !walk.isComplete {
            for i in reports.indices { reports[i].complete = false }
        }
        // Number every finding in reading order, as the picture does.
        var all = Auditor.readingOrder(reports.flatMap(\.findings))
        for i in all.indices { all[i].number = i + 1 }
        let shown = all.filter { $0.severity <= minimumSeverity }
        for r in reports.indices {
            reports[r].findings = all.filter { $0.check == reports[r].check }
        }
        return AuditReport(screen: screen, time: time, checks: reports, findings: shown, hidden: all.count - shown.count,
                           minimumSeverity: minimumSeverity, totalElements: walk.totalElements, walkedElements: walk.nodes.count,
                           stoppedBy: walk.stoppedBy, stoppedAt: walk.stoppedAt, screenshotUsed: screenshot != nil)
    }
}

extension Auditor {
    /// Top to bottom, left to right: sorted by their tops, findings form
    /// lines (one joins a line while its top is no lower than the middle of
    /// the line's first box), each line read left to right; ties go by tree
    /// order, then check.
    static func readingOrder(_ findings: [Finding]) -> [Finding] {
        func frame(_ f: Finding) -> Rect { Picture.sanitized(f.frame) }
        let byTop = findings.sorted { a, b in
            (frame(a).y, a.order, a.check) < (frame(b).y, b.order, b.check)
        }
        var lines: [[Finding]] = []
        for f in byTop {
            if let first = lines.last?.first, frame(f).y <= frame(first).y + frame(first).height / 2 {
                lines[lines.count - 1].append(f)
            } else {
                lines.append([f])
            }
        }
        return lines.flatMap { line in
            line.sorted { a, b in (frame(a).x, a.order, a.check) < (frame(b).x, b.order, b.check) }
        }
    }
}

/// The outcome of a pass, in words that never mean two situations.
public enum AuditSummary: String, Sendable {
    /// Shown findings.
    case issuesFound = "Issues Found"
    /// Every enabled check ran over the whole screen and found nothing.
    case noIssuesFound = "No Issues Found"
    /// Nothing found, but part of the screen or of a check was not read.
    case noIssuesInWhatWasChecked = "No Issues In What Was Checked"
    /// No check read any element (none enabled, or nothing applicable or readable).
    case nothingWasChecked = "Nothing Was Checked"
    /// Findings exist, but the severity filter hides all of them.
    case findingsHidden = "Findings Hidden"
}

public struct AuditReport: Sendable {
    public let screen: Screen
    public let time: String
    public let checks: [CheckReport]
    /// The findings shown (at or above the minimum severity), numbered.
    public let findings: [Finding]
    /// Findings below the minimum severity.
    public let hidden: Int
    public let minimumSeverity: Severity
    public let totalElements: Int
    public let walkedElements: Int
    public let stoppedBy: String?
    public let stoppedAt: String?
    public let screenshotUsed: Bool

    public var summary: AuditSummary {
        if !findings.isEmpty { return .issuesFound }
        if hidden > 0 { return .findingsHidden }
        if checks.allSatisfy({ $0.read == 0 }) { return .nothingWasChecked }
        if stoppedBy == nil, checks.allSatisfy({ $0.complete && $0.read == $0.applicable }) { return .noIssuesFound }
        return .noIssuesInWhatWasChecked
    }

    /// The summary's title with its count, and one line saying why.
    public var headline: (title: String, detail: String) {
        switch summary {
        case .issuesFound:
            let errors = findings.filter { $0.severity == .error }.count, warnings = findings.filter { $0.severity == .warning }.count
            let notes = findings.count - errors - warnings
            var parts: [String] = []
            if errors > 0 { parts.append("\(errors) error\(errors == 1 ? "" : "s")") }
            if warnings > 0 { parts.append("\(warnings) warning\(warnings == 1 ? "" : "s")") }
            if notes > 0 { parts.append("\(notes) note\(notes == 1 ? "" : "s")") }
            let hiddenNote = hidden > 0 ? "; \(hidden) below \(minimumSeverity.rawValue) hidden" : ""
            return ("\(findings.count) \(findings.count == 1 ? "Issue" : "Issues") Found", parts.joined(separator: ", ") + hiddenNote + incompleteNote)
        case .findingsHidden:
            return (summary.rawValue, "\(hidden) finding\(hidden == 1 ? "" : "s") below \(minimumSeverity.rawValue) not shown" + incompleteNote)
        case .nothingWasChecked:
            if screen.size.isEmpty { return (summary.rawValue, "the input describes an empty screen") }
            return (summary.rawValue, checks.isEmpty ? "no check was enabled" : "no enabled check could read any element" + incompleteNote)
        case .noIssuesFound:
            return (summary.rawValue, "every enabled check read every element it applies to")
        case .noIssuesInWhatWasChecked:
            return (summary.rawValue, "not everything was read" + incompleteNote)
        }
    }

    private var incompleteNote: String {
        var parts: [String] = []
        if let stoppedBy { parts.append("the walk stopped at \(stoppedBy): \(totalElements - walkedElements) of \(totalElements) elements not checked") }
        for c in checks where c.read < c.applicable { parts.append("\(c.check.rawValue) read \(c.read) of \(c.applicable)") }
        return parts.isEmpty ? "" : "; " + parts.joined(separator: "; ")
    }

    public var boxes: [PictureBox] { findings.map { PictureBox(number: $0.number, frame: $0.frame, severity: $0.severity) } }

    // MARK: text

    public func text() -> String {
        var out = "Accessibility audit of \(screen.name.map { "\"\($0)\"" } ?? "a screen") (\(screen.origin), "
            + "\(Format.number(screen.size.width)) × \(Format.number(screen.size.height)) pt @\(NumberText.fixed(screen.scale, 3).trimmingZeros)x"
            + "\(screenshotUsed ? ", with screenshot" : "")) at \(time)\n"
        out += "Checks: \(checks.map(\.check.rawValue).joined(separator: ", "))\n"
        out += "Walked \(walkedElements) of \(totalElements) elements"
        if let stoppedBy { out += "; stopped at \(stoppedBy) before \(stoppedAt ?? "the next element")" }
        out += "\n\n"
        let (title, detail) = headline
        out += "\(title)\(detail.isEmpty ? "" : " (\(detail))")\n"
        if !findings.isEmpty { out += "\n" }
        for f in findings {
            let place = f.element.contains(" at (") ? f.element : "\(f.element) \(f.frame)"
            out += "#\(f.number) \(f.severity.rawValue.padding(7)) \(f.check.rawValue.padding(18)) \(place): \(f.message)\n"
        }
        out += "\nCoverage:\n"
        for c in checks {
            out += "  \(c.coverage)\(c.complete ? "" : " (incomplete)")\n"
            for note in c.notes { out += "    \(note)\n" }
        }
        return out
    }

    // MARK: JSON

    public func json() -> JSON {
        .object([
            ("tool", .string("pincer a11y")),
            ("time", .string(time)),
            ("screen", .object([("name", screen.name.map(JSON.string) ?? .null), ("origin", .string(screen.origin)),
                                ("size", .array([.double(screen.size.width), .double(screen.size.height)])),
                                ("scale", .double(screen.scale)), ("screenshot", .bool(screenshotUsed))])),
            ("summary", .object([("result", .string(summary.rawValue)), ("title", .string(headline.title)),
                                 ("detail", .string(headline.detail))])),
            ("checksRun", .array(checks.map { .string($0.check.rawValue) })),
            ("walk", .object([("elements", .int(Int64(totalElements))), ("walked", .int(Int64(walkedElements))),
                              ("stoppedBy", stoppedBy.map(JSON.string) ?? .null), ("stoppedAt", stoppedAt.map(JSON.string) ?? .null)])),
            ("checks", .array(checks.map { c in
                .object([("id", .string(c.check.rawValue)), ("title", .string(c.check.title)), ("complete", .bool(c.complete)),
                         ("applicable", .int(Int64(c.applicable))), ("read", .int(Int64(c.read))),
                         ("findings", .int(Int64(c.findings.count))), ("coverage", .string(c.coverage)),
                         ("notes", .array(c.notes.map(JSON.string)))])
            })),
            ("findings", .array(findings.map(Self.json))),
            ("hidden", .int(Int64(hidden))),
            ("minimumSeverity", .string(minimumSeverity.rawValue)),
        ])
    }

    static func json(_ f: Finding) -> JSON {
        .object([("number", .int(Int64(f.number))), ("check", .string(f.check.rawValue)), ("severity", .string(f.severity.rawValue)),
                 ("message", .string(f.message)), ("element", .string(f.element)),
                 ("frame", .array([f.frame.x, f.frame.y, f.frame.width, f.frame.height].map { .double($0) })),
                 ("source", f.source.map(JSON.string) ?? .null)])
    }

    // MARK: SARIF 2.1.0

    /// `path` as SARIF's `artifactLocation.uri`, a URI reference (RFC 3986):
    /// an absolute path as a `file://` URI, a relative one as it is; bytes
    /// other than unreserved characters and `/` percent-encoded (spaces,
    /// non-ASCII, `:` that would read as a scheme, `%`, `#`, `?`).
    static func uriReference(_ path: String) -> String {
        var out = path.hasPrefix("/") ? "file://" : ""
        let hex = Array("0123456789ABCDEF")
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }

    /// A SARIF 2.1.0 log with one run. `artifact` is the audited file (for
    /// the result locations); elements are logical locations named by their
    /// path in the input.
    public func sarif(artifact: String, toolVersion: String) -> JSON {
        let rules = CheckID.allCases
        let uri = Self.uriReference(artifact)
        let results: [JSON] = findings.map { f in
            var location: [(String, JSON)] = [("physicalLocation", .object([("artifactLocation", .object([("uri", .string(uri))]))]))]
            location.append(("logicalLocations", .array([.object([("fullyQualifiedName", .string(f.source ?? f.element)),
                                                                  ("kind", .string("element"))])])))
            return .object([
                ("ruleId", .string(f.check.rawValue)), ("ruleIndex", .int(Int64(rules.firstIndex(of: f.check)!))),
                ("level", .string(f.severity.rawValue)),
                ("message", .object([("text", .string("#\(f.number) \(f.element): \(f.message)"))])),
                ("locations", .array([.object(location)])),
                ("properties", .object([("number", .int(Int64(f.number))),
                                        ("frame", .array([f.frame.x, f.frame.y, f.frame.width, f.frame.height].map { .double($0) }))])),
            ])
        }
        let driver: JSON = .object([
            ("name", .string("pincer-a11y")), ("version", .string(toolVersion)),
            ("informationUri", .string("https://github.com/pincer-dev/pincer")),
            ("rules", .array(rules.map { r in
                .object([("id", .string(r.rawValue)), ("name", .string(r.title.replacingSpaces())),
                         ("shortDescription", .object([("text", .string(r.title))])),
                         ("fullDescription", .object([("text", .string(r.summary))])),
                         ("helpUri", .string(r.helpURI)),
                         ("defaultConfiguration", .object([("level", .string(r == .labels || r == .touchTargets || r == .contrast ? "error" : "warning"))]))])
            })),
        ])
        return .object([
            ("$schema", .string("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")),
            ("version", .string("2.1.0")),
            ("runs", .array([.object([
                ("tool", .object([("driver", driver)])),
                ("invocations", .array([.object([("executionSuccessful", .bool(true)), ("startTimeUtc", .string(time)),
                                                 ("properties", .object([("summary", .string(summary.rawValue)),
                                                                         ("detail", .string(headline.detail)),
                                                                         ("checksRun", .array(checks.map { .string($0.check.rawValue) }))]))])])),
                ("artifacts", .array([.object([("location", .object([("uri", .string(uri))]))])])),
                ("results", .array(results)),
            ])])),
        ])
    }
}

private extension String {
    /// "2.625" stays, "3.000" becomes "3".
    var trimmingZeros: String {
        guard contains(".") else { return self }
        var s = self
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func replacingSpaces() -> String { split(separator: " ").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() }
}
