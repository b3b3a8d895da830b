/*
 * NPP through dlopen. The declarations mirror nppdefs.h / nppi_statistics_functions.h
 * of CUDA 12.x-13.x (NppStreamContext has carried nStreamFlags since CUDA 11.0;
 * the buffer-size query takes a size_t * since CUDA 12.3). A library that still
 * writes an int through that pointer leaves the upper half of our zeroed
 * size_t alone, so the result is right either way on little-endian machines.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "bench_npp.h"

typedef struct {
    int width;
    int height;
} npp_size;

typedef struct {
    cudaStream_t hStream;
    int nCudaDeviceId;
    int nMultiProcessorCount;
    int nMaxThreadsPerMultiProcessor;
    int nMaxThreadsPerBlock;
    size_t nSharedMemPerBlock;
    int nCudaDevAttrComputeCapabilityMajor;
    int nCudaDevAttrComputeCapabilityMinor;
    unsigned int nStreamFlags;
    int nReserved0;
} npp_stream_ctx;

typedef struct {
    int major;
    int minor;
    int build;
} npp_lib_version;

typedef int (*hist_even_fn)(const uint8_t *src, int step, npp_size roi, int *hist, int levels,
                            int lower, int upper, uint8_t *buffer, npp_stream_ctx ctx);
typedef int (*buf_size_ctx_fn)(npp_size roi, int levels, size_t *bytes, npp_stream_ctx ctx);
typedef int (*buf_size_fn)(npp_size roi, int levels, size_t *bytes);
typedef const npp_lib_version *(*version_fn)(void);

static struct {
    int loaded;
    hist_even_fn hist_even;
    buf_size_ctx_fn buf_size_ctx; /* CUDA >= 12.4 */
    buf_size_fn buf_size;         /* CUDA <= 12.x only */
    npp_stream_ctx ctx;           /* device fields filled once */
    cudaStream_t flags_stream;    /* the stream ctx.nStreamFlags belongs to */
    char note[512];
} npp;

/* dlsym into a function pointer without the object/function pointer cast. */
static void resolve(void *lib, const char *name, void *fn_ptr)
{
    void *sym = dlsym(lib, name);
    memcpy(fn_ptr, &sym, sizeof sym);
}

/* Open lib<name>.so.13 or lib<name>.so from the loader's path or the usual
 * CUDA folders; *path gets what worked. */
static void *open_npp_lib(const char *name, char *path, size_t path_size)
{
    static const char *const dirs[] = {"", "/usr/local/cuda/lib64/",
                                       "/usr/local/cuda/targets/x86_64-linux/lib/"};
    static const char *const suffixes[] = {".so.13", ".so"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        for (size_t s = 0; s < sizeof suffixes / sizeof suffixes[0]; s++) {
            snprintf(path, path_size, "%slib%s%s", dirs[d], name, suffixes[s]);
            /* RTLD_GLOBAL: libnppist's own dependency on libnppc is then met by
             * the copy already loaded, even when found outside the loader's path. */
            void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (lib != NULL) {
                return lib;
            }
        }
    }
    return NULL;
}

static int device_attr(enum cudaDeviceAttr attr, int device)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    return v;
}

int bench_npp_load(const char **note)
{
    *note = npp.note;
    if (npp.loaded) {
        return 1;
    }
    char core_path[256], ist_path[256];
    void *core = open_npp_lib("nppc", core_path, sizeof core_path);
    void *ist = core != NULL ? open_npp_lib("nppist", ist_path, sizeof ist_path) : NULL;
    if (ist == NULL) {
        const char *why = dlerror();
        snprintf(npp.note, sizeof npp.note, "NPP not available (%s)",
                 why != NULL ? why : "libnppc/libnppist not found");
        return 0;
    }
    resolve(ist, "nppiHistogramEven_8u_C1R_Ctx", &npp.hist_even);
    resolve(ist, "nppiHistogramEvenGetBufferSize_8u_C1R_Ctx", &npp.buf_size_ctx);
    resolve(ist, "nppiHistogramEvenGetBufferSize_8u_C1R", &npp.buf_size);
    if (npp.hist_even == NULL || (npp.buf_size_ctx == NULL && npp.buf_size == NULL)) {
        snprintf(npp.note, sizeof npp.note,
                 "NPP not usable: %s lacks nppiHistogramEven_8u_C1R_Ctx or its buffer-size query",
                 ist_path);
        return 0;
    }
    version_fn get_version = NULL;
    resolve(core, "nppGetLibVersion", &get_version);
    const npp_lib_version *v = get_version != NULL ? get_version() : NULL;

    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    npp.ctx.nCudaDeviceId = dev;
    npp.ctx.nMultiProcessorCount = device_attr(cudaDevAttrMultiProcessorCount, dev);
    npp.ctx.nMaxThreadsPerMultiProcessor = device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    npp.ctx.nMaxThreadsPerBlock = device_attr(cudaDevAttrMaxThreadsPerBlock, dev);
    npp.ctx.nSharedMemPerBlock = (size_t)device_attr(cudaDevAttrMaxSharedMemoryPerBlock, dev);
    npp.ctx.nCudaDevAttrComputeCapabilityMajor = device_attr(cudaDevAttrComputeCapabilityMajor, dev);
    npp.ctx.nCudaDevAttrComputeCapabilityMinor = device_attr(cudaDevAttrComputeCapabilityMinor, dev);
    npp.flags_stream = (cudaStream_t)(intptr_t)-1; /* no stream yet */

    if (v != NULL) {
        snprintf(npp.note, sizeof npp.note, "NPP %d.%d.%d (%s)", v->major, v->minor, v->build,
                 ist_path);
    } else {
        snprintf(npp.note, sizeof npp.note, "NPP, version unknown (%s)", ist_path);
    }
    npp.loaded = 1;
    return 1;
}

/* The context for a call on `stream`. cudaStreamGetFlags is asked once per
 * stream, not per call, to keep it out of the latency figures. */
static npp_stream_ctx ctx_for(cudaStream_t stream)
{
    if (stream != npp.flags_stream) {
        unsigned int flags = 0;
        if (cudaStreamGetFlags(stream, &flags) != cudaSuccess) {
            (void)cudaGetLastError();
            flags = 0;
        }
        npp.ctx.nStreamFlags = flags;
        npp.flags_stream = stream;
    }
    npp_stream_ctx c = npp.ctx;
    c.hStream = stream;
    return c;
}

int bench_npp_buffer_size(int width, int height, size_t *bytes, cudaStream_t stream)
{
    const npp_size roi = {width, height};
    *bytes = 0;
    if (npp.buf_size_ctx != NULL) {
        return npp.buf_size_ctx(roi, 257, bytes, ctx_for(stream));
    }
    return npp.buf_size(roi, 257, bytes);
}

int bench_npp_histogram(const uint8_t *src, int step, int width, int height, int *hist,
                        uint8_t *buffer, cudaStream_t stream)
{
    const npp_size roi = {width, height};
    return npp.hist_even(src, step, roi, hist, 257, 0, 256, buffer, ctx_for(stream));
}
