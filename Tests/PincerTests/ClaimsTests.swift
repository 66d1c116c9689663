import Foundation
import Synchronization
import XCTest
@testable import PincerHost

/// README claims checked against real plugins.
final class ClaimsTests: XCTestCase {
    static func words(_ value: Value) -> [String: Int] {
        guard case .string(let text) = value else { return [:] }
        var result: [String: Int] = [:]
        for word in text.split(separator: " ") {
            let pair = word.split(separator: "=")
            if pair.count == 2, let n = Int(pair[1]) { result[String(pair[0])] = n }
        }
        return result
    }

    /// README "Threads": the host serialises every callback into one
    /// plugin. Four threads call into the serial fixture at once (typed and
    /// values commands, a value row, a page, a toggle's change notice, a
    /// plugin-valued entry's set and read); the fixture counts callbacks
    /// inside it with an atomic and records any overlap.
    func testCallbacksIntoOnePluginNeverOverlap() throws {
        let library = try Fixture.buildPlugin("serial", into: Fixture.temporaryDirectory("pincer-serial"), extraFlags: ["-pthread"])
        var options = PincerHost.Host.Options(stateDirectory: Fixture.temporaryDirectory("pincer-serial-state"))
        options.builtinDirectory = nil
        options.pluginPaths = [library]
        let host = PincerHost.Host(options: options)
        host.loadAll()
        defer { host.shutdown() }
        XCTAssertEqual(host.failures, [])
        func command(_ name: String) throws -> Command { try XCTUnwrap(host.command(named: "serial.\(name)")) }
        func entry(_ id: String) throws -> Entry { try XCTUnwrap(host.entry(id: "serial.\(id)")) }

        // The detector catches an overlap when there is one: its own threads, without the host.
        let selftest = Self.words(try command("selftest").invoke([.i32(4), .i32(200)]))
        XCTAssertEqual(selftest["calls"], 800, "\(selftest)")
        XCTAssertGreaterThan(selftest["overlaps"] ?? 0, 0, "the detector saw no overlap among 4 unserialised threads: \(selftest)")
        XCTAssertGreaterThanOrEqual(selftest["most"] ?? 0, 2, "\(selftest)")

        let work = try command("work"), vwork = try command("vwork")
        let row = try entry("row"), page = try entry("page"), toggle = try entry("toggle"), kept = try entry("kept")
        let threads = 4, perThread = 210
        let inFlight = Atomic<Int>(0), mostInFlight = Atomic<Int>(0)
        let problems = EmbedLockedList()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                let now = inFlight.add(1, ordering: .relaxed).newValue
                _ = mostInFlight.max(now, ordering: .relaxed)
                do {
                    switch (i + t) % 7 {
                    case 0: if try work.invoke([.i32(Int32(i))]) != .i32(Int32(i + 1)) { problems.append("work \(i)") }
                    case 1: if try vwork.invoke([.i64(Int64(i))]) != .i64(Int64(2 * i)) { problems.append("vwork \(i)") }
                    case 2: if host.state(of: row) != .value("row") { problems.append("row: \(host.state(of: row))") }
                    case 3: if host.state(of: page) != .rows([MenuRow(title: "one", value: "1")]) { problems.append("page") }
                    case 4: try host.setValue(i % 2 == 0 ? "true" : "false", of: toggle)
                    case 5: try host.setValue(i % 2 == 0 ? "a" : "b", of: kept)
                    default:
                        if case .pluginValue(let v, _) = host.state(of: kept), v == "a" || v == "b" { break }
                        problems.append("kept: \(host.state(of: kept))")
                    }
                } catch {
                    problems.append("\(error)")
                }
                inFlight.subtract(1, ordering: .relaxed)
            }
        }
        XCTAssertEqual(problems.items, [])
        XCTAssertGreaterThanOrEqual(mostInFlight.load(ordering: .relaxed), 2, "the calls were never concurrent, so nothing was tested")
        // Every operation above is exactly one callback into the plugin.
        let stats = Self.words(try command("stats").invoke([]))
        XCTAssertEqual(stats["calls"], threads * perThread, "\(stats)")
        XCTAssertEqual(stats["overlaps"], 0, "two callbacks of one plugin ran at once: \(stats)")
        XCTAssertEqual(stats["most"], 1, "\(stats)")
    }
}
