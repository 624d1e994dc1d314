// LabWorker: runs attn::lab::run_lab on its own thread. Requests are coalesced (only the newest pending
// request runs; older ones are overwritten before they start) and every outcome carries the generation
// of its request, so the workbench can drop results that are older than what it already shows. A run reports its
// steps where the mechanism has them (Transformer-XL's segments) and stops at the next one on cancel() or on a newer
// request.
#pragma once

#include "attn/lab/lab.h"
#include "workbenches/common/mailbox.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace attn::ui {

// An immutable value passed from the worker thread to the GUI thread.
struct LabOutcome {
  quint64 generation = 0;
  attn::lab::LabRequest request;
  std::shared_ptr<const attn::lab::LabResult> result;  // null when the engine refused the input
  std::optional<attn::Error> error;
  bool ok() const { return result != nullptr; }
};

// The run's one line, as the tab's status and attnscope-cli lab say it: "lab: additive · 7 x 15 · 0.21 ms".
QString labSummary(const LabOutcome& outcome, const attn::AttentionMap& map);

class LabWorker : public QObject {
  Q_OBJECT

 public:
  LabWorker();

  // Thread-safe; called from the GUI thread. Replaces any request that has not started yet.
  void submit(quint64 generation, attn::lab::LabRequest request);
  // Thread-safe: a request that has not started is dropped, the one running stops at its next step; each is
  // answered by an outcome whose error is of kind Cancelled.
  void cancel();
  // Thread-safe, for closing: the run in progress stops at its next step.
  void abandon() { cancel_.store(true); }
  // How many requests actually ran (coalescing makes this smaller than the number submitted).
  int runs() const { return runs_.load(); }

 signals:
  void finished(attn::ui::LabOutcome outcome);
  // Steps done of all, for the run of `generation` (on the worker thread; queue it).
  void progress(quint64 generation, int done, int steps);

 private:
  Q_INVOKABLE void drain();  // on the worker thread

  struct Pending {
    quint64 generation;
    attn::lab::LabRequest request;
  };
  Mailbox mailbox_{this};
  Latest<Pending> pending_;  // guarded by mailbox_
  std::atomic<int> runs_{0};
  std::atomic<bool> cancel_{false};  // the run taken last stops at its next step
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(attn::ui::LabOutcome)
