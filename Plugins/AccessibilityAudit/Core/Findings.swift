/// How serious a finding is. SARIF levels use the same words.
public enum Severity: String, Sendable, Comparable, CaseIterable {
    case error, warning, note

    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    var rank: Int { self == .error ? 0 : self == .warning ? 1 : 2 }
}

/// A box drawn on the picture of a screen: one finding, numbered as in the report.
public struct PictureBox: Sendable, Equatable {
    public var number: Int
    public var frame: Rect
    public var severity: Severity

    public init(number: Int, frame: Rect, severity: Severity) {
        self.number = number
        self.frame = frame
        self.severity = severity
    }
}
