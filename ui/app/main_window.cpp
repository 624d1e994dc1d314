#include "app/main_window.h"

#include "app/about_dialog.h"
#include "app/status_line.h"
#include "views/export.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/alignment_models.h"
#include "workbenches/alignment_workbench.h"
#include "workbenches/caption_models.h"
#include "workbenches/caption_workbench.h"
#include "workbenches/glimpse_workbench.h"
#include "workbenches/lab_workbench.h"
#include "workbenches/sample_images.h"
#include "workbenches/transformer_workbench.h"
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

#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

constexpr qint64 kMaxTextFileBytes = 16 * 1024 * 1024;

QString keyRecentFiles() { return u"recentFiles"_s; }
QString keyRecentImages() { return u"recentImages"_s; }
QString keyRecentModels() { return u"recentModels"_s; }
QString defaultSample() { return u"astronaut"_s; }

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
std::filesystem::path toPath(const QString& path) {
  return std::filesystem::path(QFile::encodeName(path).toStdString());
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(u"mainWindow"_s);
  setWindowTitle(tr("AttnScope"));
  setWindowIcon(QIcon(u":/attnscope/icons/attnscope.svg"_s));
  setAcceptDrops(true);

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  // The Alignment tab comes first: a trained model's alignment of a date is the quickest way to see what
  // attention does.
  alignment_ = new AlignmentWorkbench(tabs_);
  tabs_->setTabToolTip(tabs_->addTab(alignment_, tr("&Alignment")),
                       tr("Seq2seq alignment of dates (Bahdanau, Luong, local-p) and word attention of review "
                          "classifiers, live as you type"));
  caption_ = new CaptionWorkbench(tabs_);
  tabs_->setTabToolTip(tabs_->addTab(caption_, tr("&Captioning")),
                       tr("Show, Attend and Tell: where a captioner looks for each word, soft and hard attention"));
  lab_ = new LabWorkbench(tabs_);
  tabs_->setTabToolTip(tabs_->addTab(lab_, tr("Mechanism &Lab")), tr("Run any attention mechanism on two sentences"));
  glimpse_ = new GlimpseWorkbench(tabs_);
  tabs_->setTabToolTip(tabs_->addTab(glimpse_, tr("&Glimpse")),
                       tr("DRAW's Gaussian glimpse and the spatial transformer's over any image"));
  transformer_ = new TransformerWorkbench(tabs_);
  tabs_->setTabToolTip(tabs_->addTab(transformer_, tr("&Transformer")),
                       tr("BERT, GPT-2, DistilBERT and ViT attention, live, or any model's attention dump"));
  setCentralWidget(tabs_);

  // The status line first: messages belong to their tab (app/status_line.h), the run label is to its right.
  messages_ = new TabMessages(statusBar(), tabs_);
  runLabel_ = new QLabel(this);
  runLabel_->setObjectName(u"runLabel"_s);
  runLabel_->setToolTip(tr("Last run: mechanism, map shape and engine time"));
  statusBar()->addPermanentWidget(runLabel_);
  connect(lab_, &LabWorkbench::statusMessage, this,
          [this](const QString& text, int timeout) { messages_->show(lab_, text, timeout); });
  connect(lab_, &LabWorkbench::runSummaryChanged, this, [this](const QString& summary) {
    labSummary_ = summary;
    if (tabs_->currentWidget() == lab_) runLabel_->setText(summary);
  });
  connect(glimpse_, &GlimpseWorkbench::runSummaryChanged, this, [this](const QString& summary) {
    glimpseSummary_ = summary;
    if (tabs_->currentWidget() == glimpse_) runLabel_->setText(summary);
  });
  // The glimpse tab's progress notes only while it is shown; a failed open always (the user asked for it).
  connect(glimpse_, &GlimpseWorkbench::statusMessage, this,
          [this](const QString& text, int timeout) { messages_->show(glimpse_, text, timeout); });
  connect(glimpse_, &GlimpseWorkbench::imageFailed, this, [this](const QString& message) {
    messages_->show(glimpse_, tr("Cannot open the image: %1. The previous image and parameters stay.").arg(message), 0);
  });
  connect(glimpse_, &GlimpseWorkbench::imageLoaded, this, [this](const QString& path) {
    if (!path.startsWith(u':')) addRecentImage(path);
  });
  connect(glimpse_, &GlimpseWorkbench::openRequested, this, &MainWindow::openImageDialog);
  connect(alignment_, &AlignmentWorkbench::runSummaryChanged, this, [this](const QString& summary) {
    alignmentSummary_ = summary;
    if (tabs_->currentWidget() == alignment_) runLabel_->setText(summary);
  });
  connect(alignment_, &AlignmentWorkbench::statusMessage, this,
          [this](const QString& text, int timeout) { messages_->show(alignment_, text, timeout); });
  // Bundled models live in the binary (":/models/..."): only folders go to the recent models.
  connect(alignment_, &AlignmentWorkbench::sourceLoaded, this, [this](const QString& path) {
    if (!path.startsWith(u':')) addRecentModel(path);
  });
  connect(alignment_, &AlignmentWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(caption_, &CaptionWorkbench::runSummaryChanged, this, [this](const QString& summary) {
    captionSummary_ = summary;
    if (tabs_->currentWidget() == caption_) runLabel_->setText(summary);
  });
  connect(caption_, &CaptionWorkbench::statusMessage, this,
          [this](const QString& text, int timeout) { messages_->show(caption_, text, timeout); });
  connect(caption_, &CaptionWorkbench::sourceLoaded, this, [this](const QString& path) {
    if (!path.startsWith(u':')) addRecentModel(path);
  });
  connect(caption_, &CaptionWorkbench::imageLoaded, this, [this](const QString& path) {
    if (!path.startsWith(u':') && !path.startsWith(u"scene:"_s)) addRecentImage(path);
  });
  connect(caption_, &CaptionWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(caption_, &CaptionWorkbench::openImageRequested, this, &MainWindow::openImageDialog);
  connect(caption_, &CaptionWorkbench::exportGridRequested, this, &MainWindow::exportCaptionGridDialog);
  connect(caption_, &CaptionWorkbench::exportOverlayRequested, this, &MainWindow::exportCaptionOverlayDialog);
  connect(transformer_, &TransformerWorkbench::runSummaryChanged, this, [this](const QString& summary) {
    transformerSummary_ = summary;
    if (tabs_->currentWidget() == transformer_) runLabel_->setText(summary);
  });
  connect(transformer_, &TransformerWorkbench::statusMessage, this,
          [this](const QString& text, int timeout) { messages_->show(transformer_, text, timeout); });
  connect(transformer_, &TransformerWorkbench::sourceLoaded, this,
          [this](const QString& path) { addRecentModel(path); });
  connect(transformer_, &TransformerWorkbench::openModelRequested, this, &MainWindow::openModelDialog);
  connect(transformer_, &TransformerWorkbench::openDumpRequested, this, &MainWindow::openDumpDialog);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::updateForTab);
  connect(lab_, &LabWorkbench::resultShown, this, [this] {
    // A good result replaces a refusal that is still on the status bar.
    if (lab_->lastError().isEmpty() && messages_->messageOf(lab_).startsWith(tr("Input refused")))
      messages_->clear(lab_);
  });

  createActions();
  createMenus();
  // What a new user sees in the first second: a bundled date model's alignment of a date. The command
  // line may open another model right after; the newer load wins.
  if (findBundledModel(defaultAlignmentModel())) alignment_->openModel(defaultAlignmentModel(), false);
  alignment_->textEdit()->setFocus();  // the first thing to do is usually to type
  messages_->show(alignment_, greeting(alignment_), 6000);
  restoreSettings();  // after the greeting, so that a problem with the saved settings is what shows
  // Every two minutes, when something changed; and on quit (closeEvent).
  autosaveTimer_.setInterval(kAutosaveMs);
  connect(&autosaveTimer_, &QTimer::timeout, this, [this] { autosave(); });
  autosaveTimer_.start();
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions() {
  openAction_ = new QAction(QIcon::fromTheme(u"document-open"_s), tr("&Open Text\u2026"), this);
  openAction_->setShortcut(QKeySequence::Open);
  openAction_->setStatusTip(tr("Open a .txt file into the lab: first non-empty line = query, the rest = source"));
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
  connect(sidePanelAction_, &QAction::toggled, alignment_, &AlignmentWorkbench::setSidePanelVisible);
  connect(sidePanelAction_, &QAction::toggled, caption_, &CaptionWorkbench::setSidePanelVisible);
  connect(sidePanelAction_, &QAction::toggled, lab_, &LabWorkbench::setSidePanelVisible);
  connect(sidePanelAction_, &QAction::toggled, glimpse_, &GlimpseWorkbench::setSidePanelVisible);
  connect(sidePanelAction_, &QAction::toggled, transformer_, &TransformerWorkbench::setSidePanelVisible);

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
  connect(colormapGroup_, &QActionGroup::triggered, this, [this](QAction* action) {
    lab_->setColormap(render::Colormap(action->data().toInt()));
    transformer_->setColormap(render::Colormap(action->data().toInt()));
    alignment_->setColormap(render::Colormap(action->data().toInt()));
  });
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
  connect(focusMechanism, &QAction::triggered, this,
          [this] { lab_->mechanismBox()->setFocus(Qt::ShortcutFocusReason); });
  addAction(focusMechanism);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAction_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  file->addAction(openImageAction_);
  recentImagesMenu_ = file->addMenu(tr("Open Recent I&mage"));
  connect(recentImagesMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentImagesMenu);
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
  file->addAction(openDumpAction_);
  recentModelsMenu_ = file->addMenu(tr("Open Recent Mo&del"));
  connect(recentModelsMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentModelsMenu);
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
  help->addAction(aboutAction_);
  help->addAction(aboutQtAction_);
  rebuildRecentMenu();
  rebuildRecentImagesMenu();
  rebuildRecentModelsMenu();
  updateForTab();
}

void MainWindow::restoreSettings() {
  QSettings settings;
  if (!restoreGeometry(settings.value(u"window/geometry"_s).toByteArray())) resize(1320, 860);
  restoreState(settings.value(u"window/state"_s).toByteArray());
  if (auto map = render::findColormap(settings.value(u"view/colormap"_s).toString())) {
    lab_->setColormap(*map);
    alignment_->setColormap(*map);
  }
  const bool side = settings.value(u"view/sidePanel"_s, true).toBool();
  sidePanelAction_->setChecked(side);
  lab_->setSidePanelVisible(side);
  // Every tab as it was left: the autosave of the last run. Without one (a first start, or the first start
  // after an upgrade) the per-tab keys of older versions, once.
  const QString autosavePath = autosaveFile();
  if (!QFileInfo::exists(autosavePath)) {
    restoreLegacySettings();
    return;
  }
  auto session = attn::io::load_session(toPath(autosavePath));
  if (!session) {
    // Set aside, not overwritten by the next autosave: it may be worth a look.
    const QString aside = autosavePath + u".bad"_s;
    QFile::remove(aside);
    QFile::rename(autosavePath, aside);
    glimpse_->openSample(defaultSample());
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
  const bool imageThere = !imagePath.isEmpty() && (imagePath.startsWith(u":/"_s) || QFileInfo::exists(imagePath));
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
    glimpse_->openSample(defaultSample());
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

attn::io::Session MainWindow::session() const {
  attn::io::Session s;
  s.alignment = alignment_->state();
  s.caption = caption_->state();
  s.lab = lab_->state();
  s.glimpse = glimpse_->state();
  s.transformer = transformer_->state();
  const QWidget* tab = tabs_->currentWidget();
  s.tab = tab == caption_       ? attn::io::SessionTab::Caption
          : tab == lab_         ? attn::io::SessionTab::Lab
          : tab == glimpse_     ? attn::io::SessionTab::Glimpse
          : tab == transformer_ ? attn::io::SessionTab::Transformer
                                : attn::io::SessionTab::Alignment;
  return s;
}

QStringList MainWindow::applySession(const attn::io::Session& session, const QString& origin) {
  using namespace attn::io;
  QStringList problems;
  for (const auto& warning : session.warnings) problems.append(QString::fromStdString(warning.message()));
  const auto fromStd = [](const std::string& s) { return QString::fromStdString(s); };
  // A file named in the session that is gone: the tab falls back to its default there, and says so.
  const auto gone = [&problems, &origin](const QString& file, const QString& tab) {
    problems.append(
        tr("%1: %2 no longer exists; %3 falls back to its default").arg(origin, QDir::toNativeSeparators(file), tab));
  };

  AlignmentSection alignment = session.alignment.value_or(AlignmentSection{});
  if (const QString model = fromStd(alignment.model); !findBundledModel(model) && !QFileInfo::exists(model)) {
    gone(model, tr("the Alignment tab"));
    alignment = AlignmentSection{};
    alignment.model = defaultAlignmentModel().toStdString();
  }
  alignment_->applyState(alignment);

  CaptionSection caption = session.caption.value_or(CaptionSection{});
  if (const QString model = fromStd(caption.model);
      !bundledCaptionModelKeys().contains(model) && !QFileInfo(model).isDir()) {
    gone(model, tr("the Captioning tab"));
    caption.model = defaultCaptionModel().toStdString();
  }
  const bool sampleMissing =
      caption.input == CaptionSection::Input::Sample && sampleImageResource(fromStd(caption.image)).isEmpty();
  if (sampleMissing || (caption.input == CaptionSection::Input::File && !QFileInfo(fromStd(caption.image)).isFile())) {
    gone(fromStd(caption.image), tr("the Captioning tab"));
    caption.input = CaptionSection{}.input;
    caption.seed = CaptionSection{}.seed;
    caption.image.clear();
  }
  caption_->applyState(caption);

  const LabSection lab = session.lab.value_or(LabSection{});
  lab_->applyState(lab);
  {
    const QSignalBlocker block(unitRangeAction_);
    unitRangeAction_->setChecked(lab.unit_range);
  }

  // Pixel numbers refer to the image: without it the glimpse starts over on the default photo.
  const auto imageThere = [&fromStd](const ImageRef& image) {
    return image.kind == ImageRef::Kind::Sample ? !sampleImageResource(fromStd(image.value)).isEmpty()
                                                : QFileInfo(fromStd(image.value)).isFile();
  };
  if (session.glimpse && imageThere(session.glimpse->image)) {
    glimpse_->applyState(*session.glimpse);
  } else {
    if (session.glimpse) gone(fromStd(session.glimpse->image.value), tr("the Glimpse tab"));
    glimpse_->setWriteMode(false);
    glimpse_->setEditStn(false);
    glimpse_->openSample(defaultSample());
  }

  // The Transformer tab has nothing to fall back to: without its section it keeps what it has.
  if (session.transformer) {
    TransformerSection transformer = *session.transformer;
    if (const QString source = fromStd(transformer.source);
        !source.isEmpty() && source != TransformerWorkbench::demoModelKey() && !QFileInfo::exists(source)) {
      gone(source, tr("the Transformer tab"));
      transformer.source.clear();
    }
    if (!imageThere(transformer.image)) {
      gone(fromStd(transformer.image.value), tr("the Transformer tab's photo"));
      transformer.image = ImageRef{};
    }
    transformer_->applyState(transformer);
  }

  switch (session.tab) {
    case SessionTab::Alignment: showAlignment(); break;
    case SessionTab::Caption: showCaption(); break;
    case SessionTab::Lab: showLab(); break;
    case SessionTab::Glimpse: showGlimpse(); break;
    case SessionTab::Transformer: showTransformer(); break;
  }
  return problems;
}

bool MainWindow::openSession(const QString& path) {
  auto session = attn::io::load_session(toPath(path));
  if (!session) {
    reportSessionFailure(tr("Cannot open the session; nothing was changed"), session.error(), false);
    return false;
  }
  const QStringList problems = applySession(*session, QFileInfo(path).fileName());
  sessionFile_ = QFileInfo(path).absoluteFilePath();
  messages_->show(nullptr,
                  problems.isEmpty() ? tr("Opened the session %1").arg(QDir::toNativeSeparators(path))
                                     : problems.join(u" \u00b7 "_s),
                  problems.isEmpty() ? 6000 : 0);
  return true;
}

bool MainWindow::saveSession(const QString& path) {
  const auto written = attn::io::save_session(toPath(path), session());
  if (!written) {
    reportSessionFailure(tr("The session was not saved"), written.error(), false);
    return false;
  }
  sessionFile_ = QFileInfo(path).absoluteFilePath();
  messages_->show(nullptr, tr("Saved the session to %1").arg(QDir::toNativeSeparators(path)), 6000);
  return true;
}

bool MainWindow::autosave(bool always) {
  attn::io::Session now = session();
  if (!always && autosaved_ && *autosaved_ == now && QFileInfo::exists(autosaveFile())) return true;
  const QString path = autosaveFile();
  QDir().mkpath(QFileInfo(path).absolutePath());
  const auto written = attn::io::save_session(toPath(path), now);
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
    messages_->show(nullptr,
                    missing.size() == 1
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
  if (isSessionFileName(path) && QFileInfo(path).isFile()) return openSession(path);
  const QFileInfo info(path);
  const QString name = info.fileName();
  if (!info.exists()) {
    QStringList files = recentFiles();
    if (files.removeAll(info.absoluteFilePath()) > 0) {
      setRecentFiles(files);
      rebuildRecentMenu();
      messages_->show(nullptr, tr("%1 no longer exists; removed it from the recent files").arg(path), 8000);
    } else {
      messages_->show(nullptr, tr("%1 does not exist").arg(path), 8000);
    }
    return false;
  }
  if (info.size() > kMaxTextFileBytes) {
    messages_->show(nullptr,
                    tr("%1 is %2 MB; the lab opens text files up to 16 MB")
                        .arg(name)
                        .arg(double(info.size()) / (1024.0 * 1024.0), 0, 'f', 1),
                    8000);
    return false;
  }
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    messages_->show(nullptr, tr("Cannot open %1: %2").arg(name, file.errorString()), 8000);
    return false;
  }
  const QByteArray bytes = file.readAll();
  showLab();
  addRecentFile(path);
  rebuildRecentMenu();
  return lab_->loadText(bytes, name);
}

void MainWindow::openDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/open"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Text into the Lab"), dir,
      tr("Text: first non-empty line = query, rest = source (*.txt);;AttnScope sessions (*.attnscope.json);;"
         "All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/open"_s, QFileInfo(path).absolutePath());
  openFile(path);
}

bool MainWindow::exportTo(const QString& path) {
  if (tabs_->currentWidget() == glimpse_) {
    if (QFileInfo(path).suffix().toLower() == u"json"_s) return exportGlimpseParameters(path);
    return exportAnnotated(path);
  }
  if (tabs_->currentWidget() == alignment_) {
    const auto format = exportFormatFor(path);
    return reportExport(format && isMatrixFormat(*format) ? alignment_->exportMatrix(path)
                                                          : alignment_->exportView(path, alignment_->currentView()),
                        path);
  }
  if (tabs_->currentWidget() == caption_) {
    const auto format = exportFormatFor(path);
    return format && isMatrixFormat(*format) ? reportExport(caption_->exportMatrix(path), path)
                                             : exportCaptionGrid(path);
  }
  if (tabs_->currentWidget() == transformer_) {
    const auto format = exportFormatFor(path);
    return reportExport(format && isMatrixFormat(*format) ? transformer_->exportMatrix(path)
                                                          : transformer_->exportView(path, transformer_->currentView()),
                        path);
  }
  const auto format = exportFormatFor(path);
  if (!format) {
    messages_->show(nullptr, tr("Choose a .png, .svg, .pdf, .csv or .npy file name"), 8000);
    return false;
  }
  const attn::AttentionMap* map = lab_->currentMap();
  if (!map) {
    messages_->show(nullptr, tr("Nothing to export yet: the lab has no result"), 8000);
    return false;
  }
  return reportExport(*format == ExportFormat::Csv   ? writeMatrixCsv(*map, path)
                      : *format == ExportFormat::Npy ? writeMatrixNpy(map->weights, path)
                                                     : exportHeatmap(*lab_->heatmap(), path),
                      path);
}

void MainWindow::exportViewDialog() {
  if (tabs_->currentWidget() == glimpse_) {
    exportAnnotatedDialog();
    return;
  }
  if (tabs_->currentWidget() == caption_) {
    exportCaptionGridDialog();
    return;
  }
  QSettings settings;
  const QString dir =
      settings.value(u"paths/export"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)).toString();
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
  // Images (by name: a text file called .png goes to the glimpse tab too, which names the problem).
  const QString path = urls.front().toLocalFile();
  if (isSessionFileName(path)) {
    openSession(path);
  } else if (TransformerWorkbench::isModelOrDumpPath(path)) {
    openModel(path);
  } else if (GlimpseWorkbench::isImageFileName(path)) {
    openImage(path);
  } else {
    openFile(path);
  }
  if (urls.size() > 1) messages_->show(nullptr, tr("Opened the first of %1 dropped files").arg(urls.size()), 6000);
}

}  // namespace attn::ui

