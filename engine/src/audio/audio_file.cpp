// Audio files through libsndfile, converted with libsamplerate (audio.h).
#include "attn/audio/audio.h"
#include "../core/file_read.h"

#include <samplerate.h>
#include <sndfile.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <unistd.h>

namespace attn::audio {

namespace {

struct SndCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndFile = std::unique_ptr<SNDFILE, SndCloser>;

// Blocks of this many frames are read and mixed at a time: a 6-channel file is never held whole in 6 channels.
constexpr sf_count_t kBlockFrames = 1 << 15;
// Float files may hold any value: past this a 25 ms window's power overflows a float in the spectrogram.
constexpr float kMaxSampleMagnitude = 1e6f;

std::string rate_text(int rate) { return with_commas(rate) + " Hz"; }
// "12 min 3.5 s long"
std::string seconds_text(double seconds) {
  const int minutes = int(seconds / 60);
  const double rest = seconds - 60.0 * minutes;
  return std::to_string(minutes) + " min " + std::to_string(int(rest)) + "." + std::to_string(int(rest * 10) % 10) +
         " s long";
}

// "1 min 27.4 s"
std::string duration_text(double seconds) {
  const int minutes = int(seconds / 60);
  const double rest = seconds - 60.0 * minutes;
  const std::string tenths = std::to_string(int(rest)) + "." + std::to_string(int(rest * 10) % 10) + " s";
  return minutes > 0 ? std::to_string(minutes) + " min " + tenths : tenths;
}

// libsamplerate's medium sinc converter fed block by block, as the file is read: only the 16 kHz result grows.
class StreamResampler {
 public:
  StreamResampler(int from_rate, int to_rate) : ratio_(double(to_rate) / from_rate) {
    int code = 0;
    state_ = src_new(SRC_SINC_MEDIUM_QUALITY, 1, &code);
    error_ = code;
  }
  ~StreamResampler() {
    if (state_ != nullptr) src_delete(state_);
  }
  StreamResampler(const StreamResampler&) = delete;
  StreamResampler& operator=(const StreamResampler&) = delete;

  // Appends what `in` (empty with `last`: the end) makes to `out`; false on libsamplerate's error (error()).
  bool feed(std::span<const float> in, bool last, std::vector<float>& out) {
    if (state_ == nullptr) return false;
    std::size_t used = 0;
    static const float nothing = 0.0f;
    // Bounded: the flush at the end gives its last samples within a few rounds.
    for (int round = 0; round < 4096; ++round) {
      buffer_.resize(std::size_t(std::ceil(double(in.size() - used) * ratio_)) + 256);
      SRC_DATA data{};
      data.data_in = in.size() > used ? in.data() + used : &nothing;
      data.input_frames = long(in.size() - used);
      data.data_out = buffer_.data();
      data.output_frames = long(buffer_.size());
      data.src_ratio = ratio_;
      data.end_of_input = last ? 1 : 0;
      if (const int code = src_process(state_, &data); code != 0) {
        error_ = code;
        return false;
      }
      used += std::size_t(data.input_frames_used);
      out.insert(out.end(), buffer_.begin(), buffer_.begin() + data.output_frames_gen);
      if (used >= in.size() && (!last || data.output_frames_gen == 0)) return true;
      if (data.input_frames_used == 0 && data.output_frames_gen == 0) break;  // no progress: never seen
    }
    error_ = 0;
    return true;
  }
  std::string error() const { return std::string("resampling failed: ") + src_strerror(error_); }

