/*
 * pincer/embed.h — embedding Pincer in an application, from C.
 *
 * An app (not a plugin) links libpincer-embed.so, starts Pincer once, and
 * reaches the built-in plugins' services through their tables (flags.h,
 * servers.h, l10n.h, location.h, network.h, database.h):
 *
 *   pincer_embed_options_t options = { sizeof options, 0, "my-app",
 *                                      NULL, NULL, NULL, NULL, NULL };
 *   pincer_embed_t *pincer = NULL;
 *   if (pincer_embed_start(&options, &pincer) != PINCER_OK) {
 *       fprintf(stderr, "pincer: %s\n", pincer_embed_last_error());
 *       return 1;
 *   }
 *   const pincer_flags_service_t *flags =
 *       (const pincer_flags_service_t *)pincer_embed_get_service(pincer, PINCER_FLAGS_SERVICE_ID);
 *   ...
 *   pincer_embed_stop(pincer);
 *
 *   cc -std=c11 -I SDK/include app.c -L <bin> -lpincer-embed -Wl,-rpath,<bin>
 *
 * Starting loads the plugins, opens the settings store in the state
 * directory and, unless PINCER_EMBED_NO_SOCKET, the control socket
 * <socket directory>/<pid>.sock (directory 0700, socket 0600, peers of
 * another uid refused) that `pincer ps` lists and `pincer attach` talks to.
 *
 * One instance per process. Starting again while Pincer runs with the
 * same options returns the same handle; with different options it fails
 * with PINCER_DUPLICATE. After pincer_embed_stop, starting again gives a
 * new instance (and a new handle).
 *
 * Errors: every function that can fail records why in a per-thread message,
 * read with pincer_embed_last_error().
 *
 * Threads: every function is [any-thread]. Start and stop are serialised;
 * do not call them from a Pincer callback (a service subscription, a
 * plugin) or from a signal handler.
 *
 * This header is pure C11 and valid C++; the Swift side implements it.
 */
#ifndef PINCER_EMBED_H
#define PINCER_EMBED_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A started Pincer. Opaque. A handle stays valid (as memory) for the life
 * of the process, so using it after pincer_embed_stop is safe: it then
 * answers NULL / does nothing. */
typedef struct pincer_embed pincer_embed_t;

/* Flags for pincer_embed_options_t.flags. */
#define PINCER_EMBED_NO_SOCKET  0x1u /* no control socket: `pincer attach` cannot reach the app */
#define PINCER_EMBED_READ_ONLY  0x2u /* socket clients may not run commands or set entries that change state */
#define PINCER_EMBED_NO_BUILTIN 0x4u /* no built-in plugins: only plugin_paths */

/* How to start. Every string is borrowed for the call of
 * pincer_embed_start (copied); NULL means the default. */
typedef struct pincer_embed_options {
    uint32_t struct_size;          /* sizeof(pincer_embed_options_t) of the caller */
    uint32_t flags;                /* PINCER_EMBED_* */
    const char *app_name;          /* required, not empty: what `pincer ps` shows */
    const char *plugin_directory;  /* the built-in plugins' directory (its libpincer-plugin-*.so);
                                      NULL: beside the executable, else beside libpincer-embed.so */
    const char *plugin_paths;      /* colon-separated plugin files or directories, loaded after the
                                      built-ins; NULL: none */
    const char *state_directory;   /* the settings store; NULL: $PINCER_STATE_DIR, else
                                      $XDG_STATE_HOME/pincer, else ~/.local/state/pincer (what the
                                      `pincer` shell uses) */
    const char *allow_plugins;     /* comma-separated short names ("flags") or ids
                                      ("dev.pincer.flags") of the plugins to start; NULL: all,
                                      "": none. Names matching no plugin are logged as warnings */
    const char *socket_directory;  /* the control socket's directory (created 0700); NULL:
                                      $XDG_RUNTIME_DIR/pincer, else /tmp/pincer-<uid> */
} pincer_embed_options_t;

/* Starts Pincer and stores its handle in *out. Returns PINCER_OK;
 * PINCER_INVALID_ARGUMENT for NULL arguments, a struct_size smaller than
 * this 1.0 record or a missing app_name; PINCER_DUPLICATE when Pincer
 * already runs with different options; PINCER_FAILED when the settings
 * store or the control socket cannot be opened (nothing stays started
 * then). *out is set only on success. The handle is owned by the library:
 * never free it. [any-thread] */
pincer_status_t pincer_embed_start(const pincer_embed_options_t *options, pincer_embed_t **out);

/* The service table published under `id` (e.g. PINCER_FLAGS_SERVICE_ID);
 * cast it to the table type of the service's header. Borrowed: valid until
 * pincer_embed_stop; do not call into it afterwards. NULL when no loaded
 * plugin publishes it, `embed` or `id` is NULL, or Pincer was stopped
 * (pincer_embed_last_error says which, naming the plugin). [any-thread] */
const void *pincer_embed_get_service(pincer_embed_t *embed, const char *id);

/* The control socket's path, owned by the handle: valid for the life of the
 * process. NULL when started with PINCER_EMBED_NO_SOCKET or `embed` is NULL,
 * and after pincer_embed_stop (the socket is gone then). [any-thread] */
const char *pincer_embed_socket_path(pincer_embed_t *embed);

/* Stops Pincer: stops the control server and removes its socket, stops a
 * location route playing in this process, and runs every plugin's shutdown
 * once. Service tables obtained from the handle must not be used
 * afterwards. Stopping a stopped handle, or NULL, does nothing and returns
 * PINCER_OK. [any-thread] */
pincer_status_t pincer_embed_stop(pincer_embed_t *embed);

/* Why this thread's most recent failing pincer_embed_* call failed. Owned
 * by the library; valid until this thread's next failing pincer_embed_*
 * call. Never NULL ("" when nothing failed). [any-thread] */
const char *pincer_embed_last_error(void);

/* Stopping is bounded (5 s for pincer_embed_stop): a plugin call still
 * running then, such as a command stuck on a pipe, is abandoned and the
 * call returns, so the app can exit. Pincer is stopped either way; the
 * return is then PINCER_FAILED and pincer_embed_last_error() names each
 * abandoned call (its plugin, its command, how long it ran), as a warning
 * in the log does. The abandoned call's thread, and the shutdowns behind
 * it, finish on their own if they ever do. */

/* pincer_embed_stop, waiting at most `milliseconds` for the plugins.
 * Stopping a handle that is not the running instance, or NULL, does
 * nothing and returns PINCER_OK. [any-thread] */
pincer_status_t pincer_embed_stop_within(pincer_embed_t *embed, uint32_t milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* PINCER_EMBED_H */
