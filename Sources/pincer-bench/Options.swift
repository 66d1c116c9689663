// Command-line options of pincer-bench.

/// What to measure and how to print it.
struct BenchOptions: Sendable {
    enum Part: String, Sendable { case dispatch, startup, flags, net, intercept, proxy, l10n, a11y, loc, db, rpc }

    var json = false
    var runs = 30
    var calls = 5_000_000
    var threads = 4
    var lookups = 6_000_000
    var requests = 2_000
    var strings = 100_000
    var points = 200_000
    var only: Part?
    var help = false

    var runsDispatch: Bool { only == nil || only == .dispatch }
    var runsStartup: Bool { only == nil || only == .startup }
    var runsFlags: Bool { only == nil || only == .flags }
    var runsNet: Bool { only == nil || only == .net }
    var runsIntercept: Bool { only == nil || only == .intercept }
    var runsProxy: Bool { only == nil || only == .proxy }
    var runsL10n: Bool { only == nil || only == .l10n }
    var runsA11y: Bool { only == nil || only == .a11y }
    var runsLoc: Bool { only == nil || only == .loc }
    var runsDb: Bool { only == nil || only == .db }
    var runsRpc: Bool { only == nil || only == .rpc }

    static let usage = """
        usage: pincer-bench [--json] [--runs N] [--calls N] [--threads N] [--lookups N]
                            [--requests N] [--strings N] [--points N]
                            [--only dispatch|startup|flags|net|intercept|proxy|l10n|a11y|loc|db|rpc]

        Measures the Pincer host against baselines taken in the same run and
        prints the figures as ratios:

          dispatch  calls of the typed command bench.add(a: i64, b: f64) -> f64
                    through a PreparedCall (libffi) into a plugin .so the host
                    dlopen'ed (Sources/BenchKernels/kernels.c, compiled with cc
                    at run time), against calling the same C function in the
                    same .so directly through a function pointer.
                    target: >= 2,000,000 prepared calls/s
                    info: the same call into the built-in devopts plugin
          startup   wall time of `pincer commands --json` (every built-in plugin
                    beside the executable, the plugin registry warm) against
                    `bench-hello`, a Swift program that imports Foundation
                    and prints a JSON object.
                    target: median pincer / median bench-hello <= 1.1, with
                    every built-in plugin known (`pincer plugins --json`)
                    and as many commands listed as they register in process
                    the same command with a state directory holding a
                    10,000-entry persisted network log and a 100,000-point
                    imported route (made with net.persist, net.import-har and
                    loc.import) against an empty one.  target: <= 1.1
                    the same command with 1,000 small C plugins (one .so
                    copied, one command each) against the built-ins alone.
                    target: <= 1.5.  info: their first (scanning) start,
                    and PINCER_PLUGIN_REGISTRY=off (all loaded in process)
          flags     bool flag lookups (get_bool, 64 keys) from several threads
                    through the flags plugin's "pincer.flags/1" service, called
                    from C, against a Swift [String: Bool] lookup of the same
                    keys from as many threads.
                    target: flag lookups/s >= 0.25 x dictionary lookups/s
          net       sequential small GETs to a loopback HTTP/1.1 server with a
                    URLSession that logs through the net plugin's
                    "pincer.network/1" service, against the same requests
                    with the default configuration.
                    target: capture time / plain time <= 1.2
                    HAR export (streamed to a file) and import of 10,000
                    realistic entries.  target: each < 0.5 s
                    info: begin+complete of 100,000 exchanges into a store
                    full at its bound (each evicts the oldest), against the
                    same appends into an empty store below its bound
          intercept the net plugin's interception rules asked about a request
                    (intercept_request through "pincer.network/1", in process)
                    with 1,000 stored rules that do not match it, against none.
                    target: <= 20 us added per request
                    info: the same with a matching mock (the answer built)
          proxy     in process, through the URLSession capture path (the net
                    plugin's "pincer.network/1"): a GET answered by a mock
                    rule (200, 1 KiB) against the same GET from a loopback
                    server (median us, ratio; no target); a delay rule of
                    200 ms against the same GET with no rule.
                    target: 200 +- 5 ms added (median of 11); a 2,000 KB/s
                    download rule over a 5 MiB body.  target: 2,000,000 B/s
                    +- 10 %. Then `pincer proxy --port 0 --json` as a
                    subprocess: 8 socket clients fetching 1 MiB bodies
                    through it (keep-alive to the proxy) against the same
                    clients fetching from the server directly (keep-alive).
                    target: proxy MB/s >= 0.5 x direct; and 1 GiB streamed
                    through a fresh proxy to one client.
                    target: the proxy's peak RSS (VmHWM) < 64 MiB
          l10n      pseudo-localisation, all modes (accented, lengthened,
                    boundaries, rtl), of a generated catalog of realistic UI
                    strings, in strings/s, against pseudol10nutil (PyPI)
                    (Python, all its default transforms) on the same strings,
                    run as `python3 scripts/bench-l10n-baseline.py`.
                    pass: both ran and every string was transformed without
                    a placeholder problem (no numeric target; the ratio is
                    printed). info: the whole .po read + rewrite path
          a11y      a full accessibility audit pass (every check, with the
                    screenshot) over a generated 5,000-element screen with a
                    1080 x 2400 screenshot, against the same walk with the
                    contrast check off.
                    target: full pass < 50 ms
                    info: elements walked, contrast reads (from pixels, from
                    known colours, not measurable), findings by check
          loc       GPX parse throughput (RouteFormats.readGPX, from bytes in
                    memory) of a generated GPX 1.1 file of 200,000 track
                    points (ele, time, some Garmin hr/cad extensions), in
                    points/s and MB/s, against gpxpy (PyPI) parsing the same
                    file, run as `python3 scripts/bench-loc-baseline.py`
                    (the median of 3 rounds on each side);
                    and interpolated fixes/s: Timeline.fixes of the longest
                    track at an interval of 0.1 s.
                    pass: both parsers ran and counted the same points, and
                    each pass gave about duration / 0.1 fixes (no numeric
                    target; the ratio is printed). info: parse including
                    reading the file, Timeline build time
          db        pages of 100 rows of a generated 1,000,000-row SQLite table
                    through the database browser's SQLite adapter
                    (DatabaseKit, readPage) at offsets 0, 500000 and 990000,
                    by keyset (cursor) and by offset, against the sqlite3
                    command-line tool running the same SQL (start-up
                    subtracted). target: each page <= 1.5 x sqlite3's time,
                    and keyset pages flat: the page at 990000 <= 1.5 x the
                    first page. info: how offset pages grow
          rpc       the control socket (ControlServer in this process, one
                    ControlClient): `invoke` of devopts.add {"a": 40, "b": 2.5}
                    sequential (one request, its response, repeat) and
                    pipelined (16 requests in flight, the server's limit per
                    connection), against Command.invoke of the same command
                    in process; calls/s, median and p99 latency, ratios.
                    pass: every response correct (no numeric target; the
                    figures are printed). info: 4 clients in parallel,
                    `hello` round trips, a socketpair ping-pong, a thread
                    created and joined (the server starts one per invoke)

        Options:
          --json          print one JSON object with every figure instead of text
          --runs N        process launches of each program for startup (default 30)
          --calls N       calls per timed round for dispatch (default 5000000)
          --threads N     threads doing lookups at once for flags (default 4)
          --lookups N     lookups per thread per timed round for flags
                          (default 6000000)
          --requests N    sequential requests per timed round for net
                          (default 2000)
          --strings N     strings in the generated catalog for l10n
                          (default 100000)
          --points N      track points in the generated GPX file for loc
                          (default 200000, at least 1000, at most 1000000)
          --only PART     run only `dispatch`, `startup`, `flags`, `net`,
                          `intercept`, `proxy`, `l10n`, `a11y`, `loc`, `db` or `rpc`
          --help          show this help

        Exit status: 0 every target met, 1 a target missed (or a measurement
        failed), 2 usage error.

        Build and run in release mode; the dispatch part needs `cc`, the
        package's Sources/BenchKernels and libpincer-plugin-devopts.so beside
        pincer-bench, the startup part the sibling
        executables `pincer` and `bench-hello` and the built-in plugins, the
        flags part the library libpincer-plugin-flags.so beside pincer-bench,
        the net part libpincer-plugin-net.so, the proxy part
        libpincer-plugin-net.so and the sibling executable `pincer`; the l10n part needs
        pseudol10nutil and the package's scripts/bench-l10n-baseline.py, the
        loc part gpxpy and scripts/bench-loc-baseline.py (both libraries in
        .build/consumers, which scripts/deps makes; else python3 on PATH), the db part the
        sqlite3 command-line tool (scripts/deps installs it), the rpc part
        libpincer-plugin-devopts.so and the other built-in plugins:
          swift build -c release && .build/release/pincer-bench

        """

