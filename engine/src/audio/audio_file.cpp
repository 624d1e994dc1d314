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

#include <unistd.h>

namespace attn::audio {

namespace {

struct SndCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndFile = std::unique_ptr<SNDFILE, SndCloser>;

// Blocks of this many frames are read and mixed at a time: a 6-channel file is never held whole in 6 channels.
constexpr sf_count_t kBlockFrames = 1 << 15;

std::string rate_text(int rate) { return with_commas(rate) + " Hz"; }
// "12 min 3.5 s long"
std::string seconds_text(double seconds) {
  const int minutes = int(seconds / 60);
  const double rest = seconds - 60.0 * minutes;
  return std::to_string(minutes) + " min " + std::to_string(int(rest)) + "." + std::to_string(int(rest * 10) % 10) +
         " s long";
}

// The frames of an open file mixed to mono (the channels' mean), cut at kMaxSeconds, resampled to kSampleRate.
Result<Audio> decode(SNDFILE* file, const SF_INFO& info, const std::string& name) {
  if (info.channels < 1 || info.samplerate < 1)
    return fail(ErrorKind::Malformed,
                std::to_string(info.channels) + " channels at " + std::to_string(info.samplerate) + " Hz", name);
  if (info.samplerate > 768000 || info.channels > 256)
    return fail(ErrorKind::Unsupported,
                std::to_string(info.channels) + " channels at " + rate_text(info.samplerate) +
                    ": at most 256 channels and 768,000 Hz",
                name);
  Audio audio;
  audio.source_rate = info.samplerate;
  audio.source_channels = info.channels;
  audio.source_seconds = info.frames > 0 ? double(info.frames) / info.samplerate : 0.0;
  const auto limit = sf_count_t(std::llround(kMaxSeconds * info.samplerate));
  std::vector<float> mono;
  std::vector<float> block(std::size_t(kBlockFrames) * std::size_t(info.channels));
  sf_count_t total = 0;
  bool cut = false;
  while (true) {
    const sf_count_t want = std::min(kBlockFrames, limit - total);
    if (want <= 0) {
      // One frame more tells a file of exactly ten minutes from a longer one (info.frames may be unknown).
      float probe[256];
      cut = sf_readf_float(file, probe, 1) > 0;
      break;
    }
    const sf_count_t got = sf_readf_float(file, block.data(), want);
    if (got <= 0) break;
    const int c = info.channels;
    for (sf_count_t f = 0; f < got; ++f) {
      float sum = 0.0f;
      for (int k = 0; k < c; ++k) sum += block[std::size_t(f * c + k)];
      mono.push_back(sum / float(c));
    }
    total += got;
  }
  if (const int code = sf_error(file); code != SF_ERR_NO_ERROR)
    return fail(ErrorKind::Malformed, "at frame " + with_commas(total) + ": " + sf_error_number(code), name);
  if (mono.empty()) return fail(ErrorKind::Truncated, "has no samples: the audio is empty", name);
  if (cut) {
    audio.warnings.push_back(
        "cut at " + std::to_string(int(kMaxSeconds / 60)) + " min: the file is " +
        (audio.source_seconds > kMaxSeconds ? seconds_text(audio.source_seconds) : std::string("longer")));
    if (audio.source_seconds <= kMaxSeconds) audio.source_seconds = kMaxSeconds;  // length unknown beforehand
  }
  if (info.channels > 1)
    audio.warnings.push_back(std::to_string(info.channels) + " channels mixed to one (their mean)");
  if (info.samplerate != kSampleRate) {
    auto converted = resample(mono, info.samplerate, kSampleRate);
    if (!converted) {
      converted.error().file = name;
      return std::unexpected(converted.error());
    }
    audio.warnings.push_back("resampled from " + rate_text(info.samplerate) + " to " + rate_text(kSampleRate));
    audio.samples = std::move(*converted);
  } else {
    audio.samples = std::move(mono);
  }
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

Result<Audio> read_audio_bytes(std::span<const unsigned char> bytes, const std::string& name) {
  if (bytes.empty()) return fail(ErrorKind::Truncated, "is empty (0 bytes): not audio", name);
  Memory memory{bytes};
  SF_VIRTUAL_IO io{memory_length, memory_seek, memory_read, memory_write, memory_tell};
  SF_INFO info{};
  SndFile handle(sf_open_virtual(&io, SFM_READ, &info, &memory));
  if (!handle) return not_audio(name);
  return decode(handle.get(), info, name);
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
