/* Fixture: a careless plugin whose thread outlives its shutdown. `arm`
 * starts a thread that waits for shutdown, lets it return, and then uses
 * the settings slots; it writes what each returned (status and last_error)
 * to the file given to `arm`, for the test to read. The host must refuse
 * every one of those calls, and nothing may reach the store. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <pincer.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const pincer_host_t *the_host;
static atomic_int shut_down;
static char result_path[1024];

static pincer_setting_action_t overwrite(void *context, const char *current, const char **new_value)
{
    (void)context; (void)current;
    *new_value = "updated after shutdown";
    return PINCER_SETTING_REPLACE;
}

static void each(void *context, const char *key, const char *value)
{
    (void)context; (void)key; (void)value;
}

static void *after_shutdown(void *arg)
{
    struct timespec tick = { 0, 10 * 1000 * 1000 }; /* 10 ms */
    struct timespec settle = { 0, 100 * 1000 * 1000 }; /* 100 ms: shutdown has returned */
    FILE *out;
    char buffer[64];
    pincer_status_t set, update, list;
    int64_t got;
    char set_error[512], update_error[512], get_error[512], list_error[512];
    (void)arg;
    while (!atomic_load(&shut_down))
        nanosleep(&tick, NULL);
    nanosleep(&settle, NULL);
    set = the_host->settings_set(the_host, "late", "written after shutdown");
    snprintf(set_error, sizeof set_error, "%s", the_host->last_error(the_host));
    update = PINCER_HAS_SLOT(the_host, pincer_host_t, settings_update)
        ? the_host->settings_update(the_host, "kept", overwrite, NULL) : PINCER_UNSUPPORTED;
    snprintf(update_error, sizeof update_error, "%s", the_host->last_error(the_host));
    got = the_host->settings_get(the_host, "kept", buffer, sizeof buffer);
    snprintf(get_error, sizeof get_error, "%s", the_host->last_error(the_host));
    list = PINCER_HAS_SLOT(the_host, pincer_host_t, settings_list)
        ? the_host->settings_list(the_host, NULL, each, NULL) : PINCER_UNSUPPORTED;
    snprintf(list_error, sizeof list_error, "%s", the_host->last_error(the_host));
    if ((out = fopen(result_path, "w")) != NULL) {
        fprintf(out, "set=%u %s\nupdate=%u %s\nget=%lld %s\nlist=%u %s\n", (unsigned)set, set_error,
                (unsigned)update, update_error, (long long)got, get_error, (unsigned)list, list_error);
        fclose(out);
    }
    return NULL;
}

static pincer_status_t arm(void *context, pincer_call_t *call, const char *path)
{
    pthread_t thread;
    pincer_status_t status;
    (void)context;
    snprintf(result_path, sizeof result_path, "%s", path);
    /* A value the late update would overwrite. */
    status = the_host->settings_set(the_host, "kept", "before shutdown");
    if (status != PINCER_OK) {
        call->fail(call, the_host->last_error(the_host));
        return status;
    }
    if (pthread_create(&thread, NULL, after_shutdown, NULL) != 0) {
        call->fail(call, "pthread_create failed");
        return PINCER_FAILED;
    }
    pthread_detach(thread);
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    pincer_command_t c = { sizeof(pincer_command_t), PINCER_COMMAND_CHANGES_STATE, "arm(path: string) -> void",
                           NULL, NULL, (pincer_typed_fn_t)arm, NULL, NULL };
    pincer_status_t status;
    (void)context;
    the_host = host;
    atomic_store(&shut_down, 0);
    status = host->add_command(host, &c);
    if (status != PINCER_OK)
        reply->fail(reply, host->last_error(host));
    return status;
}

/* Returns at once: the thread does its writing after this has returned. */
static void plugin_shutdown(void *context)
{
    (void)context;
    atomic_store(&shut_down, 1);
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "test.late", "late", "Late writer", "1.0.0", "A thread that writes settings after shutdown",
    NULL, init, plugin_shutdown, NULL, /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)minor;
    return major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
