// Net: the network logger's costs, each against a baseline from this run.
//
// - capture: sequential small GETs to a loopback server (BenchServer.swift)
//   with a URLSession whose configuration logs through the real `net`
//   plugin's "pincer.network/1" service, against the same requests with the
//   default configuration;
// - HAR: export of 10,000 realistic entries to a file exactly as
//   `net.export-har` writes it (HARExport.writeFile: streamed into a
//   temporary file, fsync, rename over the path), and import of that file;
// - append: begin+complete into a store already at its entry bound (every
//   append evicts the oldest entry) against the same appends below the bound.
//
// URLSession is Foundation's, so this file (alone in pincer-bench, with
// StartupBench's process launching) imports Foundation.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkLog
import PincerHost
import PincerNetworkCapture
#if canImport(Glibc)
import Glibc
#endif

struct NetFigures: Sendable {
    var capture: CaptureFigures?
    var captureError: String?
    var har: HARFigures?
    var harError: String?
    var append: AppendFigures?
    var appendError: String?
    var speed: HARSpeedFigures?
    var speedError: String?

    var errors: [(part: String, message: String)] {
        [("capture", captureError), ("har", harError), ("append", appendError), ("har at size", speedError)].compactMap { part, message in
            message.map { (part, $0) }
        }
    }

    /// Every measurement ran and the capture and HAR targets were met (append is information).
    var passed: Bool {
        errors.isEmpty && (capture?.passed ?? true) && (har?.passed ?? true) && (speed?.passed ?? true)
    }
}

struct CaptureFigures: Sendable {
    static let targetRatio = 1.2

    var requests: Int
    var rounds: Int
    /// Best round, wall nanoseconds for `requests` sequential requests.
    var baselineNanoseconds: UInt64
    var captureNanoseconds: UInt64
    /// Information: the capture protocol and its transport with no
    /// stage at all (nothing recorded), to split the overhead.
    var pipelineNanoseconds: UInt64
    /// Entries the log held after the last capture round (it is bounded) and its bound.
    var loggedEntries: Int
    var entryLimit: Int
    /// Requests the server answered in all (warm-up and checks included) and connections it accepted.
    var serverRequests: Int
    var serverConnections: Int

    var baselineRate: Double { Double(requests) * 1e9 / Double(max(baselineNanoseconds, 1)) }
    var captureRate: Double { Double(requests) * 1e9 / Double(max(captureNanoseconds, 1)) }
    var baselineMilliseconds: Double { Double(baselineNanoseconds) / 1e6 / Double(requests) }
    var captureMilliseconds: Double { Double(captureNanoseconds) / 1e6 / Double(requests) }
    var pipelineRate: Double { Double(requests) * 1e9 / Double(max(pipelineNanoseconds, 1)) }
    var pipelineMilliseconds: Double { Double(pipelineNanoseconds) / 1e6 / Double(requests) }
    var pipelineRatio: Double { Double(pipelineNanoseconds) / Double(max(baselineNanoseconds, 1)) }
    /// Capture time over baseline time: 1.0 means free.
    var ratio: Double { Double(captureNanoseconds) / Double(max(baselineNanoseconds, 1)) }
    var passed: Bool { ratio <= CaptureFigures.targetRatio }
}

struct HARFigures: Sendable {
    static let targetSeconds = 0.5

    var entries: Int
    var rounds: Int
    var fileBytes: Int
    /// Best round: HARExport.writeFile, what net.export-har does: the
    /// document streamed into a temporary file, fsync, rename over the path.
    var exportNanoseconds: UInt64
    /// Best round: reading the file, then HARImport.read.
    var importNanoseconds: UInt64
    /// Entries the import gave back.
    var importedEntries: Int
    /// Untimed by the target: store.add (redaction) of the entries, once.
    var addNanoseconds: UInt64
    var failedEntries: Int
    var binaryEntries: Int

    var exportSeconds: Double { Double(exportNanoseconds) / 1e9 }
    var importSeconds: Double { Double(importNanoseconds) / 1e9 }
    var passed: Bool {
        importedEntries == entries && exportSeconds < HARFigures.targetSeconds && importSeconds < HARFigures.targetSeconds
    }
}

struct AppendFigures: Sendable {
    var appends: Int
    var rounds: Int
    /// The default bound; its store starts full, so every append evicts.
    var bound: Int
    /// The large bound: an empty store (no eviction) and a full one.
    var largeBound: Int
    var atBoundNanoseconds: UInt64
    var belowBoundNanoseconds: UInt64
    var largeAtBoundNanoseconds: UInt64

    private func rate(_ ns: UInt64) -> Double { Double(appends) * 1e9 / Double(max(ns, 1)) }
    var atBoundRate: Double { rate(atBoundNanoseconds) }
    var belowBoundRate: Double { rate(belowBoundNanoseconds) }
    var largeAtBoundRate: Double { rate(largeAtBoundNanoseconds) }
    /// Time with eviction over time without: about 1 when eviction is O(1).
    var ratio: Double { Double(atBoundNanoseconds) / Double(max(belowBoundNanoseconds, 1)) }
    var largeRatio: Double { Double(largeAtBoundNanoseconds) / Double(max(belowBoundNanoseconds, 1)) }

