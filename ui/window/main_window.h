// The main window: one tab per workbench (the Alignment tab first, where a new user lands on a bundled date model's
// alignment; the Captioning tab, the Mechanism Lab, the Glimpse workbench and the Transformer tab), File / View / Help
// menus (Help: the keyboard shortcuts, a glossary, about), a status bar with the current tab's last run, drag-and-drop
// and `attnscope PATH` through openPath (image files go to the Captioning tab when it is in view and to the Glimpse tab
// otherwise, AttnScope seq2seq and classifier folders to the Alignment tab, captioner folders to the Captioning tab,
// other model folders and *.attn.safetensors dumps to the Transformer tab, sessions restored, anything else to the
// lab), and geometry and the workbenches' parameters kept in QSettings.
// The session (every tab's state: attn::ui::Session) is the window's memory: File > Open Session… (Ctrl+O on a
// *.attnscope.json, or a drop), Save Session (Ctrl+S) and Save Session As… (Ctrl+Shift+S), an autosave every
// two minutes when something changed and on quit into autosaveFile(), restored at start. QSettings keeps only
// the window's geometry, the recent files and the dialogs' folders (and, once, the per-tab keys of versions
// before sessions, read when there is no autosave yet).
// Recent files are three lists: text files for the lab ("recentFiles"), images for the Glimpse tab
// ("recentImages") and model folders or dumps for the Transformer tab ("recentModels"), each in its own
// submenu, because they open into different tabs.
#pragma once

#include "attn/error.h"
#include "session/session.h"

#include <QList>
#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include <optional>

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QTabWidget;

namespace attn::ui {

class AlignmentWorkbench;
class CaptionWorkbench;
class CorpusWorkbench;
class GlimpseWorkbench;
class LabWorkbench;
class RecentList;
class TabMessages;
class TransformerWorkbench;
class Workbench;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // ---- the tabs ----
  // Every workbench, in the order of the tabs. Whatever all tabs share (status messages, the run label,
  // the session, exports, the View menu) goes through this list.
  const QList<Workbench*>& workbenches() const { return workbenches_; }
  Workbench* workbench(attn::ui::SessionTab tab) const;
  Workbench* currentWorkbench() const;
  void showTab(attn::ui::SessionTab tab);
  AlignmentWorkbench* alignment() const { return alignment_; }
  CaptionWorkbench* caption() const { return caption_; }
  LabWorkbench* lab() const { return lab_; }
  GlimpseWorkbench* glimpse() const { return glimpse_; }
  TransformerWorkbench* transformer() const { return transformer_; }
  CorpusWorkbench* corpus() const { return corpus_; }
  QTabWidget* tabs() const { return tabs_; }
  void showAlignment() { showTab(attn::ui::SessionTab::Alignment); }
  void showCaption() { showTab(attn::ui::SessionTab::Caption); }
  void showGlimpse() { showTab(attn::ui::SessionTab::Glimpse); }
  void showLab() { showTab(attn::ui::SessionTab::Lab); }
  void showTransformer() { showTab(attn::ui::SessionTab::Transformer); }
  void showCorpus() { showTab(attn::ui::SessionTab::Corpus); }
  QLabel* runLabel() const { return runLabel_; }

  // ---- opening ----
  // The one way from a path to the tab that opens it, taken by a drop, by `attnscope PATH` and so by a desktop's
  // "Open with" and a double-click: a session (*.attnscope.json) is restored; a folder, a *.safetensors file (its
  // folder; a *.attn.safetensors dump), a GGUF or a pickled checkpoint go to openModel (the tab its config.json
  // names; the Transformer tab says why it reads no GGUF or pickle); a corpus database to openCorpus; an image to
  // openImage; anything else to
  // openFile (the lab). False, with the reason on the status bar, when it failed at once (no such file, not
  // readable); a model or an image that fails later says so in its tab.
  bool openPath(const QString& path);
  // Opens a corpus database (*.sqlite, *.sqlite3, *.db, written by attnscope-cli corpus) into the Corpus tab; a file
  // that is not one is refused there, saying why. False when the file does not exist.
  bool openCorpus(const QString& path);
  // Opens a text file into the lab (first non-empty line = query, the rest = source).
  bool openFile(const QString& path);
  QStringList recentFiles() const;
  // Opens an image into the Captioning tab when it is in view, else into the Glimpse tab (asynchronous: the
  // tab reports success or the reason it failed and keeps its previous image). False when the file does not
  // exist.
  bool openImage(const QString& path);
  QStringList recentImages() const;
  // Opens a model folder or an attention dump (asynchronous: the tab reports success, or the file and the
  // reason it failed while the previous model stays): a folder whose config.json names AttnScopeSeq2Seq,
  // AttnScopeClassifier or AttnScopeEntailment into the Alignment tab, AttnScopeCaptioner into the Captioning tab,
  // anything else into the Transformer tab (a folder without a readable config goes to the Alignment or the Captioning
  // tab when that is the tab in view, so its error shows where the user is). False when the path does not
  // exist.
  // "bundled:<key>" (a recent entry) opens the bundled model `key` as openBundledModel does.
  bool openModel(const QString& path);
  // A bundled model by its key, in its tab: the Transformer tab's demos (induction-gpt2, stories260k), the
  // Alignment tab's and the Captioning tab's models. False, said on the status bar, for a key this build lacks.
  bool openBundledModel(const QString& key);
  // Model folders and dumps, newest first; a bundled model as "bundled:<key>" (RecentList::bundledEntry).
  QStringList recentModels() const;

