#include "window/main_window.h"

#include "window/about_dialog.h"
#include "window/help_dialogs.h"
#include "window/recent_files.h"
#include "window/status_line.h"
#include "views/export.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_models.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/corpus/corpus_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/transformer/transformer_workbench.h"
#include "workbenches/common/workbench.h"
#include "attn/glimpse/settings.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
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
#include <QPlainTextEdit>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(u"mainWindow"_s);
  setWindowTitle(tr("AttnScope"));
  setWindowIcon(QIcon(u":/attnscope/icons/attnscope.svg"_s));
  setAcceptDrops(true);

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  // The status line first: messages belong to their tab (app/status_line.h), the run label is to its right.
  messages_ = new TabMessages(statusBar(), tabs_);
  runLabel_ = new QLabel(this);
  runLabel_->setObjectName(u"runLabel"_s);
  statusBar()->addPermanentWidget(runLabel_);
  // The Alignment tab comes first: a trained model's alignment of a date is the quickest way to see what
  // attention does.
  addWorkbench(alignment_ = new AlignmentWorkbench(tabs_));
  addWorkbench(caption_ = new CaptionWorkbench(tabs_));
  addWorkbench(lab_ = new LabWorkbench(tabs_));
  addWorkbench(glimpse_ = new GlimpseWorkbench(tabs_));
  addWorkbench(transformer_ = new TransformerWorkbench(tabs_));
  addWorkbench(corpus_ = new CorpusWorkbench(tabs_));
  setCentralWidget(tabs_);
  connectWorkbenches();
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::updateForTab);

  createActions();
  createMenus();
  // What a new user sees in the first second: a bundled date model's alignment of a date. The command
  // line may open another model right after; the newer load wins.
  if (findBundledModel(defaultAlignmentModel())) alignment_->openModel(defaultAlignmentModel(), false);
  alignment_->textEdit()->setFocus();  // the first thing to do is usually to type
  messages_->show(alignment_, alignment_->identity().greeting, 6000);
  restoreSettings();  // after the greeting, so that a problem with the saved settings is what shows
  // Every two minutes, when something changed; and on quit (closeEvent).
  autosaveTimer_.setInterval(kAutosaveMs);
  connect(&autosaveTimer_, &QTimer::timeout, this, [this] { autosave(); });
  autosaveTimer_.start();
}

MainWindow::~MainWindow() = default;

void MainWindow::addWorkbench(Workbench* workbench) {
  workbenches_.append(workbench);
  tabs_->setTabToolTip(tabs_->addTab(workbench, workbench->identity().title), workbench->identity().toolTip);
  connect(workbench, &Workbench::statusMessage, this,
          [this, workbench](const QString& text, int timeout) { messages_->show(workbench, text, timeout); });
  connect(workbench, &Workbench::runSummaryChanged, this, [this, workbench](const QString& summary) {
    if (tabs_->currentWidget() == workbench) runLabel_->setText(summary);
  });
}

Workbench* MainWindow::workbench(attn::ui::SessionTab tab) const {
  for (Workbench* workbench : workbenches_) {
    if (workbench->identity().tab == tab) return workbench;
  }
  return workbenches_.front();
}

Workbench* MainWindow::currentWorkbench() const {
  auto* current = qobject_cast<Workbench*>(tabs_->currentWidget());
  return current != nullptr ? current : workbenches_.front();
}

void MainWindow::showTab(attn::ui::SessionTab tab) { tabs_->setCurrentWidget(workbench(tab)); }

