// Dispatch: a prepared typed call through the host (libffi) into a plugin
// shared library the host dlopen'ed, against calling the same C function in
// the same library directly through a function pointer.
//
// The library is Sources/BenchKernels/kernels.c compiled at run time with
// cc into a plugin .so (its bench_plugin_entry exported as
// pincer_plugin_entry): the host loads it by path like any plugin, and the
// baselines' loops are looked up in that same loaded library with dlsym, so
// both sides call the one bench_add in it. For information, the same
// prepared call into the built-in libpincer-plugin-devopts.so as SwiftPM
// built it (devopts.add has the same signature and body).
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

struct DispatchFigures: Sendable {
    /// The plugin library the host dlopen'ed, and the compiler line that built it.
    var library: String
    var buildCommand: String
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
    /// The same prepared call into the built-in devopts plugin.
    var builtinNanoseconds: Double

    static let targetCallsPerSecond = 2_000_000.0

    var preparedRate: Double { 1e9 / preparedNanoseconds }
    var directRate: Double { 1e9 / directNanoseconds }
    var plainRate: Double { 1e9 / plainNanoseconds }
    var perCallRate: Double { 1e9 / perCallNanoseconds }
    var builtinRate: Double { 1e9 / builtinNanoseconds }
    /// How many times faster the direct call is than dispatch.
    var ratio: Double { directRate / preparedRate }
    var passed: Bool { preparedRate >= DispatchFigures.targetCallsPerSecond }
}

enum DispatchBench {
    static let arguments: [Value] = [.i64(40), .f64(2.5)]
    static let expected = 42.5
    static let rounds = 3

    typealias Loop = @convention(c) (UInt64, Int64, Double) -> Double

    /// Compiles kernels.c into `directory` as a plugin; returns its path and the command line.
    static func buildPlugin(into directory: String) throws(BenchError) -> (path: String, command: String) {
        guard let source = PackageFile.path("Sources/BenchKernels/kernels.c"),
              let include = PackageFile.path("Sources/BenchKernels/include/bench_kernels.h") else {
            throw BenchError("cannot find Sources/BenchKernels/kernels.c (looked beside the package sources and in the current directory)")
        }
        guard let cc = findInPath("cc") else {
            throw BenchError("no C compiler `cc` on PATH: the dispatch part compiles its plugin at run time (apt-get install gcc)")
        }
        let output = "\(directory)/libbench-dispatch.so"
        // -Bsymbolic: the library's own bench_add, not the copy linked into this executable.
        let arguments = ["-std=c11", "-O2", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-Dbench_plugin_entry=pincer_plugin_entry",
                         "-I", String(include.dropLast("/bench_kernels.h".count)), source, "-o", output]
        let (status, _, errors) = try runCapturing(cc, arguments)
        let command = (["cc"] + arguments.map { $0 == output ? "libbench-dispatch.so" : $0 }).joined(separator: " ")
        guard status == 0 else {
            throw BenchError("`\(command)` exited with \(describeWaitStatus(status)): \(String(decoding: errors.suffix(400), as: UTF8.self))")
        }
        return (output, command)
    }

    static func run(calls: Int) throws(BenchError) -> DispatchFigures {
        let state = try TemporaryDirectory(prefix: "pincer-bench-dispatch")
        defer { state.remove() }
        let (library, buildCommand) = try buildPlugin(into: state.path)

        var options = Host.Options(stateDirectory: state.path)
        options.builtinDirectory = nil
        options.pluginPaths = [library]
        let host = Host(options: options)
        defer { host.shutdown() }
        host.loadAll()
        if let failure = host.failures.first {
            throw BenchError("the dispatch plugin \(library) was refused: \(failure)")
        }
        guard let command = host.command(named: "bench.add") else {
            throw BenchError("\(library) loaded but registered no command bench.add (have: \(host.commands.map(\.fullName).joined(separator: ", ")))")
        }
        // RTLD_NOLOAD: the library the host loaded, not a second copy.
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) else {
            throw BenchError("\(library) is not loaded after the host loaded it: \(String(cString: dlerror()))")
        }
        func loop(_ name: String) throws(BenchError) -> Loop {
            guard let symbol = dlsym(handle, name) else { throw BenchError("\(library) has no \(name): \(String(cString: dlerror()))") }
            return unsafeBitCast(symbol, to: Loop.self)
        }
        let loopTyped = try loop("bench_loop_typed"), loopPlain = try loop("bench_loop_plain")

