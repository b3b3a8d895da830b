/*
 * nvJPEG's hardware decoder for batch runs (gpu_decode.h). One thread owns
 * nvJPEG, the CUDA stream and a CUDA context of the library: it takes the
 * files the workers queue, checks each (well formed, a layout whose luma is
 * libjpeg-turbo's, one the hardware takes), decodes a batch into one device
 * buffer, counts every plane with imghist_histogram_list on the same stream
 * and hands each worker its counts. The workers wait on their file; the ones
 * beyond the run's -j exist only to keep the next batch full while one is
 * decoded, and decode on the CPU only under the -j cap.
 */
#define _GNU_SOURCE
#include "gpu_decode.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_context.h"
#include "measure.h"

int ih_gpu_decode_fits(const ih_cli_args *a, const char **why)
{
    /* Luma only: nvJPEG's colour conversion is not libjpeg-turbo's, its luma
     * plane is. --json reports sizes after the EXIF orientation, which the
     * GPU's path does not read; the rest need the decoded image itself. */
    const char *no = a->gray != IMGHIST_GRAY_LUMA
                         ? "it needs --gray luma (the hardware's colour conversion is not "
                           "libjpeg-turbo's; its luma plane is)"
                     : a->channels || a->native_depth ? "not with --channels or --depth native"
                     : a->equalize_out != NULL || a->plot_dir != NULL || a->json_out != NULL
                         ? "it writes --csv and --total only (not --equalize, --plot-dir or "
                           "--json)"
                     : a->mask != NULL || a->joint != NULL ? "not with --mask or --joint"
                     : a->read_truncated ? "not with --read-truncated"
                                         : NULL;
    if (why != NULL) {
        *why = no;
    }
    return no == NULL;
}

/*
 * Whether data is a JPEG the GPU may decode to libjpeg-turbo's luma: SOF0 or
 * SOF1 (Huffman, sequential), 8-bit, 1 or 3 components that libjpeg takes as
 * gray or YCbCr (not RGB: its gray is then converted), and whole: every
 * segment inside the file, the scans ending in a marker, an EOI at the end.
 * libjpeg-turbo refuses a file that ends early; nvJPEG may not, so such
 * files go to the CPU, which says why.
 */
