// Speech (engine/audio and the speech seq2seq model, tools/train/MODELS.md section 6): audio files and their bad
// cases (not audio, empty, longer than ten minutes, another rate, six channels), the log-mel spectrogram against
// torch's (tests/data/audio/fox-f2.logmel.safetensors, tools/parity/make_speech_fixtures.py), espeak-ng's synthesis
// with each phoneme's time span, and the speech model's config and run_frames refusals. The speech model's numbers
// against torch are the parity suite's (random-speech, speech-location).
#include "attn/audio/audio.h"
#include "attn/io/safetensors.h"
#include "attn/models/seq2seq.h"
#include "model_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace attn::audio {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kData = fs::path(ATTN_TEST_DATA_DIR);

// A 16-bit PCM WAV file's bytes: `frames` frames of `channels` channels at `rate`, channel c of frame i holding
// value(i, c).
template <class Value>
std::vector<unsigned char> wav_bytes(int rate, int channels, std::int64_t frames, Value value) {
  const auto put32 = [](std::vector<unsigned char>& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  const auto put16 = [](std::vector<unsigned char>& out, std::uint16_t v) {
    out.push_back(static_cast<unsigned char>(v));
    out.push_back(static_cast<unsigned char>(v >> 8));
  };
  const auto data = static_cast<std::uint32_t>(frames * channels * 2);
  std::vector<unsigned char> out{'R', 'I', 'F', 'F'};
  put32(out, 36 + data);
  for (char ch : std::string("WAVEfmt ")) out.push_back(static_cast<unsigned char>(ch));
  put32(out, 16);
  put16(out, 1);
  put16(out, static_cast<std::uint16_t>(channels));
  put32(out, static_cast<std::uint32_t>(rate));
  put32(out, static_cast<std::uint32_t>(rate * channels * 2));
  put16(out, static_cast<std::uint16_t>(channels * 2));
  put16(out, 16);
  for (char ch : std::string("data")) out.push_back(static_cast<unsigned char>(ch));
  put32(out, data);
  out.reserve(out.size() + data);
  for (std::int64_t i = 0; i < frames; ++i)
    for (int c = 0; c < channels; ++c) put16(out, static_cast<std::uint16_t>(static_cast<std::int16_t>(value(i, c))));
  return out;
}

// A 16-bit PCM WAV file of `data_bytes` bytes of samples, all zero, made sparse with ftruncate: gigabytes on disk
// in no time and no space.
fs::path sparse_wav(const fs::path& path, int rate, int channels, std::int64_t data_bytes) {
  std::vector<unsigned char> header = wav_bytes(rate, channels, 0, [](std::int64_t, int) { return 0; });
  const auto data = static_cast<std::uint32_t>(data_bytes);
  for (int i = 0; i < 4; ++i) {
    header[4 + i] = static_cast<unsigned char>((36 + data) >> (8 * i));
    header[40 + i] = static_cast<unsigned char>(data >> (8 * i));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, header.data(), header.size()), ssize_t(header.size()));
  EXPECT_EQ(::ftruncate(fd, off_t(header.size()) + off_t(data_bytes)), 0);
  ::close(fd);
  return path;
}

