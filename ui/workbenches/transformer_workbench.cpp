#include "views/export.h"
#include "workbenches/sample_images.h"
#include "workbenches/transformer_workbench.h"

#include "models/head_stats_model.h"
#include "render/overlay_render.h"
#include "views/head_grid_view.h"
#include "views/head_stats_view.h"
#include "views/heatmap_view.h"
#include "views/image_overlay_view.h"
#include "views/token_lines_view.h"
#include "workbenches/side_panel.h"

#include "render/qcustomplot.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using attn::models::Family;

QString fromStd(const std::string& text) { return QString::fromStdString(text); }

QString defaultText(Family family) {
  switch (family) {
    case Family::Gpt2: return u"The quick brown fox jumps over the lazy dog because it"_s;
    default: return u"The cat sat on the [MASK] because it was tired."_s;
  }
}

// The texts the tab puts in the box itself (replaced by the next model's example; anything else was typed).
bool isExampleText(const QString& text) {
  return text.isEmpty() || text == defaultText(Family::Bert) || text == defaultText(Family::Gpt2) ||
         text == TransformerWorkbench::demoText();
}

}  // namespace

TransformerWorkbench::TransformerWorkbench(QWidget* parent)
    : QWidget(parent), worker_(std::make_unique<TransformerWorker>()) {
  setObjectName(u"transformerWorkbench"_s);
  connect(worker_.get(), &TransformerWorker::loadProgress, this, &TransformerWorkbench::onLoadProgress,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::loaded, this, &TransformerWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::loadFailed, this, &TransformerWorkbench::onLoadFailed,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::imageLoaded, this, &TransformerWorkbench::onImageLoaded,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::imageFailed, this, &TransformerWorkbench::onImageFailed,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::finished, this, &TransformerWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::previewReady, this, &TransformerWorkbench::onPreview,
          Qt::QueuedConnection);
  thread_.host(worker_.get(), u"transformer worker"_s);

  // Typing: every edit is posted at once. The worker holds one pending request and a newer one replaces
  // it, so a burst of keystrokes costs the run in flight plus one run of the newest text, with no pause
  // added. Results are applied on the next turn of the event loop, so a burst of outcomes (a rollout
  // slider dragged over a finished run) draws the newest once.
  applyTimer_.setSingleShot(true);
  applyTimer_.setInterval(0);
  connect(&applyTimer_, &QTimer::timeout, this, &TransformerWorkbench::applyPending);

  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"transformerSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  splitter_ = frame.splitter;
  sideScroll_ = frame.scroll;
  updateInputControls();
}

TransformerWorkbench::~TransformerWorkbench() {
  applyTimer_.stop();
  worker_->cancelLoad();
  thread_.stop();
  worker_.reset();
}

void TransformerWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  auto* modelGroup = new QGroupBox(tr("Model"), panel);
  auto* modelLayout = new QVBoxLayout(modelGroup);
  modelLabel_ = new QLabel(tr("No model: open a model folder (config.json + *.safetensors) or an attention dump "
                              "(*.attn.safetensors)."),
                           modelGroup);
  modelLabel_->setObjectName(u"modelDescription"_s);
  modelLabel_->setWordWrap(true);
  modelLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  modelLayout->addWidget(modelLabel_);
  auto* buttons = new QHBoxLayout();
  auto* openModel = new QPushButton(tr("Open &Model\u2026"), modelGroup);
  openModel->setToolTip(
      tr("A Hugging Face model folder: config.json, *.safetensors and tokenizer files (Ctrl+Shift+M)"));
  connect(openModel, &QPushButton::clicked, this, &TransformerWorkbench::openModelRequested);
  auto* openDump = new QPushButton(tr("Open &Dump\u2026"), modelGroup);
  openDump->setToolTip(tr("Any model's attention saved as *.attn.safetensors (README: ten lines of Python)"));
  connect(openDump, &QPushButton::clicked, this, &TransformerWorkbench::openDumpRequested);
  buttons->addWidget(openModel);
  buttons->addWidget(openDump);
  modelLayout->addLayout(buttons);
  auto* demo = new QPushButton(tr("Open the &Demo Model"), modelGroup);
  demo->setObjectName(u"openDemo"_s);
  demo->setToolTip(
      tr("induction-gpt2: a 2-layer character GPT-2 trained by AttnScope to continue repeated text; "
         "type a random string twice and look at its previous-token and copying heads"));
  connect(demo, &QPushButton::clicked, this, [this] { openDemo(); });
  modelLayout->addWidget(demo);
  auto* progressRow = new QHBoxLayout();
  loadProgress_ = new QProgressBar(modelGroup);
  loadProgress_->setObjectName(u"loadProgress"_s);
  loadProgress_->setRange(0, 100);
  cancelButton_ = new QPushButton(tr("Cancel"), modelGroup);
  cancelButton_->setObjectName(u"cancelLoad"_s);
  cancelButton_->setToolTip(tr("Stop loading; the model that was open stays"));
  connect(cancelButton_, &QPushButton::clicked, this, &TransformerWorkbench::cancelLoad);
  progressRow->addWidget(loadProgress_, 1);
  progressRow->addWidget(cancelButton_);
  modelLayout->addLayout(progressRow);
  loadNote_ = new QLabel(modelGroup);
  loadNote_->setWordWrap(true);
  loadNote_->setForegroundRole(QPalette::PlaceholderText);
  modelLayout->addWidget(loadNote_);
  loadProgress_->setVisible(false);
  cancelButton_->setVisible(false);
  loadNote_->setVisible(false);
  layout->addWidget(modelGroup);

  inputGroup_ = new QGroupBox(tr("Input"), panel);
  auto* inputLayout = new QVBoxLayout(inputGroup_);
  textLabel_ = new QLabel(tr("&Text (runs as you type):"), inputGroup_);
  textEdit_ = new InputEdit(inputGroup_);
  textEdit_->setObjectName(u"transformerText"_s);
  textEdit_->setTabChangesFocus(true);
  textEdit_->setPlaceholderText(tr("Text for the model; [MASK] asks BERT for a word"));
  textEdit_->setFixedHeight(textEdit_->fontMetrics().lineSpacing() * 4 + 14);
  textEdit_->setPlainText(defaultText(Family::Bert));
  textLabel_->setBuddy(textEdit_);
  inputLayout->addWidget(textLabel_);
  inputLayout->addWidget(textEdit_);
  pairLabel_ = new QLabel(tr("Second &sentence (BERT pair, optional):"), inputGroup_);
  pairEdit_ = new QLineEdit(inputGroup_);
  pairEdit_->setObjectName(u"transformerPair"_s);
  pairEdit_->setClearButtonEnabled(true);
  pairEdit_->setPlaceholderText(tr("[CLS] text [SEP] this [SEP], token types 0 and 1"));
  pairEdit_->setAcceptDrops(false);
  pairLabel_->setBuddy(pairEdit_);
  inputLayout->addWidget(pairLabel_);
  inputLayout->addWidget(pairEdit_);
  imageRow_ = new QWidget(inputGroup_);
  auto* imageLayout = new QVBoxLayout(imageRow_);
  imageLayout->setContentsMargins(0, 0, 0, 0);
  auto* imageButtons = new QHBoxLayout();
  sampleBox_ = new QComboBox(imageRow_);
  sampleBox_->setObjectName(u"transformerSample"_s);
  for (const auto& sample : sampleImages()) sampleBox_->addItem(sample.name, sample.key);
  sampleBox_->setToolTip(tr("A bundled photo for the vision transformer"));
  auto* openImageButton = new QPushButton(tr("Open &Image\u2026"), imageRow_);
  connect(openImageButton, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Image for the Vision Transformer"), QString(),
                                     tr("Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp);;All files (*)"));
    if (!path.isEmpty()) openImage(path);
  });
  imageButtons->addWidget(sampleBox_, 1);
  imageButtons->addWidget(openImageButton);
  imageLayout->addLayout(imageButtons);
  imageInfo_ = new QLabel(imageRow_);
  imageInfo_->setForegroundRole(QPalette::PlaceholderText);
  imageLayout->addWidget(imageInfo_);
  inputLayout->addWidget(imageRow_);
  inputNote_ = new QLabel(inputGroup_);
  inputNote_->setWordWrap(true);
  inputNote_->setForegroundRole(QPalette::PlaceholderText);
  inputLayout->addWidget(inputNote_);
  layout->addWidget(inputGroup_);
  connect(textEdit_, &QPlainTextEdit::textChanged, this, &TransformerWorkbench::post);
  connect(pairEdit_, &QLineEdit::textChanged, this, &TransformerWorkbench::post);
  connect(sampleBox_, &QComboBox::activated, this,
          [this](int index) { openSample(sampleBox_->itemData(index).toString()); });

  auto* predictionGroup = new QGroupBox(tr("Predictions"), panel);
  auto* predictionLayout = new QVBoxLayout(predictionGroup);
  predictions_ = new QListWidget(predictionGroup);
  predictions_->setObjectName(u"predictions"_s);
  predictions_->setToolTip(tr("[MASK] fillers (BERT), the next token (GPT-2) or the top classes (ViT)"));
  predictions_->setFixedHeight(predictions_->fontMetrics().lineSpacing() * 7 + 8);
  predictionLayout->addWidget(predictions_);
  layout->addWidget(predictionGroup);

  auto* matrixGroup = new QGroupBox(tr("Matrix"), panel);
  auto* matrixForm = new QFormLayout(matrixGroup);
  matrixForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  matrixModeBox_ = new QComboBox(matrixGroup);
  matrixModeBox_->setObjectName(u"matrixMode"_s);
  matrixModeBox_->addItem(tr("Selected head"), int(MatrixMode::Head));
  matrixModeBox_->addItem(tr("Layer mean (all heads)"), int(MatrixMode::LayerMean));
  matrixModeBox_->addItem(tr("Rollout (all layers)"), int(MatrixMode::Rollout));
  matrixModeBox_->setToolTip(
      tr("What the matrix shows: one head, the mean of the layer's heads, or attention "
         "rollout (Abnar & Zuidema 2020)"));
  matrixForm->addRow(tr("S&how:"), matrixModeBox_);
  fusionBox_ = new QComboBox(matrixGroup);
  fusionBox_->setObjectName(u"rolloutFusion"_s);
  fusionBox_->addItem(tr("mean"), int(attn::analysis::HeadFusion::Mean));
  fusionBox_->addItem(tr("max"), int(attn::analysis::HeadFusion::Max));
  fusionBox_->addItem(tr("min"), int(attn::analysis::HeadFusion::Min));
  fusionBox_->setToolTip(tr("How a layer's heads are fused before rolling out"));
  matrixForm->addRow(tr("&Fusion:"), fusionBox_);
  discardSpin_ = new QDoubleSpinBox(matrixGroup);
  discardSpin_->setObjectName(u"rolloutDiscard"_s);
  discardSpin_->setRange(0.0, 0.99);
  discardSpin_->setSingleStep(0.05);
  discardSpin_->setDecimals(2);
  discardSpin_->setToolTip(tr("Share of each layer's lowest fused weights set to zero (vit-explain)"));
  matrixForm->addRow(tr("&Discard ratio:"), discardSpin_);
  residualSpin_ = new QDoubleSpinBox(matrixGroup);
  residualSpin_->setObjectName(u"rolloutResidual"_s);
  residualSpin_->setRange(0.0, 1.0);
  residualSpin_->setSingleStep(0.05);
  residualSpin_->setDecimals(2);
  residualSpin_->setValue(0.5);
  residualSpin_->setToolTip(tr("Residual r: A' = (1 - r) A + r I (0.5 in the paper)"));
  matrixForm->addRow(tr("&Residual:"), residualSpin_);
  layout->addWidget(matrixGroup);
  connect(matrixModeBox_, &QComboBox::currentIndexChanged, this, [this] { updateMatrix(); });
  connect(fusionBox_, &QComboBox::currentIndexChanged, this, &TransformerWorkbench::post);
  connect(discardSpin_, &QDoubleSpinBox::valueChanged, this, &TransformerWorkbench::post);
  connect(residualSpin_, &QDoubleSpinBox::valueChanged, this, &TransformerWorkbench::post);

  auto* displayGroup = new QGroupBox(tr("Display"), panel);
  auto* displayForm = new QFormLayout(displayGroup);
  displayForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  colormapBox_ = new QComboBox(displayGroup);
  for (const auto& info : render::colormaps()) colormapBox_->addItem(QString::fromLatin1(info.name), int(info.id));
  colormapBox_->setToolTip(tr("Colour map of the matrix, the model view and the image overlay"));
  displayForm->addRow(tr("Colour &map:"), colormapBox_);
  thresholdSpin_ = new QDoubleSpinBox(displayGroup);
  thresholdSpin_->setObjectName(u"lineThreshold"_s);
  thresholdSpin_->setRange(0.0, 0.5);
  thresholdSpin_->setDecimals(3);
  thresholdSpin_->setSingleStep(0.005);
  thresholdSpin_->setValue(0.01);
  thresholdSpin_->setToolTip(tr("Head view: weights below this are not drawn"));
  displayForm->addRow(tr("&Line threshold:"), thresholdSpin_);
  overlaySourceBox_ = new QComboBox(displayGroup);
  overlaySourceBox_->setObjectName(u"overlaySource"_s);
  overlaySourceBox_->addItem(tr("Rollout"), int(OverlaySource::Rollout));
  overlaySourceBox_->addItem(tr("Selected head"), int(OverlaySource::Head));
  overlaySourceBox_->setToolTip(tr("ViT: what is drawn over the photo (the class token's attention to the patches)"));
  displayForm->addRow(tr("&Overlay:"), overlaySourceBox_);
  alphaSlider_ = new QSlider(Qt::Horizontal, displayGroup);
  alphaSlider_->setObjectName(u"overlayAlpha"_s);
  alphaSlider_->setRange(0, 100);
  alphaSlider_->setValue(65);
  alphaSlider_->setToolTip(tr("Opacity of the attention over the photo"));
  displayForm->addRow(tr("Overlay &alpha:"), alphaSlider_);
  layout->addWidget(displayGroup);
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  connect(thresholdSpin_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { tokenLines_->setThreshold(float(v)); });
  connect(overlaySourceBox_, &QComboBox::currentIndexChanged, this, [this] { updateOverlay(); });
  connect(alphaSlider_, &QSlider::valueChanged, this, [this] { updateOverlay(); });
  layout->addStretch(1);
}

void TransformerWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);
  errorBanner_ = makeMessageStrip(area, u"transformerError"_s, MessageStrip::Error);
  layout->addWidget(errorBanner_);
  warningStrip_ = makeMessageStrip(area, u"transformerWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);
  selectionLabel_ = new QLabel(area);
  selectionLabel_->setObjectName(u"transformerSelection"_s);
  selectionLabel_->setTextFormat(Qt::PlainText);
  layout->addWidget(selectionLabel_);

  auto* views = new QSplitter(Qt::Horizontal, area);
  views->setChildrenCollapsible(false);
  viewTabs_ = new QTabWidget(views);
  viewTabs_->setObjectName(u"transformerViews"_s);
  viewTabs_->setDocumentMode(true);
  tokenLines_ = new TokenLinesView(viewTabs_);
  viewTabs_->addTab(tokenLines_, tr("&Head View"));
  gridScroll_ = new QScrollArea(viewTabs_);
  gridScroll_->setWidgetResizable(true);
  gridScroll_->setFrameShape(QFrame::NoFrame);
  headGrid_ = new HeadGridView(gridScroll_);
  gridScroll_->setWidget(headGrid_);
  viewTabs_->addTab(gridScroll_, tr("M&odel View"));
  statsModel_ = new HeadStatsModel(this);
  statsProxy_ = new QSortFilterProxyModel(this);
  statsProxy_->setSourceModel(statsModel_);
  statsProxy_->setSortRole(HeadStatsModel::SortRole);
  statsTable_ = new HeadStatsView(viewTabs_);
  statsTable_->setObjectName(u"headStats"_s);
  statsTable_->setModel(statsProxy_);
  statsTable_->setSortingEnabled(true);
  statsTable_->sortByColumn(HeadStatsModel::Layer, Qt::AscendingOrder);
  statsTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  statsTable_->setSelectionMode(QAbstractItemView::SingleSelection);
  statsTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  statsTable_->verticalHeader()->setVisible(false);
  statsTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  statsTable_->setAlternatingRowColors(true);
  viewTabs_->addTab(statsTable_, tr("&Statistics"));
  overlay_ = new ImageOverlayView(viewTabs_);
  overlay_->setPlaceholder(
      tr("The image view shows a vision transformer's attention over its photo.\n"
         "Open a ViT model folder to use it."));
  viewTabs_->addTab(overlay_, tr("&Image"));

  auto* matrixPane = new QWidget(views);
  auto* matrixLayout = new QVBoxLayout(matrixPane);
  matrixLayout->setContentsMargins(0, 0, 0, 0);
  matrixTitle_ = new QLabel(matrixPane);
  matrixTitle_->setObjectName(u"matrixTitle"_s);
  matrixTitle_->setTextFormat(Qt::PlainText);
  matrixTitle_->setWordWrap(true);
  matrixLayout->addWidget(matrixTitle_);
  heatmap_ = new HeatmapView(HeatmapView::Style::Full, matrixPane);
  heatmap_->setObjectName(u"transformerHeatmap"_s);
  heatmap_->setEmptyText(emptyMatrixText());
  matrixLayout->addWidget(heatmap_, 1);
  views->addWidget(viewTabs_);
  views->addWidget(matrixPane);
  views->setStretchFactor(0, 1);
  views->setStretchFactor(1, 1);
  layout->addWidget(views, 1);

  // Linked selection and hover.
  connect(headGrid_, &HeadGridView::headActivated, this, &TransformerWorkbench::openHead);
  connect(headGrid_, &HeadGridView::headHovered, this, [this](int layer, int head) {
    if (layer < 0 || !statsModel_->at(statsModel_->rowOf(layer, head))) return;
    const auto* s = statsModel_->at(statsModel_->rowOf(layer, head));
    emit statusMessage(tr("layer %1 \u00b7 head %2 \u00b7 entropy %3 \u00b7 mean distance %4 \u00b7 max %5")
                           .arg(layer)
                           .arg(head)
                           .arg(double(s->entropy), 0, 'f', 3)
                           .arg(double(s->mean_distance), 0, 'f', 2)
                           .arg(double(s->max_weight), 0, 'f', 3),
                       3000);
  });
  connect(tokenLines_, &TokenLinesView::layerChanged, this, [this](int layer) {
    if (!selecting_) selectHead(layer, head_);
  });
  connect(tokenLines_, &TokenLinesView::headSoloed, this, [this](int head) {
    if (!selecting_) selectHead(tokenLines_->layer(), head);
  });
  connect(tokenLines_, &TokenLinesView::tokenSelected, this, [this](int, int) { updateSelectionLabel(); });
  connect(heatmap_, &HeatmapView::cellHovered, this, [this](int row, int) {
    tokenLines_->setHoverToken(render::TokenHit{render::TokenSide::Query, row});
  });
  heatmap_->plot()->installEventFilter(this);
  connect(statsTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (selecting_ || !current.isValid()) return;
            const auto* s = statsModel_->at(statsProxy_->mapToSource(current).row());
            if (!s) return;
            openHead(s->layer, s->head);
          });
  connect(viewTabs_, &QTabWidget::currentChanged, this, [this] { matrixActive_ = false; });
}

bool TransformerWorkbench::eventFilter(QObject* watched, QEvent* event) {
  if (watched == heatmap_->plot()) {
    if (event->type() == QEvent::Leave) tokenLines_->setHoverToken(std::nullopt);
    if (event->type() == QEvent::MouseButtonPress) matrixActive_ = true;
  }
  return QWidget::eventFilter(watched, event);
}

