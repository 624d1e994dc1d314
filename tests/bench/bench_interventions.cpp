// Interventions (issue 43, "Speed"): the sweeps of attn/models/intervention.h and one ablated re-run after a click,
// timed on random checkpoints of two real shapes. One iteration of a sweep's benchmark is the whole sweep (hundreds of
// re-runs): run it with --benchmark_repetitions=N for several samples.
//
//   SmolLM2-135M shape (30 layers x 9 heads, 3 key/value heads, d 576; the BF16 checkpoint `bench_decoder --prepare`
//   writes), 32 tokens: the clean input is token i = (7919 i + 13) mod vocab (bench_decoder's ids), the corrupted one
//   the same with positions 3 and 17 changed (id + 4242 mod vocab); the metric is the logit difference of tokens
//   1000 (answer) and 2000 (wrong) at the last position.
//     BM_SweepAblation         for each of the 270 heads, a zero ablation of that head alone: one
//                              TransformerRunner::rerun_cells of the clean run (captured) over 270 cells, each one
//                              Edit{Z, l, h, Zero}; each cell's last position's logit difference
//     BM_SweepHeads            Patching::sweep(Sweep::Heads) (rerun_cells too): 270 cells, each head's z taken from
//                              the clean run into the corrupted one
//     BM_SweepLayersPositions  Patching::sweep(Sweep::LayersPositions): 30 x 32 = 960 cells, the residual stream
//                              entering layer l at position p taken from the clean run
//   GPT-2 small shape (12 layers x 12 heads, d 768; bench_models.h's make_gpt2), 128 tokens:
//     BM_ClickRerun/layer:L    one ablated re-run after a click: the captured run re-run with head 0 of layer L zeroed
//                              (L = 0, 5, 11); the time is until on_layer delivers the layer in view (L + 1, the first
//                              whose maps the ablation changes; the last layer for L = 11), the counter total_ms the
//                              whole re-run. Target: under 100 ms.
//   BM_ResidCell/position:P    one cell of the layers x positions sweep (layer 0, position P): what skipping the rows
//                              before the patched position buys (the engine alone; the runner does not run it)
// The captured runs each case starts from are made once, before timing, and are not timed.
//
// torch_interventions_peer.py runs the same three sweeps TransformerLens's way (a full forward with hooks per cell)
// on the same SmolLM2 file; run_interventions_vs_torch.sh runs both and prints the ratios.
//
//   bench_interventions [--threads=N] [--values=FILE] [--smol=DIR] [google-benchmark flags]
//     --values=FILE  each sweep's values (its first run) as JSON, for the peer to compare with its own
//     --smol=DIR     the SmolLM2 folder (default $ATTN_BENCH_DIR/smollm2-135m-bf16)
//   ATTN_BENCH_CELLS=N (SMOKE RUNS ONLY): each sweep stops after its first N cells; the context says so.
#include "attn/models/intervention.h"
#include "attn/models/transformer.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace am = attn::models;
using Clock = std::chrono::steady_clock;

constexpr int kTokens = 32, kGpt2Tokens = 128, kAnswer = 1000, kWrong = 2000;
constexpr int kCorrupted[] = {3, 17};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Args {
  std::string values;
  fs::path smol;
};
Args g_args;

// ATTN_BENCH_CELLS (smoke runs only): 0 when unset, every cell.
int cell_limit() {
  static const int n = [] {
    const char* env = std::getenv("ATTN_BENCH_CELLS");
    int v = 0;
    if (env != nullptr && *env != '\0' && !attn::bench::parse_thread_count(env, v)) {
      std::fprintf(stderr, "bench_interventions: ATTN_BENCH_CELLS=%s is not a positive integer\n", env);
      std::exit(2);
    }
    return v;
  }();
  return n;
}

template <class T>
T value_or_exit(attn::Result<T> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "bench_interventions: %s: %s\n", what, r.error().message().c_str());
    std::exit(1);
  }
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

std::vector<int> clean_ids(int n, int vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int>((7919LL * i + 13) % vocab);
  return ids;
}

std::vector<int> corrupted_ids(std::vector<int> ids, int vocab) {
  for (const int p : kCorrupted) ids[static_cast<std::size_t>(p)] = (ids[static_cast<std::size_t>(p)] + 4242) % vocab;
  return ids;
}

void write_values(std::ofstream& out, const char* name, const std::vector<double>& v, bool last) {
  out << "  \"" << name << "\": [";
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", v[i]);
    out << (i ? ", " : "") << buf;
  }
  out << "]" << (last ? "\n" : ",\n");
}

