/*
 * JPEGs of every sampling layout and their raw component planes, for the
 * tests of the YCbCr planes to gray conversion (test_ycc_gray.c,
 * test_ycc_gray_cuda.c) and the nvJPEG comparison (ycc_gray_nvjpeg.c).
 */
#ifndef IMGHIST_YCC_CASES_H
#define IMGHIST_YCC_CASES_H

#include <stddef.h>
#include <stdint.h>

/* A made JPEG: name says layout, size and options. */
typedef struct ycc_case {
    char name[64];
    unsigned char *data; /* malloc'd */
    size_t size;
} ycc_case;

/* The number of made cases; ycc_case_make builds case i (0 on success). */
size_t ycc_case_count(void);
int ycc_case_make(size_t i, ycc_case *out);

/* The frame's components and their inverse DCT's output, each plane at its
 * own size (padded to whole blocks). */
typedef struct ycc_raw {
    int components;
    int ycc;          /* 3 components in YCbCr (not RGB, not CMYK) */
    int h[4], v[4];   /* sampling factors */
    uint32_t width, height;
    uint8_t *planes[4];
    size_t pitches[4];
    uint32_t rows[4]; /* allocated rows */
    char layout[32];  /* "Y2x2 1x1 1x1" */
} ycc_raw;

/* 0, or -1 when libjpeg refuses the file (or more than 3 components). */
int ycc_raw_read(const unsigned char *data, size_t size, ycc_raw *out);
void ycc_raw_free(ycc_raw *r);

/* Reads a whole file; NULL on failure. */
unsigned char *ycc_read_file(const char *path, size_t *size);


/* imghist's own bgr2gray decode of a JPEG (width x height bytes, malloc'd);
 * NULL when it fails. */
uint8_t *ycc_cpu_gray(const unsigned char *data, size_t size, uint32_t *width, uint32_t *height);

/* The made cases, then every *.jpg in each of dirs[0..ndirs-1]; 0 or -1. */
int ycc_inputs(char *const dirs[], int ndirs, ycc_case **out, size_t *count);
void ycc_inputs_free(ycc_case *cases, size_t count);

#endif