// ---- sources ----

bool TransformerWorkbench::isDumpFileName(const QString& path) {
  return path.endsWith(u".attn.safetensors"_s, Qt::CaseInsensitive);
}

bool TransformerWorkbench::isModelOrDumpPath(const QString& path) {
  return isDumpFileName(path) || QFileInfo(path).isDir();
}

void TransformerWorkbench::openPath(const QString& path) {
  ++loadRequested_;
  requestedSource_ = path;
  loadingPath_ = path;
  setLoadingUi(true);
  loadNote_->setText(tr("Opening %1\u2026").arg(QFileInfo(path).fileName()));
  worker_->load(loadRequested_, path);
}

bool TransformerWorkbench::openDemo() {
  const QString resource = u":/models/"_s + demoModelKey();
  const QStringList files{u"config.json"_s, u"model.safetensors"_s, u"vocab.json"_s, u"merges.txt"_s,
                          u"MODEL_CARD.md"_s};
  if (!QFileInfo::exists(resource + u"/config.json"_s)) return false;
  if (!demoDir_) {
    auto dir = std::make_unique<QTemporaryDir>();
    if (!dir->isValid()) {
      emit sourceFailed(tr("Could not make a temporary folder for the demo model: %1").arg(dir->errorString()));
      return false;
    }
    // A folder named as the model, so that the tab and its title bar say "induction-gpt2".
    const QString folder = dir->filePath(demoModelKey());
    if (!QDir().mkpath(folder)) {
      emit sourceFailed(tr("Could not make a temporary folder for the demo model in %1").arg(dir->path()));
      return false;
    }
    for (const QString& name : files) {
      const QString target = folder + u'/' + name;
      if (!QFile::copy(resource + u'/' + name, target)) {
        emit sourceFailed(tr("Could not write the demo model's %1 into %2").arg(name, dir->path()));
        return false;
      }
      QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
    }
    demoDir_ = std::move(dir);
  }
  openPath(demoDir_->filePath(demoModelKey()));  // the example text follows with the model
  requestedSource_ = demoModelKey();
  return true;
}

void TransformerWorkbench::cancelLoad() {
  if (!isLoading()) return;
  worker_->cancelLoad();
  loadNote_->setText(tr("Cancelling\u2026"));
}

void TransformerWorkbench::setLoadingUi(bool loading) {
  loadProgress_->setVisible(loading);
  cancelButton_->setVisible(loading);
  loadNote_->setVisible(loading || !loadNote_->text().isEmpty());
  if (loading) loadProgress_->setValue(0);
  emit loadingChanged(loading);
}

void TransformerWorkbench::onLoadProgress(quint64 serial, int percent, const QString& what) {
  if (serial != loadRequested_) return;
  loadProgress_->setValue(percent);
  loadNote_->setText(what);
}

void TransformerWorkbench::onLoaded(std::shared_ptr<const TransformerSource> source) {
  if (source->serial != loadRequested_) return;  // a newer load is on its way
  loadSettled_ = source->serial;
  source_ = std::move(source);
  loadNote_->clear();
  setLoadingUi(false);
  errorBanner_->setVisible(false);
  lastError_.clear();
  modelLabel_->setText(source_->description + u"\n"_s + QDir::toNativeSeparators(source_->path));
  modelLabel_->setToolTip(source_->path);
  // Keep what the user typed; swap one example for the family's own.
  if (source_->model && !source_->isVision()) {
    const QString current = textEdit_->toPlainText();
    if (isExampleText(current)) {
      const QSignalBlocker block(textEdit_);
      const bool demo = demoDir_ && source_->path == demoDir_->filePath(demoModelKey());
      textEdit_->setPlainText(demo ? demoText() : defaultText(source_->family()));
    }
  }
  updateInputControls();
  outcome_.reset();
  pending_.reset();
  heatmap_->setEmptyText(emptyMatrixText());
  emit sourceLoaded(source_->path);
  emit statusMessage(tr("Opened %1 (%2 ms)").arg(source_->name).arg(source_->loadMs, 0, 'f', 0), 6000);
  if (source_->isVision() && !image_) {
    openSample(sampleBox_->currentData().toString());  // runs once the photo is decoded
    return;
  }
  post();
}

void TransformerWorkbench::onLoadFailed(quint64 serial, const QString& message, bool cancelled) {
  if (serial != loadRequested_) return;
  loadSettled_ = serial;
  const QString name = QFileInfo(loadingPath_).fileName();
  if (cancelled) {
    loadNote_->setText(source_ ? tr("Loading %1 cancelled; %2 stays open.").arg(name, source_->name)
                               : tr("Loading %1 cancelled.").arg(name));
    requestedSource_ = !source_                                                          ? QString()
                       : demoDir_ && source_->path == demoDir_->filePath(demoModelKey()) ? demoModelKey()
                                                                                         : source_->path;
    setLoadingUi(false);
    emit statusMessage(loadNote_->text(), 6000);
    emit sourceFailed(tr("cancelled"));
    return;
  }
  loadNote_->clear();
  setLoadingUi(false);
  lastError_ = message;
  requestedSource_ = !source_                                                          ? QString()
                     : demoDir_ && source_->path == demoDir_->filePath(demoModelKey()) ? demoModelKey()
                                                                                       : source_->path;
  showError(source_ ? tr("Cannot open %1: %2\nThe previous model (%3) stays loaded.").arg(name, message, source_->name)
                    : tr("Cannot open %1: %2").arg(name, message));
  emit statusMessage(tr("Cannot open %1: %2").arg(name, message), 0);
  emit sourceFailed(message);
}

void TransformerWorkbench::showError(const QString& message) {
  errorBanner_->setText(message);
  errorBanner_->setVisible(true);
}

void TransformerWorkbench::updateInputControls() {
  const bool dump = source_ && source_->kind == TransformerSource::Kind::Dump;
  const bool vision = source_ && source_->isVision();
  const bool pair = source_ && source_->takesPair();
  textLabel_->setVisible(!vision);
  textEdit_->setVisible(!vision);
  textEdit_->setEnabled(!dump);
  pairLabel_->setVisible(pair);
  pairEdit_->setVisible(pair);
  imageRow_->setVisible(vision);
  if (!source_) {
    inputNote_->setText(
        tr("Open a model: File > Open Model\u2026 (Ctrl+Shift+M), or drop a model folder or a "
           ".attn.safetensors file on the window."));
  } else if (dump) {
    inputNote_->setText(tr("An attention dump: its tokens and weights are fixed."));
  } else if (source_->family() == Family::Gpt2) {
    inputNote_->setText(tr("GPT-2 attends causally: each token sees itself and the tokens before it."));
  } else if (vision) {
    inputNote_->setText(
        tr("The photo is resized to the model's input and cut into patches; token 0 is the class "
           "token."));
  } else {
    inputNote_->setText(tr("Write [MASK] where BERT should guess a word."));
  }
}