// What only some tabs have: files that go into the recent lists, the buttons that ask for the window's
// dialogs, the Glimpse tab's failure wording, the lab's refusal cleared by its next good result.
void MainWindow::connectWorkbenches() {
  // Bundled photos live in the binary (":/..."), scenes are generated: only files are recent. So do the Alignment and
  // the Captioning tab's bundled models, which their own selectors list; the Transformer tab's bundled demos, which
  // it writes into a temporary folder, are kept by their key (that folder is gone after a restart).
  const auto isFile = [](const QString& path) { return !path.startsWith(u':') && !path.startsWith(u"scene:"_s); };
  const auto addImage = [this, isFile](const QString& path) {
    if (isFile(path)) recentImages_->add(path);
  };
  const auto addModel = [this, isFile](const QString& path) {
    if (isFile(path)) recentModels_->add(path);
  };
  connect(glimpse_, &GlimpseWorkbench::imageFailed, this, [this](const QString& message) {
    messages_->show(glimpse_, tr("Cannot open the image: %1. The previous image and parameters stay.").arg(message), 0);
  });
  connect(glimpse_, &GlimpseWorkbench::imageLoaded, this, addImage);
  connect(glimpse_, &GlimpseWorkbench::openRequested, this, &MainWindow::openImageDialog);
  connect(alignment_, &AlignmentWorkbench::sourceLoaded, this, addModel);
  connect(alignment_, &AlignmentWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(caption_, &CaptionWorkbench::sourceLoaded, this, addModel);
  connect(caption_, &CaptionWorkbench::imageLoaded, this, addImage);
  connect(caption_, &CaptionWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(caption_, &CaptionWorkbench::openImageRequested, this, &MainWindow::openImageDialog);
  connect(caption_, &CaptionWorkbench::exportGridRequested, this, &MainWindow::exportViewDialog);
  connect(caption_, &CaptionWorkbench::exportOverlayRequested, this, &MainWindow::exportCaptionOverlayDialog);
  connect(transformer_, &TransformerWorkbench::sourceLoaded, this, [this, addModel](const QString& path) {
    const QString key = transformer_->sourceKey();
    if (TransformerWorkbench::isDemoKey(key)) {
      recentModels_->add(RecentList::bundledEntry(key));
    } else {
      addModel(path);
    }
  });
  connect(transformer_, &TransformerWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(transformer_, &TransformerWorkbench::openDumpRequested, this, &MainWindow::openDumpDialog);
  connect(lab_, &LabWorkbench::resultShown, this, [this] {
    // A good result replaces a refusal that is still on the status bar.
    if (lab_->lastError().isEmpty() && messages_->messageOf(lab_).startsWith(tr("Input refused")))
      messages_->clear(lab_);
  });
}

void MainWindow::createActions() {
  openAction_ = new QAction(QIcon::fromTheme(u"document-open"_s), tr("&Open Text\u2026"), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setStatusTip(
      tr("Open a .txt file into the lab (first non-empty line = query, the rest = source), a "
         "session, or a corpus database (*.sqlite) into the Corpus tab"));
  connect(openAction_, &QAction::triggered, this, &MainWindow::openDialog);

  openImageAction_ = new QAction(QIcon::fromTheme(u"image-x-generic"_s), tr("Open &Image\u2026"), this);
  openImageAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  openImageAction_->setStatusTip(tr("Open a PNG, JPEG, BMP, TIFF or WebP image into the Glimpse tab"));
  connect(openImageAction_, &QAction::triggered, this, &MainWindow::openImageDialog);

  exportGlimpseAction_ = new QAction(tr("Export &Glimpse as PNG\u2026"), this);
  exportGlimpseAction_->setStatusTip(tr("Save the Gaussian glimpse at its own size, one pixel per filter"));
  connect(exportGlimpseAction_, &QAction::triggered, this, &MainWindow::exportGlimpseDialog);
  exportAnnotatedAction_ = new QAction(tr("Export &Annotated Image\u2026"), this);
  exportAnnotatedAction_->setStatusTip(tr("Save the photo with the glimpse drawn on it as PNG, SVG or PDF"));
  connect(exportAnnotatedAction_, &QAction::triggered, this, &MainWindow::exportAnnotatedDialog);
  exportParametersAction_ = new QAction(tr("Export Glimpse &Parameters (JSON)\u2026"), this);
  exportParametersAction_->setStatusTip(tr("Save every glimpse parameter as JSON (attnscope-cli reads it back)"));
  connect(exportParametersAction_, &QAction::triggered, this, &MainWindow::exportGlimpseParametersDialog);

  openModelAction_ = new QAction(tr("Open &Model\u2026"), this);
  openModelAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
  openModelAction_->setStatusTip(
      tr("Open a model folder: an AttnScope seq2seq or review classifier into the Alignment "
         "tab, a transformer (config.json + *.safetensors + tokenizer) into the Transformer "
         "tab"));
  connect(openModelAction_, &QAction::triggered, this, &MainWindow::openModelDialog);
  openGgufAction_ = new QAction(tr("Open &GGUF Model\u2026"), this);
  openGgufAction_->setStatusTip(
      tr("Open a llama.cpp model file (*.gguf, quantised or not: llama, Mistral, Qwen 2 and 3) into the Transformer "
         "tab"));
  connect(openGgufAction_, &QAction::triggered, this, &MainWindow::openGgufDialog);
  openDumpAction_ = new QAction(tr("Open Attention &Dump\u2026"), this);
  openDumpAction_->setStatusTip(tr("Open any model's attention saved as *.attn.safetensors into the Transformer tab"));
  connect(openDumpAction_, &QAction::triggered, this, &MainWindow::openDumpDialog);
  exportLayerAction_ = new QAction(tr("Export &Layer\u2026"), this);
  exportLayerAction_->setStatusTip(tr("Write every head of the current layer as PNG and CSV into a folder"));
  connect(exportLayerAction_, &QAction::triggered, this, &MainWindow::exportLayerDialog);

  exportAction_ = new QAction(QIcon::fromTheme(u"document-save-as"_s), tr("&Export View\u2026"), this);
  // Ctrl+S saves the session; exports have E.
  exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAction_->setStatusTip(tr("Save the heatmap as PNG, SVG or PDF, or its matrix as CSV"));
  connect(exportAction_, &QAction::triggered, this, &MainWindow::exportViewDialog);

  exportCsvAction_ = new QAction(tr("Export &Matrix (CSV, NumPy)\u2026"), this);
  exportCsvAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  exportCsvAction_->setStatusTip(tr("Save the shown map's weights as CSV (with its tokens) or as a NumPy .npy"));
  connect(exportCsvAction_, &QAction::triggered, this, &MainWindow::exportCsvDialog);

  createSessionActions();
  createViewActions();
}

// File > Open Session, Save Session, Save Session As and Quit.
void MainWindow::createSessionActions() {
  openSessionAction_ = new QAction(tr("Open Sessio&n\u2026"), this);
  openSessionAction_->setStatusTip(tr("Open an AttnScope session (*.attnscope.json): every tab as it was saved"));
  connect(openSessionAction_, &QAction::triggered, this, &MainWindow::openSessionDialog);
  saveSessionAction_ = new QAction(QIcon::fromTheme(u"document-save"_s), tr("&Save Session"), this);
  saveSessionAction_->setShortcut(QKeySequence::Save);
  saveSessionAction_->setStatusTip(tr("Save every tab's model, input and parameters into the session file"));
  connect(saveSessionAction_, &QAction::triggered, this, &MainWindow::saveSessionToCurrent);
  saveSessionAsAction_ = new QAction(QIcon::fromTheme(u"document-save-as"_s), tr("Save Session &As\u2026"), this);
  saveSessionAsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  saveSessionAsAction_->setStatusTip(tr("Save every tab's model, input and parameters into a new session file"));
  connect(saveSessionAsAction_, &QAction::triggered, this, &MainWindow::saveSessionAsDialog);

  quitAction_ = new QAction(QIcon::fromTheme(u"application-exit"_s), tr("&Quit"), this);
  // Some platforms (Windows, bare X11) define no Quit key; Ctrl+Q is what users of those expect.
  quitAction_->setShortcuts(QKeySequence::keyBindings(QKeySequence::Quit).isEmpty()
                                ? QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_Q)}
                                : QKeySequence::keyBindings(QKeySequence::Quit));
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);
}

// The View and Help menus' actions, and the keyboard routes into the lab.
void MainWindow::createViewActions() {
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
  for (Workbench* workbench : std::as_const(workbenches_)) {
    connect(sidePanelAction_, &QAction::toggled, workbench, &Workbench::setSidePanelVisible);
  }

  unitRangeAction_ = new QAction(tr("Fixed Colour &Range 0\u20131"), this);
  unitRangeAction_->setCheckable(true);
  unitRangeAction_->setStatusTip(tr("Colour attention weights on the absolute 0\u20131 scale"));
  unitRangeAction_->setChecked(lab_->rangeMode() == render::RangeMode::Unit);  // the Lab's default: on
  connect(unitRangeAction_, &QAction::toggled, lab_,
          [this](bool on) { lab_->setRangeMode(on ? render::RangeMode::Unit : render::RangeMode::Data); });

  colormapGroup_ = new QActionGroup(this);
  for (const auto& info : render::colormaps()) {
    auto* action = new QAction(QString::fromLatin1(info.name), colormapGroup_);
    action->setCheckable(true);
    action->setData(int(info.id));
    action->setChecked(info.id == lab_->colormap());
  }
  connect(colormapGroup_, &QActionGroup::triggered, this, [this](QAction* action) {
    for (Workbench* workbench : std::as_const(workbenches_)) {
      if (workbench->takesColormap()) workbench->setColormap(render::Colormap(action->data().toInt()));
    }
  });
  connect(lab_, &LabWorkbench::colormapChanged, this, [this](render::Colormap map) {
    for (auto* action : colormapGroup_->actions()) action->setChecked(action->data().toInt() == int(map));
  });

  aboutAction_ = new QAction(tr("&About AttnScope"), this);
  aboutAction_->setMenuRole(QAction::AboutRole);
  connect(aboutAction_, &QAction::triggered, this, &MainWindow::showAbout);
  shortcutsAction_ = new QAction(tr("&Keyboard Shortcuts"), this);
  shortcutsAction_->setStatusTip(tr("Every shortcut of the menus and tabs, and the keys the views read"));
  connect(shortcutsAction_, &QAction::triggered, this, &MainWindow::showShortcuts);
  glossaryAction_ = new QAction(tr("&Glossary"), this);
  glossaryAction_->setStatusTip(
      tr("What entropy, rollout, an attention sink, the logit lens and the other terms mean"));
  connect(glossaryAction_, &QAction::triggered, this, &MainWindow::showGlossary);
  aboutQtAction_ = new QAction(tr("About &Qt"), this);
  aboutQtAction_->setMenuRole(QAction::AboutQtRole);
  connect(aboutQtAction_, &QAction::triggered, qApp, &QApplication::aboutQt);

  // Keyboard routes into the lab's main controls.
  auto* focusMechanism = new QAction(tr("Focus the Lab's Mechanism Box"), this);
  focusMechanism->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
  connect(focusMechanism, &QAction::triggered, this,
          [this] { lab_->mechanismBox()->setFocus(Qt::ShortcutFocusReason); });
  addAction(focusMechanism);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(openImageAction_);
  recentImagesMenu_ = file->addMenu(tr("Open Recent I&mage"));
  QMenu* samples = file->addMenu(tr("Open &Sample Photo"));
  for (const auto& sample : sampleImages()) {
    const QString key = sample.key;
    samples->addAction(sample.name, this, [this, key] {
      if (tabs_->currentWidget() == caption_) {
        caption_->openSample(key);
        return;
      }
      showGlimpse();
      glimpse_->openSample(key);
    });
  }
  file->addSeparator();
  file->addAction(openModelAction_);
  file->addAction(openGgufAction_);
  file->addAction(openDumpAction_);
  recentModelsMenu_ = file->addMenu(tr("Open Recent Mo&del"));
  file->addSeparator();
  file->addAction(openSessionAction_);
  file->addAction(saveSessionAction_);
  file->addAction(saveSessionAsAction_);
  file->addSeparator();
  file->addAction(exportAction_);
  file->addAction(exportCsvAction_);
  file->addAction(exportLayerAction_);
  file->addAction(exportGlimpseAction_);
  file->addAction(exportAnnotatedAction_);
  file->addAction(exportParametersAction_);
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
  help->addAction(shortcutsAction_);
  help->addAction(glossaryAction_);
  help->addSeparator();
  help->addAction(aboutAction_);
  help->addAction(aboutQtAction_);
  recentFiles_ = new RecentList(
      u"recentFiles"_s, recentMenu_, [this](const QString& path) { openFile(path); }, this);
  recentImages_ = new RecentList(
      u"recentImages"_s, recentImagesMenu_, [this](const QString& path) { openImage(path); }, this);
  recentModels_ = new RecentList(
      u"recentModels"_s, recentModelsMenu_, [this](const QString& path) { openModel(path); }, this);
  // The text files' list says when it forgot a file that is gone (the others drop theirs quietly).
  connect(recentMenu_, &QMenu::aboutToShow, this, [this] {
    const QStringList missing = recentFiles_->rebuild();
    if (missing.isEmpty()) return;
    messages_->show(nullptr,
                    missing.size() == 1
                        ? tr("Removed %1 from the recent files: it no longer exists").arg(missing.front())
                        : tr("Removed %1 missing files from the recent files").arg(missing.size()),
                    8000);
  });
  recentFiles_->rebuild();
  recentImages_->rebuild();
  recentModels_->rebuild();
  updateForTab();
}

void MainWindow::updateForTab() {
  Workbench* current = currentWorkbench();
  // A greeting fits the tab it was written for; a tab switch (the command line's, the saved one) swaps it.
  // The tab's own message comes back (or none: another tab's never shows here).
  const QString shown = statusBar()->currentMessage();
  const bool greetingShown =
      !shown.isEmpty() && std::any_of(workbenches_.begin(), workbenches_.end(),
                                      [&shown](const Workbench* w) { return w->identity().greeting == shown; });
  messages_->showTab(current);
  if (greetingShown && statusBar()->currentMessage().isEmpty() && !current->identity().greeting.isEmpty()) {
    messages_->show(current, current->identity().greeting, 6000);
  }
  runLabel_->setText(current->runSummary());
  runLabel_->setToolTip(current->identity().summaryToolTip);
  exportCsvAction_->setEnabled(current->hasMatrix());
  exportLayerAction_->setEnabled(current == transformer_);
  exportAction_->setText(current->exportViewLabel());
  unitRangeAction_->setEnabled(current == lab_);
}

bool MainWindow::exportTo(const QString& path) {
  Workbench* current = currentWorkbench();
  const auto format = exportFormatFor(path);
  return reportExport(
      format && isMatrixFormat(*format) ? current->exportMatrix(path) : current->exportCurrentView(path), path);
}

void MainWindow::exportViewDialog() {
  const Workbench* current = currentWorkbench();
  QSettings settings;
  const QString dir =
      settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)).toString();
  QString filter;
  QString path = QFileDialog::getSaveFileName(this, QString(current->exportViewLabel()).remove(u'&').remove(u'\u2026'),
                                              QDir(dir).filePath(current->exportViewName()),
                                              current->exportViewFilters(), &filter);
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
  const QString dir =
      settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  QString filter;
  QString path = QFileDialog::getSaveFileName(this, tr("Export Matrix"), QDir(dir).filePath(u"attention.csv"_s),
                                              tr("CSV matrix (*.csv);;NumPy matrix (*.npy)"), &filter);
  if (path.isEmpty()) return;
  if (const auto format = exportFormatFor(path); !format || !isMatrixFormat(*format)) {
    path += filter.contains(u"npy"_s) ? u".npy"_s : u".csv"_s;
  }
  settings.setValue(u"paths/export"_s, QFileInfo(path).absolutePath());
  exportTo(path);
}

