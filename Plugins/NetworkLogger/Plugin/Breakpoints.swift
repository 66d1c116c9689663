import NetworkLog
import PincerPluginKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Exchanges that breakpoint rules hold until a person releases them
/// (net.breakpoints, net.continue, net.edit, net.abort), their breakpoint's
/// timeout runs out, or the shell that was shown them goes away. The thread
/// that sends the request waits in `wait` (await_release); commands change
/// the table from the shell's threads. A person's pace: waiting threads poll
/// every 10 ms rather than keep a condition variable per exchange.
final class Breakpoints: Sendable {
    enum Phase: String, Sendable { case request, response }

    /// How a held exchange was let go.
    enum Release: Sendable, Equatable {
        /// Continued, as edited (`edits` says what changed; empty: unchanged).
        case proceed
        case abort(NetworkFailure)
        case timedOut
        /// Released unchanged for this reason (the watching shell went away).
        case abandoned(String)
    }

    /// One held exchange. Everything but the ids changes under `table`'s lock.
    struct Held: Sendable {
        let number: Int
        let phase: Phase
        let rule: String
        let title: String
        let timeoutSeconds: Int
        let heldAt: Double
        /// The request as it would be sent, and (phase response) the response.
        let original: InterceptedRequest
        let originalResponse: InterceptedResponse?
        var request: InterceptedRequest
        var response: InterceptedResponse?
        /// What people changed, in order ("url", "header X-Debug", ...).
        var edits: [String] = []
        var release: Release?
        /// Watchers (net.breakpoints --watch) it was shown to: when the last
        /// one goes, it is released.
        var watchers: Set<Int> = []

        var deadline: Double { heldAt + Double(timeoutSeconds) }
    }

    /// Bodies above this are not held (the issue's 10 MiB: a person cannot
    /// edit more, and holding it costs the memory twice).
    static let maxHeldBody = 10 << 20

    private let table = Mutex<[Int: Held]>([:])
    private let lastNumber = Atomic<Int>(0)
    private let lastWatcher = Atomic<Int>(0)
    private let emit: @Sendable (String) -> Void

