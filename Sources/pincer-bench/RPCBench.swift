// Rpc: the control socket (PincerControl / PincerControlServer) against
// calling the same command in process.
//
// - One Host in this process with every built-in plugin beside the
//   executable (as an app embedding Pincer has them), and a ControlServer on
//   a socket in a private temporary directory.
// - The invocation: devopts.add(a: i64, b: f64 = 1.5) -> f64, a C plugin's
//   typed command that only adds, with a = 40 and b = 2.5 (42.5 expected).
//   - in process (baseline): Command.invoke([.i64(40), .f64(2.5)]) on the
//     host's command (checks, lays out and prepares the arguments on every
//     call, then the libffi call), as the server's `invoke` does after
//     parsing the request;
//   - over the socket, sequential: one ControlClient sends an `invoke`
//     request {"command":"devopts.add","arguments":{"a":40,"b":2.5}},
//     waits for its response, and repeats;
//   - over the socket, pipelined: one client keeps `window` requests in
//     flight (send `window`, then one more per response, waited for oldest
//     first; responses may come out of order, the client matches them by
//     id). The window is the server's limit of requests in progress per
//     connection (Protocol.swift, REQUESTS): more would be answered `busy`;
//   - for information, `parallelClients` clients on as many threads, each
//     sequential on its own connection.
//   Each call is timed on its own (CLOCK_MONOTONIC, send to response) and
//   each kind's rate is its calls over the wall time of its run.
// - For information, to see where a round trip goes: `hello` sequential over
//   the same socket (answered on the server's poller thread: no worker
//   thread, no plugin call), and a line of the request's size bounced over
//   a socketpair by a second thread (the transport and two wake-ups alone),
//   and a thread created and joined (what starting one per request would add; the server keeps a pool).
// - Every response is checked (type "f64", result 42.5); a wrong one or a
//   JSON-RPC error counts as an error, and any error fails the part. There
//   is no numeric target: the figures are printed against the in-process
//   baseline.
// - Warm-up first; each kind's run is sized from a short probe (about
//   `runSeconds`); `rounds` rounds with the kinds interleaved; rates are the
//   median round, latencies percentiles of every timed call of all rounds.
import PincerControl
import PincerControlServer
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

struct RPCFigures: Sendable {
    /// One kind of call: a run per round.
    struct Series: Sendable {
        var label: String
        /// Calls per run (over all threads).
        var calls: Int
        var threads: Int = 1
        /// Wall time of each round's run, ns.
        var runNanoseconds: [UInt64] = []
        /// Every timed call of every round, ns, sorted.
        var latencies: [UInt64] = []

        /// Calls per second of the median round.
        var rate: Double {
            guard !runNanoseconds.isEmpty else { return .nan }
            let medianRun = RPCBench.median(runNanoseconds.map { Double($0) })
            return Double(calls) * 1e9 / Swift.max(medianRun, 1)
        }
        var roundRates: [Double] { runNanoseconds.map { Double(calls) * 1e9 / Double(max($0, 1)) } }
        /// Mean time per call of the median round (wall time / calls), ns.
        var nanosecondsPerCall: Double { 1e9 / rate }
        var median: Double { RPCBench.percentile(latencies, 0.5) }
        var p99: Double { RPCBench.percentile(latencies, 0.99) }
    }

    var command: String
    var plugins: Int
    var commands: Int
    /// Plugins beside the executable the host refused (not measured; reported).
    var failedPlugins: [String]
    var rounds: Int
    var window: Int
    var requestBytes: Int
    var responseBytes: Int
    var inProcess: Series
    var sequential: Series
    var pipelined: Series
    var parallel: Series
    var hello: Series
    var socketpair: Series
    var thread: Series
    /// Responses checked (every socket call, timed or warm-up) and the wrong ones.
    var checked: Int
    var errors: Int
    var firstError: String?

    /// Socket sequential time per call over the in-process time per call.
    var sequentialRatio: Double { sequential.nanosecondsPerCall / inProcess.nanosecondsPerCall }
    var medianRatio: Double { sequential.median / inProcess.median }
    var pipelinedRatio: Double { pipelined.rate / sequential.rate }
    var parallelRatio: Double { parallel.rate / sequential.rate }
    /// Information only: passes when it ran without an error.
    var passed: Bool { errors == 0 && checked > 0 }
}

