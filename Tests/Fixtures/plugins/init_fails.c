/* Fixture: init reports its own failure and returns PINCER_FAILED (refused: plugin failed with that message). */
#include <pincer.h>

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    (void)context; (void)host;
    reply->fail(reply, "database file /nonexistent/app.db is missing");
    return PINCER_FAILED;
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.initfails",
    .short_name = "initfails",
    .name = "Init fails fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
