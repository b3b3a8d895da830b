/*
 * The CUDA backend: device probing, the context's device state, the host-image
 * entry points used on the CUDA backend, and the public device API.
 * Every CUDA call is checked and becomes an imghist_status with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "hist_u8.cuh"
#include "internal.h"

struct ih_cuda_state {
    int device;
    int sm_count;
    int hist_grid;        /* persistent grid: blocks resident on the whole GPU */
    int batch_resident;   /* batch-kernel blocks resident on the whole GPU */
    int apply_grid;
    cudaStream_t stream;  /* for the host-image entry points */
    unsigned long long *ws;      /* IH_WS_COPIES * 256 counters, zero between launches */
    unsigned int *counter;       /* zero between launches */
    unsigned long long *hist;    /* 256 results for host-bound outputs */
    unsigned char *lut;          /* 256 LUT bytes */
    uint8_t *img;                /* staging image for host entry points */
    size_t img_bytes;
    void *batch_desc;            /* batch descriptors: geometries, then chunk starts */
    size_t batch_desc_cap;
    uint8_t *batch_desc_host;    /* what batch_desc holds, to skip re-uploading it */
    size_t batch_desc_bytes;
    unsigned long long *batch_hist; /* batch results bound for the host */
    size_t batch_hist_cap;
};

#define CK(what, call)                                                                      \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            return ih_fail(ctx, IMGHIST_E_CUDA, "CUDA %s failed: %s (%s)", what,            \
                           cudaGetErrorString(e_), cudaGetErrorName(e_));                   \
        }                                                                                   \
    } while (0)

imghist_status ih_cuda_open(imghist_ctx *ctx)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError(); /* clear the non-sticky error */
        return ih_fail(ctx, IMGHIST_E_NO_GPU, "no usable GPU found (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    ih_cuda_state *s = (ih_cuda_state *)calloc(1, sizeof *s);
    if (s == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    ctx->cuda = s;
    imghist_status st = IMGHIST_OK;
    do {
        cudaDeviceProp prop;
        if ((e = cudaGetDevice(&s->device)) != cudaSuccess ||
            (e = cudaGetDeviceProperties(&prop, s->device)) != cudaSuccess) {
            break;
        }
        s->sm_count = prop.multiProcessorCount;
        int hist_bps = 0, batch_bps = 0, apply_bps = 0;
        if ((e = ih_hist_blocks_per_sm(&hist_bps, &batch_bps, &apply_bps)) != cudaSuccess) {
            break; /* no kernel image for this GPU shows up here */
        }
        /* IMGHIST_HIST_BLOCKS_PER_SM lowers the persistent grid (a tuning knob). */
        const char *bps_env = getenv("IMGHIST_HIST_BLOCKS_PER_SM");
        if (bps_env != NULL && atoi(bps_env) > 0 && atoi(bps_env) < hist_bps) {
            hist_bps = atoi(bps_env);
        }
        s->hist_grid = s->sm_count * (hist_bps > 0 ? hist_bps : 1);
        s->batch_resident = s->sm_count * (batch_bps > 0 ? batch_bps : 1);
        s->apply_grid = s->sm_count * (apply_bps > 0 ? apply_bps : 1);
        if ((e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->ws, IH_WS_COPIES * 256 * sizeof(unsigned long long))) !=
                cudaSuccess ||
            (e = cudaMalloc((void **)&s->counter, sizeof(unsigned int))) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->hist, 256 * sizeof(unsigned long long))) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->lut, 256)) != cudaSuccess ||
            (e = cudaMemset(s->ws, 0, IH_WS_COPIES * 256 * sizeof(unsigned long long))) !=
                cudaSuccess ||
            (e = cudaMemset(s->counter, 0, sizeof(unsigned int))) != cudaSuccess ||
            (e = cudaDeviceSynchronize()) != cudaSuccess) {
            break;
        }
    } while (0);
    if (e != cudaSuccess) {
        st = ih_fail(ctx, e == cudaErrorNoKernelImageForDevice ? IMGHIST_E_NO_GPU : IMGHIST_E_CUDA,
                     "no usable GPU: CUDA set-up failed: %s (%s)", cudaGetErrorString(e),
                     cudaGetErrorName(e));
        ih_cuda_close(ctx);
    }
    return st;
}

