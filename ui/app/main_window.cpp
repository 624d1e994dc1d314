#include "app/main_window.h"

#include "app/about_dialog.h"
#include "app/export.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/lab_workbench.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

constexpr qint64 kMaxTextFileBytes = 16 * 1024 * 1024;

QString keyRecentFiles() { return u"recentFiles"_s; }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(u"mainWindow"_s);
  setWindowTitle(tr("AttnScope"));
  setWindowIcon(QIcon(u":/attnscope/icons/attnscope.svg"_s));
  setAcceptDrops(true);

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  lab_ = new LabWorkbench(tabs_);
  tabs_->addTab(lab_, tr("Mechanism &Lab"));
  tabs_->setTabToolTip(0, tr("Run any attention mechanism on two sentences"));
  setCentralWidget(tabs_);

  runLabel_ = new QLabel(this);
  runLabel_->setObjectName(u"runLabel"_s);
  runLabel_->setToolTip(tr("Last run: mechanism, map shape and engine time"));
  statusBar()->addPermanentWidget(runLabel_);
  connect(lab_, &LabWorkbench::statusMessage, statusBar(), &QStatusBar::showMessage);
  connect(lab_, &LabWorkbench::runSummaryChanged, runLabel_, &QLabel::setText);
  connect(lab_, &LabWorkbench::resultShown, this, [this] {
    // A good result replaces a refusal that is still on the status bar.
    if (lab_->lastError().isEmpty() && statusBar()->currentMessage().startsWith(tr("Input refused"))) {
      statusBar()->clearMessage();
    }
  });

  createActions();
  createMenus();
  lab_->queryEdit()->setFocus();  // the first thing to do is usually to type
  statusBar()->showMessage(tr("Edit the sentences or the parameters: the map follows every change"), 6000);
  restoreSettings();  // after the greeting, so that a problem with the saved settings is what shows
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions() {
  openAction_ = new QAction(QIcon::fromTheme(u"document-open"_s), tr("&Open Text\u2026"), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setStatusTip(tr("Open a .txt file into the lab: first non-empty line = query, the rest = source"));
  connect(openAction_, &QAction::triggered, this, &MainWindow::openDialog);

  exportAction_ = new QAction(QIcon::fromTheme(u"document-save-as"_s), tr("&Export View\u2026"), this);
  exportAction_->setShortcut(QKeySequence::Save);
  exportAction_->setStatusTip(tr("Save the heatmap as PNG, SVG or PDF, or its matrix as CSV"));
  connect(exportAction_, &QAction::triggered, this, &MainWindow::exportViewDialog);

  exportCsvAction_ = new QAction(tr("Export &Matrix as CSV\u2026"), this);
  exportCsvAction_->setShortcut(QKeySequence::SaveAs);
  exportCsvAction_->setStatusTip(tr("Save the shown map's weights with its tokens as CSV"));
  connect(exportCsvAction_, &QAction::triggered, this, &MainWindow::exportCsvDialog);

  quitAction_ = new QAction(QIcon::fromTheme(u"application-exit"_s), tr("&Quit"), this);
  // Some platforms (Windows, bare X11) define no Quit key; Ctrl+Q is what users of those expect.
  quitAction_->setShortcuts(QKeySequence::keyBindings(QKeySequence::Quit).isEmpty()
                                ? QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_Q)}
                                : QKeySequence::keyBindings(QKeySequence::Quit));
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);

  fullScreenAction_ = new QAction(tr("&Full Screen"), this);
  fullScreenAction_->setShortcuts(QKeySequence::keyBindings(QKeySequence::FullScreen).isEmpty()
                                      ? QList<QKeySequence>{QKeySequence(Qt::Key_F11)}
                                      : QKeySequence::keyBindings(QKeySequence::FullScreen));
  fullScreenAction_->setCheckable(true);
  connect(fullScreenAction_, &QAction::toggled, this, &MainWindow::toggleFullScreen);

  sidePanelAction_ = new QAction(tr("&Parameters Panel"), this);
  sidePanelAction_->setShortcut(QKeySequence(Qt::Key_F9));
  sidePanelAction_->setCheckable(true);
  sidePanelAction_->setChecked(true);
  sidePanelAction_->setStatusTip(tr("Show or hide the mechanism and parameter panel"));
  connect(sidePanelAction_, &QAction::toggled, lab_, &LabWorkbench::setSidePanelVisible);

  unitRangeAction_ = new QAction(tr("Fixed Colour &Range 0\u20131"), this);
  unitRangeAction_->setCheckable(true);
  unitRangeAction_->setStatusTip(tr("Colour weights on the absolute 0\u20131 scale"));
  connect(unitRangeAction_, &QAction::toggled, lab_,
          [this](bool on) { lab_->setRangeMode(on ? render::RangeMode::Unit : render::RangeMode::Data); });

  colormapGroup_ = new QActionGroup(this);
  for (const auto& info : render::colormaps()) {
    auto* action = new QAction(QString::fromLatin1(info.name), colormapGroup_);
    action->setCheckable(true);
    action->setData(int(info.id));
    action->setChecked(info.id == lab_->colormap());
  }
  connect(colormapGroup_, &QActionGroup::triggered, this,
          [this](QAction* action) { lab_->setColormap(render::Colormap(action->data().toInt())); });
  connect(lab_, &LabWorkbench::colormapChanged, this, [this](render::Colormap map) {
    for (auto* action : colormapGroup_->actions()) action->setChecked(action->data().toInt() == int(map));
  });

  aboutAction_ = new QAction(tr("&About AttnScope"), this);
  aboutAction_->setMenuRole(QAction::AboutRole);
  connect(aboutAction_, &QAction::triggered, this, &MainWindow::showAbout);
  aboutQtAction_ = new QAction(tr("About &Qt"), this);
  aboutQtAction_->setMenuRole(QAction::AboutQtRole);
  connect(aboutQtAction_, &QAction::triggered, qApp, &QApplication::aboutQt);

  // Keyboard routes into the lab's main controls.
  auto* focusMechanism = new QAction(this);
  focusMechanism->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
  connect(focusMechanism, &QAction::triggered, this, [this] { lab_->mechanismBox()->setFocus(Qt::ShortcutFocusReason); });
  addAction(focusMechanism);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  file->addSeparator();
  file->addAction(exportAction_);
  file->addAction(exportCsvAction_);
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(sidePanelAction_);
  QMenu* colormaps = view->addMenu(tr("&Colour Map"));
  colormaps->addActions(colormapGroup_->actions());
  view->addAction(unitRangeAction_);
  view->addSeparator();
  view->addAction(fullScreenAction_);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(aboutAction_);
  help->addAction(aboutQtAction_);
  rebuildRecentMenu();
}

