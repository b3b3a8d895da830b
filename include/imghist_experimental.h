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
/* IMGHIST_DECODE_AUTO: runs of fewer bytes of files than this for each CPU
 * decoding thread stay on the CPU; 0: the library's (64 MiB). */
#define IMGHIST_P_EXP_AUTO_DECODE_BYTES ((imghist_param)1006)

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

/* ---- JPEG decoding on GPUs' hardware decoders (nvJPEG) ----
 * The engine behind imghist_histogram_files' IMGHIST_P_DECODE and the CLI's
 * --decode: callers on many threads each hand it one JPEG file at a time;
 * one thread per GPU decodes them in batches with nvJPEG's hardware backend
 * (libnvjpeg.so.13, opened at run time), makes the gray of the context's
 * IMGHIST_P_LOAD_GRAY mode and counts it there. A file it declines is the
 * caller's to decode on the CPU; either way the bits are libjpeg-turbo's
 * and OpenCV's (docs/gpu-decode.md). */

/* Whether this build has the engine (nvJPEG's header was found). */
IMGHIST_API int imghist_exp_jpeg_gpu_built(void);
/* Whether a file's bytes are a JPEG the engine may take: SOF0 or SOF1
 * (Huffman, sequential), 8-bit, gray with sampling 1x1 or YCbCr (not RGB
 * coded), and whole: every segment inside the file, the scans ending in a
 * marker, an EOI at the end (libjpeg-turbo refuses a file that ends early;
 * nvJPEG may not). */
IMGHIST_API int imghist_exp_jpeg_fits_gpu(const void *data, size_t size);
/* The EXIF orientation (1..8) the CPU's decoder turns a JPEG by, from its
 * first APP1 segment's bytes (NULL: none, orientation 1); 0 when unsure. */
IMGHIST_API int imghist_exp_exif_orientation(const void *app1, size_t len);

typedef struct imghist_exp_jpeg_gpu imghist_exp_jpeg_gpu;

typedef struct imghist_exp_jpeg_gpu_opts {
    imghist_decode mode;   /* IMGHIST_DECODE_GPU: the GPUs open now or the start fails;
                              AUTO: they open in the background (callers decode on
                              the CPU meanwhile), and not at all for runs the CPU
                              finishes sooner: under 64 files (512 equalizing), or
                              under 64 MiB of files for each of cpu_jobs */
    size_t n_files;        /* the run's files and their bytes (0: unknown), for AUTO */
    uint64_t n_bytes;
    int equalize;          /* also equalize each plane (IMGHIST_EQ_OPENCV) and hand it
                              back */
    const imghist_histspec *spec; /* counted as imghist_histogram counts a U8 gray
                                     image (NULL: 256 bins) */
    const int *gpus;       /* the GPUs to decode on, a thread each (repeats ignored); */
    size_t n_gpus;         /* 0: every GPU CUDA shows, or under local_size > 1 the GPU
                              local_rank % count */
    int local_rank, local_size; /* processes sharing the host's GPUs (0, 1: none) */
    unsigned cpu_jobs;     /* CPU decodes at once, through cpu_enter and cpu_leave */
    int leave_opening;     /* AUTO: stop does not wait for a GPU still opening (CUDA's and
                              nvJPEG's start, about a second); its thread ends alone,
                              so the caller's process must end with _exit, not exit */
} imghist_exp_jpeg_gpu_opts;

/*
 * Starts the engine with ctx's parameters (limits, gray mode): *out NULL
 * with IMGHIST_OK means the CPU decodes everything (AUTO, a short run, no
 * nvJPEG). IMGHIST_DECODE_GPU without nvJPEG, a GPU or its hardware decoder
 * is IMGHIST_E_UNSUPPORTED, IMGHIST_E_NO_GPU or IMGHIST_E_CUDA, the reason
 * in ctx's message.
 */
IMGHIST_API imghist_status imghist_exp_jpeg_gpu_start(imghist_ctx *ctx,
                                                      const imghist_exp_jpeg_gpu_opts *o,
                                                      imghist_exp_jpeg_gpu **out);
/* Callers beyond cpu_jobs worth having: they only wait on batches. */
IMGHIST_API unsigned imghist_exp_jpeg_gpu_waiters(const imghist_exp_jpeg_gpu *d);
/*
 * One file: 1 when it was decoded and counted on a GPU (*w and *h the
 * image's size after its EXIF orientation, counts[] set: the spec's
 * counters; with equalize *pixels the equalized plane, w x h, malloc'd),
 * 0 when the caller is to decode it on the CPU, first calling cpu_enter
 * (counts untouched, or zero when the GPU's plane could not be handed back;
 * *pixels NULL). NULL d: 0.
 */
IMGHIST_API int imghist_exp_jpeg_gpu_file(imghist_exp_jpeg_gpu *d, const char *path,
                                          uint32_t *w, uint32_t *h, uint64_t *counts,
                                          uint8_t **pixels);
/* CPU decoding: at most cpu_jobs callers at once; no-ops for NULL. */
IMGHIST_API void imghist_exp_jpeg_gpu_cpu_enter(imghist_exp_jpeg_gpu *d);
IMGHIST_API void imghist_exp_jpeg_gpu_cpu_leave(imghist_exp_jpeg_gpu *d);

/* What one GPU's thread did. */
typedef struct imghist_exp_jpeg_gpu_unit {
    int device;
    int failed;          /* it could not open: why says why */
    int left;            /* still opening at stop, not waited for (leave_opening) */
    char why[200];
    size_t images;       /* decoded and counted there */
    double submit_s;     /* its thread's seconds handing batches to nvJPEG, */
    double wait_s;       /* waiting for the GPU, */
    double idle_s;       /* and waiting for files */
    double open_s;       /* opening it all, before the first batch: */
    double cuda_s;       /* the GPU's CUDA context */
    double nvjpeg_s;     /* nvJPEG's hardware backend and states */
} imghist_exp_jpeg_gpu_unit;

/*
 * Ends the engine's threads and frees it (NULL: no-op, 0). Up to n_units
 * of its GPUs' reports go to units (NULL: none), the count of JPEGs its
 * GPUs declined to *declined (NULL: not wanted); returns how many GPU
 * threads it ran.
 */
IMGHIST_API size_t imghist_exp_jpeg_gpu_stop(imghist_exp_jpeg_gpu *d,
                                             imghist_exp_jpeg_gpu_unit *units, size_t n_units,
                                             size_t *declined);

#ifdef __cplusplus
}
#endif

#endif
