#include "workbenches/lab/lab_worker.h"

namespace attn::ui {

LabWorker::LabWorker() { qRegisterMetaType<attn::ui::LabOutcome>(); }

void LabWorker::submit(quint64 generation, attn::lab::LabRequest request) {
  mailbox_.post([&] { pending_.put(Pending{generation, std::move(request)}); });
}

void LabWorker::drain() {
  std::optional<Pending> next;
  while (mailbox_.next([&] { return (next = pending_.take()).has_value(); })) {
    Pending job = std::move(*next);
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