void ih_cuda_close(imghist_ctx *ctx)
{
    ih_cuda_state *s = ctx->cuda;
    if (s == NULL) {
        return;
    }
    if (s->stream != NULL) {
        cudaStreamSynchronize(s->stream);
    }
    cudaFree(s->ws);
    cudaFree(s->counter);
    cudaFree(s->hist);
    cudaFree(s->lut);
    cudaFree(s->img);
    cudaFree(s->batch_desc);
    free(s->batch_desc_host);
    cudaFree(s->batch_hist);
    if (s->stream != NULL) {
        cudaStreamDestroy(s->stream);
    }
    free(s);
    ctx->cuda = NULL;
}

/* Bands of rows that each fit one launch (below IH_MAX_GRANULES granules). */
static uint32_t rows_per_band(const imghist_device_image *img, uint32_t *per_row)
{
    *per_row = ih_granules_per_row(img->data, img->pitch, img->width, img->height);
    uint32_t band = (uint32_t)((IH_MAX_GRANULES - 1) / *per_row);
    if (band == 0) {
        band = 1; /* rows of over 32 GiB do not exist on any GPU */
    }
    return band < img->height ? band : img->height;
}

static ih_geom band_geom(const imghist_device_image *img, uint32_t row0, uint32_t rows)
{
    ih_geom g;
    g.base = img->data + (size_t)row0 * img->pitch;
    g.pitch = img->pitch;
    g.width = img->width;
    const uint32_t per_row = ih_granules_per_row(g.base, g.pitch, g.width, rows);
    g.total = rows * per_row;
    g.per_row = ih_make_fastdiv(per_row);
    return g;
}

static int grid_for(int resident, uint32_t granules)
{
    const uint64_t chunks = ((uint64_t)granules + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
    return (int)(chunks < (uint64_t)resident ? (chunks > 0 ? chunks : 1) : resident);
}

/* Histogram (and optionally the LUT) of a device image into device memory. */
/* `last`: this image completes the histogram (false for all but the last
 * band of a host image processed in bands). */
static imghist_status run_histogram(imghist_ctx *ctx, const imghist_device_image *img,
                                    unsigned long long *hist_out, unsigned char *lut_out,
                                    bool last, cudaStream_t stream)
{
    ih_cuda_state *s = ctx->cuda;
    uint32_t per_row;
    const uint32_t band = rows_per_band(img, &per_row);
    for (uint32_t row0 = 0; row0 < img->height; row0 += band) {
        const uint32_t rows = img->height - row0 < band ? img->height - row0 : band;
        const ih_geom g = band_geom(img, row0, rows);
        ih_hist_launch l;
        l.grid = grid_for(s->hist_grid, g.total);
        l.ws = s->ws;
        l.counter = s->counter;
        l.hist_out = hist_out;
        l.lut_out = lut_out;
        l.finalize = last && row0 + rows == img->height;
        CK("histogram launch", ih_launch_hist_u8(g, l, stream));
    }
    return IMGHIST_OK;
}

static imghist_status run_apply(imghist_ctx *ctx, const imghist_device_image *src, uint8_t *dst,
                                size_t dst_pitch, cudaStream_t stream)
{
    ih_cuda_state *s = ctx->cuda;
    uint32_t per_row;
    const uint32_t band = rows_per_band(src, &per_row);
    for (uint32_t row0 = 0; row0 < src->height; row0 += band) {
        const uint32_t rows = src->height - row0 < band ? src->height - row0 : band;
        const ih_geom g = band_geom(src, row0, rows);
        CK("LUT launch", ih_launch_apply_lut(g, dst + (size_t)row0 * dst_pitch, dst_pitch, s->lut,
                                             grid_for(s->apply_grid, g.total), stream));
    }
    return IMGHIST_OK;
}

static imghist_status need_cuda(imghist_ctx *ctx)
{
    if (ctx == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    ctx->err[0] = '\0';
    if (ctx->backend != IMGHIST_BACKEND_CUDA || ctx->cuda == NULL) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "the device API needs a context on the CUDA backend");
    }
    return IMGHIST_OK;
}

