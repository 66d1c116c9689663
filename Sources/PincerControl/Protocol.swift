// The control protocol between an app that embeds Pincer and the `pincer`
// shell attached to it. Both sides share this file.
//
// TRANSPORT
//   A Unix domain socket, <runtime dir>/<pid>.sock (RuntimeDirectory). The
//   directory is 0700 and the socket 0600; the server checks the peer's uid
//   with SO_PEERCRED and closes a connection from any other uid before
//   reading a byte.
//
// FRAMING
//   JSON-RPC 2.0, one message per line (UTF-8 JSON without raw newlines,
//   then "\n"), at most `maxMessageBytes` per line in either direction. A
//   longer line is answered with tooLarge (id null) and skipped up to its
//   newline; the connection stays open. A response that would be longer is
//   replaced by a tooLarge error for its id; longer output is split over
//   several "output" notifications; a longer event is dropped (and counted
//   in "dropped"). Requests may be answered out of order; responses carry
//   the request's id. Batches are not supported (an array is an
//   invalidRequest).
//
// REQUESTS
//   Every request has an id, a string or an integer (a request without one
//   is an invalidRequest with id null: each request is answered). An id
//   may not be reused while its request is in progress (invalidRequest).
//   hello, cancel and unsubscribe are answered at once, in order; the
//   others run on the app's request threads, at most 16 per connection at
//   a time (more: `busy`). Closing the connection ends its subscriptions; requests still
//   running are not answered.
//
// METHODS (params are objects; results below)
//   hello       {}                        -> {"protocol":1,"app":{"name","pid"},"pincer","abi","methods":[..],
//                                              "max_message_bytes","allow_changes","socket"[,"socket_warning"]}
//                                            socket: the path served; socket_warning: why it is not in
//                                            the usual directory (that one was refused, e.g. another
//                                            user's, and the app made a private one)
//   describe    {}                        -> {"plugins":[..],"failed":[..],"sections":[..],"commands":[..]}
//                                            (the shapes of `pincer plugins|menu|commands --json`)
//   invoke      {"command","arguments": {name: value} | [values], "output"?: "text" | "json"}
//                                         -> {"type","result"} (as `pincer run --json`); live output
//                                            arrives first as "output" notifications with this id,
//                                            as text or, with "output": "json", one JSON object per
//                                            line from commands that ask (pincer_call_t.output_format).
//                                            Values may be JSON strings (converted as shell words are)
//                                            or JSON numbers and booleans of the parameter's type; null
//                                            or absent takes the default. A rest parameter takes an
//                                            array of strings (named) or, as in the shell, the
//                                            positional values left once the required parameters are
//                                            filled (its optional parameters are then named only).
//                                            A failing command: commandFailed, its message, and
//                                            data {"status": "PINCER_…"}.
//   get         {"entry"}                 -> the entry (as `pincer get --json`); an entry whose read
//                                            callback fails: commandFailed, data = the entry.
//   set         {"entry","value"}         -> the entry after the change; value a string (a boolean or
//                                            number is taken as its text). A value the entry refuses:
//                                            invalidParams.
//   cancel      {"id"}                    -> {"cancelled": bool}; the cancelled request is answered at
//                                            once with `cancelled`. A plugin function already running
//                                            finishes (the ABI cannot interrupt it); its result and
//                                            further output are dropped. false: no request with this id
//                                            is in progress (it already finished, or never was).
//   subscribe   {"topics":[..]}           -> {"subscription","seq","snapshot":{short name: [entries]}}:
//                                            host event topics: "net.entry" (exact), "flags.*" (every
//                                            topic starting "flags."), "*" (all). The snapshot is the
//                                            menu entries of the plugins whose short name is a topic's
//                                            first part (every plugin for "*"), read after the
//                                            subscription started, and `seq` the last event number
//                                            before it. Then "event" notifications, never before this
//                                            response. `seq` numbers every event the app emits, one
//                                            count for all clients, so it increases and may skip.
//   unsubscribe {"subscription"}          -> {"unsubscribed": bool} (false: no such subscription here)
//   shell       {"argv":[..],"terminal"?} -> {"exit_code"}: runs one `pincer` shell command inside the
//                                            app, exactly as the local shell would (same text, JSON and
//                                            exit codes); its standard output and error arrive first as
//                                            "output" notifications with this id. "terminal": true
//                                            prints JSON as on a terminal (indented). Options that load
//                                            plugins (--plugin-path, --no-builtin, --state-dir,
//                                            --strict) and the commands shell, ps, attach and tail are
//                                            usage errors (exit 2). This is how `pincer attach` gives
//                                            every shell command against the app.
//                                            "answers": true says the client can answer questions
//                                            (pincer_call_t.ask): they come as "ask" notifications
//                                            with this id, and `answer` replies; without it a
//                                            command's questions get no answer (NULL).
//   answer      {"id","text"}             -> {"answered": bool}: the answer (a string, or null for
//                                            none: input ended) to the "ask" of request `id`.
//                                            false: no question of that request is waiting.
//
//   With allow_changes false, invoke of a command that changes state
//   (PINCER_COMMAND_CHANGES_STATE), set, and shell commands that change
//   state (such commands run directly or with `run`; set, pin, unpin,
//   activate) fail with `disabled` before anything is called; the shell
//   prints nothing then.
//
// NOTIFICATIONS (server to client; no id)
//   event    {"subscription","seq","topic","payload"}  payload: the event's JSON, or a string
//   output   {"id","stream":"stdout"|"stderr","text"}
//   ask      {"id","question"}   request `id` (a shell with "answers") waits for an `answer`
//   dropped  {"count"}   this many events were not sent: the client's queue was full (or an event
//                        was longer than the limit)
//
// FLOW CONTROL
//   Each client has a queue bounded in bytes (`queueBytes`, 4 MiB by
//   default, and never less than one message of the limit), counting what
//   the client's socket has not taken yet. Events that do not fit are
//   counted and reported with one "dropped" notice once there is room again
//   (so once per overflow, after the events queued before it); the app
//   never waits for a slow client. A response or output that does not fit
//   takes the place of the newest queued events (also counted); a client
//   whose queue is full of responses and output (it sent requests but does
//   not read) is disconnected, and its queue freed.
//
// CONNECTIONS
//   The app serves every connection from one thread (poll), so idle clients
//   cost no thread; the listen backlog holds a burst of connects (4096,
//   capped by the kernel's net.core.somaxconn).
//
// ERRORS (JSON-RPC error objects: {"code","message","data"?}; messages name the field, e.g.
//   "params.arguments.a expects i64: 'x' is not an integer (i64)")
import PincerJSON

