#include "views/caption_strip_view.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

constexpr double kMargin = 6.0;  // around the strip
constexpr double kGap = 6.0;     // between chips
constexpr double kPadX = 9.0;    // inside a chip, left and right of the word
constexpr double kBarHeight = 5.0;
constexpr double kBarGap = 4.0;
constexpr double kMinGutter = 18.0;  // the "β" and "H" labels left of the first chip of a line

const QColor kBetaColour(0x1f, 0x77, 0xb4);
const QColor kEntropyColour(0xe6, 0x7e, 0x22);

QFont labelFontOf(const QFont& base) {
  QFont small = base;
  small.setPointSizeF(std::max(7.0, base.pointSizeF() * 0.8));
  return small;
}

// The measures every chip shares. The bars are a label's line apart (at least), so the β and H labels, each
// centred on its bar in the gutter, never overlap, and the chip is tall enough for the H label.
struct ChipMetrics {
  double textHeight = 0.0;   // the word's box at the top of the chip
  double barTop = 0.0;       // the β bar, from the chip's top
  double barPitch = 0.0;     // from the β bar's top to the H bar's
  double labelHeight = 0.0;  // a β or H label's line
  double height = 0.0;       // the chip
  double gutter = 0.0;       // left of the first chip of a line, for the labels
};

ChipMetrics chipMetrics(const QFont& wordFont, const QFont& labelFont) {
  ChipMetrics m;
  const QFontMetricsF label(labelFont);
  m.textHeight = QFontMetricsF(wordFont).height() + 6.0;
  m.labelHeight = label.height();
  m.barTop = m.textHeight + kBarGap;
  m.barPitch = std::max(kBarHeight + kBarGap, m.labelHeight + 1.0);
  const double hBar = m.barTop + m.barPitch;
  m.height = std::max(hBar + kBarHeight + 4.0, hBar + kBarHeight / 2 + m.labelHeight / 2 + 1.0);
  m.gutter =
      std::max(kMinGutter, std::max(label.horizontalAdvance(u"\u03b2"_s), label.horizontalAdvance(u"H"_s)) + 6.0);
  return m;
}

}  // namespace

CaptionStripView::CaptionStripView(QWidget* parent) : QWidget(parent) {
  setObjectName(u"captionStrip"_s);
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(false);
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

QFont CaptionStripView::wordFont() const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() > 0 ? f.pointSizeF() * 1.35 : 13.0);
  return f;
}

void CaptionStripView::setWords(std::vector<CaptionWord> words, double maxEntropy) {
  words_ = std::move(words);
  maxEntropy_ = maxEntropy > 0.0 ? maxEntropy : 1.0;
  current_ = words_.empty() ? 0 : std::clamp(current_, 0, int(words_.size()) - 1);
  revealed_ = int(words_.size());
  relayout();
}

void CaptionStripView::setCurrent(int index) {
  if (words_.empty()) return;
  index = std::clamp(index, 0, int(words_.size()) - 1);
  if (index == current_) return;
  current_ = index;
  update();
  emit currentChanged(current_);
}

void CaptionStripView::setRevealed(int count) {
  revealed_ = std::clamp(count, 0, int(words_.size()));
  update();
}

void CaptionStripView::setPlaceholder(const QString& text) {
  placeholder_ = text;
  update();
}

std::vector<QRectF> CaptionStripView::layout(int width) const {
  std::vector<QRectF> out;
  out.reserve(words_.size());
  const QFontMetricsF metrics(wordFont());
  const ChipMetrics chip = chipMetrics(wordFont(), labelFontOf(font()));
  const double start = kMargin + chip.gutter;
  double x = start;
  double y = kMargin;
  for (const auto& word : words_) {
    const double w = std::max(metrics.horizontalAdvance(word.text) + 2.0 * kPadX, 34.0);
    if (x > start && x + w > width - kMargin) {
      x = start;
      y += chip.height + kGap;
    }
    out.emplace_back(x, y, w, chip.height);
    x += w + kGap;
  }
  return out;
}

