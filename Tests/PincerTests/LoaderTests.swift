import Foundation
import XCTest
@testable import PincerHost
import CPincerSDK

/// Real plugins, compiled from C in the test run and loaded with dlopen.
final class LoaderTests: XCTestCase {
    static let pluginDir: String = {
        let dir = Fixture.temporaryDirectory("pincer-plugins")
        let names = ["good", "no_entry", "bad_magic", "abi_major", "small_record", "missing_field", "duplicate_id",
                     "duplicate_command", "duplicate_entry", "init_fails", "bad_signature", "newer_minor", "declines"]
        for name in names { _ = try! Fixture.buildPlugin(name, into: dir) }
        try! FileManager.default.copyItem(atPath: "\(Fixture.packageRoot)/Tests/Fixtures/plugins/not_a_library.so.txt",
                                          toPath: "\(dir)/not_a_library.so")
        // A real ELF file that is not a shared library: an object file.
        _ = try! Fixture.run("/usr/bin/cc", ["-c", "-I", Fixture.sdkInclude, "\(Fixture.packageRoot)/Tests/Fixtures/plugins/good.c",
                                             "-o", "\(dir)/object_file.so"])
        return dir
    }()

    func makeHost(_ files: [String]) -> (PincerHost.Host, LogCollector) {
        var options = PincerHost.Host.Options(stateDirectory: Fixture.temporaryDirectory("pincer-state"))
        options.builtinDirectory = nil
        options.pluginPaths = files.map { "\(LoaderTests.pluginDir)/\($0).so" }
        let logs = LogCollector()
        options.logHandler = { logs.append($0) }
        let host = PincerHost.Host(options: options)
        host.loadAll()
        return (host, logs)
    }

    /// Every refusal case is diagnosed with the file and the reason, and the good plugins keep working.
    func testEveryRefusalIsDiagnosedAndOthersKeepWorking() throws {
        let order = ["good", "not_a_library", "object_file", "no_entry", "declines", "bad_magic", "abi_major", "small_record",
                     "missing_field", "duplicate_id", "duplicate_command", "duplicate_entry", "init_fails", "bad_signature",
                     "newer_minor"]
        let (host, logs) = makeHost(order)
        XCTAssertEqual(host.plugins.map(\.id), ["test.good", "test.newer"])
        let failures = Dictionary(uniqueKeysWithValues: host.failures.map {
            (URL(fileURLWithPath: $0.path).deletingPathExtension().lastPathComponent, $0.reason)
        })
        let expected: [String: [String]] = [
            "not_a_library": ["not a shared library"],
            "object_file": ["dlopen failed"],
            "no_entry": ["missing entry function pincer_plugin_entry"],
            "declines": ["returned NULL", "declined"],
            "bad_magic": ["bad magic", "field magic is 0xDEADBEEF", "expected 0x52434E50"],
            "abi_major": ["ABI major mismatch", "field abi_major is 2", "ABI 1.\(PINCER_ABI_MINOR)"],
            "small_record": ["record too small", "field struct_size is 8", "1.0 pincer_plugin_t is \(MemoryLayout<pincer_plugin_t>.offset(of: \.sync_entries)!) bytes"],
            "missing_field": ["missing required field", "name", "init"],
            "duplicate_id": ["duplicate plugin id 'test.good'", "good.so"],
            "duplicate_command": ["init failed (PINCER_DUPLICATE)", "command 'dupcmd.ping' is already registered"],
            "duplicate_entry": ["init failed (PINCER_DUPLICATE)", "entry id 'dupentry.x' is already registered"],
            "init_fails": ["init failed (PINCER_FAILED)", "database file /nonexistent/app.db is missing"],
            "bad_signature": ["init failed (PINCER_INVALID_ARGUMENT)", "does not parse", "column 22"],
        ]
        XCTAssertEqual(Set(failures.keys), Set(expected.keys))
        for (file, fragments) in expected {
            for fragment in fragments {
                XCTAssertTrue(failures[file]?.contains(fragment) == true, "\(file): '\(fragment)' not in: \(failures[file] ?? "-")")
            }
        }
        // Every refusal was also logged with its path.
        for f in host.failures {
            XCTAssertTrue(logs.all.contains { $0.level == .error && $0.message.contains(f.path) }, f.path)
        }
        // What a failed init registered is gone.
        XCTAssertNil(host.command(named: "dupcmd.ping"))
        XCTAssertNil(host.entry(id: "dupentry.x"))
        // The good plugins work.
        XCTAssertEqual(try host.command(named: "good.ping")!.invoke([]), .string("pong"))
        XCTAssertEqual(try host.command(named: "newer.hello")!.invoke([]), .string("hi from the future"))
        XCTAssertEqual(host.state(of: host.entry(id: "good.answer")!), .value("42"))
    }

