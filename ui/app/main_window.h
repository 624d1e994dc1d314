// The main window: one tab per workbench (the Mechanism Lab and the Glimpse workbench), File / View / Help
// menus, a status bar with the current tab's last run, drag-and-drop (image files go to the Glimpse tab,
// anything else to the lab), and geometry and both workbenches' parameters kept in QSettings.
// Recent files are two lists: text files for the lab ("recentFiles") and images for the Glimpse tab
// ("recentImages"), each in its own submenu, because the two open into different tabs.
#pragma once

#include <QMainWindow>
#include <QStringList>

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QTabWidget;

namespace attn::ui {

class GlimpseWorkbench;
class LabWorkbench;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  LabWorkbench* lab() const { return lab_; }
  GlimpseWorkbench* glimpse() const { return glimpse_; }
  QTabWidget* tabs() const { return tabs_; }
  void showGlimpse();
  void showLab();
  QLabel* runLabel() const { return runLabel_; }

  // Opens a text file into the lab (first non-empty line = query, the rest = source).
  bool openFile(const QString& path);
  // Writes the current view (.png/.svg/.pdf) or its matrix (.csv); reports on the status bar.
  // In the Glimpse tab: the annotated image (.png/.svg/.pdf) or the parameters (.json).
  bool exportTo(const QString& path);
  QStringList recentFiles() const;
  // Opens an image into the Glimpse tab (asynchronous: the tab reports success or the reason it failed
  // and keeps its previous image). False when the file does not exist.
  bool openImage(const QString& path);
  QStringList recentImages() const;
  // The Glimpse tab's exports, each reporting on the status bar.
  bool exportGlimpse(const QString& path);
  bool exportAnnotated(const QString& path);
  bool exportGlimpseParameters(const QString& path);

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
  void openDialog();
  void openImageDialog();
  void exportGlimpseDialog();
  void exportAnnotatedDialog();
  void exportGlimpseParametersDialog();
  void updateForTab();
  void exportViewDialog();
  void exportCsvDialog();
  void showAbout();
  void toggleFullScreen(bool on);

  QTabWidget* tabs_ = nullptr;
  LabWorkbench* lab_ = nullptr;
  GlimpseWorkbench* glimpse_ = nullptr;
  QLabel* runLabel_ = nullptr;
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
