// What a speech model hears, as the Alignment tab's speech page and `attnscope-cli align` hold it: the audio, the
// phonemes said (with their true time spans) and the log-mel frames. A plain value, so that the view that draws it
// (views/speech_view.h) and the code that makes it (workbenches/alignment_speech.h: speechInput()) share it from
// the lowest UI layer.
#pragma once

#include "attn/audio/audio.h"
#include "attn/core.h"

#include <QString>

#include <vector>

namespace attn::ui {

struct SpeechInput {
  attn::audio::Audio audio;                    // 16 kHz mono
  std::vector<attn::audio::Phoneme> phonemes;  // the synthesiser's, with their spans; empty for a file
  attn::Matrix logMel;                         // [frames, 80]
  QString voice;                               // the espeak-ng voice, or empty for a file
  QString file;                                // the audio file, or empty for a synthesis
};

}  // namespace attn::ui