// ---- input ----

void TransformerWorkbench::setText(const QString& text) { textEdit_->setPlainText(text); }
QString TransformerWorkbench::text() const { return textEdit_->toPlainText(); }
void TransformerWorkbench::setPair(const QString& pair) { pairEdit_->setText(pair); }

bool TransformerWorkbench::openSample(const QString& key) {
  const QString resource = sampleImageResource(key);
  if (resource.isEmpty()) return false;
  const int index = sampleBox_->findData(key);
  if (index >= 0) sampleBox_->setCurrentIndex(index);
  requestedImage_ = resource;
  ++imageRequested_;
  worker_->loadImage(imageRequested_, resource, QFileInfo(resource).fileName());
  return true;
}

void TransformerWorkbench::openImage(const QString& path) {
  ++imageRequested_;
  requestedImage_ = path;
  worker_->loadImage(imageRequested_, path, QFileInfo(path).fileName());
}

void TransformerWorkbench::onImageLoaded(std::shared_ptr<const VisionInput> image) {
  if (image->serial != imageRequested_) return;
  image_ = std::move(image);
  imageInfo_->setText(
      tr("%1 \u00b7 %2 \u00d7 %3").arg(image_->name).arg(image_->image->width).arg(image_->image->height));
  if (!image_->path.startsWith(u':')) {
    const QSignalBlocker block(sampleBox_);
    sampleBox_->setCurrentIndex(-1);
  }
  post();
}

void TransformerWorkbench::onImageFailed(quint64 serial, const QString& message) {
  if (serial != imageRequested_) return;
  lastError_ = message;
  requestedImage_ = image_ ? image_->path : QString();
  showError(tr("Cannot open the image: %1. The previous image stays.").arg(message));
  emit statusMessage(tr("Cannot open the image: %1").arg(message), 0);
}

// ---- runs ----

bool TransformerWorkbench::isIdle() const { return !isLoading() && !applyTimer_.isActive() && settled_ >= submitted_; }

void TransformerWorkbench::post() {
  if (!source_) return;
  if (source_->isVision() && !image_) return;
  TransformerRequest request;
  if (source_->model && !source_->isVision()) {
    request.text = textEdit_->toPlainText().toStdString();
    if (source_->takesPair()) request.pair = pairEdit_->text().toStdString();
  }
  if (source_->isVision()) request.image = image_;
  request.rollout = rolloutOptions();
  request.run.top_k = 5;
  request.previewLayer = layer_;
  ++submitted_;
  worker_->submit(submitted_, source_, std::move(request));
}

void TransformerWorkbench::onFinished(std::shared_ptr<const TransformerOutcome> outcome) {
  if (!source_ || outcome->sourceSerial != source_->serial) return;
  if (outcome->generation <= shown_) return;
  if (!outcome->ok()) {
    if (outcome->generation != submitted_) return;  // a newer request reports for itself
    settled_ = outcome->generation;
    if (previewed_ == outcome->generation && outcome_) {  // the early layer of a run that then failed
      tokenLines_->setTrace(outcome_->trace, outcome_->stage);
      updateMatrix();
    }
    const QString message = fromStd(outcome->error ? outcome->error->message() : std::string());
    lastError_ = message;
    showError(tr("Input refused: %1. The previous view stays.").arg(message));
    emit statusMessage(tr("Input refused: %1").arg(message), 0);
    return;
  }
  pending_ = std::move(outcome);
  if (!applyTimer_.isActive()) applyTimer_.start();
}

void TransformerWorkbench::onPreview(std::shared_ptr<const TransformerPreview> preview) {
  // Only for the newest request, ahead of its outcome, and while its layer is still the one in view.
  if (!source_ || preview->sourceSerial != source_->serial) return;
  if (preview->generation != submitted_ || preview->generation <= shown_ || preview->layer != layer_) return;
  tokenLines_->setTrace(preview->trace, preview->stage);
  if (const MatrixMode mode = matrixMode(); mode != MatrixMode::Rollout) {
    if (auto map = preview->trace->map(preview->stage, layer_, mode == MatrixMode::Head ? head_ : -1)) {
      matrixMap_ = std::move(map);
      heatmap_->setMap(matrixMap_);
    }
  }
  previewed_ = preview->generation;
  emit previewShown(preview->generation);
}

void TransformerWorkbench::applyPending() {
  auto next = std::move(pending_);
  pending_.reset();
  if (!next || next->generation <= shown_) return;
  const auto previous = outcome_;
  outcome_ = next;
  shown_ = next->generation;
  settled_ = std::max(settled_, shown_);
  errorBanner_->setVisible(false);
  lastError_.clear();

  if (!previous || previous->trace != next->trace) tokenLines_->setTrace(next->trace, next->stage);
  if (!previous || previous->thumbnails != next->thumbnails) headGrid_->setThumbnails(next->thumbnails);
  if (!previous || previous->stats != next->stats) {
    const bool vision = next->run->grid_rows > 0;
    const bool gpt = source_ && source_->model && source_->family() == Family::Gpt2;
    statsModel_->setSpecialNames(vision ? tr("class token") : (gpt ? tr("first token") : u"[CLS]"_s),
                                 vision || gpt ? tr("others") : u"[SEP]"_s);
    statsModel_->setStatistics(next->stats ? *next->stats : std::vector<attn::analysis::HeadStats>{});
  }
  // Keep the selection inside the new shape.
  const int layers = next->trace->layer_count(next->stage);
  const auto* layer = next->trace->find(next->stage, std::clamp(layer_, 0, std::max(0, layers - 1)));
  const int heads = layer ? layer->maps.heads() : 0;
  selectHead(std::clamp(layer_, 0, std::max(0, layers - 1)), std::clamp(head_, 0, std::max(0, heads - 1)));
  // The selection of applyState, on the first result of what it set.
  if (pendingLayer_ >= 0 && next->generation == submitted_ && !isLoading()) {
    selectHead(pendingLayer_, pendingHead_);
    pendingLayer_ = pendingHead_ = -1;
  }
  updateMatrix();
  updateOverlay();
  updatePredictions();
  updateWarnings();

  const auto& run = *next->run;
  const QString what =
      source_ && source_->kind == TransformerSource::Kind::Dump
          ? tr("dump")
          : (source_ && source_->model ? fromStd(std::string(attn::models::to_string(source_->family()))) : QString());
  runSummary_ = tr("transformer: %1 \u00b7 %2 tokens \u00b7 %3 layers \u00d7 %4 heads \u00b7 %5 ms")
                    .arg(what)
                    .arg(run.attention.tokens.size())
                    .arg(layers)
                    .arg(heads)
                    .arg(next->runMs + next->analysisMs, 0, 'f', 1);
  emit runSummaryChanged(runSummary_);
  emit resultShown(next->generation);
}

