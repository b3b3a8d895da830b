/*
 * The counting operations: check everything, then dispatch to the context's
 * backend. A host image the CUDA backend has no GPU memory for runs on the
 * CPU backend instead (the one fallback, said in the note).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ops.h"
#include "parallel.h"

/* Device memory needs a backend that takes it. */
imghist_status ih_check_memory(imghist_ctx *ctx, imghist_mem mem, const char *role)
{
    if (mem == IMGHIST_MEM_DEVICE && !ctx->ops->device_memory) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       IMGHIST_WITH_CUDA ? "%s in device memory need a context on the CUDA backend"
                                         : "%s in device memory: this build of imghist has no "
                                           "CUDA backend",
                       role);
    }
    return IMGHIST_OK;
}

const ih_backend_ops *ih_fallback_for(imghist_ctx *ctx, imghist_status *st,
                                      const imghist_view *src, const imghist_counts *counts)
{
    if (*st != IH_E_GPU_OOM) {
        return NULL;
    }
    const int all_host =
        src->mem == IMGHIST_MEM_HOST && (counts == NULL || counts->mem == IMGHIST_MEM_HOST);
    if (!all_host || ctx->fallback == NULL) {
        *st = ih_fail(ctx, IMGHIST_E_CUDA, "GPU out of memory for staging the image "
                                           "(cudaErrorMemoryAllocation)");
        return NULL;
    }
    ih_note(ctx, "GPU out of memory: ran on the CPU");
    return ctx->fallback;
}

static imghist_status call_one(imghist_ctx *ctx, const ih_backend_ops *ops, const ih_one *c)
{
    return c->job != NULL ? ops->histogram(ctx, &c->image, c->job, c->counts)
                          : ops->equalize(ctx, &c->image, c->counts, c->levels);
}

imghist_status ih_dispatch_one(imghist_ctx *ctx, const ih_one *c)
{
    imghist_status st = call_one(ctx, ctx->ops, c);
    const ih_backend_ops *cpu = ih_fallback_for(ctx, &st, c->image.src, c->counts);
    return cpu != NULL ? call_one(ctx, cpu, c) : st;
}

imghist_status ih_op_histogram_one(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_view *mask, const imghist_histspec *spec,
                                   const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_source(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_mask(ctx, mask, src);
    ih_hist_job job;
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, spec, src->dtype, src->channels, &job);
    if (st == IMGHIST_OK) st = ih_check_counts(ctx, out, job.len, "counts");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, out->mem, "counts");
    if (st != IMGHIST_OK) {
        return st;
    }
    const ih_one one = {
        .image = {.kind = IH_ONE, .count = 1, .src = src, .masks = mask},
        .job = &job,
        .counts = out,
    };
    const uint64_t t0 = ih_now_ns();
    st = ih_dispatch_one(ctx, &one);
    ih_stage_add(ctx, ctx->backend == IMGHIST_BACKEND_CUDA ? IMGHIST_STAGE_GPU : IMGHIST_STAGE_COUNT,
                 t0);
    return st;
}

/* ih_begin, then what every batch call refuses: no views (given: whether
 * they are there), no images, or more than 2^32 - 1. */
imghist_status ih_begin_batch(imghist_ctx *ctx, bool given, size_t count)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK && (!given || count == 0 || count > UINT32_MAX)) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                     "the batch is NULL, empty or too large (%zu images)", count);
    }
    return st;
}

/* The images of a strided batch lie in the address space: count images of
 * first's shape (checked), `stride` bytes apart, either way, none at
 * address 0 (each image then passes first's checks). */