bool MainWindow::reportExport(const attn::Result<void>& written, const QString& path) {
  if (!written) {
    messages_->show(nullptr, tr("Export failed: %1").arg(QString::fromStdString(written.error().message())), 10000);
    return false;
  }
  messages_->show(nullptr, tr("Exported %1").arg(QDir::toNativeSeparators(path)), 6000);
  return true;
}

bool MainWindow::exportGlimpse(const QString& path) { return reportExport(glimpse_->exportGlimpse(path), path); }

bool MainWindow::exportAnnotated(const QString& path) { return reportExport(glimpse_->exportAnnotated(path), path); }

bool MainWindow::exportGlimpseParameters(const QString& path) {
  return reportExport(glimpse_->exportParameters(path), path);
}

namespace {
// A save dialog that adds the extension of the chosen filter when the name has none.
QString savePath(QWidget* parent, const QString& title, const QString& name, const QString& filters,
                 const QStringList& suffixes) {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)).toString();
  QString filter;
  QString path = QFileDialog::getSaveFileName(parent, title, QDir(dir).filePath(name), filters, &filter);
  if (path.isEmpty()) return {};
  if (!suffixes.contains(QFileInfo(path).suffix().toLower())) {
    const qsizetype star = filter.indexOf(u"*."_s);
    path += star >= 0 ? filter.mid(star + 1, filter.indexOf(u')', star) - star - 1).section(u' ', 0, 0)
                      : u"."_s + suffixes.front();
  }
  settings.setValue(u"paths/export"_s, QFileInfo(path).absolutePath());
  return path;
}
}  // namespace

