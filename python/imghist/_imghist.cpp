// imghist's native binding (nanobind): the C library's calls, contexts,
// constants and errors for the Python layer of _api.py, and the two calls
// whose host time is a launch (the default histogram and equalization of a
// 2-D GPU image) done here whole. Every library call releases the GIL.
//
// Views cross from Python as tuples, read here into imghist_view:
//   (data, dtype, mem, width, height, pitch, channels, count, image_stride, mask)
// mask: None or a view tuple of its own. Specs: None or (bins, lo, hi, flags).
// Counts: (data, len, mem).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "imghist.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ImghistError and its subclasses by status, given by the Python layer.
PyObject *g_errors[IMGHIST_STATUS_COUNT];

[[noreturn]] void raise_status(imghist_status st, const char *msg)
{
    PyObject *cls = (st >= 0 && st < IMGHIST_STATUS_COUNT && g_errors[st] != nullptr)
                        ? g_errors[st]
                        : PyExc_RuntimeError;
    const char *name = imghist_strerror(st);
    PyObject *e = PyObject_CallFunction(cls, "sis", (msg && *msg) ? msg : name, (int)st, name);
    if (e != nullptr) {
        PyErr_SetObject(cls, e);
        Py_DECREF(e);
    }
    throw nb::python_error();
}

[[noreturn]] void type_error(const char *msg)
{
    PyErr_SetString(PyExc_TypeError, msg);
    throw nb::python_error();
}

uint64_t as_u64(PyObject *o)
{
    const unsigned long long v = PyLong_AsUnsignedLongLongMask(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        throw nb::python_error();
    }
    return v;
}

int64_t as_i64(PyObject *o)
{
    const long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        throw nb::python_error();
    }
    return v;
}

// One view tuple into v; its mask (a tuple too) into *mask, linked from v.
void read_view(nb::handle t, imghist_view *v, imghist_view *mask)
{
    PyObject *o = t.ptr();
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 10) {
        type_error("imghist: internal: a view is a tuple of 10");
    }
    v->data = (void *)(uintptr_t)as_u64(PyTuple_GET_ITEM(o, 0));
    v->dtype = (imghist_dtype)as_i64(PyTuple_GET_ITEM(o, 1));
    v->mem = (imghist_mem)as_i64(PyTuple_GET_ITEM(o, 2));
    v->width = (uint32_t)as_u64(PyTuple_GET_ITEM(o, 3));
    v->height = (uint32_t)as_u64(PyTuple_GET_ITEM(o, 4));
    v->pitch = (size_t)as_u64(PyTuple_GET_ITEM(o, 5));
    v->channels = (uint32_t)as_u64(PyTuple_GET_ITEM(o, 6));
    v->count = (size_t)as_u64(PyTuple_GET_ITEM(o, 7));
    v->image_stride = (ptrdiff_t)as_i64(PyTuple_GET_ITEM(o, 8));
    PyObject *m = PyTuple_GET_ITEM(o, 9);
    v->mask = nullptr;
    if (m != Py_None) {
        if (mask == nullptr) {
            type_error("imghist: internal: a mask's view has no mask");
        }
        read_view(m, mask, nullptr);
        v->mask = mask;
    }
}

struct Spec {
    imghist_histspec s{};
    const imghist_histspec *p = nullptr;
    explicit Spec(nb::handle t)
    {
        if (t.is_none()) {
            return;
        }
        PyObject *o = t.ptr();
        if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 4) {
            type_error("imghist: internal: a spec is (bins, lo, hi, flags)");
        }
        s.bins = (uint32_t)as_u64(PyTuple_GET_ITEM(o, 0));
        s.lo = PyFloat_AsDouble(PyTuple_GET_ITEM(o, 1));
        s.hi = PyFloat_AsDouble(PyTuple_GET_ITEM(o, 2));
        s.flags = (uint32_t)as_u64(PyTuple_GET_ITEM(o, 3));
        if (PyErr_Occurred()) {
            throw nb::python_error();
        }
        p = &s;
    }
};

imghist_counts read_counts(nb::handle t)
{
    PyObject *o = t.ptr();
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 3) {
        type_error("imghist: internal: counts are (data, len, mem)");
    }
    imghist_counts c;
    c.data = (uint64_t *)(uintptr_t)as_u64(PyTuple_GET_ITEM(o, 0));
    c.len = (size_t)as_u64(PyTuple_GET_ITEM(o, 1));
    c.mem = (imghist_mem)as_i64(PyTuple_GET_ITEM(o, 2));
    return c;
}

// Histograms to compare: (data, type, mem, bins, count, stride).
imghist_hists read_hists(nb::handle t)
{
    PyObject *o = t.ptr();
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 6) {
        type_error("imghist: internal: histograms are (data, type, mem, bins, count, stride)");
    }
    imghist_hists h;
    h.data = (const void *)(uintptr_t)as_u64(PyTuple_GET_ITEM(o, 0));
    h.type = (imghist_hist_type)as_i64(PyTuple_GET_ITEM(o, 1));
    h.mem = (imghist_mem)as_i64(PyTuple_GET_ITEM(o, 2));
    h.bins = (size_t)as_u64(PyTuple_GET_ITEM(o, 3));
    h.count = (size_t)as_u64(PyTuple_GET_ITEM(o, 4));
    h.stride = (size_t)as_u64(PyTuple_GET_ITEM(o, 5));
    return h;
}