 private:
  double ratio_;
  SRC_STATE* state_ = nullptr;
  int error_ = 0;
  std::vector<float> buffer_;
};

// What a file's header says, checked before a sample is read: its rate, its channels and its length against the
// limits (audio.h), and how many frames the budget of decoded samples lets be read (`keep`, in frames).
struct Plan {
  sf_count_t keep = 0;
  bool budget_cut = false;  // cut before kMaxSeconds because of kMaxDecodedSamples
};
std::string channels_text(int channels) {
  return std::to_string(channels) + (channels == 1 ? " channel" : " channels");
}

Result<Plan> plan_decode(const SF_INFO& info, const std::string& name, std::int64_t budget) {
  if (info.channels < 1 || info.samplerate < 1)
    return fail(ErrorKind::Malformed,
                std::to_string(info.channels) + " channels at " + std::to_string(info.samplerate) + " Hz", name);
  if (info.samplerate > kMaxSourceRate || info.channels > kMaxChannels)
    return fail(ErrorKind::Unsupported,
                channels_text(info.channels) + " at " + rate_text(info.samplerate) + ": at most " +
                    std::to_string(kMaxChannels) + " channels and " + rate_text(kMaxSourceRate),
                name);
  const double declared = double(info.frames) / info.samplerate;
  if (info.frames != SF_COUNT_MAX && declared > kMaxDeclaredSeconds)
    return fail(ErrorKind::TooLarge,
                "declares " + with_commas(info.frames) + " frames at " + rate_text(info.samplerate) + " (" +
                    with_commas(static_cast<long long>(declared / 3600)) + " h): at most " +
                    std::to_string(int(kMaxDeclaredSeconds / 3600)) + " h",
                name);
  const double per_second = double(info.samplerate) * info.channels;
  if (kModelSeconds * per_second > double(budget))
    return fail(ErrorKind::TooLarge,
                channels_text(info.channels) + " at " + rate_text(info.samplerate) + ": the " +
                    std::to_string(int(kModelSeconds)) + " s a speech model reads are " +
                    with_commas(static_cast<long long>(kModelSeconds * per_second)) + " samples, over the " +
                    with_commas(budget) + " decoded from a file at most",
                name);
  Plan plan;
  const auto by_time = sf_count_t(std::llround(kMaxSeconds * info.samplerate));
  const auto by_budget = sf_count_t(budget / info.channels);
  plan.keep = std::min(by_time, by_budget);
  plan.budget_cut = by_budget < by_time;
  return plan;
}

// The frames of an open file mixed to mono (the channels' mean), cut at kMaxSeconds or at the budget of decoded
// samples, resampled to kSampleRate as they are read.
Result<Audio> decode(SNDFILE* file, const SF_INFO& info, const std::string& name,
                     std::int64_t budget = kMaxDecodedSamples) {
  auto plan = plan_decode(info, name, budget);
  if (!plan) return std::unexpected(plan.error());
  Audio audio;
  audio.source_rate = info.samplerate;
  audio.source_channels = info.channels;
  audio.source_seconds = info.frames > 0 && info.frames != SF_COUNT_MAX ? double(info.frames) / info.samplerate : 0.0;
  const int c = info.channels;
  // At most 2^18 samples a block, whatever the channels.
  const sf_count_t block_frames = std::max<sf_count_t>(1, std::min<sf_count_t>(kBlockFrames, (1 << 18) / c));
  std::vector<float> block(std::size_t(block_frames) * std::size_t(c));
  std::vector<float> mono(static_cast<std::size_t>(block_frames));
  const bool convert = info.samplerate != kSampleRate;
  StreamResampler resampler(convert ? info.samplerate : kSampleRate, kSampleRate);
  const auto resample_failed = [&] { return fail(ErrorKind::Malformed, resampler.error(), name); };
  const sf_count_t expected = info.frames > 0 ? std::min(info.frames, plan->keep) : 0;
  audio.samples.reserve(std::size_t(double(expected) * kSampleRate / info.samplerate) + 1024);
  sf_count_t total = 0, nonfinite = 0, clipped = 0;
  bool cut = false;
  while (true) {
    const sf_count_t want = std::min(block_frames, plan->keep - total);
    if (want <= 0) {
      // One frame more tells a file of exactly the kept length from a longer one (info.frames may be unknown).
      cut = sf_readf_float(file, block.data(), 1) > 0;
      break;
    }
    const sf_count_t got = sf_readf_float(file, block.data(), want);
    if (got <= 0) break;
    for (sf_count_t f = 0; f < got; ++f) {
      float sum = 0.0f;
      for (int k = 0; k < c; ++k) sum += block[std::size_t(f * c + k)];
      const float mean = sum / float(c);
      // A NaN would spread through the resampler, and a sample of 1e30 makes the spectrogram's power infinite.
      if (!std::isfinite(mean)) {
        ++nonfinite;
        mono[std::size_t(f)] = 0.0f;
      } else if (std::abs(mean) > kMaxSampleMagnitude) {
        ++clipped;
        mono[std::size_t(f)] = std::copysign(kMaxSampleMagnitude, mean);
      } else {
        mono[std::size_t(f)] = mean;
      }
    }
    const std::span<const float> part(mono.data(), std::size_t(got));
    if (!convert) {
      audio.samples.insert(audio.samples.end(), part.begin(), part.end());
    } else if (!resampler.feed(part, false, audio.samples)) {
      return resample_failed();
    }
    total += got;
  }
  if (const int code = sf_error(file); code != SF_ERR_NO_ERROR)
    return fail(ErrorKind::Malformed, "at frame " + with_commas(total) + ": " + sf_error_number(code), name);
  if (total == 0) return fail(ErrorKind::Truncated, "has no samples: the audio is empty", name);
  if (convert && !resampler.feed({}, true, audio.samples)) return resample_failed();
  // A frame or two at a high rate make no sample at 16 kHz (fuzz_audio, 2026-11-29: one frame at 87,586 Hz).
  if (audio.samples.empty())
    return fail(ErrorKind::Truncated,
                "is too short: " + with_commas(total) + " frames at " + rate_text(info.samplerate) +
                    " make no sample at " + rate_text(kSampleRate),
                name);
  if (cut && !plan->budget_cut) {
    audio.warnings.push_back(
        "cut at " + std::to_string(int(kMaxSeconds / 60)) + " min: the file is " +
        (audio.source_seconds > kMaxSeconds ? seconds_text(audio.source_seconds) : std::string("longer")));
    if (audio.source_seconds <= kMaxSeconds) audio.source_seconds = kMaxSeconds;  // length unknown beforehand
  } else if (cut) {
    const double kept = double(total) / info.samplerate;
    audio.warnings.push_back(
        "cut at " + duration_text(kept) + ": at " + rate_text(info.samplerate) + " and " + channels_text(c) +
        " the first " + with_commas(total * c) + " samples are decoded (at most " + with_commas(budget) +
        " a file); the file is " +
        (audio.source_seconds > kept ? seconds_text(audio.source_seconds) : std::string("longer")));
    if (audio.source_seconds <= kept) audio.source_seconds = kept;
  }
  if (info.channels > 1)
    audio.warnings.push_back(std::to_string(info.channels) + " channels mixed to one (their mean)");
  if (convert)
    audio.warnings.push_back("resampled from " + rate_text(info.samplerate) + " to " + rate_text(kSampleRate));
  if (nonfinite > 0)
    audio.warnings.push_back(with_commas(nonfinite) + " of " + with_commas(total) +
                             " samples are not finite (NaN or infinite): read as silence");
  if (clipped > 0)
    audio.warnings.push_back(with_commas(clipped) + " of " + with_commas(total) + " samples lie beyond +-" +
                             with_commas(static_cast<long long>(kMaxSampleMagnitude)) +
                             " (audio is nominally within +-1): clipped there");
  for (float& s : audio.samples)
    if (!std::isfinite(s)) s = 0.0f;
  return audio;
}

// libsndfile's reason, and what it means here.
std::unexpected<Error> not_audio(const std::string& name) {
  return fail(ErrorKind::Unsupported,
              std::string("is not audio libsndfile reads (WAV, FLAC, Ogg, AIFF): ") + sf_strerror(nullptr), name);
}

struct Memory {
  std::span<const unsigned char> bytes;
  sf_count_t at = 0;
};
sf_count_t memory_length(void* user) { return sf_count_t(static_cast<Memory*>(user)->bytes.size()); }
sf_count_t memory_seek(sf_count_t offset, int whence, void* user) {
  auto* m = static_cast<Memory*>(user);
  const sf_count_t base = whence == SEEK_CUR ? m->at : whence == SEEK_END ? sf_count_t(m->bytes.size()) : 0;
  m->at = std::clamp<sf_count_t>(base + offset, 0, sf_count_t(m->bytes.size()));
  return m->at;
}
sf_count_t memory_read(void* out, sf_count_t count, void* user) {
  auto* m = static_cast<Memory*>(user);
  const sf_count_t n = std::clamp<sf_count_t>(sf_count_t(m->bytes.size()) - m->at, 0, std::max<sf_count_t>(count, 0));
  if (n > 0) std::memcpy(out, m->bytes.data() + m->at, std::size_t(n));
  m->at += n;
  return n;
}
sf_count_t memory_write(const void*, sf_count_t, void*) { return 0; }
sf_count_t memory_tell(void* user) { return static_cast<Memory*>(user)->at; }

// A regular file read through its descriptor with pread: libsndfile never owns the descriptor (given one with
// sf_open_fd, libsndfile 1.2 closes it when the open fails, whatever it was asked, and the owner's close would then be
// a second one).
struct Descriptor {
  int fd = -1;
  sf_count_t size = 0, at = 0;
};
sf_count_t descriptor_length(void* user) { return static_cast<Descriptor*>(user)->size; }
sf_count_t descriptor_seek(sf_count_t offset, int whence, void* user) {
  auto* d = static_cast<Descriptor*>(user);
  const sf_count_t base = whence == SEEK_CUR ? d->at : whence == SEEK_END ? d->size : 0;
  d->at = std::clamp<sf_count_t>(base + offset, 0, d->size);
  return d->at;
}
sf_count_t descriptor_read(void* out, sf_count_t count, void* user) {
  auto* d = static_cast<Descriptor*>(user);
  sf_count_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(d->fd, static_cast<char*>(out) + done, std::size_t(count - done), off_t(d->at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += n;
    d->at += n;
  }
  return done;
}
sf_count_t descriptor_tell(void* user) { return static_cast<Descriptor*>(user)->at; }

}  // namespace

Result<Audio> read_audio(const std::filesystem::path& path) {
  const std::string name = path.string();
  auto file = detail::open_regular_file(path, "an audio file");
  if (!file) return std::unexpected(file.error());
  if (file->size() == 0) return fail(ErrorKind::Truncated, "is empty (0 bytes): not audio", name);
  if (file->size() > kMaxFileBytes)
    return fail(
        ErrorKind::TooLarge,
        "is " + with_commas(file->size()) + " bytes; an audio file is at most " + with_commas(kMaxFileBytes) + " bytes",
        name);
  // The descriptor stays `file`'s, closed when it goes (after the handle).
  Descriptor descriptor{file->fd(), sf_count_t(file->size())};
  SF_VIRTUAL_IO io{descriptor_length, descriptor_seek, descriptor_read, memory_write, descriptor_tell};
  SF_INFO info{};
  SndFile handle(sf_open_virtual(&io, SFM_READ, &info, &descriptor));
  if (!handle) return not_audio(name);
  return decode(handle.get(), info, name);
}

Result<Audio> read_audio_bytes(std::span<const unsigned char> bytes, const std::string& name,
                               std::int64_t max_decoded_samples) {
  if (bytes.empty()) return fail(ErrorKind::Truncated, "is empty (0 bytes): not audio", name);
  Memory memory{bytes};
  SF_VIRTUAL_IO io{memory_length, memory_seek, memory_read, memory_write, memory_tell};
  SF_INFO info{};
  SndFile handle(sf_open_virtual(&io, SFM_READ, &info, &memory));
  if (!handle) return not_audio(name);
  return decode(handle.get(), info, name, std::max<std::int64_t>(1, max_decoded_samples));
}

Result<void> write_wav(const std::filesystem::path& path, std::span<const float> samples, int rate) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  SndFile handle(sf_open(path.c_str(), SFM_WRITE, &info));
  if (!handle) return fail(ErrorKind::Io, std::string("cannot be written: ") + sf_strerror(nullptr), path.string());
  // Clipped rather than wrapped.
  sf_command(handle.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);
  if (sf_writef_float(handle.get(), samples.data(), sf_count_t(samples.size())) != sf_count_t(samples.size()))
    return fail(ErrorKind::Io, std::string("cannot be written: ") + sf_strerror(handle.get()), path.string());
  return {};
}

Result<std::vector<float>> resample(std::span<const float> samples, int from_rate, int to_rate) {
  if (from_rate < 1 || to_rate < 1)
    return fail(ErrorKind::OutOfRange,
                "cannot resample from " + std::to_string(from_rate) + " Hz to " + std::to_string(to_rate) + " Hz");
  if (from_rate == to_rate || samples.empty()) return std::vector<float>(samples.begin(), samples.end());
  const double ratio = double(to_rate) / from_rate;
  std::vector<float> out(std::size_t(std::ceil(double(samples.size()) * ratio)) + 16);
  SRC_DATA data{};
  data.data_in = samples.data();
  data.input_frames = long(samples.size());
  data.data_out = out.data();
  data.output_frames = long(out.size());
  data.src_ratio = ratio;
  if (const int code = src_simple(&data, SRC_SINC_MEDIUM_QUALITY, 1); code != 0)
    return fail(ErrorKind::Malformed, std::string("resampling failed: ") + src_strerror(code));
  out.resize(std::size_t(data.output_frames_gen));
  return out;
}

}  // namespace attn::audio
