// Whole-model forward passes with every layer's attention maps captured (the Transformer workbench's
// workload): a BERT-base-shaped encoder (12 layers, d 768, 12 heads, FFN 3072) at 128 and 512 tokens and
// a GPT-2-small-shaped decoder at 128 and 1024 tokens, random weights written to safetensors and loaded
// as a checkpoint is. The peer is the same architectures in torch returning all attentions
// (torch_transformer_peer.py); run_transformer_vs_torch.sh runs both in one run and prints the ratios.
//
//   bench_transformer [--threads=N] [google-benchmark flags]
//   bench_transformer --memory=TOKENS [--threads=N]   # one BERT-base run, maps in float16: peak memory
//
// FLOPs (both sides count the same): per layer 2 n (4 d^2 + 2 d ffn) for the projections and the FFN,
// plus 4 n^2 d for Q K^T and weights V. GPT-2's causal maps let the engine skip the upper triangle, and
// with no hidden states or predictions asked for it skips the last layer's output projection and FFN
// (nothing reads them: 1/16 of BERT-base's work at 128 tokens); the count stays the full one, so the
// GFLOP/s of both sides are work-per-time of the same model, not the rate of the engine's GEMMs.
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "attn/random.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using attn::Index;

using namespace attn::bench;  // the shapes and make_bert / make_gpt2 (bench_models.h)

double model_flops(double n) {
  const double d = kHidden, f = kFfn;
  return kLayers * (2.0 * n * (4.0 * d * d + 2.0 * d * f) + 4.0 * n * n * d);
}

// Models are written once per process and shared by every benchmark of their family.
std::shared_ptr<const attn::models::TransformerModel> model(std::string_view family, int positions = 512) {
  static std::map<std::string, std::shared_ptr<const attn::models::TransformerModel>> cache;
  const std::string key = std::string(family) + "/" + std::to_string(positions);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const fs::path dir = family == "bert" ? make_bert(bench_dir() / ("bert-base-" + std::to_string(positions)), positions)
                                        : make_gpt2(bench_dir() / "gpt2-small");
  auto loaded = attn::models::TransformerModel::load(dir);
  if (!loaded) {
    std::fprintf(stderr, "bench_transformer: %s\n", loaded.error().message().c_str());
    std::exit(1);
  }
  return cache[key] = *loaded;
}

std::vector<int> ids_of(Index n, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  attn::SplitMix64 rng(99);
  for (auto& id : ids) id = static_cast<int>(rng.uniform() * (vocab - 1));
  return ids;
}

void run_family(benchmark::State& state, std::string_view family) {
  const Index n = state.range(0);
  auto m = model(family);
  attn::models::TransformerRunner session(m);
  const auto ids = ids_of(n, family == "bert" ? kBertVocab : kGpt2Vocab);
  // One checked run: every layer's maps, every row a distribution, causal maps with an empty upper triangle.
  {
    auto run = session.run_ids(ids);
    if (!run) {
      state.SkipWithError(run.error().message().c_str());
      return;
    }
    if (static_cast<int>(run->attention.layers.size()) != kLayers) {
      state.SkipWithError("the run did not capture one stack per layer");
      return;
    }
    for (const auto& layer : run->attention.layers) {
      if (layer.maps.heads() != kHeads || layer.maps.rows() != n || layer.maps.cols() != n) {
        state.SkipWithError("a layer's maps have the wrong shape");
        return;
      }
      for (int h = 0; h < kHeads; h += 5) {
        const attn::Matrix a = layer.maps.head(h);
        if (!a.allFinite() || ((a.rowwise().sum().array() - 1.0f).abs() > 1e-3f).any()) {
          state.SkipWithError("a head's rows are not distributions");
          return;
        }
        if (family == "gpt2" && a.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() != 0) {
          state.SkipWithError("a GPT-2 map has weight on future tokens");
          return;
        }
      }
    }
  }
  for (auto _ : state) {
    auto run = session.run_ids(ids);
    benchmark::DoNotOptimize(run);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(model_flops(static_cast<double>(n)) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The ceiling: one plain [n, 768] x [768, 3072] product (sgemm through Eigen and OpenBLAS), the shape of
// the FFN's first layer. The runner prints each model's GFLOP/s as a share of this.
void BM_Gemm(benchmark::State& state) {
  const Index n = state.range(0);
  const attn::Matrix a = attn::Matrix::Random(n, kHidden), b = attn::Matrix::Random(kHidden, kFfn);
  attn::Matrix c(n, kFfn);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(n) * kHidden * kFfn * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Gemm)->ArgName("L")->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Bert(benchmark::State& state) { run_family(state, "bert"); }
void BM_Gpt2(benchmark::State& state) { run_family(state, "gpt2"); }
BENCHMARK(BM_Bert)->ArgName("L")->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Gpt2)->ArgName("L")->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

long status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + std::strlen(key), nullptr, 10);
  }
  return -1;
}

// One BERT-base run at `tokens` with maps in float16: the process's peak resident memory.
int memory_run(int tokens) {
  auto m = model("bert", tokens);
  const long after_load = status_kib("VmHWM:");
  attn::models::TransformerRunner session(m);
  attn::models::RunOptions options;
  options.precision = attn::Precision::F16;
  auto run = session.run_ids(ids_of(tokens, kBertVocab), {}, options);
  if (!run) {
    std::fprintf(stderr, "bench_transformer: %s\n", run.error().message().c_str());
    return 1;
  }
  std::size_t maps = 0;
  for (const auto& l : run->attention.layers) maps += l.maps.bytes();
  const long peak = status_kib("VmHWM:");
  std::printf("memory: BERT-base shape, %d tokens, maps in float16, %d threads\n", tokens, omp_get_max_threads());
  std::printf("  maps captured:            %.1f MB (%zu layers)\n", maps / 1e6, run->attention.layers.size());
  std::printf("  peak resident after load: %.1f MB\n", after_load / 1024.0 * 1.048576);
  std::printf("  peak resident after run:  %.1f MB (VmHWM)\n", peak / 1024.0 * 1.048576);
  std::printf("  target:                   < 3000 MB: %s\n", peak / 1024.0 * 1.048576 < 3000 ? "MET" : "NOT MET");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_transformer");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).starts_with("--memory=")) return memory_run(std::atoi(argv[i] + 9));
  }
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("attn_threads_source", threads->source);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
