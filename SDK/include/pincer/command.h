/*
 * pincer/command.h — typed commands.
 *
 * A plugin registers a plain C function together with a signature string.
 * The host parses the signature once, at registration, and from it alone
 * derives usage lines, help, argument conversion, validation and shell
 * completion. Nothing about a command is written twice.
 *
 * SIGNATURE GRAMMAR (whitespace between tokens is free)
 *
 *   signature := name "(" [ params ] ")" [ "->" result ]
 *   params    := param { "," param } [ "," rest ] | rest
 *   name      := [a-z] { [a-z0-9_-] }          at most 64 bytes
 *   param     := ident ":" [ "secret" ] type [ "=" literal ]
 *   rest      := ident ":" "string" "..."      (since 1.2)
 *   ident     := [a-z_] { [a-z0-9_] }          at most 64 bytes
 *   type      := "bool" | "i32" | "i64" | "u64" | "f64" | "string"
 *   result    := "void" | type                 (no "->" means void)
 *   literal   := "true" | "false" | integer | real | quoted-string
 *
 *   Integers are decimal with an optional sign (or 0x hex for u64), reals are
 *   decimal with optional exponent, "nan" and "inf" are not accepted; a
 *   quoted string uses double quotes with \" \\ \n \t escapes. A parameter
 *   with "= literal" is optional; once one parameter is optional every later
 *   one must be too (a rest parameter excepted). "secret" (strings only) keeps the argument out of shell
 *   history and out of logs. Parameter names are unique within a signature.
 *
 *   REST PARAMETER (since 1.2). The last parameter may be `ident: string...`:
 *   zero or more strings. Only `string` can be a rest type; a rest parameter
 *   has no default, cannot be secret, must be last, and may follow optional
 *   parameters. The shell gives it the positional words left over once the
 *   required parameters are filled, plus each `--ident value` (which may
 *   repeat), in command-line order; optional parameters before it are then
 *   given by name only (--limit 10), so an item never lands in an option.
 *   After `--`,
 *   words starting with '-' are items too. A host older than 1.2 does not
 *   know this form: there add_command refuses such a signature with
 *   PINCER_INVALID_ARGUMENT and a parse error, so a plugin that must also
 *   load on 1.1 hosts checks the host's minor in pincer_plugin_entry (or
 *   registers a fallback signature when add_command fails).
 *
 *   Examples:  "set(name: string, value: bool)"
 *              "add(a: i64, b: f64 = 1.5) -> f64"
 *              "login(user: string, token: secret string) -> string"
 *              "query(db: string, sql: string, params: string...) -> string"
 *
 *   A signature that does not parse is refused by add_command with
 *   PINCER_INVALID_ARGUMENT and a message giving the byte offset (1-based
 *   column) of the error and what was expected there.
 *
 * TYPE MAPPING                 C parameter type    C result pointer type
 *   bool                       bool (C11 _Bool)    bool *
 *   i32                        int32_t             int32_t *
 *   i64                        int64_t             int64_t *
 *   u64                        uint64_t            uint64_t *
 *   f64                        double              double *
 *   string                     const char *        (see below)
 *
 * TYPED CALL STYLE (pincer_command_t.typed)
 *   The host calls the function through libffi with a call interface
 *   prepared once per command:
 *
 *     pincer_status_t fn(void *context, pincer_call_t *call,
 *                        P1 a1, ..., Pn an [, R *result]);
 *
 *   `context` is pincer_command_t.context. `R *result` is present only for
 *   bool, i32, i64, u64 and f64 results; it points at zeroed storage. A
 *   `-> string` command has no result pointer and calls
 *   call->return_string instead; a void command has neither.
 *   String arguments are valid UTF-8, never NULL, borrowed for the call.
 *
 *   A rest parameter `items: string...` is passed as two C arguments in its
 *   place (after the other parameters, before the result pointer if any):
 *
 *     const char *const *items, uint32_t items_count
 *
 *   items[0] .. items[items_count - 1] are valid UTF-8, never NULL, and
 *   borrowed for the call, as is the array. `items` may be NULL when
 *   items_count is 0. For "count(db: string, params: string...) -> i64":
 *
 *     pincer_status_t count(void *context, pincer_call_t *call, const char *db,
 *                           const char *const *params, uint32_t params_count,
 *                           int64_t *result);
 *
 * VALUES CALL STYLE (pincer_command_t.values)
 *   For languages that cannot declare a C function per command, the host
 *   instead passes the converted arguments as an array of tagged values:
 *
 *     pincer_status_t fn(void *context, pincer_call_t *call,
 *                        const pincer_value_t *args, uint32_t count,
 *                        pincer_value_t *result);
 *
 *   `args[i]` is the i-th parameter of the signature with defaults already
 *   filled in; `count` equals the number of parameters. Set `*result` for
 *   scalar results (its type is preset); use call->return_string for
 *   strings. Both arrays are owned by the host and valid during the call.
 *
 *   With a rest parameter, `args` holds the n parameters declared before it
 *   first (defaults filled in), then one PINCER_TYPE_STRING value per rest
 *   argument, in order: `count` = n + the number of rest arguments, so the
 *   rest items are args[n] .. args[count - 1] (none when count == n).
 *
 * FAILURE
 *   Return PINCER_OK on success. Otherwise call call->fail(call, message)
 *   and return another status; the shell prints the message and exits 1.
 *   Never let a C++ exception, a Rust panic or a Swift error unwind out of
 *   the function.
 *
 * THREADING
 *   The host never runs two callbacks of the same plugin at once (commands,
 *   value rows, pages and entry change notices are serialised per plugin),
 *   but successive calls may arrive on different threads.
 */