imghist_status ih_check_stride(imghist_ctx *ctx, const imghist_view *first, size_t count,
                               ptrdiff_t stride, const char *role)
{
    uintptr_t lo, hi, reach;
    ih_view_span(first, &lo, &hi);
    const uintptr_t step = stride < 0 ? (uintptr_t)0 - (uintptr_t)stride : (uintptr_t)stride;
    if (__builtin_mul_overflow(step, (uintptr_t)(count - 1), &reach) ||
        (stride >= 0 ? reach > UINTPTR_MAX - hi : reach >= lo)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "%s: %zu images %td bytes apart leave the address space", role, count,
                       stride);
    }
    return IMGHIST_OK;
}

imghist_view *ih_strided_views(const imghist_view *first, size_t count, ptrdiff_t stride)
{
    imghist_view *v = malloc(count * sizeof *v);
    for (size_t i = 0; v != NULL && i < count; i++) {
        v[i] = *first;
        v[i].data = (void *)((uintptr_t)first->data + (uintptr_t)i * (uintptr_t)stride);
        v[i].count = 1;
        v[i].image_stride = 0;
        v[i].mask = NULL;
    }
    return v;
}

/* The job of count images like v0 (checked) into out: the spec resolved,
 * the counts' length and both memories checked. */
static imghist_status batch_job(imghist_ctx *ctx, const imghist_view *v0, size_t count,
                                const imghist_histspec *spec, const imghist_counts *out,
                                ih_hist_job *job)
{
    imghist_status st = ih_resolve_spec(ctx, spec, v0->dtype, v0->channels, job);
    if (st == IMGHIST_OK && count > SIZE_MAX / job->len) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch is too large");
    }
    if (st == IMGHIST_OK) st = ih_check_counts(ctx, out, count * job->len, "counts");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, v0->mem, "images");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, out->mem, "counts");
    return st;
}

/* A checked batch of views (masks: NULL or one a view): the backend's batch
 * (device views on the GPU, host views on the CPU, the images across its
 * threads), else image by image, each with the fallback of a single call. */
static imghist_status run_batch(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *masks, size_t count, const ih_hist_job *job,
                                const imghist_counts *out)
{
    const ih_batch list = {.kind = IH_LIST, .count = count, .src = src, .masks = masks};
    return ctx->ops->histogram(ctx, &list, job, out);
}

imghist_status ih_histogram_each(imghist_ctx *ctx, const ih_batch *b, const ih_hist_job *job,
                                 const imghist_counts *out)
{
    imghist_status st = IMGHIST_OK;
    for (size_t i = 0; i < b->count && st == IMGHIST_OK; i++) {
        imghist_counts one = *out;
        one.data = out->data + i * job->len;
        one.len = job->len;
        const ih_one image = {
            .image = {.kind = IH_ONE,
                      .count = 1,
                      .src = &b->src[i],
                      .masks = b->masks != NULL ? &b->masks[i] : NULL},
            .job = job,
            .counts = &one,
        };
        st = ih_dispatch_one(ctx, &image);
    }
    return st;
}

/* Mask i of a batch against its image (the view checks as ih_check_mask's,
 * the image's number in the message). */
imghist_status ih_check_batch_mask(imghist_ctx *ctx, const imghist_view *masks,
                                   const imghist_view *src, size_t i)
{
    if (i > 0 && ih_same_shape(&masks[i], &masks[0]) && masks[i].width == src[i].width &&
        masks[i].height == src[i].height && masks[i].mem == src[i].mem) {
        return IMGHIST_OK; /* mask 0's checks, which it passed */
    }
    const imghist_status st = ih_check_mask(ctx, &masks[i], &src[i]);
    if (st != IMGHIST_OK) {
        char why[160];
        snprintf(why, sizeof why, "%s", imghist_last_error(ctx));
        return ih_fail(ctx, st, "batch mask %zu: %s", i, why);
    }
    return IMGHIST_OK;
}

void ih_layout_begin(ih_layout_scan *l, const imghist_view *v, size_t count)
{
    l->base = v != NULL ? (uintptr_t)v[0].data : 0;
    l->stride = v != NULL && count > 1 ? (uintptr_t)v[1].data - l->base : 0;
    l->uniform = l->one_shape = v != NULL;
}

