/*
 * nvJPEG's hardware decoder with NVJPEG_OUTPUT_YUV, then ih_ycc_gray_launch,
 * against imghist's CPU bgr2gray decode, byte for byte, on the made JPEGs of
 * ycc_cases.c and every *.jpg in the folders given. Per file: the layout,
 * whether nvJPEG's planes equal libjpeg's inverse DCT output (samples that
 * differ), and whether the gray planes are identical (pixels that differ).
 * A device check, run by hand (bench/results/jpeg-color-gpu.md): nvJPEG is
 * opened with dlopen as src/cli/gpu_decode.c opens it. Exit 0 when every
 * file nvJPEG decodes is identical, 1 otherwise, 77 without GPU or nvJPEG.
 * usage: ycc_gray_nvjpeg [DIR...]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvjpeg.h>

#include "ycc_cases.h"
#include "ycc_gray.h"

typedef struct api {
    __typeof__(nvjpegCreateEx) *create_ex;
    __typeof__(nvjpegJpegStateCreate) *state_create;
    __typeof__(nvjpegJpegStreamCreate) *stream_create;
    __typeof__(nvjpegJpegStreamParseHeader) *parse_header;
    __typeof__(nvjpegDecodeBatchedSupported) *batched_supported;
    __typeof__(nvjpegDecodeBatchedInitialize) *batched_init;
    __typeof__(nvjpegDecodeBatched) *batched;
    __typeof__(nvjpegGetImageInfo) *image_info;
} api;

static int load(api *a)
{
    const char *names[] = {"libnvjpeg.so.13",
#ifdef IH_NVJPEG_LIB
                           IH_NVJPEG_LIB,
#endif
                           NULL};
    void *so = NULL;
    for (int k = 0; names[k] != NULL && so == NULL; k++) {
        so = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    }
    if (so == NULL) {
        printf("libnvjpeg.so.13 cannot be loaded (%s)\n", dlerror());
        return -1;
    }
#define SYM(field, name)                                                                           \
    if ((*(void **)&a->field = dlsym(so, #name)) == NULL) {                                        \
        printf("libnvjpeg.so.13 lacks %s\n", #name);                                               \
        return -1;                                                                                 \
    }
    SYM(create_ex, nvjpegCreateEx)
    SYM(state_create, nvjpegJpegStateCreate)
    SYM(stream_create, nvjpegJpegStreamCreate)
    SYM(parse_header, nvjpegJpegStreamParseHeader)
    SYM(batched_supported, nvjpegDecodeBatchedSupported)
    SYM(batched_init, nvjpegDecodeBatchedInitialize)
    SYM(batched, nvjpegDecodeBatched)
    SYM(image_info, nvjpegGetImageInfo)
#undef SYM
    return 0;
}

/* Samples of nvJPEG's plane c that differ from libjpeg's, over the plane's
 * image part. */
static size_t plane_diff(const uint8_t *dev, size_t pitch, const ycc_raw *r, int c, uint32_t w,
                         uint32_t h)
{
    uint8_t *host = malloc(pitch * h);
    if (host == NULL || cudaMemcpy(host, dev, pitch * h, cudaMemcpyDeviceToHost) != cudaSuccess) {
        free(host);
        return (size_t)-1;
    }
    size_t bad = 0;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            bad += host[(size_t)y * pitch + x] != r->planes[c][(size_t)y * r->pitches[c] + x];
        }
    }
    free(host);
    return bad;
}

