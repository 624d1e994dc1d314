// Sound for the speech models: audio files read through libsndfile (mixed to mono, resampled with libsamplerate
// to the models' 16 kHz, cut at ten minutes), speech synthesised in-process with the espeak-ng library (with each
// phoneme's time span, from the synthesiser's own phoneme events), and log-mel spectrograms (80 bands, 25 ms
// Hann windows every 10 ms; the FFT is OpenCV's dft), as tools/train/MODELS.md section 6 specifies and
// tools/train/speech_torch.py computes.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/trace.h"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::audio {

inline constexpr int kSampleRate = 16000;     // every model's rate: files and synthesis are resampled to it
inline constexpr double kMaxSeconds = 600.0;  // longer audio is cut here, with a warning (what the view shows)
inline constexpr std::int64_t kMaxFileBytes = std::int64_t(2) << 30;  // refused before reading
// What a file may declare, checked from its header before a sample is read: its rate, its channels, its length.
inline constexpr int kMaxSourceRate = 192000;
inline constexpr int kMaxChannels = 256;
inline constexpr double kMaxDeclaredSeconds = 24 * 3600.0;
// The samples (frames x channels) decoded from one file at most: ten minutes of 48 kHz stereo. A file with more
// data a second is cut earlier (with a warning), decoded in blocks and resampled as it is read; one whose first
// kModelSeconds (what a speech model reads: the bundled one's 1,000 steps of 30 ms) would not fit is refused.
inline constexpr std::int64_t kMaxDecodedSamples = std::int64_t(1) << 26;
inline constexpr double kModelSeconds = 30.0;
// synthesise(): longer text is refused before espeak-ng sees it, and speech longer than kMaxSeconds is stopped.
inline constexpr std::size_t kMaxSynthesisBytes = 4096;

struct Audio {
  std::vector<float> samples;  // mono, kSampleRate, nominally in [-1, 1]
  int source_rate = 0;         // the file's (or the synthesiser's) rate and channels, before conversion
  int source_channels = 0;
  double source_seconds = 0.0;        // the file's whole length, before any cut
  std::vector<std::string> warnings;  // "resampled from 44,100 Hz", "6 channels mixed to one", "cut at 10 min"

  double seconds() const { return double(samples.size()) / kSampleRate; }
};

// WAV (and whatever else libsndfile reads: FLAC, Ogg, AIFF). Errors name the file: not audio (libsndfile's
// reason), no samples, no such file, a rate, channel count or length over the limits above.
Result<Audio> read_audio(const std::filesystem::path& file);
// From bytes in memory (tests, the fuzzer), `name` naming them in errors; `max_decoded_samples` in place of
// kMaxDecodedSamples (the fuzzer's is smaller).
Result<Audio> read_audio_bytes(std::span<const unsigned char> bytes, const std::string& name,
                               std::int64_t max_decoded_samples = kMaxDecodedSamples);
// 16-bit PCM WAV, mono, at `rate`.
Result<void> write_wav(const std::filesystem::path& file, std::span<const float> samples, int rate = kSampleRate);
// libsamplerate's medium sinc converter (121 dB signal-to-noise, 90% of the band kept).
Result<std::vector<float>> resample(std::span<const float> samples, int from_rate, int to_rate);

// espeak-ng's voices and their settings. `voice` is a language with an optional variant ("en-us", "en-us+f3",
// "en+m2"); rate in words per minute (80-450), pitch 0-99.
struct Voice {
  std::string name = "en-us";
  int words_per_minute = 175;
  int pitch = 50;
};

struct Phoneme {
  std::string name;           // espeak-ng's mnemonic ("aU", "@2", "dZ")
  double start = 0, end = 0;  // seconds into the audio
  Span text;                  // the bytes of the word it was said for
};

struct Speech {
  Audio audio;                    // at kSampleRate
  std::vector<Phoneme> phonemes;  // in order, pauses left out
};

// Text to speech, in-process (espeak-ng's library and its data from the espeak-ng-data package). One synthesis at a
// time (espeak-ng has one global state: calls from several threads wait their turn). Empty text is an error, and so
// are text over kMaxSynthesisBytes, speech over kMaxSeconds and a voice espeak-ng does not list (espeak_ListVoices:
// a language, name or identifier, exactly, with an optional "+variant"; only the listed strings reach espeak-ng).
Result<Speech> synthesise(std::string_view text, const Voice& voice = {});
// The variants espeak-ng ships for a language ("en-us", "en-us+f1" ... ), to draw voices from.
std::vector<std::string> voice_variants(const std::string& language = "en-us");

struct MelSettings {
  int window = 400;  // samples: 25 ms
  int hop = 160;     // 10 ms
  int fft = 512;
  int bands = 80;
  double low_hz = 0.0, high_hz = 8000.0;
};
// log(mel power + 1e-6), [frames, bands]: frame t covers samples [t hop, t hop + window) (no padding; fewer
// samples than one window give no frame). The filters are triangles on the HTK mel scale.
Matrix log_mel(std::span<const float> samples, const MelSettings& settings = {});
// The filter bank [bands, fft / 2 + 1] (for the tests and the spectrogram's axis).
Matrix mel_filters(const MelSettings& settings = {});
// The centre of each band in Hz.
std::vector<double> mel_centres(const MelSettings& settings = {});

}  // namespace attn::audio