namespace attn::ui {

void MainWindow::showGlimpse() { tabs_->setCurrentWidget(glimpse_); }

void MainWindow::showLab() { tabs_->setCurrentWidget(lab_); }

void MainWindow::showTransformer() { tabs_->setCurrentWidget(transformer_); }

void MainWindow::showAlignment() { tabs_->setCurrentWidget(alignment_); }

void MainWindow::showCaption() { tabs_->setCurrentWidget(caption_); }

QString MainWindow::greeting(const QWidget* tab) const {
  if (tab == alignment_) return tr("Type a date in any form: the alignment follows every keystroke");
  if (tab == lab_) return tr("Edit the sentences or the parameters: the map follows every change");
  if (tab == caption_) return tr("Click or drag across the caption's words: each shows where the model looked");
  return {};
}

void MainWindow::updateForTab() {
  // A greeting fits the tab it was written for; a tab switch (the command line's, the saved one) swaps it.
  // The tab's own message comes back (or none: another tab's never shows here).
  const QString shown = statusBar()->currentMessage();
  const bool greetingShown =
      !shown.isEmpty() && (shown == greeting(alignment_) || shown == greeting(lab_) || shown == greeting(caption_));
  messages_->showTab(tabs_->currentWidget());
  if (greetingShown && statusBar()->currentMessage().isEmpty()) {
    const QString next = greeting(tabs_->currentWidget());
    if (!next.isEmpty()) messages_->show(tabs_->currentWidget(), next, 6000);
  }
  const bool glimpse = tabs_->currentWidget() == glimpse_;
  const bool transformer = tabs_->currentWidget() == transformer_;
  const bool alignment = tabs_->currentWidget() == alignment_;
  const bool caption = tabs_->currentWidget() == caption_;
  runLabel_->setText(glimpse       ? glimpseSummary_
                     : transformer ? transformerSummary_
                     : alignment   ? alignmentSummary_
                     : caption     ? captionSummary_
                                   : labSummary_);
  runLabel_->setToolTip(glimpse       ? tr("Last glimpse: grid, preview or exact, read time and path, frame time")
                        : transformer ? tr("Last run: model, tokens, layers x heads and engine time")
                        : alignment   ? tr("Last run: model, input length, output or label, beam width and engine time")
                        : caption     ? tr("Last caption: model, image, best caption, beam width and engine time")
                                      : tr("Last run: mechanism, map shape and engine time"));
  exportCsvAction_->setEnabled(!glimpse);
  exportLayerAction_->setEnabled(transformer);
  exportAction_->setText(glimpse   ? tr("&Export Annotated Image\u2026")
                         : caption ? tr("&Export Grid\u2026")
                                   : tr("&Export View\u2026"));
  unitRangeAction_->setEnabled(!glimpse && !transformer && !alignment && !caption);
}

QStringList MainWindow::recentImages() const { return QSettings().value(keyRecentImages()).toStringList(); }

void MainWindow::setRecentImages(const QStringList& files) {
  QSettings().setValue(keyRecentImages(), QStringList(files.mid(0, kMaxRecentFiles)));
}

void MainWindow::addRecentImage(const QString& path) {
  QStringList files = recentImages();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  setRecentImages(files);
  rebuildRecentImagesMenu();
}

void MainWindow::rebuildRecentImagesMenu() {
  recentImagesMenu_->clear();
  QStringList files = recentImages();
  const qsizetype before = files.size();
  files.removeIf([](const QString& file) { return !QFileInfo::exists(file); });
  if (files.size() != before) setRecentImages(files);
  for (int i = 0; i < files.size(); ++i) {
    const QString file = files[i];
    auto* action = recentImagesMenu_->addAction(u"&%1 %2"_s.arg(i + 1).arg(QFileInfo(file).fileName()));
    action->setToolTip(file);
    action->setStatusTip(file);
    connect(action, &QAction::triggered, this, [this, file] { openImage(file); });
  }
  recentImagesMenu_->setEnabled(!files.isEmpty());
  if (!files.isEmpty()) {
    recentImagesMenu_->addSeparator();
    recentImagesMenu_->addAction(tr("&Clear List"), this, [this] {
      setRecentImages({});
      rebuildRecentImagesMenu();
    });
  }
}

bool MainWindow::openImage(const QString& path) {
  const bool caption = tabs_->currentWidget() == caption_;
  if (!caption) showGlimpse();
  const QFileInfo info(path);
  if (!path.startsWith(u':') && !info.exists()) {
    QStringList files = recentImages();
    if (files.removeAll(info.absoluteFilePath()) > 0) {
      setRecentImages(files);
      rebuildRecentImagesMenu();
      messages_->show(nullptr, tr("%1 no longer exists; removed it from the recent images").arg(path), 8000);
    } else {
      messages_->show(nullptr, tr("%1 does not exist").arg(path), 8000);
    }
    return false;
  }
  messages_->show(nullptr, tr("Opening %1\u2026").arg(info.fileName()), 4000);
  if (caption) {
    caption_->openFile(path);
  } else {
    glimpse_->openFile(path);
  }
  return true;
}

void MainWindow::openImageDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/openImage"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation))
          .toString();
  const QString path = QFileDialog::getOpenFileName(
      this,
      tabs_->currentWidget() == caption_ ? tr("Open Image into the Captioning Tab")
                                         : tr("Open Image into the Glimpse Tab"),
      dir,
      tr("Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp);;PNG (*.png);;JPEG (*.jpg *.jpeg);;"
         "BMP (*.bmp);;TIFF (*.tif *.tiff);;WebP (*.webp);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/openImage"_s, QFileInfo(path).absolutePath());
  openImage(path);
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

void MainWindow::exportCaptionGridDialog() {
  const QString path =
      savePath(this, tr("Export Caption Grid"), u"caption-grid.png"_s,
               tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), {u"png"_s, u"svg"_s, u"pdf"_s});
  if (!path.isEmpty()) exportCaptionGrid(path);
}

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

// ---- the Transformer tab ----

QStringList MainWindow::recentModels() const { return QSettings().value(keyRecentModels()).toStringList(); }

void MainWindow::setRecentModels(const QStringList& paths) {
  QSettings().setValue(keyRecentModels(), QStringList(paths.mid(0, kMaxRecentFiles)));
}

void MainWindow::addRecentModel(const QString& path) {
  QStringList paths = recentModels();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  paths.removeAll(absolute);
  paths.prepend(absolute);
  setRecentModels(paths);
  rebuildRecentModelsMenu();
}

void MainWindow::rebuildRecentModelsMenu() {
  recentModelsMenu_->clear();
  QStringList paths = recentModels();
  const qsizetype before = paths.size();
  paths.removeIf([](const QString& path) { return !QFileInfo::exists(path); });
  if (paths.size() != before) setRecentModels(paths);
  for (int i = 0; i < paths.size(); ++i) {
    const QString path = paths[i];
    auto* action = recentModelsMenu_->addAction(u"&%1 %2"_s.arg(i + 1).arg(QFileInfo(path).fileName()));
    action->setToolTip(path);
    action->setStatusTip(path);
    connect(action, &QAction::triggered, this, [this, path] { openModel(path); });
  }
  recentModelsMenu_->setEnabled(!paths.isEmpty());
  if (!paths.isEmpty()) {
    recentModelsMenu_->addSeparator();
    recentModelsMenu_->addAction(tr("&Clear List"), this, [this] {
      setRecentModels({});
      rebuildRecentModelsMenu();
    });
  }
}

bool MainWindow::openModel(const QString& path) {
  const QFileInfo info(path);
  const QString architecture = info.exists() ? folderArchitecture(path) : QString();
  const bool captioner =
      isCaptionArchitecture(architecture) ||
      (architecture.isEmpty() && tabs_->currentWidget() == caption_ && !TransformerWorkbench::isDumpFileName(path));
  if (captioner && info.exists()) {
    showCaption();
    messages_->show(nullptr, tr("Opening %1\u2026").arg(info.fileName()), 4000);
    caption_->openModel(info.absoluteFilePath());
    return true;
  }
  const bool alignment =
      isAlignmentArchitecture(architecture) ||
      (architecture.isEmpty() && tabs_->currentWidget() == alignment_ && !TransformerWorkbench::isDumpFileName(path));
  if (alignment && info.exists()) {
    showAlignment();
    messages_->show(nullptr, tr("Opening %1\u2026").arg(info.fileName()), 4000);
    alignment_->openModel(info.absoluteFilePath());
    return true;
  }
  showTransformer();
  if (!info.exists() && path == TransformerWorkbench::demoModelKey()) {  // the bundled demo, by name
    if (transformer_->openDemo()) return true;
  }
  if (!info.exists()) {
    QStringList paths = recentModels();
    if (paths.removeAll(info.absoluteFilePath()) > 0) {
      setRecentModels(paths);
      rebuildRecentModelsMenu();
      messages_->show(nullptr, tr("%1 no longer exists; removed it from the recent models").arg(path), 8000);
    } else {
      messages_->show(nullptr, tr("%1 does not exist").arg(path), 8000);
    }
    return false;
  }
  messages_->show(nullptr, tr("Opening %1\u2026").arg(info.fileName()), 4000);
  transformer_->openPath(path);
  return true;
}

void MainWindow::openModelDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/openModel"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
          .toString();
  const QString path =
      QFileDialog::getExistingDirectory(this, tr("Open Model Folder (config.json + *.safetensors)"), dir);
  if (path.isEmpty()) return;
  settings.setValue(u"paths/openModel"_s, QFileInfo(path).absolutePath());
  openModel(path);
}

void MainWindow::openDumpDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/openDump"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
          .toString();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Attention Dump"), dir,
                                                    tr("Attention dumps (*.attn.safetensors);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/openDump"_s, QFileInfo(path).absolutePath());
  openModel(path);
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

}  // namespace attn::ui
