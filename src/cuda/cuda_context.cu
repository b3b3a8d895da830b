/*
 * The CUDA backend: probing the GPU, the context's device state and stream,
 * CUDA errors as statuses, and the backend table, which sends device views to
 * cuda_device_ops.cu and host views to cuda_host_ops.cu.
 */
#include <stdlib.h>
#include <string.h>

#include "clahe.h"
#include "cuda_compare.h"
#include "cuda_state.h"
#include "equalize_batch.cuh"
#include "hist_u8.cuh"

/* Errors after which the CUDA context is unusable: every later CUDA call
 * returns them again (a kernel's bad access, an assertion, a hardware fault). */
static bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

imghist_status ih_cuda_error(imghist_ctx *ctx, const char *what, cudaError_t e)
{
    if (is_sticky(e)) {
        return ih_fault(ctx, "CUDA %s failed: %s (%s)", what, cudaGetErrorString(e),
                        cudaGetErrorName(e));
    }
    (void)cudaGetLastError(); /* a non-sticky error must not surface in a later call */
    return ih_fail(ctx, IMGHIST_E_CUDA, "CUDA %s failed: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

/*
 * The context's GPU made current for the length of one call, and the calling
 * thread's device given back after it: a context keeps to its device whatever
 * thread calls it, and the caller's own choice of device is left alone.
 * cudaGetDevice and an unneeded cudaSetDevice cost nothing measurable.
 */
class device_scope {
  public:
    explicit device_scope(int device)
    {
        if ((error_ = cudaGetDevice(&prev_)) == cudaSuccess && prev_ != device) {
            if ((error_ = cudaSetDevice(device)) == cudaSuccess) {
                restore_ = true;
            }
        }
    }
    ~device_scope()
    {
        if (restore_) {
            (void)cudaSetDevice(prev_);
        }
    }
    cudaError_t error() const { return error_; }
    device_scope(const device_scope &) = delete;
    device_scope &operator=(const device_scope &) = delete;

  private:
    int prev_ = 0;
    bool restore_ = false;
    cudaError_t error_ = cudaSuccess;
};

/* Opens a device_scope on the context's GPU; returns its failure as a status. */
#define IH_ON_DEVICE(ctx)                                                 \
    device_scope on_device_(ih_cuda(ctx)->device);                        \
    if (on_device_.error() != cudaSuccess) {                              \
        return ih_cuda_error((ctx), "cudaSetDevice", on_device_.error()); \
    }

extern "C" int ih_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

static void cuda_close(imghist_ctx *ctx)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (s == NULL) {
        return;
    }
    device_scope on_device(s->device); /* a failure shows in the calls below */
    /* Errors are ignored here: a faulted context is freed too. */
    if (s->stream != NULL || s->own_stream != NULL) {
        (void)cudaStreamSynchronize(s->stream);
    }
    cudaFree(s->clahe_ws);
    cudaFree(s->clahe_img);
    cudaFree(s->workspace);
    cudaFree(s->ticket);
    cudaFree(s->hist);
    cudaFree(s->lut);
    cudaFree(s->staging);
    ih_desc_close(&s->batch_desc);
    ih_desc_close(&s->wide_desc);
    cudaFree(s->batch_hist);
    cudaFree(s->batch_ws);
    cudaFree(s->wide_counts);
    cudaFree(s->wide_staging);
    cudaFree(s->range_keys);
    ih_cuda_joint_close(s);
    ih_cuda_batch_close(s);
    ih_cuda_pin_close(s);
    if (s->handoff != NULL) {
        cudaEventDestroy(s->handoff);
    }
    if (s->own_stream != NULL) {
        cudaStreamDestroy(s->own_stream);
    }
    (void)cudaGetLastError();
    free(s);
    ctx->backend_state = NULL;
}

static imghist_status cuda_open(imghist_ctx *ctx)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError(); /* clear the non-sticky error */
        return ih_fail(ctx, IMGHIST_E_NO_GPU, "no usable GPU found (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    if (ctx->device >= count) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "no GPU %d: %d GPU%s visible", ctx->device,
                       count, count == 1 ? " is" : "s are");
    }
    int current = 0;
    if ((e = cudaGetDevice(&current)) != cudaSuccess) {
        (void)cudaGetLastError();
        return ih_fail(ctx, IMGHIST_E_NO_GPU, "no usable GPU found (%s)", cudaGetErrorString(e));
    }
    ih_cuda_state *s = (ih_cuda_state *)calloc(1, sizeof *s);
    if (s == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    ctx->backend_state = s;
    s->device = ctx->device >= 0 ? ctx->device : current;
    ctx->device = s->device;
    device_scope on_device(s->device);
    do {
        cudaDeviceProp prop;
        if ((e = on_device.error()) != cudaSuccess ||
            (e = cudaGetDeviceProperties(&prop, s->device)) != cudaSuccess) {
            break;
        }
        s->sm_count = prop.multiProcessorCount;
        /* No kernel image for this GPU shows up here. */
        if ((e = ih_hist_blocks_per_sm(&s->hist_bps, &s->batch_bps, &s->apply_bps)) !=
                cudaSuccess ||
            (e = ih_batch_kernels(&s->batch_writes, &s->batch_uniform)) != cudaSuccess ||
            (e = ih_batch_tiny_blocks_per_sm(&s->tiny_bps)) != cudaSuccess) {
            break;
        }
        const size_t ws_bytes = IH_WS_COPIES * 256 * sizeof(unsigned long long);
        if ((e = cudaStreamCreateWithFlags(&s->own_stream, cudaStreamNonBlocking)) !=
                cudaSuccess ||
            (e = cudaEventCreateWithFlags(&s->handoff, cudaEventDisableTiming)) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->workspace, ws_bytes)) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->ticket, sizeof(unsigned int))) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->hist, 256 * sizeof(unsigned long long))) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->lut, 256)) != cudaSuccess ||
            (e = cudaMemset(s->workspace, 0, ws_bytes)) != cudaSuccess ||
            (e = cudaMemset(s->ticket, 0, sizeof(unsigned int))) != cudaSuccess ||
            (e = ih_equalize_batch_setup(&s->eqb_small_max, &s->eqb_count_bps,
                                         &s->eqb_apply_bps)) != cudaSuccess ||
            (e = cudaDeviceSynchronize()) != cudaSuccess) {
            break;
        }
        s->stream = s->own_stream;
    } while (0);
    if (e == cudaSuccess) {
        return IMGHIST_OK;
    }
    imghist_status st = ih_fail(
        ctx, e == cudaErrorNoKernelImageForDevice ? IMGHIST_E_NO_GPU : IMGHIST_E_CUDA,
        "no usable GPU: CUDA set-up failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    cuda_close(ctx);
    return st;
}

