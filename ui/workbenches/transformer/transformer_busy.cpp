// The Transformer tab's busy row (the shared BusyRow): a run that takes longer than a moment (a long text, a big
// model) shows the layers done, the tokens per second and the time left, with Cancel (and Esc); the panes say
// "Running..." until its first result.
#include "workbenches/transformer/transformer_workbench.h"

#include "views/heatmap_view.h"
#include "views/token_lines_view.h"

#include <QLabel>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace attn::ui {

QWidget* TransformerWorkbench::buildBusyRow(QWidget* area) {
  busyRow_ = new BusyRow(area, this);
  busyRow_->setObjectName(u"transformerBusy"_s);
  connect(busyRow_, &BusyRow::shown, this, &TransformerWorkbench::updateBusy);
  connect(busyRow_, &BusyRow::cancelRequested, this, &TransformerWorkbench::cancelRun);
  connect(worker_.get(), &TransformerWorker::runProgress, this, &TransformerWorkbench::onRunProgress);
  return busyRow_;
}

bool TransformerWorkbench::isBusyShown() const { return busyRow_->isShown(); }

void TransformerWorkbench::armBusy() {
  if (busyRow_->isShown()) return;  // already showing: the new request's progress replaces the old one's
  busyRow_->start(isGenerating() ? tr("Generating\u2026") : tr("Running\u2026"));
}

void TransformerWorkbench::updateBusy() {
  const bool running = source_ && (submitted_ > settled_ || isGenerating());
  if (!running) {
    busyRow_->stop();
    return;
  }
  if (!busyRow_->isShown()) return;  // not long yet: short runs never flash the row
  if (!outcome_) {                   // nothing drawn yet: the panes say a run is on its way, not "open a model"
    tokenLines_->setEmptyText(tr("Running\u2026"));
    heatmap_->setEmptyText(busyRow_->label()->text());  // "Running...", then the layers done
    heatmap_->clear();
  }
}

void TransformerWorkbench::onRunProgress(quint64 generation, int done, int layers, qint64 tokens, double ms) {
  if (generation != submitted_ || layers <= 0) return;
  const double seconds = ms / 1000.0;
  const double perSecond = seconds > 0 ? double(tokens) * done / layers / seconds : 0.0;
  busyRow_->setProgress(done, layers,
                        tr("%1 of %2 layers done \u00b7 %3 tokens \u00b7 %4 tokens/s")
                            .arg(done)
                            .arg(layers)
                            .arg(QLocale().toString(tokens))
                            .arg(QLocale().toString(perSecond, 'f', 0)));
  updateBusy();
}

void TransformerWorkbench::cancelRun() {
  if (isGenerating()) {
    stopGenerating();  // a generation keeps what it wrote
    return;
  }
  if (submitted_ <= settled_) return;
  worker_->cancelRun();
  busyRow_->markCancelling();
}

}  // namespace attn::ui
