// Intercept: what the interception rules cost a request, asked as capture
// asks them: intercept_request (and finish_interception) of the net plugin's
// "pincer.network/1" service, from Swift through the C table, in a real
// host with the plugin dlopen'ed, its rules in net-rules.json in a state
// directory. The same request with 1,000 stored rules (each for its own
// host and path, as an app's mocks are) and with none; the request matches
// none of them, so both sides do the same work after the match.
import CPincerSDK
import Foundation
import NetworkLog
import PincerHost
import PincerNetworkCapture

struct InterceptFigures: Sendable {
    var rules: Int
    var requests: Int
    /// Best round, nanoseconds per request.
    var noRulesNanoseconds: Double
    var rulesNanoseconds: Double
    /// The same with a rule that matches (a mock answers), for information.
    var matchingNanoseconds: Double
    /// 1,000 rules with no exact domain, each a `path:` of its own first
    /// segment (indexed by it), for information.
    var pathIndexedNanoseconds: Double
    /// 1,000 rules that no index can narrow (`path:*/items/N`), which every
    /// request is matched against in turn, for information.
    var unindexedNanoseconds: Double

    static let targetAddedMicroseconds = 20.0

    var addedMicroseconds: Double { (rulesNanoseconds - noRulesNanoseconds) / 1000 }
    var ratio: Double { rulesNanoseconds / noRulesNanoseconds }
    var passed: Bool { addedMicroseconds <= InterceptFigures.targetAddedMicroseconds }
}

enum InterceptBench {
    static func run(rules count: Int = 1000, requests: Int = 20_000) throws(BenchError) -> InterceptFigures {
        let state = try TemporaryDirectory(prefix: "pincer-bench-intercept")
        defer { state.remove() }
        let host = try BuiltPlugin.host(loading: "net", state: state)
        defer { host.shutdown() }
        guard let raw = host.service(id: NetworkRecorder.serviceID) else { throw BenchError("the net plugin published no \(NetworkRecorder.serviceID)") }
        let table = raw.assumingMemoryBound(to: pincer_network_service_t.self)
        guard let recorder = NetworkRecorder(service: table), recorder.canIntercept else {
            throw BenchError("the net plugin's \(NetworkRecorder.serviceID) has no interception slots")
        }
        let book = RuleBook(directory: state.path)

        func measure(_ url: String) -> Double {
            var best = Double.infinity
            for _ in 0..<5 {
                let start = monotonicNanoseconds()
                for _ in 0..<requests {
                    url.withCString { cURL in
                        "GET".withCString { cMethod in
                            var r = pincer_network_request_t()
                            r.struct_size = UInt32(MemoryLayout<pincer_network_request_t>.size)
                            r.method = cMethod
                            r.url = cURL
                            var d = pincer_network_decision_t()
                            d.struct_size = UInt32(MemoryLayout<pincer_network_decision_t>.size)
                            _ = table.pointee.intercept_request(table.pointee.header.context, &r, &d)
                            if d.handle != 0 { table.pointee.finish_interception(table.pointee.header.context, d.handle) }
                        }
                    }
                }
                best = min(best, Double(monotonicNanoseconds() - start) / Double(requests))
            }
            return best
        }
        let url = "https://api.example.com/v1/users/7?page=2"
        let none = measure(url)
        do {
            try book.update { d in
                for i in 0..<count {
                    d.add(InterceptRule(match: "domain:h\(i).example.com path:/v1/items/*",
                                        action: .mock(status: 200, headers: [Header("Content-Type", "application/json")], body: .text("{\"i\":\(i)}"))))
                }
            }
        } catch { throw BenchError("could not write the rules: \(error)") }
        let many = measure(url)
        let matching = measure("https://h\(count - 1).example.com/v1/items/9")
        do {
            try book.update { d in
                d.rules = []
                for i in 0..<count {
                    d.add(InterceptRule(match: "path:/v\(i)/items/*", action: .block(.offline)))
                }
            }
        } catch { throw BenchError("could not write the rules: \(error)") }
        let pathIndexed = measure(url)
        do {
            try book.update { d in
                d.rules = []
                for i in 0..<count {
                    d.add(InterceptRule(match: "path:*/items/\(i)", action: .block(.offline)))
                }
            }
        } catch { throw BenchError("could not write the rules: \(error)") }
        let unindexed = measure(url)
        return InterceptFigures(rules: count, requests: requests, noRulesNanoseconds: none, rulesNanoseconds: many, matchingNanoseconds: matching,
                                pathIndexedNanoseconds: pathIndexed, unindexedNanoseconds: unindexed)
    }
}
