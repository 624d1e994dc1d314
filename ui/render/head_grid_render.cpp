#include "render/head_grid_render.h"

#include "render/heatmap_render.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn::ui::render {

attn::Matrix poolHead(const attn::HeadStack& stack, int head, int maxSide) {
  if (stack.empty()) return {};
  return stack.pooled(head, maxSide, maxSide, attn::Pool::Mean);
}

const attn::Matrix* HeadThumbnails::at(int layer, int head) const {
  if (layer < 0 || head < 0 || layer >= layers || head >= heads) return nullptr;
  return &pooled[std::size_t(layer) * std::size_t(heads) + std::size_t(head)];
}

HeadThumbnails makeThumbnails(const attn::LayeredTrace& trace, attn::Stage stage, int maxSide) {
  HeadThumbnails out;
  out.layers = trace.layer_count(stage);
  for (int l = 0; l < out.layers; ++l) {
    if (const auto* layer = trace.find(stage, l)) out.heads = std::max(out.heads, layer->maps.heads());
  }
  out.pooled.resize(std::size_t(out.layers) * std::size_t(out.heads));
  for (int l = 0; l < out.layers; ++l) {
    const auto* layer = trace.find(stage, l);
    if (!layer) continue;
    for (int h = 0; h < layer->maps.heads(); ++h) {
      out.pooled[std::size_t(l) * std::size_t(out.heads) + std::size_t(h)] = poolHead(layer->maps, h, maxSide);
    }
  }
  return out;
}

HeadThumbnails makeThumbnails(const std::vector<attn::OnDemandLayer>& layers, int maxSide) {
  HeadThumbnails out;
  out.layers = int(layers.size());
  for (const auto& l : layers) out.heads = std::max(out.heads, l.heads());
  out.pooled.resize(std::size_t(out.layers) * std::size_t(out.heads));
  for (int l = 0; l < out.layers; ++l) {
    const auto& layer = layers[std::size_t(l)];
    const attn::Index n = layer.tokens();
    if (n == 0) continue;
    // A dump's stored overview when it has one (exact max-pooled cells, read in a moment, whole multiples of its
    // cells), else a preview computed from the queries and keys.
    const attn::Index stored = layer.overview_factor();
    const attn::Index factor =
        stored > 0 ? stored * (((n + stored - 1) / stored + maxSide - 1) / maxSide) : (n + maxSide - 1) / maxSide;
    const attn::Index side = (n + factor - 1) / factor;
    for (int h = 0; h < layer.heads(); ++h) {
      attn::Matrix cells(side, side);
      if (!layer.overview_pooled(h, factor, 0, side, 0, side, cells.data(), side)) {
        layer.preview(h, factor, attn::OnDemandLayer::Pooling::Max, 0, side, 0, side, cells.data(), side);
      }
      out.pooled[std::size_t(l) * std::size_t(out.heads) + std::size_t(h)] = std::move(cells);
    }
  }
  return out;
}

QImage thumbnailImage(const attn::Matrix& pooled, Colormap map) {
  if (pooled.size() == 0) return {};
  return matrixImage(pooled, map, valueRange(pooled, RangeMode::Data));
}

QRect HeadGridLayout::tileRect(int layer, int head) const {
  return QRect(left + head * (tileWidth + gap), top + layer * (tileHeight + gap), tileWidth, tileHeight);
}

QSize HeadGridLayout::size() const {
  return QSize(left + heads * (tileWidth + gap), top + layers * (tileHeight + gap));
}

std::optional<QPoint> HeadGridLayout::tileAt(QPoint point) const {
  if (point.x() < left || point.y() < top) return std::nullopt;
  const int head = (point.x() - left) / (tileWidth + gap);
  const int layer = (point.y() - top) / (tileHeight + gap);
  if (head >= heads || layer >= layers) return std::nullopt;
  if (!tileRect(layer, head).contains(point)) return std::nullopt;  // in a gap
  return QPoint(head, layer);
}

HeadGridLayout HeadGridLayout::fit(int layers, int heads, int width, int minTile, int maxTile, int left, int top) {
  HeadGridLayout layout;
  layout.left = left;
  layout.top = top;
  layout.layers = layers;
  layout.heads = heads;
  const int available = width - layout.left - 4;
  const int tile = heads > 0 ? available / heads - layout.gap : maxTile;
  layout.tileWidth = layout.tileHeight = std::clamp(tile, minTile, maxTile);
  return layout;
}