  // ---- exports, each reporting on the status bar ----
  // File > Export View and Export Matrix of the tab in view, by the file's extension: .png/.svg/.pdf the
  // view, .csv/.npy its matrix (the Glimpse tab: .json its parameters).
  bool exportTo(const QString& path);
  bool exportGlimpse(const QString& path);
  bool exportAnnotated(const QString& path);
  bool exportGlimpseParameters(const QString& path);
  // Every head of the Transformer tab's current layer as PNG + CSV into `folder`.
  bool exportTransformerLayer(const QString& folder);
  // The Captioning tab's exports: the grid (.png/.svg/.pdf) and the word in view (.png).
  bool exportCaptionGrid(const QString& path);
  bool exportCaptionOverlay(const QString& path);

  // ---- sessions (main_window_session.cpp) ----
  static constexpr int kAutosaveMs = 2 * 60 * 1000;
  static bool isSessionFileName(const QString& path);  // *.attnscope.json
  // <AppDataLocation>/autosave.attnscope.json, unless setAutosaveFile chose another (tests keep theirs apart).
  static QString autosaveFile();
  static void setAutosaveFile(const QString& path);
  // Every tab's state now, and the tab in view.
  attn::ui::Session session() const;
  // Sets every tab from `session`. A section that is absent, or names a file that no longer exists, leaves
  // that tab (or that file's part of it) at its defaults. Returns what the status bar should say: the
  // reader's warnings and each missing file, named with `origin`; empty when all is well.
  QStringList applySession(const attn::ui::Session& session, const QString& origin);
  // Reads `path` and applies it; a file that cannot be read opens nothing, keeps what is open and says why
  // (the file, the byte, the reason) on the status bar and in a message box.
  bool openSession(const QString& path);
  // Writes session() to `path` atomically; a failure is reported on the status bar and in a message box.
  bool saveSession(const QString& path);
  // The file Save Session writes (the last one opened or saved), empty before there is one.
  QString sessionFile() const { return sessionFile_; }
  // Writes the autosave when the session differs from the one last autosaved (or `always`). False when the
  // write failed (reported as saveSession's failures are).
  bool autosave(bool always = false);
  QTimer* autosaveTimer() { return &autosaveTimer_; }

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void addWorkbench(Workbench* workbench);
  void connectWorkbenches();
  void createActions();
  void createSessionActions();
  void createViewActions();
  void createMenus();
  void restoreSettings();
  // The per-tab QSettings keys of versions before sessions, read once when there is no autosave yet.
  void restoreLegacySettings();
  void saveSettings() const;
  void openSessionDialog();
  void saveSessionToCurrent();
  void saveSessionAsDialog();
  // Status bar and a message box: a session that was not saved is never silent.
  void reportSessionFailure(const QString& what, const attn::Error& error, bool blocking);
  // "<path> no longer exists; removed it from the recent <what>" or "<path> does not exist".
  void reportMissing(RecentList* list, const QString& path, const QString& what);
  void openDialog();
  void openImageDialog();
  void openModelDialog();
  void openDumpDialog();
  void openGgufDialog();
  void exportViewDialog();
  void exportCsvDialog();
  void exportLayerDialog();
  void exportGlimpseDialog();
  void exportAnnotatedDialog();
  void exportGlimpseParametersDialog();
  void exportCaptionOverlayDialog();
  // Reports an export's outcome on the status bar.
  bool reportExport(const attn::Result<void>& written, const QString& path);
  void updateForTab();
  void showAbout();
  void showShortcuts();  // Help > Keyboard Shortcuts (window/help_dialogs.h)
  void showGlossary();   // Help > Glossary
  void toggleFullScreen(bool on);

  QTabWidget* tabs_ = nullptr;
  QList<Workbench*> workbenches_;
  AlignmentWorkbench* alignment_ = nullptr;
  CaptionWorkbench* caption_ = nullptr;
  LabWorkbench* lab_ = nullptr;
  GlimpseWorkbench* glimpse_ = nullptr;
  TransformerWorkbench* transformer_ = nullptr;
  CorpusWorkbench* corpus_ = nullptr;
  QLabel* runLabel_ = nullptr;
  TabMessages* messages_ = nullptr;  // the status line: each tab's own message

  RecentList* recentFiles_ = nullptr;
  RecentList* recentImages_ = nullptr;
  RecentList* recentModels_ = nullptr;
  QAction* openAction_ = nullptr;
  QAction* openImageAction_ = nullptr;
  QAction* openModelAction_ = nullptr;
  QAction* openDumpAction_ = nullptr;
  QAction* openGgufAction_ = nullptr;
  QAction* exportAction_ = nullptr;
  QAction* exportCsvAction_ = nullptr;
  QAction* exportLayerAction_ = nullptr;
  QAction* exportGlimpseAction_ = nullptr;
  QAction* exportAnnotatedAction_ = nullptr;
  QAction* exportParametersAction_ = nullptr;
  QAction* openSessionAction_ = nullptr;
  QAction* saveSessionAction_ = nullptr;
  QAction* saveSessionAsAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QAction* fullScreenAction_ = nullptr;
  QAction* sidePanelAction_ = nullptr;
  QAction* unitRangeAction_ = nullptr;
  QActionGroup* colormapGroup_ = nullptr;
  QAction* shortcutsAction_ = nullptr;
  QAction* glossaryAction_ = nullptr;
  QAction* aboutAction_ = nullptr;
  QAction* aboutQtAction_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* recentImagesMenu_ = nullptr;
  QMenu* recentModelsMenu_ = nullptr;

  QString sessionFile_;
  QTimer autosaveTimer_;
  std::optional<attn::ui::Session> autosaved_;  // what the autosave file holds, as last written or read
  bool autosaveFailed_ = false;                 // the last autosave failed (its message box was shown)
  bool closing_ = false;                        // in closeEvent: a failed autosave's message box waits
};

}  // namespace attn::ui
