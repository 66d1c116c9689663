import NetworkLog
import PincerPluginKit

/// net.proxy (and the shell's `pincer proxy`): runs the loopback proxy
/// until Ctrl-C, printing each exchange as it is recorded.
struct ProxyCommand {
    let state: FirstUse<LoggerState>
    let breakpoints: Breakpoints

    func register(with host: PluginHost) throws {
        let command = self
        try host.addCommand("proxy(port: i64 = 8080, max_connections: i64 = 64, timeout: i64 = 30) -> string",
                            summary: "An HTTP/1.1 proxy on 127.0.0.1 that records any program's traffic (HTTP_PROXY) through the same rules",
                            details: """
                                Point a program at it: HTTP_PROXY=http://127.0.0.1:8080 HTTPS_PROXY=http://127.0.0.1:8080 (curl, Python, Node, C). Plain http is recorded whole (redacted before storage) and goes through the interception rules (mocks, map-remote, rewrites, blocks, delays, breakpoints). https goes through CONNECT: tunnelled, not decrypted, recorded as metadata (host, port, bytes each way, timing). Bodies stream: the log keeps its body cap of each, and a body is held whole (up to 10 MiB) only when a rule must see or change it. --port 0 takes any free port. At most --max-connections clients at once (more get 503). Answers of its own: 400 for a request it cannot read (with what was wrong), 502 when the server cannot be reached or answers nonsense, 504 when it does not answer within --timeout seconds (default 30). Runs until Ctrl-C, then ends open connections and stops. Other shells see the traffic when the log is persisted (net.persist).
                                """,
                            concurrent: true) { args in
            let logger = try command.state.get()
            var options = LoopbackProxy.Options()
            options.port = Int(clamping: args[0].i64)
            options.maxConnections = Int(clamping: args[1].i64)
            guard (1...3600).contains(args[2].i64) else { throw CommandError.invalidArgument("timeout \(args[2].i64) s is not 1–3600") }
            options.idleTimeoutMs = Int32(args[2].i64 * 1000)
            let proxy = try LoopbackProxy(logger: logger, breakpoints: command.breakpoints, options: options)
            let json = args.wantsJSON
            if json {
                args.output(json: .object([("listening", .string("127.0.0.1:\(proxy.port)")), ("port", .int(Int64(proxy.port)))]))
            } else {
                args.output("listening on 127.0.0.1:\(proxy.port): HTTP_PROXY=http://127.0.0.1:\(proxy.port) HTTPS_PROXY=http://127.0.0.1:\(proxy.port); Ctrl-C stops\n")
            }
            proxy.run(cancelled: { args.isCancelled }) { e in
                if json {
                    args.output(json: .object([("id", .uint(e.id)), ("method", .string(e.method)), ("url", .string(e.url)),
                                               ("status", e.status.map { .int(Int64($0)) } ?? .null), ("state", .string(e.state.rawValue)),
                                               ("duration", .double(e.duration)), ("size", .int(Int64(e.responseBody.size)))]))
                } else {
                    args.output(Tail.line(e))
                }
            }
            try logger.flush()
            return .string("stopped the proxy on 127.0.0.1:\(proxy.port)")
        }
    }
}
