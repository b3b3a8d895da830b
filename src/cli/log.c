#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sanitize.h"

int ih_verbosity;

void ih_say(const char *fmt, ...)
{
    char small[1200];
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    /* A longer line (a path near PATH_MAX and the reason after it) whole. */
    char *line = small;
    if (n >= (int)sizeof small && (line = malloc((size_t)n + 1)) != NULL) {
        vsnprintf(line, (size_t)n + 1, fmt, again);
    } else if (line == NULL) {
        line = small;
    }
    va_end(again);
    ih_sanitize_line(line);
    fprintf(stderr, "imghist: %s\n", line);
    if (line != small) {
        free(line);
    }
}
