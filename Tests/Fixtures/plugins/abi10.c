/* Fixture: a plugin built against the ABI 1.0 headers (Tests/Fixtures/sdk-1.0,
 * copied from git history), as a plugin compiled before 1.1 existed would
 * be. It uses every 1.0 part of the contract: a section, entries of every
 * 1.0 kind, typed and values commands of every type, private settings,
 * events, a service and failures, and reports the sizes it was built with so
 * the test can see that the records really are the older, smaller ones. */
#include <pincer.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

_Static_assert(PINCER_ABI_MAJOR == 1u && PINCER_ABI_MINOR == 0u, "build this fixture with -I Tests/Fixtures/sdk-1.0/include");

static const pincer_host_t *host;
static char heard[256];
static char changes[256];
static uint32_t call_size_seen;

static void append(char *buffer, size_t capacity, const char *text)
{
    size_t used = strlen(buffer);
    snprintf(buffer + used, capacity - used, "%s%s", used ? ";" : "", text);
}

/* -- commands -- */
static pincer_status_t add(void *context, pincer_call_t *call, int64_t a, double b, double *result)
{
    (void)context;
    call_size_seen = call->struct_size;
    *result = (double)a + b;
    return PINCER_OK;
}

static pincer_status_t mask(void *context, pincer_call_t *call, uint64_t bits, int32_t width, bool invert, uint64_t *result)
{
    uint64_t m = width >= 64 ? UINT64_MAX : ((UINT64_C(1) << width) - 1);
    (void)context;
    if (width < 0) {
        call->fail(call, "width must not be negative");
        return PINCER_INVALID_ARGUMENT;
    }
    *result = invert ? (~bits & m) : (bits & m);
    return PINCER_OK;
}