void CaptionStripView::relayout() {
  rects_ = layout(width());
  updateGeometry();
  update();
}

int CaptionStripView::heightForWidth(int width) const {
  const auto rects = layout(width);
  const double chipHeight = chipMetrics(wordFont(), labelFontOf(font())).height;
  const double bottom = rects.empty() ? kMargin + chipHeight : rects.back().bottom();
  return int(std::ceil(bottom + kMargin));
}

QSize CaptionStripView::sizeHint() const { return QSize(480, heightForWidth(480)); }
QSize CaptionStripView::minimumSizeHint() const { return QSize(160, heightForWidth(160)); }

void CaptionStripView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  rects_ = layout(width());
}

QRectF CaptionStripView::wordRect(int index) const {
  return index >= 0 && std::size_t(index) < rects_.size() ? rects_[std::size_t(index)] : QRectF();
}

CaptionStripView::Geometry CaptionStripView::geometry() const {
  Geometry g;
  const QFontMetricsF metrics(wordFont());
  const ChipMetrics chip = chipMetrics(wordFont(), labelFontOf(font()));
  double lineTop = -1.0;
  for (std::size_t i = 0; i < rects_.size() && i < words_.size(); ++i) {
    const QRectF r = rects_[i];
    if (r.top() != lineTop) {
      lineTop = r.top();
      for (int bar = 0; bar < 2; ++bar) g.labels.push_back(gutterLabelRect(r.top(), bar));
    }
    const QRectF text(r.left(), r.top(), r.width(), chip.textHeight);
    const double advance = metrics.horizontalAdvance(words_[i].text);
    g.labels.emplace_back(text.center().x() - advance / 2, text.center().y() - metrics.height() / 2, advance,
                          metrics.height());
    for (int bar = 0; bar < 2; ++bar) g.bars.push_back(barRect(r, bar));
  }
  return g;
}

QRectF CaptionStripView::barRect(const QRectF& chip, int bar) const {
  const ChipMetrics m = chipMetrics(wordFont(), labelFontOf(font()));
  return QRectF(chip.left() + kPadX - 3.0, chip.top() + m.barTop + bar * m.barPitch, chip.width() - 2.0 * kPadX + 6.0,
                kBarHeight);
}

QRectF CaptionStripView::gutterLabelRect(double chipTop, int bar) const {
  const ChipMetrics m = chipMetrics(wordFont(), labelFontOf(font()));
  const double centre = chipTop + m.barTop + bar * m.barPitch + kBarHeight / 2;
  return QRectF(kMargin, centre - m.labelHeight / 2, m.gutter - 3.0, m.labelHeight);
}

int CaptionStripView::wordAt(QPointF point) const {
  for (int i = 0; i < std::min<int>(revealed_, int(rects_.size())); ++i) {
    if (rects_[std::size_t(i)].adjusted(-kGap / 2, -kGap / 2, kGap / 2, kGap / 2).contains(point)) return i;
  }
  return -1;
}

