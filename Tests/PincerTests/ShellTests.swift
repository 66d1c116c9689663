import Foundation
import XCTest
@testable import PincerShell
@testable import PincerHost

/// The real `pincer` executable with the built-in plugins: exit codes,
/// --json shapes, persistence across restarts, concurrent writers, the REPL.
final class ShellTests: XCTestCase {
    var state = ""

    override func setUp() { state = Fixture.temporaryDirectory("pincer-shell") }

    func pincer(_ args: String..., input: String? = nil) throws -> Fixture.ProcessResult {
        try Fixture.pincer(args, stateDir: state, input: input)
    }

    /// Commands that return JSON documents print tables for people and the
    /// document itself under --json.
    func testJSONResultsRenderAsTablesOrPassThrough() throws {
        XCTAssertEqual(try pincer("run", "flags.register", "checkout", "bool", "false", "New checkout").status, 0)
        XCTAssertEqual(try pincer("run", "flags.register", "limit", "int", "3").status, 0)
        XCTAssertEqual(try pincer("run", "flags.set", "checkout", "true").status, 0)
        let table = try pincer("run", "flags.list")
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertEqual(table.stdout, """
            overridesEnabled  true
            flags:
              KEY       TYPE  REMOTE  OVERRIDE  VALUE  REASON    SUMMARY
              checkout  bool  false   true      true   override  New checkout
              limit     int   3       -         3      remote

            """)
        let json = Fixture.json(try pincer("run", "flags.get", "checkout", "--json").stdout)
        XCTAssertEqual(json["type"] as? String, "json")
        XCTAssertEqual((json["result"] as? [String: Any])?["reason"] as? String, "override")
        // export prints the document itself, ready for a file.
        let exported = try pincer("run", "flags.export")
        XCTAssertEqual(Fixture.json(exported.stdout)["overrides"] as? [String: Bool], ["checkout": true])
        // The menu shows the plugin-kept value with its details. The stored
        // flags' entries come from sync_entries (init only registers): the
        // host asks for them before listing the menu or when an id is unknown.
        let menu = try pincer("menu", "flags")
        XCTAssertTrue(menu.stdout.contains("[remote (true) false]  (remote: false, override: true, effective: true (override))"), menu.stdout)
        let set = try pincer("set", "flags.checkout", "remote")
        XCTAssertEqual(set.stdout, "flags.checkout = [(remote) true false]  (remote: false, override: -, effective: false (remote))\n")
        let bad = try pincer("set", "flags.limit", "many")
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "pincer: flag 'limit' is int: 'many' is not a 64-bit integer\n")
    }

    static let restPlugin: String = {
        let dir = Fixture.temporaryDirectory("pincer-rest")
        return try! Fixture.buildPlugin("rest_args", into: dir)
    }()

    /// `pincer` with only the rest_args fixture loaded.
    func rest(_ args: String..., input: String? = nil) throws -> Fixture.ProcessResult {
        try Fixture.pincer(args, stateDir: state, pluginPath: ShellTests.restPlugin, builtins: false, input: input)
    }

    /// Rest parameters (`name: string...`, ABI 1.2) from the shell, in both call styles.
    func testRestParametersFromTheShell() throws {
        // Typed style: (items, items_count); no items is a NULL pointer and 0.
        XCTAssertEqual(try rest("rest.join", ",").stdout, "0 NULL:\n")
        // Positional words fill the required parameters, then go to the rest
        // parameter; the optional prefix is given by name only.
        XCTAssertEqual(try rest("rest.join", ",", "a", "b", "c").stdout, "3:a,b,c\n")
        XCTAssertEqual(try rest("rest.join", ",", "a", "b", "--prefix", "pre").stdout, "2:prea,b\n")
        XCTAssertEqual(try rest("run", "rest.join", "+", "--prefix", ">", "a", "b", "--items", "c", "--items=-d", "e").stdout,
                       "5:>a+b+c+-d+e\n")
        let twice = try rest("rest.join", "+", "a", "--prefix", ">", "--prefix", "<")
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.stderr.contains("parameter --prefix is given twice"), twice.stderr)
        // After `--`, words starting with '-' are items, pincer's own --json and --help included.
        XCTAssertEqual(try rest("rest.join", ",", "--", "-5", "--x", "--json", "--help", "--csv").stdout,
                       "5:-5,--x,--json,--help,--csv\n")
        XCTAssertEqual(try rest("rest.join", ",", "--prefix", "p", "-5").stdout, "1:p-5\n")
        XCTAssertEqual(try rest("rest.join", ",", "a b", "").stdout, "2:a b,\n")
        let many = (1...500).map(String.init)
        let joined = try Fixture.pincer(["rest.join", "-", "--prefix", "x"] + many, stateDir: state, pluginPath: ShellTests.restPlugin, builtins: false)
        XCTAssertEqual(joined.stdout, "500:x" + many.joined(separator: "-") + "\n")
        // A result pointer comes after the rest arguments.
        XCTAssertEqual(try rest("rest.longer", "2", "a", "bb", "ccc").stdout, "2\n")
        XCTAssertEqual(try rest("rest.longer", "2").stdout, "0\n")
        // Values style: declared parameters (defaults filled in), then one string per item; count covers both.
        XCTAssertEqual(try rest("rest.raw").stdout, "1|7\n")
        XCTAssertEqual(try rest("rest.raw", "--n", "3", "x", "--rest", "y", "--rest=-z").stdout, "4|3|x|y|-z\n")
        XCTAssertEqual(try rest("rest.raw", "--", "-3", "-x").stdout, "3|7|-3|-x\n")
        let json = Fixture.json(try rest("rest.join", ",", "a", "b", "--json").stdout)
        XCTAssertEqual(json["result"] as? String, "2:a,b")

        // Usage errors still name the parameter; nothing is called.
        let missing = try rest("rest.join")
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("missing argument 'sep' (string)"), missing.stderr)
        XCTAssertTrue(missing.stderr.contains("usage: pincer run rest.join <sep:string> [prefix:string=\"\"] [items:string...]"), missing.stderr)
        let typed = try rest("rest.longer", "x", "a")
        XCTAssertEqual(typed.status, 2)
        XCTAssertTrue(typed.stderr.contains("parameter --min expects i64"), typed.stderr)
        let noValue = try rest("rest.join", ",", "--items")
        XCTAssertEqual(noValue.status, 2)
        XCTAssertTrue(noValue.stderr.contains("--items needs a value"), noValue.stderr)

        // Help, listings and completion know the rest parameter.
        let help = try rest("help", "rest.pairs")
        XCTAssertTrue(help.stdout.contains("usage: pincer run rest.pairs [title:string=\"pairs\"] [items:string...]"), help.stdout)
        XCTAssertTrue(help.stdout.contains("  --items  string, zero or more (rest)\n"), help.stdout)
        let params = Fixture.json(try rest("help", "rest.join", "--json").stdout)["parameters"] as! [[String: Any]]
        XCTAssertEqual(params.map { $0["rest"] as? Bool }, [false, false, true])
        XCTAssertEqual(params.map { $0["optional"] as? Bool }, [false, true, true])
        XCTAssertEqual(try rest("complete", "rest.pairs a b --").stdout, "--items\n--title\n")
        XCTAssertEqual(try rest("complete", "rest.join , --items ").stdout, "")
        XCTAssertEqual(try rest("complete", "rest.join , x y z ").status, 0)
    }

    /// A table-shaped JSON result (`columns` + `rows`) as text and as CSV.
    func testTableResultsAsTextAndCSV() throws {
        let text = try rest("rest.pairs", "--title", "T", "a=1", "b=x,y", "c", "d=line1\nline2")
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertEqual(text.stdout, """
            n  part  part
            1  a     1
            2  b     x,y
            3  c     NULL
            4  d     line1\\nline2
            title  T
            count  4

            """)
        let csv = try rest("rest.pairs", "--title", "T", "a=1", "b=x,\"y\"", "c", " e = f ", "d=line1\nline2", "--csv")
        XCTAssertEqual(csv.status, 0, csv.stderr)
        XCTAssertEqual(csv.stdout, "n,part,part\n1,a,1\n2,b,\"x,\"\"y\"\"\"\n3,c,\n4,\" e \",\" f \"\n5,d,\"line1\nline2\"\n")
        // --csv works before the command too, and with no rows gives the header alone.
        XCTAssertEqual(try rest("--csv", "rest.pairs").stdout, "n,part,part\n")
        XCTAssertEqual(try rest("rest.pairs").stdout, "n  part  part\n(no rows)\ntitle  pairs\ncount  0\n")
        // Not a table: a usage error, before the command runs when its result cannot be one.
        let notTable = try rest("rest.raw", "3", "x", "--csv")
        XCTAssertEqual(notTable.status, 2)
        XCTAssertEqual(notTable.stdout, "")
        XCTAssertEqual(notTable.stderr, "pincer: rest.raw: --csv needs a table result\n")
        let both = try rest("rest.pairs", "--csv", "--json")
        XCTAssertEqual(both.status, 2)
        XCTAssertEqual(Fixture.json(both.stderr)["error"] as? String, "--csv and --json cannot be used together")
        XCTAssertEqual(try rest("plugins", "--csv").status, 2)
        XCTAssertTrue(try rest("--help").stdout.contains("  --csv "))
        // The REPL takes --csv per line.
        let repl = try rest("shell", input: "rest.pairs --title T a=1 --csv\nrest.pairs --title T b=2\n")
        XCTAssertEqual(repl.status, 0, repl.stderr)
        XCTAssertEqual(repl.stdout, "n,part,part\n1,a,1\nn  part  part\n1  b     2\ntitle  T\ncount  1\n")
        // A JSON document holding one table (flags.list: {"overridesEnabled", "flags": [...]}) prints that table.
        let flags = try pincer("run", "flags.list", "--csv")
        XCTAssertEqual(flags.status, 0, flags.stderr)
        XCTAssertEqual(flags.stdout, "")
    }

    /// Command.invoke: a rest parameter's items are extra `.string` values after the declared ones.
    func testRestArgumentsThroughTheHost() throws {
        var options = PincerHost.Host.Options(stateDirectory: state)
        options.builtinDirectory = nil
        options.pluginPaths = [ShellTests.restPlugin]
        let host = PincerHost.Host(options: options)
        host.loadAll()
        defer { host.shutdown() }
        XCTAssertEqual(host.failures.map(\.reason), [])
        let join = try XCTUnwrap(host.command(named: "rest.join"))
        XCTAssertEqual(try join.invoke([.string(","), .string("")]), .string("0 NULL:"))
        XCTAssertEqual(try join.invoke([.string(","), .string("<"), .string("a"), .string("b")]), .string("2:<a,b"))
        XCTAssertThrowsError(try join.invoke([.string(",")])) { error in
            XCTAssertTrue("\(error)".contains("takes at least 2 arguments"), "\(error)")
        }
        XCTAssertThrowsError(try join.invoke([.string(","), .string(""), .string("a"), .i64(1)])) { error in
            XCTAssertTrue("\(error)".contains("rest parameter 'items' (item 2) expects string, got i64"), "\(error)")
        }
        // A prepared call can be made again.
        let prepared = try PreparedCall(command: join, arguments: [.string("/"), .string(""), .string("x"), .string("y")])
        XCTAssertEqual(try prepared.invoke(), .string("2:x/y"))
        XCTAssertEqual(try prepared.invoke(), .string("2:x/y"))
        XCTAssertEqual(try host.command(named: "rest.longer")!.invoke([.i64(1), .string("a"), .string("")]), .i64(1))
        XCTAssertEqual(try host.command(named: "rest.raw")!.invoke([.i32(1), .string("a"), .string("b")]), .string("3|1|a|b"))
        XCTAssertEqual(try host.command(named: "rest.raw")!.invoke([.i32(1)]), .string("1|1"))
    }

    func testBoolParametersWorkAsFlags() throws {
        // `--bold` alone means true; `--bold false` still works; a bool
        // parameter named json takes `--json` as its own.
        let bold = try pincer("run", "a11y.contrast", "#777777", "white", "--size", "14", "--bold", "--json")
        XCTAssertEqual(bold.status, 0, bold.stderr)
        let result = Fixture.json(bold.stdout)["result"] as? [String: Any]
        XCTAssertEqual((result?["text"] as? [String: Any])?["large"] as? Bool, true)
        let plain = try pincer("run", "a11y.contrast", "#777777", "white", "--size", "14", "--bold", "false", "--json")
        XCTAssertEqual(((Fixture.json(plain.stdout)["result"] as? [String: Any])?["text"] as? [String: Any])?["large"] as? Bool, false)
    }

    func testPluginsAndCommandsAsJSON() throws {
        let plugins = try pincer("plugins", "--json")
        XCTAssertEqual(plugins.status, 0, plugins.stderr)
        let p = Fixture.json(plugins.stdout)
        let ids = (p["plugins"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        // Loaded in file-name order (libpincer-plugin-a11y.so first).
        XCTAssertEqual(ids, ["dev.pincer.a11y", "dev.pincer.database", "com.example.devoptions", "dev.pincer.flags", "dev.pincer.l10n", "dev.pincer.location", "dev.pincer.net", "dev.pincer.servers", "dev.pincer.sysinfo"])
        XCTAssertEqual((p["failed"] as? [Any])?.count, 0)
        let first = (p["plugins"] as! [[String: Any]]).first { $0["id"] as? String == "com.example.devoptions" }!
        XCTAssertEqual(first["abi"] as? String, "1.7")
        XCTAssertTrue((first["path"] as? String)?.hasSuffix("libpincer-plugin-devopts.so") == true)

        let commands = Fixture.json(try pincer("commands", "--json").stdout)["commands"] as! [[String: Any]]
        let add = commands.first { $0["name"] as? String == "devopts.add" }!
        XCTAssertEqual(add["signature"] as? String, "add(a: i64, b: f64 = 1.5) -> f64")
        XCTAssertEqual(add["result"] as? String, "f64")
        let params = add["parameters"] as! [[String: Any]]
        XCTAssertEqual(params.map { $0["name"] as! String }, ["a", "b"])
        XCTAssertEqual(params[1]["default"] as? Double, 1.5)
        XCTAssertEqual(params[1]["optional"] as? Bool, true)
        XCTAssertTrue(commands.contains { $0["name"] as? String == "sysinfo.env" })
    }

    /// Every parameter type from the shell, positional and --name, text and JSON.
    func testRunEveryTypeFromTheShell() throws {
        XCTAssertEqual(try pincer("run", "devopts.add", "2", "--b", "0.25").stdout, "2.25\n")
        XCTAssertEqual(try pincer("devopts.add", "-3").stdout, "-1.5\n")
        XCTAssertEqual(try pincer("run", "devopts.negate", "--value=true").stdout, "false\n")
        XCTAssertEqual(try pincer("run", "devopts.scale", "-21", "2").stdout, "-42\n")
        XCTAssertEqual(try pincer("run", "devopts.mask", "0xF0F0", "--mask", "255").stdout, "240\n")
        XCTAssertEqual(try pincer("run", "devopts.echo", "--", "--not-a-flag").stdout, "--not-a-flag\n")
        XCTAssertEqual(try pincer("run", "devopts.greet").stdout, "Hello, world!\n")
        let json = Fixture.json(try pincer("run", "devopts.mask", "18446744073709551615", "--mask", "0xffffffffffffffff", "--json").stdout)
        XCTAssertEqual(json["ok"] as? Bool, true)
        XCTAssertEqual(json["type"] as? String, "u64")
        XCTAssertEqual((json["result"] as? NSNumber)?.uint64Value, UInt64.max)
        let void = Fixture.json(try pincer("--json", "run", "devopts.set-user", "ada").stdout)
        XCTAssertTrue(void["result"] is NSNull)
        XCTAssertEqual(try pincer("get", "devopts.user-id").stdout, "ada\n")
    }

    func testExitCodesAndUsageErrors() throws {
        // 2: a wrong argument names the parameter and its type, and nothing is called.
        let bad = try pincer("run", "devopts.set-user")
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("missing argument 'id' (string)"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("usage: pincer run devopts.set-user <id:string>"), bad.stderr)
        let typed = try pincer("run", "devopts.scale", "3.5")
        XCTAssertEqual(typed.status, 2)
        XCTAssertTrue(typed.stderr.contains("parameter --value expects i32"), typed.stderr)
        XCTAssertEqual(try pincer("run", "devopts.add", "1", "2", "3").status, 2)
        XCTAssertEqual(try pincer("run", "devopts.add", "--c", "1").status, 2)
        XCTAssertEqual(try pincer("--bogus", "plugins").status, 2)
        XCTAssertEqual(try pincer("menu", "extra", "args").status, 2)
        XCTAssertEqual(try pincer().status, 2)
        // 1: the plugin reported failure with its message.
        let failed = try pincer("run", "devopts.fail", "disk on fire")
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.contains("disk on fire"))
        let failedJSON = try pincer("run", "devopts.fail", "--json")
        XCTAssertEqual(failedJSON.status, 1)
        XCTAssertEqual(Fixture.json(failedJSON.stdout)["error"] as? String, "requested failure")
        // 3: unknown things, with a suggestion.
        let missing = try pincer("run", "devopts.ad", "1")
        XCTAssertEqual(missing.status, 3)
        XCTAssertTrue(missing.stderr.contains("did you mean 'devopts.add'"), missing.stderr)
        XCTAssertEqual(try pincer("get", "devopts.nothing").status, 3)
        XCTAssertEqual(try pincer("help", "nothing.here").status, 3)
        XCTAssertEqual(try pincer("search", "zzzzzz").status, 3)
        // 0 with --help everywhere.
        XCTAssertEqual(try pincer("--help").status, 0)
        XCTAssertTrue(try pincer("run", "devopts.add", "--help").stdout.contains("usage: pincer run devopts.add <a:i64> [b:f64=1.5]"))
        XCTAssertTrue(try pincer("set", "--help").stdout.contains("usage: pincer set <entry> <value>"))
    }

    /// 4: a refused plugin shows in `plugins`, and --strict stops everything.
    func testPluginLoadFailureExitCode() throws {
        let dir = Fixture.temporaryDirectory("pincer-bad")
        _ = try Fixture.buildPlugin("init_fails", into: dir)
        let r = try Fixture.pincer(["plugins", "--json"], stateDir: state, pluginPath: dir)
        XCTAssertEqual(r.status, 4)
        let failed = Fixture.json(r.stdout)["failed"] as! [[String: Any]]
        XCTAssertEqual(failed.count, 1)
        XCTAssertTrue((failed[0]["reason"] as! String).contains("database file /nonexistent/app.db is missing"))
        // The built-in plugins keep working.
        XCTAssertEqual(try Fixture.pincer(["run", "devopts.add", "1"], stateDir: state, pluginPath: dir).stdout, "2.5\n")
        XCTAssertEqual(try Fixture.pincer(["--strict", "run", "devopts.add", "1"], stateDir: state, pluginPath: dir).status, 4)
    }

    /// Settings, entry values and pins survive a restart of the host (a new process).
    func testMenuValuesAndPinsPersistAcrossRestarts() throws {
        XCTAssertEqual(try pincer("set", "devopts.verbose-logging", "on").stdout, "devopts.verbose-logging = true\n")
        XCTAssertEqual(try pincer("set", "devopts.api-mode", "staging").status, 0)
        XCTAssertEqual(try pincer("set", "devopts.greeting", "Ahoy").status, 0)
        let wrong = try pincer("set", "devopts.api-mode", "prod")
        XCTAssertEqual(wrong.status, 2)
        XCTAssertTrue(wrong.stderr.contains("expected one of live, staging, mock"), wrong.stderr)
        XCTAssertEqual(try pincer("set", "devopts.user-id", "x").status, 2)
        XCTAssertEqual(try pincer("pin", "devopts.api-mode").status, 0)
        XCTAssertEqual(try pincer("pin", "sysinfo.pid").status, 0)

        let menu = Fixture.json(try pincer("menu", "--json").stdout)["sections"] as! [[String: Any]]
        XCTAssertEqual(menu.first?["id"] as? String, "pinned")
        let pinned = (menu[0]["entries"] as! [[String: Any]]).map { $0["id"] as! String }
        XCTAssertEqual(pinned, ["devopts.api-mode", "sysinfo.pid"])
        let devopts = menu.first { $0["id"] as? String == "devopts" }!["entries"] as! [[String: Any]]
        func value(_ id: String) -> Any? { devopts.first { $0["id"] as? String == id }?["value"] }
        XCTAssertEqual(value("devopts.verbose-logging") as? String, "true")
        XCTAssertEqual(value("devopts.api-mode") as? String, "staging")
        XCTAssertEqual(devopts.first { $0["id"] as? String == "devopts.api-mode" }?["pinned"] as? Bool, true)
        XCTAssertEqual(try pincer("run", "devopts.greet", "Bo").stdout, "Ahoy, Bo!\n")

        XCTAssertEqual(try pincer("unpin", "devopts.api-mode").status, 0)
        let after = Fixture.json(try pincer("menu", "pinned", "--json").stdout)["sections"] as! [[String: Any]]
        XCTAssertEqual((after[0]["entries"] as! [[String: Any]]).map { $0["id"] as! String }, ["sysinfo.pid"])
        // The action resets the plugin's values.
        XCTAssertEqual(try pincer("activate", "devopts.reset").status, 0)
        XCTAssertEqual(try pincer("get", "devopts.api-mode").stdout, "live\n")
    }

    /// Two shells writing the store at once lose nothing.
    func testTwoProcessesWritingAtOnce() throws {
        let writers = 2, rounds = 40
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        let environment = env
        let script: @Sendable (Int) -> String = { (w: Int) in (0..<rounds).map { "run devopts.set-user w\(w)-\($0)\nset devopts.greeting g\(w)-\($0)\npin sysinfo.pid\n" }.joined() }
        let group = DispatchGroup()
        let results = LogCollector()
        for w in 0..<writers {
            group.enter()
            Thread {
                let r = try? Fixture.run(Fixture.pincer, ["shell"], environment: environment, input: script(w))
                results.append(.init(level: .info, source: "\(r?.status ?? -1)", message: r?.stderr ?? "did not run"))
                group.leave()
            }.start()
        }
        group.wait()
        for r in results.all { XCTAssertEqual(r.source, "0", r.message) }
        // Each process's last write is one of the final values, and the store is intact.
        let user = try pincer("get", "devopts.user-id").stdout
        XCTAssertTrue(user == "w0-\(rounds - 1)\n" || user == "w1-\(rounds - 1)\n", user)
        let check = try Fixture.run("/usr/bin/env", ["python3", "-c", """
            import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('pragma integrity_check').fetchone()[0])
            """, "\(state)/settings.sqlite3"])
        XCTAssertEqual(check.stdout, "ok\n", check.stderr)
    }

    /// An unreadable store is set aside with a warning, never overwritten.
    func testUnreadableStoreIsSetAside() throws {
        let path = "\(state)/settings.sqlite3"
        let garbage = String(repeating: "not a database ", count: 300)
        try garbage.write(toFile: path, atomically: false, encoding: .utf8)
        let r = try pincer("set", "devopts.greeting", "Hi")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("could not be read"), r.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: state)
        let aside = files.first { $0.hasPrefix("settings.sqlite3.unreadable-") }
        XCTAssertNotNil(aside, "\(files)")
        XCTAssertEqual(try String(contentsOfFile: "\(state)/\(aside!)", encoding: .utf8), garbage)
        XCTAssertEqual(try pincer("get", "devopts.greeting").stdout, "Hi\n")
    }

    /// The REPL reads commands from a pipe, keeps going after errors, and
    /// exits with the last command's status.
    func testREPLFromAPipe() throws {
        let r = try pincer("shell", input: """
            devopts.add 40 2
            run devopts.count taps --by 5
            # comments and blank lines are skipped

            run devopts.scale nope
            get devopts.counters
            run devopts.echo 'two words' --json
            help devopts.count
            """)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("42.0\n5\ntaps  5\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\"result\":\"two words\""), r.stdout)
        XCTAssertTrue(r.stdout.contains("usage: pincer run devopts.count <name:string> [by:i64=1]"), r.stdout)
        XCTAssertTrue(r.stderr.contains("parameter --value expects i32"), r.stderr)
        XCTAssertEqual(try pincer("shell", input: "run devopts.fail\n").status, 1)
    }

    func testCompletionComesFromSignatures() throws {
        func complete(_ line: String) throws -> [String] {
            try pincer("complete", line).stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(try complete("run devopts.a"), ["devopts.add"])
        XCTAssertEqual(try complete("devopts.add 1 --"), ["--a", "--b"])
        XCTAssertEqual(try complete("run devopts.login --"), ["--token", "--user"])
        XCTAssertEqual(try complete("run devopts.negate --value "), ["false", "true"])
        XCTAssertEqual(try complete("set devopts.api-mode s"), ["staging"])
        XCTAssertEqual(try complete("set devopts.verb"), ["devopts.verbose-logging"])
        XCTAssertTrue(try complete("pl").contains("plugins"))
        XCTAssertTrue(try complete("").contains("sysinfo.env"))
    }

    /// History never stores an argument a signature marks secret.
    func testHistoryMasksSecretArguments() throws {
        let console = CapturingConsole()
        let shell = Shell(console: console, environment: ["PINCER_STATE_DIR": state])
        _ = shell.run(["commands"])
        XCTAssertEqual(shell.historyLine(for: "run devopts.login ada hunter2"), "run devopts.login ada ***")
        XCTAssertEqual(shell.historyLine(for: "devopts.login --token=hunter2 --user ada"), "devopts.login --token=*** --user ada")
        XCTAssertEqual(shell.historyLine(for: "devopts.login --token 's3 cret' ada"), "devopts.login --token *** ada")
        XCTAssertEqual(shell.historyLine(for: "run devopts.add 1 2"), "run devopts.add 1 2")
        let r = try pincer("run", "devopts.login", "ada", "hunter2")
        XCTAssertEqual(r.stdout, "logged in as ada (token of 7 bytes)\n")
    }

    func testSearchFindsEntriesAndCommands() throws {
        let r = Fixture.json(try pincer("search", "greet", "--json").stdout)
        XCTAssertEqual((r["entries"] as! [[String: Any]]).map { $0["id"] as! String }, ["devopts.greeting"])
        XCTAssertEqual((r["commands"] as! [[String: Any]]).map { $0["name"] as! String }, ["devopts.greet"])
    }

    /// The README's one-page C plugin compiles with the documented command and works.
    func testReadmeCPluginWorks() throws {
        let readme = try String(contentsOfFile: "\(Fixture.packageRoot)/README.md", encoding: .utf8)
        guard let start = readme.range(of: "```c\n"), let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex) else {
            return XCTFail("README has no C block")
        }
        let dir = Fixture.temporaryDirectory("pincer-readme")
        try String(readme[start.upperBound..<end.lowerBound]).write(toFile: "\(dir)/myapp.c", atomically: true, encoding: .utf8)
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fvisibility=hidden",
                                                 "-shared", "-fPIC", "-I", Fixture.sdkInclude, "\(dir)/myapp.c", "-o", "\(dir)/myapp.so"])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let plugin = "\(dir)/myapp.so"
        XCTAssertEqual(try Fixture.pincer(["run", "myapp.add", "2", "--b", "0.5"], stateDir: state, pluginPath: plugin).stdout, "2.5\n")
        XCTAssertEqual(try Fixture.pincer(["get", "myapp.app-version"], stateDir: state, pluginPath: plugin).stdout, "2.4.1 (build 977)\n")
        XCTAssertEqual(try Fixture.pincer(["myapp.hello"], stateDir: state, pluginPath: plugin).stdout, "hello, world\n")
        let empty = try Fixture.pincer(["myapp.hello", ""], stateDir: state, pluginPath: plugin)
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.stderr.contains("name is empty"))
    }

    /// The Swift plugin (PincerPluginKit) works through the same ABI: values-style
    /// commands, thrown errors as failures with status, value rows and pages.
    func testSwiftPluginThroughTheHelper() throws {
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env["PINCER_DEMO_VALUE"] = "from the environment"
        XCTAssertEqual(try Fixture.run(Fixture.pincer, ["run", "sysinfo.env", "PINCER_DEMO_VALUE"], environment: env).stdout,
                       "from the environment\n")
        let missing = try Fixture.run(Fixture.pincer, ["run", "sysinfo.env", "PINCER_NOT_SET_ANYWHERE", "--json"], environment: env)
        XCTAssertEqual(missing.status, 1)
        let j = Fixture.json(missing.stdout)
        XCTAssertEqual(j["status"] as? String, "PINCER_NOT_FOUND")
        XCTAssertEqual(j["error"] as? String, "environment variable PINCER_NOT_SET_ANYWHERE is not set")
        XCTAssertGreaterThan(Int(try pincer("run", "sysinfo.cpus").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 0)
        let kernel = Fixture.json(try pincer("get", "sysinfo.kernel", "--json").stdout)
        XCTAssertEqual((kernel["rows"] as? [[String: Any]])?.first?["value"] as? String, "Linux")
        XCTAssertEqual(try pincer("get", "sysinfo.pid").status, 0)
    }
}
