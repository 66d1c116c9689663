/*
 * csv_adapter.c — an example database adapter for the `db` browser
 * ("pincer.database/1", SDK/include/pincer/database.h), in plain C11
 * against SDK/include alone.
 *
 * A database is a folder; every `*.csv` file directly in it is a table
 * named after the file. Folders are configured with csv.add / csv.remove /
 * csv.folders and kept in the plugin's settings; open() also takes any path
 * to a folder. Files are RFC 4180 CSV with a header row; each column is
 * typed from its values (INTEGER, REAL or TEXT). Rows are addressed by
 * their position in the file ("row", 1-based). Every write rewrites the
 * whole file through a temporary file and rename(), so a reader never sees
 * half a file and a failed write leaves the original as it was.
 *
 * Build (see README.md beside this file):
 *   cc -std=c11 -Wall -Wextra -pedantic -Werror -shared -fPIC -fvisibility=hidden \
 *      -I SDK/include Plugins/Examples/CSVAdapter/csv_adapter.c -o libpincer-csv.so
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with XSI: mkstemp, realpath, fsync, st_mtim */

#include <pincer.h>
#include <pincer/database.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#  define CSV_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#  define CSV_PRINTF(fmt, first)
#endif

#define CSV_ADAPTER_ID "csv"
#define CSV_SETTINGS_KEY "folders" /* "name=path" lines */
#define CSV_NAME_MAX 64            /* bytes of a folder name */
#define CSV_CURSOR_TAG "csv1"
#define CSV_CAPABILITIES \
    (PINCER_DB_CAN_WRITE | PINCER_DB_ATOMIC_WRITE | PINCER_DB_CAN_KEYSET | PINCER_DB_CHEAP_COUNT)

/* ---- errors ------------------------------------------------------------- */

/* last_error is per thread (database.h): sessions run on different threads
 * at once, and each must read its own message. */
static _Thread_local char t_error[1024];

static pincer_status_t fail(pincer_status_t status, const char *format, ...) CSV_PRINTF(2, 3);
static pincer_status_t fail(pincer_status_t status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(t_error, sizeof t_error, format, args);
    va_end(args);
    return status;
}

static pincer_status_t out_of_memory(void) { return fail(PINCER_FAILED, "out of memory"); }

/* ---- a growable string ------------------------------------------------- */

/* Used for file contents, cursors and the folder list. `failed` sticks, so
 * callers append freely and check once at the end. */
typedef struct strbuf {
    char *data;
    size_t len, cap;
    bool failed;
} strbuf_t;

static void sb_append(strbuf_t *sb, const void *bytes, size_t len)
{
    if (sb->failed)
        return;
    if (len >= sb->cap - sb->len || sb->data == NULL) {
        size_t cap = sb->cap ? sb->cap : 256;
        char *data;
        while (cap - sb->len <= len) {
            if (cap > SIZE_MAX / 2) { sb->failed = true; return; }
            cap *= 2;
        }
        data = realloc(sb->data, cap);
        if (data == NULL) { sb->failed = true; return; }
        sb->data = data;
        sb->cap = cap;
    }
    if (len > 0)
        memcpy(sb->data + sb->len, bytes, len);
    sb->len += len;
    sb->data[sb->len] = '\0'; /* always a C string too */
}

static void sb_puts(strbuf_t *sb, const char *text) { sb_append(sb, text, strlen(text)); }

static void sb_printf(strbuf_t *sb, const char *format, ...) CSV_PRINTF(2, 3);
static void sb_printf(strbuf_t *sb, const char *format, ...)
{
    char small[64];
    va_list args;
    int n;
    va_start(args, format);
    n = vsnprintf(small, sizeof small, format, args);
    va_end(args);
    if (n < 0 || (size_t)n >= sizeof small) { sb->failed = true; return; } /* only short numbers here */
    sb_append(sb, small, (size_t)n);
}

/* ---- result arenas ----------------------------------------------------- */

/* Every result (list, description, page) is one arena: a private header,
 * then the public struct, then everything it points to, in chained chunks.
 * `release` finds the header in front of the struct and frees the chain. */
typedef struct chunk { struct chunk *next; } chunk_t;
typedef struct arena {
    chunk_t *chunks; /* extra chunks; the first one holds this header */
    char *free;
    size_t left;
    uint32_t magic;
} arena_t;

#define ARENA_MAGIC 0x41565343u /* "CSVA" */
#define ALIGN_UP(n) (((n) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))
#define ARENA_HEAD ALIGN_UP(sizeof(arena_t))
#define CHUNK_HEAD ALIGN_UP(sizeof(chunk_t))
#define CHUNK_SIZE 16384u

static arena_t *arena_of(void *result) { return (arena_t *)(void *)((char *)result - ARENA_HEAD); }

/* A zeroed public struct of `size` bytes inside a new arena, or NULL. */
static void *arena_new(size_t size)
{
    size_t first = ARENA_HEAD + ALIGN_UP(size) + 4096;
    char *block = calloc(1, first);
    arena_t *arena = (arena_t *)(void *)block;
    if (block == NULL)
        return NULL;
    arena->free = block + ARENA_HEAD + ALIGN_UP(size);
    arena->left = first - ARENA_HEAD - ALIGN_UP(size);
    arena->magic = ARENA_MAGIC;
    return block + ARENA_HEAD;
}

/* `size` zeroed bytes owned by the result's arena, or NULL. */
static void *arena_alloc(void *result, size_t size)
{
    arena_t *arena = arena_of(result);
    char *p;
    if (size > SIZE_MAX / 2)
        return NULL;
    size = ALIGN_UP(size ? size : 1);
    if (size > arena->left) {
        size_t cap = size + CHUNK_HEAD > CHUNK_SIZE ? size + CHUNK_HEAD : CHUNK_SIZE;
        chunk_t *chunk = malloc(cap);
        if (chunk == NULL)
            return NULL;
        chunk->next = arena->chunks;
        arena->chunks = chunk;
        arena->free = (char *)chunk + CHUNK_HEAD;
        arena->left = cap - CHUNK_HEAD;
    }
    p = arena->free;
    arena->free += size;
    arena->left -= size;
    memset(p, 0, size);
    return p;
}

/* A NUL-terminated copy of `len` bytes in the arena. */
static char *arena_strndup(void *result, const char *text, size_t len)
{
    char *copy = len < SIZE_MAX ? arena_alloc(result, len + 1) : NULL;
    if (copy != NULL && len > 0)
        memcpy(copy, text, len);
    return copy;
}

static char *arena_strdup(void *result, const char *text) { return arena_strndup(result, text, strlen(text)); }

static void arena_free(void *result)
{
    arena_t *arena;
    if (result == NULL)
        return;
    arena = arena_of(result);
    if (arena->magic != ARENA_MAGIC) /* not ours, or released twice: leak rather than crash */
        return;
    arena->magic = 0;
    while (arena->chunks != NULL) {
        chunk_t *next = arena->chunks->next;
        free(arena->chunks);
        arena->chunks = next;
    }
    free(arena);
}

static bool mul_fits(size_t a, size_t b) { return b == 0 || a <= SIZE_MAX / b; }

/* ---- UTF-8 and numbers ------------------------------------------------ */

/* Offset of the first byte that does not start a valid UTF-8 sequence
 * (overlong forms, surrogates and values past U+10FFFF are invalid), or n. */
static size_t utf8_invalid_at(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len, k;
        uint32_t cp, min;
        if (c < 0x80) { i++; continue; }
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return i;
        if (n - i < len)
            return i;
        for (k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += len;
    }
    return n;
}

/* Counts as a number: [+-]? then "0" or a digit string without a leading
 * zero. Leading zeros ("00501", a ZIP code) keep a column TEXT, so they are
 * never lost by reading them as 501. Returns the digits' end or NULL. */
static const char *scan_digits(const char *p, const char *end, bool *any)
{
    const char *start = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    *any = p > start;
    return (p - start > 1 && *start == '0') ? NULL : p;
}