    /// Up to this, appending at a bound (every append evicts) counts as
    /// costing what an append below it does: noise and cache effects, not
    /// work that grows with the log.
    static let constantRatio = 1.5

    /// What the measured ratios say about eviction, both bounds considered.
    var verdict: String {
        let worst = max(ratio, largeRatio)
        let bound = worst == ratio ? self.bound : largeBound
        if worst <= AppendFigures.constantRatio {
            return "eviction looks O(1): at either bound an append costs at most \(Format.ratio(worst)) one below it (<= \(Format.ratio(AppendFigures.constantRatio)))"
        }
        return "eviction is NOT free: full at \(bound) an append costs \(Format.ratio(worst)) one below the bound (> \(Format.ratio(AppendFigures.constantRatio)))"
    }
}

enum NetBench {
    static let rounds = 5

    static func run(requests: Int) -> NetFigures {
        var figures = NetFigures()
        // PINCER_BENCH_NET=har (or capture, append, speed) runs one piece, for profiling.
        let only = getenv("PINCER_BENCH_NET").map { String(cString: $0) }
        if only == nil || only == "capture" {
            do { figures.capture = try CaptureBench.run(requests: requests) } catch { figures.captureError = error.message }
        }
        if only == nil || only == "har" {
            do { figures.har = try HARBench.run(entries: HARBench.entryCount) } catch { figures.harError = error.message }
        }
        if only == nil || only == "append" {
            do { figures.append = try AppendBench.run(appends: AppendBench.appendCount) } catch { figures.appendError = error.message }
        }
        if only == nil || only == "speed" {
            do { figures.speed = try HARSpeedBench.run() } catch { figures.speedError = error.message }
        }
        if only == "hold" {
            // Only the in-process holding figure (seconds instead of a minute and a half), printed here.
            let h = HARSpeedBench.holding()
            let line = "hold: \(h.entries) entries, RSS growth \(h.held - h.empty) B for \(h.stored) stored B (\(h.bodies) of bodies): "
                + "\(Format.ratio(Double(h.held - h.empty) / Double(max(h.stored, 1)))); after clear \(h.cleared - h.empty) B above empty\n"
            _ = Array(line.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        return figures
    }

    static func headers(_ pairs: [(String, String)]) -> [Header] {
        pairs.map { Header($0.0, $0.1) }
    }
}

// MARK: - capture

enum CaptureBench {
    static func run(requests: Int) throws(BenchError) -> CaptureFigures {
        let state = try TemporaryDirectory(prefix: "pincer-bench-net")
        defer { state.remove() }
        let host = try BuiltPlugin.host(loading: "net", state: state)
        defer { host.shutdown() }
        guard let recorder = NetworkRecorder(service: host.service(id: NetworkRecorder.serviceID)) else {
            throw BenchError("the net plugin loaded but published no usable \(NetworkRecorder.serviceID) service (plugins: \(host.plugins.map(\.id).joined(separator: ", ")))")
        }
        guard let list = host.command(named: "net.list"), let clear = host.command(named: "net.clear") else {
            throw BenchError("the net plugin has no net.list or net.clear command")
        }

        let server = try BenchServer()
        defer { server.stop() }
        let urls = (0..<requests).map { URL(string: "\(server.origin)/api/items?page=\($0)&limit=20")! }

        let plainConfiguration = URLSessionConfiguration.default
        let captureConfiguration = PincerNetworkCapture.configuration(base: .default, recorder: recorder)
        let pipelineConfiguration = PincerNetworkCapture.configuration(base: .default, stages: [])
        let plain = URLSession(configuration: plainConfiguration)
        let capturing = URLSession(configuration: captureConfiguration)
        let pipeline = URLSession(configuration: pipelineConfiguration)
        // The sessions and the capture's transports go before the host (and its service) does.
        defer {
            plain.invalidateAndCancel()
            capturing.invalidateAndCancel()
            pipeline.invalidateAndCancel()
            PincerNetworkCapture.stopCapturing(captureConfiguration)
            PincerNetworkCapture.stopCapturing(pipelineConfiguration)
        }

        // Warm up both paths (connections, TLS-free keep-alive, caches) and the log.
        let warmUp = Array(urls.prefix(max(1, min(requests, 200))))
        _ = try fetchAll(plain, warmUp, what: "without capture")
        _ = try fetchAll(capturing, warmUp, what: "with capture")
        _ = try fetchAll(pipeline, warmUp, what: "through the capture protocol without recording")
        try check(list, expected: warmUp, limit: nil)

        // Interleaved rounds, so drift hits both alike; the best of each.
        var best = (plain: UInt64.max, capture: UInt64.max, pipeline: UInt64.max)
        var logged = 0
        let limit = 500
        for _ in 0..<NetBench.rounds {
            best.plain = min(best.plain, try fetchAll(plain, urls, what: "without capture"))
            do { _ = try clear.invoke([]) } catch { throw BenchError("net.clear failed: \(error)") }
            // Capture records on a background queue; the round ends when the log has everything.
            let start = monotonicNanoseconds()
            _ = try fetchAll(capturing, urls, what: "with capture")
            recorder.flush()
            best.capture = min(best.capture, monotonicNanoseconds() - start)
            logged = try check(list, expected: urls, limit: limit)
            best.pipeline = min(best.pipeline, try fetchAll(pipeline, urls, what: "through the capture protocol without recording"))
        }
        // The stage-less pipeline recorded nothing: the log is as the last capture round left it.
        guard try check(list, expected: urls, limit: limit) == logged else {
            throw BenchError("requests through the capture protocol without a recording stage were logged")
        }
        let expectedServed = 3 * warmUp.count + 3 * NetBench.rounds * requests
        guard server.requestsAnswered == expectedServed else {
            throw BenchError("the server answered \(server.requestsAnswered) requests, expected \(expectedServed) (capture must send each request once)")
        }
        return CaptureFigures(requests: requests, rounds: NetBench.rounds, baselineNanoseconds: best.plain,
                              captureNanoseconds: best.capture, pipelineNanoseconds: best.pipeline, loggedEntries: logged, entryLimit: limit,
                              serverRequests: server.requestsAnswered, serverConnections: server.connectionsAccepted)
    }

    /// Sends the requests one after the other, each after the previous
    /// response; checks each status and body. Returns the wall time.
    static func fetchAll(_ session: URLSession, _ urls: [URL], what: String) throws(BenchError) -> UInt64 {
        let expected = BenchServer.body
        let fetch = Fetch()
        let start = monotonicNanoseconds()
        for url in urls {
            let result = fetch.get(session, url)
            guard result.status == 200, let data = result.data, data.elementsEqual(expected) else {
                throw BenchError("GET \(url.absoluteString) \(what): \(result.error ?? "status \(result.status), \(result.data?.count ?? 0) bytes instead of the \(expected.count)-byte body")")
            }
        }
        return monotonicNanoseconds() - start
    }

    /// Checks that the log holds the last requests sent, in order, each
    /// complete with status 200. Returns how many entries it holds.
    @discardableResult
    static func check(_ list: Command, expected urls: [URL], limit: Int?) throws(BenchError) -> Int {
        let listed: [JSON]
        do {
            let value = try list.invoke([.string(""), .i64(-1)]) // no filter, never cut to a width
            guard let array = try list.jsonResult(value).arrayValue else { throw BenchError("net.list did not return an array") }
            listed = array
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("net.list failed: \(error)")
        }
        // The log may hold entries from before (the warm-up) when not cleared: compare the tail.
        let want = limit.map { min($0, urls.count) } ?? urls.count
        guard listed.count >= want, limit == nil || listed.count == want else {
            throw BenchError("the log holds \(listed.count) entries after \(urls.count) captured requests, expected \(want)")
        }
        for (entry, url) in zip(listed.suffix(want), urls.suffix(want)) {
            guard entry["url"]?.stringValue == url.absoluteString, entry["method"]?.stringValue == "GET",
                  entry["state"]?.stringValue == "complete", entry["status"]?.int64Value == 200 else {
                throw BenchError("logged entry \(entry.serialized()) does not match GET \(url.absoluteString) -> 200")
            }
        }
        return listed.count
    }

    /// One request at a time: a data task, waited for on a semaphore.
    final class Fetch: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        // Written by the completion handler before `done` is signalled, read after the wait.
        private var result: (status: Int, data: Data?, error: String?) = (0, nil, nil)

        func get(_ session: URLSession, _ url: URL) -> (status: Int, data: Data?, error: String?) {
            let task = session.dataTask(with: url) { data, response, error in
                self.result = ((response as? HTTPURLResponse)?.statusCode ?? 0, data, error.map { "\($0.localizedDescription)" })
                self.done.signal()
            }
            task.resume()
            done.wait()
            return result
        }
    }
}

// MARK: - HAR

enum HARBench {
    static let entryCount = 10_000

