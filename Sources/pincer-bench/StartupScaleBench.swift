// Start-up that must not grow: `pincer commands --json` with a large state
// directory against an empty one, and with 1,000 small plugins registered
// against the built-ins alone, each pair alternated in one run (the
// registry warm in both, as it is after the first start).
import NetworkLog
import PincerHost
import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

struct StartupScaleFigures: Sendable {
    static let stateTargetRatio = 1.1
    static let pluginsTargetRatio = 1.5
    static let logEntries = 10_000
    static let routePoints = 100_000
    static let smallPlugins = 1_000

    var runs: Int
    /// Empty state directory, built-ins only (its registry warm).
    var emptyState: ProgramFigures
    /// The same command with the large state directory.
    var largeState: ProgramFigures
    /// What the large state directory holds, for the report.
    var largeStateContents: String
    /// Built-ins plus the small plugins, the registry warm.
    var manyPlugins: ProgramFigures
    var manyPluginsCommands: Int
    var builtinCommands: Int
    /// The first start with the small plugins: the scan, out of process.
    var coldScanNanoseconds: UInt64
    /// The same command loading every plugin in process (PINCER_PLUGIN_REGISTRY=off), for comparison.
    var manyPluginsEager: ProgramFigures

    var stateRatio: Double { largeState.median / emptyState.median }
    var pluginsRatio: Double { manyPlugins.median / emptyState.median }
    var listedEverything: Bool { manyPluginsCommands == builtinCommands + StartupScaleFigures.smallPlugins }
    var passed: Bool {
        listedEverything && stateRatio <= StartupScaleFigures.stateTargetRatio && pluginsRatio <= StartupScaleFigures.pluginsTargetRatio
    }
}

enum StartupScaleBench {
    static func run(runs: Int) throws(BenchError) -> StartupScaleFigures {
        guard let directory = Host.executableDirectory() else { throw BenchError("cannot find this executable's directory") }
        let pincerPath = "\(directory)/pincer"
        let empty = try TemporaryDirectory(prefix: "pincer-bench-scale-empty")
        defer { empty.remove() }
        let large = try TemporaryDirectory(prefix: "pincer-bench-scale-large")
        defer { large.remove() }
        let many = try TemporaryDirectory(prefix: "pincer-bench-scale-many")
        defer { many.remove() }
        let work = try TemporaryDirectory(prefix: "pincer-bench-scale-files")
        defer { work.remove() }

        let emptyEnvironment = StartupBench.childEnvironment(stateDirectory: empty.path)
        let largeEnvironment = StartupBench.childEnvironment(stateDirectory: large.path)
        let contents = try fillLargeState(pincer: pincerPath, environment: largeEnvironment, files: work.path)

        let pluginDirectory = work.path + "/plugins"
        try buildSmallPlugins(into: pluginDirectory, scratch: work.path)
        // A plugin directory changed moments ago is listed on every start
        // until it has been quiet for the registry's quiet period (its
        // snapshot is not trusted before); a user's has been quiet for days.
        // The cold start below comes after that, as a user's first start would.
        usleep(UInt32(PluginRegistry.directoryQuietPeriod / 1_000) + 500_000)
        let manyEnvironment = StartupBench.childEnvironment(stateDirectory: many.path) + ["PINCER_PLUGIN_PATH=\(pluginDirectory)"]
        let eagerEnvironment = manyEnvironment + ["PINCER_PLUGIN_REGISTRY=off"]

        let onEmpty = try Spawner(path: pincerPath, arguments: ["commands", "--json"], environment: emptyEnvironment)
        let onLarge = try Spawner(path: pincerPath, arguments: ["commands", "--json"], environment: largeEnvironment)
        let onMany = try Spawner(path: pincerPath, arguments: ["commands", "--json"], environment: manyEnvironment)
        let eager = try Spawner(path: pincerPath, arguments: ["commands", "--json"], environment: eagerEnvironment)

        // The first start with the small plugins scans them.
        let (coldStatus, coldNanoseconds) = try onMany.runTimed()
        guard coldStatus == 0 else { throw BenchError("`\(onMany.commandLine)` (1,000 plugins, cold) exited with \(StartupBench.describe(coldStatus))") }
        let builtinCommands = try commandCount(onEmpty)
        let manyCommands = try commandCount(onMany)
        _ = try commandCount(onLarge) // warms the large state's registry, and checks it answers

        var samples: [[UInt64]] = [[], [], []]
        let spawners = [onEmpty, onLarge, onMany]
        for i in 0..<runs {
            // Rotate the order so drift during the run touches all three alike.
            for k in 0..<3 {
                let j = (i + k) % 3
                let (status, elapsed) = try spawners[j].runTimed()
                guard status == 0 else { throw BenchError("`\(spawners[j].commandLine)` exited with \(StartupBench.describe(status)) in run \(i + 1)") }
                samples[j].append(elapsed)
            }
        }
        var eagerSamples: [UInt64] = []
        for _ in 0..<max(3, runs / 10) {
            let (status, elapsed) = try eager.runTimed()
            guard status == 0 else { throw BenchError("`\(eager.commandLine)` with PINCER_PLUGIN_REGISTRY=off exited with \(StartupBench.describe(status))") }
            eagerSamples.append(elapsed)
        }
        return StartupScaleFigures(
            runs: runs,
            emptyState: ProgramFigures(command: "pincer commands --json (empty state)", samples: samples[0]),
            largeState: ProgramFigures(command: "pincer commands --json (large state)", samples: samples[1]),
            largeStateContents: contents,
            manyPlugins: ProgramFigures(command: "pincer commands --json (+1,000 plugins)", samples: samples[2]),
            manyPluginsCommands: manyCommands, builtinCommands: builtinCommands, coldScanNanoseconds: coldNanoseconds,
            manyPluginsEager: ProgramFigures(command: "pincer commands --json (+1,000 plugins, PINCER_PLUGIN_REGISTRY=off)", samples: eagerSamples))
    }

