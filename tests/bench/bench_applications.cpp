// The applications of attention trained here, each on a typical input with every map kept (issue "The applications
// of attention"): the word-by-word entailment model on a 11-word premise and a 12-word hypothesis. Runs the shipped
// resources/models/entailment-wbw (or --model=FOLDER); prints the median of 200 runs and the 20 ms target.
//
//   bench_applications [--threads=N] [--model=FOLDER] [google-benchmark flags]
//   tests/bench/run_applications_vs_torch.sh <build-dir>   # the same pair in torch, in the same run
#include "attn/models/entailment.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// torch_applications_peer.py's PREMISE and HYPOTHESIS; change both together.
constexpr std::string_view kPremise = "a young man is sleeping on the beach near the river";
constexpr std::string_view kHypothesis = "the young person is not sleeping on the beach near the river";
constexpr double kTargetMs = 20.0;

attn::bench::ModelArgs g_model_args;
std::string g_model_name;

std::shared_ptr<const attn::models::EntailmentModel> model() {
  static std::shared_ptr<const attn::models::EntailmentModel> cached;
  if (cached) return cached;
  const fs::path dir = g_model_args.folder.empty()
                           ? fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "entailment-wbw"
                           : fs::path(g_model_args.folder);
  cached = attn::bench::load_or_exit<attn::models::EntailmentModel>(dir, "bench_applications");
  g_model_name = dir.string() + " (" + cached->description() + ")";
  return cached;
}

void BM_EntailmentPair(benchmark::State& state) {
  attn::models::EntailmentRunner runner(model());
  // One checked run: 12 rows over 11 premise words, each a distribution.
  auto run = runner.run(kPremise, kHypothesis);
  if (!run || run->attention.rows() != 12 || run->attention.cols() != 11 ||
      ((run->attention.rowwise().sum().array() - 1.0f).abs() > 1e-4f).any()) {
    state.SkipWithError("the entailment run is not 12 attention rows over the 11 premise words");
    return;
  }
  for (auto _ : state) {
    auto r = runner.run(kPremise, kHypothesis);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_EntailmentPair)->Unit(benchmark::kMillisecond)->UseRealTime();

// The verdict: the median of 200 timed runs after 20 warm-up ones.
void verdict() {
  attn::models::EntailmentRunner runner(model());
  for (int i = 0; i < 20; ++i) benchmark::DoNotOptimize(runner.run(kPremise, kHypothesis));
  std::vector<double> ms;
  std::string label;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = runner.run(kPremise, kHypothesis);
    const auto t1 = std::chrono::steady_clock::now();
    if (r) label = model()->config().labels[static_cast<std::size_t>(r->predicted)];
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("\nentailment: \"%.*s\" => \"%.*s\" (11 and 12 words), every attention row kept\n",
              static_cast<int>(kPremise.size()), kPremise.data(), static_cast<int>(kHypothesis.size()),
              kHypothesis.data());
  std::printf("  model:  %s\n", g_model_name.c_str());
  std::printf("  label:  %s\n", label.c_str());
  std::printf("  median: %.3f ms, p95 %.3f ms, min %.3f ms (200 runs)\n", median, ms[ms.size() * 95 / 100], ms.front());
  std::printf("  target: < %.0f ms: %s\n", kTargetMs, median < kTargetMs ? "MET" : "NOT MET");
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_applications");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  g_model_args = attn::bench::take_model_args(argc, argv);
  if (g_model_args.random) {
    std::fprintf(stderr, "bench_applications: --random: no random model here; the shipped one, or --model=FOLDER\n");
    return 2;
  }
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