    static func run(entries count: Int) throws(BenchError) -> HARFigures {
        let raw = HARCorpus.entries(count)
        let store = NetworkStore(limits: LogLimits(entryLimit: count))
        let addStart = monotonicNanoseconds()
        for entry in raw {
            guard store.add(entry) != nil else { throw BenchError("store.add refused entry \(entry.url) (no rules are set)") }
        }
        let addNanoseconds = monotonicNanoseconds() - addStart
        let entries = store.entries()
        guard entries.count == count else { throw BenchError("the store holds \(entries.count) entries after \(count) adds, expected \(count)") }

        let directory = try TemporaryDirectory(prefix: "pincer-bench-har")
        defer { directory.remove() }
        let path = "\(directory.path)/log.har"

        var best = (export: UInt64.max, import: UInt64.max)
        var fileBytes = 0
        var imported: HARImportResult?
        for _ in 0..<NetBench.rounds {
            unlink(path)
            let exportStart = monotonicNanoseconds()
            do {
                fileBytes = try HARExport.writeFile(entries, creator: (name: "pincer-bench", version: "1"), to: path)
            } catch {
                throw BenchError("HARExport.writeFile to \(path): \(error)")
            }
            best.export = min(best.export, monotonicNanoseconds() - exportStart)

            let importStart = monotonicNanoseconds()
            let bytes = try readFileBytes(path)
            let result: HARImportResult
            do { result = try HARImport.read(bytes) } catch { throw BenchError("HARImport.read of the exported file: \(error)") }
            best.import = min(best.import, monotonicNanoseconds() - importStart)
            imported = result
        }
        guard let imported else { throw BenchError("no HAR round ran") }
        try verify(imported, against: entries)
        return HARFigures(entries: count, rounds: NetBench.rounds, fileBytes: fileBytes, exportNanoseconds: best.export,
                          importNanoseconds: best.import, importedEntries: imported.entries.count,
                          addNanoseconds: addNanoseconds, failedEntries: entries.filter { $0.state == .failed }.count,
                          binaryEntries: entries.filter { $0.responseBody.mimeType == "image/png" }.count)
    }

