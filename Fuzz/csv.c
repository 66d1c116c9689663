/* The CSV adapter's reader (Plugins/Examples/CSVAdapter, C): parse a file,
 * write it back as the adapter rewrites files, and parse that again; the
 * two tables must hold the same fields. Includes the adapter's source to
 * reach its static functions. */
#include "../Plugins/Examples/CSVAdapter/csv_adapter.c"

static void fuzz_abort(const char *why)
{
    fprintf(stderr, "csv fuzz: %s\n", why);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    table_t *t = NULL, *again = NULL;
    strbuf_t sb = {0};
    size_t r, c, total;
    pincer_db_value_t v;
    char *text = NULL;

    if (decode_value((const char *)data, size, &v, &text) && v.type == PINCER_DB_TEXT && v.length > size)
        fuzz_abort("a cursor value longer than its text");
    free(text);
    if (parse_csv("fuzz.csv", (const char *)data, size, &t) != PINCER_OK)
        return 0;
    if (t->bom)
        sb_append(&sb, "\xEF\xBB\xBF", 3);
    for (r = 0; r <= t->row_count; r++)
        write_record(&sb, t, t->fields + r * t->column_count);
    if (sb.failed)
        fuzz_abort("the writer ran out of memory");
    if (parse_csv("again.csv", sb.data ? sb.data : "", sb.len, &again) != PINCER_OK)
        fuzz_abort(t_error);
    if (again->column_count != t->column_count || again->row_count != t->row_count)
        fuzz_abort("the rewritten table has another shape");
    total = (t->row_count + 1) * t->column_count;
    for (c = 0; c < total; c++) {
        const field_t *a = &t->fields[c], *b = &again->fields[c];
        if (a->null != b->null || a->len != b->len || memcmp(a->text, b->text, a->len) != 0)
            fuzz_abort("a field changed in the rewrite");
    }
    free(sb.data);
    table_free(t);
    table_free(again);
    return 0;
}
