// The Transformer tab's widgets: the side panel's groups, the main area and their links of selection and hover.
#include "workbenches/transformer/transformer_workbench.h"
#include "workbenches/transformer/transformer_detectors.h"
#include "workbenches/transformer/transformer_attribution.h"
#include "workbenches/transformer/transformer_patching.h"
#include "render/strings.h"

#include "models/head_stats_model.h"
#include "views/head_grid_view.h"
#include "views/head_stats_view.h"
#include "views/heatmap_view.h"
#include "views/long_map_panel.h"
#include "views/image_overlay_view.h"
#include "views/logit_lens_view.h"
#include "views/token_lines_view.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"
#include "workbenches/transformer/transformer_workbench_parts.h"

#include "views/qcustomplot.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using ModelFamily = attn::models::Family;
using transformer_detail::defaultText;

}  // namespace

void TransformerWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->addWidget(buildModelGroup(panel));
  layout->addWidget(buildInputGroup(panel));
  layout->addWidget(buildGenerateGroup(panel));
  layout->addWidget(buildPredictionGroup(panel));
  layout->addWidget(buildInterventionGroup(panel));
  layout->addWidget(buildMatrixGroup(panel));
  layout->addWidget(buildDisplayGroup(panel));
  layout->addStretch(1);
}

// The model: what is open, Open Model, Open Dump and the demo, and the load progress with Cancel.
QGroupBox* TransformerWorkbench::buildModelGroup(QWidget* panel) {
  auto* modelGroup = new QGroupBox(tr("Model"), panel);
  auto* modelLayout = new QVBoxLayout(modelGroup);
  modelLabel_ = new QLabel(tr("No model: open a model folder (config.json + *.safetensors), a llama.cpp model "
                              "(*.gguf) or an attention dump (*.attn.safetensors)."),
                           modelGroup);
  modelLabel_->setObjectName(u"modelDescription"_s);
  modelLabel_->setWordWrap(true);
  modelLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  modelLayout->addWidget(modelLabel_);
  auto* buttons = new QHBoxLayout();
  auto* openModel = new QPushButton(tr("Open Model\u2026"), modelGroup);
  openModel->setToolTip(
      tr("A Hugging Face model folder: config.json, *.safetensors and tokenizer files (Ctrl+Shift+M)"));
  connect(openModel, &QPushButton::clicked, this, &TransformerWorkbench::openModelRequested);
  auto* openDump = new QPushButton(tr("Open Dump\u2026"), modelGroup);
  openDump->setToolTip(tr("Any model's attention saved as *.attn.safetensors (docs/USING.md: ten lines of Python)"));
  connect(openDump, &QPushButton::clicked, this, &TransformerWorkbench::openDumpRequested);
  aboutModel_ = new QPushButton(tr("About Model\u2026"), modelGroup);
  aboutModel_->setObjectName(u"aboutModel"_s);
  aboutModel_->setToolTip(
      tr("The open model's card: a GGUF file's quantisation by tensor type, chat template and "
         "metadata, or a folder's MODEL_CARD.md"));
  aboutModel_->setVisible(false);
  connect(aboutModel_, &QPushButton::clicked, this, [this] {
    if (source_ && !source_->card.isEmpty()) showModelCard(this, source_->name, source_->card);
  });
  buttons->addWidget(openModel);
  buttons->addWidget(openDump);
  buttons->addWidget(aboutModel_);
  modelLayout->addLayout(buttons);
  auto* demo = new QPushButton(tr("Open the Demo Model"), modelGroup);
  demo->setObjectName(u"openDemo"_s);
  demo->setToolTip(
      tr("induction-gpt2: a 2-layer character GPT-2 trained by AttnScope to continue repeated text; "
         "type a random string twice and look at its previous-token and copying heads"));
  connect(demo, &QPushButton::clicked, this, [this] { openDemo(); });
  auto* story = new QPushButton(tr("Open the Story Llama"), modelGroup);
  story->setObjectName(u"openStoryDemo"_s);
  story->setToolTip(
      tr("stories260k: llama2.c's Llama (5 layers, 8 heads sharing 4 key/value heads) trained on children's "
         "stories; press Generate and scrub through what each head looked at for every word it wrote"));
  connect(story, &QPushButton::clicked, this, [this] { openDemo(storyModelKey()); });
  auto* demos = new QHBoxLayout();
  demos->addWidget(demo);
  demos->addWidget(story);
  modelLayout->addLayout(demos);
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
  return modelGroup;
}

