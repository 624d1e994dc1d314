// The main window's status line. Every message belongs to a tab: it shows while that tab is in view and
// comes back, with what is left of its time, when the tab is shown again, so one tab's error never sits
// under another tab. The text is drawn by a label that elides a long message at a word's end (the whole
// text is its tooltip) and never runs into the permanent labels to its right.
#pragma once

#include <QDeadlineTimer>
#include <QHash>
#include <QLabel>
#include <QObject>
#include <QPointer>
#include <QString>

class QStatusBar;
class QTabWidget;

namespace attn::ui {

// A one-line label showing as much of its text as fits, cut at a word boundary with "…"; the tooltip has
// the whole text when it is cut.
class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(QWidget* parent = nullptr);
  void setFullText(const QString& text);
  const QString& fullText() const { return full_; }
  bool isElided() const { return elided_; }
  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void relayout();
  QString full_;
  bool elided_ = false;
};

class TabMessages : public QObject {
 public:
  // Adds the status line to `bar` as its first permanent widget (add the others after it).
  TabMessages(QStatusBar* bar, QTabWidget* tabs);

  // `text` for `tab` (nullptr: the tab in view) for `timeoutMs` (0: until replaced or cleared).
  void show(QWidget* tab, const QString& text, int timeoutMs);
  void clear(QWidget* tab);
  // The message `tab` would show now (empty when none or expired).
  QString messageOf(QWidget* tab) const;
  // Call when the tab in view changed: its own message, or none.
  void showTab(QWidget* tab);
  ElidedLabel* line() const { return line_; }

 private:
  struct Entry {
    QString text;
    QDeadlineTimer deadline;  // forever for sticky messages
  };
  QStatusBar* bar_;
  QTabWidget* tabs_;
  ElidedLabel* line_;
  QHash<const QWidget*, Entry> entries_;
};

}  // namespace attn::ui
