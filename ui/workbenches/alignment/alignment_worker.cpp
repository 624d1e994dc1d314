#include "workbenches/alignment/alignment_worker.h"
#include "render/strings.h"

#include "render/alignment_render.h"

#include <QElapsedTimer>

#include <omp.h>

using namespace Qt::StringLiterals;

namespace attn::ui {

AlignmentWorker::AlignmentWorker() {
  qRegisterMetaType<std::shared_ptr<const attn::ui::AlignmentSource>>();
  qRegisterMetaType<std::shared_ptr<const attn::ui::AlignmentOutcome>>();
}

void AlignmentWorker::load(quint64 serial, QString nameOrFolder) {
  mailbox_.post([&] { pendingLoad_.put(PendingLoad{serial, std::move(nameOrFolder)}); });
}

void AlignmentWorker::submit(quint64 generation, std::shared_ptr<const AlignmentSource> source,
                             AlignmentRequest request) {
  const quint64 sourceSerial = source ? source->serial : 0;
  mailbox_.post([&] { pendingRun_.put(PendingRun{generation, sourceSerial, std::move(request), std::move(source)}); });
}

void AlignmentWorker::drain() {
  // The models are small (a few hundred thousand parameters): their matrix products take microseconds, and
  // a team of OpenMP threads (Eigen's and the BLAS's products use one) costs more to assemble than it
  // saves; on a busy machine a run took 0.5 s instead of 5 ms. This thread's products stay on it.
  omp_set_num_threads(1);
  std::optional<PendingLoad> load;
  std::optional<PendingRun> run;
  // A load before a run: the run may be for the model being loaded.
  while (mailbox_.next([&] {
    load = pendingLoad_.take();
    run = load ? std::nullopt : pendingRun_.take();
    return load || run;
  })) {
    if (load) {
      runLoad(load->serial, load->nameOrFolder);
    } else if (run) {
      if (run->source && run->source != source_) use(run->source);     // the tab kept another model
      if (!source_ || run->sourceSerial != source_->serial) continue;  // for a model no longer loaded
      auto outcome = compute(run->generation, run->sourceSerial, run->request);
      runs_.fetch_add(1);
      emit finished(std::move(outcome));
    }
  }
}

void AlignmentWorker::runLoad(quint64 serial, const QString& nameOrFolder) {
  QElapsedTimer timer;
  timer.start();
  auto model = loadAlignmentModel(nameOrFolder);
  if (!model) {
    emit loadFailed(serial, QString::fromStdString(model.error().message()));
    return;
  }
  auto source = std::make_shared<AlignmentSource>();
  source->serial = serial;
  source->model = std::move(*model);
  source->loadMs = msSince(timer);
  use(source);
  emit loaded(source_);
}

void AlignmentWorker::use(std::shared_ptr<const AlignmentSource> source) {
  source_ = std::move(source);
  runner_ = alignmentPageFor(source_->model).runner(source_->model);
}

std::shared_ptr<const AlignmentOutcome> AlignmentWorker::compute(quint64 generation, quint64 sourceSerial,
                                                                 const AlignmentRequest& request) {
  auto outcome = std::make_shared<AlignmentOutcome>();
  outcome->generation = generation;
  outcome->sourceSerial = sourceSerial;
  outcome->request = request;
  if (source_) outcome->modelWarnings = source_->model.warnings();
  QElapsedTimer timer;
  timer.start();
  if (!runner_) {
    outcome->error = attn::Error{{}, -1, -1, "no model loaded", attn::ErrorKind::OutOfRange};
    return outcome;
  }
  runner_->run(request, *outcome);
  if (outcome->error) return outcome;
  outcome->runMs = msSince(timer);
  return outcome;
}

}  // namespace attn::ui
