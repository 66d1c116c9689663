/*
 * pincer/network.h — the network logger's recording service,
 * "pincer.network/1".
 *
 * Published by the built-in `net` plugin. The URLSession capture library
 * (PincerNetworkCapture) records through it, and so can any code that makes
 * HTTP requests another way (gRPC, raw sockets, other languages): call
 * `begin` when a request starts and `complete` or `fail` when it ends.
 * Check PINCER_HAS_SERVICE_SLOT (service.h) before using a slot appended
 * after version 1.0 of this service.
 *
 * What is stored: the logger redacts before it stores anything (sensitive
 * header, query, form, JSON and cookie values, URL credentials, bearer
 * tokens, JWT signatures, tokens by shape in text bodies and in every free
 * text such as `fail`'s error and the status text), keeps at most the
 * per-body cap of each body, and withholds bodies it cannot check
 * (multipart, XML, invalid JSON). Ignored hosts store nothing (begin
 * returns 0); metadata-only rules store no body bytes. So pass the real
 * request and response: the logger decides what to keep.
 *
 * Threads: every function is [any-thread]. Inputs are borrowed for the
 * call and copied; nothing here hands out memory.
 */
#ifndef PINCER_NETWORK_H
#define PINCER_NETWORK_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_NETWORK_SERVICE_ID "pincer.network/1"

/* One header. Names and values are UTF-8 (values may be any bytes the
 * server sent, read as UTF-8 with replacement). */
typedef struct pincer_http_header {
    const char *name;
    const char *value;
} pincer_http_header_t;

/* Flags for pincer_network_request_t.flags. */
#define PINCER_NETWORK_STUBBED 0x1u /* answered by a stub/mock, not the network */

/* A request as it was sent. Borrowed for the call. */
typedef struct pincer_network_request {
    uint32_t struct_size;             /* sizeof(pincer_network_request_t) */
    uint32_t flags;                   /* PINCER_NETWORK_* */
    const char *method;               /* "GET", ...; required */
    const char *url;                  /* absolute URL; required */
    const pincer_http_header_t *headers;
    uint32_t header_count;
    uint32_t reserved;
    const uint8_t *body;              /* may be NULL when body_length is 0 */
    uint64_t body_length;
    double started_at;                /* Unix time in seconds; 0 means now */
} pincer_network_request_t;

/* HAR timing phases in milliseconds; -1 when unknown or not applicable.
 * `ssl` is included in `connect`. */
typedef struct pincer_network_timings {
    double blocked, dns, connect, ssl, send, wait, receive;
} pincer_network_timings_t;

/* A response as it was received. Borrowed for the call. */
typedef struct pincer_network_response {
    uint32_t struct_size;             /* sizeof(pincer_network_response_t) */
    int32_t status;                   /* HTTP status code */
    const char *status_text;          /* may be NULL */
    const char *http_version;         /* e.g. "HTTP/1.1"; NULL means HTTP/1.1 */
    const pincer_http_header_t *headers;
    uint32_t header_count;
    uint32_t reserved;
    const uint8_t *body;              /* the whole (decoded) body; may be NULL when body_length is 0 */
    uint64_t body_length;
    const char *redirect_url;         /* for a 3xx hop: the Location followed; else NULL */
    const char *server_ip;            /* NULL when unknown */
    pincer_network_timings_t timings;
} pincer_network_response_t;

/* What intercept_request decided (pincer_network_decision_t.action). */
typedef uint32_t pincer_network_action_t;
#define PINCER_NETWORK_SEND    0u /* send decision.request */
#define PINCER_NETWORK_RESPOND 1u /* do not send: hand decision.response to the app */
#define PINCER_NETWORK_FAIL    2u /* do not send: fail with decision.error_code */
/* Since table 1.3 (ABI 1.7), only for a caller that set
 * PINCER_NETWORK_ACCEPTS_HOLD: a breakpoint holds the exchange for a person
 * to look at; call await_release(handle) from a thread that may wait. */
#define PINCER_NETWORK_HOLD    3u

/* Bits of pincer_network_decision_t.accepts, set by the caller. */
#define PINCER_NETWORK_ACCEPTS_HOLD 0x1u /* the caller handles PINCER_NETWORK_HOLD */

/* A decision of the rules (version 1.2 of the table; 1.3 appended accepts and held). Filled by the service;
 * see intercept_request for who owns its pointers and for how long. */
