// MainWindow's memory: the session file (open, save, autosave, restore at start), the window's QSettings and
// the per-tab keys of versions before sessions.
#include "window/main_window.h"
#include "render/strings.h"

#include "window/status_line.h"
#include "attn/glimpse/settings.h"
#include "attn/lab/lab.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"

#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// The per-tab keys of versions before sessions (restoreLegacySettings reads them once).
const QStringList& legacyKeys() {
  static const QStringList keys{u"lab"_s, u"glimpse"_s, u"caption"_s, u"view/tab"_s};
  return keys;
}

QString& autosaveOverride() {
  static QString path;
  return path;
}

// A path as the engine opens it: the file system's own bytes.
}  // namespace

void MainWindow::restoreSettings() {
  QSettings settings;
  if (!restoreGeometry(settings.value(u"window/geometry"_s).toByteArray())) resize(1320, 860);
  restoreState(settings.value(u"window/state"_s).toByteArray());
  if (auto map = render::findColormap(settings.value(u"view/colormap"_s).toString())) {
    for (Workbench* workbench : std::as_const(workbenches_)) {
      if (workbench->takesColormap()) workbench->setColormap(*map);
    }
  }
  // The action's toggled signal shows or hides every tab's panel.
  sidePanelAction_->setChecked(settings.value(u"view/sidePanel"_s, true).toBool());
  // Every tab as it was left: the autosave of the last run. Without one (a first start, or the first start
  // after an upgrade) the per-tab keys of older versions, once.
  const QString autosavePath = autosaveFile();
  if (!pathExists(autosavePath)) {
    restoreLegacySettings();
    return;
  }
  auto session = attn::ui::load_session(toPath(autosavePath));
  if (!session) {
    // Set aside, not overwritten by the next autosave: it may be worth a look.
    const QString aside = autosavePath + u".bad"_s;
    QFile::remove(aside);
    QFile::rename(autosavePath, aside);
    glimpse_->openSample(GlimpseWorkbench::defaultSampleKey());
    messages_->show(nullptr,
                    tr("The last session could not be restored: %1. It was kept as %2; the tabs start with "
                       "their defaults.")
                        .arg(QString::fromStdString(session.error().message()), QDir::toNativeSeparators(aside)),
                    0);
    return;
  }
  const QStringList problems = applySession(*session, tr("The last session"));
  autosaved_ = std::move(*session);
  if (!problems.isEmpty()) messages_->show(nullptr, problems.join(u" \u00b7 "_s), 0);
}

void MainWindow::restoreLegacySettings() {
  QSettings settings;
  // The lab comes back as it was left: sentences and every parameter.
  const QString labJson = settings.value(u"lab/request"_s).toString();
  QString labProblem;
  if (!labJson.isEmpty()) {
    auto request = attn::lab::lab_request_from_json(labJson.toStdString(), "the saved lab settings");
    if (request) {
      lab_->setRequest(*request);
    } else {
      labProblem = tr("%1; the lab starts with its defaults").arg(QString::fromStdString(request.error().message()));
    }
  }
  // The glimpse tab: the image it showed (a file or a bundled sample) and its parameters. Pixel numbers
  // refer to that image, so they are applied only when that same image opens again.
  QString imagePath = settings.value(u"glimpse/image"_s).toString();
  const bool imageThere = !imagePath.isEmpty() && (imagePath.startsWith(u":/"_s) || pathExists(imagePath));
  const QString glimpseJson = settings.value(u"glimpse/settings"_s).toString();
  QString glimpseProblem;
  std::optional<attn::glimpse::GlimpseSettings> glimpseSettings;
  if (!glimpseJson.isEmpty()) {
    auto restored = attn::glimpse::glimpse_settings_from_json(glimpseJson.toStdString(), "the saved glimpse settings");
    if (restored) {
      glimpseSettings = *restored;
    } else {
      glimpseProblem =
          tr("%1; the glimpse tab starts with its defaults").arg(QString::fromStdString(restored.error().message()));
    }
  }
  if (imageThere && glimpseSettings) {
    glimpse_->openWithSettings(imagePath, *glimpseSettings);
  } else if (imageThere) {
    glimpse_->openFile(imagePath);
  } else {
    glimpse_->openSample(GlimpseWorkbench::defaultSampleKey());
  }
  // The Captioning tab's model, input and overlay settings, opened when the tab is first shown.
  caption_->restoreSettings(settings);
  // The tab that was in view when the window closed; the Alignment tab the first time.
  const QString tab = settings.value(u"view/tab"_s, u"alignment"_s).toString();
  if (tab == u"caption"_s) showCaption();
  if (tab == u"lab"_s) showLab();
  if (tab == u"glimpse"_s) showGlimpse();
  if (tab == u"transformer"_s) showTransformer();
  const QString problem = !labProblem.isEmpty() && !glimpseProblem.isEmpty()
                              ? labProblem + u" \u00b7 "_s + glimpseProblem
                              : labProblem + glimpseProblem;
  if (!problem.isEmpty()) messages_->show(nullptr, problem, 8000);
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(u"window/geometry"_s, saveGeometry());
  settings.setValue(u"window/state"_s, saveState());
  settings.setValue(u"view/colormap"_s, QString::fromLatin1(render::colormapInfo(lab_->colormap()).key));
  settings.setValue(u"view/sidePanel"_s, sidePanelAction_->isChecked());
  // The tabs themselves are in the session (autosave), not here.
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  closing_ = true;
  autosave();
  closing_ = false;
  event->accept();
}

