/*
 * pincer/host.h — the host API table a plugin receives in init.
 *
 * Each plugin gets its own pincer_host_t (the host tells callers apart by
 * `host_data`). The table stays valid from init until the plugin's
 * shutdown returns; keep the pointer, do not copy the struct.
 *
 * The table only grows at its end. Before calling a slot appended after
 * ABI 1.0, check PINCER_HAS_SLOT(host, pincer_host_t, slot).
 *
 * Thread tags used below:
 *   [init]        only during the plugin's init callback;
 *   [any-thread]  from any thread, at any time between init and shutdown.
 * All strings are UTF-8 and NUL-terminated; "borrowed" means the host reads
 * them during the call only and copies what it keeps.
 */
#ifndef PINCER_HOST_H
#define PINCER_HOST_H

#include "version.h"
#include "call.h"
#include "command.h"
#include "menu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pincer_host pincer_host_t;

/* Receives an event. `topic` and `payload` are borrowed for the call.
 * Runs synchronously on the thread that emitted the event, and may run
 * concurrently with the plugin's other callbacks: guard shared state. */
typedef void (*pincer_event_fn_t)(void *context, const char *topic, const char *payload);

/* Returned by settings_get when the key has no stored value. */
#define PINCER_SETTING_MISSING (-1LL)
/* Returned by settings_get when the store could not be read. */
#define PINCER_SETTING_ERROR   (-2LL)

struct pincer_host {
    uint32_t struct_size;   /* sizeof(pincer_host_t) as the host built it */
    uint32_t abi_major;     /* the host's PINCER_ABI_MAJOR */
    uint32_t abi_minor;     /* the host's PINCER_ABI_MINOR */
    uint32_t reserved;
    void *host_data;        /* owned by the host; never touch */
    const char *host_name;    /* e.g. "pincer"; static for the process */
    const char *host_version; /* e.g. "0.1.0"; static for the process */

    /* Writes one line to the host's log, tagged with the plugin id.
     * `message` borrowed. [any-thread] */
    void (*log)(const pincer_host_t *host, pincer_log_level_t level, const char *message);

    /* Adds a menu section. Borrowed; copied. PINCER_DUPLICATE if the id is
     * taken, PINCER_INVALID_ARGUMENT for a bad id or title. [any-thread] */
    pincer_status_t (*add_section)(const pincer_host_t *host, const pincer_section_t *section);

    /* Adds a menu entry (see menu.h). Borrowed; copied. PINCER_DUPLICATE if
     * the plugin already has an entry with this id, PINCER_NOT_FOUND for an
     * unknown section, PINCER_INVALID_ARGUMENT for a record that is not
     * consistent with its kind. [any-thread] */
    pincer_status_t (*add_entry)(const pincer_host_t *host, const pincer_entry_t *entry);

    /* Adds a typed command (see command.h). Borrowed; copied. The command's
     * full name is "<plugin short name>.<signature name>". Fails with
     * PINCER_INVALID_ARGUMENT when the signature does not parse (last_error
     * gives the column) and PINCER_DUPLICATE when the name is taken.
     * [any-thread] */
    pincer_status_t (*add_command)(const pincer_host_t *host, const pincer_command_t *command);

    /* Reads the plugin's own persistent setting `key` (borrowed). Copies at
     * most `capacity` - 1 bytes of the value into `buffer` and always
     * NUL-terminates it when capacity > 0; returns the value's full length
     * in bytes (call again with a larger buffer if it is >= capacity),
     * PINCER_SETTING_MISSING, or PINCER_SETTING_ERROR. `buffer` may be NULL
     * when capacity is 0. Settings are private to the plugin. [any-thread] */
    int64_t (*settings_get)(const pincer_host_t *host, const char *key, char *buffer, uint64_t capacity);

    /* Stores `value` (borrowed) under `key` (borrowed) in the plugin's own
     * settings, durably, in one transaction; NULL removes the key. Safe
     * while other processes use the same store. [any-thread] */
    pincer_status_t (*settings_set)(const pincer_host_t *host, const char *key, const char *value);

    /* Delivers `payload` (borrowed; JSON by convention, may be NULL) to every
     * subscriber of `topic` (borrowed), synchronously, on this thread,
     * before returning. Topics are "<plugin short name>.<event>" by
     * convention. [any-thread] */
    pincer_status_t (*emit)(const pincer_host_t *host, const char *topic, const char *payload);

    /* Subscribes `callback` with `context` to `topic` ("*" for all).
     * Returns a non-zero token for unsubscribe, or 0 on failure. `context`
     * must stay valid until unsubscribe or shutdown. [any-thread] */
    uint64_t (*subscribe)(const pincer_host_t *host, const char *topic,
                          pincer_event_fn_t callback, void *context);

    /* Removes a subscription. Unknown tokens are ignored. After it returns
     * the callback is not called again. [any-thread] */
    void (*unsubscribe)(const pincer_host_t *host, uint64_t token);

    /* Publishes a service table under a versioned id such as
     * "pincer.database/1" (see service.h). The table is NOT copied: it
     * must stay valid and unchanged until the plugin's shutdown.
     * PINCER_DUPLICATE if another plugin already published the id.
     * [any-thread] */
    pincer_status_t (*publish_service)(const pincer_host_t *host, const char *id, const void *table);

    /* Looks up a service table by exact id (borrowed). Returns NULL when no
     * plugin publishes it. The table stays valid until the publishing
     * plugin shuts down, which happens after every plugin loaded later
     * has shut down. [any-thread] */
    const void *(*get_service)(const pincer_host_t *host, const char *id);

    /* Why the most recent failing call of this plugin into the host failed.
     * Owned by the host; valid until the plugin's next failing host call.
     * Never NULL ("" when nothing failed). [any-thread] */
    const char *(*last_error)(const pincer_host_t *host);
};

#ifdef __cplusplus
}
#endif

#endif /* PINCER_HOST_H */
