/* Fixture: registers a 2 MB signature that does not parse and fails init
 * with the host's message, which echoes it: the shell's warning about the
 * refused plugin must stay short. */
#include <pincer.h>

#include <stdlib.h>
#include <string.h>

#define HUGE_SIGNATURE_BYTES (2u * 1024u * 1024u)

static pincer_status_t noop(void *context, pincer_call_t *call)
{
    (void)context; (void)call;
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    pincer_command_t command = { 0 };
    pincer_status_t status;
    char *signature = malloc(HUGE_SIGNATURE_BYTES + 1);

    (void)context;
    if (signature == NULL) {
        reply->fail(reply, "huge_signature: out of memory");
        return PINCER_FAILED;
    }
    /* "f(" then 2 MB of 'x' and no closing parenthesis. */
    memset(signature, 'x', HUGE_SIGNATURE_BYTES);
    signature[0] = 'f';
    signature[1] = '(';
    signature[HUGE_SIGNATURE_BYTES] = '\0';
    command.struct_size = sizeof(pincer_command_t);
    command.signature = signature;
    command.typed = (pincer_typed_fn_t)noop;
    status = host->add_command(host, &command);
    free(signature);
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
    .id = "test.hugesig",
    .short_name = "hugesig",
    .name = "Huge signature fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
