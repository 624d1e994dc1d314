// Speech synthesis with espeak-ng's library, and log-mel spectrograms (audio.h).
#include "attn/audio/audio.h"

#include <espeak-ng/speak_lib.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numbers>

namespace attn::audio {

namespace {

// espeak-ng keeps one global state: one synthesis at a time, into these.
std::mutex synth_mutex;
struct Collected {
  std::vector<short> pcm;
  struct Event {
    std::string phoneme;  // empty: a word starts
    long sample = 0;
    int text_position = 0, length = 0;
  };
  std::vector<Event> events;
  std::size_t limit = 0;  // samples: past it the synthesis is stopped
  bool stopped = false;
};
Collected* collecting = nullptr;

int on_synth(short* wav, int count, espeak_EVENT* events) {
  if (collecting == nullptr) return 0;
  if (wav != nullptr && count > 0) {
    if (collecting->pcm.size() + std::size_t(count) > collecting->limit) {
      collecting->stopped = true;
      return 1;  // espeak-ng stops the synthesis
    }
    collecting->pcm.insert(collecting->pcm.end(), wav, wav + count);
  }
  for (espeak_EVENT* e = events; e != nullptr && e->type != espeakEVENT_LIST_TERMINATED; ++e) {
    if (e->type == espeakEVENT_PHONEME) {
      std::string name(e->id.string, strnlen(e->id.string, sizeof e->id.string));
      collecting->events.push_back({std::move(name), long(e->sample), e->text_position, 0});
    } else if (e->type == espeakEVENT_WORD) {
      collecting->events.push_back({{}, long(e->sample), e->text_position, e->length});
    }
  }
  return 0;
}

// espeak-ng's rate, or an error when its data cannot be found. Called with synth_mutex held.
Result<int> initialise() {
  static int rate = 0;
  if (rate > 0) return rate;
  const int r = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr,
                                  espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_DONT_EXIT);
  if (r <= 0)
    return fail(ErrorKind::Io, "espeak-ng could not start: its data (the espeak-ng-data package) was not found",
                "espeak-ng");
  espeak_SetSynthCallback(on_synth);
  rate = r;
  return rate;
}

// espeak-ng's own voices, as espeak_ListVoices lists them, read once (synth_mutex held, espeak-ng started). A voice
// name given to espeak_SetVoiceByName that is none of these is read as a path under espeak-ng's data folder:
// "../../../../etc/passwd" made libespeak-ng 1.51 parse that file as a voice, print its lines to stderr and crash.
// So a requested voice is looked up here, exactly, and only the listed strings reach espeak-ng.
struct ListedVoice {
  std::string name, identifier;        // "English (America)", "gmw/en-US"
  std::vector<std::string> languages;  // "en-us", "en"
};
struct VoiceList {
  std::vector<ListedVoice> voices;
  std::vector<ListedVoice> variants;  // identifier "!v/f2"; `key` below is "f2"
  static std::string key(const ListedVoice& variant) { return variant.identifier.substr(3); }
};

ListedVoice listed(const espeak_VOICE& v) {
  ListedVoice out;
  if (v.name != nullptr) out.name = v.name;
  if (v.identifier != nullptr) out.identifier = v.identifier;
  // espeak-ng's languages: a priority byte, then a NUL-terminated name, repeated; a zero priority ends the list.
  for (const char* p = v.languages; p != nullptr && *p != 0;) {
    ++p;
    const std::size_t n = std::strlen(p);
    if (n > 0) out.languages.emplace_back(p, n);
    p += n + 1;
  }
  return out;
}

const VoiceList& voice_list() {
  static const VoiceList list = [] {
    VoiceList out;
    if (const espeak_VOICE** all = espeak_ListVoices(nullptr); all != nullptr)
      for (const espeak_VOICE** v = all; *v != nullptr; ++v) out.voices.push_back(listed(**v));
    espeak_VOICE spec{};
    char variant[] = "variant";
    spec.languages = variant;
    if (const espeak_VOICE** all = espeak_ListVoices(&spec); all != nullptr)
      for (const espeak_VOICE** v = all; *v != nullptr; ++v) {
        ListedVoice entry = listed(**v);
        if (entry.identifier.size() > 3 && entry.identifier.starts_with("!v/"))
          out.variants.push_back(std::move(entry));
      }
    return out;
  }();
  return list;
}

// The requested voice, for the message: its first 64 bytes, control characters as '?'.
std::string shown(std::string_view requested) {
  std::string out(requested.substr(0, 64));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return requested.size() > 64 ? out + "..." : out;
}

// `requested` ("en-us", "en-us+f2", "gmw/en-US", "English (America)+Andy") matched exactly against the listed
// voices' languages, names and identifiers, and its variant (after '+') against the listed variants' file names
// and names. What espeak-ng is given is made of the listed strings alone. Called with synth_mutex held.
Result<std::string> listed_voice(const std::string& requested) {
  const VoiceList& list = voice_list();
  const std::size_t plus = requested.find('+');
  const std::string base = requested.substr(0, plus);
  const std::string variant = plus == std::string::npos ? std::string() : requested.substr(plus + 1);
  const std::string* voice = nullptr;
  for (const ListedVoice& v : list.voices) {
    for (const std::string& language : v.languages)
      if (voice == nullptr && language == base) voice = &language;
    if (voice == nullptr && v.identifier == base) voice = &v.identifier;
    if (voice == nullptr && v.name == base) voice = &v.name;
  }
  std::string chosen_variant;
  bool variant_found = plus == std::string::npos;
  for (const ListedVoice& v : list.variants) {
    if (!variant_found && (VoiceList::key(v) == variant || v.name == variant)) {
      chosen_variant = VoiceList::key(v);
      variant_found = true;
    }
  }
  if (voice != nullptr && variant_found) return chosen_variant.empty() ? *voice : *voice + "+" + chosen_variant;
  // A few that are there, for the message.
  std::vector<std::string> examples;
  for (const char* language : {"en-us", "en", "de", "fr", "es"})
    for (const ListedVoice& v : list.voices)
      if (std::find(v.languages.begin(), v.languages.end(), language) != v.languages.end() &&
          std::find(examples.begin(), examples.end(), language) == examples.end())
        examples.emplace_back(language);
  for (const char* key : {"f2", "m3"})
    for (const ListedVoice& v : list.variants)
      if (VoiceList::key(v) == key && !examples.empty()) examples.push_back(examples.front() + "+" + key);
  std::string listing;
  for (const std::string& e : examples) listing += (listing.empty() ? "" : ", ") + e;
  const std::string what =
      voice == nullptr ? "voice \"" + shown(requested) + "\"" : "variant \"" + shown(variant) + "\" (after the '+')";
  return fail(ErrorKind::OutOfRange,
              "espeak-ng has no " + what + ": a voice is one of espeak-ng's " +
                  with_commas(static_cast<long long>(list.voices.size())) +
                  " voices, by language, name or identifier, with one of its " +
                  with_commas(static_cast<long long>(list.variants.size())) + " variants after a '+' if wanted (" +
                  listing + (listing.empty() ? "" : ", ...") + ")",
              "voice");
}

// Byte offset of each character of UTF-8 text (and one past the end): espeak-ng counts characters from 1.
std::vector<std::int32_t> character_offsets(std::string_view text) {
  std::vector<std::int32_t> offsets;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) offsets.push_back(std::int32_t(i));
  offsets.push_back(std::int32_t(text.size()));
  return offsets;
}

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

}  // namespace