    /// HAR export percent-encodes what may not appear in a URI, such as the
    /// brackets of "[REDACTED]"; compare URLs with those decoded.
    static func uri(_ url: String) -> String {
        var s = url
        for (encoded, plain) in [("%5B", "["), ("%5D", "]"), ("%5b", "["), ("%5d", "]")] {
            s = s.replacingOccurrences(of: encoded, with: plain)
        }
        return s
    }

    /// The import gives back every entry, in order, with what HAR carries.
    static func verify(_ result: HARImportResult, against entries: [NetworkEntry]) throws(BenchError) {
        guard result.skipped.isEmpty else {
            let first = result.skipped[0]
            throw BenchError("the import skipped \(result.skipped.count) of \(entries.count) entries (entry \(first.index): \(first.reason))")
        }
        guard result.entries.count == entries.count else {
            throw BenchError("the import gave \(result.entries.count) entries, expected \(entries.count)")
        }
        for (got, want) in zip(result.entries, entries) {
            let sameBody = want.responseBody.bytes == nil || got.responseBody.bytes == want.responseBody.bytes
            guard got.method == want.method, uri(got.url) == uri(want.url), got.state == want.state, got.status == want.status,
                  got.requestHeaders.count == want.requestHeaders.count, got.responseHeaders.count == want.responseHeaders.count,
                  sameBody else {
                throw BenchError("imported entry \(got.method) \(got.url) (\(got.state.rawValue), \(got.status.map(String.init) ?? "no status")) differs from the exported \(want.method) \(want.url) (\(want.state.rawValue), \(want.status.map(String.init) ?? "no status"))")
            }
        }
    }
}

/// Realistic entries, the same in every run: varied methods, hosts and
/// paths with query strings, 8-12 headers each way, small JSON bodies,
/// some failures (transport errors and 4xx/5xx), some binary (PNG) bodies,
/// and the secrets apps really send (tokens, cookies, passwords) for the
/// store to redact.
enum HARCorpus {
    static let methods = ["GET", "GET", "GET", "POST", "GET", "PUT", "GET", "DELETE", "GET", "PATCH"]
    static let hosts = ["api.example.com", "cdn.example.net", "auth.example.org", "search.example.com", "images.example.com"]
    static let resources = ["users", "orders", "products", "carts", "sessions", "reviews", "notifications"]
    static let statuses = [200, 200, 200, 201, 200, 204, 200, 304, 200, 404, 200, 500, 200, 401, 200, 302]

    static func entries(_ count: Int) -> [NetworkEntry] {
        (0..<count).map(entry)
    }

