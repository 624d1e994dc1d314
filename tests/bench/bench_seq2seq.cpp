// Decoding a 30-character date with beam 5, every hypothesis keeping its attention rows (the Alignment
// workbench's workload on every keystroke), on the shipped resources/models/date-bahdanau when it is
// there, else on a random model of its sizes (embedding 32, encoder 64 per direction, decoder 128,
// attention 64, the date vocabularies of tools/train/dates_data.py). The random model's </s> bias is
// pushed down so that every hypothesis runs to max_target_length (12 steps): the slowest decode the
// shipped model could do. Prints whether the decode is under the 5 ms target.
//
//   bench_seq2seq [--threads=N] [google-benchmark flags]
//   bench_seq2seq --model=FOLDER     # another seq2seq model folder
//   bench_seq2seq --random           # the random model even when the shipped one is there
#include "attn/io/safetensors.h"
#include "attn/models/seq2seq.h"
#include "attn/random.h"

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
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDate = "Wednesday, the 3rd of May 2026";  // 30 characters
static_assert(kDate.size() == 30);
constexpr int kBeam = 5;
constexpr double kTargetMs = 5.0;

attn::bench::ModelArgs g_model_args;
std::string g_model_name;

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i ? ", \"" : "\"";
    for (const char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

// A random model of date-bahdanau's sizes, written once per process: torch's default initialisation
// (uniform in +-1/sqrt(fan_in) for weights and biases, N(0, 1) for embeddings).
fs::path make_random_date_bahdanau() {
  const fs::path dir = attn::bench::bench_dir() / "seq2seq-date-bahdanau-random";
  fs::create_directories(dir);
  std::vector<std::string> source = {"<pad>", "<unk>"}, target = {"<pad>", "<s>", "</s>"};
  for (int c = 32; c < 127; ++c) source.emplace_back(1, static_cast<char>(c));
  for (const char c : std::string_view("0123456789-")) target.emplace_back(1, c);
  const std::int64_t vs = static_cast<std::int64_t>(source.size()), vt = static_cast<std::int64_t>(target.size());
  const std::int64_t e = 32, h = 64, d = 128, a = 64;
  attn::bench::write_text(dir / "config.json",
                          "{\"architectures\": [\"AttnScopeSeq2Seq\"], \"task\": \"date normalisation (random)\", "
                          "\"attention\": \"bahdanau\", \"score\": \"additive\", \"source_vocab\": " +
                              json_list(source) + ", \"target_vocab\": " + json_list(target) +
                              ", \"embedding_size\": 32, \"encoder_hidden\": 64, \"decoder_hidden\": 128, "
                              "\"attention_size\": 64, \"max_source_length\": 40, \"max_target_length\": 12}");
  attn::bench::WeightWriter w(20261122);
  const auto inv_sqrt = [](std::int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
  w.standard_normal("encoder.embedding.weight", {vs, e});
  for (const std::string sfx : {"_l0", "_l0_reverse"}) {
    w.uniform("encoder.gru.weight_ih" + sfx, {3 * h, e}, inv_sqrt(h));
    w.uniform("encoder.gru.weight_hh" + sfx, {3 * h, h}, inv_sqrt(h));
    w.uniform("encoder.gru.bias_ih" + sfx, {3 * h}, inv_sqrt(h));
    w.uniform("encoder.gru.bias_hh" + sfx, {3 * h}, inv_sqrt(h));
  }
  w.uniform("decoder.init.weight", {d, 2 * h}, inv_sqrt(2 * h));
  w.uniform("decoder.init.bias", {d}, inv_sqrt(2 * h));
  w.standard_normal("decoder.embedding.weight", {vt, e});
  w.uniform("decoder.gru.weight_ih", {3 * d, e + 2 * h}, inv_sqrt(d));
  w.uniform("decoder.gru.weight_hh", {3 * d, d}, inv_sqrt(d));
  w.uniform("decoder.gru.bias_ih", {3 * d}, inv_sqrt(d));
  w.uniform("decoder.gru.bias_hh", {3 * d}, inv_sqrt(d));
  w.uniform("attention.W.weight", {a, d}, inv_sqrt(d));
  w.uniform("attention.U.weight", {a, 2 * h}, inv_sqrt(2 * h));
  w.uniform("attention.v.weight", {1, a}, inv_sqrt(a));
  w.uniform("decoder.out.weight", {vt, d + 2 * h + e}, inv_sqrt(d + 2 * h + e));
  w.uniform("decoder.out.bias", {vt}, inv_sqrt(d + 2 * h + e));
  w.set("decoder.out.bias", 2, -30.0f);  // </s> never wins: every hypothesis runs all 12 steps
  w.write_or_exit(dir / "model.safetensors", "bench_seq2seq");
  return dir;
}

std::shared_ptr<const attn::models::Seq2SeqModel> model() {
  static std::shared_ptr<const attn::models::Seq2SeqModel> cached;
  if (cached) return cached;
  bool random = false;
  const fs::path dir =
      attn::bench::model_folder(g_model_args, fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "date-bahdanau",
                                make_random_date_bahdanau, random);
  cached = attn::bench::load_or_exit<attn::models::Seq2SeqModel>(dir, "bench_seq2seq");
  g_model_name = dir.string() + " (" + cached->description() + ")";
  return cached;
}

void BM_DateBeam5(benchmark::State& state) {
  attn::models::Seq2SeqRunner session(model());
  attn::models::DecodeOptions options;
  options.beam = kBeam;
  // One checked run: k hypotheses, each with one attention row per id, every row a distribution.
  auto run = session.run(kDate, options);
  if (!run) {
    state.SkipWithError(run.error().message().c_str());
    return;
  }
  std::size_t steps = 0;
  for (const auto& h : run->hypotheses) {
    steps = std::max(steps, h.ids.size());
    if (h.attention.rows() != static_cast<attn::Index>(h.ids.size()) || h.attention.cols() != 30 ||
        ((h.attention.rowwise().sum().array() - 1.0f).abs() > 1e-4f).any()) {
      state.SkipWithError("a hypothesis' attention rows are not distributions over the 30 characters");
      return;
    }
  }
  for (auto _ : state) {
    auto r = session.run(kDate, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["hypotheses"] = static_cast<double>(run->hypotheses.size());
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_DateBeam5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DateGreedy(benchmark::State& state) {
  attn::models::Seq2SeqRunner session(model());
  for (auto _ : state) {
    auto r = session.run(kDate);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_DateGreedy)->Unit(benchmark::kMillisecond)->UseRealTime();

// The verdict: the median of 200 timed decodes after 20 warm-up ones.
void verdict() {
  attn::models::Seq2SeqRunner session(model());
  attn::models::DecodeOptions options;
  options.beam = kBeam;
  for (int i = 0; i < 20; ++i) benchmark::DoNotOptimize(session.run(kDate, options));
  std::vector<double> ms;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = session.run(kDate, options);
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(r);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], p95 = ms[ms.size() * 95 / 100];
  std::printf("\nseq2seq decode: \"%.*s\" (30 characters), beam %d, all attention maps kept\n",
              static_cast<int>(kDate.size()), kDate.data(), kBeam);
  std::printf("  model:  %s\n", g_model_name.c_str());
  std::printf("  median: %.3f ms, p95 %.3f ms, min %.3f ms (200 decodes)\n", median, p95, ms.front());
  std::printf("  target: < %.0f ms: %s\n", kTargetMs, median < kTargetMs ? "MET" : "NOT MET");
}

}  // namespace

int main(int argc, char** argv) {
  const auto threads = attn::bench::take_threads(argc, argv, "bench_seq2seq");
  if (!threads) return 2;
  omp_set_num_threads(threads->count);
  g_model_args = attn::bench::take_model_args(argc, argv);
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
