#include "cli/speech_cli.h"

#include "attn/io/read_file.h"
#include "attn/io/safetensors.h"

#include <QDir>
#include <QElapsedTimer>
#include <QObject>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using json = nlohmann::json;

struct Utterance {
  audio::Audio audio;
  std::vector<audio::Phoneme> phonemes;  // empty for a file
  Matrix features;
};

void addNoise(std::vector<float>& samples, double deviation, unsigned seed) {
  if (deviation <= 0.0) return;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, float(deviation));
  for (float& s : samples) s += normal(rng);
}

// A noise level as the option and a batch line give it: a finite number from 0 to 1 (NaN made an all -32768 WAV).
std::optional<QString> noiseProblem(double noise) {
  if (std::isfinite(noise) && noise >= 0.0 && noise <= 1.0) return std::nullopt;
  return u"noise %1: expected a finite number from 0 to 1"_s.arg(noise);
}

// A batch line's optional fields, each of its type and range (nlohmann's value() threw on a wrong type, and the
// exception ended the program). Absent fields keep their defaults.
std::optional<QString> batchFields(const json& spec, audio::Voice& voice, double& noise, unsigned& seed) {
  if (const auto it = spec.find("voice"); it != spec.end()) {
    if (!it->is_string()) return u"\"voice\" must be a string (an espeak-ng voice)"_s;
    voice.name = it->get<std::string>();
  }
  const auto whole = [&](const char* key, std::int64_t min, std::int64_t max,
                         std::int64_t& out) -> std::optional<QString> {
    const auto it = spec.find(key);
    if (it == spec.end()) return std::nullopt;
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(max)) ||
        (!it->is_number_unsigned() && (it->get<std::int64_t>() < min || it->get<std::int64_t>() > max)))
      return u"\"%1\" must be a whole number from %2 to %3"_s.arg(QString::fromLatin1(key)).arg(min).arg(max);
    out = it->get<std::int64_t>();
    return std::nullopt;
  };
  std::int64_t rate = voice.words_per_minute, pitch = voice.pitch, seedValue = 0;
  if (auto p = whole("rate", 80, 450, rate)) return p;
  if (auto p = whole("pitch", 0, 99, pitch)) return p;
  if (auto p = whole("seed", 0, std::numeric_limits<unsigned>::max(), seedValue)) return p;
  voice.words_per_minute = int(rate);
  voice.pitch = int(pitch);
  seed = unsigned(seedValue);
  if (const auto it = spec.find("noise"); it != spec.end()) {
    if (!it->is_number()) return u"\"noise\" must be a number from 0 to 1"_s;
    noise = it->get<double>();
    if (auto p = noiseProblem(noise)) return u"\"noise\": "_s + *p;
  }
  return std::nullopt;
}

json phonemesJson(const std::vector<audio::Phoneme>& phonemes) {
  json list = json::array();
  for (const auto& p : phonemes)
    list.push_back({{"phoneme", p.name}, {"start", p.start}, {"end", p.end}, {"text", {p.text.begin, p.text.end}}});
  return list;
}

std::expected<Utterance, RenderFailure> say(const std::string& text, const audio::Voice& voice, double noise,
                                            unsigned seed) {
  auto speech = audio::synthesise(text, voice);
  if (!speech) return std::unexpected(inputFailure(speech.error()));
  Utterance u{std::move(speech->audio), std::move(speech->phonemes), {}};
  addNoise(u.audio.samples, noise, seed);
  u.features = audio::log_mel(u.audio.samples);
  return u;
}

// A batch's totals. Each line is capped by synthesise() (4,096 bytes, 10 minutes), but 100,000 lines of 4 kB
// would still run for days and hold terabytes of frames: the lines and their text are counted over the whole file
// before espeak-ng says the first, and the speech (which only the synthesis knows: each line has its own rate) as
// each line is said. Two hours of speech are 720,000 frames of 80 bands (230 MB of features held for the
// safetensors file, about a minute of espeak-ng); 128 KiB of text is about that at its default rate of 175 words a
// minute (4,000 bytes made 209 s; at 80 words a minute 438 s, which the speech's own cap stops).
constexpr int kMaxBatchLines = 10000;
constexpr std::int64_t kMaxBatchTextBytes = std::int64_t(128) << 10;
constexpr double kMaxBatchSeconds = 2 * 3600.0;

