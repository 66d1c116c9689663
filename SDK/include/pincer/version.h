/*
 * pincer/version.h — ABI version, magic value, status codes and the
 * export macro shared by every other Pincer header.
 *
 * Versioning rules (the contract between a host and a plugin):
 *  - PINCER_ABI_MAJOR changes only when a record or table changes in a way
 *    an old reader cannot survive. A host refuses a plugin whose major
 *    differs from its own. Within version 1 that never happens: a breaking
 *    change gets a new versioned id instead.
 *  - PINCER_ABI_MINOR grows whenever slots are appended to a record or a
 *    table, or the signature grammar (command.h) gains a form. Every record
 *    and table starts with (or carries) `struct_size`; a reader checks it
 *    before touching a slot added after version 1.0 (see PINCER_HAS_SLOT).
 *    Slots are never reordered or removed.
 *  - A newer-minor plugin on an older host works: the host reads only the
 *    slots it knows (a signature using a newer grammar form is the one
 *    exception: add_command refuses it, see command.h). An older-minor
 *    plugin on a newer host works: the host sees the smaller struct_size
 *    and treats missing slots as absent.
 *
 * History: 1.0 first release. 1.1 appended pincer_entry_t.set with
 * PINCER_ENTRY_PLUGIN_VALUE, pincer_host_t.update_entry and
 * state_directory, pincer_call_t.output, and PINCER_COMMAND_JSON_RESULT.
 * 1.2 added rest parameters (`name: string...`) to the signature grammar
 * (see command.h), and pincer/database.h. 1.3 appended
 * pincer_call_t.output_format. 1.4 appended
 * pincer_host_t.settings_update (an atomic read-modify-write of one
 * setting) and settings_list; pincer_call_t.is_cancelled;
 * pincer_network_service_t.add_redact_name (network.h). 1.5 appended
 * pincer_plugin_t.sync_entries (entries that follow stored state). 1.6
 * appended interception to pincer_network_service_t (network.h:
 * intercept_request ... remove_transient_rule, version 1.2 of the table).
 * 1.7 appended pincer_call_t.ask, PINCER_COMMAND_CONCURRENT, and, as
 * version 1.3 of the network service's table, breakpoints
 * (PINCER_NETWORK_HOLD, pincer_network_decision_t.accepts, await_release)
 * and replay (set_replayer).
 *
 * This header is pure C11 and valid C++; it allocates nothing.
 */
#ifndef PINCER_VERSION_H
#define PINCER_VERSION_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 'PNCR' read as a little-endian uint32_t. First field of pincer_plugin_t. */
#define PINCER_PLUGIN_MAGIC 0x52434E50u

#define PINCER_ABI_MAJOR 1u
#define PINCER_ABI_MINOR 7u

/* Marks the one symbol a plugin exports. Build plugins with
 * -fvisibility=hidden (or make everything else `static`) so that nothing
 * but the entry function is visible to the host's dynamic linker. */
#if defined(_WIN32)
#  define PINCER_EXPORT __declspec(dllexport)
#else
#  define PINCER_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#  define PINCER_EXTERN_C extern "C"
#else
#  define PINCER_EXTERN_C
#endif

/* True when a record or table whose first uint32_t is `struct_size` is
 * large enough to contain `field`. Use it before reading any slot that was
 * appended after the version your code was written against. */
#define PINCER_HAS_SLOT(ptr, type, field) \
    ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, field) + sizeof((ptr)->field))

/* Status returned by every fallible call in both directions. */
typedef uint32_t pincer_status_t;
#define PINCER_OK                 0u /* success */
#define PINCER_FAILED             1u /* generic failure; details in the message */
#define PINCER_INVALID_ARGUMENT   2u /* an argument was malformed or out of range */
#define PINCER_NOT_FOUND          3u /* the named thing does not exist */
#define PINCER_DUPLICATE          4u /* the id is already taken */
#define PINCER_UNSUPPORTED        5u /* the host or plugin does not offer this */
#define PINCER_CANCELLED          6u /* the operation was cancelled */

/* Severity for pincer_host_t.log. */
typedef uint32_t pincer_log_level_t;
#define PINCER_LOG_DEBUG   0u
#define PINCER_LOG_INFO    1u
#define PINCER_LOG_WARNING 2u
#define PINCER_LOG_ERROR   3u

#ifdef __cplusplus
}
#endif

#endif /* PINCER_VERSION_H */
