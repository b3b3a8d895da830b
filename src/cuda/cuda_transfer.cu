/*
 * Copies between host images and the GPU through the context's own pinned
 * buffers.
 *
 * A copy from pageable memory goes through the driver's staging buffers,
 * which every thread of the process shares: a folder run with many workers on
 * one GPU moves images slower than the CPU backend counts them
 * (bench/folder/scale.sh). Here each context copies the rows into one of its
 * two pinned slots itself and queues the DMA from there; while one slot's
 * DMA runs the CPU fills the other, and contexts on other threads copy in
 * parallel. Uploads of less than 64 KiB, rows wider than a slot, memory
 * that is already pinned, and a context whose pinned allocation failed take
 * the plain cudaMemcpy2DAsync.
 *
 * Downloads go through the slots at any size: a copy into pageable memory
 * returns only when the stream has reached it, and 32 workers each fetching
 * 2 KiB of counts that way ran 640x480 images at 7,200 a second on one GPU
 * against 18,700 on the CPU backend.
 */
#include <string.h>

#include "cuda_state.h"

/* Below this many bytes the driver's own upload path is as fast (it copies
 * small transfers into its command stream). */
#define IH_PIN_MIN_UPLOAD ((size_t)64 << 10)
/* Contiguous downloads go as rows of this many bytes. */
#define IH_PIN_ROW ((size_t)64 << 10)

/* The slots on first use; a failure leaves the context on the plain path for
 * good (out of pinned memory is not sticky, and any other failure shows again
 * in the plain copy). */
