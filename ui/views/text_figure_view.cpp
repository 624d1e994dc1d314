#include "views/text_figure_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attn::ui {

TextFigureView::TextFigureView(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
  setAttribute(Qt::WA_OpaquePaintEvent, false);
}

void TextFigureView::setFigure(render::TextFigure figure) {
  figure_ = std::move(figure);
  relayout();
}

void TextFigureView::clear() { setFigure({}); }

void TextFigureView::setPlaceholder(const QString& text) {
  placeholder_ = text;
  update();
}

render::FigureStyle TextFigureView::style() const {
  render::FigureStyle s;
  const QPalette& p = palette();
  s.background = p.color(QPalette::Base);
  s.text = p.color(QPalette::Text);
  s.muted = p.color(QPalette::PlaceholderText);
  s.barTrack = p.color(QPalette::AlternateBase);
  if (s.barTrack == s.background) s.barTrack = p.color(QPalette::Midlight);
  return s;
}

int TextFigureView::heightForWidth(int width) const {
  if (figure_.elements.empty() && figure_.heading.isEmpty()) return fontMetrics().height() * 2 + 2 * kMargin;
  const auto layout = render::layoutFigure(figure_, font(), double(std::max(40, width - 2 * kMargin)));
  return int(std::ceil(layout.height)) + 2 * kMargin;
}

QSize TextFigureView::sizeHint() const { return QSize(480, heightForWidth(std::max(width(), 480))); }

QSize TextFigureView::minimumSizeHint() const { return QSize(120, fontMetrics().height() + 2 * kMargin); }

void TextFigureView::relayout() {
  // Before the first layout pass a child widget is 100 px wide; laying out at that width would ask for a
  // minimum height of a column of single characters and stretch the window.
  layout_ = render::layoutFigure(figure_, font(), double(std::max(kMinLayoutWidth, width()) - 2 * kMargin));
  const int needed = int(std::ceil(layout_.height)) + 2 * kMargin;
  // The layouts around (a scroll area, a box) size this view by its minimum height.
  if (minimumHeight() != needed) setMinimumHeight(needed);
  updateGeometry();
  update();
}

void TextFigureView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (event->size().width() != event->oldSize().width()) relayout();
}

void TextFigureView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const auto s = style();
  painter.fillRect(rect(), s.background);
  if (figure_.elements.empty() && figure_.heading.isEmpty()) {
    painter.setPen(s.muted);
    painter.drawText(rect().adjusted(kMargin, kMargin, -kMargin, -kMargin),
                     Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, placeholder_);
    return;
  }
  painter.translate(kMargin, kMargin);
  render::paintFigure(painter, figure_, layout_, s);
}

bool TextFigureView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const auto hit = render::hitTest(layout_, QPointF(help->pos()) - QPointF(kMargin, kMargin));
    const QString tip = hit ? render::hitToolTip(figure_, *hit) : QString();
    if (tip.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), tip, this);
    }
    return true;
  }
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) relayout();
  return QWidget::event(event);
}

}  // namespace attn::ui
