// BusyRow: the row a tab shows over its views while a piece of work takes longer than a moment. It says what is
// running, fills a progress bar where the work reports steps (and then says about how long is left) or shows a busy
// bar with the time so far where it cannot, and offers Cancel (also Esc anywhere in the tab). Every tab with work
// that can be long uses it the same way:
//
//   busyRow_ = new BusyRow(area, this);                 // Esc works within `this`
//   connect(busyRow_, &BusyRow::cancelRequested, this, &MyTab::cancelRun);
//   busyRow_->start(tr("Running\u2026"));               // a request went out: the row shows if it is still out
//   busyRow_->setProgress(3, 8, tr("3 of 8 steps"));    // from the worker's progress signal, where there is one
//   busyRow_->stop();                                   // the result (or the cancel) came back
//
// Short work never flashes the row: it shows only after the delay (400 ms; tests set 0).
#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QShortcut;

namespace attn::ui {

class BusyRow final : public QWidget {
  Q_OBJECT

 public:
  // `escScope`: the widget within which Esc cancels (the tab); null for the row's parent.
  explicit BusyRow(QWidget* parent, QWidget* escScope = nullptr);

  // Work went out: the bar turns busy, the text says `what`, Cancel is enabled, and the row shows after the delay.
  // While work is already out it keeps its progress and only the text changes if nothing was reported yet.
  void start(const QString& what);
  // Steps done of all: the bar fills and the text says `what` and, once a step is done, about how long is left
  // (from the time since start()).
  void setProgress(int done, int of, const QString& what);
  // Cancel was asked for: "Cancelling..." until stop().
  void markCancelling();
  // The work is over (done, failed or cancelled): the row goes.
  void stop();

  bool isRunning() const { return running_; }
  bool isShown() const;  // visible to its tab (the delay has passed)
  void setDelay(int ms) { delayMs_ = ms; }
  double elapsedSeconds() const;

  QProgressBar* bar() const { return bar_; }
  QLabel* label() const { return label_; }
  QPushButton* cancelButton() const { return cancel_; }

  // "45 s", "3 min 20 s": a time, rounded up to what a reader needs.
  static QString durationText(double seconds);

 signals:
  void cancelRequested();  // Cancel or Esc while work is out
  void shown();            // the delay passed with the work still out

 private:
  void reveal();
  void refreshText();

  QProgressBar* bar_ = nullptr;
  QLabel* label_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QShortcut* escape_ = nullptr;
  QTimer delay_;
  QTimer tick_;  // the time so far, once a second
  QElapsedTimer clock_;
  QString what_;
  int done_ = -1;  // steps done, or -1 while no step was reported
  int of_ = 0;
  int delayMs_ = 400;
  bool running_ = false;
  bool cancelling_ = false;
};

}  // namespace attn::ui
