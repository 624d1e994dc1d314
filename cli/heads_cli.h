// `attnscope-cli heads`: the head detectors (attn/analysis/head_detectors.h) without a window. Loads a model folder,
// scores every head on the detection inputs, writes one CSV row per head (--csv) and a small-multiples picture, one
// layers x heads heatmap per detector asked (--out), painted by render/heatmap_figure.h as the other verbs' views.
#pragma once

#include "attn/analysis/head_detectors.h"
#include "workbenches/common/render_report.h"

#include <QByteArray>
#include <QString>

#include <expected>
#include <vector>

namespace attn::ui {

struct HeadsJob {
  QString modelDir;
  std::vector<attn::analysis::HeadDetector> detectors;  // the columns filled (parseDetectors)
  attn::analysis::HeadDetectionOptions options;
  QString csvPath;  // may be empty
  QString outPath;  // .png (or .svg, .pdf); may be empty
};

// --detect "previous-token,induction": each name once, in the order of head_detectors(). An unknown or empty name is
// a message naming --detect, the value and the names it takes.
std::expected<std::vector<attn::analysis::HeadDetector>, QString> parseDetectors(const QString& list);

// The header `layer,head,previous_token,duplicate_token,induction,induction_offset,sink`, then one row per head
// (layer-major); a detector not in `detectors` leaves its column(s) empty.
QByteArray headsCsv(const attn::analysis::HeadDetection& found,
                    const std::vector<attn::analysis::HeadDetector>& detectors);

// summary: "heads: GPT-2 · 2 layers x 4 heads · 4 inputs of 20 tokens, twice · 0.2 s"; notes: what S was drawn from
// and each detector's strongest head; written: the files. A model the detectors refuse (ViT, no tokenizer, inputs past
// its positions, too few tokens to draw from) is a usage failure naming the model.
std::expected<RenderReport, RenderFailure> runHeads(const HeadsJob& job);

}  // namespace attn::ui