        let builtinState = try TemporaryDirectory(prefix: "pincer-bench-dispatch-devopts")
        defer { builtinState.remove() }
        let builtinHost = try BuiltPlugin.host(loading: "devopts", state: builtinState)
        defer { builtinHost.shutdown() }
        guard let builtinCommand = builtinHost.command(named: "devopts.add") else {
            throw BenchError("libpincer-plugin-devopts.so loaded but registered no devopts.add")
        }

        let prepared: PreparedCall, builtin: PreparedCall
        do {
            prepared = try PreparedCall(command: command, arguments: arguments)
            builtin = try PreparedCall(command: builtinCommand, arguments: arguments)
        } catch {
            throw BenchError("PreparedCall(add, \(arguments)) failed: \(error)")
        }

        // Correctness first: every path must compute 40 + 2.5.
        let viaPrepared = try invokePrepared(prepared, times: 1)
        let viaCommand = try invokeCommand(command, times: 1)
        let viaBuiltin = try invokePrepared(builtin, times: 1)
        let viaDirect = loopTyped(1, 40, 2.5)
        let viaPlain = loopPlain(1, 40, 2.5)
        for (what, got) in [("prepared call", viaPrepared), ("command.invoke", viaCommand), ("prepared call of devopts.add", viaBuiltin),
                            ("direct call", viaDirect), ("plain C call", viaPlain)] where got != expected {
            throw BenchError("\(what) of add(40, 2.5) returned \(got), expected \(expected)")
        }

        // The direct calls are two orders of magnitude cheaper: give them more
        // iterations so a round lasts long enough to time well.
        let directCalls = calls.multipliedReportingOverflow(by: 10).overflow ? Int.max : calls * 10
        // Converting and preparing per call allocates: fewer of those.
        let perCallCalls = max(1, calls / 10)

        // Warm up caches, branch predictors and the CPU clock.
        _ = try invokePrepared(prepared, times: max(1, min(calls, 200_000)))
        _ = try invokePrepared(builtin, times: max(1, min(calls, 200_000)))
        _ = try invokeCommand(command, times: max(1, min(perCallCalls, 20_000)))
        _ = loopTyped(UInt64(max(1, min(directCalls, 2_000_000))), 40, 2.5)
        _ = loopPlain(UInt64(max(1, min(directCalls, 2_000_000))), 40, 2.5)

        // Interleave the kinds within each round so drift (thermal, frequency,
        // noisy neighbours) hits them alike; keep the best round of each.
        var best = (prepared: UInt64.max, direct: UInt64.max, plain: UInt64.max, perCall: UInt64.max, builtin: UInt64.max)
        for _ in 0..<rounds {
            var t = monotonicNanoseconds()
            let sumPrepared = try invokePrepared(prepared, times: calls)
            best.prepared = min(best.prepared, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumDirect = loopTyped(UInt64(directCalls), 40, 2.5)
            best.direct = min(best.direct, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumPlain = loopPlain(UInt64(directCalls), 40, 2.5)
            best.plain = min(best.plain, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumPerCall = try invokeCommand(command, times: perCallCalls)
            best.perCall = min(best.perCall, monotonicNanoseconds() - t)

            t = monotonicNanoseconds()
            let sumBuiltin = try invokePrepared(builtin, times: calls)
            best.builtin = min(best.builtin, monotonicNanoseconds() - t)

            // Using the sums keeps every loop observable.
            guard sumPrepared == expected * Double(calls), sumDirect == expected * Double(directCalls),
                  sumPlain == expected * Double(directCalls), sumPerCall == expected * Double(perCallCalls),
                  sumBuiltin == expected * Double(calls) else {
                throw BenchError("a timed loop returned a wrong sum (prepared \(sumPrepared), direct \(sumDirect), plain \(sumPlain), per-call \(sumPerCall), devopts \(sumBuiltin))")
            }
        }

        func perCall(_ ns: UInt64, _ n: Int) -> Double { Double(max(ns, 1)) / Double(n) }
        return DispatchFigures(library: library, buildCommand: buildCommand,
                               preparedCalls: calls, directCalls: directCalls, perCallCalls: perCallCalls, rounds: rounds,
                               preparedNanoseconds: perCall(best.prepared, calls),
                               directNanoseconds: perCall(best.direct, directCalls),
                               plainNanoseconds: perCall(best.plain, directCalls),
                               perCallNanoseconds: perCall(best.perCall, perCallCalls),
                               builtinNanoseconds: perCall(best.builtin, calls))
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
            throw BenchError("\(prepared.command.fullName) failed through PreparedCall: \(error)")
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
            throw BenchError("\(command.fullName) failed through Command.invoke: \(error)")
        }
        return sum
    }
}
