// The main window: one tab per workbench (the Mechanism Lab for now), File / View / Help menus, a status
// bar with the last run, drag-and-drop of text files, and geometry kept in QSettings.
#pragma once

#include <QMainWindow>
#include <QStringList>

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QTabWidget;

namespace attn::ui {

class LabWorkbench;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  LabWorkbench* lab() const { return lab_; }
  QLabel* runLabel() const { return runLabel_; }

  // Opens a text file into the lab (first non-empty line = query, the rest = source).
  bool openFile(const QString& path);
  // Writes the current view (.png/.svg/.pdf) or its matrix (.csv); reports on the status bar.
  bool exportTo(const QString& path);
  QStringList recentFiles() const;

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
  void openDialog();
  void exportViewDialog();
  void exportCsvDialog();
  void showAbout();
  void toggleFullScreen(bool on);

  QTabWidget* tabs_ = nullptr;
  LabWorkbench* lab_ = nullptr;
  QLabel* runLabel_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QAction* openAction_ = nullptr;
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
