/* Fixture: a command that blocks until someone writes to a pipe, as a
 * plugin stuck in a call would. stuck.wait(path) opens the FIFO at `path`
 * for reading and writing (so the open does not wait, and no writer
 * closing it ends the read), blocks until one byte arrives and returns it.
 * A test stops the host while the call waits (it sees the FIFO among the
 * process's open files), then releases it by writing a byte. */
#define _POSIX_C_SOURCE 200809L

#include <pincer.h>

#include <fcntl.h>
#include <unistd.h>

static pincer_status_t wait_on(void *context, pincer_call_t *call, const char *path, int64_t *result)
{
    unsigned char byte = 0;
    ssize_t n;
    int fd;

    (void)context; (void)call;
    fd = open(path, O_RDWR);
    if (fd < 0)
        return PINCER_FAILED;
    n = read(fd, &byte, 1);
    close(fd);
    *result = n == 1 ? byte : -1;
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_command_t command = {
        sizeof(pincer_command_t), 0, "wait(path: string) -> i64",
        "Block until a byte is written to the FIFO at path", NULL, (pincer_typed_fn_t)wait_on, NULL, NULL,
    };
    pincer_status_t status;

    (void)context;
    status = host->add_command(host, &command);
    if (status != PINCER_OK)
        reply->fail(reply, host->last_error(host));
    return status;
}

/* Its shutdown has nothing to do, but the host runs it serialised with
 * the plugin's other calls: behind the stuck one. */
static void plugin_shutdown(void *context)
{
    (void)context;
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "com.example.stuck", "stuck", "Stuck", "1.0.0", "A command that blocks on a pipe",
    NULL, init, plugin_shutdown, NULL, /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)minor;
    return major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