static int have_slots(ih_cuda_state *s)
{
    if (s->pin_state != 0) {
        return s->pin_state > 0;
    }
    s->pin_state = -1;
    for (int k = 0; k < IH_PIN_SLOTS; k++) {
        if (cudaHostAlloc((void **)&s->pin[k].host, IH_PIN_SLOT_BYTES, cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaEventCreateWithFlags(&s->pin[k].done, cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaGetLastError();
            ih_cuda_pin_close(s);
            return 0;
        }
    }
    s->pin_state = 1;
    return 1;
}

void ih_cuda_pin_close(ih_cuda_state *s)
{
    for (int k = 0; k < IH_PIN_SLOTS; k++) {
        if (s->pin[k].done != NULL) {
            /* Its last copy may have been queued on a stream the caller
             * has since replaced with imghist_set_stream. */
            (void)cudaEventSynchronize(s->pin[k].done);
        }
        if (s->pin[k].host != NULL) {
            cudaFreeHost(s->pin[k].host);
            s->pin[k].host = NULL;
        }
        if (s->pin[k].done != NULL) {
            cudaEventDestroy(s->pin[k].done);
            s->pin[k].done = NULL;
        }
    }
}

/* Whether a copy of rows x row_bytes at host goes through the slots. */
static int through_slots(ih_cuda_state *s, const void *host, size_t row_bytes, size_t rows,
                         size_t min_bytes)
{
    if (row_bytes == 0 || rows == 0 || row_bytes > IH_PIN_SLOT_BYTES ||
        row_bytes * rows < min_bytes) {
        return 0;
    }
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, host) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (a.type != cudaMemoryTypeUnregistered) {
        return 0; /* pinned (or managed) already: the DMA reads it directly */
    }
    return have_slots(s);
}

static void copy_rows(uint8_t *dst, size_t dpitch, const uint8_t *src, size_t spitch,
                      size_t row_bytes, size_t rows)
{
    if (dpitch == row_bytes && spitch == row_bytes) {
        memcpy(dst, src, row_bytes * rows);
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        memcpy(dst + r * dpitch, src + r * spitch, row_bytes);
    }
}

imghist_status ih_cuda_upload_2d(imghist_ctx *ctx, const char *what, void *dst, size_t dpitch,
                                 const void *src, size_t spitch, size_t row_bytes, size_t rows)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (!through_slots(s, src, row_bytes, rows, IH_PIN_MIN_UPLOAD)) {
        IH_CUDA_TRY(ctx, what,
                    cudaMemcpy2DAsync(dst, dpitch, src, spitch, row_bytes, rows,
                                      cudaMemcpyHostToDevice, s->stream));
        return IMGHIST_OK;
    }
    const size_t per = IH_PIN_SLOT_BYTES / row_bytes;
    for (size_t r0 = 0; r0 < rows; r0 += per) {
        const size_t n = rows - r0 < per ? rows - r0 : per;
        struct ih_pin_slot *slot = &s->pin[s->pin_next];
        s->pin_next = (s->pin_next + 1) % IH_PIN_SLOTS;
        /* Its last DMA (this call's or an earlier one's) has read it. */
        IH_CUDA_TRY(ctx, what, cudaEventSynchronize(slot->done));
        copy_rows(slot->host, row_bytes, (const uint8_t *)src + r0 * spitch, spitch, row_bytes,
                  n);
        IH_CUDA_TRY(ctx, what,
                    cudaMemcpy2DAsync((uint8_t *)dst + r0 * dpitch, dpitch, slot->host, row_bytes,
                                      row_bytes, n, cudaMemcpyHostToDevice, s->stream));
        IH_CUDA_TRY(ctx, what, cudaEventRecord(slot->done, s->stream));
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_download_2d(imghist_ctx *ctx, const char *what, void *dst, size_t dpitch,
                                   const void *src, size_t spitch, size_t row_bytes, size_t rows)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (!through_slots(s, dst, row_bytes, rows, 0)) {
        IH_CUDA_TRY(ctx, what,
                    cudaMemcpy2DAsync(dst, dpitch, src, spitch, row_bytes, rows,
                                      cudaMemcpyDeviceToHost, s->stream));
        return IMGHIST_OK;
    }
    /* Chunk k goes into slot k % 2; chunk k - 1 is copied out while chunk k's
     * DMA runs. A slot is refilled only after its rows were copied out, and
     * the stream orders its DMA after any upload from it. */
    const size_t per = IH_PIN_SLOT_BYTES / row_bytes;
    struct ih_pin_slot *pending = NULL;
    size_t pending_r0 = 0, pending_n = 0;
    for (size_t r0 = 0;; r0 += per) {
        struct ih_pin_slot *slot = NULL;
        size_t n = 0;
        if (r0 < rows) {
            n = rows - r0 < per ? rows - r0 : per;
            slot = &s->pin[s->pin_next];
            s->pin_next = (s->pin_next + 1) % IH_PIN_SLOTS;
            IH_CUDA_TRY(ctx, what,
                        cudaMemcpy2DAsync(slot->host, row_bytes, (const uint8_t *)src + r0 * spitch,
                                          spitch, row_bytes, n, cudaMemcpyDeviceToHost,
                                          s->stream));
            IH_CUDA_TRY(ctx, what, cudaEventRecord(slot->done, s->stream));
        }
        if (pending != NULL) {
            IH_CUDA_TRY(ctx, what, cudaEventSynchronize(pending->done));
            copy_rows((uint8_t *)dst + pending_r0 * dpitch, dpitch, pending->host, row_bytes,
                      row_bytes, pending_n);
        }
        if (slot == NULL) {
            return IMGHIST_OK;
        }
        pending = slot;
        pending_r0 = r0;
        pending_n = n;
    }
}

imghist_status ih_cuda_download(imghist_ctx *ctx, const char *what, void *dst, const void *src,
                                size_t bytes)
{
    const size_t rows = bytes / IH_PIN_ROW, tail = bytes % IH_PIN_ROW;
    if (rows > 0) {
        const imghist_status st =
            ih_cuda_download_2d(ctx, what, dst, IH_PIN_ROW, src, IH_PIN_ROW, IH_PIN_ROW, rows);
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    if (tail == 0) {
        return IMGHIST_OK;
    }
    const size_t done = rows * IH_PIN_ROW;
    return ih_cuda_download_2d(ctx, what, (uint8_t *)dst + done, tail,
                               (const uint8_t *)src + done, tail, tail, 1);
}
