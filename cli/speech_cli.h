// `attnscope-cli speech`: what a speech model hears. Synthesises --text with espeak-ng (or reads --wav), and
// writes the 16 kHz audio (--wav-out), its log-mel spectrogram and each phoneme's time span (--json). With
// --batch, a corpus: one utterance per line of a JSON-lines file ({"text", "voice", "rate", "pitch", "noise",
// "seed"}), written as DIR/features.safetensors (every log-mel frame, float32, and each utterance's first frame)
// and DIR/utterances.jsonl (text, voice, phonemes with their spans): what tools/train/train_speech.py trains on.
#pragma once

#include "cli/headless.h"
#include "attn/audio/audio.h"

#include <QString>

#include <expected>
#include <string>

namespace attn::ui {

struct SpeechJob {
  std::string text;  // raw bytes
  bool hasText = false;
  QString wavIn;
  attn::audio::Voice voice;
  double noise = 0.0;  // standard deviation of white noise added to the samples
  unsigned seed = 0;
  QString wavOut, jsonOut;
  QString batch, outDir;
};

std::expected<RenderReport, RenderFailure> runSpeech(const SpeechJob& job);

}  // namespace attn::ui