// Zero ablation of each head alone, the logit difference of each re-run (head-major within a layer): one
// TransformerRunner::rerun_cells over the 270 cells, as the sweeps of attn/models/intervention.h run theirs.
std::vector<double> ablation_sweep(am::TransformerRunner& runner, const am::TransformerRun& base,
                                   const am::MetricSpec& metric, const attn::RowVector& clean_row, int limit) {
  const auto& c = runner.model().config();
  std::vector<std::vector<am::Edit>> cells;
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < c.heads; ++h)
      if (limit <= 0 || static_cast<int>(cells.size()) < limit)
        cells.push_back({am::Edit{am::Site::Z, l, h, -1, am::Edit::Kind::Zero, nullptr}});
  std::vector<double> values;
  value_or_exit(runner.rerun_cells(base, cells, -1,
                                   [&](std::size_t, const attn::Matrix& logits) {
                                     for (attn::Index i = 0; i < logits.rows(); ++i)
                                       values.push_back(am::metric_value(metric, logits.row(i), clean_row));
                                     return true;
                                   }),
                "ablated re-runs");
  return values;
}

std::vector<double> patching_sweep(am::TransformerRunner& runner, const am::Patching& patching, am::Sweep kind,
                                   int limit) {
  const auto r = value_or_exit(patching.sweep(runner, kind,
                                              [&](const am::SweepCell&, double, const am::SweepResult& so_far) {
                                                return limit <= 0 || so_far.done < limit;
                                              }),
                               am::sweep_name(kind));
  std::vector<double> values;
  for (const double v : r.values)
    if (!std::isnan(v)) values.push_back(v);
  return values;
}

// The SmolLM2 checkpoint, its clean and corrupted runs (captured) and the patching between them, made once.
struct Smol {
  std::shared_ptr<const am::TransformerModel> model;
  std::unique_ptr<am::TransformerRunner> runner;
  am::TransformerRun clean_base;
  attn::RowVector clean_row;
  am::MetricSpec metric{am::Metric::LogitDiff, kAnswer, kWrong};
  std::optional<am::Patching> patching;
  std::map<std::string, std::vector<double>> values;  // each sweep's first run

  void write_values() const {
    if (g_args.values.empty()) return;
    std::ofstream out(g_args.values);
    char buf[96];
    std::snprintf(buf, sizeof buf, "  \"clean_metric\": %.9g,\n  \"corrupt_metric\": %.9g,\n", patching->clean_metric(),
                  patching->corrupt_metric());
    out << "{\n" << buf;
    std::size_t k = 0;
    for (const auto& [name, v] : values) ::write_values(out, name.c_str(), v, ++k == values.size());
    out << "}\n";
  }
};

Smol& smol() {
  static Smol s = [] {
    Smol m;
    if (!fs::exists(g_args.smol / "model.safetensors")) {
      std::fprintf(stderr, "bench_interventions: %s not found; write it with `bench_decoder --prepare`\n",
                   (g_args.smol / "model.safetensors").c_str());
      std::exit(2);
    }
    m.model = attn::bench::load_or_exit<am::TransformerModel>(g_args.smol, "bench_interventions");
    m.runner = std::make_unique<am::TransformerRunner>(m.model);
    const int vocab = m.model->config().vocab_size;
    am::RunOptions capture;
    capture.capture = true;
    capture.top_k = 0;
    const auto ids = clean_ids(kTokens, vocab);
    auto clean = value_or_exit(m.runner->run_ids(ids, {}, capture), "clean run");
    auto corrupt = value_or_exit(m.runner->run_ids(corrupted_ids(ids, vocab), {}, capture), "corrupted run");
    m.clean_row = value_or_exit(am::measured_logits(clean, -1), "clean logits");
    m.clean_base = clean;  // the ablation's base (Patching::make takes the runs)
    m.patching.emplace(
        value_or_exit(am::Patching::make(std::move(clean), std::move(corrupt), m.metric, -1), "patching"));
    std::fprintf(stderr, "bench_interventions: metric clean %.6f, corrupted %.6f\n", m.patching->clean_metric(),
                 m.patching->corrupt_metric());
    return m;
  }();
  return s;
}

void run_sweep(benchmark::State& state, const char* name, const std::function<std::vector<double>(Smol&)>& sweep) {
  Smol& m = smol();
  std::size_t cells = 0;
  double ms = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto values = sweep(m);
    ms += ms_since(start);
    cells = values.size();
    if (!m.values.contains(name)) {
      m.values[name] = std::move(values);
      m.write_values();
    }
  }
  state.counters["cells"] = static_cast<double>(cells);
  state.counters["ms_per_cell"] =
      ms / static_cast<double>(state.iterations()) / static_cast<double>(std::max<std::size_t>(1, cells));
}

