#define _POSIX_C_SOURCE 200809L
#include "scale.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "imghist.h"
#include "mpi_run.h"

/* A whole number 0..max at *p, which moves past it. */
static int number(const char **p, unsigned long max, unsigned long *out)
{
    if (**p < '0' || **p > '9') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    const unsigned long v = strtoul(*p, &end, 10);
    if (errno != 0 || v > max) {
        return -1;
    }
    *p = end;
    *out = v;
    return 0;
}

int ih_parse_shard(const char *v, ih_scale_opts *s, char *err, size_t errlen)
{
    const char *p = v;
    unsigned long k = 0, n = 0;
    if (number(&p, IH_MAX_SHARDS, &k) != 0 || *p++ != '/' ||
        number(&p, IH_MAX_SHARDS, &n) != 0 || *p != '\0' || k < 1 || k > n) {
        snprintf(err, errlen,
                 "--shard needs K/N with 1 <= K <= N <= %u (the K-th of N shards), not '%s'",
                 IH_MAX_SHARDS, v);
        return -1;
    }
    s->shard_k = (unsigned)k;
    s->shard_n = (unsigned)n;
    return 0;
}

int ih_parse_gpus(const char *v, ih_scale_opts *s, char *err, size_t errlen)
{
    const char *p = v;
    s->n_gpus = 0;
    for (;;) {
        unsigned long d = 0;
        if (s->n_gpus == IH_MAX_GPU_SLOTS) {
            snprintf(err, errlen, "--gpus: at most %d entries", IH_MAX_GPU_SLOTS);
            return -1;
        }
        if (number(&p, 4095, &d) != 0) {
            snprintf(err, errlen,
                     "--gpus needs GPU indices separated by commas (e.g. 0,1), not '%s'", v);
            return -1;
        }
        s->gpus[s->n_gpus++] = (int)d;
        if (*p == '\0') {
            return 0;
        }
        if (*p++ != ',') {
            snprintf(err, errlen,
                     "--gpus needs GPU indices separated by commas (e.g. 0,1), not '%s'", v);
            return -1;
        }
    }
}

/* ---- shards ---- */

static const ih_file_list *sort_list; /* qsort has no argument for it */

/* Larger files first; equal sizes in list order. */
static int by_size_desc(const void *a, const void *b)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const uint64_t sx = sort_list->files[x].size, sy = sort_list->files[y].size;
    if (sx != sy) return sx > sy ? -1 : 1;
    return x < y ? -1 : (x > y);
}

typedef struct bin {
    uint64_t bytes;
    unsigned shard;
} bin;

static int lighter(const bin *a, const bin *b)
{
    return a->bytes != b->bytes ? a->bytes < b->bytes : a->shard < b->shard;
}

