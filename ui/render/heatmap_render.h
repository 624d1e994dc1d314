// Pure drawing helpers: an attention matrix + colour map + value range -> a QImage (views/plot_data.h: QCustomPlot
// data), plus the small numeric decisions of drawing (value range, label thinning, label text). No widgets here, so the
// GUI, the CLI and the tests draw with the same code.
#pragma once

#include "attn/core.h"
#include "render/colormap.h"

#include <QImage>
#include <QString>

#include <string>

namespace attn::ui::render {

struct ValueRange {
  double lower = 0.0;
  double upper = 1.0;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

enum class RangeMode {
  Data,       // 0 .. max for non-negative maps (attention weights), min .. max otherwise
  Unit,       // 0 .. 1: compare maps by absolute weight (HeatmapView: distributions only; other maps keep Data)
  Symmetric,  // -m .. m with m the largest |value|: 0 in the middle of a diverging map (differences, recoveries)
};

// The colour range for `m`; never empty (a constant matrix gets a unit-wide range).
ValueRange valueRange(const attn::Matrix& m, RangeMode mode);

// True when every row, or every column, of `m` is a distribution: weights in 0..1 that sum to 1 (within 1e-3;
// NaN cells, drawn transparent, are skipped). Near-uniform weights stretched to the whole colour map would read
// as sharp attention; such maps are drawn on 0..1 by default.
bool isDistribution(const attn::Matrix& m);

// One pixel per cell, row 0 at the top; scale it with Qt::FastTransformation to keep cells crisp.
QImage matrixImage(const attn::Matrix& m, Colormap map, ValueRange range);

// Label every `stride`-th cell so neighbouring labels stay at least `minPixels` apart.
int labelStride(double pixelsPerCell, double minPixels);

// A token as an axis label: control characters made visible, long tokens elided.
QString tokenLabel(const std::string& token, int maxChars = 18);

// Shortest text that reads back as exactly the same float.
QString exactValue(float value);

}  // namespace attn::ui::render
