/* Fixture: "app code" written in C against SDK/ alone. It uses the flags and
 * servers services from another plugin, listens for the environment change
 * both through the service callback and the host event, and hammers the
 * flag read path from several threads while another thread writes. */
#include <pincer.h>
#include <pincer/flags.h>
#include <pincer/servers.h>
#include <pincer/l10n.h>
#include <pincer/location.h>
#include <pincer/network.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pincer_host_t *host;
static const pincer_flags_service_t *flags;
static const pincer_servers_service_t *servers;
static char service_changes[512];
static char event_changes[512];
static pthread_mutex_t changes_lock = PTHREAD_MUTEX_INITIALIZER;

static void append(char *buffer, const char *text)
{
    size_t used = strlen(buffer);
    if (used + strlen(text) + 2 < 512) {
        if (used > 0)
            strcat(buffer, ";");
        strcat(buffer, text);
    }
}

static void on_environment(void *context, const char *from, const char *to)
{
    char line[160];
    (void)context;
    snprintf(line, sizeof line, "%s->%s", from ? from : "(none)", to);
    pthread_mutex_lock(&changes_lock);
    append(service_changes, line);
    pthread_mutex_unlock(&changes_lock);
}

static void on_event(void *context, const char *topic, const char *payload)
{
    (void)context; (void)topic;
    pthread_mutex_lock(&changes_lock);
    append(event_changes, payload ? payload : "(null)");
    pthread_mutex_unlock(&changes_lock);
}

/* "<value>|<reason>" with the caller's defaults false, -1, -1.5 and "dflt". */
static pincer_status_t resolve(void *context, pincer_call_t *call, const char *key, const char *type)
{
    void *c = flags->header.context;
    char text[300], value[200];
    pincer_flag_reason_t reason;
    (void)context;
    if (strcmp(type, "bool") == 0) {
        bool v = true;
        reason = flags->get_bool(c, key, false, &v);
        snprintf(value, sizeof value, "%s", v ? "true" : "false");
    } else if (strcmp(type, "int") == 0) {
        int64_t v = 0;
        reason = flags->get_int(c, key, -1, &v);
        snprintf(value, sizeof value, "%" PRId64, v);
    } else if (strcmp(type, "double") == 0) {
        double v = 0;
        reason = flags->get_double(c, key, -1.5, &v);
        snprintf(value, sizeof value, "%g", v);
    } else {
        uint64_t length = 0;
        char small[4];
        reason = flags->get_string(c, key, "dflt", value, sizeof value, &length);
        /* The copy-out convention: a short buffer still reports the full length. */
        flags->get_string(c, key, "dflt", small, sizeof small, &length);
        if (length != strlen(value)) {
            call->fail(call, "get_string reported a different length for a short buffer");
            return PINCER_FAILED;
        }
    }
    snprintf(text, sizeof text, "%s|%s", value, pincer_flag_reason_name(reason));
    call->return_string(call, text);
    return PINCER_OK;
}

/* Registers a flag of `type` from text; returns the status, and the service's
 * message on failure. */
static pincer_status_t register_flag(void *context, pincer_call_t *call, const char *key, const char *type,
                                     const char *remote)
{
    void *c = flags->header.context;
    pincer_status_t status;
    (void)context;
    if (strcmp(type, "bool") == 0)
        status = flags->register_bool(c, key, strcmp(remote, "true") == 0, "registered from C");
    else if (strcmp(type, "int") == 0)
        status = flags->register_int(c, key, (int64_t)strtoll(remote, NULL, 10), NULL);
    else if (strcmp(type, "double") == 0)
        status = flags->register_double(c, key, strtod(remote, NULL), NULL);
    else
        status = flags->register_string(c, key, remote, NULL);
    call->return_string(call, status == PINCER_OK ? "ok" : flags->last_error(c));
    return PINCER_OK;
}

static pincer_status_t override(void *context, pincer_call_t *call, const char *key, const char *value)
{
    void *c = flags->header.context;
    pincer_status_t status = flags->set_override(c, key, value);
    (void)context;
    call->return_string(call, status == PINCER_OK ? "ok" : flags->last_error(c));
    return PINCER_OK;
}

static pincer_status_t master(void *context, pincer_call_t *call, bool on, bool *result)
{
    (void)context; (void)call;
    flags->set_overrides_enabled(flags->header.context, on);
    *result = flags->overrides_enabled(flags->header.context);
    return PINCER_OK;
}