typedef struct pincer_network_decision {
    uint32_t struct_size;              /* set by the caller: sizeof(pincer_network_decision_t) */
    pincer_network_action_t action;    /* PINCER_NETWORK_SEND, _RESPOND or _FAIL */
    pincer_network_request_t request;  /* SEND: the request to send (map-remote, rewrites applied) */
    pincer_network_response_t response;/* RESPOND: the response for the app */
    int32_t error_code;                /* FAIL: a URLError code (-1009 not connected, -1001 timed out, ...) */
    uint32_t reserved;
    const char *error_text;            /* FAIL: the message for the app */
    double delay_ms;                   /* wait this long before sending or answering (at most 30 s) */
    uint64_t max_receive_bytes_per_second; /* 0: unlimited */
    uint64_t max_send_bytes_per_second;    /* 0: unlimited */
    uint64_t handle;                   /* for intercept_response and finish_interception; 0: nothing to finish */
    const char *interventions_json;    /* what applied, a JSON array ("[]" for nothing): pass to annotate */
    /* -- table 1.3 (ABI 1.7); a service reads these only when struct_size covers them -- */
    uint32_t accepts;                  /* set by the caller: PINCER_NETWORK_ACCEPTS_* bits */
    uint32_t held;                     /* HOLD: the number net.breakpoints lists the exchange by; else 0 */
} pincer_network_decision_t;

/* Sends `request` (borrowed for the call) through the app's own HTTP stack,
 * as the app would send it, so cookies and credentials that stack adds come
 * back; the exchange is recorded like any other (begin, complete or fail).
 * The request carries the header PINCER_NETWORK_REPLAY_HEADER: record it as
 * it is (the service reads and drops it) but do not send it. Returns once
 * the exchange finished and was recorded: PINCER_OK, answered or failed
 * (the log says which); PINCER_FAILED when it could not even be started. Called on the thread of the command
 * that replays (net.replay); it may block for as long as the request takes.
 * Since table 1.3 (ABI 1.7); see set_replayer. */
typedef pincer_status_t (*pincer_network_replay_fn_t)(void *context, const pincer_network_request_t *request);

/* The header a replayed request carries to the replayer: "<original entry id>.<n>". */
#define PINCER_NETWORK_REPLAY_HEADER "X-Pincer-Replay"

