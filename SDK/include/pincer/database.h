/*
 * pincer/database.h — database adapters and the database browser's service,
 * "pincer.database/1". Since ABI 1.2.
 *
 * The built-in `db` plugin browses databases through adapters. It has one
 * built in (SQLite files); any plugin, in any language that speaks C, adds
 * another by filling a pincer_db_adapter_t and registering it with the
 * service below. People then use the same db.* commands on every adapter.
 *
 * Look the service up in init with
 *   pincer_host_t.get_service(host, PINCER_DATABASE_SERVICE_ID)
 * NULL means the db plugin is not loaded (built-in plugins load before the
 * ones on --plugin-path). Check PINCER_HAS_SERVICE_SLOT (service.h) before
 * using a slot appended after version 1.0 of this service.
 *
 * MEMORY
 *   Inputs (strings, values, requests) are borrowed for the call.
 *   Results (lists, descriptions, pages) are allocated by the adapter and
 *   handed to the caller, who reads them and then passes each one, exactly
 *   once, to the adapter's `release`. One release function takes every kind
 *   of result, so an adapter usually allocates each result as one arena (a
 *   private header in front of the public struct, or a block list) and
 *   frees the arena in release. Everything a result points to stays valid
 *   until it is released.
 *
 * ERRORS
 *   Functions return PINCER_OK or another pincer_status_t. On failure the
 *   adapter's last_error gives the message for the calling thread; it
 *   should name what was wrong and where (the table, the column, the
 *   offset in the SQL). Use PINCER_NOT_FOUND for an unknown database,
 *   object or row, PINCER_INVALID_ARGUMENT for a malformed request or bad
 *   SQL, PINCER_UNSUPPORTED for a capability the adapter lacks or a write
 *   in a read-only session, PINCER_CANCELLED for a cancelled or timed-out
 *   call. A failed call changes nothing: a write either happens whole or
 *   not at all.
 *
 * THREADS
 *   The browser uses a session from one thread at a time. Different
 *   sessions, and list_databases, may be used from different threads at
 *   once. `cancel` and `last_error` are [any-thread]. No exception, panic
 *   or longjmp may cross these functions.
 *
 * GROWTH
 *   Records carry struct_size; arrays of records carry their element size
 *   (`*_size`), so elements may grow at their end too. pincer_db_value_t
 *   and pincer_db_order_t never grow.
 */
#ifndef PINCER_DATABASE_H
#define PINCER_DATABASE_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_DATABASE_SERVICE_ID "pincer.database/1"

/* ---- Values ------------------------------------------------------------ */

/* Tag of a pincer_db_value_t: the five storage classes SQLite has, which
 * any store's values map onto. */
typedef uint32_t pincer_db_type_t;
#define PINCER_DB_NULL    0u
#define PINCER_DB_INTEGER 1u /* `integer` */
#define PINCER_DB_REAL    2u /* `real`; may be NaN or infinite */
#define PINCER_DB_TEXT    3u /* `bytes`/`length`: UTF-8, not NUL-terminated, may contain NUL */
#define PINCER_DB_BLOB    4u /* `bytes`/`length`: any bytes */

/* One tagged value. Only the fields the tag names are meaningful; set the
 * others to zero. `bytes` may be NULL when `length` is 0. This struct never
 * grows: it is the element of row-major value arrays. */
typedef struct pincer_db_value {
    pincer_db_type_t type;
    uint32_t reserved;      /* 0 */
    int64_t integer;
    double real;
    const void *bytes;
    uint64_t length;        /* bytes in `bytes` */
} pincer_db_value_t;

/* ---- What an adapter can do -------------------------------------------- */