static int jpeg_fits_gpu(const uint8_t *p, size_t n)
{
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
            if ((comps != 1 && comps != 3) || sl < 6 + 3 * (size_t)comps) {
                return 0;
            }
            for (int c = 0; c < comps; c++) {
                ids[c] = s[6 + 3 * c];
            }
            frame = 1;
        } else if ((m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) ||
                   m == 0xDC) {
            return 0; /* progressive, lossless, arithmetic, hierarchical; DNL */
        } else if (m == 0xE0 && sl >= 5 && memcmp(s, "JFIF", 5) == 0) {
            jfif = 1;
        } else if (m == 0xEE && sl >= 12 && memcmp(s, "Adobe", 5) == 0) {
            adobe = s[11];
        }
        i += len;
        if (m == 0xDA) {
            if (!frame) {
                return 0;
            }
            /* The entropy-coded data: stuffed zeros, restart markers and fill
             * bytes belong to it; any other marker ends it. */
            while (i + 1 < n && !(p[i] == 0xFF && p[i + 1] != 0x00 && p[i + 1] != 0xFF &&
                                  (p[i + 1] < 0xD0 || p[i + 1] > 0xD7))) {
                i += p[i] == 0xFF ? 2 : 1;
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

#if IH_HAVE_NVJPEG

#include <dlfcn.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

/* Most files in one batch, and what the GPU waits for before it decodes a
 * batch that is not full. The hardware decoders reach their rate from
 * about 32 images a batch. */
#define BATCH_MAX 48
#define FILL_WAIT_NS 2000000L
/* An auto run of fewer files stays on the CPU: nvJPEG's start (CUDA's,
 * then the decoder's, a second or more) would outlast it. */
#define AUTO_MIN_FILES 64
/* Device memory for one batch's luma planes: at most this, and at most a
 * quarter of what is free. */
#define PLANES_MAX_BYTES ((size_t)1 << 30)

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

/* One file a worker waits on. */
typedef struct job {
    const uint8_t *data;
    size_t size;
    uint32_t w, h;
    uint64_t *counts; /* the worker's, counters_each long */
    int state;        /* 0 queued, 1 counted, 2 declined */
    struct job *next;
} job;

struct ih_gpu_decoder {
    const ih_cli_args *a;
    int device;
    int share; /* auto: a worker over the -j cap decodes on the CPU when the queue is full */
    nvj_api api;
    nvjpegHandle_t handle;
    nvjpegJpegState_t state;
    nvjpegJpegStream_t parsed;
    cudaStream_t stream;
    imghist_ctx *ctx;
    imghist_histspec spec;
    ih_hist_out binning; /* the spec's fields for the records */
    size_t counters_each;
    uint64_t max_pixels, max_bytes;
    uint8_t *planes;
    size_t planes_bytes;
    uint64_t *counts;

    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv, cpu_cv;
    job *head, *tail;
    size_t queued;
    int closing;
    int ready;  /* under mu: nvJPEG is open; atomic reads outside */
    int failed; /* under mu: it could not be opened */
    char why[256];
    unsigned cpu_free, cpu_jobs;
    size_t on_gpu, declined;
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

/* nvJPEG's hardware backend, a stream, a CUDA context of the library on it
 * and the planes' memory; 0, or -1 with why. On the decoder's thread. */
static int open_gpu(ih_gpu_decoder *d, char *why, size_t len)
{
    int count = 0;
    cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess || count == 0) {
        snprintf(why, len, "no usable GPU (%s)", ce != cudaSuccess ? cudaGetErrorString(ce)
                                                                   : "none found");
        return -1;
    }
    if (d->device >= count || cudaSetDevice(d->device) != cudaSuccess) {
        snprintf(why, len, "GPU %d cannot be used", d->device);
        return -1;
    }
    nvjpegStatus_t s = d->api.create_ex(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &d->handle);
    if (s != NVJPEG_STATUS_SUCCESS) {
        d->handle = NULL;
        snprintf(why, len, "nvJPEG has no hardware decoder on GPU %d (status %d)", d->device,
                 (int)s);
        return -1;
    }
    if (d->api.state_create(d->handle, &d->state) != NVJPEG_STATUS_SUCCESS ||
        d->api.stream_create(d->handle, &d->parsed) != NVJPEG_STATUS_SUCCESS) {
        snprintf(why, len, "nvJPEG's decoder state cannot be made");
        return -1;
    }
    if (cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking) != cudaSuccess) {
        d->stream = NULL;
        snprintf(why, len, "a CUDA stream cannot be made");
        return -1;
    }
    ih_cli_args cuda = *d->a;
    cuda.backend = IMGHIST_BACKEND_CUDA;
    if (ih_make_context_on(&cuda, 1, d->device, &d->ctx) != IH_EXIT_OK ||
        imghist_set_stream(d->ctx, (imghist_stream)d->stream) != IMGHIST_OK) {
        snprintf(why, len, "no CUDA context of the library on GPU %d", d->device);
        return -1;
    }
    int64_t v = 0;
    imghist_get_param(d->ctx, IMGHIST_P_MAX_PIXELS, &v);
    d->max_pixels = (uint64_t)v;
    imghist_get_param(d->ctx, IMGHIST_P_MAX_INPUT_BYTES, &v);
    d->max_bytes = (uint64_t)v;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    d->planes_bytes = free_b / 4 < PLANES_MAX_BYTES ? free_b / 4 : PLANES_MAX_BYTES;
    d->counts = malloc(BATCH_MAX * d->counters_each * sizeof *d->counts);
    if (d->counts == NULL || cudaMalloc((void **)&d->planes, d->planes_bytes) != cudaSuccess) {
        d->planes = NULL;
        snprintf(why, len, "no memory for a batch of luma planes on GPU %d", d->device);
        return -1;
    }
    return 0;
}

static void close_gpu(ih_gpu_decoder *d)
{
    if (d->stream != NULL) {
        cudaStreamSynchronize(d->stream);
    }
    imghist_destroy(d->ctx);
    cudaFree(d->planes);
    if (d->stream != NULL) {
        cudaStreamDestroy(d->stream);
    }
    if (d->parsed != NULL) {
        d->api.stream_destroy(d->parsed);
    }
    if (d->state != NULL) {
        d->api.state_destroy(d->state);
    }
    if (d->handle != NULL) {
        d->api.destroy(d->handle);
    }
    free(d->counts);
    /* The library stays loaded: nvJPEG's own threads may outlive its handle. */
}

/* Whether job j is one the hardware takes within the limits; its size. */
static int accept_job(ih_gpu_decoder *d, job *j)
{
    int unsupported = 1;
    unsigned w = 0, h = 0;
    if (j->size > d->max_bytes || !jpeg_fits_gpu(j->data, j->size) ||
        d->api.parse_header(d->handle, j->data, j->size, d->parsed) != NVJPEG_STATUS_SUCCESS ||
        d->api.frame_dims(d->parsed, &w, &h) != NVJPEG_STATUS_SUCCESS ||
        d->api.batched_supported(d->handle, d->parsed, &unsupported) != NVJPEG_STATUS_SUCCESS ||
        unsupported != 0 || w == 0 || h == 0 || (uint64_t)w * h > d->max_pixels ||
        (size_t)w * h > d->planes_bytes) {
        return 0;
    }
    j->w = w;
    j->h = h;
    return 1;
}

/* Decodes and counts the n jobs (accepted, within the planes' memory);
 * whether it worked for all of them. */
static int run_batch(ih_gpu_decoder *d, job **jobs, size_t n)
{
    const unsigned char *data[BATCH_MAX];
    size_t lengths[BATCH_MAX];
    nvjpegImage_t out[BATCH_MAX];
    imghist_view views[BATCH_MAX];
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        data[k] = jobs[k]->data;
        lengths[k] = jobs[k]->size;
        memset(&out[k], 0, sizeof out[k]);
        out[k].channel[0] = d->planes + at;
        out[k].pitch[0] = jobs[k]->w;
        views[k] = (imghist_view){.data = d->planes + at, .dtype = IMGHIST_U8,
                                  .mem = IMGHIST_MEM_DEVICE, .width = jobs[k]->w,
                                  .height = jobs[k]->h, .pitch = jobs[k]->w, .channels = 1};
        at += (size_t)jobs[k]->w * jobs[k]->h;
    }
    if (d->api.batched_init(d->handle, d->state, (int)n, 1, NVJPEG_OUTPUT_Y) !=
            NVJPEG_STATUS_SUCCESS ||
        d->api.batched(d->handle, d->state, data, lengths, out, d->stream) !=
            NVJPEG_STATUS_SUCCESS) {
        return 0;
    }
    const imghist_counts counts = {d->counts, n * d->counters_each, IMGHIST_MEM_HOST};
    if (imghist_histogram_list(d->ctx, views, n, &d->spec, &counts) != IMGHIST_OK ||
        cudaStreamSynchronize(d->stream) != cudaSuccess) {
        return 0;
    }
    for (size_t k = 0; k < n; k++) {
        memcpy(jobs[k]->counts, d->counts + k * d->counters_each,
               d->counters_each * sizeof *d->counts);
    }
    return 1;
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

/* The decoder's thread: opens nvJPEG, then a batch at a time until closed. */
static void *decoder_main(void *arg)
{
    ih_gpu_decoder *d = arg;
    char why[256] = "";
    const int ok = open_gpu(d, why, sizeof why) == 0;
    pthread_mutex_lock(&d->mu);
    if (!ok) {
        d->failed = 1;
        snprintf(d->why, sizeof d->why, "%s", why);
    }
    __atomic_store_n(&d->ready, ok, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&d->done_cv);
    while (ok) {
        while (d->head == NULL && !d->closing) {
            pthread_cond_wait(&d->work_cv, &d->mu);
        }
        if (d->head == NULL) {
            break;
        }
        if (d->queued < BATCH_MAX && !d->closing) {
            const struct timespec until = soon(FILL_WAIT_NS);
            pthread_cond_timedwait(&d->work_cv, &d->mu, &until);
        }
        job *take = d->head;
        d->head = d->tail = NULL;
        d->queued = 0;
        pthread_mutex_unlock(&d->mu);

        job *batch[BATCH_MAX];
        size_t n = 0, bytes = 0;
        job_list left = {NULL, NULL}, declined = {NULL, NULL};
        for (job *j = take, *next; j != NULL; j = next) {
            next = j->next;
            j->next = NULL;
            if (n == BATCH_MAX) {
                push(&left, j); /* for the next batch */
            } else if (!accept_job(d, j)) {
                push(&declined, j);
            } else if (bytes + (size_t)j->w * j->h > d->planes_bytes) {
                push(&left, j);
            } else {
                bytes += (size_t)j->w * j->h;
                batch[n++] = j;
            }
        }
        pthread_mutex_lock(&d->mu);
        for (job *j = declined.head; j != NULL; j = j->next) {
            j->state = 2; /* to the CPU at once, not after the batch */
        }
        pthread_cond_broadcast(&d->done_cv);
        pthread_mutex_unlock(&d->mu);
        const int done = n > 0 && run_batch(d, batch, n);
        pthread_mutex_lock(&d->mu);
        for (size_t k = 0; k < n; k++) {
            batch[k]->state = done ? 1 : 2;
        }
        d->on_gpu += done ? n : 0;
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
    }
    pthread_mutex_unlock(&d->mu);
    if (ok) {
        close_gpu(d);
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

int ih_gpu_decode_file(ih_gpu_decoder *d, const ih_file *f, uint32_t *w, uint32_t *h,
                       ih_hist_out *hist)
{
    if (d == NULL || !__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    if (d->share) { /* a full queue: this one is quicker on the CPU */
        pthread_mutex_lock(&d->mu);
        const int full = d->queued >= BATCH_MAX && d->cpu_free > 0;
        pthread_mutex_unlock(&d->mu);
        if (full) {
            return 0;
        }
    }
    size_t size = 0;
    uint8_t *data = read_jpeg(f->path, d->max_bytes, &size);
    uint64_t *counts = data != NULL ? malloc(d->counters_each * sizeof *counts) : NULL;
    if (counts == NULL) {
        free(data);
        return 0;
    }
    job j = {.data = data, .size = size, .counts = counts};
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
    if (j.state != 1) {
        free(counts);
        return 0;
    }
    *hist = d->binning;
    hist->counts = counts;
    *w = j.w;
    *h = j.h;
    return 1;
}

static void *no_thread_start(ih_gpu_decoder *d)
{
    pthread_cond_destroy(&d->cpu_cv);
    pthread_cond_destroy(&d->done_cv);
    pthread_cond_destroy(&d->work_cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
    return NULL;
}

int ih_gpu_decoder_start(const ih_cli_args *a, size_t n_files, unsigned cpu_jobs,
                         ih_gpu_decoder **out, char *err, size_t errlen)
{
    *out = NULL;
    const int want = a->decode == IH_DECODE_GPU;
    if (a->decode == IH_DECODE_CPU || !ih_gpu_decode_fits(a, NULL) ||
        (!want && (a->backend == IMGHIST_BACKEND_CPU || n_files < AUTO_MIN_FILES))) {
        return 0;
    }
    ih_gpu_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return want ? -1 : 0;
    }
    /* Without the library, auto changes nothing in the run's plan. */
    char why[200];
    if (load_api(&d->api, why, sizeof why) != 0) {
        if (d->api.so != NULL) {
            dlclose(d->api.so);
        }
        free(d);
        snprintf(err, errlen, "--decode gpu: %s", why);
        return want ? -1 : 0;
    }
    d->a = a;
    d->device = a->scale.n_gpus > 0 ? a->scale.gpus[0] : 0;
    d->share = !want;
    d->cpu_free = d->cpu_jobs = cpu_jobs > 0 ? cpu_jobs : 1;
    /* Every JPEG here is 8-bit: the spec of an 8-bit image under the options. */
    const imghist_view u8 = {.dtype = IMGHIST_U8, .width = 1, .height = 1, .pitch = 1};
    char msg[256];
    if (ih_cli_spec(NULL, a, 0, &u8, NULL, &d->spec, &d->binning, msg, sizeof msg) !=
        IMGHIST_OK) {
        free(d);
        return 0; /* the CPU's path says why, for each image */
    }
    d->binning.channels = 1;
    d->binning.names = "l";
    d->counters_each = imghist_counts_len(&d->spec, IMGHIST_U8, 1);
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->done_cv, NULL);
    pthread_cond_init(&d->cpu_cv, NULL);
    if (d->counters_each != ih_hist_stride(&d->binning) ||
        pthread_create(&d->tid, NULL, decoder_main, d) != 0) {
        no_thread_start(d);
        snprintf(err, errlen, "--decode gpu: the decoder's thread cannot be started");
        return want ? -1 : 0;
    }
    d->started = 1;
    if (want) { /* the run needs it: wait for it */
        pthread_mutex_lock(&d->mu);
        while (!d->ready && !d->failed) {
            pthread_cond_wait(&d->done_cv, &d->mu);
        }
        const int failed = d->failed;
        pthread_mutex_unlock(&d->mu);
        if (failed) {
            snprintf(err, errlen, "--decode gpu: %s", d->why);
            ih_gpu_decoder_stop(d);
            return -1;
        }
    }
    *out = d;
    return 0;
}

unsigned ih_gpu_extra_workers(const ih_gpu_decoder *d)
{
    /* One batch decoding, the next filling. */
    return d != NULL ? 2 * BATCH_MAX : 0;
}

void ih_gpu_cpu_enter(ih_gpu_decoder *d)
{
    if (d == NULL) {
        return;
    }
    pthread_mutex_lock(&d->mu);
    while (d->cpu_free == 0) {
        pthread_cond_wait(&d->cpu_cv, &d->mu);
    }
    d->cpu_free--;
    pthread_mutex_unlock(&d->mu);
}

void ih_gpu_cpu_leave(ih_gpu_decoder *d)
{
    if (d == NULL) {
        return;
    }
    pthread_mutex_lock(&d->mu);
    d->cpu_free++;
    pthread_cond_signal(&d->cpu_cv);
    pthread_mutex_unlock(&d->mu);
}

void ih_gpu_decoder_stop(ih_gpu_decoder *d)
{
    if (d == NULL) {
        return;
    }
    pthread_mutex_lock(&d->mu);
    d->closing = 1;
    pthread_cond_broadcast(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->tid, NULL);
    if (ih_verbosity > 0 && (d->share || !d->failed)) { /* gpu's failure is said already */
        if (d->failed) {
            ih_say("decode: every image on the CPU (%s)", d->why);
        } else {
            ih_say("decode: %zu images on GPU %d's hardware JPEG decoder, %zu JPEGs it declined "
                   "on the CPU", d->on_gpu, d->device, d->declined);
        }
    }
    no_thread_start(d);
}

#else /* no nvJPEG in this build */

int ih_gpu_decoder_start(const ih_cli_args *a, size_t n_files, unsigned cpu_jobs,
                         ih_gpu_decoder **out, char *err, size_t errlen)
{
    (void)n_files;
    (void)cpu_jobs;
    *out = NULL;
    if (a->decode == IH_DECODE_GPU) {
        snprintf(err, errlen, "--decode gpu: this imghist was built without nvJPEG (meson "
                              "-Dnvjpeg=enabled, docs/gpu-decode.md)");
        return -1;
    }
    return 0;
}

unsigned ih_gpu_extra_workers(const ih_gpu_decoder *d)
{
    (void)d;
    return 0;
}

int ih_gpu_decode_file(ih_gpu_decoder *d, const ih_file *f, uint32_t *w, uint32_t *h,
                       ih_hist_out *hist)
{
    (void)d, (void)f, (void)w, (void)h, (void)hist;
    (void)jpeg_fits_gpu;
    return 0;
}

void ih_gpu_cpu_enter(ih_gpu_decoder *d)
{
    (void)d;
}

void ih_gpu_cpu_leave(ih_gpu_decoder *d)
{
    (void)d;
}

void ih_gpu_decoder_stop(ih_gpu_decoder *d)
{
    (void)d;
}

#endif
