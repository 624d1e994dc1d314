#include "workbenches/lab_worker.h"

#include "workbenches/worker_thread.h"

#include <QMutexLocker>

namespace attn::ui {

LabWorker::LabWorker() { qRegisterMetaType<attn::ui::LabOutcome>(); }

void LabWorker::submit(quint64 generation, attn::lab::LabRequest request) {
  QMutexLocker lock(&mutex_);
  pending_ = Pending{generation, std::move(request)};
  if (drainQueued_) return;  // the queued drain will pick the newest request up
  drainQueued_ = true;
  queueCall(this, "drain");
}

void LabWorker::drain() {
  for (;;) {
    Pending job;
    {
      QMutexLocker lock(&mutex_);
      if (!pending_) {
        drainQueued_ = false;
        return;
      }
      job = std::move(*pending_);
      pending_.reset();
    }
    LabOutcome outcome;
    outcome.generation = job.generation;
    auto result = attn::lab::run_lab(job.request);
    runs_.fetch_add(1);
    if (result) {
      outcome.result = std::make_shared<const attn::lab::LabResult>(std::move(*result));
    } else {
      outcome.error = std::move(result.error());
    }
    outcome.request = std::move(job.request);
    emit finished(std::move(outcome));
  }
}

}  // namespace attn::ui
