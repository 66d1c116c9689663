import Foundation
import XCTest
import PseudoL10n

/// `pincer run l10n.catalog` of a big .po held about 20 times the file
/// (an 11.5 MB catalog: 251 MB of peak RSS): every character as a 4-byte
/// Unicode.Scalar, every entry, string and transformed string kept, and the
/// output built whole before it was written. Now the command holds the
/// file's bytes and streams the output. Measured in a child (wait4's peak
/// RSS, see `peakSource`), against a command of the same plugin that reads no catalog.
final class L10nCatalogMemoryTests: XCTestCase {
    /// A child's ru_maxrss counts the memory of the process it was spawned
    /// from (posix_spawn shares the parent's address space until exec, and
    /// exec keeps its high-water mark), here the test runner's tens of MB.
    /// So a small C program, compiled here, forks (from its own small
    /// address space), execs the command and prints wait4's figure for it.
    private static let peakSource = """
        #include <stdio.h>
        #include <sys/resource.h>
        #include <sys/wait.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
            (void)argc;
            pid_t pid = fork();
            if (pid < 0) return 70;
            if (pid == 0) { execv(argv[1], argv + 1); _exit(127); }
            int status; struct rusage usage;
            if (wait4(pid, &status, 0, &usage) < 0) return 71;
            printf("%d %ld\\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), usage.ru_maxrss);
            return 0;
        }
        """

    /// Runs the built `pincer` with `arguments` through the helper; its exit status and peak RSS in bytes.
    private func peak(_ helper: String, _ arguments: [String], state: String) throws -> (status: Int32, bytes: Int) {
        var environment = ProcessInfo.processInfo.environment
        environment["PINCER_STATE_DIR"] = state
        environment.removeValue(forKey: "PINCER_PLUGIN_PATH")
        let result = try Fixture.run(helper, [Fixture.pincer] + arguments, environment: environment)
        // The command's own output comes first; the helper's line last.
        let last = result.stdout.split(separator: "\n").last ?? ""
        let fields = last.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard result.status == 0, fields.count == 2, let status = fields[0], let kilobytes = fields[1] else {
            throw NSError(domain: "peak-rss", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "peak-rss printed \(result.stdout) \(result.stderr)"])
        }
        return (Int32(status), kilobytes * 1024)
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

        let helper = "\(dir)/peak-rss"
        try Data(Self.peakSource.utf8).write(to: URL(fileURLWithPath: "\(helper).c"))
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-D_DEFAULT_SOURCE", "-Wall", "-Werror", "\(helper).c", "-o", helper])
        XCTAssertEqual(cc.status, 0, cc.stderr)

        let base = try peak(helper, ["run", "l10n.modes"], state: state)
        XCTAssertEqual(base.status, 0)
        let run = try peak(helper, ["run", "l10n.catalog", input, "--output", output, "--modes", "all"], state: state)
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
