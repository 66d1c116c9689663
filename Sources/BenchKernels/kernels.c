/* kernels.c — C side of pincer-bench; see bench_kernels.h. */
#include "bench_kernels.h"

#include <string.h>

__attribute__((noinline))
pincer_status_t bench_add(void *context, pincer_call_t *call, int64_t a, double b, double *result) {
    (void)context;
    (void)call;
    *result = (double)a + b;
    return PINCER_OK;
}

__attribute__((noinline))
double bench_add_direct(int64_t a, double b) {
    return (double)a + b;
}

bench_add_fn_t bench_add_pointer(void) {
    return bench_add;
}

/* Read through volatile on every iteration, so each call is a real indirect
 * call the optimiser cannot resolve, inline or hoist. */
static bench_add_fn_t volatile typed_target = bench_add;
static double (*volatile plain_target)(int64_t, double) = bench_add_direct;
static volatile double sink;

double bench_loop_typed(uint64_t iterations, int64_t a, double b) {
    pincer_call_t call;
    memset(&call, 0, sizeof call);
    double total = 0;
    for (uint64_t i = 0; i < iterations; i++) {
        double result = 0;
        bench_add_fn_t fn = typed_target;
        if (fn(NULL, &call, a, b, &result) == PINCER_OK) total += result;
        sink = result;
    }
    sink = total;
    return total;
}

double bench_loop_plain(uint64_t iterations, int64_t a, double b) {
    double total = 0;
    for (uint64_t i = 0; i < iterations; i++) {
        double (*fn)(int64_t, double) = plain_target;
        double result = fn(a, b);
        total += result;
        sink = result;
    }
    sink = total;
    return total;
}

static volatile uint64_t flags_sink;

uint64_t bench_flags_lookup_loop(const pincer_flags_service_t *service, const char *const *keys,
                                 uint32_t key_count, uint64_t lookups) {
    void *context = service->header.context;
    uint64_t total = 0;
    uint32_t k = 0;
    for (uint64_t i = 0; i < lookups; i++) {
        bool value = false;
        pincer_flag_reason_t reason = service->get_bool(context, keys[k], false, &value);
        total += ((uint64_t)reason << 1) | (value ? 1u : 0u);
        if (++k == key_count) k = 0;
    }
    flags_sink = total;
    return total;
}

/* ---- the in-process plugin ---- */

static pincer_status_t bench_init(void *context, const pincer_host_t *host, pincer_call_t *reply) {
    (void)context;
    pincer_command_t command;
    memset(&command, 0, sizeof command);
    command.struct_size = sizeof command;
    command.signature = "add(a: i64, b: f64) -> f64";
    command.summary = "Adds a and b (dispatch benchmark kernel)";
    command.typed = (pincer_typed_fn_t)bench_add;
    pincer_status_t status = host->add_command(host, &command);
    if (status != PINCER_OK) {
        reply->fail(reply, host->last_error(host));
        return status;
    }
    return PINCER_OK;
}

static const pincer_plugin_t bench_record = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "bench.kernels",
    .short_name = "bench",
    .name = "Bench kernels",
    .version = "1.0.0",
    .summary = "Kernels for pincer-bench",
    .context = NULL,
    .init = bench_init,
    .shutdown = NULL,
};

const pincer_plugin_t *bench_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor) {
    (void)host_abi_minor;
    return host_abi_major == PINCER_ABI_MAJOR ? &bench_record : NULL;
}
