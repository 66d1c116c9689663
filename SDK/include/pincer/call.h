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

/* How the caller shows what a call produces (pincer_call_t.output_format). */
typedef uint32_t pincer_output_format_t;
#define PINCER_OUTPUT_TEXT 0u /* text for a person: a terminal, a pipe, a log */
#define PINCER_OUTPUT_JSON 1u /* JSON: `pincer --json` anywhere on the line */

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

    /* -- ABI 1.1: check PINCER_HAS_SLOT(call, pincer_call_t, output). -- */

    /* Shows `utf8` (borrowed, copied) to the user now, while the command
     * is still running: for commands that follow something live (net.tail)
     * or report progress. The shell writes it to standard output at once;
     * a caller with nowhere to show it drops it. Include your own newlines.
     * [callback thread] */
    void (*output)(pincer_call_t *call, const char *utf8);

    /* -- ABI 1.3: check PINCER_HAS_SLOT(call, pincer_call_t, output_format). -- */

    /* The form the caller wants this call's live output in. With
     * PINCER_OUTPUT_JSON, pass `output` one JSON object per line (the shell
     * prints them as NDJSON, followed by one line for the result); any
     * line that is not a JSON object is wrapped as {"output": "<line>"}.
     * Hosts before 1.3 lack the slot: treat that as PINCER_OUTPUT_TEXT.
     * The value is fixed for the call. [callback thread] */
    pincer_output_format_t (*output_format)(pincer_call_t *call);

    /* -- ABI 1.4: check PINCER_HAS_SLOT(call, pincer_call_t, is_cancelled). -- */

    /* True once the caller has given up on this call: Ctrl-C or --timeout
     * in the shell, a JSON-RPC `cancel` from a control client. It never
     * turns back to false. The host cannot interrupt a plugin function, so
     * a command that runs long (follows something live, sleeps, loops)
     * polls this, every 100 ms or so, and then returns soon: PINCER_CANCELLED
     * after `fail`, or PINCER_OK with what it has so far. A command that
     * does not poll runs on; the shell stops waiting for it and exits.
     * Cheap (one atomic load, no allocation, no lock). Hosts before 1.4
     * lack the slot: treat that as never cancelled. [callback thread] */
    bool (*is_cancelled)(pincer_call_t *call);

    /* -- ABI 1.7: check PINCER_HAS_SLOT(call, pincer_call_t, ask). -- */

    /* Asks the person running the command `question` (UTF-8, borrowed for
     * the call; shown as it is, so end it with the prompt you want, e.g.
     * "continue, edit or abort? [c/e/a] ") and waits for one line. Returns
     * the line without its newline (UTF-8, owned by the host, valid until
     * the next `ask` or the end of the callback), or NULL when nobody can
     * answer: the shell is not interactive (a script, a pipe outside the
     * REPL, --json), input ended, or the call was cancelled while waiting
     * (check is_cancelled). A command must work without answers: treat NULL
     * as "ask no more" and go on with what needs no person. Over an attached
     * shell the question travels to the person's terminal and the answer
     * back. Hosts before 1.7 lack the slot: treat that as NULL.
     * [callback thread] */
    const char *(*ask)(pincer_call_t *call, const char *question);
};

#ifdef __cplusplus
}
#endif

#endif /* PINCER_CALL_H */
