/*
 * The state and helpers of the CUDA parts that compare wide histograms
 * (U8/U16/F32, any bins, channels, masks, outliers, accumulate) with the CPU
 * backend bit for bit (include after the headers of gpu parts): six specs a
 * type, images whose samples sit on and one ulp around the edges, the
 * comparison over device and host views and counts. Each part including it
 * has its own copy of the state, filled by BS_GPU_PART_STATE.
 */
#ifndef IMGHIST_WIDE_SUITE_H
#define IMGHIST_WIDE_SUITE_H

static imghist_ctx *gpu, *cpu;
static tu_rng rng;
static int quick;

static inline size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

/* The GPU's histograms of n device images into *out: with strided, a view
 * of the n images `stride` bytes from dv[0] (its mask dm[0], one for all
 * where mask_stride is 0, else one an image mask_stride apart), else the
 * list dv (each image with its dm); masks only when masked. */
static inline void gpu_batch(int strided, int masked, const imghist_view *dv, const imghist_view *dm,
                      size_t n, ptrdiff_t stride, ptrdiff_t mask_stride,
                      const imghist_histspec *spec, const imghist_counts *out)
{
    if (strided) {
        imghist_view mt;
        const imghist_view t = masked ? vw_tensor_masked(dv[0], n, stride, dm[0],
                                                         mask_stride == 0 ? 1 : n, mask_stride,
                                                         &mt)
                                      : vw_tensor(dv[0], n, stride);
        IH_OK(gpu, imghist_histogram(gpu, &t, spec, out));
    } else {
        imghist_view *l = malloc(n * sizeof *l);
        assert_non_null(l);
        vw_list_masked(l, dv, masked ? dm : NULL, n);
        IH_OK(gpu, imghist_histogram_list(gpu, l, n, spec, out));
        free(l);
    }
}

/* ---- the specs of the grid ---- */

#define N_SPECS 6

static inline imghist_histspec spec_for(imghist_dtype t, int k)
{
    imghist_histspec s = {0, 0, 0, 0};
    switch (t) {
    case IMGHIST_U8: {
        const imghist_histspec v[N_SPECS] = {{0, 0, 0, 0},      {64, 0, 256, 0},
                                             {7, 3.5, 200.25, 0}, {1, 100, 101, 0},
                                             {1, 0, 1000, 0},    {1u << 20, 0, 256, 0}};
        s = v[k];
        break;
    }
    case IMGHIST_U16: {
        const imghist_histspec v[N_SPECS] = {{0, 0, 0, 0},           {4096, 0, 65536, 0},
                                             {1000, -3.7, 70000.2, 0}, {3, 1000, 1003, 0},
                                             {1, 0, 65536, 0},        {1u << 20, 0, 65536, 0}};
        s = v[k];
        break;
    }
    default: {
        const imghist_histspec v[N_SPECS] = {{10000, 0, 1, 0},      {256, 0, 256, 0},
                                             {777, -2.5, 3.25, 0},  {5, 1, 1 + 1e-5, 0},
                                             {1, 0, 1, 0},          {1u << 20, -1, 1, 0}};
        s = v[k];
        break;
    }
    }
    return s;
}

/* Bin edge i of a spec, as binning.h computes it. */
static inline double edge(const imghist_histspec *s, uint32_t bins, uint32_t i)
{
    if (i >= bins) {
        return s->hi;
    }
    const double w = (s->hi - s->lo) / bins;
    volatile double step = (double)i * w;
    return s->lo + step;
}

/* ---- test images: host and device copies of one pitched view ---- */

typedef struct {
    uint8_t *host, *dbase;
    imghist_view hv, dv;
    size_t bytes;
} img_t;

/* A value for sample i: random over a span a little wider than the spec's
 * range, values on and one ulp around edges, and specials. */
