// The Transformer tab's busy row: a run that takes longer than a moment (a long text, a big model) shows the layers
// done, the tokens per second and the time left, with Cancel; the panes say "Running..." until its first result.
#include "workbenches/transformer/transformer_workbench.h"

#include "views/heatmap_view.h"
#include "views/token_lines_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// "45 s", "3 min 20 s": a time left, rounded up to what a reader needs.
QString durationText(double seconds) {
  const auto s = static_cast<qint64>(std::ceil(std::max(0.0, seconds)));
  if (s < 60) return TransformerWorkbench::tr("%1 s").arg(s);
  return TransformerWorkbench::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
}

}  // namespace

QWidget* TransformerWorkbench::buildBusyRow(QWidget* area) {
  busyRow_ = new QWidget(area);
  busyRow_->setObjectName(u"transformerBusy"_s);
  auto* layout = new QHBoxLayout(busyRow_);
  layout->setContentsMargins(0, 2, 0, 2);
  runProgress_ = new QProgressBar(busyRow_);
  runProgress_->setObjectName(u"runProgress"_s);
  runProgress_->setTextVisible(false);
  runProgress_->setMaximumWidth(260);
  runProgressLabel_ = new QLabel(busyRow_);
  runProgressLabel_->setObjectName(u"runProgressLabel"_s);
  runProgressLabel_->setTextFormat(Qt::PlainText);
  cancelRunButton_ = new QPushButton(tr("Cancel"), busyRow_);
  cancelRunButton_->setObjectName(u"cancelRun"_s);
  cancelRunButton_->setToolTip(tr("Stop this run; the views keep the last result"));
  layout->addWidget(runProgress_);
  layout->addWidget(runProgressLabel_, 1);
  layout->addWidget(cancelRunButton_);
  busyRow_->setVisible(false);
  busyTimer_.setSingleShot(true);
  connect(&busyTimer_, &QTimer::timeout, this, &TransformerWorkbench::updateBusy);
  connect(cancelRunButton_, &QPushButton::clicked, this, &TransformerWorkbench::cancelRun);
  connect(worker_.get(), &TransformerWorker::runProgress, this, &TransformerWorkbench::onRunProgress);
  return busyRow_;
}

bool TransformerWorkbench::isBusyShown() const { return busyRow_->isVisibleTo(this); }

void TransformerWorkbench::armBusy() {
  if (busyRow_->isVisibleTo(this)) return;  // already showing: the new request's progress replaces the old one's
  runProgress_->setRange(0, 0);             // busy, until a layer is done
  runProgressLabel_->setText(isGenerating() ? tr("Generating\u2026") : tr("Running\u2026"));
  cancelRunButton_->setEnabled(true);
  if (busyDelayMs_ <= 0) {
    updateBusy();  // at once
  } else if (!busyTimer_.isActive()) {
    busyTimer_.start(busyDelayMs_);
  }
}

void TransformerWorkbench::updateBusy() {
  const bool running = source_ && (submitted_ > settled_ || isGenerating());
  if (!running) {
    busyTimer_.stop();
    busyRow_->setVisible(false);
    return;
  }
  if (busyTimer_.isActive()) return;  // not long yet: short runs never flash the row
  busyRow_->setVisible(true);
  if (!outcome_) {  // nothing drawn yet: the panes say a run is on its way, not "open a model"
    tokenLines_->setEmptyText(tr("Running\u2026"));
    heatmap_->setEmptyText(runProgressLabel_->text());  // "Running...", then the layers done
    heatmap_->clear();
  }
}

void TransformerWorkbench::onRunProgress(quint64 generation, int done, int layers, qint64 tokens, double ms) {
  if (generation != submitted_ || layers <= 0) return;
  runProgress_->setRange(0, layers);
  runProgress_->setValue(done);
  const double seconds = ms / 1000.0;
  const double perSecond = seconds > 0 ? double(tokens) * done / layers / seconds : 0.0;
  QString text = tr("%1 of %2 layers done \u00b7 %3 tokens \u00b7 %4 tokens/s")
                     .arg(done)
                     .arg(layers)
                     .arg(QLocale().toString(tokens))
                     .arg(QLocale().toString(perSecond, 'f', 0));
  if (done < layers && done > 0)
    text += tr(" \u00b7 about %1 left").arg(durationText(seconds * (layers - done) / done));
  runProgressLabel_->setText(text);
  updateBusy();
}

void TransformerWorkbench::cancelRun() {
  if (isGenerating()) {
    stopGenerating();  // a generation keeps what it wrote
    return;
  }
  if (submitted_ <= settled_) return;
  worker_->cancelRun();
  cancelRunButton_->setEnabled(false);
  runProgressLabel_->setText(tr("Cancelling\u2026"));
}

}  // namespace attn::ui
