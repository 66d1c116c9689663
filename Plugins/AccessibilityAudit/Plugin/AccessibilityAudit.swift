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
        let switches = CheckSwitches(host: host)
        try host.addSection(id: AccessibilityAudit.section, title: "Accessibility Audit", order: 330)
        for check in CheckID.allCases {
            try host.addPluginValueEntry(.toggle, id: check.rawValue, title: check.title, section: AccessibilityAudit.section,
                                         summary: check.summary,
                                         read: { (switches.enabled.contains(check) ? "true" : "false", []) },
                                         set: { value throws in try switches.set(check, on: value == "true") })
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
        var off = Set<CheckID>()
        for name in (host.setting(CheckSwitches.key) ?? "").split(separator: ",") {
            if let check = CheckID(rawValue: String(name)) { off.insert(check) } else {
                host.log(.warning, "a11y settings: unknown check '\(name)' ignored")
            }
        }
        disabled = Mutex(off)
    }

    var enabled: Set<CheckID> { Set(CheckID.allCases).subtracting(disabled.withLock { $0 }) }

    func set(_ check: CheckID, on: Bool) throws {
        try disabled.withLock { off in
            var next = off
            if on { next.remove(check) } else { next.insert(check) }
            try host.setSetting(CheckSwitches.key, next.map(\.rawValue).sorted().joined(separator: ","))
            off = next
        }
    }
}
