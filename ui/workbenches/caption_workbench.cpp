#include "views/export.h"
#include "workbenches/caption_workbench.h"

#include "render/alignment_render.h"
#include "views/caption_strip_view.h"
#include "views/image_overlay_view.h"
#include "workbenches/sample_images.h"
#include "workbenches/side_panel.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

QString fromStd(const std::string& text) { return QString::fromStdString(text); }
QString quoted(const QString& text) { return u"\u201c"_s + text + u"\u201d"_s; }

qint64 composedKey(int hypothesis, int word) { return (qint64(hypothesis) << 32) | qint64(quint32(word)); }

constexpr std::uint64_t kFirstScene = 1;
constexpr qsizetype kMaxComposed = 48;
constexpr int kMaxSeed = 2'000'000'000;  // a spin box holds an int; the generator takes any 64-bit seed

Workbench::Identity captionIdentity() {
  return {attn::io::SessionTab::Caption, CaptionWorkbench::tr("&Captioning"),
          CaptionWorkbench::tr("Show, Attend and Tell: where a captioner looks for each word, soft and hard attention"),
          CaptionWorkbench::tr("Click or drag across the caption's words: each shows where the model looked"),
          CaptionWorkbench::tr("Last caption: model, image, best caption, beam width and engine time")};
}

}  // namespace

CaptionWorkbench::CaptionWorkbench(QWidget* parent)
    : Workbench(captionIdentity(), 0, parent), worker_(std::make_unique<CaptionWorker>()) {
  setObjectName(u"captionWorkbench"_s);
  connect(worker_.get(), &CaptionWorker::loaded, this, &CaptionWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &CaptionWorker::loadFailed, this, &CaptionWorkbench::onLoadFailed, Qt::QueuedConnection);
  connect(worker_.get(), &CaptionWorker::opened, this, &CaptionWorkbench::onOpened, Qt::QueuedConnection);
  connect(worker_.get(), &CaptionWorker::openFailed, this, &CaptionWorkbench::onOpenFailed, Qt::QueuedConnection);
  connect(worker_.get(), &CaptionWorker::finished, this, &CaptionWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &CaptionWorker::smoothed, this, &CaptionWorkbench::onSmoothed, Qt::QueuedConnection);
  thread_.host(worker_.get(), u"caption worker"_s);
  connect(this, &CaptionWorkbench::sourceFailed, this, &Workbench::failed);
  connect(this, &CaptionWorkbench::imageFailed, this, &Workbench::failed);

  revealTimer_.setInterval(kRevealMs);
  connect(&revealTimer_, &QTimer::timeout, this, &CaptionWorkbench::revealNext);
  playTimer_.setInterval(kPlayMs);
  connect(&playTimer_, &QTimer::timeout, this, &CaptionWorkbench::playNext);

  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"captionSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  sideScroll_ = frame.scroll;
  updateInputNote();
}

CaptionWorkbench::~CaptionWorkbench() {
  stopApply();
  revealTimer_.stop();
  playTimer_.stop();
  thread_.stop();
  worker_.reset();
}

void CaptionWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  modelGroup_ = makeModelGroup(
      panel, u"caption"_s,
      tr("The bundled captioners: the same encoder and LSTM decoder trained with soft attention (a weighted mean of "
         "the grid's annotations) and with hard attention (one cell per word, trained with REINFORCE)"),
      tr("A model folder: config.json + model.safetensors of an AttnScopeCaptioner model (File > Open Model\u2026, "
         "Ctrl+Shift+M)"),
      tr("The model card: the data, the training and how well the attention lands on the objects"));
  modelBox_ = modelGroup_.box;
  modelLabel_ = modelGroup_.description;
  aboutButton_ = modelGroup_.about;
  fillModelBox();
  connect(modelGroup_.openFolder, &QPushButton::clicked, this, &CaptionWorkbench::openModelRequested);
  connect(aboutButton_, &QPushButton::clicked, this, &CaptionWorkbench::showAbout);
  layout->addWidget(modelGroup_.group);
  connect(modelBox_, &QComboBox::activated, this, [this](int index) {
    const QString target = modelBox_->itemData(index).toString();
    if (!target.isEmpty() && (!source_ || (target != source_->model.key && target != source_->model.path))) {
      openModel(target);
    }
  });

  // Image.
  auto* imageGroup = new QGroupBox(tr("Image"), panel);
  auto* imageLayout = new QVBoxLayout(imageGroup);
  auto* sceneRow = new QHBoxLayout();
  auto* sceneLabel = new QLabel(tr("&Scene:"), imageGroup);
  seedSpin_ = new QSpinBox(imageGroup);
  seedSpin_->setObjectName(u"captionSeed"_s);
  seedSpin_->setRange(0, kMaxSeed);
  seedSpin_->setValue(int(kFirstScene));
  seedSpin_->setKeyboardTracking(false);
  seedSpin_->setToolTip(
      tr("The seed of a generated scene (1 to 4 coloured shapes on a textured background, as the "
         "models were trained on; seeds from 10,000,000 on were never seen in training)"));
  sceneLabel->setBuddy(seedSpin_);
  auto* newSceneButton = new QPushButton(tr("&New Scene"), imageGroup);
  newSceneButton->setObjectName(u"captionNewScene"_s);
  newSceneButton->setToolTip(tr("Generate the scene of the next seed"));
  sceneRow->addWidget(sceneLabel);
  sceneRow->addWidget(seedSpin_, 1);
  sceneRow->addWidget(newSceneButton);
  imageLayout->addLayout(sceneRow);
  connect(seedSpin_, &QSpinBox::valueChanged, this, [this](int seed) { openScene(std::uint64_t(seed)); });
  connect(newSceneButton, &QPushButton::clicked, this, &CaptionWorkbench::newScene);
  auto* photoForm = new QFormLayout();
  photoForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  sampleBox_ = new QComboBox(imageGroup);
  sampleBox_->setObjectName(u"captionSample"_s);
  sampleBox_->setPlaceholderText(tr("Choose a photo"));
  for (const auto& sample : sampleImages()) sampleBox_->addItem(sample.name, sample.key);
  sampleBox_->setCurrentIndex(-1);
  sampleBox_->setToolTip(
      tr("The bundled photos: the models have only seen scenes of shapes, so a photo gets a "
         "caption of shapes"));
  photoForm->addRow(tr("&Photo:"), sampleBox_);
  imageLayout->addLayout(photoForm);
  connect(sampleBox_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0) openSample(sampleBox_->itemData(index).toString());
  });
  auto* openImageButton = new QPushButton(tr("Open &Image\u2026"), imageGroup);
  openImageButton->setToolTip(
      tr("A PNG, JPEG, BMP, TIFF or WebP file (or drop one on the window); it is resized to "
         "the model's square input"));
  connect(openImageButton, &QPushButton::clicked, this, &CaptionWorkbench::openImageRequested);
  imageLayout->addWidget(openImageButton);
  imageLabel_ = new QLabel(imageGroup);
  imageLabel_->setObjectName(u"captionImageLabel"_s);
  imageLabel_->setWordWrap(true);
  imageLabel_->setTextFormat(Qt::PlainText);
  imageLabel_->setForegroundRole(QPalette::PlaceholderText);
  imageLayout->addWidget(imageLabel_);
  layout->addWidget(imageGroup);

  const DecodingGroup decoding = makeDecodingGroup(
      panel, u"caption"_s, kMaxBeam,
      tr("Beam width: how many hypotheses the search keeps at each step; 1 is greedy decoding"), tr("Caption"),
      tr("The captions the beam search ended with, ranked by log-probability (the sum of the log-softmax of their "
         "words, <end> included). Select one to see its own attention."));
  beamSpin_ = decoding.beam;
  beamSpin_->setValue(3);
  hypotheses_ = decoding.hypotheses;
  layout->addWidget(decoding.group);
  connect(beamSpin_, &QSpinBox::valueChanged, this, &CaptionWorkbench::post);
  connect(hypotheses_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* current) {
    if (current) selectHypothesis(hypotheses_->indexOfTopLevelItem(current));
  });

  // Overlay.
  auto* overlayGroup = new QGroupBox(tr("Overlay"), panel);
  auto* overlayForm = new QFormLayout(overlayGroup);
  overlayForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  modeBox_ = new QComboBox(overlayGroup);
  modeBox_->setObjectName(u"captionMode"_s);
  modeBox_->addItem(tr("Colour map"), int(render::CaptionOverlayMode::Colour));
  modeBox_->addItem(tr("Light mask"), int(render::CaptionOverlayMode::LightMask));
  modeBox_->setToolTip(
      tr("Colour map: α in colour over the image. Light mask: the image dimmed where α is low, as "
         "in the paper's figures and the PyTorch tutorial"));
  overlayForm->addRow(tr("&Style:"), modeBox_);
  sigmaSpin_ = new QDoubleSpinBox(overlayGroup);
  sigmaSpin_->setObjectName(u"captionSigma"_s);
  sigmaSpin_->setRange(0.0, 24.0);
  sigmaSpin_->setSingleStep(1.0);
  sigmaSpin_->setDecimals(1);
  sigmaSpin_->setValue(options_.sigma);
  sigmaSpin_->setKeyboardTracking(false);
  sigmaSpin_->setSpecialValueText(tr("0 (bilinear only)"));
  sigmaSpin_->setToolTip(
      tr("Gaussian smoothing of the upsampled α, in pixels at 24 pixels per grid cell "
         "(skimage's pyramid_expand; the tutorial uses upscale 24, sigma 8)"));
  overlayForm->addRow(tr("S&moothing \u03c3:"), sigmaSpin_);
  opacitySlider_ = new QSlider(Qt::Horizontal, overlayGroup);
  opacitySlider_->setObjectName(u"captionOpacity"_s);
  opacitySlider_->setRange(0, 100);
  opacitySlider_->setValue(int(std::lround(options_.opacity * 100)));
  opacitySlider_->setToolTip(tr("Opacity of the colour layer, or how dark the light mask gets"));
  overlayForm->addRow(tr("&Opacity:"), opacitySlider_);
  colormapBox_ = new QComboBox(overlayGroup);
  colormapBox_->setObjectName(u"captionColormap"_s);
  for (const auto& info : render::colormaps()) colormapBox_->addItem(QString::fromLatin1(info.name), int(info.id));
  colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(options_.colormap))));
  overlayForm->addRow(tr("Colour m&ap:"), colormapBox_);
  thresholdSpin_ = new QDoubleSpinBox(overlayGroup);
  thresholdSpin_->setObjectName(u"captionThreshold"_s);
  thresholdSpin_->setRange(0.0, 0.95);
  thresholdSpin_->setSingleStep(0.05);
  thresholdSpin_->setDecimals(2);
  thresholdSpin_->setValue(options_.threshold);
  thresholdSpin_->setToolTip(
      tr("Values below this fraction of the word's maximum are left transparent (colour map) "
         "or fully dimmed (light mask)"));
  overlayForm->addRow(tr("&Threshold:"), thresholdSpin_);
  perRowSpin_ = new QSpinBox(overlayGroup);
  perRowSpin_->setObjectName(u"captionPerRow"_s);
  perRowSpin_->setRange(1, 12);
  perRowSpin_->setValue(5);
  perRowSpin_->setToolTip(tr("Pictures per row of the grid export (the image, then every word)"));
  overlayForm->addRow(tr("&Grid, per row:"), perRowSpin_);
  auto* exportRow = new QHBoxLayout();
  auto* exportGridButton = new QPushButton(tr("Export &Grid\u2026"), overlayGroup);
  exportGridButton->setToolTip(tr("The image and every word with its overlay, as PNG, SVG or PDF"));
  connect(exportGridButton, &QPushButton::clicked, this, &CaptionWorkbench::exportGridRequested);
  auto* exportOverlayButton = new QPushButton(tr("Export O&verlay\u2026"), overlayGroup);
  exportOverlayButton->setToolTip(tr("The word in view over the image, as PNG"));
  connect(exportOverlayButton, &QPushButton::clicked, this, &CaptionWorkbench::exportOverlayRequested);
  exportRow->addWidget(exportGridButton);
  exportRow->addWidget(exportOverlayButton);
  overlayForm->addRow(exportRow);
  layout->addWidget(overlayGroup);
  connect(modeBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setOverlayMode(render::CaptionOverlayMode(modeBox_->itemData(index).toInt()));
  });
  connect(sigmaSpin_, &QDoubleSpinBox::valueChanged, this, &CaptionWorkbench::setSigma);
  connect(opacitySlider_, &QSlider::valueChanged, this, [this](int value) { setOpacity(value / 100.0); });
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  connect(thresholdSpin_, &QDoubleSpinBox::valueChanged, this, &CaptionWorkbench::setThreshold);
  layout->addStretch(1);
}

void CaptionWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);
  errorBanner_ = makeMessageStrip(area, u"captionError"_s, MessageStrip::Error);
  layout->addWidget(errorBanner_);
  warningStrip_ = makeMessageStrip(area, u"captionWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);

  auto* stripRow = new QHBoxLayout();
  playButton_ = new QToolButton(area);
  playButton_->setObjectName(u"captionPlay"_s);
  playButton_->setCheckable(true);
  playButton_->setText(tr("\u25b6 Play"));
  playButton_->setToolTip(tr("Walk through the words, one every %1 ms").arg(kPlayMs));
  playButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
  connect(playButton_, &QToolButton::toggled, this, &CaptionWorkbench::setPlaying);
  strip_ = new CaptionStripView(area);
  strip_->setPlaceholder(tr("Captioning\u2026"));
  strip_->setToolTip(
      tr("The caption, one word per box (click or drag across them; Left/Right, Home/End). Under each "
         "word: \u03b2, the gate on the attended context, and H, the entropy of \u03b1 (full: "
         "uniform over the grid)"));
  connect(strip_, &CaptionStripView::currentChanged, this, [this](int index) {
    if (index != word_) setWord(index);
  });
  stripRow->addWidget(playButton_, 0, Qt::AlignTop);
  stripRow->addWidget(strip_, 1);
  layout->addLayout(stripRow);
  inputNote_ = new QLabel(area);
  inputNote_->setObjectName(u"captionInputNote"_s);
  inputNote_->setWordWrap(true);
  inputNote_->setTextFormat(Qt::PlainText);
  inputNote_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(inputNote_);

  auto* views = new QSplitter(Qt::Horizontal, area);
  views->setChildrenCollapsible(false);
  overlayView_ = new ImageOverlayView(views);
  overlayView_->setObjectName(u"captionOverlay"_s);
  overlayView_->setPlaceholder(tr("No image yet"));
  auto* side = new QWidget(views);
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  coverageView_ = new ImageOverlayView(side);
  coverageView_->setObjectName(u"captionCoverage"_s);
  coverageView_->setToolTip(
      tr("Where the caption as a whole looked: \u03a3 over the words of \u03b1. The paper's "
         "doubly stochastic regulariser pushes it towards 1 in every cell"));
  sideLayout->addWidget(coverageView_, 1);
  captionLabel_ = new QLabel(side);
  captionLabel_->setObjectName(u"captionWordLabel"_s);
  captionLabel_->setWordWrap(true);
  captionLabel_->setTextFormat(Qt::PlainText);
  captionLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sideLayout->addWidget(captionLabel_);
  views->addWidget(overlayView_);
  views->addWidget(side);
  views->setStretchFactor(0, 3);
  views->setStretchFactor(1, 2);
  layout->addWidget(views, 1);
}

// ---- models ----

void CaptionWorkbench::fillModelBox() {
  attn::ui::fillModelBox(modelBox_, bundledCaptionModels(), tr("No bundled captioners in this build"));
}

void CaptionWorkbench::openModel(const QString& nameOrFolder, bool announce) {
  ++loadRequested_;
  requestedModel_ = nameOrFolder;
  announceLoad_ = announce;
  loadingName_ = QFileInfo(nameOrFolder).fileName().isEmpty() ? nameOrFolder : QFileInfo(nameOrFolder).fileName();
  for (const auto& model : bundledCaptionModels()) {
    if (model.key == nameOrFolder) loadingName_ = model.name;
  }
  worker_->load(loadRequested_, nameOrFolder);
}

void CaptionWorkbench::onLoaded(std::shared_ptr<const CaptionSource> source) {
  if (source->serial != loadRequested_) return;
  loadSettled_ = source->serial;
  source_ = std::move(source);
  requestedModel_ = source_->model.path.startsWith(u':') ? source_->model.key : source_->model.path;
  errorBanner_->setVisible(false);
  lastError_.clear();
  const auto& model = source_->model;
  showOpenModel(modelGroup_, model.key, model.path, model.name, model.description, !model.modelCard.isEmpty());
  emit sourceLoaded(model.path);
  if (announceLoad_) emit statusMessage(tr("Opened %1 (%2 ms)").arg(model.name).arg(source_->loadMs, 0, 'f', 0), 6000);
  post();
}

void CaptionWorkbench::onLoadFailed(quint64 serial, const QString& message) {
  if (serial != loadRequested_) return;
  loadSettled_ = serial;
  lastError_ = message;
  showError(openFailedMessage(loadingName_, message, source_ ? source_->model.name : QString()));
  if (source_) reselectOpenModel(modelBox_, source_->model.key, source_->model.path);
  requestedModel_ = !source_                               ? QString()
                    : source_->model.path.startsWith(u':') ? source_->model.key
                                                           : source_->model.path;
  emit statusMessage(tr("Cannot open %1: %2").arg(loadingName_, message), 0);
  emit sourceFailed(message);
}

void CaptionWorkbench::showAbout() {
  if (source_ && !source_->model.modelCard.isEmpty())
    showModelCard(this, source_->model.name, source_->model.modelCard);
}

void CaptionWorkbench::showError(const QString& message) {
  errorBanner_->setText(message);
  errorBanner_->setVisible(true);
}

// ---- inputs ----