/* Restores the heap order below slot i (the root moved down). */
static void sift_down(bin *h, size_t n, size_t i)
{
    for (;;) {
        size_t m = i;
        const size_t l = 2 * i + 1, r = l + 1;
        if (l < n && lighter(&h[l], &h[m])) m = l;
        if (r < n && lighter(&h[r], &h[m])) m = r;
        if (m == i) return;
        const bin t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int ih_shard_owners(const ih_file_list *files, unsigned n, unsigned *owner)
{
    const size_t count = files->count;
    if (n <= 1) {
        for (size_t i = 0; i < count; i++) owner[i] = 0;
        return 0;
    }
    size_t *order = malloc((count ? count : 1) * sizeof *order);
    bin *heap = malloc(n * sizeof *heap);
    if (order == NULL || heap == NULL) {
        free(order);
        free(heap);
        return -1;
    }
    for (size_t i = 0; i < count; i++) order[i] = i;
    sort_list = files;
    qsort(order, count, sizeof *order, by_size_desc);
    sort_list = NULL;
    /* Shards 0..n-1 with no bytes, in order, already form a heap. */
    for (unsigned s = 0; s < n; s++) {
        heap[s].bytes = 0;
        heap[s].shard = s;
    }
    for (size_t k = 0; k < count; k++) {
        const size_t i = order[k];
        owner[i] = heap[0].shard;
        /* +1: an empty file still weighs, so empty files spread out too. */
        heap[0].bytes += files->files[i].size + 1;
        sift_down(heap, n, 0);
    }
    free(order);
    free(heap);
    return 0;
}

int ih_shard_pick(const ih_file_list *all, const unsigned *owner, unsigned k, ih_file_list *mine)
{
    memset(mine, 0, sizeof *mine);
    size_t n = 0;
    for (size_t i = 0; i < all->count; i++) n += owner[i] == k;
    mine->files = malloc((n ? n : 1) * sizeof *mine->files);
    if (mine->files == NULL) {
        return -1;
    }
    for (size_t i = 0; i < all->count; i++) {
        if (owner[i] == k) mine->files[mine->count++] = all->files[i];
    }
    mine->cap = n;
    mine->skipped = all->skipped;
    mine->unreadable = all->unreadable;
    return 0;
}

/* ---- GPUs ---- */

int ih_device_slots(const ih_scale_opts *s, int cpu_backend, int local_rank, int local_size,
                    int *slots, unsigned *n, char *err, size_t errlen)
{
    *n = 0;
    if (cpu_backend) {
        if (s->n_gpus > 0) {
            snprintf(err, errlen, "--gpus and --backend cpu contradict each other");
            return -1;
        }
        return 0;
    }
    int count = 0;
    imghist_device_count(&count);
    if (s->n_gpus > 0) {
        for (unsigned i = 0; i < s->n_gpus; i++) {
            if (count > 0 && s->gpus[i] >= count && s->n_shown > 0) {
                /* CUDA stops its list at an entry that names no GPU. */
                snprintf(err, errlen, "--gpus: there is no GPU %d", ih_gpu_shown(s, s->gpus[i]));
                return -1;
            }
            if (count > 0 && s->gpus[i] >= count) {
                snprintf(err, errlen, "--gpus: there is no GPU %d (%d GPU%s visible)",
                         s->gpus[i], count, count == 1 ? " is" : "s are");
                return -1;
            }
        }
        if (count == 0) {
            /* No GPU at all: auto runs on the CPU, cuda says why at its context. */
            slots[(*n)++] = s->gpus[0];
            return 0;
        }
        if (local_size > 1) {
            slots[(*n)++] = s->gpus[(unsigned)local_rank % s->n_gpus];
        } else {
            for (unsigned i = 0; i < s->n_gpus; i++) slots[(*n)++] = s->gpus[i];
        }
        return 0;
    }
    if (count <= 0) {
        return 0;
    }
    if (local_size > 1) {
        slots[(*n)++] = local_rank % count;
        return 0;
    }
    for (int d = 0; d < count && d < IH_MAX_GPU_SLOTS; d++) slots[(*n)++] = d;
    return 0;
}

/* ---- which GPUs CUDA is shown ---- */

/* The entries of a CUDA_VISIBLE_DEVICES value (indices, UUIDs or MIG names),
 * blanks trimmed, up to the first empty one (where CUDA stops reading). */
static unsigned visible_entries(const char *visible, const char *entry[IH_MAX_GPU_SLOTS],
                                size_t len[IH_MAX_GPU_SLOTS])
{
    unsigned entries = 0;
    for (const char *p = visible; p != NULL && *p != '\0' && entries < IH_MAX_GPU_SLOTS;) {
        const char *end = strchr(p, ',');
        const char *stop = end != NULL ? end : p + strlen(p);
        while (p < stop && (*p == ' ' || *p == '\t')) p++;
        const char *q = stop;
        while (q > p && (q[-1] == ' ' || q[-1] == '\t')) q--;
        if (q == p) {
            break;
        }
        entry[entries] = p;
        len[entries++] = (size_t)(q - p);
        p = end != NULL ? end + 1 : stop;
    }
    return entries;
}

int ih_visible_devices(const char *visible, const int *want, unsigned n, char *out,
                       size_t outlen, int *map, char *err, size_t errlen)
{
    const char *entry[IH_MAX_GPU_SLOTS];
    size_t len[IH_MAX_GPU_SLOTS];
    const unsigned entries = visible_entries(visible, entry, len);
    if (visible != NULL && entries == 0) {
        return 1;
    }
    int uniq[IH_MAX_GPU_SLOTS];
    unsigned n_uniq = 0;
    size_t at = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const int k = want[i];
        if (k < 0 || (visible != NULL && (unsigned)k >= entries)) {
            snprintf(err, errlen, "--gpus: there is no GPU %d (CUDA_VISIBLE_DEVICES lists %u)", k,
                     entries);
            return -1;
        }
        unsigned j = 0;
        while (j < n_uniq && uniq[j] != k) j++;
        map[i] = (int)j;
        if (j < n_uniq) {
            continue;
        }
        uniq[n_uniq++] = k;
        const int w = visible != NULL
                          ? snprintf(out + at, outlen - at, "%s%.*s", j ? "," : "", (int)len[k],
                                     entry[k])
                          : snprintf(out + at, outlen - at, "%s%d", j ? "," : "", k);
        if (w < 0 || (size_t)w >= outlen - at) {
            snprintf(err, errlen, "--gpus: the list of GPUs is too long");
            return -1;
        }
        at += (size_t)w;
    }
    return n_uniq > 0 ? 0 : 1;
}

int ih_gpus_before_cuda(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps != NULL) {
        char line[4096];
        int loaded = 0;
        while (!loaded && fgets(line, sizeof line, maps) != NULL) {
            loaded = strstr(line, "/libcuda.so") != NULL;
        }
        fclose(maps);
        if (loaded) {
            return -1;
        }
    }
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible != NULL) {
        const char *entry[IH_MAX_GPU_SLOTS];
        size_t len[IH_MAX_GPU_SLOTS];
        return (int)visible_entries(visible, entry, len);
    }
    int n = 0;
    for (int k = 0; k < 256; k++) {
        char dev[32];
        snprintf(dev, sizeof dev, "/dev/nvidia%d", k);
        n += access(dev, R_OK | W_OK) == 0;
    }
    return n;
}