static bool parse_integer(const char *text, size_t len, int64_t *out)
{
    const char *p = text, *end = text + len;
    bool negative = false, any;
    uint64_t value = 0, limit;
    if (p < end && (*p == '+' || *p == '-'))
        negative = *p++ == '-';
    if (scan_digits(p, end, &any) != end || !any)
        return false;
    limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < end; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (value > (limit - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    *out = negative ? (value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value) : (int64_t)value;
    return true;
}

/* Decimal reals only: [+-]? digits [. digits] [e [+-] digits], or .digits;
 * strtod alone would also take "inf", "nan", hex and leading spaces.
 * `text` is NUL-terminated (fields are). */
static bool parse_real(const char *text, size_t len, double *out)
{
    const char *p = text, *end = text + len;
    bool int_digits, frac_digits = false, exp_digits;
    char *stop;
    if (p < end && (*p == '+' || *p == '-'))
        p++;
    if ((p = scan_digits(p, end, &int_digits)) == NULL)
        return false;
    if (p < end && *p == '.') {
        const char *q = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        frac_digits = p > q;
    }
    if (!int_digits && !frac_digits)
        return false;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q;
        if (++p < end && (*p == '+' || *p == '-'))
            p++;
        q = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        exp_digits = p > q;
        if (!exp_digits)
            return false;
    }
    if (p != end)
        return false;
    *out = strtod(text, &stop);
    return stop == end && isfinite(*out); /* 1e999 stays text */
}

/* ---- parsed tables ----------------------------------------------------- */

typedef struct field {
    const char *text; /* NUL-terminated; may contain NUL bytes within len */
    size_t len;
    size_t at;        /* where it starts in the file, for messages */
    bool null;        /* an empty unquoted field */
} field_t;

typedef struct table {
    char *data;                /* unescaped text of every field */
    size_t column_count, row_count;
    field_t *fields;           /* (1 + row_count) x column_count; row 0 is the header */
    pincer_db_value_t *values; /* row_count x column_count, typed; text points into data */
    pincer_db_type_t *types;   /* per column: INTEGER, REAL or TEXT */
    bool bom, crlf;            /* kept when the file is rewritten */
    char *sorted_by;           /* the order of `sorted`, e.g. "2d,0a,"; NULL when none */
    size_t *sorted;            /* row indexes (0-based) in that order */
} table_t;

static void table_free(table_t *t)
{
    if (t == NULL)
        return;
    free(t->data);
    free(t->fields);
    free(t->values);
    free(t->types);
    free(t->sorted_by);
    free(t->sorted);
    free(t);
}

static const field_t *table_row(const table_t *t, size_t row) { return t->fields + (row + 1) * t->column_count; }

/* ---- the CSV reader (RFC 4180) ----------------------------------------- */

typedef struct parser {
    const char *file;         /* for messages */
    const unsigned char *s;
    size_t n, p, body;        /* body: where the text starts, after a BOM */
    char *out;                /* unescaped field text */
    size_t out_len, out_cap;
    field_t *fields;
    size_t count, cap;
} parser_t;

/* "file:line:column: message", the column in characters. */
static pincer_status_t parse_error(const parser_t *ps, size_t offset, const char *format, ...) CSV_PRINTF(3, 4);
static pincer_status_t parse_error(const parser_t *ps, size_t offset, const char *format, ...)
{
    size_t line = 1, column = 1, line_start = ps->body, i;
    char message[512];
    va_list args;
    for (i = ps->body; i < offset && i < ps->n; i++)
        if (ps->s[i] == '\n') { line++; line_start = i + 1; }
    for (i = line_start; i < offset && i < ps->n; i++)
        if ((ps->s[i] & 0xC0) != 0x80)
            column++;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return fail(PINCER_INVALID_ARGUMENT, "%s:%zu:%zu: %s", ps->file, line, column, message);
}

static bool at_line_end(const parser_t *ps, size_t p)
{
    return p == ps->n || ps->s[p] == '\n' || (ps->s[p] == '\r' && p + 1 < ps->n && ps->s[p + 1] == '\n');
}

/* Copies one byte of field text. Output never outgrows the input (each
 * field is at least as long in the file, plus a delimiter for its NUL),
 * but the check keeps a mistake from becoming an overflow. */
static bool emit(parser_t *ps, unsigned char c)
{
    if (ps->out_len >= ps->out_cap)
        return false;
    ps->out[ps->out_len++] = (char)c;
    return true;
}

/* Reads one field at ps->p into ps->fields. */
static pincer_status_t read_field(parser_t *ps)
{
    size_t start = ps->out_len, at = ps->p;
    bool quoted = ps->p < ps->n && ps->s[ps->p] == '"';
    field_t *f;

    if (quoted) {
        size_t open = ps->p++;
        for (;;) {
            if (ps->p == ps->n)
                return parse_error(ps, open, "unterminated quoted field (the quote opened here is never closed)");
            if (ps->s[ps->p] == '"') {
                if (ps->p + 1 < ps->n && ps->s[ps->p + 1] == '"') {
                    if (!emit(ps, '"')) return fail(PINCER_FAILED, "internal error: field buffer");
                    ps->p += 2;
                    continue;
                }
                ps->p++;
                break;
            }
            if (!emit(ps, ps->s[ps->p++])) return fail(PINCER_FAILED, "internal error: field buffer");
        }
        if (!at_line_end(ps, ps->p) && ps->s[ps->p] != ',')
            return parse_error(ps, ps->p, "unexpected character after a closing quote (expected a comma or a line end)");
    } else {
        while (ps->p < ps->n && ps->s[ps->p] != ',' && ps->s[ps->p] != '\n') {
            unsigned char c = ps->s[ps->p];
            if (c == '"')
                return parse_error(ps, ps->p, "stray quote in an unquoted field (quote the whole field and double the quote)");
            if (c == '\r' && !at_line_end(ps, ps->p))
                return parse_error(ps, ps->p, "carriage return outside a quoted field and not before a line feed");
            if (c == '\r')
                break;
            if (!emit(ps, c)) return fail(PINCER_FAILED, "internal error: field buffer");
            ps->p++;
        }
    }
    if (ps->out_len >= ps->out_cap)
        return fail(PINCER_FAILED, "internal error: field buffer");
    ps->out[ps->out_len++] = '\0';

    if (ps->count == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        field_t *fields = mul_fits(cap, sizeof *fields) ? realloc(ps->fields, cap * sizeof *fields) : NULL;
        if (fields == NULL)
            return out_of_memory();
        ps->fields = fields;
        ps->cap = cap;
    }
    f = &ps->fields[ps->count++];
    f->text = ps->out + start;
    f->len = ps->out_len - 1 - start;
    f->at = at;
    f->null = !quoted && f->len == 0;
    return PINCER_OK;
}

/* The header's names: present, without NUL bytes, unique. */
static pincer_status_t check_header(const parser_t *ps, size_t columns)
{
    size_t i, j;
    for (i = 0; i < columns; i++) {
        const field_t *f = &ps->fields[i];
        if (f->len == 0)
            return parse_error(ps, f->at, "column %zu has no name", i + 1);
        if (strlen(f->text) != f->len)
            return parse_error(ps, f->at, "column %zu's name contains a NUL byte", i + 1);
        for (j = 0; j < i; j++)
            if (strcmp(ps->fields[j].text, f->text) == 0)
                return parse_error(ps, f->at, "duplicate column name \"%s\" (also column %zu)", f->text, j + 1);
    }
    return PINCER_OK;
}

/* Reads every record into ps->fields; the header fixes the field count. */
static pincer_status_t read_records(parser_t *ps, size_t *columns)
{
    pincer_status_t status = PINCER_OK;

    *columns = 0;
    if (ps->p == ps->n)
        return parse_error(ps, ps->p, "the file is empty; the first line must name the columns");
    while (status == PINCER_OK && ps->p < ps->n) {
        size_t record_start = ps->count, got;
        while ((status = read_field(ps)) == PINCER_OK && ps->p < ps->n && ps->s[ps->p] == ',')
            ps->p++;
        if (status != PINCER_OK)
            break;
        got = ps->count - record_start;
        if (record_start == 0) {
            *columns = got;
            status = check_header(ps, got);
        } else if (got != *columns) {
            status = parse_error(ps, got > *columns ? ps->fields[record_start + *columns].at : ps->p,
                                 "this row has %zu field%s but the header has %zu", got, got == 1 ? "" : "s", *columns);
        }
        if (ps->p < ps->n) /* the line end: "\n" or "\r\n" */
            ps->p += ps->s[ps->p] == '\r' ? 2 : 1;
    }
    return status;
}

/* Decides each column's type and fills the typed values. A column is
 * INTEGER when every non-empty value is an integer, else REAL when every
 * one is a real, else TEXT; a column without values is TEXT. */
static pincer_status_t type_columns(table_t *t)
{
    size_t c, r, cells;
    if (!mul_fits(t->row_count, t->column_count))
        return out_of_memory();
    cells = t->row_count * t->column_count;
    t->types = calloc(t->column_count, sizeof *t->types);
    t->values = calloc(cells ? cells : 1, sizeof *t->values);
    if (t->types == NULL || t->values == NULL)
        return out_of_memory();
    for (c = 0; c < t->column_count; c++) {
        bool integers = true, reals = true, any = false;
        for (r = 0; r < t->row_count && (integers || reals); r++) {
            const field_t *f = &table_row(t, r)[c];
            int64_t i;
            double d;
            if (f->null || f->len == 0)
                continue;
            any = true;
            if (integers && !parse_integer(f->text, f->len, &i)) integers = false;
            if (!integers && reals && !parse_real(f->text, f->len, &d)) reals = false;
        }
        t->types[c] = !any ? PINCER_DB_TEXT : integers ? PINCER_DB_INTEGER : reals ? PINCER_DB_REAL : PINCER_DB_TEXT;
        for (r = 0; r < t->row_count; r++) {
            const field_t *f = &table_row(t, r)[c];
            pincer_db_value_t *v = &t->values[r * t->column_count + c];
            if (f->null)
                v->type = PINCER_DB_NULL;
            else if (f->len > 0 && t->types[c] == PINCER_DB_INTEGER && parse_integer(f->text, f->len, &v->integer))
                v->type = PINCER_DB_INTEGER;
            else if (f->len > 0 && t->types[c] == PINCER_DB_REAL && parse_real(f->text, f->len, &v->real))
                v->type = PINCER_DB_REAL;
            else { /* TEXT, and the quoted empty string in any column */
                v->type = PINCER_DB_TEXT;
                v->bytes = f->text;
                v->length = f->len;
            }
        }
    }
    return PINCER_OK;
}

/* Parses a whole file's bytes into a table; `file` names it in messages.
 * Either the whole table or an error: nothing is half-read. */
static pincer_status_t parse_csv(const char *file, const char *bytes, size_t n, table_t **out)
{
    parser_t ps;
    table_t *t;
    size_t bad, columns = 0;
    pincer_status_t status;

    *out = NULL;
    memset(&ps, 0, sizeof ps);
    ps.file = file;
    ps.s = (const unsigned char *)bytes;
    ps.n = n;
    if (n >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0)
        ps.body = ps.p = 3;
    if ((bad = utf8_invalid_at(ps.s + ps.body, n - ps.body)) != n - ps.body)
        return parse_error(&ps, ps.body + bad, "invalid UTF-8 (byte 0x%02X)", ps.s[ps.body + bad]);
    ps.out_cap = n + 1;
    if ((ps.out = malloc(ps.out_cap)) == NULL)
        return out_of_memory();
    if ((status = read_records(&ps, &columns)) != PINCER_OK) {
        free(ps.out);
        free(ps.fields);
        return status;
    }
    if ((t = calloc(1, sizeof *t)) == NULL) {
        free(ps.out);
        free(ps.fields);
        return out_of_memory();
    }
    t->data = ps.out;
    t->fields = ps.fields;
    t->column_count = columns;
    t->row_count = ps.count / columns - 1;
    t->bom = ps.body == 3;
    t->crlf = false;
    {   /* the first line end decides how the file is rewritten */
        const char *lf = memchr(bytes + ps.body, '\n', n - ps.body);
        t->crlf = lf != NULL && lf > bytes + ps.body && lf[-1] == '\r';
    }
    if ((status = type_columns(t)) != PINCER_OK) {
        table_free(t);
        return status;
    }
    *out = t;
    return PINCER_OK;
}

/* ---- the CSV writer ----------------------------------------------------- */

/* NULL is an empty field, "" the empty text; anything with a comma, quote
 * or line break is quoted with quotes doubled, and so is text starting with
 * U+FEFF: unquoted at the start of a file, the reader would take it for a
 * byte order mark and drop it. */
static void write_field(strbuf_t *sb, const field_t *f)
{
    size_t i;
    if (f->null)
        return;
    if (f->len > 0 && !memchr(f->text, ',', f->len) && !memchr(f->text, '"', f->len) &&
        !memchr(f->text, '\n', f->len) && !memchr(f->text, '\r', f->len) &&
        !(f->len >= 3 && memcmp(f->text, "\xEF\xBB\xBF", 3) == 0)) {
        sb_append(sb, f->text, f->len);
        return;
    }
    sb_append(sb, "\"", 1);
    for (i = 0; i < f->len; i++) {
        if (f->text[i] == '"')
            sb_append(sb, "\"", 1);
        sb_append(sb, f->text + i, 1);
    }
    sb_append(sb, "\"", 1);
}

static void write_record(strbuf_t *sb, const table_t *t, const field_t *fields)
{
    size_t c;
    for (c = 0; c < t->column_count; c++) {
        if (c > 0)
            sb_append(sb, ",", 1);
        write_field(sb, &fields[c]);
    }
    sb_puts(sb, t->crlf ? "\r\n" : "\n");
}

/* ---- folders (the plugin's settings) ------------------------------------ */

typedef struct folder { const char *name, *path; } folder_t;
typedef struct folders {
    char *text;      /* the setting, split in place */
    folder_t *items;
    size_t count;
} folders_t;

typedef struct csv_plugin {
    const pincer_host_t *host;
    const pincer_database_service_t *service; /* non-NULL while the adapter is registered */
    pincer_db_adapter_t adapter;
} csv_plugin_t;

static csv_plugin_t g_plugin_state;

/* The folder list is read from the settings on every use instead of being
 * cached: settings_get is [any-thread] and consistent, so list_databases on
 * another thread needs no lock, and a folder added by another pincer
 * process shows up at once. */
static pincer_status_t read_setting(const pincer_host_t *host, char **out)
{
    int64_t length = host->settings_get(host, CSV_SETTINGS_KEY, NULL, 0), again;
    char *buffer;

    *out = NULL;
    if (length == PINCER_SETTING_MISSING)
        return PINCER_OK;
    if (length < 0)
        return fail(PINCER_FAILED, "cannot read the csv folder list: %s", host->last_error(host));
    if ((uint64_t)length >= SIZE_MAX || (buffer = malloc((size_t)length + 1)) == NULL)
        return out_of_memory();
    again = host->settings_get(host, CSV_SETTINGS_KEY, buffer, (uint64_t)length + 1);
    if (again < 0 || again > length) { /* another process changed it in between */
        free(buffer);
        return again == PINCER_SETTING_MISSING ? PINCER_OK
                                               : fail(PINCER_FAILED, "the csv folder list changed while it was read; try again");
    }
    *out = buffer;
    return PINCER_OK;
}

static void folders_free(folders_t *f)
{
    free(f->text);
    free(f->items);
    memset(f, 0, sizeof *f);
}

/* Splits "name=path" lines of f->text (owned by f) in place; lines
 * without '=' are skipped. */
static pincer_status_t folders_split(folders_t *f)
{
    char *line, *next;
    size_t lines = 1;

    for (line = f->text; *line; line++)
        lines += *line == '\n';
    if ((f->items = calloc(lines, sizeof *f->items)) == NULL) {
        folders_free(f);
        return out_of_memory();
    }
    for (line = f->text; line != NULL; line = next) {
        char *eq;
        if ((next = strchr(line, '\n')) != NULL)
            *next++ = '\0';
        if ((eq = strchr(line, '=')) == NULL || eq == line || eq[1] == '\0')
            continue;
        *eq = '\0';
        f->items[f->count].name = line;
        f->items[f->count++].path = eq + 1;
    }
    return PINCER_OK;
}

/* The folder list as stored now. */
static pincer_status_t folders_load(folders_t *f)
{
    pincer_status_t status;

    memset(f, 0, sizeof *f);
    if (g_plugin_state.host == NULL)
        return fail(PINCER_FAILED, "the csv plugin is shut down");
    if ((status = read_setting(g_plugin_state.host, &f->text)) != PINCER_OK || f->text == NULL)
        return status;
    return folders_split(f);
}

/* The folder list parsed from `text` (borrowed; NULL: no folders). */
static pincer_status_t folders_parse(folders_t *f, const char *text)
{
    memset(f, 0, sizeof *f);
    if (text == NULL)
        return PINCER_OK;
    if ((f->text = malloc(strlen(text) + 1)) == NULL)
        return out_of_memory();
    strcpy(f->text, text);
    return folders_split(f);
}

static const folder_t *folders_find(const folders_t *f, const char *name)
{
    size_t i;
    for (i = 0; i < f->count; i++)
        if (strcmp(f->items[i].name, name) == 0)
            return &f->items[i];
    return NULL;
}

/* The list's text without `skip` (NULL: none) and with `add` (NULL: none). */
static void folders_format(const folders_t *f, const folder_t *skip, const folder_t *add, strbuf_t *sb)
{
    size_t i;
    for (i = 0; i < f->count; i++) {
        if (&f->items[i] == skip)
            continue;
        sb_printf(sb, "%s", sb->len ? "\n" : "");
        sb_puts(sb, f->items[i].name);
        sb_puts(sb, "=");
        sb_puts(sb, f->items[i].path);
    }
    if (add != NULL) {
        sb_printf(sb, "%s", sb->len ? "\n" : "");
        sb_puts(sb, add->name);
        sb_puts(sb, "=");
        sb_puts(sb, add->path);
    }
}

/* One change of the folder list: add `add` (refused when its name is
 * taken) or remove the folder named `remove`. */
typedef struct folders_edit {
    const folder_t *add;
    const char *remove;
    strbuf_t text;          /* the new list, owned by the edit */
    pincer_status_t status; /* why the edit was refused (t_error has the message) */
} folders_edit_t;

/* Applies an edit to the list `current` (NULL: none) into e->text. */
static pincer_status_t folders_edit_make(folders_edit_t *e, const char *current)
{
    folders_t f;
    const folder_t *found = NULL;
    pincer_status_t status = folders_parse(&f, current);

    if (status != PINCER_OK)
        return status;
    if (e->add != NULL && (found = folders_find(&f, e->add->name)) != NULL)
        status = fail(PINCER_DUPLICATE, "there is already a folder named \"%s\" (%s); choose another name or csv.remove it",
                      e->add->name, found->path);
    else if (e->remove != NULL && (found = folders_find(&f, e->remove)) == NULL)
        status = fail(PINCER_NOT_FOUND, "no folder named \"%s\" (csv.folders lists them)", e->remove);
    else {
        folders_format(&f, e->remove != NULL ? found : NULL, e->add, &e->text);
        if (e->text.failed)
            status = out_of_memory();
    }
    folders_free(&f);
    return status;
}

/* pincer_setting_update_fn_t: runs inside the store's transaction. */
static pincer_setting_action_t folders_edit_apply(void *context, const char *current, const char **new_value)
{
    folders_edit_t *e = context;
    if ((e->status = folders_edit_make(e, current)) != PINCER_OK)
        return PINCER_SETTING_CANCEL;
    if (e->text.len == 0)
        return PINCER_SETTING_DELETE;
    *new_value = e->text.data;
    return PINCER_SETTING_REPLACE;
}

/* Changes the stored list. With settings_update (ABI 1.4) the read and the
 * write are one transaction of the store, so a folder another pincer
 * process adds or removes meanwhile is never lost; an older host only has
 * settings_get and settings_set, and there the change is not atomic. */
static pincer_status_t folders_change(const folder_t *add, const char *remove)
{
    const pincer_host_t *host = g_plugin_state.host;
    folders_edit_t edit = { add, remove, { NULL, 0, 0, false }, PINCER_OK };
    pincer_status_t status;

    if (host == NULL)
        return fail(PINCER_FAILED, "the csv plugin is shut down");
    if (PINCER_HAS_SLOT(host, pincer_host_t, settings_update)) {
        status = host->settings_update(host, CSV_SETTINGS_KEY, folders_edit_apply, &edit);
        if (status != PINCER_OK && edit.status != PINCER_OK)
            status = edit.status; /* refused by the edit: t_error says why */
        else if (status != PINCER_OK)
            status = fail(status, "cannot store the csv folder list: %s", host->last_error(host));
    } else {
        char *current = NULL;
        if ((status = read_setting(host, &current)) == PINCER_OK && (status = folders_edit_make(&edit, current)) == PINCER_OK) {
            status = host->settings_set(host, CSV_SETTINGS_KEY, edit.text.len ? edit.text.data : NULL);
            if (status != PINCER_OK)
                status = fail(status, "cannot store the csv folder list: %s", host->last_error(host));
        }
        free(current);
    }
    free(edit.text.data);
    return status;
}

/* ---- folders on disk ----------------------------------------------------- */

static char *join_path(const char *dir, const char *name, const char *suffix)
{
    size_t a = strlen(dir), b = strlen(name), c = strlen(suffix);
    char *path = malloc(a + b + c + 2);
    if (path != NULL) {
        memcpy(path, dir, a);
        path[a] = '/';
        memcpy(path + a + 1, name, b);
        memcpy(path + a + 1 + b, suffix, c + 1);
    }
    return path;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t count)
{
    while (count > 0)
        free(names[--count]);
    free(names);
}

/* The table names in `dir` (regular *.csv files, by name), sorted. */
static pincer_status_t list_tables(const char *dir, char ***out, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t cap = 0;

    *out = NULL;
    *count = 0;
    if (d == NULL)
        return fail(errno == ENOENT ? PINCER_NOT_FOUND : PINCER_FAILED, "cannot read the folder %s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        struct stat st;
        char *path;
        if (len <= 4 || strcmp(e->d_name + len - 4, ".csv") != 0 ||
            utf8_invalid_at((const unsigned char *)e->d_name, len) != len)
            continue;
        if ((path = join_path(dir, e->d_name, "")) == NULL)
            break;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        free(path);
        if (*count == cap) {
            size_t bigger = cap ? cap * 2 : 16;
            char **grown = realloc(names, bigger * sizeof *names);
            if (grown == NULL)
                break;
            names = grown;
            cap = bigger;
        }
        if ((names[*count] = malloc(len - 3)) == NULL)
            break;
        memcpy(names[*count], e->d_name, len - 4);
        names[(*count)++][len - 4] = '\0';
    }
    closedir(d);
    if (e != NULL) { /* left the loop early: out of memory */
        free_names(names, *count);
        *count = 0;
        return out_of_memory();
    }
    if (*count > 1)
        qsort(names, *count, sizeof *names, compare_names);
    *out = names;
    return PINCER_OK;
}

/* ---- sessions ------------------------------------------------------------ */

typedef struct cached {
    char *name;
    table_t *table;
    struct stat file;   /* of the file it was read from; its mode is kept on rewrite */
} cached_t;

struct pincer_db_session {
    char *dir;          /* absolute path of the folder */
    bool writable;
    cached_t *tables;
    size_t table_count, table_cap;
};

/* Same file, size and modification time: the parsed copy is still good. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static pincer_status_t read_file(int fd, const char *path, size_t size, char **out)
{
    char *bytes = malloc(size ? size : 1);
    size_t done = 0;
    if (bytes == NULL)
        return out_of_memory();
    while (done < size) {
        ssize_t got = read(fd, bytes + done, size - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            free(bytes);
            return fail(PINCER_FAILED, "cannot read %s: %s", path, got < 0 ? strerror(errno) : "it shrank while being read");
        }
        done += (size_t)got;
    }
    *out = bytes;
    return PINCER_OK;
}

/* The session's cache entry for table `name`, parsed from the file now
 * unless the cached copy is of the same file, size and mtime. */
static pincer_status_t get_table(pincer_db_session_t *s, const char *name, cached_t **out)
{
    cached_t *entry = NULL;
    struct stat st, after;
    char *path, *bytes = NULL;
    table_t *table;
    pincer_status_t status;
    size_t i;
    int fd;

    if (name[0] == '\0' || strchr(name, '/') != NULL)
        return fail(PINCER_NOT_FOUND, "no table \"%s\": table names are file names without \".csv\"", name);
    if ((path = join_path(s->dir, name, ".csv")) == NULL)
        return out_of_memory();
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO named x.csv must not block us */
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        status = fd >= 0 || errno == ENOENT || errno == ENOTDIR
                     ? fail(PINCER_NOT_FOUND, "no table \"%s\" in %s (there is no file %s.csv)", name, s->dir, name)
                     : fail(PINCER_FAILED, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(path);
        return status;
    }
    for (i = 0; i < s->table_count; i++)
        if (strcmp(s->tables[i].name, name) == 0)
            entry = &s->tables[i];
    if (entry != NULL && entry->table != NULL && same_file(&entry->file, &st)) {
        close(fd);
        free(path);
        *out = entry;
        return PINCER_OK;
    }
    status = (uint64_t)st.st_size >= SIZE_MAX ? out_of_memory() : read_file(fd, path, (size_t)st.st_size, &bytes);
    if (status == PINCER_OK && (fstat(fd, &after) != 0 || !same_file(&st, &after))) {
        /* written in place while we read (our own writes rename instead) */
        free(bytes);
        status = fail(PINCER_FAILED, "%s changed while it was read; try again", path);
    }
    close(fd);
    if (status == PINCER_OK) {
        status = parse_csv(path, bytes, (size_t)st.st_size, &table);
        free(bytes);
    }
    free(path);
    if (status != PINCER_OK)
        return status;
    if (entry == NULL) {
        char *copy = strdup(name);
        if (s->table_count == s->table_cap) {
            size_t cap = s->table_cap ? s->table_cap * 2 : 8;
            cached_t *grown = copy ? realloc(s->tables, cap * sizeof *grown) : NULL;
            if (grown != NULL) { s->tables = grown; s->table_cap = cap; }
        }
        if (copy == NULL || s->table_count == s->table_cap) {
            free(copy);
            table_free(table);
            return out_of_memory();
        }
        entry = &s->tables[s->table_count++];
        memset(entry, 0, sizeof *entry);
        entry->name = copy;
    }
    table_free(entry->table);
    entry->table = table;
    entry->file = st;
    *out = entry;
    return PINCER_OK;
}

static size_t find_column(const table_t *t, const char *name)
{
    size_t c;
    for (c = 0; c < t->column_count; c++)
        if (strcmp(t->fields[c].text, name) == 0)
            return c;
    return SIZE_MAX;
}

/* ---- ordering ------------------------------------------------------------ */

/* SQLite's order of values: NULL < numbers < TEXT < BLOB; numbers by
 * value (an integer against a real exactly), text and blobs bytewise. */
static int type_rank(pincer_db_type_t type)
{
    return type == PINCER_DB_NULL ? 0 : type == PINCER_DB_INTEGER || type == PINCER_DB_REAL ? 1 : type == PINCER_DB_TEXT ? 2 : 3;
}

static int compare_integer_real(int64_t i, double r)
{
    int64_t whole;
    if (r != r)
        return 1; /* NaN (only from a forged cursor) sorts below every number */
    if (r < -9223372036854775808.0)
        return 1;
    if (r >= 9223372036854775808.0)
        return -1;
    whole = (int64_t)r; /* exact: r is in range, truncation toward zero */
    if (i != whole)
        return i < whole ? -1 : 1;
    return r > (double)whole ? -1 : r < (double)whole ? 1 : 0;
}

static int compare_values(const pincer_db_value_t *a, const pincer_db_value_t *b)
{
    int ra = type_rank(a->type), rb = type_rank(b->type), c;
    size_t n;
    if (ra != rb)
        return ra < rb ? -1 : 1;
    switch (ra) {
    case 0:
        return 0;
    case 1:
        if (a->type == PINCER_DB_INTEGER && b->type == PINCER_DB_INTEGER)
            return a->integer < b->integer ? -1 : a->integer > b->integer;
        if (a->type == PINCER_DB_INTEGER)
            return compare_integer_real(a->integer, b->real);
        if (b->type == PINCER_DB_INTEGER)
            return -compare_integer_real(b->integer, a->real);
        if (a->real != a->real || b->real != b->real) /* NaN: only from a forged cursor */
            return (a->real != a->real) == (b->real != b->real) ? 0 : a->real != a->real ? -1 : 1;
        return a->real < b->real ? -1 : a->real > b->real;
    default:
        n = a->length < b->length ? (size_t)a->length : (size_t)b->length;
        c = n ? memcmp(a->bytes, b->bytes, n) : 0;
        if (c != 0)
            return c < 0 ? -1 : 1;
        return a->length < b->length ? -1 : a->length > b->length;
    }
}

typedef struct term { size_t column; bool descending; } term_t;

typedef struct order {
    const table_t *table;
    const term_t *terms;
    size_t count;
} order_t;

/* Compares row `row` with a position: `values` (one per term when
 * `per_term`, else a whole row) and row `key_row`, both rows 0-based. The
 * row number is the last, ascending, tie-break. */
static int compare_to(const order_t *o, size_t row, const pincer_db_value_t *values, bool per_term, size_t key_row)
{
    const pincer_db_value_t *mine = o->table->values + row * o->table->column_count;
    size_t i;
    for (i = 0; i < o->count; i++) {
        int c = compare_values(&mine[o->terms[i].column], &values[per_term ? i : o->terms[i].column]);
        if (c != 0)
            return o->terms[i].descending ? -c : c;
    }
    return row < key_row ? -1 : row > key_row;
}

static int compare_rows(const order_t *o, size_t a, size_t b)
{
    return compare_to(o, a, o->table->values + b * o->table->column_count, false, b);
}

/* A merge sort: qsort has no context argument in C11. */
static void sort_rows(const order_t *o, size_t *rows, size_t *scratch, size_t n)
{
    size_t mid = n / 2, i = 0, j = mid, k = 0;
    if (n < 2)
        return;
    sort_rows(o, rows, scratch, mid);
    sort_rows(o, rows + mid, scratch, n - mid);
    while (i < mid && j < n)
        scratch[k++] = compare_rows(o, rows[i], rows[j]) <= 0 ? rows[i++] : rows[j++];
    while (i < mid)
        scratch[k++] = rows[i++];
    memcpy(rows, scratch, k * sizeof *rows); /* rows[j..n) are already in place */
}

/* The table's rows in this order; the last order is kept, so paging
 * through a table sorts it once. */
static pincer_status_t sorted_rows(table_t *t, const order_t *o, const size_t **out)
{
    strbuf_t key = { NULL, 0, 0, false };
    size_t i, *rows, *scratch;
    for (i = 0; i < o->count; i++)
        sb_printf(&key, "%zu%c,", o->terms[i].column, o->terms[i].descending ? 'd' : 'a');
    sb_append(&key, "", 0);
    if (key.failed)
        return out_of_memory();
    if (t->sorted_by != NULL && strcmp(t->sorted_by, key.data) == 0) {
        free(key.data);
        *out = t->sorted;
        return PINCER_OK;
    }
    rows = malloc((t->row_count ? t->row_count : 1) * sizeof *rows);
    scratch = malloc((t->row_count ? t->row_count : 1) * sizeof *scratch);
    if (rows == NULL || scratch == NULL) {
        free(rows);
        free(scratch);
        free(key.data);
        return out_of_memory();
    }
    for (i = 0; i < t->row_count; i++)
        rows[i] = i;
    if (o->count > 0) /* no terms: file order already */
        sort_rows(o, rows, scratch, t->row_count);
    free(scratch);
    free(t->sorted);
    free(t->sorted_by);
    t->sorted = rows;
    t->sorted_by = key.data;
    *out = rows;
    return PINCER_OK;
}

/* ---- cursors ------------------------------------------------------------- */

/* "csv1.<hash>.<row>[.<value>...]": hash is FNV-1a 64 (16 hex digits) of
 * the object and order terms; row the last row's 1-based number; then its
 * value of each order column: "n" NULL, "i<decimal>", "r<16 hex: the
 * double's bits>", "t<hex bytes>". The next page starts at the first row
 * after that position, found by binary search over the sorted rows; with
 * the values in the cursor, a file changed between pages does not shift
 * the next page by value, only among rows tied on every order column. */
static uint64_t order_hash(const char *object, const pincer_db_order_t *order, uint32_t count)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p;
    uint32_t i;
    for (p = (const unsigned char *)object;; p++) { h = (h ^ *p) * 0x100000001b3ull; if (!*p) break; }
    for (i = 0; i < count; i++) {
        for (p = (const unsigned char *)order[i].column;; p++) { h = (h ^ *p) * 0x100000001b3ull; if (!*p) break; }
        h = (h ^ (order[i].descending ? 'd' : 'a')) * 0x100000001b3ull;
    }
    return h;
}

