/* Fixture: abi_minor 7 and a record larger than the 1.0 one (accepted: the host reads the 1.0 slots and ignores the rest). */
#include <pincer.h>

/* What a future 1.7 record might look like: the 1.0 record, then new slots. */
struct future_plugin {
    pincer_plugin_t base;
    void *future_slot;
};

static pincer_status_t hello(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "hi from the future");
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_command_t command = {
        .struct_size = sizeof(pincer_command_t),
        .signature = "hello() -> string",
        .typed = (pincer_typed_fn_t)hello,
    };
    pincer_status_t status;

    (void)context;
    status = host->add_command(host, &command);
    if (status != PINCER_OK) {
        reply->fail(reply, host->last_error(host));
        return status;
    }
    return PINCER_OK;
}

static const struct future_plugin plugin = {
    .base = {
        .magic = PINCER_PLUGIN_MAGIC,
        .abi_major = PINCER_ABI_MAJOR,
        .abi_minor = 7,
        .struct_size = sizeof(struct future_plugin),
        .id = "test.newer",
        .short_name = "newer",
        .name = "Newer minor fixture",
        .version = "1.7.0",
        .init = init,
    },
    .future_slot = NULL,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin.base;
}