void MainWindow::exportGlimpseDialog() {
  const QString path = savePath(this, tr("Export Glimpse"), u"glimpse.png"_s, tr("PNG image (*.png)"), {u"png"_s});
  if (!path.isEmpty()) exportGlimpse(path);
}

void MainWindow::exportAnnotatedDialog() {
  const QString path =
      savePath(this, tr("Export Annotated Image"), u"glimpse-annotated.png"_s,
               tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), {u"png"_s, u"svg"_s, u"pdf"_s});
  if (!path.isEmpty()) exportAnnotated(path);
}

bool MainWindow::exportCaptionGrid(const QString& path) { return reportExport(caption_->exportGrid(path), path); }

bool MainWindow::exportCaptionOverlay(const QString& path) { return reportExport(caption_->exportOverlay(path), path); }

void MainWindow::exportCaptionOverlayDialog() {
  const QString path =
      savePath(this, tr("Export Word Overlay"), u"caption-word.png"_s, tr("PNG image (*.png)"), {u"png"_s});
  if (!path.isEmpty()) exportCaptionOverlay(path);
}

void MainWindow::exportGlimpseParametersDialog() {
  const QString path =
      savePath(this, tr("Export Glimpse Parameters"), u"glimpse.json"_s, tr("JSON (*.json)"), {u"json"_s});
  if (!path.isEmpty()) exportGlimpseParameters(path);
}

bool MainWindow::exportTransformerLayer(const QString& folder) {
  const auto written = transformer_->exportLayer(folder);
  if (!written) {
    messages_->show(nullptr, tr("Export failed: %1").arg(QString::fromStdString(written.error().message())), 10000);
    return false;
  }
  messages_->show(nullptr, tr("Exported %1 files into %2").arg(written->size()).arg(QDir::toNativeSeparators(folder)),
                  6000);
  return true;
}

void MainWindow::exportLayerDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)).toString();
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Export Every Head of the Layer into"), dir);
  if (folder.isEmpty()) return;
  settings.setValue(u"paths/export"_s, folder);
  exportTransformerLayer(folder);
}

void MainWindow::showAbout() {
  AboutDialog dialog(this);
  dialog.exec();
}

// Both beside the window (not modal): a list to read while trying the keys or the views.
void MainWindow::showShortcuts() {
  auto* dialog = new ShortcutsDialog(*this, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
}

void MainWindow::showGlossary() {
  auto* dialog = new GlossaryDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
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
  openPath(urls.front().toLocalFile());
  if (urls.size() > 1) messages_->show(nullptr, tr("Opened the first of %1 dropped files").arg(urls.size()), 6000);
}

}  // namespace attn::ui
