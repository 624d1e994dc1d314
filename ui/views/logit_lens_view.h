// LogitLensView: the logit lens of a decoder's run (attn::models::LogitLens). A grid of layers (the last on
// top, as the residual stream rises) x the run's last positions: each cell the token that layer's residual
// stream would predict next through the model's own final norm and output embedding, shaded by its probability
// (the colour map), the input token under each column; a click picks a column, whose top five per layer the
// tooltip gives. Below it (QCustomPlot) the rank, layer by layer, of the model's final prediction at that column:
// where the answer appears in the stream.
#pragma once

#include "attn/models/transformer.h"
#include "render/colormap.h"

#include <QStringList>
#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;
class QScrollArea;

namespace attn::ui {

class LensGrid;

class LogitLensView : public QWidget {
  Q_OBJECT

 public:
  explicit LogitLensView(QWidget* parent = nullptr);

  // `tokens`: the run's token labels (the columns' inputs). Null: the placeholder `empty` is shown.
  void setLens(std::shared_ptr<const attn::models::LogitLens> lens, QStringList tokens);
  void setPlaceholder(const QString& empty);
  void setColormap(render::Colormap map);
  // The column (index into LogitLens::positions) whose ranks the plot shows; -1: the last.
  void selectColumn(int column);
  int selectedColumn() const { return column_; }
  const attn::models::LogitLens* lens() const { return lens_.get(); }
  LensGrid* grid() const { return grid_; }
  QCustomPlot* rankPlot() const { return plot_; }

 signals:
  void columnSelected(int position);  // the token position of the picked column

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void updatePlot();
  void fitColumns();  // the grid's cells to the view's width, the selected column in view

  std::shared_ptr<const attn::models::LogitLens> lens_;
  QStringList tokens_;
  int column_ = -1;
  QLabel* placeholder_ = nullptr;
  QLabel* caption_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  LensGrid* grid_ = nullptr;
  QCustomPlot* plot_ = nullptr;
};

// The grid itself (painted): cells kCellHeight high and from kMinCellWidth to kCellWidth wide, as many as the view's
// width takes (all 16 columns from about 610 pixels on); scrolled by the view, the pinned column in view, when wider.
class LensGrid : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kCellWidth = 76;
  static constexpr int kMinCellWidth = 34;
  static constexpr int kCellHeight = 22;
  static constexpr int kLabelWidth = 64;

  explicit LensGrid(QWidget* parent = nullptr);
  void setLens(std::shared_ptr<const attn::models::LogitLens> lens, QStringList tokens);
  void setColormap(render::Colormap map);
  void setSelectedColumn(int column);
  // The widest cells (at most kCellWidth, at least kMinCellWidth) whose columns fit in `width` pixels.
  void fitWidth(int width);
  int cellWidth() const { return cellWidth_; }
  QSize sizeHint() const override;
  // The (layer, column) under a point; layer -1 for the input row, nothing outside the cells.
  std::optional<std::pair<int, int>> cellAt(QPoint p) const;
  QString cellText(int layer, int column) const;  // the tooltip

 signals:
  void columnClicked(int column);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  int layers() const;
  std::shared_ptr<const attn::models::LogitLens> lens_;
  QStringList tokens_;
  render::Colormap colormap_ = render::Colormap::Viridis;
  int selected_ = -1;
  int cellWidth_ = kCellWidth;
};

}  // namespace attn::ui