/* --- the stress test: one writer sets the int flag "stress" (remote 0) to
 * the overrides 1, 2, ..., `writes`, checking the status of every write and
 * reading each one back on its own thread, while four readers check every
 * resolution: 0 with reason remote or 1..writes with reason override (never
 * anything half made), values that never go back (the writes only grow),
 * and, on the first read after the writer is done, the final value.
 * Returns "key=value" words; the test checks them all. --- */
struct stress_reader {
    int64_t writes;
    uint64_t reads, incoherent, regressions, distinct;
    int64_t last;
};
static atomic_int stress_done;

static void *reader(void *arg)
{
    struct stress_reader *s = arg;
    void *c = flags->header.context;
    for (;;) {
        /* Read `done` before the flag: a read begun after the writer was
         * done must see its last write. */
        int done = atomic_load(&stress_done);
        int64_t v = -1;
        bool b = false;
        pincer_flag_reason_t r = flags->get_int(c, "stress", -1, &v);
        s->reads++;
        if (!((r == PINCER_FLAG_REASON_REMOTE && v == 0) ||
              (r == PINCER_FLAG_REASON_OVERRIDE && v >= 1 && v <= s->writes)))
            s->incoherent++;
        else if (v < s->last)
            s->regressions++;
        else if (v > s->last) {
            s->distinct++;
            s->last = v;
        }
        r = flags->get_bool(c, "no-such-flag", true, &b);
        if (r != PINCER_FLAG_REASON_DEFAULT || !b)
            s->incoherent++;
        if (done)
            return NULL;
    }
}

static pincer_status_t stress(void *context, pincer_call_t *call, int32_t writes)
{
    void *c = flags->header.context;
    pthread_t threads[4];
    struct stress_reader readers[4];
    char first_error[200] = "", text[400];
    int32_t i, failed = 0, unread = 0, saw_final = 0;
    int64_t final_value = -1;
    pincer_flag_reason_t final_reason;
    uint64_t incoherent = 0, regressions = 0;
    (void)context;
    if (writes < 1) {
        call->fail(call, "stress: writes must be at least 1");
        return PINCER_INVALID_ARGUMENT;
    }
    if (flags->register_int(c, "stress", 0, "stress test") != PINCER_OK) {
        call->fail(call, flags->last_error(c));
        return PINCER_FAILED;
    }
    atomic_store(&stress_done, 0);
    memset(readers, 0, sizeof readers);
    for (i = 0; i < 4; i++) {
        readers[i].writes = writes;
        pthread_create(&threads[i], NULL, reader, &readers[i]);
    }
    for (i = 1; i <= writes; i++) {
        char value[16];
        int64_t back = -1;
        snprintf(value, sizeof value, "%d", (int)i);
        if (flags->set_override(c, "stress", value) != PINCER_OK) {
            if (failed++ == 0)
                snprintf(first_error, sizeof first_error, "write %d: %s", (int)i, flags->last_error(c));
            continue;
        }
        /* The writing thread reads its own write at once. */
        if (flags->get_int(c, "stress", -1, &back) != PINCER_FLAG_REASON_OVERRIDE || back != i)
            unread++;
    }
    atomic_store(&stress_done, 1);
    for (i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        incoherent += readers[i].incoherent;
        regressions += readers[i].regressions;
        if (readers[i].last == writes)
            saw_final++;
    }
    final_reason = flags->get_int(c, "stress", -1, &final_value);
    snprintf(text, sizeof text,
             "writes=%d failed=%d unread=%d final=%" PRId64 "|%s incoherent=%" PRIu64 " regressions=%" PRIu64
             " saw-final=%d distinct=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 " reads=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
             " first-error=%s",
             (int)writes, (int)failed, (int)unread, final_value, pincer_flag_reason_name(final_reason), incoherent, regressions,
             (int)saw_final, readers[0].distinct, readers[1].distinct, readers[2].distinct, readers[3].distinct,
             readers[0].reads, readers[1].reads, readers[2].reads, readers[3].reads, first_error[0] ? first_error : "-");
    call->return_string(call, text);
    return PINCER_OK;
}

