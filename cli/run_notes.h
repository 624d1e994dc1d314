// The notes attnscope-cli run prints about a model run: its warnings, predictions and classes; a generation's
// continuation, speed and memory estimate; an ablation's predictions beside the unablated run's.
#pragma once

#include "cli/transformer_cli.h"
#include "workbenches/common/render_report.h"

#include "attn/models/transformer.h"

#include <QString>

namespace attn::ui {

// "generated 40 tokens in 12.3 ms (3,252 tokens/s): , there was a little girl ..."
QString generationNote(const attn::models::TransformerModel& model, const attn::models::TransformerRun& run,
                       double seconds);
// "memory: about 12 MB estimated for the generation (the budget: 20.3 GB)": what the engine checked before it began.
QString memoryNote(const attn::models::TransformerRun& run);
// --ablate: what was ablated, and each prediction beside the unablated run's (`baseline`), with the change.
void addAblationNotes(const TransformerJob& job, const attn::Result<attn::models::TransformerRun>& baseline,
                      const attn::models::TransformerRun& run, RenderReport& report);
// The run's warnings, predictions and classes as notes; the engine's warning that the predictions are not finite
// (engine/src/models/hf/prediction_checks.cpp) goes to stderr with the other warnings, once: printed among the
// notes only, NaN probabilities would pass for predictions.
void addRunNotes(const attn::models::TransformerRun& run, RenderReport& report);

}  // namespace attn::ui