/*
 * ih_tensor_run from `from` to `to`. A view is compared as four 16-byte
 * vectors with view 0, not field by field: four loads a view instead of
 * twelve, which on a list of tens of thousands of views is most of the
 * call's host time. Left out of the vectors: data (compared on its own with
 * the address the view should have; put into a vector, it made every view
 * wait for a store), the padding after `channels`, and `image_stride` (a
 * list's view holds one image).
 */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

/* The 64-bit layout the masks below name; elsewhere views are compared
 * field by field. */
#define VIEW_IS_FOUR_VECTORS                                                                  \
    (sizeof(imghist_view) == 64 && offsetof(imghist_view, data) == 0 &&                       \
     sizeof(void *) == 8 && offsetof(imghist_view, dtype) == 8 &&                             \
     offsetof(imghist_view, mem) == 12 && offsetof(imghist_view, width) == 16 &&              \
     offsetof(imghist_view, pitch) == 24 && offsetof(imghist_view, channels) == 32 &&         \
     offsetof(imghist_view, count) == 40 && offsetof(imghist_view, image_stride) == 48 &&     \
     offsetof(imghist_view, mask) == 56)

static size_t run_end_fields(const ih_layout_scan *l, const imghist_view *v, size_t from,
                             size_t to)
{
    const imghist_view *v0 = &v[0];
    uintptr_t at = l->base + from * l->stride;
    size_t i = from;
    for (; i < to; i++, at += l->stride) {
        const imghist_view *w = &v[i];
        if (!((uintptr_t)w->data == at && at != 0 && w->dtype == v0->dtype &&
              w->mem == v0->mem && w->width == v0->width && w->height == v0->height &&
              w->pitch == v0->pitch && w->channels == v0->channels &&
              w->count == v0->count && w->mask == v0->mask)) {
            break;
        }
    }
    return i;
}

static inline u64x2 view_part(const imghist_view *v, int k)
{
    u64x2 p;
    memcpy(&p, (const char *)v + k * sizeof p, sizeof p);
    return p;
}

static size_t run_end(const ih_layout_scan *l, const imghist_view *v, size_t from, size_t to)
{
    if (!VIEW_IS_FOUR_VECTORS) {
        return run_end_fields(l, v, from, to);
    }
    /* Bytes 0-15: data, dtype, mem; 16-31: width, height, pitch; 32-47:
     * channels, padding, count; 48-63: image_stride, mask. */
    const u64x2 m0 = {0, ~(uint64_t)0}, m2 = {0xffffffffu, ~(uint64_t)0},
                m3 = {0, ~(uint64_t)0};
    const u64x2 t0 = view_part(v, 0) & m0, t1 = view_part(v, 1), t2 = view_part(v, 2) & m2,
                t3 = view_part(v, 3) & m3;
    uintptr_t at = l->base + from * l->stride;
    size_t i = from;
    for (; i < to; i++, at += l->stride) {
        const u64x2 d = ((view_part(&v[i], 0) ^ t0) & m0) | (view_part(&v[i], 1) ^ t1) |
                        ((view_part(&v[i], 2) ^ t2) & m2) | ((view_part(&v[i], 3) ^ t3) & m3);
        if ((d[0] | d[1]) != 0 || (uintptr_t)v[i].data != at || at == 0) {
            break;
        }
    }
    return i;
}

/* Views a task of the parallel run scan reads: 256 KiB, which takes longer
 * than waking a kept thread. */
#define RUN_TASK_VIEWS 4096u
#define RUN_MAX_TASKS 64u

typedef struct {
    const ih_layout_scan *l;
    const imghist_view *v;
    size_t count, per_task;
    size_t end[RUN_MAX_TASKS];
} run_scan;

