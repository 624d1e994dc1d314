// The glimpse workbench's two reads on a 3 x 2048 x 2048 photo-sized image, against their peers:
//  - STN: the fused bilinear glimpse (stn_glimpse_into, output kept across calls) to 64 x 64 and 256 x 256,
//    against cv::warpAffine (INTER_LINEAR | WARP_INVERSE_MAP, BORDER_CONSTANT 0) of the same image as
//    interleaved CV_32FC3 with the equivalent 2 x 3 pixel matrix. torch_glimpse_peer.py times
//    affine_grid + grid_sample with the same theta.
//  - DRAW's Gaussian read: the banded read (read, workspace kept) against the dense one (read_dense) for
//    N = 64 and 256 and windows covering the whole image, a quarter of it (half width and height), a
//    sixteenth, and the whole image with a wide sigma (where the read must leave its banded loops for
//    matrix products).
//    torch_glimpse_peer.py times the dense read Fy I Fx^T with torch matmuls.
// run_glimpse_vs_peers.sh runs both and prints the ratios. See docs/BENCHMARKS.md.
//
//   bench_glimpse [--threads=N] [google-benchmark flags]
//
// Threads: --threads, else ATTN_THREADS, else 2; the engine's OpenMP and OpenCV's pool both get N.
// Every benchmark checks its result once before timing (engine against OpenCV within 1e-4 on interior
// pixels, banded against dense within 1e-4) and reports an error instead of a time when that fails.
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/stn.h"
#include "attn/glimpse/window_forms.h"
#include "attn/vision/image.h"

#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace g = attn::glimpse;

constexpr int kSide = 2048;
constexpr int kChannels = 3;
// Verification tolerance (the glimpse tolerance).
constexpr double kTolerance = 1e-4;

// The bench image: smooth on purpose. cv::warpAffine quantises sample positions to 1/32 pixel
// (INTER_BITS = 5), so on this image (gradient below 2e-3 per pixel) its output differs from an exact
// bilinear sample by at most ~3e-5, while a half-pixel slip in the transform would show as ~1e-3: the
// 1e-4 check separates "same transform" from "different transform". Timing does not depend on content.
// torch_glimpse_peer.py builds the same image from the same formula.
double pixel_value(int c, int y, int x) {
  constexpr double tau = 2.0 * std::numbers::pi;
  return 0.5 + 0.2 * std::sin(tau * x / 1300.0 + c) * std::cos(tau * y / 1100.0 + 0.7 * c) +
         0.1 * std::sin(tau * (x + y) / 1700.0 + 2.0 * c);
}

const attn::Image& bench_image() {
  static const attn::Image image = [] {
    attn::Image img(kSide, kSide, kChannels);
    for (int c = 0; c < kChannels; ++c)
      for (int y = 0; y < kSide; ++y)
        for (int x = 0; x < kSide; ++x) img.at(c, y, x) = static_cast<float>(pixel_value(c, y, x));
    return img;
  }();
  return image;
}

const cv::Mat& bench_image_interleaved() {
  static const cv::Mat mat = [] {
    const attn::Image& img = bench_image();
    std::vector<cv::Mat> planes;
    for (int c = 0; c < kChannels; ++c)
      planes.emplace_back(img.height, img.width, CV_32F, const_cast<float*>(img.plane(c)));
    cv::Mat out;
    cv::merge(planes, out);
    return out;
  }();
  return mat;
}

// ---------------------------------------------------------------------------------------------------
// STN

// The glimpse every STN peer computes: a similarity window of half the image's width and height (a
// quarter of its area) turned by 0.2 rad, a little off centre. The image is square, so the aspect
// correction is 1 and torch_glimpse_peer.py's theta is [[s cos r, -s sin r, tx], [s sin r, s cos r, ty]].
constexpr g::Similarity kStnWindow{.scale = 0.5, .rotation = 0.2, .shift_x = 0.1, .shift_y = -0.05};

g::Theta stn_theta() { return g::theta_of(kStnWindow, kSide, kSide); }

