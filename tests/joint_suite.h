/*
 * The state and helpers of the CUDA parts on images of any sample type with
 * a host and a device copy (include after the headers of gpu parts): the two
 * contexts, images and masks at random pitches and base offsets, a random
 * spec, the comparison of counts. Each part including it has its own copy of
 * the state, filled by BS_GPU_PART_STATE.
 */
#ifndef IMGHIST_JOINT_SUITE_H
#define IMGHIST_JOINT_SUITE_H

static imghist_ctx *gpu, *cpu;
static tu_rng rng;
static int quick;

/* ---- images: a host copy and a device copy, same pitch and base offset ---- */

enum fill { F_UNIFORM, F_CONSTANT, F_TWO, F_SMALL, F_CORRELATED, F_FLOATY };

typedef struct img {
    imghist_view h, d;      /* host and device views of the same samples */
    uint8_t *hbuf, *dbuf;   /* allocations */
    size_t bytes;
} img;

static inline size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

/* Sample value for a fill; `ref` (same index of another image) for F_CORRELATED. */
static inline double value_for(enum fill f, imghist_dtype t, double ref)
{
    const double maxv = t == IMGHIST_U8 ? 255 : t == IMGHIST_U16 ? 65535 : 1000;
    switch (f) {
    case F_UNIFORM: return t == IMGHIST_F32 ? (double)tu_below(&rng, 2000000) / 1000.0 - 500.0
                                             : (double)tu_below(&rng, (uint32_t)maxv + 1);
    case F_CONSTANT: return t == IMGHIST_F32 ? 3.25 : maxv / 2;
    case F_TWO: return tu_below(&rng, 2) ? maxv / 3 : maxv / 3 + 1;
    case F_SMALL: return (double)tu_below(&rng, 4096); /* 12-bit data */
    case F_CORRELATED: {
        double v = ref + (double)tu_below(&rng, 7) - 3.0;
        return v < 0 ? 0 : v > maxv ? maxv : v;
    }
    case F_FLOATY: { /* specials among floats */
        const uint32_t r = tu_below(&rng, 16);
        if (t == IMGHIST_F32 && r == 0) return NAN;
        if (t == IMGHIST_F32 && r == 1) return INFINITY;
        if (t == IMGHIST_F32 && r == 2) return -INFINITY;
        return value_for(F_UNIFORM, t, ref);
    }
    }
    return 0;
}

static inline void put(uint8_t *p, imghist_dtype t, double v)
{
    if (t == IMGHIST_U8) {
        *p = (uint8_t)v;
    } else if (t == IMGHIST_U16) {
        const uint16_t u = (uint16_t)v;
        memcpy(p, &u, 2);
    } else {
        const float f = (float)v;
        memcpy(p, &f, 4);
    }
}

static inline double get(const uint8_t *p, imghist_dtype t)
{
    if (t == IMGHIST_U8) return *p;
    if (t == IMGHIST_U16) { uint16_t u; memcpy(&u, p, 2); return u; }
    float f; memcpy(&f, p, 4); return f;
}

/* A w x h image of type t: pitch padded by `pad` samples, base offset by
 * `offset` bytes (a multiple of the sample size unless odd is wanted). */
static inline img make_img(imghist_dtype t, uint32_t w, uint32_t h, uint32_t pad, size_t offset,
                    enum fill f, const img *ref)
{
    img m;
    memset(&m, 0, sizeof m);
    const size_t es = dsize(t);
    const size_t pitch = ((size_t)w + pad) * es;
    m.bytes = offset + pitch * h;
    m.hbuf = malloc(m.bytes);
    assert_non_null(m.hbuf);
    for (size_t i = 0; i < m.bytes; i++) {
        m.hbuf[i] = (uint8_t)tu_next(&rng); /* padding: noise that must not count */
    }
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            const double r = ref != NULL ? get((const uint8_t *)ref->h.data + (size_t)y * ref->h.pitch +
                                                   (size_t)x * dsize(ref->h.dtype), ref->h.dtype)
                                         : 0;
            put(m.hbuf + offset + (size_t)y * pitch + (size_t)x * es, t, value_for(f, t, r));
        }
    }
    CUDA_OK(cudaMalloc((void **)&m.dbuf, m.bytes));
    CUDA_OK(cudaMemcpy(m.dbuf, m.hbuf, m.bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize()); /* the context's stream does not wait for the copy */
    const imghist_view v = {.data = m.hbuf + offset, .dtype = t, .mem = IMGHIST_MEM_HOST,
                            .width = w, .height = h, .pitch = pitch, .channels = 1};
    m.h = v;
    m.d = v;
    m.d.data = m.dbuf + offset;
    m.d.mem = IMGHIST_MEM_DEVICE;
    return m;
}

/* A mask with about `density` percent non-zero bytes (0: none). */
static inline img make_mask(uint32_t w, uint32_t h, uint32_t pad, size_t offset, uint32_t density)
{
    img m = make_img(IMGHIST_U8, w, h, pad, offset, F_CONSTANT, NULL);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            m.hbuf[offset + (size_t)y * m.h.pitch + x] =
                tu_below(&rng, 100) < density ? (uint8_t)(1 + tu_below(&rng, 255)) : 0;
        }
    }
    CUDA_OK(cudaMemcpy(m.dbuf, m.hbuf, m.bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    return m;
}

static inline void free_img(img *m)
{
    free(m->hbuf);
    cudaFree(m->dbuf);
    memset(m, 0, sizeof *m);
}

static inline void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize(s));
}

static inline void expect_same_counts(const uint64_t *want, const uint64_t *got, size_t n,
                               const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (want[i] != got[i]) {
            fail_msg("%s: counter %zu of %zu: CPU %llu, GPU %llu", what, i, n,
                     (unsigned long long)want[i], (unsigned long long)got[i]);
        }
    }
}

/* ---- joint histograms ---- */

/* A random spec for type t (natural when allowed and `natural`). */
static inline imghist_histspec random_spec(imghist_dtype t, int natural, uint32_t bins)
{
    imghist_histspec s = {0};
    if (natural && t == IMGHIST_U8) { /* U16 x U16 natural would be 2^32 cells */
        return s;
    }
    s.bins = bins;
    const uint32_t r = tu_below(&rng, 3);
    if (t == IMGHIST_F32) {
        s.lo = r == 0 ? -500.0 : -123.456;
        s.hi = r == 0 ? 500.0 : 321.0 + tu_below(&rng, 100);
    } else {
        const double maxv = t == IMGHIST_U8 ? 256 : 65536;
        s.lo = r == 0 ? 0 : r == 1 ? 3.5 : (double)tu_below(&rng, (uint32_t)maxv / 4);
        s.hi = r == 0 ? maxv : s.lo + 1 + tu_below(&rng, (uint32_t)(maxv - s.lo));
    }
    if (tu_below(&rng, 4) == 0) {
        s.flags |= IMGHIST_CLOSED;
    }
    return s;
}

#endif