enum RPCBench {
    static let commandName = "devopts.add"
    static let plugin = "devopts"
    static let inProcessArguments: [Value] = [.i64(40), .f64(2.5)]
    static let expected = 42.5
    static let rounds = 7
    /// The server's limit of requests in progress per connection
    /// (ClientConnection.maxConcurrentRequests; Protocol.swift, REQUESTS).
    static let window = 16
    static let parallelClients = 4
    /// About this long per run of each kind.
    static let runSeconds = 0.2
    static let inProcessRange = 1_000...2_000_000
    static let socketRange = 500...50_000
    /// Each call's wait bounded, so a lost response fails instead of hanging.
    static let timeoutMilliseconds = 10_000

    static var params: JSON {
        .object([("command", .string(commandName)), ("arguments", .object([("a", .int(40)), ("b", .double(2.5))]))])
    }

    static var progress: Bool { isatty(2) != 0 }

    static func note(_ text: String) {
        if progress { printError("pincer-bench: rpc: \(text)") }
    }

    /// Counts checked responses and errors; a transport failure stops the part.
    final class Tally: @unchecked Sendable {
        var checked = 0
        var errors = 0
        var firstError: String?

        func fail(_ message: String) {
            errors += 1
            if firstError == nil { firstError = message }
        }

        func add(_ other: Tally) {
            checked += other.checked
            errors += other.errors
            if firstError == nil { firstError = other.firstError }
        }
    }