/* --- servers --- */
static pincer_status_t use(void *context, pincer_call_t *call, const char *id)
{
    void *c = servers->header.context;
    pincer_status_t status = servers->use(c, id);
    (void)context;
    call->return_string(call, status == PINCER_OK ? "ok" : servers->last_error(c));
    return PINCER_OK;
}

static pincer_status_t current(void *context, pincer_call_t *call)
{
    char id[80], api[200];
    (void)context;
    if (servers->current(servers->header.context, id, sizeof id) < 0)
        strcpy(id, "(none)");
    if (servers->get_variable(servers->header.context, "API_URL", api, sizeof api) < 0)
        strcpy(api, "(unset)");
    {
        char text[300];
        snprintf(text, sizeof text, "%s %s", id, api);
        call->return_string(call, text);
    }
    return PINCER_OK;
}

static void collect_variable(void *context, const char *name, const char *value)
{
    char *text = context;
    size_t used = strlen(text);
    snprintf(text + used, 512 - used, "%s%s=%s", used ? "," : "", name, value);
}

/* "<count>:<NAME=value,...>" through each_variable. */
static pincer_status_t all_vars(void *context, pincer_call_t *call)
{
    char text[512] = "", line[600];
    uint32_t count = servers->each_variable(servers->header.context, collect_variable, text);
    (void)context;
    snprintf(line, sizeof line, "%u:%s", (unsigned)count, text);
    call->return_string(call, line);
    return PINCER_OK;
}

/* Records one exchange by hand through pincer.network/1, as code that does
 * not use URLSession would: returns "<id>" or the service's error. */
static pincer_status_t record(void *context, pincer_call_t *call, const char *url, int32_t status, bool fail)
{
    const pincer_network_service_t *net = host->get_service(host, PINCER_NETWORK_SERVICE_ID);
    static const pincer_http_header_t request_headers[] = {
        { "Authorization", "Bearer abc.def.ghi" }, { "Content-Type", "application/json" }, { "X-Trace", "t-1" } };
    static const pincer_http_header_t response_headers[] = { { "Content-Type", "application/json" }, { "Set-Cookie", "sid=s3cr3t; Path=/; HttpOnly" } };
    static const char request_body[] = "{\"user\": \"ann\", \"password\": \"hunter2\"}";
    static const char response_body[] = "{\"token\": \"xyz\", \"ok\": true}";
    pincer_network_request_t request = { sizeof(pincer_network_request_t), 0, "POST", url, request_headers, 3, 0,
                                         (const uint8_t *)request_body, sizeof request_body - 1, 0 };
    pincer_network_response_t response = { sizeof(pincer_network_response_t), status, "OK", "HTTP/1.1", response_headers, 2, 0,
                                            (const uint8_t *)response_body, sizeof response_body - 1, NULL, "127.0.0.1",
                                            { -1, -1, -1, -1, 1, 20, 3 } };
    char text[300];
    uint64_t id;
    (void)context;
    if (net == NULL) {
        call->fail(call, "pincer.network/1 is not published");
        return PINCER_NOT_FOUND;
    }
    id = net->begin(net->header.context, &request);
    if (id == 0) {
        call->return_string(call, net->last_error(net->header.context)[0] ? net->last_error(net->header.context) : "ignored");
        return PINCER_OK;
    }
    if ((fail ? net->fail(net->header.context, id, "connection refused", NULL)
              : net->complete(net->header.context, id, &response)) != PINCER_OK) {
        call->fail(call, net->last_error(net->header.context));
        return PINCER_FAILED;
    }
    snprintf(text, sizeof text, "%llu", (unsigned long long)id);
    call->return_string(call, text);
    return PINCER_OK;
}

/* A malloc'ed copy of `text` (C11 has no strdup). */
static char *copy_text(const char *text)
{
    size_t length = strlen(text) + 1;
    char *copy = malloc(length);
    if (copy != NULL)
        memcpy(copy, text, length);
    return copy;
}

/* "Name: value" lines (separated by '\n') into at most `max` headers; the
 * text is cut in place. Returns the count. */
static uint32_t parse_headers(char *text, pincer_http_header_t *out, uint32_t max)
{
    uint32_t count = 0;
    char *line = text;
    while (line != NULL && *line != '\0' && count < max) {
        char *next = strchr(line, '\n');
        char *colon;
        if (next != NULL)
            *next++ = '\0';
        colon = strstr(line, ": ");
        if (colon != NULL) {
            *colon = '\0';
            out[count].name = line;
            out[count].value = colon + 2;
            count++;
        }
        line = next;
    }
    return count;
}

