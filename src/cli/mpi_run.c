#define _POSIX_C_SOURCE 200809L
#include "mpi_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#ifndef IH_HAVE_MPI
#define IH_HAVE_MPI 0
#endif
#if IH_HAVE_MPI
#include <mpi.h>
#endif

ih_mpi_world ih_mpi = {0, 0, 1, 0, 1};

int ih_mpi_built(void)
{
    return IH_HAVE_MPI;
}

#if IH_HAVE_MPI
/* What MPI launchers put in their processes' environment: Open MPI's mpirun,
 * PMIx (Open MPI 4+, Slurm's srun --mpi=pmix), PMI-1/2 (MPICH, srun). */
static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0') {
            return 1;
        }
    }
    return 0;
}
#endif

int ih_mpi_start(int *argc, char ***argv)
{
#if IH_HAVE_MPI
    if (!launched_by_mpi()) {
        return 0; /* a plain run: no MPI_Init, no singleton start-up */
    }
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        ih_say("MPI_Init_thread failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &ih_mpi.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ih_mpi.size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &ih_mpi.local_rank);
        MPI_Comm_size(node, &ih_mpi.local_size);
        MPI_Comm_free(&node);
    }
    ih_mpi.active = 1;
    (void)provided; /* FUNNELED or more: only the main thread calls MPI */
#else
    (void)argc;
    (void)argv;
#endif
    return 0;
}

void ih_mpi_stop(void)
{
#if IH_HAVE_MPI
    if (ih_mpi.active) {
        MPI_Finalize();
        ih_mpi.active = 0;
    }
#endif
}

int ih_mpi_max(int v)
{
#if IH_HAVE_MPI
    if (ih_mpi.active) {
        int out = v;
        MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        return out;
    }
#endif
    return v;
}