QString commas(std::int64_t n) { return QString::fromStdString(with_commas(static_cast<long long>(n))); }

struct BatchLine {
  int number = 0;  // in the file, counting blank lines
  json text;       // the "text" string, written back as it came
  audio::Voice voice;
  double noise = 0.0;
  unsigned seed = 0;
};

// Every line parsed and checked, and the batch's totals, before anything is said.
std::expected<std::vector<BatchLine>, RenderFailure> readBatch(const SpeechJob& job, const std::string& lines) {
  std::vector<BatchLine> batch;
  std::int64_t bytes = 0;
  std::istringstream in(lines);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto where = [&](const QString& what) {
      return std::unexpected(inputFailure(u"%1:%2: %3"_s.arg(job.batch).arg(number).arg(what)));
    };
    json spec;
    try {
      spec = json::parse(line);
    } catch (const json::exception& e) {
      return where(QString::fromUtf8(e.what()));
    }
    if (!spec.is_object() || !spec.contains("text") || !spec["text"].is_string())
      return where(u"expected an object with a \"text\" string"_s);
    BatchLine b;
    b.number = number;
    b.text = spec["text"];
    if (auto problem = batchFields(spec, b.voice, b.noise, b.seed)) return where(*problem);
    if (batch.size() == std::size_t(kMaxBatchLines))
      return where(u"this is utterance %1 of the batch, over the %2 a batch says"_s.arg(commas(kMaxBatchLines + 1))
                       .arg(commas(kMaxBatchLines)));
    bytes += std::int64_t(b.text.get_ref<const std::string&>().size());
    if (bytes > kMaxBatchTextBytes)
      return where(
          u"the batch's text comes to %1 bytes by this line, over the %2 bytes a batch says (about two hours "
          u"of speech)"_s.arg(commas(bytes))
              .arg(commas(kMaxBatchTextBytes)));
    batch.push_back(std::move(b));
  }
  return batch;
}

std::expected<RenderReport, RenderFailure> runBatch(const SpeechJob& job) {
  auto lines = io::read_file(job.batch.toStdString(), std::int64_t(256) << 20, "a JSON-lines file");
  if (!lines) return std::unexpected(inputFailure(lines.error()));
  auto batch = readBatch(job, *lines);
  if (!batch) return std::unexpected(batch.error());
  if (!QDir().mkpath(job.outDir)) return std::unexpected(inputFailure(QObject::tr("cannot make %1").arg(job.outDir)));
  std::vector<float> frames;
  std::vector<std::int64_t> starts{0};
  std::string manifest;
  double seconds = 0.0;
  for (const BatchLine& b : *batch) {
    const auto where = [&](const QString& what) {
      return inputFailure(u"%1:%2: %3"_s.arg(job.batch).arg(b.number).arg(what));
    };
    auto u = say(b.text.get_ref<const std::string&>(), b.voice, b.noise, b.seed);
    if (!u) return std::unexpected(where(u.error().message));
    seconds += u->audio.seconds();
    if (seconds > kMaxBatchSeconds)
      return std::unexpected(
          where(u"the batch's speech comes to %1 s by this line, over the %2 s (two hours) a batch makes"_s
                    .arg(seconds, 0, 'f', 1)
                    .arg(commas(std::int64_t(kMaxBatchSeconds)))));
    frames.insert(frames.end(), u->features.data(), u->features.data() + u->features.size());
    starts.push_back(starts.back() + u->features.rows());
    json record{{"text", b.text},
                {"voice", b.voice.name},
                {"rate", b.voice.words_per_minute},
                {"pitch", b.voice.pitch},
                {"frames", u->features.rows()},
                {"seconds", u->audio.seconds()},
                {"phonemes", phonemesJson(u->phonemes)}};
    manifest += record.dump() + '\n';
  }
  const int bands = audio::MelSettings{}.bands;
  const std::int64_t total = starts.back();
  const auto* startBytes = reinterpret_cast<const std::byte*>(starts.data());
  std::vector<io::TensorData> tensors{
      io::f32_tensor("features", {total, bands}, frames),
      {"starts", io::DType::I64, {std::int64_t(starts.size())}, {startBytes, starts.size() * sizeof(std::int64_t)}}};
  const QString features = QDir(job.outDir).filePath(u"features.safetensors"_s);
  const QString utterances = QDir(job.outDir).filePath(u"utterances.jsonl"_s);
  if (auto written = io::write_safetensors(features.toStdString(), tensors); !written)
    return std::unexpected(outputFailure(written.error()));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(manifest.data());
  if (auto written = io::write_file(utterances.toStdString(), {bytes, manifest.size()}); !written)
    return std::unexpected(outputFailure(written.error()));
  RenderReport report;
  report.summary = u"speech: %1 utterances, %2 frames of %3 bands"_s.arg(starts.size() - 1).arg(total).arg(bands);
  report.written = {features, utterances};
  return report;
}

}  // namespace

