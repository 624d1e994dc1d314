// HeatmapView: one attention map as a QCPColorMap with token labels on both axes (thinned when cells get
// small), a colour bar, row 0 on top, crisp cells, and the exact value with its two tokens on hover.
#pragma once

#include "attn/trace.h"
#include "render/alignment_overlay.h"
#include "render/colormap.h"
#include "render/heatmap_render.h"
#include "render/map_pooling.h"

#include <QPoint>
#include <QSharedPointer>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPMarginGroup;
class QCPItemRect;
class QCPTextElement;
class QLabel;
class QMouseEvent;
class QResizeEvent;
class QShowEvent;

namespace attn::ui {

class AlignmentOverlayItem;
class TokenTicker;
class TokenPlot;

class HeatmapView : public QWidget {
  Q_OBJECT

 public:
  enum class Style {
    Full,     // axis titles, colour bar, zoom and drag
    Compact,  // a tile of the small-multiples grid: title on top, small labels, click to activate
  };

  // A map with more cells than the pixels it is drawn on is max-pooled to those pixels (render/map_pooling.h: the
  // rule the CLI's figures share; attn::pooled_map, the reduction LayeredTrace::map uses), on setMap and whenever
  // the cells' area changes size, the pooling said on the axes (Compact tiles: in the title); a weight never falls
  // between pixels. Past kMaxCellsPerSide a side the map is first pooled once to that size, which the pixels are
  // then pooled from.
  static constexpr int kMaxCellsPerSide = render::kMaxCellsPerSide;

  explicit HeatmapView(Style style = Style::Full, QWidget* parent = nullptr);
  ~HeatmapView() override;

  // The view shares the map with whoever produced it (often an aliasing pointer into a LabResult).
  void setMap(std::shared_ptr<const attn::AttentionMap> map);
  void clear();
  // The map given to setMap.
  const attn::AttentionMap* map() const { return source_.get(); }
  // The map as drawn: the given one, or its max-pooled bins (AttentionMap::pooled says how, from the first map
  // of the chain: a map given pooled keeps its source's shape and tokens there).
  const attn::AttentionMap* shownMap() const { return map_.get(); }

  void setColormap(render::Colormap map);
  render::Colormap colormap() const { return colormap_; }
  // Unit draws distributions (attention weights whose rows or columns sum to 1, render::isDistribution) on the
  // fixed 0..1 range; other maps (gates, activations, scores) always on their own range, as Data draws every map.
  void setRangeMode(render::RangeMode mode);
  render::RangeMode rangeMode() const { return rangeMode_; }
  // True when the map given is a distribution (a map given pooled: attention weights, all in 0..1).
  bool isDistribution() const { return distribution_; }
  // Axis titles (Full style) and the nouns used in the tooltip.
  void setAxisTitles(const QString& rows, const QString& columns);
  // Shown above Compact tiles: in smaller type, or cut in the middle, when the tile is narrower than the title
  // (the tile's tool tip has all of it).
  void setTitle(const QString& title);
  QString title() const { return fullTitle_; }
  // What the view says while it has no map (what to do to get one), centred in place of the plot; empty
  // (the default) shows the empty plot.
  void setEmptyText(const QString& text);
  QString emptyText() const;
  bool isShowingEmptyText() const;
  void setHighlighted(bool on);  // Compact: marks the tile shown in the main view
  // Drawn over the cells, and exported with them: the Alignment tab's decoding step in view and local-p's
  // windows (render::paintAlignmentOverlay). An empty overlay draws nothing; setMap keeps it, clear drops it.
  void setOverlay(const render::AlignmentOverlay& overlay);
  const render::AlignmentOverlay& overlay() const;
  bool isHighlighted() const { return highlighted_; }
  // Compact tiles: a colour bar beside the cells, as tall as they are (exported grids). Full views always
  // have one.
  void setColorBarShown(bool on);
  // Cells never taller than wide: a map with few rows (a one-row map of a pooling or a hierarchical level)
  // keeps square cells at the width it gets, and the room below stays empty (exports; the window's views
  // fill their area).
  void setSquareCells(bool on);
  bool squareCells() const { return squareCells_; }
  // How far down the drawing reaches (cells, and the margin under them) as of the last replot: less than
  // the height when square cells leave room below.
  int contentHeight() const;