    static func commandCount(_ spawner: Spawner) throws(BenchError) -> Int {
        let (status, output) = try spawner.runCapturingOutput()
        guard status == 0 else { throw BenchError("`\(spawner.commandLine)` exited with \(StartupBench.describe(status))") }
        return try StartupBench.checkCommandsJSON(output, commandLine: spawner.commandLine)
    }

    /// A persisted network log of 10,000 entries (imported from a HAR with
    /// persistence on) and an imported route of 100,000 points, made with
    /// the commands a user runs. Returns what the directory holds.
    static func fillLargeState(pincer: String, environment: [String], files: String) throws(BenchError) -> String {
        let harPath = files + "/log.har", gpxPath = files + "/route.gpx"
        let store = NetworkStore(limits: LogLimits(entryLimit: StartupScaleFigures.logEntries))
        for entry in HARCorpus.entries(StartupScaleFigures.logEntries) { _ = store.add(entry) }
        do {
            _ = try HARExport.writeFile(store.entries(), creator: (name: "pincer-bench", version: "1"), to: harPath)
        } catch {
            throw BenchError("writing \(harPath): \(error)")
        }
        try writeFile(gpxPath, oneTrackGPX(points: StartupScaleFigures.routePoints))
        for arguments in [["net.persist", "30"], ["net.import-har", harPath], ["loc.import", gpxPath, "--name", "big"]] {
            let spawner = try Spawner(path: pincer, arguments: arguments, environment: environment)
            let (status, output) = try spawner.runCapturingOutput()
            guard status == 0 else {
                throw BenchError("`pincer \(arguments.joined(separator: " "))` exited with \(StartupBench.describe(status)): \(String(decoding: output.prefix(300), as: UTF8.self))")
            }
        }
        let stateDirectory = environment.first { $0.hasPrefix("PINCER_STATE_DIR=") }.map { String($0.dropFirst(17)) } ?? ""
        func mb(_ bytes: Int) -> String { "\(Format.short(Double(bytes) / 1e6)) MB" }
        return "\(StartupScaleFigures.logEntries) persisted log entries (HAR \(mb(fileSize(harPath)))), "
            + "a route of \(StartupScaleFigures.routePoints) points (GPX \(mb(fileSize(gpxPath)))); "
            + "state directory \(mb(treeSize(stateDirectory)))"
    }

