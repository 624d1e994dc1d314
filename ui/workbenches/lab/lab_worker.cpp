#include "workbenches/lab/lab_worker.h"

namespace attn::ui {
namespace {

LabOutcome cancelledOutcome(quint64 generation, attn::lab::LabRequest request) {
  LabOutcome outcome;
  outcome.generation = generation;
  outcome.request = std::move(request);
  outcome.error = attn::Error{{}, -1, -1, "cancelled", attn::ErrorKind::Cancelled};
  return outcome;
}

}  // namespace

LabWorker::LabWorker() { qRegisterMetaType<attn::ui::LabOutcome>(); }

void LabWorker::submit(quint64 generation, attn::lab::LabRequest request) {
  mailbox_.post([&] {
    pending_.put(Pending{generation, std::move(request)});
    cancel_.store(true);  // the run in progress is older: it stops at its next step
  });
}

void LabWorker::cancel() {
  const std::optional<Pending> dropped = mailbox_.locked([this] {
    cancel_.store(true);
    return pending_.take();
  });
  if (dropped) emit finished(cancelledOutcome(dropped->generation, dropped->request));
}

void LabWorker::drain() {
  std::optional<Pending> next;
  while (mailbox_.next([&] {
    if (!(next = pending_.take())) return false;
    cancel_.store(false);  // under the lock: a cancel for this run can only come after this point
    return true;
  })) {
    Pending job = std::move(*next);
    LabOutcome outcome;
    outcome.generation = job.generation;
    const quint64 generation = job.generation;
    attn::lab::LabControl control{.cancel = &cancel_, .on_progress = [this, generation](int done, int steps) {
                                    emit progress(generation, done, steps);
                                  }};
    auto result = attn::lab::run_lab(job.request, control);
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
