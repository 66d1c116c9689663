import Foundation
import XCTest
import CPincerSDK
@testable import PincerHost

/// The flags plugin through the real host: the C fixture registers and reads
/// flags through "pincer.flags/1"; people use flags.* commands and the menu.
final class FlagsTests: XCTestCase {
    func testRegistrationFromCResolvesWithReasons() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        XCTAssertEqual(try app.text("app.resolve", "max-items", "int"), "20|remote")
        XCTAssertEqual(try app.text("app.resolve", "ratio", "double"), "0.5|remote")
        XCTAssertEqual(try app.text("app.resolve", "greeting", "string"), "hello|remote")
        // An unregistered flag is never a silent false: the caller's default and the reason.
        XCTAssertEqual(try app.text("app.resolve", "no-such-flag", "bool"), "false|default")
        XCTAssertEqual(try app.text("app.resolve", "no-such-flag", "int"), "-1|default")
        XCTAssertEqual(try app.text("app.resolve", "no-such-flag", "string"), "dflt|default")
        XCTAssertEqual(try app.text("app.resolve", "max-items", "bool"), "false|type-mismatch")
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "string"), "dflt|type-mismatch")
        // Registering again with the same type updates the remote value...
        XCTAssertEqual(try app.text("app.register", "max-items", "int", "50"), "ok")
        XCTAssertEqual(try app.text("app.resolve", "max-items", "int"), "50|remote")
        // ...with another type it is refused, saying why.
        XCTAssertEqual(try app.text("app.register", "max-items", "string", "x"), "flag 'max-items' is registered as int, not string")
        XCTAssertEqual(try app.text("app.register", "Bad Key", "bool", "true"), "flag key 'Bad Key' is not [a-z][a-z0-9_-]* of at most 64 bytes")
        XCTAssertEqual(try app.text("app.register", "overrides-enabled", "bool", "true"), "flag key 'overrides-enabled' is reserved for the flags menu")
    }

    func testOverridesAndTheMasterSwitch() throws {
        let app = AppHost()
        XCTAssertEqual(try app.text("app.override", "dark-mode", "false"), "ok")
        XCTAssertEqual(try app.text("app.override", "max-items", "7"), "ok")
        XCTAssertEqual(try app.text("app.override", "max-items", "seven"), "flag 'max-items' is int: 'seven' is not a 64-bit integer")
        XCTAssertEqual(try app.text("app.override", "nope", "1"), "flag 'nope' is not registered (registered: dark-mode, max-items, ratio, greeting)")
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "false|override")
        XCTAssertEqual(try app.text("app.resolve", "max-items", "int"), "7|override")

        // Off: every flag reads its remote value, and the overrides are kept.
        XCTAssertEqual(try app.run("app.master", "false"), .bool(false))
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        XCTAssertEqual(try app.text("app.resolve", "max-items", "int"), "20|remote")
        XCTAssertEqual(try app.json("flags.get", "max-items")["override"], .int(7))
        XCTAssertEqual(try app.run("app.master", "true"), .bool(true))
        XCTAssertEqual(try app.text("app.resolve", "max-items", "int"), "7|override")

        // Clear one, then all.
        XCTAssertEqual(try app.json("flags.clear", "max-items")["reason"], .string("remote"))
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "false|override")
        XCTAssertEqual(try app.text("flags.clear-all"), "cleared 1 override")
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        XCTAssertTrue(app.failure("flags.set", "ratio", "NaN").contains("'NaN' is not a finite number"))
    }

    func testOverridesRegistrationsAndSwitchSurviveARestart() throws {
        let app = AppHost()
        try app.run("flags.register", "from-shell", "string", "blue", "Registered from the shell")
        try app.run("flags.set", "from-shell", "green")
        try app.run("flags.set", "ratio", "0.25")
        try app.run("app.master", "false")
        // Restart without the app: what the shell sees afterwards.
        app.restart(withApp: false)
        let list = try app.json("flags.list")
        XCTAssertEqual(list["overridesEnabled"], .bool(false))
        let flags = list["flags"]?.arrayValue ?? []
        XCTAssertEqual(flags.compactMap { $0["key"]?.stringValue }, ["dark-mode", "max-items", "ratio", "greeting", "from-shell"])
        let shell = flags.first { $0["key"] == .string("from-shell") }
        XCTAssertEqual(shell?["override"], .string("green"))
        XCTAssertEqual(shell?["value"], .string("blue"))
        XCTAssertEqual(shell?["reason"], .string("remote"))
        XCTAssertEqual(shell?["summary"], .string("Registered from the shell"))
        // And with the app again and the switch back on, the override applies.
        app.restart()
        XCTAssertEqual(try app.run("app.master", "true"), .bool(true))
        XCTAssertEqual(try app.text("app.resolve", "ratio", "double"), "0.25|override")
        XCTAssertEqual(try app.text("app.resolve", "from-shell", "string"), "green|override")
    }

    func testExportAndImport() throws {
        let app = AppHost()
        let dir = Fixture.temporaryDirectory("pincer-flags-files")
        try app.run("flags.set", "dark-mode", "false")
        try app.run("flags.set", "greeting", "hi \"there\"")
        XCTAssertEqual(try app.text("flags.export", "\(dir)/overrides.json"), "wrote 2 overrides to \(dir)/overrides.json")
        let exported = try JSON.parse(String(contentsOfFile: "\(dir)/overrides.json", encoding: .utf8))
        XCTAssertEqual(exported["overrides"]?["greeting"], .string("hi \"there\""))
        XCTAssertEqual(exported["format"], .string("pincer.flags.overrides/1"))

        try app.run("flags.clear-all")
        let report = try app.json("flags.import", "\(dir)/overrides.json")
        XCTAssertEqual(report["applied"], .int(2))
        XCTAssertEqual(try app.text("app.resolve", "greeting", "string"), "hi \"there\"|override")

        // A file that does not parse changes nothing and says where.
        try "{\n  \"overrides\": {\n    \"dark-mode\": tru\n  }\n}\n".write(toFile: "\(dir)/broken.json", atomically: true, encoding: .utf8)
        try app.run("flags.clear-all")
        let broken = app.failure("flags.import", "\(dir)/broken.json")
        XCTAssertTrue(broken.contains("broken.json: line 3"), broken)
        XCTAssertTrue(broken.contains("nothing was changed"), broken)

        // Every problem is reported; by default nothing is applied.
        try """
        {"format": "pincer.flags.overrides/1", "overrides": {"dark-mode": false, "max-items": "many", "unknown-flag": 1, "ratio": 2}}
        """.write(toFile: "\(dir)/mixed.json", atomically: true, encoding: .utf8)
        let mixed = app.failure("flags.import", "\(dir)/mixed.json")
        XCTAssertTrue(mixed.contains("2 problems; nothing was changed"), mixed)
        XCTAssertTrue(mixed.contains("flag 'max-items' is int; the file gives string \"many\""), mixed)
        XCTAssertTrue(mixed.contains("flag 'unknown-flag' is not registered"), mixed)
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        // With partial, the valid ones apply and the problems are listed.
        let partial = try app.json("flags.import", "\(dir)/mixed.json", "true")
        XCTAssertEqual(partial["applied"], .int(2))
        XCTAssertEqual(partial["problems"]?.arrayValue?.count, 2)
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "false|override")
        XCTAssertEqual(try app.text("app.resolve", "ratio", "double"), "2|override")
        // null clears one override.
        try #"{"overrides": {"dark-mode": null}}"#.write(toFile: "\(dir)/clear.json", atomically: true, encoding: .utf8)
        try app.run("flags.import", "\(dir)/clear.json")
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        XCTAssertTrue(app.failure("flags.import", "\(dir)/missing.json").contains("cannot open \(dir)/missing.json"))
        try "[1, 2]".write(toFile: "\(dir)/array.json", atomically: true, encoding: .utf8)
        XCTAssertTrue(app.failure("flags.import", "\(dir)/array.json").contains("expected a JSON object as written by flags.export, found array"))
    }

    func testMenuShowsRemoteOverrideAndEffective() throws {
        let app = AppHost()
        let h = app.host
        XCTAssertEqual(h.entries(inSection: "flags").map(\.fullID),
                       ["flags.overrides-enabled", "flags.clear-all", "flags.dark-mode", "flags.max-items", "flags.ratio", "flags.greeting"])
        let dark = try XCTUnwrap(h.entry(id: "flags.dark-mode"))
        XCTAssertEqual(dark.kind, .choice)
        XCTAssertEqual(dark.choices, ["remote", "true", "false"])
        XCTAssertEqual(h.state(of: dark), .pluginValue("remote", details: [
            MenuRow(title: "remote", value: "true"), MenuRow(title: "override", value: nil), MenuRow(title: "effective", value: "true (remote)")]))
        try h.setValue("false", of: dark)
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "false|override")
        XCTAssertEqual(h.state(of: dark), .pluginValue("false", details: [
            MenuRow(title: "remote", value: "true"), MenuRow(title: "override", value: "false"), MenuRow(title: "effective", value: "false (override)")]))
        // Choosing "Remote" clears the override.
        try h.setValue("remote", of: dark)
        XCTAssertEqual(try app.text("app.resolve", "dark-mode", "bool"), "true|remote")
        // The host checks choices; the plugin checks types.
        XCTAssertThrowsError(try h.setValue("maybe", of: dark))
        let items = try XCTUnwrap(h.entry(id: "flags.max-items"))
        XCTAssertEqual(items.kind, .text)
        XCTAssertThrowsError(try h.setValue("lots", of: items)) { error in
            XCTAssertEqual((error as? HostError)?.message, "flag 'max-items' is int: 'lots' is not a 64-bit integer")
        }
        // The master switch is a toggle the plugin keeps.
        let master = try XCTUnwrap(h.entry(id: "flags.overrides-enabled"))
        try h.setValue("false", of: master)
        XCTAssertEqual(try app.json("flags.list")["overridesEnabled"], .bool(false))
        // Pins and search work on flag entries like on any other.
        try h.setPinned(true, items)
        XCTAssertEqual(h.entries(inSection: "pinned").map(\.fullID), ["flags.max-items"])
        XCTAssertEqual(h.search("dark theme").entries.map(\.fullID), ["flags.dark-mode"])
        // A flag registered later gets its entry too.
        try app.run("flags.register", "late", "bool", "false")
        XCTAssertNotNil(h.entry(id: "flags.late"))
    }

    func testConcurrentReadersNeverSeeAHalfMadeChange() throws {
        let app = AppHost()
        // One C thread writes the overrides 1...400 of an int flag (each a
        // durable write) while four C threads read it; see app_client.c.
        let writes = 400
        let words = try app.text("app.stress", "\(writes)").split(separator: " ")
        let report = Dictionary(uniqueKeysWithValues: words.map { word -> (String, String) in
            let pair = word.split(separator: "=", maxSplits: 1)
            return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
        })
        let summary = words.joined(separator: " ")
        // Every write succeeded, and the writing thread read each one back at once.
        XCTAssertEqual(report["writes"], "\(writes)", summary)
        XCTAssertEqual(report["failed"], "0", summary)
        XCTAssertEqual(report["first-error"], "-", summary)
        XCTAssertEqual(report["unread"], "0", summary)
        XCTAssertEqual(report["final"], "\(writes)|override", summary)
        // No reader saw a value that no write made, or a value go back, and
        // each saw the last write on its first read after the writer was done.
        XCTAssertEqual(report["incoherent"], "0", summary)
        XCTAssertEqual(report["regressions"], "0", summary)
        XCTAssertEqual(report["saw-final"], "4", summary)
        // The readers ran during the writes, not only after them: each saw
        // values in between (more than the final one).
        let distinct = (report["distinct"] ?? "").split(separator: ",").compactMap { Int($0) }
        XCTAssertEqual(distinct.count, 4, summary)
        for (reader, count) in distinct.enumerated() {
            XCTAssertGreaterThan(count, 1, "reader \(reader) saw only \(count) value(s): \(summary)")
            XCTAssertLessThanOrEqual(count, writes, summary)
        }
        // The host and the store agree: the last write is the override, and it persisted.
        XCTAssertEqual(try app.json("flags.get", "stress")["override"], .int(Int64(writes)))
        app.restart(withApp: false)
        XCTAssertEqual(try app.json("flags.get", "stress")["override"], .int(Int64(writes)))
    }

    /// README "Read path": lookups take no lock. A change stuck in its
    /// durable write (another process holds the settings store's write lock)
    /// holds the flags plugin's callback gate and the flag store's lock the
    /// whole time; reads from other threads go on, quickly, and see the old
    /// value until the change lands.
    func testReadsGoOnWhileAWriteIsBlocked() throws {
        let app = AppHost()
        try app.run("flags.register", "lockfree", "int", "1")
        let table = try XCTUnwrap(app.host.service(id: PINCER_FLAGS_SERVICE_ID)).assumingMemoryBound(to: pincer_flags_service_t.self)
        let service = UnsafeSendable(table)
        let holder = try SQLiteWriteLock(path: app.stateDirectory + "/settings.sqlite3")

        // The blocked writer: the flags.set command, through the host like the shell runs it.
        let set = try XCTUnwrap(app.host.command(named: "flags.set"))
        let writer = TimedCall { try set.invoke([.string("lockfree"), .string("2")]) }
        // Another callback into the flags plugin queues behind it (the gate is held).
        usleep(100_000)
        let list = try XCTUnwrap(app.host.command(named: "flags.list"))
        let queued = TimedCall { try list.invoke([]) }

        // Four threads read for a second while both wait.
        let blockedFor: UInt64 = 1_000_000_000
        let results = ReaderResults()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let t = service.value.pointee
            var reads = 0, slow = 0, wrong = 0
            var slowest: UInt64 = 0
            let end = monotonicNanoseconds() + blockedFor
            var now = monotonicNanoseconds()
            while now < end {
                var value: Int64 = -1
                let reason = t.get_int(t.header.context, "lockfree", -1, &value)
                let after = monotonicNanoseconds()
                reads += 1
                if after - now > 1_000_000 { slow += 1 }
                slowest = max(slowest, after - now)
                if reason != PINCER_FLAG_REASON_REMOTE || value != 1 { wrong += 1 }
                now = after
            }
            results.add(reads: reads, slow: slow, wrong: wrong, slowest: slowest)
        }
        XCTAssertFalse(writer.isDone, "the write did not wait for the store's lock, so nothing was blocked")
        XCTAssertFalse(queued.isDone, "flags.list ran while flags.set held the plugin")
        let figures = "\(results.reads) reads, \(results.slow) over 1 ms, slowest \(results.slowest) ns"
        XCTAssertGreaterThan(results.reads, 4_000, figures)
        XCTAssertEqual(results.wrong, 0, "reads saw something other than 1 (remote) before the write landed")
        // A read that waited for the writer would take the whole second; allow for preemption, not for waiting.
        XCTAssertLessThan(results.slow * 100, results.reads, "more than 1% of the reads took over 1 ms: \(figures)")
        XCTAssertLessThan(results.slowest, blockedFor / 4, figures)

        holder.release()
        XCTAssertNil(writer.wait(seconds: 15), "flags.set after the lock was released")
        XCTAssertNil(queued.wait(seconds: 15), "flags.list after flags.set")
        XCTAssertGreaterThanOrEqual(writer.elapsed, blockedFor, "flags.set returned before the lock was released")
        var value: Int64 = -1
        XCTAssertEqual(table.pointee.get_int(table.pointee.header.context, "lockfree", -1, &value), PINCER_FLAG_REASON_OVERRIDE)
        XCTAssertEqual(value, 2)
    }

    func testUnreadableStoredStateIsSetAsideNotLost() throws {
        let state = Fixture.temporaryDirectory("pincer-flags-corrupt")
        let store = try SettingsStore(directory: state)
        try store.set(namespace: "dev.pincer.flags", key: "state", value: "{\"version\": 1, \"flags\": [oops]}")
        let app = AppHost(stateDirectory: state, withApp: false)
        XCTAssertEqual(try app.json("flags.list")["flags"], .array([]))
        XCTAssertEqual(try store.get(namespace: "dev.pincer.flags", key: "state.unreadable"), "{\"version\": 1, \"flags\": [oops]}")
        XCTAssertTrue(app.logs.all.contains { $0.level == .error && $0.message.contains("stored flags are unreadable (line 1, column") },
                      "\(app.logs.all.map(\.message))")
    }

    /// A document damaged while the app runs is met inside a change's
    /// transaction: it is set aside the same way, and the change (with the
    /// app's registrations) is written over a fresh document.
    func testUnreadableStateMetDuringAChangeIsSetAsideAndTheChangeLands() throws {
        let app = AppHost()
        let store = try SettingsStore(directory: app.stateDirectory)
        try store.set(namespace: "dev.pincer.flags", key: "state", value: "not json")
        try app.run("flags.register", "after-damage", "bool", "true")
        XCTAssertEqual(try store.get(namespace: "dev.pincer.flags", key: "state.unreadable"), "not json")
        app.restart(withApp: false)
        let keys = (try app.json("flags.list")["flags"]?.arrayValue ?? []).compactMap { $0["key"]?.stringValue }
        XCTAssertEqual(keys, ["dark-mode", "max-items", "ratio", "greeting", "after-damage"])
    }
}

