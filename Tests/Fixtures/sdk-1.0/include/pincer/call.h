/*
 * pincer/call.h — the reply handle the host passes to every plugin callback
 * that can fail or produce text: commands, value rows, pages and init.
 *
 * Why a handle instead of returned pointers: anything a plugin hands back
 * goes through a function of this handle, which copies it before returning.
 * So the one ownership rule for results is "the plugin keeps what it
 * allocated and may free it as soon as the function returns" — the same for
 * C (stack or malloc), Swift (withCString) and Rust (CString::as_ptr).
 *
 * Lifetime: the handle is valid only during the callback it was passed to.
 * Do not store it, and do not use it from another thread.
 */
#ifndef PINCER_CALL_H
#define PINCER_CALL_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pincer_call pincer_call_t;

struct pincer_call {
    /* Size of this struct as the host built it. Check with PINCER_HAS_SLOT
     * before using a slot appended after ABI 1.0. */
    uint32_t struct_size;
    uint32_t reserved;

    /* Owned by the host. Plugins never read or write it. */
    void *host_data;

    /* Reports why the callback failed. `message` is UTF-8, borrowed for the
     * call and copied. Call it, then return a status other than PINCER_OK.
     * A later call replaces an earlier message. NULL is treated as "".
     * [callback thread] */
    void (*fail)(pincer_call_t *call, const char *message);

    /* Sets the text result: the return value of a `-> string` command or
     * the value shown by a value row. `utf8` is borrowed and copied; NULL
     * means "no value" (shown as an empty string). A later call replaces an
     * earlier one. Ignored where no text result is expected.
     * [callback thread] */
    void (*return_string)(pincer_call_t *call, const char *utf8);

    /* Appends one row to the list a page entry produces. Both strings are
     * borrowed and copied; `value` may be NULL. Ignored outside a page
     * callback. [callback thread] */
    void (*add_row)(pincer_call_t *call, const char *title, const char *value);
};

#ifdef __cplusplus
}
#endif

#endif /* PINCER_CALL_H */
