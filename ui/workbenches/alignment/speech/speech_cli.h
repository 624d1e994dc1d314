// A speech model's part of `attnscope-cli align`: says --text with espeak-ng (the true phonemes among the notes) or
// reads --wav, decodes the log-mel frames and writes the phonemes x encoder steps alignment (the seq2seq kinds'
// part, alignment_cli.h). It has no shading figure: --view shading is refused.
#pragma once

#include "workbenches/alignment/alignment_cli.h"

namespace attn::ui {

AlignStep runSpeechCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                       RenderReport& report);

}  // namespace attn::ui
