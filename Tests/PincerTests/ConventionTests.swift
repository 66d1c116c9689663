import Foundation
import XCTest

/// The conventions every command shares (README: "Options, environment,
/// exit codes" and "JSON output"), checked through the built `pincer`.
final class ConventionTests: XCTestCase {
    var state = ""

    override func setUp() {
        state = Fixture.temporaryDirectory("pincer-conventions")
    }

    func pincer(_ args: String..., input: String? = nil, state override: String? = nil) throws -> Fixture.ProcessResult {
        try Fixture.pincer(args, stateDir: override ?? state, input: input)
    }

    /// Multi-word parameters are kebab-case in help, completion, errors and
    /// JSON; the identifier spelling still works, with a note on stderr.
    func testParametersAreKebabCase() throws {
        let help = try pincer("help", "net.limits")
        XCTAssertTrue(help.stdout.contains("  --body-cap  i64"), help.stdout)
        XCTAssertTrue(help.stdout.contains("[body-cap:i64=-1]"), help.stdout)
        XCTAssertFalse(help.stdout.contains("--body_cap"), help.stdout)

        let kebab = try pincer("net.limits", "--body-cap", "4096")
        XCTAssertEqual(kebab.status, 0, kebab.stderr)
        XCTAssertEqual(kebab.stderr, "")
        XCTAssertTrue(kebab.stdout.contains("bodyCap          4096"), kebab.stdout)

        let old = try pincer("net.limits", "--body_cap=2048")
        XCTAssertEqual(old.status, 0, old.stderr)
        XCTAssertEqual(old.stderr, "pincer: warning: net.limits: --body_cap is the old spelling of --body-cap; use --body-cap\n")
        XCTAssertTrue(old.stdout.contains("bodyCap          2048"), old.stdout)
        // Under --json the note is JSON too; --quiet drops it.
        let oldJSON = try pincer("--json", "net.limits", "--body_cap", "1024")
        XCTAssertEqual(Fixture.json(oldJSON.stderr)["warning"] as? String,
                       "net.limits: --body_cap is the old spelling of --body-cap; use --body-cap")
        XCTAssertEqual(try pincer("--quiet", "net.limits", "--body_cap", "1024").stderr, "")

        let unknown = try pincer("net.limits", "--body-cop", "1")
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("unknown parameter --body-cop; did you mean '--body-cap'?"), unknown.stderr)
        let typed = try pincer("net.limits", "--body-cap", "x")
        XCTAssertEqual(typed.status, 2)
        XCTAssertTrue(typed.stderr.contains("parameter --body-cap expects i64"), typed.stderr)

        let completion = try pincer("complete", "net.limits --bo")
        XCTAssertEqual(completion.stdout, "--body-cap\n")
        // A parameter already given (in either spelling) is not offered again.
        XCTAssertEqual(try pincer("complete", "net.limits --body_cap 1 --b").stdout, "--budget\n")

