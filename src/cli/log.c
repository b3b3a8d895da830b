#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "sanitize.h"

int ih_verbosity;

void ih_say(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ih_sanitize_line(line);
    fprintf(stderr, "imghist: %s\n", line);
}
