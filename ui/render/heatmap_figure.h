// A heatmap as a figure painted with QPainter, for attnscope-cli and any export without a widget: the cells (row 0
// on top, one flat colour each), the row tokens down the left and the column tokens along the top (every stride-th
// one, so labels never overlap), the axis titles, a colour bar with its numbers and its label, a title, and the
// Alignment tab's overlay. The window's HeatmapView draws the same picture with QCustomPlot, interactively; this is
// its still twin, in the render layer so that the command line links no widgets.
#pragma once

#include "attn/trace.h"
#include "render/alignment_overlay.h"
#include "render/colormap.h"
#include "render/heatmap_render.h"
#include "render/map_pooling.h"

#include <QFont>
#include <QRect>
#include <QSize>
#include <QString>

#include <memory>
#include <vector>

class QPainter;

namespace attn::ui::render {

struct HeatmapFigure {
  std::shared_ptr<const attn::AttentionMap> map;
  Colormap colormap = Colormap::Viridis;
  RangeMode rangeMode = RangeMode::Data;
  QString title;             // above the cells, bold; empty: none
  bool compact = false;      // a tile of a grid: smaller type, no axis titles, a thinner colour bar
  bool colorBar = true;      // compact tiles may go without one; a full figure always has it
  bool squareCells = false;  // cells never taller than wide: the room below them stays empty
  AlignmentOverlay overlay;  // drawn over the cells (the decoding step in view, local-p's windows)
  // A short note per cell, row-major (empty, or rows x cols of the map): drawn centred in its cell, dark on light
  // colours and light on dark ones, when the cells are tall and wide enough for it (the head detectors' offsets).
  std::vector<QString> cellText;
};

// A map with more cells than its cells' pixels is drawn max-pooled to them, at every size, the axes saying so
// (render/map_pooling.h: the rule the window's HeatmapView follows).
// Paints `figure` into `area` with `font` for its labels (the caller fills the background); returns the height
// used from area.top(), less than area.height() when square cells leave room below.
int paintHeatmapFigure(QPainter& painter, const QRect& area, const HeatmapFigure& figure, const QFont& font);
// The height paintHeatmapFigure would use, without painting.
int heatmapFigureHeight(const QRect& area, const HeatmapFigure& figure, const QFont& font);
// The whole pixels the cells take in `area` as paintHeatmapFigure lays them out (empty without a map): a caller
// that pools a map itself (the CLI's on-demand heads) pools it to these, so the figure need not pool it again.
QSize heatmapFigureCellPixels(const QRect& area, const HeatmapFigure& figure, const QFont& font);
// Where the cells lie in `area` as paintHeatmapFigure lays them out (empty without a map): a widget that paints a
// figure finds the cell under the mouse with it.
QRectF heatmapFigureCellArea(const QRect& area, const HeatmapFigure& figure, const QFont& font);

// Small multiples as MapGrid lays them out in `size`: `tiles` (compact figures) `columns` to a row, every row as tall
// as its tallest tile needs (square cells need less than their share). heatmapGridHeight is the height used (at
// most size.height()); paintHeatmapGrid paints the grid from (0, 0).
int heatmapGridHeight(const std::vector<HeatmapFigure>& tiles, int columns, QSize size, const QFont& font);
void paintHeatmapGrid(QPainter& painter, const std::vector<HeatmapFigure>& tiles, int columns, QSize size,
                      const QFont& font);

// The colour bar's numbers: "nice" values (1, 2, 2.5 or 5 times a power of ten apart) within `range`, about
// `count` of them (a step nearest range / count).
std::vector<double> colorBarTicks(ValueRange range, int count);

}  // namespace attn::ui::render