void CaptionWorkbench::start() {
  if (started_) return;
  started_ = true;
  if (loadRequested_ == 0) {
    // A saved folder that is gone falls back to the bundled model.
    const bool saved = !pendingModel_.isEmpty() &&
                       (bundledCaptionModelKeys().contains(pendingModel_) || QFileInfo(pendingModel_).isDir());
    if (saved) {
      openModel(pendingModel_, false);
    } else if (!bundledCaptionModels().empty()) {
      openModel(defaultCaptionModel(), false);
    } else {
      strip_->setPlaceholder(
          tr("This build bundles no captioners (resources/models had no caption-soft or "
             "caption-hard when it was built). Open a model folder: File > Open Model\u2026"));
    }
  }
  if (openRequested_ == 0) {
    const QString input = pendingInput_;
    bool ok = false;
    const std::uint64_t seed = input.startsWith(u"scene:"_s) ? input.mid(6).toULongLong(&ok) : 0;
    if (ok) {
      openScene(seed);
    } else if (input.startsWith(u":/"_s) && QFileInfo::exists(input)) {
      CaptionInput resource;
      resource.kind = CaptionInput::Kind::Resource;
      resource.path = input;
      openInput(std::move(resource));
    } else if (!input.isEmpty() && QFileInfo(input).isFile()) {
      openFile(input);
    } else {
      openScene(std::uint64_t(seedSpin_->value()));
    }
  }
}

void CaptionWorkbench::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  start();
}

void CaptionWorkbench::openInput(CaptionInput input) {
  input.limits = limits_;
  requestedInput_ = input;
  ++openRequested_;
  openingName_ = input.name();
  worker_->open(openRequested_, std::move(input));
}

void CaptionWorkbench::openFile(const QString& path) {
  CaptionInput input;
  input.kind = CaptionInput::Kind::File;
  input.path = path;
  openInput(std::move(input));
}

bool CaptionWorkbench::openSample(const QString& key) {
  const QString resource = sampleImageResource(key);
  if (resource.isEmpty()) {
    emit statusMessage(tr("There is no sample called %1").arg(key), 6000);
    return false;
  }
  CaptionInput input;
  input.kind = CaptionInput::Kind::Resource;
  input.path = resource;
  openInput(std::move(input));
  return true;
}

void CaptionWorkbench::openScene(std::uint64_t seed) {
  if (seedSpin_->value() != int(std::min<std::uint64_t>(seed, kMaxSeed))) {
    const QSignalBlocker block(seedSpin_);
    seedSpin_->setValue(int(std::min<std::uint64_t>(seed, kMaxSeed)));
  }
  CaptionInput input;
  input.kind = CaptionInput::Kind::Scene;
  input.seed = seed;
  openInput(std::move(input));
}

void CaptionWorkbench::newScene() {
  const std::uint64_t current = image_ && image_->input.kind == CaptionInput::Kind::Scene
                                    ? image_->input.seed
                                    : std::uint64_t(seedSpin_->value());
  openScene(current + 1);
}

void CaptionWorkbench::onOpened(std::shared_ptr<const CaptionImage> image) {
  if (image->serial != openRequested_) return;
  openSettled_ = image->serial;
  image_ = std::move(image);
  errorBanner_->setVisible(false);
  lastError_.clear();
  {
    const QSignalBlocker block(sampleBox_);
    int index = -1;
    for (int i = 0; i < sampleBox_->count(); ++i) {
      if (sampleImageResource(sampleBox_->itemData(i).toString()) == image_->input.path) index = i;
    }
    sampleBox_->setCurrentIndex(image_->input.kind == CaptionInput::Kind::Resource ? index : -1);
  }
  if (image_->input.kind == CaptionInput::Kind::Scene && image_->input.seed <= std::uint64_t(kMaxSeed)) {
    const QSignalBlocker block(seedSpin_);
    seedSpin_->setValue(int(image_->input.seed));
  }
  imageLabel_->setText(tr("%1 \u00b7 %2 \u00d7 %3").arg(image_->name).arg(image_->width).arg(image_->height));
  emit imageLoaded(image_->input.kind == CaptionInput::Kind::Scene ? u"scene:%1"_s.arg(image_->input.seed)
                                                                   : image_->input.path);
  if (!source_) {
    // No model yet (or none at all): the image alone.
    overlayView_->setImage(image_->display);
    overlayView_->setCaption(image_->name);
  }
  post();
}

void CaptionWorkbench::onOpenFailed(quint64 serial, const QString& message) {
  if (serial != openRequested_) return;
  openSettled_ = serial;
  lastError_ = message;
  showError(image_ ? tr("Cannot open %1: %2\nThe previous image (%3) stays.").arg(openingName_, message, image_->name)
                   : tr("Cannot open %1: %2").arg(openingName_, message));
  if (image_) requestedInput_ = image_->input;
  emit statusMessage(tr("Cannot open %1: %2").arg(openingName_, message), 0);
  emit imageFailed(message);
}

// ---- running ----

void CaptionWorkbench::setBeam(int beam) { beamSpin_->setValue(std::clamp(beam, 1, kMaxBeam)); }
int CaptionWorkbench::beam() const { return beamSpin_->value(); }

bool CaptionWorkbench::isIdle() const {
  return !isLoading() && !isApplyScheduled() && settled_ >= submitted_ && !mapsRequested_ && !isRevealing();
}

void CaptionWorkbench::post() {
  if (!source_ || !image_) return;
  CaptionRequest request;
  request.beam = beamSpin_->value();
  ++submitted_;
  worker_->submit(submitted_, source_, image_, request, options_.sigma);
}

void CaptionWorkbench::onFinished(std::shared_ptr<const CaptionOutcome> outcome) {
  if (!source_ || !image_ || outcome->sourceSerial != source_->serial || outcome->imageSerial != image_->serial) return;
  if (outcome->generation <= shown_) return;
  if (!outcome->ok()) {
    if (outcome->generation != submitted_) return;  // a newer request reports for itself
    settled_ = outcome->generation;
    const QString message = fromStd(outcome->error ? outcome->error->message() : std::string());
    lastError_ = message;
    showError(tr("The captioner refused %1: %2. The previous view stays.").arg(image_->name, message));
    emit statusMessage(tr("Captioning refused: %1").arg(message), 0);
    return;
  }
  pending_ = std::move(outcome);
  scheduleApply();
}

