// Proxy: what the net plugin's interception rules and its loopback proxy
// cost, each against a baseline measured in this run.
//
// - mock: a GET answered by a mock rule (path:/mocked, 200, 1 KiB) against
//   the same GET answered by a loopback server, in process through the real
//   URLSession capture path (PincerNetworkCapture's configuration with a
//   NetworkRecorder on the net plugin's "pincer.network/1" service);
// - conditioning, through the same path: a delay rule of 200 ms and a
//   2,000 KB/s download rule (CurlTransport paces by pausing libcurl),
//   against the same requests to a path no rule matches;
// - throughput: `pincer proxy --port 0 --json` as a subprocess, 8 socket
//   clients fetching 1 MiB bodies through it (absolute-form request lines,
//   keep-alive to the proxy), against the same clients fetching from the
//   server directly (origin-form, keep-alive); for information, the same
//   clients through BareRelay, a relay that only moves bytes (one more hop's
//   cost on this machine, a ceiling for any proxy);
// - memory: the proxy's peak resident set (VmHWM) once 1 GiB has streamed
//   through it to one client.
//
// The loopback server (BenchServer with ProxyBenchServer.answer) serves /<anything>/N: N bytes
// of a fixed ASCII pattern (/binary/N: of random bytes; /json/N: an API's
// JSON answer of about 75 KiB, N its size), written from a
// 1 MiB buffer as they are sent (never held whole), with Content-Length,
// keep-alive, a thread per connection.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkLog
import PincerHost
import PincerNetworkCapture
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct ProxyFigures: Sendable {
    var mock: ProxyMockFigures?
    var mockError: String?
    var delay: ProxyDelayFigures?
    var delayError: String?
    var rate: ProxyRateFigures?
    var rateError: String?
    /// The in-process host, its rules or its session could not be set up.
    var captureError: String?
    var throughput: ProxyThroughputFigures?
    var throughputError: String?
    var memory: ProxyMemoryFigures?
    var memoryError: String?

    var errors: [(part: String, message: String)] {
        [("in-process capture", captureError), ("mock", mockError), ("delay", delayError), ("download rate", rateError),
         ("proxy throughput", throughputError), ("proxy memory", memoryError)].compactMap { part, message in
            message.map { (part, $0) }
        }
    }

    /// Every measurement ran and met its target (the mock has none).
    var passed: Bool {
        errors.isEmpty && (delay?.passed ?? true) && (rate?.passed ?? true) && (throughput?.passed ?? true) && (memory?.passed ?? true)
    }
}

struct ProxyMockFigures: Sendable {
    var requests: Int
    var bodyBytes: Int
    /// Medians over `requests`, nanoseconds per request.
    var mockNanoseconds: Double
    var serverNanoseconds: Double
    var ratio: Double { mockNanoseconds / max(serverNanoseconds, 1) }
}

struct ProxyDelayFigures: Sendable {
    static let latencyMs = 200.0
    static let toleranceMs = 5.0

    var requests: Int
    /// Medians, nanoseconds per request: with the rule, and to a path it does not match.
    var delayedNanoseconds: Double
    var plainNanoseconds: Double
    var shortestDelayedNanoseconds: Double
    var longestDelayedNanoseconds: Double

    var addedMs: Double { (delayedNanoseconds - plainNanoseconds) / 1e6 }
    var ratio: Double { delayedNanoseconds / max(plainNanoseconds, 1) }
    var passed: Bool { abs(addedMs - ProxyDelayFigures.latencyMs) <= ProxyDelayFigures.toleranceMs }
}

struct ProxyRateFigures: Sendable {
    /// 2,000 KB/s, KB = 1,000 bytes (Conditioning).
    static let limitBytesPerSecond = 2_000_000.0
    static let tolerance = 0.10

    var bodyBytes: Int
    var runs: Int
    /// Medians, wall nanoseconds of one request.
    var limitedNanoseconds: Double
    var plainNanoseconds: Double

    var limitedRate: Double { Double(bodyBytes) * 1e9 / max(limitedNanoseconds, 1) }
    var plainRate: Double { Double(bodyBytes) * 1e9 / max(plainNanoseconds, 1) }
    var ratioToLimit: Double { limitedRate / ProxyRateFigures.limitBytesPerSecond }
    var ratio: Double { limitedRate / max(plainRate, 1) }
    var passed: Bool { abs(ratioToLimit - 1) <= ProxyRateFigures.tolerance }
}

struct ProxyThroughputFigures: Sendable {
    static let targetRatio = 0.5

    var clients: Int
    var requestsPerClient: Int
    var bodyBytes: Int
    var rounds: Int
    /// Best round, wall nanoseconds for clients x requestsPerClient bodies.
    var proxyNanoseconds: UInt64
    var directNanoseconds: UInt64
    /// Information: direct with a new connection per request (as the proxy's upstream side for a POST).
    var directNewConnectionNanoseconds: UInt64
    /// Information: through the proxy with bodies of binary bytes, which the
    /// log's redactor keeps as they are (text bodies it scans for secrets).
    var proxyBinaryNanoseconds: UInt64
    /// Information: the same clients through a bare TCP relay (BareRelay),
    /// which moves bytes and does nothing else: one hop's cost, a ceiling.
    var relayNanoseconds: UInt64
    /// Information: GETs of ProxyBenchServer.jsonBody (API-sized JSON, which
    /// the log parses to redact), through the proxy and direct.
    var jsonBodyBytes: Int
    var jsonRequestsPerClient: Int
    var proxyJSONNanoseconds: UInt64
    var directJSONNanoseconds: UInt64
    /// Exchanges sent through the proxy, and NDJSON lines it printed for them.
    var exchangesSent: Int
    var exchangesPrinted: Int
    var exitStatus: String