static void run_scan_task(void *arg, size_t t)
{
    run_scan *r = arg;
    const size_t from = 1 + t * r->per_task;
    const size_t to = r->count - from > r->per_task ? from + r->per_task : r->count;
    r->end[t] = run_end(r->l, r->v, from, to);
}

size_t ih_tensor_run(const imghist_ctx *ctx, const ih_layout_scan *l, const imghist_view *v,
                     size_t count)
{
    const size_t rest = count > 1 ? count - 1 : 0;
    const uint64_t threads = (uint64_t)ctx->params.cpu_threads;
    if (rest < 2 * RUN_TASK_VIEWS || threads < 2) {
        return run_end(l, v, 1, count);
    }
    run_scan r = {.l = l, .v = v, .count = count, .per_task = RUN_TASK_VIEWS};
    if (rest / r.per_task >= RUN_MAX_TASKS) {
        r.per_task = (rest + RUN_MAX_TASKS - 1) / RUN_MAX_TASKS;
    }
    const size_t tasks = (rest + r.per_task - 1) / r.per_task;
    (void)ih_parallel_for(tasks, (unsigned)(threads < tasks ? threads : tasks), run_scan_task, &r);
    /* The first task that stopped short ends the run. */
    for (size_t t = 0; t < tasks; t++) {
        if (r.end[t] < 1 + t * r.per_task + r.per_task && r.end[t] < count) {
            return r.end[t];
        }
    }
    return count;
}

void ih_set_layout(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                   size_t count, const ih_layout_scan *s, const ih_layout_scan *d)
{
    ih_list_layout *l = &ctx->layout;
    l->src = src;
    l->dst = dst;
    l->count = count;
    l->src_uniform = s->uniform;
    l->src_one_shape = s->one_shape;
    l->src_stride = s->stride;
    l->dst_uniform = d != NULL && d->uniform;
    l->dst_one_shape = d != NULL && d->one_shape;
    l->dst_stride = d != NULL ? d->stride : 0;
}

/* ih_op_histogram_views (masks NULL
 * for none). */
static imghist_status batch_views(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *masks, size_t count,
                                  const imghist_histspec *spec, const imghist_counts *out)
{
    imghist_status st = ih_begin_batch(ctx, src != NULL, count);
    /* One pass over the views: the rules, and whether they lie as a
     * tensor's images do (the backend's routes ask; a large list is not
     * read twice). */
    ih_layout_scan lay;
    ih_layout_begin(&lay, st == IMGHIST_OK ? src : NULL, count);
    for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
        st = ih_list_view_rules(ctx, &src[i], i, masks != NULL);
        if (st == IMGHIST_OK && masks != NULL) st = ih_check_batch_mask(ctx, masks, src, i);
        if (st != IMGHIST_OK) {
            break;
        }
        const bool same = i == 0 || ih_same_shape(&src[i], &src[0]);
        ih_layout_step(&lay, src, i, same);
        if (i > 0 && same) {
            continue;
        }
        st = ih_check_source(ctx, &src[i], "batch image");
        if (st != IMGHIST_OK) {
            /* Again, with the image's number in the message: formatting it
             * for every image of a large batch cost more than the launch. */
            char role[48];
            snprintf(role, sizeof role, "batch image %zu", i);
            st = ih_check_source(ctx, &src[i], role);
        } else if (src[i].mem != src[0].mem) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "the batch mixes host and device views (image %zu)", i);
        } else if (src[i].dtype != src[0].dtype ||
                   (src[i].channels > 1 ? src[i].channels : 1) !=
                       (src[0].channels > 1 ? src[0].channels : 1)) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "the batch mixes sample types or channel counts (image %zu)", i);
        }
        if (st == IMGHIST_OK && i == 0 && masks == NULL) {
            const size_t end = ih_tensor_run(ctx, &lay, src, count);
            ih_layout_take(&lay, end);
            i = end - 1; /* the loop goes on at view end */
        }
    }
    if (st == IMGHIST_OK) ih_set_layout(ctx, src, NULL, count, &lay, NULL);
    ih_hist_job job;
    if (st == IMGHIST_OK) st = batch_job(ctx, &src[0], count, spec, out, &job);
    return st == IMGHIST_OK ? run_batch(ctx, src, masks, count, &job, out) : st;
}


