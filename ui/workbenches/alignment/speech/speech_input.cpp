#include "workbenches/alignment/speech/speech_input.h"

#include <cctype>
#include <string>

namespace attn::ui {
namespace {

// A paste of a book would be said whole before a model heard its first 30 s: the words up to the kMaxSaidWords-th,
// and none that starts past kMaxSaidBytes, are said (a single word longer than twice that is cut inside). 150 words
// of en-us are about 38 s of speech, said in about 0.3 s here; the bundled model reads 30 s.
constexpr int kMaxSaidWords = 150;
constexpr std::size_t kMaxSaidBytes = 1500;

std::size_t sayableLength(const std::string& text) {
  const auto space = [&](std::size_t i) { return std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  int words = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (space(i) || (i > 0 && !space(i - 1))) continue;  // not the start of a word
    if (++words > kMaxSaidWords || (i >= kMaxSaidBytes && words > 1)) return i;
  }
  if (text.size() <= 2 * kMaxSaidBytes) return text.size();
  std::size_t cut = 2 * kMaxSaidBytes;  // one giant word: cut inside it, on a UTF-8 character's first byte
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice) {
  SpeechInput input;
  if (!wavPath.isEmpty()) {
    auto read = attn::audio::read_audio(wavPath.toStdString());
    if (!read) return std::unexpected(read.error());
    input.audio = std::move(*read);
    input.file = wavPath;
  } else {
    const std::size_t cut = sayableLength(text);
    const std::string said = text.substr(0, cut);
    auto speech = attn::audio::synthesise(said, attn::audio::Voice{voice});
    if (!speech) return std::unexpected(speech.error());
    input.audio = std::move(speech->audio);
    input.phonemes = std::move(speech->phonemes);
    input.voice = QString::fromStdString(voice);
    if (cut < text.size()) {
      input.audio.warnings.push_back("said the first " + std::to_string(cut) + " bytes of the text's " +
                                     std::to_string(text.size()) + " (at most " + std::to_string(kMaxSaidWords) +
                                     " words or " + std::to_string(kMaxSaidBytes) + " bytes are said)");
    }
  }
  input.logMel = attn::audio::log_mel(input.audio.samples);
  return input;
}

}  // namespace attn::ui