    static func entry(_ i: Int) -> NetworkEntry {
        var random = SplitMix64(seed: UInt64(i))
        let method = methods[i % methods.count]
        let host = hosts[i % hosts.count]
        let resource = resources[(i / 3) % resources.count]
        var url = "https://\(host)/v2/\(resource)/\(1000 + i % 997)?page=\(i % 9)&limit=\(20 + i % 4 * 10)&sort=created_at&q=term+\(i)"
        if i % 7 == 0 { url += "&access_token=tok_\(random.hex(24))" }
        var e = NetworkEntry(source: .captured, startedAt: 1_750_000_000 + Double(i) * 0.25, method: method, url: url)
        e.httpVersion = i % 4 == 0 ? "HTTP/2" : "HTTP/1.1"

        let hasBody = method == "POST" || method == "PUT" || method == "PATCH"
        var request: [(String, String)] = [
            ("Accept", "application/json"), ("Accept-Language", "en-GB,en;q=0.9"),
            ("User-Agent", "ExampleApp/4.2.\(i % 10) (Linux; pincer-bench)"), ("Accept-Encoding", "gzip, deflate, br"),
            ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyXzEyMyJ9.\(random.hex(32))"),
            ("X-Request-ID", random.uuid()), ("Cookie", "session=\(random.hex(16)); theme=dark"),
            ("Cache-Control", "no-cache"),
        ]
        let extra: [(String, String)] = [("X-Client-Version", "4.2.\(i % 10)"), ("X-Trace-ID", random.hex(16)),
                                         ("If-None-Match", "\"\(random.hex(8))\""), ("X-Api-Key", random.hex(20))]
        request += extra.prefix(i % 5)
        if hasBody { request.append(("Content-Type", "application/json; charset=utf-8")) }
        e.requestHeaders = NetBench.headers(Array(request.prefix(12)))
        if hasBody {
            let body = #"{"name":"item \#(i)","quantity":\#(i % 9 + 1),"tags":["a","b","\#(resource)"],"password":"hunter\#(i)","note":null}"#
            e.requestBody = Body(payload: .stored(Array(body.utf8)), size: body.utf8.count, mimeType: "application/json")
        }

        e.timings.blocked = Double(i % 3) * 0.5
        e.timings.dns = i % 10 == 0 ? 12.5 : -1
        e.timings.connect = i % 10 == 0 ? 30.25 : -1
        e.timings.ssl = i % 10 == 0 ? 18.0 : -1
        e.timings.send = 0.2
        e.timings.wait = 20 + Double(i % 180)
        e.timings.receive = 1.5 + Double(i % 7)

        if i % 23 == 0 {
            e.state = .failed
            e.error = i % 2 == 0 ? "The request timed out." : "Could not connect to the server."
            e.timings.receive = -1
            return e
        }
        let status = statuses[i % statuses.count]
        e.state = .complete
        e.status = status
        e.statusText = statusText(status)
        e.serverIP = "93.184.216.\(i % 250 + 1)"
        let binary = i % 11 == 0 && status == 200
        let body: [UInt8]
        let mime: String
        if status == 204 || status == 304 || status == 302 {
            body = []
            mime = ""
        } else if binary {
            // A PNG signature, then bytes that are not UTF-8.
            body = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<(120 + i % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) | 0x80 }
            mime = "image/png"
        } else if status >= 400 {
            body = Array(#"{"error":{"code":\#(status),"message":"\#(statusText(status))","request":"\#(random.hex(8))"}}"#.utf8)
            mime = "application/json"
        } else {
            body = Array(#"{"id":\#(1000 + i % 997),"name":"item \#(i)","price":\#(Double(i % 500) / 4),"tags":["\#(resource)","sale"],"token":"\#(random.hex(12))","owner":{"email":"user\#(i % 50)@example.com"}}"#.utf8)
            mime = "application/json"
        }
        var response: [(String, String)] = [
            ("Date", "Sun, 22 Jun 2025 12:\(10 + i % 50):00 GMT"), ("Server", "nginx/1.25.\(i % 5)"),
            ("Content-Length", "\(body.count)"), ("Cache-Control", "private, max-age=\(i % 600)"),
            ("X-Request-ID", random.uuid()), ("Vary", "Accept-Encoding"),
            ("Strict-Transport-Security", "max-age=31536000"), ("Connection", "keep-alive"),
        ]
        if !mime.isEmpty { response.insert(("Content-Type", mime == "application/json" ? "application/json; charset=utf-8" : mime), at: 0) }
        let moreResponse: [(String, String)] = [("ETag", "\"\(random.hex(10))\""), ("X-RateLimit-Remaining", "\(4999 - i % 5000)"),
                                                ("Set-Cookie", "session=\(random.hex(16)); Path=/; HttpOnly; Secure"),
                                                ("Location", "https://\(host)/v2/\(resource)/moved")]
        response += moreResponse.prefix(status == 302 ? 4 : i % 4)
        e.responseHeaders = NetBench.headers(Array(response.prefix(12)))
        if status == 302 { e.redirectURL = "https://\(host)/v2/\(resource)/moved" }
        if !body.isEmpty { e.responseBody = Body(payload: .stored(body), size: body.count, mimeType: mime) }
        return e
    }

    static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 302: "Found"
        case 304: "Not Modified"
        case 401: "Unauthorized"
        case 404: "Not Found"
        default: "Internal Server Error"
        }
    }
}

// MARK: - append at the bound

enum AppendBench {
    static let appendCount = 100_000
    static let largeBound = LogLimits.entryRange.upperBound

    static func run(appends: Int) throws(BenchError) -> AppendFigures {
        let bound = LogLimits().entryLimit
        let exchange = Exchange()

        // One recorded exchange, to fill stores with quickly: restore() stores
        // entries as they are (no second redaction), with new ids.
        let sample = NetworkStore(limits: LogLimits(entryLimit: 1))
        try exchange.append(1, into: sample)
        guard let recorded = sample.entries().first else { throw BenchError("a store holds no entry after an append") }

        func timed(_ limit: Int, prefill: Int, appends: Int) throws(BenchError) -> UInt64 {
            let store = NetworkStore(limits: LogLimits(entryLimit: limit))
            store.restore(Array(repeating: recorded, count: prefill))
            let start = monotonicNanoseconds()
            try exchange.append(appends, into: store)
            let ns = monotonicNanoseconds() - start
            try verify(store, limit: limit, total: prefill + appends)
            return ns
        }

        // Warm up (allocator, redaction, caches).
        _ = try timed(bound, prefill: bound, appends: min(appends, 10_000))

        var best = (atBound: UInt64.max, below: UInt64.max, largeAtBound: UInt64.max)
        for _ in 0..<NetBench.rounds {
            best.atBound = min(best.atBound, try timed(bound, prefill: bound, appends: appends))
            best.below = min(best.below, try timed(largeBound, prefill: 0, appends: appends))
            best.largeAtBound = min(best.largeAtBound, try timed(largeBound, prefill: largeBound, appends: appends))
        }
        return AppendFigures(appends: appends, rounds: NetBench.rounds, bound: bound, largeBound: largeBound,
                             atBoundNanoseconds: best.atBound, belowBoundNanoseconds: best.below,
                             largeAtBoundNanoseconds: best.largeAtBound)
    }