    static func run() throws(BenchError) -> RPCFigures {
        let state = try TemporaryDirectory(prefix: "pincer-bench-rpc")
        defer { state.remove() }
        // Every built-in plugin, as an app that embeds Pincer loads them.
        let host = try BuiltPlugin.host(loading: plugin, everyBuiltin: true, state: state)
        defer { host.shutdown() }
        guard let command = host.command(named: commandName) else {
            let why = host.failures.map { "\($0)" }.joined(separator: "; ")
            throw BenchError("the host has no command \(commandName) (\(why.isEmpty ? "the \(plugin) plugin registered none" : why))")
        }

        var serverOptions = ControlOptions(appName: "pincer-bench")
        serverOptions.directory = "\(state.path)/run"
        let server: ControlServer
        do { server = try ControlServer(host: host, options: serverOptions) } catch {
            throw BenchError("ControlServer: \(error.description)")
        }
        defer { server.stop() }

        let tally = Tally()
        let client = try connect(server.socketPath)
        defer { client.close() }
        do { try client.hello() } catch { throw BenchError("hello: \(error.message)") }
        // The response as it comes over the wire, for its size.
        let responseBytes = ControlProtocol.response(id: .int(1), result: try check(client.call(.invoke, params), tally)).serializedBytes().count + 1
        let requestBytes = ControlProtocol.request(id: 1, .invoke, params).serializedBytes().count + 1

        var sequentialClients: [ControlClient] = []
        for _ in 0..<parallelClients { sequentialClients.append(try connect(server.socketPath)) }
        defer { for c in sequentialClients { c.close() } }
        let echo = try SocketPairEcho()
        defer { echo.stop() }

        // Warm up every path: the plugin, libffi, the server's threads, the clients.
        note("warming up...")
        _ = try inProcess(command, count: 20_000, tally: tally)
        _ = try sequential(client, count: 1_000, tally: tally)
        _ = try pipelined(client, count: 1_000, tally: tally)
        _ = try helloCalls(client, count: 300)
        _ = try parallel(sequentialClients, perClient: 100, tally: tally)
        _ = try echo.bounce(count: 1_000, bytes: requestBytes)
        _ = try threads(count: 300)

        // Size each kind's run from a short probe.
        func size(_ probeCalls: Int, _ range: ClosedRange<Int>, _ probe: (Int) throws(BenchError) -> (UInt64, [UInt64])) throws(BenchError) -> Int {
            let (elapsed, _) = try probe(probeCalls)
            let perCall = Double(max(elapsed, 1)) / Double(probeCalls)
            return min(max(Int(runSeconds * 1e9 / perCall), range.lowerBound), range.upperBound)
        }
        let inProcessCalls = try size(20_000, inProcessRange) { n throws(BenchError) in try inProcess(command, count: n, tally: tally) }
        let sequentialCalls = try size(300, socketRange) { n throws(BenchError) in try sequential(client, count: n, tally: tally) }
        let pipelinedCalls = try size(1_000, socketRange) { n throws(BenchError) in try pipelined(client, count: n, tally: tally) }
        let perClient = try size(100, socketRange) { n throws(BenchError) in
            try parallel(sequentialClients, perClient: n, tally: tally)
        }
        let helloCount = try size(300, socketRange) { n throws(BenchError) in try helloCalls(client, count: n) }
        let echoCount = try size(1_000, socketRange) { n throws(BenchError) in try echo.bounce(count: n, bytes: requestBytes) }
        let threadCount = try size(300, socketRange) { n throws(BenchError) in try threads(count: n) }

        var kinds = [
            RPCFigures.Series(label: "in process: Command.invoke (baseline)", calls: inProcessCalls),
            RPCFigures.Series(label: "socket, sequential, 1 client", calls: sequentialCalls),
            RPCFigures.Series(label: "socket, pipelined, window \(window)", calls: pipelinedCalls),
            RPCFigures.Series(label: "socket, \(parallelClients) clients in parallel", calls: perClient * parallelClients,
                              threads: parallelClients),
            RPCFigures.Series(label: "hello, sequential (no worker thread)", calls: helloCount),
            RPCFigures.Series(label: "socketpair ping-pong, 2 threads", calls: echoCount),
            RPCFigures.Series(label: "pthread_create + pthread_join", calls: threadCount),
        ]
        for round in 1...rounds {
            note("round \(round) of \(rounds)...")
            for k in kinds.indices {
                let (elapsed, latencies): (UInt64, [UInt64])
                switch k {
                case 0: (elapsed, latencies) = try inProcess(command, count: inProcessCalls, tally: tally)
                case 1: (elapsed, latencies) = try sequential(client, count: sequentialCalls, tally: tally)
                case 2: (elapsed, latencies) = try pipelined(client, count: pipelinedCalls, tally: tally)
                case 3: (elapsed, latencies) = try parallel(sequentialClients, perClient: perClient, tally: tally)
                case 4: (elapsed, latencies) = try helloCalls(client, count: helloCount)
                case 5: (elapsed, latencies) = try echo.bounce(count: echoCount, bytes: requestBytes)
                default: (elapsed, latencies) = try threads(count: threadCount)
                }
                kinds[k].runNanoseconds.append(elapsed)
                kinds[k].latencies += latencies
            }
        }
        for k in kinds.indices { kinds[k].latencies.sort() }

        return RPCFigures(command: "\(command.fullName): \(command.signature.text)", plugins: host.plugins.count, commands: host.commands.count,
                          failedPlugins: host.failures.map { "\($0)" }, rounds: rounds, window: window,
                          requestBytes: requestBytes, responseBytes: responseBytes,
                          inProcess: kinds[0], sequential: kinds[1], pipelined: kinds[2], parallel: kinds[3],
                          hello: kinds[4], socketpair: kinds[5], thread: kinds[6],
                          checked: tally.checked, errors: tally.errors, firstError: tally.firstError)
    }

    static func connect(_ path: String) throws(BenchError) -> ControlClient {
        do { return try ControlClient(path: path, timeoutMilliseconds: timeoutMilliseconds) } catch {
            throw BenchError("connecting to \(path): \(error.message)")
        }
    }

    /// Checks one `invoke` response; the result, or null after counting an error.
    @discardableResult
    static func check(_ response: @autoclosure () throws(ControlError) -> JSON, _ tally: Tally) throws(BenchError) -> JSON {
        tally.checked += 1
        let result: JSON
        do { result = try response() } catch {
            // A JSON-RPC error answers one request; anything else ends the connection.
            guard error.kind == .remote else { throw BenchError("\(commandName) over the socket: \(error.message)") }
            tally.fail("\(commandName) over the socket: error \(error.code.map(String.init) ?? "?"): \(error.message)")
            return .null
        }
        let value = result["result"]?.doubleValue
        guard result["type"]?.stringValue == "f64", value == expected else {
            tally.fail("\(commandName)(40, 2.5) over the socket returned \(result.serialized()), expected {\"type\":\"f64\",\"result\":\(expected)}")
            return .null
        }
        return result
    }

    static func send(_ client: ControlClient) throws(BenchError) -> Int64 {
        do { return try client.send(.invoke, params) } catch {
            throw BenchError("sending \(commandName): \(error.message)")
        }
    }