std::expected<RenderReport, RenderFailure> runSpeech(const SpeechJob& job) {
  if (!job.batch.isEmpty()) {
    if (job.outDir.isEmpty()) return std::unexpected(usageFailure(QObject::tr("speech: --batch needs --out-dir DIR")));
    return runBatch(job);
  }
  if (job.hasText == !job.wavIn.isEmpty())
    return std::unexpected(usageFailure(QObject::tr("speech: give --text \"...\" or --wav FILE (one of them)")));
  if (job.wavOut.isEmpty() && job.jsonOut.isEmpty())
    return std::unexpected(usageFailure(QObject::tr("speech: give --wav-out FILE and/or --json FILE")));
  if (auto problem = noiseProblem(job.noise)) return std::unexpected(usageFailure(u"speech: "_s + *problem));
  QElapsedTimer timer;
  timer.start();
  Utterance u;
  if (job.hasText) {
    auto said = say(job.text, job.voice, job.noise, job.seed);
    if (!said) return std::unexpected(said.error());
    u = std::move(*said);
  } else {
    auto read = audio::read_audio(job.wavIn.toStdString());
    if (!read) return std::unexpected(inputFailure(read.error()));
    u.audio = std::move(*read);
    addNoise(u.audio.samples, job.noise, job.seed);
    u.features = audio::log_mel(u.audio.samples);
  }
  RenderReport report;
  report.summary = u"speech: %1 s, %2 frames, %3 phonemes · %4 ms"_s.arg(u.audio.seconds(), 0, 'f', 2)
                       .arg(u.features.rows())
                       .arg(u.phonemes.size())
                       .arg(double(timer.nsecsElapsed()) / 1e6, 0, 'f', 1);
  for (const auto& w : u.audio.warnings) report.warnings << QString::fromStdString(w);
  if (!job.wavOut.isEmpty()) {
    if (auto written = audio::write_wav(job.wavOut.toStdString(), u.audio.samples); !written)
      return std::unexpected(outputFailure(written.error()));
    report.written << job.wavOut;
  }
  if (!job.jsonOut.isEmpty()) {
    json out{{"sample_rate", audio::kSampleRate},
             {"seconds", u.audio.seconds()},
             {"phonemes", phonemesJson(u.phonemes)},
             {"warnings", u.audio.warnings},
             {"log_mel", json::array()}};
    for (Index t = 0; t < u.features.rows(); ++t) {
      std::vector<float> row(u.features.row(t).data(), u.features.row(t).data() + u.features.cols());
      out["log_mel"].push_back(row);
    }
    const std::string text = out.dump() + '\n';
    if (auto written = io::write_file(job.jsonOut.toStdString(),
                                      {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
        !written)
      return std::unexpected(outputFailure(written.error()));
    report.written << job.jsonOut;
  }
  return report;
}

}  // namespace attn::ui