// A list of view tuples; masks live beside the views, one per view.
struct Views {
    std::vector<imghist_view> v, m;
    explicit Views(nb::handle seq)
    {
        PyObject *fast = PySequence_Fast(seq.ptr(), "imghist: internal: views are a sequence");
        if (fast == nullptr) {
            throw nb::python_error();
        }
        nb::object guard = nb::steal(fast);
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        v.resize((size_t)n);
        m.resize((size_t)n);
        for (Py_ssize_t i = 0; i < n; i++) {
            read_view(PySequence_Fast_GET_ITEM(fast, i), &v[(size_t)i], &m[(size_t)i]);
        }
    }
};

// File system names (bytes) as C strings, for the calls' lifetime.
struct Names {
    std::vector<std::string> names;
    std::vector<const char *> ptrs;
    explicit Names(nb::list list)
    {
        for (nb::handle h : list) {
            names.emplace_back(nb::cast<nb::bytes>(h).c_str(), nb::len(h));
        }
        for (const std::string &n : names) {
            ptrs.push_back(n.c_str());
        }
    }
};

// N-d axes: (space, channels, specs, edges), specs tuples as Spec reads
// them, edges 0 or the address of spec.bins + 1 host doubles.
imghist_ndaxes read_axes(nb::handle t)
{
    PyObject *o = t.ptr();
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 4) {
        type_error("imghist: internal: axes are (space, channels, specs, edges)");
    }
    imghist_ndaxes ax{};
    ax.space = (imghist_space)as_i64(PyTuple_GET_ITEM(o, 0));
    nb::handle ch(PyTuple_GET_ITEM(o, 1)), sp(PyTuple_GET_ITEM(o, 2)), ed(PyTuple_GET_ITEM(o, 3));
    const size_t n = nb::len(ch);
    if (n < 1 || n > IMGHIST_MAX_DIMS || nb::len(sp) != n || nb::len(ed) != n) {
        type_error("imghist: internal: 1 to 4 axes, as many channels, specs and edges");
    }
    ax.dims = (uint32_t)n;
    for (size_t d = 0; d < n; d++) {
        ax.channel[d] = (uint32_t)as_u64(nb::handle(ch[d]).ptr());
        const Spec s(sp[d]);
        if (s.p != nullptr) {
            ax.spec[d] = s.s;
        }
        ax.edges[d] = (const double *)(uintptr_t)as_u64(nb::handle(ed[d]).ptr());
    }
    return ax;
}

class Context {
public:
    imghist_ctx *ctx = nullptr;
    int backend = 0, device = -1;
    uintptr_t stream = 0;
    bool stream_set = false;

