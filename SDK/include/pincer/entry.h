/*
 * pincer/entry.h — the one symbol a plugin exports and the record it
 * returns.
 *
 *   PINCER_EXTERN_C PINCER_EXPORT
 *   const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
 *                                              uint32_t host_abi_minor);
 *
 * Declare it yourself before defining it if you build with
 * -Wmissing-prototypes (the SDK does not, so that Swift and Rust plugins can
 * define the symbol with their own types).
 *
 * The host resolves `pincer_plugin_entry` with dlsym right after
 * dlopen(RTLD_NOW | RTLD_LOCAL) and calls it once, on the loading thread.
 * It passes its own ABI version so a plugin may adapt (or return NULL to
 * decline, which the host reports). The returned record must stay valid
 * and unchanged for the life of the process: a `static const` object is
 * the usual choice. The host never unloads a plugin library.
 *
 * The host checks, in this order, and refuses the plugin with a message
 * naming the field and both values: magic == PINCER_PLUGIN_MAGIC;
 * abi_major == the host's major; struct_size >= the size of the 1.0 record;
 * id, short_name, name, version and init present and well formed. A record
 * with a larger struct_size or a higher abi_minor than the host knows is
 * accepted: the host reads the 1.0 slots and ignores the rest.
 */
#ifndef PINCER_ENTRY_H
#define PINCER_ENTRY_H

#include "version.h"
#include "call.h"
#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pincer_plugin {
    uint32_t magic;         /* PINCER_PLUGIN_MAGIC */
    uint32_t abi_major;     /* PINCER_ABI_MAJOR the plugin was built against */
    uint32_t abi_minor;     /* PINCER_ABI_MINOR the plugin was built against */
    uint32_t struct_size;   /* sizeof(pincer_plugin_t) */

    const char *id;         /* reverse-DNS, unique: "com.example.devoptions" */
    const char *short_name; /* prefix of command and entry ids: "devopts",
                               [a-z][a-z0-9_-]*, at most 32 bytes, unique */
    const char *name;       /* display name: "Developer Options" */
    const char *version;    /* the plugin's own version: "1.2.0" */
    const char *summary;    /* one line; may be NULL */

    /* Passed first to init and shutdown; owned by the plugin. */
    void *context;

    /* Called once on the loading thread. Register sections, entries,
     * commands and services through `host`, which stays valid until
     * shutdown returns. Return PINCER_OK, or call reply->fail(reply, why)
     * and return another status: the host then reports the plugin as failed
     * with that message and drops everything it registered. Required.
     *
     * Init only registers. It must not open files or databases, parse
     * stored data, start threads or wait on anything: start-up must not
     * grow with what a user has stored. Open state on first use, in the
     * command, entry callback or service function that needs it (the Swift
     * helper's FirstUse does this), so a command that never touches the
     * plugin's state never pays for it.
     *
     * What init registers is cached. The `pincer` shell learns it once by
     * running init in a separate process (pincer-plugin-scanner) with an
     * empty state directory, keeps it in the state directory's plugin
     * registry keyed by the file's path, size, times, inode and build id,
     * and answers `commands`, `help`, `complete` and `search` from it
     * without loading the plugin. The library is loaded, and init runs
     * again, when one of its commands runs, one of its entries is read or
     * set, another plugin asks for a service it publishes, or an event it
     * subscribed to is emitted. So:
     *   - register the same sections, entries and commands every run;
     *     entries that follow stored data (one per stored item) may be
     *     added when the state is opened, or in init from the plugin's
     *     settings: a plugin whose init reads its settings is marked so in
     *     the registry and is loaded before the shell lists entries;
     *   - a plugin whose init crashes, exits or runs longer than the scan's
     *     time-out (10 s, PINCER_SCAN_TIMEOUT) is refused with the signal,
     *     the exit status or the time-out, and not scanned again until its
     *     file changes;
     *   - a plugin that calls get_service in init extends that service (a
     *     database adapter registering with the browser): loading the
     *     publisher loads it too.
     * Apps that embed the host (embed.h) load every plugin at start. */
    pincer_status_t (*init)(void *context, const pincer_host_t *host, pincer_call_t *reply);

    /* Called once when the host shuts down, in reverse load order, on the
     * thread that shuts the host down. After it returns the host calls
     * nothing of the plugin's again. Not called for a plugin whose init
     * failed: init must undo its own work before returning failure.
     * Optional (NULL). */
    void (*shutdown)(void *context);

    /* --- ABI 1.5 (check struct_size before the host reads it) --- */

    /* Optional (NULL). For a plugin whose entries follow what is stored
     * (one entry per stored feature flag): init registers only the fixed
     * entries, and this callback opens the state and adds the rest with
     * add_entry (or changes them with update_entry). The host calls it at
     * most once, on the thread that needs the entries, serialised with the
     * plugin's other callbacks, before it first lists every entry (the
     * menu, a search, completion) or looks up an entry id of this plugin it
     * does not know (`pincer set flags.checkout true` in a fresh process).
     * Afterwards the plugin keeps its entries current itself. Return
     * PINCER_OK, or call reply->fail(reply, why) and return another status:
     * the host logs the message and lists the entries registered so far.
     * The registry (see init) records that the slot is set, so the shell
     * loads such a plugin before it lists entries. */
    pincer_status_t (*sync_entries)(void *context, pincer_call_t *reply);
} pincer_plugin_t;

/* The exported entry function's type and name. */
typedef const pincer_plugin_t *(*pincer_plugin_entry_fn_t)(uint32_t host_abi_major,
                                                           uint32_t host_abi_minor);
#define PINCER_PLUGIN_ENTRY_SYMBOL "pincer_plugin_entry"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_ENTRY_H */
