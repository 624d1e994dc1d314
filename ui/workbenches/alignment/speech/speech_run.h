// A speech model's run: the sentence said by espeak-ng (or the audio file read), then its log-mel frames decoded.
#pragma once

#include "workbenches/alignment/alignment_run.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<AlignmentRunner> makeSpeechRunner(const AlignmentModel& model);

}  // namespace attn::ui
