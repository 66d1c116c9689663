/*
 * devopts.c — "Developer Options": the kind of plugin an app team ships
 * with its own developer menu. It is written against SDK/include alone, so
 * it doubles as the reference example of the C ABI:
 *
 *   - a section of its own with value rows, a toggle, a choice, a text
 *     field, an action and a page;
 *   - typed commands covering every parameter and result type, defaults,
 *     a secret parameter, failures and state-changing commands;
 *   - a tiny service table other plugins can look up.
 *
 * Everything is `static` except pincer_plugin_entry, and the build uses
 * -fvisibility=hidden plus a version script, so the host's dynamic linker
 * sees exactly one symbol. The file is also valid C++17 (no designated
 * initializers, explicit casts from void *) so it can be copied into a C++
 * plugin unchanged.
 */
/* nanosleep (POSIX) under a strict -std=c11 build. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pincer.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#  define DEVOPTS_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#  define DEVOPTS_PRINTF(fmt, first)
#endif

/* Counters kept by "count"; a fixed table keeps the plugin allocation-free
 * outside of formatting results. */
#define DEVOPTS_MAX_COUNTERS     16
#define DEVOPTS_COUNTER_NAME_MAX 64 /* bytes including the NUL */

/* ---- the example service ------------------------------------------------ */

/* "com.example.devoptions/1": lets other plugins read a counter.
 * Like every service table it starts with pincer_service_header_t so callers
 * can check struct_size before using slots appended in later minors.
 * [any-thread] */
#define DEVOPTS_SERVICE_ID "com.example.devoptions/1"

typedef struct devopts_service {
    pincer_service_header_t header; /* struct_size, version_minor 0, context */
    /* The counter's current value, or 0 when no counter has that name. */
    int64_t (*counter)(void *context, const char *name);
} devopts_service_t;

/* ---- plugin state ------------------------------------------------------- */

struct devopts_counter {
    char name[DEVOPTS_COUNTER_NAME_MAX];
    int64_t value;
};

/* The one piece of mutable state. It is static because the plugin record
 * (which must outlive the process) points at it; every callback reaches it
 * through its `context` argument rather than by name. */
struct devopts_state {
    const pincer_host_t *host; /* valid from init until shutdown returns */

    /* The host serialises this plugin's own callbacks, but the service can
     * be called by another plugin on another thread at the same time, so
     * the counters are guarded. Initialised in init, before publishing. */
    pthread_mutex_t lock;
    bool lock_ready;
    size_t counter_count;
    struct devopts_counter counters[DEVOPTS_MAX_COUNTERS];

    /* Published as DEVOPTS_SERVICE_ID; must stay put until shutdown, which
     * a static object guarantees. */
    devopts_service_t service;
};

static struct devopts_state g_state;

/* ---- small helpers ------------------------------------------------------ */

static struct devopts_state *state_of(void *context)
{
    return (struct devopts_state *)context;
}

/* printf into a malloc'd string sized exactly for the result, so nothing is
 * ever truncated. NULL when out of memory or on an encoding error. */
static char *format_alloc(const char *format, ...) DEVOPTS_PRINTF(1, 2);
static char *format_alloc(const char *format, ...)
{
    va_list args;
    int length;
    char *text;

    va_start(args, format);
    length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (length < 0)
        return NULL;

    text = (char *)malloc((size_t)length + 1);
    if (text == NULL)
        return NULL;
    va_start(args, format);
    vsnprintf(text, (size_t)length + 1, format, args);
    va_end(args);
    return text;
}

/* Returns `text` (malloc'd, may be NULL) as the call's string result and
 * frees it: return_string copies, so the plugin keeps ownership. */
static pincer_status_t return_owned(pincer_call_t *call, char *text)
{
    if (text == NULL) {
        call->fail(call, "out of memory");
        return PINCER_FAILED;
    }
    call->return_string(call, text);
    free(text);
    return PINCER_OK;
}