typedef uint32_t pincer_db_capabilities_t;
#define PINCER_DB_CAN_QUERY    (1u << 0) /* `execute` runs statements in the store's own language */
#define PINCER_DB_CAN_WRITE    (1u << 1) /* insert, update and remove work in sessions opened with PINCER_DB_OPEN_WRITE */
#define PINCER_DB_ATOMIC_WRITE (1u << 2) /* each write happens whole or not at all (a transaction rolled back unless
                                            exactly the expected row changed, or a file replaced by rename) */
#define PINCER_DB_CAN_KEYSET   (1u << 3) /* read_page returns cursors where rows have a key */
#define PINCER_DB_CAN_CANCEL   (1u << 4) /* `cancel` stops a running call, and open's timeout_ms is honoured */
#define PINCER_DB_CHEAP_COUNT  (1u << 5) /* `count` is exact and cheap (no scan of the rows per call) */

/* One database an adapter offers. Element of pincer_db_database_list_t. */
typedef struct pincer_db_database_info {
    const char *name;        /* unique within the adapter; what open() takes */
    const char *location;    /* where it lives (a path, a URL); may be NULL */
    const char *detail;      /* one line for people (size, table count); may be NULL */
    pincer_db_capabilities_t capabilities; /* for this database; a subset of the adapter's */
    uint32_t reserved;
} pincer_db_database_info_t;

typedef struct pincer_db_database_list {
    uint32_t struct_size;
    uint32_t count;
    uint32_t item_size;      /* sizeof(pincer_db_database_info_t) of the adapter */
    uint32_t reserved;
    const pincer_db_database_info_t *items; /* stride item_size */
} pincer_db_database_list_t;

/* ---- Objects and their description ------------------------------------- */

typedef uint32_t pincer_db_object_kind_t;
#define PINCER_DB_OBJECT_TABLE         1u
#define PINCER_DB_OBJECT_VIEW          2u
#define PINCER_DB_OBJECT_VIRTUAL_TABLE 3u

typedef struct pincer_db_object_info {
    const char *name;
    pincer_db_object_kind_t kind;
    uint32_t reserved;
} pincer_db_object_info_t;

typedef struct pincer_db_object_list {
    uint32_t struct_size;
    uint32_t count;
    uint32_t item_size;      /* sizeof(pincer_db_object_info_t) of the adapter */
    uint32_t reserved;
    const pincer_db_object_info_t *items; /* stride item_size */
} pincer_db_object_list_t;

/* Bits of pincer_db_column_t.flags. */
#define PINCER_DB_COLUMN_NOT_NULL          (1u << 0)
#define PINCER_DB_COLUMN_HIDDEN            (1u << 1) /* not in "all columns" (a virtual table's hidden column) */
#define PINCER_DB_COLUMN_GENERATED_VIRTUAL (1u << 2) /* computed when read; cannot be written */
#define PINCER_DB_COLUMN_GENERATED_STORED  (1u << 3) /* computed when written; cannot be written */

typedef struct pincer_db_column {
    const char *name;
    const char *declared_type;  /* as declared ("NVARCHAR(120)"); "" when none */
    const char *default_sql;    /* the default as an expression in the store's language; NULL when none */
    uint32_t primary_key;       /* 1-based position in the primary key; 0 when not part of it */
    uint32_t flags;             /* PINCER_DB_COLUMN_* */
} pincer_db_column_t;

/* A foreign key: `column_count` columns of this object referring to as
 * many in `table`. Composite keys are one record, in key order. */
typedef struct pincer_db_foreign_key {
    const char *table;               /* the referenced table */
    const char *const *from;         /* column_count names in this object */
    const char *const *to;           /* column_count names in `table`; an entry is NULL when the
                                        key refers to the target's primary key implicitly */
    uint32_t column_count;
    uint32_t reserved;
    const char *on_update;           /* "NO ACTION", "CASCADE", ...; NULL when unknown */
    const char *on_delete;
} pincer_db_foreign_key_t;