void CaptionWorkbench::applyPending() {
  auto next = std::move(pending_);
  pending_.reset();
  if (!next || next->generation <= shown_) return;
  outcome_ = next;
  shownImage_ = image_;
  shown_ = next->generation;
  settled_ = std::max(settled_, shown_);
  errorBanner_->setVisible(false);
  lastError_.clear();
  maps_.clear();
  composed_.clear();
  mapsRequested_ = false;
  if (next->maps && next->maps->sigma == options_.sigma) {
    maps_[0] = next->maps;
  }
  hypothesis_ = 0;
  word_ = 0;
  updateHypotheses();
  updateStrip();
  if (maps_.count(0) == 0) requestMaps();
  // The caption is known whole; it is revealed word by word, the overlay following the newest word.
  revealed_ = revealTimer_.interval() > 0 ? 0 : wordCount();
  strip_->setRevealed(revealed_);
  if (revealed_ < wordCount()) {
    revealTimer_.start();
    revealNext();
  } else {
    updateOverlays();
  }
  // The hypothesis and the word of applyState, on the first caption of what it opened.
  if ((pendingHypothesis_ >= 0 || pendingWord_ >= 0) && next->generation == submitted_ && !isLoading()) {
    const int word = pendingWord_;
    if (pendingHypothesis_ >= 0) selectHypothesis(pendingHypothesis_);
    pendingHypothesis_ = pendingWord_ = -1;
    if (word >= 0) setWord(word);
  }
  const auto& run = *outcome_->run;
  const QString best = run.hypotheses.empty() ? QString() : fromStd(run.hypotheses.front().text);
  const QString summary = tr("caption: %1 \u00b7 %2 \u2192 %3 \u00b7 beam %4 \u00b7 %5 ms")
                              .arg(source_->model.name, shownImage_->name, quoted(best))
                              .arg(outcome_->request.beam)
                              .arg(outcome_->runMs, 0, 'f', 1);
  updateWarnings();
  updateInputNote();
  setRunSummary(summary);
  emit resultShown(next->generation);
}

void CaptionWorkbench::revealNext() {
  const int count = wordCount();
  if (revealed_ >= count) {
    revealTimer_.stop();
    return;
  }
  ++revealed_;
  strip_->setRevealed(revealed_);
  word_ = revealed_ - 1;
  {
    const QSignalBlocker block(strip_);
    strip_->setCurrent(word_);
  }
  updateOverlays();
  if (revealed_ >= count) {
    revealTimer_.stop();
    emit wordChanged(word_);
  }
}

void CaptionWorkbench::setRevealInterval(int ms) {
  revealTimer_.setInterval(std::max(0, ms));
  if (ms <= 0 && revealTimer_.isActive()) {
    revealTimer_.stop();
    revealed_ = wordCount();
    strip_->setRevealed(revealed_);
    updateOverlays();
  }
}

void CaptionWorkbench::onSmoothed(quint64 generation, std::shared_ptr<const CaptionMaps> maps) {
  if (generation != shown_ || !outcome_ || maps->sigma != options_.sigma) return;
  maps_[maps->hypothesis] = maps;
  if (maps->hypothesis == hypothesis_) {
    mapsRequested_ = false;
    composed_.clear();
    updateOverlays();
  }
}

void CaptionWorkbench::requestMaps() {
  if (!outcome_ || maps_.count(hypothesis_) > 0) return;
  mapsRequested_ = true;
  worker_->smooth(shown_, outcome_->run, hypothesis_, options_.sigma);
}

QStringList CaptionWorkbench::warnings() const { return outcome_ ? outcome_->warnings() : QStringList(); }

void CaptionWorkbench::updateWarnings() {
  const QStringList lines = warnings();
  warningStrip_->setText(u"\u26a0 "_s + lines.join(u"\n\u26a0 "_s));
  warningStrip_->setVisible(!lines.isEmpty());
}

void CaptionWorkbench::updateInputNote() {
  const CaptionImage* image = shownImage_ ? shownImage_.get() : image_.get();
  if (!image) {
    inputNote_->clear();
    return;
  }
  QString note;
  if (image->input.kind == CaptionInput::Kind::Scene) {
    note = tr("%1, generated: its own caption is %2").arg(image->name, quoted(image->sceneCaption));
  } else {
    note = tr("%1 (%2 \u00d7 %3): the models have only seen generated scenes of coloured shapes, so a photo gets a "
              "caption of shapes \u2014 what the model knows, not what is in the picture.")
               .arg(image->name)
               .arg(image->width)
               .arg(image->height);
    if (source_ && std::max(image->width, image->height) < source_->model.model->config().image_size / 2) {
      note += tr(" It is much smaller than the model's %1-pixel input and was enlarged.")
                  .arg(source_->model.model->config().image_size);
    }
  }
  inputNote_->setText(note);
}

// ---- hypotheses and words ----

const attn::models::CaptionHypothesis* CaptionWorkbench::currentHypothesis() const {
  if (!outcome_ || std::size_t(hypothesis_) >= outcome_->run->hypotheses.size()) return nullptr;
  return &outcome_->run->hypotheses[std::size_t(hypothesis_)];
}

int CaptionWorkbench::wordCount() const {
  const auto* hyp = currentHypothesis();
  return hyp ? int(hyp->words.size()) : 0;
}

void CaptionWorkbench::updateHypotheses() {
  std::vector<HypothesisRow> rows;
  if (outcome_) {
    for (const auto& hyp : outcome_->run->hypotheses) {
      rows.push_back({hyp.log_prob, fromStd(hyp.text), hyp.finished,
                      fromStd(hyp.text) + u"\n"_s +
                          (hyp.finished ? tr("ended with <end> after %1 words").arg(hyp.words.size() - 1)
                                        : tr("stopped at the length limit without <end>"))});
    }
  }
  fillHypothesisList(hypotheses_, rows, hypothesis_);
}

void CaptionWorkbench::selectHypothesis(int index) {
  if (!outcome_ || outcome_->run->hypotheses.empty()) return;
  index = std::clamp(index, 0, int(outcome_->run->hypotheses.size()) - 1);
  setCurrentHypothesis(hypotheses_, index);
  if (index == hypothesis_) return;
  revealTimer_.stop();
  hypothesis_ = index;
  revealed_ = wordCount();
  updateStrip();
  requestMaps();
  updateOverlays();
}

