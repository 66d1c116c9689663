/* <stdlib.h> first: libunistring's <unistring/stdint.h> #defines int32_t,
 * and a <stdlib.h> parsed after that clashes with Glibc's module. */
#include <stdlib.h>
#include <string.h> /* memchr, memcmp for the redactor's JSON splicer */
#include <unistr.h>
#include <uninorm.h>

/* NFKC of `length` UTF-8 bytes; returns a malloc'ed buffer (free it) and its
 * length in *result_length, or NULL when the input is not valid UTF-8. */
static inline uint8_t *cunistring_nfkc(const uint8_t *s, size_t length, size_t *result_length) {
    *result_length = 0;
    if (u8_check(s, length) != NULL) return NULL;
    return u8_normalize(UNINORM_NFKC, s, length, NULL, result_length);
}
