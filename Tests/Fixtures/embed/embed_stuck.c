/* Fixture: a C application whose plugin is stuck in a command when it
 * stops.
 *
 *   embed_stuck <plugin.so> <state-dir> <socket-dir> <timeout-ms>
 *
 * Starts Pincer with only <plugin.so> (the stuck fixture), prints
 * "socket <path>", waits for a line on standard input (the test has made a
 * command stuck over the control socket by then), calls
 * pincer_embed_stop_within(<timeout-ms>), prints
 * "stop <status> <pincer_embed_last_error()>" and returns 0: the process
 * exits although the plugin's call never finished. */
#define _POSIX_C_SOURCE 200809L

#include <pincer.h>
#include <pincer/embed.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    pincer_embed_options_t options = { sizeof options, PINCER_EMBED_NO_BUILTIN, "embed-stuck",
                                       NULL, NULL, NULL, NULL, NULL };
    pincer_embed_t *pincer = NULL;
    char line[64];
    pincer_status_t status;

    if (argc != 5) {
        fprintf(stderr, "usage: %s <plugin.so> <state-dir> <socket-dir> <timeout-ms>\n", argv[0]);
        return 2;
    }
    options.plugin_paths = argv[1];
    options.state_directory = argv[2];
    options.socket_directory = argv[3];
    if (pincer_embed_start(&options, &pincer) != PINCER_OK) {
        fprintf(stderr, "start: %s\n", pincer_embed_last_error());
        return 1;
    }
    printf("socket %s\n", pincer_embed_socket_path(pincer));
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL)
        return 1;
    status = pincer_embed_stop_within(pincer, (uint32_t)strtoul(argv[4], NULL, 10));
    printf("stop %u %s\n", (unsigned)status, pincer_embed_last_error());
    fflush(stdout);
    return 0;
}
