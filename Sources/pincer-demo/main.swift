// pincer-demo: a small app that embeds Pincer. It registers two flags and
// two server environments (pointing at an HTTP server it runs itself on
// 127.0.0.1), then once a tick reads them, makes a GET through a URLSession
// whose traffic lands in the network logger, and prints one line. Attach
// from another terminal and change things while it runs:
//
//   pincer ps                                   # the demo is listed
//   pincer attach run flags.set fast-mode true
//   pincer attach run servers.use staging
//   pincer attach run loc.play city-run --rate 30
//   pincer attach run net.list
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PincerEmbed
import Synchronization

// SIGINT and SIGTERM are handled from the first instant: the first thing
// the app does is install a handler (on any thread it lands on, it only
// writes a byte to a pipe), and a thread of its own turns that byte into a
// stop. (Before, SIG_IGN was set until a dispatch source was ready, and a
// signal sent in between was lost.) A stop asked for while the app starts
// ends it as soon as it has started, through the same cleanup.
let signalPipe: (read: Int32, write: Int32) = {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return (-1, -1) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}()
/// The handler's only state: a plain integer, safe to read in a signal handler.
let signalWriteFD: Int32 = signalPipe.write

let handlersInstalled: Bool = {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        var byte: UInt8 = 1
        _ = write(signalWriteFD, &byte, 1) // async-signal-safe
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = Int32(SA_RESTART)
    return sigaction(SIGINT, &action, nil) == 0 && sigaction(SIGTERM, &action, nil) == 0
}()

/// What a signal does: set once the tick loop runs; until then the request is remembered.
let stopRequested = Atomic<Bool>(false)
let stopAction = Mutex<(@Sendable () -> Void)?>(nil)

func requestStop() {
    stopRequested.store(true, ordering: .releasing)
    stopAction.withLock { $0 }?()
}

/// Turns the handler's bytes into stops, on a thread of its own, for as long as the app runs.
func startSignalThread() {
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { _ in
        var byte: UInt8 = 0
        while true {
            let n = read(signalPipe.read, &byte, 1)
            if n == 1 { requestStop() } else if n < 0 && errno == EINTR { continue } else { return nil }
        }
    }, nil)
    if rc == 0 { pthread_detach(thread) }
}
if !handlersInstalled { FileHandle.standardError.write(Data("pincer-demo: cannot install the SIGINT/SIGTERM handler\n".utf8)) }
startSignalThread()

/// One line on standard output, written at once (lines from the location
/// thread never interleave with tick lines, and a pipe sees each line as it
/// is printed).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct Arguments {
    var ticks: Int?
    var interval = 1.0
    var socketDirectory: String?
    var stateDirectory: String?

    static let usage = """
        usage: pincer-demo [--ticks N] [--interval SECONDS] [--socket-dir DIR] [--state-dir DIR]

          --ticks N           stop after N ticks (default: run until SIGINT or SIGTERM)
          --interval SECONDS  time between ticks (default 1)
          --socket-dir DIR    control socket directory (default: $XDG_RUNTIME_DIR/pincer or /tmp/pincer-<uid>)
          --state-dir DIR     settings store directory (default: the pincer shell's)
          --help              this text
        """

    static func parse(_ words: [String]) -> Arguments {
        var result = Arguments()
        var rest = words[...]
        func value(_ option: String) -> String {
            guard let v = rest.popFirst() else { fail("\(option) needs a value") }
            return v
        }
        while let word = rest.popFirst() {
            switch word {
            case "--ticks":
                guard let n = Int(value(word)), n > 0 else { fail("--ticks takes a positive whole number") }
                result.ticks = n
            case "--interval":
                guard let s = Double(value(word)), s > 0, s.isFinite else { fail("--interval takes a positive number of seconds") }
                result.interval = s
            case "--socket-dir": result.socketDirectory = value(word)
            case "--state-dir": result.stateDirectory = value(word)
            case "--help", "-h":
                say(usage)
                exit(0)
            default: fail("unknown option '\(word)'")
            }
        }
        return result
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("pincer-demo: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}

/// The app: what it reads from Pincer each tick, and the session it sends with.
final class Demo: Sendable {
    let pincer: Pincer
    let session: URLSession

    init(pincer: Pincer, session: URLSession) {
        self.pincer = pincer
        self.session = session
    }

    /// A GET through the session. Not `session.data(from:)`: on Linux its
    /// continuation can be resumed twice (a crash) when the task is
    /// cancelled just as it completes; here the first answer wins.
    func get(_ url: URL) async throws -> URLResponse {
        let running = Mutex<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URLResponse, Error>) in
                let pending = Mutex<CheckedContinuation<URLResponse, Error>?>(continuation)
                let task = session.dataTask(with: url) { _, response, error in
                    guard let c = pending.withLock({ c -> CheckedContinuation<URLResponse, Error>? in defer { c = nil }; return c }) else { return }
                    if let response, error == nil { c.resume(returning: response) } else { c.resume(throwing: error ?? URLError(.badServerResponse)) }
                }
                running.withLock { $0 = task }
                task.resume()
            }
        } onCancel: {
            // Off this thread: cancel() takes the session's lock, which a
            // completing task may hold while it waits for ours.
            if let task = running.withLock({ $0 }) { DispatchQueue.global().async { task.cancel() } }
        }
    }

    /// One tick's line: flags, environment, the GET's status, the spoofed location.
    func tick(_ n: Int) async -> String {
        let fast = pincer.flags.bool("fast-mode", default: false)
        let greeting = pincer.flags.string("greeting", default: "hello")
        let environment = pincer.servers.current ?? "none"
        let api = pincer.servers.variable("API_URL") ?? ""
        var status = "no API_URL"
        if let url = URL(string: api) {
            do {
                let response = try await get(url)
                status = "\((response as? HTTPURLResponse)?.statusCode ?? 0)"
            } catch {
                status = "failed (\(error.localizedDescription))"
            }
        }
        var line = "tick \(n) fast-mode=\(fast) greeting=\(greeting) env=\(environment) GET \(api) status=\(status)"
        if let fix = pincer.location.current {
            line += String(format: " location=%.5f,%.5f", fix.latitude, fix.longitude)
        }
        return line
    }
}

