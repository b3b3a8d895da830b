/* Placeholder until the kernels land: refuses with IMGHIST_E_UNSUPPORTED. */
#include "cuda_state.h"
imghist_status ih_cuda_hist2d(imghist_ctx *ctx, const imghist_view *, const imghist_view *,
                              const imghist_view *, const ih_hist_job *, const ih_hist_job *,
                              const imghist_counts *)
{ return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "not yet on the GPU"); }
imghist_status ih_cuda_mutual_information(imghist_ctx *ctx, const imghist_counts *, uint32_t,
                                          uint32_t, double *, imghist_mem)
{ return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "not yet on the GPU"); }
imghist_status ih_cuda_equalize_wide(imghist_ctx *ctx, const imghist_view *, const imghist_view *,
                                     const imghist_view *, const imghist_counts *)
{ return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "not yet on the GPU"); }
