// Attribution (issue 44, "Speed"): one attribution against the forward of the same input, on random checkpoints of
// two real shapes at 512 tokens: GPT-2 small (12 layers x 12 heads, d 768; bench_models.h's make_gpt2) and SmolLM2-135M
// (30 layers x 9 heads, 3 key/value heads, d 576; the BF16 checkpoint `bench_decoder --prepare` writes). The input is
// token i = (7919 i + 13) mod vocab; the target the logit of token 1000 at the last position.
//   BM_Forward/<model>             TransformerRunner::run_ids, every map kept (what the Transformer tab runs)
//   BM_GradXInput/<model>          attribute(GradXInput): the embeddings, a forward keeping the backward's caches,
//                                  the backward, the scores
//   BM_AttnLrp/<model>             attribute(AttnLrp): the same with AttnLRP's rules
//   BM_IntegratedGradients/<model> attribute(IntegratedGradients, 32 steps, zero baseline): 33 sequences (alpha = 1
//                                  .. 1/32 and 0) stacked into as few passes as the budget allows (the counter
//                                  `passes` says how many; 1 where every step fits)
// Targets (the issue): GradXInput and AttnLrp at most 3x the forward; at least 1.5x faster than torch autograd doing
// the same (torch_attribution_peer.py; run_attribution_vs_torch.sh runs both and prints the ratios).
//
//   bench_attribution [--threads=N] [--smol=DIR] [--tokens=N] [--values=FILE] [google-benchmark flags]
//     --values=FILE  each model's F and gradient x input scores as JSON, for the peer to compare with its own
#include "attn/models/attribution.h"
#include "attn/models/transformer.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace am = attn::models;

constexpr int kTarget = 1000;

struct Args {
  fs::path smol;
  int tokens = 512;
  std::string values;
};
Args g_args;

template <class T>
T value_or_exit(attn::Result<T> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "bench_attribution: %s: %s\n", what, r.error().message().c_str());
    std::exit(1);
  }
  return std::move(*r);
}

struct Loaded {
  std::shared_ptr<const am::TransformerModel> model;
  std::unique_ptr<am::TransformerRunner> runner;
  std::vector<int> ids;
  am::TransformerRun run;
};

std::vector<int> bench_ids(int n, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = (7919 * i + 13) % vocab;
  return ids;
}

Loaded load(const fs::path& dir) {
  Loaded m;
  m.model = attn::bench::load_or_exit<am::TransformerModel>(dir, "bench_attribution");
  m.runner = std::make_unique<am::TransformerRunner>(m.model);
  m.ids = bench_ids(g_args.tokens, m.model->config().vocab_size);
  am::RunOptions o;
  o.top_k = 0;
  m.run = value_or_exit(m.runner->run_ids(m.ids, {}, o), "run");
  return m;
}

Loaded& model(int which) {
  static Loaded gpt2 = [] {
    const fs::path dir = attn::bench::bench_dir() / "gpt2-small";
    if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) attn::bench::make_gpt2(dir);
    return load(dir);
  }();
  static Loaded smol = [] {
    if (!fs::exists(g_args.smol / "model.safetensors")) {
      std::fprintf(stderr, "bench_attribution: %s not found; write it with `bench_decoder --prepare`\n",
                   (g_args.smol / "model.safetensors").c_str());
      std::exit(2);
    }
    return load(g_args.smol);
  }();
  return which == 0 ? gpt2 : smol;
}

const char* name_of(int which) { return which == 0 ? "gpt2-small" : "smollm2-135m"; }

void BM_Forward(benchmark::State& state) {
  Loaded& m = model(static_cast<int>(state.range(0)));
  am::RunOptions o;
  o.top_k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(value_or_exit(m.runner->run_ids(m.ids, {}, o), "run"));
  state.SetLabel(name_of(static_cast<int>(state.range(0))));
}

void attribute_case(benchmark::State& state, am::AttributionMethod method) {
  Loaded& m = model(static_cast<int>(state.range(0)));
  am::AttributionTarget t;
  t.token = kTarget;
  am::AttributeOptions o;
  o.method = method;
  o.steps = 32;
  int passes = 0;
  o.progress = [&](int, int) { ++passes; };
  double gap = 0;
  for (auto _ : state) {
    passes = 0;
    const auto a = value_or_exit(am::attribute(*m.model, m.run, t, o), "attribute");
    gap = a.gap;
    benchmark::DoNotOptimize(a.scores.data());
  }
  state.SetLabel(name_of(static_cast<int>(state.range(0))));
  if (method == am::AttributionMethod::IntegratedGradients) state.counters["passes"] = passes;
  if (method != am::AttributionMethod::GradXInput) state.counters["gap"] = gap;
}

void BM_GradXInput(benchmark::State& s) { attribute_case(s, am::AttributionMethod::GradXInput); }
void BM_AttnLrp(benchmark::State& s) { attribute_case(s, am::AttributionMethod::AttnLrp); }
void BM_IntegratedGradients(benchmark::State& s) { attribute_case(s, am::AttributionMethod::IntegratedGradients); }

#define ATTN_CASE(fn) BENCHMARK(fn)->ArgName("model")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()
ATTN_CASE(BM_Forward);
ATTN_CASE(BM_GradXInput);
ATTN_CASE(BM_AttnLrp);
ATTN_CASE(BM_IntegratedGradients)->Iterations(1);

// F and the gradient x input scores of both models, for the peer to compare.
void write_values(const std::string& path) {
  std::ofstream out(path);
  out << "{";
  for (int which = 0; which < 2; ++which) {
    Loaded& m = model(which);
    am::AttributionTarget t;
    t.token = kTarget;
    am::AttributeOptions o;
    const auto a = value_or_exit(am::attribute(*m.model, m.run, t, o), "attribute");
    out << (which ? ",\n" : "\n") << "\"" << name_of(which) << "\": {\"value\": " << a.value << ", \"scores\": [";
    char buf[32];
    for (std::size_t i = 0; i < a.scores.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(a.scores[i]));
      out << (i ? "," : "") << buf;
    }
    out << "]}";
  }
  out << "\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_attribution");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  g_args.smol = attn::bench::bench_dir() / "smollm2-135m-bf16";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--smol=")) {
      g_args.smol = arg.substr(std::string_view("--smol=").size());
    } else if (arg.starts_with("--tokens=")) {
      g_args.tokens = std::atoi(argv[i] + std::string_view("--tokens=").size());
      if (g_args.tokens < 2) return std::fprintf(stderr, "bench_attribution: --tokens must be 2 or more\n"), 2;
    } else if (arg.starts_with("--values=")) {
      g_args.values = arg.substr(std::string_view("--values=").size());
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("tokens", std::to_string(g_args.tokens));
  benchmark::AddCustomContext("models", "gpt2-small (make_gpt2) and " + g_args.smol.string() +
                                            "; ids (7919 i + 13) mod vocab; the logit of token 1000 at the last "
                                            "position");
  if (!g_args.values.empty()) write_values(g_args.values);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
