// Accessibility audit on a rendered-layout model (the audit Scyther's README
// describes; checks after Google's ATF, GTXiLib and axe-core). The audit
// lives in A11yAudit; this is the glue: persisted check switches, commands.
import PincerPluginKit
import A11yAudit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.a11y", shortName: "a11y", name: "Accessibility Audit", version: "1.0.0",
    summary: "Labels, touch targets and contrast on a layout model or a real UI dump, with pictures")) { AccessibilityAudit() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class AccessibilityAudit: PincerPlugin {
    static let section = "a11y"

    func register(with host: PluginHost) throws {
        // Init only registers: the stored switches are read by the first entry or command that needs them.
        let switches = FirstUse { CheckSwitches(host: host) }
        try host.addSection(id: AccessibilityAudit.section, title: "Accessibility Audit", order: 330)
        for check in CheckID.allCases {
            try host.addPluginValueEntry(.toggle, id: check.rawValue, title: check.title, section: AccessibilityAudit.section,
                                         summary: check.summary,
                                         read: { (try switches.get().enabled.contains(check) ? "true" : "false", []) },
                                         set: { value throws in try switches.get().set(check, on: value == "true") })
        }
        try AuditCommands(switches: switches).register(with: host)
    }
}

/// Which checks run when a command does not say: each on by default,
/// persisted in the plugin's settings as the list of those switched off.
final class CheckSwitches: @unchecked Sendable {
    private static let key = "disabled-checks"
    private let host: PluginHost
    private let disabled: Mutex<Set<CheckID>>

    init(host: PluginHost) {
        self.host = host
        let (off, unknown) = CheckSwitches.decode(host.setting(CheckSwitches.key))
        for name in unknown { host.log(.warning, "a11y settings: unknown check '\(name)' ignored") }
        disabled = Mutex(off)
    }

    /// The checks switched off in the stored text, and the names not known.
    private static func decode(_ text: String?) -> (off: Set<CheckID>, unknown: [String]) {
        var off = Set<CheckID>(), unknown: [String] = []
        for name in (text ?? "").split(separator: ",") {
            if let check = CheckID(rawValue: String(name)) { off.insert(check) } else { unknown.append(String(name)) }
        }
        return (off, unknown)
    }

    var enabled: Set<CheckID> { Set(CheckID.allCases).subtracting(disabled.withLock { $0 }) }

    /// Switches one check, changing the stored list in one transaction so
    /// that a switch another process changed meanwhile is kept.
    func set(_ check: CheckID, on: Bool) throws {
        try disabled.withLock { off in
            var next = off
            try host.updateSetting(CheckSwitches.key) { text in
                next = CheckSwitches.decode(text).off
                if on { next.remove(check) } else { next.insert(check) }
                return .set(next.map(\.rawValue).sorted().joined(separator: ","))
            }
            off = next
        }
    }
}