    /// After `total` appends the store holds the newest min(total, limit)
    /// entries, ids contiguous, each complete.
    static func verify(_ store: NetworkStore, limit: Int, total: Int) throws(BenchError) {
        let entries = store.entries()
        let want = min(total, limit)
        guard entries.count == want, store.count == want else {
            throw BenchError("a store bounded at \(limit) holds \(entries.count) entries after \(total) appends, expected \(want)")
        }
        guard let first = entries.first, let last = entries.last,
              last.id == UInt64(total), first.id == UInt64(total - want + 1) else {
            throw BenchError("a store bounded at \(limit) holds ids \(entries.first?.id ?? 0)...\(entries.last?.id ?? 0) after \(total) appends, expected \(total - want + 1)...\(total)")
        }
        guard entries.allSatisfy({ $0.state == .complete && $0.status == 200 }) else {
            throw BenchError("a store bounded at \(limit) holds entries that are not complete with status 200")
        }
    }

    /// One small exchange, as the capture records it: a GET with a few
    /// headers and a small JSON response.
    struct Exchange {
        let urls = (0..<64).map { "https://api.example.com/v1/items/\($0)?page=\($0 % 5)&limit=20" }
        let requestHeaders = NetBench.headers([("Accept", "application/json"), ("User-Agent", "ExampleApp/4.2"),
                                               ("X-Request-ID", "5f0c9a4e-1b2c-4d3e-8f70-123456789abc")])
        let response: RawResponse = {
            var r = RawResponse(status: 200)
            r.statusText = "OK"
            r.headers = NetBench.headers([("Content-Type", "application/json"), ("Content-Length", "27"), ("Cache-Control", "no-cache")])
            r.body = Array(#"{"id":42,"name":"item 42"}"#.utf8)
            r.timings.wait = 12
            r.timings.receive = 0.5
            return r
        }()

        @inline(never)
        func append(_ count: Int, into store: NetworkStore) throws(BenchError) {
            for i in 0..<count {
                guard let id = store.begin(source: .captured, startedAt: 1_750_000_000, method: "GET", url: urls[i & 63],
                                           headers: requestHeaders, body: []) else {
                    throw BenchError("store.begin returned nil (no rules are set)")
                }
                guard store.complete(id, response) else { throw BenchError("store.complete(\(id)) failed right after its begin") }
            }
        }
    }
}

// MARK: - whole-command HAR import/export at size

/// `pincer net.import-har` and `net.export-har` as whole processes on
/// generated HAR files of about 6 KB an entry (JSON bodies, secrets in
/// headers, query strings and JSON keys), with redaction and persistence,
/// against Python's `json.load` + `json.dump` of the same file in the same
/// run; and, in process, what a store holding 100,000 entries costs in RSS
/// and what `clear` gives back.
struct HARSpeedFigures: Sendable {
    static let smallTargetSeconds = 0.5
    static let pythonTargetRatio = 0.4
    static let rssTargetRatio = 1.2
    static let holdTargetRatio = 1.3
    static let clearTargetBytes = 50 << 20

    struct Command: Sendable {
        var nanoseconds: UInt64
        var maxRSSBytes: Int
        var seconds: Double { Double(nanoseconds) / 1e9 }

        /// The run of median time (its own peak RSS), of an odd number of runs.
        static func median(_ runs: [Command]) -> Command {
            runs.sorted { $0.nanoseconds < $1.nanoseconds }[runs.count / 2]
        }
    }
    struct Size: Sendable {
        var entries: Int
        var fileBytes: Int
        var importCommand: Command
        var exportCommand: Command
        var exportedBytes: Int
        var python: Command?
        /// In process (pincer-bench): HARImport.stream + NetworkStore.add(contentsOf:), no persistence.
        var inProcessNanoseconds: UInt64
        var importRSSRatio: Double { Double(importCommand.maxRSSBytes) / Double(max(fileBytes, 1)) }
        var pythonRatio: Double? { python.map { Double(importCommand.nanoseconds) / Double(max($0.nanoseconds, 1)) } }
        var exportPythonRatio: Double? { python.map { Double(exportCommand.nanoseconds) / Double(max($0.nanoseconds, 1)) } }
    }
    var small: Size
    var large: Size
    var pythonError: String?
    /// In process: RSS with no entries, holding `heldEntries`, after clear.
    var heldEntries: Int
    var storedBodyBytes: Int
    /// Bodies plus every text of the entries (URL, headers, status texts...).
    var storedBytes: Int
    var emptyRSS: Int
    var heldRSS: Int
    var clearedRSS: Int
    var holdRatio: Double { Double(heldRSS - emptyRSS) / Double(max(storedBytes, 1)) }
    var clearedExcess: Int { clearedRSS - emptyRSS }

    var smallPassed: Bool { small.importCommand.seconds <= HARSpeedFigures.smallTargetSeconds && small.exportCommand.seconds <= HARSpeedFigures.smallTargetSeconds }
    var largePassed: Bool {
        guard let r = large.pythonRatio, let e = large.exportPythonRatio else { return false }
        return r <= HARSpeedFigures.pythonTargetRatio && e <= HARSpeedFigures.pythonTargetRatio && large.importRSSRatio <= HARSpeedFigures.rssTargetRatio
    }
    var memoryPassed: Bool { holdRatio <= HARSpeedFigures.holdTargetRatio && clearedExcess <= HARSpeedFigures.clearTargetBytes }
    var passed: Bool { smallPassed && largePassed && memoryPassed }
}

enum HARSpeedBench {
    static let smallEntries = 10_000
    static let largeEntries = 100_000
    /// Runs of each whole command at `smallEntries` (the median is reported).
    static let smallRuns = 5