static void encode_cursor(strbuf_t *sb, uint64_t hash, const order_t *o, size_t row)
{
    const pincer_db_value_t *values = o->table->values + row * o->table->column_count;
    size_t i, k;
    sb_printf(sb, CSV_CURSOR_TAG ".%016" PRIx64 ".%zu", hash, row + 1);
    for (i = 0; i < o->count; i++) {
        const pincer_db_value_t *v = &values[o->terms[i].column];
        uint64_t bits;
        switch (v->type) {
        case PINCER_DB_INTEGER: sb_printf(sb, ".i%" PRId64, v->integer); break;
        case PINCER_DB_REAL: memcpy(&bits, &v->real, sizeof bits); sb_printf(sb, ".r%016" PRIx64, bits); break;
        case PINCER_DB_TEXT:
            sb_puts(sb, ".t");
            for (k = 0; k < v->length; k++)
                sb_printf(sb, "%02x", ((const unsigned char *)v->bytes)[k]);
            break;
        default: sb_puts(sb, ".n"); break;
        }
    }
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool parse_hex64(const char *p, size_t len, uint64_t *out)
{
    size_t i;
    *out = 0;
    if (len != 16)
        return false;
    for (i = 0; i < len; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return false;
        *out = (*out << 4) | (uint64_t)d;
    }
    return true;
}

/* Decodes one ".x..." value of a cursor; text bytes go to *text. */
static bool decode_value(const char *p, size_t len, pincer_db_value_t *v, char **text)
{
    uint64_t bits;
    size_t i;
    memset(v, 0, sizeof *v);
    if (len == 1 && p[0] == 'n')
        return true;
    if (len > 1 && p[0] == 'i') {
        v->type = PINCER_DB_INTEGER;
        return parse_integer(p + 1, len - 1, &v->integer);
    }
    if (len > 1 && p[0] == 'r' && parse_hex64(p + 1, len - 1, &bits)) {
        v->type = PINCER_DB_REAL;
        memcpy(&v->real, &bits, sizeof bits);
        return true;
    }
    if (len >= 1 && p[0] == 't' && (len - 1) % 2 == 0) {
        v->type = PINCER_DB_TEXT;
        v->length = (len - 1) / 2;
        if ((*text = malloc(v->length ? v->length : 1)) == NULL)
            return false;
        v->bytes = *text;
        for (i = 0; i < v->length; i++) {
            int hi = hex_digit(p[1 + 2 * i]), lo = hex_digit(p[2 + 2 * i]);
            if (hi < 0 || lo < 0)
                return false;
            (*text)[i] = (char)(hi * 16 + lo);
        }
        return true;
    }
    return false;
}

/* The next '.'-separated part of a cursor; false after the last one. */
static bool next_part(const char **p, const char **part, size_t *len)
{
    const char *dot;
    if (*p == NULL)
        return false;
    *part = *p;
    dot = strchr(*p, '.');
    *len = dot ? (size_t)(dot - *p) : strlen(*p);
    *p = dot ? dot + 1 : NULL;
    return true;
}

/* Finds where the page after `cursor` starts in `rows`. */
static pincer_status_t seek_cursor(const char *cursor, uint64_t hash, const order_t *o,
                                   const size_t *rows, size_t *start)
{
    pincer_db_value_t *values = calloc(o->count ? o->count : 1, sizeof *values);
    char **texts = calloc(o->count ? o->count : 1, sizeof *texts);
    const char *p = cursor, *part = NULL;
    uint64_t got_hash = 0;
    int64_t row = 0;
    size_t len = 0, i, lo = 0, hi = o->table->row_count;
    pincer_status_t status = PINCER_OK;
    bool ok;

    ok = next_part(&p, &part, &len) && len == 4 && memcmp(part, CSV_CURSOR_TAG, 4) == 0 &&
         next_part(&p, &part, &len) && parse_hex64(part, len, &got_hash) &&
         next_part(&p, &part, &len) && parse_integer(part, len, &row) && row >= 1;
    if (values == NULL || texts == NULL)
        status = out_of_memory();
    else if (ok && got_hash != hash)
        status = fail(PINCER_INVALID_ARGUMENT, "the cursor was made for another table or order; start again without a cursor");
    for (i = 0; ok && status == PINCER_OK && i < o->count; i++)
        ok = next_part(&p, &part, &len) && decode_value(part, len, &values[i], &texts[i]);
    if (status == PINCER_OK && (!ok || p != NULL))
        status = fail(PINCER_INVALID_ARGUMENT, "the cursor \"%.40s%s\" is malformed; pass back a next_cursor exactly as it was returned",
                      cursor, strlen(cursor) > 40 ? "..." : "");
    while (status == PINCER_OK && lo < hi) { /* binary search: the first row after the cursor's */
        size_t mid = lo + (hi - lo) / 2;
        if (compare_to(o, rows[mid], values, true, (size_t)(row - 1)) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *start = lo;
    for (i = 0; texts != NULL && i < o->count; i++)
        free(texts[i]);
    free(texts);
    free(values);
    return status;
}

/* ---- pages --------------------------------------------------------------- */

/* A page of the given rows (0-based indexes) with their keys. */
static pincer_status_t build_page(const table_t *t, const size_t *rows, size_t count, pincer_db_page_t **out)
{
    static const char *const key_columns[] = { "row" };
    pincer_db_page_t *page = arena_new(sizeof *page);
    pincer_db_value_t *values = NULL, *keys = NULL;
    const char **columns = NULL;
    size_t i, c;
    bool ok = page != NULL && mul_fits(count, t->column_count) && mul_fits(count * t->column_count, sizeof *values);

    if (ok) {
        columns = arena_alloc(page, t->column_count * sizeof *columns);
        values = arena_alloc(page, count * t->column_count * sizeof *values);
        keys = arena_alloc(page, count * sizeof *keys);
        ok = columns != NULL && values != NULL && keys != NULL;
    }
    for (c = 0; ok && c < t->column_count; c++)
        ok = (columns[c] = arena_strndup(page, t->fields[c].text, t->fields[c].len)) != NULL;
    for (i = 0; ok && i < count; i++) {
        const pincer_db_value_t *from = t->values + rows[i] * t->column_count;
        for (c = 0; ok && c < t->column_count; c++) {
            pincer_db_value_t *v = &values[i * t->column_count + c];
            *v = from[c];
            if (v->type == PINCER_DB_TEXT) /* copied: the table may be reparsed before release */
                ok = (v->bytes = arena_strndup(page, from[c].bytes, (size_t)from[c].length)) != NULL;
        }
        keys[i].type = PINCER_DB_INTEGER;
        keys[i].integer = (int64_t)rows[i] + 1;
    }
    if (!ok) {
        arena_free(page);
        return out_of_memory();
    }
    page->struct_size = (uint32_t)sizeof *page;
    page->column_count = (uint32_t)t->column_count;
    page->columns = columns;
    page->values = values;
    page->row_count = count;
    page->key_count = 1;
    page->key_columns = key_columns;
    page->keys = keys;
    *out = page;
    return PINCER_OK;
}

/* ---- the adapter: databases and sessions ---------------------------------- */

static pincer_status_t csv_list_databases(void *context, pincer_db_database_list_t **out)
{
    pincer_db_database_list_t *list;
    pincer_db_database_info_t *items = NULL;
    folders_t folders;
    pincer_status_t status;
    size_t i;
    bool ok;

    (void)context;
    if (out == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "list_databases: out is NULL");
    *out = NULL;
    if ((status = folders_load(&folders)) != PINCER_OK)
        return status;
    list = arena_new(sizeof *list);
    ok = list != NULL && (items = arena_alloc(list, (folders.count ? folders.count : 1) * sizeof *items)) != NULL;
    for (i = 0; ok && i < folders.count; i++) {
        char detail[160], **names;
        size_t tables;
        if (list_tables(folders.items[i].path, &names, &tables) == PINCER_OK) {
            snprintf(detail, sizeof detail, "%zu table%s", tables, tables == 1 ? "" : "s");
            free_names(names, tables);
        } else {
            snprintf(detail, sizeof detail, "unreadable: %.140s", t_error);
        }
        items[i].name = arena_strdup(list, folders.items[i].name);
        items[i].location = arena_strdup(list, folders.items[i].path);
        items[i].detail = arena_strdup(list, detail);
        items[i].capabilities = CSV_CAPABILITIES;
        ok = items[i].name && items[i].location && items[i].detail;
    }
    if (!ok) {
        arena_free(list);
        folders_free(&folders);
        return out_of_memory();
    }
    list->struct_size = (uint32_t)sizeof *list;
    list->count = (uint32_t)folders.count;
    list->item_size = (uint32_t)sizeof *items;
    list->items = items;
    folders_free(&folders);
    *out = list;
    return PINCER_OK;
}

/* `database` is a configured folder's name or a path to any folder. The
 * timeout is not used: every call here is bounded by the file's size. */
static pincer_status_t csv_open(void *context, const char *database, uint32_t flags, uint32_t timeout_ms,
                                pincer_db_session_t **out)
{
    pincer_db_session_t *s;
    folders_t folders;
    const folder_t *folder;
    struct stat st;
    char *dir;
    pincer_status_t status;

    (void)context;
    (void)timeout_ms;
    if (out == NULL || database == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "open: %s is NULL", out == NULL ? "out" : "database");
    *out = NULL;
    if ((status = folders_load(&folders)) != PINCER_OK)
        return status;
    folder = folders_find(&folders, database);
    dir = realpath(folder ? folder->path : database, NULL);
    if (dir == NULL || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        status = folder ? fail(PINCER_NOT_FOUND, "the folder of \"%s\" is gone: %s", database, folder->path)
                        : fail(PINCER_NOT_FOUND, "no CSV folder named \"%s\" (csv.folders lists them) and no folder at that path", database);
        free(dir);
        folders_free(&folders);
        return status;
    }
    folders_free(&folders);
    if ((s = calloc(1, sizeof *s)) == NULL) {
        free(dir);
        return out_of_memory();
    }
    s->dir = dir;
    s->writable = (flags & PINCER_DB_OPEN_WRITE) != 0;
    *out = s;
    return PINCER_OK;
}

static void csv_close(void *context, pincer_db_session_t *s)
{
    size_t i;
    (void)context;
    if (s == NULL)
        return;
    for (i = 0; i < s->table_count; i++) {
        free(s->tables[i].name);
        table_free(s->tables[i].table);
    }
    free(s->tables);
    free(s->dir);
    free(s);
}

static pincer_status_t csv_list_objects(void *context, pincer_db_session_t *s, pincer_db_object_list_t **out)
{
    pincer_db_object_list_t *list;
    pincer_db_object_info_t *items = NULL;
    char **names;
    size_t count, i;
    pincer_status_t status;
    bool ok;

    (void)context;
    if (s == NULL || out == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "list_objects: session or out is NULL");
    *out = NULL;
    if ((status = list_tables(s->dir, &names, &count)) != PINCER_OK)
        return status;
    list = arena_new(sizeof *list);
    ok = list != NULL && count <= UINT32_MAX &&
         (items = arena_alloc(list, (count ? count : 1) * sizeof *items)) != NULL;
    for (i = 0; ok && i < count; i++) {
        items[i].kind = PINCER_DB_OBJECT_TABLE;
        ok = (items[i].name = arena_strdup(list, names[i])) != NULL;
    }
    free_names(names, count);
    if (!ok) {
        arena_free(list);
        return out_of_memory();
    }
    list->struct_size = (uint32_t)sizeof *list;
    list->count = (uint32_t)count;
    list->item_size = (uint32_t)sizeof *items;
    list->items = items;
    *out = list;
    return PINCER_OK;
}

static const char *type_name(pincer_db_type_t type)
{
    return type == PINCER_DB_INTEGER ? "INTEGER" : type == PINCER_DB_REAL ? "REAL" : "TEXT";
}

static pincer_status_t csv_describe(void *context, pincer_db_session_t *s, const char *object,
                                    pincer_db_description_t **out)
{
    static const char *const key_columns[] = { "row" };
    pincer_db_description_t *d;
    pincer_db_column_t *columns = NULL;
    cached_t *entry;
    const table_t *t;
    pincer_status_t status;
    size_t c;
    bool ok;

    (void)context;
    if (s == NULL || object == NULL || out == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "describe: session, object or out is NULL");
    *out = NULL;
    if ((status = get_table(s, object, &entry)) != PINCER_OK)
        return status;
    t = entry->table;
    d = arena_new(sizeof *d);
    ok = d != NULL && (columns = arena_alloc(d, t->column_count * sizeof *columns)) != NULL &&
         (d->name = arena_strdup(d, object)) != NULL;
    for (c = 0; ok && c < t->column_count; c++) {
        columns[c].name = arena_strndup(d, t->fields[c].text, t->fields[c].len);
        columns[c].declared_type = type_name(t->types[c]); /* static strings live as long as the library */
        ok = columns[c].name != NULL;
    }
    if (!ok) {
        arena_free(d);
        return out_of_memory();
    }
    d->struct_size = (uint32_t)sizeof *d;
    d->kind = PINCER_DB_OBJECT_TABLE;
    d->column_count = (uint32_t)t->column_count;
    d->column_size = (uint32_t)sizeof *columns;
    d->columns = columns;
    d->foreign_key_size = (uint32_t)sizeof(pincer_db_foreign_key_t);
    d->index_size = (uint32_t)sizeof(pincer_db_index_t);
    d->identity = PINCER_DB_IDENTITY_ROWID;
    d->key_count = 1;
    d->key_columns = key_columns;
    *out = d;
    return PINCER_OK;
}

/* ---- the adapter: reading ------------------------------------------------- */

static pincer_status_t resolve_order(const table_t *t, const char *object, const pincer_db_page_request_t *r,
                                     term_t **out)
{
    term_t *terms = calloc(r->order_count ? r->order_count : 1, sizeof *terms);
    uint32_t i;
    if (terms == NULL)
        return out_of_memory();
    for (i = 0; i < r->order_count; i++) {
        if (r->order[i].column == NULL) {
            free(terms);
            return fail(PINCER_INVALID_ARGUMENT, "read_page: order term %u has no column", i + 1);
        }
        if ((terms[i].column = find_column(t, r->order[i].column)) == SIZE_MAX) {
            free(terms);
            return fail(PINCER_INVALID_ARGUMENT, "cannot order by \"%s\": table \"%s\" has no such column",
                        r->order[i].column, object);
        }
        terms[i].descending = r->order[i].descending != 0;
    }
    *out = terms;
    return PINCER_OK;
}

static pincer_status_t csv_read_page(void *context, pincer_db_session_t *s, const pincer_db_page_request_t *r,
                                     pincer_db_page_t **out)
{
    cached_t *entry;
    term_t *terms = NULL;
    order_t order;
    const size_t *rows = NULL;
    size_t start = 0, end, n;
    uint64_t hash;
    pincer_status_t status;

    (void)context;
    if (s == NULL || r == NULL || out == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "read_page: session, request or out is NULL");
    *out = NULL;
    if (r->struct_size < sizeof *r)
        return fail(PINCER_INVALID_ARGUMENT, "read_page: request struct_size %u is smaller than %zu", r->struct_size, sizeof *r);
    if (r->object == NULL || (r->order_count > 0 && r->order == NULL))
        return fail(PINCER_INVALID_ARGUMENT, "read_page: the request has no %s", r->object == NULL ? "object" : "order terms");
    if (r->limit == 0)
        return fail(PINCER_INVALID_ARGUMENT, "read_page: limit must be at least 1");
    if ((status = get_table(s, r->object, &entry)) != PINCER_OK)
        return status;
    if ((status = resolve_order(entry->table, r->object, r, &terms)) != PINCER_OK)
        return status;
    order.table = entry->table;
    order.terms = terms;
    order.count = r->order_count;
    hash = order_hash(r->object, r->order, r->order_count);
    status = sorted_rows(entry->table, &order, &rows);
    n = entry->table->row_count;
    if (status == PINCER_OK && r->cursor != NULL)
        status = seek_cursor(r->cursor, hash, &order, rows, &start);
    else
        start = r->offset < n ? (size_t)r->offset : n;
    end = r->limit < n - start ? start + (size_t)r->limit : n;
    if (status == PINCER_OK)
        status = build_page(entry->table, rows + start, end - start, out);
    if (status == PINCER_OK) {
        (*out)->paging = r->cursor != NULL ? PINCER_DB_PAGING_KEYSET : PINCER_DB_PAGING_OFFSET;
        if (end < n) { /* more rows follow: a cursor at the page's last row */
            strbuf_t sb = { NULL, 0, 0, false };
            (*out)->flags |= PINCER_DB_PAGE_MORE;
            encode_cursor(&sb, hash, &order, rows[end - 1]);
            if (sb.failed || ((*out)->next_cursor = arena_strdup(*out, sb.data)) == NULL) {
                arena_free(*out);
                *out = NULL;
                status = out_of_memory();
            }
            free(sb.data);
        }
    }
    free(terms);
    return status;
}

static pincer_status_t csv_count(void *context, pincer_db_session_t *s, const char *object, uint64_t limit,
                                 uint64_t *count, bool *exact)
{
    cached_t *entry;
    pincer_status_t status;
    (void)context;
    if (s == NULL || object == NULL || count == NULL || exact == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "count: session, object, count or exact is NULL");
    if ((status = get_table(s, object, &entry)) != PINCER_OK)
        return status;
    *exact = limit == 0 || entry->table->row_count <= limit;
    *count = *exact ? entry->table->row_count : limit;
    return PINCER_OK;
}

/* ---- the adapter: writing -------------------------------------------------- */

/* Row and column values as fields; numbers are formatted into `numbers`,
 * 32 bytes per column. */
static pincer_status_t assign_values(const table_t *t, const char *object, const char *const *columns,
                                     const pincer_db_value_t *values, uint32_t count, field_t *row, char *numbers)
{
    bool *seen = calloc(t->column_count ? t->column_count : 1, sizeof *seen);
    pincer_status_t status = PINCER_OK;
    uint32_t i;
    if (seen == NULL)
        return out_of_memory();
    for (i = 0; i < count && status == PINCER_OK; i++) {
        const pincer_db_value_t *v = &values[i];
        size_t c = columns[i] ? find_column(t, columns[i]) : SIZE_MAX;
        field_t *f;
        char *number;
        if (c == SIZE_MAX) {
            status = fail(PINCER_INVALID_ARGUMENT, "table \"%s\" has no column \"%s\"", object, columns[i] ? columns[i] : "(NULL)");
            break;
        }
        if (seen[c]) {
            status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\" is given twice", columns[i]);
            break;
        }
        seen[c] = true;
        f = &row[c];
        number = numbers + 32 * c;
        memset(f, 0, sizeof *f);
        f->text = "";
        switch (v->type) {
        case PINCER_DB_NULL: f->null = true; break;
        case PINCER_DB_INTEGER: f->len = (size_t)snprintf(number, 32, "%" PRId64, v->integer); f->text = number; break;
        case PINCER_DB_REAL:
            if (!isfinite(v->real))
                status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\": NaN and infinities cannot be stored as CSV numbers", columns[i]);
            f->len = (size_t)snprintf(number, 32, "%.17g", v->real);
            f->text = number;
            break;
        case PINCER_DB_TEXT:
            if (v->length > 0 && v->bytes == NULL)
                status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\": text value without bytes", columns[i]);
            else if (v->length >= SIZE_MAX || utf8_invalid_at(v->bytes, (size_t)v->length) != (size_t)v->length)
                status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\": the text is not valid UTF-8", columns[i]);
            else if (v->length > 0) {
                f->text = v->bytes;
                f->len = (size_t)v->length;
            }
            break;
        case PINCER_DB_BLOB:
            status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\": a CSV file cannot hold BLOB values", columns[i]);
            break;
        default:
            status = fail(PINCER_INVALID_ARGUMENT, "column \"%s\": unknown value type %u", columns[i], v->type);
        }
    }
    free(seen);
    return status;
}

