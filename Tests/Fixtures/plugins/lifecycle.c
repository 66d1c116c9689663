/* Fixture: a plugin that appends "init" and "shutdown" lines to the file
 * named by $PINCER_TEST_LIFECYCLE_LOG, so a test can count how often the
 * host started and shut it down. */
#include <pincer.h>

#include <stdio.h>
#include <stdlib.h>

static void note(const char *what)
{
    const char *path = getenv("PINCER_TEST_LIFECYCLE_LOG");
    FILE *f;
    if (path == NULL || (f = fopen(path, "a")) == NULL)
        return;
    fprintf(f, "%s\n", what);
    fclose(f);
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    (void)context; (void)host; (void)reply;
    note("init");
    return PINCER_OK;
}

static void plugin_shutdown(void *context)
{
    (void)context;
    note("shutdown");
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "com.example.lifecycle", "lifecycle", "Lifecycle", "1.0.0", "Counts init and shutdown calls",
    NULL, init, plugin_shutdown, NULL, /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)minor;
    return major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
