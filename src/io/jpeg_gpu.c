/*
 * JPEG decoding on the GPUs' hardware decoders (nvJPEG, opened at run time)
 * for runs over many files (imghist_experimental.h): callers on many
 * threads hand their JPEG files to one queue that one thread per GPU takes
 * batches from. That thread owns an nvJPEG handle, a CUDA stream and a CUDA
 * context of the library; it decodes a batch into one device buffer (the
 * luma plane, or for bgr2gray the Y, Cb and Cr planes made into gray there
 * with libjpeg-turbo's rules, ycc_gray.h), counts (and equalizes) every
 * gray plane with the library on the same stream and hands each caller its
 * counts. A file the hardware does not take (progressive, CMYK, 12-bit, an
 * RGB-coded JPEG, a layout whose gray the GPU does not make as libjpeg-turbo
 * does, anything nvJPEG fails on) is declined and its caller decodes it on
 * the CPU: every file is counted once, with libjpeg-turbo's bits either way
 * (docs/gpu-decode.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "imghist_experimental.h"

/* What the scan reads of a JPEG besides whether it fits. */
typedef struct jpeg_facts {
    const uint8_t *app1; /* the first APP1 segment's bytes (NULL: none) */
    size_t app1_len;
    int comps;           /* the frame's components and their sampling factors */
    int h[3], v[3];
} jpeg_facts;

/* ih_jpeg_fits_gpu, and the file's facts. */
static int scan_jpeg(const uint8_t *p, size_t n, jpeg_facts *f)
{
    memset(f, 0, sizeof *f);
    if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) {
        return 0;
    }
    size_t i = 2;
    int frame = 0, jfif = 0, adobe = -1, comps = 0;
    uint8_t ids[3] = {0, 0, 0};
    for (;;) {
        if (i >= n || p[i] != 0xFF) {
            return 0;
        }
        while (i < n && p[i] == 0xFF) {
            i++;
        }
        if (i >= n) {
            return 0;
        }
        const uint8_t m = p[i++];
        if (m == 0xD9) {
            break;
        }
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD8) || i + 2 > n) {
            return 0;
        }
        const size_t len = (size_t)p[i] << 8 | p[i + 1];
        if (len < 2 || len > n - i) {
            return 0;
        }
        const uint8_t *s = p + i + 2;
        const size_t sl = len - 2;
        if (m == 0xC0 || m == 0xC1) {
            if (frame || sl < 6 || s[0] != 8 || (s[1] << 8 | s[2]) == 0) {
                return 0;
            }
            comps = s[5];
            /* A gray frame whose component claims sampling factors other
             * than 1x1 (its scan codes one block a unit all the same):
             * nvJPEG's hardware decodes such planes wrong, measured on an
             * H200. */
            if ((comps != 1 && comps != 3) || sl < 6 + 3 * (size_t)comps ||
                (comps == 1 && s[7] != 0x11)) {
                return 0;
            }
            for (int c = 0; c < comps; c++) {
                ids[c] = s[6 + 3 * c];
                f->h[c] = s[7 + 3 * c] >> 4;
                f->v[c] = s[7 + 3 * c] & 15;
            }
            f->comps = comps;
            frame = 1;
        } else if ((m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) ||
                   m == 0xDC) {
            return 0; /* progressive, lossless, arithmetic, hierarchical; DNL */
        } else if (m == 0xE0 && sl >= 5 && memcmp(s, "JFIF", 5) == 0) {
            jfif = 1;
        } else if (m == 0xEE && sl >= 12 && memcmp(s, "Adobe", 5) == 0) {
            adobe = s[11];
        } else if (m == 0xE1 && f->app1 == NULL) {
            f->app1 = s;
            f->app1_len = sl;
        }
        i += len;
        if (m == 0xDA) {
            if (!frame) {
                return 0;
            }
            /* The entropy-coded data: stuffed zeros, restart markers and fill
             * bytes belong to it; any other marker ends it. */
            for (;;) {
                const uint8_t *ff = i < n ? memchr(p + i, 0xFF, n - i) : NULL;
                i = ff != NULL ? (size_t)(ff - p) : n;
                if (i + 1 >= n || (p[i + 1] != 0x00 && p[i + 1] != 0xFF &&
                                   (p[i + 1] < 0xD0 || p[i + 1] > 0xD7))) {
                    break;
                }
                i += p[i + 1] == 0xFF ? 1 : 2;
            }
            if (i + 1 >= n) {
                return 0;
            }
        }
    }
    /* libjpeg's colour space guess (jdapimin.c): JFIF is YCbCr; else an Adobe
     * transform 0, or the ids R, G, B, are RGB. */
    const int rgb = comps == 3 && !jfif &&
                    (adobe == 0 || (adobe < 0 && ids[0] == 'R' && ids[1] == 'G' && ids[2] == 'B'));
    return frame && !rgb;
}

int imghist_exp_jpeg_fits_gpu(const void *data, size_t size)
{
    jpeg_facts f;
    return data != NULL && scan_jpeg(data, size, &f);
}

static uint32_t exif_u(const uint8_t *b, int big, int bytes)
{
    return bytes == 2 ? (big ? (uint32_t)b[0] << 8 | b[1] : (uint32_t)b[1] << 8 | b[0])
                      : (big ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                                   (uint32_t)b[2] << 8 | b[3]
                             : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 |
                                   (uint32_t)b[1] << 8 | b[0]);
}

/*
 * The EXIF orientation the CPU's decoder turns an image by (IFD 0's
 * Orientation, 1..8), read from the first APP1 segment: 1 for no EXIF or no
 * Orientation; 0 when this reading is unsure (a malformed or truncated IFD,
 * an entry of another type or an out-of-range value, entries that differ),
 * and the file goes to the CPU, which is right either way.
 */
