/*
 * The tables of colorspace.h, computed as OpenCV 4.6 computes its own: the
 * HSV divisors in double precision rounded half to even, the Lab tables
 * from single-precision arithmetic on the sRGB and CIE constants written as
 * ratios of integers (OpenCV builds them with its software floats, which
 * round as IEEE arithmetic does; pow and cbrt come from the C library here,
 * and the 2^24-colour test pins the result to cv2's).
 */
#include <math.h>
#include <pthread.h>

#include "colorspace.h"

static ih_color_tables g_tables;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* cvRound: to nearest, ties to even (the default rounding mode). */
static int round_even(double v)
{
    return (int)lrint(v);
}

/* sRGB's decoding curve of a float in [0, 1], in double precision, rounded
 * to float as OpenCV's applyGamma returns it. */
static float srgb_to_linear(float x)
{
    const double xd = x;
    const double v = xd <= 809.0 / 20000.0
                         ? xd / (323.0 / 25.0)
                         : pow((xd + 11.0 / 200.0) / (1.0 + 11.0 / 200.0), 12.0 / 5.0);
    return (float)v;
}

/*
 * OpenCV's single-precision cube root, whose last bit the Lab table's
 * rounding can see: x = 2^(3k) * f with f in [1/8, 1), a quartic rational
 * approximation of cbrt(f) (Turkowski's) evaluated in double precision, and
 * its mantissa cut (not rounded) to a float's 23 bits, times 2^k. x > 0.
 */
static float opencv_cbrtf(float x)
{
    int e;
    const double m = frexp((double)x, &e); /* x = m 2^e, m in [1/2, 1) */
    int k = e / 3;
    int r = e - 3 * k;                      /* in -2..2 */
    if (r > 0) {
        r -= 3;
        k += 1;
    }
    const double f = ldexp(m, r);           /* in [1/8, 1) */
    const double num = (((45.2548339756803022511987494 * f + 192.2798368355061050458134625) * f +
                         119.1654824285581628956914143) * f + 13.43250139086239872172837314) * f +
                       0.1636161226585754240958355063;
    const double den = (((14.80884093219134573786480845 * f + 151.9714051044435648658557668) * f +
                         168.5254414101568283957668343) * f + 33.9905941350215598754191872) * f +
                       1.0;
    const double c = num / den;             /* about cbrt(f), in [1/2, 1) */
    int ce;
    const double cm = frexp(c, &ce);        /* c = cm 2^ce: a float keeps cm's first 24 bits */
    const double cut = ldexp(floor(ldexp(cm, 24)), -24);
    return (float)ldexp(cut, k + ce);
}

static void build(void)
{
    ih_color_tables *t = &g_tables;
    t->sdiv[0] = t->hdiv180[0] = t->hdiv256[0] = 0;
    for (int i = 1; i < 256; i++) {
        t->sdiv[i] = round_even((255 << IH_HSV_SHIFT) / (1.0 * i));
        t->hdiv180[i] = round_even((180 << IH_HSV_SHIFT) / (6.0 * i));
        t->hdiv256[i] = round_even((256 << IH_HSV_SHIFT) / (6.0 * i));
    }

    const float int_scale = 255.0f * (float)(1 << IH_GAMMA_SHIFT);
    for (int i = 0; i < 256; i++) {
        volatile float x = (float)i / 255.0f;
        volatile float v = int_scale * srgb_to_linear(x);
        t->gamma[i] = (uint16_t)lrintf(v);
    }

    volatile float lthresh = 216.0f / 24389.0f;
    volatile float lscale = 841.0f / 108.0f;
    volatile float lbias = 16.0f / 116.0f;
    const float cb_scale = 1.0f / (255.0f * (float)(1 << IH_GAMMA_SHIFT));
    const float lshift2 = (float)(1 << IH_LAB_SHIFT2);
    for (int i = 0; i < IH_LAB_CBRT_SIZE; i++) {
        volatile float x = cb_scale * (float)i;
        const float f = x < lthresh ? fmaf(x, lscale, lbias) : opencv_cbrtf(x);
        volatile float v = lshift2 * f;
        t->cbrt[i] = (uint16_t)lrintf(v);
    }

    /* sRGB -> XYZ (D65) by rows X, Y, Z and columns R, G, B, and the white
     * point: OpenCV's constants. Columns are stored B, G, R. */
    static const double m[9] = {0.412453, 0.357580, 0.180423, 0.212671, 0.715160,
                                0.072169, 0.019334, 0.119193, 0.950227};
    static const double white[3] = {0.950456, 1.0, 1.088754};
    const double one = (double)(1 << IH_LAB_SHIFT);
    for (int i = 0; i < 3; i++) {
        t->lab[i * 3 + 2] = round_even(one * m[i * 3 + 0] / white[i]);
        t->lab[i * 3 + 1] = round_even(one * m[i * 3 + 1] / white[i]);
        t->lab[i * 3 + 0] = round_even(one * m[i * 3 + 2] / white[i]);
    }
}

const ih_color_tables *ih_color_tables_get(void)
{
    pthread_once(&g_once, build);
    return &g_tables;
}
