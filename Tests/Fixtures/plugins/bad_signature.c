/* Fixture: registers a signature with an empty default and propagates PINCER_INVALID_ARGUMENT (refused: init fails with the parser's column message). */
#include <pincer.h>

static pincer_status_t add(void *context, pincer_call_t *call, int64_t a, double b, double *result)
{
    (void)context; (void)call;
    *result = (double)a + b;
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_command_t command = {
        .struct_size = sizeof(pincer_command_t),
        .signature = "add(a: i64, b: f64 = ) -> f64",
        .typed = (pincer_typed_fn_t)add,
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

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.badsig",
    .short_name = "badsig",
    .name = "Bad signature fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