static inline void put_sample(imghist_dtype t, uint8_t *p, const imghist_histspec *s, uint32_t bins,
                       int constant)
{
    const uint32_t r = tu_below(&rng, 16);
    if (s == NULL || s->bins == 0) {
        bins = 0; /* the natural binning: the type's whole range */
    }
    double lo = bins == 0 ? 0 : s->lo, hi = bins == 0 ? (t == IMGHIST_U8 ? 256 : 65536) : s->hi;
    if (constant) {
        double c = lo + (hi - lo) * 0.37;
        if (t == IMGHIST_F32) {
            const float f = (float)c;
            memcpy(p, &f, 4);
        } else if (t == IMGHIST_U16) {
            const uint16_t u = (uint16_t)(c < 0 ? 0 : c > 65535 ? 65535 : c);
            memcpy(p, &u, 2);
        } else {
            *p = (uint8_t)(c < 0 ? 0 : c > 255 ? 255 : c);
        }
        return;
    }
    double v;
    if (r < 5 && bins > 0) { /* on or next to an edge */
        const uint32_t i = tu_below(&rng, bins + 1);
        v = edge(s, bins, i);
    } else {
        const double span = hi - lo;
        v = lo - 0.1 * span + 1.2 * span * (double)(tu_next(&rng) >> 11) * 0x1p-53;
    }
    if (t == IMGHIST_F32) {
        float f = v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
        if (r == 1) f = nextafterf(f, INFINITY);
        if (r == 2) f = nextafterf(f, -INFINITY);
        if (r == 5) f = NAN;
        if (r == 6) f = tu_below(&rng, 2) ? INFINITY : -INFINITY;
        if (r == 7) f = (float)hi; /* the closed bin's value */
        if (r == 8) f = -0.0f;
        memcpy(p, &f, 4);
        return;
    }
    if (r == 1) v = ceil(v);
    else if (r == 2) v = floor(v);
    else if (r == 3) v = floor(v) - 1;
    if (r >= 9 && r < 12) { /* anything the type holds */
        v = (double)(tu_next(&rng) >> 40);
    }
    const double maxv = t == IMGHIST_U8 ? 255 : 65535;
    v = v < 0 ? 0 : v > maxv ? maxv : floor(v);
    if (t == IMGHIST_U16) {
        const uint16_t u = (uint16_t)v;
        memcpy(p, &u, 2);
    } else {
        *p = (uint8_t)v;
    }
}

enum fill { FILL_MIXED, FILL_CONSTANT, FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE };

/* w x h x ch samples of t at device offset `offset` (bytes) with `pad` bytes of
 * padding per row. */
static inline img_t make_image(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t pad,
                        size_t offset, const imghist_histspec *s, uint32_t bins, enum fill f)
{
    img_t im;
    memset(&im, 0, sizeof im);
    const size_t row = (size_t)w * ch * dsize(t);
    const size_t pitch = row + pad;
    im.bytes = offset + pitch * h;
    im.host = malloc(offset + pitch * h);
    assert_non_null(im.host);
    memset(im.host, 0xfd, offset + pitch * h);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *rp = im.host + offset + (size_t)y * pitch;
        for (size_t i = 0; i < (size_t)w * ch; i++) {
            if (f == FILL_MASK_RANDOM) rp[i] = tu_below(&rng, 3) == 0 ? 0 : (uint8_t)(1 + tu_below(&rng, 255));
            else if (f == FILL_MASK_ZERO) rp[i] = 0;
            else if (f == FILL_MASK_ONE) rp[i] = 1;
            else put_sample(t, rp + i * dsize(t), s, bins, f == FILL_CONSTANT);
        }
    }
    CUDA_OK(cudaMalloc((void **)&im.dbase, im.bytes));
    CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
    /* A copy from pageable memory may still be in flight when cudaMemcpy
     * returns, and the context's stream does not wait for the legacy one. */
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view hv = {.data = im.host + offset, .dtype = t, .mem = IMGHIST_MEM_HOST,
        .width = w, .height = h, .pitch = pitch, .channels = ch};
    im.hv = hv;
    im.dv = hv;
    im.dv.data = im.dbase + offset;
    im.dv.mem = IMGHIST_MEM_DEVICE;
    return im;
}

