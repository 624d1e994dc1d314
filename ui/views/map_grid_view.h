// Small multiples: every map of a trace (heads, hops, levels) as a compact HeatmapView tile. Clicking a
// tile (or moving with the arrow keys) activates it; the workbench then shows it in the main view.
#pragma once

#include "attn/trace.h"
#include "render/colormap.h"
#include "render/heatmap_render.h"

#include <QWidget>

#include <memory>
#include <vector>

class QGridLayout;
class QLabel;

namespace attn::ui {

class HeatmapView;

class MapGrid : public QWidget {
  Q_OBJECT

 public:
  explicit MapGrid(QWidget* parent = nullptr);

  // More maps than this are not drawn as tiles (a long hierarchical document can have hundreds); the
  // selector still lists all of them.
  static constexpr int kMaxTiles = 32;

  // `columns` = 0 lays every tile out in one row; otherwise tiles wrap after `columns`.
  void setColumns(int columns);
  int columns() const { return columns_; }
  void setMaps(std::vector<std::shared_ptr<const attn::AttentionMap>> maps);
  void setCurrent(int index);
  int current() const { return current_; }
  int count() const { return int(tiles_.size()); }
  int totalMaps() const { return total_; }
  HeatmapView* tile(int index) const;
  void setColormap(render::Colormap map);
  void setRangeMode(render::RangeMode mode);
  // Exported grids: a colour bar beside every tile (each tile has its own range), square cells.
  void setColorBars(bool on);
  void setSquareCells(bool on);
  void replotNow();
  // For exports, after the grid has its width: each row of tiles as tall as its tallest tile draws (rows of
  // one-row maps with square cells need far less than their share), the grid's height shrunk to match.
  // Returns the new height. The tiles keep their heights until the next setMaps.
  int packRows();

 signals:
  void mapActivated(int index);

 protected:
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void relayout();

  QGridLayout* layout_ = nullptr;
  QLabel* overflow_ = nullptr;
  std::vector<HeatmapView*> tiles_;  // children of this widget
  int columns_ = 0;
  int current_ = -1;
  int total_ = 0;
  render::Colormap colormap_ = render::Colormap::Viridis;
  render::RangeMode rangeMode_ = render::RangeMode::Data;
  bool colorBars_ = false;
  bool squareCells_ = false;
};

}  // namespace attn::ui