#ifndef PINCER_COMMAND_H
#define PINCER_COMMAND_H

#include "version.h"
#include "call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tag of a pincer_value_t. */
typedef uint32_t pincer_type_t;
#define PINCER_TYPE_VOID   0u
#define PINCER_TYPE_BOOL   1u
#define PINCER_TYPE_I32    2u
#define PINCER_TYPE_I64    3u
#define PINCER_TYPE_U64    4u
#define PINCER_TYPE_F64    5u
#define PINCER_TYPE_STRING 6u

/* One tagged argument or result of the values call style. */
typedef struct pincer_value {
    pincer_type_t type;
    uint32_t reserved;
    union {
        bool b;
        int32_t i32;
        int64_t i64;
        uint64_t u64;
        double f64;
        const char *string; /* UTF-8, borrowed for the call */
    } as;
} pincer_value_t;

/* A typed command function, cast to this type for storage. The host casts
 * it back to the shape its signature describes (see above). */
typedef void (*pincer_typed_fn_t)(void);

/* A command function of the values call style. */
typedef pincer_status_t (*pincer_values_fn_t)(void *context, pincer_call_t *call,
                                              const pincer_value_t *args, uint32_t count,
                                              pincer_value_t *result);

/* Flags for pincer_command_t.flags. */
#define PINCER_COMMAND_CHANGES_STATE 0x1u /* may be disabled by an app that embeds the host read-only */
/* Since 1.1. The command's `-> string` result is one JSON document. With
 * --json the shell embeds it as the result value; otherwise it renders it
 * for people (an array of objects as a table, an object as name: value
 * lines). A result that is not valid JSON is reported as the command's
 * failure. Only for commands whose result type is string. */
#define PINCER_COMMAND_JSON_RESULT 0x2u
/* Since 1.7. The command may run while other callbacks of its plugin run
 * (another command, an entry read): the host does not serialise it with
 * them, so it must guard its own state. For commands that run long and
 * whose work others must be able to reach meanwhile (net.breakpoints
 * --watch waits for held exchanges while net.continue releases them).
 * Hosts before 1.7 ignore the bit and serialise the command as usual. */
#define PINCER_COMMAND_CONCURRENT 0x4u

/* Registration record for pincer_host_t.add_command. Borrowed for the call:
 * the host copies every string, so the record may live on the stack. */
typedef struct pincer_command {
    uint32_t struct_size;       /* sizeof(pincer_command_t) */
    uint32_t flags;             /* PINCER_COMMAND_* bits */
    const char *signature;      /* required; see the grammar above */
    const char *summary;        /* one line for listings and help; may be NULL */
    const char *details;        /* more help text; may be NULL */
    pincer_typed_fn_t typed;    /* exactly one of `typed` and `values` is set */
    pincer_values_fn_t values;
    void *context;              /* passed first to the function; owned by the plugin,
                                   must stay valid until the plugin's shutdown */
} pincer_command_t;

#ifdef __cplusplus
}
#endif

#endif /* PINCER_COMMAND_H */