static imghist_status cuda_set_stream(imghist_ctx *ctx, imghist_stream stream)
{
    IH_ON_DEVICE(ctx);
    ih_cuda_state *s = ih_cuda(ctx);
    cudaStream_t next = (cudaStream_t)stream;
    if (next == s->stream) {
        return IMGHIST_OK;
    }
    /* The workspace and buffers may still be in use by work on the old
     * stream: the new one waits for it, on the GPU. */
    IH_CUDA_TRY(ctx, "stream hand-off", cudaEventRecord(s->handoff, s->stream));
    IH_CUDA_TRY(ctx, "stream hand-off", cudaStreamWaitEvent(next, s->handoff, 0));
    s->stream = next;
    return IMGHIST_OK;
}

static imghist_status cuda_get_stream(const imghist_ctx *ctx, imghist_stream *stream)
{
    *stream = (imghist_stream)ih_cuda((imghist_ctx *)ctx)->stream;
    return IMGHIST_OK;
}

/* The 8-bit kernels (kernels/hist_u8.cu) take one channel of U8 with
 * one bin per value and no mask (with outlier counters too: they are 0);
 * everything else goes through the wide kernels. */
static int u8_path(const imghist_view *src, const imghist_view *mask, const ih_hist_job *job)
{
    return src->dtype == IMGHIST_U8 && job->natural_bins && job->channels == 1 && mask == NULL;
}

