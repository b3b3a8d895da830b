/*
 * The CUDA backend on device images: launch planning (bands of granules that
 * fit one launch, persistent grids, the batch's chunk numbering) and delivery
 * of results to device or host counts. Every call only queues work on the
 * context's stream.
 */
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "cuda_state.h"
#include "hist_u8.cuh"

/* Rows per launch: a launch covers fewer than IH_MAX_GRANULES granules. */
static uint32_t rows_per_launch(const ih_dev_image *img)
{
    const uint32_t per_row = ih_granules_per_row(img->data, img->pitch, img->width, img->height);
    const uint32_t rows = (uint32_t)((IH_MAX_GRANULES - 1) / per_row);
    return rows > 0 ? rows : 1; /* rows of over 32 GiB do not exist on any GPU */
}

static ih_geom geom_of(const ih_dev_image *img, uint32_t row0, uint32_t rows)
{
    ih_geom g;
    memset(&g, 0, sizeof g); /* no uninitialised bytes go to the GPU */
    ih_set_geom(&g, img->data + (size_t)row0 * img->pitch, img->pitch, img->width, rows);
    return g;
}

/* Blocks for a persistent grid: no more than there are chunks of work. */
static int grid_for(int resident, uint32_t granules)
{
    const uint64_t chunks = ((uint64_t)granules + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
    return (int)(chunks < (uint64_t)resident ? (chunks > 0 ? chunks : 1) : resident);
}

/* The histogram kernel's resident grid, lowered by IMGHIST_P_EXP_HIST_BLOCKS_PER_SM. */
static int hist_resident(const imghist_ctx *ctx, const ih_cuda_state *s)
{
    int bps = s->hist_bps > 0 ? s->hist_bps : 1;
    const int64_t knob = ctx->params.hist_blocks_per_sm;
    if (knob > 0 && knob < bps) {
        bps = (int)knob;
    }
    return s->sm_count * bps;
}

imghist_status ih_cuda_count(imghist_ctx *ctx, const ih_dev_image *image,
                             unsigned long long *hist_out, int accumulate,
                             unsigned char *lut_out, int last)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const ih_dev_image flat = ih_flat(*image, image->width);
    const ih_dev_image *img = &flat;
    const int resident = hist_resident(ctx, s);
    IH_FOR_EACH_BAND(b, img->height, rows_per_launch(img)) {
        const ih_geom g = geom_of(img, b.row0, b.rows);
        ih_hist_launch l;
        l.grid = grid_for(resident, g.total);
        l.ws = s->workspace;
        l.counter = s->ticket;
        l.hist_out = hist_out;
        l.lut_out = lut_out;
        l.accumulate = accumulate != 0;
        l.finalize = last && ih_bands_last(&b);
        l.pil = ctx->eq_method == IMGHIST_EQ_PIL;
        IH_CUDA_TRY(ctx, "histogram launch", ih_launch_hist_u8(g, l, s->stream));
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_apply(imghist_ctx *ctx, const ih_dev_image *image, uint8_t *dst,
                             size_t dst_pitch)
{
    ih_cuda_state *s = ih_cuda(ctx);
    /* One row only where the lookups store whole granules: the byte kernel
     * spreads its blocks over rows. */
    const bool same_phase = (((uintptr_t)image->data ^ (uintptr_t)dst) & 15) == 0;
    const ih_dev_image flat = same_phase ? ih_flat(*image, dst_pitch) : *image;
    const ih_dev_image *src = &flat;
    const int resident = s->sm_count * (s->apply_bps > 0 ? s->apply_bps : 1);
    IH_FOR_EACH_BAND(b, src->height, rows_per_launch(src)) {
        const ih_geom g = geom_of(src, b.row0, b.rows);
        IH_CUDA_TRY(ctx, "LUT launch",
                    ih_launch_apply_lut(g, dst + (size_t)b.row0 * dst_pitch, dst_pitch, s->lut,
                                        grid_for(resident, g.total), s->stream));
    }
    return IMGHIST_OK;
}

/*
 * Where the kernel writes results bound for `out`: device counts directly;
 * host counts through `staging` (device), copied back by ih_cuda_deliver(). With
 * accumulate, host counts are first copied up so that the kernel adds to them
 * (on the stream, so the host buffer is read when the stream gets there for
 * pinned memory; pageable memory is read during the call).
 */
static imghist_status result_target(imghist_ctx *ctx, const imghist_counts *out, size_t n,
                                    int accumulate, unsigned long long *staging,
                                    unsigned long long **target)
{
    if (out->mem == IMGHIST_MEM_DEVICE) {
        *target = (unsigned long long *)out->data;
        return IMGHIST_OK;
    }
    *target = staging;
    if (accumulate) {
        IH_CUDA_TRY(ctx, "count upload",
                    cudaMemcpyAsync(staging, out->data, n * sizeof(uint64_t),
                                    cudaMemcpyHostToDevice, ih_cuda(ctx)->stream));
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_deliver(imghist_ctx *ctx, const imghist_counts *out, size_t n,
                               const unsigned long long *target)
{
    if (out->mem == IMGHIST_MEM_HOST) {
        IH_CUDA_TRY(ctx, "result copy",
                    cudaMemcpyAsync(out->data, target, n * sizeof(uint64_t),
                                    cudaMemcpyDeviceToHost, ih_cuda(ctx)->stream));
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_hist_device(imghist_ctx *ctx, const imghist_view *src,
                                   const ih_hist_job *job, const imghist_counts *out)
{
    const ih_dev_image img = ih_dev_image_of(src);
    unsigned long long *target;
    imghist_status st = result_target(ctx, out, 256, job->accumulate, ih_cuda(ctx)->hist, &target);
    if (st == IMGHIST_OK) st = ih_cuda_count(ctx, &img, target, job->accumulate, NULL, 1);
    if (st == IMGHIST_OK) st = ih_cuda_deliver(ctx, out, 256, target);
    return st;
}

imghist_status ih_cuda_equalize_device(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *dst, const imghist_counts *hist)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const ih_dev_image img = ih_dev_image_of(src);
    unsigned long long *target =
        hist != NULL && hist->mem == IMGHIST_MEM_DEVICE ? (unsigned long long *)hist->data
                                                        : s->hist;
    /* A small image: one launch (read once, counted, looked up). */
    int done = 0;
    imghist_status st = ih_cuda_equalize_one_small(ctx, src, dst, hist != NULL ? target : NULL,
                                                   &done);
    if (st == IMGHIST_OK && !done) st = ih_cuda_count(ctx, &img, target, 0, s->lut, 1);
    if (st == IMGHIST_OK && !done) {
        st = ih_cuda_apply(ctx, &img, (uint8_t *)dst->data, dst->pitch);
    }
    if (st == IMGHIST_OK && hist != NULL) st = ih_cuda_deliver(ctx, hist, 256, target);
    return st;
}

imghist_status ih_cuda_grow_async(imghist_ctx *ctx, void **buf, size_t *cap, size_t need,
                                  int oom_ok)
{
    if (need <= *cap) {
        return IMGHIST_OK;
    }
    cudaStream_t stream = ih_cuda(ctx)->stream;
    if (*buf != NULL) {
        IH_CUDA_TRY(ctx, "free", cudaFreeAsync(*buf, stream));
        *buf = NULL;
        *cap = 0;
    }
    const cudaError_t e = cudaMallocAsync(buf, need, stream);
    if (e == cudaErrorMemoryAllocation && oom_ok) {
        (void)cudaGetLastError(); /* out of memory is not sticky */
        *buf = NULL;
        return IH_E_GPU_OOM;
    }
    IH_CUDA_TRY(ctx, "allocation", e);
    *cap = need;
    return IMGHIST_OK;
}

/*
 * The batch's descriptors on the GPU: the geometries, then the chunk
 * numbering (count + 1 entries, image i owns chunks [start[i], start[i+1])).
 * A pipeline that passes the same frames again finds them there already
 * (for 2000 images, building them takes tens of microseconds on the host).
 */
static imghist_status upload_batch(imghist_ctx *ctx, const imghist_view *src, size_t count,
                                   uint32_t *chunks_out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (ih_desc_cached(&s->batch_desc, src, NULL, count, 0, chunks_out, sizeof *chunks_out)) {
        return IMGHIST_OK;
    }
    const size_t desc_bytes = count * sizeof(ih_geom) + (count + 1) * sizeof(uint32_t);
    uint8_t *desc = NULL;
    imghist_status st = ih_desc_buffer(ctx, &s->batch_desc, desc_bytes, &desc);
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_geom *g = (ih_geom *)desc;
    uint32_t *chunk_start = (uint32_t *)(desc + count * sizeof(ih_geom));
    uint64_t chunks = 0;
    for (size_t i = 0; i < count; i++) {
        const ih_dev_image img = ih_flat(ih_dev_image_of(&src[i]), src[i].width);
        const uint32_t per_row = ih_granules_per_row(img.data, img.pitch, img.width, img.height);
        if ((uint64_t)per_row * img.height >= IH_MAX_GRANULES) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "batch image %zu is over 32 GiB; give it to imghist_histogram", i);
        }
        g[i] = geom_of(&img, 0, img.height);
        chunk_start[i] = (uint32_t)chunks;
        chunks += (g[i].total + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
        if (chunks > UINT32_MAX) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch too large for one call");
        }
    }
    chunk_start[count] = (uint32_t)chunks;
    *chunks_out = (uint32_t)chunks;
    return ih_desc_upload(ctx, &s->batch_desc, desc_bytes, src, NULL, count, 0, chunks_out,
                          sizeof *chunks_out);
}

/* The most images whose counts a batch writes through its workspace (2 KiB
 * and a ticket each: 64 MiB). */
#define IH_BATCH_WS_IMAGES 32768

/*
 * A batch tensor's plan (image 0 of the tensor, `stride` bytes apart, a
 * multiple of 16): image 0 and the stride travel in the launch, to the
 * tiny-image kernel or to the uniform batch kernel (where it spills
 * nothing). *usable = 0 when neither takes it (descriptors then).
 */
static imghist_status uniform_batch(imghist_ctx *ctx, const imghist_view *first, size_t count,
                                    long long stride, ih_batch_images *imgs, bool *tiny,
                                    uint32_t *chunks, int *usable)
{
    ih_cuda_state *s = ih_cuda(ctx);
    memset(imgs, 0, sizeof *imgs);
    *usable = 0;
    const ih_dev_image img = ih_flat(ih_dev_image_of(first), first->width);
    const uint32_t per_row = ih_granules_per_row(img.data, img.pitch, img.width, img.height);
    if ((uint64_t)per_row * img.height >= IH_MAX_GRANULES) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "batch image 0 is over 32 GiB; give it to imghist_histogram");
    }
    imgs->g0 = geom_of(&img, 0, img.height);
    imgs->stride = stride;
    imgs->per_image = (imgs->g0.total + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
    *tiny = (uint64_t)imgs->g0.total * 16 <= ih_tiny_limit(ctx);
    if (!*tiny && !s->batch_uniform) {
        return IMGHIST_OK;
    }
    if (!*tiny && (uint64_t)imgs->per_image * count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch too large for one call");
    }
    *chunks = imgs->per_image * (uint32_t)count;
    *usable = 1;
    return IMGHIST_OK;
}

static imghist_status run_hist_batch(imghist_ctx *ctx, const ih_batch_images *imgs, bool tiny,
                                     uint32_t chunks, size_t count, const ih_hist_job *job,
                                     const imghist_counts *out);

imghist_status ih_cuda_hist_batch_device(imghist_ctx *ctx, const imghist_view *src,
                                         size_t count, const ih_hist_job *job,
                                         const imghist_counts *out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_batch_images imgs;
    bool tiny = false;
    uint32_t chunks = 0;
    int usable = 0;
    long long stride = 0;
    if (ih_list_uniform(ctx, src, NULL, count, &stride, NULL)) {
        const imghist_status st =
            uniform_batch(ctx, &src[0], count, stride, &imgs, &tiny, &chunks, &usable);
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    if (!usable) {
        memset(&imgs, 0, sizeof imgs);
        tiny = false;
        const imghist_status st = upload_batch(ctx, src, count, &chunks);
        if (st != IMGHIST_OK) {
            return st;
        }
        const uint8_t *desc = (const uint8_t *)s->batch_desc.dev;
        imgs.geoms = (const ih_geom *)desc;
        imgs.chunk_start = (const uint32_t *)(desc + count * sizeof(ih_geom));
    }
    return run_hist_batch(ctx, &imgs, tiny, chunks, count, job, out);
}

imghist_status ih_cuda_hist_strided(imghist_ctx *ctx, const imghist_view *first, size_t count,
                                    ptrdiff_t stride, const ih_hist_job *job,
                                    const imghist_counts *out)
{
    if (stride % 16 == 0) {
        ih_batch_images imgs;
        bool tiny = false;
        uint32_t chunks = 0;
        int usable = 0;
        const imghist_status st =
            uniform_batch(ctx, first, count, stride, &imgs, &tiny, &chunks, &usable);
        if (st != IMGHIST_OK || usable) {
            return st != IMGHIST_OK ? st : run_hist_batch(ctx, &imgs, tiny, chunks, count, job, out);
        }
    }
    /* Images of other phases, or no uniform kernel here: as views. */
    imghist_view *v = ih_strided_views(first, count, stride);
    if (v == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", count);
    }
    const imghist_status st = ih_cuda_hist_batch_device(ctx, v, count, job, out);
    free(v);
    return st;
}

/* The launches of a planned batch: the counts' target, then the tiny-image
 * kernel or the batch kernel with its workspace. */
static imghist_status run_hist_batch(imghist_ctx *ctx, const ih_batch_images *imgs_in, bool tiny,
                                     uint32_t chunks, size_t count, const ih_hist_job *job,
                                     const imghist_counts *out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const ih_batch_images imgs = *imgs_in;
    imghist_status st = IMGHIST_OK;
    const size_t n = count * job->len;
    unsigned long long *target = (unsigned long long *)out->data;
    if (st == IMGHIST_OK && out->mem == IMGHIST_MEM_HOST) {
        st = ih_cuda_grow_async(ctx, (void **)&s->batch_hist, &s->batch_hist_cap,
                                n * sizeof(uint64_t), 0);
        if (st == IMGHIST_OK) {
            st = result_target(ctx, out, n, job->accumulate, s->batch_hist, &target);
        }
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    if (tiny) {
        ih_tiny_launch t;
        memset(&t, 0, sizeof t);
        t.g0 = imgs.g0;
        t.stride = imgs.stride;
        t.count = (uint32_t)count;
        t.hists = target;
        t.accumulate = job->accumulate != 0;
        t.grid = ih_tiny_grid(s, count);
        IH_CUDA_TRY(ctx, "batch histogram launch", ih_launch_batch_tiny(t, s->stream));
        return ih_cuda_deliver(ctx, out, n, target);
    }
    /* The kernel writes the counts (no memset in front, bench/RESULTS.md),
     * through a workspace for the images split over blocks, zero between
     * launches (every image has a chunk: empty views are refused before).
     * Accumulating adds into the caller's counts; so does a batch of more
     * than IH_BATCH_WS_IMAGES images, into counts cleared first, rather than
     * hold a workspace as large as its counts, and every batch on a GPU
     * whose build of the writing kernel spills (ih_batch_kernels). */
    unsigned long long *ws = NULL;
    unsigned int *tickets = NULL;
    const size_t ws_image = 256 * sizeof(uint64_t) + sizeof(unsigned int);
    if (!job->accumulate && (count > IH_BATCH_WS_IMAGES || !s->batch_writes)) {
        IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(target, 0, n * sizeof(uint64_t), s->stream));
    } else if (!job->accumulate) {
        if (count > s->batch_ws_images) {
            const size_t need = count * ws_image;
            s->batch_ws_images = 0; /* until it has grown and been cleared */
            st = ih_cuda_grow_async(ctx, &s->batch_ws, &s->batch_ws_cap, need, 0);
            if (st != IMGHIST_OK) {
                return st;
            }
            IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(s->batch_ws, 0, need, s->stream));
            s->batch_ws_images = count;
        }
        ws = (unsigned long long *)s->batch_ws;
        tickets = (unsigned int *)(ws + s->batch_ws_images * 256);
    }
    /* One run per block: the chunks split evenly over the resident grid, so
     * that every block reads one contiguous share, crosses the fewest image
     * ends and finishes with the others; shorter runs taken in turn were no
     * faster (bench_batch). IMGHIST_P_EXP_BATCH_RUN sets the run length
     * instead. */
    const int resident = s->sm_count * (s->batch_bps > 0 ? s->batch_bps : 1);
    uint64_t run = ((uint64_t)chunks + (uint64_t)resident - 1) / (uint64_t)resident;
    run = run < 1 ? 1 : run;
    if (ctx->params.batch_run > 0) {
        run = (uint64_t)ctx->params.batch_run;
    }
    const uint64_t runs = ((uint64_t)chunks + run - 1) / run;
    const int grid = runs < (uint64_t)resident ? (int)(runs > 0 ? runs : 1) : resident;
    IH_CUDA_TRY(ctx, "batch histogram launch",
                ih_launch_hist_u8_batch(imgs, (uint32_t)count, (uint32_t)run, grid, target, ws,
                                        tickets, s->stream));
    return ih_cuda_deliver(ctx, out, n, target);
}
