import Dispatch
import PincerHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C presses while a plugin command runs (SIGINT handler below).
private let interrupts = Atomic<Int>(0)

/// How long a cancelled command has to return before the shell stops
/// waiting for it (a second Ctrl-C stops waiting at once).
let cancelGraceSeconds = 2.0

/// One plugin command run on a thread of its own, so that the shell's
/// thread stays free to notice Ctrl-C and --timeout. The ABI cannot
/// interrupt a plugin function: the shell sets the call's Cancellation
/// (pincer_call_t.is_cancelled) and waits `cancelGraceSeconds` for the
/// command to return; one that does not is abandoned, still running.
final class CommandRun: @unchecked Sendable {
    enum Outcome {
        case finished(Result<Value, CommandFailure>, cancelled: String?)
        /// The command did not return after being cancelled for this reason.
        case abandoned(reason: String)
    }

    private let done = Atomic<Bool>(false)
    /// Signalled once `done` is set: the shell's thread wakes at once, where
    /// a poll every 10 ms kept each command's process alive 5 ms longer on average.
    private let finished = DispatchSemaphore(value: 0)
    // Written by the worker before `done` is set (releasing), read after it is seen (acquiring).
    private var result: Result<Value, CommandFailure>?

    /// Runs `body` on a new thread and waits for it, Ctrl-C or `timeout`.
    static func run(command: Command, timeout: Double?, cancellation: Cancellation,
                    _ body: @escaping @Sendable () -> Result<Value, CommandFailure>) -> Outcome {
        let run = CommandRun()
        let crashNote = "pincer: plugin \(command.pluginID) crashed in \(command.fullName): signal "
        let started = Worker.start {
            CrashNote.during(crashNote) {
                let r = body()
                run.result = r
                run.done.store(true, ordering: .releasing)
                run.finished.signal()
            }
        }
        // Without a thread of its own the call still runs, only not cancellably.
        guard started else { return .finished(body(), cancelled: nil) }
        let restore = SignalTrap.catchInterrupts()
        defer { restore() }
        let start = monotonicSeconds()
        var reason: String?
        var cancelledAt = 0.0
        while !run.done.load(ordering: .acquiring) {
            let now = monotonicSeconds()
            let presses = interrupts.load(ordering: .relaxed)
            if reason == nil {
                if presses > 0 {
                    reason = "interrupted (Ctrl-C)"
                } else if let timeout, now - start >= timeout {
                    reason = "timed out after \(NumberTextShell.seconds(timeout))"
                }
                if reason != nil {
                    cancellation.cancel()
                    cancelledAt = now
                }
            }
            if let reason, presses > 1 || now - cancelledAt >= cancelGraceSeconds {
                return .abandoned(reason: reason)
            }
            // Ctrl-C and the time-out are looked at every 10 ms.
            _ = run.finished.wait(timeout: .now() + .milliseconds(10))
        }
        return .finished(run.result!, cancelled: reason)
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

enum NumberTextShell {
    /// "1 s", "0.5 s".
    static func seconds(_ s: Double) -> String {
        s == s.rounded() && s < 1e15 ? "\(Int64(s)) s" : "\(s) s"
    }
}

/// A detached pthread for one closure.
private enum Worker {
    final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

/// SIGINT while a command runs: counted, not fatal, so the shell can
/// cancel the command and go on (the REPL returns to its prompt).
private enum SignalTrap {
    /// Installs the handler; returns what puts the previous one back.
    static func catchInterrupts() -> () -> Void {
        interrupts.store(0, ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interrupts.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGINT, &action, &previous)
        return {
            var old = previous
            sigaction(SIGINT, &old, nil)
        }
    }
}

// MARK: crash last words

/// A plugin that crashes in a command takes the process with it (it is a
/// library in it). These handlers make the last line on standard error
/// name the plugin and the command, then let the signal do what it would
/// have done, so the exit status stays the signal. The handler only calls
/// write(2), sigaction(2) and raise(3) on memory prepared before the call
/// (async-signal-safe), and runs on an alternate stack so that a stack
/// overflow can still report.
private nonisolated(unsafe) var crashMessage: UnsafeMutablePointer<CChar>? = nil
private nonisolated(unsafe) var crashMessageLength = 0
/// The handlers found at installation, indexed by signal number.
private nonisolated(unsafe) var previousActions: UnsafeMutablePointer<sigaction>? = nil
private nonisolated(unsafe) var digitBuffer: UnsafeMutablePointer<UInt8>? = nil
private let crashSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT]
private let crashHandlersInstalled = Mutex(false)

enum CrashNote {
    static let altStackSize = 64 * 1024

    /// Runs `body` (a plugin call, on the calling thread) with the crash
    /// handlers installed and `prefix` ("pincer: plugin X crashed in Y: signal ")
    /// ready to be written.
    static func during(_ prefix: String, _ body: () -> Void) {
        installHandlers()
        // An alternate stack for this thread only; the handler may run on it.
        let stackMemory = UnsafeMutableRawPointer.allocate(byteCount: altStackSize, alignment: 16)
        var stack = stack_t()
        stack.ss_sp = stackMemory
        stack.ss_size = altStackSize
        stack.ss_flags = 0
        sigaltstack(&stack, nil)
        let message = strdup(prefix)!
        crashMessageLength = strlen(message)
        crashMessage = message
        body()
        crashMessage = nil
        crashMessageLength = 0
        free(message)
        var off = stack_t()
        off.ss_flags = Int32(SS_DISABLE)
        sigaltstack(&off, nil)
        stackMemory.deallocate()
    }

    private static func installHandlers() {
        crashHandlersInstalled.withLock { installed in
            guard !installed else { return }
            installed = true
            digitBuffer = .allocate(capacity: 16)
            let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
            previous.initialize(repeating: sigaction(), count: 65)
            previousActions = previous
            for sig in crashSignals {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = crashHandler
                sigemptyset(&action.sa_mask)
                action.sa_flags = Int32(SA_ONSTACK)
                sigaction(sig, &action, previous + Int(sig))
            }
        }
    }
}

private let crashHandler: @convention(c) (Int32) -> Void = { sig in
    if let message = crashMessage, let digits = digitBuffer {
        _ = write(2, message, crashMessageLength)
        var n = Int(sig), count = 0
        repeat {
            digits[15 - count] = UInt8(48 + n % 10)
            n /= 10
            count += 1
        } while n > 0 && count < 15
        _ = write(2, digits + (16 - count), count)
        var newline: UInt8 = 10
        _ = write(2, &newline, 1)
    }
    if let previous = previousActions {
        sigaction(sig, previous + Int(sig), nil)
    }
    raise(sig)
}
