import Foundation
import XCTest

/// The programs users open Pincer's files with, as `scripts/deps` installs
/// them: Debian's tools, and the Python consumers in `.build/consumers`.
/// A conformance test fails, never skips, when one is missing: the suite
/// is only worth something where the real consumer ran.
enum Consumer {
    static var shared: String { Fixture.packageRoot + "/../shared/fixtures" }
    static var schemas: String { shared + "/schemas" }

    /// The virtual environment's interpreter (mitmproxy, gpxpy).
    static var venvPython: String { Fixture.packageRoot + "/.build/consumers/bin/python3" }
    static var mitmdump: String { Fixture.packageRoot + "/.build/consumers/bin/mitmdump" }
    /// Debian's interpreter, with python3-jsonschema and python3-geographiclib.
    static let debianPython = "/usr/bin/python3"
    static let xmllint = "/usr/bin/xmllint"
    static let msgfmt = "/usr/bin/msgfmt"
    static let sqlite3 = "/usr/bin/sqlite3"
    static let rsvgConvert = "/usr/bin/rsvg-convert"
    /// Not a consumer: the witness of what a process opens (StartupStateTests).
    static let strace = "/usr/bin/strace"

    /// The path of `tool`, failing the test (not skipping it) when it is
    /// absent: run `bash scripts/deps` to install it.
    static func require(_ tool: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw Missing(tool: tool) }
        return tool
    }

    struct Missing: Error, CustomStringConvertible {
        let tool: String
        var description: String { "\(tool) is missing: run `bash scripts/deps`" }
    }

    /// Runs a Python script with `interpreter`; arguments follow as sys.argv[1...].
    static func python(_ interpreter: String, _ script: String, _ arguments: [String] = []) throws -> Fixture.ProcessResult {
        try Fixture.run(require(interpreter), ["-c", script] + arguments)
    }
}
