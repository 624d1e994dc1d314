// The ThreadSanitizer canary: a deliberate data race between a workbench's kind of worker thread
// (WorkerThread, a call queued to it with queueCall, as the workers' drain()) and the GUI thread. Built only with
// ATTN_SANITIZE_THREAD; ctest passes it only when TSan reports the race on `unguarded`. It guards the
// TSan set-up of the UI tests (the tsan preset's ignore_noninstrumented_modules, the model of Qt's event
// queue in ui/workbenches/common/worker_thread.cpp): if that ever hid races in our code that cross Qt's
// threads, this test would fail instead of the suite going quiet.
#include "workbenches/common/worker_thread.h"

#include <QCoreApplication>
#include <QObject>
#include <QString>

#include <atomic>
#include <cstdio>

namespace {

int unguarded = 0;                 // written on the worker thread, read on the main thread: no ordering
std::atomic<bool> written{false};  // relaxed only, so it orders nothing

}  // namespace

class CanaryWorker : public QObject {
  Q_OBJECT

 public:
  Q_INVOKABLE void write() {
    unguarded = 42;
    written.store(true, std::memory_order_relaxed);
  }
};

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  CanaryWorker worker;
  attn::ui::WorkerThread thread;
  thread.host(&worker, QStringLiteral("canary worker"));
  attn::ui::queueCall(&worker, "write");
  while (!written.load(std::memory_order_relaxed)) QThread::yieldCurrentThread();
  const int seen = unguarded;  // the race TSan must report
  thread.stop();
  std::printf("read %d without synchronisation; ThreadSanitizer should have reported it\n", seen);
  return 0;
}

#include "tsan_canary.moc"
