#include "sanitize.h"

void ih_sanitize_line(char *s)
{
    for (; *s != '\0'; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) {
            *s = '?';
        }
    }
}

size_t ih_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    const unsigned c = s[0];
    if (c < 0x80) {
        return 1;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong three-byte forms */
        hi = c == 0xed ? 0x9f : 0xbf; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
    } else {
        return 0; /* a continuation byte, C0, C1 or F5-FF */
    }
    if (s[1] < lo || s[1] > hi) {
        return 0;
    }
    for (size_t k = 2; k < n; k++) {
        if (s[k] < 0x80 || s[k] > 0xbf) {
            return 0;
        }
    }
    return n;
}