/* Records one exchange with everything given by the caller, through
 * pincer.network/1: headers as "Name: value" lines; a non-empty `error`
 * ends it with fail (the client's own message), otherwise complete with
 * the response. Returns "<id>" or the service's error. */
static pincer_status_t record_exchange(void *context, pincer_call_t *call, const char *method, const char *url,
                                       const char *request_headers, const char *request_body, int32_t status,
                                       const char *status_text, const char *response_headers, const char *response_body,
                                       const char *redirect, const char *server_ip, const char *error)
{
    const pincer_network_service_t *net = host->get_service(host, PINCER_NETWORK_SERVICE_ID);
    pincer_http_header_t sent[32], received[32];
    char *sent_text = copy_text(request_headers), *received_text = copy_text(response_headers);
    char text[64];
    uint64_t id;
    pincer_status_t result = PINCER_OK;
    (void)context;
    if (net == NULL || sent_text == NULL || received_text == NULL) {
        free(sent_text);
        free(received_text);
        call->fail(call, net == NULL ? "pincer.network/1 is not published" : "out of memory");
        return PINCER_FAILED;
    }
    {
        pincer_network_request_t request = { sizeof(pincer_network_request_t), 0, method, url, sent,
                                             parse_headers(sent_text, sent, 32), 0, (const uint8_t *)request_body,
                                             strlen(request_body), 0 };
        pincer_network_response_t response = { sizeof(pincer_network_response_t), status, status_text, "HTTP/1.1", received,
                                                parse_headers(received_text, received, 32), 0, (const uint8_t *)response_body,
                                                strlen(response_body), redirect[0] ? redirect : NULL,
                                                server_ip[0] ? server_ip : NULL, { -1, -1, -1, -1, 1, 20, 3 } };
        id = net->begin(net->header.context, &request);
        if (id == 0) {
            call->fail(call, net->last_error(net->header.context));
            result = PINCER_FAILED;
        } else if ((error[0] ? net->fail(net->header.context, id, error, NULL)
                             : net->complete(net->header.context, id, &response)) != PINCER_OK) {
            call->fail(call, net->last_error(net->header.context));
            result = PINCER_FAILED;
        } else {
            snprintf(text, sizeof text, "%llu", (unsigned long long)id);
            call->return_string(call, text);
        }
    }
    free(sent_text);
    free(received_text);
    return result;
}

/* pincer.network/1's add_redact_name (ABI 1.4), checked by struct_size
 * first: "ok", or the service's error. */
static pincer_status_t redact_name(void *context, pincer_call_t *call, const char *name)
{
    const pincer_network_service_t *net = host->get_service(host, PINCER_NETWORK_SERVICE_ID);
    (void)context;
    if (!PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, add_redact_name)) {
        call->fail(call, "pincer.network/1 has no add_redact_name (older than ABI 1.4)");
        return PINCER_UNSUPPORTED;
    }
    if (net->add_redact_name(net->header.context, name[0] ? name : NULL) != PINCER_OK) {
        call->fail(call, net->last_error(net->header.context));
        return PINCER_INVALID_ARGUMENT;
    }
    call->return_string(call, "ok");
    return PINCER_OK;
}

/* What C code that sends its own requests does with the interception slots
 * (ABI 1.6): a transient rule from `rule_json` (empty: none), then asks what
 * to do with `method url`, waits when a breakpoint holds it (ABI 1.7),
 * records the exchange as the app would see it, annotates it and finishes.
 * Returns
 * "<rule id>|<action>|<status or error code>|<body or url>|<entry id>|<interventions>",
 * with the transient rule removed again when `keep` is false. With
 * `legacy` it passes the decision record of ABI 1.6 (no `accepts`), as a
 * caller built then does. */