QStringList TransformerWorkbench::warnings() const {
  QStringList out;
  if (source_) out += source_->warnings;
  if (outcome_) {
    for (const auto& w : outcome_->run->warnings) out.append(fromStd(w));
    if (!outcome_->rolloutError.isEmpty()) out.append(tr("rollout: %1").arg(outcome_->rolloutError));
  }
  return out;
}

void TransformerWorkbench::updateWarnings() {
  const QStringList list = warnings();
  warningStrip_->setText(u"\u26a0 "_s + list.join(u"\n\u26a0 "_s));
  warningStrip_->setVisible(!list.isEmpty());
}

void TransformerWorkbench::updatePredictions() {
  predictions_->clear();
  if (!outcome_) return;
  const auto& run = *outcome_->run;
  const auto& tokens = run.attention.tokens;
  for (const auto& prediction : run.predictions) {
    if (!run.labels.empty()) break;  // ViT: the classes below say the same
    const QString at = std::size_t(prediction.position) < tokens.size()
                           ? render::tokenLabel(tokens[std::size_t(prediction.position)])
                           : QString::number(prediction.position);
    auto* header =
        new QListWidgetItem(tr("after \u201c%1\u201d (position %2):").arg(at).arg(prediction.position), predictions_);
    QFont bold = header->font();
    bold.setBold(true);
    header->setFont(bold);
    for (const auto& candidate : prediction.top) {
      predictions_->addItem(u"   %1   %2%"_s.arg(render::tokenLabel(candidate.text, 24))
                                .arg(100.0 * double(candidate.probability), 0, 'f', 1));
    }
    if (source_ && source_->family() != Family::Gpt2) {
      header->setText(tr("[MASK] at position %1:").arg(prediction.position));
    }
  }
  for (const auto& label : run.labels) predictions_->addItem(fromStd(label));
  if (predictions_->count() == 0) {
    QString text = tr("No predictions");
    if (source_->kind == TransformerSource::Kind::Dump) {
      text = tr("A dump holds attention only");
    } else if (source_->model && !source_->model->has_prediction_head()) {
      text = tr("No prediction head in this checkpoint");
    } else if (source_->model && source_->family() != Family::Gpt2 && !source_->isVision()) {
      text = tr("Write [MASK] to see BERT's guesses");
    }
    auto* none = new QListWidgetItem(text, predictions_);
    none->setForeground(palette().color(QPalette::PlaceholderText));
  }
}

// ---- selection ----

void TransformerWorkbench::selectHead(int layer, int head) {
  if (selecting_) return;
  selecting_ = true;
  if (outcome_) {
    const int layers = outcome_->trace->layer_count(outcome_->stage);
    layer = std::clamp(layer, 0, std::max(0, layers - 1));
    const auto* l = outcome_->trace->find(outcome_->stage, layer);
    head = std::clamp(head, 0, std::max(0, (l ? l->maps.heads() : 1) - 1));
  }
  const bool changed = layer != layer_ || head != head_;
  layer_ = layer;
  head_ = head;
  tokenLines_->setLayer(layer_);
  headGrid_->setSelected(layer_, head_);
  selectStatsRow();
  selecting_ = false;
  if (changed) {
    updateMatrix();
    updateOverlay();
    emit selectionChanged(layer_, head_);
  }
  updateSelectionLabel();
}

void TransformerWorkbench::openHead(int layer, int head) {
  selectHead(layer, head);
  const bool was = selecting_;
  selecting_ = true;
  tokenLines_->soloHead(head_);
  selecting_ = was;
}

