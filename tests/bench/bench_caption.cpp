// Captioning a 512 x 512 picture with beam 3 and drawing every word's attention over it at 512 x 512 (the
// Captioning tab's work for a new picture), and one overlay switch (the work of clicking another word:
// smoothing one alpha to 512 x 512, blending it over the picture). The picture is held-out scene 10,000,003
// enlarged 4x. The model is the shipped resources/models/caption-soft when it is there, else a random model
// of its sizes (channels 8, 16, 32, 128; embedding 64; LSTM 256; attention 128; the 22 scene words), whose
// <end> bias is pushed down so that every hypothesis runs to max_caption_length (24 words): the slowest
// caption the shipped model could make. Prints the medians against the targets (< 100 ms for the caption
// and its overlays, < 16 ms for a switch).
//
// BM_Encoder{Im2col,Direct} time the encoder's four layers both ways on the model's channel sizes: the
// measurement behind bundled::conv3x3_relu_pool's im2col + product.
//
//   bench_caption [--threads=N] [google-benchmark flags]
//   bench_caption --model=FOLDER     # another captioner folder
//   bench_caption --random           # the random model even when the shipped one is there
#include "attn/io/safetensors.h"
#include "attn/models/captioner.h"
#include "attn/random.h"
#include "attn/vision/overlay.h"
#include "attn/vision/scenes.h"
#include "models/bundled/layers.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr int kSide = 512;
constexpr int kBeam = 3;
constexpr double kTargetMs = 100.0, kSwitchTargetMs = 16.0;
constexpr std::uint64_t kSceneSeed = 10'000'003;

attn::bench::ModelArgs g_model_args;
std::string g_model_name;
int g_threads = 2;

// A random captioner of caption-soft's sizes, written once per process: torch's default initialisation
// (uniform in +-1/sqrt(fan_in) for weights and biases, N(0, 1) for the embedding).
fs::path make_random_caption_soft() {
  const fs::path dir = attn::bench::bench_dir() / "caption-soft-random";
  fs::create_directories(dir);
  const auto& vocab = attn::scene_vocabulary();
  std::string words;
  for (std::size_t i = 0; i < vocab.size(); ++i) words += (i ? ", \"" : "\"") + vocab[i] + "\"";
  attn::bench::write_text(
      dir / "config.json",
      "{\"architectures\": [\"AttnScopeCaptioner\"], \"task\": \"synthetic scene captions (random)\", "
      "\"attention\": \"soft\", \"image_size\": 128, \"mean\": [0.491, 0.4871, 0.4866], "
      "\"std\": [0.1144, 0.1068, 0.1135], \"channels\": [8, 16, 32, 128], \"vocab\": [" +
          words +
          "], \"embedding_size\": 64, \"hidden\": 256, \"attention_size\": 128, "
          "\"max_caption_length\": 24}");
  const std::int64_t V = static_cast<std::int64_t>(vocab.size()), E = 64, H = 256, A = 128, D = 128;
  attn::bench::WeightWriter w(20261122);
  const auto linear = [&](const std::string& name, std::vector<std::int64_t> shape, std::int64_t fan_in) {
    w.uniform(name, std::move(shape), 1.0f / std::sqrt(static_cast<float>(fan_in)));
  };
  std::int64_t in = 3;
  int k = 0;
  for (const std::int64_t out : {8, 16, 32, 128}) {
    linear("encoder.convs." + std::to_string(k) + ".weight", {out, in, 3, 3}, in * 9);
    linear("encoder.convs." + std::to_string(k) + ".bias", {out}, in * 9);
    in = out;
    ++k;
  }
  for (const std::string which : {"init_h", "init_c"}) {
    linear("decoder." + which + ".weight", {H, D}, D);
    linear("decoder." + which + ".bias", {H}, D);
  }
  linear("decoder.attention.encoder.weight", {A, D}, D);
  linear("decoder.attention.encoder.bias", {A}, D);
  linear("decoder.attention.decoder.weight", {A, H}, H);
  linear("decoder.attention.full.weight", {1, A}, A);
  linear("decoder.gate.weight", {1, H}, H);
  linear("decoder.gate.bias", {1}, H);
  w.standard_normal("decoder.embedding.weight", {V, E});
  linear("decoder.lstm.weight_ih", {4 * H, E + D}, H);
  linear("decoder.lstm.weight_hh", {4 * H, H}, H);
  linear("decoder.lstm.bias_ih", {4 * H}, H);
  linear("decoder.lstm.bias_hh", {4 * H}, H);
  linear("decoder.deep_h.weight", {E, H}, H);
  linear("decoder.deep_z.weight", {E, D}, D);
  linear("decoder.out.weight", {V, E}, E);
  linear("decoder.out.bias", {V}, E);
  w.set("decoder.out.bias", 2, -30.0f);  // <end> never wins: every hypothesis runs all 24 words
  w.write_or_exit(dir / "model.safetensors", "bench_caption");
  return dir;
}