int ih_mpi_sum_to_root(uint64_t *v, size_t n)
{
#if IH_HAVE_MPI
    if (ih_mpi.active && n > 0) {
        uint64_t *sum = ih_mpi.rank == 0 ? malloc(n * sizeof *sum) : NULL;
        if (ih_mpi.rank == 0 && sum == NULL) {
            MPI_Abort(MPI_COMM_WORLD, 1); /* the others would wait forever */
        }
        MPI_Reduce(v, sum, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (ih_mpi.rank == 0) {
            memcpy(v, sum, n * sizeof *sum);
            free(sum);
        }
    }
#else
    (void)v;
    (void)n;
#endif
    return 0;
}

/* ---- the file list ---- */

#if IH_HAVE_MPI
/* Packed: per file, size (8 bytes), rel (8), path, NUL, out, NUL ("" for none). */
static int pack(const ih_file_list *files, char **out, uint64_t *len)
{
    uint64_t n = 0;
    for (size_t i = 0; i < files->count; i++) {
        const ih_file *f = &files->files[i];
        n += 16 + strlen(f->path) + 1 + (f->out ? strlen(f->out) : 0) + 1;
    }
    char *buf = malloc(n ? n : 1), *p = buf;
    if (buf == NULL) {
        return -1;
    }
    for (size_t i = 0; i < files->count; i++) {
        const ih_file *f = &files->files[i];
        const uint64_t rel = f->rel;
        memcpy(p, &f->size, 8);
        memcpy(p + 8, &rel, 8);
        p += 16;
        const size_t lp = strlen(f->path) + 1, lo = f->out ? strlen(f->out) + 1 : 1;
        memcpy(p, f->path, lp);
        p += lp;
        memcpy(p, f->out ? f->out : "", lo);
        p += lo;
    }
    *out = buf;
    *len = n;
    return 0;
}

static int unpack(const char *buf, uint64_t len, uint64_t count, ih_file_list *files)
{
    files->files = calloc(count ? count : 1, sizeof *files->files);
    if (files->files == NULL) {
        return -1;
    }
    files->cap = count;
    const char *p = buf, *end = buf + len;
    for (uint64_t i = 0; i < count; i++) {
        ih_file *f = &files->files[i];
        uint64_t rel = 0;
        if (end - p < 16) return -1;
        memcpy(&f->size, p, 8);
        memcpy(&rel, p + 8, 8);
        f->rel = (size_t)rel;
        p += 16;
        const size_t lp = strnlen(p, (size_t)(end - p));
        if (p + lp >= end) return -1;
        f->path = strdup(p);
        p += lp + 1;
        const size_t lo = strnlen(p, (size_t)(end - p));
        if (p + lo >= end) return -1;
        f->out = lo > 0 ? strdup(p) : NULL;
        p += lo + 1;
        files->count++;
        if (f->path == NULL || (lo > 0 && f->out == NULL)) return -1;
    }
    return 0;
}

/* MPI counts are ints: big buffers go in pieces. */
static void bcast_bytes(char *buf, uint64_t len)
{
    const uint64_t piece = 1u << 30;
    for (uint64_t at = 0; at < len; at += piece) {
        const uint64_t n = len - at < piece ? len - at : piece;
        MPI_Bcast(buf + at, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}
#endif

int ih_mpi_share_list(ih_file_list *files, int rc)
{
#if IH_HAVE_MPI
    if (!ih_mpi.active) {
        return rc;
    }
    /* head: rank 0's rc, count, skipped, bytes of the packed list, unreadable */
    uint64_t head[5] = {rc != 0, 0, 0, 0, 0};
    char *buf = NULL;
    if (ih_mpi.rank == 0 && rc == 0) {
        if (pack(files, &buf, &head[3]) != 0) {
            ih_say("out of memory sharing the file list");
            head[0] = 1;
        } else {
            head[1] = files->count;
            head[2] = files->skipped;
            head[4] = files->unreadable;
        }
    }
    MPI_Bcast(head, 5, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (head[0] != 0) {
        free(buf);
        return -1;
    }
    if (ih_mpi.rank != 0) {
        memset(files, 0, sizeof *files);
        buf = malloc(head[3] ? head[3] : 1);
        if (buf == NULL) {
            ih_say("out of memory receiving the file list");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    bcast_bytes(buf, head[3]);
    int bad = 0;
    if (ih_mpi.rank != 0) {
        bad = unpack(buf, head[3], head[1], files) != 0;
        files->skipped = (size_t)head[2];
        files->unreadable = (size_t)head[4];
        if (bad) {
            ih_say("out of memory receiving the file list");
        }
    }
    free(buf);
    return ih_mpi_max(bad) ? -1 : 0;
#else
    (void)files;
    return rc;
#endif
}

/* ---- records ---- */

struct ih_gather {
    size_t size;
    FILE *tmp;
    size_t count;
};

ih_gather *ih_gather_new(size_t record_size)
{
    ih_gather *g = calloc(1, sizeof *g);
    if (g == NULL) {
        ih_say("out of memory");
        return NULL;
    }
    g->size = record_size;
    g->tmp = tmpfile();
    if (g->tmp == NULL) {
        ih_say("cannot create a temporary file for the run's records: %s", strerror(errno));
        free(g);
        return NULL;
    }
    return g;
}

int ih_gather_put(ih_gather *g, const void *record)
{
    if (fwrite(record, g->size, 1, g->tmp) != 1) {
        return -1;
    }
    g->count++;
    return 0;
}

void ih_gather_free(ih_gather *g)
{
    if (g != NULL) {
        fclose(g->tmp);
        free(g);
    }
}

/* Records per message: about 256 KB. */
static size_t chunk_records(size_t size)
{
    const size_t n = (256u << 10) / size;
    return n > 0 ? n : 1;
}

int ih_gather_run(ih_gather *g, const unsigned *owner, size_t count, ih_gather_emit emit,
                  void *user)
{
    int bad = fflush(g->tmp) != 0 || fseek(g->tmp, 0, SEEK_SET) != 0;
    const size_t per = chunk_records(g->size);
    if (!ih_mpi.active || ih_mpi.size == 1) {
        char *rec = malloc(g->size);
        for (size_t e = 0; e < count && !bad; e++) {
            bad = rec == NULL || fread(rec, g->size, 1, g->tmp) != 1;
            if (!bad) emit(user, e, rec);
        }
        free(rec);
        if (bad) ih_say("cannot read the run's records back: %s", strerror(errno ? errno : EIO));
        return bad ? -1 : 0;
    }
#if IH_HAVE_MPI
    /* A message: a status (8 bytes: 0 good), then up to `per` records. */
    const size_t msg_bytes = 8 + per * g->size;
    if (ih_mpi.rank != 0) {
        char *msg = malloc(msg_bytes);
        size_t left = g->count;
        while (left > 0) {
            const size_t n = left < per ? left : per;
            uint64_t status = msg == NULL || bad || fread(msg + 8, g->size, n, g->tmp) != n;
            bad = bad || status;
            char one[8];
            memcpy(msg != NULL ? msg : one, &status, 8);
            MPI_Send(msg != NULL ? msg : one, msg != NULL ? (int)(8 + n * g->size) : 8, MPI_BYTE,
                     0, 7, MPI_COMM_WORLD);
            left -= n;
        }
        free(msg);
        return 0;
    }
    /* Rank 0: one buffer per rank, refilled when it runs dry. */
    const int size = ih_mpi.size;
    char **buf = calloc((size_t)size, sizeof *buf);
    size_t *have = calloc((size_t)size, sizeof *have), *next = calloc((size_t)size, sizeof *next);
    size_t *left = calloc((size_t)size, sizeof *left);
    char *own = malloc(g->size);
    if (buf == NULL || have == NULL || next == NULL || left == NULL || own == NULL) {
        ih_say("out of memory gathering the records");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t e = 0; e < count; e++) left[owner[e]]++;
    int failed_rank = -1;
    for (size_t e = 0; e < count; e++) {
        const unsigned r = owner[e];
        const char *rec;
        if (r == 0) {
            if (!bad && fread(own, g->size, 1, g->tmp) != 1) bad = 1;
            rec = own;
        } else {
            if (next[r] == have[r]) {
                const size_t n = left[r] < per ? left[r] : per;
                if (buf[r] == NULL && (buf[r] = malloc(msg_bytes)) == NULL) {
                    ih_say("out of memory gathering the records");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                MPI_Status st;
                int got = 0;
                MPI_Recv(buf[r], (int)msg_bytes, MPI_BYTE, (int)r, 7, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &got);
                uint64_t status = 1;
                memcpy(&status, buf[r], 8);
                if (status != 0 || (size_t)got != 8 + n * g->size) {
                    failed_rank = (int)r;
                }
                have[r] = n;
                next[r] = 0;
                left[r] -= n;
            }
            rec = buf[r] + 8 + next[r]++ * g->size;
        }
        if (!bad && failed_rank < 0) emit(user, e, rec);
    }
    if (bad) ih_say("cannot read the run's records back: %s", strerror(errno ? errno : EIO));
    if (failed_rank >= 0) ih_say("rank %d could not read its records back", failed_rank);
    for (int r = 0; r < size; r++) free(buf[r]);
    free(buf);
    free(have);
    free(next);
    free(left);
    free(own);
    return bad || failed_rank >= 0 ? -1 : 0;
#else
    (void)owner; /* without MPI only the one-process path above runs */
    (void)per;
    return -1;
#endif
}