/* Bits of pincer_db_index_t.flags. */
#define PINCER_DB_INDEX_UNIQUE      (1u << 0)
#define PINCER_DB_INDEX_PARTIAL     (1u << 1) /* has a WHERE clause */
#define PINCER_DB_INDEX_PRIMARY_KEY (1u << 2) /* made for the primary key */

typedef struct pincer_db_index {
    const char *name;
    const char *const *columns;      /* column_count names; an entry is NULL for an expression */
    uint32_t column_count;
    uint32_t flags;                  /* PINCER_DB_INDEX_* */
} pincer_db_index_t;

/* How rows of an object are addressed for update and remove. */
typedef uint32_t pincer_db_identity_t;
#define PINCER_DB_IDENTITY_NONE        0u /* rows cannot be addressed (most views) */
#define PINCER_DB_IDENTITY_ROWID       1u /* by a row id; key_columns names it ("rowid") */
#define PINCER_DB_IDENTITY_PRIMARY_KEY 2u /* by the primary key columns, in key order */

typedef struct pincer_db_description {
    uint32_t struct_size;
    pincer_db_object_kind_t kind;
    const char *name;
    const char *ddl;                 /* the statement that made it; NULL when there is none */

    uint32_t column_count;
    uint32_t column_size;            /* sizeof(pincer_db_column_t) of the adapter */
    const pincer_db_column_t *columns;       /* stride column_size, in declaration order */

    uint32_t foreign_key_count;
    uint32_t foreign_key_size;       /* sizeof(pincer_db_foreign_key_t) */
    const pincer_db_foreign_key_t *foreign_keys;

    uint32_t index_count;
    uint32_t index_size;             /* sizeof(pincer_db_index_t) */
    const pincer_db_index_t *indexes;

    pincer_db_identity_t identity;
    uint32_t key_count;              /* values in a row key */
    const char *const *key_columns;  /* key_count names, in key order */
} pincer_db_description_t;

/* ---- Pages of rows ----------------------------------------------------- */

/* One ordering term. Never grows. */
typedef struct pincer_db_order {
    const char *column;
    uint32_t descending;             /* 0 ascending, 1 descending */
    uint32_t reserved;
} pincer_db_order_t;

typedef struct pincer_db_page_request {
    uint32_t struct_size;
    uint32_t order_count;
    const char *object;
    const pincer_db_order_t *order;  /* order_count terms; none means the store's natural
                                        order (by key). The adapter appends the key to
                                        make the order total. */
    uint64_t limit;                  /* rows per page, at least 1 */
    const char *cursor;              /* NULL for the first page; else a next_cursor from an
                                        earlier page of the same object and order */
    uint64_t offset;                 /* rows to skip; only when cursor is NULL */
} pincer_db_page_request_t;

/* How a page was read. */
typedef uint32_t pincer_db_paging_t;
#define PINCER_DB_PAGING_KEYSET 1u /* seeks past the cursor's key: every page costs the same */
#define PINCER_DB_PAGING_OFFSET 2u /* skips `offset` rows: later pages cost more */

/* Bits of pincer_db_page_t.flags. */
#define PINCER_DB_PAGE_TRUNCATED (1u << 0) /* execute: more rows than row_limit; the rest were not kept */
#define PINCER_DB_PAGE_WROTE     (1u << 1) /* execute: the statement may have changed the store */
#define PINCER_DB_PAGE_MORE      (1u << 2) /* read_page: more rows follow this page (also where there is no cursor) */

/* Rows, from read_page, insert or execute. */
typedef struct pincer_db_page {
    uint32_t struct_size;
    uint32_t column_count;
    const char *const *columns;      /* column_count names; duplicates possible in execute */
    const pincer_db_value_t *values; /* row_count x column_count, row-major */
    uint64_t row_count;
    uint32_t key_count;              /* values per row key; 0 when rows cannot be addressed */
    pincer_db_paging_t paging;       /* read_page: how this page was read; else 0 */
    const char *const *key_columns;  /* key_count names */
    const pincer_db_value_t *keys;   /* row_count x key_count, row-major */
    const char *next_cursor;         /* read_page: pass back for the next page; NULL at the end
                                        or when the object has no key */
    uint64_t changes;                /* execute and insert: rows the statement changed */
    uint32_t flags;                  /* PINCER_DB_PAGE_* */
    uint32_t reserved;
} pincer_db_page_t;

