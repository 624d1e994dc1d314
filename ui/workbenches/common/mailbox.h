// The requests a tab has posted to its worker and the worker has not started yet. Each kind of request has
// one Latest<T> slot, so the newest request of a kind replaces an older one that has not started (a worker
// never spends time on work the tab no longer wants), and the worker's drain() is queued once at a time.
// Every worker uses it the same way:
//
//   void LabWorker::submit(quint64 generation, LabRequest request) {
//     mailbox_.post([&] { pending_.put(Pending{generation, std::move(request)}); });
//   }
//   void LabWorker::drain() {  // on the worker thread, queued by post()
//     std::optional<Pending> job;
//     while (mailbox_.next([&] { return (job = pending_.take()).has_value(); })) run(*job);
//   }
//
// The slots are guarded by the mailbox's lock: touch them only inside the functions given to post(), next()
// and locked(). drain() is queued by name (queueCall), so that ThreadSanitizer sees Qt write the call
// object (worker_thread.h).
#pragma once

#include "workbenches/common/worker_thread.h"

#include <QMutex>
#include <QMutexLocker>
#include <QObject>

#include <optional>
#include <utility>

namespace attn::ui {

// The newest request of one kind, not yet started.
template <typename T>
class Latest {
 public:
  void put(T value) { value_ = std::move(value); }
  // The request, leaving the slot empty; nullopt when there is none.
  std::optional<T> take() { return std::exchange(value_, std::nullopt); }
  bool has() const { return value_.has_value(); }

 private:
  std::optional<T> value_;
};

class Mailbox {
 public:
  // `worker` has a Q_INVOKABLE drain() and lives on its WorkerThread.
  explicit Mailbox(QObject* worker) : worker_(worker) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Runs `put` under the lock, then queues the worker's drain() unless one is queued that has not yet
  // found the mailbox empty (that one will take the new request).
  template <typename Put>
  void post(Put&& put) {
    QMutexLocker lock(&mutex_);
    std::forward<Put>(put)();
    if (drainQueued_) return;
    drainQueued_ = true;
    queueCall(worker_, "drain");
  }

  // For drain(): runs `take` under the lock. `take` moves the request to run next out of its slot and
  // returns true, or returns false when every slot is empty; the drain then ends (returns false) and the
  // next post() queues a new one.
  template <typename Take>
  bool next(Take&& take) {
    QMutexLocker lock(&mutex_);
    if (std::forward<Take>(take)()) return true;
    drainQueued_ = false;
    return false;
  }

  // Runs `f` under the lock without queueing anything (dropping a request that has not started).
  template <typename F>
  decltype(auto) locked(F&& f) {
    QMutexLocker lock(&mutex_);
    return std::forward<F>(f)();
  }

 private:
  QObject* worker_;
  QMutex mutex_;
  bool drainQueued_ = false;  // guarded by mutex_
};

}  // namespace attn::ui
