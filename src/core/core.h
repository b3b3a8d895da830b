/*
 * The core: what every backend and module shares and that knows no backend:
 * the context, errors and notes, parameters, the checks of views, specs and
 * counts. Backends plug in through backend.h.
 */
#ifndef IMGHIST_CORE_H
#define IMGHIST_CORE_H

#include <stdbool.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "binning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels of an 8- and a 16-bit sample: the bins of their natural histograms. */
#define IH_U8_BINS 256
#define IH_U16_LEVELS 65536

typedef struct ih_backend_ops ih_backend_ops;

/* The sticky parameters (params.c holds their bounds and defaults). */
typedef struct ih_params {
    int64_t max_pixels;
    int64_t max_input_bytes;
    int64_t cpu_threads;
    int64_t staging_bytes;      /* 0: automatic */
    int64_t load_gray;          /* imghist_gray_mode */
    int64_t png_level;          /* zlib level of PNG output */
    int64_t load_depth;         /* 0: U8; 1: the file's depth */
    int64_t load_channels;      /* 0: gray; 1: the file's channels */
    int64_t load_truncated;     /* 1: JPEGs that end early are read */
    int64_t decode;             /* imghist_decode: where many files' JPEGs decode */
    int64_t hist_blocks_per_sm; /* experimental; 0: automatic */
    int64_t batch_run;          /* experimental; 0: automatic */
    int64_t eq_batch_small;     /* experimental; 0: automatic */
    int64_t batch_tiny;         /* experimental; 0: automatic, -1: never */
    int64_t hist16_global;      /* experimental; 0: automatic, -1: never */
    int64_t auto_decode_bytes;  /* experimental; 0: automatic */
} ih_params;

/* How a batch call on the GPU went (imghist_exp_last_route). */
enum {
    IH_ROUTE_NONE = IMGHIST_ROUTE_NONE,
    IH_ROUTE_BATCH = IMGHIST_ROUTE_BATCH,
    IH_ROUTE_EACH = IMGHIST_ROUTE_EACH,
    IH_ROUTE_BLOCKS = IMGHIST_ROUTE_BLOCKS
};

void ih_params_default(ih_params *p);

/* What a list call's checks saw of its views in their one pass over them,
 * for the backend it dispatches to, so that no layer reads a large list
 * again to learn it. Valid only within the call that set it (ih_begin
 * clears it) and for those very arrays. */
typedef struct ih_list_layout {
    const imghist_view *src, *dst; /* the arrays the checks read; dst NULL for counting */
    size_t count;                  /* 0: nothing known */
    bool src_uniform, dst_uniform; /* every view of view 0's shape, view i at view 0's
                                      data + i * stride */
    bool src_one_shape, dst_one_shape; /* every view of view 0's shape and 16-byte phase */
    uintptr_t src_stride, dst_stride;
} ih_list_layout;

struct imghist_ctx {
    imghist_backend backend;         /* CPU or CUDA, never AUTO */
    const ih_backend_ops *ops;       /* the backend the context runs on */
    const ih_backend_ops *fallback;  /* NULL, or the CPU backend, for host images
                                        when the GPU is out of memory */
    void *backend_state;             /* the backend's own, NULL on the CPU */
    int device;                      /* CUDA: the GPU the context runs on; before the
                                        backend opens, -1 (the thread's current one)
                                        or the one imghist_create asked for */
    ih_params params;
    imghist_method eq_method;        /* the equalization call in progress's rule */
    int batch_route;                 /* IH_ROUTE_*: how the last batch call went */
    ih_list_layout layout;           /* the list call in progress's views */
    int faulted;                     /* latched: the GPU faulted under this context */
    char fault[320];                 /* what the fault was */
    char err[512];
    char note[256];                  /* how the last call ran, when noteworthy */
    void *scratch;                   /* ih_scratch's host memory, kept between calls */
    size_t scratch_bytes;
    uint64_t stage_ns[IMGHIST_STAGES]; /* imghist_exp_stage_ns */
};

/* CLOCK_MONOTONIC in nanoseconds: a stage's start (one call an image and
 * stage, cheap beside the stage). */
uint64_t ih_now_ns(void);

/* Adds the time since t0 (ih_now_ns) to the context's stage. */
static inline void ih_stage_add(imghist_ctx *ctx, imghist_stage stage, uint64_t t0)
{
    ctx->stage_ns[stage] += ih_now_ns() - t0;
}

/* At least `bytes` of host memory owned by the context and kept between
 * calls (a large malloc per call is an mmap, and each of its pages a fault
 * when first touched, which costs more than a small image's equalization);
 * NULL, with the failure set, when out of memory. One user at a
 * time: a call's own scratch, not to be held across calls. */
void *ih_scratch(imghist_ctx *ctx, size_t bytes);