/* A statement for execute. */
typedef struct pincer_db_statement {
    uint32_t struct_size;
    uint32_t param_count;
    const char *sql;                 /* exactly one statement, in the store's language */
    const pincer_db_value_t *params; /* bound to ?1...?param_count (and named ones in order) */
    uint64_t row_limit;              /* rows kept in the result; 0 for no limit */
} pincer_db_statement_t;

/* ---- The adapter -------------------------------------------------------- */

/* A session: one open database, owned by the adapter. */
typedef struct pincer_db_session pincer_db_session_t;

/* Flags of open(). */
#define PINCER_DB_OPEN_WRITE (1u << 0) /* allow writes; without it the session is read-only */

/* An adapter, filled by its plugin and registered with the service. The
 * table is not copied: it must stay valid and unchanged until the plugin
 * unregisters it or shuts down. Function slots marked "optional" may be
 * NULL when the matching capability bit is clear. */
typedef struct pincer_db_adapter {
    uint32_t struct_size;            /* sizeof(pincer_db_adapter_t) of the plugin */
    pincer_db_capabilities_t capabilities;
    const char *id;                  /* [a-z0-9_-], at most 32 bytes, e.g. "csv"; qualifies
                                        database names in the shell: "csv:music" */
    const char *name;                /* for people, e.g. "CSV folders" */
    void *context;                   /* passed first to every function below */

    /* Lists the databases on offer (the browser calls it for db.list and to
     * resolve names). *out is released with `release`. [any-thread] */
    pincer_status_t (*list_databases)(void *context, pincer_db_database_list_t **out);

    /* Opens `database` (a name from list_databases, without the "id:"
     * prefix the shell accepts, or anything else the adapter documents,
     * such as a path) with PINCER_DB_OPEN_* `flags`. With
     * PINCER_DB_CAN_CANCEL, `timeout_ms` bounds every later call in the
     * session (0: none) and a call that runs out fails with
     * PINCER_CANCELLED; other adapters may ignore it. *out stays valid until
     * close. [any-thread] */
    pincer_status_t (*open)(void *context, const char *database, uint32_t flags,
                            uint32_t timeout_ms, pincer_db_session_t **out);

    /* Closes a session and frees it. Results already returned from it stay
     * valid until released. [session thread] */
    void (*close)(void *context, pincer_db_session_t *session);

    /* Tables, views and virtual tables, by name. [session thread] */
    pincer_status_t (*list_objects)(void *context, pincer_db_session_t *session,
                                    pincer_db_object_list_t **out);

    /* Columns, foreign keys, indexes, DDL and row identity of one object.
     * PINCER_NOT_FOUND when there is none. [session thread] */
    pincer_status_t (*describe)(void *context, pincer_db_session_t *session, const char *object,
                                pincer_db_description_t **out);

    /* One page of an object's rows, with each row's key. Uses the cursor
     * when given (keyset paging), else skips `offset` rows; either way it
     * sets next_cursor when keyset paging can continue. A cursor that was
     * made for another object or order is PINCER_INVALID_ARGUMENT.
     * [session thread] */
    pincer_status_t (*read_page)(void *context, pincer_db_session_t *session,
                                 const pincer_db_page_request_t *request, pincer_db_page_t **out);

    /* Counts rows of `object`, stopping once more than `limit` are seen
     * (0: no limit): *count is exact when *exact is true, else it is
     * `limit` and there are more. [session thread] */
    pincer_status_t (*count)(void *context, pincer_db_session_t *session, const char *object,
                             uint64_t limit, uint64_t *count, bool *exact);

    /* Inserts one row: `count` columns with their values. When out_row is
     * not NULL, *out_row receives the row as stored (with its key and
     * generated values). Optional (PINCER_DB_CAN_WRITE). [session thread] */
    pincer_status_t (*insert)(void *context, pincer_db_session_t *session, const char *object,
                              const char *const *columns, const pincer_db_value_t *values,
                              uint32_t count, pincer_db_page_t **out_row);

    /* Sets `count` columns of the one row whose key (key_count values in
     * the description's key order, as read_page returned them in `keys`)
     * is `key`. PINCER_NOT_FOUND, and nothing
     * changes, unless exactly one row matched. Optional (PINCER_DB_CAN_WRITE).
     * [session thread] */
    pincer_status_t (*update)(void *context, pincer_db_session_t *session, const char *object,
                              const pincer_db_value_t *key, uint32_t key_count,
                              const char *const *columns, const pincer_db_value_t *values,
                              uint32_t count);

    /* Deletes the one row whose key is `key`; as update otherwise.
     * Optional (PINCER_DB_CAN_WRITE). [session thread] */
    pincer_status_t (*remove)(void *context, pincer_db_session_t *session, const char *object,
                              const pincer_db_value_t *key, uint32_t key_count);

    /* Runs one statement with bound parameters. Rows it returns, up to
     * row_limit, come back in *out, with `changes` and PINCER_DB_PAGE_*
     * flags. In a read-only session a statement that would write is refused
     * with PINCER_UNSUPPORTED before it runs. Optional (PINCER_DB_CAN_QUERY).
     * [session thread] */
    pincer_status_t (*execute)(void *context, pincer_db_session_t *session,
                               const pincer_db_statement_t *statement, pincer_db_page_t **out);

    /* Makes the call running in `session` now, if any, return
     * PINCER_CANCELLED soon, changing nothing. Does not wait for it.
     * Optional (PINCER_DB_CAN_CANCEL). [any-thread] */
    void (*cancel)(void *context, pincer_db_session_t *session);

    /* Frees a result this adapter returned (any of the list, description
     * and page records). NULL is ignored. [any-thread] */
    void (*release)(void *context, void *result);

    /* Why the calling thread's most recent failing call into this adapter
     * failed. Owned by the adapter; valid until that thread's next call into
     * it. Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_db_adapter_t;

/* ---- The browser's service ---------------------------------------------- */

typedef struct pincer_database_service {
    /* struct_size, version_minor (0 for this layout), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Adds an adapter. The table is borrowed until unregister_adapter or the
     * registering plugin's shutdown, whichever comes first; it is checked
     * here (struct_size, id, required slots, capability slots).
     * PINCER_DUPLICATE when the id is taken, PINCER_INVALID_ARGUMENT for a
     * table that is incomplete (last_error names the slot). [any-thread] */
    pincer_status_t (*register_adapter)(void *context, const pincer_db_adapter_t *adapter);

    /* Removes the adapter with this id (borrowed); call it from shutdown.
     * After it returns the browser makes no more calls into the adapter.
     * PINCER_NOT_FOUND for an unknown id. [any-thread] */
    pincer_status_t (*unregister_adapter)(void *context, const char *id);

    /* Offers a SQLite database file, or every SQLite file in a folder, to
     * the built-in SQLite adapter for the life of this process (an app
     * registers its own databases this way). `path` borrowed. PINCER_NOT_FOUND
     * when nothing is there, PINCER_INVALID_ARGUMENT for a file that is not
     * a SQLite database. [any-thread] */
    pincer_status_t (*add_sqlite_path)(void *context, const char *path);

    /* Why this thread's most recent failing call into this service failed.
     * Owned by the service; valid until this thread's next call into it.
     * Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_database_service_t;

#ifdef __cplusplus
}
#endif

#endif /* PINCER_DATABASE_H */
