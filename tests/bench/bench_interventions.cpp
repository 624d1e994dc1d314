// Interventions (issue 43, "Speed"): the sweeps of attn/models/intervention.h and one ablated re-run after a click,
// timed on random checkpoints of two real shapes. Not a Google Benchmark program: each case is one long loop (a
// sweep of hundreds of re-runs), timed whole, `--repetitions` times; the median and the range are printed.
//
//   SmolLM2-135M shape (30 layers x 9 heads, 3 key/value heads, d 576; the BF16 checkpoint `bench_decoder --prepare`
//   writes), 32 tokens: the clean input is token i = (7919 i + 13) mod vocab (bench_decoder's ids), the corrupted one
//   the same with positions 3 and 17 changed (id + 4242 mod vocab); the metric is the logit difference of tokens
//   1000 (answer) and 2000 (wrong) at the last position.
//     ablation   for each of the 270 heads, a zero ablation of that head alone: TransformerRunner::rerun of the
//                clean run (captured) with one Edit{Z, l, h, Zero}, its last position's logit difference
//     heads      Patching::sweep(Sweep::Heads): 270 cells, each head's z taken from the clean run into the corrupted
//     resid      Patching::sweep(Sweep::LayersPositions): 30 x 32 = 960 cells, the residual stream entering layer l
//                at position p taken from the clean run
//   GPT-2 small shape (12 layers x 12 heads, d 768; bench_models.h's make_gpt2), 128 tokens:
//     click L    one ablated re-run after a click: the captured run re-run with head 0 of layer L zeroed (L = 0, 5,
//                11); `view` is the time until on_layer delivers the layer in view (L + 1, the first whose maps the
//                ablation changes; the last layer for L = 11), `total` the whole re-run. Target: under 100 ms.
//
// torch_interventions_peer.py runs the same three loops TransformerLens's way (a full forward with hooks per cell)
// on the same SmolLM2 file; run_interventions_vs_torch.sh runs both and prints the ratios.
//
//   bench_interventions [--threads=N] [--repetitions=R] [--cells=N] [--values=FILE] [--smol=DIR]
//     --cells=N     SMOKE RUNS ONLY: each sweep stops after its first N cells (every output says so)
//     --values=FILE the first repetition's values of each sweep as JSON (the peer compares its own with them)
//
// Output: human-readable lines, and one `RESULT <case> <median ms> <min ms> <max ms> <cells>` line per case for the
// runner.
#include "attn/models/intervention.h"
#include "attn/models/transformer.h"

#include "bench_models.h"
#include "bench_threads.h"

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
#include <memory>
#include <string>
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
  int repetitions = 3;
  int cells = 0;  // 0: every cell
  std::string values;
  fs::path smol;
};

template <class T>
T value_or_exit(attn::Result<T> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "bench_interventions: %s: %s\n", what, r.error().message().c_str());
    std::exit(1);
  }
  return std::move(*r);
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