void MainWindow::restoreSettings() {
  QSettings settings;
  if (!restoreGeometry(settings.value(u"window/geometry"_s).toByteArray())) resize(1320, 860);
  restoreState(settings.value(u"window/state"_s).toByteArray());
  if (auto map = render::findColormap(settings.value(u"view/colormap"_s).toString())) lab_->setColormap(*map);
  const bool side = settings.value(u"view/sidePanel"_s, true).toBool();
  sidePanelAction_->setChecked(side);
  lab_->setSidePanelVisible(side);
  // The lab comes back as it was left: sentences and every parameter.
  const QString labJson = settings.value(u"lab/request"_s).toString();
  if (!labJson.isEmpty()) {
    auto request = attn::lab::lab_request_from_json(labJson.toStdString(), "the saved lab settings");
    if (request) {
      lab_->setRequest(*request);
    } else {
      statusBar()->showMessage(
          tr("%1; the lab starts with its defaults").arg(QString::fromStdString(request.error().message())), 8000);
    }
  }
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(u"window/geometry"_s, saveGeometry());
  settings.setValue(u"window/state"_s, saveState());
  settings.setValue(u"view/colormap"_s, QString::fromLatin1(render::colormapInfo(lab_->colormap()).key));
  settings.setValue(u"view/sidePanel"_s, sidePanelAction_->isChecked());
  settings.setValue(u"lab/request"_s, QString::fromStdString(attn::lab::to_json(lab_->request())));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  event->accept();
}

QStringList MainWindow::recentFiles() const { return QSettings().value(keyRecentFiles()).toStringList(); }

void MainWindow::setRecentFiles(const QStringList& files) {
  QSettings().setValue(keyRecentFiles(), QStringList(files.mid(0, kMaxRecentFiles)));
}

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  setRecentFiles(files);
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  QStringList files = recentFiles();
  QStringList missing;
  for (const auto& file : std::as_const(files)) {
    if (!QFileInfo::exists(file)) missing.append(file);
  }
  if (!missing.isEmpty()) {
    for (const auto& file : std::as_const(missing)) files.removeAll(file);
    setRecentFiles(files);
    statusBar()->showMessage(missing.size() == 1
                                 ? tr("Removed %1 from the recent files: it no longer exists").arg(missing.front())
                                 : tr("Removed %1 missing files from the recent files").arg(missing.size()),
                             8000);
  }
  for (int i = 0; i < files.size(); ++i) {
    const QString& file = files[i];
    // &1 .. &8: each entry gets a mnemonic.
    auto* action = recentMenu_->addAction(u"&%1 %2"_s.arg(i + 1).arg(QFileInfo(file).fileName()));
    action->setToolTip(file);
    action->setStatusTip(file);
    connect(action, &QAction::triggered, this, [this, file] { openFile(file); });
  }
  recentMenu_->setEnabled(!files.isEmpty());
  if (!files.isEmpty()) {
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("&Clear List"), this, [this] {
      setRecentFiles({});
      rebuildRecentMenu();
    });
  }
}

