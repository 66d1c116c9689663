import PincerPluginKit
import A11yAudit
#if canImport(Glibc)
import Glibc
#endif

/// The a11y.* commands.
struct AuditCommands {
    let switches: FirstUse<CheckSwitches>

    func register(with host: PluginHost) throws {
        let switches = self.switches
        try host.addCommand("""
            audit(input: string, checks: string = "", format: string = "text", picture: string = "", screenshot: string = "", \
            scale: f64 = 0, min_severity: string = "note", budget_ms: i64 = 2000) -> string
            """,
                            summary: "Audit a layout model or a UI dump (uiautomator, Appium iOS)",
                            details: """
                                input: a pincer.layout/1 JSON model, an Android `uiautomator dump` XML or an iOS \
                                Appium/WebDriverAgent page source. --checks a,b (default: the switches in the menu; \
                                checks: \(CheckID.allCases.map(\.rawValue).joined(separator: ", "))). --format text, json or \
                                sarif (SARIF 2.1.0). --picture out.png|out.svg draws the screenshot (or a wireframe) with \
                                each finding boxed and numbered. --screenshot overrides the model's PNG. --scale sets the \
                                pixels per point of a dump (uiautomator: 2.625, Appium iOS: 3 by default). --min_severity \
                                error|warning|note hides findings below it (the summary then says so). --budget_ms bounds the \
                                pass; the walk also stops at 100 levels and 5,000 elements, and the report says what was not \
                                checked.
                                """) { args in
            // The stored switches only when --checks does not say.
            let checks = try AuditCommands.checks(args[1].string) { try switches.get().enabled }
            guard let minimum = Severity(rawValue: args[6].string) else {
                throw CommandError.invalidArgument("--min_severity must be error, warning or note, not '\(args[6].string)'")
            }
            let format = args[2].string
            guard ["text", "json", "sarif"].contains(format) else {
                throw CommandError.invalidArgument("--format must be text, json or sarif, not '\(format)'")
            }
            guard args[7].i64 > 0 else { throw CommandError.invalidArgument("--budget_ms must be positive") }
            let input = args[0].string
            // A picture the command cannot write is refused before the audit runs.
            if !args[3].string.isEmpty { _ = try PictureFile.kind(of: args[3].string) }
            let screen = try AuditCommands.load(input, scale: args[5].f64)
            let screenshot = try AuditCommands.screenshot(for: screen, model: input, override: args[4].string)
            let auditor = Auditor(checks: checks, limits: AuditLimits(timeBudget: Double(args[7].i64) / 1000), minimumSeverity: minimum)
            let report = auditor.audit(screen, screenshot: screenshot, time: AuditCommands.utcNow())
            if !args[3].string.isEmpty {
                try AuditCommands.writePicture(args[3].string, report: report, screen: screen, screenshot: screenshot)
            }
            switch format {
            case "json": return .string(report.json().serialized(pretty: true))
            case "sarif": return .string(report.sarif(artifact: input, toolVersion: "1.0.0").serialized(pretty: true))
            default: return .string(report.text())
            }
        }
        try host.addCommand("contrast(foreground: string, background: string, size: f64 = 0, bold: bool = false) -> string",
                            summary: "The WCAG contrast ratio of two colours, and whether text or non-text passes",
                            details: "Colours: #rgb, #rrggbb, #rrggbbaa, rgb(r, g, b), rgba(r, g, b, a) or black/white/red/green/blue. "
                                + "--size in points decides large text (18 pt, or 14 pt bold); without it the strict 4.5:1 applies. "
                                + "A translucent foreground is composited over the background first.",
                            jsonResult: true) { args in
            guard let fg = Color(css: args[0].string) else { throw CommandError.invalidArgument("foreground '\(args[0].string)' is not a colour") }
            guard let bg = Color(css: args[1].string) else { throw CommandError.invalidArgument("background '\(args[1].string)' is not a colour") }
            guard bg.alpha >= 1 else { throw CommandError.invalidArgument("background '\(args[1].string)' must be opaque") }
            let size = args[2].f64 > 0 ? args[2].f64 : nil
            let shown = fg.alpha < 1 ? fg.composited(over: bg) : fg
            let ratio = contrastRatio(shown, bg)
            let text = ContrastRequirement.forText(size: size, bold: args[3].bool)
            return .string(JSON.object([
                ("foreground", .string(shown.description)), ("background", .string(bg.description)),
                ("ratio", .double(ratio)), ("shown", .string(ContrastRequirement.describe(ratio, against: text.ratio))),
                ("text", .object([("threshold", .double(text.ratio)), ("large", .bool(text.large)), ("sizeKnown", .bool(text.sizeKnown)),
                                  ("passes", .bool(ratio >= text.ratio))])),
                ("nonText", .object([("threshold", .double(ContrastRequirement.nonText)), ("passes", .bool(ratio >= ContrastRequirement.nonText))])),
            ]).serialized())
        }
        try host.addCommand("import(input: string, output: string = \"\", scale: f64 = 0) -> string",
                            summary: "Convert a uiautomator or Appium iOS dump to a pincer.layout/1 model",
                            details: "Prints the model, or writes it to --output. Add colours, fonts or a screenshot to it by hand to let the contrast check read more.",
                            jsonResult: true) { args in
            let screen = try AuditCommands.load(args[0].string, scale: args[2].f64)
            let text = LayoutJSON.write(screen).serialized(pretty: true)
            guard !args[1].string.isEmpty else { return .string(text) }
            try TextFile.writeAtomically(text + "\n", to: args[1].string)
            return .string(JSON.object([("output", .string(args[1].string)), ("origin", .string(screen.origin))]).serialized())
        }
        try host.addCommand("checks() -> string", summary: "Every check, what it looks for, and whether it is switched on",
                            jsonResult: true) { _ in
            let enabled = try switches.get().enabled
            return .string(JSON.array(CheckID.allCases.map { c in
                .object([("check", .string(c.rawValue)), ("on", .bool(enabled.contains(c))), ("summary", .string(c.summary))])
            }).serialized())
        }
    }

