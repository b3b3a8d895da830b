/*
 * Batch runs across the ranks of an MPI job (mpirun -n N imghist ...), in a
 * build with MPI (meson -Dmpi=enabled). Rank 0 lists the files and shares the
 * list; each rank processes its shard (scale.h) with its own GPU or the CPU;
 * counts are summed into rank 0 with MPI_Reduce; the per-image records come
 * to rank 0 in the order of a single run, and rank 0 alone writes the CSV,
 * JSON Lines and total. Without MPI in the build, or in a process that no MPI
 * launcher started, ih_mpi says one rank and every call here is trivial.
 *
 * Only the thread that called ih_mpi_start calls MPI (MPI_THREAD_FUNNELED).
 */
#ifndef IMGHIST_CLI_MPI_RUN_H
#define IMGHIST_CLI_MPI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "walk.h"

typedef struct ih_mpi_world {
    int active;                /* MPI started: this process is one rank of a job */
    int rank, size;            /* in MPI_COMM_WORLD; 0 and 1 when not active */
    int local_rank, local_size; /* among the ranks on this host */
} ih_mpi_world;

extern ih_mpi_world ih_mpi;

/* Starts MPI when this build has it and an MPI launcher (mpirun, mpiexec,
 * srun with PMI/PMIx) started the process. Returns 0, or -1 after saying why. */
int ih_mpi_start(int *argc, char ***argv);
/* MPI_Finalize, when started. */
void ih_mpi_stop(void);
/* Whether this build has MPI (for messages). */
int ih_mpi_built(void);

/* The list rank 0 made (rc its result: 0, or -1 for a usage error it has
 * said) to every rank; returns rank 0's rc everywhere. Not active: rc. */
int ih_mpi_share_list(ih_file_list *files, int rc);
/* The largest of every rank's v, on every rank. */
int ih_mpi_max(int v);
/* v[0..n) summed over the ranks into rank 0's v (MPI_Reduce, 64 bits). */
int ih_mpi_sum_to_root(uint64_t *v, size_t n);

/*
 * Records of fixed size, one per file a rank processed, kept in a temporary
 * file until rank 0 asks for them: rank 0 then gets every file's record in
 * the order of the whole list (owner[e]: the rank of file e) and hands each
 * to emit; the other ranks send theirs. Bounded memory on every rank.
 */
typedef struct ih_gather ih_gather;
typedef void (*ih_gather_emit)(void *user, size_t e, const void *record);
/* NULL after saying why. */
ih_gather *ih_gather_new(size_t record_size);
/* 0, or -1 (a write to the temporary file failed). */
int ih_gather_put(ih_gather *g, const void *record);
/* Every rank calls it, with every rank's records complete. Returns 0, or -1
 * on rank 0 when a rank could not read its records back (said there). */
int ih_gather_run(ih_gather *g, const unsigned *owner, size_t count, ih_gather_emit emit,
                  void *user);
void ih_gather_free(ih_gather *g);

#endif