bool MainWindow::openFile(const QString& path) {
  const QFileInfo info(path);
  const QString name = info.fileName();
  if (!info.exists()) {
    QStringList files = recentFiles();
    if (files.removeAll(info.absoluteFilePath()) > 0) {
      setRecentFiles(files);
      rebuildRecentMenu();
      statusBar()->showMessage(tr("%1 no longer exists; removed it from the recent files").arg(path), 8000);
    } else {
      statusBar()->showMessage(tr("%1 does not exist").arg(path), 8000);
    }
    return false;
  }
  if (info.size() > kMaxTextFileBytes) {
    statusBar()->showMessage(tr("%1 is %2 MB; the lab opens text files up to 16 MB")
                                 .arg(name)
                                 .arg(double(info.size()) / (1024.0 * 1024.0), 0, 'f', 1),
                             8000);
    return false;
  }
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    statusBar()->showMessage(tr("Cannot open %1: %2").arg(name, file.errorString()), 8000);
    return false;
  }
  const QByteArray bytes = file.readAll();
  addRecentFile(path);
  rebuildRecentMenu();
  return lab_->loadText(bytes, name);
}

void MainWindow::openDialog() {
  QSettings settings;
  const QString dir = settings.value(u"paths/open"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Text into the Lab"), dir,
      tr("Text: first non-empty line = query, rest = source (*.txt);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/open"_s, QFileInfo(path).absolutePath());
  openFile(path);
}

bool MainWindow::exportTo(const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format) {
    statusBar()->showMessage(tr("Choose a .png, .svg, .pdf or .csv file name"), 8000);
    return false;
  }
  const attn::AttentionMap* map = lab_->currentMap();
  if (!map) {
    statusBar()->showMessage(tr("Nothing to export yet: the lab has no result"), 8000);
    return false;
  }
  const auto written = *format == ExportFormat::Csv ? writeMatrixCsv(*map, path) : exportHeatmap(*lab_->heatmap(), path);
  if (!written) {
    statusBar()->showMessage(tr("Export failed: %1").arg(QString::fromStdString(written.error().message())), 10000);
    return false;
  }
  statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 6000);
  return true;
}

void MainWindow::exportViewDialog() {
  QSettings settings;
  const QString dir = settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)).toString();
  QString filter;
  QString path = QFileDialog::getSaveFileName(this, tr("Export View"), QDir(dir).filePath(u"attention.png"_s),
                                              exportFilters(), &filter);
  if (path.isEmpty()) return;
  if (!exportFormatFor(path)) {
    // Take the extension from the chosen filter when the name has none.
    const qsizetype star = filter.indexOf(u"*."_s);
    if (star >= 0) path += filter.mid(star + 1, 4);
  }
  settings.setValue(u"paths/export"_s, QFileInfo(path).absolutePath());
  exportTo(path);
}

void MainWindow::exportCsvDialog() {
  QSettings settings;
  const QString dir = settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  QString path = QFileDialog::getSaveFileName(this, tr("Export Matrix as CSV"), QDir(dir).filePath(u"attention.csv"_s),
                                              tr("CSV matrix (*.csv)"));
  if (path.isEmpty()) return;
  if (exportFormatFor(path) != ExportFormat::Csv) path += u".csv"_s;
  settings.setValue(u"paths/export"_s, QFileInfo(path).absolutePath());
  exportTo(path);
}

void MainWindow::showAbout() {
  AboutDialog dialog(this);
  dialog.exec();
}

void MainWindow::toggleFullScreen(bool on) {
  if (on) {
    showFullScreen();
  } else {
    showNormal();
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile()) return;
  event->acceptProposedAction();
  openFile(urls.front().toLocalFile());
  if (urls.size() > 1) statusBar()->showMessage(tr("Opened the first of %1 dropped files").arg(urls.size()), 6000);
}

}  // namespace attn::ui