static pincer_status_t intercept_as(pincer_call_t *call, const char *rule_json, const char *method, const char *url, bool keep, bool legacy)
{
    const pincer_network_service_t *net = host->get_service(host, PINCER_NETWORK_SERVICE_ID);
    pincer_network_request_t request = { sizeof(pincer_network_request_t), 0, method, url, NULL, 0, 0, NULL, 0, 0 };
    pincer_network_decision_t decision;
    uint64_t rule = 0, id;
    char text[2048];
    const char *what = "send";
    if (!PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, remove_transient_rule)) {
        call->fail(call, "pincer.network/1 has no interception (older than ABI 1.6)");
        return PINCER_UNSUPPORTED;
    }
    if (rule_json[0] && (rule = net->add_transient_rule(net->header.context, rule_json)) == 0) {
        call->fail(call, net->last_error(net->header.context));
        return PINCER_INVALID_ARGUMENT;
    }
    memset(&decision, 0, sizeof decision);
    decision.struct_size = legacy ? (uint32_t)offsetof(pincer_network_decision_t, accepts) : (uint32_t)sizeof decision;
    if (!legacy && PINCER_HAS_SERVICE_SLOT(net, pincer_network_service_t, await_release))
        decision.accepts = PINCER_NETWORK_ACCEPTS_HOLD;
    if (net->intercept_request(net->header.context, &request, &decision) != PINCER_OK) {
        call->fail(call, net->last_error(net->header.context));
        return PINCER_FAILED;
    }
    if (decision.action == PINCER_NETWORK_HOLD && net->await_release(net->header.context, decision.handle, &decision) != PINCER_OK) {
        call->fail(call, net->last_error(net->header.context));
        net->finish_interception(net->header.context, decision.handle);
        return PINCER_FAILED;
    }
    id = net->begin(net->header.context, &request);
    if (id != 0) {
        if (decision.action == PINCER_NETWORK_RESPOND) {
            net->annotate(net->header.context, id, PINCER_NETWORK_STUBBED, decision.interventions_json);
            net->complete(net->header.context, id, &decision.response);
        } else if (decision.action == PINCER_NETWORK_FAIL) {
            net->annotate(net->header.context, id, 0, decision.interventions_json);
            net->fail(net->header.context, id, decision.error_text, NULL);
        }
    }
    if (decision.action == PINCER_NETWORK_RESPOND)
        what = "respond";
    else if (decision.action == PINCER_NETWORK_FAIL)
        what = "fail";
    snprintf(text, sizeof text, "t%llu|%s|%d|%.*s|%llu|%s", (unsigned long long)rule, what,
             decision.action == PINCER_NETWORK_FAIL ? (int)decision.error_code : (int)decision.response.status,
             decision.action == PINCER_NETWORK_RESPOND ? (int)decision.response.body_length : (int)strlen(decision.request.url),
             decision.action == PINCER_NETWORK_RESPOND ? (const char *)decision.response.body : decision.request.url,
             (unsigned long long)id, decision.interventions_json);
    net->finish_interception(net->header.context, decision.handle);
    if (rule != 0 && !keep)
        net->remove_transient_rule(net->header.context, rule);
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t intercept(void *context, pincer_call_t *call, const char *rule_json, const char *method, const char *url, bool keep)
{
    (void)context;
    return intercept_as(call, rule_json, method, url, keep, false);
}

static pincer_status_t intercept_legacy(void *context, pincer_call_t *call, const char *rule_json, const char *method, const char *url)
{
    (void)context;
    return intercept_as(call, rule_json, method, url, false, true);
}

/* What an app's string lookup does: pass the resolved text through
 * pincer.l10n/1, growing the buffer when the result does not fit. Returns
 * "<text>|<modes bits>|<layout rtl>|<last_error when unchanged>". */
static pincer_status_t localize(void *context, pincer_call_t *call, const char *key, const char *value, const char *table)
{
    const pincer_l10n_service_t *l10n = host->get_service(host, PINCER_L10N_SERVICE_ID);
    char small[8], *text = small, line[1024];
    uint64_t length = 0;
    pincer_status_t status;
    (void)context;
    if (l10n == NULL || !PINCER_HAS_SERVICE_SLOT(l10n, pincer_l10n_service_t, last_error)) {
        call->fail(call, "pincer.l10n/1 is not published");
        return PINCER_NOT_FOUND;
    }
    status = l10n->transform(l10n->header.context, key[0] ? key : NULL, value, table[0] ? table : NULL, small, sizeof small, &length);
    if (status == PINCER_OK && length >= sizeof small) {
        text = malloc(length + 1);
        if (text == NULL)
            return PINCER_FAILED;
        status = l10n->transform(l10n->header.context, key[0] ? key : NULL, value, table[0] ? table : NULL, text, length + 1, &length);
    }
    if (status != PINCER_OK) {
        call->fail(call, l10n->last_error(l10n->header.context));
    } else {
        snprintf(line, sizeof line, "%s|%u|%d|%s", text, (unsigned)l10n->modes(l10n->header.context),
                 (int)l10n->layout_right_to_left(l10n->header.context),
                 strcmp(text, value) == 0 ? l10n->last_error(l10n->header.context) : "");
        call->return_string(call, line);
    }
    if (text != small)
        free(text);
    return status;
}

