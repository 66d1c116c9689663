/* Fixture: a third-party plugin keeping counters in its settings with the
 * ABI 1.4 slots. `increment` adds one to a counter through settings_update
 * (read, add, write in one transaction of the store), so processes
 * incrementing at the same time never lose a count; `naive` does the same
 * with settings_get then settings_set, the race settings_update removes.
 * Both take `at`, a wall-clock time to wait for, so that processes started
 * one after another change the counter at the same moment.
 * `keys` lists keys through settings_list; `refuse`, `drop` and `reenter`
 * show CANCEL, DELETE and a settings call from inside the callback. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <pincer.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const pincer_host_t *the_host;

/* Waits until the wall clock reaches `at` (milliseconds since 1970; 0: no
 * wait), so processes started one after another change the counter at the
 * same moment. */
static void wait_until(int64_t at)
{
    struct timespec now, pause = { 0, 200 * 1000 }; /* 200 µs */
    for (;;) {
        clock_gettime(CLOCK_REALTIME, &now);
        if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= at)
            return;
        nanosleep(&pause, NULL);
    }
}

struct increment {
    int64_t value;   /* the new count */
    char text[32];   /* its text: what *new_value points at */
    int bad;         /* the stored value was not a number */
};

static pincer_setting_action_t add_one(void *context, const char *current, const char **new_value)
{
    struct increment *job = context;
    char *end = NULL;
    long long old = 0;
    if (current != NULL) {
        old = strtoll(current, &end, 10);
        if (*current == '\0' || *end != '\0') {
            job->bad = 1;
            return PINCER_SETTING_CANCEL;
        }
    }
    job->value = old + 1;
    snprintf(job->text, sizeof job->text, "%lld", (long long)job->value);
    *new_value = job->text;
    return PINCER_SETTING_REPLACE;
}

static int has_1_4_slots(pincer_call_t *call)
{
    if (PINCER_HAS_SLOT(the_host, pincer_host_t, settings_update) && PINCER_HAS_SLOT(the_host, pincer_host_t, settings_list))
        return 1;
    call->fail(call, "this host has no settings_update/settings_list (ABI 1.4)");
    return 0;
}

static pincer_status_t increment(void *context, pincer_call_t *call, const char *key, int64_t at, int64_t *result)
{
    struct increment job;
    pincer_status_t status;
    (void)context;
    if (!has_1_4_slots(call))
        return PINCER_UNSUPPORTED;
    memset(&job, 0, sizeof job);
    wait_until(at);
    status = the_host->settings_update(the_host, key, add_one, &job);
    if (status != PINCER_OK) {
        call->fail(call, job.bad ? "the counter is not a number" : the_host->last_error(the_host));
        return status;
    }
    *result = job.value;
    return PINCER_OK;
}

/* The lossy way: read, then write, with the store unlocked in between. */
static pincer_status_t naive(void *context, pincer_call_t *call, const char *key, int64_t at, int64_t *result)
{
    char text[32] = "0";
    int64_t length;
    pincer_status_t status;
    (void)context;
    wait_until(at);
    length = the_host->settings_get(the_host, key, text, sizeof text);
    if (length == PINCER_SETTING_ERROR) {
        call->fail(call, the_host->last_error(the_host));
        return PINCER_FAILED;
    }
    *result = (length == PINCER_SETTING_MISSING ? 0 : strtoll(text, NULL, 10)) + 1;
    snprintf(text, sizeof text, "%" PRId64, *result);
    status = the_host->settings_set(the_host, key, text);
    if (status != PINCER_OK)
        call->fail(call, the_host->last_error(the_host));
    return status;
}

struct listing {
    char text[4096];
    size_t used;
};

static void collect(void *context, const char *key, const char *value)
{
    struct listing *l = context;
    int n = snprintf(l->text + l->used, sizeof l->text - l->used, "%s%s=%s", l->used ? "," : "", key, value);
    if (n > 0 && (size_t)n < sizeof l->text - l->used)
        l->used += (size_t)n;
}

