// A review classifier's part of `attnscope-cli align`: runs the text, writes the word shading with the sentence bars
// and the class probabilities (--out) and the heads x words matrix (--csv).
#pragma once

#include "workbenches/alignment/alignment_cli.h"

namespace attn::ui {

AlignStep runReviewsCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                        RenderReport& report);

}  // namespace attn::ui
