#include "views/figure_map_view.h"

#include "render/strings.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attn::ui {

FigureMapView::FigureMapView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void FigureMapView::setFigure(render::HeatmapFigure figure) {
  figure_ = std::move(figure);
  update();
}

void FigureMapView::setEmptyText(const QString& text) {
  emptyText_ = text;
  update();
}

QRect FigureMapView::figureArea() const { return rect().adjusted(8, 6, -8, -6); }

std::optional<QPoint> FigureMapView::cellAt(QPointF pos) const {
  if (!hasMap()) return std::nullopt;
  const QRectF cells = render::heatmapFigureCellArea(figureArea(), figure_, font());
  if (cells.isEmpty() || !cells.contains(pos)) return std::nullopt;
  const auto& w = figure_.map->weights;
  const int column = std::clamp(int((pos.x() - cells.left()) / cells.width() * double(w.cols())), 0, int(w.cols()) - 1);
  const int row = std::clamp(int((pos.y() - cells.top()) / cells.height() * double(w.rows())), 0, int(w.rows()) - 1);
  return QPoint(column, row);
}

QString FigureMapView::cellToolTip(int row, int column) const {
  if (!hasMap()) return {};
  if (toolTipText_) return toolTipText_(row, column);
  const auto& map = *figure_.map;
  return tr("%1 %2 \u00b7 %3 %4\n%5 %6")
      .arg(fromStd(map.row_axis),
           std::size_t(row) < map.row_labels.size() ? fromStd(map.row_labels[std::size_t(row)]) : QString::number(row))
      .arg(fromStd(map.col_axis), std::size_t(column) < map.col_labels.size()
                                      ? fromStd(map.col_labels[std::size_t(column)])
                                      : QString::number(column))
      .arg(fromStd(map.quantity))
      .arg(double(map.weights(row, column)), 0, 'g', 6);
}

void FigureMapView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  if (!hasMap()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap, emptyText_);
    return;
  }
  painter.setRenderHint(QPainter::Antialiasing, false);
  render::paintHeatmapFigure(painter, figureArea(), figure_, font());
}

void FigureMapView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  if (const auto cell = cellAt(event->position())) emit cellClicked(cell->y(), cell->x());
}

bool FigureMapView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    if (const auto cell = cellAt(help->pos()))
      QToolTip::showText(help->globalPos(), cellToolTip(cell->y(), cell->x()), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace attn::ui