/* Reports a failed host call: last_error says why, and is never NULL. */
static pincer_status_t fail_from_host(const pincer_host_t *host, pincer_call_t *call,
                                      pincer_status_t status)
{
    call->fail(call, host->last_error(host));
    return status;
}

/* Reads setting `key` into a malloc'd string (*out, NULL when the key has no
 * value). A stack buffer covers the usual short value; a longer one is read
 * again into a buffer of the reported size. On failure it has already called
 * call->fail. */
static pincer_status_t setting_dup(const pincer_host_t *host, pincer_call_t *call,
                                   const char *key, char **out)
{
    char small[256];
    int64_t length;
    int attempt;

    *out = NULL;
    length = host->settings_get(host, key, small, sizeof small);
    if (length == PINCER_SETTING_MISSING)
        return PINCER_OK;
    if (length < 0)
        return fail_from_host(host, call, PINCER_FAILED);
    if ((uint64_t)length < sizeof small) {
        *out = format_alloc("%s", small);
        if (*out == NULL) {
            call->fail(call, "out of memory");
            return PINCER_FAILED;
        }
        return PINCER_OK;
    }

    /* Too long for `small`. The value may change between two reads (another
     * process may write the store), so retry a few times with the latest
     * reported length. */
    for (attempt = 0; attempt < 4; attempt++) {
        uint64_t capacity = (uint64_t)length + 1;
        char *buffer;
        int64_t again;

        if ((uint64_t)length >= (uint64_t)SIZE_MAX) {
            call->fail(call, "setting value is too large");
            return PINCER_FAILED;
        }
        buffer = (char *)malloc((size_t)capacity);
        if (buffer == NULL) {
            call->fail(call, "out of memory");
            return PINCER_FAILED;
        }
        again = host->settings_get(host, key, buffer, capacity);
        if (again >= 0 && (uint64_t)again < capacity) {
            *out = buffer;
            return PINCER_OK;
        }
        free(buffer);
        if (again == PINCER_SETTING_MISSING)
            return PINCER_OK;
        if (again < 0)
            return fail_from_host(host, call, PINCER_FAILED);
        length = again; /* grew meanwhile */
    }
    call->fail(call, "setting value kept changing while it was read");
    return PINCER_FAILED;
}

/* ---- menu entries ------------------------------------------------------- */

/* VALUE "user-id": the id stored by set-user, or "anonymous". */
static pincer_status_t read_user_id(void *context, pincer_call_t *call)
{
    struct devopts_state *state = state_of(context);
    char *value;
    pincer_status_t status = setting_dup(state->host, call, "user_id", &value);

    if (status != PINCER_OK)
        return status;
    call->return_string(call, value != NULL ? value : "anonymous");
    free(value);
    return PINCER_OK;
}

/* VALUE "build": how this plugin was compiled. */
static pincer_status_t read_build(void *context, pincer_call_t *call)
{
    (void)context;
#ifdef NDEBUG
    call->return_string(call, "release");
#else
    call->return_string(call, "debug");
#endif
    return PINCER_OK;
}

/* VALUE "env-home": read on every display, so it reflects the process now. */
static pincer_status_t read_env_home(void *context, pincer_call_t *call)
{
    const char *home = getenv("HOME");

    (void)context;
    call->return_string(call, home != NULL ? home : "(unset)");
    return PINCER_OK;
}

/* TOGGLE "verbose-logging" changed through the host. */
static void verbose_logging_changed(void *context, const char *entry_id, const char *value)
{
    struct devopts_state *state = state_of(context);
    /* Toggle values are "true"/"false"; a longer value would only shorten
     * the log line, and snprintf always terminates. */
    char line[96];

    (void)entry_id;
    snprintf(line, sizeof line, "verbose logging is now %s", value != NULL ? value : "");
    state->host->log(state->host, PINCER_LOG_INFO, line);
}