let arguments = Arguments.parse(Array(CommandLine.arguments.dropFirst()))

let server: LocalServer
let pincer: Pincer
do {
    server = try LocalServer()
    var options = PincerOptions(appName: "pincer-demo")
    options.socketDirectory = arguments.socketDirectory
    options.stateDirectory = arguments.stateDirectory
    pincer = try Pincer.start(options)

    try pincer.flags.register("fast-mode", remote: false, summary: "Demo: a bool flag")
    try pincer.flags.register("greeting", remote: "hello", summary: "Demo: a string flag")
    // Registered each run: the server's port changes; the chosen environment persists.
    try pincer.servers.register("production", name: "Production", variables: ["API_URL": server.url("production")])
    try pincer.servers.register("staging", name: "Staging", variables: ["API_URL": server.url("staging")])
} catch {
    FileHandle.standardError.write(Data("pincer-demo: \(error)\n".utf8))
    Pincer.stop()
    exit(1)
}
say("pincer-demo: pid \(getpid()), socket \(pincer.socketPath ?? "(none)")")

// Requests go through the capture, so they appear in the network logger.
let base = URLSessionConfiguration.ephemeral
// Credentials the session adds to every request, as an app's would (logged redacted).
base.httpAdditionalHeaders = ["Authorization": "Bearer demo-session-token"]
let configuration = pincer.network.recorder.map { URLSessionConfiguration.pincerLogged(base: base, recorder: $0) } ?? base
configuration.timeoutIntervalForRequest = 5
let demo = Demo(pincer: pincer, session: URLSession(configuration: configuration))
// net.replay sends through the same session (pincer attach run net.replay 3).
pincer.network.recorder?.enableReplay(through: demo.session)

// A route played from the shell moves the location: print its fixes (at
// most five a second: a route played at 60x real time sends many more).
let lastFix = Mutex<ContinuousClock.Instant?>(nil)
let fixes = try? pincer.location.subscribe { fix in
    guard let fix else { return say("  location: spoofing off") }
    let now = ContinuousClock.now
    let due = lastFix.withLock { last in
        guard last.map({ now - $0 >= .milliseconds(200) }) ?? true else { return false }
        last = now
        return true
    }
    if due { say(String(format: "  fix %.5f,%.5f %.1f m/s course %.0f", fix.latitude, fix.longitude, fix.speed, fix.course)) }
}

let loop = Task {
    var n = 0
    while !Task.isCancelled && !stopRequested.load(ordering: .acquiring) {
        n += 1
        say(await demo.tick(n))
        if let ticks = arguments.ticks, n >= ticks { break }
        do { try await Task.sleep(nanoseconds: UInt64(arguments.interval * 1_000_000_000)) } catch { break }
    }
}

// SIGINT and SIGTERM end the loop (a stop asked for before now is seen by
// the loop's first check); cleanup below runs either way.
stopAction.withLock { $0 = { loop.cancel() } }
if stopRequested.load(ordering: .acquiring) { loop.cancel() }

await loop.value
if let fixes { pincer.location.unsubscribe(fixes) }
PincerNetworkCapture.stopCapturing(configuration) // before the logger goes away
demo.session.finishTasksAndInvalidate() // no task runs now; cancelling could race a completion
Pincer.stop() // control socket removed, plugins shut down
server.stop()
say("pincer-demo: stopped")
exit(0)