// The input: the text, BERT's second sentence or ViT's photo, and a note on what the model reads.
QGroupBox* TransformerWorkbench::buildInputGroup(QWidget* panel) {
  inputGroup_ = new QGroupBox(tr("Input"), panel);
  auto* inputLayout = new QVBoxLayout(inputGroup_);
  textLabel_ = new QLabel(tr("Te&xt (runs as you type):"), inputGroup_);
  textEdit_ = new InputEdit(inputGroup_);
  textEdit_->setObjectName(u"transformerText"_s);
  textEdit_->setTabChangesFocus(true);
  textEdit_->setPlaceholderText(tr("Text for the model; [MASK] asks BERT for a word"));
  textEdit_->setFixedHeight(textEdit_->fontMetrics().lineSpacing() * 4 + 14);
  textEdit_->setPlainText(defaultText(ModelFamily::Bert));
  textLabel_->setBuddy(textEdit_);
  inputLayout->addWidget(textLabel_);
  inputLayout->addWidget(textEdit_);
  pairLabel_ = new QLabel(tr("Second sentence (BERT &pair, optional):"), inputGroup_);
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
  auto* openImageButton = new QPushButton(tr("O&pen Image\u2026"), imageRow_);
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
  connect(textEdit_, &QPlainTextEdit::textChanged, this, &TransformerWorkbench::post);
  connect(pairEdit_, &QLineEdit::textChanged, this, &TransformerWorkbench::post);
  connect(sampleBox_, &QComboBox::activated, this,
          [this](int index) { openSample(sampleBox_->itemData(index).toString()); });
  return inputGroup_;
}

// The predictions: [MASK] fillers, the next token or the top classes.
QGroupBox* TransformerWorkbench::buildPredictionGroup(QWidget* panel) {
  auto* predictionGroup = new QGroupBox(tr("Predictions"), panel);
  auto* predictionLayout = new QVBoxLayout(predictionGroup);
  predictions_ = new QListWidget(predictionGroup);
  predictions_->setObjectName(u"predictions"_s);
  predictions_->setToolTip(tr("[MASK] fillers (BERT), the next token (GPT-2) or the top classes (ViT)"));
  predictions_->setFixedHeight(predictions_->fontMetrics().lineSpacing() * 7 + 8);
  predictionLayout->addWidget(predictions_);
  return predictionGroup;
}

// The matrix: what it shows (a head, the layer mean, the rollout) and the rollout's options.
QGroupBox* TransformerWorkbench::buildMatrixGroup(QWidget* panel) {
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
  matrixForm->addRow(tr("Sho&w:"), matrixModeBox_);
  fusionBox_ = new QComboBox(matrixGroup);
  fusionBox_->setObjectName(u"rolloutFusion"_s);
  fusionBox_->addItem(tr("mean"), int(attn::analysis::HeadFusion::Mean));
  fusionBox_->addItem(tr("max"), int(attn::analysis::HeadFusion::Max));
  fusionBox_->addItem(tr("min"), int(attn::analysis::HeadFusion::Min));
  fusionBox_->setToolTip(tr("How a layer's heads are fused before rolling out"));
  matrixForm->addRow(tr("Fusion:"), fusionBox_);
  discardSpin_ = new QDoubleSpinBox(matrixGroup);
  discardSpin_->setObjectName(u"rolloutDiscard"_s);
  discardSpin_->setRange(0.0, 0.99);
  discardSpin_->setSingleStep(0.05);
  discardSpin_->setDecimals(2);
  discardSpin_->setToolTip(tr("Share of each layer's lowest fused weights set to zero (vit-explain)"));
  matrixForm->addRow(tr("Discard ratio:"), discardSpin_);
  residualSpin_ = new QDoubleSpinBox(matrixGroup);
  residualSpin_->setObjectName(u"rolloutResidual"_s);
  residualSpin_->setRange(0.0, 1.0);
  residualSpin_->setSingleStep(0.05);
  residualSpin_->setDecimals(2);
  residualSpin_->setValue(0.5);
  residualSpin_->setToolTip(tr("Residual r: A' = (1 - r) A + r I (0.5 in the paper)"));
  matrixForm->addRow(tr("Residual:"), residualSpin_);
  connect(matrixModeBox_, &QComboBox::currentIndexChanged, this, [this] {
    updateMatrix();
    updateWarnings();  // a long run's rollout note belongs to the rollout mode
  });
  connect(fusionBox_, &QComboBox::currentIndexChanged, this, &TransformerWorkbench::post);
  connect(discardSpin_, &QDoubleSpinBox::valueChanged, this, &TransformerWorkbench::post);
  connect(residualSpin_, &QDoubleSpinBox::valueChanged, this, &TransformerWorkbench::post);
  return matrixGroup;
}