    /// Every libffi type round-trips through a real call, including the extremes.
    func testEveryTypeRoundTripsThroughLibffi() throws {
        let (host, _) = makeHost(["good"])
        func call(_ name: String, _ args: [Value]) throws -> Value { try host.command(named: "good.\(name)")!.invoke(args) }
        for v in [true, false] { XCTAssertEqual(try call("b", [.bool(v)]), .bool(v)) }
        for v: Int32 in [.min, -1, 0, 1, .max] { XCTAssertEqual(try call("i32", [.i32(v)]), .i32(v)) }
        for v: Int64 in [.min, -1, 0, 1 << 53 + 1, .max] { XCTAssertEqual(try call("i64", [.i64(v)]), .i64(v)) }
        for v: UInt64 in [0, 1, 1 << 63, .max] { XCTAssertEqual(try call("u64", [.u64(v)]), .u64(v)) }
        for v in [0.0, -0.0, 0.1, -1e308, .leastNonzeroMagnitude, .greatestFiniteMagnitude] {
            XCTAssertEqual(try call("f64", [.f64(v)]), .f64(v))
        }
        for v in ["", "plain", "ünïcødé ✓ 🦀", String(repeating: "x", count: 100_000)] {
            XCTAssertEqual(try call("s", [.string(v)]), .string(v))
        }
        XCTAssertEqual(try call("mix", [.bool(true), .i32(-5), .i64(.min), .u64(.max), .f64(0.1), .string("str")]),
                       .string("1|-5|-9223372036854775808|18446744073709551615|0.10000000000000001|str"))
        // The values call style, with a default filled in by the signature.
        XCTAssertEqual(try call("vsum", [.i64(5), .i64(10)]), .i64(15))
        // A wrong argument type never reaches the plugin.
        XCTAssertThrowsError(try call("i32", [.i64(1)])) { error in
            XCTAssertTrue("\(error)".contains("expects i32, got i64"))
        }
        // A prepared call can be made repeatedly.
        let prepared = try PreparedCall(command: host.command(named: "good.mix")!,
                                        arguments: [.bool(false), .i32(1), .i64(2), .u64(3), .f64(4.5), .string("z")])
        for _ in 0..<3 { XCTAssertEqual(try prepared.invoke(), .string("0|1|2|3|4.5|z")) }
    }

    /// The plain-C DeveloperOptions plugin builds with nothing but SDK/ and `cc`, loads and works.
    func testDeveloperOptionsBuildsWithPlainCC() throws {
        let dir = Fixture.temporaryDirectory("pincer-devopts")
        let out = "\(dir)/libdevopts.so"
        let r = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fvisibility=hidden",
                                                "-shared", "-fPIC", "-I", Fixture.sdkInclude,
                                                "\(Fixture.packageRoot)/Plugins/DeveloperOptions/devopts.c", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let symbols = try Fixture.run("/usr/bin/nm", ["-D", "--defined-only", out]).stdout
            .split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        XCTAssertEqual(symbols, ["pincer_plugin_entry"], "only the entry function may be exported")

        var options = PincerHost.Host.Options(stateDirectory: Fixture.temporaryDirectory("pincer-state"))
        options.builtinDirectory = nil
        options.pluginPaths = [out]
        let host = PincerHost.Host(options: options)
        host.loadAll()
        XCTAssertEqual(host.failures, [])
        XCTAssertEqual(try host.command(named: "devopts.add")!.invoke([.i64(2), .f64(0.5)]), .f64(2.5))
        XCTAssertThrowsError(try host.command(named: "devopts.scale")!.invoke([.i32(.max), .i32(2)])) { error in
            XCTAssertEqual((error as? CommandFailure)?.status, 2)
            XCTAssertTrue("\(error)".contains("overflows"))
        }
        // Entries of every kind, values computed on demand and persisted.
        let kinds = Set(host.entries.filter { $0.pluginID == "com.example.devoptions" }.map(\.kind))
        XCTAssertEqual(kinds, Set(EntryKind.allCases))
        let greeting = host.entry(id: "devopts.greeting")!
        try host.setValue("Howdy", of: greeting)
        XCTAssertEqual(try host.command(named: "devopts.greet")!.invoke([.string("Ada")]), .string("Howdy, Ada!"))
        XCTAssertThrowsError(try host.setValue("maybe", of: host.entry(id: "devopts.verbose-logging")!))
        XCTAssertThrowsError(try host.setValue("prod", of: host.entry(id: "devopts.api-mode")!))
        _ = try host.command(named: "devopts.count")!.invoke([.string("taps"), .i64(3)])
        XCTAssertEqual(host.state(of: host.entry(id: "devopts.counters")!), .rows([MenuRow(title: "taps", value: "3")]))
        // The plugin's service is visible to other code in the process; unknown ids are NULL.
        XCTAssertNotNil(host.service(id: "com.example.devoptions/1"))
        XCTAssertNil(host.service(id: "com.example.nothing/1"))
    }