int main(int argc, char **argv)
{
    api a;
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0 || load(&a) != 0) {
        printf("no GPU or no nvJPEG\n");
        return 77;
    }
    nvjpegHandle_t handle;
    nvjpegJpegState_t state;
    nvjpegJpegStream_t parsed;
    cudaStream_t stream;
    if (a.create_ex(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &handle) != NVJPEG_STATUS_SUCCESS ||
        a.state_create(handle, &state) != NVJPEG_STATUS_SUCCESS ||
        a.stream_create(handle, &parsed) != NVJPEG_STATUS_SUCCESS ||
        cudaStreamCreate(&stream) != cudaSuccess ||
        a.batched_init(handle, state, 1, 1, NVJPEG_OUTPUT_YUV) != NVJPEG_STATUS_SUCCESS) {
        printf("no nvJPEG hardware decoder\n");
        return 77;
    }
    ycc_case *cases;
    size_t n;
    if (ycc_inputs(argv + 1, argc - 1, &cases, &n) != 0) {
        return 1;
    }
    size_t same = 0, differ = 0, hw_declined = 0, skipped = 0;
    printf("| file | layout | size | nvJPEG planes (w x h, pitch) | planes vs libjpeg | gray |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++) {
        const ycc_case *k = &cases[i];
        ycc_raw r;
        if (ycc_raw_read(k->data, k->size, &r) != 0) {
            printf("| %s | - | - | - | - | skipped: libjpeg's raw output refuses it |\n", k->name);
            skipped++;
            continue;
        }
        if ((r.components == 3 && !r.ycc) || !ih_jpeg_color_exact(r.components, r.h, r.v)) {
            printf("| %s | %s | %ux%u | - | - | skipped: not exact by ih_jpeg_color_exact |\n",
                   k->name, r.layout, r.width, r.height);
            skipped++;
            ycc_raw_free(&r);
            continue;
        }
        int supported = 1, ncomp = 0;
        nvjpegChromaSubsampling_t sub;
        int widths[NVJPEG_MAX_COMPONENT] = {0}, heights[NVJPEG_MAX_COMPONENT] = {0};
        nvjpegStatus_t s = a.image_info(handle, k->data, k->size, &ncomp, &sub, widths, heights);
        if (s == NVJPEG_STATUS_SUCCESS) {
            s = a.parse_header(handle, k->data, k->size, parsed);
        }
        if (s == NVJPEG_STATUS_SUCCESS) {
            s = a.batched_supported(handle, parsed, &supported);
        }
        if (s != NVJPEG_STATUS_SUCCESS || supported != 0) {
            printf("| %s | %s | %ux%u | - | - | hardware declines it (status %d, supported %d, "
                   "subsampling %d) |\n",
                   k->name, r.layout, r.width, r.height, (int)s, supported, (int)sub);
            hw_declined++;
            ycc_raw_free(&r);
            continue;
        }
        /* Each plane as nvJPEG reports it, rows padded to 256 bytes. */
        nvjpegImage_t out;
        memset(&out, 0, sizeof out);
        char planes_txt[160] = "";
        char *p = planes_txt;
        for (int c = 0; c < ncomp && c < 3; c++) {
            out.pitch[c] = ((size_t)widths[c] + 255) / 256 * 256;
            cudaMalloc((void **)&out.channel[c], out.pitch[c] * (size_t)heights[c] + 1);
            cudaMemset(out.channel[c], 0, out.pitch[c] * (size_t)heights[c] + 1);
            p += sprintf(p, "%s%dx%d/%zu", c ? ", " : "", widths[c], heights[c], out.pitch[c]);
        }
        const unsigned char *datas[1] = {k->data};
        const size_t sizes[1] = {k->size};
        s = a.batched(handle, state, datas, sizes, &out, stream);
        cudaError_t ce = cudaStreamSynchronize(stream);
        char planes_cmp[96] = "";
        p = planes_cmp;
        for (int c = 0; c < ncomp && c < 3 && s == NVJPEG_STATUS_SUCCESS; c++) {
            p += sprintf(p, "%s%zu", c ? "/" : "",
                         plane_diff(out.channel[c], out.pitch[c], &r, c, (uint32_t)widths[c],
                                    (uint32_t)heights[c]));
        }
        uint8_t *gray_dev = NULL;
        cudaMalloc((void **)&gray_dev, (size_t)r.width * r.height);
        ih_ycc_image im;
        memset(&im, 0, sizeof im);
        im.components = r.components;
        im.width = r.width;
        im.height = r.height;
        im.gray = gray_dev;
        im.gray_pitch = r.width;
        for (int c = 0; c < r.components; c++) {
            im.planes[c] = out.channel[c];
            im.pitches[c] = out.pitch[c];
            im.h[c] = (uint8_t)r.h[c];
            im.v[c] = (uint8_t)r.v[c];
        }
        uint32_t w = 0, h = 0;
        uint8_t *want = ycc_cpu_gray(k->data, k->size, &w, &h);
        uint8_t *got = malloc((size_t)r.width * r.height);
        int launched = s == NVJPEG_STATUS_SUCCESS && ce == cudaSuccess &&
                       ih_ycc_gray_launch(&im, 1, stream) == 0 &&
                       cudaStreamSynchronize(stream) == cudaSuccess;
        if (!launched || want == NULL || got == NULL || w != r.width || h != r.height ||
            cudaMemcpy(got, gray_dev, (size_t)w * h, cudaMemcpyDeviceToHost) != cudaSuccess) {
            printf("| %s | %s | %ux%u | %s | - | FAILED (nvJPEG status %d, CUDA %s) |\n", k->name,
                   r.layout, r.width, r.height, planes_txt, (int)s, cudaGetErrorString(ce));
            differ++;
        } else {
            size_t bad = 0;
            for (size_t q = 0; q < (size_t)w * h; q++) {
                bad += got[q] != want[q];
            }
            printf("| %s | %s | %ux%u | %s | %s | %s %zu of %zu |\n", k->name, r.layout, w, h,
                   planes_txt, planes_cmp, bad == 0 ? "identical" : "DIFFER", bad,
                   (size_t)w * h);
            bad == 0 ? same++ : differ++;
        }
        free(want);
        free(got);
        cudaFree(gray_dev);
        for (int c = 0; c < 3; c++) {
            cudaFree(out.channel[c]);
        }
        ycc_raw_free(&r);
    }
    printf("\n%zu identical, %zu differ, %zu declined by the hardware, %zu skipped\n", same, differ,
           hw_declined, skipped);
    ycc_inputs_free(cases, n);
    return differ == 0 && same > 0 ? 0 : 1;
}