    static func run() throws(BenchError) -> HARSpeedFigures {
        guard let directory = Host.executableDirectory() else { throw BenchError("cannot find this executable's directory") }
        let pincer = "\(directory)/pincer"
        guard access(pincer, X_OK) == 0, access("\(directory)/\(Host.builtinPrefix)net.so", R_OK) == 0 else {
            throw BenchError("\(pincer) and its net plugin are missing; build them beside pincer-bench: swift build -c release")
        }
        let work = try TemporaryDirectory(prefix: "pincer-bench-harspeed")
        // PINCER_BENCH_KEEP=1 keeps the HAR files and state directories (for
        // profiling one command on the same corpus) and says where.
        let keep = getenv("PINCER_BENCH_KEEP").map { String(cString: $0) == "1" } ?? false
        defer {
            if keep {
                let note = Array("pincer-bench: kept \(work.path)\n".utf8)
                _ = note.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            } else {
                work.remove()
            }
        }
        let python = findInPath("python3")
        var pythonError: String? = python == nil ? "python3 is not on PATH" : nil
        func size(_ count: Int) throws(BenchError) -> HARSpeedFigures.Size {
            let file = "\(work.path)/log-\(count).har"
            let fileBytes: Int
            do {
                fileBytes = try HARExport.writeFile((0..<count).lazy.map(HARSpeedCorpus.entry),
                                                    creator: (name: "pincer-bench", version: "1"), to: file)
            } catch { throw BenchError("writing \(file): \(error)") }
            // A command of half a second swings by a tenth from one run to the
            // next on a shared machine: the smaller size takes the median of
            // `smallRuns` (each import into a new state directory).
            let runs = count <= smallEntries ? smallRuns : 1
            var imports: [HARSpeedFigures.Command] = []
            var state = ""
            for run in 0..<runs {
                state = "\(work.path)/state-\(count)-\(run)"
                for setup in [["net.limits", "--entries", "\(count)"], ["net.persist", "7"]] {
                    _ = try measured(pincer, ["--state-dir", state, "run"] + setup, what: "pincer run \(setup.joined(separator: " "))")
                }
                let (importRun, importOutput) = try measured(pincer, ["--state-dir", state, "--json", "run", "net.import-har", file], what: "pincer net.import-har")
                let summary = (try? JSON.parse(bytes: importOutput))?["result"]
                guard summary?["imported"]?.int64Value == Int64(count), summary?["persisted"]?.boolValue == true else {
                    throw BenchError("pincer net.import-har of \(count) entries printed \(String(decoding: importOutput.prefix(300), as: UTF8.self))")
                }
                imports.append(importRun)
                if run + 1 < runs && !keep { TemporaryDirectory.removeTree(state) }
            }
            let importRun = HARSpeedFigures.Command.median(imports)
            let out = "\(work.path)/export-\(count).har"
            var exports: [HARSpeedFigures.Command] = []
            for _ in 0..<runs {
                exports.append(try measured(pincer, ["--state-dir", state, "run", "net.export-har", out], what: "pincer net.export-har").0)
            }
            let exportRun = HARSpeedFigures.Command.median(exports)
            var info = stat()
            guard stat(out, &info) == 0, info.st_size > 0 else { throw BenchError("net.export-har wrote no \(out)") }
            var pythonRun: HARSpeedFigures.Command?
            if let python, pythonError == nil {
                let script = "import json,sys\nwith open(sys.argv[1]) as f: d = json.load(f)\nwith open(sys.argv[2], 'w') as f: json.dump(d, f)\n"
                do {
                    pythonRun = try measured(python, ["-c", script, file, "\(work.path)/python-\(count).json"], what: "python3 json.load + json.dump").0
                } catch { pythonError = error.message }
                unlink("\(work.path)/python-\(count).json")
            }
            // In process, for comparison: the same stream into a store, no persistence.
            let store = NetworkStore(limits: LogLimits(entryLimit: count))
            let start = monotonicNanoseconds()
            do {
                let mapped = try MappedHAR(file)
                defer { mapped.close() }
                _ = try HARImport.stream(mapped.bytes) { store.add(contentsOf: $0) }
            } catch { throw BenchError("in-process import of \(file): \(error)") }
            let inProcess = monotonicNanoseconds() - start
            guard store.count == count else { throw BenchError("the in-process import stored \(store.count) of \(count) entries") }
            if !keep {
                unlink(file)
                unlink(out)
            }
            return .init(entries: count, fileBytes: fileBytes, importCommand: importRun, exportCommand: exportRun,
                         exportedBytes: Int(info.st_size), python: pythonRun, inProcessNanoseconds: inProcess)
        }
        let small = try size(smallEntries)
        let large = try size(largeEntries)

        let h = holding()
        return HARSpeedFigures(small: small, large: large, pythonError: pythonError, heldEntries: h.entries, storedBodyBytes: h.bodies,
                               storedBytes: h.stored, emptyRSS: h.empty, heldRSS: h.held, clearedRSS: h.cleared)
    }

