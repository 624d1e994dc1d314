// The renderers' data in QCustomPlot's types: the colour maps as QCPColorGradients, an attention matrix and a
// glimpse filterbank as QCPColorMapData. QCustomPlot is a QWidget library, so these live with the views and not
// in render/, which is QtGui only (the command line draws with render/ and links no widgets).
#pragma once

#include "attn/core.h"
#include "attn/glimpse/gaussian.h"
#include "render/colormap.h"

class QCPColorGradient;
class QCPColorMapData;
class QCPRange;

namespace attn::ui::render {

// The same stops as colorStops() for QCustomPlot.
QCPColorGradient gradient(Colormap map);

// Cell centres along an axis of `cells` cells: 0 .. cells - 1, or -0.5 .. 0.5 for a single cell (a
// QCPColorMap with one cell and a zero-width range would draw nothing).
QCPRange cellCentreRange(int cells);
// The visible axis range that shows every cell completely: -0.5 .. cells - 0.5.
QCPRange cellAxisRange(int cells);

// Resizes `data` to m's shape and copies it: key (x) = column, value (y) = row, cell(c, r) = m(r, c).
void fillColorMapData(QCPColorMapData& data, const attn::Matrix& m);

// The bank as an n x columns heatmap over the pixels the bands touch: key (x) = pixel, value (y) = filter.
// When more than `maxColumns` pixels are touched, neighbouring pixels are merged into one cell by their
// maximum (so a narrow band never disappears). Returns the pixel range drawn and the peak weight.
struct BankMapInfo {
  double lower = 0.0;  // pixel coordinate of the first cell's centre
  double upper = 0.0;  // ... of the last cell's centre
  int columns = 0;
  int pixelsPerColumn = 1;
  double peak = 0.0;
};
BankMapInfo fillFilterBankMap(QCPColorMapData& data, const attn::glimpse::FilterBank& bank, int maxColumns = 1024);

}  // namespace attn::ui::render
