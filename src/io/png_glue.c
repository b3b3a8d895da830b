#include <stdio.h>

#include "png_glue.h"

void ih_png_error_fn(png_structp png, png_const_charp msg)
{
    ih_png_error *e = png_get_error_ptr(png);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

void ih_png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}
