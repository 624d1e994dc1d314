// FigureMapView: one render::HeatmapFigure painted as attnscope-cli draws it (render::paintHeatmapFigure: its colour
// map, range, colour bar and cell text), with a tool tip per cell from a callback and a signal on a click. The
// Transformer tab's Patching sweep and Head detectors maps are drawn with it, so the window shows what the CLI writes.
#pragma once

#include "render/heatmap_figure.h"

#include <QWidget>

#include <functional>
#include <optional>

namespace attn::ui {

class FigureMapView : public QWidget {
  Q_OBJECT

 public:
  explicit FigureMapView(QWidget* parent = nullptr);

  void setFigure(render::HeatmapFigure figure);
  const render::HeatmapFigure& figure() const { return figure_; }
  bool hasMap() const { return figure_.map && figure_.map->weights.size() > 0; }
  // What the view says while it has no map.
  void setEmptyText(const QString& text);
  QString emptyText() const { return emptyText_; }
  // The tool tip of cell (row, column); empty: the figure's value with its row and column labels.
  void setToolTipText(std::function<QString(int row, int column)> text) { toolTipText_ = std::move(text); }
  // The cell under `pos` (widget coordinates): x = column, y = row.
  std::optional<QPoint> cellAt(QPointF pos) const;
  QString cellToolTip(int row, int column) const;

  QSize sizeHint() const override { return {480, 360}; }
  QSize minimumSizeHint() const override { return {160, 120}; }

 signals:
  void cellClicked(int row, int column);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QRect figureArea() const;

  render::HeatmapFigure figure_;
  QString emptyText_;
  std::function<QString(int, int)> toolTipText_;
};

}  // namespace attn::ui