static imghist_status cuda_histogram(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *mask, const ih_hist_job *job,
                                     const imghist_counts *out)
{
    IH_ON_DEVICE(ctx);
    if (!u8_path(src, mask, job)) {
        return ih_cuda_hist_wide(ctx, src, mask, job, out);
    }
    const imghist_status st = src->mem == IMGHIST_MEM_DEVICE
                                  ? ih_cuda_hist_device(ctx, src, job, out)
                                  : ih_cuda_hist_host(ctx, src, job, out);
    if (st != IMGHIST_OK || !job->outliers || job->accumulate) {
        return st;
    }
    /* below, above and nan after the 256 bins: no 8-bit sample is any of them. */
    if (out->mem == IMGHIST_MEM_HOST) {
        memset(out->data + 256, 0, 3 * sizeof *out->data);
        return IMGHIST_OK;
    }
    IH_CUDA_TRY(ctx, "memset",
                cudaMemsetAsync(out->data + 256, 0, 3 * sizeof *out->data, ih_cuda(ctx)->stream));
    return IMGHIST_OK;
}

static imghist_status cuda_equalize(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *mask, const imghist_view *dst,
                                    const imghist_counts *hist)
{
    IH_ON_DEVICE(ctx);
    if (src->dtype != IMGHIST_U8 || mask != NULL) {
        return ih_cuda_equalize_wide(ctx, src, mask, dst, hist);
    }
    return src->mem == IMGHIST_MEM_DEVICE ? ih_cuda_equalize_device(ctx, src, dst, hist)
                                          : ih_cuda_equalize_host(ctx, src, dst, hist);
}

/* The other operations, each on the context's GPU. */
static imghist_status cuda_equalize_batch(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *dst, size_t count,
                                          const imghist_counts *hists)
{
    IH_ON_DEVICE(ctx);
    ctx->batch_route = IH_ROUTE_BATCH; /* every 8-bit batch: a few launches */
    return ih_cuda_equalize_batch_device(ctx, src, dst, count, hists);
}

static imghist_status cuda_histogram_batch(imghist_ctx *ctx, const imghist_view *src,
                                           const imghist_view *masks, size_t count,
                                           const ih_hist_job *job, const imghist_counts *out)
{
    IH_ON_DEVICE(ctx);
    if (masks != NULL || !u8_path(&src[0], NULL, job) || job->outliers) {
        return ih_cuda_hist_wide_batch(ctx, src, masks, count, job, out);
    }
    ctx->batch_route = IH_ROUTE_BATCH;
    return ih_cuda_hist_batch_device(ctx, src, count, job, out);
}

static imghist_status cuda_histogram_strided(imghist_ctx *ctx, const imghist_view *first,
                                             const imghist_view *mask, size_t count,
                                             ptrdiff_t stride, ptrdiff_t mask_stride,
                                             const ih_hist_job *job, const imghist_counts *out)
{
    IH_ON_DEVICE(ctx);
    if (mask != NULL || !u8_path(first, NULL, job) || job->outliers) {
        return ih_cuda_hist_wide_strided(ctx, first, mask, count, stride, mask_stride, job, out);
    }
    ctx->batch_route = IH_ROUTE_BATCH;
    return ih_cuda_hist_strided(ctx, first, count, stride, job, out);
}

static imghist_status cuda_equalize_strided(imghist_ctx *ctx, const imghist_view *src,
                                            ptrdiff_t src_stride, const imghist_view *dst,
                                            ptrdiff_t dst_stride, size_t count,
                                            const imghist_counts *hists)
{
    IH_ON_DEVICE(ctx);
    ctx->batch_route = IH_ROUTE_BATCH;
    return ih_cuda_equalize_strided(ctx, src, src_stride, dst, dst_stride, count, hists);
}

