// Dispatch: a prepared typed call through the host (libffi) against calling
// the same C function directly through a function pointer.
import BenchKernels
import PincerHost

struct DispatchFigures: Sendable {
    /// Calls per timed round of each kind.
    var preparedCalls: Int
    var directCalls: Int
    var perCallCalls: Int
    var rounds: Int
    /// Best round, in nanoseconds per call.
    var preparedNanoseconds: Double
    var directNanoseconds: Double
    var plainNanoseconds: Double
    var perCallNanoseconds: Double

    static let targetCallsPerSecond = 2_000_000.0

    var preparedRate: Double { 1e9 / preparedNanoseconds }
    var directRate: Double { 1e9 / directNanoseconds }
    var plainRate: Double { 1e9 / plainNanoseconds }
    var perCallRate: Double { 1e9 / perCallNanoseconds }
    /// How many times faster the direct call is than dispatch.
    var ratio: Double { directRate / preparedRate }
    var passed: Bool { preparedRate >= DispatchFigures.targetCallsPerSecond }
}

enum DispatchBench {
    static let arguments: [Value] = [.i64(40), .f64(2.5)]
    static let expected = 42.5
    static let rounds = 3

    static func run(calls: Int) throws(BenchError) -> DispatchFigures {
        let state = try TemporaryDirectory(prefix: "pincer-bench-dispatch")
        defer { state.remove() }

        var options = Host.Options(stateDirectory: state.path)
        options.builtinDirectory = nil
        options.pluginPaths = []
        let host = Host(options: options)
        defer { host.shutdown() }
        host.load(entry: bench_plugin_entry, origin: "<bench>")
        if let failure = host.failures.first {
            throw BenchError("the bench plugin was refused: \(failure)")
        }
        guard let command = host.command(named: "bench.add") else {
            throw BenchError("the bench plugin loaded but registered no command bench.add (have: \(host.commands.map(\.fullName).joined(separator: ", ")))")
        }

        let prepared: PreparedCall
        do {
            prepared = try PreparedCall(command: command, arguments: arguments)
        } catch {
            throw BenchError("PreparedCall(bench.add, \(arguments)) failed: \(error)")
        }

        // Correctness first: every path must compute 40 + 2.5.
        let viaPrepared = try invokePrepared(prepared, times: 1)
        let viaCommand = try invokeCommand(command, times: 1)
        let viaDirect = bench_loop_typed(1, 40, 2.5)
        let viaPlain = bench_loop_plain(1, 40, 2.5)
        for (what, got) in [("prepared call", viaPrepared), ("command.invoke", viaCommand),
                            ("direct call", viaDirect), ("plain C call", viaPlain)] where got != expected {
            throw BenchError("\(what) of bench.add(40, 2.5) returned \(got), expected \(expected)")
        }

        // The direct calls are two orders of magnitude cheaper: give them more
        // iterations so a round lasts long enough to time well.
        let directCalls = calls.multipliedReportingOverflow(by: 10).overflow ? Int.max : calls * 10
        // Converting and preparing per call allocates: fewer of those.
        let perCallCalls = max(1, calls / 10)

        // Warm up caches, branch predictors and the CPU clock.
        _ = try invokePrepared(prepared, times: max(1, min(calls, 200_000)))
        _ = try invokeCommand(command, times: max(1, min(perCallCalls, 20_000)))
        _ = bench_loop_typed(UInt64(max(1, min(directCalls, 2_000_000))), 40, 2.5)
        _ = bench_loop_plain(UInt64(max(1, min(directCalls, 2_000_000))), 40, 2.5)

        // Interleave the kinds within each round so drift (thermal, frequency,
        // noisy neighbours) hits them alike; keep the best round of each.
        var best = (prepared: UInt64.max, direct: UInt64.max, plain: UInt64.max, perCall: UInt64.max)
        for _ in 0..<rounds {
            var t = monotonicNanoseconds()
            let sumPrepared = try invokePrepared(prepared, times: calls)
            best.prepared = min(best.prepared, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumDirect = bench_loop_typed(UInt64(directCalls), 40, 2.5)
            best.direct = min(best.direct, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumPlain = bench_loop_plain(UInt64(directCalls), 40, 2.5)
            best.plain = min(best.plain, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumPerCall = try invokeCommand(command, times: perCallCalls)
            best.perCall = min(best.perCall, monotonicNanoseconds() - t)

            // Using the sums keeps every loop observable.
            guard sumPrepared == expected * Double(calls), sumDirect == expected * Double(directCalls),
                  sumPlain == expected * Double(directCalls), sumPerCall == expected * Double(perCallCalls) else {
                throw BenchError("a timed loop returned a wrong sum (prepared \(sumPrepared), direct \(sumDirect), plain \(sumPlain), per-call \(sumPerCall))")
            }
        }

        func perCall(_ ns: UInt64, _ n: Int) -> Double { Double(max(ns, 1)) / Double(n) }
        return DispatchFigures(preparedCalls: calls, directCalls: directCalls, perCallCalls: perCallCalls, rounds: rounds,
                               preparedNanoseconds: perCall(best.prepared, calls),
                               directNanoseconds: perCall(best.direct, directCalls),
                               plainNanoseconds: perCall(best.plain, directCalls),
                               perCallNanoseconds: perCall(best.perCall, perCallCalls))
    }

    /// `times` calls of the prepared call: the arguments are already converted.
    @inline(never)
    static func invokePrepared(_ prepared: PreparedCall, times: Int) throws(BenchError) -> Double {
        var sum = 0.0
        do {
            for _ in 0..<times {
                if case .f64(let x) = try prepared.invoke() { sum += x }
            }
        } catch {
            throw BenchError("bench.add failed through PreparedCall: \(error)")
        }
        return sum
    }

    /// `times` calls of Command.invoke: checks, lays out and prepares the
    /// arguments on every call.
    @inline(never)
    static func invokeCommand(_ command: Command, times: Int) throws(BenchError) -> Double {
        var sum = 0.0
        do {
            for _ in 0..<times {
                if case .f64(let x) = try command.invoke(arguments) { sum += x }
            }
        } catch {
            throw BenchError("bench.add failed through Command.invoke: \(error)")
        }
        return sum
    }
}