/* PAGE "counters": one row per counter. The rows are formatted from a
 * snapshot so the lock is not held while calling into the host. */
static pincer_status_t read_counters(void *context, pincer_call_t *call)
{
    struct devopts_state *state = state_of(context);
    struct devopts_counter snapshot[DEVOPTS_MAX_COUNTERS];
    size_t count, i;

    pthread_mutex_lock(&state->lock);
    count = state->counter_count;
    memcpy(snapshot, state->counters, count * sizeof snapshot[0]);
    pthread_mutex_unlock(&state->lock);

    for (i = 0; i < count; i++) {
        char value[24]; /* INT64_MIN is 20 characters */
        snprintf(value, sizeof value, "%" PRId64, snapshot[i].value);
        call->add_row(call, snapshot[i].name, value);
    }
    return PINCER_OK;
}

/* ---- typed commands ----------------------------------------------------- */
/* Shapes follow command.h: (context, call, params..., [R *result]). */

/* add(a: i64, b: f64 = 1.5) -> f64 */
static pincer_status_t cmd_add(void *context, pincer_call_t *call, int64_t a, double b, double *result)
{
    (void)context;
    (void)call;
    *result = (double)a + b;
    return PINCER_OK;
}

/* negate(value: bool) -> bool */
static pincer_status_t cmd_negate(void *context, pincer_call_t *call, bool value, bool *result)
{
    (void)context;
    (void)call;
    *result = !value;
    return PINCER_OK;
}

/* scale(value: i32, factor: i32 = 2) -> i32 — multiplies in 64 bits, where
 * no i32 product can overflow, then checks the range. */
static pincer_status_t cmd_scale(void *context, pincer_call_t *call, int32_t value, int32_t factor,
                                 int32_t *result)
{
    int64_t product = (int64_t)value * (int64_t)factor;

    (void)context;
    if (product < INT32_MIN || product > INT32_MAX) {
        /* Fixed text plus two i32s: at most 48 bytes. */
        char message[80];
        snprintf(message, sizeof message, "scale: %" PRId32 " * %" PRId32 " overflows i32", value, factor);
        call->fail(call, message);
        return PINCER_INVALID_ARGUMENT;
    }
    *result = (int32_t)product;
    return PINCER_OK;
}

/* mask(bits: u64, mask: u64 = 0xff) -> u64 */
static pincer_status_t cmd_mask(void *context, pincer_call_t *call, uint64_t bits, uint64_t mask,
                                uint64_t *result)
{
    (void)context;
    (void)call;
    *result = bits & mask;
    return PINCER_OK;
}

/* echo(text: string) -> string */
static pincer_status_t cmd_echo(void *context, pincer_call_t *call, const char *text)
{
    (void)context;
    call->return_string(call, text);
    return PINCER_OK;
}

/* greet(name: string = "world") -> string — the greeting is the TEXT entry
 * "greeting", stored under its entry id; missing means its default. */
static pincer_status_t cmd_greet(void *context, pincer_call_t *call, const char *name)
{
    struct devopts_state *state = state_of(context);
    char *greeting;
    char *text;
    pincer_status_t status = setting_dup(state->host, call, "greeting", &greeting);

    if (status != PINCER_OK)
        return status;
    text = format_alloc("%s, %s!", greeting != NULL ? greeting : "Hello", name);
    free(greeting);
    return return_owned(call, text);
}

/* set-user(id: string) */
static pincer_status_t cmd_set_user(void *context, pincer_call_t *call, const char *id)
{
    struct devopts_state *state = state_of(context);
    pincer_status_t status;

    if (id[0] == '\0') {
        call->fail(call, "set-user: the id must not be empty (devopts.reset forgets it)");
        return PINCER_INVALID_ARGUMENT;
    }
    status = state->host->settings_set(state->host, "user_id", id);
    if (status != PINCER_OK)
        return fail_from_host(state->host, call, status);
    return PINCER_OK;
}

