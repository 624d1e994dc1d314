// An entailment model's run: the premise and the hypothesis, word by word.
#pragma once

#include "workbenches/alignment/alignment_run.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<AlignmentRunner> makeEntailmentRunner(const AlignmentModel& model);

}  // namespace attn::ui