void BM_SweepAblation(benchmark::State& state) {
  run_sweep(state, "ablation",
            [](Smol& m) { return ablation_sweep(*m.runner, m.clean_base, m.metric, m.clean_row, cell_limit()); });
}
void BM_SweepHeads(benchmark::State& state) {
  run_sweep(state, "heads",
            [](Smol& m) { return patching_sweep(*m.runner, *m.patching, am::Sweep::Heads, cell_limit()); });
}
void BM_SweepLayersPositions(benchmark::State& state) {
  run_sweep(state, "resid",
            [](Smol& m) { return patching_sweep(*m.runner, *m.patching, am::Sweep::LayersPositions, cell_limit()); });
}
BENCHMARK(BM_SweepAblation)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepHeads)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SweepLayersPositions)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Where a cell's time goes (not compared with torch): one cell of the layers x positions sweep at layer 0, position
// P; a decoder recomputes rows P..31 of every layer only, so the time against P shows what skipping the rows before
// the patched position buys.
void BM_ResidCell(benchmark::State& state) {
  Smol& m = smol();
  const int position = static_cast<int>(state.range(0));
  const auto edit = m.patching->edit(am::Sweep::LayersPositions, am::SweepCell{0, -1, position});
  for (auto _ : state) benchmark::DoNotOptimize(value_or_exit(m.patching->metric_with(*m.runner, {edit}), "cell"));
  state.counters["rows"] = kTokens - position;
}
BENCHMARK(BM_ResidCell)
    ->ArgName("position")
    ->Arg(0)
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(28)
    ->Arg(31)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

struct Gpt2 {
  std::shared_ptr<const am::TransformerModel> model;
  std::unique_ptr<am::TransformerRunner> runner;
  am::TransformerRun base;
};

Gpt2& gpt2() {
  static Gpt2 g = [] {
    Gpt2 m;
    const fs::path dir = attn::bench::bench_dir() / "gpt2-small";
    if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) attn::bench::make_gpt2(dir);
    m.model = attn::bench::load_or_exit<am::TransformerModel>(dir, "bench_interventions");
    m.runner = std::make_unique<am::TransformerRunner>(m.model);
    std::vector<int> ids(kGpt2Tokens);
    attn::SplitMix64 rng(99);  // bench_transformer's ids
    for (auto& id : ids) id = static_cast<int>(rng.uniform() * (m.model->config().vocab_size - 1));
    am::RunOptions capture;
    capture.capture = true;
    m.base = value_or_exit(m.runner->run_ids(ids, {}, capture), "captured run");
    return m;
  }();
  return g;
}

// Head 0 of layer L zeroed in the captured run; the manual time is until the layer in view arrives.
void BM_ClickRerun(benchmark::State& state) {
  Gpt2& g = gpt2();
  const int layers = g.model->config().layers;
  const int layer = std::min(static_cast<int>(state.range(0)), layers - 1);
  const int view = std::min(layer + 1, layers - 1);
  double total = 0;
  for (auto _ : state) {
    am::RunOptions o;
    o.edits = {am::Edit{am::Site::Z, layer, 0, -1, am::Edit::Kind::Zero, nullptr}};
    const auto start = Clock::now();
    double view_ms = -1;
    o.on_layer = [&](const attn::LayeredTrace& so_far) {
      if (view_ms < 0 && static_cast<int>(so_far.layers.size()) > view) view_ms = ms_since(start);
      return true;
    };
    const auto run = value_or_exit(g.runner->rerun(g.base, o), "ablated re-run");
    total += ms_since(start);
    if (static_cast<int>(run.attention.layers.size()) != layers || view_ms < 0) {
      state.SkipWithError("the re-run did not deliver every layer");
      return;
    }
    state.SetIterationTime(view_ms / 1e3);
  }
  state.counters["view_layer"] = view;
  state.counters["total_ms"] = benchmark::Counter(total, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ClickRerun)
    ->ArgName("layer")
    ->Arg(0)
    ->Arg(5)
    ->Arg(11)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(0.5);

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_interventions");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  g_args.smol = attn::bench::bench_dir() / "smollm2-135m-bf16";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--values=")) {
      g_args.values = arg.substr(std::string_view("--values=").size());
    } else if (arg.starts_with("--smol=")) {
      g_args.smol = arg.substr(std::string_view("--smol=").size());
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::AddCustomContext("attn_threads", std::to_string(threads->count));
  benchmark::AddCustomContext("attn_threads_source", threads->source);
  benchmark::AddCustomContext("smollm2", g_args.smol.string() +
                                             ", 32 tokens, corrupted at positions 3 and 17, "
                                             "logit-diff of tokens 1000 and 2000");
  benchmark::AddCustomContext("gpt2", "GPT-2 small shape, random weights, 128 tokens");
  if (cell_limit() > 0)
    benchmark::AddCustomContext("SMOKE", "ATTN_BENCH_CELLS=" + std::to_string(cell_limit()) +
                                             ": each sweep stops after its first cells; NOT the issue's figures");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
