#include "workbenches/common/busy_row.h"

#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

BusyRow::BusyRow(QWidget* parent, QWidget* escScope) : QWidget(parent) {
  setObjectName(u"busyRow"_s);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 2, 0, 2);
  bar_ = new QProgressBar(this);
  bar_->setObjectName(u"runProgress"_s);
  bar_->setTextVisible(false);
  bar_->setMaximumWidth(260);
  label_ = new QLabel(this);
  label_->setObjectName(u"runProgressLabel"_s);
  label_->setTextFormat(Qt::PlainText);
  // A long stage ("decoding photo.jpg (4000 x 3000, 427 MiB)") is cut at the row's end rather than widening the
  // tab's views; the whole text is in the tooltip.
  label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName(u"cancelRun"_s);
  cancel_->setToolTip(tr("Stop this work (Esc); the views keep the last result"));
  layout->addWidget(bar_);
  layout->addWidget(label_, 1);
  layout->addWidget(cancel_);
  setVisible(false);

  escape_ = new QShortcut(QKeySequence(Qt::Key_Escape), escScope ? escScope : parent);
  escape_->setContext(Qt::WidgetWithChildrenShortcut);
  escape_->setWhatsThis(tr("Cancel the work in progress (as the busy row's Cancel)"));  // Help > Keyboard Shortcuts
  escape_->setEnabled(false);  // only while work is out: Esc keeps its other uses otherwise
  connect(escape_, &QShortcut::activated, this, [this] {
    if (running_ && cancel_->isEnabled()) emit cancelRequested();
  });
  connect(cancel_, &QPushButton::clicked, this, &BusyRow::cancelRequested);
  delay_.setSingleShot(true);
  connect(&delay_, &QTimer::timeout, this, &BusyRow::reveal);
  tick_.setInterval(1000);
  connect(&tick_, &QTimer::timeout, this, &BusyRow::refreshText);
}

QString BusyRow::durationText(double seconds) {
  const auto s = static_cast<qint64>(std::ceil(std::max(0.0, seconds)));
  if (s < 60) return tr("%1 s").arg(s);
  return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
}

void BusyRow::start(const QString& what) {
  if (running_) {
    if (done_ < 0 && !cancelling_) {
      what_ = what;
      refreshText();
    }
    return;
  }
  running_ = true;
  cancelling_ = false;
  what_ = what;
  done_ = -1;
  of_ = 0;
  clock_.start();
  bar_->setRange(0, 0);  // busy, until a step is reported
  cancel_->setEnabled(true);
  escape_->setEnabled(true);
  refreshText();
  if (delayMs_ <= 0) {
    reveal();
  } else {
    delay_.start(delayMs_);
  }
}

void BusyRow::setProgress(int done, int of, const QString& what) {
  if (!running_ || of <= 0) return;
  done_ = std::clamp(done, 0, of);
  of_ = of;
  what_ = what;
  bar_->setRange(0, of_);
  bar_->setValue(done_);
  if (!cancelling_) refreshText();
}

void BusyRow::markCancelling() {
  if (!running_) return;
  cancelling_ = true;
  cancel_->setEnabled(false);
  refreshText();
}

void BusyRow::stop() {
  running_ = false;
  cancelling_ = false;
  delay_.stop();
  tick_.stop();
  escape_->setEnabled(false);
  setVisible(false);
}

bool BusyRow::isShown() const { return parentWidget() ? isVisibleTo(parentWidget()) : isVisible(); }

double BusyRow::elapsedSeconds() const { return clock_.isValid() ? double(clock_.elapsed()) / 1000.0 : 0.0; }

void BusyRow::reveal() {
  if (!running_) return;
  setVisible(true);
  tick_.start();
  emit shown();
}

void BusyRow::refreshText() {
  if (cancelling_) {
    label_->setText(tr("Cancelling\u2026"));
    label_->setToolTip({});
    return;
  }
  const double seconds = elapsedSeconds();
  QString text = what_;
  if (done_ > 0 && done_ < of_) {
    text += tr(" \u00b7 about %1 left").arg(durationText(seconds * (of_ - done_) / done_));
  } else if (done_ < 0 && seconds >= 1.0) {
    text += tr(" \u00b7 %1 so far").arg(durationText(seconds));
  }
  label_->setText(text);
  label_->setToolTip(text);
}

}  // namespace attn::ui
