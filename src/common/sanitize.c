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