    Context(int backend_, int device_)
    {
        const imghist_status st = imghist_create((imghist_backend)backend_, device_, &ctx);
        if (ctx == nullptr) {
            throw std::bad_alloc();
        }
        if (st != IMGHIST_OK) {
            const std::string msg = imghist_last_error(ctx);
            imghist_destroy(ctx);
            ctx = nullptr;
            raise_status(st, msg.c_str());
        }
        backend = (int)imghist_get_backend(ctx);
        imghist_get_device(ctx, &device);
    }
    ~Context()
    {
        if (ctx != nullptr) {
            nb::gil_scoped_release r;
            imghist_destroy(ctx);
        }
    }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    void check(imghist_status st) const
    {
        if (st != IMGHIST_OK) {
            raise_status(st, imghist_last_error(ctx));
        }
    }
    void set_stream(uintptr_t s)
    {
        if (stream_set && s == stream) {
            return;
        }
        check(imghist_set_stream(ctx, (imghist_stream)s));
        stream = s;
        stream_set = true;
    }
    void set_param(int p, int64_t v) { check(imghist_set_param(ctx, (imghist_param)p, v)); }
    void histogram(nb::handle src, nb::handle spec, nb::handle counts)
    {
        imghist_view v, m;
        read_view(src, &v, &m);
        const Spec s(spec);
        const imghist_counts c = read_counts(counts);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_histogram(ctx, &v, s.p, &c);
        }
        check(st);
    }
    void histogram_list(nb::handle views, nb::handle spec, nb::handle counts)
    {
        const Views vs(views);
        const Spec s(spec);
        const imghist_counts c = read_counts(counts);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_histogram_list(ctx, vs.v.data(), vs.v.size(), s.p, &c);
        }
        check(st);
    }
    // (lo, hi), or None when the image has no finite sample.
    nb::object range(nb::handle src)
    {
        imghist_view v, m;
        read_view(src, &v, &m);
        double lo = 0, hi = 0;
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_range(ctx, &v, &lo, &hi);
        }
        if (st == IMGHIST_E_INVALID_ARG && v.data != nullptr) {
            return nb::none();
        }
        check(st);
        return nb::make_tuple(lo, hi);
    }
    void histogram2d(nb::handle a, nb::handle b, nb::handle sa, nb::handle sb,
                     nb::handle counts)
    {
        imghist_view va, ma, vb, mb;
        read_view(a, &va, &ma);
        read_view(b, &vb, &mb);
        const Spec s1(sa), s2(sb);
        const imghist_counts c = read_counts(counts);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_histogram2d(ctx, &va, &vb, s1.p, s2.p, &c);
        }
        check(st);
    }
    void histogramdd(nb::handle src, nb::handle axes, nb::handle counts)
    {
        imghist_view v, m;
        read_view(src, &v, &m);
        const imghist_ndaxes ax = read_axes(axes);
        const imghist_counts c = read_counts(counts);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_histogramdd(ctx, &v, &ax, &c);
        }
        check(st);
    }
    void cvt_color(nb::handle src, nb::handle dst, int space)
    {
        imghist_view v, d;
        read_view(src, &v, nullptr);
        read_view(dst, &d, nullptr);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_cvt_color(ctx, &v, &d, (imghist_space)space);
        }
        check(st);
    }
    void backproject(nb::handle src, nb::handle axes, uintptr_t hist, double scale,
                     nb::handle dst)
    {
        imghist_view v, d;
        read_view(src, &v, nullptr);
        read_view(dst, &d, nullptr);
        const imghist_ndaxes ax = read_axes(axes);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_backproject(ctx, &v, &ax, (const float *)hist, scale, &d);
        }
        check(st);
    }
    void mutual_information(nb::handle counts, uint32_t ba, uint32_t bb, uintptr_t result,
                            int mem)
    {
        const imghist_counts c = read_counts(counts);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_mutual_information(ctx, &c, ba, bb, (double *)result, (imghist_mem)mem);
        }
        check(st);
    }
    void equalize(nb::handle src, nb::handle dst, int method, nb::handle hists)
    {
        imghist_view v, m, d, dm;
        read_view(src, &v, &m);
        read_view(dst, &d, &dm);
        imghist_counts h{};
        const bool with_h = !hists.is_none();
        if (with_h) {
            h = read_counts(hists);
        }
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_equalize(ctx, &v, &d, (imghist_method)method, with_h ? &h : nullptr);
        }
        check(st);
    }
    void equalize_list(nb::handle srcs, nb::handle dsts, int method)
    {
        const Views s(srcs), d(dsts);
        if (s.v.size() != d.v.size()) {
            type_error("imghist: internal: as many destinations as sources");
        }
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_equalize_list(ctx, s.v.data(), d.v.data(), s.v.size(),
                                       (imghist_method)method, nullptr);
        }
        check(st);
    }
    void clahe(nb::handle src, nb::handle dst, double clip, uint32_t tx, uint32_t ty)
    {
        imghist_view v, m, d, dm;
        read_view(src, &v, &m);
        read_view(dst, &d, &dm);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_clahe(ctx, &v, &d, clip, tx, ty);
        }
        check(st);
    }
    void clahe_list(nb::handle srcs, nb::handle dsts, double clip, uint32_t tx, uint32_t ty)
    {
        const Views s(srcs), d(dsts);
        if (s.v.size() != d.v.size()) {
            type_error("imghist: internal: as many destinations as sources");
        }
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_clahe_list(ctx, s.v.data(), d.v.data(), s.v.size(), clip, tx, ty);
        }
        check(st);
    }
    // The image of a file (path: bytes) or of bytes in memory, as a NumPy
    // array over the library's own buffer (rows packed), and its flags.
    nb::tuple load(nb::handle path, nb::handle data, const char *name)
    {
        imghist_image *img = nullptr;
        imghist_status st;
        if (!path.is_none()) {
            const char *p = PyBytes_AsString(path.ptr());
            if (p == nullptr) {
                throw nb::python_error();
            }
            nb::gil_scoped_release r;
            st = imghist_load_file(ctx, p, &img);
        } else {
            Py_buffer buf;
            if (PyObject_GetBuffer(data.ptr(), &buf, PyBUF_SIMPLE) != 0) {
                throw nb::python_error();
            }
            {
                nb::gil_scoped_release r;
                st = imghist_load_memory(ctx, buf.len ? buf.buf : nullptr, (size_t)buf.len, name,
                                         &img);
            }
            PyBuffer_Release(&buf);
        }
        check(st);
        nb::capsule owner(img, [](void *p) noexcept { imghist_image_free((imghist_image *)p); });
        const imghist_view &v = img->view;
        const size_t ch = v.channels ? v.channels : 1;
        const size_t shape[3] = {v.height, v.width, ch};
        const size_t item = v.dtype == IMGHIST_U8 ? 1 : v.dtype == IMGHIST_U16 ? 2 : 4;
        const int64_t strides[3] = {(int64_t)(v.pitch / item), (int64_t)ch, 1};
        nb::dlpack::dtype dt = v.dtype == IMGHIST_U8    ? nb::dtype<uint8_t>()
                               : v.dtype == IMGHIST_U16 ? nb::dtype<uint16_t>()
                                                        : nb::dtype<float>();
        nb::ndarray<nb::numpy> a(v.data, 3, shape, owner, strides, dt);
        return nb::make_tuple(a.cast(), (unsigned)img->flags);
    }
    // The image files of inputs (file system names, bytes) as the CLI takes
    // them: (paths, [(path, message)] of entries not read, files skipped).
    nb::tuple list_files(nb::list inputs, bool recursive)
    {
        const Names names(inputs);
        const std::vector<const char *> &ptrs = names.ptrs;
        imghist_file_list *list = nullptr;
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_list_files(ctx, ptrs.data(), ptrs.size(), recursive ? 1 : 0, &list);
        }
        check(st);
        nb::list paths, bad;
        for (size_t i = 0; i < list->count; i++) {
            paths.append(nb::bytes(list->paths[i]));
        }
        for (size_t i = 0; i < list->n_unreadable; i++) {
            bad.append(nb::make_tuple(nb::bytes(list->unreadable[i].path),
                                      nb::str(list->unreadable[i].message)));
        }
        const size_t skipped = list->skipped;
        imghist_file_list_free(list);
        return nb::make_tuple(paths, bad, skipped);
    }
    size_t files_counts_len(nb::handle spec) const
    {
        const Spec s(spec);
        return imghist_files_counts_len(ctx, s.p);
    }
    // Histograms of the files (bytes) into the host counters at out, on
    // threads decoding threads; progress(done, total) on this thread. A
    // list of (status, message or None) per file, and the call's status.
    nb::tuple histogram_files(nb::list files, unsigned threads, nb::handle spec,
                              uintptr_t out, size_t len, nb::handle progress)
    {
        const Names names(files);
        const std::vector<const char *> &ptrs = names.ptrs;
        const Spec s(spec);
        const imghist_counts c = {(uint64_t *)out, len, IMGHIST_MEM_HOST};
        std::vector<imghist_file_result> res(ptrs.size());
        struct Progress {
            PyObject *fn;
            bool failed = false;
        } pr{progress.is_none() ? nullptr : progress.ptr()};
        // Runs on this thread with the GIL released around it: takes it to
        // report, and to let Ctrl-C (KeyboardInterrupt) cancel the call.
        auto cb = [](void *user, size_t done, size_t total) -> int {
            Progress *p = (Progress *)user;
            nb::gil_scoped_acquire g;
            if (p->failed) {
                return 1;
            }
            if (PyErr_CheckSignals() != 0) {
                p->failed = true;
                return 1;
            }
            if (p->fn != nullptr) {
                PyObject *r = PyObject_CallFunction(p->fn, "nn", (Py_ssize_t)done,
                                                    (Py_ssize_t)total);
                if (r == nullptr) {
                    p->failed = true;
                    return 1;
                }
                Py_DECREF(r);
            }
            return 0;
        };
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_histogram_files(ctx, ptrs.data(), ptrs.size(), threads, s.p, &c,
                                         res.data(), cb, &pr);
        }
        if (pr.failed) {
            for (imghist_file_result &f : res) {
                imghist_free(f.message);
            }
            throw nb::python_error(); // the callback's exception, or KeyboardInterrupt
        }
        bool any_failed = false;
        for (const imghist_file_result &f : res) {
            any_failed = any_failed || f.status != IMGHIST_OK;
        }
        if (st != IMGHIST_OK && !any_failed) {
            check(st); // refused before any work: no result was filled
        }
        nb::list out_list;
        for (imghist_file_result &f : res) {
            out_list.append(nb::make_tuple((int)f.status,
                                           f.message ? nb::object(nb::str(f.message))
                                                     : nb::none()));
            imghist_free(f.message);
        }
        return nb::make_tuple(out_list, (int)st);
    }
    void compare_many(nb::handle query, nb::handle set, int method, uintptr_t out, int mem)
    {
        const imghist_hists q = read_hists(query), h = read_hists(set);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_compare_many(ctx, &q, &h, (imghist_compare_method)method, (double *)out,
                                      (imghist_mem)mem);
        }
        check(st);
    }
    void compare_all(nb::handle set, int method, uintptr_t out, int mem)
    {
        const imghist_hists h = read_hists(set);
        imghist_status st;
        {
            nb::gil_scoped_release r;
            st = imghist_compare_all(ctx, &h, (imghist_compare_method)method, (double *)out,
                                     (imghist_mem)mem);
        }
        check(st);
    }
    std::string last_error() const { return imghist_last_error(ctx); }
};