std::vector<std::string> voice_variants(const std::string& language) {
  std::vector<std::string> names{language};
  for (const char* v : {"m1", "m2", "m3", "m4", "m5", "m6", "m7", "f1", "f2", "f3", "f4", "f5"})
    names.push_back(language + "+" + v);
  return names;
}

Result<Speech> synthesise(std::string_view text, const Voice& voice) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return fail(ErrorKind::OutOfRange, "nothing to say: the text is empty", "text");
  if (text.size() > kMaxSynthesisBytes)
    return fail(ErrorKind::TooLarge,
                "is " + with_commas(static_cast<long long>(text.size())) + " bytes; espeak-ng is given at most " +
                    with_commas(static_cast<long long>(kMaxSynthesisBytes)) + " bytes at a time",
                "text");
  if (voice.words_per_minute < 80 || voice.words_per_minute > 450)
    return fail(ErrorKind::OutOfRange, std::to_string(voice.words_per_minute) + " words per minute: from 80 to 450",
                "voice");
  if (voice.pitch < 0 || voice.pitch > 99)
    return fail(ErrorKind::OutOfRange, "pitch " + std::to_string(voice.pitch) + ": from 0 to 99", "voice");
  const std::string input(text);
  Collected collected;
  int rate = 0;
  {
    std::lock_guard lock(synth_mutex);
    auto started = initialise();
    if (!started) return std::unexpected(started.error());
    rate = *started;
    auto name = listed_voice(voice.name);
    if (!name) return std::unexpected(name.error());
    if (espeak_SetVoiceByName(name->c_str()) != EE_OK)
      return fail(ErrorKind::OutOfRange, "espeak-ng could not load its voice \"" + *name + "\"", "voice");
    espeak_SetParameter(espeakRATE, voice.words_per_minute, 0);
    espeak_SetParameter(espeakPITCH, voice.pitch, 0);
    // The same text in the same voice is not always the same audio in one process: espeak-ng 1.51 carries state
    // from one utterance to the next (one sentence said seven times in a row came out 26,857 to 26,864 samples
    // long; reseeding rand(), which its noise draws on, did not make them equal). Nothing here depends on it;
    // a fresh process's first synthesis is always the same (the parity WAV is made by one).
    collected.limit = std::size_t(kMaxSeconds * rate);
    collecting = &collected;
    const espeak_ERROR status =
        espeak_Synth(input.c_str(), input.size() + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, nullptr, nullptr);
    espeak_Synchronize();
    collecting = nullptr;
    if (collected.stopped)
      return fail(ErrorKind::TooLarge,
                  "said, it is longer than " + std::to_string(int(kMaxSeconds / 60)) + " min (" +
                      with_commas(static_cast<long long>(collected.limit)) + " samples at " + with_commas(rate) +
                      " Hz): at most " + std::to_string(int(kMaxSeconds / 60)) + " min of speech is made",
                  "text");
    if (status != EE_OK) return fail(ErrorKind::Malformed, "espeak-ng could not say it", "text");
  }
  Speech speech;
  std::vector<float> pcm(collected.pcm.size());
  std::transform(collected.pcm.begin(), collected.pcm.end(), pcm.begin(), [](short s) { return float(s) / 32768.0f; });
  speech.audio.source_rate = rate;
  speech.audio.source_channels = 1;
  speech.audio.source_seconds = double(pcm.size()) / rate;
  auto converted = resample(pcm, rate, kSampleRate);
  if (!converted) return std::unexpected(converted.error());
  speech.audio.samples = std::move(*converted);

  // Each phoneme from its event to the next phoneme's (or pause's) event, or to the end.
  const std::vector<std::int32_t> offsets = character_offsets(text);
  const auto byte_at = [&](int character) {
    return offsets[std::size_t(std::clamp(character, 0, int(offsets.size()) - 1))];
  };
  const double end_of_audio = speech.audio.seconds();
  Span word{0, std::int32_t(text.size())};
  const auto& events = collected.events;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (e.phoneme.empty()) {
      word = {byte_at(e.text_position - 1), byte_at(e.text_position - 1 + e.length)};
      continue;
    }
    if (e.phoneme.front() == '_') continue;  // a pause
    double end = end_of_audio;
    for (std::size_t j = i + 1; j < events.size(); ++j)
      if (!events[j].phoneme.empty()) {
        end = double(events[j].sample) / rate;
        break;
      }
    const double start = double(e.sample) / rate;
    speech.phonemes.push_back({e.phoneme, start, std::max(start, std::min(end, end_of_audio)), word});
  }
  if (speech.audio.samples.empty()) return fail(ErrorKind::Malformed, "espeak-ng said nothing", "text");
  return speech;
}