static imghist_status cuda_range(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *mask, double *lo, double *hi, int *found)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_range(ctx, src, mask, lo, hi, found);
}

static imghist_status cuda_hist2d(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                                  const imghist_view *mask, const ih_hist_job *ja,
                                  const ih_hist_job *jb, const imghist_counts *out)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_hist2d(ctx, a, b, mask, ja, jb, out);
}

static imghist_status cuda_mutual_information(imghist_ctx *ctx, const imghist_counts *joint,
                                              uint32_t bins_a, uint32_t bins_b, double *result,
                                              imghist_mem result_mem)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_mutual_information(ctx, joint, bins_a, bins_b, result, result_mem);
}

static imghist_status cuda_clahe(imghist_ctx *ctx, const ih_batch *b, const ih_clahe_geom *g)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_clahe(ctx, b, g);
}

/* A caller's LUT on a device image: into the context's LUT buffer (a
 * pageable 256-byte copy, ordered on the stream), then the lookup kernel. */
static imghist_status cuda_apply_lut(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *dst, const uint8_t *lut)
{
    IH_ON_DEVICE(ctx);
    ih_cuda_state *s = ih_cuda(ctx);
    IH_CUDA_TRY(ctx, "LUT upload",
                cudaMemcpyAsync(s->lut, lut, 256, cudaMemcpyHostToDevice, s->stream));
    const ih_dev_image img = ih_dev_image_of(src);
    return ih_cuda_apply(ctx, &img, (uint8_t *)dst->data, dst->pitch);
}

static imghist_status cuda_equalize_strided_each(imghist_ctx *ctx, const imghist_view *src,
                                                 ptrdiff_t src_stride, const imghist_view *mask,
                                                 ptrdiff_t mask_stride, const imghist_view *dst,
                                                 ptrdiff_t dst_stride, size_t count,
                                                 const imghist_counts *hists)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_equalize_strided_each(ctx, src, src_stride, mask, mask_stride, dst, dst_stride,
                                         count, hists);
}

static imghist_status cuda_equalize_views_each(imghist_ctx *ctx, const imghist_view *src,
                                               const imghist_view *masks, const imghist_view *dst,
                                               size_t count, const imghist_counts *hists)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_equalize_views_each(ctx, src, masks, dst, count, hists);
}

static imghist_status cuda_equalize16_small_views(imghist_ctx *ctx, const imghist_view *src,
                                                  const imghist_view *masks,
                                                  const imghist_view *dst, size_t count,
                                                  int *done)
{
    *done = 0;
    IH_ON_DEVICE(ctx);
    return ih_cuda_equalize16_small_views(ctx, src, masks, dst, count, done);
}

/* The GPU's routes for histograms: device tensors and lists in a few
 * launches; host images one by one, each staged (or run on the CPU when
 * the GPU has no memory for it). */
static imghist_status cuda_histogram_any(imghist_ctx *ctx, const ih_batch *b,
                                         const ih_hist_job *job, const imghist_counts *out)
{
    if (b->kind == IH_ONE) {
        return cuda_histogram(ctx, b->src, b->masks, job, out);
    }
    if (b->kind == IH_TENSOR) {
        return cuda_histogram_strided(ctx, b->src, b->masks, b->count, b->src_stride,
                                      b->mask_stride, job, out);
    }
    return b->src[0].mem == IMGHIST_MEM_DEVICE
               ? cuda_histogram_batch(ctx, b->src, b->masks, b->count, job, out)
               : ih_histogram_each(ctx, b, job, out);
}

/* Whether a list's sources and destinations each lie as a tensor's images
 * (ih_views_progression), from the checks' pass where it read them. */
static bool list_progression(const imghist_ctx *ctx, const ih_batch *b, uintptr_t *ss,
                             uintptr_t *ds)
{
    if (!ih_layout_known(ctx, b->src, b->dst, b->count)) {
        return ih_views_progression(b->src, b->count, ss) &&
               ih_views_progression(b->dst, b->count, ds);
    }
    *ss = ctx->layout.src_stride;
    *ds = ctx->layout.dst_stride;
    return ctx->layout.src_uniform && ctx->layout.dst_uniform;
}