    var totalBytes: Double { Double(clients * requestsPerClient * bodyBytes) }
    var proxyRate: Double { totalBytes * 1e9 / Double(max(proxyNanoseconds, 1)) }
    var directRate: Double { totalBytes * 1e9 / Double(max(directNanoseconds, 1)) }
    var directNewConnectionRate: Double { totalBytes * 1e9 / Double(max(directNewConnectionNanoseconds, 1)) }
    var proxyBinaryRate: Double { totalBytes * 1e9 / Double(max(proxyBinaryNanoseconds, 1)) }
    var relayRate: Double { totalBytes * 1e9 / Double(max(relayNanoseconds, 1)) }
    var jsonBytes: Double { Double(clients * jsonRequestsPerClient * jsonBodyBytes) }
    var proxyJSONRate: Double { jsonBytes * 1e9 / Double(max(proxyJSONNanoseconds, 1)) }
    var directJSONRate: Double { jsonBytes * 1e9 / Double(max(directJSONNanoseconds, 1)) }
    var ratio: Double { proxyRate / max(directRate, 1) }
    var exitedAsExpected: Bool { exitStatus == ProxyBenchProcess.expectedExit }
    var passed: Bool { ratio >= ProxyThroughputFigures.targetRatio && exitedAsExpected && exchangesPrinted == exchangesSent }
}

struct ProxyMemoryFigures: Sendable {
    static let targetPeakBytes = 64 << 20

    var bodyBytes: Int
    var proxyNanoseconds: UInt64
    var directNanoseconds: UInt64
    /// VmHWM of the proxy process: just after it started listening, and after the body.
    var idlePeakBytes: Int
    var peakBytes: Int
    var residentBytes: Int
    var exitStatus: String

    var proxyRate: Double { Double(bodyBytes) * 1e9 / Double(max(proxyNanoseconds, 1)) }
    var directRate: Double { Double(bodyBytes) * 1e9 / Double(max(directNanoseconds, 1)) }
    var ratio: Double { proxyRate / max(directRate, 1) }
    var passed: Bool { peakBytes < ProxyMemoryFigures.targetPeakBytes && exitStatus == ProxyBenchProcess.expectedExit }
}

enum ProxyBench {
    static let mockRequests = 300
    static let smallBody = 1024
    static let delayRequests = 11
    static let rateBody = 5 << 20
    static let rateRuns = 3
    static let clients = 8
    static let requestsPerClient = 32
    static let jsonRequestsPerClient = 256
    static let largeBody = 1 << 20
    static let rounds = 3
    static let hugeBody = 1 << 30

    static func run() throws(BenchError) -> ProxyFigures {
        let server = try ProxyBenchServer.start()
        defer { server.stop() }
        var figures = ProxyFigures()
        // PINCER_BENCH_PROXY=capture (or proxy) runs one half, for profiling.
        let only = getenv("PINCER_BENCH_PROXY").map { String(cString: $0) }
        if only == nil || only == "capture" {
            do {
                let capture = try CaptureSetup(server: server)
                defer { capture.close() }
                do { figures.mock = try mock(capture, server) } catch { figures.mockError = error.message }
                do { figures.delay = try delay(capture, server) } catch { figures.delayError = error.message }
                do { figures.rate = try rate(capture, server) } catch { figures.rateError = error.message }
            } catch {
                figures.captureError = error.message
            }
        }
        if only == nil || only == "proxy" {
            do {
                let pincer = try pincerExecutable()
                do { figures.throughput = try throughput(pincer, server) } catch { figures.throughputError = error.message }
                do { figures.memory = try memory(pincer, server) } catch { figures.memoryError = error.message }
            } catch {
                figures.throughputError = error.message
            }
        }
        return figures
    }

    static func median(_ values: [UInt64]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? Double(sorted[mid]) : (Double(sorted[mid - 1]) + Double(sorted[mid])) / 2
    }

    // MARK: in process, through the capture path

    /// A host with the net plugin, a capturing URLSession, the rule commands.
    final class CaptureSetup {
        let state: TemporaryDirectory
        let host: PincerHost.Host
        let configuration: URLSessionConfiguration
        let session: URLSession
        let addMock: Command
        let addDelay: Command

        init(server: BenchServer) throws(BenchError) {
            state = try TemporaryDirectory(prefix: "pincer-bench-proxy")
            let host: PincerHost.Host
            do throws(BenchError) { host = try BuiltPlugin.host(loading: "net", state: state) } catch {
                state.remove()
                throw error
            }
            self.host = host
            guard let recorder = NetworkRecorder(service: host.service(id: NetworkRecorder.serviceID)), recorder.canIntercept else {
                host.shutdown()
                state.remove()
                throw BenchError("the net plugin published no \(NetworkRecorder.serviceID) service with interception")
            }
            guard let addMock = host.command(named: "net.add-mock"), let addDelay = host.command(named: "net.add-delay") else {
                host.shutdown()
                state.remove()
                throw BenchError("the net plugin has no net.add-mock or net.add-delay command")
            }
            self.addMock = addMock
            self.addDelay = addDelay
            configuration = URLSessionConfiguration.pincerLogged(base: .default, recorder: recorder)
            session = URLSession(configuration: configuration)
        }

        /// The session and the capture's transport go before the host (and its service).
        func close() {
            session.invalidateAndCancel()
            PincerNetworkCapture.stopCapturing(configuration)
            host.shutdown()
            state.remove()
        }

        /// One GET, timed; checks the status and that the body is the pattern's first `bytes`.
        func get(_ url: URL, bytes: Int, what: String) throws(BenchError) -> UInt64 {
            let fetch = CaptureBench.Fetch()
            let start = monotonicNanoseconds()
            let result = fetch.get(session, url)
            let elapsed = monotonicNanoseconds() - start
            guard result.status == 200, let data = result.data, data.count == bytes, ProxyBenchServer.isPattern(data) else {
                throw BenchError("GET \(url.absoluteString) \(what): \(result.error ?? "status \(result.status), \(result.data?.count ?? 0) bytes instead of the \(bytes)-byte body")")
            }
            return elapsed
        }

        func invoke(_ command: Command, _ arguments: [Value]) throws(BenchError) {
            do { _ = try command.invoke(arguments) } catch { throw BenchError("\(command.fullName) failed: \(error)") }
        }
    }