void CaptionStripView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.fillRect(rect(), palette().base());
  if (words_.empty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap, placeholder_);
    return;
  }
  const QFont big = wordFont();
  const QFont small = labelFontOf(font());
  const ChipMetrics chip = chipMetrics(big, small);
  const QColor text = palette().color(QPalette::Text);
  const QColor muted = palette().color(QPalette::PlaceholderText);
  const QColor highlight = palette().color(QPalette::Highlight);
  double lineTop = -1.0;
  for (int i = 0; i < std::min<int>(revealed_, int(rects_.size())); ++i) {
    const QRectF r = rects_[std::size_t(i)];
    const auto& word = words_[std::size_t(i)];
    if (r.top() != lineTop) {  // the first chip of a line: the bars' labels in the gutter
      lineTop = r.top();
      painter.setFont(small);
      painter.setPen(muted);
      painter.drawText(gutterLabelRect(r.top(), 0), Qt::AlignRight | Qt::AlignVCenter, u"\u03b2"_s);
      painter.drawText(gutterLabelRect(r.top(), 1), Qt::AlignRight | Qt::AlignVCenter, u"H"_s);
    }
    if (i == current_) {
      QColor fill = highlight;
      fill.setAlpha(60);
      painter.setBrush(fill);
      painter.setPen(QPen(highlight, 2.0));
      painter.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
    } else {
      painter.setBrush(Qt::NoBrush);
      painter.setPen(QPen(palette().color(QPalette::Mid), 1.0));
      painter.drawRoundedRect(r.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
    }
    painter.setFont(big);
    painter.setPen(word.end ? muted : text);
    painter.drawText(QRectF(r.left(), r.top(), r.width(), chip.textHeight), Qt::AlignCenter, word.text);
    const auto bar = [&](const QRectF& track, double value, const QColor& colour) {
      painter.setPen(Qt::NoPen);
      painter.setBrush(palette().color(QPalette::Midlight));
      painter.drawRect(track);
      painter.setBrush(colour);
      painter.drawRect(QRectF(track.left(), track.top(), track.width() * std::clamp(value, 0.0, 1.0), track.height()));
    };
    bar(barRect(r, 0), double(word.beta), kBetaColour);
    bar(barRect(r, 1), double(word.entropy) / maxEntropy_, kEntropyColour);
  }
  if (hasFocus() && current_ < revealed_) {
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(highlight, 1.0, Qt::DotLine));
    painter.drawRoundedRect(wordRect(current_).adjusted(-3, -3, 3, 3), 5, 5);
  }
}

void CaptionStripView::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  const int index = wordAt(event->position());
  if (index >= 0) setCurrent(index);
}

void CaptionStripView::mouseMoveEvent(QMouseEvent* event) {
  if (!(event->buttons() & Qt::LeftButton)) return;
  // Scrubbing: the word under the pointer, or the nearest one on its line when between two.
  int index = wordAt(event->position());
  if (index < 0) {
    double best = 1e300;
    for (int i = 0; i < std::min<int>(revealed_, int(rects_.size())); ++i) {
      const QRectF r = rects_[std::size_t(i)];
      if (event->position().y() < r.top() - kGap || event->position().y() > r.bottom() + kGap) continue;
      const double d = std::abs(r.center().x() - event->position().x());
      if (d < best) {
        best = d;
        index = i;
      }
    }
  }
  if (index >= 0) setCurrent(index);
}

void CaptionStripView::keyPressEvent(QKeyEvent* event) {
  const int last = std::max(0, std::min<int>(revealed_, count()) - 1);
  switch (event->key()) {
    case Qt::Key_Left: setCurrent(std::max(0, current_ - 1)); break;
    case Qt::Key_Right: setCurrent(std::min(last, current_ + 1)); break;
    case Qt::Key_Home: setCurrent(0); break;
    case Qt::Key_End: setCurrent(last); break;
    default: QWidget::keyPressEvent(event); return;
  }
  event->accept();
}

bool CaptionStripView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int index = wordAt(help->pos());
    if (index < 0) {
      QToolTip::hideText();
      event->ignore();
      return true;
    }
    const auto& word = words_[std::size_t(index)];
    QToolTip::showText(help->globalPos(),
                       tr("%1 \u00b7 word %2 (0\u2013%3)\n\u03b2 (gate) %4\nH(\u03b1) %5 nats of %6 (uniform)")
                           .arg(word.text)
                           .arg(index)
                           .arg(count() - 1)
                           .arg(double(word.beta), 0, 'f', 3)
                           .arg(double(word.entropy), 0, 'f', 2)
                           .arg(maxEntropy_, 0, 'f', 2),
                       this, wordRect(index).toRect());
    return true;
  }
  return QWidget::event(event);
}

}  // namespace attn::ui
