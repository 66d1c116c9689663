/* Fixture: init registers "ping" twice and propagates PINCER_DUPLICATE (refused: init fails with the host's message). */
#include <pincer.h>

static pincer_status_t ping(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "pong");
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_command_t command = {
        .struct_size = sizeof(pincer_command_t),
        .signature = "ping() -> string",
        .typed = (pincer_typed_fn_t)ping,
    };
    int i;

    (void)context;
    for (i = 0; i < 2; i++) {
        pincer_status_t status = host->add_command(host, &command);
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
    .id = "test.dupcmd",
    .short_name = "dupcmd",
    .name = "Duplicate command fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