// ---- histogram statistics (host counts) ----

using HostCounts = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

void check_stat(imghist_status st, const char *what)
{
    if (st != IMGHIST_OK) {
        raise_status(st, st == IMGHIST_E_INVALID_ARG ? what : "");
    }
}

double entropy(HostCounts h)
{
    double bits = 0;
    check_stat(imghist_entropy(h.data(), h.shape(0), &bits), "imghist: no count in the histogram");
    return bits;
}

size_t percentile(HostCounts h, double p)
{
    size_t bin = 0;
    check_stat(imghist_percentile(h.data(), h.shape(0), p, &bin),
               "imghist: no count in the histogram");
    return bin;
}

double compare(nb::handle h1, nb::handle h2, int method)
{
    const imghist_hists a = read_hists(h1), b = read_hists(h2);
    double r = 0;
    check_stat(imghist_compare(&a, &b, (imghist_compare_method)method, &r),
               "imghist: histograms of different bins, or an unknown metric");
    return r;
}

int compare_method(const std::string &name)
{
    imghist_compare_method m;
    if (imghist_compare_method_from_name(name.c_str(), &m) != IMGHIST_OK) {
        return -1;
    }
    return (int)m;
}

size_t otsu(HostCounts h)
{
    size_t bin = 0;
    check_stat(imghist_otsu(h.data(), h.shape(0), &bin), "imghist: no count in the histogram");
    return bin;
}