void CaptionWorkbench::updateStrip() {
  const auto* hyp = currentHypothesis();
  if (!hyp) {
    strip_->setWords({}, 1.0);
    return;
  }
  const auto entropy = render::alphaEntropy(hyp->alpha);
  std::vector<CaptionWord> words;
  words.reserve(hyp->words.size());
  for (std::size_t t = 0; t < hyp->words.size(); ++t) {
    CaptionWord w;
    w.end = hyp->words[t] == "<end>";
    w.text = w.end ? u"\u2039end\u203a"_s : fromStd(hyp->words[t]);
    w.beta = t < hyp->beta.size() ? hyp->beta[t] : 0.0f;
    w.entropy = t < entropy.size() ? entropy[t] : 0.0f;
    words.push_back(std::move(w));
  }
  const double maxEntropy = std::log(std::max<double>(2.0, double(hyp->alpha.cols())));
  word_ = std::clamp(word_, 0, std::max(0, int(words.size()) - 1));
  const QSignalBlocker block(strip_);
  strip_->setWords(std::move(words), maxEntropy);
  strip_->setCurrent(word_);
  strip_->setRevealed(revealed_);
}

void CaptionWorkbench::setWord(int index) {
  const int count = wordCount();
  if (count == 0) return;
  if (revealTimer_.isActive()) {
    revealTimer_.stop();
    revealed_ = count;
    strip_->setRevealed(revealed_);
  }
  index = std::clamp(index, 0, count - 1);
  if (index == word_ && strip_->current() == index) return;
  word_ = index;
  {
    const QSignalBlocker block(strip_);
    strip_->setCurrent(word_);
  }
  updateOverlays();
  emit wordChanged(word_);
}

void CaptionWorkbench::setPlaying(bool on) {
  if (on && wordCount() > 0) {
    if (revealTimer_.isActive()) setWord(word_);
    playTimer_.start();
  } else {
    playTimer_.stop();
  }
  const QSignalBlocker block(playButton_);
  playButton_->setChecked(playTimer_.isActive());
  playButton_->setText(playTimer_.isActive() ? tr("\u275a\u275a Pause") : tr("\u25b6 Play"));
}

void CaptionWorkbench::playNext() {
  const int count = wordCount();
  if (count == 0) {
    setPlaying(false);
    return;
  }
  setWord((word_ + 1) % count);
}

// ---- overlays ----

const CaptionMaps* CaptionWorkbench::currentMaps() const {
  const auto it = maps_.find(hypothesis_);
  return it == maps_.end() ? nullptr : it->second.get();
}

QImage CaptionWorkbench::currentOverlay() const { return overlayView_->image(); }

void CaptionWorkbench::updateOverlays() {
  const auto* hyp = currentHypothesis();
  const CaptionMaps* maps = currentMaps();
  if (!hyp || !shownImage_) return;
  const auto& run = *outcome_->run;
  const int count = int(hyp->words.size());
  word_ = std::clamp(word_, 0, std::max(0, count - 1));
  if (!maps) {
    // Smoothing for this hypothesis is on its way: the image alone meanwhile.
    overlayView_->setImage(shownImage_->display);
    overlayView_->setCaption(tr("smoothing\u2026"));
    return;
  }
  const qint64 key = composedKey(hypothesis_, word_);
  auto it = composed_.find(key);
  if (it == composed_.end()) {
    // A few megabytes each at the largest display size: one caption's words are kept, not every hypothesis'.
    if (composed_.size() >= kMaxComposed) composed_.clear();
    it = composed_.insert(key, captionWordOverlay(shownImage_->display, run, *maps, word_, options_));
  }
  overlayView_->setImage(*it);
  const QString wordText = count > 0 ? fromStd(hyp->words[std::size_t(word_)]) : QString();
  const double maxEntropy = std::log(std::max<double>(2.0, double(hyp->alpha.cols())));
  const auto entropy = render::alphaEntropy(hyp->alpha);
  QString caption = tr("%1 \u00b7 word %2 of %3").arg(quoted(wordText)).arg(word_ + 1).arg(count);
  overlayView_->setCaption(caption);
  QString details =
      tr("\u03b2 (gate) %1 \u00b7 H(\u03b1) %2 of %3 nats")
          .arg(std::size_t(word_) < hyp->beta.size() ? double(hyp->beta[std::size_t(word_)]) : 0.0, 0, 'f', 2)
          .arg(std::size_t(word_) < entropy.size() ? double(entropy[std::size_t(word_)]) : 0.0, 0, 'f', 2)
          .arg(maxEntropy, 0, 'f', 2);
  if (std::size_t(word_) < hyp->location.size() && run.grid > 0) {
    const int cell = hyp->location[std::size_t(word_)];
    details += tr("\nHard attention: read cell (row %1, column %2) of the %3 \u00d7 %3 grid, outlined")
                   .arg(cell / run.grid + 1)
                   .arg(cell % run.grid + 1)
                   .arg(run.grid);
  }
  details += tr("\nHypothesis %1: %2 (log p %3)")
                 .arg(hypothesis_ + 1)
                 .arg(quoted(fromStd(hyp->text)))
                 .arg(render::logProbText(hyp->log_prob));
  captionLabel_->setText(details);
  // The coverage does not depend on the word: composed once per hypothesis and setting.
  const qint64 coverageKey = composedKey(hypothesis_, -1);
  auto cov = composed_.find(coverageKey);
  if (cov == composed_.end()) {
    cov = composed_.insert(coverageKey,
                           render::composeOverlay(shownImage_->display, render::alphaLayer(maps->coverage, options_)));
  }
  coverageView_->setImage(*cov);
  const auto coverage = render::alphaCoverage(hyp->alpha);
  const auto [lo, hi] = std::minmax_element(coverage.begin(), coverage.end());
  coverageView_->setCaption(coverage.empty() ? tr("Coverage")
                                             : tr("Coverage \u03a3\u209c \u03b1\u209c: %1 to %2 per cell")
                                                   .arg(double(*lo), 0, 'f', 2)
                                                   .arg(double(*hi), 0, 'f', 2));
}

void CaptionWorkbench::overlaySettingsChanged() {
  composed_.clear();
  updateOverlays();
}