Matrix mel_filters(const MelSettings& s) {
  const int bins = s.fft / 2 + 1;
  Matrix filters = Matrix::Zero(s.bands, bins);
  std::vector<double> edges(std::size_t(s.bands) + 2);
  const double low = hz_to_mel(s.low_hz), high = hz_to_mel(s.high_hz);
  for (std::size_t i = 0; i < edges.size(); ++i)
    edges[i] = mel_to_hz(low + (high - low) * double(i) / double(s.bands + 1));
  for (int b = 0; b < s.bands; ++b) {
    const double left = edges[std::size_t(b)], centre = edges[std::size_t(b) + 1], right = edges[std::size_t(b) + 2];
    for (int k = 0; k < bins; ++k) {
      const double hz = double(k) * kSampleRate / s.fft;
      const double w = std::min((hz - left) / (centre - left), (right - hz) / (right - centre));
      filters(b, k) = float(std::max(0.0, w));
    }
  }
  return filters;
}

std::vector<double> mel_centres(const MelSettings& s) {
  std::vector<double> centres(std::size_t(s.bands));
  const double low = hz_to_mel(s.low_hz), high = hz_to_mel(s.high_hz);
  for (int b = 0; b < s.bands; ++b) centres[std::size_t(b)] = mel_to_hz(low + (high - low) * (b + 1) / (s.bands + 1));
  return centres;
}

