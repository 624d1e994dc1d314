// The main window: one tab per workbench (the Alignment tab first, where a new user lands on a bundled date
// model's alignment; the Captioning tab, the Mechanism Lab, the Glimpse workbench and the Transformer tab),
// File / View / Help menus, a status bar with the current tab's last run, drag-and-drop (image files go to
// the Captioning tab when it is in view and to the Glimpse tab otherwise, AttnScope seq2seq and classifier
// folders to the Alignment tab, captioner folders to the Captioning tab, other model folders and
// *.attn.safetensors dumps to the Transformer tab, anything else to the lab), and geometry and the
// workbenches' parameters kept in QSettings.
// Recent files are three lists: text files for the lab ("recentFiles"), images for the Glimpse tab
// ("recentImages") and model folders or dumps for the Transformer tab ("recentModels"), each in its own
// submenu, because they open into different tabs.
#pragma once

#include "attn/error.h"

#include <QMainWindow>
#include <QStringList>

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QTabWidget;

namespace attn::ui {

class AlignmentWorkbench;
class CaptionWorkbench;
class GlimpseWorkbench;
class LabWorkbench;
class TransformerWorkbench;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  AlignmentWorkbench* alignment() const { return alignment_; }
  CaptionWorkbench* caption() const { return caption_; }
  LabWorkbench* lab() const { return lab_; }
  GlimpseWorkbench* glimpse() const { return glimpse_; }
  TransformerWorkbench* transformer() const { return transformer_; }
  QTabWidget* tabs() const { return tabs_; }
  void showAlignment();
  void showCaption();
  void showGlimpse();
  void showLab();
  void showTransformer();
  QLabel* runLabel() const { return runLabel_; }

  // Opens a text file into the lab (first non-empty line = query, the rest = source).
  bool openFile(const QString& path);
  // Writes the current view (.png/.svg/.pdf) or its matrix (.csv); reports on the status bar.
  // In the Glimpse tab: the annotated image (.png/.svg/.pdf) or the parameters (.json).
  bool exportTo(const QString& path);
  QStringList recentFiles() const;
  // Opens an image into the Captioning tab when it is in view, else into the Glimpse tab (asynchronous: the
  // tab reports success or the reason it failed and keeps its previous image). False when the file does not
  // exist.
  bool openImage(const QString& path);
  QStringList recentImages() const;
  // The Glimpse tab's exports, each reporting on the status bar.
  bool exportGlimpse(const QString& path);
  bool exportAnnotated(const QString& path);
  bool exportGlimpseParameters(const QString& path);
  // Opens a model folder or an attention dump (asynchronous: the tab reports success, or the file and the
  // reason it failed while the previous model stays): a folder whose config.json names AttnScopeSeq2Seq or
  // AttnScopeClassifier into the Alignment tab, AttnScopeCaptioner into the Captioning tab, anything else
  // into the Transformer tab (a folder without a
  // readable config goes to the Alignment tab when that is the tab in view, so its error shows where the
  // user is). False when the path does not exist.
  bool openModel(const QString& path);
  QStringList recentModels() const;
  // Every head of the Transformer tab's current layer as PNG + CSV into `folder`.
  bool exportTransformerLayer(const QString& folder);
  // The Captioning tab's exports: the grid (.png/.svg/.pdf) and the word in view (.png).
  bool exportCaptionGrid(const QString& path);
  bool exportCaptionOverlay(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createActions();
  void createMenus();
  void restoreSettings();
  void saveSettings() const;
  void addRecentFile(const QString& path);
  void setRecentFiles(const QStringList& files);
  void rebuildRecentMenu();
  void addRecentImage(const QString& path);
  void setRecentImages(const QStringList& files);
  void rebuildRecentImagesMenu();
  void addRecentModel(const QString& path);
  void setRecentModels(const QStringList& paths);
  void rebuildRecentModelsMenu();
  void openModelDialog();
  void openDumpDialog();
  void exportLayerDialog();
  void exportCaptionGridDialog();
  void exportCaptionOverlayDialog();
  // Reports an export's outcome on the status bar.
  bool reportExport(const attn::Result<void>& written, const QString& path);
  void openDialog();
  void openImageDialog();
  void exportGlimpseDialog();
  void exportAnnotatedDialog();
  void exportGlimpseParametersDialog();
  void updateForTab();
  // The first status message for a tab ("type a date ..."), empty for tabs that have none.
  QString greeting(const QWidget* tab) const;
  void exportViewDialog();
  void exportCsvDialog();
  void showAbout();
  void toggleFullScreen(bool on);

  QTabWidget* tabs_ = nullptr;
  AlignmentWorkbench* alignment_ = nullptr;
  QString alignmentSummary_;
  CaptionWorkbench* caption_ = nullptr;
  QString captionSummary_;
  LabWorkbench* lab_ = nullptr;
  GlimpseWorkbench* glimpse_ = nullptr;
  TransformerWorkbench* transformer_ = nullptr;
  QLabel* runLabel_ = nullptr;
  QString transformerSummary_;
  QMenu* recentModelsMenu_ = nullptr;
  QAction* openModelAction_ = nullptr;
  QAction* openDumpAction_ = nullptr;
  QAction* exportLayerAction_ = nullptr;
  QString labSummary_;
  QString glimpseSummary_;
  QMenu* recentMenu_ = nullptr;
  QMenu* recentImagesMenu_ = nullptr;
  QAction* openAction_ = nullptr;
  QAction* openImageAction_ = nullptr;
  QAction* exportGlimpseAction_ = nullptr;
  QAction* exportAnnotatedAction_ = nullptr;
  QAction* exportParametersAction_ = nullptr;
  QAction* exportAction_ = nullptr;
  QAction* exportCsvAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QAction* fullScreenAction_ = nullptr;
  QAction* sidePanelAction_ = nullptr;
  QAction* unitRangeAction_ = nullptr;
  QActionGroup* colormapGroup_ = nullptr;
  QAction* aboutAction_ = nullptr;
  QAction* aboutQtAction_ = nullptr;
};

}  // namespace attn::ui