imghist_status ih_op_histogram_views(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *masks, size_t count,
                                     const imghist_histspec *spec,
                                     const imghist_counts *out)
{
    return batch_views(ctx, src, masks, count, spec, out);
}

static void batch_free_list(ih_batch *list)
{
    free((void *)list->src);
    free((void *)list->dst);
    free((void *)list->masks);
    list->src = list->dst = list->masks = NULL;
}

/* A host tensor's images as a list, which *list then owns (batch_free_list). */
static imghist_status batch_as_list(imghist_ctx *ctx, const ih_batch *b, ih_batch *list)
{
    *list = (ih_batch){.kind = IH_LIST, .count = b->count};
    imghist_view *src = ih_strided_views(b->src, b->count, b->src_stride);
    imghist_view *dst = b->dst != NULL ? ih_strided_views(b->dst, b->count, b->dst_stride) : NULL;
    imghist_view *masks =
        b->masks != NULL ? ih_strided_views(b->masks, b->count, b->mask_stride) : NULL;
    list->src = src;
    list->dst = dst;
    list->masks = masks;
    if (src == NULL || (b->dst != NULL && dst == NULL) || (b->masks != NULL && masks == NULL)) {
        batch_free_list(list);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", b->count);
    }
    return IMGHIST_OK;
}



/* ih_op_histogram_tensor (mask NULL
 * for none). */
static imghist_status batch_strided(imghist_ctx *ctx, const imghist_view *first, size_t count,
                                    ptrdiff_t stride, const imghist_view *mask,
                                    ptrdiff_t mask_stride, const imghist_histspec *spec,
                                    const imghist_counts *out)
{
    imghist_status st = ih_begin_batch(ctx, first != NULL, count);
    if (st == IMGHIST_OK) st = ih_check_source(ctx, first, "batch image");
    if (st == IMGHIST_OK) st = ih_check_stride(ctx, first, count, stride, "the batch");
    if (st == IMGHIST_OK && mask != NULL) {
        st = ih_check_mask(ctx, mask, first);
        if (st == IMGHIST_OK) st = ih_check_stride(ctx, mask, count, mask_stride, "the masks");
    }
    ih_hist_job job;
    if (st == IMGHIST_OK) st = batch_job(ctx, first, count, spec, out, &job);
    if (st != IMGHIST_OK) {
        return st;
    }
    const ih_batch tensor = {.kind = IH_TENSOR, .count = count, .src = first, .masks = mask,
                             .src_stride = stride, .mask_stride = mask_stride};
    if (first->mem == IMGHIST_MEM_DEVICE) {
        return ctx->ops->histogram(ctx, &tensor, &job, out);
    }
    ih_batch list;
    st = batch_as_list(ctx, &tensor, &list);
    if (st == IMGHIST_OK) st = ctx->ops->histogram(ctx, &list, &job, out);
    batch_free_list(&list);
    return st;
}

imghist_status ih_op_histogram_tensor(imghist_ctx *ctx, const imghist_view *first,
                                      size_t count, ptrdiff_t stride,
                                      const imghist_view *mask, ptrdiff_t mask_stride,
                                      const imghist_histspec *spec,
                                      const imghist_counts *out)
{
    return batch_strided(ctx, first, count, stride, mask, mask_stride, spec, out);
}

