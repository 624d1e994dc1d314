// CaptionWorkbench's widgets: the side panel built group by group (model, image, decoding, overlay), the main
// area, and the settings they hold (the overlay options, the session file's section, QSettings).
#include "workbenches/caption/caption_workbench.h"

#include "render/strings.h"
#include "views/caption_strip_view.h"
#include "views/image_overlay_view.h"
#include "workbenches/caption/caption_workbench_parts.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"

#include <QComboBox>
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

constexpr std::uint64_t kFirstScene = 1;
using caption_detail::kMaxSeed;

}  // namespace

void CaptionWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  layout->addWidget(buildModelGroup(panel));
  layout->addWidget(buildImageGroup(panel));
  layout->addWidget(buildDecodingGroup(panel));
  layout->addWidget(buildOverlayGroup(panel));
  layout->addStretch(1);
}

// The model: the bundled captioners, Open Folder and About This Model.
QGroupBox* CaptionWorkbench::buildModelGroup(QWidget* panel) {
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
  connect(modelBox_, &QComboBox::activated, this, [this](int index) {
    const QString target = modelBox_->itemData(index).toString();
    if (!target.isEmpty() && (!source_ || (target != source_->model.key && target != source_->model.path))) {
      openModel(target);
    }
  });
  return modelGroup_.group;
}

// Image: a generated scene by seed, a bundled photo or an image file.
QGroupBox* CaptionWorkbench::buildImageGroup(QWidget* panel) {
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
  auto* openImageButton = new QPushButton(tr("Open Image\u2026"), imageGroup);
  openImageButton->setToolTip(
      tr("A PNG, JPEG, BMP, TIFF or WebP file (or drop one on the window); it is resized to "
         "the model's square input (Ctrl+Shift+O)"));
  connect(openImageButton, &QPushButton::clicked, this, &CaptionWorkbench::openImageRequested);
  imageLayout->addWidget(openImageButton);
  imageLabel_ = new QLabel(imageGroup);
  imageLabel_->setObjectName(u"captionImageLabel"_s);
  imageLabel_->setWordWrap(true);
  imageLabel_->setTextFormat(Qt::PlainText);
  imageLabel_->setForegroundRole(QPalette::PlaceholderText);
  imageLayout->addWidget(imageLabel_);
  return imageGroup;
}

// Decoding: the beam width and the hypotheses with their log-probabilities.
QGroupBox* CaptionWorkbench::buildDecodingGroup(QWidget* panel) {
  const DecodingGroup decoding = makeDecodingGroup(
      panel, u"caption"_s, kMaxBeam,
      tr("Beam width: how many hypotheses the search keeps at each step; 1 is greedy decoding"), tr("Caption"),
      tr("The captions the beam search ended with, ranked by log-probability (the sum of the log-softmax of their "
         "words, <end> included). Select one to see its own attention."));
  beamSpin_ = decoding.beam;
  beamSpin_->setValue(3);
  hypotheses_ = decoding.hypotheses;
  connect(beamSpin_, &QSpinBox::valueChanged, this, &CaptionWorkbench::post);
  connect(hypotheses_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* current) {
    if (current) selectHypothesis(hypotheses_->indexOfTopLevelItem(current));
  });
  return decoding.group;
}

// Overlay: style, smoothing, opacity, colour map, threshold, the grid's pictures per row, and the exports.
QGroupBox* CaptionWorkbench::buildOverlayGroup(QWidget* panel) {
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
  overlayForm->addRow(tr("Styl&e:"), modeBox_);
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
  overlayForm->addRow(tr("Smooth&ing \u03c3:"), sigmaSpin_);
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
  overlayForm->addRow(tr("Colo&ur map:"), colormapBox_);
  thresholdSpin_ = new QDoubleSpinBox(overlayGroup);
  thresholdSpin_->setObjectName(u"captionThreshold"_s);
  thresholdSpin_->setRange(0.0, 0.95);
  thresholdSpin_->setSingleStep(0.05);
  thresholdSpin_->setDecimals(2);
  thresholdSpin_->setValue(options_.threshold);
  thresholdSpin_->setToolTip(
      tr("Values below this fraction of the word's maximum are left transparent (colour map) "
         "or fully dimmed (light mask)"));
  overlayForm->addRow(tr("Th&reshold:"), thresholdSpin_);
  perRowSpin_ = new QSpinBox(overlayGroup);
  perRowSpin_->setObjectName(u"captionPerRow"_s);
  perRowSpin_->setRange(1, 12);
  perRowSpin_->setValue(5);
  perRowSpin_->setToolTip(tr("Pictures per row of the grid export (the image, then every word)"));
  overlayForm->addRow(tr("Gri&d, per row:"), perRowSpin_);
  auto* exportRow = new QHBoxLayout();
  auto* exportGridButton = new QPushButton(tr("Export Grid\u2026"), overlayGroup);
  exportGridButton->setToolTip(tr("The image and every word with its overlay, as PNG, SVG or PDF (Ctrl+E)"));
  connect(exportGridButton, &QPushButton::clicked, this, &CaptionWorkbench::exportGridRequested);
  auto* exportOverlayButton = new QPushButton(tr("E&xport Overlay\u2026"), overlayGroup);
  exportOverlayButton->setToolTip(tr("The word in view over the image, as PNG"));
  connect(exportOverlayButton, &QPushButton::clicked, this, &CaptionWorkbench::exportOverlayRequested);
  exportRow->addWidget(exportGridButton);
  exportRow->addWidget(exportOverlayButton);
  overlayForm->addRow(exportRow);
  connect(modeBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setOverlayMode(render::CaptionOverlayMode(modeBox_->itemData(index).toInt()));
  });
  connect(sigmaSpin_, &QDoubleSpinBox::valueChanged, this, &CaptionWorkbench::setSigma);
  connect(opacitySlider_, &QSlider::valueChanged, this, [this](int value) { setOpacity(value / 100.0); });
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  connect(thresholdSpin_, &QDoubleSpinBox::valueChanged, this, &CaptionWorkbench::setThreshold);
  return overlayGroup;
}

void CaptionWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);
  errorBanner_ = makeMessageStrip(area, u"captionError"_s, MessageStrip::Error);
  layout->addWidget(errorBanner_);
  warningStrip_ = makeMessageStrip(area, u"captionWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);
  busyRow_ = new BusyRow(area, this);
  busyRow_->setObjectName(u"captionBusy"_s);
  connect(busyRow_, &BusyRow::cancelRequested, this, &CaptionWorkbench::cancelRun);
  layout->addWidget(busyRow_);

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

// ---- overlay settings ----

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

// ---- settings ----

namespace {

// The input as the session file names it: a scene's seed, a bundled photo's key, or a file.
void inputToState(const CaptionInput& input, attn::ui::CaptionSection& s) {
  s.input = attn::ui::CaptionSection::Input::Scene;
  s.seed = input.kind == CaptionInput::Kind::Scene ? input.seed : attn::ui::CaptionSection{}.seed;
  s.image.clear();
  if (input.kind == CaptionInput::Kind::Scene) return;
  s.input = attn::ui::CaptionSection::Input::File;
  s.image = input.path.toStdString();
  for (const auto& sample : sampleImages()) {
    if (sample.resource == input.path) {
      s.input = attn::ui::CaptionSection::Input::Sample;
      s.image = sample.key.toStdString();
    }
  }
}

// The same as restoreSettings' and start()'s input string: "scene:<seed>", a ":/" resource or a path.
QString inputKey(const attn::ui::CaptionSection& s) {
  switch (s.input) {
    case attn::ui::CaptionSection::Input::Scene: return u"scene:%1"_s.arg(s.seed);
    case attn::ui::CaptionSection::Input::Sample: return sampleImageResource(QString::fromStdString(s.image));
    case attn::ui::CaptionSection::Input::File: return QString::fromStdString(s.image);
  }
  return {};
}

}  // namespace

attn::ui::CaptionSection CaptionWorkbench::state() const {
  attn::ui::CaptionSection s;
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
  s.style = options_.mode == render::CaptionOverlayMode::LightMask ? attn::ui::CaptionSection::Style::LightMask
                                                                   : attn::ui::CaptionSection::Style::Colour;
  s.per_row = perRow();
  return s;
}

void CaptionWorkbench::applyState(const attn::ui::CaptionSection& state) {
  render::CaptionOverlayOptions options = options_;
  options.sigma = state.sigma;
  options.opacity = state.opacity;
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) options.colormap = *map;
  options.threshold = state.threshold;
  options.mode = state.style == attn::ui::CaptionSection::Style::LightMask ? render::CaptionOverlayMode::LightMask
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
  attn::ui::CaptionSection open;
  inputToState(requestedInput_, open);
  if (inputKey(open) != input) {
    switch (state.input) {
      case attn::ui::CaptionSection::Input::Scene: openScene(state.seed); break;
      case attn::ui::CaptionSection::Input::Sample: openSample(QString::fromStdString(state.image)); break;
      case attn::ui::CaptionSection::Input::File: openFile(input); break;
    }
  }
  post();
}

void CaptionWorkbench::saveTo(attn::ui::Session& session) const { session.caption = state(); }

QStringList CaptionWorkbench::restoreFrom(const attn::ui::Session& session, const QString& origin) {
  using Section = attn::ui::CaptionSection;
  QStringList notes;
  Section section = session.caption.value_or(Section{});
  if (const QString model = QString::fromStdString(section.model);
      !bundledCaptionModelKeys().contains(model) && !isFolderPath(model)) {
    notes.append(goneNote(origin, model, tr("the Captioning tab")));
    section.model = defaultCaptionModel().toStdString();
  }
  const QString image = QString::fromStdString(section.image);
  const bool sampleGone = section.input == Section::Input::Sample && sampleImageResource(image).isEmpty();
  if (sampleGone || (section.input == Section::Input::File && !isFilePath(image))) {
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

// ---- the busy row ----

void CaptionWorkbench::updateBusyRow() {
  if (openRequested_ <= openSettled_ && settled_ >= submitted_) busyRow_->stop();
}

void CaptionWorkbench::cancelRun() {
  const bool opening = openRequested_ > openSettled_, running = submitted_ > settled_;
  if (!opening && !running) return;
  // The worker finishes what it has started (a beam search is under a second, a photo's decoding a few); what it
  // answers for these requests is dropped, so the image and caption on screen stay.
  if (opening) {
    cancelledOpen_ = openSettled_ = openRequested_;
    if (image_) requestedInput_ = image_->input;
  }
  if (running) {
    cancelledRun_ = settled_ = submitted_;
    if (pending_ && pending_->generation <= cancelledRun_) pending_.reset();
  }
  busyRow_->stop();
  emit statusMessage(image_ || outcome_ ? tr("Cancelled: the previous view stays") : tr("Cancelled"), 8000);
}

}  // namespace attn::ui
