// The applications of attention trained here, each on a typical input with every map kept (issue "The applications
// of attention"): the word-by-word entailment model on a 11-word premise and a 12-word hypothesis (the shipped
// resources/models/entailment-wbw, or --model=FOLDER), and ConvS2S on a date with a beam of 5, every decoder layer's
// map of every hypothesis kept (resources/models/date-convs2s), and the headline model on a 31-word news sentence with
// a beam of 5 (resources/models/headlines-gru), and the speech recogniser on a 2-second utterance with a beam of 5
// (resources/models/speech-location on the log-mel frames of tests/data/audio/apples-2s.wav, written by `attnscope-cli
// speech --text "seven green apples on the table" --voice en-us+m3 --rate 140 --noise 0.002 --seed 3 --wav-out`), and
// the whole of a typed sentence: espeak-ng saying it, the log-mel frames and the beam of 5 (the 150 ms target). Prints
// each one's median of 200 runs and its target.
//
//   bench_applications [--threads=N] [--model=FOLDER] [google-benchmark flags]
//   tests/bench/run_applications_vs_torch.sh <build-dir>   # the same pair in torch, in the same run
#include "attn/audio/audio.h"
#include "attn/models/entailment.h"
#include "attn/models/seq2seq.h"

#include "bench_models.h"
#include "bench_threads.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
// torch_applications_peer.py's DATE and SENTENCE; change both together.
constexpr std::string_view kDate = "Saturday, 21 November 2026";
constexpr std::string_view kSentence =
    "Voters in Dublin elected Grace Kim as their new mayor on Sunday, ending 12 years of the old council, in a "
    "decision that was welcomed by local business leaders and residents.";
// torch_applications_peer.py's WAV; the typed sentence is said by espeak-ng in the engine alone.
constexpr std::string_view kSpeechWav = "tests/data/audio/apples-2s.wav";
constexpr std::string_view kSaid = "seven green apples on the table";
constexpr double kTargetMs = 20.0, kSayTargetMs = 150.0;

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

std::shared_ptr<const attn::models::Seq2SeqModel> seq2seq(const char* name) {
  return attn::bench::load_or_exit<attn::models::Seq2SeqModel>(
      fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / name, "bench_applications");
}
std::shared_ptr<const attn::models::Seq2SeqModel> convs2s() {
  static const auto cached = seq2seq("date-convs2s");
  return cached;
}
std::shared_ptr<const attn::models::Seq2SeqModel> headlines() {
  static const auto cached = seq2seq("headlines-gru");
  return cached;
}

std::shared_ptr<const attn::models::Seq2SeqModel> speech() {
  static const auto cached = seq2seq("speech-location");
  return cached;
}
const attn::Matrix& speech_frames() {
  static const attn::Matrix cached = [] {
    auto audio = attn::audio::read_audio(fs::path(ATTN_SOURCE_DIR) / kSpeechWav);
    if (!audio) {
      std::fprintf(stderr, "bench_applications: %s\n", audio.error().message().c_str());
      std::exit(2);
    }
    return attn::audio::log_mel(audio->samples);
  }();
  return cached;
}

attn::models::DecodeOptions beam5() {
  attn::models::DecodeOptions options;
  options.beam = 5;
  return options;
}