    /// `count` calls of Command.invoke, each timed.
    @inline(never)
    static func inProcess(_ command: Command, count: Int, tally: Tally) throws(BenchError) -> (UInt64, [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        var wrong = 0
        let start = monotonicNanoseconds()
        do {
            for i in 0..<count {
                let t = monotonicNanoseconds()
                let value = try command.invoke(inProcessArguments)
                latencies[i] = monotonicNanoseconds() &- t
                if case .f64(let x) = value, x == expected {} else { wrong += 1 }
            }
        } catch {
            throw BenchError("\(commandName) through Command.invoke: \(error.message)")
        }
        let elapsed = monotonicNanoseconds() - start
        if wrong > 0 { tally.fail("\(wrong) in-process call\(wrong == 1 ? "" : "s") of \(commandName)(40, 2.5) did not return \(expected)") }
        return (elapsed, latencies)
    }

    /// `count` requests, each sent once the previous one was answered.
    @inline(never)
    static func sequential(_ client: ControlClient, count: Int, tally: Tally) throws(BenchError) -> (UInt64, [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        let request = params
        let start = monotonicNanoseconds()
        for i in 0..<count {
            let t = monotonicNanoseconds()
            try check(client.call(.invoke, request), tally)
            latencies[i] = monotonicNanoseconds() &- t
        }
        return (monotonicNanoseconds() - start, latencies)
    }

    /// `count` requests with `window` in flight: one more sent per response,
    /// responses waited for oldest first (the client keeps those that come
    /// earlier, by id). Latency: from a request's send to its response.
    @inline(never)
    static func pipelined(_ client: ControlClient, count: Int, tally: Tally) throws(BenchError) -> (UInt64, [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        // In flight, oldest first: a ring of (id, send time).
        var ids = [Int64](repeating: 0, count: window)
        var sentAt = [UInt64](repeating: 0, count: window)
        var head = 0, inFlight = 0, sent = 0, done = 0
        let start = monotonicNanoseconds()
        while sent < count && inFlight < window {
            sentAt[(head + inFlight) % window] = monotonicNanoseconds()
            ids[(head + inFlight) % window] = try send(client)
            inFlight += 1
            sent += 1
        }
        while done < count {
            try check(client.response(to: ids[head]), tally)
            latencies[done] = monotonicNanoseconds() &- sentAt[head]
            done += 1
            head = (head + 1) % window
            inFlight -= 1
            if sent < count {
                let slot = (head + inFlight) % window
                sentAt[slot] = monotonicNanoseconds()
                ids[slot] = try send(client)
                inFlight += 1
                sent += 1
            }
        }
        return (monotonicNanoseconds() - start, latencies)
    }

    /// `perClient` sequential requests on each client, all at once, a thread each.
    static func parallel(_ clients: [ControlClient], perClient: Int, tally: Tally) throws(BenchError) -> (UInt64, [UInt64]) {
        final class Work: @unchecked Sendable {
            let client: ControlClient
            let tally = Tally()
            var latencies: [UInt64] = []
            var failure: BenchError?
            init(_ client: ControlClient) { self.client = client }
        }
        let works = clients.map(Work.init)
        let (elapsed, _) = try ThreadGang.run(count: works.count) { i in
            let w = works[i]
            do throws(BenchError) {
                (_, w.latencies) = try sequential(w.client, count: perClient, tally: w.tally)
            } catch { w.failure = error }
            return 0
        }
        // ThreadGang joined every thread: their writes are visible here.
        var latencies: [UInt64] = []
        for w in works {
            if let failure = w.failure { throw failure }
            tally.add(w.tally)
            latencies += w.latencies
        }
        return (elapsed, latencies)
    }

    /// `count` `hello` requests, sequential: answered by the server's
    /// poller thread itself.
    @inline(never)
    static func helloCalls(_ client: ControlClient, count: Int) throws(BenchError) -> (UInt64, [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        let start = monotonicNanoseconds()
        do {
            for i in 0..<count {
                let t = monotonicNanoseconds()
                _ = try client.call(.hello)
                latencies[i] = monotonicNanoseconds() &- t
            }
        } catch {
            throw BenchError("hello over the socket: \(error.message)")
        }
        return (monotonicNanoseconds() - start, latencies)
    }

    /// `count` threads that do nothing, each created and joined in turn.
    @inline(never)
    static func threads(count: Int) throws(BenchError) -> (UInt64, [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        let start = monotonicNanoseconds()
        for i in 0..<count {
            let t = monotonicNanoseconds()
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { _ in nil }, nil)
            guard rc == 0 else { throw BenchError("pthread_create: \(String(cString: strerror(rc)))") }
            pthread_join(thread, nil)
            latencies[i] = monotonicNanoseconds() &- t
        }
        return (monotonicNanoseconds() - start, latencies)
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The `p` quantile of sorted values (nearest rank).
    static func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return Double(sorted[min(max(rank, 0), sorted.count - 1)])
    }
}

/// A thread that writes back every line it reads on one end of a Unix
/// socketpair: the floor of a round trip between two threads over a socket.
final class SocketPairEcho: @unchecked Sendable {
    private let near: Int32
    private let far: Int32
    private let thread: pthread_t

    init() throws(BenchError) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        near = fds[0]
        far = fds[1]
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let fd = Int32(Int(bitPattern: raw))
            var reader = MessageReader(fd: fd, maxBytes: 1 << 20)
            while case .message(var line) = reader.next() {
                line.append(UInt8(ascii: "\n"))
                guard UnixSocket.sendAll(fd, line) else { break }
            }
            return nil
        }, UnsafeMutableRawPointer(bitPattern: Int(far)))
        guard rc == 0 else {
            close(near)
            close(far)
            throw BenchError("pthread_create: \(String(cString: strerror(rc)))")
        }
        self.thread = thread
    }

    /// `count` lines of `bytes` bytes (the newline included) sent and read
    /// back, one at a time.
    @inline(never)
    func bounce(count: Int, bytes: Int) throws(BenchError) -> (UInt64, [UInt64]) {
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: max(bytes - 1, 1)) + [UInt8(ascii: "\n")]
        var reader = MessageReader(fd: near, maxBytes: 1 << 20)
        var latencies = [UInt64](repeating: 0, count: count)
        let start = monotonicNanoseconds()
        for i in 0..<count {
            let t = monotonicNanoseconds()
            guard UnixSocket.sendAll(near, line), case .message(let back) = reader.next(), back.count == line.count - 1 else {
                throw BenchError("the socketpair echo did not answer")
            }
            latencies[i] = monotonicNanoseconds() &- t
        }
        return (monotonicNanoseconds() - start, latencies)
    }

