#include "plot.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "sanitize.h"

int ih_plot_kind(const char *path, int *svg, char *err, size_t errlen)
{
    const char *dot = strrchr(path, '.');
    if (dot != NULL && strcasecmp(dot, ".png") == 0) {
        *svg = 0;
        return 0;
    }
    if (dot != NULL && strcasecmp(dot, ".svg") == 0) {
        *svg = 1;
        return 0;
    }
    snprintf(err, errlen, "%s: --plot writes .png or .svg files", path);
    return -1;
}

#if IH_HAVE_CAIRO

#include <cairo-svg.h>
#include <cairo.h>

int ih_plot_available(void)
{
    return 1;
}

/* Inside a panel: the plot area's margins. */
enum { M_LEFT = 78, M_RIGHT = 64, M_TOP = 44, M_BOTTOM = 58 };

typedef struct area {
    double x, y, w, h; /* the plot area */
} area;

/* About `want` round steps (1, 2, 5 x 10^k) over [lo, hi]. */
static double tick_step(double lo, double hi, int want)
{
    const double raw = (hi - lo) / want;
    if (!(raw > 0)) {
        return 1;
    }
    const double mag = pow(10, floor(log10(raw)));
    const double f = raw / mag;
    return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

/* cairo draws UTF-8 only: a byte of a file name that starts no well-formed
 * sequence becomes '?' (a title, not a path anyone reads back). */
static void utf8_title(char *s)
{
    while (*s != '\0') {
        const size_t n = ih_utf8_len(s);
        if (n == 0) {
            *s++ = '?';
        } else {
            s += n;
        }
    }
}

static void text_at(cairo_t *cr, double x, double y, const char *s, double ax, double ay)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - e.x_bearing - ax * e.width, y - e.y_bearing - ay * e.height);
    cairo_show_text(cr, s);
}

static void number(char *buf, size_t len, double v)
{
    if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-3)) {
        snprintf(buf, len, "%.3g", v);
    } else {
        snprintf(buf, len, "%.10g", v);
    }
}

/* The channel's colour: gray images steel blue, channels their own. */
static void channel_rgb(char name, double rgb[3])
{
    const double gray[3] = {0.27, 0.46, 0.71}, r[3] = {0.85, 0.2, 0.2}, g[3] = {0.2, 0.65, 0.25},
                 b[3] = {0.2, 0.35, 0.85}, a[3] = {0.45, 0.45, 0.45};
    const double *c = name == 'r' ? r : name == 'g' ? g : name == 'b' ? b : name == 'a' ? a : gray;
    memcpy(rgb, c, sizeof gray);
}

/* y of a count; the largest count reaches 95 % of the height. */
static double count_y(const area *pa, double count, double top, int log_scale)
{
    const double f = log_scale ? log10(1 + count) / log10(1 + top) : count / top;
    return pa->y + pa->h * (1 - 0.95 * f);
}

/* Where a panel draws and what it scales by. */
typedef struct panel_geom {
    area pa;
    const ih_hist_out *h;
    size_t stride;
    double lo, hi, span;
    uint64_t top;
    int log_scale;
} panel_geom;

/* Bars: each bin from its lower to its upper edge, at least a pixel wide,
 * channels over each other half transparent. */
static void draw_bars(cairo_t *cr, const panel_geom *g)
{
    for (uint32_t c = 0; c < g->h->channels; c++) {
        double rgb[3];
        channel_rgb(g->h->names != NULL ? g->h->names[c] : 'l', rgb);
        cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], g->h->channels > 1 ? 0.5 : 1.0);
        for (uint32_t b = 0; b < g->h->bins; b++) {
            const uint64_t v = g->h->counts[c * g->stride + b];
            if (v == 0) {
                continue;
            }
            const double xa = g->pa.x + (ih_hist_edge(g->h, b) - g->lo) / g->span * g->pa.w;
            const double xb = g->pa.x + (ih_hist_edge(g->h, b + 1) - g->lo) / g->span * g->pa.w;
            const double l = floor(xa), r = fmax(floor(xb), l + 1);
            const double y = round(count_y(&g->pa, (double)v, (double)g->top, g->log_scale));
            cairo_rectangle(cr, l, y, r - l, g->pa.y + g->pa.h - y);
        }
        cairo_fill(cr);
    }
}

/* The cumulative distribution, 0-100 % on the right axis. */
static void draw_cdf(cairo_t *cr, const panel_geom *g)
{
    for (uint32_t c = 0; c < g->h->channels; c++) {
        uint64_t total = 0, cum = 0;
        for (uint32_t b = 0; b < g->h->bins; b++) {
            total += g->h->counts[c * g->stride + b];
        }
        if (total == 0) {
            continue;
        }
        double rgb[3];
        channel_rgb(g->h->names != NULL ? g->h->names[c] : 'l', rgb);
        if (g->h->channels == 1) {
            rgb[0] = 0.9, rgb[1] = 0.45, rgb[2] = 0.05;
        }
        cairo_set_source_rgb(cr, rgb[0] * 0.7, rgb[1] * 0.7, rgb[2] * 0.7);
        cairo_set_line_width(cr, 2);
        cairo_move_to(cr, g->pa.x, g->pa.y + g->pa.h);
        for (uint32_t b = 0; b < g->h->bins; b++) {
            cum += g->h->counts[c * g->stride + b];
            const double x = g->pa.x + (ih_hist_edge(g->h, b + 1) - g->lo) / g->span * g->pa.w;
            cairo_line_to(cr, x, g->pa.y + g->pa.h * (1 - (double)cum / (double)total));
        }
        cairo_stroke(cr);
    }
}