imghist_status ih_op_range(imghist_ctx *ctx, const imghist_view *src, const imghist_view *mask,
                           double *lo, double *hi)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_source(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_mask(ctx, mask, src);
    if (st == IMGHIST_OK && (lo == NULL || hi == NULL)) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "range outputs are NULL");
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    if (st != IMGHIST_OK) {
        return st;
    }
    int found = 0;
    st = ctx->ops->range(ctx, src, mask, lo, hi, &found);
    const ih_backend_ops *cpu = ih_fallback_for(ctx, &st, src, NULL);
    if (cpu != NULL) {
        st = cpu->range(ctx, src, mask, lo, hi, &found);
    }
    if (st == IMGHIST_OK && !found) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                     mask != NULL ? "no finite sample where the mask is set"
                                  : "no finite sample in the image");
    }
    return st;
}

imghist_status ih_op_histogram2d(imghist_ctx *ctx, const imghist_view *a,
                                 const imghist_view *b, const imghist_view *mask,
                                 const imghist_histspec *spec_a,
                                 const imghist_histspec *spec_b, const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_source(ctx, a, "first image");
    if (st == IMGHIST_OK) st = ih_check_source(ctx, b, "second image");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (a->channels > 1 || b->channels > 1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "joint histograms take one channel per image");
    }
    if (a->width != b->width || a->height != b->height) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the images differ in size: %ux%u and %ux%u",
                       a->width, a->height, b->width, b->height);
    }
    if (a->mem != b->mem) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "both images must be in host or both in device memory");
    }
    st = ih_check_mask(ctx, mask, a);
    ih_hist_job ja, jb;
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, spec_a, a->dtype, 1, &ja);
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, spec_b, b->dtype, 1, &jb);
    if (st == IMGHIST_OK && spec_b != NULL &&
        (spec_b->flags & (IMGHIST_ACCUMULATE | IMGHIST_OUTLIERS)) != 0) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                     "IMGHIST_ACCUMULATE and IMGHIST_OUTLIERS belong in the first spec");
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint64_t cells = (uint64_t)ja.bin.bins * jb.bin.bins;
    if (cells > IMGHIST_MAX_BINS) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%u x %u cells: at most %u", ja.bin.bins,
                       jb.bin.bins, IMGHIST_MAX_BINS);
    }
    st = ih_check_counts(ctx, out, (size_t)cells + (ja.outliers ? 1 : 0), "counts");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, a->mem, "images");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, out->mem, "counts");
    if (st != IMGHIST_OK) {
        return st;
    }
    st = ctx->ops->histogram2d(ctx, a, b, mask, &ja, &jb, out);
    const ih_backend_ops *cpu = ih_fallback_for(ctx, &st, a, out);
    return cpu != NULL ? cpu->histogram2d(ctx, a, b, mask, &ja, &jb, out) : st;
}

imghist_status imghist_mutual_information(imghist_ctx *ctx, const imghist_counts *joint,
                                          uint32_t bins_a, uint32_t bins_b, double *result,
                                          imghist_mem result_mem)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (bins_a == 0 || bins_b == 0 || (uint64_t)bins_a * bins_b > IMGHIST_MAX_BINS) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%u x %u cells: from 1 to %u", bins_a, bins_b,
                       IMGHIST_MAX_BINS);
    }
    if (result == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "result pointer is NULL");
    }
    if (result_mem != IMGHIST_MEM_HOST && result_mem != IMGHIST_MEM_DEVICE) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "result has an unknown memory kind %d",
                       (int)result_mem);
    }
    st = ih_check_counts(ctx, joint, (size_t)bins_a * bins_b, "joint histogram");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, joint->mem, "counts");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, result_mem, "results");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (joint->mem == IMGHIST_MEM_HOST && result_mem == IMGHIST_MEM_HOST) {
        const int r = ih_mutual_information_host(joint->data, bins_a, bins_b, result);
        if (r < 0) {
            return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %u marginal sums", bins_b);
        }
        return r == 0 ? ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the joint histogram is empty")
                      : IMGHIST_OK;
    }
    return ctx->ops->mutual_information(ctx, joint, bins_a, bins_b, result, result_mem);
}

/* The bytes a view spans, as an address range. */