/* The 0-based row a key names: one INTEGER (an integral REAL or decimal
 * TEXT is taken too), 1 ... row_count. */
static pincer_status_t key_to_row(const table_t *t, const char *object, const pincer_db_value_t *key,
                                  uint32_t key_count, size_t *row)
{
    int64_t number = 0;
    bool ok = key != NULL && key_count == 1;
    if (ok && key->type == PINCER_DB_INTEGER)
        number = key->integer;
    else if (ok && key->type == PINCER_DB_REAL && key->real >= 1 && key->real < 9e18 &&
             key->real == (double)(int64_t)key->real)
        number = (int64_t)key->real;
    else if (ok && key->type == PINCER_DB_TEXT && key->bytes != NULL && key->length < 32) {
        char text[32];
        memcpy(text, key->bytes, (size_t)key->length);
        ok = parse_integer(text, (size_t)key->length, &number);
    } else
        ok = false;
    if (!ok)
        return fail(PINCER_INVALID_ARGUMENT, "a row of \"%s\" is addressed by one key, its row number (an integer)", object);
    if (number < 1 || (uint64_t)number > t->row_count)
        return fail(PINCER_NOT_FOUND, "table \"%s\" has no row %" PRId64 " (it has %zu)", object, number, t->row_count);
    *row = (size_t)(number - 1);
    return PINCER_OK;
}