TEST(AudioFile, ReadsA16kHzMonoWavAsItIs) {
  const auto bytes = wav_bytes(16000, 1, 1600, [](std::int64_t i, int) { return int(i % 200) * 100 - 10000; });
  auto audio = read_audio_bytes(bytes, "tone.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  ASSERT_EQ(audio->samples.size(), 1600u);
  EXPECT_TRUE(audio->warnings.empty());
  EXPECT_FLOAT_EQ(audio->samples[0], -10000.0f / 32768.0f);
  EXPECT_FLOAT_EQ(audio->samples[1], -9900.0f / 32768.0f);
  EXPECT_DOUBLE_EQ(audio->seconds(), 0.1);
}

TEST(AudioFile, SixChannelsAreMixedToTheirMean) {
  // Channel c holds 1000 c: the mean of 0, 1000, ..., 5000 is 2500.
  const auto bytes = wav_bytes(16000, 6, 800, [](std::int64_t, int c) { return 1000 * c; });
  auto audio = read_audio_bytes(bytes, "surround.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  EXPECT_EQ(audio->source_channels, 6);
  ASSERT_EQ(audio->samples.size(), 800u);
  EXPECT_NEAR(audio->samples[400], 2500.0f / 32768.0f, 1e-6);
  ASSERT_EQ(audio->warnings.size(), 1u);
  EXPECT_EQ(audio->warnings[0], "6 channels mixed to one (their mean)");
}

TEST(AudioFile, AnotherRateIsResampledTo16kHz) {
  // One second of a 440 Hz sine at 44.1 kHz: a second at 16 kHz, the same tone (zero crossings 880 a second).
  const auto bytes = wav_bytes(44100, 1, 44100, [](std::int64_t i, int) {
    return int(std::lround(16000.0 * std::sin(2.0 * std::numbers::pi * 440.0 * double(i) / 44100.0)));
  });
  auto audio = read_audio_bytes(bytes, "a440.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  EXPECT_EQ(audio->source_rate, 44100);
  EXPECT_NEAR(double(audio->samples.size()), 16000.0, 2.0);
  ASSERT_EQ(audio->warnings.size(), 1u);
  EXPECT_EQ(audio->warnings[0], "resampled from 44,100 Hz to 16,000 Hz");
  int crossings = 0;
  for (std::size_t i = 1000; i + 1 < 15000; ++i) crossings += (audio->samples[i] < 0) != (audio->samples[i + 1] < 0);
  EXPECT_NEAR(crossings, 880.0 * 14000 / 16000, 2.0);
}

TEST(AudioFile, TenMinutesAreKeptAndTheRestCutWithAWarning) {
  const std::int64_t frames = std::int64_t(kSampleRate) * 602;  // 10 min 2 s
  const auto bytes = wav_bytes(kSampleRate, 1, frames, [](std::int64_t i, int) { return int(i % 7); });
  auto audio = read_audio_bytes(bytes, "lecture.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  EXPECT_EQ(audio->samples.size(), std::size_t(kSampleRate) * 600);
  EXPECT_DOUBLE_EQ(audio->source_seconds, 602.0);
  ASSERT_EQ(audio->warnings.size(), 1u);
  EXPECT_EQ(audio->warnings[0], "cut at 10 min: the file is 10 min 2.0 s long");
}

// The header is checked before a sample is read: a 2 GiB WAV declaring 655,360 Hz would have been 393 million
// samples held at once before the resampling (1.6 GB, over a minute).
TEST(AudioFile, AnAbsurdRateIsRefusedFromTheHeader) {
  const fs::path dir = test::fresh_dir("attn-sparse-wav");
  const fs::path wav = sparse_wav(dir / "fast.wav", 655360, 1, (std::int64_t(2) << 30) - 44);
  auto audio = read_audio(wav);
  ASSERT_FALSE(audio.has_value());
  EXPECT_EQ(audio.error().kind, ErrorKind::Unsupported);
  EXPECT_EQ(audio.error().message(), wav.string() + ": 1 channel at 655,360 Hz: at most 256 channels and 192,000 Hz");
  fs::remove_all(dir);
}

TEST(AudioFile, MoreDataASecondIsCutAtTheBudgetOfDecodedSamples) {
  // Ten minutes of 96 kHz in 8 channels: 460,800,000 samples; 67,108,864 are decoded (87.4 s), resampled as they
  // are read.
  const fs::path dir = test::fresh_dir("attn-sparse-wav");
  const fs::path wav = sparse_wav(dir / "octo.wav", 96000, 8, std::int64_t(96000) * 8 * 2 * 600);
  auto audio = read_audio(wav);
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  const double kept = double(kMaxDecodedSamples / 8) / 96000;
  EXPECT_NEAR(audio->seconds(), kept, 0.01);
  EXPECT_DOUBLE_EQ(audio->source_seconds, 600.0);
  ASSERT_EQ(audio->warnings.size(), 3u);
  EXPECT_EQ(audio->warnings[0],
            "cut at 1 min 27.3 s: at 96,000 Hz and 8 channels the first 67,108,864 samples are decoded (at most "
            "67,108,864 a file); the file is 10 min 0.0 s long");
  fs::remove_all(dir);
}

TEST(AudioFile, HeadersOverTheLimitsAreRefusedWithTheFigures) {
  // 25 hours at 1 Hz.
  auto day = read_audio_bytes(wav_bytes(1, 1, 90000, [](std::int64_t, int) { return 0; }), "day.wav");
  ASSERT_FALSE(day.has_value());
  EXPECT_EQ(day.error().message(), "day.wav: declares 90,000 frames at 1 Hz (25 h): at most 24 h");
  // Twelve channels at 192 kHz: the model's 30 s alone would be 69 million samples.
  auto wide = read_audio_bytes(wav_bytes(192000, 12, 10, [](std::int64_t, int) { return 0; }), "wide.wav");
  ASSERT_FALSE(wide.has_value());
  EXPECT_EQ(wide.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(wide.error().message(),
            "wide.wav: 12 channels at 192,000 Hz: the 30 s a speech model reads are 69,120,000 samples, over the "
            "67,108,864 decoded from a file at most");
}

// A float WAV holds whatever it holds: NaN was read as silence without a word, and 1e30 made the spectrogram's power
// infinite (the model's predictions then NaN). Both are now said, and the huge ones clipped.
TEST(AudioFile, NonFiniteAndHugeSamplesAreSaid) {
  const std::vector<float> values{0.25f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  1e30f,
                                  -0.5f,
                                  -std::numeric_limits<float>::infinity(),
                                  -1e20f,
                                  0.0f,
                                  0.125f};
  std::vector<unsigned char> bytes = wav_bytes(16000, 1, 0, [](std::int64_t, int) { return 0; });
  bytes[20] = 3;   // WAVE_FORMAT_IEEE_FLOAT
  bytes[34] = 32;  // bits per sample
  const auto put32 = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + std::size_t(i)] = static_cast<unsigned char>(v >> (8 * i));
  };
  put32(28, 16000 * 4);
  bytes[32] = 4;
  const auto data = std::uint32_t(values.size() * 4);
  put32(4, 36 + data);
  put32(40, data);
  for (const float v : values) {
    std::uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<unsigned char>(u >> (8 * i)));
  }
  auto audio = read_audio_bytes(bytes, "odd.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  ASSERT_EQ(audio->samples.size(), values.size());
  EXPECT_EQ(audio->samples[1], 0.0f);
  EXPECT_EQ(audio->samples[2], 1e6f);
  EXPECT_EQ(audio->samples[5], -1e6f);
  ASSERT_EQ(audio->warnings.size(), 2u);
  EXPECT_EQ(audio->warnings[0], "2 of 8 samples are not finite (NaN or infinite): read as silence");
  EXPECT_EQ(audio->warnings[1], "2 of 8 samples lie beyond +-1,000,000 (audio is nominally within +-1): clipped there");
  EXPECT_TRUE(log_mel(std::vector<float>(400, 1e6f)).allFinite());
}

TEST(AudioFile, BadFilesAreRefusedByName) {
  const std::string text = "this is a text file, not audio\n";
  auto not_audio = read_audio_bytes({reinterpret_cast<const unsigned char*>(text.data()), text.size()}, "notes.wav");
  ASSERT_FALSE(not_audio.has_value());
  EXPECT_EQ(not_audio.error().kind, ErrorKind::Unsupported);
  EXPECT_NE(not_audio.error().message().find("notes.wav: is not audio"), std::string::npos)
      << not_audio.error().message();

  auto empty = read_audio_bytes({}, "empty.wav");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message(), "empty.wav: is empty (0 bytes): not audio");

  // A WAV header without a single sample.
  auto silent = read_audio_bytes(wav_bytes(16000, 1, 0, [](std::int64_t, int) { return 0; }), "header.wav");
  ASSERT_FALSE(silent.has_value());
  EXPECT_EQ(silent.error().message(), "header.wav: has no samples: the audio is empty");

  auto missing = read_audio(kData / "audio" / "no-such.wav");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("no-such.wav"), std::string::npos);
  auto folder = read_audio(kData / "audio");
  ASSERT_FALSE(folder.has_value());
  EXPECT_NE(folder.error().message().find("is a directory, not an audio file"), std::string::npos)
      << folder.error().message();
}

TEST(AudioFile, WrittenWavReadsBack) {
  std::vector<float> samples(480);
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = float(int(i) - 240) / 512.0f;
  const fs::path path = test::fresh_dir("attn-wav") / "round.wav";
  ASSERT_TRUE(write_wav(path, samples).has_value());
  auto back = read_audio(path);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->samples.size(), samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) EXPECT_NEAR(back->samples[i], samples[i], 1.0 / 32768) << i;
  fs::remove_all(path.parent_path());
}

