/* Messages are one line: control characters that came in with a file name or
 * an argument (a newline, an escape sequence) are shown as '?'. */
#ifndef IMGHIST_SANITIZE_H
#define IMGHIST_SANITIZE_H

/* Replace every byte below 0x20 and 0x7f in s, in place. */
void ih_sanitize_line(char *s);

#endif