/* Writes the table with `rows` (row_count rows of fields) to a temporary
 * file in the same folder, fsyncs it and renames it over the original, so
 * the file is either wholly old or wholly new. The text is parsed back
 * first: what is installed in the cache is exactly what a reader will get,
 * and *last_row (when not NULL) is the last row as stored, built before the
 * rename so that a failure anywhere leaves the file as it was. */
static pincer_status_t rewrite(pincer_db_session_t *s, cached_t *entry, const char *object,
                               const field_t *const *rows, size_t row_count, pincer_db_page_t **last_row)
{
    strbuf_t sb = { NULL, 0, 0, false };
    table_t *fresh = NULL;
    char *path = join_path(s->dir, object, ".csv"), *tmp = NULL;
    const char *step = NULL;
    pincer_status_t status = PINCER_OK;
    struct stat st;
    size_t i, done = 0;
    bool created = false;
    int fd = -1;

    if (entry->table->bom)
        sb_append(&sb, "\xEF\xBB\xBF", 3);
    write_record(&sb, entry->table, entry->table->fields);
    for (i = 0; i < row_count; i++)
        write_record(&sb, entry->table, rows[i]);
    if (sb.failed || path == NULL || (tmp = malloc(strlen(s->dir) + strlen(object) + 16)) == NULL) {
        status = out_of_memory();
        goto done;
    }
    if ((status = parse_csv(path, sb.data, sb.len, &fresh)) != PINCER_OK) {
        status = fail(PINCER_FAILED, "internal error: the rewritten table would not read back (%s)", t_error);
        goto done;
    }
    if (last_row != NULL) {
        size_t last = fresh->row_count - 1;
        if ((status = build_page(fresh, &last, 1, last_row)) != PINCER_OK)
            goto done;
        (*last_row)->changes = 1;
    }
    sprintf(tmp, "%s/.%s.csv.XXXXXX", s->dir, object);
    if ((fd = mkstemp(tmp)) < 0) { step = "create a temporary file beside"; goto io_error; }
    created = true;
    if (fchmod(fd, entry->file.st_mode & 07777) != 0) { step = "set the mode of the temporary file for"; goto io_error; }
    while (done < sb.len) {
        ssize_t n = write(fd, sb.data + done, sb.len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) { step = "write the temporary file for"; goto io_error; }
        done += (size_t)n;
    }
    if (fsync(fd) != 0) { step = "flush the temporary file for"; goto io_error; }
    if (fstat(fd, &st) != 0) { step = "stat the temporary file for"; goto io_error; }
    if (close(fd) != 0) { fd = -1; step = "close the temporary file for"; goto io_error; }
    fd = -1;
    if (rename(tmp, path) != 0) { step = "replace"; goto io_error; }
    {   /* make the rename itself durable; the data is safe either way */
        int dir = open(s->dir, O_RDONLY);
        if (dir >= 0) {
            (void)fsync(dir);
            close(dir);
        }
    }
    table_free(entry->table);
    entry->table = fresh;
    entry->file = st;
    fresh = NULL;
    goto done;

io_error:
    status = fail(PINCER_FAILED, "cannot %s %s: %s (the file is unchanged)", step, path, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    if (last_row != NULL) {
        arena_free(*last_row);
        *last_row = NULL;
    }
done:
    table_free(fresh);
    free(sb.data);
    free(path);
    free(tmp);
    return status;
}

typedef enum write_kind { WRITE_INSERT, WRITE_UPDATE, WRITE_REMOVE } write_kind_t;

/* insert, update and remove: the checks, then the table's new rows, then
 * rewrite(). The new or changed row's numbers are formatted into
 * `numbers`, 32 bytes per column. */
static pincer_status_t write_row(pincer_db_session_t *s, write_kind_t kind, const char *object,
                                 const pincer_db_value_t *key, uint32_t key_count, const char *const *columns,
                                 const pincer_db_value_t *values, uint32_t count, pincer_db_page_t **out_row)
{
    static const char *const verbs[] = { "insert into", "update", "delete from" };
    const char *verb = verbs[kind];
    const field_t **rows = NULL;
    field_t *row = NULL;
    char *numbers = NULL;
    size_t index = 0, row_count, r;
    cached_t *entry;
    const table_t *t;
    pincer_status_t status;

    if (out_row != NULL)
        *out_row = NULL;
    if (s == NULL || object == NULL)
        return fail(PINCER_INVALID_ARGUMENT, "%s: session or object is NULL", verb);
    if (count > 0 && (columns == NULL || values == NULL))
        return fail(PINCER_INVALID_ARGUMENT, "%s: %u columns but no column or value array", verb, count);
    if (!s->writable)
        return fail(PINCER_UNSUPPORTED, "session is read-only: open %s with write access to %s \"%s\"", s->dir, verb, object);
    if ((status = get_table(s, object, &entry)) != PINCER_OK)
        return status;
    t = entry->table;
    if (kind != WRITE_INSERT && (status = key_to_row(t, object, key, key_count, &index)) != PINCER_OK)
        return status;
    if (kind == WRITE_UPDATE && count == 0)
        return PINCER_OK; /* nothing to change */
    row = calloc(t->column_count, sizeof *row);
    numbers = calloc(t->column_count, 32);
    rows = malloc((t->row_count + 1) * sizeof *rows);
    if (row == NULL || numbers == NULL || rows == NULL) {
        status = out_of_memory();
        goto done;
    }
    for (r = 0; r < t->row_count; r++)
        rows[r] = table_row(t, r);
    row_count = t->row_count;
    if (kind == WRITE_REMOVE) { /* later rows move up one: row numbers are positions */
        memmove(rows + index, rows + index + 1, (row_count - index - 1) * sizeof *rows);
        row_count--;
    } else {
        if (kind == WRITE_UPDATE)
            memcpy(row, rows[index], t->column_count * sizeof *row);
        else
            for (index = row_count++, r = 0; r < t->column_count; r++) {
                row[r].text = "";
                row[r].null = true; /* columns not named are NULL */
            }
        if ((status = assign_values(t, object, columns, values, count, row, numbers)) != PINCER_OK)
            goto done;
        rows[index] = row;
    }
    status = rewrite(s, entry, object, rows, row_count, kind == WRITE_INSERT ? out_row : NULL);
done:
    free(row);
    free(numbers);
    free(rows);
    return status;
}

static pincer_status_t csv_insert(void *context, pincer_db_session_t *s, const char *object,
                                  const char *const *columns, const pincer_db_value_t *values, uint32_t count,
                                  pincer_db_page_t **out_row)
{
    (void)context;
    return write_row(s, WRITE_INSERT, object, NULL, 0, columns, values, count, out_row);
}

static pincer_status_t csv_update(void *context, pincer_db_session_t *s, const char *object,
                                  const pincer_db_value_t *key, uint32_t key_count, const char *const *columns,
                                  const pincer_db_value_t *values, uint32_t count)
{
    (void)context;
    return write_row(s, WRITE_UPDATE, object, key, key_count, columns, values, count, NULL);
}

static pincer_status_t csv_remove(void *context, pincer_db_session_t *s, const char *object,
                                  const pincer_db_value_t *key, uint32_t key_count)
{
    (void)context;
    return write_row(s, WRITE_REMOVE, object, key, key_count, NULL, NULL, 0, NULL);
}

static void csv_release(void *context, void *result)
{
    (void)context;
    arena_free(result);
}

static const char *csv_last_error(void *context)
{
    (void)context;
    return t_error; /* "" until a call on this thread fails */
}

/* ---- commands ------------------------------------------------------------ */

static pincer_status_t reply_error(pincer_call_t *call, pincer_status_t status)
{
    call->fail(call, t_error);
    return status;
}

/* Folder names appear in "csv:<name>" and in the settings' "name=path"
 * lines, so they are kept to letters, digits, '_', '-' and '.'. */
static bool valid_name(const char *name)
{
    size_t i, n = strlen(name);
    if (n == 0 || n > CSV_NAME_MAX || name[0] == '.' || name[0] == '-')
        return false;
    for (i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* The folder's base name with other characters turned into '-'. */
static void default_name(const char *path, char name[CSV_NAME_MAX + 1])
{
    const char *base = strrchr(path, '/');
    size_t n = 0;
    for (base = base ? base + 1 : path; *base && n < CSV_NAME_MAX; base++) {
        char c = *base;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                     (c == '.' && n > 0);
        if (plain || (n > 0 && name[n - 1] != '-'))
            name[n++] = plain ? c : '-';
    }
    while (n > 0 && (name[n - 1] == '-' || name[n - 1] == '.'))
        n--;
    name[n] = '\0';
}

/* add(path: string, name: string = "") -> string */
static pincer_status_t cmd_add(void *context, pincer_call_t *call, const char *path, const char *name)
{
    char derived[CSV_NAME_MAX + 1], **names;
    strbuf_t message = { NULL, 0, 0, false };
    folder_t added;
    struct stat st;
    size_t tables = 0;
    pincer_status_t status;
    char *real;

    (void)context;
    if (path[0] == '\0')
        return reply_error(call, fail(PINCER_INVALID_ARGUMENT, "give the path of a folder"));
    if ((real = realpath(path, NULL)) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        status = fail(PINCER_NOT_FOUND, "%s is not a folder%s%s", path, real ? "" : ": ", real ? "" : strerror(errno));
        free(real);
        return reply_error(call, status);
    }
    if (strchr(real, '\n') != NULL) { /* the list is one line per folder */
        free(real);
        return reply_error(call, fail(PINCER_INVALID_ARGUMENT, "the folder's path contains a line break"));
    }
    if (name[0] != '\0' && !valid_name(name)) {
        free(real);
        return reply_error(call, fail(PINCER_INVALID_ARGUMENT,
                                      "\"%s\" cannot be a name: use letters, digits, '_', '-' and '.' (at most %d bytes)",
                                      name, CSV_NAME_MAX));
    }
    if (name[0] != '\0')
        strcpy(derived, name); /* valid_name bounds it */
    else if (default_name(real, derived), !valid_name(derived)) {
        status = fail(PINCER_INVALID_ARGUMENT, "cannot make a name from %s; pass one with --name", real);
        free(real);
        return reply_error(call, status);
    }
    added.name = derived;
    added.path = real;
    status = folders_change(&added, NULL);
    if (status != PINCER_OK) {
        free(real);
        return reply_error(call, status);
    }
    if (list_tables(real, &names, &tables) == PINCER_OK)
        free_names(names, tables);
    sb_puts(&message, "added \"");
    sb_puts(&message, derived);
    sb_puts(&message, "\": ");
    sb_puts(&message, real);
    sb_printf(&message, " (%zu table%s)", tables, tables == 1 ? "" : "s");
    free(real);
    /* the folder is stored; a message lost to memory is not worth failing for */
    call->return_string(call, message.failed ? "added" : message.data);
    free(message.data);
    return PINCER_OK;
}

/* remove(name: string) */
static pincer_status_t cmd_remove(void *context, pincer_call_t *call, const char *name)
{
    pincer_status_t status;

    (void)context;
    status = folders_change(NULL, name);
    return status == PINCER_OK ? PINCER_OK : reply_error(call, status);
}

/* folders() -> string */
static pincer_status_t cmd_folders(void *context, pincer_call_t *call)
{
    strbuf_t sb = { NULL, 0, 0, false };
    folders_t folders;
    pincer_status_t status;
    size_t i;

    (void)context;
    if ((status = folders_load(&folders)) != PINCER_OK)
        return reply_error(call, status);
    sb_append(&sb, "", 0);
    for (i = 0; i < folders.count; i++) {
        sb_printf(&sb, "%s", i ? "\n" : "");
        sb_puts(&sb, folders.items[i].name);
        sb_puts(&sb, "\t");
        sb_puts(&sb, folders.items[i].path);
    }
    folders_free(&folders);
    if (sb.failed) {
        free(sb.data);
        return reply_error(call, out_of_memory());
    }
    call->return_string(call, sb.data);
    free(sb.data);
    return PINCER_OK;
}

/* ---- registration ---------------------------------------------------------- */

#define TYPED(fn) ((pincer_typed_fn_t)(fn))

static pincer_status_t csv_init(void *context, const pincer_host_t *host, pincer_call_t *reply)
{
    csv_plugin_t *plugin = context;
    const pincer_command_t commands[] = {
        { sizeof(pincer_command_t), PINCER_COMMAND_CHANGES_STATE, "add(path: string, name: string = \"\") -> string",
          "Offer a folder of CSV files to the database browser",
          "Each *.csv file directly in the folder is a table. The name defaults to the folder's base name; "
          "db.tables <name> then lists the tables.", TYPED(cmd_add), NULL, plugin },
        { sizeof(pincer_command_t), PINCER_COMMAND_CHANGES_STATE, "remove(name: string)",
          "Forget a CSV folder (its files are not touched)", NULL, TYPED(cmd_remove), NULL, plugin },
        { sizeof(pincer_command_t), 0, "folders() -> string", "List the CSV folders: name<TAB>path per line",
          NULL, TYPED(cmd_folders), NULL, plugin },
    };
    const pincer_database_service_t *service;
    pincer_db_adapter_t *a = &plugin->adapter;
    pincer_status_t status;
    size_t i;

    if (!PINCER_HAS_SLOT(host, pincer_host_t, last_error)) {
        reply->fail(reply, "csv: the host API table is smaller than ABI 1.0");
        return PINCER_UNSUPPORTED;
    }
    service = host->get_service(host, PINCER_DATABASE_SERVICE_ID);
    if (service == NULL) {
        reply->fail(reply, "the database browser (pincer.database/1) is not loaded; the csv adapter needs the db plugin");
        return PINCER_UNSUPPORTED;
    }
    if (!PINCER_HAS_SERVICE_SLOT(service, pincer_database_service_t, last_error)) {
        reply->fail(reply, "csv: the pincer.database/1 service table is smaller than version 1.0");
        return PINCER_UNSUPPORTED;
    }
    plugin->host = host;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if ((status = host->add_command(host, &commands[i])) != PINCER_OK) {
            reply->fail(reply, host->last_error(host));
            plugin->host = NULL;
            return status;
        }
    }

    memset(a, 0, sizeof *a);
    a->struct_size = (uint32_t)sizeof *a;
    a->capabilities = CSV_CAPABILITIES;
    a->id = CSV_ADAPTER_ID;
    a->name = "CSV folders";
    a->context = plugin;
    a->list_databases = csv_list_databases;
    a->open = csv_open;
    a->close = csv_close;
    a->list_objects = csv_list_objects;
    a->describe = csv_describe;
    a->read_page = csv_read_page;
    a->count = csv_count;
    a->insert = csv_insert;
    a->update = csv_update;
    a->remove = csv_remove;
    a->release = csv_release;
    a->last_error = csv_last_error;
    /* execute and cancel stay NULL: no CAN_QUERY, no CAN_CANCEL */
    if ((status = service->register_adapter(service->header.context, a)) != PINCER_OK) {
        reply->fail(reply, service->last_error(service->header.context));
        plugin->host = NULL;
        return status;
    }
    plugin->service = service;
    return PINCER_OK;
}

/* After unregister_adapter returns the browser calls nothing of ours. */
static void csv_shutdown(void *context)
{
    csv_plugin_t *plugin = context;
    if (plugin->service != NULL)
        (void)plugin->service->unregister_adapter(plugin->service->header.context, CSV_ADAPTER_ID);
    plugin->service = NULL;
    plugin->host = NULL;
}

static const pincer_plugin_t g_plugin = {
    PINCER_PLUGIN_MAGIC,
    PINCER_ABI_MAJOR,
    PINCER_ABI_MINOR,
    (uint32_t)sizeof(pincer_plugin_t),
    "dev.pincer.example.csv",                                  /* id */
    "csv",                                                     /* short_name */
    "CSV Folders",                                             /* name */
    "1.0.0",                                                   /* version */
    "Folders of CSV files as databases for the db browser",    /* summary */
    &g_plugin_state,                                           /* context */
    csv_init,
    csv_shutdown,
    NULL,                                                      /* sync_entries (ABI 1.5) */
};

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor);

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    /* The host checks the major itself and reports a mismatch clearly. */
    (void)host_abi_major;
    (void)host_abi_minor;
    return &g_plugin;
}
