// What the Alignment tab draws over its heatmap, as pure functions: the decoding step in view (outlined)
// and local-p's predicted position p_t with its window [p_t - D, p_t + D] per step (a translucent band
// and a marker). HeatmapView paints it in its axes' coordinates; tests paint it on a plain image.
#pragma once

#include "attn/core.h"
#include "render/colormap.h"

#include <QColor>
#include <QImage>
#include <QTransform>

#include <optional>
#include <span>
#include <vector>

class QPainter;

namespace attn::ui::render {

// One decoding step's local-p window in the heatmap's cell coordinates (column j is centred on x = j,
// row t on y = t): the predicted position p_t (Luong et al. 2015, eq. 9) and [p_t - D, p_t + D], clipped
// to the source's cells [-0.5, columns - 0.5]. Source positions j with |j - p_t| <= D are the visible ones.
struct WindowBand {
  int row = 0;
  double centre = 0.0;
  double lower = 0.0;
  double upper = 0.0;
  friend bool operator==(const WindowBand&, const WindowBand&) = default;
};
std::vector<WindowBand> localWindowBands(std::span<const float> positions, int window, int columns);

// What is drawn over an alignment heatmap of rows x columns cells.
struct AlignmentOverlay {
  int rows = 0;
  int columns = 0;
  std::optional<int> focusRow;    // the decoding step in view: outlined
  std::vector<WindowBand> bands;  // local-p: a translucent band and a marker per step
  bool empty() const { return !focusRow && bands.empty(); }
  friend bool operator==(const AlignmentOverlay&, const AlignmentOverlay&) = default;
};

struct OverlayStyle {
  QColor focus = QColor(0xff, 0x8f, 0x00);  // the step's outline: reads on every colour map
  QColor bandFill = QColor(255, 255, 255, 60);
  QColor bandEdge = QColor(255, 255, 255, 230);
  QColor marker = QColor(0xff, 0x2d, 0x78);  // p_t
  QColor markerOutline = QColor(255, 255, 255);
};

// Paints in cell coordinates mapped to pixels by `cellToPixel` (the heatmap's axes; a plain scale in the
// image below).
void paintAlignmentOverlay(QPainter& painter, const AlignmentOverlay& overlay, const QTransform& cellToPixel,
                           const OverlayStyle& style = {});
// The matrix at `cellSize` pixels per cell with the overlay on top: no axes, for tests and thumbnails.
QImage alignmentImage(const attn::Matrix& weights, Colormap map, const AlignmentOverlay& overlay, int cellSize,
                      const OverlayStyle& style = {});
// The transform alignmentImage paints the overlay with.
QTransform cellTransform(int cellSize);

}  // namespace attn::ui::render
