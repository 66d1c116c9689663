import CPincerSDK
import PincerJSON
#if canImport(Glibc)
import Glibc
#endif

/// Scans plugin files in a child process (`pincer-plugin-scanner`, as
/// GStreamer's gst-plugin-scanner): the child loads each file, runs its
/// init against a real host and prints what it registered, one JSON line a
/// file. A plugin that crashes, exits or hangs there takes only the child
/// down; the parent records why, and scans the files after it in a new child.
public enum PluginScanner {
    public static let executableName = "pincer-plugin-scanner"

    // MARK: the child

    /// The scanner's main: `pincer-plugin-scanner --state-directory DIR
    /// [--provider SERVICE=PATH]... -- PATH...`. Exits 0 after the last file;
    /// 2 for a malformed command line.
    public static func main(arguments: [String]) -> Int32 {
        var stateDirectory: String?
        var providers: [String: String] = [:]
        var paths: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" { paths += arguments[(i + 1)...]; break }
            if (a == "--state-directory" || a == "--provider") && i + 1 < arguments.count {
                let v = arguments[i + 1]
                if a == "--state-directory" {
                    stateDirectory = v
                } else if let eq = v.firstIndex(of: "=") {
                    providers[String(v[..<eq])] = String(v[v.index(after: eq)...])
                }
                i += 2
                continue
            }
            let usage = "usage: \(executableName) --state-directory DIR [--provider SERVICE=PATH]... -- PATH...\n(run by pincer to learn what plugins register; not meant to be run by hand)\n"
            _ = usage.withCString { write(2, $0, strlen($0)) }
            return 2
        }
        guard let stateDirectory else { return 2 }
        // Records go to a private copy of stdout; a plugin's own prints in
        // init land on stderr and cannot corrupt them.
        let out = dup(1)
        dup2(2, 1)
        var options = Host.Options(stateDirectory: stateDirectory)
        options.builtinDirectory = nil
        options.logHandler = { _ in }
        let host = Host(options: options)
        host.beginScanning(providers: providers)
        for path in paths {
            var line = host.scan(path: path).json.serializedBytes()
            line.append(UInt8(ascii: "\n"))
            var done = 0
            while done < line.count {
                let n = line.withUnsafeBytes { write(out, $0.baseAddress! + done, $0.count - done) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { _exit(3) }
                done += n
            }
        }
        // No shutdown calls: a scan must not run plugin code beyond init.
        _exit(0)
    }

    // MARK: the parent

    struct Request {
        var paths: [String]
        /// Service id -> the plugin file that publishes it, for a plugin
        /// whose init looks up another plugin's service.
        var providers: [String: String]
        var stateDirectory: String
        var scanner: String
        var timeout: Double
        var progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    }

    /// Records for every path of the request, in any order; nil when the
    /// scanner cannot be started at all (the caller then loads in process).
    static func scan(_ request: Request) -> [String: RegistryRecord]? {
        var results: [String: RegistryRecord] = [:]
        var providers = request.providers
        var remaining = request.paths[...]
        let total = request.paths.count
        while !remaining.isEmpty {
            guard let child = Child.start(scanner: request.scanner, stateDirectory: request.stateDirectory,
                                          providers: providers, paths: Array(remaining)) else {
                return results.isEmpty ? nil : fallback(results, remaining, why: "the scanner \(request.scanner) could not be started")
            }
            var reader = LineReader(fd: child.output)
            var failure: String?
            reading: while let expected = remaining.first {
                switch reader.nextLine(timeout: request.timeout) {
                case .line(let bytes):
                    let record = (try? JSON.parse(bytes: bytes)).flatMap(RegistryRecord.init(json:))
                    if let record, record.key.path == expected {
                        results[expected] = record
                        if case .plugin(let p) = record.outcome { for s in p.services where providers[s] == nil { providers[s] = expected } }
                    } else {
                        results[expected] = refused(expected, "the scanner's record for it is unreadable")
                    }
                    remaining = remaining.dropFirst()
                    request.progress?(total - remaining.count, total)
                case .end:
                    failure = child.finish() ?? "the scanner stopped without a record for it"
                    break reading
                case .timedOut:
                    child.kill()
                    failure = "did not finish init within \(secondsText(request.timeout)) while being scanned (killed; PINCER_SCAN_TIMEOUT sets the limit)"
                    break reading
                }
            }
            close(child.output)
            guard let failure, let culprit = remaining.first else {
                _ = child.finish() // every file answered: reap the child
                continue
            }
            // The child died or stalled on the first file it had not answered for.
            results[culprit] = refused(culprit, failure)
            remaining = remaining.dropFirst()
            request.progress?(total - remaining.count, total)
        }
        return results
    }

