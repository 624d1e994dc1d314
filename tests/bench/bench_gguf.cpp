// GGUF files against llama.cpp (issue 45; tests/bench/run_gguf_vs_llama.sh runs this and
// tools/golden/llama_speed.mjs on the same file, in the same run, with the same thread count):
//   BM_GgufPrompt/L:512        run_ids on 512 ids, every attention map kept (on demand past the engine's threshold,
//                              as the Transformer tab runs it); tokens/s = 512 / the call
//   BM_GgufGenerate/new:N      generate(): a 16-token prompt, then N greedy tokens, every token's maps kept;
//                              tokens/s = N / the whole call (prompt included), as the peer times it
//   BM_StreamCopy              a STREAM-like copy of 256 MiB with the same threads: GB/s = bytes read + written per
//                              second, the machine's memory bandwidth for the bandwidth fractions below
// Each case's counters say the bytes of weights the file holds (weight_bytes: every matrix, the output embedding
// included, is read once per generated token) so that the runner can report weight_bytes x tokens/s against the
// copy's GB/s. The ids are (7919 i + 13) mod vocabulary, the peer's.
//
// Each case runs once untimed first (the file's pages mapped, the runner's buffers grown), as the peer does.
// ATTN_BENCH_GGUF_ARITHMETIC=float (the engine's own float arithmetic) or float-cache (llama.cpp's arithmetic with
// a float key/value cache) load the file otherwise; the default is llama.cpp's arithmetic and F16 cache.
//
//   bench_gguf FILE.gguf [--threads=N] [google-benchmark flags]
#include "attn/io/gguf.h"
#include "attn/models/transformer.h"

#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using attn::Index;

std::string g_file;

const std::shared_ptr<const attn::models::TransformerModel>& model() {
  static const auto loaded = [] {
    attn::models::LoadOptions options;
    if (const char* env = std::getenv("ATTN_BENCH_GGUF_ARITHMETIC"); env && std::string(env) == "float") {
      options.gguf_llama_cpp_arithmetic = false;
    } else if (env && std::string(env) == "float-cache") {
      options.gguf_f16_cache = false;
    }
    auto m = attn::models::TransformerModel::load(g_file, {}, options);
    if (!m) {
      std::fprintf(stderr, "bench_gguf: %s\n", m.error().message().c_str());
      std::exit(2);
    }
    return *m;
  }();
  return loaded;
}

double weight_bytes() {
  static const double bytes = [] {
    auto f = attn::io::GgufFile::open(g_file);
    double sum = 0;
    if (f) {
      for (const auto& t : f->tensors()) sum += t.ne.size() >= 2 ? static_cast<double>(t.bytes) : 0.0;
    }
    return sum;
  }();
  return bytes;
}

std::vector<int> ids_of(int n) {
  const int vocab = model()->config().vocab_size;
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int>((7919LL * i + 13) % vocab);
  return ids;
}

void counters(benchmark::State& state, int tokens) {
  state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_bytes"] = weight_bytes();
}

void BM_GgufPrompt(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  attn::models::TransformerRunner runner(model());
  const auto ids = ids_of(n);
  if (auto warm = runner.run_ids(ids); !warm) return state.SkipWithError(warm.error().message().c_str());
  for (auto _ : state) {
    auto run = runner.run_ids(ids);
    if (!run) return state.SkipWithError(run.error().message().c_str());
    benchmark::DoNotOptimize(run);
  }
  counters(state, n);
}
BENCHMARK(BM_GgufPrompt)->ArgName("L")->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GgufGenerate(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  attn::models::TransformerRunner runner(model());
  const auto prompt = ids_of(16);
  attn::models::GenerateOptions g;
  g.max_new_tokens = steps;
  g.stop_at_eos = false;  // random weights may pick the EOS id; the peer does not stop either
  if (auto warm = runner.generate(prompt, g); !warm) return state.SkipWithError(warm.error().message().c_str());
  for (auto _ : state) {
    auto run = runner.generate(prompt, g);
    if (!run) return state.SkipWithError(run.error().message().c_str());
    if (static_cast<int>(run->ids.size()) != 16 + steps) return state.SkipWithError("generation stopped early");
    benchmark::DoNotOptimize(run);
  }
  counters(state, steps);
}
BENCHMARK(BM_GgufGenerate)->ArgName("new")->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamCopy(benchmark::State& state) {
  const std::size_t n = std::size_t{1} << 26;  // 64 Mi floats each way: far past every cache
  std::vector<float> a(n, 1.0f), b(n, 0.0f);
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) b[i] = a[i];
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * static_cast<double>(n * sizeof(float)) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_gguf");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (g_file.empty() && argv[i][0] != '-') {
      g_file = argv[i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (g_file.empty()) {
    std::fprintf(stderr, "usage: bench_gguf FILE.gguf [--threads=N] [google-benchmark flags]\n");
    return 2;
  }
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("gguf", g_file);
  benchmark::AddCustomContext("model", model()->description());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
