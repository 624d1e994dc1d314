// The model view's drawing: every layer x head of a trace as a small heatmap tile (rows = layers, columns
// = heads), each tile a QImage pooled from its map (area mean, so a 512 x 512 map becomes a 64 x 64
// thumbnail without aliasing) and coloured on its own 0 .. max range, so each head's pattern shows even
// when its weights are small. Pure functions: the HeadGridView, the CLI and the tests draw with them.
#pragma once

#include "attn/core.h"
#include "attn/layered_trace.h"
#include "attn/on_demand_attention.h"
#include "render/colormap.h"

#include <QColor>
#include <QFont>
#include <QImage>
#include <QPoint>
#include <QRect>
#include <QSize>
#include <QString>

#include <optional>
#include <vector>

class QPainter;

namespace attn::ui::render {

// One head of a stack averaged down to at most maxSide x maxSide cells (whole maps that already fit are
// copied as they are). head = -1 pools the mean over heads. (HeadStack::pooled with Pool::Mean.)
attn::Matrix poolHead(const attn::HeadStack& stack, int head, int maxSide);

// The thumbnails of every (layer, head), layer-major: index = layer * heads + head.
struct HeadThumbnails {
  int layers = 0;
  int heads = 0;
  std::vector<attn::Matrix> pooled;
  const attn::Matrix* at(int layer, int head) const;
};
HeadThumbnails makeThumbnails(const attn::LayeredTrace& trace, attn::Stage stage, int maxSide = 64);
// A run kept on demand: each head's preview (attn::OnDemandLayer::preview: one query row of every cell, its keys
// max-pooled), at most maxSide cells a side; recomputing every head's whole map would take as long as the forward.
// A version-2 dump's layers give their stored overviews instead (exact max-pooled cells; nothing recomputed).
HeadThumbnails makeThumbnails(const std::vector<attn::OnDemandLayer>& layers, int maxSide = 64);
// A pooled map as a tile image, coloured from 0 (or its minimum when negative) to its maximum.
QImage thumbnailImage(const attn::Matrix& pooled, Colormap map);

struct HeadGridLayout {
  int layers = 0;
  int heads = 0;
  int tileWidth = 64;  // pixels
  int tileHeight = 64;
  int gap = 6;
  int left = 64;  // row labels ("layer 3")
  int top = 22;   // column labels ("head 5")

  QRect tileRect(int layer, int head) const;
  QSize size() const;
  std::optional<QPoint> tileAt(QPoint point) const;  // x = head, y = layer
  // Square tiles: the largest in [minTile, maxTile] that fits `width` (pictures as tall as they need).
  static HeadGridLayout fit(int layers, int heads, int width, int minTile = 28, int maxTile = 120, int left = 64,
                            int top = 22);
  // Tiles that fill `area` (the model view's viewport) in both directions, each side at least minTile (a
  // bigger grid scrolls) and at most maxAspect times the other, so that no map is drawn as a sliver.
  static HeadGridLayout fill(int layers, int heads, QSize area, int minTile = 28, double maxAspect = 5.0, int left = 64,
                             int top = 22);
};

struct HeadGridScene {
  const std::vector<QImage>* tiles = nullptr;  // layer-major thumbnail images
  std::optional<QPoint> selected;              // x = head, y = layer
  std::optional<QPoint> hovered;
  QColor text = QColor(20, 20, 20);
  QColor selection = QColor(230, 60, 30);
  QColor hover = QColor(40, 120, 220);
  // Ablated heads (the Transformer tab's ablation): each outlined by a dashed frame inside its tile, a cross in a
  // corner.
  std::vector<QPoint> ablated;  // x = head, y = layer
  QColor ablation = QColor(255, 0, 200);
};

void paintHeadGrid(QPainter& painter, const HeadGridScene& scene, const HeadGridLayout& layout, const QRect& clip);
// A standalone picture (CLI, exports) `width` pixels wide with a title line.
QImage headGridImage(const HeadGridScene& scene, int layers, int heads, int width, const QString& title,
                     const QFont& font = QFont());

}  // namespace attn::ui::render