static imghist_status check_device_image(imghist_ctx *ctx, const imghist_device_image *img)
{
    if (img == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "image descriptor is NULL");
    }
    imghist_status st = ih_check_image(ctx, img->data, img->pitch, img->width, img->height);
    return st;
}

/* ---- host images on the CUDA backend ---- */

/*
 * Host images go through a staging buffer on the GPU. It holds the whole image
 * when GPU memory allows; otherwise as many whole rows as fit, and the image is
 * processed in bands (the kernels accumulate across bands, so the result is
 * the same). IMGHIST_CUDA_STAGING_BYTES caps the buffer (for tests and for
 * sharing the GPU). *band gets the rows per band, or 0 when not even one row
 * fits (the caller runs on the CPU). Any failure other than running out of
 * memory (a GPU fault left by an earlier kernel, say) is an error.
 */
static imghist_status stage(imghist_ctx *ctx, uint32_t width, uint32_t height, uint32_t *band)
{
    ih_cuda_state *s = ctx->cuda;
    size_t want = (size_t)width * height;
    const char *cap_env = getenv("IMGHIST_CUDA_STAGING_BYTES");
    if (cap_env != NULL && *cap_env) {
        const unsigned long long cap = strtoull(cap_env, NULL, 10);
        if (cap > 0 && cap < want) {
            want = (size_t)cap;
        }
    }
    if (want < width) {
        want = width;
    }
    if (s->img_bytes < want) {
        const cudaError_t freed = cudaFree(s->img);
        s->img = NULL;
        s->img_bytes = 0;
        CK("free", freed);
        for (size_t try_bytes = want; try_bytes >= width; try_bytes /= 2) {
            const cudaError_t e = cudaMalloc((void **)&s->img, try_bytes);
            if (e == cudaSuccess) {
                s->img_bytes = try_bytes;
                break;
            }
            s->img = NULL;
            if (e != cudaErrorMemoryAllocation) {
                CK("staging allocation", e);
            }
            (void)cudaGetLastError(); /* out of memory is not sticky */
        }
    }
    const size_t usable = s->img_bytes < want ? s->img_bytes : want;
    const size_t rows = usable / width;
    *band = (uint32_t)(rows < height ? rows : height);
    return IMGHIST_OK;
}

static void note_bands(imghist_ctx *ctx, uint32_t band, uint32_t height)
{
    if (band < height) {
        snprintf(ctx->note, sizeof ctx->note,
                 "the image does not fit in GPU memory: processed in %u bands of %u rows",
                 (height + band - 1) / band, band);
    }
}

static imghist_status upload_band(imghist_ctx *ctx, const uint8_t *pixels, size_t pitch,
                                  uint32_t width, uint32_t row0, uint32_t rows,
                                  imghist_device_image *dimg)
{
    ih_cuda_state *s = ctx->cuda;
    CK("upload", cudaMemcpy2DAsync(s->img, width, pixels + (size_t)row0 * pitch, pitch, width,
                                   rows, cudaMemcpyHostToDevice, s->stream));
    dimg->data = s->img;
    dimg->pitch = width;
    dimg->width = width;
    dimg->height = rows;
    return IMGHIST_OK;
}

