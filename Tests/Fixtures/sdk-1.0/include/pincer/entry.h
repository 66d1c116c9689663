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
     * with that message and drops everything it registered. Required. */
    pincer_status_t (*init)(void *context, const pincer_host_t *host, pincer_call_t *reply);

    /* Called once when the host shuts down, in reverse load order, on the
     * thread that shuts the host down. After it returns the host calls
     * nothing of the plugin's again. Not called for a plugin whose init
     * failed: init must undo its own work before returning failure.
     * Optional (NULL). */
    void (*shutdown)(void *context);
} pincer_plugin_t;

/* The exported entry function's type and name. */
typedef const pincer_plugin_t *(*pincer_plugin_entry_fn_t)(uint32_t host_abi_major,
                                                           uint32_t host_abi_minor);
#define PINCER_PLUGIN_ENTRY_SYMBOL "pincer_plugin_entry"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_ENTRY_H */