static pincer_status_t l10n_mode(void *context, pincer_call_t *call, int32_t bit, bool on)
{
    const pincer_l10n_service_t *l10n = host->get_service(host, PINCER_L10N_SERVICE_ID);
    pincer_status_t status;
    (void)context;
    if (l10n == NULL)
        return PINCER_NOT_FOUND;
    status = l10n->set_mode(l10n->header.context, (pincer_l10n_mode_t)bit, on);
    if (status != PINCER_OK)
        call->fail(call, l10n->last_error(l10n->header.context));
    return status;
}

/* --- location: what an app's location provider does --- */
static pthread_mutex_t heard_lock = PTHREAD_MUTEX_INITIALIZER;
static int heard_count;
static pincer_location_fix_t heard_last;

static void on_fix(void *context, const pincer_location_fix_t *fix)
{
    (void)context;
    pthread_mutex_lock(&heard_lock);
    heard_count++;
    heard_last = *fix;
    pthread_mutex_unlock(&heard_lock);
}

static const pincer_location_service_t *location(pincer_call_t *call)
{
    const pincer_location_service_t *loc = host->get_service(host, PINCER_LOCATION_SERVICE_ID);
    if (loc == NULL || !PINCER_HAS_SERVICE_SLOT(loc, pincer_location_service_t, last_error))
        call->fail(call, "pincer.location/1 is not published");
    return loc;
}

/* "<lat>,<lon>|<flags>" for the current fix, or "off". */
static pincer_status_t where(void *context, pincer_call_t *call)
{
    const pincer_location_service_t *loc = location(call);
    pincer_location_fix_t fix = { sizeof(pincer_location_fix_t), 0, 0, 0, 0, 0, 0, 0, 0 };
    char text[128];
    (void)context;
    if (loc == NULL)
        return PINCER_NOT_FOUND;
    if (!loc->current(loc->header.context, &fix)) {
        call->return_string(call, "off");
        return PINCER_OK;
    }
    snprintf(text, sizeof text, "%.4f,%.4f|%u", fix.latitude, fix.longitude, (unsigned)fix.flags);
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t locate(void *context, pincer_call_t *call, double latitude, double longitude)
{
    const pincer_location_service_t *loc = location(call);
    pincer_status_t status;
    (void)context;
    if (loc == NULL)
        return PINCER_NOT_FOUND;
    status = loc->set(loc->header.context, latitude, longitude);
    call->return_string(call, status == PINCER_OK ? "ok" : loc->last_error(loc->header.context));
    return PINCER_OK;
}

/* Subscribes once, then plays `route` at `rate`; returns the status. */
static pincer_status_t drive(void *context, pincer_call_t *call, const char *route, double rate)
{
    static uint64_t token;
    const pincer_location_service_t *loc = location(call);
    pincer_status_t status;
    (void)context;
    if (loc == NULL)
        return PINCER_NOT_FOUND;
    if (token == 0)
        token = loc->subscribe(loc->header.context, on_fix, NULL);
    pthread_mutex_lock(&heard_lock);
    heard_count = 0;
    pthread_mutex_unlock(&heard_lock);
    status = loc->play(loc->header.context, route, rate, false);
    call->return_string(call, status == PINCER_OK ? "playing" : loc->last_error(loc->header.context));
    return PINCER_OK;
}

/* "<fixes heard>|<last lat>,<last lon>|<speed>|<flags>". */
static pincer_status_t heard(void *context, pincer_call_t *call)
{
    char text[160];
    (void)context;
    pthread_mutex_lock(&heard_lock);
    snprintf(text, sizeof text, "%d|%.5f,%.5f|%.2f|%u", heard_count, heard_last.latitude, heard_last.longitude, heard_last.speed,
             (unsigned)heard_last.flags);
    pthread_mutex_unlock(&heard_lock);
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t changes(void *context, pincer_call_t *call, const char *which)
{
    (void)context;
    pthread_mutex_lock(&changes_lock);
    call->return_string(call, strcmp(which, "service") == 0 ? service_changes : event_changes);
    pthread_mutex_unlock(&changes_lock);
    return PINCER_OK;
}

static pincer_status_t read_old(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "1.0 record");
    return PINCER_OK;
}

static pincer_status_t set_nothing(void *context, pincer_call_t *call, const char *value)
{
    (void)context; (void)value;
    call->fail(call, "refused");
    return PINCER_FAILED;
}

static pincer_status_t bad_json(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, "{\"rows\": [1, 2,]}");
    return PINCER_OK;
}