void match_lut(HostCounts h, HostCounts r,
               nb::ndarray<uint8_t, nb::shape<256>, nb::c_contig, nb::device::cpu> lut)
{
    if (h.shape(0) != 256 || r.shape(0) != 256) {
        raise_status(IMGHIST_E_INVALID_ARG, "imghist: match_lut wants two histograms of 256 counts");
    }
    check_stat(imghist_match_lut(h.data(), r.data(), lut.data()),
               "imghist: no count in a histogram");
}

int device_count()
{
    int n = 0;
    return imghist_device_count(&n) == IMGHIST_OK ? n : 0;
}

// ---- the launch-cost calls: default histogram and equalization of a 2-D GPU
// image of torch or CuPy, everything read here; None sends the call to the
// Python layer.

struct Fast {
    PyObject *torch_tensor = nullptr;    // torch.Tensor
    PyObject *torch_u8 = nullptr, *torch_u16 = nullptr, *torch_i64 = nullptr;
    PyObject *torch_stream = nullptr;    // torch._C._cuda_getCurrentRawStream
    PyObject *torch_empty_like = nullptr, *cupy_empty_like = nullptr;
    PyObject *cupy_ndarray = nullptr;    // cupy.ndarray
    PyObject *cupy_stream = nullptr;     // cupy.cuda.get_current_stream
    PyObject *cupy_device = nullptr;     // cupy.cuda.runtime.getDevice
    PyObject *cupy_empty = nullptr;      // cupy.empty
    PyObject *np_u8 = nullptr, *np_u16 = nullptr, *np_i64 = nullptr;
    PyObject *context_of = nullptr;      // _lib.cuda_context(device) -> Context
    PyObject *s_is_cuda, *s_dtype, *s_shape, *s_stride, *s_data_ptr, *s_get_device,
        *s_new_empty, *s_strides, *s_data, *s_ptr, *s_device, *s_id, *s_is_contiguous, *s_numel,
        *s_dim;
    PyObject *kw_dtype = nullptr;        // ("dtype",)
} F;

thread_local Context *t_cuda[64];

Context *cuda_context(int dev)
{
    if (dev < 0 || dev >= 64) {
        return nullptr;
    }
    Context *c = t_cuda[dev];
    if (c == nullptr) {
        nb::object o = nb::borrow(F.context_of)(dev);
        c = nb::cast<Context *>(o); // kept alive by the thread's table in _lib
        t_cuda[dev] = c;
    }
    return c;
}

nb::object attr(PyObject *o, PyObject *name)
{
    PyObject *r = PyObject_GetAttr(o, name);
    if (r == nullptr) {
        throw nb::python_error();
    }
    return nb::steal(r);
}

nb::object call0(PyObject *o, PyObject *name)
{
    PyObject *r = PyObject_CallMethodNoArgs(o, name);
    if (r == nullptr) {
        throw nb::python_error();
    }
    return nb::steal(r);
}

// A 2-D uint8/uint16 GPU image with packed samples in rows: its view, its
// context on the array's current stream, and its kind (1 torch, 2 CuPy).
struct Plain {
    imghist_view v{};
    Context *ctx = nullptr;
    int kind = 0;
    int64_t device = -1;
    bool dense = false;
};

// x's dtype as the library's (u8 and u16: its library's objects for them).
bool sample_type(PyObject *x, PyObject *u8, PyObject *u16, Plain &p, size_t *item)
{
    nb::object dt = attr(x, F.s_dtype);
    if (dt.ptr() == u8) {
        p.v.dtype = IMGHIST_U8, *item = 1;
    } else if (u16 != nullptr && dt.ptr() == u16) {
        p.v.dtype = IMGHIST_U16, *item = 2;
    } else {
        return false;
    }
    return true;
}

// x's (H, W) when it has two dimensions.
bool shape2(PyObject *x, int64_t *H, int64_t *W)
{
    nb::object shape = attr(x, F.s_shape);
    if (!PyTuple_Check(shape.ptr()) || PyTuple_GET_SIZE(shape.ptr()) != 2) {
        return false;
    }
    *H = as_i64(PyTuple_GET_ITEM(shape.ptr(), 0));
    *W = as_i64(PyTuple_GET_ITEM(shape.ptr(), 1));
    return true;
}

