// WorkerThread: the background thread of a workbench. It hosts one worker object, whose slots run there
// in the thread's event loop, and stop() ends that loop and waits for the thread to finish.
//
// ThreadSanitizer and Qt. Debian's Qt is not built with TSan, so TSan cannot see the orderings Qt makes
// inside libQt6Core: QThread::wait() and the posted-event queue synchronise through Qt's own futex mutex.
// To TSan, the worker's last writes and the workbench deleting the worker after wait() looked unordered,
// and so did a signal's arguments, copied on the worker thread, and the slot reading them on the GUI
// thread. Two things make those orderings visible, rather than suppressing reports:
//   - the thread publishes its end through an std::atomic (release at the end of run(), acquire in
//     stop()), which costs nothing in a release build;
//   - in a TSan build only, host() installs a model of Qt's event queue (worker_thread.cpp): emitting a
//     signal releases the sender, and delivering a queued call acquires its sender (or, for a call queued
//     without a signal, its receiver; queueCall() releases that). These are the orderings Qt's queue
//     provides, per sender, not one global lock. On a worker thread it leaves an emission's own memory
//     accesses (the argument copies) unchecked, as Qt publishes them at a point that cannot be hooked.
//     tests/ui/tsan_canary.cpp checks that a race across the worker thread is still reported.
// The tsan test preset (CMakePresets.json) adds ignore_noninstrumented_modules=1: the allocations and
// copies that uninstrumented libraries (Qt, GLib) make through intercepted calls are not checked, as the
// orderings around them are as invisible; their own pooled threads (QImage scaling) were reported.
// With both, the UI tests need no suppression file.
#pragma once

#include <QThread>

#include <atomic>

class QString;

namespace attn::ui {

class WorkerThread final : public QThread {
 public:
  WorkerThread() = default;
  ~WorkerThread() override;

  // Names the thread (debuggers and TSan reports show it), moves the parentless worker onto it, starts it
  // and returns once it is running (well under a millisecond). Once.
  void host(QObject* worker, const QString& name);
  // Ends the event loop and waits: afterwards no slot or event of the worker is running or can run, and
  // everything the thread wrote is visible to the caller. Idempotent.
  void stop();

 protected:
  void run() override;

 private:
  std::atomic<bool> running_{false};
  std::atomic<bool> ended_{false};
};

// Queues a call of receiver's Q_INVOKABLE method `invokable` (no arguments) to run in receiver's thread:
// QMetaObject::invokeMethod(receiver, invokable, Qt::QueuedConnection), aborting if there is no such
// method (a typo fails the first test that posts). By name rather than by member-function pointer on
// purpose: the pointer form allocates a call object in inline code, which in the TSan build is
// instrumented, while the ordering that publishes it (Qt's queue) is not; the named form writes nothing
// outside Qt. In a TSan build it also releases receiver, which the call's delivery acquires.
void queueCall(QObject* receiver, const char* invokable);

// The calling thread's nice value raised by `steps` (on Linux a thread's own; the OpenMP and OpenBLAS threads it
// starts afterwards inherit it): long background work, such as a patching sweep that keeps every core busy for
// minutes, then yields a core to the GUI thread whenever that has a frame to draw, and otherwise takes them all.
// False (and nothing changed) where the system refuses.
bool lowerThisThreadsPriority(int steps = 5);

}  // namespace attn::ui
