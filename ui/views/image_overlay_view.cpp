#include "views/image_overlay_view.h"

#include <QPainter>

using namespace Qt::StringLiterals;

namespace attn::ui {

ImageOverlayView::ImageOverlayView(QWidget* parent) : QWidget(parent) { setObjectName(u"imageOverlay"_s); }

void ImageOverlayView::setImage(const QImage& image) {
  image_ = image;
  update();
}

void ImageOverlayView::setCaption(const QString& caption) {
  caption_ = caption;
  update();
}

void ImageOverlayView::setPlaceholder(const QString& text) {
  placeholder_ = text;
  update();
}

QRect ImageOverlayView::imageRect() const {
  if (image_.isNull()) return {};
  const int captionHeight = fontMetrics().height() + 8;
  const QRect area = rect().adjusted(6, captionHeight, -6, -6);
  QSize size = image_.size().scaled(area.size(), Qt::KeepAspectRatio);
  return QRect(area.left() + (area.width() - size.width()) / 2, area.top() + (area.height() - size.height()) / 2,
               size.width(), size.height());
}

void ImageOverlayView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(8, 2, width() - 16, fontMetrics().height() + 6), Qt::AlignLeft | Qt::AlignVCenter, caption_);
  if (image_.isNull()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, placeholder_);
    return;
  }
  painter.setRenderHint(QPainter::SmoothPixmapTransform);
  painter.drawImage(imageRect(), image_);
}

}  // namespace attn::ui