// The inverse map of cv::warpAffine (dst(j, i) = src(M (j, i, 1))) that equals the engine's sampling:
// ix = ((xs + 1) W - 1) / 2 with xs = t0 x + t1 y + t2 and x = (2j + 1) / Wo - 1, y = (2i + 1) / Ho - 1.
cv::Matx23d opencv_matrix(const g::Theta& t, int W, int H, int Wo, int Ho) {
  const double hx = W / 2.0, hy = H / 2.0;
  return {hx * t[0] * 2.0 / Wo,
          hx * t[1] * 2.0 / Ho,
          hx * (t[0] * (1.0 / Wo - 1.0) + t[1] * (1.0 / Ho - 1.0) + t[2] + 1.0) - 0.5,
          hy * t[3] * 2.0 / Wo,
          hy * t[4] * 2.0 / Ho,
          hy * (t[3] * (1.0 / Wo - 1.0) + t[4] * (1.0 / Ho - 1.0) + t[5] + 1.0) - 0.5};
}

cv::Mat warp(const cv::Mat& src, const cv::Matx23d& m, int Wo, int Ho) {
  cv::Mat dst;
  cv::warpAffine(src, dst, m, cv::Size(Wo, Ho), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT,
                 cv::Scalar::all(0));
  return dst;
}

double sum_of(const attn::Image& img) {
  double s = 0.0;
  for (float v : img.data) s += v;
  return s;
}

// Engine against OpenCV on the output pixels whose source point lies at least one pixel inside the image
// (there both sample all four taps from the image); returns the largest difference, or -1 when the
// outputs disagree in shape.
double max_diff_vs_opencv(const attn::Image& engine, const cv::Mat& cv_out, const cv::Matx23d& m, int W, int H,
                          int* compared) {
  if (cv_out.rows != engine.height || cv_out.cols != engine.width || cv_out.type() != CV_32FC3) return -1.0;
  double worst = 0.0;
  *compared = 0;
  for (int i = 0; i < engine.height; ++i) {
    const auto* row = cv_out.ptr<cv::Vec3f>(i);
    for (int j = 0; j < engine.width; ++j) {
      const double ix = m(0, 0) * j + m(0, 1) * i + m(0, 2);
      const double iy = m(1, 0) * j + m(1, 1) * i + m(1, 2);
      if (ix < 1.0 || iy < 1.0 || ix > W - 2.0 || iy > H - 2.0) continue;
      ++*compared;
      for (int c = 0; c < kChannels; ++c)
        worst = std::max(worst, std::abs(static_cast<double>(engine.at(c, i, j)) - row[j][c]));
    }
  }
  return worst;
}

// The check both STN benchmarks make before timing; false (with the error reported) when it fails.
const g::PackedImage& bench_packed() {
  static const g::PackedImage packed = g::pack(bench_image());
  return packed;
}

// Checks the packed sampler, the one timed as "the engine".
bool check_stn(benchmark::State& state, int out) {
  const g::Theta theta = stn_theta();
  attn::Image engine;
  g::stn_glimpse_into(bench_packed(), theta, out, out, {}, engine);
  const cv::Matx23d m = opencv_matrix(theta, kSide, kSide, out, out);
  const cv::Mat cv_out = warp(bench_image_interleaved(), m, out, out);
  int compared = 0;
  const double diff = max_diff_vs_opencv(engine, cv_out, m, kSide, kSide, &compared);
  state.counters["max_diff_vs_opencv"] = diff;
  state.counters["compared_pixels"] = compared;
  state.counters["sum"] = sum_of(engine);
  if (diff < 0.0 || compared == 0) {
    state.SkipWithError("engine and cv::warpAffine outputs have different shapes, or no interior pixel");
    return false;
  }
  if (diff > kTolerance) {
    const std::string msg = "engine STN differs from cv::warpAffine by " + std::to_string(diff) + " > 1e-4";
    state.SkipWithError(msg.c_str());
    return false;
  }
  return true;
}