bool plain(PyObject *x, Plain &p)
{
    PyTypeObject *t = Py_TYPE(x);
    int64_t H, W, s0, s1, dev;
    uintptr_t ptr, stream;
    size_t item = 1;
    if (F.torch_tensor != nullptr && (PyObject *)t == F.torch_tensor) {
        if (attr(x, F.s_is_cuda).ptr() != Py_True) {
            return false;
        }
        if (!sample_type(x, F.torch_u8, F.torch_u16, p, &item) || !shape2(x, &H, &W)) {
            return false;
        }
        nb::object st = call0(x, F.s_stride);
        s0 = as_i64(PyTuple_GET_ITEM(st.ptr(), 0));
        s1 = as_i64(PyTuple_GET_ITEM(st.ptr(), 1));
        ptr = (uintptr_t)as_u64(call0(x, F.s_data_ptr).ptr());
        dev = as_i64(call0(x, F.s_get_device).ptr());
        PyObject *d = PyLong_FromLongLong(dev);
        PyObject *s = PyObject_CallOneArg(F.torch_stream, d);
        Py_DECREF(d);
        if (s == nullptr) {
            throw nb::python_error();
        }
        stream = (uintptr_t)as_u64(s);
        Py_DECREF(s);
        p.kind = 1;
    } else if (F.cupy_ndarray != nullptr && (PyObject *)t == F.cupy_ndarray) {
        if (!sample_type(x, F.np_u8, F.np_u16, p, &item) || !shape2(x, &H, &W)) {
            return false;
        }
        dev = as_i64(attr(attr(x, F.s_device).ptr(), F.s_id).ptr());
        if (dev != as_i64(nb::borrow(F.cupy_device)().ptr())) {
            return false; // new arrays would land on the current device
        }
        nb::object st = attr(x, F.s_strides);
        s0 = as_i64(PyTuple_GET_ITEM(st.ptr(), 0)) / (int64_t)item;
        s1 = as_i64(PyTuple_GET_ITEM(st.ptr(), 1)) / (int64_t)item;
        ptr = (uintptr_t)as_u64(attr(attr(x, F.s_data).ptr(), F.s_ptr).ptr());
        stream = (uintptr_t)as_u64(attr(nb::borrow(F.cupy_stream)().ptr(), F.s_ptr).ptr());
        p.kind = 2;
    } else {
        return false;
    }
    if (H <= 0 || W <= 0 || H > 0xFFFFFFFFll || W > 0xFFFFFFFFll || (W > 1 && s1 != 1) ||
        (H > 1 && s0 < W)) {
        return false;
    }
    p.ctx = cuda_context((int)dev);
    if (p.ctx == nullptr) {
        return false;
    }
    p.ctx->set_stream(stream);
    p.device = dev;
    p.v.data = (void *)ptr;
    p.v.mem = IMGHIST_MEM_DEVICE;
    p.v.width = (uint32_t)W;
    p.v.height = (uint32_t)H;
    p.v.pitch = (size_t)(H > 1 ? s0 : W) * item;
    p.v.channels = 1;
    p.dense = H == 1 || s0 == W;
    return true;
}

uintptr_t pointer_of(int kind, PyObject *o)
{
    if (kind == 1) {
        return (uintptr_t)as_u64(call0(o, F.s_data_ptr).ptr());
    }
    return (uintptr_t)as_u64(attr(attr(o, F.s_data).ptr(), F.s_ptr).ptr());
}

// out: None, or int64 counts of the result's length, dense, of x's library
// and device (anything else: the Python layer, which says what is wrong).
bool counts_out(const Plain &p, PyObject *out, size_t n, uintptr_t *ptr)
{
    if (p.kind == 1) {
        if ((PyObject *)Py_TYPE(out) != F.torch_tensor ||
            attr(out, F.s_dtype).ptr() != F.torch_i64 ||
            call0(out, F.s_is_contiguous).ptr() != Py_True ||
            (size_t)as_i64(call0(out, F.s_numel).ptr()) != n ||
            as_i64(call0(out, F.s_dim).ptr()) != 1 ||
            as_i64(call0(out, F.s_get_device).ptr()) != p.device) {
            return false;
        }
    } else {
        if ((PyObject *)Py_TYPE(out) != F.cupy_ndarray || attr(out, F.s_dtype).ptr() != F.np_i64) {
            return false;
        }
        nb::object shape = attr(out, F.s_shape);
        nb::object st = attr(out, F.s_strides);
        if (PyTuple_GET_SIZE(shape.ptr()) != 1 ||
            (size_t)as_i64(PyTuple_GET_ITEM(shape.ptr(), 0)) != n ||
            as_i64(PyTuple_GET_ITEM(st.ptr(), 0)) != 8 ||
            as_i64(attr(attr(out, F.s_device).ptr(), F.s_id).ptr()) != p.device) {
            return false;
        }
    }
    *ptr = pointer_of(p.kind, out);
    return true;
}

