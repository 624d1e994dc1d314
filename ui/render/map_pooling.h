// When a heatmap is max-pooled, and what its axes then say: the one rule the window's HeatmapView and the CLI's
// figures (render::paintHeatmapFigure) share. A map with more cells than the pixels it is drawn on is pooled to
// those pixels (attn::pooled_map), at every size, so that a weight never falls between pixels (issue 41,
// finding 4: a 2,048 x 2,048 diagonal subsampled into 500 pixels lost the diagonal).
#pragma once

#include "attn/trace.h"

#include <QSize>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace attn::ui::render {

// Past this many cells a side, a map is first pooled once to this size, and the pixels are then pooled from that
// (LayeredTrace::map's max_side gives maps so): 2,048 x 2,048 cells is 32 MB in QCustomPlot's doubles, where
// 16,384 tokens whole took 2 GiB, and pooling a Lab map of 8,192 words again at every resize took a tenth of a second.
inline constexpr int kMaxCellsPerSide = 2048;

struct CellShape {
  Index rows = 0;
  Index cols = 0;
  friend bool operator==(const CellShape&, const CellShape&) = default;
};

// The cells a map of `rows` x `cols` is drawn as on `pixels` (the cells' area, width x height): an axis with more
// cells than pixels gets one cell a pixel. An empty area (not laid out yet) keeps the map's cells.
CellShape cellsForPixels(Index rows, Index cols, QSize pixels);

// `map` reduced to at most `cells`, by its own pooling's reduction (a map given unpooled: max), or `map` itself
// when it fits. Its `pooled` then says the map it was pooled from (composedStarts goes further back).
std::shared_ptr<const AttentionMap> pooledToCells(std::shared_ptr<const AttentionMap> map, CellShape cells);

// Where each of `shown` cells starts in the unpooled axis, through every pooling between: the source's own (from
// `original` cells to `given`), the size cap (to `base`) and the pixels (to `shown`); each as pool_bin_start
// bins. Empty: none pooled.
std::vector<Index> composedStarts(std::optional<Index> original, Index given, Index base, Index shown);

// How many source cells a drawn cell of a pooled axis holds: "8" or "8–9" ("1" for empty starts).
QString cellsPerBin(const std::vector<Index>& starts);

// "max-pooled" or "mean-pooled".
QString poolName(Pool pool);

// An axis title that says the pooling: "queries · max-pooled, 4–5 per cell" (`axis` empty: `noun`).
QString pooledAxisTitle(const QString& axis, const QString& noun, Pool pool, const std::vector<Index>& starts);

}  // namespace attn::ui::render