    static func mock(_ capture: CaptureSetup, _ server: BenchServer) throws(BenchError) -> ProxyMockFigures {
        let body = String(decoding: ProxyBenchServer.pattern.prefix(smallBody), as: UTF8.self)
        // add-mock(match, status, body, body_file, content_type, headers, title, position)
        try capture.invoke(capture.addMock, [.string("path:/mocked"), .i64(200), .string(body), .string(""), .string("text/plain"),
                                             .string(""), .string("pincer-bench mock"), .i64(0)])
        let mocked = URL(string: "\(server.origin)/mocked")!
        let served = URL(string: "\(server.origin)/served/\(smallBody)")!
        let answeredBefore = server.requestsAnswered
        for _ in 0..<20 {
            _ = try capture.get(mocked, bytes: smallBody, what: "(mocked)")
            _ = try capture.get(served, bytes: smallBody, what: "(from the server)")
        }
        var mockTimes: [UInt64] = [], serverTimes: [UInt64] = []
        for i in 0..<mockRequests {
            // Alternate which goes first, so neither always follows the other.
            if i % 2 == 0 {
                mockTimes.append(try capture.get(mocked, bytes: smallBody, what: "(mocked)"))
                serverTimes.append(try capture.get(served, bytes: smallBody, what: "(from the server)"))
            } else {
                serverTimes.append(try capture.get(served, bytes: smallBody, what: "(from the server)"))
                mockTimes.append(try capture.get(mocked, bytes: smallBody, what: "(mocked)"))
            }
        }
        let answered = server.requestsAnswered - answeredBefore
        guard answered == mockRequests + 20 else {
            throw BenchError("the server answered \(answered) requests, expected \(mockRequests + 20): the mock must answer /mocked without sending it")
        }
        return ProxyMockFigures(requests: mockRequests, bodyBytes: smallBody, mockNanoseconds: median(mockTimes), serverNanoseconds: median(serverTimes))
    }

    static func delay(_ capture: CaptureSetup, _ server: BenchServer) throws(BenchError) -> ProxyDelayFigures {
        // add-delay(match, preset, latency_ms, jitter_ms, download_kb_s, upload_kb_s, failure_rate, title, position); -1: unset
        try capture.invoke(capture.addDelay, [.string("path:/delayed/*"), .string(""), .f64(ProxyDelayFigures.latencyMs), .f64(-1), .f64(-1),
                                              .f64(-1), .f64(-1), .string("pincer-bench delay"), .i64(0)])
        let delayed = URL(string: "\(server.origin)/delayed/\(smallBody)")!
        let plain = URL(string: "\(server.origin)/plain/\(smallBody)")!
        _ = try capture.get(delayed, bytes: smallBody, what: "(delay rule)")
        _ = try capture.get(plain, bytes: smallBody, what: "(no rule)")
        var delayedTimes: [UInt64] = [], plainTimes: [UInt64] = []
        for _ in 0..<delayRequests {
            plainTimes.append(try capture.get(plain, bytes: smallBody, what: "(no rule)"))
            delayedTimes.append(try capture.get(delayed, bytes: smallBody, what: "(delay rule)"))
        }
        return ProxyDelayFigures(requests: delayRequests, delayedNanoseconds: median(delayedTimes), plainNanoseconds: median(plainTimes),
                                 shortestDelayedNanoseconds: Double(delayedTimes.min() ?? 0), longestDelayedNanoseconds: Double(delayedTimes.max() ?? 0))
    }

    static func rate(_ capture: CaptureSetup, _ server: BenchServer) throws(BenchError) -> ProxyRateFigures {
        let kbPerSecond = ProxyRateFigures.limitBytesPerSecond / 1000
        try capture.invoke(capture.addDelay, [.string("path:/limited/*"), .string(""), .f64(-1), .f64(-1), .f64(kbPerSecond),
                                              .f64(-1), .f64(-1), .string("pincer-bench download rate"), .i64(0)])
        let limited = URL(string: "\(server.origin)/limited/\(rateBody)")!
        let plain = URL(string: "\(server.origin)/plain/\(rateBody)")!
        _ = try capture.get(plain, bytes: rateBody, what: "(no rule)")
        var limitedTimes: [UInt64] = [], plainTimes: [UInt64] = []
        for _ in 0..<rateRuns {
            plainTimes.append(try capture.get(plain, bytes: rateBody, what: "(no rule)"))
            limitedTimes.append(try capture.get(limited, bytes: rateBody, what: "(download rate rule)"))
        }
        return ProxyRateFigures(bodyBytes: rateBody, runs: rateRuns, limitedNanoseconds: median(limitedTimes), plainNanoseconds: median(plainTimes))
    }

    // MARK: the pincer proxy subprocess

    static func pincerExecutable() throws(BenchError) -> String {
        guard let directory = Host.executableDirectory() else { throw BenchError("cannot find this executable's directory") }
        let pincer = "\(directory)/pincer"
        guard access(pincer, X_OK) == 0, access("\(directory)/\(Host.builtinPrefix)net.so", R_OK) == 0 else {
            throw BenchError("\(pincer) and its net plugin are missing; build them beside pincer-bench: swift build -c release")
        }
        return pincer
    }

    /// Shares the clients' failures with the thread that reports them.
    final class Failures: Sendable {
        private let list = Mutex<[String]>([])
        func add(_ message: String) { list.withLock { $0.append(message) } }
        var first: String? { list.withLock { $0.first } }
    }

    /// `clients` threads at once, each `requests` GETs of `bodyBytes`; wall time.
    static func gang(port: UInt16, origin: UInt16?, requests: Int, bodyBytes: Int, newConnectionEach: Bool, kind: ProxyBenchServer.Kind = .text,
                     what: String) throws(BenchError) -> UInt64 {
        let failures = Failures()
        let path = "/\(kind.rawValue)/\(bodyBytes)"
        let request = ProxyBenchClient.request(serverPort: origin == nil ? port : origin!, path: path, absolute: origin != nil)
        let (elapsed, results) = try ThreadGang.run(count: clients) { _ in
            do throws(BenchError) {
                return UInt64(try ProxyBenchClient.fetch(port: port, request: request, count: requests, bodyBytes: bodyBytes, newConnectionEach: newConnectionEach))
            } catch {
                failures.add(error.message)
                return 0
            }
        }
        if let first = failures.first { throw BenchError("\(what): \(first)") }
        let expected = UInt64(clients * requests * bodyBytes)
        let got = results.reduce(0, +)
        guard got == expected else { throw BenchError("\(what): \(got) body bytes received, expected \(expected)") }
        return elapsed
    }

