/* What the PNG reader and writer share: libpng's error and warning hooks. */
#ifndef IMGHIST_PNG_GLUE_H
#define IMGHIST_PNG_GLUE_H

#include <png.h>

/* The error pointer given to png_create_*_struct. */
typedef struct ih_png_error {
    char msg[200];
} ih_png_error;

/* Keeps libpng's message in the ih_png_error and jumps back to setjmp. */
void ih_png_error_fn(png_structp png, png_const_charp msg);
/* Ignores warnings (bad sRGB profiles, unknown chunks): the library never prints. */
void ih_png_warning_fn(png_structp png, png_const_charp msg);

#endif
