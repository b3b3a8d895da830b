/*
 * Limits of the sample types the kernels count.
 */
#ifndef IMGHIST_LIMITS_CUH
#define IMGHIST_LIMITS_CUH

/* The levels of a 16-bit sample (values 0..65535). An int, as the literal. */
constexpr int IH_LEVELS16 = 65536;

#endif