imghist_status ih_cuda_host_histogram(imghist_ctx *ctx, const uint8_t *pixels, size_t pitch,
                                      uint32_t width, uint32_t height,
                                      uint64_t hist[IMGHIST_BINS])
{
    ih_cuda_state *s = ctx->cuda;
    uint32_t band = 0;
    imghist_status st = stage(ctx, width, height, &band);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (band == 0) {
        snprintf(ctx->note, sizeof ctx->note, "GPU out of memory: ran on the CPU");
        ih_cpu_histogram(pixels, pitch, width, height, hist);
        return IMGHIST_OK;
    }
    note_bands(ctx, band, height);
    for (uint32_t row0 = 0; row0 < height && st == IMGHIST_OK; row0 += band) {
        const uint32_t rows = height - row0 < band ? height - row0 : band;
        imghist_device_image dimg;
        st = upload_band(ctx, pixels, pitch, width, row0, rows, &dimg);
        if (st == IMGHIST_OK) {
            st = run_histogram(ctx, &dimg, s->hist, NULL, row0 + rows == height, s->stream);
        }
    }
    if (st == IMGHIST_OK) {
        CK("download", cudaMemcpyAsync(hist, s->hist, 256 * sizeof(uint64_t),
                                       cudaMemcpyDeviceToHost, s->stream));
    }
    CK("synchronize", cudaStreamSynchronize(s->stream));
    return st;
}

imghist_status ih_cuda_host_equalize(imghist_ctx *ctx, const uint8_t *src, size_t src_pitch,
                                     uint8_t *dst, size_t dst_pitch, uint32_t width,
                                     uint32_t height, uint64_t hist[IMGHIST_BINS])
{
    ih_cuda_state *s = ctx->cuda;
    uint32_t band = 0;
    imghist_status st = stage(ctx, width, height, &band);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (band == 0) {
        snprintf(ctx->note, sizeof ctx->note, "GPU out of memory: ran on the CPU");
        uint64_t h[IMGHIST_BINS];
        uint8_t lut[IMGHIST_BINS];
        ih_cpu_histogram(src, src_pitch, width, height, h);
        imghist_equalize_lut(h, lut);
        ih_cpu_apply_lut(src, src_pitch, dst, dst_pitch, width, height, lut);
        if (hist != NULL) {
            memcpy(hist, h, sizeof h);
        }
        return IMGHIST_OK;
    }
    note_bands(ctx, band, height);
    imghist_device_image dimg;
    /* Pass 1: histogram and LUT. A single band stays on the GPU for pass 2. */
    for (uint32_t row0 = 0; row0 < height && st == IMGHIST_OK; row0 += band) {
        const uint32_t rows = height - row0 < band ? height - row0 : band;
        st = upload_band(ctx, src, src_pitch, width, row0, rows, &dimg);
        if (st == IMGHIST_OK) {
            st = run_histogram(ctx, &dimg, s->hist, s->lut, row0 + rows == height, s->stream);
        }
    }
    /* Pass 2: look up, band by band. */
    for (uint32_t row0 = 0; row0 < height && st == IMGHIST_OK; row0 += band) {
        const uint32_t rows = height - row0 < band ? height - row0 : band;
        if (band < height) {
            st = upload_band(ctx, src, src_pitch, width, row0, rows, &dimg);
        }
        if (st == IMGHIST_OK) {
            st = run_apply(ctx, &dimg, s->img, width, s->stream);
        }
        if (st == IMGHIST_OK) {
            CK("download", cudaMemcpy2DAsync(dst + (size_t)row0 * dst_pitch, dst_pitch, s->img,
                                             width, width, rows, cudaMemcpyDeviceToHost,
                                             s->stream));
        }
    }
    if (st == IMGHIST_OK && hist != NULL) {
        CK("download", cudaMemcpyAsync(hist, s->hist, 256 * sizeof(uint64_t),
                                       cudaMemcpyDeviceToHost, s->stream));
    }
    CK("synchronize", cudaStreamSynchronize(s->stream));
    return st;
}

/* ---- the public device API ---- */

static imghist_status deliver_hist(imghist_ctx *ctx, uint64_t *hist, imghist_mem mem,
                                   const unsigned long long *dev, size_t count, cudaStream_t stream)
{
    if (mem == IMGHIST_MEM_HOST) {
        CK("result copy", cudaMemcpyAsync(hist, dev, count * 256 * sizeof(uint64_t),
                                          cudaMemcpyDeviceToHost, stream));
    }
    return IMGHIST_OK;
}

