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
 *
 * After the plugin's shutdown has returned, a thread it left running must
 * not rely on the table: the settings slots then refuse to read or write
 * (settings_get returns PINCER_SETTING_ERROR, settings_set, settings_update
 * and settings_list return PINCER_FAILED, and last_error says the plugin
 * has shut down), so a stray write never lands. A call already under way
 * when shutdown returns may still complete.
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

/* -- ABI 1.4: settings_update and settings_list. -- */

/* What a pincer_setting_update_fn_t decides for the setting it was given. */
typedef uint32_t pincer_setting_action_t;
#define PINCER_SETTING_KEEP    0u /* leave the value as it is; nothing is written */
#define PINCER_SETTING_REPLACE 1u /* store *new_value */
#define PINCER_SETTING_DELETE  2u /* remove the key */
#define PINCER_SETTING_CANCEL  3u /* refuse: nothing is written, settings_update returns PINCER_CANCELLED */

/* Decides a setting's new value from its current one, for settings_update.
 * `current` is the stored value, or NULL when the key is unset; borrowed
 * for the call. To store a value, point *new_value at it (UTF-8,
 * NUL-terminated) and return PINCER_SETTING_REPLACE: the host copies it
 * before settings_update returns, so it may live in the plugin's own memory
 * (the stack of the function that called settings_update, or a buffer the
 * context owns) until then. *new_value is NULL on entry and ignored for the
 * other actions; REPLACE with *new_value still NULL counts as CANCEL.
 *
 * It runs on the thread that called settings_update, exactly once per
 * settings_update that gets the store's write lock, inside the store's
 * BEGIN IMMEDIATE transaction: the store is locked for writing meanwhile,
 * in this process and every other one using it. So it must be quick (no
 * I/O, no waiting on other threads), and it must not call the host's
 * settings slots (such a call fails, returning PINCER_SETTING_ERROR or
 * PINCER_FAILED, rather than deadlocking). Other host slots may be called. */
typedef pincer_setting_action_t (*pincer_setting_update_fn_t)(void *context, const char *current,
                                                              const char **new_value);

/* Receives one setting from settings_list. `key` and `value` are borrowed
 * for the call. Runs on the thread that called settings_list, after the
 * store has been read and unlocked, so it may call any host slot (the
 * settings ones included). */
typedef void (*pincer_setting_key_fn_t)(void *context, const char *key, const char *value);

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
     * while other processes use the same store. "Durably": when it returns
     * PINCER_OK the value is on disk and survives a crash or a power loss.
     * To change a value based on what is stored, use settings_update
     * (ABI 1.4). PINCER_INVALID_ARGUMENT for an empty key; PINCER_FAILED
     * when the store could not be written or the plugin has shut down
     * (last_error says why). [any-thread] */
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
     * has shut down, and after the caller: a host that loads plugins on
     * first use (entry.h) loads the publisher for this lookup and orders
     * it before the caller for shutdown. [any-thread] */
    const void *(*get_service)(const pincer_host_t *host, const char *id);

    /* Why the most recent failing call of this plugin into the host failed.
     * Owned by the host; valid until the plugin's next failing host call.
     * Never NULL ("" when nothing failed). [any-thread] */
    const char *(*last_error)(const pincer_host_t *host);

    /* -- ABI 1.1: check PINCER_HAS_SLOT(host, pincer_host_t, update_entry). -- */

    /* Replaces the registration of this plugin's entry with the same id
     * (borrowed; copied), keeping its place in the menu and its pin. Use it
     * when an entry's title, summary or choices change, for example when a
     * new server environment is registered. The kind may not change.
     * PINCER_NOT_FOUND when the plugin has no entry with that id; otherwise
     * the same checks as add_entry. [any-thread] */
    pincer_status_t (*update_entry)(const pincer_host_t *host, const pincer_entry_t *entry);

    /* The directory of the host's settings store, where a plugin may keep
     * files of its own (name them after the plugin). Owned by the host;
     * valid until the plugin's shutdown. Check PINCER_HAS_SLOT first. */
    const char *state_directory;

    /* -- ABI 1.4: check PINCER_HAS_SLOT(host, pincer_host_t, settings_update)
     *    (and settings_list). -- */

    /* Changes the plugin's setting `key` (borrowed, non-empty) atomically:
     * reads it, calls `update` with `context` and the current value, and
     * writes what it decides, all in one transaction of the store, so no
     * other thread or process (another `pincer`, the app) can write the
     * store between the read and the write. Use it for every
     * read-modify-write (a counter, a document of registrations); a
     * settings_get followed by settings_set loses a change made in between.
     * `update` runs on this thread before settings_update returns (see
     * pincer_setting_update_fn_t for what it may do). Returns PINCER_OK when
     * the decision was applied (KEEP included), PINCER_CANCELLED when
     * `update` returned CANCEL, PINCER_INVALID_ARGUMENT for an empty key or
     * a NULL `update`, and PINCER_FAILED when the store could not be read or
     * written (the write lock was not had within the store's 10 s busy
     * timeout: then `update` was not called) or the plugin has shut down;
     * last_error says why. A change it reports as applied is durable, as
     * with settings_set. [any-thread] */
    pincer_status_t (*settings_update)(const pincer_host_t *host, const char *key,
                                       pincer_setting_update_fn_t update, void *context);

    /* Calls `each` with `context` for every setting of the plugin whose key
     * starts with `prefix` (borrowed; NULL or "" for all), in byte order of
     * the keys, from one consistent read of the store; `each` runs on this
     * thread before settings_list returns, with the store unlocked. Returns
     * PINCER_OK (also when nothing matched), PINCER_INVALID_ARGUMENT for a
     * NULL `each`, or PINCER_FAILED when the store could not be read or the
     * plugin has shut down (then `each` is not called); last_error says
     * why. [any-thread] */
    pincer_status_t (*settings_list)(const pincer_host_t *host, const char *prefix,
                                     pincer_setting_key_fn_t each, void *context);
};

#ifdef __cplusplus
}
#endif

#endif /* PINCER_HOST_H */