void CaptionWorkbench::setOverlayOptions(const render::CaptionOverlayOptions& options) {
  const bool sigmaChanged = options.sigma != options_.sigma;
  options_ = options;
  {
    const QSignalBlocker b1(sigmaSpin_), b2(opacitySlider_), b3(colormapBox_), b4(thresholdSpin_), b5(modeBox_);
    sigmaSpin_->setValue(options_.sigma);
    opacitySlider_->setValue(int(std::lround(options_.opacity * 100)));
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(options_.colormap))));
    thresholdSpin_->setValue(options_.threshold);
    modeBox_->setCurrentIndex(std::max(0, modeBox_->findData(int(options_.mode))));
  }
  colormapBox_->setEnabled(options_.mode == render::CaptionOverlayMode::Colour);
  if (sigmaChanged) {
    // New maps for the run on screen; the caption stays.
    maps_.clear();
    mapsRequested_ = false;
    requestMaps();
  }
  overlaySettingsChanged();
}

// One field of the options changed, the others as they are.
void CaptionWorkbench::editOptions(const std::function<void(render::CaptionOverlayOptions&)>& edit) {
  auto options = options_;
  edit(options);
  setOverlayOptions(options);
}

void CaptionWorkbench::setSigma(double sigma) {
  editOptions([sigma](auto& o) { o.sigma = std::clamp(sigma, 0.0, 24.0); });
}
void CaptionWorkbench::setOpacity(double opacity) {
  editOptions([opacity](auto& o) { o.opacity = std::clamp(opacity, 0.0, 1.0); });
}
void CaptionWorkbench::setColormap(render::Colormap map) {
  editOptions([map](auto& o) { o.colormap = map; });
}
void CaptionWorkbench::setThreshold(double fraction) {
  editOptions([fraction](auto& o) { o.threshold = std::clamp(fraction, 0.0, 0.95); });
}
void CaptionWorkbench::setOverlayMode(render::CaptionOverlayMode mode) {
  editOptions([mode](auto& o) { o.mode = mode; });
}

void CaptionWorkbench::setPerRow(int perRow) { perRowSpin_->setValue(std::clamp(perRow, 1, 12)); }
int CaptionWorkbench::perRow() const { return perRowSpin_->value(); }

void CaptionWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }
bool CaptionWorkbench::isSidePanelVisible() const { return sideScroll_->isVisibleTo(this); }

// ---- exports ----

render::CaptionGridFigure CaptionWorkbench::gridFigure() const {
  const auto* hyp = currentHypothesis();
  const CaptionMaps* maps = currentMaps();
  if (!hyp || !maps || !shownImage_ || !source_) return {};
  const QString heading =
      tr("%1 \u00b7 %2 \u00b7 %3 \u00b7 log p %4")
          .arg(quoted(fromStd(hyp->text)), source_->model.name, shownImage_->name, render::logProbText(hyp->log_prob));
  return captionGridFigure(shownImage_->display, *outcome_->run, *maps, options_, perRow(), heading);
}

attn::Result<void> CaptionWorkbench::exportGrid(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a grid can be saved as .png, .svg or .pdf")));
  }
  const auto figure = gridFigure();
  if (figure.cells.empty()) {
    return std::unexpected(exportError(path, tr("nothing to export yet: no caption has finished")));
  }
  return exportCaptionGrid(figure, font(), path);
}

attn::Result<void> CaptionWorkbench::exportCurrentView(const QString& path) const { return exportGrid(path); }

attn::Result<void> CaptionWorkbench::exportOverlay(const QString& path) const {
  if (exportFormatFor(path) != ExportFormat::Png) {
    return std::unexpected(exportError(path, tr("an overlay is saved as .png")));
  }
  if (!outcome_ || !currentMaps()) {
    return std::unexpected(exportError(path, tr("nothing to export yet: no caption has finished")));
  }
  if (!currentOverlay().save(path, "PNG")) return std::unexpected(exportError(path, tr("could not write the file")));
  return {};
}

attn::Result<void> CaptionWorkbench::exportMatrix(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || !isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a matrix can be saved as .csv or .npy")));
  }
  const auto map = outcome_ ? outcome_->run->alpha_map(std::size_t(hypothesis_)) : nullptr;
  if (!map) return std::unexpected(exportError(path, tr("nothing to export yet: no caption has finished")));
  return *format == ExportFormat::Csv ? writeMatrixCsv(*map, path) : writeMatrixNpy(map->weights, path);
}

// ---- settings ----

namespace {

// The input as the session file names it: a scene's seed, a bundled photo's key, or a file.
void inputToState(const CaptionInput& input, attn::io::CaptionSection& s) {
  s.input = attn::io::CaptionSection::Input::Scene;
  s.seed = input.kind == CaptionInput::Kind::Scene ? input.seed : attn::io::CaptionSection{}.seed;
  s.image.clear();
  if (input.kind == CaptionInput::Kind::Scene) return;
  s.input = attn::io::CaptionSection::Input::File;
  s.image = input.path.toStdString();
  for (const auto& sample : sampleImages()) {
    if (sample.resource == input.path) {
      s.input = attn::io::CaptionSection::Input::Sample;
      s.image = sample.key.toStdString();
    }
  }
}

// The same as restoreSettings' and start()'s input string: "scene:<seed>", a ":/" resource or a path.
QString inputKey(const attn::io::CaptionSection& s) {
  switch (s.input) {
    case attn::io::CaptionSection::Input::Scene: return u"scene:%1"_s.arg(s.seed);
    case attn::io::CaptionSection::Input::Sample: return sampleImageResource(QString::fromStdString(s.image));
    case attn::io::CaptionSection::Input::File: return QString::fromStdString(s.image);
  }
  return {};
}

}  // namespace