    /// Holding entries in process: RSS before, holding, after clear.
    static func holding() -> (entries: Int, bodies: Int, stored: Int, empty: Int, held: Int, cleared: Int) {
        let held = largeEntries
        let store = NetworkStore(limits: LogLimits(entryLimit: held, bodyCap: 1 << 20, bodyBudget: Int.max / 2))
        // The parts before freed memory this process's heap still holds: hand
        // it back first, or the store would reuse it and look free.
        trimHeap()
        let empty = residentBytes()
        var i = 0
        while i < held {
            let batch = (i..<min(held, i + 1024)).map(HARSpeedCorpus.entry)
            store.add(contentsOf: batch)
            i += batch.count
        }
        var storedBytes = 0
        for e in store.entries() { storedBytes += HARSpeedCorpus.storedBytes(e) }
        let holding = residentBytes()
        let bodies = store.storedBodyBytes
        store.clear()
        let cleared = residentBytes()
        return (held, bodies, storedBytes, empty, holding, cleared)
    }

    /// glibc's malloc_trim(0) (in <malloc.h>, which the Glibc module does not export).
    static func trimHeap() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
    }

    /// Resident bytes of this process now (/proc/self/statm).
    static func residentBytes() -> Int {
        // /proc files report size 0, so read until the end rather than by size.
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return 0 }
        let fields = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Runs a command to its end, stdout into a file (returned), stderr kept
    /// for errors; wall time from spawn to wait4's return and the peak RSS
    /// wait4 reports for the child.
    static func measured(_ path: String, _ arguments: [String], what: String) throws(BenchError) -> (HARSpeedFigures.Command, [UInt8]) {
        let out = TemporaryFile.path("pincer-bench-out"), err = TemporaryFile.path("pincer-bench-err")
        defer { unlink(out); unlink(err) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid = pid_t()
        let start = monotonicNanoseconds()
        let rc = argv.withUnsafeBufferPointer { posix_spawn(&pid, path, &actions, nil, $0.baseAddress!, environ) }
        guard rc == 0 else { throw BenchError("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError("wait4 \(path): \(String(cString: strerror(errno)))") }
        }
        let elapsed = monotonicNanoseconds() - start
        let output = (try? readFileBytes(out)) ?? []
        guard status == 0 else {
            let tail = String(decoding: ((try? readFileBytes(err)) ?? []).suffix(400), as: UTF8.self)
            throw BenchError("\(what) exited with \(describeWaitStatus(status)): \(tail)")
        }
        return (.init(nanoseconds: elapsed, maxRSSBytes: Int(usage.ru_maxrss) * 1024), output)
    }
}

/// A unique path in $TMPDIR (or /tmp) for a child's output.
enum TemporaryFile {
    static func path(_ prefix: String) -> String {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty { base = "/tmp" }
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 { close(fd) }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// The bench's own read-only mapping of a HAR file (the plugin's is internal).
final class MappedHAR {
    let bytes: UnsafeBufferPointer<UInt8>
    init(_ path: String) throws(BenchError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, let base = mmap(nil, Int(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw BenchError("cannot map \(path): \(String(cString: strerror(errno)))")
        }
        bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: Int(info.st_size))
    }
    func close() { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
}

/// Entries of about 6 KB as a HAR file holds them: HARCorpus's headers and
/// secrets, and a response body of a page of 14 items (each with a token
/// and a nested password), a POST body with a password every fourth entry.
enum HARSpeedCorpus {
    static func entry(_ i: Int) -> NetworkEntry {
        var e = HARCorpus.entry(i)
        var random = SplitMix64(seed: UInt64(i) &+ 0x5eed)
        e.url = "https://api.example.com/v2/items/\(i)?page=\(i % 9)&api_key=\(random.hex(20))&q=term+\(i)"
        guard e.state == .complete, e.responseBody.mimeType == "application/json" || e.responseBody.payload == .none else { return e }
        var body = #"{"page":\#(i % 9),"session_id":"\#(random.hex(16))","items":["#
        for j in 0..<14 {
            if j > 0 { body += "," }
            body += #"{"id":\#(i * 14 + j),"name":"item \#(j)","price":\#(Double(j) * 1.25),"tags":["a","b"],"access_token":"\#(random.hex(24))","owner":{"email":"u\#(j)@example.com","password":"p\#(random.hex(6))"},"description":"lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor"}"#
        }
        body += "]}"
        let bytes = Array(body.utf8)
        e.responseBody = Body(payload: .stored(bytes), size: bytes.count, mimeType: "application/json")
        e.responseHeaders.removeAll { $0.name == "Content-Length" || $0.name == "Content-Type" }
        e.responseHeaders.insert(Header("Content-Type", "application/json; charset=utf-8"), at: 0)
        return e
    }

    /// The bytes an entry's texts and bodies take as UTF-8.
    static func storedBytes(_ e: NetworkEntry) -> Int {
        var n = e.method.utf8.count + e.url.utf8.count + e.httpVersion.utf8.count + e.statusText.utf8.count + e.redirectURL.utf8.count
        for h in e.requestHeaders + e.responseHeaders { n += h.name.utf8.count + h.value.utf8.count }
        for note in e.notes { n += note.utf8.count }
        n += (e.error?.utf8.count ?? 0) + (e.serverIP?.utf8.count ?? 0)
        return n + e.requestBody.storedByteCount + e.responseBody.storedByteCount
    }
}