    /// `emit` publishes "net.held" events (payload JSON), for pincer tail and the web console.
    init(emit: @escaping @Sendable (String) -> Void = { _ in }) {
        self.emit = emit
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Holds an exchange; returns its number.
    func hold(phase: Phase, rule: String, title: String, timeoutSeconds: Int,
              request: InterceptedRequest, response: InterceptedResponse?) -> Int {
        let number = lastNumber.add(1, ordering: .relaxed).newValue
        let held = Held(number: number, phase: phase, rule: rule, title: title, timeoutSeconds: timeoutSeconds, heldAt: Self.now(),
                        original: request, originalResponse: response, request: request, response: response)
        table.withLock { $0[number] = held }
        // No URL or header in the event: events are not redacted.
        emit(JSON.object([("number", .int(Int64(number))), ("phase", .string(phase.rawValue)), ("state", .string("held")),
                          ("rule", .string(rule))]).serialized())
        return number
    }

    /// Waits until exchange `number` is released (or times out) and removes
    /// it: how it was released and the exchange to go on with (the edited
    /// one only when it proceeds).
    func wait(_ number: Int) -> (Release, Held)? {
        while true {
            let done: (Release, Held)?? = table.withLock { table in
                guard var h = table[number] else { return .some(nil) }
                if h.release == nil, Self.now() >= h.deadline { h.release = .timedOut }
                guard let release = h.release else { return nil }
                table[number] = nil
                return .some((release, h))
            }
            if let done {
                if let (release, _) = done {
                    emit(JSON.object([("number", .int(Int64(number))), ("state", .string("released")),
                                      ("how", .string(Self.word(release)))]).serialized())
                }
                return done
            }
            usleep(10_000)
        }
    }

    /// Holds an exchange and waits for it on this thread (the proxy's
    /// connection threads may wait): how it was released, the exchange to go
    /// on with, and the intervention that says what happened.
    func holdAndWait(phase: Phase, rule: String, title: String, timeoutSeconds: Int,
                     request: InterceptedRequest, response: InterceptedResponse?) -> (release: Release, held: Held, note: Intervention)? {
        let number = hold(phase: phase, rule: rule, title: title, timeoutSeconds: timeoutSeconds, request: request, response: response)
        guard let (release, h) = wait(number) else { return nil }
        return (release, h, Intervention(rule: h.rule, kind: RuleKind.breakpoint.rawValue, title: h.title, did: Self.note(release, h)))
    }

    /// Drops a held exchange nobody will wait for.
    func forget(_ number: Int) { _ = table.withLock { $0.removeValue(forKey: number) } }

    static func word(_ r: Release) -> String {
        switch r {
        case .proceed: "continued"
        case .abort: "aborted"
        case .timedOut: "timed-out"
        case .abandoned: "released"
        }
    }

    /// What the intervention says once exchange `h` went on.
    static func note(_ release: Release, _ h: Held) -> String {
        let seconds = NumberText.trimmed((max(0, now() - h.heldAt) * 10).rounded() / 10)
        let what = "held the \(h.phase.rawValue) \(seconds) s"
        switch release {
        case .proceed:
            return h.edits.isEmpty ? "\(what); continued unchanged" : "\(what); edited (\(h.edits.joined(separator: ", "))) and continued"
        case .abort(let failure):
            return "\(what); aborted with \(failure.rawValue)"
        case .timedOut:
            return "\(what): timed out after \(h.timeoutSeconds) s, continued unchanged"
        case .abandoned(let why):
            return "\(what); released unchanged: \(why)"
        }
    }

    // MARK: what commands do

    var all: [Held] { table.withLock { Array($0.values) }.sorted { $0.number < $1.number } }

    func get(_ number: Int) -> Held? { table.withLock { $0[number] } }

    /// Changes exchange `number` while it is held; the error names why not.
    func change(_ number: Int, _ body: (inout Held) throws -> Void) throws {
        try table.withLock { (table: inout [Int: Held]) throws in
            guard var h = table[number] else { throw CommandError("no held exchange \(number) (see net.breakpoints)", status: PINCER_NOT_FOUND) }
            guard h.release == nil, Self.now() < h.deadline else {
                throw CommandError("exchange \(number) was already released (\(h.release.map(Self.word) ?? "timed-out"))")
            }
            try body(&h)
            table[number] = h
        }
    }

    func release(_ number: Int, _ how: Release) throws {
        try change(number) { $0.release = how }
    }

    // MARK: watchers

    /// A new watcher (one net.breakpoints --watch).
    func startWatching() -> Int { lastWatcher.add(1, ordering: .relaxed).newValue }

    /// Held exchanges this watcher has not been shown, now marked shown.
    func unseen(by watcher: Int) -> [Held] {
        table.withLock { table in
            var out: [Held] = []
            for (n, h) in table where h.release == nil && !h.watchers.contains(watcher) {
                table[n]?.watchers.insert(watcher)
                out.append(h)
            }
            return out.sorted { $0.number < $1.number }
        }
    }

    /// The watcher leaves exchange `number` held for others (skip): its
    /// going away no longer releases it.
    func leave(_ number: Int, watcher: Int) { _ = table.withLock { $0[number]?.watchers.remove(watcher) } }

    /// The watcher went (its command ended: Ctrl-C, the shell detached or
    /// was killed): what only it was shown goes on unchanged.
    func stopWatching(_ watcher: Int) {
        table.withLock { table in
            for (n, h) in table where h.watchers.contains(watcher) {
                table[n]?.watchers.remove(watcher)
                if h.release == nil, h.watchers.count == 1 {
                    table[n]?.release = .abandoned("the shell watching it went away")
                }
            }
        }
    }
}