static int exif_orientation(const uint8_t *app1, size_t len)
{
    if (app1 == NULL || len < 6 || memcmp(app1, "Exif\0\0", 6) != 0) {
        return 1;
    }
    const uint8_t *t = app1 + 6;
    const size_t n = len - 6;
    if (n < 8 || !((t[0] == 'I' && t[1] == 'I') || (t[0] == 'M' && t[1] == 'M'))) {
        return 0;
    }
    const int big = t[0] == 'M';
    if (exif_u(t + 2, big, 2) != 42) {
        return 0;
    }
    const uint32_t ifd = exif_u(t + 4, big, 4);
    if (ifd < 8 || (size_t)ifd + 2 > n) {
        return 0;
    }
    const uint32_t entries = exif_u(t + ifd, big, 2);
    if ((size_t)ifd + 2 + 12 * (size_t)entries > n) {
        return 0;
    }
    int orientation = 1, seen = 0;
    for (uint32_t k = 0; k < entries; k++) {
        const uint8_t *e = t + ifd + 2 + 12 * (size_t)k;
        if (exif_u(e, big, 2) != 0x0112) {
            continue;
        }
        const uint32_t v = exif_u(e + 8, big, 2);
        if (exif_u(e + 2, big, 2) != 3 || exif_u(e + 4, big, 4) < 1 || v < 1 || v > 8 ||
            (seen && (int)v != orientation)) {
            return 0;
        }
        orientation = (int)v;
        seen = 1;
    }
    return orientation;
}

int imghist_exp_exif_orientation(const void *app1, size_t len)
{
    return exif_orientation(app1, len);
}

int imghist_exp_jpeg_gpu_built(void)
{
    return IH_HAVE_NVJPEG;
}

#if IH_HAVE_NVJPEG

#include <dirent.h>
#include <dlfcn.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include "ycc_gray.h"

/* Most files in one batch (enough to keep every hardware decoder of an
 * H100 or H200 busy), and how long a batch that is not full waits for more
 * files before it is decoded. */
#define BATCH_MAX 48
#define FILL_WAIT_NS 2000000L
/* An auto run of fewer files stays on the CPU: nvJPEG's start (CUDA's,
 * then the decoder's, a second or more) would outlast it. */
#define AUTO_MIN_FILES 64
/* Nor does a run of fewer bytes than this for each CPU decoder: one core
 * decodes about 30 12-megapixel JPEGs (about 1 MB each) a second, and the
 * GPU opens in about a second (H200, 16 cores, whole process: 200 such
 * files took 0.72-0.75 s under auto against 0.49-0.52 s on the CPU alone,
 * 1024 files 2.25-2.28 s against 2.27-2.31 s, 4096 files 4.2 s against
 * 7.6-8.6 s). */
#define AUTO_MIN_BYTES_PER_JOB ((uint64_t)64 << 20)
/* With equalization the CPU's share (filtering, deflating, writing) is larger
 * and the GPU saves less: 256 12-megapixel JPEGs on 16 cores took 2.5 s
 * under auto against 2.1-2.2 s on the CPU, 1024 took 6.5 s against
 * 7.1-7.5 s. */
#define AUTO_MIN_FILES_EQUALIZE 512
/* Device memory for the luma planes of both batches of a GPU together: at
 * most this, and at most a quarter of what is free. Equalizing brings the
 * planes home through pinned memory of the same size, so it takes less. */
#define PLANES_MAX_BYTES ((size_t)1 << 30)
#define EQ_PLANES_MAX_BYTES ((size_t)1 << 29)
/* Most GPUs that decode in one process (one thread each: a second thread
 * on a GPU measured no faster, nvJPEG's host-side work in each slowing). */
#define UNITS_MAX 16

typedef struct nvj_api {
    void *so;
    __typeof__(nvjpegCreateEx) *create_ex;
    __typeof__(nvjpegDestroy) *destroy;
    __typeof__(nvjpegJpegStateCreate) *state_create;
    __typeof__(nvjpegJpegStateDestroy) *state_destroy;
    __typeof__(nvjpegJpegStreamCreate) *stream_create;
    __typeof__(nvjpegJpegStreamDestroy) *stream_destroy;
    __typeof__(nvjpegJpegStreamParseHeader) *parse_header;
    __typeof__(nvjpegJpegStreamGetFrameDimensions) *frame_dims;
    __typeof__(nvjpegDecodeBatchedSupported) *batched_supported;
    __typeof__(nvjpegDecodeBatchedInitialize) *batched_init;
    __typeof__(nvjpegDecodeBatched) *batched;
} nvj_api;

/* One file a caller waits on. */
typedef struct job {
    const uint8_t *data;
    size_t size;
    uint32_t w, h;
    int comps, hs[3], vs[3]; /* the frame's sampling, for bgr2gray */
    size_t bytes;            /* device memory it takes in a batch */
    uint64_t *counts; /* the caller's, counters_each long */
    const uint8_t *home;   /* equalizing: the equalized plane, in its batch's home */
    struct batch *from;    /* that batch */
    int state;             /* 0 queued, 1 counted, 2 declined */
    struct job *next;
} job;

/* A batch: its decoder state, planes and counts. Two take turns on each
 * GPU, so that one is decoded while the next is handed to nvJPEG. */
typedef struct batch {
    nvjpegJpegState_t state;
    uint8_t *planes;      /* device */
    uint64_t *dev_counts; /* device */
    uint64_t *counts;     /* pinned host */
    uint8_t *home;        /* pinned host, equalizing: the equalized planes */
    cudaEvent_t done;
    job *jobs[BATCH_MAX];
    size_t at[BATCH_MAX]; /* each plane's offset in planes and home */
    size_t n;
    size_t readers; /* under mu: callers still to copy their planes from home */
    int ok;         /* submitted without an error */
} batch;

/* One GPU: its thread, nvJPEG handle, stream, library context and batches. */
typedef struct unit {
    imghist_exp_jpeg_gpu *d;
    int device; /* -1: chosen when opened (no GPUs named) */
    nvjpegHandle_t handle;
    batch batches[2];
    nvjpegJpegStream_t parsed;
    cudaStream_t stream;
    imghist_ctx *ctx;
    uint64_t max_pixels, max_bytes;
    size_t planes_bytes; /* of each batch */
    double t_submit, t_wait, t_idle; /* the thread's seconds, for the report */
    double t_cuda, t_nvjpeg, t_open;  /* opening: CUDA's context, nvJPEG's, all */
    size_t on_gpu;                   /* under the decoder's mu */
    int failed;                      /* under mu */
    int open_done;                   /* under mu: opened, or failed to */
    imghist_status st;               /* why it failed */
    char why[200];
    pthread_t tid;
} unit;