typedef struct pincer_network_service {
    /* struct_size, version_minor (1 since add_redact_name), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Records the start of a request. Returns the entry id (> 0), or 0 when
     * the request matches an ignored-host rule (nothing is stored; do not
     * call complete or fail) or the arguments are invalid (last_error says
     * which). [any-thread] */
    uint64_t (*begin)(void *context, const pincer_network_request_t *request);

    /* Completes entry `id` with a response. PINCER_NOT_FOUND when the id is
     * unknown or already evicted (the log is bounded), PINCER_INVALID_ARGUMENT
     * for a bad record. [any-thread] */
    pincer_status_t (*complete)(void *context, uint64_t id, const pincer_network_response_t *response);

    /* Completes entry `id` without a response: `error` (required) says why
     * (timeout, connection refused...). `timings` may be NULL. The error
     * text is redacted like everything else (a URL's password, `token=...`,
     * a bearer token in it are stored as [REDACTED]). [any-thread] */
    pincer_status_t (*fail)(void *context, uint64_t id, const char *error, const pincer_network_timings_t *timings);

    /* True when a request for `url` with `method` would store nothing (an
     * ignored host): capture code may skip the work of recording it.
     * [any-thread] */
    bool (*is_ignored)(void *context, const char *method, const char *url);

    /* Why this thread's most recent failing call into this service failed.
     * Owned by the service; valid until this thread's next call into it.
     * Never NULL. [any-thread] */
    const char *(*last_error)(void *context);

    /* -- Version 1.1 of this table (ABI 1.4): check
     *    PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, add_redact_name). -- */

    /* Redacts the values of `name` too, on top of the defaults, in everything
     * recorded from now on (headers, query and form parameters, cookies, JSON
     * keys, name=value pairs in text). `name` (UTF-8, borrowed for the call) is
     * normalised as the built-in names are: lowercase, percent-decoded, NFKC,
     * ASCII letters and digits only, so "X-Tenant-PIN" also matches
     * "x_tenant_pin"; it matches whole names, not parts. The name is saved in
     * the logger's settings, like `net.redact-name`, and listed by
     * `net.redact-names`; adding a name that is already there is PINCER_OK.
     * PINCER_INVALID_ARGUMENT when `name` is NULL or has no letters or
     * digits; PINCER_FAILED when the settings cannot be written (last_error
     * says why). Entries already in the log are not changed. [any-thread] */
    pincer_status_t (*add_redact_name)(void *context, const char *name);

    /* -- Version 1.2 of this table (ABI 1.6): interception rules. Check
     *    PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, intercept_request). --
     *
     * Code that sends requests itself asks the logger's rules (net.add-mock,
     * net.add-map-remote, ... and transient rules) what to do with each one:
     *
     *   1. intercept_request with the app's request: the decision says send
     *      (`decision.request`, maybe changed), respond (`decision.response`,
     *      without sending) or fail (`decision.error_code`), after waiting
     *      `delay_ms`, and at which rates to transfer;
     *   2. if it was sent and `decision.handle` is not 0: intercept_response
     *      with the response; hand the app `decision.response`;
     *   3. record the exchange (begin / complete or fail) as the app saw it,
     *      and annotate the entry with `interventions_json`;
     *   4. finish_interception(handle) when `handle` is not 0. */

    /* Decides what to do with `request` before it is sent. The caller sets
     * `decision->struct_size` (sizeof(pincer_network_decision_t)); the
     * service fills the rest. When no rule applies, the action is SEND, the
     * handle 0 and `decision->request` a copy of `*request` (its pointers are
     * the caller's). Otherwise every pointer in `decision` is owned by the
     * service and valid until finish_interception(decision->handle).
     * PINCER_INVALID_ARGUMENT for a bad record (last_error says which); the
     * decision is then SEND with handle 0. [any-thread] */
    pincer_status_t (*intercept_request)(void *context, const pincer_network_request_t *request,
                                         pincer_network_decision_t *decision);

    /* Decides what the app receives for `response`, the answer to the request
     * `handle` was made for. Fills `decision` with action RESPOND and the
     * response to hand over (`decision->response`, maybe changed; owned by the
     * service until finish_interception), and replaces interventions_json with
     * everything that applied to the exchange. PINCER_NOT_FOUND for an unknown
     * handle. [any-thread] */
    pincer_status_t (*intercept_response)(void *context, uint64_t handle, const pincer_network_response_t *response,
                                          pincer_network_decision_t *decision);

    /* Frees what intercept_request and intercept_response handed out for
     * `handle`; 0 and unknown handles are ignored. Call it exactly once for
     * every handle that is not 0, after the last use of its pointers. [any-thread] */
    void (*finish_interception)(void *context, uint64_t handle);

    /* Adds to entry `id` (from begin) what rules did: `interventions_json` as a
     * decision's (a JSON array of {"rule","kind","title","did"}), redacted
     * before storage. `flags` PINCER_NETWORK_STUBBED marks the entry as
     * answered without the network. Call it before complete or fail.
     * PINCER_NOT_FOUND for an unknown entry, PINCER_INVALID_ARGUMENT for text
     * that is not such an array. [any-thread] */
    pincer_status_t (*annotate)(void *context, uint64_t id, uint32_t flags, const char *interventions_json);

    /* Adds a rule that lives in this process only, before the stored rules:
     * `rule_json` is one rule as net.add-rule takes it (UTF-8, borrowed for
     * the call). Returns its number n > 0 (its id is "t<n>"), or 0 when the
     * rule is refused (last_error says why). [any-thread] */
    uint64_t (*add_transient_rule)(void *context, const char *rule_json);

    /* Removes transient rule n. PINCER_NOT_FOUND when there is none. [any-thread] */
    pincer_status_t (*remove_transient_rule)(void *context, uint64_t rule);

    /* -- Version 1.3 of this table (ABI 1.7): breakpoints. Check
     *    PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, await_release). --
     *
     * A breakpoint rule holds a request before it is sent, its response
     * before the app sees it, or both, so that a person (`pincer attach
     * <pid> net.breakpoints`, net.continue, net.edit, net.abort) can look
     * at it and change it. A caller that can wait sets
     * PINCER_NETWORK_ACCEPTS_HOLD in `decision->accepts` (with struct_size
     * covering the field) before intercept_request and intercept_response;
     * either may then answer PINCER_NETWORK_HOLD, and the caller calls
     * await_release for the outcome. Without the bit nothing is held (the
     * decision's interventions say so) and the exchange goes on. */

    /* Waits until the exchange held under `handle` is released: continued
     * (as it was, or as a person edited it), aborted, or its breakpoint's
     * timeout (5–300 s) ran out, in which case it continues unchanged and
     * interventions_json says so. A held exchange is also released when the
     * shell that was shown it goes away. Fills `decision` as intercept_request
     * does for a held request (SEND with the request to send, or FAIL) and
     * as intercept_response does for a held response (RESPOND); its pointers
     * are owned by the service until finish_interception(handle). Returns
     * at once when the exchange was already released. PINCER_NOT_FOUND for
     * a handle that holds nothing. Blocks the calling thread: never call it
     * from a thread that must stay responsive. [any-thread] */
    pincer_status_t (*await_release)(void *context, uint64_t handle, pincer_network_decision_t *decision);

    /* Sets the function net.replay sends requests through (the app's own
     * session): `replay` with `replay_context` as its first argument. NULL
     * removes it. One per process; a later call replaces the earlier. The
     * function must stay callable until it is replaced or removed.
     * [any-thread] */
    pincer_status_t (*set_replayer)(void *context, pincer_network_replay_fn_t replay, void *replay_context);
} pincer_network_service_t;

/* Every new entry and every completion is emitted as the host event
 * "net.entry" with the payload {"id": N, "state": "pending"|"complete"|"failed"}. */
#define PINCER_NETWORK_ENTRY_EVENT "net.entry"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_NETWORK_H */
