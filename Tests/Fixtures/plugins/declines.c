/* Fixture: pincer_plugin_entry returns NULL (refused: the plugin declined to load). */
#include <pincer.h>

PINCER_EXTERN_C PINCER_EXPORT const pincer_plugin_t *pincer_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor)
{
    (void)host_abi_major; (void)host_abi_minor;
    return NULL;
}