Matrix log_mel(std::span<const float> samples, const MelSettings& s) {
  const Index count = Index(samples.size());
  const Index frames = count < s.window ? 0 : (count - s.window) / s.hop + 1;
  const int bins = s.fft / 2 + 1;
  if (frames == 0) return Matrix(0, s.bands);
  // Periodic Hann window (torch.hann_window's default).
  std::vector<float> window(std::size_t(s.window));
  for (int n = 0; n < s.window; ++n)
    window[std::size_t(n)] = float(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * n / s.window));
  const Matrix filters = mel_filters(s).transpose();
  Matrix mel(frames, s.bands);
  // In blocks of frames: the FFT's buffers stay a few MB for a file of ten minutes (whole, they were 430 MB).
  constexpr Index kBlock = 1024;
  cv::Mat framed, spectrum;
  Matrix power;
  for (Index first = 0; first < frames; first += kBlock) {
    const Index n = std::min(kBlock, frames - first);
    framed = cv::Mat::zeros(int(n), s.fft, CV_32F);
    for (Index t = 0; t < n; ++t) {
      auto* row = framed.ptr<float>(int(t));
      const float* from = samples.data() + (first + t) * s.hop;
      for (int k = 0; k < s.window; ++k) row[k] = from[k] * window[std::size_t(k)];
    }
    cv::dft(framed, spectrum, cv::DFT_ROWS | cv::DFT_COMPLEX_OUTPUT);
    power.resize(n, bins);
    for (Index t = 0; t < n; ++t) {
      const auto* row = spectrum.ptr<cv::Vec2f>(int(t));
      for (int k = 0; k < bins; ++k) power(t, k) = row[k][0] * row[k][0] + row[k][1] * row[k][1];
    }
    mel.middleRows(first, n).noalias() = power * filters;
  }
  return (mel.array() + 1e-6f).log().matrix();
}

}  // namespace attn::audio