static imghist_status check_mem(imghist_ctx *ctx, const void *hist, imghist_mem mem)
{
    if (hist == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "histogram pointer is NULL");
    }
    if (mem != IMGHIST_MEM_HOST && mem != IMGHIST_MEM_DEVICE) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown memory kind %d", (int)mem);
    }
    return IMGHIST_OK;
}

extern "C" imghist_status imghist_cuda_histogram(imghist_ctx *ctx, const imghist_device_image *img,
                                                 uint64_t *hist, imghist_mem hist_mem,
                                                 cudaStream_t stream)
{
    imghist_status st = need_cuda(ctx);
    if (st == IMGHIST_OK) st = check_device_image(ctx, img);
    if (st == IMGHIST_OK) st = check_mem(ctx, hist, hist_mem);
    if (st != IMGHIST_OK) {
        return st;
    }
    unsigned long long *out =
        hist_mem == IMGHIST_MEM_DEVICE ? (unsigned long long *)hist : ctx->cuda->hist;
    st = run_histogram(ctx, img, out, NULL, true, stream);
    if (st == IMGHIST_OK) {
        st = deliver_hist(ctx, hist, hist_mem, out, 1, stream);
    }
    return st;
}

extern "C" imghist_status imghist_cuda_equalize(imghist_ctx *ctx, const imghist_device_image *src,
                                                uint8_t *dst, size_t dst_pitch, uint64_t *hist,
                                                imghist_mem hist_mem, cudaStream_t stream)
{
    imghist_status st = need_cuda(ctx);
    if (st == IMGHIST_OK) st = check_device_image(ctx, src);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (dst == NULL || dst_pitch < src->width) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "destination is NULL or its pitch < width");
    }
    if (hist != NULL && (st = check_mem(ctx, hist, hist_mem)) != IMGHIST_OK) {
        return st;
    }
    unsigned long long *out = (hist != NULL && hist_mem == IMGHIST_MEM_DEVICE)
                                  ? (unsigned long long *)hist
                                  : ctx->cuda->hist;
    st = run_histogram(ctx, src, out, ctx->cuda->lut, true, stream);
    if (st == IMGHIST_OK) {
        st = run_apply(ctx, src, dst, dst_pitch, stream);
    }
    if (st == IMGHIST_OK && hist != NULL) {
        st = deliver_hist(ctx, hist, hist_mem, out, 1, stream);
    }
    return st;
}

/* Grow a stream-ordered device buffer; no host synchronisation. */
static imghist_status grow(imghist_ctx *ctx, void **buf, size_t *cap, size_t need,
                           cudaStream_t stream)
{
    if (need <= *cap) {
        return IMGHIST_OK;
    }
    if (*buf != NULL) {
        CK("free", cudaFreeAsync(*buf, stream));
        *buf = NULL;
        *cap = 0;
    }
    CK("allocation", cudaMallocAsync(buf, need, stream));
    *cap = need;
    return IMGHIST_OK;
}

