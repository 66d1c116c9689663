/* Fixture: a valid shared library that exports `hello` but no pincer_plugin_entry (refused: missing entry symbol). */
#include <pincer.h>

PINCER_EXPORT int hello(void);

PINCER_EXPORT int hello(void)
{
    return 42;
}