TEST(LogMel, MatchesTorchOnTheFixture) {
  auto audio = read_audio(kData / "audio" / "fox-f2.wav");
  ASSERT_TRUE(audio.has_value()) << audio.error().message();
  const Matrix got = log_mel(audio->samples);
  auto file = io::SafeTensors::open(kData / "audio" / "fox-f2.logmel.safetensors");
  ASSERT_TRUE(file.has_value()) << file.error().message();
  auto want = file->matrix("log_mel", got.rows(), 80);
  ASSERT_TRUE(want.has_value()) << want.error().message();
  EXPECT_EQ(got.rows(), Index((audio->samples.size() - 400) / 160 + 1));
  EXPECT_LT((got - *want).cwiseAbs().maxCoeff(), 1e-4f);
  // Fewer samples than a window: no frame.
  EXPECT_EQ(log_mel(std::vector<float>(399, 0.1f)).rows(), 0);
}

// log_mel works through long audio in blocks of frames: every frame, on either side of a block's edge, is the one
// computed from its own 25 ms alone.
TEST(LogMel, LongAudioIsTheSameFrameByFrame) {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  std::vector<float> samples(std::size_t(2500 * 160 + 240));  // 2,500 frames: two block edges
  for (auto& x : samples) x = noise(rng);
  const Matrix whole = log_mel(samples);
  ASSERT_EQ(whole.rows(), 2500);
  for (const Index t : {Index(0), Index(1023), Index(1024), Index(2047), Index(2048), Index(2499)}) {
    const Matrix one = log_mel(std::span<const float>(samples).subspan(std::size_t(t) * 160, 400));
    ASSERT_EQ(one.rows(), 1);
    EXPECT_LT((whole.row(t) - one.row(0)).cwiseAbs().maxCoeff(), 1e-5f) << "frame " << t;
  }
  EXPECT_GT((whole.row(1023) - whole.row(1024)).cwiseAbs().maxCoeff(), 1e-2f);  // the frames are not all one
}

