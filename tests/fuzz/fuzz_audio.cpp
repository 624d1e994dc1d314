// Audio files from memory through libsndfile's virtual I/O (WAV, FLAC, Ogg, AIFF and the rest it reads): the header
// checks (rate, channels, declared length, the budget of decoded samples), the blocks mixed to mono and resampled as
// they are read, then the log-mel spectrogram a speech model hears. The budget is small (2^22 samples: the model's
// 30 s of 48 kHz stereo still fit) so that a tiny FLAC declaring hours of silence is cut in time; what is accepted
// stays within it and is finite.
#include "fuzz_util.h"

#include "attn/audio/audio.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz-audio";
  constexpr std::int64_t kBudget = std::int64_t(1) << 22;
  auto audio = audio::read_audio_bytes(std::span<const unsigned char>(data, size), kName, kBudget);
  if (!audio) {
    fuzz::check_error(audio.error(), kName);
    return 0;
  }
  fuzz::require(!audio->samples.empty());
  fuzz::require(audio->source_rate >= 1 && audio->source_rate <= audio::kMaxSourceRate);
  fuzz::require(audio->source_channels >= 1 && audio->source_channels <= audio::kMaxChannels);
  // The frames decoded were at most the budget's share of one channel, each resampled to 16 kHz (plus the
  // converter's rounding).
  const double frames = double(kBudget / audio->source_channels);
  fuzz::require(double(audio->samples.size()) <= frames * audio::kSampleRate / audio->source_rate + 64);
  fuzz::require(audio->seconds() <= audio::kMaxSeconds + 1);
  for (const float s : audio->samples) fuzz::require(std::isfinite(s) && std::abs(s) <= 2e6f);
  const Matrix mel = audio::log_mel(audio->samples);
  fuzz::require(mel.allFinite());
  return 0;
}