static void sleep_ms(int32_t ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* progress(steps: i32 = 3, plain: bool = false, delay_ms: i32 = 0) -> string
 * Live output, in the form the caller asked for: one JSON object per step
 * under `pincer --json` (pincer_call_t.output_format, ABI 1.3), a text line
 * otherwise. `plain` writes text whatever was asked, as a plugin built
 * before 1.3 does; the shell then wraps each line for JSON callers.
 * `delay_ms` (--delay-ms) waits that long before each step, polling
 * pincer_call_t.is_cancelled (ABI 1.4) every 10 ms: once cancelled it
 * fails with PINCER_CANCELLED, naming the step it stopped at. */
static pincer_status_t cmd_progress(void *context, pincer_call_t *call, int32_t steps, bool plain, int32_t delay_ms)
{
    struct devopts_state *state = state_of(context);
    bool json = !plain && PINCER_HAS_SLOT(call, pincer_call_t, output_format)
                && call->output_format(call) == PINCER_OUTPUT_JSON;
    bool can_output = PINCER_HAS_SLOT(call, pincer_call_t, output);
    char line[96];
    int32_t i;

    bool can_cancel = PINCER_HAS_SLOT(call, pincer_call_t, is_cancelled);
    int32_t waited;

    if (steps < 0 || steps > 1000) {
        call->fail(call, "progress: steps must be 0 to 1000");
        return PINCER_INVALID_ARGUMENT;
    }
    if (delay_ms < 0 || delay_ms > 60000) {
        call->fail(call, "progress: delay_ms must be 0 to 60000");
        return PINCER_INVALID_ARGUMENT;
    }
    state->host->log(state->host, PINCER_LOG_INFO, "progress: starting");
    for (i = 1; i <= steps && can_output; i++) {
        for (waited = 0; waited < delay_ms; waited += 10) {
            if (can_cancel && call->is_cancelled(call)) {
                snprintf(line, sizeof line, "progress: cancelled before step %" PRId32 " of %" PRId32, i, steps);
                call->fail(call, line);
                return PINCER_CANCELLED;
            }
            sleep_ms(delay_ms - waited < 10 ? delay_ms - waited : 10);
        }
        if (json)
            snprintf(line, sizeof line, "{\"step\":%" PRId32 ",\"of\":%" PRId32 "}\n", i, steps);
        else
            snprintf(line, sizeof line, "step %" PRId32 " of %" PRId32 "\n", i, steps);
        call->output(call, line);
    }
    snprintf(line, sizeof line, "%" PRId32 " steps done", steps);
    call->return_string(call, line);
    return PINCER_OK;
}

/* count(name: string, by: i64 = 1) -> i64 */
static pincer_status_t cmd_count(void *context, pincer_call_t *call, const char *name, int64_t by,
                                 int64_t *result)
{
    struct devopts_state *state = state_of(context);
    struct devopts_counter *counter = NULL;
    /* Bounded scan (memchr stops at the first NUL), so an overlong name is
     * refused without reading it all; names are never silently truncated,
     * which would merge two counters. */
    const char *end = (const char *)memchr(name, '\0', DEVOPTS_COUNTER_NAME_MAX);
    size_t length, i;
    const char *error = NULL;
    pincer_status_t status = PINCER_OK;

    if (end == NULL) {
        call->fail(call, "count: counter names are limited to 63 bytes");
        return PINCER_INVALID_ARGUMENT;
    }
    length = (size_t)(end - name);
    if (length == 0) {
        call->fail(call, "count: the counter name must not be empty");
        return PINCER_INVALID_ARGUMENT;
    }

    pthread_mutex_lock(&state->lock);
    for (i = 0; i < state->counter_count; i++) {
        if (strcmp(state->counters[i].name, name) == 0) {
            counter = &state->counters[i];
            break;
        }
    }
    if (counter == NULL) {
        if (state->counter_count == DEVOPTS_MAX_COUNTERS) {
            error = "count: all 16 counters are in use; devopts.reset clears them";
            status = PINCER_FAILED;
        } else {
            counter = &state->counters[state->counter_count++];
            memcpy(counter->name, name, length + 1); /* length < DEVOPTS_COUNTER_NAME_MAX */
            counter->value = 0;
        }
    }
    if (counter != NULL) {
        if ((by > 0 && counter->value > INT64_MAX - by) || (by < 0 && counter->value < INT64_MIN - by)) {
            error = "count: the counter would overflow i64";
            status = PINCER_INVALID_ARGUMENT;
        } else {
            counter->value += by;
            *result = counter->value;
        }
    }
    pthread_mutex_unlock(&state->lock);

    if (error != NULL)
        call->fail(call, error);
    return status;
}

/* login(user: string, token: secret string) -> string — the token is
 * secret: it is measured, never echoed or logged. */
static pincer_status_t cmd_login(void *context, pincer_call_t *call, const char *user, const char *token)
{
    (void)context;
    return return_owned(call, format_alloc("logged in as %s (token of %zu bytes)", user, strlen(token)));
}

/* fail(message: string = "requested failure") */
static pincer_status_t cmd_fail(void *context, pincer_call_t *call, const char *message)
{
    (void)context;
    call->fail(call, message);
    return PINCER_FAILED;
}

/* reset() — forgets the user id and every persisted entry value (so the
 * entries show their defaults again), clears the counters and tells
 * subscribers. Stops at the first failing host call and reports it. */
static pincer_status_t cmd_reset(void *context, pincer_call_t *call)
{
    const char *const keys[] = { "user_id", "verbose-logging", "api-mode", "greeting" };
    struct devopts_state *state = state_of(context);
    const pincer_host_t *host = state->host;
    pincer_status_t status;
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        status = host->settings_set(host, keys[i], NULL);
        if (status != PINCER_OK)
            return fail_from_host(host, call, status);
    }

    pthread_mutex_lock(&state->lock);
    state->counter_count = 0;
    memset(state->counters, 0, sizeof state->counters);
    pthread_mutex_unlock(&state->lock);

    status = host->emit(host, "devopts.reset", "{}");
    if (status != PINCER_OK)
        return fail_from_host(host, call, status);
    return PINCER_OK;
}

