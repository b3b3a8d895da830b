/* Messages are one line: control characters that came in with a file name or
 * an argument (a newline, an escape sequence) are shown as '?'. */
#ifndef IMGHIST_SANITIZE_H
#define IMGHIST_SANITIZE_H

/* Replace every byte below 0x20 and 0x7f in s, in place. */
void ih_sanitize_line(char *s);

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence s starts with (1 to 4; RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or 0 when
 * s[0] does not start one. s is NUL-terminated. */
size_t ih_utf8_len(const char *s);

#endif