    /// Ends the echo thread (it reads the end of input) and closes both ends.
    func stop() {
        shutdown(near, Int32(SHUT_WR))
        pthread_join(thread, nil)
        close(near)
        close(far)
    }
}

// MARK: - report

extension Report {
    func rpcText(_ f: RPCFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        func rate(_ r: Double) -> String {
            guard r.isFinite else { return "-" }
            return r >= 1e6 ? "\(Format.short(r / 1e6)) M/s" : r >= 1e3 ? "\(Format.short(r / 1e3)) k/s" : "\(Format.short(r))/s"
        }
        func time(_ ns: Double) -> String {
            guard ns.isFinite else { return "-" }
            return ns >= 1e6 ? "\(Format.fixed(ns / 1e6, 2)) ms" : ns >= 1e3 ? "\(Format.short(ns / 1e3)) us" : "\(Format.fixed(ns, 0)) ns"
        }
        func line(_ part: String, _ label: String, _ s: RPCFigures.Series, _ note: String) -> String {
            Format.padded(part, 10) + Format.padded(label, 46) + Format.leftPadded(rate(s.rate), 11)
                + Format.leftPadded(time(s.median), 10) + Format.leftPadded(time(s.p99), 10) + (note.isEmpty ? "" : "   " + note)
        }
        lines.append(Format.padded("rpc", 10) + Format.padded("invoke devopts.add {\"a\": 40, \"b\": 2.5}", 46)
                     + Format.leftPadded("calls/s", 11) + Format.leftPadded("median", 10) + Format.leftPadded("p99", 10))
        lines.append(line("", f.inProcess.label, f.inProcess, ""))
        lines.append(line("", f.sequential.label, f.sequential,
                          "\(Format.ratio(f.sequentialRatio)) the in-process time/call"))
        lines.append(line("", f.pipelined.label, f.pipelined, "\(Format.ratio(f.pipelinedRatio)) the sequential rate"))
        lines.append(line("", "info: " + f.parallel.label, f.parallel,
                          "\(Format.ratio(f.parallelRatio)) the sequential rate (each sequential)"))
        lines.append(line("", "info: " + f.hello.label, f.hello, "answered on the server's poller thread"))
        lines.append(line("", "info: " + f.socketpair.label, f.socketpair, "the transport alone"))
        lines.append(line("", "info: " + f.thread.label, f.thread, "what a new thread per request would add (the server keeps a pool)"))
        lines.append(row("", "ratio socket sequential / in-process", Format.ratio(f.sequentialRatio),
                         "(time per call; medians: \(Format.ratio(f.medianRatio)))"))
        lines.append(row("", "ratio pipelined / sequential (rate)", Format.ratio(f.pipelinedRatio), ""))
        let verdict = f.passed ? "PASS" : "FAIL (\(f.errors) error\(f.errors == 1 ? "" : "s"))"
        lines.append(row("", "target: none (printed against in-process)", "information", verdict))
        let counts = f.inProcess.calls == 0 ? "" : "\(f.inProcess.calls) in process, \(f.sequential.calls) sequential, \(f.pipelined.calls) pipelined, \(f.parallel.threads) x \(f.parallel.calls / max(f.parallel.threads, 1)) in parallel"
        lines.append("          median of \(f.rounds) rounds, kinds interleaved (calls per run: \(counts));")
        lines.append("          latency: each call from send to response (\(f.window) in flight for pipelined); \(f.requestBytes)-byte")
        lines.append("          requests, \(f.responseBytes)-byte responses; \(f.plugins) built-in plugins, \(f.commands) commands; \(f.checked) responses checked, \(f.errors) wrong")
        if !f.failedPlugins.isEmpty {
            lines.append("          plugins refused (not measured): \(f.failedPlugins.joined(separator: "; "))")
        }
        if let e = f.firstError {
            lines.append("")
            lines.append(row("", "error: \(e)", "", "FAIL"))
        }
        return lines
    }

