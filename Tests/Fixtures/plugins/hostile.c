/* Fixture: a careless (or hostile) plugin for the shell's safety nets:
 * a command that never polls pincer_call_t.is_cancelled (the shell must
 * abandon it), one that dereferences NULL (the last words on stderr must
 * name plugin and command), and text with terminal escape sequences in a
 * result, in live output, in a failure and in a log line (printed escaped). */
#define _POSIX_C_SOURCE 200809L
#include <pincer.h>

#include <time.h>

/* An OSC title change (ESC ] 0 ; ... BEL), a screen clear (ESC [ 2 J), a
 * C1 CSI (U+009B) and a right-to-left override (U+202E), between a tab and
 * a newline that must survive. */
#define HOSTILE_TEXT "title\x1b]0;owned\x07 clear\x1b[2J c1\xc2\x9b" "31m rlo\xe2\x80\xae" "txt\tnext\nline2"

static const pincer_host_t *saved_host;

/* stuck(seconds: i32 = 30): sleeps, never asking whether it was cancelled. */
static pincer_status_t stuck(void *context, pincer_call_t *call, int32_t seconds)
{
    struct timespec ts;
    (void)context;
    call->output(call, "stuck: sleeping\n");
    ts.tv_sec = seconds;
    ts.tv_nsec = 0;
    while (nanosleep(&ts, &ts) != 0) {
    }
    call->return_string(call, "woke up");
    return PINCER_OK;
}

/* crash(): a NULL dereference in a plugin command. */
static pincer_status_t crash(void *context, pincer_call_t *call)
{
    int *volatile nothing = NULL;
    (void)context; (void)call;
    return (pincer_status_t)*nothing;
}

/* escape() -> string: the hostile text as live output, a log line and the result. */
static pincer_status_t escape(void *context, pincer_call_t *call)
{
    (void)context;
    call->output(call, "live:" HOSTILE_TEXT "\n");
    saved_host->log(saved_host, PINCER_LOG_WARNING, "log:" HOSTILE_TEXT);
    call->return_string(call, "result:" HOSTILE_TEXT);
    return PINCER_OK;
}

/* fail-escape(): fails with the hostile text. */
static pincer_status_t fail_escape(void *context, pincer_call_t *call)
{
    (void)context;
    call->fail(call, "failure:" HOSTILE_TEXT);
    return PINCER_FAILED;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    static const struct { const char *signature; pincer_typed_fn_t fn; } commands[] = {
        { "stuck(seconds: i32 = 30) -> string", (pincer_typed_fn_t)stuck },
        { "crash()", (pincer_typed_fn_t)crash },
        { "escape() -> string", (pincer_typed_fn_t)escape },
        { "fail-escape()", (pincer_typed_fn_t)fail_escape },
    };
    size_t i;
    (void)context;
    saved_host = host;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        pincer_command_t command = { 0 };
        pincer_status_t status;
        command.struct_size = sizeof(pincer_command_t);
        command.signature = commands[i].signature;
        command.typed = commands[i].fn;
        status = host->add_command(host, &command);
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
    .id = "test.hostile",
    .short_name = "hostile",
    .name = "Hostile fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
