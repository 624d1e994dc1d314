// The Alignment tab's page for the speech recognisers (a seq2seq over the frames of audio espeak-ng says).
#pragma once

#include "workbenches/alignment/alignment_page.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<const AlignmentPage> makeSpeechPage();

}  // namespace attn::ui
