// What every tab of the main window is: a Workbench. It owns what the five tabs used to repeat:
//   - the generation counter: every request a tab posts to its worker gets the next number (submitted());
//     shown() is the newest result on screen, settled() the newest request shown or refused;
//   - the apply timer: a worker's result is kept as pending and drawn from this single-shot timer, so a burst
//     of results costs one repaint (applyPending());
//   - the run summary of the status bar's right-hand label and the tab's last error;
//   - the shared signals (statusMessage, runSummaryChanged, resultShown, failed), which MainWindow connects
//     once for the list of tabs;
//   - the tab's section of the session file (saveTo, restoreFrom);
//   - File > Export View and Export Matrix, told apart by the file's extension (exportCurrentView,
//     exportMatrix), and the view commands of the View menu (side panel, colour map).
// MainWindow, the session code and `attnscope --screenshot` treat tabs as a list of Workbench*.
#pragma once

#include "attn/error.h"
#include "session/session.h"
#include "render/colormap.h"

#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

namespace attn::ui {

class Workbench : public QWidget {
  Q_OBJECT

 public:
  // The tab's identity in the window, the session file and on the command line.
  struct Identity {
    attn::ui::SessionTab tab = attn::ui::SessionTab::Alignment;
    QString title;           // the tab's label, with its mnemonic ("&Alignment")
    QString toolTip;         // the tab's tool tip
    QString greeting;        // the first status message on the tab, empty for none
    QString summaryToolTip;  // what the run label on the status bar says
  };

  // `applyIntervalMs`: how long a result waits on the apply timer (0: the next event loop turn).
  Workbench(Identity identity, int applyIntervalMs, QWidget* parent);
  ~Workbench() override;

  const Identity& identity() const { return identity_; }
  // "alignment", "caption", "lab", "glimpse", "transformer" (--tab, the session file).
  QString key() const;

  // ---- generations ----
  quint64 submitted() const { return submitted_; }
  quint64 shown() const { return shown_; }
  quint64 settled() const { return settled_; }
  // A model or an input is opening.
  virtual bool isLoading() const { return false; }
  // Nothing loading, running or waiting to be shown.
  virtual bool isIdle() const;
  // Result `generation`, just shown, is the newest request's, with nothing opening after it: what a
  // screenshot waits for.
  virtual bool showsNewest(quint64 generation) const { return !isLoading() && generation == submitted_; }
  QString runSummary() const { return runSummary_; }
  QString lastError() const { return lastError_; }

  // ---- the session file ----
  // Writes this tab's section into `session`.
  virtual void saveTo(attn::ui::Session& session) const = 0;
  // Sets the tab from its section of `session` (its defaults when the section is absent). A file the section
  // names that is gone is not opened; the tab falls back and says so in the returned notes, which name
  // `origin` (the session file).
  virtual QStringList restoreFrom(const attn::ui::Session& session, const QString& origin) = 0;

  // ---- File > Export, by the file's extension ----
  // The view in sight (.png/.svg/.pdf; the Glimpse tab also .json, its parameters).
  virtual attn::Result<void> exportCurrentView(const QString& path) const = 0;
  // The map in view as .csv or .npy; tabs without one refuse and say why.
  virtual attn::Result<void> exportMatrix(const QString& path) const;
  virtual bool hasMatrix() const { return true; }
  // File > Export View on this tab: the menu's label, the file name the dialog suggests, its filters.
  virtual QString exportViewLabel() const { return tr("&Export View\u2026"); }
  virtual QString exportViewName() const { return QStringLiteral("attention.png"); }
  virtual QString exportViewFilters() const;

  // ---- the View menu ----
  virtual void setSidePanelVisible(bool visible) = 0;
  virtual bool isSidePanelVisible() const = 0;
  // Tabs whose maps take a colour map follow View > Colour Map.
  virtual bool takesColormap() const { return false; }
  virtual void setColormap(render::Colormap) {}

 signals:
  void statusMessage(const QString& text, int timeoutMs);
  void runSummaryChanged(const QString& summary);
  void resultShown(quint64 generation);
  // A model or an input the user asked for could not open (the tab keeps what it had).
  void failed(const QString& message);

 protected:
  // The newest pending result, drawn from the apply timer.
  virtual void applyPending() = 0;
  // Starts the apply timer unless it is running.
  void scheduleApply();
  void stopApply() { applyTimer_.stop(); }
  bool isApplyScheduled() const { return applyTimer_.isActive(); }
  // Stores the run label's text and tells the window.
  void setRunSummary(const QString& summary);
  // "<origin>: <file> no longer exists; <tab> falls back to its default".
  static QString goneNote(const QString& origin, const QString& file, const QString& what);

  quint64 submitted_ = 0;
  quint64 shown_ = 0;
  quint64 settled_ = 0;
  QString lastError_;

 private:
  Identity identity_;
  QTimer applyTimer_;
  QString runSummary_;
};

}  // namespace attn::ui