// ---- sessions ----

bool MainWindow::isSessionFileName(const QString& path) {
  return path.endsWith(u".attnscope.json"_s, Qt::CaseInsensitive);
}

QString MainWindow::autosaveFile() {
  if (!autosaveOverride().isEmpty()) return autosaveOverride();
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(u"autosave.attnscope.json"_s);
}

void MainWindow::setAutosaveFile(const QString& path) { autosaveOverride() = path; }

attn::ui::Session MainWindow::session() const {
  attn::ui::Session s;
  for (const Workbench* workbench : workbenches_) workbench->saveTo(s);
  s.tab = currentWorkbench()->identity().tab;
  return s;
}

QStringList MainWindow::applySession(const attn::ui::Session& session, const QString& origin) {
  QStringList problems;
  for (const auto& warning : session.warnings) problems.append(QString::fromStdString(warning.message()));
  for (Workbench* workbench : std::as_const(workbenches_)) problems += workbench->restoreFrom(session, origin);
  {
    const QSignalBlocker block(unitRangeAction_);
    unitRangeAction_->setChecked(lab_->rangeMode() == render::RangeMode::Unit);
  }
  showTab(session.tab);
  return problems;
}

bool MainWindow::openSession(const QString& path) {
  auto session = attn::ui::load_session(toPath(path));
  if (!session) {
    reportSessionFailure(tr("Cannot open the session; nothing was changed"), session.error(), false);
    return false;
  }
  const QStringList problems = applySession(*session, fileNameOf(path));
  sessionFile_ = absolutePath(path);
  messages_->show(nullptr,
                  problems.isEmpty() ? tr("Opened the session %1").arg(QDir::toNativeSeparators(path))
                                     : problems.join(u" \u00b7 "_s),
                  problems.isEmpty() ? 6000 : 0);
  return true;
}

bool MainWindow::saveSession(const QString& path) {
  const auto written = attn::ui::save_session(toPath(path), session());
  if (!written) {
    reportSessionFailure(tr("The session was not saved"), written.error(), false);
    return false;
  }
  sessionFile_ = absolutePath(path);
  messages_->show(nullptr, tr("Saved the session to %1").arg(QDir::toNativeSeparators(path)), 6000);
  return true;
}

bool MainWindow::autosave(bool always) {
  attn::ui::Session now = session();
  if (!always && autosaved_ && *autosaved_ == now && pathExists(autosaveFile())) return true;
  const QString path = autosaveFile();
  QDir().mkpath(QFileInfo(path).absolutePath());
  const auto written = attn::ui::save_session(toPath(path), now);
  if (!written) {
    // The message box once per run of failures (a box every two minutes would be worse than the problem);
    // the status bar every time. On quit the box waits, so the message is read before the window goes.
    const bool quitting = closing_;
    if (!autosaveFailed_ || quitting) {
      reportSessionFailure(tr("The autosave failed"), written.error(), quitting);
    } else {
      messages_->show(nullptr, tr("The autosave failed: %1").arg(QString::fromStdString(written.error().message())), 0);
    }
    autosaveFailed_ = true;
    return false;
  }
  autosaveFailed_ = false;
  autosaved_ = std::move(now);
  // The tabs' state now lives in the session: the keys of older versions have been read for the last time.
  QSettings settings;
  for (const QString& key : legacyKeys()) settings.remove(key);
  return true;
}

void MainWindow::reportSessionFailure(const QString& what, const attn::Error& error, bool blocking) {
  const QString message = QString::fromStdString(error.message());
  messages_->show(nullptr, tr("%1: %2").arg(what, message), 0);
  auto* box = new QMessageBox(QMessageBox::Warning, tr("AttnScope"), what + u'.', QMessageBox::Ok, this);
  box->setObjectName(u"sessionMessage"_s);
  box->setInformativeText(message);
  box->setAttribute(Qt::WA_DeleteOnClose);
  if (blocking) {
    box->exec();
  } else {
    box->open();
  }
}

void MainWindow::openSessionDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/session"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
          .toString();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Session"), dir,
                                                    tr("AttnScope sessions (*.attnscope.json);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/session"_s, QFileInfo(path).absolutePath());
  openSession(path);
}

void MainWindow::saveSessionToCurrent() {
  if (sessionFile_.isEmpty()) {
    saveSessionAsDialog();
  } else {
    saveSession(sessionFile_);
  }
}

void MainWindow::saveSessionAsDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/session"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
          .toString();
  const QString suggested = sessionFile_.isEmpty() ? QDir(dir).filePath(u"session.attnscope.json"_s) : sessionFile_;
  QString path =
      QFileDialog::getSaveFileName(this, tr("Save Session As"), suggested, tr("AttnScope sessions (*.attnscope.json)"));
  if (path.isEmpty()) return;
  if (!isSessionFileName(path)) {
    if (path.endsWith(u".json"_s, Qt::CaseInsensitive)) path.chop(5);
    path += u".attnscope.json"_s;
  }
  settings.setValue(u"paths/session"_s, QFileInfo(path).absolutePath());
  saveSession(path);
}

}  // namespace attn::ui
