import Foundation
import XCTest
@testable import PincerHost
import PincerJSON

/// The plugin registry (PincerHost/PluginRegistry.swift, PluginScanner.swift,
/// DeferredLoading.swift): real plugin files scanned by the real
/// `pincer-plugin-scanner` child of the real `pincer`. Each fixture plugin
/// appends a line to an init log, so a test counts how often and where its
/// init ran: listing must not run it, using it must.
final class RegistryTests: XCTestCase {
    var state = ""
    var plugins = ""
    var initLog = ""

    override func setUpWithError() throws {
        state = Fixture.temporaryDirectory("pincer-registry-state")
        plugins = Fixture.temporaryDirectory("pincer-registry-plugins")
        initLog = Fixture.temporaryDirectory("pincer-registry-log") + "/inits"
    }

    /// Builds Tests/Fixtures/plugins/scanned.c as `<plugins>/<file>.so`.
    @discardableResult
    func build(_ short: String, behaviour: Int = 0, version: Int = 1, file: String? = nil, into directory: String? = nil) throws -> String {
        let scratch = Fixture.temporaryDirectory("pincer-registry-build")
        let built = try Fixture.buildPlugin("scanned", into: scratch, extraFlags: ["-DSHORT=\(short)", "-DBEHAVIOUR=\(behaviour)", "-DVERSION=\(version)"])
        let target = "\(directory ?? plugins)/\(file ?? short).so"
        // rename(2) over the old file: a replaced plugin, as an installer does it.
        XCTAssertEqual(rename(built, target), 0)
        return target
    }