std::shared_ptr<const attn::models::CaptionerModel> model() {
  static std::shared_ptr<const attn::models::CaptionerModel> cached;
  if (cached) return cached;
  bool random = false;
  const fs::path dir =
      attn::bench::model_folder(g_model_args, fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "caption-soft",
                                make_random_caption_soft, random);
  cached = attn::bench::load_or_exit<attn::models::CaptionerModel>(dir, "bench_caption");
  g_model_name = dir.string() + " (" + cached->description() +
                 (random ? "; RANDOM weights of caption-soft's sizes, every caption 24 words" : "") + ")";
  return cached;
}

// The held-out scene enlarged 4x (nearest): 512 x 512 RGB.
const attn::Image& picture() {
  static const attn::Image image = [] {
    const attn::Scene scene = attn::generate_scene(kSceneSeed);
    const attn::Image small = scene.image();
    const int f = kSide / attn::kSceneSize;
    attn::Image big(kSide, kSide, 3);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < kSide; ++y) {
        for (int x = 0; x < kSide; ++x) big.at(c, y, x) = small.at(c, y / f, x / f);
      }
    }
    return big;
  }();
  return image;
}

// The picture as 8-bit RGB, the overlays' base.
const std::vector<std::uint8_t>& picture_rgb() {
  static const std::vector<std::uint8_t> rgb = [] {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(kSide * kSide * 3));
    attn::image_to_u8(picture(), out.data(), kSide * 3, 3);
    return out;
  }();
  return rgb;
}

// A 256-level inferno-like ramp (black, red, yellow, white) for the colour layer.
const std::vector<std::uint32_t>& colours() {
  static const std::vector<std::uint32_t> table = [] {
    std::vector<std::uint32_t> t(256);
    for (int i = 0; i < 256; ++i) {
      const double v = i / 255.0;
      const auto ch = [](double x) { return static_cast<std::uint32_t>(std::lround(255.0 * std::clamp(x, 0.0, 1.0))); };
      t[static_cast<std::size_t>(i)] = ch(2.0 * v) << 16 | ch(2.0 * v - 0.5) << 8 | ch(3.0 * v - 2.0);
    }
    return t;
  }();
  return table;
}

// The tutorial's smoothing of a grid x grid alpha to the picture.
attn::GridUpsampler smoother(int grid) { return {grid, grid, kSide, kSide, attn::tutorial_sigma(grid, kSide)}; }

// One word's overlay into `out` (a copy of the picture): the smoothed alpha as a colour layer.
void render_word(const attn::GridUpsampler& smooth, const attn::Matrix& alpha, Eigen::Index row,
                 std::vector<std::uint8_t>& out) {
  const auto grid = smooth.rows();
  const attn::Matrix map = smooth(Eigen::Map<const attn::Matrix>(alpha.row(row).data(), grid, grid));
  out = picture_rgb();
  attn::ColorBlend blend;
  blend.colors = colours();
  blend.opacity = 0.7f;
  attn::color_blend(attn::PixelsU8{out.data(), kSide, kSide, kSide * 3, 3}, map, blend);
}

