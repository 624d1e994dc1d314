// AlignmentWorker: the Alignment tab's engine thread. It loads models (a bundled one from the binary's
// resources or a folder) and runs them (seq2seq: greedy or beam decoding; classifier: attention pooling;
// entailment: the premise and the hypothesis word by word)
// the TransformerWorker way: only the newest pending request runs, every outcome carries its request's
// generation and is an immutable value sent over a queued signal. The sessions (scratch buffers) live
// here, never on the GUI thread. The models are small: a run takes milliseconds, so a run in progress is
// never interrupted; a burst of keystrokes costs the run in flight plus one run of the newest text.
#pragma once

#include "workbenches/alignment/alignment_run.h"
#include "workbenches/common/mailbox.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

class AlignmentWorker : public QObject {
  Q_OBJECT

 public:
  AlignmentWorker();

  // Thread-safe. A bundled model's key or a folder; replaces a load that has not started.
  void load(quint64 serial, QString nameOrFolder);
  // Thread-safe. Replaces any run that has not started; runs against `source`, the model the tab has open: the
  // worker switches to it when its own differs (a load the tab had superseded may have finished here after the
  // tab's newer load failed).
  void submit(quint64 generation, std::shared_ptr<const AlignmentSource> source, AlignmentRequest request);
  int runs() const { return runs_.load(); }

 signals:
  void loaded(std::shared_ptr<const attn::ui::AlignmentSource> source);
  void loadFailed(quint64 serial, const QString& message);
  void finished(std::shared_ptr<const attn::ui::AlignmentOutcome> outcome);

 private:
  Q_INVOKABLE void drain();
  void runLoad(quint64 serial, const QString& nameOrFolder);
  void use(std::shared_ptr<const AlignmentSource> source);  // runs go against `source` from now on
  std::shared_ptr<const AlignmentOutcome> compute(quint64 generation, quint64 sourceSerial,
                                                  const AlignmentRequest& request);

  struct PendingLoad {
    quint64 serial = 0;
    QString nameOrFolder;
  };
  struct PendingRun {
    quint64 generation = 0;
    quint64 sourceSerial = 0;
    AlignmentRequest request;
    std::shared_ptr<const AlignmentSource> source;  // the tab's; null: the last one loaded here
  };
  Mailbox mailbox_{this};
  Latest<PendingLoad> pendingLoad_;  // guarded by mailbox_
  Latest<PendingRun> pendingRun_;    // guarded by mailbox_
  std::atomic<int> runs_{0};

  // Worker-thread state.
  std::shared_ptr<const AlignmentSource> source_;
  // The open model's page's runner: its session (scratch buffers).
  std::unique_ptr<AlignmentRunner> runner_;
};

}  // namespace attn::ui

Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::AlignmentSource>)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::ui::AlignmentOutcome>)
