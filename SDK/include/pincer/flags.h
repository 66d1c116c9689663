/*
 * pincer/flags.h — the feature-flags service, "pincer.flags/1".
 *
 * Published by the built-in `flags` plugin. Look it up with
 * pincer_host_t.get_service(host, PINCER_FLAGS_SERVICE_ID) from a plugin, or
 * through the embedding API from the app; NULL means the plugin is not
 * loaded. Check PINCER_HAS_SERVICE_SLOT (service.h) before using a slot
 * appended after version 1.0 of this service.
 *
 * Model (after OpenFeature's evaluation API):
 *  - A flag has a key, a type and a remote value: the value the app's
 *    configuration source delivered (or its built-in default). Registering
 *    again with the same type updates the remote value; with another type it
 *    fails. Registrations persist, so the `pincer` shell sees the flags the
 *    app registered.
 *  - A local override replaces the remote value while the master switch
 *    "overrides enabled" is on. Turning the switch off keeps the overrides;
 *    turning it on again brings them back. Overrides and the switch persist.
 *  - Resolving a flag yields a value and a reason. An unregistered flag or
 *    a type mismatch yields the caller's default and says so: a missing flag
 *    never reads as a silent false.
 *
 * Keys are [a-z][a-z0-9_-]*, at most 64 bytes: a flag's menu entry is
 * "flags.<key>". "overrides-enabled" is reserved for the master switch.
 *
 * Threads: every function is [any-thread]. The get_* functions take no lock
 * and do not allocate in the steady state; they are meant for hot paths.
 * Inputs are borrowed for the call; nothing here hands out memory.
 */
#ifndef PINCER_FLAGS_H
#define PINCER_FLAGS_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_FLAGS_SERVICE_ID "pincer.flags/1"

typedef uint32_t pincer_flag_type_t;
#define PINCER_FLAG_BOOL   1u /* bool */
#define PINCER_FLAG_INT    2u /* int64_t */
#define PINCER_FLAG_DOUBLE 3u /* double (finite) */
#define PINCER_FLAG_STRING 4u /* UTF-8 text */

/* Why a get_* call produced its value. */
typedef uint32_t pincer_flag_reason_t;
#define PINCER_FLAG_REASON_REMOTE        1u /* the registered remote value */
#define PINCER_FLAG_REASON_OVERRIDE      2u /* a local override (overrides enabled) */
#define PINCER_FLAG_REASON_DEFAULT       3u /* not registered: the caller's default */
#define PINCER_FLAG_REASON_TYPE_MISMATCH 4u /* registered with another type: the caller's default */
#define PINCER_FLAG_REASON_ERROR         5u /* bad arguments (NULL key, NULL out-pointer): the default */

typedef struct pincer_flags_service {
    /* struct_size, version_minor (0 for this layout), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Registers `key` or updates its remote value; `summary` (may be NULL)
     * is shown in the menu. `remote` for strings must not be NULL.
     * PINCER_INVALID_ARGUMENT for a bad key or value, PINCER_DUPLICATE when
     * the key is registered with another type, PINCER_FAILED when the
     * settings store cannot be written (the flag is not registered then).
     * Details: last_error. [any-thread] */
    pincer_status_t (*register_bool)(void *context, const char *key, bool remote, const char *summary);
    pincer_status_t (*register_int)(void *context, const char *key, int64_t remote, const char *summary);
    pincer_status_t (*register_double)(void *context, const char *key, double remote, const char *summary);
    pincer_status_t (*register_string)(void *context, const char *key, const char *remote, const char *summary);

    /* Resolves `key`: stores the effective value in *value (the default
     * when the reason is DEFAULT, TYPE_MISMATCH or ERROR) and returns the
     * reason. Lock-free; [any-thread]. */
    pincer_flag_reason_t (*get_bool)(void *context, const char *key, bool default_value, bool *value);
    pincer_flag_reason_t (*get_int)(void *context, const char *key, int64_t default_value, int64_t *value);
    pincer_flag_reason_t (*get_double)(void *context, const char *key, double default_value, double *value);

    /* Resolves a string flag into `buffer`: copies at most capacity - 1
     * bytes, always NUL-terminates when capacity > 0, and stores the full
     * length in bytes in *length (call again with a larger buffer when
     * *length >= capacity). `buffer` may be NULL when capacity is 0.
     * `default_value` may be NULL (then "" is used). Lock-free; [any-thread]. */
    pincer_flag_reason_t (*get_string)(void *context, const char *key, const char *default_value,
                                       char *buffer, uint64_t capacity, uint64_t *length);

    /* Sets a local override from text, parsed by the flag's type: "true" /
     * "false" (also 1/0, yes/no, on/off), a decimal int64, a finite double,
     * or any text. PINCER_NOT_FOUND for an unregistered key,
     * PINCER_INVALID_ARGUMENT when the text does not parse as the type.
     * [any-thread] */
    pincer_status_t (*set_override)(void *context, const char *key, const char *value);

    /* Removes the override of `key` (PINCER_NOT_FOUND when the key is not
     * registered; no override is not an error). [any-thread] */
    pincer_status_t (*clear_override)(void *context, const char *key);

    /* Removes every override. [any-thread] */
    pincer_status_t (*clear_all_overrides)(void *context);

    /* Reads and sets the master switch. [any-thread] */
    bool (*overrides_enabled)(void *context);
    pincer_status_t (*set_overrides_enabled)(void *context, bool enabled);

    /* Why this thread's most recent failing call into this service failed.
     * Owned by the service; valid until this thread's next call into it.
     * Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_flags_service_t;

/* Every change (registration, override, master switch) is also emitted as
 * the host event "flags.changed" with a JSON payload
 * {"flag": "<key>" | null, "change": "registered" | "override" | "cleared" |
 *  "cleared-all" | "overrides-enabled" | "imported"}. */
#define PINCER_FLAGS_CHANGED_EVENT "flags.changed"

/* Returns a static name for a reason ("remote", "override", "default",
 * "type-mismatch", "error", or "unknown"). Header-only so that callers need
 * not link anything. */
static inline const char *pincer_flag_reason_name(pincer_flag_reason_t reason) {
    switch (reason) {
    case PINCER_FLAG_REASON_REMOTE: return "remote";
    case PINCER_FLAG_REASON_OVERRIDE: return "override";
    case PINCER_FLAG_REASON_DEFAULT: return "default";
    case PINCER_FLAG_REASON_TYPE_MISMATCH: return "type-mismatch";
    case PINCER_FLAG_REASON_ERROR: return "error";
    default: return "unknown";
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PINCER_FLAGS_H */
