// A speech model's input in the Alignment tab and `attnscope-cli align`: a sentence said by espeak-ng (with each
// phoneme's true time span) or an audio file read, and the log-mel frames the model reads. One function for both,
// run on the tab's worker thread.
#pragma once

#include "attn/audio/audio.h"
#include "attn/error.h"

#include <QString>

#include <string>
#include <vector>

namespace attn::ui {

struct SpeechInput {
  attn::audio::Audio audio;                    // 16 kHz mono
  std::vector<attn::audio::Phoneme> phonemes;  // the synthesiser's, with their spans; empty for a file
  attn::Matrix logMel;                         // [frames, 80]
  QString voice;                               // the espeak-ng voice, or empty for a file
  QString file;                                // the audio file, or empty for a synthesis
};

// `wavPath` when given, else `text` said in `voice`. Errors name the file or say why the text was not said.
attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice);

}  // namespace attn::ui
