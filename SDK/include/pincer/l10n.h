/*
 * pincer/l10n.h — the pseudo-localisation service, "pincer.l10n/1".
 *
 * Published by the built-in `l10n` plugin. An app calls `transform` where it
 * resolves a localised string (its NSLocalizedString / getString / gettext
 * wrapper), passing the key, the resolved text and the table; with every
 * mode off the text comes back unchanged. Look the service up with
 * pincer_host_t.get_service(host, PINCER_L10N_SERVICE_ID); NULL means the
 * plugin is not loaded. Check PINCER_HAS_SERVICE_SLOT (service.h) before
 * using a slot appended after version 1.0 of this service.
 *
 * Modes (all persisted, all combinable; only "boundaries" is on by default):
 * accented letters, lengthened text, boundaries (brackets), right-to-left
 * (each word wrapped in RLM RLO ... PDF RLM, as AOSP's ar-XB) and show keys.
 * Placeholders (printf with Apple's grammar, stringsdict variables, {name},
 * ICU arguments, HTML/XML tags and entities, URLs, email addresses) are never
 * changed: a string whose placeholders a transform would change comes back
 * unchanged (PINCER_OK; last_error says why).
 *
 * Tables: only the default table ("Localizable"; NULL or "" mean it) is
 * transformed unless more tables are configured (`l10n.tables`), as in
 * Scyther. Strings of one character (access keys) are left alone.
 *
 * Threads: every function is [any-thread]. Inputs are borrowed for the call;
 * nothing here hands out memory: results are copied into the caller's buffer.
 */
#ifndef PINCER_L10N_H
#define PINCER_L10N_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_L10N_SERVICE_ID "pincer.l10n/1"

/* Mode bits, as returned by `modes`. */
typedef uint32_t pincer_l10n_mode_t;
#define PINCER_L10N_ACCENTED    (1u << 0) /* Hello -> Ĥéļļö */
#define PINCER_L10N_LENGTHENED  (1u << 1) /* padded to the length translations reach */
#define PINCER_L10N_BOUNDARIES  (1u << 2) /* [Hello]: truncation shows */
#define PINCER_L10N_RIGHT_TO_LEFT (1u << 3) /* words forced right to left */
#define PINCER_L10N_SHOW_KEYS   (1u << 4) /* Table:key instead of the text */

typedef struct pincer_l10n_service {
    /* struct_size, version_minor (0 for this layout), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Transforms `value`, the text the app resolved for `key` (may be NULL)
     * in `table` (NULL or "" for the default table), with the enabled modes.
     * Copies the result into `buffer`: at most capacity - 1 bytes, always
     * NUL-terminated when capacity > 0, and stores the full length in bytes
     * in *length (call again with a larger buffer when *length >= capacity).
     * `buffer` may be NULL when capacity is 0. Returns PINCER_OK (also when
     * the text was left unchanged), PINCER_INVALID_ARGUMENT when `value` or
     * `length` is NULL or `value` is not UTF-8. Details: last_error.
     * [any-thread] */
    pincer_status_t (*transform)(void *context, const char *key, const char *value, const char *table,
                                 char *buffer, uint64_t capacity, uint64_t *length);

    /* The enabled modes, PINCER_L10N_* bits. [any-thread] */
    pincer_l10n_mode_t (*modes)(void *context);

    /* Switches one mode (a single PINCER_L10N_* bit) on or off; persisted.
     * PINCER_INVALID_ARGUMENT for anything but one known bit, PINCER_FAILED
     * when the settings cannot be written (nothing changes then).
     * [any-thread] */
    pincer_status_t (*set_mode)(void *context, pincer_l10n_mode_t mode, bool on);

    /* Whether the app should lay its UI out right to left (mirrored): a
     * persisted flag, switched on and off with the right-to-left mode and on
     * its own from the menu. [any-thread] */
    bool (*layout_right_to_left)(void *context);

    /* A number that changes whenever modes, tables or the layout flag change:
     * an app caching transformed strings drops its cache when it moves.
     * [any-thread] */
    uint64_t (*generation)(void *context);

    /* Why this thread's most recent failing or unchanged call into this
     * service did what it did. Owned by the service; valid until this
     * thread's next call into it. Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_l10n_service_t;

/* Every change is also emitted as the host event "l10n.changed" with a JSON
 * payload {"modes": ["accented", ...], "layoutRightToLeft": bool,
 * "tables": ["Localizable", ...]}. */
#define PINCER_L10N_CHANGED_EVENT "l10n.changed"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_L10N_H */