void TransformerWorkbench::selectStatsRow() {
  const int row = statsModel_->rowOf(layer_, head_);
  if (row < 0) return;
  const QModelIndex index = statsProxy_->mapFromSource(statsModel_->index(row, 0));
  const bool was = selecting_;
  selecting_ = true;
  statsTable_->selectionModel()->setCurrentIndex(index,
                                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  statsTable_->scrollTo(index);
  selecting_ = was;
}

void TransformerWorkbench::updateSelectionLabel() {
  if (!outcome_) {
    selectionLabel_->setText(source_ ? tr("Running\u2026") : tr("No model open"));
    return;
  }
  QString text = tr("Layer %1 \u00b7 head %2").arg(layer_).arg(head_);
  if (const auto token = tokenLines_->selectedToken()) {
    const auto& tokens = outcome_->trace->tokens;
    if (std::size_t(token->index) < tokens.size()) {
      text += tr(" \u00b7 token %1 \u201c%2\u201d")
                  .arg(token->index)
                  .arg(render::tokenLabel(tokens[std::size_t(token->index)]));
    }
  }
  if (const int row = statsModel_->rowOf(layer_, head_); const auto* s = statsModel_->at(row)) {
    text += tr(" \u00b7 entropy %1 \u00b7 mean distance %2")
                .arg(double(s->entropy), 0, 'f', 3)
                .arg(double(s->mean_distance), 0, 'f', 2);
  }
  selectionLabel_->setText(text);
}

attn::io::TransformerSection TransformerWorkbench::state() const {
  using Section = attn::io::TransformerSection;
  Section s;
  s.source = requestedSource_.toStdString();
  s.text = text().toStdString();
  s.pair = pairEdit_->text().toStdString();
  const QString image =
      requestedImage_.isEmpty() ? sampleImageResource(sampleBox_->currentData().toString()) : requestedImage_;
  s.image = {attn::io::ImageRef::Kind::File, image.toStdString()};
  for (const auto& sample : sampleImages()) {
    if (sample.resource == image) s.image = {attn::io::ImageRef::Kind::Sample, sample.key.toStdString()};
  }
  s.layer = pendingLayer_ >= 0 ? pendingLayer_ : layer_;
  s.head = pendingLayer_ >= 0 ? pendingHead_ : head_;
  switch (currentView()) {
    case View::Head: s.view = Section::View::Head; break;
    case View::Model: s.view = Section::View::Model; break;
    case View::Statistics: s.view = Section::View::Statistics; break;
    case View::Overlay: s.view = Section::View::Overlay; break;
    case View::Matrix: s.view = Section::View::Matrix; break;
  }
  switch (matrixMode()) {
    case MatrixMode::Head: s.matrix = Section::Matrix::Head; break;
    case MatrixMode::LayerMean: s.matrix = Section::Matrix::LayerMean; break;
    case MatrixMode::Rollout: s.matrix = Section::Matrix::Rollout; break;
  }
  switch (attn::analysis::HeadFusion(fusionBox_->currentData().toInt())) {
    case attn::analysis::HeadFusion::Mean: s.fusion = Section::Fusion::Mean; break;
    case attn::analysis::HeadFusion::Max: s.fusion = Section::Fusion::Max; break;
    case attn::analysis::HeadFusion::Min: s.fusion = Section::Fusion::Min; break;
  }
  // The spin boxes' own values: a float on the way would turn 0.3 into 0.30000001.
  s.discard_ratio = discardSpin_->value();
  s.residual = residualSpin_->value();
  s.overlay = OverlaySource(overlaySourceBox_->currentData().toInt()) == OverlaySource::Head
                  ? Section::Overlay::Head
                  : Section::Overlay::Rollout;
  s.overlay_alpha = alphaSlider_->value() / 100.0;
  s.line_threshold = thresholdSpin_->value();
  s.colormap = render::colormapInfo(colormap_).key;
  return s;
}

void TransformerWorkbench::applyState(const attn::io::TransformerSection& state) {
  using Section = attn::io::TransformerSection;
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) setColormap(*map);
  setMatrixMode(state.matrix == Section::Matrix::Rollout     ? MatrixMode::Rollout
                : state.matrix == Section::Matrix::LayerMean ? MatrixMode::LayerMean
                                                             : MatrixMode::Head);
  setOverlaySource(state.overlay == Section::Overlay::Head ? OverlaySource::Head : OverlaySource::Rollout);
  setOverlayAlpha(state.overlay_alpha);
  thresholdSpin_->setValue(state.line_threshold);
  {
    const QSignalBlocker a(fusionBox_), b(discardSpin_), c(residualSpin_), d(textEdit_), e(pairEdit_);
    const auto fusion = state.fusion == Section::Fusion::Max   ? attn::analysis::HeadFusion::Max
                        : state.fusion == Section::Fusion::Min ? attn::analysis::HeadFusion::Min
                                                               : attn::analysis::HeadFusion::Mean;
    fusionBox_->setCurrentIndex(std::max(0, fusionBox_->findData(int(fusion))));
    discardSpin_->setValue(state.discard_ratio);
    residualSpin_->setValue(state.residual);
    textEdit_->setPlainText(QString::fromStdString(state.text));
    pairEdit_->setText(QString::fromStdString(state.pair));
  }
  switch (state.view) {
    case Section::View::Head: setView(View::Head); break;
    case Section::View::Model: setView(View::Model); break;
    case Section::View::Statistics: setView(View::Statistics); break;
    case Section::View::Overlay: setView(View::Overlay); break;
    case Section::View::Matrix: setView(View::Matrix); break;
  }
  pendingLayer_ = state.layer;
  pendingHead_ = state.head;
  const QString image = state.image.kind == attn::io::ImageRef::Kind::Sample
                            ? sampleImageResource(QString::fromStdString(state.image.value))
                            : QString::fromStdString(state.image.value);
  if (!image.isEmpty() && image != requestedImage_) {
    if (state.image.kind == attn::io::ImageRef::Kind::Sample) {
      openSample(QString::fromStdString(state.image.value));
    } else {
      openImage(image);
    }
  }
  const QString source = QString::fromStdString(state.source);
  if (!source.isEmpty() && source != requestedSource_) {
    if (source == demoModelKey()) {
      openDemo();
    } else {
      openPath(source);
    }
  }
  post();  // a fresh result for the selection; a source still loading runs when it is in
}

void TransformerWorkbench::setMatrixMode(MatrixMode mode) {
  matrixModeBox_->setCurrentIndex(std::max(0, matrixModeBox_->findData(int(mode))));
}

TransformerWorkbench::MatrixMode TransformerWorkbench::matrixMode() const {
  return MatrixMode(matrixModeBox_->currentData().toInt());
}

attn::analysis::RolloutOptions TransformerWorkbench::rolloutOptions() const {
  attn::analysis::RolloutOptions options;
  options.fusion = attn::analysis::HeadFusion(fusionBox_->currentData().toInt());
  options.discard_ratio = float(discardSpin_->value());
  options.residual = float(residualSpin_->value());
  return options;
}

void TransformerWorkbench::setRolloutOptions(const attn::analysis::RolloutOptions& options) {
  {
    const QSignalBlocker a(fusionBox_), b(discardSpin_), c(residualSpin_);
    fusionBox_->setCurrentIndex(std::max(0, fusionBox_->findData(int(options.fusion))));
    discardSpin_->setValue(double(options.discard_ratio));
    residualSpin_->setValue(double(options.residual));
  }
  post();
}

QString TransformerWorkbench::emptyMatrixText() const {
  if (source_) return tr("Type a text: the attention of every layer and head of %1 shows here.").arg(source_->name);
  return tr(
      "No model yet.\n\nOpen a model folder (File > Open Model\u2026, Ctrl+Shift+M) or an attention dump "
      "(File > Open Attention Dump\u2026), drop either on the window, or press Open the Demo Model; then type "
      "a text. Every layer and head of its attention shows here.");
}

void TransformerWorkbench::updateMatrix() {
  matrixMap_.reset();
  if (!outcome_) {
    heatmap_->setEmptyText(emptyMatrixText());
    heatmap_->clear();
    matrixTitle_->setText(tr("Matrix"));
    return;
  }
  const auto& trace = *outcome_->trace;
  switch (matrixMode()) {
    case MatrixMode::Head:
      matrixMap_ = trace.map(outcome_->stage, layer_, head_);
      matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 head %2").arg(layer_).arg(head_));
      break;
    case MatrixMode::LayerMean:
      matrixMap_ = trace.map(outcome_->stage, layer_, -1);
      matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 mean of its heads").arg(layer_));
      break;
    case MatrixMode::Rollout:
      if (outcome_->rollout) {
        auto map = std::make_shared<attn::AttentionMap>();
        map->stage = outcome_->stage;
        map->name = "rollout";
        map->weights = *outcome_->rollout;
        map->row_labels = trace.tokens;
        map->col_labels = trace.tokens;
        map->row_axis = "output tokens";
        map->col_axis = "input tokens";
        matrixMap_ = std::move(map);
        const auto options = outcome_->request.rollout;
        matrixTitle_->setText(
            tr("Matrix \u00b7 rollout over %1 layers \u00b7 %2 fusion \u00b7 discard %3 \u00b7 residual %4")
                .arg(trace.layer_count(outcome_->stage))
                .arg(fusionBox_->itemText(fusionBox_->findData(int(options.fusion))))
                .arg(double(options.discard_ratio), 0, 'f', 2)
                .arg(double(options.residual), 0, 'f', 2));
      } else {
        matrixTitle_->setText(tr("Rollout unavailable: %1").arg(outcome_->rolloutError));
      }
      break;
  }
  if (matrixMap_) {
    heatmap_->setMap(matrixMap_);
  } else {
    heatmap_->setEmptyText(matrixTitle_->text());  // why there is nothing to draw
    heatmap_->clear();
  }
}