// The display: the colour map, the head view's line threshold and the ViT overlay.
QGroupBox* TransformerWorkbench::buildDisplayGroup(QWidget* panel) {
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
  displayForm->addRow(tr("Line threshold:"), thresholdSpin_);
  overlaySourceBox_ = new QComboBox(displayGroup);
  overlaySourceBox_->setObjectName(u"overlaySource"_s);
  overlaySourceBox_->addItem(tr("Rollout"), int(OverlaySource::Rollout));
  overlaySourceBox_->addItem(tr("Selected head"), int(OverlaySource::Head));
  overlaySourceBox_->setToolTip(tr("ViT: what is drawn over the photo (the class token's attention to the patches)"));
  displayForm->addRow(tr("Overlay:"), overlaySourceBox_);
  alphaSlider_ = new QSlider(Qt::Horizontal, displayGroup);
  alphaSlider_->setObjectName(u"overlayAlpha"_s);
  alphaSlider_->setRange(0, 100);
  alphaSlider_->setValue(65);
  alphaSlider_->setToolTip(tr("Opacity of the attention over the photo"));
  displayForm->addRow(tr("Overlay alpha:"), alphaSlider_);
  exportSizeBox_ = new QComboBox(displayGroup);
  exportSizeBox_->setObjectName(u"exportSize"_s);
  for (const QSize size : {QSize(1200, 900), QSize(1600, 1200), QSize(2400, 1800), QSize(800, 600)}) {
    exportSizeBox_->addItem(u"%1 \u00d7 %2"_s.arg(size.width()).arg(size.height()), size);
  }
  exportSizeBox_->addItem(tr("as on screen"), QSize());
  exportSizeBox_->setToolTip(
      tr("File > Export View: the picture's size (the head and model views: its width), under "
         "a title line naming the model, the text, the layer and the head"));
  displayForm->addRow(tr("Export size:"), exportSizeBox_);
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  connect(thresholdSpin_, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { tokenLines_->setThreshold(float(v)); });
  connect(overlaySourceBox_, &QComboBox::currentIndexChanged, this, [this] { updateOverlay(); });
  connect(alphaSlider_, &QSlider::valueChanged, this, [this] { updateOverlay(); });
  return displayGroup;
}

// The matrix beside the views: its title over the heatmap, or the long map of a run kept on demand.
QWidget* TransformerWorkbench::buildMatrixPane(QWidget* parent) {
  auto* matrixPane = new QWidget(parent);
  auto* matrixLayout = new QVBoxLayout(matrixPane);
  matrixLayout->setContentsMargins(0, 0, 0, 0);
  matrixTitle_ = new QLabel(matrixPane);
  matrixTitle_->setObjectName(u"matrixTitle"_s);
  matrixTitle_->setTextFormat(Qt::PlainText);
  matrixTitle_->setWordWrap(true);
  matrixLayout->addWidget(matrixTitle_);
  matrixStack_ = new QStackedWidget(matrixPane);
  heatmap_ = new HeatmapView(HeatmapView::Style::Full, matrixStack_);
  heatmap_->setObjectName(u"transformerHeatmap"_s);
  heatmap_->setEmptyText(emptyMatrixText());
  matrixStack_->addWidget(heatmap_);
  longMap_ = new LongMapPanel(matrixStack_);
  longMap_->setObjectName(u"transformerLongMap"_s);
  matrixStack_->addWidget(longMap_);
  matrixLayout->addWidget(buildComparePane(matrixPane, matrixStack_), 1);
  return matrixPane;
}

void TransformerWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);
  errorBanner_ = makeMessageStrip(area, u"transformerError"_s, MessageStrip::Error);
  layout->addWidget(errorBanner_);
  warningStrip_ = makeMessageStrip(area, u"transformerWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);
  layout->addWidget(buildBusyRow(area));
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
  viewTabs_->addTab(tokenLines_, tr("Hea&d View"));
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
  buildLensTab();
  patching_ = new PatchingPanel(this, viewTabs_);
  viewTabs_->addTab(patching_, tr("Patching"));
  attribution_ = new AttributionPanel(this, viewTabs_);
  viewTabs_->addTab(attribution_, tr("Attribution"));
  detectors_ = new DetectorsPanel(this, viewTabs_);
  viewTabs_->addTab(detectors_, tr("Head detectors"));

  views->addWidget(viewTabs_);
  views->addWidget(buildMatrixPane(views));
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
                           .arg(statText(s->entropy, 3), statText(s->mean_distance, 2))
                           .arg(statText(s->max_weight, 3)),
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
  // A press in the views beside the matrix makes them what File > Export View writes again.
  for (QWidget* view : {tokenLines_->canvas(), static_cast<QWidget*>(headGrid_), statsTable_->viewport(),
                        static_cast<QWidget*>(overlay_), static_cast<QWidget*>(lensView_->grid())}) {
    view->installEventFilter(this);
  }
  connect(statsTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (selecting_ || !current.isValid()) return;
            const auto* s = statsModel_->at(statsProxy_->mapToSource(current).row());
            if (!s) return;
            openHead(s->layer, s->head);
          });
}

bool TransformerWorkbench::eventFilter(QObject* watched, QEvent* event) {
  if (watched == heatmap_->plot()) {
    if (event->type() == QEvent::Leave) tokenLines_->setHoverToken(std::nullopt);
    if (event->type() == QEvent::MouseButtonPress) matrixActive_ = true;
  } else if (event->type() == QEvent::MouseButtonPress) {
    matrixActive_ = false;  // the views tab (the filter is on its pages only)
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace attn::ui
