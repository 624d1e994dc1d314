// A speech model's input in the Alignment tab and `attnscope-cli align`: a sentence said by espeak-ng (with each
// phoneme's true time span) or an audio file read, and the log-mel frames the model reads. One function for both,
// run on the tab's worker thread.
#pragma once

#include "attn/error.h"
#include "render/speech_input.h"

#include <QString>

#include <string>
#include <vector>

namespace attn::ui {

// `wavPath` when given, else `text` said in `voice`. Errors name the file or say why the text was not said.
attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice);

}  // namespace attn::ui
