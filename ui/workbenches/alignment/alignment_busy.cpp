// The Alignment tab's busy row: shown while a run is out for longer than its delay, gone once the newest request
// has settled (shown, refused, or emptied away), and Cancel (or Esc) drops the run out: its result is not shown
// when it comes, and the previous view stays. The models are small; what takes seconds is a speech model saying a
// long text with espeak-ng, or a long review, so the run itself is not interrupted: it finishes on the worker thread
// and is dropped there, as the Captioning tab's are.
#include "workbenches/alignment/alignment_workbench.h"

namespace attn::ui {

void AlignmentWorkbench::updateBusyRow() {
  if (settled_ >= submitted_) busyRow_->stop();
}

void AlignmentWorkbench::cancelRun() {
  if (settled_ >= submitted_) return;
  // Outcomes up to the newest request's are stale now: onFinished and applyPending drop them.
  stale_ = settled_ = submitted_;
  pending_.reset();
  busyRow_->stop();
  emit statusMessage(tr("Cancelled: the previous view stays"), 6000);
}

}  // namespace attn::ui
