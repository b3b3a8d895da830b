/* Reading a whole stream into memory under a byte limit, for the loader
 * (files) and the CLI (standard input). */
#ifndef IMGHIST_READ_ALL_H
#define IMGHIST_READ_ALL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ih_read_result {
    IH_READ_OK = 0,
    IH_READ_OVER_LIMIT, /* longer than the limit */
    IH_READ_ERROR,      /* errno says why */
    IH_READ_NOMEM
};

/* Bytes a stream's first look reads (ih_read_all's head_ok). */
#define IH_READ_HEAD 64

/*
 * Read all of fp into a malloc'd buffer. No buffer grows past limit + 1 bytes
 * (one more than the limit, to notice a longer stream), so an endless stream
 * ends in IH_READ_OVER_LIMIT, not in running out of memory. size_hint: the
 * expected length (a regular file's size) or 0. head_ok (NULL: none) sees
 * the first IH_READ_HEAD bytes once they are in; when it returns 0 the read
 * stops there and IH_READ_OK gives those bytes alone (a stream that is no
 * image, such as /dev/zero, is refused by its decoder at once, not after
 * the limit's worth of bytes).
 */
enum ih_read_result ih_read_all(FILE *fp, uint64_t limit, size_t size_hint,
                                int (*head_ok)(const uint8_t *head, size_t n), uint8_t **data,
                                size_t *size);

#endif
