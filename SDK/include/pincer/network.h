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
} pincer_network_service_t;

/* Every new entry and every completion is emitted as the host event
 * "net.entry" with the payload {"id": N, "state": "pending"|"complete"|"failed"}. */
#define PINCER_NETWORK_ENTRY_EVENT "net.entry"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_NETWORK_H */
