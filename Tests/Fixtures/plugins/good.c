/* Fixture: a valid plugin the host must accept; exercises every argument/result type in both call styles. */
#include <pincer.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static pincer_status_t ping(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "pong");
    return PINCER_OK;
}

static pincer_status_t rt_b(void *context, pincer_call_t *call, bool v, bool *result)
{
    (void)context; (void)call;
    *result = v;
    return PINCER_OK;
}

static pincer_status_t rt_i32(void *context, pincer_call_t *call, int32_t v, int32_t *result)
{
    (void)context; (void)call;
    *result = v;
    return PINCER_OK;
}

static pincer_status_t rt_i64(void *context, pincer_call_t *call, int64_t v, int64_t *result)
{
    (void)context; (void)call;
    *result = v;
    return PINCER_OK;
}

static pincer_status_t rt_u64(void *context, pincer_call_t *call, uint64_t v, uint64_t *result)
{
    (void)context; (void)call;
    *result = v;
    return PINCER_OK;
}

static pincer_status_t rt_f64(void *context, pincer_call_t *call, double v, double *result)
{
    (void)context; (void)call;
    *result = v;
    return PINCER_OK;
}

static pincer_status_t rt_s(void *context, pincer_call_t *call, const char *v)
{
    (void)context;
    call->return_string(call, v);
    return PINCER_OK;
}

/* "%d|%d|%lld|%llu|%.17g|%s" of all six, bool as 0/1; sized exactly, never truncated. */
static pincer_status_t mix(void *context, pincer_call_t *call, bool a, int32_t b, int64_t c, uint64_t d,
                           double e, const char *f)
{
#define MIX_FORMAT "%d|%" PRId32 "|%" PRId64 "|%" PRIu64 "|%.17g|%s"
    int length = snprintf(NULL, 0, MIX_FORMAT, a ? 1 : 0, b, c, d, e, f);
    char *text;

    (void)context;
    if (length < 0 || (text = malloc((size_t)length + 1)) == NULL) {
        call->fail(call, "mix: out of memory");
        return PINCER_FAILED;
    }
    snprintf(text, (size_t)length + 1, MIX_FORMAT, a ? 1 : 0, b, c, d, e, f);
#undef MIX_FORMAT
    call->return_string(call, text);
    free(text);
    return PINCER_OK;
}

/* Values call style: defaults are already filled in by the host. */
static pincer_status_t vsum(void *context, pincer_call_t *call, const pincer_value_t *args, uint32_t count,
                            pincer_value_t *result)
{
    (void)context;
    if (count != 2 || args[0].type != PINCER_TYPE_I64 || args[1].type != PINCER_TYPE_I64) {
        call->fail(call, "vsum: expected two i64 arguments");
        return PINCER_INVALID_ARGUMENT;
    }
    result->as.i64 = args[0].as.i64 + args[1].as.i64;
    return PINCER_OK;
}

static pincer_status_t read_answer(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "42");
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    static const struct { const char *signature; pincer_typed_fn_t fn; } typed[] = {
        { "ping() -> string", (pincer_typed_fn_t)ping },
        { "b(v: bool) -> bool", (pincer_typed_fn_t)rt_b },
        { "i32(v: i32) -> i32", (pincer_typed_fn_t)rt_i32 },
        { "i64(v: i64) -> i64", (pincer_typed_fn_t)rt_i64 },
        { "u64(v: u64) -> u64", (pincer_typed_fn_t)rt_u64 },
        { "f64(v: f64) -> f64", (pincer_typed_fn_t)rt_f64 },
        { "s(v: string) -> string", (pincer_typed_fn_t)rt_s },
        { "mix(a: bool, b: i32, c: i64, d: u64, e: f64, f: string) -> string", (pincer_typed_fn_t)mix },
    };
    pincer_status_t status;
    size_t i;

    (void)context;
    for (i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        pincer_command_t command = {
            .struct_size = sizeof(pincer_command_t),
            .signature = typed[i].signature,
            .typed = typed[i].fn,
        };
        status = host->add_command(host, &command);
        if (status != PINCER_OK)
            goto failed;
    }

    status = host->add_command(host, &(pincer_command_t){
        .struct_size = sizeof(pincer_command_t),
        .signature = "vsum(a: i64, b: i64 = 10) -> i64",
        .values = vsum,
    });
    if (status != PINCER_OK)
        goto failed;

    status = host->add_entry(host, &(pincer_entry_t){
        .struct_size = sizeof(pincer_entry_t),
        .kind = PINCER_ENTRY_VALUE,
        .id = "answer",
        .title = "Answer",
        .read = read_answer,
    });
    if (status != PINCER_OK)
        goto failed;
    return PINCER_OK;

failed:
    reply->fail(reply, host->last_error(host));
    return status;
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.good",
    .short_name = "good",
    .name = "Good fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
