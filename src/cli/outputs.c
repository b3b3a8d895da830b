#include "outputs.h"

#include <errno.h>
#include <string.h>

int ih_outputs_stage(ih_outputs *o, const char *path, int (*write)(FILE *, const void *),
                     const void *arg, char *err, size_t errlen)
{
    char why[256];
    if (o->count == IH_MAX_OUTPUTS) {
        snprintf(err, errlen, "%s: too many outputs", path);
        return -1;
    }
    ih_output_file *f = &o->files[o->count];
    if (ih_output_open(f, path, 0, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", path, why);
        return -1;
    }
    o->paths[o->count++] = path;
    errno = 0;
    if (write(f->fp, arg) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    if (ih_output_close(f, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, why);
        return -1;
    }
    return 0;
}

FILE *ih_outputs_open(ih_outputs *o, const char *path, char *err, size_t errlen)
{
    char why[256];
    if (o->count == IH_MAX_OUTPUTS) {
        snprintf(err, errlen, "%s: too many outputs", path);
        return NULL;
    }
    ih_output_file *f = &o->files[o->count];
    if (ih_output_open(f, path, 1, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", path, why);
        return NULL;
    }
    o->paths[o->count++] = path;
    return f->fp;
}

int ih_outputs_commit(ih_outputs *o, char *err, size_t errlen)
{
    int rc = 0;
    char why[256];
    /* Every file complete before any is renamed. */
    for (size_t i = 0; i < o->count && rc == 0; i++) {
        if (ih_output_close(&o->files[i], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: cannot write: %s", o->paths[i], why);
            rc = -1;
        }
    }
    for (size_t i = 0; i < o->count; i++) {
        if (rc == 0 && ih_output_commit(&o->files[i], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: cannot write: %s", o->paths[i], why);
            rc = -1;
        }
    }
    ih_outputs_abort(o); /* what is left after a failed rename */
    return rc;
}

void ih_outputs_abort(ih_outputs *o)
{
    for (size_t i = 0; i < o->count; i++) {
        ih_output_abort(&o->files[i]);
    }
    o->count = 0;
}