/// A call run on a thread of its own, timed; `wait` gives its error, if any.
final class TimedCall: @unchecked Sendable {
    private let condition = NSCondition()
    private var finished = false
    private var failure: String?
    private let start = monotonicNanoseconds()
    private var end: UInt64 = 0

    init(_ body: @escaping @Sendable () throws -> Any) {
        Thread.detachNewThread { [self] in
            var message: String?
            do { _ = try body() } catch { message = "\(error)" }
            condition.lock()
            failure = message
            end = monotonicNanoseconds()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
    }

    var isDone: Bool { condition.lock(); defer { condition.unlock() }; return finished }

    /// Nanoseconds from start to end (once done).
    var elapsed: UInt64 { condition.lock(); defer { condition.unlock() }; return end - start }

    /// Waits for the call; nil when it succeeded, else why not.
    func wait(seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { return "still running after \(seconds) s" }
        }
        return failure
    }
}

/// Read counts gathered from several threads.
final class ReaderResults: @unchecked Sendable {
    private let lock = NSLock()
    private var totals = (reads: 0, slow: 0, wrong: 0, slowest: UInt64(0))
    func add(reads: Int, slow: Int, wrong: Int, slowest: UInt64) {
        lock.lock()
        totals = (totals.reads + reads, totals.slow + slow, totals.wrong + wrong, max(totals.slowest, slowest))
        lock.unlock()
    }
    var reads: Int { lock.lock(); defer { lock.unlock() }; return totals.reads }
    var slow: Int { lock.lock(); defer { lock.unlock() }; return totals.slow }
    var wrong: Int { lock.lock(); defer { lock.unlock() }; return totals.wrong }
    var slowest: UInt64 { lock.lock(); defer { lock.unlock() }; return totals.slowest }
}
