#include "workbenches/common/worker_thread.h"

#include <QMetaObject>
#include <QString>
#include <QtGlobal>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#if defined(__SANITIZE_THREAD__)
#include <QCoreApplication>
#include <QtCore/private/qobject_p.h>  // QAbstractMetaCallEvent, the signal-spy hook (qt6-base-private-dev)

#include <sanitizer/tsan_interface.h>

#include <mutex>

// Exported by libtsan, not declared in GCC 12's <sanitizer/tsan_interface.h>: the calling thread's memory
// accesses are not checked between the two (synchronisation still is).
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace attn::ui {

#if defined(__SANITIZE_THREAD__)
namespace {

// On the emitting thread, before and after Qt queues the call for receivers on other threads. In between,
// Qt copies the arguments for the receiver with copy constructors built with TSan, and the receiver may
// already run before the emission ends (the exact point, inside QCoreApplication::postEvent, cannot be
// hooked): TSan saw that copy and the slot reading it as unordered in about one run of the UI tests in
// two. So on a worker thread an emission's own memory accesses are not checked; its synchronisation
// still is. Our workers' signals carry immutable values, and no slot is connected to them directly.
bool onWorkerThread() {
  const QCoreApplication* app = QCoreApplication::instance();
  return app != nullptr && QThread::currentThread() != app->thread();
}
thread_local int ignoredEmissions = 0;

void signalBegins(QObject* sender, int /*signal*/, void** /*arguments*/) {
  __tsan_release(sender);
  if (onWorkerThread()) {
    ++ignoredEmissions;
    __tsan_ignore_thread_begin();
  }
}
void signalEnds(QObject* sender, int /*signal*/) {
  if (ignoredEmissions > 0) {
    --ignoredEmissions;
    __tsan_ignore_thread_end();
  }
  __tsan_release(sender);
}

// On the receiving thread, before every event is delivered. A queued call carries its sender (null when
// it was queued by QMetaObject::invokeMethod, not by a signal).
bool eventDelivered(void** data) {
  const auto* event = static_cast<const QEvent*>(data[1]);
  if (event->type() == QEvent::MetaCall) {
    const QObject* sender = static_cast<const QAbstractMetaCallEvent*>(event)->sender();
    __tsan_acquire(const_cast<QObject*>(sender != nullptr ? sender : static_cast<const QObject*>(data[0])));
  }
  return false;  // deliver it as usual
}

void modelQtEventQueueForTsan() {
  static std::once_flag once;
  std::call_once(once, [] {
    static QSignalSpyCallbackSet callbacks{&signalBegins, nullptr, &signalEnds, nullptr};
    qt_register_signal_spy_callbacks(&callbacks);
    QInternal::registerCallback(QInternal::EventNotifyCallback, &eventDelivered);
  });
}

}  // namespace

#endif

WorkerThread::~WorkerThread() { stop(); }

void WorkerThread::host(QObject* worker, const QString& name) {
  Q_ASSERT(worker != nullptr && worker->parent() == nullptr && !isRunning());
#if defined(__SANITIZE_THREAD__)
  modelQtEventQueueForTsan();
#endif
  setObjectName(name);
  worker->moveToThread(this);
  start();
  // start() has reported the thread as running unless the thread could not be created (it said why).
  if (isRunning()) running_.wait(false, std::memory_order_acquire);
}

void WorkerThread::run() {
  // QThread has created this thread's event dispatcher before calling run().
  running_.store(true, std::memory_order_release);
  running_.notify_all();
  exec();
  ended_.store(true, std::memory_order_release);
}

void queueCall(QObject* receiver, const char* invokable) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(receiver);
#endif
  if (!QMetaObject::invokeMethod(receiver, invokable, Qt::QueuedConnection)) {
    qFatal("queueCall: %s has no invokable %s()", receiver->metaObject()->className(), invokable);
  }
}

void WorkerThread::stop() {
  quit();
  wait();
  // wait() has returned, so run() has too (or never started): this load pairs with its store.
  [[maybe_unused]] const bool ended = ended_.load(std::memory_order_acquire);
}

bool lowerThisThreadsPriority(int steps) {
  const auto self = static_cast<id_t>(gettid());
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, self);
  if (errno != 0) return false;
  return setpriority(PRIO_PROCESS, self, std::min(now + steps, 19)) == 0;
}

}  // namespace attn::ui
