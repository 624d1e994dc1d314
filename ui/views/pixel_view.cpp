#include "views/pixel_view.h"

#include <QElapsedTimer>
#include <QPainter>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

PixelView::PixelView(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize PixelView::sizeHint() const { return {200, 200}; }
QSize PixelView::minimumSizeHint() const { return {96, 96}; }

void PixelView::setImage(const QImage& image, quint64 tag) {
  image_ = image;
  tag_ = tag;
  update();
}

void PixelView::setCaption(const QString& caption) {
  if (caption == caption_) return;
  caption_ = caption;
  update();
}

void PixelView::setBadge(const QString& badge, QColor colour) {
  if (badge == badge_ && colour == badgeColour_) return;
  badge_ = badge;
  badgeColour_ = colour;
  update();
}

void PixelView::setPlaceholder(const QString& text) {
  placeholder_ = text;
  update();
}

QRect PixelView::imageRect() const {
  if (image_.isNull()) return {};
  const QFontMetrics metrics(font());
  const int top = metrics.height() + 6;
  const QRect area(2, top, std::max(1, width() - 4), std::max(1, height() - top - 2));
  const double fit = std::min(double(area.width()) / image_.width(), double(area.height()) / image_.height());
  // Whole multiples when magnifying, so every glimpse pixel is the same square, unless that would waste
  // more than a quarter of the room (48 pixels in 140: 2x would show 96).
  double scale = fit;
  if (fit >= 1.0 && std::floor(fit) >= 0.75 * fit) scale = std::floor(fit);
  const QSize size(std::max(1, int(image_.width() * scale)), std::max(1, int(image_.height() * scale)));
  return QRect(area.x() + (area.width() - size.width()) / 2, area.y() + (area.height() - size.height()) / 2,
               size.width(), size.height());
}

void PixelView::paintEvent(QPaintEvent*) {
  QElapsedTimer timer;
  timer.start();
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Window));
  const QFontMetrics metrics(font());
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(4, 2, width() - 8, metrics.height() + 2), Qt::AlignLeft | Qt::AlignVCenter,
                   metrics.elidedText(caption_, Qt::ElideRight, width() - 8));
  if (image_.isNull()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(4, metrics.height() + 6, -4, -4), Qt::AlignCenter | Qt::TextWordWrap,
                     placeholder_);
  } else {
    const QRect target = imageRect();
    painter.fillRect(target.adjusted(-1, -1, 1, 1), QColor(30, 30, 30));
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);  // nearest neighbour: crisp pixels
    painter.drawImage(target, image_);
    if (!badge_.isEmpty()) {
      const QRect box(target.x() + 3, target.y() + 3, metrics.horizontalAdvance(badge_) + 10, metrics.height() + 4);
      painter.fillRect(box, badgeColour_);
      painter.setPen(Qt::white);
      painter.drawText(box, Qt::AlignCenter, badge_);
    }
  }
  paintedTag_ = tag_;
  ++paintCount_;
  lastPaintMs_ = double(timer.nsecsElapsed()) / 1e6;
}

}  // namespace attn::ui
