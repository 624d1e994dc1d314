#include "workbenches/lab/lab_worker.h"
#include "render/strings.h"

#include <QCoreApplication>

using namespace Qt::StringLiterals;

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

QString labSummary(const LabOutcome& outcome, const attn::AttentionMap& map) {
  const auto& params = outcome.request.params;
  const auto& info = attn::lab::info(params.mechanism);
  // Global attention is named by its score ("additive" is Bahdanau attention), as on the command line.
  QString name = params.mechanism == attn::lab::Mechanism::Global ? fromStd(attn::lab::score_key(params.score))
                                                                  : fromStd(info.key);
  if (params.mechanism != attn::lab::Mechanism::Global && info.uses_score) {
    name += u" ("_s + fromStd(attn::lab::score_key(params.score)) + u")"_s;
  }
  const double ms = outcome.result ? outcome.result->elapsed_ms : 0.0;
  return QCoreApplication::translate("LabWorkbench", "lab: %1 \u00b7 %2 x %3 \u00b7 %4 ms")
      .arg(name)
      .arg(map.weights.rows())
      .arg(map.weights.cols())
      .arg(QString::number(ms, 'f', ms < 10.0 ? 2 : 1));
}

}  // namespace attn::ui