    struct UsageError: Error, Sendable { let message: String }

    static func parse(_ arguments: [String]) throws(UsageError) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        func value(for flag: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            guard let next = rest.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
            return next
        }
        func count(_ text: String, flag: String) throws(UsageError) -> Int {
            let digits = text.replacingUnderscores()
            guard let n = Int(digits), n > 0 else {
                throw UsageError(message: "\(flag) expects a positive integer, got '\(text)'")
            }
            return n
        }
        while let argument = rest.popFirst() {
            var flag = argument
            var inline: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                flag = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            switch flag {
            case "--help", "-h":
                guard inline == nil else { throw UsageError(message: "\(flag) takes no value") }
                options.help = true
            case "--json":
                guard inline == nil else { throw UsageError(message: "\(flag) takes no value") }
                options.json = true
            case "--runs":
                options.runs = try count(try value(for: flag, inline: inline), flag: flag)
            case "--calls":
                options.calls = try count(try value(for: flag, inline: inline), flag: flag)
            case "--threads":
                options.threads = try count(try value(for: flag, inline: inline), flag: flag)
            case "--lookups":
                options.lookups = try count(try value(for: flag, inline: inline), flag: flag)
            case "--requests":
                options.requests = try count(try value(for: flag, inline: inline), flag: flag)
            case "--strings":
                options.strings = try count(try value(for: flag, inline: inline), flag: flag)
            case "--points":
                let text = try value(for: flag, inline: inline)
                let n = try count(text, flag: flag)
                guard (1_000...1_000_000).contains(n) else {
                    throw UsageError(message: "--points expects 1000 to 1000000 track points, got '\(text)'")
                }
                options.points = n
            case "--only":
                let part = try value(for: flag, inline: inline)
                guard let p = Part(rawValue: part) else {
                    throw UsageError(message: "--only expects 'dispatch', 'startup', 'flags', 'net', 'intercept', 'proxy', 'l10n', 'a11y', 'loc', 'db' or 'rpc', got '\(part)'")
                }
                options.only = p
            default:
                throw UsageError(message: argument.hasPrefix("-") ? "unknown option '\(argument)'" : "unexpected argument '\(argument)'")
            }
        }
        return options
    }
}

extension String {
    /// "5_000_000" -> "5000000", so large counts can be typed readably.
    fileprivate func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
}
