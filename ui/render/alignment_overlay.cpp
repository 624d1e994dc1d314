#include "render/alignment_overlay.h"

#include "render/heatmap_render.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace attn::ui::render {

std::vector<WindowBand> localWindowBands(std::span<const float> positions, int window, int columns) {
  std::vector<WindowBand> bands;
  if (columns <= 0) return bands;
  bands.reserve(positions.size());
  const double left = -0.5;
  const double right = double(columns) - 0.5;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    const double p = double(positions[t]);
    if (!std::isfinite(p)) continue;
    WindowBand band;
    band.row = int(t);
    band.centre = p;
    band.lower = std::clamp(p - double(window), left, right);
    band.upper = std::clamp(p + double(window), left, right);
    bands.push_back(band);
  }
  return bands;
}

QTransform cellTransform(int cellSize) {
  const double s = double(cellSize);
  return QTransform(s, 0.0, 0.0, s, s / 2.0, s / 2.0);
}

void paintAlignmentOverlay(QPainter& painter, const AlignmentOverlay& overlay, const QTransform& cellToPixel,
                           const OverlayStyle& style) {
  if (overlay.empty() || overlay.columns <= 0) return;
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, true);
  const auto box = [&](double x0, double y0, double x1, double y1) {
    return cellToPixel.mapRect(QRectF(QPointF(x0, y0), QPointF(x1, y1))).normalized();
  };
  for (const auto& band : overlay.bands) {
    if (band.row < 0 || band.row >= overlay.rows) continue;
    const QRectF r = box(band.lower, band.row - 0.5, band.upper, band.row + 0.5);
    painter.fillRect(r, style.bandFill);
    painter.setPen(QPen(style.bandEdge, 1.5));
    painter.drawLine(r.topLeft(), r.bottomLeft());
    painter.drawLine(r.topRight(), r.bottomRight());
  }
  for (const auto& band : overlay.bands) {
    if (band.row < 0 || band.row >= overlay.rows) continue;
    const QPointF c = cellToPixel.map(QPointF(band.centre, double(band.row)));
    const QRectF cell = box(0.0, band.row - 0.5, 1.0, band.row + 0.5);
    const double radius = std::clamp(std::min(cell.width(), cell.height()) * 0.3, 2.5, 7.0);
    QPainterPath diamond;
    diamond.moveTo(c.x(), c.y() - radius);
    diamond.lineTo(c.x() + radius, c.y());
    diamond.lineTo(c.x(), c.y() + radius);
    diamond.lineTo(c.x() - radius, c.y());
    diamond.closeSubpath();
    painter.setPen(QPen(style.markerOutline, 1.2));
    painter.setBrush(style.marker);
    painter.drawPath(diamond);
  }
  if (overlay.focusRow && *overlay.focusRow >= 0 && *overlay.focusRow < overlay.rows) {
    const int row = *overlay.focusRow;
    const QRectF r = box(-0.5, row - 0.5, double(overlay.columns) - 0.5, row + 0.5);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(style.focus, 2.5));
    painter.drawRect(r.adjusted(1.25, 1.25, -1.25, -1.25));
  }
  painter.restore();
}

QImage alignmentImage(const attn::Matrix& weights, Colormap map, const AlignmentOverlay& overlay, int cellSize,
                      const OverlayStyle& style) {
  if (weights.size() == 0 || cellSize <= 0) return {};
  QImage cells = matrixImage(weights, map, valueRange(weights, RangeMode::Data));
  QImage image =
      cells.scaled(cells.width() * cellSize, cells.height() * cellSize, Qt::IgnoreAspectRatio, Qt::FastTransformation)
          .convertToFormat(QImage::Format_ARGB32_Premultiplied);
  QPainter painter(&image);
  paintAlignmentOverlay(painter, overlay, cellTransform(cellSize), style);
  painter.end();
  return image;
}

}  // namespace attn::ui::render
