/*
 * Histogram comparisons on the GPU (core/compare.c checked the arguments):
 * the histograms converted to packed doubles with their own sums, then one
 * query against each or every pair (kernels/compare.cu). Host histograms
 * are copied in and host results out on the context's stream, and the call
 * then waits for it; with device memory only, the call only enqueues.
 * Workspaces are stream-ordered allocations freed on the stream.
 */
#include <stdint.h>

#include "compare.cuh"
#include "compare.h"
#include "cuda_compare.h"
#include "cuda_state.h"

namespace {

/* The call's device buffers, freed on the stream whatever happens. */
struct buffers {
    void *p[6] = {};
    int n = 0;
    cudaStream_t stream;
    explicit buffers(cudaStream_t s) : stream(s) {}
    ~buffers()
    {
        for (int i = 0; i < n; i++) {
            cudaFreeAsync(p[i], stream);
        }
    }
    cudaError_t get(void **out, size_t bytes)
    {
        const cudaError_t e = cudaMallocAsync(out, bytes ? bytes : 1, stream);
        if (e == cudaSuccess) {
            p[n++] = *out;
        }
        return e;
    }
};

size_t stride_of(const imghist_hists *h)
{
    return h->stride != 0 ? h->stride : h->bins * ih_cmp_value_size(h->type);
}

/* h's histograms as packed doubles with their sums, in `v` and `rows`. */
imghist_status load(imghist_ctx *ctx, buffers &b, const imghist_hists *h, size_t n,
                    imghist_compare_method m, double **v, ih_cmp_dev_row **rows)
{
    const cudaStream_t stream = b.stream;
    const size_t bins = h->bins, stride = stride_of(h);
    const void *src = h->data;
    if (h->mem == IMGHIST_MEM_HOST) {
        const size_t span = (n - 1) * stride + bins * ih_cmp_value_size(h->type);
        void *dev = NULL;
        IH_CUDA_TRY(ctx, "allocation", b.get(&dev, span));
        IH_CUDA_TRY(ctx, "histogram upload",
                    cudaMemcpyAsync(dev, h->data, span, cudaMemcpyHostToDevice, stream));
        src = dev;
    }
    IH_CUDA_TRY(ctx, "allocation", b.get((void **)v, n * bins * sizeof(double)));
    IH_CUDA_TRY(ctx, "allocation", b.get((void **)rows, n * sizeof(ih_cmp_dev_row)));
    IH_CUDA_TRY(ctx, "comparison launch",
                ih_launch_cmp_convert(src, h->type, stride, n, bins, *v, stream));
    IH_CUDA_TRY(ctx, "comparison launch", ih_launch_cmp_rows(*v, n, bins, m, *rows, stream));
    return IMGHIST_OK;
}

/* Wait for the stream; a failure there is the call's failure. */
imghist_status finish(imghist_ctx *ctx)
{
    const cudaError_t e = cudaStreamSynchronize(ih_cuda(ctx)->stream);
    return e == cudaSuccess ? IMGHIST_OK : ih_cuda_error(ctx, "synchronize", e);
}

} // namespace

imghist_status ih_cuda_compare(imghist_ctx *ctx, const imghist_hists *query,
                               const imghist_hists *set, imghist_compare_method method,
                               double *out, imghist_mem out_mem)
{
    const cudaStream_t stream = ih_cuda(ctx)->stream;
    const size_t n = set->count != 0 ? set->count : 1, bins = set->bins;
    if (n > SIZE_MAX / sizeof(double) / bins) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu histograms of %zu bins: too many", n,
                       bins);
    }
    const size_t results = query != NULL ? n : n * n;
    imghist_status st;
    {
        buffers b(stream);
        double *v = NULL, *q = NULL, *dout = out;
        ih_cmp_dev_row *rows = NULL, *qrow = NULL;
        st = load(ctx, b, set, n, method, &v, &rows);
        if (st == IMGHIST_OK && query != NULL) {
            st = load(ctx, b, query, 1, method, &q, &qrow);
        }
        if (st != IMGHIST_OK) {
            return st;
        }
        if (out_mem == IMGHIST_MEM_HOST) {
            IH_CUDA_TRY(ctx, "allocation", b.get((void **)&dout, results * sizeof(double)));
        }
        const bool fs = ih_cmp_float_steps(query != NULL ? query : set, set);
        IH_CUDA_TRY(ctx, "comparison launch",
                    query != NULL
                        ? ih_launch_cmp_many(q, qrow, v, rows, n, bins, method, fs, dout, stream)
                        : ih_launch_cmp_all(v, rows, n, bins, method, fs, dout, stream));
        if (out_mem == IMGHIST_MEM_HOST) {
            IH_CUDA_TRY(ctx, "result copy",
                        cudaMemcpyAsync(out, dout, results * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream));
        }
    }
    if (out_mem == IMGHIST_MEM_HOST || set->mem == IMGHIST_MEM_HOST) {
        st = finish(ctx);
    }
    return st;
}