public enum ControlProtocol {
    public static let version = 1
    /// The default limit of one message, each way.
    public static let maxMessageBytes = 1 << 20
    /// The default bytes queued for one client (FLOW CONTROL).
    public static let queueBytes = 4 << 20
    /// Events held for a subscription until its response is queued, at most.
    public static let heldEvents = 1024

    public enum Method: String, CaseIterable, Sendable {
        case hello, describe, invoke, get, set, cancel, subscribe, unsubscribe, shell, answer
    }

    public enum Notification: String, Sendable {
        case event, output, dropped, ask
    }

    public enum ErrorCode: Int64, Sendable {
        case parseError = -32700
        case invalidRequest = -32600
        case methodNotFound = -32601
        case invalidParams = -32602
        case internalError = -32603
        /// The plugin's command or entry callback failed; message is its message.
        case commandFailed = -32000
        /// No such command, entry, subscription or request.
        case notFound = -32001
        /// The app disabled commands that change state.
        case disabled = -32002
        /// Cancelled by the client.
        case cancelled = -32003
        /// A message longer than the limit.
        case tooLarge = -32004
        /// Too many requests of one connection are in progress.
        case busy = -32005
    }

    /// {"jsonrpc":"2.0","id":…,"result":…}
    public static func response(id: JSON, result: JSON) -> JSON {
        .object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])
    }

    /// {"jsonrpc":"2.0","id":…,"error":{"code","message"[,"data"]}}
    public static func error(id: JSON, _ code: ErrorCode, _ message: String, data: JSON? = nil) -> JSON {
        var e: [(String, JSON)] = [("code", .int(code.rawValue)), ("message", .string(message))]
        if let data { e.append(("data", data)) }
        return .object([("jsonrpc", .string("2.0")), ("id", id), ("error", .object(e))])
    }

    /// {"jsonrpc":"2.0","method":…,"params":…}, without an id.
    public static func notification(_ method: Notification, _ params: JSON) -> JSON {
        .object([("jsonrpc", .string("2.0")), ("method", .string(method.rawValue)), ("params", params)])
    }

    /// {"jsonrpc":"2.0","id":…,"method":…,"params":…}
    public static func request(id: Int64, _ method: Method, _ params: JSON = .object([])) -> JSON {
        .object([("jsonrpc", .string("2.0")), ("id", .int(id)), ("method", .string(method.rawValue)), ("params", params)])
    }
}
