#include "workbenches/worker_thread.h"

#include <QMetaObject>
#include <QString>
#include <QtGlobal>

#if defined(__SANITIZE_THREAD__)
#include <QtCore/private/qobject_p.h>  // QAbstractMetaCallEvent, the signal-spy hook (qt6-base-private-dev)

#include <sanitizer/tsan_interface.h>

#include <mutex>
#endif

namespace attn::ui {

#if defined(__SANITIZE_THREAD__)
namespace {

// On the emitting thread, before Qt queues the call to any receiver on another thread, and again after:
// the arguments are copied for the receiver in between, by copy constructors built with TSan. (The exact
// point, inside QCoreApplication::postEvent, cannot be hooked; a call delivered in the microseconds
// between its posting and the second release can still be reported, see README "Sanitizers".)
void signalBegins(QObject* sender, int /*signal*/, void** /*arguments*/) { __tsan_release(sender); }
void signalEnds(QObject* sender, int /*signal*/) { __tsan_release(sender); }

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
  running_.wait(false, std::memory_order_acquire);
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

}  // namespace attn::ui