struct imghist_exp_jpeg_gpu {
    ih_params params; /* the caller's context's, for the GPUs' contexts */
    int share;    /* auto: the CPU decodes beside the GPU (see imghist_exp_jpeg_gpu_file) */
    int equalize; /* the planes are equalized and come home */
    int bgr;      /* bgr2gray: Y, Cb and Cr planes decoded, the gray made from them */
    int all_gpus; /* no GPUs named: the first GPU's thread opens the others */
    int local_rank, local_size;
    size_t gpus_hint; /* how many GPUs will decode, guessed before CUDA starts */
    nvj_api api;
    imghist_histspec spec;
    size_t counters_each;
    uint64_t max_bytes; /* a file's, from the first GPU opened */

    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv, cpu_cv;
    unit units[UNITS_MAX];
    size_t n_units; /* threads started; under mu */
    job *head, *tail;
    size_t queued;
    int closing;
    int ready;  /* some GPU is open: under mu, atomic reads outside */
    int first_done; /* the first GPU is open or failed (and the others started) */
    int leave_opening; /* stop does not wait for a GPU still opening */
    size_t live;       /* threads started and not ended */
    int owner_gone;    /* stopped: the last thread to end frees the decoder */
    size_t opened;  /* threads past opening their GPU, either way */
    unsigned cpu_free; /* CPU decodes that may start (cpu_jobs of them at most) */
    unsigned reserved; /* slots taken by callers sent to the CPU, not yet entered */
    size_t declined;
};

