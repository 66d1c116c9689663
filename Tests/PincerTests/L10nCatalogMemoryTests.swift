import Foundation
import XCTest
import PseudoL10n
#if canImport(Glibc)
import Glibc
#endif

/// `pincer run l10n.catalog` of a big .po held about 20 times the file
/// (an 11.5 MB catalog: 251 MB of peak RSS): every character as a 4-byte
/// Unicode.Scalar, every entry, string and transformed string kept, and the
/// output built whole before it was written. Now the command holds the
/// file's bytes and streams the output. Measured in a child (wait4's peak
/// RSS), against a command of the same plugin that reads no catalog.
final class L10nCatalogMemoryTests: XCTestCase {
    /// Runs the built `pincer` with `arguments`; its exit status and peak RSS in bytes.
    private func peak(_ arguments: [String], state: String) throws -> (status: Int32, bytes: Int) {
        var environment = ProcessInfo.processInfo.environment
        environment["PINCER_STATE_DIR"] = state
        environment.removeValue(forKey: "PINCER_PLUGIN_PATH")
        let argv: [UnsafeMutablePointer<CChar>?] = ([Fixture.pincer] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid = pid_t()
        let rc = posix_spawn(&pid, Fixture.pincer, &actions, nil, argv, envp)
        guard rc == 0 else { throw NSError(domain: "spawn", code: Int(rc)) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw NSError(domain: "wait4", code: Int(errno)) }
        }
        return (status, Int(usage.ru_maxrss) * 1024)
    }

    func testRewritingABigPOTakesAboutItsOwnSize() throws {
        let dir = Fixture.temporaryDirectory("pincer-l10n-memory")
        let state = Fixture.temporaryDirectory("pincer-l10n-memory-state")
        defer {
            try? FileManager.default.removeItem(atPath: dir)
            try? FileManager.default.removeItem(atPath: state)
        }
        let input = "\(dir)/big.po", output = "\(dir)/big.ar-XB.po"
        let bytes = Array(L10nCatalogRewriteTests.generated(entries: 25_000).utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: input))

        let base = try peak(["run", "l10n.modes"], state: state)
        XCTAssertEqual(base.status, 0)
        let run = try peak(["run", "l10n.catalog", input, "--output", output, "--modes", "all"], state: state)
        XCTAssertEqual(run.status, 0)
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        // Every message got its msgstr: the whole output was written.
        let back = try Catalog(bytes: written, format: .po, table: "big")
        XCTAssertEqual(back.translations.count, try Catalog(bytes: bytes, format: .po, table: "big").strings.filter { $0.part != "plural" }.count
                       + 25_000 / 13 + 1)
        XCTAssertGreaterThan(written.count, 2 * bytes.count)
        // The file once, what little the rewrite keeps, and slack for the
        // allocator; before: about 20 times the file.
        let over = run.bytes - base.bytes
        XCTAssertLessThan(over, 2 * bytes.count,
                          "l10n.catalog of \(bytes.count) bytes (writing \(written.count)): peak RSS \(run.bytes), \(over) above l10n.modes (\(base.bytes))")
    }
}
