/* What a run tells its user: one-line messages on stderr, how much to say,
 * and the process's exit statuses. */
#ifndef IMGHIST_CLI_LOG_H
#define IMGHIST_CLI_LOG_H

enum { IH_EXIT_OK = 0, IH_EXIT_FILE = 1, IH_EXIT_USAGE = 2 };

/* -1 quiet, 0 normal, 1 verbose. */
extern int ih_verbosity;

/* What a --range over an image whose 16-bit or float samples were made
 * 8-bit (the default --depth 8) says: the range applies to 0..255. */
#define IH_REDUCED_WARNING                                                                   \
    "its 16-bit or float samples are counted as 8-bit ones (0 to 255); --depth native " \
    "counts its own"

/* What --read-truncated says of a JPEG that ended early. */
#define IH_TRUNCATED_WARNING \
    "JPEG data ends early; read as OpenCV reads it, the rest of the picture made up"

/* One line on stderr, "imghist: " first; control characters that came with a
 * file name or an argument are shown as '?'. */
void ih_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
