// pincer-bench: measures the Pincer host against baselines taken in the same
// run and prints the figures as ratios. See `pincer-bench --help`.
//
//   swift build -c release && .build/release/pincer-bench
#if canImport(Glibc)
import Glibc
#endif

func printError(_ text: String) {
    var bytes = Array((text + "\n").utf8)
    _ = write(2, &bytes, bytes.count)
}

func printOut(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { break }
    }
}

let options: BenchOptions
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("pincer-bench: \(error.message)")
    printError("run 'pincer-bench --help' for usage")
    exit(2)
}
if options.help {
    printOut(BenchOptions.usage)
    exit(0)
}
if Build.isDebug { printError(Build.debugWarning) }

var report = Report()
if options.runsDispatch {
    do {
        report.dispatch = try DispatchBench.run(calls: options.calls)
    } catch {
        report.dispatchError = error.message
        printError("pincer-bench: dispatch: \(error.message)")
    }
}
if options.runsStartup {
    do {
        report.startup = try StartupBench.run(runs: options.runs)
    } catch {
        report.startupError = error.message
        printError("pincer-bench: startup: \(error.message)")
    }
}
if options.runsFlags {
    do {
        report.flags = try FlagsBench.run(threads: options.threads, lookups: options.lookups)
    } catch {
        report.flagsError = error.message
        printError("pincer-bench: flags: \(error.message)")
    }
}
if options.runsNet {
    let net = NetBench.run(requests: options.requests)
    for (part, message) in net.errors { printError("pincer-bench: net: \(part): \(message)") }
    report.net = net
}
if options.runsIntercept {
    do {
        report.intercept = try InterceptBench.run()
    } catch {
        report.interceptError = error.message
        printError("pincer-bench: intercept: \(error.message)")
    }
}
if options.runsProxy {
    do {
        let proxy = try ProxyBench.run()
        for (part, message) in proxy.errors { printError("pincer-bench: proxy: \(part): \(message)") }
        report.proxy = proxy
    } catch {
        report.proxyError = error.message
        printError("pincer-bench: proxy: \(error.message)")
    }
}
if options.runsL10n {
    do {
        let l10n = try L10nBench.run(strings: options.strings)
        for (part, message) in l10n.errors { printError("pincer-bench: l10n: \(part): \(message)") }
        report.l10n = l10n
    } catch {
        report.l10nError = error.message
        printError("pincer-bench: l10n: \(error.message)")
    }
}
if options.runsA11y {
    do {
        report.a11y = try A11yBench.run()
    } catch {
        report.a11yError = error.message
        printError("pincer-bench: a11y: \(error.message)")
    }
}
if options.runsLoc {
    do {
        let loc = try LocBench.run(points: options.points)
        for (part, message) in loc.errors { printError("pincer-bench: loc: \(part): \(message)") }
        report.loc = loc
    } catch {
        report.locError = error.message
        printError("pincer-bench: loc: \(error.message)")
    }
}
if options.runsDb {
    do {
        let db = try DatabaseBench.run()
        if let e = db.baselineError { printError("pincer-bench: db: sqlite3: \(e)") }
        report.db = db
    } catch {
        report.dbError = error.message
        printError("pincer-bench: db: \(error.message)")
    }
}
if options.runsRpc {
    do {
        report.rpc = try RPCBench.run()
    } catch {
        report.rpcError = error.message
        printError("pincer-bench: rpc: \(error.message)")
    }
}
printOut(options.json ? report.json() : report.text())
exit(report.passed ? 0 : 1)
