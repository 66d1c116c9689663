/*
 * pincer/menu.h — sections and entries of the developer menu.
 *
 * The host shows a tree: sections (ordered) holding entries (in
 * registration order). The host provides the standard sections below; a
 * plugin may add its own. Every entry has a stable id namespaced by its
 * plugin: the full id is "<plugin short name>.<entry id>", for example
 * "devopts.verbose". Users can pin entries; pins persist and pinned entries
 * appear in the host's "Pinned" section as well as in their own.
 *
 * Persisted entries (toggle, choice, text) keep their value in the plugin's
 * own settings under the entry id as key: read it with
 * pincer_host_t.settings_get(host, "<entry id>", ...). Values are "true" /
 * "false" for toggles, the chosen option for choices and the text itself for
 * text fields; before the first change the entry's default_value applies
 * (settings_get reports it as missing).
 */
#ifndef PINCER_MENU_H
#define PINCER_MENU_H

#include "version.h"
#include "call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ids of the standard sections the host always provides. */
#define PINCER_SECTION_DEVICE      "device"
#define PINCER_SECTION_NETWORKING  "networking"
#define PINCER_SECTION_DATA        "data"
#define PINCER_SECTION_SYSTEM      "system"
#define PINCER_SECTION_UI          "ui"
#define PINCER_SECTION_DEVELOPMENT "development"

/* Registration record for pincer_host_t.add_section. Borrowed; copied. */
typedef struct pincer_section {
    uint32_t struct_size;   /* sizeof(pincer_section_t) */
    int32_t order;          /* sort key; standard sections use 100, 200, ... 600 */
    const char *id;         /* [a-z][a-z0-9_-]*, unique across the host */
    const char *title;      /* shown to people */
} pincer_section_t;

typedef uint32_t pincer_entry_kind_t;
#define PINCER_ENTRY_VALUE  1u /* label + value computed on demand by `read` */
#define PINCER_ENTRY_TOGGLE 2u /* persisted bool */
#define PINCER_ENTRY_CHOICE 3u /* persisted one-of-N */
#define PINCER_ENTRY_TEXT   4u /* persisted text */
#define PINCER_ENTRY_ACTION 5u /* runs `command` (which must take no required argument) */
#define PINCER_ENTRY_PAGE   6u /* nested list produced on demand by `read` */

/* Flags for pincer_entry_t.flags. */
#define PINCER_ENTRY_SECRET 0x1u /* text entry whose value is masked in listings */

/* Called after a persisted entry changed through the host (shell, REPL or
 * an attached client) in this process. `entry_id` is the local id, `value`
 * the new stored value; both borrowed for the call. Serialised with the
 * plugin's other callbacks. */
typedef void (*pincer_entry_changed_fn_t)(void *context, const char *entry_id, const char *value);

/* Produces a value row's text (call->return_string) or a page's rows
 * (call->add_row). Return PINCER_OK, or call->fail and another status. */
typedef pincer_status_t (*pincer_entry_read_fn_t)(void *context, pincer_call_t *call);

/* Registration record for pincer_host_t.add_entry. Borrowed for the call:
 * every string and the choices array are copied. */
typedef struct pincer_entry {
    uint32_t struct_size;          /* sizeof(pincer_entry_t) */
    pincer_entry_kind_t kind;      /* PINCER_ENTRY_* */
    const char *id;                /* local id, [a-z][a-z0-9_-]*, unique in the plugin */
    const char *section;           /* a section id; NULL means PINCER_SECTION_DEVELOPMENT */
    const char *title;             /* shown to people; required */
    const char *summary;           /* one line; may be NULL */
    void *context;                 /* passed to read and changed; owned by the plugin,
                                      valid until its shutdown */
    pincer_entry_read_fn_t read;   /* VALUE and PAGE: required; others: NULL */
    pincer_entry_changed_fn_t changed; /* TOGGLE, CHOICE, TEXT: optional */
    const char *default_value;     /* TOGGLE "true"/"false" (NULL = "false"),
                                      CHOICE one of `choices` (NULL = the first),
                                      TEXT any (NULL = "") */
    const char *const *choices;    /* CHOICE: `choice_count` option strings */
    uint32_t choice_count;
    uint32_t flags;                /* PINCER_ENTRY_* flags */
    const char *command;           /* ACTION: "name" of this plugin's command,
                                      or a full "prefix.name" of any plugin's */
} pincer_entry_t;

#ifdef __cplusplus
}
#endif

#endif /* PINCER_MENU_H */