static pincer_status_t scalar(void *context, pincer_call_t *call, int32_t *result)
{
    (void)context; (void)call;
    *result = 1;
    return PINCER_OK;
}

/* The ABI 1.1 additions refuse what they must; returns "status:message" lines. */
static pincer_status_t abi_checks(void *context, pincer_call_t *call)
{
    char text[2048] = "";
    pincer_status_t status;
    (void)context;
#define RECORD(expr) do { \
        status = (expr); \
        snprintf(text + strlen(text), sizeof text - strlen(text), "%u:%s\n", (unsigned)status, \
                 status == PINCER_OK ? "" : host->last_error(host)); \
    } while (0)
    /* A plugin-valued entry in a 1.0-sized record has no `set` slot. */
    RECORD(host->add_entry(host, &(pincer_entry_t){ .struct_size = offsetof(pincer_entry_t, set),
                                                    .kind = PINCER_ENTRY_TOGGLE, .id = "pv-old", .title = "PV",
                                                    .flags = PINCER_ENTRY_PLUGIN_VALUE, .read = read_old }));
    /* Plugin values only for toggle, choice and text. */
    RECORD(host->add_entry(host, &(pincer_entry_t){ .struct_size = sizeof(pincer_entry_t), .kind = PINCER_ENTRY_VALUE,
                                                    .id = "pv-value", .title = "PV", .flags = PINCER_ENTRY_PLUGIN_VALUE,
                                                    .read = read_old, .set = set_nothing }));
    RECORD(host->update_entry(host, &(pincer_entry_t){ .struct_size = sizeof(pincer_entry_t), .kind = PINCER_ENTRY_VALUE,
                                                       .id = "missing", .title = "M", .read = read_old }));
    RECORD(host->update_entry(host, &(pincer_entry_t){ .struct_size = sizeof(pincer_entry_t), .kind = PINCER_ENTRY_TOGGLE,
                                                       .id = "old", .title = "Old" }));
    RECORD(host->update_entry(host, &(pincer_entry_t){ .struct_size = sizeof(pincer_entry_t), .kind = PINCER_ENTRY_VALUE,
                                                       .id = "old", .title = "Renamed", .read = read_old }));
    RECORD(host->add_command(host, &(pincer_command_t){ .struct_size = sizeof(pincer_command_t), .flags = PINCER_COMMAND_JSON_RESULT,
                                                        .signature = "scalar() -> i32", .typed = (pincer_typed_fn_t)scalar }));