static int load_api(nvj_api *api, char *why, size_t len)
{
    const char *names[] = {"libnvjpeg.so.13",
#ifdef IH_NVJPEG_LIB
                           IH_NVJPEG_LIB,
#endif
                           NULL};
    for (int k = 0; names[k] != NULL && api->so == NULL; k++) {
        api->so = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    }
    if (api->so == NULL) {
        snprintf(why, len, "libnvjpeg.so.13 cannot be loaded (%s)", dlerror());
        return -1;
    }
#define SYM(field, name)                                                                           \
    if ((*(void **)&api->field = dlsym(api->so, #name)) == NULL) {                                 \
        snprintf(why, len, "libnvjpeg.so.13 lacks %s", #name);                                     \
        return -1;                                                                                 \
    }
    SYM(create_ex, nvjpegCreateEx)
    SYM(destroy, nvjpegDestroy)
    SYM(state_create, nvjpegJpegStateCreate)
    SYM(state_destroy, nvjpegJpegStateDestroy)
    SYM(stream_create, nvjpegJpegStreamCreate)
    SYM(stream_destroy, nvjpegJpegStreamDestroy)
    SYM(parse_header, nvjpegJpegStreamParseHeader)
    SYM(frame_dims, nvjpegJpegStreamGetFrameDimensions)
    SYM(batched_supported, nvjpegDecodeBatchedSupported)
    SYM(batched_init, nvjpegDecodeBatchedInitialize)
    SYM(batched, nvjpegDecodeBatched)
#undef SYM
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* nvJPEG's hardware backend on the unit's GPU, a stream, a CUDA context of
 * the library on it and the planes' memory; 0, or -1 with why. *gpus: how
 * many GPUs CUDA sees. On the unit's thread. */
static int open_unit(unit *u, int *gpus, char *why, size_t len)
{
    imghist_exp_jpeg_gpu *d = u->d;
    const double t0 = now_s();
    int count = 0;
    cudaError_t ce = cudaGetDeviceCount(&count);
    *gpus = ce == cudaSuccess ? count : 0;
    if (ce != cudaSuccess || count == 0) {
        snprintf(why, len, "no usable GPU (%s)", ce != cudaSuccess ? cudaGetErrorString(ce)
                                                                   : "none found");
        u->st = IMGHIST_E_NO_GPU;
        return -1;
    }
    u->st = IMGHIST_E_CUDA;
    if (u->device < 0) { /* processes of one host share its GPUs */
        u->device = d->local_size > 1 ? d->local_rank % count : 0;
    }
    /* cudaFree(NULL) makes the device's context now, so that its time is
     * CUDA's in the report, not nvJPEG's. */
    if (u->device >= count || cudaSetDevice(u->device) != cudaSuccess ||
        cudaFree(NULL) != cudaSuccess) {
        snprintf(why, len, "GPU %d cannot be used", u->device);
        u->st = IMGHIST_E_NO_GPU;
        return -1;
    }
    const double t1 = now_s();
    u->t_cuda = t1 - t0;
    nvjpegStatus_t s = d->api.create_ex(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &u->handle);
    if (s != NVJPEG_STATUS_SUCCESS) {
        u->handle = NULL;
        snprintf(why, len, "nvJPEG has no hardware decoder on GPU %d (status %d)", u->device,
                 (int)s);
        u->st = IMGHIST_E_UNSUPPORTED;
        return -1;
    }
    if (d->api.state_create(u->handle, &u->batches[0].state) != NVJPEG_STATUS_SUCCESS ||
        d->api.state_create(u->handle, &u->batches[1].state) != NVJPEG_STATUS_SUCCESS ||
        d->api.stream_create(u->handle, &u->parsed) != NVJPEG_STATUS_SUCCESS) {
        snprintf(why, len, "nvJPEG's decoder state cannot be made");
        return -1;
    }
    u->t_nvjpeg = now_s() - t1;
    if (cudaStreamCreateWithFlags(&u->stream, cudaStreamNonBlocking) != cudaSuccess) {
        u->stream = NULL;
        snprintf(why, len, "a CUDA stream cannot be made");
        return -1;
    }
    if (imghist_create(IMGHIST_BACKEND_CUDA, u->device, &u->ctx) != IMGHIST_OK) {
        snprintf(why, len, "no CUDA context of the library on GPU %d: %s", u->device,
                 u->ctx != NULL ? imghist_last_error(u->ctx) : "out of memory");
        return -1;
    }
    u->ctx->params = d->params;
    u->ctx->params.cpu_threads = 1;
    if (imghist_set_stream(u->ctx, (imghist_stream)u->stream) != IMGHIST_OK) {
        snprintf(why, len, "no CUDA context of the library on GPU %d", u->device);
        return -1;
    }
    u->max_pixels = (uint64_t)d->params.max_pixels;
    u->max_bytes = (uint64_t)d->params.max_input_bytes;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    const size_t cap = d->equalize ? EQ_PLANES_MAX_BYTES : PLANES_MAX_BYTES;
    u->planes_bytes = (free_b / 4 < cap ? free_b / 4 : cap) / 2;
    const size_t counts_bytes = BATCH_MAX * d->counters_each * sizeof(uint64_t);
    for (int b = 0; b < 2; b++) {
        batch *t = &u->batches[b];
        if (cudaMalloc((void **)&t->planes, u->planes_bytes) != cudaSuccess ||
            cudaMalloc((void **)&t->dev_counts, counts_bytes) != cudaSuccess ||
            cudaMallocHost((void **)&t->counts, counts_bytes) != cudaSuccess ||
            (d->equalize &&
             cudaMallocHost((void **)&t->home, u->planes_bytes) != cudaSuccess) ||
            cudaEventCreateWithFlags(&t->done, cudaEventDisableTiming) != cudaSuccess) {
            snprintf(why, len, "no memory for batches of luma planes on GPU %d", u->device);
            return -1;
        }
    }
    return 0;
}

static void close_unit(unit *u)
{
    imghist_exp_jpeg_gpu *d = u->d;
    if (u->stream != NULL) {
        cudaStreamSynchronize(u->stream);
    }
    imghist_destroy(u->ctx);
    for (int b = 0; b < 2; b++) {
        batch *t = &u->batches[b];
        cudaFree(t->planes);
        cudaFree(t->dev_counts);
        cudaFreeHost(t->counts);
        cudaFreeHost(t->home);
        if (t->done != NULL) {
            cudaEventDestroy(t->done);
        }
        if (t->state != NULL) {
            d->api.state_destroy(t->state);
        }
    }
    if (u->stream != NULL) {
        cudaStreamDestroy(u->stream);
    }
    if (u->parsed != NULL) {
        d->api.stream_destroy(u->parsed);
    }
    if (u->handle != NULL) {
        d->api.destroy(u->handle);
    }
    /* The library stays loaded: nvJPEG's own threads may outlive its handle. */
}

/* Component c's plane of a bgr2gray job: libjpeg's size of it, rows
 * padded to 256 bytes. */
static int max_of(const int *f, int n)
{
    int m = 1;
    for (int c = 0; c < n; c++) {
        m = f[c] > m ? f[c] : m;
    }
    return m;
}

static size_t plane_width(const job *j, int c)
{
    const int hm = max_of(j->hs, j->comps);
    return ((size_t)j->w * (size_t)j->hs[c] + (size_t)hm - 1) / (size_t)hm;
}

static size_t plane_pitch(const job *j, int c)
{
    return (plane_width(j, c) + 255) / 256 * 256;
}

static size_t plane_rows(const job *j, int c)
{
    const int vm = max_of(j->vs, j->comps);
    return ((size_t)j->h * (size_t)j->vs[c] + (size_t)vm - 1) / (size_t)vm;
}

/* Whether job j is one the hardware takes within the limits; its size. */
static int accept_job(unit *u, job *j)
{
    int unsupported = 1;
    unsigned w = 0, h = 0;
    const nvj_api *api = &u->d->api;
    if (j->size > u->max_bytes ||
        api->parse_header(u->handle, j->data, j->size, u->parsed) != NVJPEG_STATUS_SUCCESS ||
        api->frame_dims(u->parsed, &w, &h) != NVJPEG_STATUS_SUCCESS ||
        api->batched_supported(u->handle, u->parsed, &unsupported) != NVJPEG_STATUS_SUCCESS ||
        unsupported != 0 || w == 0 || h == 0 || (uint64_t)w * h > u->max_pixels) {
        return 0;
    }
    j->w = w;
    j->h = h;
    j->bytes = (size_t)w * h;
    for (int c = 0; u->d->bgr && c < j->comps; c++) {
        j->bytes += plane_pitch(j, c) * plane_rows(j, c);
    }
    return j->bytes <= u->planes_bytes;
}

/* Queues the batch's decoding, counting (and when equalizing the tables,
 * their application and the planes' copy home) and the counts' copy home
 * on the stream (nothing waits here for the GPU); whether nvJPEG and the
 * library took it. */
static int submit_batch(unit *u, batch *t)
{
    imghist_exp_jpeg_gpu *d = u->d;
    const unsigned char *data[BATCH_MAX];
    size_t lengths[BATCH_MAX];
    nvjpegImage_t out[BATCH_MAX];
    imghist_view views[BATCH_MAX];
    ih_ycc_image ycc[BATCH_MAX];
    /* The gray planes first, one after another (what comes home); with
     * bgr2gray each file's component planes after them all. */
    size_t at = 0;
    for (size_t k = 0; k < t->n; k++) {
        at += (size_t)t->jobs[k]->w * t->jobs[k]->h;
    }
    size_t comp_at = at;
    at = 0;
    for (size_t k = 0; k < t->n; k++) {
        const job *j = t->jobs[k];
        data[k] = j->data;
        lengths[k] = j->size;
        memset(&out[k], 0, sizeof out[k]);
        views[k] = (imghist_view){.data = t->planes + at, .dtype = IMGHIST_U8,
                                  .mem = IMGHIST_MEM_DEVICE, .width = j->w, .height = j->h,
                                  .pitch = j->w, .channels = 1};
        if (d->bgr) {
            memset(&ycc[k], 0, sizeof ycc[k]);
            ycc[k].components = j->comps;
            ycc[k].width = j->w;
            ycc[k].height = j->h;
            ycc[k].gray = t->planes + at;
            ycc[k].gray_pitch = j->w;
            for (int c = 0; c < j->comps; c++) {
                out[k].channel[c] = t->planes + comp_at;
                out[k].pitch[c] = (unsigned)plane_pitch(j, c);
                ycc[k].planes[c] = t->planes + comp_at;
                ycc[k].pitches[c] = plane_pitch(j, c);
                ycc[k].h[c] = (uint8_t)j->hs[c];
                ycc[k].v[c] = (uint8_t)j->vs[c];
                comp_at += plane_pitch(j, c) * plane_rows(j, c);
            }
        } else {
            out[k].channel[0] = t->planes + at;
            out[k].pitch[0] = j->w;
        }
        t->at[k] = at;
        at += (size_t)j->w * j->h;
    }
    const size_t len = t->n * d->counters_each;
    const imghist_counts counts = {t->dev_counts, len, IMGHIST_MEM_DEVICE};
    int ok = d->api.batched_init(u->handle, t->state, (int)t->n, 1,
                                 d->bgr ? NVJPEG_OUTPUT_YUV : NVJPEG_OUTPUT_Y) ==
                 NVJPEG_STATUS_SUCCESS &&
             d->api.batched(u->handle, t->state, data, lengths, out, u->stream) ==
                 NVJPEG_STATUS_SUCCESS &&
             (!d->bgr || ih_ycc_gray_launch(ycc, (int)t->n, u->stream) == 0) &&
             imghist_histogram_list(u->ctx, views, t->n, &d->spec, &counts) == IMGHIST_OK &&
             cudaMemcpyAsync(t->counts, t->dev_counts, len * sizeof *t->counts,
                             cudaMemcpyDeviceToHost, u->stream) == cudaSuccess;
    if (ok && d->equalize) {
        /* In place, each plane with the table of its own 256 levels, as the
         * CPU's path does after counting. */
        ok = imghist_equalize_list(u->ctx, views, views, t->n, IMGHIST_EQ_OPENCV, NULL) ==
                 IMGHIST_OK &&
             cudaMemcpyAsync(t->home, t->planes, at, cudaMemcpyDeviceToHost, u->stream) ==
                 cudaSuccess;
    }
    return ok && cudaEventRecord(t->done, u->stream) == cudaSuccess;
}


/* Waits for a submitted batch and hands each caller its counts (and when
 * equalizing where its plane is, which the caller copies out before the
 * batch is used again), or its file back when anything failed. */
static void finish_batch(unit *u, batch *t)
{
    imghist_exp_jpeg_gpu *d = u->d;
    const double t0 = now_s();
    const int ok = t->ok && cudaEventSynchronize(t->done) == cudaSuccess;
    u->t_wait += now_s() - t0;
    for (size_t k = 0; ok && k < t->n; k++) {
        job *j = t->jobs[k];
        memcpy(j->counts, t->counts + k * d->counters_each,
               d->counters_each * sizeof *t->counts);
        if (d->equalize) {
            j->home = t->home + t->at[k];
            j->from = t;
        }
    }
    pthread_mutex_lock(&d->mu);
    for (size_t k = 0; k < t->n; k++) {
        t->jobs[k]->state = ok ? 1 : 2;
    }
    u->on_gpu += ok ? t->n : 0;
    t->readers = ok && d->equalize ? t->n : 0;
    pthread_cond_broadcast(&d->done_cv);
    pthread_mutex_unlock(&d->mu);
    t->n = 0;
}

typedef struct job_list {
    job *head, *tail;
} job_list;

static void push(job_list *l, job *j)
{
    if (l->tail != NULL) {
        l->tail->next = j;
    } else {
        l->head = j;
    }
    l->tail = j;
}

static struct timespec soon(long ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ns;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void *unit_main(void *arg);
static void free_decoder(imghist_exp_jpeg_gpu *d);

/* After the first GPU opened (under mu): a thread for every other GPU, each
 * taking batches from the same queue. */
static void start_other_units(imghist_exp_jpeg_gpu *d, int gpus)
{
    for (int g = 0; g < gpus && d->n_units < UNITS_MAX && !d->closing; g++) {
        if (g == d->units[0].device) {
            continue;
        }
        unit *u = &d->units[d->n_units];
        memset(u, 0, sizeof *u);
        u->d = d;
        u->device = g;
        if (pthread_create(&u->tid, NULL, unit_main, u) != 0) {
            break;
        }
        d->n_units++;
        d->live++;
    }
}

/* A GPU's thread: opens nvJPEG, then a batch at a time until closed. */
static void *unit_main(void *arg)
{
    unit *u = arg;
    imghist_exp_jpeg_gpu *d = u->d;
    char why[256] = "";
    int gpus = 0;
    const double t0 = now_s();
    const int ok = open_unit(u, &gpus, why, sizeof why) == 0;
    u->t_open = now_s() - t0;
    pthread_mutex_lock(&d->mu);
    if (!ok) {
        u->failed = 1;
        snprintf(u->why, sizeof u->why, "%s", why);
    } else if (!d->ready) {
        d->max_bytes = u->max_bytes;
        __atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
    }
    d->opened++;
    u->open_done = 1;
    if (u == &d->units[0]) {
        d->first_done = 1;
        if (ok && d->all_gpus && d->local_size <= 1) { /* a shared host: its own GPU */
            start_other_units(d, gpus);
        }
    }
    pthread_cond_broadcast(&d->done_cv);
    batch *pending = NULL; /* submitted, not yet finished */
    int turn = 0;
    while (ok) {
        const double t0 = now_s();
        while (d->head == NULL && !d->closing && pending == NULL) {
            pthread_cond_wait(&d->work_cv, &d->mu);
        }
        if (d->head == NULL && pending == NULL) {
            break; /* closing */
        }
        if (d->head != NULL && pending == NULL && d->queued < BATCH_MAX && !d->closing) {
            const struct timespec until = soon(FILL_WAIT_NS);
            pthread_cond_timedwait(&d->work_cv, &d->mu, &until);
        }
        u->t_idle += now_s() - t0;
        /* A batch's worth at most: the other GPUs take the rest. */
        job *take = d->head, *last = NULL;
        size_t taken = 0;
        for (job *j = d->head; j != NULL && taken < BATCH_MAX; j = j->next) {
            last = j;
            taken++;
        }
        if (last != NULL) {
            d->head = last->next;
            if (d->head == NULL) {
                d->tail = NULL;
            }
            last->next = NULL;
            d->queued -= taken;
        } else {
            take = NULL;
        }
        pthread_mutex_unlock(&d->mu);

        batch *t = &u->batches[turn];
        size_t bytes = 0;
        job_list left = {NULL, NULL}, declined = {NULL, NULL};
        for (job *j = take, *next; j != NULL; j = next) {
            next = j->next;
            j->next = NULL;
            if (!accept_job(u, j)) {
                push(&declined, j);
            } else if (bytes + j->bytes > u->planes_bytes) {
                push(&left, j);
            } else {
                bytes += j->bytes;
                t->jobs[t->n++] = j;
            }
        }
        pthread_mutex_lock(&d->mu);
        for (job *j = declined.head; j != NULL; j = j->next) {
            j->state = 2; /* to the CPU at once, not after the batch */
        }
        if (left.head != NULL) { /* back to the front of the queue */
            for (job *j = left.head; j != NULL; j = j->next) {
                d->queued++;
            }
            left.tail->next = d->head;
            if (d->head == NULL) {
                d->tail = left.tail;
            }
            d->head = left.head;
        }
        pthread_cond_broadcast(&d->done_cv);
        while (t->n > 0 && t->readers > 0) { /* its planes still being copied out */
            pthread_cond_wait(&d->done_cv, &d->mu);
        }
        pthread_mutex_unlock(&d->mu);
        if (t->n > 0) {
            const double t1 = now_s();
            t->ok = submit_batch(u, t);
            u->t_submit += now_s() - t1;
        }
        if (pending != NULL) {
            finish_batch(u, pending);
        }
        pending = t->n > 0 ? t : NULL;
        turn ^= t->n > 0;
        pthread_mutex_lock(&d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    close_unit(u); /* what opened of it, on a failure too */
    pthread_mutex_lock(&d->mu);
    const int last = --d->live == 0 && d->owner_gone;
    pthread_mutex_unlock(&d->mu);
    if (last) { /* stop left this thread opening its GPU */
        free_decoder(d);
    }
    return NULL;
}

/* Reads path whole when it starts like a JPEG; NULL otherwise. */
static uint8_t *read_jpeg(const char *path, uint64_t max_bytes, size_t *size)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    uint8_t head[3];
    uint8_t *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 4 &&
        (uint64_t)st.st_size <= max_bytes && pread(fd, head, 3, 0) == 3 && head[0] == 0xFF &&
        head[1] == 0xD8 && head[2] == 0xFF && (data = malloc((size_t)st.st_size)) != NULL) {
        size_t got = 0;
        ssize_t r = 0;
        while (got < (size_t)st.st_size &&
               ((r = pread(fd, data + got, (size_t)st.st_size - got, (off_t)got)) > 0 ||
                (r < 0 && errno == EINTR))) {
            got += r > 0 ? (size_t)r : 0;
        }
        if (got != (size_t)st.st_size) {
            free(data);
            data = NULL;
        }
        *size = got;
    }
    close(fd);
    return data;
}

int imghist_exp_jpeg_gpu_file(imghist_exp_jpeg_gpu *d, const char *path, uint32_t *w,
                              uint32_t *h, uint64_t *counts, uint8_t **pixels)
{
    if (pixels != NULL) {
        *pixels = NULL;
    }
    if (d == NULL || path == NULL || counts == NULL ||
        !__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    if (d->share) {
        /* auto: counting only, a free CPU slot takes the file, so that the
         * CPU decodes at its own rate beside the GPU (waiting for a full
         * queue first left most of the CPU idle: the GPU drains its queue
         * faster than it fills). Equalizing, the CPU's slots also write the
         * PNGs, so a file goes to the CPU only when a full batch waits. The
         * slot is taken now; the caller's cpu_enter finds it taken. */
        pthread_mutex_lock(&d->mu);
        const int cpu = d->cpu_free > 0 && (!d->equalize || d->queued >= BATCH_MAX);
        if (cpu) {
            d->cpu_free--;
            d->reserved++;
        }
        pthread_mutex_unlock(&d->mu);
        if (cpu) {
            return 0;
        }
    }
    size_t size = 0;
    uint8_t *data = read_jpeg(path, d->max_bytes, &size);
    /* Checked here, on the caller's thread: the scan reads the whole file.
     * The CPU's decoder turns the image by its EXIF orientation: counts do
     * not change, sizes swap, and an equalized plane would be turned, so
     * that goes to the CPU. */
    jpeg_facts facts;
    const int fits = data != NULL && scan_jpeg(data, size, &facts);
    const int orientation = fits ? exif_orientation(facts.app1, facts.app1_len) : 0;
    if (!fits || orientation == 0 || (d->equalize && orientation != 1) ||
        (d->bgr && !ih_nvjpeg_yuv_exact(facts.comps, facts.h, facts.v))) {
        if (data != NULL) {
            pthread_mutex_lock(&d->mu);
            d->declined++;
            pthread_mutex_unlock(&d->mu);
        }
        free(data);
        return 0;
    }
    job j = {.data = data, .size = size, .comps = facts.comps, .counts = counts};
    memcpy(j.hs, facts.h, sizeof j.hs);
    memcpy(j.vs, facts.v, sizeof j.vs);
    pthread_mutex_lock(&d->mu);
    if (d->tail != NULL) {
        d->tail->next = &j;
    } else {
        d->head = &j;
    }
    d->tail = &j;
    d->queued++;
    pthread_cond_signal(&d->work_cv);
    while (j.state == 0) {
        pthread_cond_wait(&d->done_cv, &d->mu);
    }
    if (j.state != 1) {
        d->declined++;
    }
    pthread_mutex_unlock(&d->mu);
    free(data);
    uint8_t *plane = NULL;
    if (j.state == 1 && j.from != NULL) { /* copied out while the next batch decodes */
        const size_t bytes = (size_t)j.w * j.h;
        plane = pixels != NULL ? malloc(bytes) : NULL;
        if (plane != NULL) {
            memcpy(plane, j.home, bytes);
        }
        pthread_mutex_lock(&d->mu);
        if (--j.from->readers == 0) {
            pthread_cond_broadcast(&d->done_cv);
        }
        if (plane == NULL) { /* the CPU's path reports it, if it cannot either */
            j.state = 2;
            d->declined++;
        }
        pthread_mutex_unlock(&d->mu);
    }
    if (j.state != 1) {
        memset(counts, 0, d->counters_each * sizeof *counts);
        return 0;
    }
    const int turned = orientation >= 5; /* a quarter turn: width and height swap */
    *w = turned ? j.h : j.w;
    *h = turned ? j.w : j.h;
    if (pixels != NULL) {
        *pixels = plane;
    }
    return 1;
}

static void free_decoder(imghist_exp_jpeg_gpu *d)
{
    pthread_cond_destroy(&d->cpu_cv);
    pthread_cond_destroy(&d->done_cv);
    pthread_cond_destroy(&d->work_cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/* How many GPUs will decode, before CUDA starts: the distinct GPUs named,
 * or the driver's count of them (CUDA_VISIBLE_DEVICES may narrow it: a
 * guess, only for how many callers wait on the batches). */
static size_t gpus_guess(const imghist_exp_jpeg_gpu_opts *o)
{
    if (o->n_gpus > 0) {
        size_t n = 0;
        for (size_t k = 0; k < o->n_gpus; k++) {
            size_t m = 0;
            while (m < k && o->gpus[m] != o->gpus[k]) {
                m++;
            }
            n += m == k;
        }
        return n < UNITS_MAX ? n : UNITS_MAX;
    }
    if (o->local_size > 1) {
        return 1;
    }
    size_t n = 0;
    DIR *dir = opendir("/proc/driver/nvidia/gpus");
    for (struct dirent *e; dir != NULL && (e = readdir(dir)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    if (dir != NULL) {
        closedir(dir);
    }
    return n == 0 ? 1 : n < UNITS_MAX ? n : UNITS_MAX;
}

imghist_status imghist_exp_jpeg_gpu_start(imghist_ctx *ctx, const imghist_exp_jpeg_gpu_opts *o,
                                          imghist_exp_jpeg_gpu **out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (o == NULL || out == NULL || (o->n_gpus > 0 && o->gpus == NULL)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    const int want = o->mode == IMGHIST_DECODE_GPU;
    const unsigned jobs = o->cpu_jobs > 0 ? o->cpu_jobs : 1;
    const uint64_t per_job = ctx->params.auto_decode_bytes > 0
                                 ? (uint64_t)ctx->params.auto_decode_bytes
                                 : AUTO_MIN_BYTES_PER_JOB;
    if (o->mode == IMGHIST_DECODE_CPU ||
        (!want && (o->n_files < (o->equalize ? AUTO_MIN_FILES_EQUALIZE : AUTO_MIN_FILES) ||
                   (o->n_bytes > 0 && o->n_bytes / jobs < per_job)))) {
        return IMGHIST_OK;
    }
    /* Only 8-bit gray planes come from the GPU. */
    if (ctx->params.load_depth || ctx->params.load_channels || ctx->params.load_truncated) {
        return want ? ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                              "decoding on the GPU gives 8-bit gray only: not with "
                              "IMGHIST_P_LOAD_DEPTH, IMGHIST_P_LOAD_CHANNELS or "
                              "IMGHIST_P_LOAD_TRUNCATED")
                    : IMGHIST_OK;
    }
    const size_t counters = imghist_counts_len(o->spec, IMGHIST_U8, 1);
    if (counters == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the histogram spec is invalid");
    }
    imghist_exp_jpeg_gpu *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    /* Without the library, auto changes nothing in the run's plan. */
    char why[200];
    if (load_api(&d->api, why, sizeof why) != 0) {
        if (d->api.so != NULL) {
            dlclose(d->api.so);
        }
        free(d);
        return want ? ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "%s", why) : IMGHIST_OK;
    }
    d->params = ctx->params;
    d->share = !want;
    d->equalize = o->equalize != 0;
    d->bgr = ctx->params.load_gray != IMGHIST_GRAY_LUMA;
    d->cpu_free = o->cpu_jobs > 0 ? o->cpu_jobs : 1;
    d->leave_opening = o->leave_opening != 0;
    d->local_rank = o->local_rank;
    d->local_size = o->local_size;
    d->gpus_hint = gpus_guess(o);
    if (o->spec != NULL) {
        d->spec = *o->spec;
    }
    d->counters_each = counters;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->done_cv, NULL);
    pthread_cond_init(&d->cpu_cv, NULL);
    /* GPUs named: a thread for each (once each); otherwise the first GPU's
     * thread starts the others once CUDA has counted them. */
    d->all_gpus = o->n_gpus == 0;
    int started = 1;
    pthread_mutex_lock(&d->mu);
    for (size_t k = 0; started && k < (o->n_gpus > 0 ? o->n_gpus : 1); k++) {
        const int dev = o->n_gpus > 0 ? o->gpus[k] : -1;
        int seen = 0;
        for (size_t m = 0; m < d->n_units; m++) {
            seen |= d->units[m].device == dev;
        }
        if (seen || d->n_units == UNITS_MAX) {
            continue;
        }
        unit *u = &d->units[d->n_units];
        u->d = d;
        u->device = dev;
        if (pthread_create(&u->tid, NULL, unit_main, u) != 0) {
            started = 0;
        } else {
            d->n_units++;
            d->live++;
        }
    }
    pthread_mutex_unlock(&d->mu);
    if (!started) {
        if (d->n_units > 0) {
            imghist_exp_jpeg_gpu_stop(d, NULL, 0, NULL);
        } else {
            free_decoder(d);
        }
        return want ? ih_fail(ctx, IMGHIST_E_NOMEM, "the GPU decoder's thread cannot be started")
                    : IMGHIST_OK;
    }
    if (want) { /* the run needs it: wait for its GPUs */
        pthread_mutex_lock(&d->mu);
        while (!d->first_done || d->opened < d->n_units) {
            pthread_cond_wait(&d->done_cv, &d->mu);
        }
        const int failed = d->units[0].failed;
        pthread_mutex_unlock(&d->mu);
        if (failed) {
            st = ih_fail(ctx, d->units[0].st, "%s", d->units[0].why);
            imghist_exp_jpeg_gpu_stop(d, NULL, 0, NULL);
            return st;
        }
    }
    *out = d;
    return IMGHIST_OK;
}

unsigned imghist_exp_jpeg_gpu_waiters(const imghist_exp_jpeg_gpu *d)
{
    /* On each GPU one batch decoding, the next filling. */
    return d != NULL ? (unsigned)(2 * BATCH_MAX * d->gpus_hint) : 0;
}

void imghist_exp_jpeg_gpu_cpu_enter(imghist_exp_jpeg_gpu *d)
{
    if (d == NULL) {
        return;
    }
    pthread_mutex_lock(&d->mu);
    if (d->reserved > 0) { /* a slot taken for a caller: any caller may use it */
        d->reserved--;
    } else {
        while (d->cpu_free == 0) {
            pthread_cond_wait(&d->cpu_cv, &d->mu);
        }
        d->cpu_free--;
    }
    pthread_mutex_unlock(&d->mu);
}

void imghist_exp_jpeg_gpu_cpu_leave(imghist_exp_jpeg_gpu *d)
{
    if (d == NULL) {
        return;
    }
    pthread_mutex_lock(&d->mu);
    d->cpu_free++;
    pthread_cond_signal(&d->cpu_cv);
    pthread_mutex_unlock(&d->mu);
}

size_t imghist_exp_jpeg_gpu_stop(imghist_exp_jpeg_gpu *d, imghist_exp_jpeg_gpu_unit *units,
                                 size_t n_units, size_t *declined)
{
    if (d == NULL) {
        if (declined != NULL) {
            *declined = 0;
        }
        return 0;
    }
    /* Once closing is set under mu no thread starts another (the first
     * GPU's starts the rest under mu), so n_units is final here. */
    int left[UNITS_MAX];
    pthread_mutex_lock(&d->mu);
    d->closing = 1;
    pthread_cond_broadcast(&d->work_cv);
    const size_t n = d->n_units;
    for (size_t k = 0; k < n; k++) {
        left[k] = d->leave_opening && !d->units[k].open_done;
    }
    pthread_mutex_unlock(&d->mu);
    for (size_t k = 0; k < n; k++) {
        if (left[k]) { /* it closes itself once open; the last thread frees d */
            pthread_detach(d->units[k].tid);
        } else {
            pthread_join(d->units[k].tid, NULL);
        }
    }
    for (size_t k = 0; units != NULL && k < n && k < n_units; k++) {
        const unit *u = &d->units[k];
        imghist_exp_jpeg_gpu_unit *r = &units[k];
        memset(r, 0, sizeof *r);
        if (left[k]) { /* still running: nothing of it is read */
            r->device = -1;
            r->left = 1;
            continue;
        }
        r->device = u->device;
        r->failed = u->failed;
        snprintf(r->why, sizeof r->why, "%s", u->failed ? u->why : "");
        r->images = u->on_gpu;
        r->submit_s = u->t_submit;
        r->wait_s = u->t_wait;
        r->idle_s = u->t_idle;
        r->open_s = u->t_open;
        r->cuda_s = u->t_cuda;
        r->nvjpeg_s = u->t_nvjpeg;
    }
    if (declined != NULL) {
        pthread_mutex_lock(&d->mu);
        *declined = d->declined;
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_lock(&d->mu);
    d->owner_gone = 1;
    const int last = d->live == 0;
    pthread_mutex_unlock(&d->mu);
    if (last) {
        free_decoder(d);
    }
    return n;
}

#else /* no nvJPEG in this build */

imghist_status imghist_exp_jpeg_gpu_start(imghist_ctx *ctx, const imghist_exp_jpeg_gpu_opts *o,
                                          imghist_exp_jpeg_gpu **out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (o == NULL || out == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    if (o->mode == IMGHIST_DECODE_GPU) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "this imghist was built without nvJPEG (meson -Dnvjpeg=enabled, "
                       "docs/gpu-decode.md)");
    }
    return IMGHIST_OK;
}

unsigned imghist_exp_jpeg_gpu_waiters(const imghist_exp_jpeg_gpu *d)
{
    (void)d;
    return 0;
}

int imghist_exp_jpeg_gpu_file(imghist_exp_jpeg_gpu *d, const char *path, uint32_t *w,
                              uint32_t *h, uint64_t *counts, uint8_t **pixels)
{
    (void)d, (void)path, (void)w, (void)h, (void)counts;
    if (pixels != NULL) {
        *pixels = NULL;
    }
    return 0;
}

void imghist_exp_jpeg_gpu_cpu_enter(imghist_exp_jpeg_gpu *d)
{
    (void)d;
}

void imghist_exp_jpeg_gpu_cpu_leave(imghist_exp_jpeg_gpu *d)
{
    (void)d;
}

size_t imghist_exp_jpeg_gpu_stop(imghist_exp_jpeg_gpu *d, imghist_exp_jpeg_gpu_unit *units,
                                 size_t n_units, size_t *declined)
{
    (void)d, (void)units, (void)n_units;
    if (declined != NULL) {
        *declined = 0;
    }
    return 0;
}

#endif