        let commands = Fixture.json(try pincer("commands", "--json").stdout)["commands"] as? [[String: Any]] ?? []
        let limits = try XCTUnwrap(commands.first { $0["name"] as? String == "net.limits" })
        let parameters = limits["parameters"] as? [[String: Any]] ?? []
        XCTAssertEqual(parameters.map { $0["option"] as? String }, ["--entries", "--body-cap", "--budget"])
        XCTAssertEqual(parameters.map { $0["name"] as? String }, ["entries", "body_cap", "budget"])
        // No built-in command documents an underscore option anywhere a user reads.
        for command in commands {
            XCTAssertFalse((command["usage"] as? String ?? "").contains("_"), "\(command["usage"] ?? "")")
        }
    }

    /// The same failure gives the same exit code however the command is spelt,
    /// and `--json` anywhere on the line makes the error JSON.
    func testExitCodesDoNotDependOnTheSpelling() throws {
        let spellings: [(args: [String], code: Int32)] = [
            (["devopts.addd", "1"], 3), (["run", "devopts.addd", "1"], 3),
            (["devopts.add"], 2), (["run", "devopts.add"], 2),
            (["devopts.add", "x"], 2), (["run", "devopts.add", "x"], 2),
            (["devopts.fail"], 1), (["run", "devopts.fail"], 1),
            (["nosuch"], 2), (["get", "devopts.nosuch"], 3),
        ]
        for (args, code) in spellings {
            let text = try Fixture.pincer(args, stateDir: state)
            XCTAssertEqual(text.status, code, "\(args): \(text.stderr)")
            // --json first, last, and right after the command name.
            for json in [["--json"] + args, args + ["--json"], [args[0], "--json"] + args.dropFirst()] {
                let r = try Fixture.pincer(json, stateDir: state)
                XCTAssertEqual(r.status, code, "\(json)")
                if code == 1 {
                    // A plugin's failure is the `run` failure object, on standard output.
                    let failure = Fixture.json(r.stdout)
                    XCTAssertEqual(failure["ok"] as? Bool, false, "\(json)")
                    XCTAssertEqual(failure["error"] as? String, "requested failure", "\(json)")
                    XCTAssertEqual(failure["status"] as? String, "PINCER_FAILED", "\(json)")
                } else {
                    XCTAssertEqual(r.stdout, "", "\(json)")
                    let error = Fixture.json(r.stderr)
                    XCTAssertEqual(error["exit_code"] as? Int, Int(code), "\(json): \(r.stderr)")
                    XCTAssertNotNil(error["error"] as? String, "\(json)")
                }
            }
        }
        // The whole error shape: usage errors carry the usage line.
        let usage = Fixture.json(try pincer("--json", "devopts.add").stderr)
        XCTAssertEqual(Set(usage.keys), ["error", "exit_code", "usage"])
        XCTAssertEqual(usage["error"] as? String, "devopts.add: missing argument 'a' (i64)")
        XCTAssertEqual(usage["usage"] as? String, "pincer run devopts.add <a:i64> [b:f64=1.5]")
        let notFound = Fixture.json(try pincer("devopts.addd", "--json").stderr)
        XCTAssertEqual(Set(notFound.keys), ["error", "exit_code"])
        XCTAssertEqual(notFound["error"] as? String, "no command 'devopts.addd'; did you mean 'devopts.add'?")
    }

    /// Exit 2 means nothing was called: a usage error leaves the counter as it was.
    func testUsageErrorsCallNothing() throws {
        let r = try pincer("shell", input: "devopts.count taps\ndevopts.count taps --by x\ndevopts.count taps extra words\nrun devopts.count\ndevopts.count taps --nope 1\nget devopts.counters\n")
        XCTAssertEqual(r.stdout, "1\ntaps  1\n", r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("pincer: devopts.count:") }.count, 4, r.stderr)
    }

    /// A settings store that cannot be opened exits 5 on reads as on writes,
    /// naming the store's reason; the plugins' handled failures print nothing
    /// without -v.
    func testStoreErrorsExitFiveOnReadsAndWrites() throws {
        let file = state + "/not-a-directory"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data()))
        let broken = file + "/state"
        for args in [["get", "devopts.api-mode"], ["set", "devopts.api-mode", "staging"], ["pin", "devopts.api-mode"],
                     ["flags.get", "x"], ["run", "flags.get", "x"]] {
            let r = try Fixture.pincer(args, stateDir: broken)
            XCTAssertEqual(r.status, 5, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("exists and is not a directory"), "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("warning"), "\(args): \(r.stderr)")
            let json = try Fixture.pincer(args + ["--json"], stateDir: broken)
            XCTAssertEqual(json.status, 5, "\(args)")
            let error = args[0].contains(".") || args[0] == "run" ? Fixture.json(json.stdout) : Fixture.json(json.stderr)
            XCTAssertTrue((error["error"] as? String ?? "").contains("exists and is not a directory"), "\(args): \(error)")
        }
        // A command that never touches the store is unaffected.
        XCTAssertEqual(try Fixture.pincer(["devopts.add", "1", "2"], stateDir: broken).status, 0)
    }

    /// Handled host-call failures and info lines show with -v or PINCER_LOG only.
    func testLogLevels() throws {
        let quiet = try pincer("devopts.progress", "0")
        XCTAssertEqual(quiet.stderr, "")
        // -v also shows the host's debug lines, among them the plugin loaded on first use.
        let verbose = try pincer("-v", "devopts.progress", "0")
        XCTAssertTrue(verbose.stderr.contains("pincer: debug: [pincer] loading com.example.devoptions from "), verbose.stderr)
        XCTAssertEqual(verbose.stderr.split(separator: "\n").filter { !$0.contains("[pincer]") }, ["pincer: info: [com.example.devoptions] progress: starting"])
        XCTAssertEqual(try pincer("--verbose", "devopts.progress", "0").stderr, verbose.stderr)
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env["PINCER_LOG"] = "info"
        XCTAssertEqual(try Fixture.run(Fixture.pincer, ["devopts.progress", "0"], environment: env).stderr, "pincer: info: [com.example.devoptions] progress: starting\n")
        env["PINCER_LOG"] = "error"
        XCTAssertEqual(try Fixture.run(Fixture.pincer, ["-q", "devopts.progress", "0"], environment: env).stderr, "")
        // A host call that fails and that the plugin handles (its store cannot be created) is a debug line.
        XCTAssertTrue(FileManager.default.createFile(atPath: state + "/file", contents: Data()))
        let handled = try Fixture.pincer(["devopts.add", "1"], stateDir: state + "/file/x")
        XCTAssertEqual(handled.stderr, "")
        let debug = try Fixture.pincer(["-v", "devopts.add", "1"], stateDir: state + "/file/x")
        XCTAssertTrue(debug.stderr.contains("pincer: debug: ["), debug.stderr)
    }

    /// Live output under --json is NDJSON: one object per line, the result last.
    func testStreamingOutputWithJSONIsNDJSON() throws {
        let text = try pincer("devopts.progress", "2")
        XCTAssertEqual(text.stdout, "step 1 of 2\nstep 2 of 2\n2 steps done\n")
        for args in [["devopts.progress", "2", "--json"], ["--json", "run", "devopts.progress", "2"]] {
            let r = try Fixture.pincer(args, stateDir: state)
            XCTAssertEqual(r.stdout, """
                {"step":1,"of":2}
                {"step":2,"of":2}
                {"command":"devopts.progress","ok":true,"type":"string","result":"2 steps done"}

                """, "\(args)")
        }
        // A plugin that writes text whatever was asked: each line is wrapped.
        let plain = try pincer("--json", "devopts.progress", "2", "--plain")
        let lines = plain.stdout.split(separator: "\n").map { Fixture.json(String($0)) }
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[0]["output"] as? String, "step 1 of 2")
        XCTAssertEqual(lines[1]["output"] as? String, "step 2 of 2")
        XCTAssertEqual(lines[2]["result"] as? String, "2 steps done")
    }

    /// --csv on the tables the README names, with defined forms for the
    /// values JSON cannot carry.
    func testCSVOnEveryDocumentedTable() throws {
        XCTAssertEqual(try pincer("flags.register", "new-checkout", "bool", "false", "A, quoted \"summary\"").status, 0)
        let flags = try pincer("flags.list", "--csv")
        XCTAssertEqual(flags.status, 0, flags.stderr)
        XCTAssertEqual(flags.stdout, "key,type,remote,override,value,reason,summary\nnew-checkout,bool,false,,false,remote,\"A, quoted \"\"summary\"\"\"\n")
        XCTAssertEqual(try pincer("servers.register", "qa", "QA", #"{"API_URL": "https://qa.example.com", "RETRIES": "3"}"#).status, 0)
        let vars = try pincer("servers.vars", "--csv")
        XCTAssertEqual(vars.status, 0, vars.stderr)
        XCTAssertEqual(vars.stdout, "name,value\nAPI_URL,https://qa.example.com\nRETRIES,3\n")

        let db = state + "/odd.sqlite"
        let made = try Fixture.run(Consumer.require(Consumer.sqlite3), [db, "create table t(b blob, r real); insert into t values (x'00ff10', 1e999), (NULL, -1e999), (x'', 2.5);"])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(try pincer("db.add-path", db).status, 0)
        let rows = try pincer("db.query", "odd", "select b, r from t order by rowid", "--csv")
        XCTAssertEqual(rows.status, 0, rows.stderr)
        XCTAssertEqual(rows.stdout, "b,r\n\\x00ff10,Infinity\n,-Infinity\n\\x,2.5\n")
        // Python's csv and float() read the forms back.
        let check = try Consumer.python(Consumer.debianPython, """
            import csv, sys, io
            rows = list(csv.reader(io.StringIO(sys.argv[1])))
            assert rows[0] == ['b', 'r'], rows
            assert [float(r[1]) for r in rows[1:]] == [float('inf'), float('-inf'), 2.5], rows
            assert bytes.fromhex(rows[1][0][2:]) == b'\\x00\\xff\\x10', rows
            print('ok')
            """, [rows.stdout])
        XCTAssertEqual(check.stdout, "ok\n", check.stderr)
    }

    /// `--plugin-path libx.so` loads the file in the current directory, not
    /// a library of that name from the loader's search path.
    func testRelativePluginPathNamesAFile() throws {
        let dir = Fixture.temporaryDirectory("pincer-relative")
        let built = try Fixture.buildPlugin("good", into: dir)
        // Named like a system library that dlopen would otherwise find (and that is no plugin).
        try FileManager.default.moveItem(atPath: built, toPath: dir + "/libm.so.6")
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env.removeValue(forKey: "PINCER_PLUGIN_PATH")
        let r = try Fixture.run(Fixture.pincer, ["--no-builtin", "--plugin-path", "libm.so.6", "plugins", "--json"],
                                environment: env, directory: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let listing = Fixture.json(r.stdout)
        XCTAssertEqual((listing["failed"] as? [Any])?.count, 0, "\(listing)")
        XCTAssertEqual(((listing["plugins"] as? [[String: Any]])?.first?["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }, "libm.so.6")
    }

    /// The REPL on a terminal (a real pty from script(1)) saves each line
    /// once, across sessions, and never a secret argument.
    func testHistoryFileKeepsEachLineOnceAndNoSecret() throws {
        let script = try Consumer.require("/usr/bin/script")
        func session(_ lines: String) throws {
            var env = ProcessInfo.processInfo.environment
            env["PINCER_STATE_DIR"] = state
            env["TERM"] = "dumb"
            let r = try Fixture.run(script, ["-qec", "\(Fixture.pincer) shell", "/dev/null"], environment: env, input: lines)
            XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        }
        try session("version\ndevopts.login ada hunter2\ndevopts.login --token=s3cr3t --user bo\nexit\n")
        try session("devopts.add 1 2\nexit\n")
        let history = try String(contentsOfFile: state + "/history", encoding: .utf8)
        XCTAssertFalse(history.contains("hunter2"), history)
        XCTAssertFalse(history.contains("s3cr3t"), history)
        XCTAssertEqual(history, "_HiStOrY_V2_\nversion\ndevopts.login\\040ada\\040***\ndevopts.login\\040--token=***\\040--user\\040bo\ndevopts.add\\0401\\0402\n")
    }
}