TEST(LogMel, FiltersAreTrianglesThatCoverTheBand) {
  const Matrix f = mel_filters();
  ASSERT_EQ(f.rows(), 80);
  ASSERT_EQ(f.cols(), 257);
  EXPECT_GE(f.minCoeff(), 0.0f);
  EXPECT_LE(f.maxCoeff(), 1.0f);
  // A tone of the 40th band's centre frequency peaks in that band.
  const double hz = mel_centres()[40];
  std::vector<float> tone(1600);
  for (std::size_t i = 0; i < tone.size(); ++i) tone[i] = float(0.5 * std::sin(2 * std::numbers::pi * hz * i / 16000));
  const Matrix m = log_mel(tone);
  Index band = 0;
  m.row(3).maxCoeff(&band);
  EXPECT_NEAR(double(band), 40.0, 1.0);
}

TEST(Synthesis, SaysTheTextWithEachPhonemesSpan) {
  auto said = synthesise("the quick brown fox", Voice{"en-us+f2", 175, 50});
  ASSERT_TRUE(said.has_value()) << said.error().message();
  EXPECT_GT(said->audio.seconds(), 0.6);
  EXPECT_LT(said->audio.seconds(), 3.0);
  std::string names;
  for (const auto& p : said->phonemes) names += p.name + " ";
  // espeak-ng's en-us phonemes of "quick" and "fox".
  EXPECT_NE(names.find("k w I k"), std::string::npos) << names;
  EXPECT_NE(names.find("f 0 k s"), std::string::npos) << names;
  double previous = 0.0;
  for (const auto& p : said->phonemes) {
    EXPECT_GE(p.start, previous) << p.name;
    EXPECT_GT(p.end, p.start) << p.name;
    EXPECT_LE(p.end, said->audio.seconds() + 1e-9) << p.name;
    previous = p.start;
  }
  // The phonemes of "fox" point at its bytes.
  EXPECT_EQ(said->phonemes.back().text, (Span{16, 19}));
}

TEST(Synthesis, RefusesEmptyTextAndUnknownVoices) {
  auto empty = synthesise("  \n");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message(), "text: nothing to say: the text is empty");
  auto voice = synthesise("hello", Voice{"xx-nowhere", 175, 50});
  ASSERT_FALSE(voice.has_value());
  EXPECT_NE(voice.error().message().find("no voice \"xx-nowhere\""), std::string::npos);
  auto fast = synthesise("hello", Voice{"en-us", 900, 50});
  ASSERT_FALSE(fast.has_value());
  EXPECT_NE(fast.error().message().find("900 words per minute"), std::string::npos);
}

