// The pictures and CSV files of issue 43's causal analysis, shared by attnscope-cli (patch, heads) and the
// Transformer tab's Patching and Head detectors panels, so both write the same bytes and draw the same figures.
#pragma once

#include "attn/analysis/head_detectors.h"
#include "attn/models/intervention.h"
#include "render/heatmap_figure.h"

#include <QByteArray>
#include <QString>

#include <string>
#include <vector>

namespace attn::ui::render {

// A patching sweep as CSV: a header row (the positions' tokens, or the heads' indices), then one row per layer
// labelled by it (heads x positions: per layer and head, "L.H"); the values are the recovery, %.9g (NaN: not yet
// computed). RFC 4180 lines (CRLF).
QByteArray sweepCsv(const attn::models::SweepResult& result, const std::vector<std::string>& tokens);
// The sweep as a heatmap: rows the layers (or layer.head), columns the heads or the positions' tokens, RdBu on a range
// symmetric about 0; `title` above it. Cells not yet computed are drawn as 0 (white).
HeatmapFigure sweepFigure(const attn::models::SweepResult& result, const std::vector<std::string>& tokens,
                          const QString& title);
// The sweep cell drawn at (row, column) of sweepFigure: layer, head (-1 when not a dimension), position (likewise).
attn::models::SweepCell sweepCellAt(const attn::models::SweepResult& result, int row, int column);

// A detector's score of one head.
float detectorScore(const attn::analysis::HeadScore& score, attn::analysis::HeadDetector detector);
// "previous token", "induction (cells: offset)", ...: a detector's figure title.
QString detectorTitle(attn::analysis::HeadDetector detector);
// One layers x heads map of a detector's scores, on 0..1 (viridis), the induction offsets written in the cells.
HeatmapFigure detectorFigure(const attn::analysis::HeadDetection& found, attn::analysis::HeadDetector detector);
// One row per head: layer,head,previous_token,duplicate_token,induction,induction_offset,sink (the detectors not in
// `detectors` left empty); RFC 4180 lines (CRLF).
QByteArray headsCsv(const attn::analysis::HeadDetection& found,
                    const std::vector<attn::analysis::HeadDetector>& detectors);

}  // namespace attn::ui::render