static pincer_status_t echo(void *context, pincer_call_t *call, const char *text)
{
    (void)context;
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t remember(void *context, pincer_call_t *call, const char *key, const char *value)
{
    (void)context;
    if (host->settings_set(host, key, value[0] ? value : NULL) != PINCER_OK) {
        call->fail(call, host->last_error(host));
        return PINCER_FAILED;
    }
    return PINCER_OK;
}

static pincer_status_t recall(void *context, pincer_call_t *call, const char *key)
{
    char value[256];
    int64_t n = host->settings_get(host, key, value, sizeof value);
    (void)context;
    call->return_string(call, n == PINCER_SETTING_MISSING ? "(missing)" : n < 0 ? "(error)" : value);
    return PINCER_OK;
}

static pincer_status_t ping(void *context, pincer_call_t *call, const char *payload)
{
    (void)context;
    if (host->emit(host, "old.ping", payload) != PINCER_OK) {
        call->fail(call, host->last_error(host));
        return PINCER_FAILED;
    }
    return PINCER_OK;
}

static pincer_status_t report(void *context, pincer_call_t *call)
{
    char text[800];
    (void)context;
    snprintf(text, sizeof text,
             "built=1.%u host=%u.%u host_table=%u/%u call=%u/%u entry=%u command=%u plugin=%u heard=%s changes=%s",
             (unsigned)PINCER_ABI_MINOR, (unsigned)host->abi_major, (unsigned)host->abi_minor, (unsigned)host->struct_size,
             (unsigned)sizeof(pincer_host_t), (unsigned)call->struct_size, (unsigned)sizeof(pincer_call_t),
             (unsigned)sizeof(pincer_entry_t), (unsigned)sizeof(pincer_command_t), (unsigned)sizeof(pincer_plugin_t),
             heard[0] ? heard : "-", changes[0] ? changes : "-");
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t refuse(void *context, pincer_call_t *call)
{
    (void)context;
    call->fail(call, "refused by a 1.0 plugin");
    return PINCER_UNSUPPORTED;
}

/* sum(a: i64, b: i64 = 10) -> i64 through the values call style. */
static pincer_status_t sum(void *context, pincer_call_t *call, const pincer_value_t *args, uint32_t count, pincer_value_t *result)
{
    (void)context;
    if (count != 2 || args[0].type != PINCER_TYPE_I64 || args[1].type != PINCER_TYPE_I64) {
        call->fail(call, "sum: expected two i64 values");
        return PINCER_INVALID_ARGUMENT;
    }
    result->type = PINCER_TYPE_I64;
    result->as.i64 = args[0].as.i64 + args[1].as.i64;
    return PINCER_OK;
}

static pincer_status_t service_answer(void *context)
{
    (void)context;
    return 42;
}

/* -- entries -- */
static pincer_status_t read_version(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "1.0 plugin");
    return PINCER_OK;
}

static pincer_status_t read_page(void *context, pincer_call_t *call)
{
    (void)context;
    call->add_row(call, "built against", "ABI 1.0");
    call->add_row(call, "no value", NULL);
    return PINCER_OK;
}

static void on_changed(void *context, const char *entry_id, const char *value)
{
    char line[128];
    (void)context;
    snprintf(line, sizeof line, "%s=%s", entry_id, value);
    append(changes, sizeof changes, line);
}

static void on_event(void *context, const char *topic, const char *payload)
{
    char line[128];
    (void)context;
    snprintf(line, sizeof line, "%s:%s", topic, payload ? payload : "null");
    append(heard, sizeof heard, line);
}

struct old_service {
    pincer_service_header_t header;
    pincer_status_t (*answer)(void *context);
};
static const struct old_service service = { { sizeof(struct old_service), 0, NULL }, service_answer };

static pincer_status_t init(void *context, const pincer_host_t *h, pincer_call_t *reply)
{
    static const char *const modes[] = { "fast", "safe", "off" };
    const struct { const char *signature; pincer_typed_fn_t fn; uint32_t flags; } commands[] = {
        { "add(a: i64, b: f64 = 1.5) -> f64", (pincer_typed_fn_t)add, 0 },
        { "mask(bits: u64, width: i32 = 8, invert: bool = false) -> u64", (pincer_typed_fn_t)mask, 0 },
        { "echo(text: string = \"old\") -> string", (pincer_typed_fn_t)echo, 0 },
        { "remember(key: string, value: string) -> void", (pincer_typed_fn_t)remember, PINCER_COMMAND_CHANGES_STATE },
        { "recall(key: string) -> string", (pincer_typed_fn_t)recall, 0 },
        { "ping(payload: string) -> void", (pincer_typed_fn_t)ping, 0 },
        { "report() -> string", (pincer_typed_fn_t)report, 0 },
        { "refuse() -> void", (pincer_typed_fn_t)refuse, 0 },
    };
    pincer_section_t section = { sizeof(pincer_section_t), 700, "old-section", "Old plugin" };
    pincer_entry_t entries[6];
    pincer_command_t values = { sizeof(pincer_command_t), 0, "sum(a: i64, b: i64 = 10) -> i64", "Adds (values style)", NULL, NULL, sum, NULL };
    pincer_status_t status;
    size_t i;
    (void)context;
    host = h;
    heard[0] = changes[0] = '\0';
    /* The host table is at least as large as the one these headers know. */
    if (!PINCER_HAS_SLOT(h, pincer_host_t, last_error)) {
        reply->fail(reply, "host table smaller than ABI 1.0");
        return PINCER_FAILED;
    }
    status = h->add_section(h, &section);
    for (i = 0; status == PINCER_OK && i < sizeof commands / sizeof commands[0]; i++) {
        pincer_command_t c = { sizeof(pincer_command_t), commands[i].flags, commands[i].signature, "1.0 command", NULL, commands[i].fn, NULL, NULL };
        status = h->add_command(h, &c);
    }
    if (status == PINCER_OK)
        status = h->add_command(h, &values);

    memset(entries, 0, sizeof entries);
    for (i = 0; i < 6; i++) {
        entries[i].struct_size = sizeof(pincer_entry_t);
        entries[i].section = "old-section";
    }
    entries[0].kind = PINCER_ENTRY_VALUE; entries[0].id = "version"; entries[0].title = "Version"; entries[0].read = read_version;
    entries[1].kind = PINCER_ENTRY_TOGGLE; entries[1].id = "enabled"; entries[1].title = "Enabled"; entries[1].default_value = "true";
    entries[1].changed = on_changed;
    entries[2].kind = PINCER_ENTRY_CHOICE; entries[2].id = "mode"; entries[2].title = "Mode"; entries[2].choices = modes;
    entries[2].choice_count = 3; entries[2].default_value = "safe"; entries[2].changed = on_changed;
    entries[3].kind = PINCER_ENTRY_TEXT; entries[3].id = "token"; entries[3].title = "Token"; entries[3].flags = PINCER_ENTRY_SECRET;
    entries[4].kind = PINCER_ENTRY_PAGE; entries[4].id = "facts"; entries[4].title = "Facts"; entries[4].read = read_page;
    entries[5].kind = PINCER_ENTRY_ACTION; entries[5].id = "say"; entries[5].title = "Say old"; entries[5].command = "echo";
    for (i = 0; status == PINCER_OK && i < 6; i++)
        status = h->add_entry(h, &entries[i]);

    if (status == PINCER_OK && h->subscribe(h, "old.ping", on_event, NULL) == 0)
        status = PINCER_FAILED;
    if (status == PINCER_OK)
        status = h->publish_service(h, "test.abi10/1", &service);
    if (status == PINCER_OK && h->get_service(h, "test.abi10/1") != &service)
        status = PINCER_FAILED;
    if (status != PINCER_OK) {
        reply->fail(reply, h->last_error(h));
        return status;
    }
    h->log(h, PINCER_LOG_INFO, "1.0 plugin ready");
    return PINCER_OK;
}

static const pincer_plugin_t plugin = {
    PINCER_PLUGIN_MAGIC, PINCER_ABI_MAJOR, PINCER_ABI_MINOR, sizeof(pincer_plugin_t),
    "test.abi10", "old", "ABI 1.0 plugin", "1.0.0", "Built against the ABI 1.0 headers",
    NULL, init, NULL,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor);
PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == PINCER_ABI_MAJOR ? &plugin : NULL;
}
