/* Helpers shared by the test programs. */
#ifndef IMGHIST_TEST_UTIL_H
#define IMGHIST_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: fast, seedable, good enough for test data. */
typedef struct { uint64_t s; } tu_rng;
void tu_seed(tu_rng *r, uint64_t seed);
uint64_t tu_next(tu_rng *r);
uint32_t tu_below(tu_rng *r, uint32_t n);
/* A seed from the clock (or IMGHIST_TEST_SEED), printed so a failure can be replayed. */
uint64_t tu_fresh_seed(const char *who);

/* Naive histogram, the obvious loop, as the oracle. */
void tu_naive_hist(const uint8_t *p, size_t pitch, uint32_t w, uint32_t h, uint64_t hist[256]);

/*
 * Encode a PNG in memory with libpng. color_type is a PNG_COLOR_TYPE_*,
 * bit_depth 8 or 16; `samples` holds width*height*channels values (uint8 or
 * big-endian-free uint16 host values for depth 16). For palette images
 * `samples` are indices into `palette` (RGB triples, `npal` entries).
 * Returns a malloc'd buffer and its size, or NULL.
 */
uint8_t *tu_png_encode(uint32_t w, uint32_t h, int color_type, int bit_depth, const void *samples,
                       const uint8_t *palette, int npal, size_t *size);

/* Files: whole-file read and write, a fresh temporary folder. */
uint8_t *tu_read_file(const char *path, size_t *size);
int tu_write_file(const char *path, const void *data, size_t size);
char *tu_temp_dir(void);            /* malloc'd path of a new folder */
void tu_remove_tree(const char *dir);
int tu_exists(const char *path);

#endif
