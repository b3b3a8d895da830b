// opencv_equalize: the OpenCV baseline of the folder benchmark (bench/folder).
//
//   opencv_equalize [-j N] [-o OUTDIR] [--total FILE] [-q] color|gray INPUT...
//
// Each INPUT is an image file, a folder (its files, sorted, not descending),
// or @LIST / -l LIST (a file naming one image per line). N worker threads
// (default: every core) take the files in turn through one atomic index.
//
//   color: cv::imread(IMREAD_COLOR) + cv::cvtColor(BGR2GRAY)
//   gray:  cv::imread(IMREAD_GRAYSCALE)
//
// With -o: cv::equalizeHist and cv::imwrite(OUTDIR/NAME.png) with default
// parameters (NAME: the input's file name without its extension). Without
// -o: cv::calcHist (256 bins) only, added up over every image; --total FILE
// writes that sum as CSV bin,lower,upper,count.
//
// When there are fewer files than threads (one large image), the spare
// threads go to OpenCV's own parallel loops (cv::setNumThreads); otherwise
// OpenCV runs single-threaded inside each worker.
//
// Prints one line: images, input MB (decimal, file sizes), wall seconds from
// the first file to the last, images/s, MB/s. Exit status 0, 1 if any image
// could not be read or written, 2 usage error.
//
// Build (bench/folder/build.sh does this):
//   g++ -O2 -std=c++17 opencv_equalize.cpp -o opencv_equalize
//       $(pkg-config --cflags --libs opencv4) -pthread

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

struct Item {
    std::string path;
    std::string out_name;  // NAME.png
    uint64_t bytes = 0;
};

static void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: opencv_equalize [-j N] [-o OUTDIR] [--total FILE] [-q] color|gray INPUT...\n"
                 "  INPUT: an image file, a folder (its files), or @LIST / -l LIST (one path a line)\n"
                 "  color: imread(IMREAD_COLOR) + cvtColor(BGR2GRAY); gray: imread(IMREAD_GRAYSCALE)\n"
                 "  -o OUTDIR: equalizeHist + imwrite(OUTDIR/NAME.png); without: calcHist only\n");
}

static std::string png_name(const std::string &path)
{
    return fs::path(path).stem().string() + ".png";
}

static bool add_input(const std::string &arg, std::vector<Item> &items)
{
    std::error_code ec;
    if (!arg.empty() && arg[0] == '@') {
        std::ifstream in(arg.substr(1));
        if (!in) {
            std::fprintf(stderr, "opencv_equalize: %s: cannot open the list\n", arg.c_str() + 1);
            return false;
        }
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (!line.empty()) items.push_back({line, png_name(line), 0});
        }
        return true;
    }
    if (fs::is_directory(arg, ec)) {
        std::vector<std::string> names;
        for (const auto &e : fs::directory_iterator(arg, ec))
            if (e.is_regular_file(ec)) names.push_back(e.path().string());
        if (ec) {
            std::fprintf(stderr, "opencv_equalize: %s: %s\n", arg.c_str(), ec.message().c_str());
            return false;
        }
        std::sort(names.begin(), names.end());
        for (auto &n : names) items.push_back({n, png_name(n), 0});
        return true;
    }
    items.push_back({arg, png_name(arg), 0});
    return true;
}

