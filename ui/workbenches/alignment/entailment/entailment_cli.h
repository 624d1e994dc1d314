// An entailment model's part of `attnscope-cli align`: runs the premise (--text) and the hypothesis (--pair), writes
// the hypothesis x premise heatmap with the word in view outlined, or the figure of the premise shaded by that
// word's attention (--view shading), and the matrix (--csv).
#pragma once

#include "workbenches/alignment/alignment_cli.h"

namespace attn::ui {

AlignStep runEntailmentCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                           RenderReport& report);

}  // namespace attn::ui
