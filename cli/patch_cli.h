// `attnscope-cli patch`: activation patching from the command line. Runs the clean and the corrupted input (texts, or
// images for a ViT) through a model with their activations kept, then patches each cell of the chosen sweep (every
// head, every layer x position of the residual stream, every head x position, or the attention or MLP output of
// every layer x position) from the clean run into the corrupted one and measures the normalised recovery of the metric
// (attn/models/intervention.h). Writes the result as CSV and, with --out, as a heatmap.
#pragma once

#include "attn/models/intervention.h"
#include "workbenches/common/render_report.h"

#include <QSize>
#include <QString>

#include <expected>
#include <string>

namespace attn::ui {

struct PatchJob {
  QString modelDir;
  std::string clean, corrupt;  // texts (raw bytes), or a ViT's image files
  std::string answer, wrong;   // one token each (ViT: a class name or index); empty: not given
  attn::models::Sweep over = attn::models::Sweep::Heads;
  attn::models::Metric metric = attn::models::Metric::LogitDiff;
  int position = -1;  // the measured position; -1: the last (causal), the first [MASK] (BERT), the class token (ViT)
  QString csvPath;    // required
  QString outPath;    // .png, .svg or .pdf: the heatmap (optional)
  QSize size{900, 700};
};

// One input through the model with its activations kept (and its maps): a text (its tokens with the model's special
// tokens), or for a ViT an image file; `position` is the run's logits position (-1: the family's own).
attn::Result<attn::models::TransformerRun> runInput(attn::models::TransformerRunner& runner, const std::string& input,
                                                    int position);
// A token given as text (--answer, --target) as one output index: one token of the model's tokenizer (said how it
// tokenises otherwise, and whether the text with a leading space is one), or a ViT's class by name or index.
std::expected<int, RenderFailure> outputIndex(const attn::models::TransformerModel& model, const std::string& text,
                                              const char* option);

// summary: "patch: gpt2 · 12 tokens · heads (144 cells) · logit-diff clean 3.214, corrupted -1.020 · 812 ms";
// notes: the cells that recover most; written: the files. Progress goes to stderr, a line per tenth of the cells.
std::expected<RenderReport, RenderFailure> runPatch(const PatchJob& job);

}  // namespace attn::ui
