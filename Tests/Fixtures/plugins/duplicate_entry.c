/* Fixture: init registers VALUE entry "x" twice and propagates PINCER_DUPLICATE (refused: init fails with the host's message). */
#include <pincer.h>

static pincer_status_t read_x(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "x");
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_entry_t entry = {
        .struct_size = sizeof(pincer_entry_t),
        .kind = PINCER_ENTRY_VALUE,
        .id = "x",
        .title = "X",
        .read = read_x,
    };
    int i;

    (void)context;
    for (i = 0; i < 2; i++) {
        pincer_status_t status = host->add_entry(host, &entry);
        if (status != PINCER_OK) {
            reply->fail(reply, host->last_error(host));
            return status;
        }
    }
    return PINCER_OK;
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.dupentry",
    .short_name = "dupentry",
    .name = "Duplicate entry fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
