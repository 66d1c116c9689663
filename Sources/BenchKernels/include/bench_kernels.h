/*
 * bench_kernels.h — C side of pincer-bench.
 *
 * One typed command (bench_add), the same computation as a plain C function,
 * a plugin entry that registers the command, and the loops that time the
 * direct-call baselines (the dispatch part uses all of these from the
 * plugin .so it builds from kernels.c, not the copies linked in). The loops
 * live in C so that the calls go through a function pointer read from a
 * volatile variable and the results land in a volatile sink: the compiler
 * can neither inline nor drop them.
 *
 * Also the flag lookup loop of the flags benchmark: app code in C calling
 * the "pincer.flags/1" service, as flags.h intends.
 */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

/* By path, not <pincer.h>: Swift imports this header as the BenchKernels
 * module, and a C target's header search paths do not reach its importers.
 * The file is the one module CPincerSDK covers, so the types are shared. */
#include "../../../SDK/include/pincer.h"
#include "../../../SDK/include/pincer/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The typed command "add(a: i64, b: f64) -> f64": *result = a + b. */
pincer_status_t bench_add(void *context, pincer_call_t *call, int64_t a, double b, double *result);

/* The same computation as a plain C function. */
double bench_add_direct(int64_t a, double b);

/* The shape of bench_add, and an accessor for a pointer to it. */
typedef pincer_status_t (*bench_add_fn_t)(void *context, pincer_call_t *call, int64_t a, double b, double *result);
bench_add_fn_t bench_add_pointer(void);

/* The plugin record: id "bench.kernels", short name "bench"; its init
 * registers bench_add as the typed command bench.add. The dispatch part
 * compiles kernels.c at run time into a plugin .so with
 * -Dbench_plugin_entry=pincer_plugin_entry, which the host dlopens; the
 * copy linked into the benchmark keeps this name so it is no plugin. */
const pincer_plugin_t *bench_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor);

/* Calls bench_add `iterations` times through a function pointer read from a
 * volatile variable each time, with context NULL and a pointer to a zeroed
 * pincer_call_t, exactly the arguments the host passes. Returns the sum of
 * the results (also stored in a volatile sink). */
double bench_loop_typed(uint64_t iterations, int64_t a, double b);

/* The same loop calling bench_add_direct(a, b) (informational). */
double bench_loop_plain(uint64_t iterations, int64_t a, double b);

/* Calls service->get_bool(context, key, false, &value) `lookups` times,
 * cycling through keys[0 ..< key_count] in order, and returns the sum over
 * all lookups of (reason << 1) | value (also stored in a volatile sink), so
 * the caller can check every value and reason. The function pointer is read
 * from the table on each call, as app code would. */
uint64_t bench_flags_lookup_loop(const pincer_flags_service_t *service, const char *const *keys,
                                 uint32_t key_count, uint64_t lookups);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_KERNELS_H */