    static func throughput(_ pincer: String, _ server: BenchServer) throws(BenchError) -> ProxyThroughputFigures {
        let proxy = try ProxyBenchProcess(pincer: pincer)
        var stopped = false
        defer { if !stopped { proxy.kill() } }
        let port = proxy.port, sport = server.port
        // Warm-up: a request of each client each way.
        _ = try gang(port: sport, origin: nil, requests: 1, bodyBytes: largeBody, newConnectionEach: false, what: "direct (warm-up)")
        _ = try gang(port: port, origin: sport, requests: 1, bodyBytes: largeBody, newConnectionEach: false, what: "through the proxy (warm-up)")
        _ = try gang(port: port, origin: sport, requests: 1, bodyBytes: largeBody, newConnectionEach: false, kind: .binary,
                     what: "through the proxy, binary bodies (warm-up)")
        let relay = try BareRelay(to: sport)
        defer { relay.stop() }
        _ = try gang(port: relay.port, origin: nil, requests: 1, bodyBytes: largeBody, newConnectionEach: false, what: "through a bare relay (warm-up)")
        var best = (proxy: UInt64.max, direct: UInt64.max, fresh: UInt64.max, binary: UInt64.max, relay: UInt64.max)
        for _ in 0..<rounds {
            best.relay = min(best.relay, try gang(port: relay.port, origin: nil, requests: requestsPerClient, bodyBytes: largeBody,
                                                  newConnectionEach: false, what: "through a bare relay"))
            best.direct = min(best.direct, try gang(port: sport, origin: nil, requests: requestsPerClient, bodyBytes: largeBody,
                                                    newConnectionEach: false, what: "direct"))
            best.proxy = min(best.proxy, try gang(port: port, origin: sport, requests: requestsPerClient, bodyBytes: largeBody,
                                                  newConnectionEach: false, what: "through the proxy"))
            best.fresh = min(best.fresh, try gang(port: sport, origin: nil, requests: requestsPerClient, bodyBytes: largeBody,
                                                  newConnectionEach: true, what: "direct, a connection per request"))
            best.binary = min(best.binary, try gang(port: port, origin: sport, requests: requestsPerClient, bodyBytes: largeBody,
                                                    newConnectionEach: false, kind: .binary, what: "through the proxy, binary bodies"))
        }
        // API-sized JSON bodies, which the log parses to redact them.
        let json = ProxyBenchServer.jsonBody.count
        _ = try gang(port: port, origin: sport, requests: 1, bodyBytes: json, newConnectionEach: false, kind: .json, what: "through the proxy, JSON (warm-up)")
        var bestJSON = (proxy: UInt64.max, direct: UInt64.max)
        for _ in 0..<rounds {
            bestJSON.direct = min(bestJSON.direct, try gang(port: sport, origin: nil, requests: jsonRequestsPerClient, bodyBytes: json,
                                                            newConnectionEach: false, kind: .json, what: "direct, JSON"))
            bestJSON.proxy = min(bestJSON.proxy, try gang(port: port, origin: sport, requests: jsonRequestsPerClient, bodyBytes: json,
                                                          newConnectionEach: false, kind: .json, what: "through the proxy, JSON"))
        }
        let sent = clients * 2 * (1 + rounds * requestsPerClient) + clients * (1 + rounds * jsonRequestsPerClient)
        let (status, printed) = try proxy.stop()
        stopped = true
        return ProxyThroughputFigures(clients: clients, requestsPerClient: requestsPerClient, bodyBytes: largeBody, rounds: rounds,
                                      proxyNanoseconds: best.proxy, directNanoseconds: best.direct, directNewConnectionNanoseconds: best.fresh,
                                      proxyBinaryNanoseconds: best.binary, relayNanoseconds: best.relay,
                                      jsonBodyBytes: json, jsonRequestsPerClient: jsonRequestsPerClient,
                                      proxyJSONNanoseconds: bestJSON.proxy, directJSONNanoseconds: bestJSON.direct,
                                      exchangesSent: sent, exchangesPrinted: printed, exitStatus: status)
    }

    static func memory(_ pincer: String, _ server: BenchServer) throws(BenchError) -> ProxyMemoryFigures {
        let sport = server.port
        let directRequest = ProxyBenchClient.request(serverPort: sport, path: "/bytes/\(hugeBody)", absolute: false)
        let directStart = monotonicNanoseconds()
        _ = try ProxyBenchClient.fetch(port: sport, request: directRequest, count: 1, bodyBytes: hugeBody, newConnectionEach: true)
        let direct = monotonicNanoseconds() - directStart

        // A proxy of its own, so its peak is this body's alone.
        let proxy = try ProxyBenchProcess(pincer: pincer)
        var stopped = false
        defer { if !stopped { proxy.kill() } }
        guard let idle = proxy.status("VmHWM") else { throw BenchError("cannot read VmHWM from /proc/\(proxy.pid)/status") }
        let request = ProxyBenchClient.request(serverPort: sport, path: "/bytes/\(hugeBody)", absolute: true)
        let start = monotonicNanoseconds()
        _ = try ProxyBenchClient.fetch(port: proxy.port, request: request, count: 1, bodyBytes: hugeBody, newConnectionEach: true)
        let elapsed = monotonicNanoseconds() - start
        guard let peak = proxy.status("VmHWM"), let resident = proxy.status("VmRSS") else {
            throw BenchError("cannot read VmHWM from /proc/\(proxy.pid)/status")
        }
        let (status, _) = try proxy.stop()
        stopped = true
        return ProxyMemoryFigures(bodyBytes: hugeBody, proxyNanoseconds: elapsed, directNanoseconds: direct, idlePeakBytes: idle,
                                  peakBytes: peak, residentBytes: resident, exitStatus: status)
    }
}

// MARK: - the pincer proxy subprocess

/// `pincer proxy --port 0 --json` with PINCER_STATE_DIR a new temporary
/// directory, stdout read continuously (its first line says the port, then
/// one NDJSON line per exchange, counted), stderr into a file for errors.
final class ProxyBenchProcess: @unchecked Sendable {
    /// What `pincer` exits with when Ctrl-C (SIGINT) stops a command.
    static let expectedExit = "status 6"

