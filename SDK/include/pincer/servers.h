/*
 * pincer/servers.h — the server-environments service, "pincer.servers/1".
 *
 * Published by the built-in `servers` plugin. Look it up with
 * pincer_host_t.get_service(host, PINCER_SERVERS_SERVICE_ID); NULL means
 * the plugin is not loaded. Check PINCER_HAS_SERVICE_SLOT (service.h)
 * before using a slot appended after version 1.0 of this service.
 *
 * Model (after Scyther's server configuration):
 *  - An environment has an id ([a-z][a-z0-9_-]*, at most 64 bytes), a
 *    display name and variables (NAME -> value; names are
 *    [A-Za-z_][A-Za-z0-9_]*, so they are valid shell variable names).
 *    Registrations persist, so the `pincer` shell sees what the app
 *    registered.
 *  - Exactly one environment is current once any is registered: the one
 *    last chosen with `use` (persisted), or else the first registered.
 *    Choosing an unknown id is an error and changes nothing.
 *  - After the current environment changes, subscribers are called and the
 *    host event "servers.changed" is emitted with the payload
 *    {"from": "<id>" | null, "to": "<id>"}.
 *  - Display variables are a separate list of NAME -> value facts the app
 *    shows to testers (build flavour, commit, region...). They are not
 *    persisted: the app registers them each run.
 *
 * Threads: every function is [any-thread]. Readers see either the old or
 * the new environment, never a mix. Inputs are borrowed for the call;
 * nothing here hands out memory.
 */
#ifndef PINCER_SERVERS_H
#define PINCER_SERVERS_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_SERVERS_SERVICE_ID "pincer.servers/1"
#define PINCER_SERVERS_CHANGED_EVENT "servers.changed"

/* Called after the current environment changed, on the thread that changed
 * it, after the change is persisted. `from` is NULL when there was no current
 * environment; both strings are borrowed for the call. Do not call `use`
 * from inside it. */
typedef void (*pincer_environment_changed_fn_t)(void *context, const char *from, const char *to);

/* Receives one variable; both strings borrowed for the call. */
typedef void (*pincer_variable_fn_t)(void *context, const char *name, const char *value);

typedef struct pincer_servers_service {
    /* struct_size, version_minor (0 for this layout), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Registers environment `id` named `name`, with `variable_count` pairs
     * in `variables` laid out as name0, value0, name1, value1, ...
     * Registering an id again replaces its name and variables.
     * PINCER_INVALID_ARGUMENT for a bad id, name or variable (last_error
     * names it), PINCER_FAILED when the store cannot be written.
     * [any-thread] */
    pincer_status_t (*register_environment)(void *context, const char *id, const char *name,
                                            const char *const *variables, uint32_t variable_count);

    /* Makes `id` current, persists the choice and notifies. Choosing the
     * current environment again succeeds and notifies nobody.
     * PINCER_NOT_FOUND for an unknown id. [any-thread] */
    pincer_status_t (*use)(void *context, const char *id);

    /* Copies the current environment's id into `buffer` (at most capacity -
     * 1 bytes, NUL-terminated when capacity > 0) and returns its full
     * length, or -1 when no environment is registered. [any-thread] */
    int64_t (*current)(void *context, char *buffer, uint64_t capacity);

    /* Copies variable `name` of the current environment like `current`;
     * returns -1 when the environment has no such variable or none is
     * registered. [any-thread] */
    int64_t (*get_variable)(void *context, const char *name, char *buffer, uint64_t capacity);

    /* Calls `fn` once per variable of the current environment, in name
     * order, from one consistent snapshot. Returns the number of
     * variables. Do not call `use` from inside `fn`. [any-thread] */
    uint32_t (*each_variable)(void *context, pincer_variable_fn_t fn, void *fn_context);

    /* Subscribes `fn` (with `fn_context`, which must stay valid until
     * unsubscribe or the plugin's shutdown) to environment changes.
     * Returns a non-zero token. [any-thread] */
    uint64_t (*subscribe)(void *context, pincer_environment_changed_fn_t fn, void *fn_context);

    /* Removes a subscription: once it returns, no new call of `fn` starts
     * (a call already running on another thread may still finish). Unknown
     * tokens are ignored. [any-thread] */
    void (*unsubscribe)(void *context, uint64_t token);

    /* Sets (or with value NULL removes) a display variable. [any-thread] */
    pincer_status_t (*set_display_variable)(void *context, const char *name, const char *value);

    /* Why this thread's most recent failing call into this service failed.
     * Owned by the service; valid until this thread's next call into it.
     * Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_servers_service_t;

#ifdef __cplusplus
}
#endif

#endif /* PINCER_SERVERS_H */