struct Timing {
  std::vector<double> ms;
  int cells = 0;
  double median() const {
    auto v = ms;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
};

void report(const char* name, const char* what, const Timing& t) {
  const auto [lo, hi] = std::minmax_element(t.ms.begin(), t.ms.end());
  std::printf("%-10s %s: median %.1f ms (%.1f..%.1f over %zu), %d cells, %.2f ms per cell\n", name, what, t.median(),
              *lo, *hi, t.ms.size(), t.cells, t.median() / std::max(1, t.cells));
  std::printf("RESULT %s %.3f %.3f %.3f %d\n", name, t.median(), *lo, *hi, t.cells);
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

// Zero ablation of each head alone, the logit difference of each re-run (head-major within a layer).
std::vector<double> ablation_sweep(am::TransformerRunner& runner, const am::TransformerRun& base,
                                   const am::MetricSpec& metric, const attn::RowVector& clean_row, int limit) {
  const auto& c = runner.model().config();
  std::vector<double> values;
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < c.heads; ++h) {
      if (limit > 0 && static_cast<int>(values.size()) >= limit) return values;
      am::RunOptions o;
      o.top_k = 0;
      o.edits = {am::Edit{am::Site::Z, l, h, -1, am::Edit::Kind::Zero, nullptr}};
      const auto run = value_or_exit(runner.rerun(base, o), "ablated re-run");
      const auto row = value_or_exit(am::measured_logits(run, -1), "measured logits");
      values.push_back(am::metric_value(metric, row, clean_row));
    }
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

int smol_cases(const Args& args) {
  if (!fs::exists(args.smol / "model.safetensors")) {
    std::fprintf(stderr, "bench_interventions: %s not found; write it with `bench_decoder --prepare`\n",
                 (args.smol / "model.safetensors").c_str());
    return 2;
  }
  const auto model = attn::bench::load_or_exit<am::TransformerModel>(args.smol, "bench_interventions");
  const auto& c = model->config();
  std::printf("model:    %s: %d layers x %d heads (%d key/value heads), d %d, vocab %d, random BF16 weights\n",
              args.smol.c_str(), c.layers, c.heads, c.decoder.kv_heads, c.hidden, c.vocab_size);
  std::printf(
      "input:    %d tokens, token i = (7919 i + 13) mod vocab; corrupted at positions 3 and 17; metric "
      "logit-diff of tokens %d and %d at the last position\n",
      kTokens, kAnswer, kWrong);
  am::TransformerRunner runner(model);
  am::RunOptions capture;
  capture.capture = true;
  capture.top_k = 0;
  const auto clean_in = clean_ids(kTokens, c.vocab_size);
  const auto start = Clock::now();
  auto clean = value_or_exit(runner.run_ids(clean_in, {}, capture), "clean run");
  auto corrupt = value_or_exit(runner.run_ids(corrupted_ids(clean_in, c.vocab_size), {}, capture), "corrupted run");
  std::printf("setup:    the clean and the corrupted runs with capture: %.1f ms (not in the sweeps' times)\n",
              ms_since(start));
  const am::MetricSpec metric{am::Metric::LogitDiff, kAnswer, kWrong};
  const auto clean_row = value_or_exit(am::measured_logits(clean, -1), "clean logits");
  const am::TransformerRun clean_base = clean;  // the ablation's base (Patching::make takes the runs)
  const auto patching = value_or_exit(am::Patching::make(std::move(clean), std::move(corrupt), metric, -1), "patching");
  std::printf("metric:   clean %.6f, corrupted %.6f\n", patching.clean_metric(), patching.corrupt_metric());

  struct Case {
    const char* name;
    const char* what;
    std::function<std::vector<double>()> run;
  };
  const Case cases[] = {
      {"ablation", "zero ablation of each head alone (rerun per head)",
       [&] { return ablation_sweep(runner, clean_base, metric, clean_row, args.cells); }},
      {"heads", "Patching::sweep(Sweep::Heads)",
       [&] { return patching_sweep(runner, patching, am::Sweep::Heads, args.cells); }},
      {"resid", "Patching::sweep(Sweep::LayersPositions)",
       [&] { return patching_sweep(runner, patching, am::Sweep::LayersPositions, args.cells); }},
  };
  std::vector<std::vector<double>> first(std::size(cases));
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    Timing t;
    for (int r = 0; r < args.repetitions; ++r) {
      const auto t0 = Clock::now();
      auto values = cases[k].run();
      t.ms.push_back(ms_since(t0));
      t.cells = static_cast<int>(values.size());
      if (r == 0) first[k] = std::move(values);
    }
    report(cases[k].name, cases[k].what, t);
  }
  if (!args.values.empty()) {
    std::ofstream out(args.values);
    char buf[96];
    std::snprintf(buf, sizeof buf, "  \"clean_metric\": %.9g,\n  \"corrupt_metric\": %.9g,\n", patching.clean_metric(),
                  patching.corrupt_metric());
    out << "{\n" << buf;
    for (std::size_t k = 0; k < std::size(cases); ++k)
      write_values(out, cases[k].name, first[k], k + 1 == std::size(cases));
    out << "}\n";
  }
  return 0;
}

// One ablated re-run after a click on GPT-2 small's shape: head 0 of layer L zeroed in the captured run.
int click_cases(const Args& args) {
  const fs::path dir = attn::bench::bench_dir() / "gpt2-small";
  if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) attn::bench::make_gpt2(dir);
  const auto model = attn::bench::load_or_exit<am::TransformerModel>(dir, "bench_interventions");
  const auto& c = model->config();
  std::printf("model:    %s: %d layers x %d heads, d %d, random weights; %d tokens (bench_transformer's ids)\n",
              dir.c_str(), c.layers, c.heads, c.hidden, kGpt2Tokens);
  std::vector<int> ids(kGpt2Tokens);
  attn::SplitMix64 rng(99);
  for (auto& id : ids) id = static_cast<int>(rng.uniform() * (c.vocab_size - 1));
  am::TransformerRunner runner(model);
  am::RunOptions capture;
  capture.capture = true;
  const auto t0 = Clock::now();
  const auto base = value_or_exit(runner.run_ids(ids, {}, capture), "captured run");
  std::printf("setup:    the captured run: %.1f ms (the run the click starts from; not timed below)\n", ms_since(t0));
  const int reps = std::max(5, args.repetitions * 3);
  for (const int layer : {0, c.layers / 2 - 1, c.layers - 1}) {
    const int view = std::min(layer + 1, c.layers - 1);
    Timing total, in_view;
    for (int r = 0; r < reps; ++r) {
      am::RunOptions o;
      o.edits = {am::Edit{am::Site::Z, layer, 0, -1, am::Edit::Kind::Zero, nullptr}};
      const auto start = Clock::now();
      double view_ms = -1;
      o.on_layer = [&](const attn::LayeredTrace& so_far) {
        if (view_ms < 0 && static_cast<int>(so_far.layers.size()) > view) view_ms = ms_since(start);
        return true;
      };
      const auto run = value_or_exit(runner.rerun(base, o), "ablated re-run");
      total.ms.push_back(ms_since(start));
      in_view.ms.push_back(view_ms);
      if (static_cast<int>(run.attention.layers.size()) != c.layers) {
        std::fprintf(stderr, "bench_interventions: the re-run holds %zu layers, not %d\n", run.attention.layers.size(),
                     c.layers);
        return 1;
      }
    }
    total.cells = in_view.cells = 1;
    const std::string name = "click_L" + std::to_string(layer);
    std::printf("%s: head %d.0 zeroed; layer in view %d\n", name.c_str(), layer, view);
    report((name + "_view").c_str(), "until on_layer delivers the layer in view", in_view);
    report((name + "_total").c_str(), "the whole re-run", total);
    std::printf("           target: under 100 ms: %s\n", total.median() < 100 ? "MET" : "NOT MET");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_interventions");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  Args args;
  args.smol = attn::bench::bench_dir() / "smollm2-135m-bf16";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto number = [&](std::string_view prefix, int& out) {
      if (!attn::bench::parse_thread_count(arg.substr(prefix.size()), out)) {
        std::fprintf(stderr, "bench_interventions: %.*s needs a positive integer\n", static_cast<int>(prefix.size()),
                     prefix.data());
        std::exit(2);
      }
    };
    if (arg.starts_with("--repetitions=")) {
      number("--repetitions=", args.repetitions);
    } else if (arg.starts_with("--cells=")) {
      number("--cells=", args.cells);
    } else if (arg.starts_with("--values=")) {
      args.values = arg.substr(std::string_view("--values=").size());
    } else if (arg.starts_with("--smol=")) {
      args.smol = arg.substr(std::string_view("--smol=").size());
    } else {
      std::fprintf(stderr,
                   "usage: bench_interventions [--threads=N] [--repetitions=R] [--cells=N] [--values=FILE] "
                   "[--smol=DIR]\n");
      return 2;
    }
  }
  std::printf("threads:  %d (%s), omp_get_max_threads() %d\n", threads->count, threads->source.c_str(),
              omp_get_max_threads());
  if (args.cells > 0)
    std::printf(
        "SMOKE:    --cells=%d: each sweep stops after its first %d cells; these times are NOT the issue's "
        "figures\n",
        args.cells, args.cells);
  if (const int rc = smol_cases(args); rc != 0) return rc;
  return click_cases(args);
}