static inline void free_image(img_t *im)
{
    free(im->host);
    CUDA_OK(cudaFree(im->dbase));
}

static inline void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize((cudaStream_t)s));
}

/* ---- one comparison ---- */

enum where { DEV_DEV, HOST_HOST, DEV_HOST, HOST_DEV };
static const char *where_name[] = {"device view, device counts", "host view, host counts",
                                   "device view, host counts", "host view, device counts"};

/* The GPU against the CPU on one image (and mask) with one spec. */
static inline void compare(const img_t *im, const img_t *mask, const imghist_histspec *spec,
                    enum where wh, const char *what)
{
    const imghist_view *src = wh == DEV_DEV || wh == DEV_HOST ? &im->dv : &im->hv;
    const imghist_view *m = mask == NULL ? NULL
                            : (wh == DEV_DEV || wh == DEV_HOST ? &mask->dv : &mask->hv);
    const size_t len = imghist_counts_len(spec, im->hv.dtype, im->hv.channels);
    assert_true(len > 0);
    uint64_t *want = malloc(len * 8), *got = malloc(len * 8);
    assert_non_null(want);
    assert_non_null(got);
    /* Accumulate: both start from the same random counts. */
    for (size_t i = 0; i < len; i++) {
        want[i] = (spec->flags & IMGHIST_ACCUMULATE) ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
    }
    memcpy(got, want, len * 8);
    const imghist_counts cc = {want, len, IMGHIST_MEM_HOST};
    const imghist_view chv = vw_masked(im->hv, mask != NULL ? &mask->hv : NULL);
    IH_OK(cpu, imghist_histogram(cpu, &chv, spec, &cc));
    const imghist_view gsv = vw_masked(*src, m);
    const int dev_counts = wh == DEV_DEV || wh == HOST_DEV;
    uint64_t *d = NULL;
    if (dev_counts) {
        CUDA_OK(cudaMalloc((void **)&d, len * 8));
        CUDA_OK(cudaMemcpy(d, got, len * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        const imghist_counts gc = {d, len, IMGHIST_MEM_DEVICE};
        IH_OK(gpu, imghist_histogram(gpu, &gsv, spec, &gc));
        gpu_sync();
        CUDA_OK(cudaMemcpy(got, d, len * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(d));
    } else {
        const imghist_counts gc = {got, len, IMGHIST_MEM_HOST};
        IH_OK(gpu, imghist_histogram(gpu, &gsv, spec, &gc));
        gpu_sync();
    }
    for (size_t i = 0; i < len; i++) {
        if (got[i] != want[i]) {
            fail_msg("%s (%s; %s, %ux%u x%u ch, bins %u [%g, %g) flags %u, mask %s): counter %zu "
                     "of %zu: GPU %llu, CPU %llu",
                     what, where_name[wh],
                     im->hv.dtype == IMGHIST_U8 ? "u8" : im->hv.dtype == IMGHIST_U16 ? "u16" : "f32",
                     im->hv.width, im->hv.height, im->hv.channels, spec->bins, spec->lo, spec->hi,
                     spec->flags, mask != NULL ? "yes" : "no", i, len,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    free(want);
    free(got);
}

/* An image with a mask, s fresh or (at random) accumulated: device view into
 * device and host counts, and host views (staged: packed, the mask's rows
 * after them); the comparisons made. */
static inline unsigned compare_masked(const img_t *im, const img_t *m, const imghist_histspec *s,
                               const char *what)
{
    imghist_histspec c = *s;
    c.flags = tu_below(&rng, 2) ? IMGHIST_ACCUMULATE : 0;
    compare(im, m, &c, DEV_DEV, what);
    compare(im, m, &c, DEV_HOST, what);
    compare(im, m, &c, HOST_HOST, what);
    return 3;
}

/* ---- the grid ---- */

#endif
