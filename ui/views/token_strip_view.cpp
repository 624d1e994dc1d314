#include "views/token_strip_view.h"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {
constexpr double kStripPad = 3.0, kStripGap = 1.0;
}

TokenStripView::TokenStripView(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  viewport()->setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
}

void TokenStripView::setTokens(QStringList tokens) {
  tokens_ = std::move(tokens);
  marked_.reset();
  laidOutWidth_ = -1;
  layoutTokens();
  viewport()->update();
}

void TokenStripView::setValues(std::vector<float> values, float max, bool symmetric) {
  values_ = std::move(values);
  max_ = max > 0.0f ? max : 1.0f;
  symmetric_ = symmetric;
  viewport()->update();
}

QColor TokenStripView::tokenColor(qint64 token) const {
  const float v = token >= 0 && std::size_t(token) < values_.size() ? values_[std::size_t(token)] : 0.0f;
  const float t = symmetric_ ? 0.5f + 0.5f * v / max_ : v / max_;
  return QColor::fromRgba(render::colorTable(colormap_)(t));
}

void TokenStripView::setMarked(std::optional<qint64> token) {
  marked_ = token;
  viewport()->update();
}

void TokenStripView::setColormap(render::Colormap map) {
  colormap_ = map;
  viewport()->update();
}

QString TokenStripView::shown(qint64 token) const {
  QString t = tokens_[token];
  t.replace(u'\n', u"\u21b5"_s);
  return t.isEmpty() ? u"\u2205"_s : t;
}

void TokenStripView::layoutTokens() {
  const int width = viewport()->width();
  if (width == laidOutWidth_ && boxes_.size() == std::size_t(tokens_.size())) return;
  laidOutWidth_ = width;
  const QFontMetricsF fm(font());
  lineHeight_ = fm.height() + 2 * kStripPad;
  boxes_.assign(std::size_t(tokens_.size()), {});
  lineStarts_.clear();
  double x = 0, y = 0;
  for (qint64 i = 0; i < tokens_.size(); ++i) {
    const double w = std::min(fm.horizontalAdvance(shown(i)) + 2 * kStripPad, double(std::max(40, width - 4)));
    if (x > 0 && x + w > width) {
      x = 0;
      y += lineHeight_ + kStripGap;
    }
    if (x == 0) lineStarts_.push_back(i);
    boxes_[std::size_t(i)] = QRectF(x, y, w, lineHeight_);
    x += w + kStripGap;
  }
  const double height = tokens_.isEmpty() ? 0 : y + lineHeight_;
  verticalScrollBar()->setRange(0, std::max(0, int(height) - viewport()->height()));
  verticalScrollBar()->setPageStep(viewport()->height());
  verticalScrollBar()->setSingleStep(int(lineHeight_));
}

QRectF TokenStripView::tokenRect(qint64 token) const {
  return token >= 0 && std::size_t(token) < boxes_.size() ? boxes_[std::size_t(token)] : QRectF();
}

void TokenStripView::scrollToToken(qint64 token) {
  const QRectF r = tokenRect(token);
  if (r.isNull()) return;
  const int top = verticalScrollBar()->value();
  if (r.top() < top || r.bottom() > top + viewport()->height()) {
    verticalScrollBar()->setValue(int(r.center().y() - viewport()->height() / 2.0));
  }
}

std::optional<qint64> TokenStripView::tokenAt(QPoint pos) const {
  const QPointF at(pos.x(), pos.y() + verticalScrollBar()->value());
  const auto line = qint64(at.y() / (lineHeight_ + kStripGap));
  if (line < 0 || line >= qint64(lineStarts_.size())) return std::nullopt;
  const qint64 end = line + 1 < qint64(lineStarts_.size()) ? lineStarts_[std::size_t(line + 1)] : tokens_.size();
  for (qint64 i = lineStarts_[std::size_t(line)]; i < end; ++i) {
    if (boxes_[std::size_t(i)].contains(at)) return i;
  }
  return std::nullopt;
}

void TokenStripView::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  p.fillRect(viewport()->rect(), palette().color(QPalette::Base));
  const int top = verticalScrollBar()->value();
  const auto first = qint64(std::max(0.0, top / (lineHeight_ + kStripGap)));
  const auto last = qint64((top + viewport()->height()) / (lineHeight_ + kStripGap));
  for (qint64 line = first; line <= last && line < qint64(lineStarts_.size()); ++line) {
    const qint64 end = line + 1 < qint64(lineStarts_.size()) ? lineStarts_[std::size_t(line + 1)] : tokens_.size();
    for (qint64 i = lineStarts_[std::size_t(line)]; i < end; ++i) {
      const QRectF r = boxes_[std::size_t(i)].translated(0, -top);
      const QColor bg = tokenColor(i);
      p.fillRect(r, bg);
      p.setPen(bg.lightnessF() < 0.55 ? Qt::white : Qt::black);
      p.drawText(r.adjusted(kStripPad, 0, -kStripPad, 0), Qt::AlignLeft | Qt::AlignVCenter, shown(i));
      if (marked_ && *marked_ == i) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 2));
        p.drawRect(r.adjusted(1, 1, -1, -1));
      }
    }
  }
}

void TokenStripView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  layoutTokens();
}

void TokenStripView::mouseMoveEvent(QMouseEvent* event) {
  const auto token = tokenAt(event->position().toPoint());
  if (!token) {
    emit tokenHovered(-1, 0.0f);
    QToolTip::hideText();
    return;
  }
  const float v = std::size_t(*token) < values_.size() ? values_[std::size_t(*token)] : 0.0f;
  QToolTip::showText(event->globalPosition().toPoint(),
                     tr("token %1 \u201c%2\u201d: %3").arg(*token).arg(shown(*token)).arg(double(v), 0, 'g', 6),
                     viewport());
  emit tokenHovered(*token, v);
}

void TokenStripView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QAbstractScrollArea::mousePressEvent(event);
  if (const auto token = tokenAt(event->position().toPoint())) emit tokenClicked(*token);
}

}  // namespace attn::ui
