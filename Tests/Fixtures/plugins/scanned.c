/* Fixture for the plugin registry (RegistryTests): one source, built with
 * -DSHORT=name for a distinct plugin and -DBEHAVIOUR=... for what its init
 * does: 0 registers, 1 crashes, 2 hangs, 3 exits with status 7, 4 prints to
 * stdout first (which must not confuse the scanner), 5 looks up the
 * service of 6 in init and uses it again in its shutdown, 6 publishes it,
 * 7 adds an entry "extra" in sync_entries (ABI 1.5), not in init, 8
 * registers its command and no entry (a plugin the registry lists from its
 * record alone).
 * Each init and shutdown appends "init|shutdown <short> <pid>" to the file
 * named by $PINCER_TEST_INIT_LOG, so a test counts which process ran it and
 * how often. VERSION changes what it registers (a rebuilt plugin). */
#include <pincer.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef SHORT
#define SHORT scanned
#endif
#ifndef BEHAVIOUR
#define BEHAVIOUR 0
#endif
#ifndef VERSION
#define VERSION 1
#endif
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

static pincer_status_t hello(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "hello from " TEXT(SHORT) " version " TEXT(VERSION));
    return PINCER_OK;
}

#if VERSION > 1
static pincer_status_t added(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "added in version " TEXT(VERSION));
    return PINCER_OK;
}
#endif

static pincer_status_t read_value(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "value of " TEXT(SHORT));
    return PINCER_OK;
}

static void note(const char *what)
{
    const char *path = getenv("PINCER_TEST_INIT_LOG");
    FILE *f;
    if (path == NULL || (f = fopen(path, "a")) == NULL)
        return;
    fprintf(f, "%s %s %ld\n", what, TEXT(SHORT), (long)getpid());
    fclose(f);
}

/* The service of BEHAVIOUR 6, used by BEHAVIOUR 5. */
typedef struct {
    uint32_t struct_size;
    void (*touch)(void);
} scanned_service_t;
#define SCANNED_SERVICE_ID "test.scanned.provider/1"

#if BEHAVIOUR == 6
static int provider_shut;
static void touch(void)
{
    note(provider_shut ? "touched-after-shutdown" : "touched");
}
static const scanned_service_t service = { sizeof(scanned_service_t), touch };
#endif
#if BEHAVIOUR == 5
static const scanned_service_t *provider;
#endif

#if BEHAVIOUR == 7
static const pincer_host_t *g_host;
static pincer_status_t read_extra(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "synced");
    return PINCER_OK;
}
static pincer_status_t sync_entries(void *context, pincer_call_t *reply)
{
    pincer_status_t status;
    (void)context;
    note("sync");
    status = g_host->add_entry(g_host, &(pincer_entry_t){
        .struct_size = sizeof(pincer_entry_t),
        .kind = PINCER_ENTRY_VALUE,
        .id = "extra",
        .title = "Added by sync_entries",
        .read = read_extra,
    });
    if (status != PINCER_OK)
        reply->fail(reply, g_host->last_error(g_host));
    return status;
}
#endif

static void plugin_shutdown(void *context)
{
    (void)context;
#if BEHAVIOUR == 5
    if (provider != NULL)
        provider->touch();
#elif BEHAVIOUR == 6
    provider_shut = 1;
#endif
    note("shutdown");
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    pincer_status_t status;
    (void)context;
    note("init");
#if BEHAVIOUR == 7
    g_host = host;
#endif
#if BEHAVIOUR == 5
    provider = host->get_service(host, SCANNED_SERVICE_ID);
    if (provider == NULL) {
        reply->fail(reply, "needs " SCANNED_SERVICE_ID);
        return PINCER_UNSUPPORTED;
    }
#elif BEHAVIOUR == 6
    if ((status = host->publish_service(host, SCANNED_SERVICE_ID, &service)) != PINCER_OK) {
        reply->fail(reply, host->last_error(host));
        return status;
    }
#endif
#if BEHAVIOUR == 1
    /* A real fault: raise(SIGSEGV) would return once a handler ran. */
    *(volatile int *)(uintptr_t)16 = 1;
#elif BEHAVIOUR == 2
    for (;;)
        sleep(1);
#elif BEHAVIOUR == 3
    exit(7);
#elif BEHAVIOUR == 4
    printf("{\"not\": \"a record\"}\nnoise without a newline");
    fflush(stdout);
#endif
    status = host->add_command(host, &(pincer_command_t){
        .struct_size = sizeof(pincer_command_t),
        .signature = "hello() -> string",
        .summary = "Says which plugin and version answered",
        .typed = (pincer_typed_fn_t)hello,
    });
#if VERSION > 1
    if (status == PINCER_OK)
        status = host->add_command(host, &(pincer_command_t){
            .struct_size = sizeof(pincer_command_t),
            .signature = "added() -> string",
            .typed = (pincer_typed_fn_t)added,
        });
#endif
#if BEHAVIOUR != 8
    if (status == PINCER_OK)
        status = host->add_entry(host, &(pincer_entry_t){
            .struct_size = sizeof(pincer_entry_t),
            .kind = PINCER_ENTRY_VALUE,
            .id = "value",
            .title = "Value of " TEXT(SHORT),
            .read = read_value,
        });
#else
    (void)read_value;
#endif
    if (status != PINCER_OK)
        reply->fail(reply, host->last_error(host));
    return status;
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.scanned." TEXT(SHORT),
    .short_name = TEXT(SHORT),
    .name = "Scanned fixture " TEXT(SHORT),
    .version = "1.0." TEXT(VERSION),
    .init = init,
    .shutdown = plugin_shutdown,
#if BEHAVIOUR == 7
    .sync_entries = sync_entries,
#endif
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