    /// README "Newer-minor plugins on an older host and older-minor plugins
    /// on a newer host both load": a plugin compiled against the real ABI
    /// 1.0 headers (Tests/Fixtures/sdk-1.0, from git history) loads on this
    /// host and every 1.0 part of the contract works, in process and
    /// through the `pincer` executable.
    func testAPluginBuiltAgainstTheABI10HeadersLoadsAndWorks() throws {
        let headers = "\(Fixture.packageRoot)/Tests/Fixtures/sdk-1.0/include"
        let version = try String(contentsOfFile: "\(headers)/pincer/version.h", encoding: .utf8)
        XCTAssertTrue(version.contains("#define PINCER_ABI_MINOR 0u"), "the fixture headers are not the 1.0 ones")
        XCTAssertGreaterThan(PINCER_ABI_MINOR, 0, "this host must be newer than the plugin")
        let library = Fixture.temporaryDirectory("pincer-abi10") + "/libold.so"
        // Only the 1.0 headers on the include path (the fixture refuses any others).
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fvisibility=hidden", "-shared", "-fPIC",
                                                 "-I", headers, "\(Fixture.packageRoot)/Tests/Fixtures/plugins/abi10.c", "-o", library])
        XCTAssertEqual(cc.status, 0, cc.stderr)

        let state = Fixture.temporaryDirectory("pincer-abi10-state")
        func start() -> (PincerHost.Host, LogCollector) {
            var options = PincerHost.Host.Options(stateDirectory: state)
            options.builtinDirectory = nil
            options.pluginPaths = [library]
            let logs = LogCollector()
            options.logHandler = { logs.append($0) }
            let host = PincerHost.Host(options: options)
            host.loadAll()
            return (host, logs)
        }
        let (host, logs) = start()
        XCTAssertEqual(host.failures, [])
        let info = try XCTUnwrap(host.plugins.first { $0.id == "test.abi10" })
        XCTAssertEqual(info.abiMajor, 1)
        XCTAssertEqual(info.abiMinor, 0)
        XCTAssertTrue(logs.all.contains { $0.source == "test.abi10" && $0.message == "1.0 plugin ready" }, "\(logs.all.map(\.message))")
        func run(_ name: String, _ args: [Value] = []) throws -> Value { try XCTUnwrap(host.command(named: "old.\(name)")).invoke(args) }

        // The records it was built with are the smaller 1.0 ones; the host hands it its newer, larger tables.
        let sizes = try run("report")
        let expected = "built=1.0 host=1.\(PINCER_ABI_MINOR) host_table=\(MemoryLayout<pincer_host_t>.size)/136 call=\(MemoryLayout<pincer_call_t>.size)/40 "
            + "entry=96 command=56 plugin=80 heard=- changes=-"
        XCTAssertEqual(sizes, .string(expected))
        XCTAssertLessThan(96, MemoryLayout<pincer_entry_t>.size, "pincer_entry_t grew after 1.0")

        // Typed commands of every type, defaults from the signature, the values style, failures.
        XCTAssertEqual(try run("add", [.i64(40), .f64(2)]), .f64(42))
        XCTAssertEqual(try run("mask", [.u64(0xF0F0), .i32(8), .bool(true)]), .u64(0x0F))
        XCTAssertEqual(try run("echo", [.string("ünïcødé")]), .string("ünïcødé"))
        XCTAssertEqual(try run("sum", [.i64(5), .i64(10)]), .i64(15))
        XCTAssertThrowsError(try run("refuse")) { error in
            XCTAssertEqual((error as? CommandFailure)?.message, "refused by a 1.0 plugin")
            XCTAssertEqual((error as? CommandFailure)?.status, PINCER_UNSUPPORTED)
        }
        XCTAssertThrowsError(try run("mask", [.u64(1), .i32(-1), .bool(false)])) { error in
            XCTAssertEqual((error as? CommandFailure)?.message, "width must not be negative")
        }
        XCTAssertTrue(try XCTUnwrap(host.command(named: "old.remember")).changesState)

        // Entries of every 1.0 kind; persisted values and change notices.
        XCTAssertEqual(host.entries(inSection: "old-section").map(\.fullID), ["old.version", "old.enabled", "old.mode", "old.token", "old.facts", "old.say"])
        XCTAssertEqual(host.state(of: try XCTUnwrap(host.entry(id: "old.version"))), .value("1.0 plugin"))
        XCTAssertEqual(host.state(of: try XCTUnwrap(host.entry(id: "old.facts"))),
                       .rows([MenuRow(title: "built against", value: "ABI 1.0"), MenuRow(title: "no value", value: nil)]))
        XCTAssertEqual(try host.storedValue(of: try XCTUnwrap(host.entry(id: "old.mode"))), "safe")
        try host.setValue("fast", of: try XCTUnwrap(host.entry(id: "old.mode")))
        try host.setValue("false", of: try XCTUnwrap(host.entry(id: "old.enabled")))
        XCTAssertThrowsError(try host.setValue("turbo", of: try XCTUnwrap(host.entry(id: "old.mode"))))
        XCTAssertEqual(try host.activate(try XCTUnwrap(host.entry(id: "old.say"))), .string("old"))

        // Private settings, events and services.
        XCTAssertEqual(try run("recall", [.string("k")]), .string("(missing)"))
        _ = try run("remember", [.string("k"), .string("kept")])
        XCTAssertEqual(try run("recall", [.string("k")]), .string("kept"))
        _ = try run("ping", [.string("{\"n\":1}")])
        XCTAssertNotNil(host.service(id: "test.abi10/1"))
        XCTAssertEqual(try run("report"), .string(expected.replacingOccurrences(of: "heard=- changes=-",
                                                                                 with: "heard=old.ping:{\"n\":1} changes=mode=fast;enabled=false")))
        host.shutdown()

        // After a restart what it stored is there, and the shell shows the plugin as ABI 1.0.
        let (again, _) = start()
        XCTAssertEqual(try again.command(named: "old.recall")?.invoke([.string("k")]), .string("kept"))
        XCTAssertEqual(try again.storedValue(of: try XCTUnwrap(again.entry(id: "old.mode"))), "fast")
        again.shutdown()
        let listed = try Fixture.pincer(["plugins", "--json"], stateDir: state, pluginPath: library, builtins: false)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let plugins = try JSON.parse(listed.stdout)["plugins"]?.arrayValue ?? []
        XCTAssertEqual(plugins.map { $0["abi"] }, [.string("1.0")])
        let added = try Fixture.pincer(["old.add", "40", "--b", "2.5"], stateDir: state, pluginPath: library, builtins: false)
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.stdout, "42.5\n")
        let mode = try Fixture.pincer(["get", "old.mode"], stateDir: state, pluginPath: library, builtins: false)
        XCTAssertEqual(mode.stdout, "fast\n", mode.stderr)
    }

    /// Events reach subscribers; services are published under versioned ids.
    func testEventsFromPluginsReachSubscribers() throws {
        let dir = Fixture.temporaryDirectory("pincer-devopts")
        var options = PincerHost.Host.Options(stateDirectory: dir)
        options.builtinDirectory = Fixture.buildDirectory
        let host = PincerHost.Host(options: options)
        host.loadAll()
        let seen = LogCollector()
        _ = host.events.subscribe(topic: "devopts.reset") { topic, payload in
            seen.append(LogRecord(level: .info, source: topic, message: payload ?? ""))
        }
        _ = try host.activate(host.entry(id: "devopts.reset")!)
        XCTAssertEqual(seen.all.map(\.source), ["devopts.reset"])
        XCTAssertEqual(seen.all.map(\.message), ["{}"])
    }
}