/* ---- the service -------------------------------------------------------- */

static int64_t service_counter(void *context, const char *name)
{
    struct devopts_state *state = state_of(context);
    int64_t value = 0;
    size_t i;

    if (name == NULL)
        return 0;
    pthread_mutex_lock(&state->lock);
    for (i = 0; i < state->counter_count; i++) {
        if (strcmp(state->counters[i].name, name) == 0) {
            value = state->counters[i].value;
            break;
        }
    }
    pthread_mutex_unlock(&state->lock);
    return value;
}

/* ---- registration ------------------------------------------------------- */

/* Registration records are filled by assignment after zeroing (rather than
 * with designated initializers) so this file also compiles as C++17. */

static pincer_status_t add_value_row(const pincer_host_t *host, struct devopts_state *state,
                                     const char *id, const char *title, const char *summary,
                                     pincer_entry_read_fn_t read)
{
    pincer_entry_t entry;

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_VALUE;
    entry.id = id;
    entry.section = "devopts";
    entry.title = title;
    entry.summary = summary;
    entry.context = state;
    entry.read = read;
    return host->add_entry(host, &entry);
}

struct command_spec {
    const char *signature;
    const char *summary;
    const char *details;
    pincer_typed_fn_t typed;
    uint32_t flags;
};

/* Casting to pincer_typed_fn_t is how command.h stores every shape; the
 * host casts back according to the signature. */
#define TYPED(fn) ((pincer_typed_fn_t)(fn))