#undef RECORD
    call->return_string(call, text);
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *h, pincer_call_t *reply)
{
    static const struct { const char *signature; pincer_typed_fn_t fn; } commands[] = {
        { "resolve(key: string, type: string = \"bool\") -> string", (pincer_typed_fn_t)resolve },
        { "register(key: string, type: string, remote: string) -> string", (pincer_typed_fn_t)register_flag },
        { "override(key: string, value: string) -> string", (pincer_typed_fn_t)override },
        { "master(on: bool) -> bool", (pincer_typed_fn_t)master },
        { "stress(writes: i32) -> string", (pincer_typed_fn_t)stress },
        { "use(id: string) -> string", (pincer_typed_fn_t)use },
        { "current() -> string", (pincer_typed_fn_t)current },
        { "changes(which: string) -> string", (pincer_typed_fn_t)changes },
        { "abi-checks() -> string", (pincer_typed_fn_t)abi_checks },
        { "all-vars() -> string", (pincer_typed_fn_t)all_vars },
        { "record(url: string, status: i32 = 200, fail: bool = false) -> string", (pincer_typed_fn_t)record },
        { "record-exchange(method: string, url: string, request_headers: string, request_body: string, status: i32, "
          "status_text: string, response_headers: string, response_body: string, redirect: string, server_ip: string, "
          "error: string) -> string", (pincer_typed_fn_t)record_exchange },
        { "redact-name(name: string) -> string", (pincer_typed_fn_t)redact_name },
        { "intercept(rule: string, method: string, url: string, keep: bool = false) -> string", (pincer_typed_fn_t)intercept },
        { "intercept-legacy(rule: string, method: string, url: string) -> string", (pincer_typed_fn_t)intercept_legacy },
        { "localize(key: string, value: string, table: string = \"\") -> string", (pincer_typed_fn_t)localize },
        { "l10n-mode(bit: i32, on: bool) -> void", (pincer_typed_fn_t)l10n_mode },
        { "where() -> string", (pincer_typed_fn_t)where },
        { "locate(latitude: f64, longitude: f64) -> string", (pincer_typed_fn_t)locate },
        { "drive(route: string, rate: f64) -> string", (pincer_typed_fn_t)drive },
        { "heard() -> string", (pincer_typed_fn_t)heard },
    };
    static const char *const production[] = { "API_URL", "https://api.example.com", "REGION", "eu" };
    static const char *const staging[] = { "API_URL", "https://staging.example.com" };
    pincer_status_t status;
    size_t i;
    (void)context;
    /* The library stays loaded across hosts in one process: start clean. */
    service_changes[0] = event_changes[0] = '\0';
    host = h;
    flags = host->get_service(host, PINCER_FLAGS_SERVICE_ID);
    servers = host->get_service(host, PINCER_SERVERS_SERVICE_ID);
    if (flags == NULL || servers == NULL) {
        reply->fail(reply, "the flags and servers services must be loaded first");
        return PINCER_NOT_FOUND;
    }
    if (!PINCER_HAS_SERVICE_SLOT(flags, pincer_flags_service_t, last_error)) {
        reply->fail(reply, "flags service table too small");
        return PINCER_UNSUPPORTED;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        pincer_command_t command = { .struct_size = sizeof(pincer_command_t), .signature = commands[i].signature,
                                     .typed = commands[i].fn };
        if ((status = host->add_command(host, &command)) != PINCER_OK)
            goto failed;
    }
    status = host->add_command(host, &(pincer_command_t){ .struct_size = sizeof(pincer_command_t),
                                                          .flags = PINCER_COMMAND_JSON_RESULT, .signature = "bad-json() -> string",
                                                          .typed = (pincer_typed_fn_t)bad_json });
    if (status != PINCER_OK)
        goto failed;
    /* An entry registered with a 1.0-sized record (no `set` slot). */
    status = host->add_entry(host, &(pincer_entry_t){ .struct_size = offsetof(pincer_entry_t, set),
                                                       .kind = PINCER_ENTRY_VALUE, .id = "old", .title = "Old",
                                                       .read = read_old });
    if (status != PINCER_OK)
        goto failed;

    /* What an app does at start-up. */
    if ((status = flags->register_bool(flags->header.context, "dark-mode", true, "Dark theme")) != PINCER_OK ||
        (status = flags->register_int(flags->header.context, "max-items", 20, NULL)) != PINCER_OK ||
        (status = flags->register_double(flags->header.context, "ratio", 0.5, NULL)) != PINCER_OK ||
        (status = flags->register_string(flags->header.context, "greeting", "hello", NULL)) != PINCER_OK) {
        reply->fail(reply, flags->last_error(flags->header.context));
        return status;
    }
    if (servers->subscribe(servers->header.context, on_environment, NULL) == 0 ||
        host->subscribe(host, PINCER_SERVERS_CHANGED_EVENT, on_event, NULL) == 0) {
        reply->fail(reply, "subscribe failed");
        return PINCER_FAILED;
    }
    if ((status = servers->register_environment(servers->header.context, "production", "Production", production, 2)) != PINCER_OK ||
        (status = servers->register_environment(servers->header.context, "staging", "Staging", staging, 1)) != PINCER_OK) {
        reply->fail(reply, servers->last_error(servers->header.context));
        return status;
    }
    servers->set_display_variable(servers->header.context, "Build", "1.2.3 (456)");
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
    .id = "test.app",
    .short_name = "app",
    .name = "App client fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