    private static func fallback(_ results: [String: RegistryRecord], _ rest: ArraySlice<String>, why: String) -> [String: RegistryRecord] {
        var all = results
        for path in rest { all[path] = refused(path, why) }
        return all
    }

    static func refused(_ path: String, _ reason: String) -> RegistryRecord {
        var key = FileKey.current(path) ?? FileKey(path: path, size: -1, modified: 0, changed: 0, inode: 0, buildID: nil)
        key.buildID = ELFBuildID.read(path: path)
        return RegistryRecord(key: key, outcome: .refused(pluginID: nil, reason: reason))
    }

    /// A running scanner.
    private final class Child {
        let pid: pid_t
        let output: Int32
        private var status: Int32?

        init(pid: pid_t, output: Int32) {
            self.pid = pid
            self.output = output
        }

        static func start(scanner: String, stateDirectory: String, providers: [String: String], paths: [String]) -> Child? {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return nil }
            // The parent's ends must not leak into other children.
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var words = [scanner, "--state-directory", stateDirectory]
            for (service, path) in providers.sorted(by: { $0.key < $1.key }) { words += ["--provider", "\(service)=\(path)"] }
            words.append("--")
            words += paths
            var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            defer { for p in argv { free(p) } }
            // The Swift runtime's crash backtracer would spend a while on a
            // plugin that faults in init; the parent only needs the signal.
            var environment: [UnsafeMutablePointer<CChar>?] = [strdup("SWIFT_BACKTRACE=enable=no")]
            var e = environ
            while let entry = e.pointee {
                if strncmp(entry, "SWIFT_BACKTRACE=", 16) != 0 { environment.append(strdup(entry)) }
                e += 1
            }
            environment.append(nil)
            defer { for p in environment { free(p) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, scanner, &actions, nil, &argv, &environment)
            close(fds[1])
            guard rc == 0 else {
                close(fds[0])
                return nil
            }
            return Child(pid: pid, output: fds[0])
        }

        func kill() {
            _ = Glibc.kill(pid, SIGKILL)
            _ = finish()
        }

        /// Waits for the child; nil when it exited 0, else how it ended.
        func finish() -> String? {
            if status == nil {
                var s: Int32 = 0
                while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
                status = s
            }
            let s = status!
            let signal = s & 0x7f
            if signal != 0 && signal != 0x7f {
                return "crashed with \(PluginScanner.signalName(signal)) while being scanned"
            }
            let code = (s >> 8) & 0xff
            return code == 0 ? nil : "exited with status \(code) while being scanned (its init ended the process)"
        }
    }

    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGILL: "SIGILL",
                                      SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM"]
        let description = strsignal(signal).map { String(cString: $0) } ?? "unknown signal"
        return "signal \(signal) (\(names[signal].map { "\($0): " } ?? "")\(description))"
    }

    /// Lines from a pipe, each within a time limit.
    private struct LineReader {
        enum Next { case line([UInt8]), end, timedOut }
        let fd: Int32
        var buffer: [UInt8] = []
        var ended = false

        init(fd: Int32) { self.fd = fd }

        mutating func nextLine(timeout: Double) -> Next {
            let deadline = PluginScanner.monotonicSeconds() + timeout
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    return .line(line)
                }
                if ended { return .end }
                let left = deadline - PluginScanner.monotonicSeconds()
                guard left > 0 else { return .timedOut }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, Int32(min(left * 1000 + 1, 60_000)))
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { continue }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { ended = true; continue }
                buffer += chunk[..<n]
            }
        }
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

private func secondsText(_ s: Double) -> String {
    s == s.rounded() && s < 1e9 ? "\(Int(s)) s" : "\(s) s"
}
