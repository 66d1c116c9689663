/* Fixture: an app's plugin using "pincer.database/1" in plain C. It offers
 * the SQLite file named by $DB_CLIENT_PATH to the browser, and tries to
 * register adapter tables the browser must refuse (incomplete, badly named,
 * promising writes without the slots, duplicate id); dbclient.report()
 * returns what each call answered, one line each. */
#include <pincer.h>
#include <pincer/database.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char report[4096];

static void note(const pincer_database_service_t *db, const char *what, pincer_status_t status)
{
    size_t used = strlen(report);
    snprintf(report + used, sizeof report - used, "%s: %u %s\n", what, (unsigned)status,
             status == PINCER_OK ? "" : db->last_error(db->header.context));
}

/* A table with just enough to pass registration: every call fails. */
static pincer_status_t nothing(void *context, pincer_db_database_list_t **out)
{
    (void)context;
    *out = NULL;
    return PINCER_FAILED;
}
static pincer_status_t no_open(void *c, const char *d, uint32_t f, uint32_t t, pincer_db_session_t **o)
{ (void)c; (void)d; (void)f; (void)t; (void)o; return PINCER_FAILED; }
static void no_close(void *c, pincer_db_session_t *s) { (void)c; (void)s; }
static pincer_status_t no_objects(void *c, pincer_db_session_t *s, pincer_db_object_list_t **o)
{ (void)c; (void)s; (void)o; return PINCER_FAILED; }
static pincer_status_t no_describe(void *c, pincer_db_session_t *s, const char *n, pincer_db_description_t **o)
{ (void)c; (void)s; (void)n; (void)o; return PINCER_FAILED; }
static pincer_status_t no_page(void *c, pincer_db_session_t *s, const pincer_db_page_request_t *r, pincer_db_page_t **o)
{ (void)c; (void)s; (void)r; (void)o; return PINCER_FAILED; }
static pincer_status_t no_count(void *c, pincer_db_session_t *s, const char *n, uint64_t l, uint64_t *k, bool *e)
{ (void)c; (void)s; (void)n; (void)l; (void)k; (void)e; return PINCER_FAILED; }
static void no_release(void *c, void *r) { (void)c; (void)r; }
static const char *why(void *c) { (void)c; return "this fixture adapter offers nothing"; }

static pincer_db_adapter_t complete_table(const char *id, uint32_t capabilities)
{
    pincer_db_adapter_t t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.capabilities = capabilities;
    t.id = id;
    t.name = "Fixture";
    t.list_databases = nothing;
    t.open = no_open;
    t.close = no_close;
    t.list_objects = no_objects;
    t.describe = no_describe;
    t.read_page = no_page;
    t.count = no_count;
    t.release = no_release;
    t.last_error = why;
    return t;
}

static pincer_db_adapter_t incomplete, bad_id, false_promise, small, good, duplicate;

static pincer_status_t get_report(void *context, pincer_call_t *call)
{
    (void)context;
    call->return_string(call, report);
    return PINCER_OK;
}

static pincer_status_t init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    const pincer_database_service_t *db = host->get_service(host, PINCER_DATABASE_SERVICE_ID);
    const char *path = getenv("DB_CLIENT_PATH");
    (void)context;
    if (db == NULL || !PINCER_HAS_SERVICE_SLOT(db, pincer_database_service_t, last_error)) {
        reply->fail(reply, "pincer.database/1 is not available");
        return PINCER_NOT_FOUND;
    }
    note(db, "add_sqlite_path", db->add_sqlite_path(db->header.context, path ? path : "/nonexistent/app.db"));
    note(db, "add_sqlite_path(not a database)", db->add_sqlite_path(db->header.context, "/proc/self/status"));

    incomplete = complete_table("incomplete", 0);
    incomplete.read_page = NULL;
    incomplete.release = NULL;
    note(db, "register incomplete", db->register_adapter(db->header.context, &incomplete));
    bad_id = complete_table("Bad Id", 0);
    note(db, "register bad id", db->register_adapter(db->header.context, &bad_id));
    false_promise = complete_table("promise", PINCER_DB_CAN_WRITE | PINCER_DB_CAN_QUERY);
    note(db, "register false promise", db->register_adapter(db->header.context, &false_promise));
    small = complete_table("small", 0);
    small.struct_size = 24;
    note(db, "register small", db->register_adapter(db->header.context, &small));
    note(db, "register NULL", db->register_adapter(db->header.context, NULL));
    good = complete_table("fixture", 0);
    note(db, "register good", db->register_adapter(db->header.context, &good));
    duplicate = complete_table("fixture", 0);
    note(db, "register duplicate", db->register_adapter(db->header.context, &duplicate));
    note(db, "register zeroed", db->register_adapter(db->header.context, &(pincer_db_adapter_t){ 0 }));

    return host->add_command(host, &(pincer_command_t){
        .struct_size = sizeof(pincer_command_t),
        .signature = "report() -> string",
        .typed = (pincer_typed_fn_t)get_report,
    });
}

static const pincer_plugin_t plugin = {
    .magic = PINCER_PLUGIN_MAGIC,
    .abi_major = PINCER_ABI_MAJOR,
    .abi_minor = PINCER_ABI_MINOR,
    .struct_size = sizeof(pincer_plugin_t),
    .id = "test.dbclient",
    .short_name = "dbclient",
    .name = "Database service client fixture",
    .version = "1.0.0",
    .init = init,
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return &plugin;
}