    /// One tiny C plugin, built once and copied 1,000 times: each copy
    /// takes its short name from its file name (dladdr), so each is a
    /// distinct plugin with one command.
    static func buildSmallPlugins(into directory: String, scratch: String) throws(BenchError) {
        let source = scratch + "/tiny.c", library = scratch + "/tiny.so"
        try writeFile(source, Array(tinyPlugin.utf8))
        let sdk = Host.executableDirectory().map { $0 + "/../../../SDK/include" } ?? "SDK/include"
        let include = access(sdk + "/pincer.h", R_OK) == 0 ? sdk : "SDK/include"
        let cc = try Spawner(path: "/usr/bin/cc", arguments: ["-std=c11", "-O2", "-shared", "-fPIC", "-I", include, source, "-o", library],
                             environment: StartupBench.childEnvironment(stateDirectory: scratch))
        let (status, output) = try cc.runCapturingOutput()
        guard status == 0 else { throw BenchError("cc tiny.c (SDK at \(include)) failed: \(String(decoding: output, as: UTF8.self))") }
        guard mkdir(directory, 0o755) == 0 else { throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))") }
        let bytes = try readFileBytes(library)
        for i in 0..<StartupScaleFigures.smallPlugins {
            try writeFile("\(directory)/tiny\(String(1000 + i).dropFirst()).so", bytes)
        }
    }

    static let tinyPlugin = """
        #define _GNU_SOURCE
        #include <pincer.h>
        #include <dlfcn.h>
        #include <stdio.h>
        #include <string.h>

        static char short_name[33], id[64];

        static pincer_status_t hello(void *context, pincer_call_t *call)
        {
            (void)context;
            call->return_string(call, short_name);
            return PINCER_OK;
        }

        static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
        {
            pincer_status_t status;
            (void)context;
            status = host->add_command(host, &(pincer_command_t){
                .struct_size = sizeof(pincer_command_t), .signature = "hello() -> string",
                .summary = "A trivial plugin's one command", .typed = (pincer_typed_fn_t)hello });
            if (status != PINCER_OK)
                reply->fail(reply, host->last_error(host));
            return status;
        }

        static pincer_plugin_t plugin = {
            .magic = PINCER_PLUGIN_MAGIC, .abi_major = PINCER_ABI_MAJOR, .abi_minor = PINCER_ABI_MINOR,
            .struct_size = sizeof(pincer_plugin_t), .version = "1.0.0", .init = init,
        };

        PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor)
        {
            Dl_info info;
            const char *base;
            size_t n;
            (void)major; (void)minor;
            if (!dladdr((void *)&plugin, &info) || info.dli_fname == NULL)
                return NULL;
            base = strrchr(info.dli_fname, '/');
            base = base ? base + 1 : info.dli_fname;
            n = strcspn(base, ".");
            if (n == 0 || n >= sizeof short_name)
                return NULL;
            memcpy(short_name, base, n);
            short_name[n] = '\\0';
            snprintf(id, sizeof id, "bench.tiny.%s", short_name);
            plugin.id = id;
            plugin.short_name = short_name;
            plugin.name = short_name;
            return &plugin;
        }

        """

    /// One track of `points` points, a second apart, walking north-east.
    static func oneTrackGPX(points: Int) -> [UInt8] {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"pincer-bench (startup)\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><name>big</name><trkseg>\n"
        out.reserveCapacity(points * 110 + 256)
        let start = 1_767_225_600 // 2026-01-01T00:00:00Z
        for i in 0..<points {
            let t = start + i
            var tm = tm()
            var seconds = time_t(t)
            gmtime_r(&seconds, &tm)
            let stamp = "\(1900 + tm.tm_year)-\(two(tm.tm_mon + 1))-\(two(tm.tm_mday))T\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec))Z"
            let lat = 47.0 + Double(i) * 0.000_01, lon = 8.0 + Double(i) * 0.000_012
            out += "<trkpt lat=\"\(Format.fixed(lat, 7))\" lon=\"\(Format.fixed(lon, 7))\"><ele>\(400 + i % 50)</ele><time>\(stamp)</time></trkpt>\n"
        }
        out += "</trkseg></trk>\n</gpx>\n"
        return Array(out.utf8)
    }

    private static func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }

    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    static func treeSize(_ path: String) -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { return 0 }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return Int(st.st_size) }
        return Host.listDirectory(path).reduce(0) { $0 + treeSize("\(path)/\($1)") }
    }
}