    func rpcJSON(_ f: RPCFigures) -> JSON {
        func series(_ s: RPCFigures.Series) -> JSON {
            .object([
                ("label", .string(s.label)),
                ("calls_per_run", .int(Int64(s.calls))),
                ("threads", .int(Int64(s.threads))),
                ("calls_per_second", .rounded(s.rate, 0)),
                ("us_per_call", .rounded(s.nanosecondsPerCall / 1e3, 3)),
                ("median_us", .rounded(s.median / 1e3, 3)),
                ("p99_us", .rounded(s.p99 / 1e3, 3)),
                ("round_calls_per_second", .array(s.roundRates.map { .rounded($0, 0) })),
            ])
        }
        var members: [(String, JSON)] = [
            ("command", .string(f.command)),
            ("arguments", RPCBench.params["arguments"] ?? .null),
            ("plugins", .int(Int64(f.plugins))),
            ("commands", .int(Int64(f.commands))),
            ("rounds", .int(Int64(f.rounds))),
            ("window", .int(Int64(f.window))),
            ("request_bytes", .int(Int64(f.requestBytes))),
            ("response_bytes", .int(Int64(f.responseBytes))),
            ("in_process", series(f.inProcess)),
            ("socket_sequential", series(f.sequential)),
            ("socket_pipelined", series(f.pipelined)),
            ("socket_parallel", series(f.parallel)),
            ("hello_sequential", series(f.hello)),
            ("socketpair_ping_pong", series(f.socketpair)),
            ("thread_create_join", series(f.thread)),
            ("ratio_sequential_over_in_process", .rounded(f.sequentialRatio, 2)),
            ("ratio_median_sequential_over_in_process", .rounded(f.medianRatio, 2)),
            ("ratio_pipelined_over_sequential", .rounded(f.pipelinedRatio, 3)),
            ("ratio_parallel_over_sequential", .rounded(f.parallelRatio, 3)),
            ("checked", .int(Int64(f.checked))),
            ("errors", .int(Int64(f.errors))),
            ("info", .bool(true)),
        ]
        if !f.failedPlugins.isEmpty { members.append(("failed_plugins", .array(f.failedPlugins.map { .string($0) }))) }
        if let e = f.firstError { members.append(("first_error", .string(e))) }
        members.append(("pass", .bool(f.passed)))
        return .object(members)
    }
}