// espeak-ng 1.51 read a voice name that is none of its own as a path: "../../../../etc/passwd" printed that file's
// lines to stderr and crashed the process. Voices now come from espeak_ListVoices, by name.
TEST(Synthesis, VoicesAreEspeakNgsOwnByName) {
  for (const std::string name : {"../../../../etc/passwd", "/etc/passwd", "en-us+../../../../etc/passwd", "", "+f2",
                                 "EN-US", "en-us+f2+m3", "en-us+"}) {
    auto said = synthesise("hi", Voice{name, 175, 50});
    ASSERT_FALSE(said.has_value()) << name;
    EXPECT_EQ(said.error().kind, ErrorKind::OutOfRange) << name;
    EXPECT_EQ(said.error().file, "voice");
    const std::string message = said.error().message();
    EXPECT_NE(message.find("espeak-ng has no "), std::string::npos) << message;
    // A few voices that are there, and nothing of the file named.
    EXPECT_NE(message.find("(en-us, en, de, fr, es, en-us+f2, en-us+m3, ...)"), std::string::npos) << message;
    EXPECT_EQ(message.find("root:"), std::string::npos) << message;
  }
  auto path = synthesise("hi", Voice{"../../../../etc/passwd", 175, 50});
  EXPECT_NE(path.error().message().find("no voice \"../../../../etc/passwd\""), std::string::npos);
  auto variant = synthesise("hi", Voice{"en-us+../../../../etc/passwd", 175, 50});
  EXPECT_NE(variant.error().message().find("no variant \"../../../../etc/passwd\" (after the '+')"), std::string::npos)
      << variant.error().message();
  // A language, an identifier, a variant by its file's name: all listed.
  for (const std::string name : {"en-us", "en", "gmw/en-US", "en-us+f2", "gmw/en-US+m3", "de+Andy"}) {
    auto said = synthesise("hi", Voice{name, 175, 50});
    EXPECT_TRUE(said.has_value()) << name << ": " << said.error().message();
  }
}

TEST(Synthesis, TextAndSpeechHaveTheirLimits) {
  auto long_text = synthesise(std::string(kMaxSynthesisBytes + 1, 'a'));
  ASSERT_FALSE(long_text.has_value());
  EXPECT_EQ(long_text.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(long_text.error().message(), "text: is 4,097 bytes; espeak-ng is given at most 4,096 bytes at a time");
  // 512 numbers of eleven words each ("nine million nine hundred ..."), 80 words a minute: over an hour of speech,
  // stopped at 10 minutes.
  std::string words;
  while (words.size() + 8 <= kMaxSynthesisBytes) words += "9999999 ";
  auto slow = synthesise(words, Voice{"en-us", 80, 50});
  ASSERT_FALSE(slow.has_value());
  EXPECT_EQ(slow.error().kind, ErrorKind::TooLarge);
  EXPECT_NE(slow.error().message().find("text: said, it is longer than 10 min"), std::string::npos)
      << slow.error().message();
  // And the next synthesis is whole again.
  auto after = synthesise("the quick brown fox", Voice{"en-us+f2", 175, 50});
  ASSERT_TRUE(after.has_value()) << after.error().message();
  EXPECT_GT(after->audio.seconds(), 0.6);
}

}  // namespace
}  // namespace attn::audio

namespace attn::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::shared_ptr<const Seq2SeqModel> random_speech() {
  auto model = Seq2SeqModel::load(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "random-speech");
  EXPECT_TRUE(model.has_value()) << model.error().message();
  return model ? *model : nullptr;
}

