/* Fixture: struct_size is 8, smaller than the 1.0 record (refused: struct_size). */
#include <pincer.h>

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    (void)context; (void)host; (void)reply;
    return PINCER_OK;
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = 8,
    .id = "test.small",
    .short_name = "small",
    .name = "Small record fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