static pincer_status_t devopts_init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    struct devopts_state *state = state_of(context);
    const char *const api_modes[] = { "live", "staging", "mock" }; /* add_entry copies the array */
    const struct command_spec commands[] = {
        { "add(a: i64, b: f64 = 1.5) -> f64", "Add an integer and a real", NULL, TYPED(cmd_add), 0 },
        { "negate(value: bool) -> bool", "Logical not", NULL, TYPED(cmd_negate), 0 },
        { "scale(value: i32, factor: i32 = 2) -> i32", "Multiply two i32s, refusing overflow",
          "Fails with invalid-argument when the product does not fit in a signed 32-bit integer.",
          TYPED(cmd_scale), 0 },
        { "mask(bits: u64, mask: u64 = 0xff) -> u64", "Bitwise AND of two u64s", NULL, TYPED(cmd_mask), 0 },
        { "echo(text: string) -> string", "Return the text unchanged", NULL, TYPED(cmd_echo), 0 },
        { "greet(name: string = \"world\") -> string", "Greet someone with the configured greeting",
          "The greeting is the \"greeting\" text entry of the Developer Options section (default \"Hello\").",
          TYPED(cmd_greet), 0 },
        { "set-user(id: string)", "Store the user id shown in the menu", NULL, TYPED(cmd_set_user),
          PINCER_COMMAND_CHANGES_STATE },
        { "count(name: string, by: i64 = 1) -> i64", "Add to a named counter and return its value",
          "Up to 16 counters live in memory until the process exits or devopts.reset runs; "
          "names are at most 63 bytes. The Counters page lists them.",
          TYPED(cmd_count), 0 },
        { "login(user: string, token: secret string) -> string", "Pretend to log in (the token is never shown)",
          NULL, TYPED(cmd_login), 0 },
        { "progress(steps: i32 = 3, plain: bool = false, delay_ms: i32 = 0) -> string", "Show live progress, one line per step",
          "Under --json each step is a JSON object on its own line (NDJSON), then the result; "
          "--plain writes text lines instead, as a plugin built before ABI 1.3 would. "
          "--delay-ms waits before each step, and stops with PINCER_CANCELLED on Ctrl-C or --timeout.",
          TYPED(cmd_progress), 0 },
        { "fail(message: string = \"requested failure\")", "Always fail with the message", NULL,
          TYPED(cmd_fail), 0 },
        { "reset()", "Forget the user id, entry values and counters", NULL, TYPED(cmd_reset),
          PINCER_COMMAND_CHANGES_STATE },
    };
    pincer_section_t section;
    pincer_entry_t entry;
    pincer_command_t command;
    pincer_status_t status;
    size_t i;

    /* Every slot used below exists in the 1.0 table; a host of the same
     * major always provides them, but a truncated table must not crash us. */
    if (!PINCER_HAS_SLOT(host, pincer_host_t, last_error)) {
        reply->fail(reply, "devopts: the host API table is smaller than ABI 1.0");
        return PINCER_UNSUPPORTED;
    }
    state->host = host;

    /* Before anything that can reach the counters (the service, commands). */
    if (!state->lock_ready) {
        if (pthread_mutex_init(&state->lock, NULL) != 0) {
            reply->fail(reply, "devopts: could not create a mutex");
            return PINCER_FAILED;
        }
        state->lock_ready = true;
    }

    memset(&section, 0, sizeof section);
    section.struct_size = (uint32_t)sizeof section;
    section.order = 50; /* ahead of the standard sections (100 ... 600) */
    section.id = "devopts";
    section.title = "Developer Options";
    status = host->add_section(host, &section);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    status = add_value_row(host, state, "user-id", "User ID", "Set with devopts.set-user", read_user_id);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);
    status = add_value_row(host, state, "build", "Build configuration", "How the plugin was compiled",
                           read_build);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);
    status = add_value_row(host, state, "env-home", "HOME", "The HOME environment variable", read_env_home);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_TOGGLE;
    entry.id = "verbose-logging";
    entry.section = "devopts";
    entry.title = "Verbose logging";
    entry.summary = "Log more detail";
    entry.context = state;
    entry.changed = verbose_logging_changed;
    entry.default_value = "false";
    status = host->add_entry(host, &entry);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_CHOICE;
    entry.id = "api-mode";
    entry.section = "devopts";
    entry.title = "API mode";
    entry.summary = "Which backend the app talks to";
    entry.default_value = "live";
    entry.choices = api_modes;
    entry.choice_count = (uint32_t)(sizeof api_modes / sizeof api_modes[0]);
    status = host->add_entry(host, &entry);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_TEXT;
    entry.id = "greeting";
    entry.section = "devopts";
    entry.title = "Greeting";
    entry.summary = "Used by devopts.greet";
    entry.default_value = "Hello";
    status = host->add_entry(host, &entry);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_PAGE;
    entry.id = "counters";
    entry.section = "devopts";
    entry.title = "Counters";
    entry.summary = "Counters kept by devopts.count";
    entry.context = state;
    entry.read = read_counters;
    status = host->add_entry(host, &entry);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    /* Commands before the action, in case a host resolves the action's
     * command when the entry is added. */
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        memset(&command, 0, sizeof command);
        command.struct_size = (uint32_t)sizeof command;
        command.flags = commands[i].flags;
        command.signature = commands[i].signature;
        command.summary = commands[i].summary;
        command.details = commands[i].details;
        command.typed = commands[i].typed;
        command.context = state;
        status = host->add_command(host, &command);
        if (status != PINCER_OK)
            return fail_from_host(host, reply, status);
    }

    memset(&entry, 0, sizeof entry);
    entry.struct_size = (uint32_t)sizeof entry;
    entry.kind = PINCER_ENTRY_ACTION;
    entry.id = "reset";
    entry.section = "devopts";
    entry.title = "Reset developer options";
    entry.summary = "Runs devopts.reset";
    entry.command = "reset";
    status = host->add_entry(host, &entry);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    state->service.header.struct_size = (uint32_t)sizeof state->service;
    state->service.header.version_minor = 0;
    state->service.header.context = state;
    state->service.counter = service_counter;
    status = host->publish_service(host, DEVOPTS_SERVICE_ID, &state->service);
    if (status != PINCER_OK)
        return fail_from_host(host, reply, status);

    return PINCER_OK;
}