    // MARK: helpers

    static func checks(_ text: String, default fallback: () throws -> Set<CheckID>) throws -> Set<CheckID> {
        if text.isEmpty { return try fallback() }
        if text == "all" { return Set(CheckID.allCases) }
        var checks = Set<CheckID>()
        for name in text.split(separator: ",") {
            guard let check = CheckID(rawValue: String(name)) else {
                throw CommandError.invalidArgument("unknown check '\(name)' (checks: \(CheckID.allCases.map(\.rawValue).joined(separator: ", ")), all)")
            }
            checks.insert(check)
        }
        return checks
    }

    static func load(_ path: String, scale: Double) throws -> Screen {
        let bytes = try TextFile.readBytes(path)
        do {
            return try LayoutImport.read(bytes, scale: scale > 0 ? scale : nil)
        } catch {
            throw CommandError.invalidArgument("\(path): \(error)")
        }
    }

    /// The screenshot: --screenshot, else the model's, resolved against the model's folder.
    static func screenshot(for screen: Screen, model: String, override: String) throws -> Bitmap? {
        var path = override
        if path.isEmpty, let own = screen.screenshot {
            path = own.hasPrefix("/") ? own : directory(of: model) + own
        }
        guard !path.isEmpty else { return nil }
        do {
            return try Bitmap.readPNG(path: path)
        } catch {
            throw CommandError.invalidArgument("screenshot \(path): \(error)")
        }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    static func writePicture(_ path: String, report: AuditReport, screen: Screen, screenshot: Bitmap?) throws {
        let messages = Dictionary(report.findings.map { ($0.number, "\($0.check.rawValue): \($0.message)") }, uniquingKeysWith: { a, _ in a })
        try PictureFile.write(svg: Picture.svg(screen: screen, screenshot: screenshot, boxes: report.boxes, messages: messages), to: path)
    }

    /// Now, as ISO 8601 UTC with seconds ("2026-11-29T14:20:16Z").
    static func utcNow() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