int main(int argc, char **argv)
{
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::string outdir, total_path, mode;
    bool quiet = false;
    std::vector<Item> items;
    bool inputs_ok = true;

    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto need = [&](const char *name) -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "opencv_equalize: %s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-j" || a == "--jobs") {
            std::string v = need("-j");
            char *end = nullptr;
            long n = std::strtol(v.c_str(), &end, 10);
            if (*end || n < 1 || n > 1024) {
                std::fprintf(stderr, "opencv_equalize: -j %s: expected 1..1024\n", v.c_str());
                return 2;
            }
            threads = (unsigned)n;
        } else if (a.rfind("-j", 0) == 0 && a.size() > 2 && std::isdigit((unsigned char)a[2])) {
            threads = (unsigned)std::max(1L, std::min(1024L, std::strtol(a.c_str() + 2, nullptr, 10)));
        } else if (a == "-o" || a == "--out") {
            outdir = need("-o");
        } else if (a == "--total") {
            total_path = need("--total");
        } else if (a == "-l" || a == "--list") {
            inputs_ok &= add_input("@" + need("-l"), items);
        } else if (a == "-q" || a == "--quiet") {
            quiet = true;
        } else if (a == "--version") {
            std::printf("opencv_equalize (C++) OpenCV %s\n", CV_VERSION);
            return 0;
        } else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (mode.empty() && (a == "color" || a == "gray")) {
            mode = a;
        } else if (!a.empty() && a[0] == '-' && a != "-" && !fs::exists(a)) {
            std::fprintf(stderr, "opencv_equalize: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        } else {
            inputs_ok &= add_input(a, items);
        }
    }
    if (mode.empty() || items.empty()) {
        usage(stderr);
        return 2;
    }
    if (!inputs_ok) return 2;
    if (!outdir.empty()) {
        std::error_code ec;
        fs::create_directories(outdir, ec);
        if (ec) {
            std::fprintf(stderr, "opencv_equalize: %s: %s\n", outdir.c_str(), ec.message().c_str());
            return 1;
        }
    }
    uint64_t in_bytes = 0;
    for (auto &it : items) {
        std::error_code ec;
        it.bytes = fs::file_size(it.path, ec);
        if (ec) it.bytes = 0;
        in_bytes += it.bytes;
    }

    const bool gray_mode = mode == "gray";
    const bool hist_only = outdir.empty();
    const bool want_hist = hist_only || !total_path.empty();
    const unsigned workers = std::min<unsigned>(threads, (unsigned)items.size());
    const int cv_threads = (int)std::max(1u, threads / workers);
    cv::setNumThreads(cv_threads);

    std::atomic<size_t> next{0};
    std::atomic<int> failed{0};
    std::mutex mu;
    std::vector<uint64_t> total(256, 0);

    auto work = [&]() {
        std::vector<uint64_t> local(256, 0);
        cv::Mat img, gray, eq, hist;
        for (;;) {
            size_t k = next.fetch_add(1, std::memory_order_relaxed);
            if (k >= items.size()) break;
            const Item &it = items[k];
            try {
                if (gray_mode) {
                    gray = cv::imread(it.path, cv::IMREAD_GRAYSCALE);
                } else {
                    img = cv::imread(it.path, cv::IMREAD_COLOR);
                    if (!img.empty()) cv::cvtColor(img, gray, cv::COLOR_BGR2GRAY);
                    else gray.release();
                }
                if (gray.empty()) {
                    std::fprintf(stderr, "opencv_equalize: %s: cannot read or decode\n", it.path.c_str());
                    failed++;
                    continue;
                }
                if (want_hist) {
                    const int channels[] = {0};
                    const int sizes[] = {256};
                    const float range[] = {0, 256};
                    const float *ranges[] = {range};
                    cv::calcHist(&gray, 1, channels, cv::Mat(), hist, 1, sizes, ranges);
                    for (int b = 0; b < 256; b++) local[b] += (uint64_t)std::llround(hist.at<float>(b));
                }
                if (!hist_only) {
                    cv::equalizeHist(gray, eq);
                    std::string out = (fs::path(outdir) / it.out_name).string();
                    if (!cv::imwrite(out, eq)) {
                        std::fprintf(stderr, "opencv_equalize: %s: cannot write\n", out.c_str());
                        failed++;
                    }
                }
            } catch (const cv::Exception &e) {
                std::fprintf(stderr, "opencv_equalize: %s: %s\n", it.path.c_str(), e.what());
                failed++;
            }
        }
        std::lock_guard<std::mutex> lock(mu);
        for (int b = 0; b < 256; b++) total[b] += local[b];
    };

    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < workers; t++) pool.emplace_back(work);
    work();
    for (auto &t : pool) t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    if (!total_path.empty()) {
        FILE *f = std::fopen(total_path.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "opencv_equalize: %s: cannot write\n", total_path.c_str());
            return 1;
        }
        std::fprintf(f, "bin,lower,upper,count\n");
        for (int b = 0; b < 256; b++)
            std::fprintf(f, "%d,%d,%d,%llu\n", b, b, b + 1, (unsigned long long)total[b]);
        std::fclose(f);
    }
    if (!quiet) {
        size_t n = items.size();
        std::printf("opencv_equalize impl=cpp opencv=%s mode=%s output=%s threads=%u "
                    "opencv_threads=%d images=%zu failed=%d input_MB=%.1f wall_s=%.3f "
                    "images_per_s=%.2f MB_per_s=%.1f\n",
                    CV_VERSION, mode.c_str(), hist_only ? "none" : "png", workers, cv_threads, n,
                    failed.load(), in_bytes / 1e6, secs, n / secs, in_bytes / 1e6 / secs);
    }
    return failed.load() ? 1 : 0;
}