    func pincer(_ args: String..., timeout: String? = nil, builtins: Bool = false, registry: Bool = true) throws -> Fixture.ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["PINCER_STATE_DIR"] = state
        env["PINCER_PLUGIN_PATH"] = plugins
        env["PINCER_TEST_INIT_LOG"] = initLog
        if let timeout { env["PINCER_SCAN_TIMEOUT"] = timeout }
        if !registry { env["PINCER_PLUGIN_REGISTRY"] = "off" }
        return try Fixture.run(Fixture.pincer, (builtins ? [] : ["--no-builtin"]) + args, environment: env)
    }

    /// A host in this process on the test's plugin directory and state,
    /// without built-ins or scanner (it answers from a registry made before).
    func inProcessHost() -> PincerHost.Host {
        var options = Host.Options(stateDirectory: state)
        options.builtinDirectory = nil
        options.pluginPaths = [plugins]
        options.scanner = nil
        options.logHandler = { _ in }
        return Host(options: options)
    }

    /// Init lines so far for a plugin (all of them with nil).
    func inits(_ short: String? = nil) -> Int {
        let text = (try? String(contentsOfFile: initLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("init \(short ?? "")") }.count
    }

    /// The log's lines without pids.
    func logLines() -> [String] {
        let text = (try? String(contentsOfFile: initLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ").dropLast().joined(separator: " ") }
    }

    func commandNames(_ r: Fixture.ProcessResult) -> [String] {
        (Fixture.json(r.stdout)["commands"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    /// The registry file's records in their JSON form (the scanner's lines), as {"plugins": [...]}.
    func registry() -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: PluginRegistry.path(stateDirectory: state)),
              let records = RegistryFile.decode([UInt8](data)) else { return [:] }
        return ["plugins": records.map { Fixture.json($0.json.serialized()) }]
    }

    func testListingAnswersFromTheRegistryAndUsingAPluginLoadsIt() throws {
        try build("alpha")
        try build("beta")
        let first = try pincer("commands", "--json")
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(commandNames(first), ["alpha.hello", "beta.hello"])
        // Scanned once, in the scanner child (another process than pincer).
        XCTAssertEqual(inits(), 2)
        let records = registry()["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.count, 2, "\(registry())")
        XCTAssertEqual(records.compactMap { ($0["plugin"] as? [String: Any])?["short_name"] as? String }.sorted(), ["alpha", "beta"])
        // Warm: listing, help, search and completion run no plugin code.
        let warm = try pincer("commands", "--json")
        XCTAssertEqual(commandNames(warm), ["alpha.hello", "beta.hello"])
        XCTAssertTrue(try pincer("help", "alpha.hello").stdout.contains("Says which plugin and version answered"))
        XCTAssertTrue(try pincer("search", "hello").stdout.contains("alpha.hello"))
        XCTAssertEqual(try pincer("complete", "alp").stdout, "alpha.hello\n")
        let listed = Fixture.json(try pincer("plugins", "--json").stdout)["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.map { $0["loaded"] as? Bool }, [false, false])
        XCTAssertEqual(inits(), 2)
        // A command loads its own plugin, and only that one.
        let hello = try pincer("alpha.hello")
        XCTAssertEqual(hello.stdout, "hello from alpha version 1\n", hello.stderr)
        XCTAssertEqual(inits("alpha"), 2)
        XCTAssertEqual(inits("beta"), 1)
        // Reading an entry loads its plugin too.
        XCTAssertEqual(try pincer("get", "beta.value").stdout, "value of beta\n")
        XCTAssertEqual(inits("beta"), 2)
        // Embedding apps and PINCER_PLUGIN_REGISTRY=off load everything at start, in process.
        // The listing copied from the registry's cached objects is, byte for
        // byte, the one written from the loaded plugins' commands.
        XCTAssertEqual(try pincer("commands", "--json", registry: false).stdout, warm.stdout)
        XCTAssertEqual(inits(), 6)
    }

    func testAChangedReplacedOrRemovedFileIsScannedAgain() throws {
        let path = try build("alpha")
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 1)
        // Rebuilt and put in place: new registrations, one new scan.
        try build("alpha", version: 2)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.added", "alpha.hello"])
        XCTAssertEqual(inits(), 2)
        XCTAssertEqual(try pincer("alpha.added").stdout, "added in version 2\n")
        XCTAssertEqual(inits(), 3)
        // Written in place with the old contents (same path and inode).
        let old = try Fixture.buildPlugin("scanned", into: Fixture.temporaryDirectory("pincer-registry-old"), extraFlags: ["-DSHORT=alpha"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: old))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 4)
        // Only touched: the time changed, so it is scanned again (and says the same).
        XCTAssertEqual(try Fixture.run("/usr/bin/touch", [path]).status, 0)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 5)
        // Removed: gone from the listing and from the registry.
        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), [])
        XCTAssertEqual((registry()["plugins"] as? [Any])?.count, 0)
        XCTAssertEqual(inits(), 5)
    }

    func testCrashingHangingAndExitingPluginsAreRefusedBesideGoodOnes() throws {
        try build("good1", file: "a-good1")
        try build("crash", behaviour: 1, file: "b-crash")
        try build("hang", behaviour: 2, file: "c-hang")
        try build("quit", behaviour: 3, file: "d-quit")
        try build("noisy", behaviour: 4, file: "e-noisy")
        try build("good2", file: "f-good2")
        let started = Date()
        let r = try pincer("plugins", "--json", timeout: "1")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the hanging plugin must be killed after its time-out")
        XCTAssertEqual(r.status, 4, r.stderr) // README: a plugin was refused
        let json = Fixture.json(r.stdout)
        XCTAssertEqual((json["plugins"] as? [[String: Any]])?.compactMap { $0["short_name"] as? String }, ["good1", "noisy", "good2"])
        let failed = json["failed"] as? [[String: Any]] ?? []
        func reason(_ file: String) -> String {
            failed.first { ($0["path"] as? String)?.hasSuffix("/\(file).so") ?? false }?["reason"] as? String ?? "(not refused)"
        }
        XCTAssertTrue(reason("b-crash").contains("crashed with signal 11 (SIGSEGV"), reason("b-crash"))
        XCTAssertTrue(reason("c-hang").contains("did not finish init within 1 s while being scanned (killed"), reason("c-hang"))
        XCTAssertTrue(reason("d-quit").contains("exited with status 7 while being scanned"), reason("d-quit"))
        XCTAssertEqual(failed.count, 3, "\(failed)")
        XCTAssertEqual(inits("crash"), 1)
        XCTAssertEqual(inits("hang"), 1)
        // Not scanned again while the files stay as they are; the good ones work.
        let again = try pincer("good2.hello", timeout: "1")
        XCTAssertEqual(again.stdout, "hello from good2 version 1\n", again.stderr)
        // Loaded in pincer itself, its init's noise lands on pincer's output (before the answer).
        XCTAssertTrue(try pincer("noisy.hello").stdout.hasSuffix("hello from noisy version 1\n"))
        XCTAssertEqual(inits("crash"), 1)
        XCTAssertEqual(inits("hang"), 1)
        XCTAssertEqual(inits("quit"), 1)
        // A fixed file is scanned again and accepted.
        try build("crash", file: "b-crash")
        let fixed = try pincer("crash.hello", timeout: "1")
        XCTAssertEqual(fixed.stdout, "hello from crash version 1\n", fixed.stderr)
    }

    /// The CSV adapter's init looks up pincer.database/1: running its command
    /// loads the database browser first, and listing loads neither.
    func testAPluginWhoseServiceAnotherNeedsIsLoadedLazily() throws {
        let csv = plugins + "/csv.so"
        let cc = try Fixture.run("/usr/bin/cc", ["-std=c11", "-shared", "-fPIC", "-I", Fixture.sdkInclude,
                                                 Fixture.packageRoot + "/Plugins/Examples/CSVAdapter/csv_adapter.c", "-o", csv])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let listing = try pincer("-v", "commands", "--json", builtins: true)
        XCTAssertTrue(commandNames(listing).contains("csv.folders"), listing.stderr)
        XCTAssertTrue(commandNames(listing).contains("db.list"))
        let warm = try pincer("-v", "commands", "--json", builtins: true)
        XCTAssertFalse(warm.stderr.contains("on first use"), warm.stderr)
        let folders = try pincer("-v", "csv.folders", builtins: true)
        XCTAssertEqual(folders.status, 0, folders.stderr)
        XCTAssertTrue(folders.stderr.contains("loading dev.pincer.database from "), folders.stderr)
        let loaded = folders.stderr.split(separator: "\n").filter { $0.contains("on first use") }
        XCTAssertEqual(loaded.count, 2, "the adapter and the browser it needs: \(loaded)")
    }

    /// A plugin whose init looks up a service of a plugin not loaded yet:
    /// the lookup loads the publisher, and shutdown keeps host.h's promise
    /// (the publisher shuts down after the plugin that looked it up).
    func testAServiceLookupLoadsThePublisherAndShutdownKeepsItAlive() throws {
        try build("client", behaviour: 5, file: "a-client")
        try build("provider", behaviour: 6, file: "b-provider")
        let listing = try pincer("plugins", "--json")
        XCTAssertEqual(listing.status, 0, listing.stdout + listing.stderr)
        // The client, scanned first, is refused for want of the service; once
        // the provider's record says who publishes it, the client is scanned
        // again with the provider loaded for its lookup.
        XCTAssertEqual(logLines(), ["init client", "init provider", "init client", "init provider"])
        try FileManager.default.removeItem(atPath: initLog)
        let hello = try pincer("client.hello")
        XCTAssertEqual(hello.stdout, "hello from client version 1\n", hello.stderr)
        XCTAssertEqual(logLines(), ["init client", "init provider", "touched provider", "shutdown client", "shutdown provider"])
        // Scanned alone (the provider's record cached), the client still finds it.
        try FileManager.default.removeItem(atPath: initLog)
        try build("client", behaviour: 5, version: 2, file: "a-client")
        XCTAssertTrue(commandNames(try pincer("commands", "--json")).contains("client.added"))
        XCTAssertEqual(logLines(), ["init client", "init provider"])
    }

    /// ABI 1.5 sync_entries from C: an entry the plugin adds only when the
    /// host asks is found by id in a fresh process and listed in the menu;
    /// listing commands asks for nothing.
    func testEntriesAddedBySyncEntriesAreFoundAndListed() throws {
        try build("synced", behaviour: 7)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["synced.hello"])
        XCTAssertEqual(logLines(), ["init synced"])
        let record = (registry()["plugins"] as? [[String: Any]])?.first?["plugin"] as? [String: Any]
        XCTAssertEqual(record?["syncs_entries"] as? Bool, true, "\(registry())")
        let value = try pincer("get", "synced.extra")
        XCTAssertEqual(value.stdout, "synced\n", value.stderr)
        XCTAssertEqual(logLines().filter { !$0.hasPrefix("shutdown") }, ["init synced", "init synced", "sync synced"])
        let menu = try pincer("menu", "--json")
        XCTAssertTrue(menu.stdout.contains("\"synced.extra\""), menu.stdout)
        XCTAssertEqual(logLines().filter { $0 == "sync synced" }.count, 2, "once per process")
    }

    /// Eight processes starting cold at once each scan and write the cache
    /// (temporary file, rename): every one answers in full, and the registry
    /// left holds exactly one record per plugin.
    func testConcurrentColdStartsLeaveOneWholeRegistry() throws {
        for short in ["alpha", "beta", "gamma"] { try build(short) }
        let results = try ConcurrentProcesses.run(Fixture.pincer, arguments: ["--no-builtin", "--plugin-path", plugins, "commands", "--json"],
                                                  stateDir: state, extraEnvironment: ["PINCER_TEST_INIT_LOG": initLog],
                                                  inputs: Array(repeating: "", count: 8))
        for (i, r) in results.enumerated() {
            XCTAssertEqual(r.status, 0, "process \(i): \(r.stderr)")
            XCTAssertEqual(commandNames(r), ["alpha.hello", "beta.hello", "gamma.hello"], "process \(i)")
        }
        let records = registry()["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.compactMap { ($0["plugin"] as? [String: Any])?["short_name"] as? String }.sorted(), ["alpha", "beta", "gamma"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasSuffix(".tmp") }, [])
        // Warm from here on: nothing scans again.
        let before = inits()
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello", "beta.hello", "gamma.hello"])
        XCTAssertEqual(inits(), before)
    }

    func testADamagedRegistryIsIgnoredAndRewritten() throws {
        try build("alpha")
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        let file = PluginRegistry.path(stateDirectory: state)
        let good = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: file)))
        // Another version (the u32 after the 8-byte magic), cut short, one byte too many.
        var otherVersion = good
        otherVersion[8] = 1
        for garbage in [Array("not a registry at all".utf8), otherVersion, Array(good.dropLast(3)), good + [0]] {
            try Data(garbage).write(to: URL(fileURLWithPath: file))
            let r = try pincer("commands", "--json")
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "")
            XCTAssertEqual(commandNames(r), ["alpha.hello"])
            XCTAssertEqual((registry()["plugins"] as? [Any])?.count, 1)
        }
        XCTAssertEqual(inits(), 5)
    }

    /// The registry keeps the candidates' order of its last write and is
    /// matched record by record; another order (the plugin path's
    /// directories swapped) finds every record by path and scans nothing.
    func testAnotherCandidateOrderFindsEveryRecordWithoutScanning() throws {
        let other = Fixture.temporaryDirectory("pincer-registry-plugins-b")
        try build("alpha")
        try build("beta", into: other)
        let saved = plugins
        plugins = "\(saved):\(other)"
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello", "beta.hello"])
        XCTAssertEqual(inits(), 2)
        plugins = "\(other):\(saved)"
        let swapped = try pincer("plugins", "--json")
        let listed = Fixture.json(swapped.stdout)["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.compactMap { $0["short_name"] as? String }, ["beta", "alpha"], swapped.stderr)
        XCTAssertEqual(listed.map { $0["loaded"] as? Bool }, [false, false])
        XCTAssertEqual(inits(), 2)
        XCTAssertEqual(try pincer("beta.hello").stdout, "hello from beta version 1\n")
    }

    /// Version 1 was `plugin-registry.json`: such a file is not read, its
    /// plugins are scanned again, and writing the new file removes it.
    func testARegistryOfTheOldFormatIsScannedAgainAndRemoved() throws {
        try build("alpha")
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 1)
        try FileManager.default.removeItem(atPath: PluginRegistry.path(stateDirectory: state))
        let old = state + "/plugin-registry.json"
        try #"{"format":"pincer-plugin-registry","version":1,"host":"abi 1.5","plugins":[]}"#.write(toFile: old, atomically: false, encoding: .utf8)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: old))
        XCTAssertEqual((registry()["plugins"] as? [Any])?.count, 1)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["alpha.hello"])
        XCTAssertEqual(inits(), 2)
    }

    /// The file format on its own: every field survives a round trip, and
    /// a file cut anywhere, or with a count larger than what follows, or
    /// with a flag bit it does not know, is refused whole (never trapped on).
    func testTheRegistryFileRoundTripsAndRefusesWhatIsOff() throws {
        let scanned = ScannedPlugin(info: PluginInfo(id: "com.example.full", shortName: "full", name: "Full", version: "2.0", summary: "Ünïcode summary",
                                                     abiMajor: 1, abiMinor: 5, path: "/p/full.so"))
        scanned.sections = [.init(id: "tools", title: "Tools", order: -3)]
        scanned.entries = [.init(localID: "mode", kind: .choice, section: "tools", title: "Mode", summary: "s", defaultValue: "b", choices: ["a", "b"],
                                 isSecret: true, command: nil, isPluginValue: true, hasChanged: true),
                           .init(localID: "go", kind: .action, section: "tools", title: "Go", summary: "", defaultValue: "", choices: [],
                                 isSecret: false, command: "full.go", isPluginValue: false, hasChanged: false)]
        scanned.commands = [.init(signature: "go(n: i64 = 2) -> string", summary: "Goes", details: "line\nline", changesState: true, returnsJSON: true,
                                  listing: ArraySlice(#"{"name":"full.go","summary":"Goes"}"#.utf8)),
                            .init(signature: "stop() -> void", summary: "", details: "", changesState: false, returnsJSON: false)]
        scanned.services = ["com.example.full/1"]
        scanned.topics = ["*"]
        scanned.usesServices = ["com.example.other/2"]
        scanned.registersFromSettings = true
        scanned.syncsEntries = true
        let records = [
            RegistryRecord(key: FileKey(path: "/p/full.so", size: 123, modified: -5, changed: 1 << 62, inode: UInt64.max, buildID: "abcd"),
                           outcome: .plugin(scanned)),
            RegistryRecord(key: FileKey(path: "/p/bad.so", size: 0, modified: 0, changed: 0, inode: 7, buildID: nil),
                           outcome: .refused(pluginID: "com.example.bad", reason: "crashed", usesServices: ["x.y/1"])),
            RegistryRecord(key: FileKey(path: "/p/worse.so", size: 1, modified: 2, changed: 3, inode: 4, buildID: nil),
                           outcome: .refused(pluginID: nil, reason: "exited", usesServices: [])),
        ]
        let directories = [DirectorySnapshot(path: "/p", modified: 5, changed: 6, inode: 7, listedAt: 8, names: Array("full.so\u{0}bad.so\u{0}".utf8))]
        let bytes = RegistryFile.encode(records, directories: directories)
        let decoded = try XCTUnwrap(RegistryFile.decode(bytes))
        let image = try XCTUnwrap(RegistryImage(bytes))
        XCTAssertEqual(image.directories.map(image.snapshot), directories)
        XCTAssertEqual(RegistryFile.encode(decoded, directories: image.directories.map(image.snapshot)), bytes)
        // A snapshot's names are names: none empty, none with a slash, each ended by a NUL.
        for names in ["a.so", "a.so\u{0}\u{0}", "\u{0}", "d/a.so\u{0}"] {
            var bad = directories
            bad[0].names = Array(names.utf8)
            XCTAssertNil(RegistryImage(RegistryFile.encode(records, directories: bad)), names.debugDescription)
        }
        XCTAssertEqual(decoded.map(\.json), records.map(\.json))
        guard case .plugin(let back) = decoded[0].outcome else { return XCTFail("not a plugin") }
        XCTAssertEqual(back.commands.map(\.name), ["go", "stop"])
        XCTAssertEqual(back.commands.map { Array($0.listing) }, [Array(#"{"name":"full.go","summary":"Goes"}"#.utf8), []])
        XCTAssertEqual(decoded.map(\.key), records.map(\.key))
        XCTAssertEqual(RegistryFile.decode(RegistryFile.encode([]))?.count, 0)
        for cut in 0..<bytes.count { XCTAssertNil(RegistryFile.decode(Array(bytes.prefix(cut))), "cut at \(cut)") }
        // The record count (after magic, version and the host tag) claims a billion records.
        var huge = bytes
        let countOffset = 8 + 4 + 4 + PluginRegistry.hostTag.utf8.count
        huge.replaceSubrange(countOffset..<countOffset + 4, with: [0x00, 0xCA, 0x9A, 0x3B])
        XCTAssertNil(RegistryFile.decode(huge))
        // A payload that disagrees with its index entry (its size field here),
        // under a checksum made to fit: the index still reads, the record does not.
        var disagreeing = Array(bytes.dropLast(8))
        let sizeField = Int(image.records[0].path.start + image.records[0].path.count)
        disagreeing[sizeField] ^= 1
        let sum = RegistryFile.checksum(disagreeing[...])
        disagreeing += stride(from: 0, to: 64, by: 8).map { UInt8(truncatingIfNeeded: sum >> UInt64($0)) }
        let partial = try XCTUnwrap(RegistryImage(disagreeing))
        XCTAssertNil(partial.payload(at: 0))
        XCTAssertNotNil(partial.payload(at: 1))
        XCTAssertNil(RegistryFile.decode(disagreeing))
        // Any single byte changed fails the checksum trailer.
        for i in 0..<bytes.count {
            var damaged = bytes
            damaged[i] ^= 0x80
            XCTAssertNil(RegistryFile.decode(damaged), "byte \(i)")
        }
        // The scanner's record (a JSON line from the child) must carry a
        // command name and, if any, a listing that is one JSON object.
        func commandLine(_ command: String) -> String {
            #"{"path":"/p/x.so","size":1,"modified_ns":2,"changed_ns":3,"inode":4,"plugin":{"id":"com.example.x","short_name":"x","name":"X","#
                + #""version":"1","abi":[1,5],"commands":[\#(command)]}}"#
        }
        func record(_ line: String) -> RegistryRecord? { (try? JSON.parse(line)).flatMap(RegistryRecord.init(json:)) }
        XCTAssertNotNil(record(commandLine(#"{"signature":"go() -> void","name":"go","listing":"{\"name\":\"x.go\"}"}"#)))
        XCTAssertNil(record(commandLine(#"{"signature":"go() -> void"}"#)), "no name")
        XCTAssertNil(record(commandLine(#"{"signature":"go() -> void","name":"go","listing":"{\"name\":"}"#)), "a cut listing")
        XCTAssertNil(record(commandLine(#"{"signature":"go() -> void","name":"go","listing":"[1]"}"#)), "not an object")
    }

    /// With the registry warm a deferred plugin's commands stay records:
    /// listing, names and search read them and make no Command; a lookup
    /// by name makes that plugin's placeholders only, and the listing is
    /// the same text from records, from a mix, and from placeholders.
    /// Plugins of commands only are listed from their records alone (no
    /// placeholder, no PluginInfo until asked for). A twin (the same id,
    /// scanned on its own, so its record is a plugin too) is refused at
    /// every start with the words of the start that scanned it, and of a
    /// host that loads everything.
    func testPluginsOfCommandsOnlyAreListedFromTheirRecords() throws {
        try build("solo", behaviour: 8)
        try build("twin", behaviour: 8, file: "twin1")
        let first = try pincer("commands", "--json")
        XCTAssertEqual(commandNames(first), ["solo.hello", "twin.hello"], first.stderr)
        XCTAssertEqual(first.stderr, "")
        try build("twin", behaviour: 8, file: "twin2")
        let scanning = try pincer("commands", "--json")
        XCTAssertEqual(commandNames(scanning), ["solo.hello", "twin.hello"])
        XCTAssertTrue(scanning.stderr.contains("twin2.so: duplicate plugin id 'test.scanned.twin': already loaded from "), scanning.stderr)
        let records = registry()["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.filter { $0["plugin"] != nil }.count, 3, "twin2 has a plugin record of its own")
        XCTAssertEqual(inits(), 3)
        let warm = try pincer("commands", "--json")
        XCTAssertEqual(warm.stdout, scanning.stdout)
        XCTAssertEqual(warm.stderr, scanning.stderr)
        XCTAssertEqual(inits(), 3, "the warm start ran no init")
        let listed = Fixture.json(try pincer("plugins", "--json").stdout)["plugins"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.compactMap { $0["short_name"] as? String }, ["solo", "twin"])
        XCTAssertEqual(listed.compactMap { $0["version"] as? String }, ["1.0.1", "1.0.1"])
        XCTAssertEqual(listed.compactMap { $0["name"] as? String }, ["Scanned fixture solo", "Scanned fixture twin"])
        XCTAssertEqual(listed.compactMap { $0["loaded"] as? Bool }, [false, false])
        XCTAssertTrue(try pincer("help", "solo.hello").stdout.contains("Says which plugin and version answered"))
        XCTAssertEqual(try pincer("complete", "tw").stdout, "twin.hello\n")
        XCTAssertEqual(inits(), 3)
        // A command loads its own plugin, and only that one.
        XCTAssertEqual(try pincer("twin.hello").stdout, "hello from twin version 1\n")
        XCTAssertEqual(inits("solo"), 1)
        XCTAssertEqual(inits("twin"), 3)
        // In process: the same listing and the same refusal.
        let eager = try pincer("commands", "--json", registry: false)
        XCTAssertEqual(eager.stdout, warm.stdout)
        XCTAssertTrue(eager.stderr.contains("twin2.so: duplicate plugin id 'test.scanned.twin'"), eager.stderr)
    }

    /// A plugin known from its record alone (taken unchecked, its registry
    /// being distinct) still refuses one loaded later with its id.
    func testAPluginLoadedLaterClashesWithOneKnownFromItsRecord() throws {
        try build("solo", behaviour: 8)
        XCTAssertEqual(try pincer("commands", "--json").status, 0) // warms the registry
        let host = inProcessHost()
        XCTAssertEqual(host.loadAllUsingRegistry(), 0)
        XCTAssertFalse(host.isLoaded(pluginID: "test.scanned.solo"))
        let other = try build("solo", behaviour: 8, file: "again", into: Fixture.temporaryDirectory("pincer-registry-other"))
        host.load(path: other)
        XCTAssertTrue(host.failures.contains { $0.path == other && $0.reason.contains("duplicate plugin id 'test.scanned.solo'") }, "\(host.failures)")
        XCTAssertEqual(host.plugins.map(\.shortName), ["solo"])
        XCTAssertEqual(host.command(named: "solo.hello")?.fullName, "solo.hello")
    }

    func testListingReadsCommandRecordsAndALookupMakesOnlyItsPluginsPlaceholders() throws {
        try build("alpha")
        try build("beta")
        XCTAssertEqual(try pincer("commands", "--json").status, 0) // warms the registry
        XCTAssertEqual(inits(), 2)
        setenv("PINCER_TEST_INIT_LOG", initLog, 1)
        defer { unsetenv("PINCER_TEST_INIT_LOG") }
        let host = inProcessHost()
        XCTAssertEqual(host.loadAllUsingRegistry(), 0)
        func placeholdersMade() -> [Bool] { host.deferredPlugins.map(host.hasCommandsInTable) }
        func listing() -> String {
            var out: [UInt8] = []
            host.writeCommandsJSON(into: &out)
            return String(decoding: out, as: UTF8.self)
        }
        let fromRecords = listing()
        XCTAssertEqual((Fixture.json(fromRecords)["commands"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["alpha.hello", "beta.hello"])
        XCTAssertEqual(host.commandNames, ["alpha.hello", "beta.hello"])
        XCTAssertEqual(host.commandSummaries().map(\.name), ["alpha.hello", "beta.hello"])
        XCTAssertEqual(placeholdersMade(), [false, false])
        // Search makes the commands it finds, and only those.
        XCTAssertEqual(host.search("beta.h").commands.map(\.fullName), ["beta.hello"])
        XCTAssertEqual(placeholdersMade(), [false, true])
        let alpha = try XCTUnwrap(host.command(named: "alpha.hello"))
        XCTAssertTrue(alpha.isDeferred)
        XCTAssertEqual(placeholdersMade(), [true, true])
        XCTAssertEqual(listing(), fromRecords)
        XCTAssertEqual(inits(), 2, "listing and lookups ran no init")
        // Every placeholder, written as Commands are: the same text.
        let all = host.commands
        var written: [UInt8] = Array(#"{"commands":["#.utf8)
        for (i, c) in all.enumerated() {
            if i > 0 { written.append(UInt8(ascii: ",")) }
            Host.writeCommandJSON(c, into: &written)
        }
        written += "]}\n".utf8
        XCTAssertEqual(String(decoding: written, as: UTF8.self), fromRecords)
        // Calling it loads alpha, and only alpha.
        XCTAssertEqual(try alpha.resolved().invoke([]), .string("hello from alpha version 1"))
        XCTAssertEqual(inits("alpha"), 2)
        XCTAssertEqual(inits("beta"), 1)
        XCTAssertFalse(try XCTUnwrap(host.command(named: "alpha.hello")).isDeferred)
        // A name the record does not have, under a pending plugin's prefix, loads that plugin to ask it.
        XCTAssertNil(host.command(named: "beta.nothing"))
        XCTAssertEqual(inits("beta"), 2)
        XCTAssertEqual(listing(), fromRecords)
        host.shutdown()
    }

    /// The candidates' directory listing: byte order (a prefix first, capitals
    /// before small letters, UTF-8 after ASCII), without . and .., hidden names kept.
    /// A searched directory's snapshot spares listing it again, but only
    /// while the directory is as it says and had been quiet before it was
    /// listed; a file added later is found, and a quiet directory's
    /// snapshot is written down once.
    func testADirectorySnapshotIsUsedOnlyWhileItHolds() throws {
        try build("solo", behaviour: 8)
        try build("other", behaviour: 8)
        let host = inProcessHost()
        var st = stat()
        XCTAssertEqual(stat(plugins, &st), 0)
        let now = DirectorySnapshot(path: plugins, stat: st, listedAt: DirectorySnapshot.now())
        func image(_ snapshot: DirectorySnapshot) throws -> RegistryImage {
            try XCTUnwrap(RegistryImage(RegistryFile.encode([], directories: [snapshot])))
        }
        func names(_ survey: PincerHost.Host.CandidateSurvey) -> [String] { survey.files.map { ($0.shown as NSString).lastPathComponent } }
        // Trusted and matching: its names are taken as they are (here one of the two files).
        var quiet = now
        quiet.listedAt = now.modified + DirectorySnapshot.quietPeriod + 1
        quiet.names = Array("solo.so".utf8) + [0]
        let fromSnapshot = host.surveyCandidates(known: try image(quiet))
        XCTAssertEqual(names(fromSnapshot), ["solo.so"])
        XCTAssertFalse(fromSnapshot.directoriesChanged)
        // Listed within the quiet period of its last change: listed again.
        var recent = quiet
        recent.listedAt = now.modified + 1
        XCTAssertEqual(names(host.surveyCandidates(known: try image(recent))), ["other.so", "solo.so"])
        // The directory changed since: listed again, and worth writing down.
        var older = quiet
        older.modified -= 1
        let relisted = host.surveyCandidates(known: try image(older))
        XCTAssertEqual(names(relisted), ["other.so", "solo.so"])
        XCTAssertTrue(relisted.directoriesChanged)
        XCTAssertEqual(relisted.directories.map(\.names), [Array("other.so".utf8) + [0] + Array("solo.so".utf8) + [0]])
        // Through the shell: a file added after a warm start is found.
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["other.hello", "solo.hello"])
        let old = timeval(tv_sec: time(nil) - 3_600, tv_usec: 0)
        XCTAssertEqual(utimes(plugins, [old, old]), 0)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["other.hello", "solo.hello"])
        let written = try XCTUnwrap(RegistryImage([UInt8](try Data(contentsOf: URL(fileURLWithPath: PluginRegistry.path(stateDirectory: state))))))
        XCTAssertTrue(try XCTUnwrap(written.directory(path: plugins)).isTrusted, "a quiet directory's snapshot is written down")
        var before = stat(), after = stat()
        XCTAssertEqual(stat(PluginRegistry.path(stateDirectory: state), &before), 0)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["other.hello", "solo.hello"])
        XCTAssertEqual(stat(PluginRegistry.path(stateDirectory: state), &after), 0)
        XCTAssertEqual(after.st_ino, before.st_ino, "not written again")
        // A warm start takes each file of the trusted snapshot as the record
        // written for it, compared in place (no path made).
        func kinds(_ survey: PincerHost.Host.CandidateSurvey) -> [String] {
            survey.files.map { if case .known = $0 { "record" } else { "file" } }
        }
        let warm = host.surveyCandidates(known: written)
        XCTAssertEqual(kinds(warm), ["record", "record"])
        XCTAssertEqual(names(warm), ["other.so", "solo.so"])
        // Written in place (same inode; the directory does not change): its
        // stat no longer matches its record, so it is scanned again.
        let solo = "\(plugins)/solo.so"
        var soloBefore = stat()
        XCTAssertEqual(stat(solo, &soloBefore), 0)
        let rebuilt = try Fixture.buildPlugin("scanned", into: Fixture.temporaryDirectory("pincer-registry-v2"),
                                              extraFlags: ["-DSHORT=solo", "-DBEHAVIOUR=8", "-DVERSION=2"])
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: solo))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: rebuilt)))
        try handle.close()
        var soloAfter = stat(), directory = stat()
        XCTAssertEqual(stat(solo, &soloAfter), 0)
        XCTAssertEqual(soloAfter.st_ino, soloBefore.st_ino)
        XCTAssertEqual(stat(plugins, &directory), 0)
        XCTAssertTrue(try XCTUnwrap(written.directory(path: plugins)).matches(directory), "the snapshot still holds")
        XCTAssertEqual(kinds(host.surveyCandidates(known: written)), ["record", "file"])
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["other.hello", "solo.added", "solo.hello"])
        try build("third", behaviour: 8)
        XCTAssertEqual(commandNames(try pincer("commands", "--json")), ["other.hello", "solo.added", "solo.hello", "third.hello"])
    }

    func testTheDirectoryListingIsInByteOrder() throws {
        let directory = Fixture.temporaryDirectory("pincer-registry-listing")
        let names = ["b", "ab", "a", "B", "\u{E9}t\u{E9}.so", ".hidden", "a.so", "z9", "z10", String(repeating: "x", count: 255)]
        for name in names { XCTAssertTrue(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: nil), name) }
        XCTAssertEqual(Host.listDirectory(directory), names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        XCTAssertEqual(Host.listDirectory(directory).first, ".hidden")
        XCTAssertEqual(Host.listDirectory(directory + "/missing"), [])
    }

    /// `pincer commands --json` writes each command without the JSON tree;
    /// the text must be the tree's, byte for byte, for every kind of parameter.
    func testTheCommandListingWriterMatchesCommandJSON() throws {
        let signatures = ["hello() -> string", "add(a: i64, b: f64 = 1.5, c: bool = true) -> f64",
                          "put(token: secret string, key: string = \"q\\\"uote\", rest: string...) -> void", "big(n: u64 = 18446744073709551615, m: i32 = -2) -> u64"]
        for (i, text) in signatures.enumerated() {
            let signature = try Signature.parse(text)
            let command = Command(fullName: "p.\(signature.name)", signature: signature, summary: i == 0 ? "" : "Sum\u{1}mary \"\(i)\"",
                                  details: "", changesState: i % 2 == 1, returnsJSON: false, pluginID: "com.example.p",
                                  implementation: .values({ _, _, _, _, _ in 0 }), context: nil, gate: Lock(recursive: true))
            var written: [UInt8] = []
            Host.writeCommandJSON(command, into: &written)
            XCTAssertEqual(String(decoding: written, as: UTF8.self), Host.commandJSON(command).serialized(), text)
        }
    }

    func testBuildIDMatchesReadelf() throws {
        for path in [Fixture.buildDirectory + "/libpincer-plugin-net.so", try build("alpha"), Fixture.pincer] {
            let readelf = try Fixture.run("/usr/bin/readelf", ["-n", path])
            let line = readelf.stdout.split(separator: "\n").first { $0.contains("Build ID:") }
            let expected = line.map { String($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
            XCTAssertNotNil(expected, "\(path) has a build id note")
            XCTAssertEqual(ELFBuildID.read(path: path), expected, path)
            // Cut anywhere, the reader finds nothing or the same id, never something else.
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(8192))
            for cut in stride(from: 0, to: bytes.count, by: 97) {
                let found = ELFBuildID.parse(bytes: Array(bytes.prefix(cut)))
                XCTAssertTrue(found == nil || found == expected, "cut at \(cut): \(found ?? "")")
            }
        }
        XCTAssertNil(ELFBuildID.read(path: Fixture.packageRoot + "/Package.swift"))
    }
}