  QCustomPlot* plot() const;
  QCPColorMap* colorMap() const { return colorMap_; }
  QCPColorScale* colorScale() const { return colorScale_; }

  // The cell under a point in plot-widget coordinates: x = column, y = row, cells as drawn (shownMap()).
  std::optional<QPoint> cellAt(QPointF plotPos) const;
  // "row 2 “ate” → column 4 “apple”\nweight 0.23456789" for a drawn cell.
  QString cellToolTip(int row, int column) const;

  // Replots now (exports, tests, benchmarks); the GUI path queues replots instead.
  void replotNow();
  // Label strides chosen by the last layout (1 = every token labelled).
  int rowLabelStride() const;
  int columnLabelStride() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void clicked();
  // Rows and columns of the unpooled map (a drawn cell of several: its first).
  void cellHovered(int row, int column);
  void cellClicked(int row, int column);  // a left click on a cell

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  void onMouseMove(QMouseEvent* event);
  void onMousePress(QMouseEvent* event);
  void onDoubleClick(QMouseEvent* event);
  void resetRanges();
  void clampRanges();
  void updateColors();
  bool syncTickStrides();
  void setHover(std::optional<QPoint> cell);
  void updateEmptyState();
  void fitTitle();
  void setUpAxes(const QFont& tickFont);
  void addHoverOutline();
  void addColorScale(int row, const QFont& tickFont, int barWidth);
  int bottomMargin() const;
  void updateBottomMargin();
  bool squareTheCells();  // true when the margin under the cells changed
  // Pools the map to the cells' area in pixels as laid out now; true when the cells drawn changed.
  bool fitToPixels();
  void showCells(std::shared_ptr<const attn::AttentionMap> shown);
  QPoint sourceCell(QPoint cell) const;  // a drawn cell's first row and column in the unpooled map
  void setTickLabels(QStringList rows, QStringList columns);

  Style style_;
  TokenPlot* plot_ = nullptr;                // child widget
  QCPColorMap* colorMap_ = nullptr;          // owned by plot_
  QCPColorScale* colorScale_ = nullptr;      // owned by plot_'s layout (Full style, or setColorBarShown)
  QCPMarginGroup* marginGroup_ = nullptr;    // owned by plot_: the colour bar's top and bottom
  QCPTextElement* title_ = nullptr;          // owned by plot_'s layout (Compact style only)
  QCPItemRect* hover_ = nullptr;             // owned by plot_
  AlignmentOverlayItem* overlay_ = nullptr;  // owned by plot_
  QLabel* emptyLabel_ = nullptr;             // child, over the plot while there is no map and an empty text is set
  QSharedPointer<TokenTicker> rowTicker_;
  QSharedPointer<TokenTicker> columnTicker_;
  std::shared_ptr<const attn::AttentionMap> source_;  // as given
  std::shared_ptr<const attn::AttentionMap> base_;    // source_, or its bins at kMaxCellsPerSide
  std::shared_ptr<const attn::AttentionMap> map_;     // as drawn: base_, or its bins at the pixels
  // Where each drawn row and column starts in the unpooled map (size + 1 entries); empty when not pooled.
  std::vector<attn::Index> rowStarts_;
  std::vector<attn::Index> colStarts_;
  std::optional<QPoint> hoverCell_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  render::RangeMode rangeMode_ = render::RangeMode::Data;
  QString rowNoun_;
  QString columnNoun_;
  QString fullTitle_;
  QString poolNote_;  // " · max-pooled 8×8" after a Compact tile's title while its cells are pooled
  bool distribution_ = false;
  bool highlighted_ = false;
  bool squareCells_ = false;
  int extraBottom_ = 0;  // added under the cells to keep them square
  bool clamping_ = false;
};

}  // namespace attn::ui
