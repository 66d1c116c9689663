/* Fixture: detects concurrent entry into the plugin. Every callback the
 * host makes (typed and values commands, a value row, a page, a persisted
 * entry's change notice, a plugin-valued entry's read and set) enters a
 * detector: an atomic count of callbacks inside, which must never exceed one
 * (README: "The host serialises every callback into one plugin"). Each stays
 * inside for a moment so that an overlap has time to show.
 *
 * selftest(threads, calls) runs the same detector from threads of its own,
 * without the host, to show that it does catch an overlap. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <pincer.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct detector {
    atomic_int inside;
    atomic_int most;
    atomic_llong calls;
    atomic_llong overlaps;
};

static struct detector host_calls;
static struct detector self_test;
static char plugin_value[64] = "a";

static void reset(struct detector *d)
{
    atomic_store(&d->inside, 0);
    atomic_store(&d->most, 0);
    atomic_store(&d->calls, 0);
    atomic_store(&d->overlaps, 0);
}

static void enter(struct detector *d)
{
    int now = atomic_fetch_add(&d->inside, 1) + 1;
    int most = atomic_load(&d->most);
    struct timespec pause = { 0, 50 * 1000 }; /* 50 µs */
    while (now > most && !atomic_compare_exchange_weak(&d->most, &most, now)) {
    }
    if (now > 1)
        atomic_fetch_add(&d->overlaps, 1);
    atomic_fetch_add(&d->calls, 1);
    nanosleep(&pause, NULL);
}

static void leave(struct detector *d)
{
    atomic_fetch_sub(&d->inside, 1);
}

static void describe(const struct detector *d, char *text, size_t capacity)
{
    snprintf(text, capacity, "calls=%lld overlaps=%lld most=%d", (long long)atomic_load(&d->calls),
             (long long)atomic_load(&d->overlaps), atomic_load(&d->most));
}

/* -- callbacks, each inside the detector -- */
static pincer_status_t work(void *context, pincer_call_t *call, int32_t n, int32_t *result)
{
    (void)context; (void)call;
    enter(&host_calls);
    *result = n + 1;
    leave(&host_calls);
    return PINCER_OK;
}

static pincer_status_t vwork(void *context, pincer_call_t *call, const pincer_value_t *args, uint32_t count, pincer_value_t *result)
{
    (void)context; (void)call; (void)count;
    enter(&host_calls);
    result->type = PINCER_TYPE_I64;
    result->as.i64 = args[0].as.i64 * 2;
    leave(&host_calls);
    return PINCER_OK;
}

static pincer_status_t read_row(void *context, pincer_call_t *call)
{
    (void)context;
    enter(&host_calls);
    call->return_string(call, "row");
    leave(&host_calls);
    return PINCER_OK;
}

static pincer_status_t read_page(void *context, pincer_call_t *call)
{
    (void)context;
    enter(&host_calls);
    call->add_row(call, "one", "1");
    leave(&host_calls);
    return PINCER_OK;
}

static void changed(void *context, const char *entry_id, const char *value)
{
    (void)context; (void)entry_id; (void)value;
    enter(&host_calls);
    leave(&host_calls);
}

static pincer_status_t read_value(void *context, pincer_call_t *call)
{
    (void)context;
    enter(&host_calls);
    call->return_string(call, plugin_value);
    leave(&host_calls);
    return PINCER_OK;
}

static pincer_status_t set_value(void *context, pincer_call_t *call, const char *value)
{
    (void)context; (void)call;
    enter(&host_calls);
    snprintf(plugin_value, sizeof plugin_value, "%s", value);
    leave(&host_calls);
    return PINCER_OK;
}

/* -- reports, not counted -- */
static pincer_status_t stats(void *context, pincer_call_t *call)
{
    char text[160];
    (void)context;
    describe(&host_calls, text, sizeof text);
    call->return_string(call, text);
    return PINCER_OK;
}

struct selftest_job { int32_t calls; };

static void *selftest_thread(void *arg)
{
    const struct selftest_job *job = arg;
    int32_t i;
    for (i = 0; i < job->calls; i++) {
        enter(&self_test);
        leave(&self_test);
    }
    return NULL;
}

static pincer_status_t selftest(void *context, pincer_call_t *call, int32_t threads, int32_t calls)
{
    pthread_t ids[8];
    struct selftest_job job = { calls };
    char text[160];
    int32_t i;
    (void)context;
    if (threads < 2 || threads > 8) {
        call->fail(call, "selftest: 2 to 8 threads");
        return PINCER_INVALID_ARGUMENT;
    }
    reset(&self_test);
    for (i = 0; i < threads; i++)
        pthread_create(&ids[i], NULL, selftest_thread, &job);
    for (i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    describe(&self_test, text, sizeof text);
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    static const char *const choices[] = { "a", "b" };
    const struct { const char *signature; pincer_typed_fn_t fn; } typed[] = {
        { "work(n: i32) -> i32", (pincer_typed_fn_t)work },
        { "stats() -> string", (pincer_typed_fn_t)stats },
        { "selftest(threads: i32, calls: i32) -> string", (pincer_typed_fn_t)selftest },
    };
    pincer_command_t values = { sizeof(pincer_command_t), 0, "vwork(n: i64) -> i64", NULL, NULL, NULL, vwork, NULL };
    pincer_entry_t entries[4];
    pincer_status_t status = PINCER_OK;
    size_t i;
    (void)context;
    /* The library stays loaded across hosts in one process: start clean. */
    reset(&host_calls);
    snprintf(plugin_value, sizeof plugin_value, "a");
    for (i = 0; status == PINCER_OK && i < sizeof typed / sizeof typed[0]; i++) {
        pincer_command_t c = { sizeof(pincer_command_t), 0, typed[i].signature, NULL, NULL, typed[i].fn, NULL, NULL };
        status = host->add_command(host, &c);
    }
    if (status == PINCER_OK)
        status = host->add_command(host, &values);
    memset(entries, 0, sizeof entries);
    for (i = 0; i < 4; i++)
        entries[i].struct_size = sizeof(pincer_entry_t);
    entries[0].kind = PINCER_ENTRY_VALUE; entries[0].id = "row"; entries[0].title = "Row"; entries[0].read = read_row;
    entries[1].kind = PINCER_ENTRY_PAGE; entries[1].id = "page"; entries[1].title = "Page"; entries[1].read = read_page;
    entries[2].kind = PINCER_ENTRY_TOGGLE; entries[2].id = "toggle"; entries[2].title = "Toggle"; entries[2].changed = changed;
    entries[3].kind = PINCER_ENTRY_CHOICE; entries[3].id = "kept"; entries[3].title = "Kept by the plugin";
    entries[3].flags = PINCER_ENTRY_PLUGIN_VALUE; entries[3].choices = choices; entries[3].choice_count = 2;
    entries[3].read = read_value; entries[3].set = set_value;
    for (i = 0; status == PINCER_OK && i < 4; i++)
        status = host->add_entry(host, &entries[i]);
    if (status != PINCER_OK) {
        reply->fail(reply, host->last_error(host));
        return status;
    }
    return PINCER_OK;
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "test.serial", "serial", "Serialisation detector", "1.0.0", NULL,
    NULL, init, NULL, NULL, /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