void BM_ConvS2SDateBeam5(benchmark::State& state) {
  attn::models::Seq2SeqRunner runner(convs2s());
  // One checked run: five hypotheses, each with every decoder layer's rows over the 26 characters.
  auto run = runner.run(kDate, beam5());
  const auto layers = static_cast<std::size_t>(convs2s()->config().decoder_layers);
  if (!run || run->hypotheses.size() != 5 || run->hypotheses[0].layers.size() != layers ||
      run->hypotheses[0].layers[0].cols() != static_cast<attn::Index>(kDate.size())) {
    state.SkipWithError("the ConvS2S run is not 5 hypotheses with every decoder layer's map");
    return;
  }
  for (auto _ : state) {
    auto r = runner.run(kDate, beam5());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ConvS2SDateBeam5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HeadlineBeam5(benchmark::State& state) {
  attn::models::Seq2SeqRunner runner(headlines());
  // One checked run: 31 source words, five hypotheses, each with its attention rows.
  auto run = runner.run(kSentence, beam5());
  if (!run || run->source.size() != 31 || run->hypotheses.size() != 5 || run->hypotheses[0].attention.cols() != 31) {
    state.SkipWithError("the headline run is not 5 hypotheses over 31 source words");
    return;
  }
  for (auto _ : state) {
    auto r = runner.run(kSentence, beam5());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_HeadlineBeam5)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SpeechBeam5(benchmark::State& state) {
  attn::models::Seq2SeqRunner runner(speech());
  auto run = runner.run_frames(speech_frames(), beam5());
  if (!run || run->hypotheses.size() != 5 || run->hypotheses[0].attention.cols() != speech_frames().rows() / 3) {
    state.SkipWithError("the speech run is not 5 hypotheses over the utterance's encoder steps");
    return;
  }
  for (auto _ : state) {
    auto r = runner.run_frames(speech_frames(), beam5());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SpeechBeam5)->Unit(benchmark::kMillisecond)->UseRealTime();

// A typed sentence as the Alignment tab runs it: said, its log-mel frames, recognised with a beam of 5.
std::string say_and_recognise(attn::models::Seq2SeqRunner& runner) {
  auto said = attn::audio::synthesise(kSaid);
  if (!said) return "(failed: " + said.error().message() + ")";
  auto r = runner.run_frames(attn::audio::log_mel(said->audio.samples), beam5());
  return r ? r->hypotheses.front().text : std::string("(failed)");
}

void BM_SaySentenceAndRecognise(benchmark::State& state) {
  attn::models::Seq2SeqRunner runner(speech());
  for (auto _ : state) benchmark::DoNotOptimize(say_and_recognise(runner));
}
BENCHMARK(BM_SaySentenceAndRecognise)->Unit(benchmark::kMillisecond)->UseRealTime();

// The median of 200 timed runs of `once` after 20 warm-up ones, with the answer of the last.
template <typename Once>
void verdict(const char* name, const std::string& what, const std::string& model_name, Once once,
             double target_ms = kTargetMs) {
  for (int i = 0; i < 20; ++i) once();
  std::vector<double> ms;
  std::string answer;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string a = once();
    const auto t1 = std::chrono::steady_clock::now();
    answer = std::move(a);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("\n%s: %s\n", name, what.c_str());
  std::printf("  model:  %s\n", model_name.c_str());
  std::printf("  answer: %s\n", answer.c_str());
  std::printf("  median: %.3f ms, p95 %.3f ms, min %.3f ms (200 runs)\n", median, ms[ms.size() * 95 / 100], ms.front());
  std::printf("  target: < %.0f ms: %s\n", target_ms, median < target_ms ? "MET" : "NOT MET");
}

void verdicts() {
  attn::models::EntailmentRunner pair(model());
  verdict("entailment",
          "\"" + std::string(kPremise) + "\" => \"" + std::string(kHypothesis) +
              "\" (11 and 12 words), every attention row kept",
          g_model_name, [&] {
            auto r = pair.run(kPremise, kHypothesis);
            return r ? model()->config().labels[static_cast<std::size_t>(r->predicted)] : std::string("(failed)");
          });
  attn::models::Seq2SeqRunner date(convs2s());
  verdict("convs2s", "\"" + std::string(kDate) + "\", beam 5, every decoder layer's map of every hypothesis kept",
          "resources/models/date-convs2s (" + convs2s()->description() + ")", [&] {
            auto r = date.run(kDate, beam5());
            return r ? r->hypotheses.front().text : std::string("(failed)");
          });
  attn::models::Seq2SeqRunner sentence(headlines());
  verdict("headlines", "\"" + std::string(kSentence) + "\" (31 words), beam 5, every hypothesis' attention kept",
          "resources/models/headlines-gru (" + headlines()->description() + ")", [&] {
            auto r = sentence.run(kSentence, beam5());
            return r ? r->hypotheses.front().text : std::string("(failed)");
          });
  attn::models::Seq2SeqRunner recogniser(speech());
  const double seconds = double(speech_frames().rows()) / 100.0;
  verdict("speech",
          std::string(kSpeechWav) + " (" + std::to_string(seconds).substr(0, 4) + " s of log-mel frames), beam 5, " +
              "every hypothesis' attention kept",
          "resources/models/speech-location (" + speech()->description() + ")", [&] {
            auto r = recogniser.run_frames(speech_frames(), beam5());
            return r ? r->hypotheses.front().text : std::string("(failed)");
          });
  verdict(
      "say", "\"" + std::string(kSaid) + "\" said by espeak-ng (en-us), its log-mel frames, recognised with beam 5",
      "resources/models/speech-location", [&] { return say_and_recognise(recogniser); }, kSayTargetMs);
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
  convs2s();
  headlines();
  speech();
  speech_frames();
  benchmark::AddCustomContext("model", g_model_name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  verdicts();
  return 0;
}