attn::io::CaptionSection CaptionWorkbench::state() const {
  attn::io::CaptionSection s;
  if (!started_) {
    // Not shown yet: what start() will open.
    s.model = (pendingModel_.isEmpty() ? defaultCaptionModel() : pendingModel_).toStdString();
    bool ok = false;
    const std::uint64_t seed = pendingInput_.startsWith(u"scene:"_s) ? pendingInput_.mid(6).toULongLong(&ok) : 0;
    CaptionInput input;
    if (ok || pendingInput_.isEmpty()) {
      input.seed = ok ? seed : std::uint64_t(seedSpin_->value());
    } else {
      input.kind = pendingInput_.startsWith(u":/"_s) ? CaptionInput::Kind::Resource : CaptionInput::Kind::File;
      input.path = pendingInput_;
    }
    inputToState(input, s);
  } else {
    if (!requestedModel_.isEmpty()) s.model = requestedModel_.toStdString();
    inputToState(requestedInput_, s);
  }
  s.beam = beam();
  s.hypothesis = pendingHypothesis_ >= 0 ? pendingHypothesis_ : hypothesis_;
  s.word = pendingWord_ >= 0 ? pendingWord_ : word_;
  s.sigma = options_.sigma;
  s.opacity = options_.opacity;
  s.colormap = render::colormapInfo(options_.colormap).key;
  s.threshold = options_.threshold;
  s.style = options_.mode == render::CaptionOverlayMode::LightMask ? attn::io::CaptionSection::Style::LightMask
                                                                   : attn::io::CaptionSection::Style::Colour;
  s.per_row = perRow();
  return s;
}

void CaptionWorkbench::applyState(const attn::io::CaptionSection& state) {
  render::CaptionOverlayOptions options = options_;
  options.sigma = state.sigma;
  options.opacity = state.opacity;
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) options.colormap = *map;
  options.threshold = state.threshold;
  options.mode = state.style == attn::io::CaptionSection::Style::LightMask ? render::CaptionOverlayMode::LightMask
                                                                           : render::CaptionOverlayMode::Colour;
  setOverlayOptions(options);
  setPerRow(state.per_row);
  {
    const QSignalBlocker block(beamSpin_);  // one run below, not one per setting
    beamSpin_->setValue(std::clamp(state.beam, 1, kMaxBeam));
  }
  pendingHypothesis_ = state.hypothesis;
  pendingWord_ = state.word;
  const QString model = QString::fromStdString(state.model);
  const QString input = inputKey(state);
  if (!started_) {
    pendingModel_ = model;
    pendingInput_ = input;
    return;
  }
  if (model != requestedModel_) openModel(model, false);
  attn::io::CaptionSection open;
  inputToState(requestedInput_, open);
  if (inputKey(open) != input) {
    switch (state.input) {
      case attn::io::CaptionSection::Input::Scene: openScene(state.seed); break;
      case attn::io::CaptionSection::Input::Sample: openSample(QString::fromStdString(state.image)); break;
      case attn::io::CaptionSection::Input::File: openFile(input); break;
    }
  }
  post();
}

void CaptionWorkbench::saveTo(attn::io::Session& session) const { session.caption = state(); }

QStringList CaptionWorkbench::restoreFrom(const attn::io::Session& session, const QString& origin) {
  using Section = attn::io::CaptionSection;
  QStringList notes;
  Section section = session.caption.value_or(Section{});
  if (const QString model = QString::fromStdString(section.model);
      !bundledCaptionModelKeys().contains(model) && !QFileInfo(model).isDir()) {
    notes.append(goneNote(origin, model, tr("the Captioning tab")));
    section.model = defaultCaptionModel().toStdString();
  }
  const QString image = QString::fromStdString(section.image);
  const bool sampleGone = section.input == Section::Input::Sample && sampleImageResource(image).isEmpty();
  if (sampleGone || (section.input == Section::Input::File && !QFileInfo(image).isFile())) {
    notes.append(goneNote(origin, image, tr("the Captioning tab")));
    section.input = Section{}.input;
    section.seed = Section{}.seed;
    section.image.clear();
  }
  applyState(section);
  return notes;
}

void CaptionWorkbench::saveSettings(QSettings& settings) const {
  settings.beginGroup(u"caption"_s);
  if (source_) settings.setValue(u"model"_s, source_->model.key.isEmpty() ? source_->model.path : source_->model.key);
  settings.setValue(u"beam"_s, beam());
  settings.setValue(u"sigma"_s, options_.sigma);
  settings.setValue(u"opacity"_s, options_.opacity);
  settings.setValue(u"colormap"_s, QString::fromLatin1(render::colormapInfo(options_.colormap).key));
  settings.setValue(u"threshold"_s, options_.threshold);
  settings.setValue(u"style"_s, options_.mode == render::CaptionOverlayMode::LightMask ? u"light-mask"_s : u"colour"_s);
  settings.setValue(u"perRow"_s, perRow());
  if (image_) {
    settings.setValue(u"input"_s, image_->input.kind == CaptionInput::Kind::Scene
                                      ? u"scene:%1"_s.arg(image_->input.seed)
                                      : image_->input.path);
  }
  settings.endGroup();
}

void CaptionWorkbench::restoreSettings(const QSettings& settings) {
  const auto value = [&settings](const QString& key) { return settings.value(u"caption/"_s + key); };
  render::CaptionOverlayOptions options = options_;
  bool ok = false;
  if (const double v = value(u"sigma"_s).toDouble(&ok); ok) options.sigma = std::clamp(v, 0.0, 24.0);
  if (const double v = value(u"opacity"_s).toDouble(&ok); ok) options.opacity = std::clamp(v, 0.0, 1.0);
  if (const double v = value(u"threshold"_s).toDouble(&ok); ok) options.threshold = std::clamp(v, 0.0, 0.95);
  if (auto map = render::findColormap(value(u"colormap"_s).toString())) options.colormap = *map;
  if (value(u"style"_s).toString() == u"light-mask"_s) options.mode = render::CaptionOverlayMode::LightMask;
  setOverlayOptions(options);
  if (const int v = value(u"beam"_s).toInt(&ok); ok) {
    const QSignalBlocker block(beamSpin_);
    beamSpin_->setValue(std::clamp(v, 1, kMaxBeam));
  }
  if (const int v = value(u"perRow"_s).toInt(&ok); ok) setPerRow(v);
  // The model and the input open when the tab is first shown (start()), unless something else was asked for.
  pendingModel_ = value(u"model"_s).toString();
  pendingInput_ = value(u"input"_s).toString();
}

}  // namespace attn::ui