// The whole workload: caption with beam 3, then every word of the best caption drawn.
std::size_t caption_and_draw(attn::models::CaptionerRunner& session, std::vector<std::uint8_t>& out) {
  attn::models::CaptionOptions options;
  options.beam = kBeam;
  auto run = session.run(picture(), options);
  if (!run || run->hypotheses.empty()) return 0;
  const auto& best = run->hypotheses.front();
  const attn::GridUpsampler smooth = smoother(run->grid);
  for (Eigen::Index t = 0; t < best.alpha.rows(); ++t) render_word(smooth, best.alpha, t, out);
  return static_cast<std::size_t>(best.alpha.rows());
}

void BM_CaptionBeam3AndOverlays(benchmark::State& state) {
  attn::models::CaptionerRunner session(model());
  std::vector<std::uint8_t> out;
  const std::size_t words = caption_and_draw(session, out);
  if (words == 0) {
    state.SkipWithError("no caption");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(caption_and_draw(session, out));
  state.counters["words"] = static_cast<double>(words);
}
BENCHMARK(BM_CaptionBeam3AndOverlays)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CaptionBeam3(benchmark::State& state) {
  attn::models::CaptionerRunner session(model());
  attn::models::CaptionOptions options;
  options.beam = kBeam;
  for (auto _ : state) {
    auto run = session.run(picture(), options);
    benchmark::DoNotOptimize(run);
  }
}
BENCHMARK(BM_CaptionBeam3)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OverlaySwitch(benchmark::State& state) {
  attn::models::CaptionerRunner session(model());
  auto run = session.run(picture());
  if (!run) {
    state.SkipWithError(run.error().message().c_str());
    return;
  }
  std::vector<std::uint8_t> out;
  for (auto _ : state) {
    render_word(smoother(run->grid), run->hypotheses[0].alpha, 0, out);  // the weights made anew: the worst case
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_OverlaySwitch)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------------------------------------
// The encoder's convolutions: im2col + one product (the engine's) against a direct 9-tap kernel.

struct Layers {
  std::vector<attn::Matrix> weights;  // [C_out, 9 C_in]
  std::vector<attn::Vector> biases;
  attn::Matrix input;  // [3, 128^2]
};

const Layers& layers() {
  static const Layers l = [] {
    Layers out;
    attn::Index in = 3;
    std::uint64_t seed = 7;
    for (const attn::Index c : {8, 16, 32, 128}) {
      out.weights.push_back(attn::random_normal(c, 9 * in, seed++, 0.2f));
      out.biases.push_back(attn::random_normal(c, 1, seed++, 0.1f));
      in = c;
    }
    out.input = attn::random_normal(3, 128 * 128, seed, 1.0f);
    return out;
  }();
  return l;
}

// out[co] = bias + sum over ci, ky, kx of w * in[ci] shifted, then ReLU and 2x2 max pooling.
void conv_direct(const attn::Matrix& weight, const attn::Vector& bias, attn::Index side, attn::Matrix& planes,
                 attn::Matrix& conv) {
  const attn::Index C = weight.rows(), in = planes.rows(), half = side / 2;
  conv.resize(C, side * side);
  for (attn::Index co = 0; co < C; ++co) {
    float* out = conv.row(co).data();
    std::fill(out, out + side * side, bias(co));
    for (attn::Index ci = 0; ci < in; ++ci) {
      const float* src = planes.row(ci).data();
      for (attn::Index ky = 0; ky < 3; ++ky) {
        for (attn::Index kx = 0; kx < 3; ++kx) {
          const float w = weight(co, ci * 9 + ky * 3 + kx);
          const attn::Index dx = kx - 1, x0 = std::max<attn::Index>(0, -dx), x1 = std::min(side, side - dx);
          for (attn::Index y = 0; y < side; ++y) {
            const attn::Index sy = y + ky - 1;
            if (sy < 0 || sy >= side) continue;
            float* o = out + y * side;
            const float* s = src + sy * side + dx;
            for (attn::Index x = x0; x < x1; ++x) o[x] += w * s[x];
          }
        }
      }
    }
  }
  attn::Matrix pooled(C, half * half);
  for (attn::Index co = 0; co < C; ++co) {
    const float* c = conv.row(co).data();
    for (attn::Index y = 0; y < half; ++y) {
      for (attn::Index x = 0; x < half; ++x) {
        const float* r0 = c + 2 * y * side + 2 * x;
        pooled(co, y * half + x) = std::max(std::max(std::max(r0[0], r0[1]), std::max(r0[side], r0[side + 1])), 0.0f);
      }
    }
  }
  planes = std::move(pooled);
}

void BM_EncoderIm2col(benchmark::State& state) {
  const Layers& l = layers();
  attn::models::bundled::ConvScratch scratch;
  attn::Matrix planes;
  for (auto _ : state) {
    planes = l.input;
    attn::Index side = 128;
    for (std::size_t k = 0; k < l.weights.size(); ++k, side /= 2) {
      attn::models::bundled::conv3x3_relu_pool(l.weights[k], l.biases[k], side, planes, scratch);
    }
    benchmark::DoNotOptimize(planes.data());
  }
}
BENCHMARK(BM_EncoderIm2col)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EncoderDirect(benchmark::State& state) {
  const Layers& l = layers();
  attn::Matrix planes, conv;
  for (auto _ : state) {
    planes = l.input;
    attn::Index side = 128;
    for (std::size_t k = 0; k < l.weights.size(); ++k, side /= 2)
      conv_direct(l.weights[k], l.biases[k], side, planes, conv);
    benchmark::DoNotOptimize(planes.data());
  }
}
BENCHMARK(BM_EncoderDirect)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------------------------------------

template <class F>
std::vector<double> time_ms(int warm, int runs, F&& f) {
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

// The verdict: medians after warm-up runs.
void verdict() {
  attn::models::CaptionerRunner session(model());
  std::vector<std::uint8_t> out;
  std::size_t words = 0;
  const auto total = time_ms(5, 50, [&] { words = caption_and_draw(session, out); });
  auto run = session.run(picture());
  const auto one = time_ms(10, 200, [&] { render_word(smoother(run->grid), run->hypotheses[0].alpha, 0, out); });
  const double median = total[total.size() / 2], p95 = total[total.size() * 95 / 100];
  const double switch_median = one[one.size() / 2];
  std::printf(
      "\ncaptioning a %d x %d picture (held-out scene %llu enlarged), beam %d, every word's overlay at %d x %d\n",
      kSide, kSide, static_cast<unsigned long long>(kSceneSeed), kBeam, kSide, kSide);
  std::printf("  model:   %s\n", g_model_name.c_str());
  std::printf("  threads: %d\n", g_threads);
  std::printf("  caption + %zu overlays: median %.2f ms, p95 %.2f ms, min %.2f ms (50 runs); target < %.0f ms: %s\n",
              words, median, p95, total.front(), kTargetMs, median < kTargetMs ? "MET" : "NOT MET");
  std::printf("  overlay switch (smooth + blend, one word): median %.2f ms (200 runs); target < %.0f ms: %s\n",
              switch_median, kSwitchTargetMs, switch_median < kSwitchTargetMs ? "MET" : "NOT MET");
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_caption");
  if (!threads) return 2;
  g_threads = threads->count;
  omp_set_num_threads(threads->count);
  g_model_args = attn::bench::take_model_args(argc, argv);
  std::printf("bench_caption: %d threads (%s)\n", threads->count, threads->source.c_str());
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("attn_threads_source", threads->source);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  model();
  benchmark::AddCustomContext("model", g_model_name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  verdict();
  return 0;
}
