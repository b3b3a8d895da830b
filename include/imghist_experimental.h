/*
 * imghist's tuning knobs and a read-back of how the CUDA backend ran a call:
 * for tests, benchmarks and tuning. Nothing here is ABI-stable: a knob may
 * change meaning or go in any release. Include after imghist.h.
 */
#ifndef IMGHIST_EXPERIMENTAL_H
#define IMGHIST_EXPERIMENTAL_H

#include "imghist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameters for imghist_set_param and imghist_get_param. */
/* Histogram blocks per SM; 0: as many as fit. */
#define IMGHIST_P_EXP_HIST_BLOCKS_PER_SM ((imghist_param)1000)
/* Chunks a block runs in batches; 0: one run a block. */
#define IMGHIST_P_EXP_BATCH_RUN ((imghist_param)1001)
/* 8-bit equalization batches: images of at most this many 16-byte granules
 * take the one-block kernel; 0: as many as fit. */
#define IMGHIST_P_EXP_EQ_BATCH_SMALL ((imghist_param)1002)
/* Batches as tensors: images of at most this many 16-byte granules go one
 * warp an image; 0: the library's limit, -1: never. */
#define IMGHIST_P_EXP_BATCH_TINY ((imghist_param)1003)
/* Tensors of 16-bit images into 65536 bins: images of at most this many
 * samples count with global atomics first; 0: the library's choice, -1: never. */
#define IMGHIST_P_EXP_HIST16_GLOBAL ((imghist_param)1004)

/* How the CUDA backend ran the context's last batch call (a view of several
 * images or a list). */
typedef enum imghist_route {
    IMGHIST_ROUTE_NONE = 0,   /* no batch call yet, or not on the GPU */
    IMGHIST_ROUTE_BATCH = 1,  /* a few launches for all the images */
    IMGHIST_ROUTE_EACH = 2,   /* a launch or a call an image */
    IMGHIST_ROUTE_BLOCKS = 3  /* one launch, a block an image (small 16-bit equalizations) */
} imghist_route;

IMGHIST_API imghist_route imghist_exp_last_route(const imghist_ctx *ctx);

/* The stages whose time a context adds up, from its creation: reading a
 * file's bytes, decoding, gray conversion (with depth reduction and EXIF
 * orientation), counting, the equalization's LUT (built and applied), the
 * PNG writer's row filters and its deflate (libpng's whole encode at levels
 * other than 1), and whatever a histogram or an equalization took on a GPU
 * (copies included). */
typedef enum imghist_stage {
    IMGHIST_STAGE_READ = 0,
    IMGHIST_STAGE_DECODE = 1,
    IMGHIST_STAGE_GRAY = 2,
    IMGHIST_STAGE_COUNT = 3,
    IMGHIST_STAGE_LUT = 4,
    IMGHIST_STAGE_FILTER = 5,
    IMGHIST_STAGE_DEFLATE = 6,
    IMGHIST_STAGE_GPU = 7,
    IMGHIST_STAGES = 8
} imghist_stage;

/* Nanoseconds spent in each stage by the context's calls, into
 * ns[0..IMGHIST_STAGES): wall time of the calling thread (a call that fans
 * out over threads counts once); zeros for a NULL context. */
IMGHIST_API void imghist_exp_stage_ns(const imghist_ctx *ctx, uint64_t ns[IMGHIST_STAGES]);

#ifdef __cplusplus
}
#endif

#endif
