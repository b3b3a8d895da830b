#include "read_all.h"

#include <stdlib.h>

enum ih_read_result ih_read_all(FILE *fp, uint64_t limit, size_t size_hint,
                                int (*head_ok)(const uint8_t *head, size_t n), uint8_t **data,
                                size_t *size)
{
    const uint64_t most = limit < SIZE_MAX - 1 ? limit + 1 : SIZE_MAX;
    /* + 1: a file that grew since its size was taken shows up as a full buffer */
    size_t cap = size_hint > 0 && size_hint < most ? size_hint + 1 : 1 << 16;
    size_t len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        return IH_READ_NOMEM;
    }
    for (;;) {
        if (len == cap) {
            if (len > limit) {
                break;
            }
            const size_t grown = (uint64_t)cap * 2 <= most ? cap * 2 : (size_t)most;
            uint8_t *bigger = realloc(buf, grown);
            if (bigger == NULL) {
                free(buf);
                return IH_READ_NOMEM;
            }
            buf = bigger;
            cap = grown;
        }
        /* the head first, on its own, when it is to be looked at */
        const size_t want = head_ok != NULL && len < IH_READ_HEAD ? IH_READ_HEAD - len : cap - len;
        const size_t got = fread(buf + len, 1, want < cap - len ? want : cap - len, fp);
        len += got;
        if (head_ok != NULL && len >= IH_READ_HEAD && len - got < IH_READ_HEAD &&
            !head_ok(buf, IH_READ_HEAD)) {
            break;
        }
        if (got == 0) {
            if (ferror(fp)) {
                free(buf);
                return IH_READ_ERROR;
            }
            break;
        }
    }
    if (len > limit) {
        free(buf);
        return IH_READ_OVER_LIMIT;
    }
    *data = buf;
    *size = len;
    return IH_READ_OK;
}
