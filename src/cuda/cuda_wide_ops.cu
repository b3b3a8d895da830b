/* Placeholder until the kernels land: refuses with IMGHIST_E_UNSUPPORTED. */
#include "cuda_state.h"
imghist_status ih_cuda_hist_wide(imghist_ctx *ctx, const imghist_view *, const imghist_view *,
                                 const ih_hist_job *, const imghist_counts *)
{ return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "not yet on the GPU"); }
imghist_status ih_cuda_range(imghist_ctx *ctx, const imghist_view *, const imghist_view *,
                             double *, double *, int *)
{ return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "not yet on the GPU"); }