    let pid: pid_t
    let port: UInt16
    private let state: TemporaryDirectory
    private let output: Int32
    private var drainer = pthread_t()
    private var drainerStarted = false
    /// Exchange lines ({"id":...}) read after the first line, and the start
    /// of the line being read (written by the drainer, read after its join).
    private var exchanges = 0
    private var current: [UInt8] = []
    private static let exchangeStart = Array(#"{"id":"#.utf8)
    private var stderrPath: String { "\(state.path)/proxy.stderr" }

    init(pincer: String) throws(BenchError) {
        state = try TemporaryDirectory(prefix: "pincer-bench-proxy-state")
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            state.remove()
            throw BenchError("pipe: \(String(cString: strerror(errno)))")
        }
        // Neither end stays open in the child but as its stdout (dup2 clears the flag).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "\(state.path)/proxy.stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var environment: [String] = []
        var i = 0
        while let entry = environ[i] {
            let text = String(cString: entry)
            if !text.hasPrefix("PINCER_STATE_DIR=") { environment.append(text) }
            i += 1
        }
        environment.append("PINCER_STATE_DIR=\(state.path)")
        let arguments: [String] = [pincer, "proxy", "--port", "0", "--json"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child = pid_t()
        let rc = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in posix_spawn(&child, pincer, &actions, nil, a.baseAddress!, e.baseAddress!) }
        }
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            state.remove()
            throw BenchError("posix_spawn \(pincer): \(String(cString: strerror(rc)))")
        }
        pid = child
        output = fds[0]
        // The first line: {"listening":"127.0.0.1:PORT","port":PORT}.
        let reader = fds[0]
        var line: [UInt8] = []
        var found: UInt16?
        var rest: ArraySlice<UInt8> = []
        let deadline = monotonicNanoseconds() + 30_000_000_000
        var buffer = [UInt8](repeating: 0, count: 4096)
        reading: while found == nil {
            let now = monotonicNanoseconds()
            var p = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            let ready = now < deadline ? poll(&p, 1, Int32((deadline - now) / 1_000_000)) : 0
            if ready < 0 && errno == EINTR { continue }
            let n = ready > 0 ? buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) } : 0
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            var start = 0
            for j in 0..<n where buffer[j] == 10 {
                line += buffer[start..<j]
                start = j + 1
                if let json = try? JSON.parse(bytes: line), let port = json["port"]?.int64Value, (1...65535).contains(port) {
                    found = UInt16(port)
                    rest = buffer[start..<n]
                    break reading
                }
                line = []
            }
            line += buffer[start..<n]
        }
        guard let found else {
            Glibc.kill(child, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
            let why = String(decoding: ((try? readFileBytes("\(state.path)/proxy.stderr")) ?? []).suffix(400), as: UTF8.self)
            close(fds[0])
            state.remove()
            throw BenchError("`pincer proxy --port 0 --json` printed no {\"port\":...} line within 30 s (\(describeWaitStatus(status))): \(why)")
        }
        port = found
        count(rest)
        let rc2 = pthread_create(&drainer, nil, { raw in
            Unmanaged<ProxyBenchProcess>.fromOpaque(raw!).takeUnretainedValue().drain()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        guard rc2 == 0 else {
            kill()
            throw BenchError("pthread_create for the proxy's output reader: \(String(cString: strerror(rc2)))")
        }
        drainerStarted = true
    }

    /// Reads stdout to its end, counting exchange lines, so the pipe never fills.
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            count(buffer[0..<n])
        }
    }

    /// Counts the lines that start as an exchange's ({"id":...}); the
    /// command's own last line ({"command":"net.proxy",...}) is not one.
    private func count(_ bytes: ArraySlice<UInt8>) {
        let prefix = ProxyBenchProcess.exchangeStart
        for byte in bytes {
            if byte == 10 {
                if current.elementsEqual(prefix) { exchanges += 1 }
                current.removeAll(keepingCapacity: true)
            } else if current.count < prefix.count {
                current.append(byte)
            }
        }
    }

    /// A figure of /proc/PID/status ("VmHWM", "VmRSS") in bytes.
    func status(_ field: String) -> Int? {
        guard let bytes = try? readProcFile("/proc/\(pid)/status") else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kB = Int(parts[1]) else { return nil }
            return kB * 1024
        }
        return nil
    }

    /// /proc files report a size of 0: read until the end.
    private func readProcFile(_ path: String) throws(BenchError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("cannot open \(path)") }
        defer { close(fd) }
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            all += chunk[0..<n]
        }
        return all
    }

    /// SIGINT (Ctrl-C), then its exit (at most 10 s); the wait status as
    /// text and the exchange lines it printed.
    func stop() throws(BenchError) -> (String, Int) {
        Glibc.kill(pid, SIGINT)
        var status: Int32 = 0
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw BenchError("waitpid \(pid): \(String(cString: strerror(errno)))") }
            if monotonicNanoseconds() > deadline {
                kill()
                throw BenchError("`pincer proxy` did not exit within 10 s of SIGINT")
            }
            usleep(5_000)
        }
        finish()
        let printed = exchanges
        let text = describeWaitStatus(status)
        if text != ProxyBenchProcess.expectedExit {
            let why = String(decoding: ((try? readFileBytes(stderrPath)) ?? []).suffix(300), as: UTF8.self)
            printError("pincer-bench: proxy: `pincer proxy` exited with \(text), expected \(ProxyBenchProcess.expectedExit): \(why)")
        }
        state.remove()
        return (text, printed)
    }

    /// Ends it at once (a measurement failed).
    func kill() {
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        finish()
        state.remove()
    }

    private func finish() {
        if drainerStarted {
            pthread_join(drainer, nil)
            drainerStarted = false
        }
        close(output)
    }
}

// MARK: - socket clients

