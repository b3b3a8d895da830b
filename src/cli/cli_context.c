#include "cli_context.h"

#include "scale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned ih_cores(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* A parameter from an option; a value out of the library's bounds is a usage
 * error. */
static int set(imghist_ctx *ctx, imghist_param p, uint64_t value, const char *option)
{
    if (imghist_set_param(ctx, p, value > INT64_MAX ? INT64_MAX : (int64_t)value) !=
        IMGHIST_OK) {
        ih_say("%s: %s (see imghist --help)", option, imghist_last_error(ctx));
        return IH_EXIT_USAGE;
    }
    return IH_EXIT_OK;
}

int ih_one_image_on_cpu(const ih_cli_args *a)
{
    const char *env = getenv("IMGHIST_BACKEND");
    imghist_backend named = IMGHIST_BACKEND_AUTO;
    if (env != NULL && *env != '\0' && imghist_backend_from_name(env, &named) != IMGHIST_OK) {
        return 0; /* the library says what is wrong with it */
    }
    return a->backend == IMGHIST_BACKEND_AUTO && named == IMGHIST_BACKEND_AUTO &&
           a->scale.n_gpus == 0;
}

int ih_make_context(const ih_cli_args *a, unsigned cpu_threads, imghist_ctx **out)
{
    if (ih_one_image_on_cpu(a)) {
        ih_cli_args cpu = *a; /* read only, for the backend */
        cpu.backend = IMGHIST_BACKEND_CPU;
        return ih_make_context_on(&cpu, cpu_threads, -1, out);
    }
    return ih_make_context_on(a, cpu_threads, a->scale.n_gpus > 0 ? a->scale.gpus[0] : -1, out);
}

int ih_make_context_on(const ih_cli_args *a, unsigned cpu_threads, int device, imghist_ctx **out)
{
    imghist_ctx *ctx = NULL;
    *out = NULL;
    imghist_status st = imghist_create(a->backend, device >= 0 ? device : -1, &ctx);
    if (st != IMGHIST_OK) {
        /* Name what chose the backend: the option, or under --backend auto
         * the environment variable that overrides it. */
        const char *env = getenv("IMGHIST_BACKEND");
        char cause[160];
        if (a->backend == IMGHIST_BACKEND_AUTO && env != NULL && *env != '\0') {
            snprintf(cause, sizeof cause, "IMGHIST_BACKEND=%.100s", env);
        } else {
            snprintf(cause, sizeof cause, "--backend %s", imghist_backend_name(a->backend));
        }
        const char *why = ctx ? imghist_last_error(ctx) : imghist_strerror(st);
        if (strncmp(why, "IMGHIST_BACKEND=", 16) == 0) {
            ih_say("%s", why); /* it names the variable itself */
        } else if (device >= 0) {
            ih_say("%s on GPU %d: %s", cause, ih_gpu_shown(&a->scale, device), why);
        } else {
            ih_say("%s: %s", cause, why);
        }
        imghist_destroy(ctx);
        return IH_EXIT_FILE;
    }
    int rc = IH_EXIT_OK;
    if (a->max_pixels != 0) rc = set(ctx, IMGHIST_P_MAX_PIXELS, a->max_pixels, "--max-pixels");
    if (rc == IH_EXIT_OK && a->max_bytes != 0) {
        rc = set(ctx, IMGHIST_P_MAX_INPUT_BYTES, a->max_bytes, "--max-bytes");
    }
    if (rc == IH_EXIT_OK) rc = set(ctx, IMGHIST_P_LOAD_GRAY, (uint64_t)a->gray, "--gray");
    if (rc == IH_EXIT_OK) rc = set(ctx, IMGHIST_P_LOAD_DEPTH, a->native_depth ? 1 : 0, "--depth");
    if (rc == IH_EXIT_OK) rc = set(ctx, IMGHIST_P_LOAD_CHANNELS, a->channels ? 1 : 0, "--channels");
    if (rc == IH_EXIT_OK) {
        rc = set(ctx, IMGHIST_P_LOAD_TRUNCATED, a->read_truncated ? 1 : 0, "--read-truncated");
    }
    if (rc == IH_EXIT_OK) {
        int64_t lo = 1, hi = 1;
        imghist_param_bounds(IMGHIST_P_CPU_THREADS, &lo, &hi);
        rc = set(ctx, IMGHIST_P_CPU_THREADS,
                 cpu_threads < 1 ? 1 : (cpu_threads > hi ? (uint64_t)hi : cpu_threads),
                 "threads");
    }
    if (rc != IH_EXIT_OK) {
        imghist_destroy(ctx);
        return rc;
    }
    *out = ctx;
    return IH_EXIT_OK;
}