void TransformerWorkbench::setOverlaySource(OverlaySource source) {
  overlaySourceBox_->setCurrentIndex(std::max(0, overlaySourceBox_->findData(int(source))));
}

void TransformerWorkbench::setOverlayAlpha(double alpha) { alphaSlider_->setValue(int(std::lround(alpha * 100.0))); }

void TransformerWorkbench::updateOverlay() {
  if (!outcome_ || outcome_->run->grid_rows <= 0 || !outcome_->request.image) {
    overlay_->setImage({});
    overlay_->setCaption(QString());
    return;
  }
  const auto& run = *outcome_->run;
  std::optional<attn::Matrix> grid;
  QString caption;
  if (OverlaySource(overlaySourceBox_->currentData().toInt()) == OverlaySource::Rollout) {
    if (outcome_->rollout) grid = render::classTokenGrid(*outcome_->rollout, run.grid_rows, run.grid_cols);
    caption =
        tr("Rollout: the class token's attention to the %1 \u00d7 %2 patches").arg(run.grid_rows).arg(run.grid_cols);
  } else {
    if (const auto map = outcome_->trace->map(outcome_->stage, layer_, head_)) {
      grid = render::classTokenGrid(map->weights, run.grid_rows, run.grid_cols);
    }
    caption = tr("Layer %1 \u00b7 head %2: the class token's attention to the patches").arg(layer_).arg(head_);
  }
  if (!grid) {
    overlay_->setImage(outcome_->request.image->display);
    overlay_->setCaption(tr("No class-token attention to draw"));
    return;
  }
  render::OverlayOptions options;
  // Viridis (the matrices' default) washes a photo green; a dark-to-bright map reads better over one.
  options.colormap = colormap_ == render::Colormap::Viridis ? render::Colormap::Inferno : colormap_;
  options.alpha = alphaSlider_->value() / 100.0;
  overlay_->setImage(render::overlayImage(outcome_->request.image->display, *grid, options));
  overlay_->setCaption(caption);
}

void TransformerWorkbench::setView(View view) {
  switch (view) {
    case View::Head: viewTabs_->setCurrentWidget(tokenLines_); break;
    case View::Model: viewTabs_->setCurrentWidget(gridScroll_); break;
    case View::Statistics: viewTabs_->setCurrentWidget(statsTable_); break;
    case View::Overlay: viewTabs_->setCurrentWidget(overlay_); break;
    case View::Matrix: break;
  }
  matrixActive_ = view == View::Matrix;
  if (matrixActive_) heatmap_->setFocus(Qt::OtherFocusReason);
}

TransformerWorkbench::View TransformerWorkbench::currentView() const {
  if (matrixActive_) return View::Matrix;
  QWidget* page = viewTabs_->currentWidget();
  if (page == gridScroll_) return View::Model;
  if (page == statsTable_) return View::Statistics;
  if (page == overlay_) return View::Overlay;
  return View::Head;
}

void TransformerWorkbench::setColormap(render::Colormap map) {
  colormap_ = map;
  {
    const QSignalBlocker block(colormapBox_);
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(map))));
  }
  heatmap_->setColormap(map);
  headGrid_->setColormap(map);
  updateOverlay();
}

void TransformerWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }
bool TransformerWorkbench::isSidePanelVisible() const { return sideScroll_->isVisibleTo(this); }

// ---- exports ----

attn::Result<void> TransformerWorkbench::exportView(const QString& path, View view) const {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a view can be saved as .png, .svg or .pdf")));
  }
  if (!outcome_) return std::unexpected(exportError(path, tr("nothing to export yet: no run has finished")));
  const auto savePng = [&path](const QImage& image) -> attn::Result<void> {
    if (image.isNull() || !image.save(path, "PNG"))
      return std::unexpected(exportError(path, tr("could not write the file")));
    return {};
  };
  switch (view) {
    case View::Matrix: return exportHeatmap(*heatmap_, path);
    case View::Head:
      if (*format == ExportFormat::Png) return savePng(tokenLines_->renderImage(std::max(600, tokenLines_->width())));
      return exportWidget(*tokenLines_, path);
    case View::Model:
      if (*format == ExportFormat::Png) {
        return savePng(headGrid_->renderImage(
            std::max(600, headGrid_->width()),
            tr("Model view \u00b7 %1 layers \u00d7 %2 heads").arg(headGrid_->layers()).arg(headGrid_->heads())));
      }
      return exportWidget(*headGrid_, path);
    case View::Overlay:
      if (*format == ExportFormat::Png) return savePng(overlay_->image());
      return exportWidget(*overlay_, path);
    case View::Statistics: return exportWidget(*statsTable_, path);
  }
  return std::unexpected(exportError(path, tr("unknown view")));
}

attn::Result<void> TransformerWorkbench::exportMatrix(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || !isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a matrix can be saved as .csv or .npy")));
  }
  if (!matrixMap_) return std::unexpected(exportError(path, tr("nothing to export yet: no matrix is shown")));
  return *format == ExportFormat::Csv ? writeMatrixCsv(*matrixMap_, path) : writeMatrixNpy(matrixMap_->weights, path);
}

attn::Result<QStringList> TransformerWorkbench::exportLayer(const QString& folder) const {
  if (!outcome_) return std::unexpected(exportError(folder, tr("nothing to export yet: no run has finished")));
  if (!QDir().mkpath(folder)) return std::unexpected(exportError(folder, tr("cannot create the folder")));
  const auto* layer = outcome_->trace->find(outcome_->stage, layer_);
  if (!layer) return std::unexpected(exportError(folder, tr("the run has no layer %1").arg(layer_)));
  QStringList written;
  HeatmapView view(HeatmapView::Style::Full);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.setColormap(colormap_);
  view.resize(760, 640);
  view.show();
  for (int h = 0; h < layer->maps.heads(); ++h) {
    const auto map = outcome_->trace->map(outcome_->stage, layer_, h);
    if (!map) continue;
    const QString base = QDir(folder).filePath(u"layer%1-head%2"_s.arg(layer_).arg(h));
    view.setMap(map);
    view.replotNow();
    if (auto ok = exportHeatmap(view, base + u".png"_s); !ok) return std::unexpected(ok.error());
    written.append(base + u".png"_s);
    if (auto ok = writeMatrixCsv(*map, base + u".csv"_s); !ok) return std::unexpected(ok.error());
    written.append(base + u".csv"_s);
  }
  return written;
}

}  // namespace attn::ui
