/*
 * Scaling a batch run out: the GPUs a process's workers use (--gpus), and
 * the deterministic split of a file list into shards balanced by file size,
 * which --shard K/N and the MPI ranks (mpi_run.c) share.
 */
#ifndef IMGHIST_CLI_SCALE_H
#define IMGHIST_CLI_SCALE_H

#include <stddef.h>

#include "walk.h"

/* Most entries of --gpus (a GPU may be named more than once). */
#define IH_MAX_GPU_SLOTS 64
/* Most shards of --shard K/N. */
#define IH_MAX_SHARDS 1000000u

typedef struct ih_scale_opts {
    unsigned shard_k, shard_n;     /* --shard K/N: 1 <= K <= N; N == 0 when not given */
    int gpus[IH_MAX_GPU_SLOTS];    /* --gpus LIST: device indices, in order (after
                                      ih_narrow_gpus: in the narrowed numbering) */
    unsigned n_gpus;               /* 0 when not given */
    int shown[IH_MAX_GPU_SLOTS];   /* narrowed device j is the user's GPU shown[j] */
    unsigned n_shown;              /* 0: not narrowed (devices are the user's numbers) */
} ih_scale_opts;

/* The values of --shard K/N and --gpus LIST into s; 0, or -1 with a usage
 * error in err. */
int ih_parse_shard(const char *v, ih_scale_opts *s, char *err, size_t errlen);
int ih_parse_gpus(const char *v, ih_scale_opts *s, char *err, size_t errlen);

/*
 * Owner (0 .. n-1) of every file of the sorted list: files are taken from the
 * largest to the smallest (equal sizes in list order), each given to the
 * shard with the fewest bytes so far (the lowest number among equals). The
 * same list gives the same owners everywhere. Returns 0, or -1 when out of
 * memory. owner has room for files->count entries.
 */
int ih_shard_owners(const ih_file_list *files, unsigned n, unsigned *owner);

/* mine: the files of `all` whose owner is k, in list order, sharing their
 * strings with `all` (free only mine->files). Returns 0 or -1 (memory). */
int ih_shard_pick(const ih_file_list *all, const unsigned *owner, unsigned k,
                  ih_file_list *mine);

/*
 * The GPUs that this process's workers take in turn (worker i: slots[i % n]).
 * --gpus LIST gives them; without it, every GPU there is. A process that is
 * one of local_size on its host (MPI ranks) keeps the one at local_rank
 * modulo their number. *n == 0 where there are none (the CPU backend, no GPU):
 * contexts are then made without a device. Returns 0, or -1 with a usage
 * error in err (a GPU index that does not exist, --gpus with --backend cpu).
 */
int ih_device_slots(const ih_scale_opts *s, int cpu_backend, int local_rank, int local_size,
                    int *slots, unsigned *n, char *err, size_t errlen);

/*
 * The CUDA_VISIBLE_DEVICES value that shows CUDA only the GPUs `want` (the
 * user's indices: positions in `visible`, the variable's current value, or
 * plain device numbers when it is NULL), each once, in order of first
 * appearance; map[i] is want[i]'s index among them. CUDA sets up every GPU
 * it is shown at its first call, so a process that uses one GPU of several
 * starts sooner when it is shown only that one.
 * Returns 0; 1 when nothing should change (`visible` lists no GPU); -1 with
 * a usage error in err (an index past the list's end).
 */
int ih_visible_devices(const char *visible, const int *want, unsigned n, char *out,
                       size_t outlen, int *map, char *err, size_t errlen);

/*
 * Before the process's first CUDA call: show CUDA only the GPUs this run
 * uses, where it uses fewer than all. A run of one image uses --gpus' first
 * GPU or GPU 0; a batch run the GPUs of --gpus (all of them without it,
 * which leaves the variable alone); each of several MPI ranks on a host
 * (local_size > 1) its one GPU, --gpus' entry local_rank modulo their number
 * or, without --gpus, GPU local_rank modulo gpus_on_host. gpus_on_host comes
 * from ih_gpus_before_cuda: -1 leaves everything alone, 0 (unknown) leaves a
 * rank without --gpus alone. The CPU backend changes nothing. s->gpus are
 * renumbered to match, s->shown keeps the user's numbers for messages.
 * Returns 0, or -1 with a usage error in err.
 */
int ih_narrow_gpus(ih_scale_opts *s, int batch, int cpu_backend, int local_rank, int local_size,
                   int gpus_on_host, char *err, size_t errlen);

/*
 * -1 when CUDA's driver library is in the process already (a CUDA-aware MPI
 * may have set CUDA up in MPI_Init, and then CUDA_VISIBLE_DEVICES is read
 * already); otherwise how many GPUs CUDA will see: the entries of
 * CUDA_VISIBLE_DEVICES when it is set, else the /dev/nvidiaN device files
 * this process may open (0 where there are none).
 */
int ih_gpus_before_cuda(void);

/* The user's number of device `dev` (as given to the library). */
int ih_gpu_shown(const ih_scale_opts *s, int dev);

/*
 * The files a batch run works on. `all`: every image of the inputs (listed by
 * rank 0 under MPI and shared); `part`: --shard's share of it, or all of it;
 * `mine`: this rank's share of part (all of part without MPI), with `owner`
 * giving each file of part its rank. part and mine share strings with all.
 */
typedef struct ih_file_plan {
    ih_file_list all, part, mine;
    unsigned *owner;
} ih_file_plan;

/* Lists the inputs and splits the list. Returns 0, or -1 for a usage error
 * (said on rank 0), on every rank alike. */
int ih_plan_files(const char *const *inputs, size_t n_inputs, int recursive, const char *out_dir,
                  const ih_scale_opts *s, ih_skip_fn skip, ih_file_plan *plan);
void ih_plan_free(ih_file_plan *plan);

#endif