nb::object fast_histogram(nb::handle x, nb::handle out)
{
    Plain p;
    if (!plain(x.ptr(), p)) {
        return nb::none();
    }
    const size_t n = p.v.dtype == IMGHIST_U8 ? 256 : 65536;
    nb::object res;
    uintptr_t ptr;
    if (!out.is_none()) {
        if (!counts_out(p, out.ptr(), n, &ptr)) {
            return nb::none();
        }
        res = nb::borrow(out);
    } else {
        PyObject *o;
        if (p.kind == 1) {
            PyObject *args[3] = {x.ptr(), nullptr, F.torch_i64};
            PyObject *len = PyLong_FromSize_t(n);
            args[1] = len;
            o = PyObject_VectorcallMethod(F.s_new_empty, args,
                                          2 | PY_VECTORCALL_ARGUMENTS_OFFSET, F.kw_dtype);
            Py_DECREF(len);
        } else {
            o = PyObject_CallFunction(F.cupy_empty, "nO", (Py_ssize_t)n, F.np_i64);
        }
        if (o == nullptr) {
            throw nb::python_error();
        }
        res = nb::steal(o);
        ptr = pointer_of(p.kind, o);
    }
    const imghist_counts c = {(uint64_t *)ptr, n, IMGHIST_MEM_DEVICE};
    imghist_status st;
    {
        nb::gil_scoped_release r;
        st = imghist_histogram(p.ctx->ctx, &p.v, nullptr, &c);
    }
    p.ctx->check(st);
    return res;
}

nb::object fast_equalize(nb::handle x, int method)
{
    Plain p;
    if (!plain(x.ptr(), p) || !p.dense) {
        return nb::none();
    }
    PyObject *out =
        PyObject_CallOneArg(p.kind == 1 ? F.torch_empty_like : F.cupy_empty_like, x.ptr());
    if (out == nullptr) {
        throw nb::python_error();
    }
    nb::object res = nb::steal(out);
    imghist_view d = p.v;
    d.data = (void *)pointer_of(p.kind, out);
    imghist_status st;
    {
        nb::gil_scoped_release r;
        st = imghist_equalize(p.ctx->ctx, &p.v, &d, (imghist_method)method, nullptr);
    }
    p.ctx->check(st);
    return res;
}

PyObject *keep(nb::handle h)
{
    if (h.is_none()) {
        return nullptr;
    }
    return nb::borrow(h).release().ptr();
}

} // namespace