int ih_narrow_gpus(ih_scale_opts *s, int batch, int cpu_backend, int local_rank, int local_size,
                   int gpus_on_host, char *err, size_t errlen)
{
    s->n_shown = 0;
    if (cpu_backend || gpus_on_host < 0) {
        return 0;
    }
    const int sharing = local_size > 1; /* MPI ranks on this host: one GPU each */
    int one = 0;
    if (sharing) {
        if (s->n_gpus > 0) {
            one = s->gpus[(unsigned)local_rank % s->n_gpus];
        } else if (gpus_on_host > 0) {
            one = local_rank % gpus_on_host;
        } else {
            return 0; /* how many there are is CUDA's to say */
        }
    } else if (batch && s->n_gpus == 0) {
        return 0; /* every GPU */
    } else if (!batch && s->n_gpus > 0) {
        one = s->gpus[0];
    }
    const int *want = batch && !sharing ? s->gpus : &one;
    const unsigned n = batch && !sharing ? s->n_gpus : 1;
    char value[4096];
    int map[IH_MAX_GPU_SLOTS];
    const int rc = ih_visible_devices(getenv("CUDA_VISIBLE_DEVICES"), want, n, value,
                                      sizeof value, map, err, errlen);
    if (rc != 0) {
        return rc < 0 ? -1 : 0;
    }
    if (setenv("CUDA_VISIBLE_DEVICES", value, 1) != 0) {
        return 0; /* CUDA then sets up every GPU it sees */
    }
    for (unsigned i = 0; i < n; i++) {
        s->shown[map[i]] = want[i];
        s->n_shown = (unsigned)map[i] + 1 > s->n_shown ? (unsigned)map[i] + 1 : s->n_shown;
    }
    if (n == 1) {
        /* One GPU: every --gpus entry this process could pick is it. */
        for (unsigned i = 0; i < s->n_gpus; i++) s->gpus[i] = 0;
    } else {
        for (unsigned i = 0; i < s->n_gpus; i++) s->gpus[i] = map[i];
    }
    return 0;
}

int ih_gpu_shown(const ih_scale_opts *s, int dev)
{
    return dev >= 0 && (unsigned)dev < s->n_shown ? s->shown[dev] : dev;
}

/* ---- the plan ---- */

int ih_plan_files(const char *const *inputs, size_t n_inputs, int recursive, const char *out_dir,
                  const ih_scale_opts *s, ih_skip_fn skip, ih_file_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    char err[1024] = "";
    int rc = 0;
    for (size_t i = 0; i < n_inputs && ih_mpi.active; i++) {
        if (strcmp(inputs[i], "-") == 0) {
            if (ih_mpi.rank == 0) {
                ih_say("- (standard input) cannot be shared among MPI ranks (see imghist --help)");
            }
            return -1;
        }
    }
    if (ih_mpi.rank == 0) {
        rc = ih_collect_files(inputs, n_inputs, recursive, out_dir, skip, &plan->all, err,
                              sizeof err);
        if (rc != 0) {
            ih_say("%s (see imghist --help)", err);
        }
    }
    rc = ih_mpi_share_list(&plan->all, rc);
    if (rc != 0) {
        return -1;
    }
    const size_t n = plan->all.count;
    unsigned *first = malloc((n ? n : 1) * sizeof *first);
    plan->owner = malloc((n ? n : 1) * sizeof *plan->owner);
    int bad = first == NULL || plan->owner == NULL;
    if (!bad) {
        const unsigned shards = s->shard_n ? s->shard_n : 1;
        bad = ih_shard_owners(&plan->all, shards, first) != 0 ||
              ih_shard_pick(&plan->all, first, s->shard_n ? s->shard_k - 1 : 0, &plan->part) != 0;
    }
    if (!bad) {
        bad = ih_shard_owners(&plan->part, (unsigned)ih_mpi.size, plan->owner) != 0 ||
              ih_shard_pick(&plan->part, plan->owner, (unsigned)ih_mpi.rank, &plan->mine) != 0;
    }
    free(first);
    if (bad) {
        ih_say("out of memory splitting the file list");
    }
    return ih_mpi_max(bad) ? -1 : 0;
}

void ih_plan_free(ih_file_plan *plan)
{
    free(plan->mine.files);
    free(plan->part.files);
    free(plan->owner);
    ih_free_file_list(&plan->all);
    memset(plan, 0, sizeof *plan);
}
