// A built-in plugin written in Swift with PincerPluginKit, to show that the
// C ABI works the same from Swift as from C (see Plugins/DeveloperOptions).
import PincerPluginKit
#if canImport(Glibc)
import Glibc
#endif

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.sysinfo", shortName: "sysinfo", name: "System Info", version: "1.0.0",
    summary: "Process and machine facts: pid, uptime, kernel, environment")) { SystemInfo() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class SystemInfo: PincerPlugin {
    private let started = SystemInfo.monotonicSeconds()

    func register(with host: PluginHost) throws {
        try host.addValueRow(id: "pid", title: "Process ID", section: PINCER_SECTION_SYSTEM) { String(getpid()) }
        try host.addValueRow(id: "uptime", title: "Host uptime", section: PINCER_SECTION_SYSTEM,
                             summary: "Seconds since the plugin was initialised") { [started] in
            String(SystemInfo.monotonicSeconds() - started)
        }
        try host.addValueRow(id: "hostname", title: "Host name", section: PINCER_SECTION_DEVICE) { try SystemInfo.hostname() }
        try host.addPage(id: "kernel", title: "Kernel", section: PINCER_SECTION_DEVICE) {
            let u = SystemInfo.uname()
            return [("System", u.sysname), ("Release", u.release), ("Version", u.version), ("Machine", u.machine)]
        }
        try host.addCommand("env(name: string) -> string", summary: "Value of an environment variable") { args in
            let name = args[0].string
            guard let value = getenv(name) else { throw CommandError("environment variable \(name) is not set", status: PINCER_NOT_FOUND) }
            return .string(String(cString: value))
        }
        try host.addCommand("uptime() -> f64", summary: "Seconds since the plugin was initialised") { [started] _ in
            .f64(SystemInfo.monotonicSeconds() - started)
        }
        try host.addCommand("hostname() -> string", summary: "The machine's host name") { _ in .string(try SystemInfo.hostname()) }
        try host.addCommand("cpus() -> i32", summary: "Online processors") { _ in .i32(Int32(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func hostname() throws -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else {
            throw CommandError("gethostname failed: \(String(cString: strerror(errno)))")
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static func uname() -> (sysname: String, release: String, version: String, machine: String) {
        var u = utsname()
        _ = Glibc.uname(&u)
        func field<T>(_ t: T) -> String {
            withUnsafeBytes(of: t) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
        }
        return (field(u.sysname), field(u.release), field(u.version), field(u.machine))
    }
}