NB_MODULE(_imghist, m)
{
    m.doc() = "imghist's native binding of libimghist (private: use the imghist package).";
    nb::set_leak_warnings(false);

    // The header's constants, from the header.
    m.attr("VERSION_STRING") = IMGHIST_VERSION_STRING;
    m.attr("WITH_CUDA") = IMGHIST_WITH_CUDA;
    m.attr("STATUS_COUNT") = IMGHIST_STATUS_COUNT;
#define C(name) m.attr(#name) = (int64_t)IMGHIST_##name
    C(OK); C(E_INVALID_ARG); C(E_NOMEM); C(E_IO); C(E_DECODE); C(E_ENCODE); C(E_LIMIT);
    C(E_NO_GPU); C(E_CUDA); C(E_UNSUPPORTED); C(E_BUFSIZE); C(E_FAULTED); C(E_CANCELED);
    C(BACKEND_AUTO); C(BACKEND_CPU); C(BACKEND_CUDA);
    C(U8); C(U16); C(F32); C(MEM_HOST); C(MEM_DEVICE);
    C(ACCUMULATE); C(OUTLIERS); C(CLOSED); C(FLOAT_EDGES); C(FLOAT_STEP_EDGES); C(MAX_BINS); C(MAX_CHANNELS);
    C(P_MAX_PIXELS); C(P_MAX_INPUT_BYTES); C(P_CPU_THREADS); C(P_STAGING_BYTES);
    C(P_LOAD_GRAY); C(P_PNG_LEVEL); C(P_LOAD_DEPTH); C(P_LOAD_CHANNELS); C(P_LOAD_TRUNCATED);
    C(P_DECODE); C(DECODE_AUTO); C(DECODE_CPU); C(DECODE_GPU);
    C(GRAY_BGR2GRAY); C(GRAY_LUMA); C(EQ_OPENCV); C(EQ_PIL);
    C(IMAGE_TRUNCATED); C(IMAGE_REDUCED);
    C(SPACE_NONE); C(SPACE_BGR2HSV); C(SPACE_RGB2HSV); C(SPACE_BGR2HSV_FULL);
    C(SPACE_RGB2HSV_FULL); C(SPACE_BGR2LAB); C(SPACE_RGB2LAB); C(MAX_DIMS); C(OPENCV_BINS);
#undef C

    m.def("version_string", []() { return std::string(imghist_version_string()); });
    m.def("strerror", [](int st) { return std::string(imghist_strerror((imghist_status)st)); });
    m.def("device_count", &device_count);
    m.def("param_bounds", [](int p) {
        int64_t lo = 0, hi = 0;
        const imghist_status st = imghist_param_bounds((imghist_param)p, &lo, &hi);
        if (st != IMGHIST_OK) {
            raise_status(st, "imghist: unknown parameter");
        }
        return nb::make_tuple(lo, hi);
    });
    m.def("set_errors", [](nb::sequence classes) {
        for (size_t i = 0; i < IMGHIST_STATUS_COUNT && i < nb::len(classes); i++) {
            Py_XDECREF(g_errors[i]);
            g_errors[i] = keep(classes[i]);
        }
    });
    m.def("set_torch", [](nb::handle tensor, nb::handle u8, nb::handle u16, nb::handle i64,
                          nb::handle stream, nb::handle empty_like) {
        F.torch_empty_like = keep(empty_like);
        F.torch_tensor = keep(tensor);
        F.torch_u8 = keep(u8);
        F.torch_u16 = keep(u16);
        F.torch_i64 = keep(i64);
        F.torch_stream = keep(stream);
    }, "tensor"_a, "u8"_a, "u16"_a.none(), "i64"_a, "stream"_a, "empty_like"_a);
    m.def("set_cupy", [](nb::handle nd, nb::handle stream, nb::handle device,
                         nb::handle empty, nb::handle empty_like) {
        F.cupy_empty_like = keep(empty_like);
        F.cupy_ndarray = keep(nd);
        F.cupy_stream = keep(stream);
        F.cupy_device = keep(device);
        F.cupy_empty = keep(empty);
    });
    m.def("set_numpy", [](nb::handle u8, nb::handle u16, nb::handle i64, nb::handle ctx_of) {
        F.np_u8 = keep(u8);
        F.np_u16 = keep(u16);
        F.np_i64 = keep(i64);
        F.context_of = keep(ctx_of);
    });
    F.s_is_cuda = PyUnicode_InternFromString("is_cuda");
    F.s_dtype = PyUnicode_InternFromString("dtype");
    F.s_shape = PyUnicode_InternFromString("shape");
    F.s_stride = PyUnicode_InternFromString("stride");
    F.s_data_ptr = PyUnicode_InternFromString("data_ptr");
    F.s_get_device = PyUnicode_InternFromString("get_device");
    F.s_new_empty = PyUnicode_InternFromString("new_empty");
    F.s_strides = PyUnicode_InternFromString("strides");
    F.s_data = PyUnicode_InternFromString("data");
    F.s_ptr = PyUnicode_InternFromString("ptr");
    F.s_device = PyUnicode_InternFromString("device");
    F.s_id = PyUnicode_InternFromString("id");
    F.s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
    F.s_numel = PyUnicode_InternFromString("numel");
    F.s_dim = PyUnicode_InternFromString("dim");
    F.kw_dtype = PyTuple_Pack(1, F.s_dtype);

    m.def("fast_histogram", &fast_histogram, "x"_a.none(), "out"_a.none());
    m.def("fast_equalize", &fast_equalize, "x"_a.none(), "method"_a);

    m.def("entropy", &entropy);
    m.def("percentile", &percentile);
    m.def("otsu", &otsu);
    m.def("match_lut", &match_lut);
    m.def("compare", &compare);
    m.def("compare_method", &compare_method);

    nb::class_<Context>(m, "Context")
        .def(nb::init<int, int>(), "backend"_a, "device"_a)
        .def_ro("backend", &Context::backend)
        .def_ro("device", &Context::device)
        .def("set_stream", &Context::set_stream)
        .def("set_param", &Context::set_param)
        .def("histogram", &Context::histogram, "src"_a, "spec"_a.none(), "counts"_a)
        .def("histogram_list", &Context::histogram_list, "srcs"_a, "spec"_a.none(), "counts"_a)
        .def("range", &Context::range)
        .def("histogram2d", &Context::histogram2d, "a"_a, "b"_a, "spec_a"_a.none(),
             "spec_b"_a.none(), "counts"_a)
        .def("mutual_information", &Context::mutual_information)
        .def("histogramdd", &Context::histogramdd)
        .def("cvt_color", &Context::cvt_color)
        .def("backproject", &Context::backproject)
        .def("equalize", &Context::equalize, "src"_a, "dst"_a, "method"_a, "hists"_a.none())
        .def("equalize_list", &Context::equalize_list)
        .def("clahe", &Context::clahe)
        .def("clahe_list", &Context::clahe_list)
        .def("load", &Context::load, "path"_a.none(), "data"_a.none(), "name"_a)
        .def("list_files", &Context::list_files)
        .def("files_counts_len", &Context::files_counts_len, "spec"_a.none())
        .def("histogram_files", &Context::histogram_files, "files"_a, "threads"_a,
             "spec"_a.none(), "out"_a, "len"_a, "progress"_a.none())
        .def("compare_many", &Context::compare_many)
        .def("compare_all", &Context::compare_all)
        .def("last_error", &Context::last_error);
}
