/* Fixture: rest parameters (`name: string...`, ABI 1.2) in both call styles. */
#include <pincer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; `failed` is set once an allocation fails. */
struct text {
    char *bytes;
    size_t length, capacity;
    bool failed;
};

static void append(struct text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->length + n + 1 > t->capacity) {
        size_t capacity = (t->length + n + 1) * 2;
        char *bytes = realloc(t->bytes, capacity);
        if (bytes == NULL) {
            t->failed = true;
            return;
        }
        t->bytes = bytes;
        t->capacity = capacity;
    }
    memcpy(t->bytes + t->length, s, n);
    t->length += n;
    t->bytes[t->length] = '\0';
}

static void append_str(struct text *t, const char *s) { append(t, s, strlen(s)); }

static void append_json_string(struct text *t, const char *s, size_t n)
{
    size_t i;
    char escape[8];

    append_str(t, "\"");
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            escape[0] = '\\';
            escape[1] = (char)c;
            append(t, escape, 2);
        } else if (c < 0x20) {
            snprintf(escape, sizeof escape, "\\u%04x", c);
            append_str(t, escape);
        } else {
            append(t, (const char *)&s[i], 1);
        }
    }
    append_str(t, "\"");
}

static pincer_status_t finish(pincer_call_t *call, struct text *t)
{
    if (t->failed) {
        free(t->bytes);
        call->fail(call, "out of memory");
        return PINCER_FAILED;
    }
    call->return_string(call, t->bytes != NULL ? t->bytes : "");
    free(t->bytes);
    return PINCER_OK;
}

/* Typed style. join(sep: string, prefix: string = "", items: string...) -> string
 * gives "<count>[ NULL]:<prefix><item><sep><item>..."; " NULL" marks a NULL
 * items pointer, which the host may pass only when the count is 0. */
static pincer_status_t join(void *context, pincer_call_t *call, const char *sep, const char *prefix,
                            const char *const *items, uint32_t items_count)
{
    struct text t = { 0 };
    char head[32];
    uint32_t i;

    (void)context;
    if (items == NULL && items_count != 0) {
        call->fail(call, "join: NULL items with a non-zero count");
        return PINCER_INVALID_ARGUMENT;
    }
    snprintf(head, sizeof head, "%u%s:", (unsigned)items_count, items == NULL ? " NULL" : "");
    append_str(&t, head);
    append_str(&t, prefix);
    for (i = 0; i < items_count; i++) {
        if (i > 0)
            append_str(&t, sep);
        append_str(&t, items[i]);
    }
    return finish(call, &t);
}

/* Typed style with a result pointer after the rest arguments.
 * longer(min: i64, words: string...) -> i64: how many words have at least `min` bytes. */
static pincer_status_t longer(void *context, pincer_call_t *call, int64_t min, const char *const *words,
                              uint32_t words_count, int64_t *result)
{
    uint32_t i;

    (void)context; (void)call;
    *result = 0;
    for (i = 0; i < words_count; i++) {
        if ((int64_t)strlen(words[i]) >= min)
            *result += 1;
    }
    return PINCER_OK;
}

/* Values style, JSON result in the table shape. pairs(title: string = "pairs", items: string...)
 * splits each "key=value" item into a row [n, key, value] (value null without '='); both
 * key and value columns are named "part", since table columns are positional. */
static pincer_status_t pairs(void *context, pincer_call_t *call, const pincer_value_t *args, uint32_t count,
                             pincer_value_t *result)
{
    struct text t = { 0 };
    char number[64];
    uint32_t i;

    (void)context; (void)result;
    if (count < 1 || args[0].type != PINCER_TYPE_STRING) {
        call->fail(call, "pairs: expected the title first");
        return PINCER_INVALID_ARGUMENT;
    }
    append_str(&t, "{\"columns\":[\"n\",\"part\",\"part\"],\"rows\":[");
    for (i = 1; i < count; i++) {
        const char *item = args[i].as.string;
        const char *eq;
        if (args[i].type != PINCER_TYPE_STRING || item == NULL) {
            free(t.bytes);
            call->fail(call, "pairs: a rest item is not a string");
            return PINCER_INVALID_ARGUMENT;
        }
        eq = strchr(item, '=');
        snprintf(number, sizeof number, "%s[%u,", i > 1 ? "," : "", (unsigned)i);
        append_str(&t, number);
        append_json_string(&t, item, eq != NULL ? (size_t)(eq - item) : strlen(item));
        append_str(&t, ",");
        if (eq != NULL)
            append_json_string(&t, eq + 1, strlen(eq + 1));
        else
            append_str(&t, "null");
        append_str(&t, "]");
    }
    append_str(&t, "],\"title\":");
    append_json_string(&t, args[0].as.string, strlen(args[0].as.string));
    snprintf(number, sizeof number, ",\"count\":%u,\"note\":null}", (unsigned)(count - 1));
    append_str(&t, number);
    return finish(call, &t);
}

/* Values style, plain string result: "<count>|<arg>|<arg>..." of everything received. */
static pincer_status_t raw(void *context, pincer_call_t *call, const pincer_value_t *args, uint32_t count,
                           pincer_value_t *result)
{
    struct text t = { 0 };
    char number[64];
    uint32_t i;

    (void)context; (void)result;
    snprintf(number, sizeof number, "%u", (unsigned)count);
    append_str(&t, number);
    for (i = 0; i < count; i++) {
        append_str(&t, "|");
        if (args[i].type == PINCER_TYPE_STRING)
            append_str(&t, args[i].as.string);
        else if (args[i].type == PINCER_TYPE_I32) {
            snprintf(number, sizeof number, "%d", (int)args[i].as.i32);
            append_str(&t, number);
        } else
            append_str(&t, "?");
    }
    return finish(call, &t);
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_command_t commands[] = {
        { sizeof(pincer_command_t), 0, "join(sep: string, prefix: string = \"\", items: string...) -> string",
          "Join the items with sep", NULL, (pincer_typed_fn_t)join, NULL, NULL },
        { sizeof(pincer_command_t), 0, "longer(min: i64, words: string...) -> i64",
          "Count the words of at least min bytes", NULL, (pincer_typed_fn_t)longer, NULL, NULL },
        { sizeof(pincer_command_t), PINCER_COMMAND_JSON_RESULT, "pairs(title: string = \"pairs\", items: string...) -> string",
          "key=value items as a table", NULL, NULL, pairs, NULL },
        { sizeof(pincer_command_t), 0, "raw(n: i32 = 7, rest: string...) -> string",
          "Everything the values call received", NULL, NULL, raw, NULL },
    };
    size_t i;

    (void)context;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        pincer_status_t status = host->add_command(host, &commands[i]);
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
    .id = "test.rest",
    .short_name = "rest",
    .name = "Rest parameters fixture",
    .version = "1.2.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
