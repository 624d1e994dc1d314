// LongMapView's marks of the find box's match (LongMapPanel): the tokens' rows and columns over the map, and
// bringing them into view.
#include "views/long_map_view.h"

#include <QPainter>

#include <algorithm>

namespace attn::ui {

void LongMapView::setHighlight(std::optional<std::pair<qint64, qint64>> tokens) {
  if (tokens == highlight_) return;
  highlight_ = tokens;
  update();
}

void LongMapView::showTokens(qint64 first, qint64 last) {
  if (!reader_) return;
  const QRectF a = mapArea();
  const double n = double(reader_->tokens()), lo = double(first), hi = double(last + 1);
  const auto place = [&](double origin, double extent) {
    if (lo >= origin && hi <= origin + extent) return origin;
    return extent >= n ? 0.0 : std::clamp((lo + hi - extent) / 2, 0.0, n - extent);
  };
  const QPointF to(place(origin_.x(), a.width() / ppt_), place(origin_.y(), a.height() / ppt_));
  if (to != origin_) setView(to, ppt_);
}

void LongMapView::drawHighlight(QPainter& p, const QRectF& area) {
  if (!highlight_) return;
  // Rows and columns first..last: a band across the map each way, at least 3 pixels wide (one token of 32,768 is
  // far under a pixel when the whole map is in view), and a bar beside each axis.
  const auto [first, last] = *highlight_;
  const auto band = [&](double origin, double start) {
    const double a = (double(first) - origin) * ppt_, b = (double(last + 1) - origin) * ppt_;
    const double grow = std::max(0.0, 3.0 - (b - a)) / 2;
    return std::pair{start + a - grow, start + b + grow};
  };
  const auto [y0, y1] = band(origin_.y(), area.top());
  const auto [x0, x1] = band(origin_.x(), area.left());
  const QColor mark(255, 140, 0);
  const double n = double(reader_->tokens());
  const QRectF map(area.left() - origin_.x() * ppt_, area.top() - origin_.y() * ppt_, n * ppt_, n * ppt_);
  p.save();
  p.setClipRect(area.intersected(map));
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(mark.red(), mark.green(), mark.blue(), 70));
  p.drawRect(QRectF(area.left(), y0, area.width(), y1 - y0));
  p.drawRect(QRectF(x0, area.top(), x1 - x0, area.height()));
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(mark, 1.5));
  p.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0));  // the match's own cells: the tokens attending to each other
  p.restore();
  p.setPen(Qt::NoPen);
  p.setBrush(mark);
  if (y1 >= area.top() && y0 <= area.bottom()) p.drawRect(QRectF(area.left() - 5, y0, 4, y1 - y0));
  if (x1 >= area.left() && x0 <= area.right()) p.drawRect(QRectF(x0, area.top() - 5, x1 - x0, 4));
}

}  // namespace attn::ui
