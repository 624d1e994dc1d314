// A review classifier's run: attention pooling (or the hierarchical model's two levels) and, when asked, the
// bundled readings of saliency on the same text.
#pragma once

#include "workbenches/alignment/alignment_run.h"

#include <memory>

namespace attn::ui {

std::unique_ptr<AlignmentRunner> makeReviewsRunner(const AlignmentModel& model);

}  // namespace attn::ui