/* Record a formatted one-line message on ctx (if any) and return status. */
imghist_status ih_fail(imghist_ctx *ctx, imghist_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Latch the context as faulted, keep the reason, and return IMGHIST_E_FAULTED. */
imghist_status ih_fault(imghist_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Record how the call ran (imghist_last_note). */
void ih_note(imghist_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Start of every call that takes a context: clears the message and the note;
 * a NULL context is IMGHIST_E_INVALID_ARG, a faulted one IMGHIST_E_FAULTED. */
imghist_status ih_begin(imghist_ctx *ctx);

/* Size in bytes of one sample of dtype, 0 for an unknown type. Inline: the
 * list checks ask it of every view. */
static inline size_t ih_dtype_size(imghist_dtype dtype)
{
    switch (dtype) {
    case IMGHIST_U8: return 1;
    case IMGHIST_U16: return 2;
    case IMGHIST_F32: return 4;
    }
    return 0;
}

/* A view's shape: NULL, empty, pitch too small, a bad enum, an address range
 * that overflows. `role` names it in messages ("source", "mask"...). */
imghist_status ih_check_view(imghist_ctx *ctx, const imghist_view *v, const char *role);
/* A valid view of one U8 channel. */
imghist_status ih_check_view_u8(imghist_ctx *ctx, const imghist_view *v, const char *role);
/* A valid view of at most IMGHIST_MAX_CHANNELS channels. */
imghist_status ih_check_source(imghist_ctx *ctx, const imghist_view *v, const char *role);
/* A valid mask for src: U8, one channel, src's size and memory. NULL is valid. */
imghist_status ih_check_mask(imghist_ctx *ctx, const imghist_view *mask, const imghist_view *src);
/* Counts that must hold `need` counters. */
imghist_status ih_check_counts(imghist_ctx *ctx, const imghist_counts *c, size_t need,
                               const char *role);

/* Everything a histogram call needs from its spec. */
typedef struct ih_hist_job {
    imghist_dtype dtype;
    uint32_t channels;  /* of the source view, 1..IMGHIST_MAX_CHANNELS */
    int accumulate;
    int outliers;       /* 3 more counters per channel: below, above, nan */
    size_t stride;      /* counters per channel: bins (+ 3) */
    size_t len;         /* counters per image: channels * stride */
    int natural;        /* U8/U16, one bin per value of the type, no outliers */
    int natural_bins;   /* the same binning, outlier counters or not (which then
                           stay 0: no integer sample falls outside) */
    ih_binning bin;     /* binning.h: bins, range, and the integer fast path */
} ih_hist_job;
/* Resolve spec for samples of dtype in views of `channels` (0 means 1). */
imghist_status ih_resolve_spec(imghist_ctx *ctx, const imghist_histspec *spec,
                               imghist_dtype dtype, uint32_t channels, ih_hist_job *job);

/* out[i] = (accumulate ? out[i] : 0) + add[i] for n host counters. */
void ih_store_counts(uint64_t *out, const uint64_t *add, size_t n, int accumulate);
/* The views of a strided batch (count images of first's shape, image i at
 * first->data + i * stride bytes), in a new array; NULL: out of memory. */
imghist_view *ih_strided_views(const imghist_view *first, size_t count, ptrdiff_t stride);
/* Whether count views are of v[0]'s shape (type, size, pitch, channels),
 * each at v[0]'s 16-byte phase, and count masks (NULL for none) of
 * masks[0]'s pitch: views of one shape anywhere, which the GPU's batch
 * launches take by their pointers. */
bool ih_views_one_shape(const imghist_view *v, const imghist_view *masks, size_t count);

/* The equalization tables imghist_equalize_lut makes: OpenCV's rule at 256
 * and 65536 levels, PIL's at 256 (core/equalize_lut.c). Arguments not NULL;
 * an empty histogram is IMGHIST_E_INVALID_ARG. */
imghist_status ih_equalize_lut_u8(const uint64_t hist[256], uint8_t lut[256]);
imghist_status ih_equalize_lut_u16(const uint64_t hist[IH_U16_LEVELS],
                                   uint16_t lut[IH_U16_LEVELS]);
imghist_status ih_equalize_lut_pil(const uint64_t hist[256], uint8_t lut[256]);

/* ih_equalize_lut_u16's entries at the levels of an image's
 * histogram that are not 0 alone (levels[0..n), ascending; count: 16-bit
 * counts, total their sum, not 0): the CPU's 16-bit equalization of small
 * images, whose lookups read no other entry (core/equalize_lut.c). */
void ih_equalize_lut_u16_at(const uint16_t *count, const uint16_t *levels, size_t n,
                            uint64_t total, uint16_t *lut);

#ifdef __cplusplus
}
#endif

#endif