extern "C" imghist_status imghist_cuda_histogram_batch(imghist_ctx *ctx,
                                                       const imghist_device_image *images,
                                                       size_t count, uint64_t *hists,
                                                       imghist_mem hist_mem, cudaStream_t stream)
{
    imghist_status st = need_cuda(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (images == NULL || count == 0 || count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch is empty or too large");
    }
    if ((st = check_mem(ctx, hists, hist_mem)) != IMGHIST_OK) {
        return st;
    }
    ih_cuda_state *s = ctx->cuda;
    /* One upload: the geometries, then the chunk numbering (count + 1). */
    const size_t desc_bytes = count * sizeof(ih_geom) + (count + 1) * sizeof(uint32_t);
    uint8_t *desc = (uint8_t *)malloc(desc_bytes);
    if (desc == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    ih_geom *g = (ih_geom *)desc;
    uint32_t *chunk_start = (uint32_t *)(desc + count * sizeof(ih_geom));
    uint64_t chunks = 0;
    for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
        st = check_device_image(ctx, &images[i]);
        if (st == IMGHIST_OK) {
            const uint32_t per_row = ih_granules_per_row(images[i].data, images[i].pitch,
                                                         images[i].width, images[i].height);
            if ((uint64_t)per_row * images[i].height >= IH_MAX_GRANULES) {
                st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                             "batch image %zu is over 32 GiB; use imghist_cuda_histogram", i);
            }
        }
        if (st == IMGHIST_OK) {
            g[i] = band_geom(&images[i], 0, images[i].height);
            chunk_start[i] = (uint32_t)chunks;
            chunks += (g[i].total + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
            if (chunks > UINT32_MAX) {
                st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch too large for one call");
            }
        }
    }
    chunk_start[count] = (uint32_t)chunks;
    const size_t out_bytes = count * 256 * sizeof(uint64_t);
    unsigned long long *out = (unsigned long long *)hists;
    if (st == IMGHIST_OK) {
        st = grow(ctx, &s->batch_desc, &s->batch_desc_cap, desc_bytes, stream);
    }
    if (st == IMGHIST_OK && hist_mem == IMGHIST_MEM_HOST) {
        st = grow(ctx, (void **)&s->batch_hist, &s->batch_hist_cap, out_bytes, stream);
        out = s->batch_hist;
    }
    /* A pipeline usually passes the same frames again: then the descriptors on
     * the GPU are already right and the upload (a few microseconds of latency)
     * is skipped. */
    const int same = st == IMGHIST_OK && s->batch_desc_host != NULL &&
                     s->batch_desc_bytes == desc_bytes &&
                     memcmp(s->batch_desc_host, desc, desc_bytes) == 0;
    if (st == IMGHIST_OK && !same) {
        /* From pageable memory the copy is staged before this call returns. */
        cudaError_t e = cudaMemcpyAsync(s->batch_desc, desc, desc_bytes, cudaMemcpyHostToDevice,
                                        stream);
        if (e != cudaSuccess) {
            st = ih_fail(ctx, IMGHIST_E_CUDA, "CUDA descriptor upload failed: %s",
                         cudaGetErrorString(e));
        }
        free(s->batch_desc_host);
        s->batch_desc_host = NULL;
        s->batch_desc_bytes = 0;
        if (st == IMGHIST_OK) {
            s->batch_desc_host = desc; /* keep it to compare with the next call */
            s->batch_desc_bytes = desc_bytes;
            desc = NULL;
        }
    }
    free(desc);
    if (st != IMGHIST_OK) {
        return st;
    }
    CK("memset", cudaMemsetAsync(out, 0, out_bytes, stream));
    const ih_geom *d_geoms = (const ih_geom *)s->batch_desc;
    const uint32_t *d_starts = (const uint32_t *)((uint8_t *)s->batch_desc + count * sizeof(ih_geom));
    /* One run per block: the chunks split evenly over the resident grid, so
     * that every block reads one contiguous share, crosses the fewest image
     * ends and finishes with the others. Measured on an H100 with 2000 images
     * of 640x480 (bench/RESULTS.md): 82-90 % of the read ceiling, against
     * 83-88 % for runs of 16, 17 or 26 chunks taken in turn and 81-85 % for
     * runs of 8. IMGHIST_BATCH_RUN sets the run length instead (a tuning
     * knob). */
    uint64_t run = (chunks + (uint64_t)s->batch_resident - 1) / (uint64_t)s->batch_resident;
    run = run < 1 ? 1 : run;
    const char *run_env = getenv("IMGHIST_BATCH_RUN");
    if (run_env != NULL && atoi(run_env) > 0) {
        run = (uint64_t)atoi(run_env);
    }
    const uint64_t runs = (chunks + run - 1) / run;
    const int grid = runs < (uint64_t)s->batch_resident ? (int)runs : s->batch_resident;
    CK("batch histogram launch",
       ih_launch_hist_u8_batch(d_geoms, d_starts, (uint32_t)count, (uint32_t)run, grid, out,
                               stream));
    return deliver_hist(ctx, hists, hist_mem, out, count, stream);
}