/* A list of equalizations on the GPU: 8-bit device images without masks in
 * the batch launches; device images laid out as a tensor, or of one shape
 * anywhere, in the strided launches; small 16-bit device images without
 * histograms a block each, where they fit; the rest image by image. */
static imghist_status cuda_equalize_list(imghist_ctx *ctx, const ih_batch *b,
                                         const imghist_counts *hists, size_t levels)
{
    const imghist_view *src = b->src, *dst = b->dst, *masks = b->masks;
    const size_t count = b->count;
    if (masks == NULL && levels == IH_U8_BINS && src[0].mem == IMGHIST_MEM_DEVICE) {
        return cuda_equalize_batch(ctx, src, dst, count, hists);
    }
    uintptr_t ss = 0, ds = 0, ms = 0;
    const bool device = src[0].mem == IMGHIST_MEM_DEVICE &&
                        (uint64_t)src[0].width * src[0].height < ((uint64_t)1 << 31);
    if (device && list_progression(ctx, b, &ss, &ds) &&
        (masks == NULL || ih_views_progression(masks, count, &ms))) {
        return cuda_equalize_strided_each(ctx, &src[0], (ptrdiff_t)ss,
                                          masks != NULL ? &masks[0] : NULL, (ptrdiff_t)ms,
                                          &dst[0], (ptrdiff_t)ds, count, hists);
    }
    if (device && ih_list_one_shape(ctx, src, masks, count, false) &&
        ih_list_one_shape(ctx, dst, NULL, count, true)) {
        return cuda_equalize_views_each(ctx, src, masks, dst, count, hists);
    }
    if (src[0].mem == IMGHIST_MEM_DEVICE && levels == IH_U16_LEVELS && hists == NULL) {
        int done = 0;
        const imghist_status st = cuda_equalize16_small_views(ctx, src, masks, dst, count, &done);
        if (st != IMGHIST_OK || done) {
            return st;
        }
    }
    return ih_equalize_each(ctx, b, hists, levels);
}

static imghist_status cuda_equalize_any(imghist_ctx *ctx, const ih_batch *b,
                                        const imghist_counts *hists, size_t levels)
{
    switch (b->kind) {
    case IH_ONE:
        return cuda_equalize(ctx, b->src, b->masks, b->dst, hists);
    case IH_LIST:
        return cuda_equalize_list(ctx, b, hists, levels);
    case IH_TENSOR:
        break;
    }
    /* The core passes 8-bit device tensors without masks, proved apart. */
    return cuda_equalize_strided(ctx, b->src, b->src_stride, b->dst, b->dst_stride, b->count,
                                 hists);
}

/* Host images go through the CPU's lookup: staging would cost more than it. */
static imghist_status cuda_apply_lut_any(imghist_ctx *ctx, const imghist_view *src,
                                         const imghist_view *dst, const uint8_t *lut)
{
    if (src->mem == IMGHIST_MEM_HOST) {
        return ctx->fallback->apply_lut(ctx, src, dst, lut);
    }
    return cuda_apply_lut(ctx, src, dst, lut);
}

static imghist_status cuda_compare(imghist_ctx *ctx, const imghist_hists *query,
                                   const imghist_hists *set, imghist_compare_method method,
                                   double *out, imghist_mem out_mem)
{
    IH_ON_DEVICE(ctx);
    return ih_cuda_compare(ctx, query, set, method, out, out_mem);
}

extern "C" const ih_backend_ops ih_cuda_backend = {
    IMGHIST_BACKEND_CUDA,
    1,
    cuda_open,
    cuda_close,
    cuda_set_stream,
    cuda_get_stream,
    cuda_histogram_any,
    cuda_range,
    cuda_hist2d,
    cuda_mutual_information,
    cuda_equalize_any,
    cuda_clahe,
    cuda_apply_lut_any,
    cuda_compare,
};
