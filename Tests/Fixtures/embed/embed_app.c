/* Fixture: a plain C application that embeds Pincer through
 * pincer/embed.h and libpincer-embed.so.
 *
 *   embed_app <plugin-dir> <state-dir> <socket-dir>
 *
 * Starts Pincer with the built-in plugins of <plugin-dir>, registers the
 * bool flag "c-app-ready" and reads it back through "pincer.flags/1",
 * prints "flag c-app-ready=<value> reason=<reason>" and "socket <path>",
 * then waits until standard input closes (or SIGINT/SIGTERM) so that a test
 * can attach, and stops cleanly. Exit status 0 when all of that worked. */
#define _POSIX_C_SOURCE 200809L /* sigaction, read */

#include <pincer.h>
#include <pincer/embed.h>
#include <pincer/flags.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int main(int argc, char **argv)
{
    pincer_embed_options_t options;
    pincer_embed_t *pincer = NULL;
    pincer_embed_t *again = NULL;
    const pincer_flags_service_t *flags;
    struct sigaction action;
    bool ready = false;
    pincer_flag_reason_t reason;
    char buffer[256];
    ssize_t n;

    if (argc != 4) {
        fprintf(stderr, "usage: %s <plugin-dir> <state-dir> <socket-dir>\n", argv[0]);
        return 2;
    }
    memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    options.app_name = "embed-app";
    options.plugin_directory = argv[1];
    options.state_directory = argv[2];
    options.socket_directory = argv[3];
    if (pincer_embed_start(&options, &pincer) != PINCER_OK) {
        fprintf(stderr, "start failed: %s\n", pincer_embed_last_error());
        return 1;
    }
    /* Starting again with the same options hands back the same instance. */
    if (pincer_embed_start(&options, &again) != PINCER_OK || again != pincer) {
        fprintf(stderr, "second start did not return the running instance: %s\n", pincer_embed_last_error());
        return 1;
    }
    /* An unknown service is NULL with a message, not a crash. */
    if (pincer_embed_get_service(pincer, "com.example.missing/1") != NULL || pincer_embed_last_error()[0] == '\0') {
        fprintf(stderr, "an unknown service was not refused\n");
        return 1;
    }

    flags = (const pincer_flags_service_t *)pincer_embed_get_service(pincer, PINCER_FLAGS_SERVICE_ID);
    if (flags == NULL || !PINCER_HAS_SERVICE_SLOT(flags, pincer_flags_service_t, last_error)) {
        fprintf(stderr, "no flags service: %s\n", pincer_embed_last_error());
        return 1;
    }
    if (flags->register_bool(flags->header.context, "c-app-ready", true, "Set by the C embedding fixture") != PINCER_OK) {
        fprintf(stderr, "register failed: %s\n", flags->last_error(flags->header.context));
        return 1;
    }
    reason = flags->get_bool(flags->header.context, "c-app-ready", false, &ready);
    printf("flag c-app-ready=%s reason=%s\n", ready ? "true" : "false", pincer_flag_reason_name(reason));
    printf("socket %s\n", pincer_embed_socket_path(pincer) ? pincer_embed_socket_path(pincer) : "(none)");
    fflush(stdout);

    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    while (!stop_requested) {
        n = read(STDIN_FILENO, buffer, sizeof buffer);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }

    if (pincer_embed_stop(pincer) != PINCER_OK || pincer_embed_stop(pincer) != PINCER_OK) {
        fprintf(stderr, "stop failed: %s\n", pincer_embed_last_error());
        return 1;
    }
    if (pincer_embed_socket_path(pincer) != NULL || pincer_embed_get_service(pincer, PINCER_FLAGS_SERVICE_ID) != NULL) {
        fprintf(stderr, "a stopped handle still answers\n");
        return 1;
    }
    printf("stopped\n");
    return 0;
}
