#include <sqlite3.h>
/* SQLITE_TRANSIENT is a cast macro Swift cannot import. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
/* sqlite3_db_config is variadic, which Swift cannot call: one int option. */
static inline int csqlite_db_config_int(sqlite3 *db, int op, int value) { return sqlite3_db_config(db, op, value, (int *)0); }