static pincer_status_t keys(void *context, pincer_call_t *call, const char *prefix)
{
    struct listing l;
    pincer_status_t status;
    (void)context;
    if (!has_1_4_slots(call))
        return PINCER_UNSUPPORTED;
    l.text[0] = '\0';
    l.used = 0;
    status = the_host->settings_list(the_host, prefix, collect, &l);
    if (status != PINCER_OK) {
        call->fail(call, the_host->last_error(the_host));
        return status;
    }
    call->return_string(call, l.text);
    return PINCER_OK;
}

static pincer_status_t put(void *context, pincer_call_t *call, const char *key, const char *value)
{
    pincer_status_t status = the_host->settings_set(the_host, key, value);
    (void)context;
    if (status != PINCER_OK)
        call->fail(call, the_host->last_error(the_host));
    return status;
}

static pincer_setting_action_t cancel(void *context, const char *current, const char **new_value)
{
    (void)context; (void)current;
    *new_value = "never stored";
    return PINCER_SETTING_CANCEL;
}

static pincer_setting_action_t delete_it(void *context, const char *current, const char **new_value)
{
    (void)context; (void)current; (void)new_value;
    return PINCER_SETTING_DELETE;
}

/* Returns "<status> <last_error>" of an update whose callback cancels or deletes. */
static pincer_status_t run_update(pincer_call_t *call, const char *key, pincer_setting_update_fn_t fn)
{
    char text[1024];
    pincer_status_t status;
    if (!has_1_4_slots(call))
        return PINCER_UNSUPPORTED;
    status = the_host->settings_update(the_host, key, fn, NULL);
    snprintf(text, sizeof text, "%u %s", (unsigned)status, status == PINCER_OK ? "" : the_host->last_error(the_host));
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t refuse(void *context, pincer_call_t *call, const char *key)
{
    (void)context;
    return run_update(call, key, cancel);
}

static pincer_status_t drop(void *context, pincer_call_t *call, const char *key)
{
    (void)context;
    return run_update(call, key, delete_it);
}

struct reentry {
    int64_t got;
    pincer_status_t set;
    char error[512];
};

/* Breaks the rule on purpose: calls the settings from inside the callback. */
static pincer_setting_action_t call_back_in(void *context, const char *current, const char **new_value)
{
    struct reentry *r = context;
    char buffer[16];
    (void)current; (void)new_value;
    r->got = the_host->settings_get(the_host, "other", buffer, sizeof buffer);
    r->set = the_host->settings_set(the_host, "other", "x");
    snprintf(r->error, sizeof r->error, "%s", the_host->last_error(the_host));
    return PINCER_SETTING_KEEP;
}

static pincer_status_t reenter(void *context, pincer_call_t *call)
{
    struct reentry r;
    char text[700];
    pincer_status_t status;
    (void)context;
    if (!has_1_4_slots(call))
        return PINCER_UNSUPPORTED;
    memset(&r, 0, sizeof r);
    status = the_host->settings_update(the_host, "count", call_back_in, &r);
    snprintf(text, sizeof text, "update=%u get=%lld set=%u error=%s", (unsigned)status, (long long)r.got, (unsigned)r.set, r.error);
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const struct { const char *signature; pincer_typed_fn_t fn; } typed[] = {
        { "increment(key: string = \"count\", at: i64 = 0) -> i64", (pincer_typed_fn_t)increment },
        { "naive(key: string = \"count\", at: i64 = 0) -> i64", (pincer_typed_fn_t)naive },
        { "keys(prefix: string = \"\") -> string", (pincer_typed_fn_t)keys },
        { "put(key: string, value: string) -> void", (pincer_typed_fn_t)put },
        { "refuse(key: string) -> string", (pincer_typed_fn_t)refuse },
        { "drop(key: string) -> string", (pincer_typed_fn_t)drop },
        { "reenter() -> string", (pincer_typed_fn_t)reenter },
    };
    size_t i;
    (void)context;
    the_host = host;
    for (i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        pincer_command_t c = { sizeof(pincer_command_t), PINCER_COMMAND_CHANGES_STATE, typed[i].signature, NULL, NULL, typed[i].fn, NULL, NULL };
        pincer_status_t status = host->add_command(host, &c);
        if (status != PINCER_OK) {
            reply->fail(reply, host->last_error(host));
            return status;
        }
    }
    return PINCER_OK;
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "test.counter", "counter", "Counter", "1.0.0", "Counters kept with settings_update",
    NULL, init, NULL, NULL, /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)minor;
    return major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
