#include "window/status_line.h"

#include <QFontMetrics>
#include <QResizeEvent>
#include <QStatusBar>
#include <QTabWidget>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// The longest prefix of `text` ending at a word boundary that fits `width` with "…" after it.
QString elideAtWord(const QString& text, const QFontMetrics& metrics, int width) {
  if (metrics.horizontalAdvance(text) <= width) return text;
  const QString ellipsis = u"\u2026"_s;
  const QString hard = metrics.elidedText(text, Qt::ElideRight, width);  // the most that fits, mid-word
  qsizetype cut = hard.endsWith(ellipsis) ? hard.size() - ellipsis.size() : hard.size();
  // Back to the last space, unless that throws away most of the line (one very long word).
  const qsizetype space = text.lastIndexOf(u' ', cut);
  if (space > cut / 2) cut = space;
  return text.left(cut).trimmed() + ellipsis;
}

}  // namespace

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  setTextFormat(Qt::PlainText);
  setWordWrap(false);
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
  // A message is one line: newlines in an engine error become separators.
  full_ = QString(text).replace(u'\n', u" \u00b7 "_s);
  relayout();
}

QSize ElidedLabel::minimumSizeHint() const { return {0, QLabel::minimumSizeHint().height()}; }

QSize ElidedLabel::sizeHint() const { return {0, QLabel::sizeHint().height()}; }

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  relayout();
}

void ElidedLabel::relayout() {
  const int room = std::max(0, contentsRect().width() - 2 * margin() - 4);
  const QString shown = elideAtWord(full_, fontMetrics(), room);
  elided_ = shown != full_;
  QLabel::setText(shown);
  setToolTip(elided_ ? full_ : QString());
}

TabMessages::TabMessages(QStatusBar* bar, QTabWidget* tabs)
    : QObject(bar), bar_(bar), tabs_(tabs), line_(new ElidedLabel(bar)) {
  line_->setObjectName(u"statusLine"_s);
  // A permanent widget, so that QStatusBar leaves its own drawing of the message no room: the label draws it.
  bar_->addPermanentWidget(line_, 1);
  connect(bar_, &QStatusBar::messageChanged, line_, &ElidedLabel::setFullText);
}

void TabMessages::show(QWidget* tab, const QString& text, int timeoutMs) {
  if (tab == nullptr) tab = tabs_->currentWidget();
  entries_[tab] = Entry{text, timeoutMs > 0 ? QDeadlineTimer(timeoutMs) : QDeadlineTimer(QDeadlineTimer::Forever)};
  if (tab == tabs_->currentWidget()) bar_->showMessage(text, timeoutMs);
}

void TabMessages::clear(QWidget* tab) {
  if (tab == nullptr) tab = tabs_->currentWidget();
  entries_.remove(tab);
  if (tab == tabs_->currentWidget()) bar_->clearMessage();
}

QString TabMessages::messageOf(QWidget* tab) const {
  const auto it = entries_.constFind(tab);
  if (it == entries_.cend() || it->deadline.hasExpired()) return {};
  return it->text;
}

void TabMessages::showTab(QWidget* tab) {
  const auto it = entries_.constFind(tab);
  if (it == entries_.cend() || it->deadline.hasExpired()) {
    bar_->clearMessage();
    return;
  }
  const qint64 left = it->deadline.isForever() ? 0 : std::max<qint64>(1, it->deadline.remainingTime());
  bar_->showMessage(it->text, int(left));
}

}  // namespace attn::ui