TEST(SpeechModel, ReadsFramesCutsLongAudioAndRefusesText) {
  auto model = random_speech();
  ASSERT_TRUE(model);
  EXPECT_EQ(model->config().variant_name(), "location-aware (3 filters of 5 steps)");
  Seq2SeqRunner runner(model);
  // 100 frames = 33 steps of 3; the model reads 30: cut with a warning naming both lengths.
  const Matrix frames = Matrix::Constant(100, 80, -3.0f);
  auto run = runner.run_frames(frames);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_TRUE(run->frames);
  ASSERT_EQ(run->source.size(), 30u);
  EXPECT_EQ(run->source[1], "0.03 s");
  EXPECT_EQ(run->spans[1], (Span{3, 6}));
  ASSERT_EQ(run->warnings.size(), 1u);
  EXPECT_EQ(run->warnings[0], "audio cut at 0.90 s (of 1.00 s): the model reads at most 30 steps");
  EXPECT_EQ(run->hypotheses[0].attention.cols(), 30);

  auto short_audio = runner.run_frames(Matrix::Zero(2, 80));
  ASSERT_FALSE(short_audio.has_value());
  EXPECT_NE(short_audio.error().message().find("shorter than one step"), std::string::npos);
  auto bands = runner.run_frames(Matrix::Zero(30, 40));
  ASSERT_FALSE(bands.has_value());
  EXPECT_NE(bands.error().message().find("frames of 40 bands"), std::string::npos);
  auto text = runner.run("hello");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().message(), "text: a speech model reads audio, not text");
  EXPECT_FALSE(runner.run_ids({0, 0}).has_value());
}

// The weights shaped: each row still sums to 1, a window of w attends to at most 2w + 1 steps and top k to k, all
// around where the previous step's attention lies; bad settings and text models are refused with the reason.
TEST(SpeechModel, ShapedWeightsStayInTheirWindowAndTopK) {
  auto model = random_speech();
  ASSERT_TRUE(model);
  Seq2SeqRunner runner(model);
  auto frames =
      io::SafeTensors::open(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "speech-location" / "frames.safetensors");
  ASSERT_TRUE(frames.has_value());
  const io::TensorInfo* info = frames->find("run0");
  ASSERT_NE(info, nullptr);
  auto x = frames->matrix("run0", info->shape.at(0), info->shape.at(1));
  ASSERT_TRUE(x.has_value());
  const auto attended = [](const auto& row) { return (row.array() > 0.0f).count(); };
  DecodeOptions options;
  options.beam = 3;
  options.shaping.window = 2;
  options.shaping.top_k = 4;
  auto run = runner.run_frames(*x, options);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  for (const auto& hyp : run->hypotheses) {
    Vector previous = Vector::Zero(hyp.attention.cols());
    previous(0) = 1.0f;
    for (Index i = 0; i < hyp.attention.rows(); ++i) {
      const auto row = hyp.attention.row(i);
      EXPECT_NEAR(row.sum(), 1.0f, 1e-5f);
      EXPECT_LE(attended(row), 4);
      Index median = 0;
      for (float sum = 0.0f; (sum += previous(median)) < 0.5f;) ++median;
      for (Index j = 0; j < row.size(); ++j) {
        if (row(j) > 0.0f) {
          EXPECT_LE(std::abs(j - median), 2) << "step " << i << " attends " << j;
        }
      }
      previous = row.transpose();
    }
  }
  options.shaping = {};
  options.shaping.smooth = true;
  auto smooth = runner.run_frames(*x, options);
  ASSERT_TRUE(smooth.has_value());
  EXPECT_EQ(attended(smooth->hypotheses[0].attention.row(0)), smooth->hypotheses[0].attention.cols());

  const auto refused = [&](AttentionShaping shaping) {
    DecodeOptions bad;
    bad.shaping = shaping;
    auto r = runner.run_frames(*x, bad);
    return r ? std::string() : r.error().message();
  };
  EXPECT_EQ(refused({.sharpen = 0.0f}), "sharpening beta is 0; it is above 0 and at most 100");
  EXPECT_EQ(refused({.sharpen = 2.0f, .smooth = true}),
            "smoothing (the sigmoid) and sharpening (beta) do not go together");
  EXPECT_EQ(refused({.top_k = -1}), "top k is -1; 0 (every step) or more");
  EXPECT_EQ(refused({.window = -3}), "the window is -3; 0 (every step) or more");
  auto words = Seq2SeqModel::load(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "random-words");
  ASSERT_TRUE(words.has_value());
  DecodeOptions sharp;
  sharp.shaping.sharpen = 2.0f;
  auto text = Seq2SeqRunner(*words).run("a b", sharp);
  ASSERT_FALSE(text.has_value());
  EXPECT_NE(text.error().message().find("are for location-aware (speech) models"), std::string::npos);
}