/// HTTP/1.1 GETs over plain POSIX sockets: origin-form to a server,
/// absolute-form to a proxy; each body read and thrown away.
enum ProxyBenchClient {
    static func request(serverPort: UInt16, path: String, absolute: Bool) -> [UInt8] {
        let target = absolute ? "http://127.0.0.1:\(serverPort)\(path)" : path
        return Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(serverPort)\r\nUser-Agent: pincer-bench\r\nAccept: */*\r\n\r\n".utf8)
    }

    static func connect(port: UInt16) throws(BenchError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(BenchServer.lastError())") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let message = BenchServer.lastError()
            close(fd)
            throw BenchError("connect to 127.0.0.1:\(port): \(message)")
        }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// `count` GETs on one keep-alive connection (or a new one each); each
    /// answer must be 200 with a Content-Length of `bodyBytes`. Body bytes read.
    static func fetch(port: UInt16, request: [UInt8], count: Int, bodyBytes: Int, newConnectionEach: Bool) throws(BenchError) -> Int {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var fd: Int32 = -1
        defer { if fd >= 0 { close(fd) } }
        var total = 0
        for _ in 0..<count {
            if fd < 0 { fd = try connect(port: port) }
            guard BenchServer.send(fd, request) else { throw BenchError("sending to 127.0.0.1:\(port): \(BenchServer.lastError())") }
            // The head, then the body, counted as it is thrown away.
            var filled = 0
            var headEnd: Int?
            while headEnd == nil {
                guard filled < buffer.count else { throw BenchError("a response head over \(buffer.count) bytes") }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, $0.count - filled, 0) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw BenchError("127.0.0.1:\(port) closed the connection before a response head (\(n < 0 ? BenchServer.lastError() : "end of stream"))") }
                let from = max(0, filled - 3)
                filled += n
                var i = from + 3
                while i < filled {
                    if buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 { headEnd = i + 1; break }
                    i += 1
                }
            }
            let end = headEnd!
            let head = String(decoding: buffer[0..<end], as: UTF8.self)
            let lines = head.split(separator: "\r\n")
            guard let statusLine = lines.first, statusLine.split(separator: " ").dropFirst().first == "200" else {
                throw BenchError("answer: \(lines.first ?? "") \(String(decoding: buffer[end..<filled].prefix(200), as: UTF8.self))")
            }
            var length: Int?
            var closes = false
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if name == "content-length" { length = Int(value) }
                if name == "connection", value.lowercased().contains("close") { closes = true }
            }
            guard length == bodyBytes else { throw BenchError("answer with Content-Length \(length.map(String.init) ?? "(none)"), expected \(bodyBytes)") }
            var got = filled - end
            guard got <= bodyBytes else { throw BenchError("more bytes than the Content-Length") }
            while got < bodyBytes {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, bodyBytes - got), 0) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw BenchError("the connection ended \(bodyBytes - got) bytes before the end of the body") }
                got += n
            }
            total += got
            if newConnectionEach || closes {
                close(fd)
                fd = -1
            }
        }
        return total
    }
}

// MARK: - the loopback server

/// What the proxy part's server (BenchServer) answers: GET /<anything>/N
/// answers 200 with N bytes of `pattern` repeated (/binary/N: of
/// `binaryPattern`), written from the one buffer (never held whole).
enum ProxyBenchServer {
    /// 1 MiB of printable ASCII, 64 bytes repeated (so a mock can hold it as text).
    static let pattern: [UInt8] = {
        let unit = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 << 20)
        while bytes.count < 1 << 20 { bytes += unit }
        return bytes
    }()
    /// 1 MiB of bytes that are not text (SplitMix64), which the log's redactor does not scan.
    static let binaryPattern: [UInt8] = {
        var random = SplitMix64(seed: 0xb1_a7)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 << 20)
        while bytes.count < 1 << 20 {
            let v = random.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
        }
        return bytes
    }()
    /// An API's JSON answer of about 64 KiB: 400 small objects in an array.
    static let jsonBody: [UInt8] = {
        let items = (1...400).map { n in
            #"{"id":\#(n),"name":"Item \#(n)","price":\#(n % 97).5,"inStock":\#(n % 3 != 0),"tags":["sale","new"],"updatedAt":"2026-12-03T10:00:00Z","description":"A plain description of item number \#(n) for the catalogue page."}"#
        }
        return Array(("{\"items\":[" + items.joined(separator: ",") + "],\"page\":1}").utf8)
    }()

    /// What a path asks for: /bytes/N (text), /binary/N, /json/N (N: jsonBody's size).
    enum Kind: String, Sendable {
        case text = "bytes", binary, json
    }

    static let notFound = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8)

    /// Whether `data` is the start of the pattern.
    static func isPattern(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            pattern.withUnsafeBytes { p in
                var offset = 0
                while offset < raw.count {
                    let n = min(p.count, raw.count - offset)
                    if memcmp(raw.baseAddress! + offset, p.baseAddress!, n) != 0 { return false }
                    offset += n
                }
                return true
            }
        }
    }

    /// The server: BenchServer with this part's answers.
    static func start() throws(BenchError) -> BenchServer {
        _ = pattern
        _ = binaryPattern
        _ = jsonBody
        return try BenchServer(answer: answer)
    }

    /// "GET /x/N HTTP/1.1": N bytes.
    static let answer: BenchServer.Answer = { fd, target, close in
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let size = path.split(separator: "/").last.flatMap({ Int($0) }), size >= 0 else {
            return BenchServer.send(fd, notFound)
        }
        let binary = path.hasPrefix("/binary/"), json = path.hasPrefix("/json/")
        if json && size != jsonBody.count { return BenchServer.send(fd, notFound) }
        let body = binary ? binaryPattern : json ? jsonBody : pattern
        let type = binary ? "application/octet-stream" : json ? "application/json" : "text/plain"
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Length: \(size)\r\nConnection: \(close ? "close" : "keep-alive")\r\n\r\n".utf8)
        if size <= 64 << 10 { return BenchServer.send(fd, head + body[0..<size]) }
        guard BenchServer.send(fd, head) else { return false }
        var left = size
        return body.withUnsafeBytes { p -> Bool in
            while left > 0 {
                let n = min(left, p.count)
                guard BenchServer.send(fd, UnsafeRawBufferPointer(rebasing: p[0..<n])) else { return false }
                left -= n
            }
            return true
        }
    }
}

// MARK: - report

extension Report {
    func proxyText(_ p: ProxyFigures, row: (String, String, String, String) -> String) -> [String] {
        var lines: [String] = []
        var part = "proxy"
        func add(_ label: String, _ value: String, _ note: String = "") {
            lines.append(row(part, label, value, note))
            part = ""
        }
        func us(_ ns: Double) -> String { "\(Format.fixed(ns / 1000, 1)) us" }
        func ms(_ ns: Double) -> String { "\(Format.fixed(ns / 1e6, 2)) ms" }
        func mbps(_ rate: Double) -> String { "\(Format.short(rate / 1e6)) MB/s" }
        func mib(_ bytes: Int) -> String { "\(Format.fixed(Double(bytes) / 1_048_576, 1)) MiB" }
        if let m = p.mock {
            add("GET answered by a mock rule, 1 KiB", us(m.mockNanoseconds), "(median of \(m.requests); path:/mocked, 200, \(m.bodyBytes) B: nothing sent)")
            add("same GET, loopback server (baseline)", us(m.serverNanoseconds), "(median of \(m.requests); \(m.bodyBytes) B from the server)")
            add("ratio mock/server (time)", Format.ratio(m.ratio), "printed, no target")
            lines.append("          in process: URLSession (pincerLogged) capture -> recording + rules (pincer.network/1) -> the mock's answer,")
            lines.append("          against capture -> recording + rules -> libcurl -> loopback server; alternated, each body checked")
        }
        if let d = p.delay {
            if !lines.isEmpty { lines.append("") }
            add("delay rule 200 ms: time added", "\(Format.fixed(d.addedMs, 2)) ms",
                "target: \(Format.fixed(ProxyDelayFigures.latencyMs, 0)) +- \(Format.fixed(ProxyDelayFigures.toleranceMs, 0)) ms  \(Report.verdict(d.passed))")
            add("GET, delay rule (median)", ms(d.delayedNanoseconds), "(shortest \(ms(d.shortestDelayedNanoseconds)), longest \(ms(d.longestDelayedNanoseconds)))")
            add("same GET, no rule matching (baseline)", ms(d.plainNanoseconds), "(median)")
            add("ratio delay/no rule (time)", Format.ratio(d.ratio))
            lines.append("          in process: URLSession capture -> rules (net.add-delay --latency-ms 200 on path:/delayed/*) -> libcurl ->")
            lines.append("          loopback server, 1 KiB; \(d.requests) of each alternated with /plain/ (no rule); added = difference of the medians")
        }
        if let r = p.rate {
            if !lines.isEmpty { lines.append("") }
            let target = "target: \(Format.short(ProxyRateFigures.limitBytesPerSecond / 1e6)) MB/s +- \(Format.fixed(ProxyRateFigures.tolerance * 100, 0)) %"
            add("download rule 2,000 KB/s, 5 MiB body", "\(Format.fixed(r.limitedRate, 0)) B/s",
                "\(Format.fixed(r.ratioToLimit, 3))x the rate; \(target)  \(Report.verdict(r.passed))")
            add("same GET, no rule matching (baseline)", mbps(r.plainRate), "(\(ms(r.plainNanoseconds)) per request)")
            add("ratio limited/no rule (rate)", "\(Format.fixed(r.ratio, 4))x", "(\(ms(r.limitedNanoseconds)) per limited request)")
            lines.append("          in process: URLSession capture -> rules (net.add-delay --download-kb-s 2000 on path:/limited/*) -> libcurl,")
            lines.append("          paced by pausing it -> loopback server; \(r.runs) of each, medians; rate = body bytes / wall time of the request")
        }
        if let t = p.throughput {
            if !lines.isEmpty { lines.append("") }
            add("pincer proxy: \(t.clients) clients x 1 MiB text GETs", mbps(t.proxyRate), "(\(Format.fixed(Double(t.proxyNanoseconds) / 1e6, 0)) ms a round)")
            add("same clients, direct (baseline)", mbps(t.directRate), "(\(Format.fixed(Double(t.directNanoseconds) / 1e6, 0)) ms a round)")
            add("ratio proxy/direct (rate)", Format.ratio(t.ratio),
                "target: >= \(Format.fixed(ProxyThroughputFigures.targetRatio, 1))x  \(Report.verdict(t.ratio >= ProxyThroughputFigures.targetRatio))")
            add("info: direct, a connection per request", mbps(t.directNewConnectionRate), "(what each exchange would cost without the server connection the proxy keeps)")
            add("info: proxy, binary 1 MiB bodies", mbps(t.proxyBinaryRate),
                "(\(Format.ratio(t.proxyBinaryRate / max(t.directRate, 1))) direct: bytes the log's redactor does not scan, as it does text)")
            add("info: proxy, \(Format.fixed(Double(t.jsonBodyBytes) / 1024, 0)) KiB JSON bodies", mbps(t.proxyJSONRate),
                "(\(Format.ratio(t.proxyJSONRate / max(t.directJSONRate, 1))) the same direct, \(mbps(t.directJSONRate)); \(t.jsonRequestsPerClient) GETs a client)")
            add("info: a bare TCP relay, no proxy", mbps(t.relayRate),
                "(\(Format.ratio(t.relayRate / max(t.directRate, 1))) direct: one more hop that only moves bytes, a ceiling for any proxy)")
            lines.append("          whole command: `pincer proxy --port 0 --json` subprocess (PINCER_STATE_DIR a new directory), \(t.clients) socket client")
            lines.append("          threads at once, each \(t.requestsPerClient) GETs of 1 MiB per round on one keep-alive connection: absolute-form to the proxy")
            lines.append("          (which keeps each client's server connection for its next GET), origin-form to the server; best of \(t.rounds) rounds,")
            lines.append("          interleaved; MB = 10^6 bytes; \(t.exchangesPrinted) NDJSON lines for \(t.exchangesSent) exchanges; SIGINT: \(t.exitStatus)")
            if t.exchangesPrinted != t.exchangesSent { add("FAIL: the proxy printed \(t.exchangesPrinted) exchanges, \(t.exchangesSent) were sent", "", "FAIL") }
            if !t.exitedAsExpected { add("FAIL: the proxy exited with \(t.exitStatus), expected \(ProxyBenchProcess.expectedExit)", "", "FAIL") }
        }
        if let m = p.memory {
            if !lines.isEmpty { lines.append("") }
            add("pincer proxy, 1 GiB to one client: VmHWM", mib(m.peakBytes),
                "target: < \(mib(ProxyMemoryFigures.targetPeakBytes))  \(Report.verdict(m.peakBytes < ProxyMemoryFigures.targetPeakBytes))")
            add("its VmHWM once listening (baseline)", mib(m.idlePeakBytes), "(ratio \(Format.ratio(Double(m.peakBytes) / Double(max(m.idlePeakBytes, 1)))); VmRSS after: \(mib(m.residentBytes)))")
            add("1 GiB through the proxy", mbps(m.proxyRate), "(\(Format.fixed(Double(m.proxyNanoseconds) / 1e9, 2)) s)")
            add("1 GiB direct from the server (baseline)", mbps(m.directRate), "(\(Format.fixed(Double(m.directNanoseconds) / 1e9, 2)) s; ratio proxy/direct \(Format.ratio(m.ratio)))")
            lines.append("          whole command: a new `pincer proxy` subprocess; one socket client reads a 1 GiB body (made by the server as it is")
            lines.append("          sent, Content-Length) and throws it away; VmHWM of the proxy process alone (/proc/PID/status); SIGINT: \(m.exitStatus)")
            if m.exitStatus != ProxyBenchProcess.expectedExit { add("FAIL: the proxy exited with \(m.exitStatus), expected \(ProxyBenchProcess.expectedExit)", "", "FAIL") }
        }
        for (what, message) in p.errors {
            if !lines.isEmpty { lines.append("") }
            add("error: \(what): \(message)", "", "FAIL")
        }
        return lines
    }

    func proxyJSON(_ p: ProxyFigures) -> JSON {
        var members: [(String, JSON)] = []
        if let m = p.mock {
            members.append(("mock", .object([
                ("requests", .int(Int64(m.requests))), ("body_bytes", .int(Int64(m.bodyBytes))),
                ("mock_median_us", .rounded(m.mockNanoseconds / 1000, 2)), ("server_median_us", .rounded(m.serverNanoseconds / 1000, 2)),
                ("ratio_mock_over_server", .rounded(m.ratio, 3)), ("info", .bool(true)),
            ])))
        }
        if let d = p.delay {
            members.append(("delay", .object([
                ("requests", .int(Int64(d.requests))), ("latency_ms", .double(ProxyDelayFigures.latencyMs)),
                ("delayed_median_ms", .rounded(d.delayedNanoseconds / 1e6, 3)), ("plain_median_ms", .rounded(d.plainNanoseconds / 1e6, 3)),
                ("added_ms", .rounded(d.addedMs, 3)), ("ratio_delayed_over_plain", .rounded(d.ratio, 3)),
                ("tolerance_ms", .double(ProxyDelayFigures.toleranceMs)), ("pass", .bool(d.passed)),
            ])))
        }
        if let r = p.rate {
            members.append(("download_rate", .object([
                ("body_bytes", .int(Int64(r.bodyBytes))), ("runs", .int(Int64(r.runs))),
                ("limit_bytes_per_second", .double(ProxyRateFigures.limitBytesPerSecond)),
                ("limited_bytes_per_second", .rounded(r.limitedRate, 0)), ("plain_bytes_per_second", .rounded(r.plainRate, 0)),
                ("ratio_to_limit", .rounded(r.ratioToLimit, 4)), ("ratio_limited_over_plain", .rounded(r.ratio, 5)),
                ("tolerance", .double(ProxyRateFigures.tolerance)), ("pass", .bool(r.passed)),
            ])))
        }
        if let t = p.throughput {
            members.append(("throughput", .object([
                ("clients", .int(Int64(t.clients))), ("requests_per_client", .int(Int64(t.requestsPerClient))),
                ("body_bytes", .int(Int64(t.bodyBytes))), ("rounds", .int(Int64(t.rounds))),
                ("proxy_mb_per_second", .rounded(t.proxyRate / 1e6, 1)), ("direct_mb_per_second", .rounded(t.directRate / 1e6, 1)),
                ("direct_new_connection_mb_per_second", .rounded(t.directNewConnectionRate / 1e6, 1)),
                ("bare_relay_mb_per_second", .rounded(t.relayRate / 1e6, 1)),
                ("json_body_bytes", .int(Int64(t.jsonBodyBytes))),
                ("json_proxy_mb_per_second", .rounded(t.proxyJSONRate / 1e6, 1)), ("json_direct_mb_per_second", .rounded(t.directJSONRate / 1e6, 1)),
                ("proxy_binary_bodies_mb_per_second", .rounded(t.proxyBinaryRate / 1e6, 1)),
                ("ratio_proxy_over_direct", .rounded(t.ratio, 3)), ("target_ratio", .double(ProxyThroughputFigures.targetRatio)),
                ("exchanges_sent", .int(Int64(t.exchangesSent))), ("exchanges_printed", .int(Int64(t.exchangesPrinted))),
                ("exit", .string(t.exitStatus)), ("pass", .bool(t.passed)),
            ])))
        }
        if let m = p.memory {
            members.append(("memory", .object([
                ("body_bytes", .int(Int64(m.bodyBytes))), ("peak_rss_bytes", .int(Int64(m.peakBytes))),
                ("idle_peak_rss_bytes", .int(Int64(m.idlePeakBytes))), ("rss_after_bytes", .int(Int64(m.residentBytes))),
                ("proxy_seconds", .rounded(Double(m.proxyNanoseconds) / 1e9, 3)), ("proxy_mb_per_second", .rounded(m.proxyRate / 1e6, 1)),
                ("direct_seconds", .rounded(Double(m.directNanoseconds) / 1e9, 3)), ("direct_mb_per_second", .rounded(m.directRate / 1e6, 1)),
                ("target_peak_rss_bytes", .int(Int64(ProxyMemoryFigures.targetPeakBytes))), ("exit", .string(m.exitStatus)),
                ("pass", .bool(m.passed)),
            ])))
        }
        for (what, message) in p.errors {
            members.append((what.replacingOccurrences(of: " ", with: "_") + "_error", .string(message)))
        }
        members.append(("pass", .bool(p.passed)))
        return .object(members)
    }
}
