/*
 * Planning of the wide histograms (host side): the store, copies and grid
 * of a job on this device, and whether a batch goes in one launch.
 */
#include <stdint.h>
#include <string.h>

#include "hist_wide.cuh"
#include "wide_plan.cuh"

cudaError_t ih_wide_plan(const ih_hist_job *job, int sm_count, int blocks_per_sm,
                         ih_wide_plan_t *plan)
{
    (void)sm_count;
    int dev = 0, optin = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e != cudaSuccess) {
        return e;
    }
    const size_t len = job->len;
    const size_t lut = job->dtype == IMGHIST_U8 ? 1024 : 0;
    const size_t tab = job->dtype == IMGHIST_F32 ? tab_bytes(*job) : 0;
    const size_t len32 = s32_words(*job);
    memset(plan, 0, sizeof *plan);
    plan->copies = 1;
    /* S32: the most copies (up to 32) that leave `bps` blocks per SM. */
    const int want = blocks_per_sm > 0 ? blocks_per_sm : 2;
    for (int bps = want; bps >= 1; bps = bps > 1 ? 1 : 0) {
        size_t per_block = (size_t)per_sm / (size_t)bps;
        per_block = per_block > 1024 ? per_block - 1024 : 0;
        per_block = per_block < (size_t)optin ? per_block : (size_t)optin;
        for (int with_tab = tab > 0 ? 1 : 0; with_tab >= 0; with_tab--) {
            const size_t fixed = lut + (with_tab ? tab : 0);
            if (fixed + len32 * 4 > per_block) {
                continue;
            }
            size_t copies = (per_block - fixed) / (len32 * 4);
            copies = copies > 32 ? 32 : copies;
            size_t c = 1;
            while (c * 2 <= copies) c *= 2;
            plan->store = IH_WIDE_S32;
            plan->copies = (int)c;
            plan->table = with_tab;
            plan->smem = fixed + c * len32 * 4;
            plan->threads = 512;
            return cudaSuccess;
        }
        if (bps == 1) break;
    }
    const size_t words = round_up((len + 1) / 2, 32);
    for (int with_tab = tab > 0 ? 1 : 0; with_tab >= 0; with_tab--) {
        const size_t fixed = lut + (with_tab ? tab : 0);
        if (fixed + words * 4 <= (size_t)optin) {
            plan->store = IH_WIDE_S16;
            plan->table = with_tab;
            plan->smem = fixed + words * 4;
            plan->threads = 1024;
            return cudaSuccess;
        }
    }
    plan->store = IH_WIDE_GLOBAL;
    plan->table = tab > 0 && tab <= (size_t)optin / 2;
    plan->smem = lut + (plan->table ? tab : 0);
    plan->threads = 512;
    return cudaSuccess;
}

bool ih_wide_batchable(const ih_wide_band &band, const ih_hist_job &job,
                       const ih_wide_plan_t &plan, long long img_stride, long long mask_stride)
{
    const size_t size = ih_dtype_size(job.dtype);
    const size_t row_bytes = (size_t)band.width * job.channels * size;
    if ((plan.store == IH_WIDE_S16 && !s16_batch_walk(band, job, plan, mask_stride)) ||
        img_stride % 16 != 0 ||
        (((uintptr_t)band.base | band.pitch) & (size - 1)) != 0 || row_bytes == 0) {
        return false;
    }
    const uint64_t per_row =
        ih_granules_per_row(band.base, band.pitch, (uint32_t)row_bytes, band.rows);
    return per_row * band.rows < IH_MAX_GRANULES && row_bytes * band.rows < (UINT64_C(1) << 32) - 64;
}