// The engine as the workbench runs it: sampling from the packed copy made once when the photo is opened
// (four floats per pixel, one 16-byte load per tap), as OpenCV samples its interleaved Mat.
void BM_StnEngine(benchmark::State& state) {
  const int out = static_cast<int>(state.range(0));
  if (!check_stn(state, out)) return;
  const g::PackedImage& image = bench_packed();
  const g::Theta theta = stn_theta();
  attn::Image kept;
  g::stn_glimpse_into(image, theta, out, out, {}, kept);  // the kept output is warm before timing
  for (auto _ : state) {
    g::stn_glimpse_into(image, theta, out, out, {}, kept);
    benchmark::DoNotOptimize(kept.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = omp_get_max_threads();
}
BENCHMARK(BM_StnEngine)->ArgName("out")->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The planar overload (no packed copy): three cache lines per tap on a large photo. For reference only.
void BM_StnEnginePlanar(benchmark::State& state) {
  const int out = static_cast<int>(state.range(0));
  const attn::Image& image = bench_image();
  const g::Theta theta = stn_theta();
  attn::Image kept;
  g::stn_glimpse_into(image, theta, out, out, {}, kept);
  for (auto _ : state) {
    g::stn_glimpse_into(image, theta, out, out, {}, kept);
    benchmark::DoNotOptimize(kept.data.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_StnEnginePlanar)->ArgName("out")->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_StnOpenCV(benchmark::State& state) {
  const int out = static_cast<int>(state.range(0));
  if (!check_stn(state, out)) return;
  const cv::Mat& src = bench_image_interleaved();
  const cv::Matx23d m = opencv_matrix(stn_theta(), kSide, kSide, out, out);
  cv::Mat dst(out, out, CV_32FC3);  // reused: warpAffine keeps a destination of the right size and type
  for (auto _ : state) {
    cv::warpAffine(src, dst, m, dst.size(), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT,
                   cv::Scalar::all(0));
    benchmark::DoNotOptimize(dst.data);
    benchmark::ClobberMemory();
  }
  const cv::Scalar sums = cv::sum(dst);
  state.counters["sum"] = sums[0] + sums[1] + sums[2];
  state.counters["threads"] = cv::getNumThreads();
}
BENCHMARK(BM_StnOpenCV)->ArgName("out")->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---------------------------------------------------------------------------------------------------
// Gaussian read

// Windows (index = the benchmark's "window" argument; torch_glimpse_peer.py has the same table): centred
// on the image, extent x extent pixels, N filters at stride extent / N with sigma = stride / 2 (neighbours
// meet at about one sigma), except "wide", whose sigma of 400 px makes every band cover the whole image.
struct Window {
  const char* name;
  double extent;
  double sigma;  // 0: stride / 2
};
constexpr Window kWindows[] = {
    {"whole", 2048.0, 0.0}, {"quarter", 1024.0, 0.0}, {"sixteenth", 512.0, 0.0}, {"wide", 2048.0, 400.0}};

g::GaussianGlimpse window_glimpse(int n, int window) {
  const Window& w = kWindows[window];
  const double stride = w.extent / n;
  const double sigma = w.sigma > 0.0 ? w.sigma : stride / 2.0;
  const double centre = (kSide - 1) / 2.0;
  return g::centred_glimpse(centre, centre, n, stride, sigma);
}

double max_abs_diff(const attn::Image& a, const attn::Image& b) {
  if (a.data.size() != b.data.size()) return -1.0;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.data.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a.data[i]) - b.data[i]));
  return worst;
}

// Banded against dense once, before timing; the counters say which path the read took and its error
// bound (in units of gamma * max|I|; gamma is 1 and the image's values are below 1).
bool check_read(benchmark::State& state, const g::GaussianGlimpse& glimpse) {
  g::ReadStats stats;
  const attn::Image banded = g::read(bench_image(), glimpse, &stats);
  const attn::Image dense = g::read_dense(bench_image(), glimpse);
  const double diff = max_abs_diff(banded, dense);
  // 0 banded, 1 windowed (dense products over the rows and columns the bands touch), 2 dense.
  state.counters["path"] = static_cast<int>(stats.path);
  state.counters["macs"] = stats.macs;
  state.counters["dense_macs"] = stats.dense_macs;
  state.counters["error_bound"] = stats.error_bound;
  state.counters["max_diff_vs_dense"] = diff;
  state.counters["sum"] = sum_of(dense);
  if (diff < 0.0) {
    state.SkipWithError("read and read_dense return different shapes");
    return false;
  }
  if (diff > kTolerance || stats.error_bound > kTolerance) {
    const std::string msg = "banded read differs from dense by " + std::to_string(diff) + " (error bound " +
                            std::to_string(stats.error_bound) + "), beyond 1e-4";
    state.SkipWithError(msg.c_str());
    return false;
  }
  return true;
}

void BM_GaussianRead(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const g::GaussianGlimpse glimpse = window_glimpse(n, static_cast<int>(state.range(1)));
  if (!check_read(state, glimpse)) return;
  const attn::Image& image = bench_image();
  g::ReadWorkspace workspace;
  benchmark::DoNotOptimize(g::read(image, glimpse, nullptr, &workspace));  // warm the workspace
  for (auto _ : state) {
    attn::Image out = g::read(image, glimpse, nullptr, &workspace);
    benchmark::DoNotOptimize(out.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = omp_get_max_threads();
}

void BM_GaussianReadDense(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const g::GaussianGlimpse glimpse = window_glimpse(n, static_cast<int>(state.range(1)));
  if (!check_read(state, glimpse)) return;
  const attn::Image& image = bench_image();
  for (auto _ : state) {
    attn::Image out = g::read_dense(image, glimpse);
    benchmark::DoNotOptimize(out.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = omp_get_max_threads();
}

BENCHMARK(BM_GaussianRead)
    ->ArgNames({"N", "window"})
    ->ArgsProduct({{64, 256}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_GaussianReadDense)
    ->ArgNames({"N", "window"})
    ->ArgsProduct({{64, 256}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The window three ways (attn/glimpse/window_forms.h) on the 2048 x 2048 image: the soft mask a (.) I (image
// sized), the crop and the dense matrix form, each form's mean time as a counter (ms), for N x N filters over
// a window (the Glimpse tab's "Soft mask, crop and matrix form").
void BM_WindowForms(benchmark::State& state) {
  const g::GaussianGlimpse glimpse = window_glimpse(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const attn::Image& image = bench_image();
  double mask = 0.0, crop = 0.0, matrix = 0.0;
  std::int64_t runs = 0;
  for (auto _ : state) {
    const g::WindowForms f = g::window_forms(image, glimpse);
    benchmark::DoNotOptimize(f.masked.data.data());
    mask += f.mask_ms;
    crop += f.crop_ms;
    matrix += f.matrix_ms;
    ++runs;
  }
  if (runs == 0) return;
  const g::WindowForms f = g::window_forms(image, glimpse);
  state.counters["mask_ms"] = mask / double(runs);
  state.counters["crop_ms"] = crop / double(runs);
  state.counters["matrix_ms"] = matrix / double(runs);
  state.counters["mask_Mmul"] = f.mask_mults / 1e6;
  state.counters["matrix_Mmul"] = f.matrix_mults / 1e6;
  state.counters["crop_px"] = double(f.box.width) * f.box.height;
  state.counters["threads"] = omp_get_max_threads();
}
BENCHMARK(BM_WindowForms)
    ->ArgNames({"N", "window"})
    ->ArgsProduct({{12}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// OpenCV 4.6 has no public call for its parallel backend; its build information names it.
std::string opencv_parallel_framework() {
  const std::string info = cv::getBuildInformation();
  const std::string key = "Parallel framework:";
  const auto at = info.find(key);
  if (at == std::string::npos) return "unknown";
  const auto begin = info.find_first_not_of(' ', at + key.size());
  const auto end = info.find('\n', begin);
  return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = attn::bench::take_threads(argc, argv, "bench_glimpse");
  if (!parsed) return 2;
  const int threads = parsed->count;
  const std::string& source = parsed->source;

  omp_set_num_threads(threads);
  cv::setNumThreads(threads);
  const int omp_threads = omp_get_max_threads();
  const int cv_threads = cv::getNumThreads();
  const std::string cv_framework = opencv_parallel_framework();
  std::fprintf(stderr,
               "bench_glimpse: threads = %d (from %s); engine omp_get_max_threads() = %d, OMP_NUM_THREADS=%s; "
               "OpenCV %s getNumThreads() = %d, framework %s\n",
               threads, source.c_str(), omp_threads,
               std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)", CV_VERSION, cv_threads,
               cv_framework.c_str());
  if (omp_threads != threads || cv_threads != threads) {
    std::fprintf(stderr, "bench_glimpse: OpenMP (%d) or OpenCV (%d) did not accept %d threads\n", omp_threads,
                 cv_threads, threads);
    return 2;
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("attn_threads", std::to_string(threads));
  benchmark::AddCustomContext("attn_threads_source", source);
  benchmark::AddCustomContext("opencv_version", CV_VERSION);
  benchmark::AddCustomContext("opencv_threads", std::to_string(cv_threads));
  benchmark::AddCustomContext("opencv_framework", cv_framework);
  benchmark::AddCustomContext("image", "3 x 2048 x 2048 float32 (engine planar, OpenCV CV_32FC3)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