// A session decodes each input as a fresh one would: nothing of the previous run (another length, another beam) is
// left in its buffers.
TEST(SpeechModel, ARunDoesNotDependOnThePreviousOne) {
  auto model = random_speech();
  ASSERT_TRUE(model);
  auto file =
      io::SafeTensors::open(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "speech-location" / "frames.safetensors");
  ASSERT_TRUE(file.has_value());
  std::vector<Matrix> inputs;
  for (const char* name : {"run0", "run1", "run3"}) {
    const io::TensorInfo* info = file->find(name);
    ASSERT_NE(info, nullptr);
    auto x = file->matrix(name, info->shape.at(0), info->shape.at(1));
    ASSERT_TRUE(x.has_value());
    inputs.push_back(*x);
  }
  Seq2SeqRunner shared(model);
  DecodeOptions other;
  for (const int beam : {1, 3}) {
    other.beam = 4 - beam;
    DecodeOptions options;
    options.beam = beam;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (std::size_t before = 0; before < inputs.size(); ++before) {
        ASSERT_TRUE(shared.run_frames(inputs[before], other).has_value());
        auto again = shared.run_frames(inputs[i], options);
        auto fresh = Seq2SeqRunner(model).run_frames(inputs[i], options);
        ASSERT_TRUE(again && fresh);
        ASSERT_EQ(again->hypotheses.size(), fresh->hypotheses.size());
        for (std::size_t h = 0; h < fresh->hypotheses.size(); ++h) {
          EXPECT_EQ(again->hypotheses[h].ids, fresh->hypotheses[h].ids) << "input " << i << " after " << before;
          EXPECT_EQ(again->hypotheses[h].attention, fresh->hypotheses[h].attention)
              << "input " << i << " after " << before;
        }
      }
    }
  }
}

TEST(SpeechModel, ATextModelRefusesAudio) {
  auto model = Seq2SeqModel::load(fs::path(ATTN_TEST_DATA_DIR) / "seq2seq" / "random-words");
  ASSERT_TRUE(model.has_value());
  Seq2SeqRunner runner(*model);
  auto run = runner.run_frames(Matrix::Zero(30, 80));
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().message(), "audio: this model reads words, not audio");
}

std::string speech_json(const json& patch = json::object()) {
  json j = {
      {"architectures", {"AttnScopeSeq2Seq"}},
      {"attention", "location"},
      {"score", "additive"},
      {"unit", "frame"},
      {"features", {{"sample_rate", 16000}, {"window", 400}, {"hop", 160}, {"fft", 512}, {"bands", 80}, {"stack", 3}}},
      {"source_vocab", json::array()},
      {"target_vocab", {"<pad>", "<s>", "</s>", "aI", "@2"}},
      {"embedding_size", 4},
      {"encoder_hidden", 3},
      {"encoder_layers", 2},
      {"decoder_hidden", 5},
      {"attention_size", 2},
      {"location_filters", 3},
      {"location_width", 5},
      {"max_source_length", 30},
      {"max_target_length", 12}};
  return test::patched_json(std::move(j), patch);
}

TEST(SpeechModelConfig, ReadsTheSpeechKeys) {
  auto c = Seq2SeqConfig::parse(speech_json(), "cfg.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE(c->frames);
  EXPECT_EQ(c->attention, Seq2SeqAttention::Location);
  EXPECT_EQ(c->feature_stack, 3);
  EXPECT_EQ(c->encoder_layers, 2);
  EXPECT_EQ(c->location_width, 5);
}

using test::ConfigErrorCase;

class SpeechModelConfigError : public ::testing::TestWithParam<ConfigErrorCase> {};

TEST_P(SpeechModelConfigError, NamesTheFileKeyAndLine) {
  test::expect_config_error<Seq2SeqConfig>(speech_json(GetParam().patch), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SpeechModelConfigError,
    ::testing::Values(
        ConfigErrorCase{"words", {{"unit", "word"}}, "unit", "needs \"unit\": \"frame\""},
        ConfigErrorCase{"even_width", {{"location_width", 4}}, "location_width", "must be odd"},
        ConfigErrorCase{
            "other_hop",
            {{"features",
              {{"sample_rate", 16000}, {"window", 400}, {"hop", 200}, {"fft", 512}, {"bands", 80}, {"stack", 3}}}},
            "features",
            "features.hop is 200"},
        ConfigErrorCase{"source_vocab", {{"source_vocab", {"<pad>", "<unk>", "a"}}}, "source_vocab", "must be []"},
        ConfigErrorCase{"spaced_phoneme",
                        {{"target_vocab", {"<pad>", "<s>", "</s>", "a b"}}},
                        "target_vocab",
                        "without white space"}),
    test::config_case_name);

}  // namespace
}  // namespace attn::models