/* The host calls nothing of ours after this returns, so drop the host
 * table pointer. The mutex stays: the library is never unloaded. */
static void devopts_shutdown(void *context)
{
    struct devopts_state *state = state_of(context);

    if (state->lock_ready)
        pthread_mutex_lock(&state->lock);
    state->host = NULL;
    if (state->lock_ready)
        pthread_mutex_unlock(&state->lock);
}

/* ---- the exported entry ------------------------------------------------- */

/* Positional (not designated) so the record is valid C and C++; it is
 * static const because the host keeps the pointer for the whole process. */
static const pincer_plugin_t g_plugin = {
    PINCER_PLUGIN_MAGIC,
    PINCER_ABI_MAJOR,
    PINCER_ABI_MINOR,
    (uint32_t)sizeof(pincer_plugin_t),
    "com.example.devoptions",                                         /* id */
    "devopts",                                                        /* short_name */
    "Developer Options",                                              /* name */
    "1.0.0",                                                          /* version */
    "Example developer options: settings, counters and test commands", /* summary */
    &g_state,                                                         /* context */
    devopts_init,
    devopts_shutdown,
    NULL,                                                             /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor);

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    /* The host compares abi_major itself and reports a mismatch with both
     * values, which is clearer than declining here; 1.0 slots are all this
     * plugin uses, so any 1.x host will do. */
    (void)host_abi_major;
    (void)host_abi_minor;
    return &g_plugin;
}