/* Axes and value ticks. */
static void draw_axes(cairo_t *cr, const panel_geom *g)
{
    char buf[64];
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, g->pa.x + 0.5, g->pa.y + 0.5, g->pa.w, g->pa.h);
    cairo_stroke(cr);
    const double xstep = tick_step(g->lo, g->hi, 8);
    for (double t = ceil(g->lo / xstep) * xstep; t <= g->hi + xstep * 1e-9; t += xstep) {
        const double x = round(g->pa.x + (t - g->lo) / g->span * g->pa.w) + 0.5;
        cairo_move_to(cr, x, g->pa.y + g->pa.h);
        cairo_line_to(cr, x, g->pa.y + g->pa.h + 5);
        cairo_stroke(cr);
        number(buf, sizeof buf, t);
        text_at(cr, x, g->pa.y + g->pa.h + 8, buf, 0.5, 0);
    }
    for (int k = 0; k <= 4; k++) {
        const double y = round(g->pa.y + g->pa.h * (1 - k / 4.0)) + 0.5;
        cairo_move_to(cr, g->pa.x + g->pa.w, y);
        cairo_line_to(cr, g->pa.x + g->pa.w + 5, y);
        cairo_stroke(cr);
        snprintf(buf, sizeof buf, "%d%%", 25 * k);
        text_at(cr, g->pa.x + g->pa.w + 8, y, buf, 0, 0.5);
    }
}

static void panel(cairo_t *cr, double x0, const ih_hist_out *h, const char *title,
                  int log_scale)
{
    const area pa = {x0 + M_LEFT, M_TOP, IH_PLOT_PANEL_W - M_LEFT - M_RIGHT,
                     IH_PLOT_PANEL_H - M_TOP - M_BOTTOM};
    const size_t stride = ih_hist_stride(h);
    const double lo = ih_hist_edge(h, 0), hi = ih_hist_edge(h, h->bins);
    const double span = hi > lo ? hi - lo : 1;
    uint64_t top = 1;
    for (uint32_t c = 0; c < h->channels; c++) {
        for (uint32_t b = 0; b < h->bins; b++) {
            const uint64_t v = h->counts[c * stride + b];
            top = v > top ? v : top;
        }
    }
    char buf[64];
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    /* Title. */
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_font_size(cr, 16);
    text_at(cr, pa.x + pa.w / 2, 14, title, 0.5, 0);
    /* Grid and count ticks. */
    cairo_set_font_size(cr, 12);
    cairo_set_line_width(cr, 1);
    /* Log axis: decades 1, 10, 100, ...; linear: round steps from 0. */
    const double step = tick_step(0, (double)top, 5);
    for (double t = log_scale ? 1 : 0; count_y(&pa, t, (double)top, log_scale) >= pa.y;
         t = log_scale ? t * 10 : t + step) {
        const double y = round(count_y(&pa, t, (double)top, log_scale)) + 0.5;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, pa.x, y);
        cairo_line_to(cr, pa.x + pa.w, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        number(buf, sizeof buf, t);
        text_at(cr, pa.x - 6, y, buf, 1, 0.5);
    }
    const panel_geom g = {pa, h, stride, lo, hi, span, top, log_scale};
    draw_bars(cr, &g);
    draw_cdf(cr, &g);
    draw_axes(cr, &g);
    cairo_set_font_size(cr, 13);
    text_at(cr, pa.x + pa.w / 2, IH_PLOT_PANEL_H - 20, h->natural ? "value" : "bin edges", 0.5,
            0);
    cairo_save(cr);
    cairo_translate(cr, x0 + 16, pa.y + pa.h / 2);
    cairo_rotate(cr, -1.5707963267948966);
    text_at(cr, 0, 0, log_scale ? "count (log scale)" : "count", 0.5, 0.5);
    cairo_restore(cr);
    cairo_save(cr);
    cairo_translate(cr, x0 + IH_PLOT_PANEL_W - 14, pa.y + pa.h / 2);
    cairo_rotate(cr, 1.5707963267948966);
    text_at(cr, 0, 0, "cumulative", 0.5, 0.5);
    cairo_restore(cr);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int length)
{
    return fwrite(data, 1, length, (FILE *)closure) == length ? CAIRO_STATUS_SUCCESS
                                                              : CAIRO_STATUS_WRITE_ERROR;
}

int ih_write_plot(FILE *fp, const void *arg)
{
    const ih_plot *p = (const ih_plot *)arg;
    const int panels = p->after != NULL ? 2 : 1;
    const double w = (double)IH_PLOT_PANEL_W * panels, h = IH_PLOT_PANEL_H;
    cairo_surface_t *s = p->svg ? cairo_svg_surface_create_for_stream(to_file, fp, w, h)
                                : cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    char title[600];
    snprintf(title, sizeof title, "%s%s", p->title, p->after != NULL ? ": before" : "");
    utf8_title(title);
    panel(cr, 0, p->before, title, p->log_scale);
    if (p->after != NULL) {
        panel(cr, IH_PLOT_PANEL_W, p->after, "after equalization", p->log_scale);
    }
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && !p->svg) {
        st = cairo_surface_write_to_png_stream(s, to_file, fp);
    }
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS) {
        st = cairo_surface_status(s);
    }
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS) {
        /* the caller's message reads errno: cairo's failure, not a stale one */
        errno = st == CAIRO_STATUS_NO_MEMORY ? ENOMEM : EINVAL;
        return -1;
    }
    return ferror(fp) ? -1 : 0;
}

#else

int ih_plot_available(void)
{
    return 0;
}

int ih_write_plot(FILE *fp, const void *arg)
{
    (void)fp;
    (void)arg;
    return -1;
}

#endif