HeadGridLayout HeadGridLayout::fill(int layers, int heads, QSize area, int minTile, double maxAspect, int left,
                                    int top) {
  HeadGridLayout layout;
  layout.left = left;
  layout.top = top;
  layout.layers = layers;
  layout.heads = heads;
  const int width = heads > 0 ? (area.width() - left - 4) / heads - layout.gap : minTile;
  const int height = layers > 0 ? (area.height() - top - 4) / layers - layout.gap : minTile;
  layout.tileWidth = std::max(width, minTile);
  layout.tileHeight = std::max(height, minTile);
  const double aspect = std::max(1.0, maxAspect);
  layout.tileHeight = std::min(layout.tileHeight, int(std::lround(aspect * layout.tileWidth)));
  layout.tileWidth = std::min(layout.tileWidth, int(std::lround(aspect * layout.tileHeight)));
  return layout;
}

void paintHeadGrid(QPainter& painter, const HeadGridScene& scene, const HeadGridLayout& layout, const QRect& clip) {
  painter.save();
  const QFontMetrics metrics(painter.font());
  painter.setPen(scene.text);
  // Column labels: "0" .. once tiles are narrow, "head 0" when there is room.
  for (int h = 0; h < layout.heads; ++h) {
    const QRect r = layout.tileRect(0, h);
    const QString text = metrics.horizontalAdvance(QStringLiteral("head 00")) <= layout.tileWidth
                             ? QStringLiteral("head %1").arg(h)
                             : QString::number(h);
    painter.drawText(QRect(r.left(), 0, r.width(), layout.top - 2), Qt::AlignHCenter | Qt::AlignBottom, text);
  }
  for (int l = 0; l < layout.layers; ++l) {
    const QRect row = layout.tileRect(l, 0);
    if (row.bottom() + layout.gap < clip.top() || row.top() > clip.bottom()) continue;
    painter.setPen(scene.text);
    painter.drawText(QRect(0, row.top(), layout.left - 8, row.height()), Qt::AlignRight | Qt::AlignVCenter,
                     QStringLiteral("layer %1").arg(l));
    for (int h = 0; h < layout.heads; ++h) {
      const QRect r = layout.tileRect(l, h);
      const std::size_t index = std::size_t(l) * std::size_t(layout.heads) + std::size_t(h);
      if (scene.tiles && index < scene.tiles->size() && !(*scene.tiles)[index].isNull()) {
        painter.drawImage(r, (*scene.tiles)[index]);  // small images scale up crisp (no smoothing hint)
      } else {
        painter.fillRect(r, QColor(200, 200, 200));
      }
    }
  }
  const auto frame = [&](const std::optional<QPoint>& at, const QColor& colour, double width) {
    if (!at) return;
    const QRect r = layout.tileRect(at->y(), at->x());
    painter.setPen(QPen(colour, width));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(r).adjusted(-width / 2 - 1, -width / 2 - 1, width / 2 + 1, width / 2 + 1));
  };
  for (const QPoint& at : scene.ablated) {
    if (at.y() < 0 || at.y() >= layout.layers || at.x() < 0 || at.x() >= layout.heads) continue;  // another model's
    const QRectF r = QRectF(layout.tileRect(at.y(), at.x())).adjusted(1.5, 1.5, -1.5, -1.5);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(scene.ablation, 3.0, Qt::DashLine));
    painter.drawRect(r);
    const double side = std::max(4.0, std::min(r.width(), r.height()) / 4);
    painter.setPen(QPen(scene.ablation, 2.0));
    painter.drawLine(r.topLeft() + QPointF(2, 2), r.topLeft() + QPointF(side, side));
    painter.drawLine(r.topLeft() + QPointF(side, 2), r.topLeft() + QPointF(2, side));
  }
  frame(scene.hovered, scene.hover, 2.0);
  frame(scene.selected, scene.selection, 3.0);
  painter.restore();
}

QImage headGridImage(const HeadGridScene& scene, int layers, int heads, int width, const QString& title,
                     const QFont& font) {
  const QFontMetrics metrics(font);
  HeadGridLayout layout = HeadGridLayout::fit(layers, heads, width - 8, 16, 160);
  const int titleHeight = metrics.height() + 10;
  layout.top = titleHeight + metrics.height() + 6;
  const QSize size = layout.size() + QSize(8, 8);
  QImage image(std::max(width, size.width()), size.height(), QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setFont(font);
  painter.setPen(scene.text);
  painter.drawText(QRect(8, 2, image.width() - 16, titleHeight), Qt::AlignLeft | Qt::AlignVCenter, title);
  // paintHeadGrid draws the column labels in [0, top): shift them under the title.
  painter.save();
  HeadGridLayout shifted = layout;
  shifted.top = layout.top - titleHeight;
  painter.translate(0, titleHeight);
  paintHeadGrid(painter, scene, shifted, QRect(0, 0, image.width(), image.height()));
  painter.restore();
  painter.end();
  return image;
}

}  // namespace attn::ui::render
