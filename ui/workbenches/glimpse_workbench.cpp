#include "views/export.h"
#include "workbenches/glimpse_workbench.h"
#include "workbenches/sample_images.h"
#include "workbenches/side_panel.h"

#include "attn/glimpse/convert.h"
#include "render/colormap.h"
#include "render/glimpse_render.h"
#include "render/qcustomplot.h"
#include "views/glimpse_canvas.h"
#include "views/pixel_view.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

using namespace Qt::StringLiterals;

namespace attn::ui {

// A parameter as a slider and a spin box side by side. The spin box accepts more than the slider shows
// (zero and negative sigmas, N = 0) so that the engine's clamps can be seen; the slider may be linear or
// logarithmic. `onEdited(value, dragging)` runs for user edits only, with dragging true while the slider
// is held.
class ParamEdit : public QWidget {
 public:
  ParamEdit(const QString& key, QWidget* parent) : QWidget(parent) {
    setObjectName(key);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setObjectName(key + u".slider"_s);
    slider_->setRange(0, kSteps);
    slider_->setMinimumWidth(36);
    slider_->setFocusPolicy(Qt::StrongFocus);
    spin_ = new QDoubleSpinBox(this);
    spin_->setObjectName(key);  // tests find the spin box by the parameter's key
    spin_->setKeyboardTracking(false);
    spin_->setAccelerated(true);
    spin_->setMinimumWidth(72);
    spin_->setAlignment(Qt::AlignRight);
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_, 0);
    connect(slider_, &QSlider::valueChanged, this, [this](int position) {
      if (quiet_) return;
      const double value = fromSlider(position);
      {
        const QSignalBlocker block(spin_);
        spin_->setValue(value);
      }
      if (onEdited) onEdited(spin_->value(), slider_->isSliderDown());
    });
    connect(slider_, &QSlider::sliderReleased, this, [this] {
      if (onEdited) onEdited(spin_->value(), false);
    });
    connect(spin_, &QDoubleSpinBox::valueChanged, this, [this](double value) {
      if (quiet_) return;
      syncSlider(value);
      if (onEdited) onEdited(value, false);
    });
  }

  void configure(double sliderMin, double sliderMax, bool logScale, double spinMin, double spinMax, int decimals,
                 double step) {
    quiet_ = true;
    logScale_ = logScale && sliderMin > 0.0;
    sliderMin_ = sliderMin;
    sliderMax_ = std::max(sliderMax, sliderMin + 1e-9);
    spin_->setDecimals(decimals);
    spin_->setRange(spinMin, spinMax);
    spin_->setSingleStep(step);
    if (step <= 0.0) spin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    syncSlider(spin_->value());
    quiet_ = false;
  }
  void setSliderRange(double sliderMin, double sliderMax) {
    if (sliderMin == sliderMin_ && sliderMax == sliderMax_) return;
    quiet_ = true;
    sliderMin_ = sliderMin;
    sliderMax_ = std::max(sliderMax, sliderMin + 1e-9);
    if (logScale_ && sliderMin_ <= 0.0) logScale_ = false;
    syncSlider(spin_->value());
    quiet_ = false;
  }
  void setValue(double value) {
    if (!std::isfinite(value)) return;
    quiet_ = true;
    spin_->setValue(value);
    syncSlider(spin_->value());
    quiet_ = false;
  }
  double value() const { return spin_->value(); }
  void setSliderVisible(bool visible) { slider_->setVisible(visible); }
  void setSuffix(const QString& suffix) { spin_->setSuffix(suffix); }
  void setToolTips(const QString& text) {
    slider_->setToolTip(text);
    spin_->setToolTip(text);
  }
  void setClamped(bool clamped) {
    if (clamped == clamped_) return;
    clamped_ = clamped;
    spin_->setStyleSheet(clamped ? u"QDoubleSpinBox { background: #f6d0cc; color: #7a1010; }"_s : QString());
  }
  bool isClamped() const { return clamped_; }
  QDoubleSpinBox* spin() const { return spin_; }
  QSlider* slider() const { return slider_; }

  std::function<void(double, bool)> onEdited;

 private:
  static constexpr int kSteps = 1000;
  double fromSlider(int position) const {
    const double t = double(position) / kSteps;
    if (logScale_) return sliderMin_ * std::pow(sliderMax_ / sliderMin_, t);
    return sliderMin_ + t * (sliderMax_ - sliderMin_);
  }
  void syncSlider(double value) {
    double t = 0.0;
    if (logScale_) {
      t = value > 0.0 ? std::log(value / sliderMin_) / std::log(sliderMax_ / sliderMin_) : 0.0;
    } else {
      t = (value - sliderMin_) / (sliderMax_ - sliderMin_);
    }
    if (!std::isfinite(t)) t = 0.0;
    const QSignalBlocker block(slider_);
    slider_->setValue(int(std::lround(std::clamp(t, 0.0, 1.0) * kSteps)));
  }

  QSlider* slider_ = nullptr;
  QDoubleSpinBox* spin_ = nullptr;
  double sliderMin_ = 0.0;
  double sliderMax_ = 1.0;
  bool logScale_ = false;
  bool quiet_ = false;
  bool clamped_ = false;
};

namespace {

using attn::glimpse::Family;
using attn::glimpse::GaussianGlimpse;
using attn::glimpse::GlimpseSettings;

constexpr int kMaxPlottedCurves = 24;
constexpr qint64 kPlotIntervalNs = 100'000'000;  // filterbank plots follow a drag at most 10 times a second

enum StnField {
  kNsScaleX = 0,
  kNsScaleY,
  kNsShiftX,
  kNsShiftY,
  kSimScale,
  kSimRotation,
  kSimShiftX,
  kSimShiftY,
  kTsScale,
  kTsShiftX,
  kTsShiftY,
  kAffine0,
  kAffine1,
  kAffine2,
  kAffine3,
  kAffine4,
  kAffine5,
  kOutW,
  kOutH,
  kStnFieldCount
};

QString familyName(Family family) {
  switch (family) {
    case Family::Affine: return QObject::tr("Affine (6 parameters)");
    case Family::NoShear: return QObject::tr("No shear (scale + shift per axis)");
    case Family::Similarity: return QObject::tr("Similarity (scale, rotation, shift)");
    case Family::TranslationScale: return QObject::tr("Translation + scale");
  }
  return {};
}

QString familyKey(Family family) {
  return QString::fromLatin1(attn::glimpse::to_string(family).data(),
                             qsizetype(attn::glimpse::to_string(family).size()));
}

// Labels change on every frame of a drag: touching a style sheet re-polishes the widget and relayouts its
// window, so text and style are set only when they differ.
void setLabel(QLabel* label, const QString& text, const QString& style = QString()) {
  if (label->text() != text) label->setText(text);
  if (label->styleSheet() != style) label->setStyleSheet(style);
}

QLabel* smallNote(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * 0.92);
  label->setFont(font);
  return label;
}

QCPTextElement* plotTitle(QCustomPlot* plot) {
  if (plot->plotLayout()->rowCount() < 1) return nullptr;
  return qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
}

void setupPlot(QCustomPlot* plot, const QString& title, const QString& xLabel) {
  plot->plotLayout()->insertRow(0);
  auto* text = new QCPTextElement(plot, title);
  QFont font = plot->font();
  font.setBold(true);
  text->setFont(font);
  plot->plotLayout()->addElement(0, 0, text);
  plot->xAxis->setLabel(xLabel);
  plot->yAxis->setLabel(QObject::tr("weight"));
  plot->setNoAntialiasingOnDrag(true);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->setMinimumHeight(110);
  plot->yAxis->ticker()->setTickCount(3);
  plot->xAxis->ticker()->setTickCount(5);
  QFont tickFont = plot->font();
  tickFont.setPointSizeF(tickFont.pointSizeF() * 0.9);
  plot->xAxis->setTickLabelFont(tickFont);
  plot->yAxis->setTickLabelFont(tickFont);
}

}  // namespace

namespace {
Workbench::Identity glimpseIdentity() {
  return {attn::io::SessionTab::Glimpse,
          GlimpseWorkbench::tr("&Glimpse"),
          GlimpseWorkbench::tr("DRAW's Gaussian glimpse and the spatial transformer's over any image"),
          {},
          GlimpseWorkbench::tr("Last glimpse: grid, preview or exact, read time and path, frame time")};
}
}  // namespace

// ---- construction -------------------------------------------------------------------------------------

GlimpseWorkbench::GlimpseWorkbench(QWidget* parent)
    : Workbench(glimpseIdentity(), 0, parent), worker_(std::make_unique<GlimpseWorker>()) {
  setObjectName(u"glimpseWorkbench"_s);
  clock_.start();
  connect(worker_.get(), &GlimpseWorker::finished, this, &GlimpseWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &GlimpseWorker::loaded, this, &GlimpseWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &GlimpseWorker::loadFailed, this, &GlimpseWorkbench::onLoadFailed, Qt::QueuedConnection);
  connect(
      worker_.get(), &GlimpseWorker::loadProgress, this,
      [this](quint64 serial, int percent, const QString& stage) {
        if (serial != loadRequested_) return;
        loadProgress_->setValue(percent);
        loadProgress_->setFormat(stage + u" \u2014 %p%"_s);
      },
      Qt::QueuedConnection);
  thread_.host(worker_.get(), u"glimpse worker"_s);
  connect(this, &GlimpseWorkbench::imageFailed, this, &Workbench::failed);

  // Results are shown on the next pass of the event loop: a burst that queued several is drawn once.
  busyTimer_.setSingleShot(true);
  busyTimer_.setInterval(150);
  connect(&busyTimer_, &QTimer::timeout, this, [this] {
    if (settled_ >= submitted_ || busy_) return;
    busy_ = true;
    busyLabel_->setText(tr("computing\u2026"));
    glimpseView_->setCursor(Qt::BusyCursor);
  });
  plotTimer_.setSingleShot(true);
  plotTimer_.setInterval(int(kPlotIntervalNs / 1'000'000));
  connect(&plotTimer_, &QTimer::timeout, this, [this] {
    if (auto pending = std::move(plotPending_)) applyPlots(*pending);
  });

  const SidePanelFrame frame =
      makeSidePanelFrame(this, u"glimpseSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); });
  splitter_ = frame.splitter;
  sideScroll_ = frame.scroll;
  sideScroll_->setMinimumWidth(340);

  auto* centre = new QWidget(splitter_);
  auto* centreLayout = new QVBoxLayout(centre);
  centreLayout->setContentsMargins(4, 6, 4, 4);
  centreLayout->setSpacing(4);
  errorBanner_ = new QLabel(centre);
  errorBanner_->setObjectName(u"glimpseError"_s);
  errorBanner_->setWordWrap(true);
  errorBanner_->setTextFormat(Qt::PlainText);
  errorBanner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  errorBanner_->setStyleSheet(
      u"QLabel { background: #fbe3e0; color: #8a1414; border: 1px solid #e0a39c; "
      "border-radius: 3px; padding: 4px 6px; }"_s);
  errorBanner_->setVisible(false);
  centreLayout->addWidget(errorBanner_);
  canvas_ = new GlimpseCanvas(centre);
  centreLayout->addWidget(canvas_, 1);

  auto* column = new QWidget(splitter_);
  buildRightColumn(column);

  splitter_->addWidget(sideScroll_);
  splitter_->addWidget(centre);
  splitter_->addWidget(column);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setStretchFactor(2, 0);
  splitter_->setSizes({350, 620, 430});

  connect(canvas_, &GlimpseCanvas::settingsEdited, this,
          [this](const GlimpseSettings& settings, bool dragging) { edit(settings, dragging, true); });

  settings_ = presetSettings(Preset::DrawDefault, 512, 512);
  canvas_->setSettings(settings_);
  syncPanel();
  updateStnControls();
}

GlimpseWorkbench::~GlimpseWorkbench() {
  stopApply();
  thread_.stop();
  worker_.reset();  // the thread has finished: none of the worker's events can run any more
}

void GlimpseWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  // Image.
  auto* imageGroup = new QGroupBox(tr("Image"), panel);
  auto* imageLayout = new QVBoxLayout(imageGroup);
  auto* row = new QHBoxLayout();
  sampleBox_ = new QComboBox(imageGroup);
  sampleBox_->setObjectName(u"sample"_s);
  sampleBox_->setPlaceholderText(tr("Sample photo\u2026"));
  for (const auto& sample : sampleImages()) sampleBox_->addItem(sample.name, sample.key);
  sampleBox_->setCurrentIndex(-1);
  sampleBox_->setToolTip(tr("Bundled public-domain / CC0 photos (resources/samples/images/SOURCES.md)"));
  connect(sampleBox_, &QComboBox::activated, this, [this](int index) {
    if (index >= 0) openSample(sampleBox_->itemData(index).toString());
  });
  openButton_ = new QPushButton(tr("Open\u2026"), imageGroup);
  openButton_->setObjectName(u"openImage"_s);
  openButton_->setToolTip(
      tr("Open an image file: PNG, JPEG, BMP, TIFF or WebP (File \u25b8 Open Image, Ctrl+Shift+O)"));
  connect(openButton_, &QPushButton::clicked, this, &GlimpseWorkbench::openRequested);
  row->addWidget(sampleBox_, 1);
  row->addWidget(openButton_);
  imageLayout->addLayout(row);
  imageInfo_ = new QLabel(tr("No image yet"), imageGroup);
  imageInfo_->setObjectName(u"imageInfo"_s);
  imageInfo_->setWordWrap(true);
  imageInfo_->setTextFormat(Qt::PlainText);
  imageLayout->addWidget(imageInfo_);
  loadProgress_ = new QProgressBar(imageGroup);
  loadProgress_->setRange(0, 100);
  loadProgress_->setTextVisible(true);
  loadProgress_->setVisible(false);
  imageLayout->addWidget(loadProgress_);
  layout->addWidget(imageGroup);

  // Glimpse options.
  auto* glimpseGroup = new QGroupBox(tr("Glimpse"), panel);
  auto* glimpseLayout = new QGridLayout(glimpseGroup);
  glimpseLayout->setColumnStretch(1, 1);
  presetBox_ = new QComboBox(glimpseGroup);
  presetBox_->setObjectName(u"preset"_s);
  presetBox_->setPlaceholderText(tr("Preset\u2026"));
  presetBox_->addItem(tr("Whole image (12 \u00d7 12)"), int(Preset::WholeImage));
  presetBox_->addItem(tr("Centre quarter (12 \u00d7 12)"), int(Preset::CentreQuarter));
  presetBox_->addItem(tr("Fine 64 \u00d7 64 (stride 1 px)"), int(Preset::Fine64));
  presetBox_->addItem(tr("DRAW paper default 12 \u00d7 12"), int(Preset::DrawDefault));
  presetBox_->setCurrentIndex(-1);
  presetBox_->setToolTip(tr("Set the Gaussian glimpse (and the STN to the same window) for this image"));
  connect(presetBox_, &QComboBox::activated, this, [this](int index) {
    if (index < 0) return;
    applyPreset(Preset(presetBox_->itemData(index).toInt()));
  });
  auto* reset = new QPushButton(tr("&Reset"), glimpseGroup);
  reset->setObjectName(u"resetGlimpse"_s);
  reset->setToolTip(
      tr("The DRAW paper's default 12 \u00d7 12 glimpse over the whole image; the STN back to the identity"));
  connect(reset, &QPushButton::clicked, this, &GlimpseWorkbench::resetParameters);
  glimpseLayout->addWidget(presetBox_, 0, 0, 1, 2);
  glimpseLayout->addWidget(reset, 0, 2);

  sameWindowCheck_ = new QCheckBox(tr("&Same window: Gaussian vs STN"), glimpseGroup);
  sameWindowCheck_->setObjectName(u"sameWindow"_s);
  sameWindowCheck_->setToolTip(
      tr("The STN samples the Gaussian's filter centres (no-shear, Nx \u00d7 Ny); "
         "both glimpses are shown side by side with their difference"));
  connect(sameWindowCheck_, &QCheckBox::toggled, this, &GlimpseWorkbench::setSameWindow);
  glimpseLayout->addWidget(sameWindowCheck_, 1, 0, 1, 3);

  auto* handles = new QLabel(tr("Handles edit:"), glimpseGroup);
  editGaussianRadio_ = new QRadioButton(tr("&Gaussian"), glimpseGroup);
  editGaussianRadio_->setObjectName(u"editGaussian"_s);
  editStnRadio_ = new QRadioButton(tr("S&TN"), glimpseGroup);
  editStnRadio_->setObjectName(u"editStn"_s);
  editGaussianRadio_->setChecked(true);
  auto* radios = new QButtonGroup(glimpseGroup);
  radios->addButton(editGaussianRadio_);
  radios->addButton(editStnRadio_);
  connect(editStnRadio_, &QRadioButton::toggled, this, &GlimpseWorkbench::setEditStn);
  auto* radioRow = new QHBoxLayout();
  radioRow->addWidget(handles);
  radioRow->addWidget(editGaussianRadio_);
  radioRow->addWidget(editStnRadio_);
  radioRow->addStretch(1);
  glimpseLayout->addLayout(radioRow, 2, 0, 1, 3);

  writeCheck_ = new QCheckBox(tr("&Write mode"), glimpseGroup);
  writeCheck_->setObjectName(u"writeMode"_s);
  writeCheck_->setToolTip(
      tr("DRAW's write: each exact glimpse is added back to a canvas, (1/\u03b3) Fy\u1d40 P Fx, "
         "as DRAW builds its image"));
  connect(writeCheck_, &QCheckBox::toggled, this, &GlimpseWorkbench::setWriteMode);
  clearCanvasButton_ = new QPushButton(tr("C&lear canvas"), glimpseGroup);
  clearCanvasButton_->setObjectName(u"clearCanvas"_s);
  clearCanvasButton_->setEnabled(false);
  connect(clearCanvasButton_, &QPushButton::clicked, this, &GlimpseWorkbench::clearCanvas);
  glimpseLayout->addWidget(writeCheck_, 3, 0, 1, 2);
  glimpseLayout->addWidget(clearCanvasButton_, 3, 2);

  clampLabel_ = new QLabel(glimpseGroup);
  clampLabel_->setObjectName(u"clamps"_s);
  clampLabel_->setWordWrap(true);
  clampLabel_->setTextFormat(Qt::PlainText);
  clampLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  clampLabel_->setMinimumHeight(clampLabel_->fontMetrics().height() + 8);
  glimpseLayout->addWidget(clampLabel_, 4, 0, 1, 3);
  layout->addWidget(glimpseGroup);

  paramTabs_ = new QTabWidget(panel);
  paramTabs_->setObjectName(u"glimpseParameters"_s);
  paramTabs_->addTab(buildGaussianPage(), tr("Gaussian (DRAW)"));
  paramTabs_->addTab(buildStnPage(), tr("Spatial transformer"));
  layout->addWidget(paramTabs_);
  layout->addStretch(1);
}

QWidget* GlimpseWorkbench::buildGaussianPage() {
  auto* page = new QWidget();
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(6, 6, 6, 6);

  auto* pixelGroup = new QGroupBox(tr("Pixel parameters"), page);
  auto* grid = new QGridLayout(pixelGroup);
  grid->setHorizontalSpacing(6);
  grid->setVerticalSpacing(3);
  grid->addWidget(new QLabel(u"<b>x</b>"_s, pixelGroup), 0, 1, Qt::AlignHCenter);
  grid->addWidget(new QLabel(u"<b>y</b>"_s, pixelGroup), 0, 2, Qt::AlignHCenter);
  const QString axisNames[2] = {u"x"_s, u"y"_s};
  const QString fieldKeys[5] = {u"centre"_s, u"first"_s, u"stride"_s, u"sigma"_s, u"n"_s};
  const QString fieldLabels[5] = {tr("Centre"), tr("First u"), tr("Stride d"), tr("Sigma s"), tr("N")};
  const QString fieldTips[5] = {
      tr("Centre of the grid of filter centres, in pixels (pixel a has its centre at a)"),
      tr("u: centre of filter 0; mu_i = u + i d"),
      tr("d: distance between neighbouring filter centres, in pixels"),
      tr("s: standard deviation of every filter, in pixels"),
      tr("Filters on this axis (the glimpse is Ny \u00d7 Nx)"),
  };
  for (int f = 0; f < 5; ++f) {
    auto* label = new QLabel(fieldLabels[f], pixelGroup);
    label->setToolTip(fieldTips[f]);
    grid->addWidget(label, f + 1, 0);
    for (int a = 0; a < 2; ++a) {
      auto* edit = new ParamEdit(axisNames[a] + u"."_s + fieldKeys[f], pixelGroup);
      edit->setToolTips(fieldTips[f]);
      switch (f) {
        case 0: edit->configure(0, 512, false, -1e6, 1e6, 2, 1.0); break;
        case 1:
          edit->configure(0, 512, false, -1e6, 1e6, 2, 1.0);
          edit->setSliderVisible(false);
          break;
        case 2: edit->configure(0.05, 512, true, -1e5, 1e5, 3, 0.0); break;
        case 3: edit->configure(0.05, 256, true, -1e5, 1e5, 3, 0.0); break;
        case 4: edit->configure(1, 256, false, 0, 4096, 0, 1.0); break;
      }
      edit->onEdited = [this, a, f](double value, bool dragging) { editGaussianAxis(a, f, value, dragging); };
      gaussianEdits_[a][f] = edit;
      grid->addWidget(edit, f + 1, a + 1);
    }
  }
  auto* gammaLabel = new QLabel(tr("Gamma \u03b3"), pixelGroup);
  gammaEdit_ = new ParamEdit(u"gamma"_s, pixelGroup);
  gammaEdit_->configure(0.01, 100, true, -1e3, 1e4, 4, 0.0);
  gammaEdit_->setToolTips(tr("Intensity: the read is \u03b3 Fy I Fx\u1d40, the write (1/\u03b3) Fy\u1d40 P Fx"));
  gammaEdit_->onEdited = [this](double value, bool dragging) {
    auto s = settings_;
    s.gaussian.gamma = value;
    edit(s, dragging);
  };
  grid->addWidget(gammaLabel, 6, 0);
  grid->addWidget(gammaEdit_, 6, 1, 1, 2);
  linkAxesCheck_ = new QCheckBox(tr("&Link x and y (stride, sigma, N)"), pixelGroup);
  linkAxesCheck_->setObjectName(u"linkAxes"_s);
  linkAxesCheck_->setChecked(true);
  grid->addWidget(linkAxesCheck_, 7, 0, 1, 3);
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(2, 1);
  layout->addWidget(pixelGroup);

  auto* drawGroup = new QGroupBox(tr("The paper's parameters (eq. 21\u201324)"), page);
  auto* form = new QFormLayout(drawGroup);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  const QString drawKeys[5] = {u"draw.gx"_s, u"draw.gy"_s, u"draw.log_sigma2"_s, u"draw.log_delta"_s,
                               u"draw.log_gamma"_s};
  const QString drawLabels[5] = {u"g\u0303x"_s, u"g\u0303y"_s, u"log \u03c3\u00b2"_s, u"log \u03b4\u0303"_s,
                                 u"log \u03b3"_s};
  const QString drawTips[5] = {
      tr("gx = (W + 1) / 2 (g\u0303x + 1): \u22121 .. 1 spans the image"),
      tr("gy = (H + 1) / 2 (g\u0303y + 1)"),
      tr("log of the filters' variance, in pixels\u00b2"),
      tr("\u03b4 = (max(W, H) \u2212 1) / (N \u2212 1) \u03b4\u0303: 0 covers the image"),
      tr("log of the intensity \u03b3"),
  };
  const double ranges[5][2] = {{-1.5, 1.5}, {-1.5, 1.5}, {-5.0, 12.0}, {-7.0, 1.0}, {-4.0, 4.0}};
  for (int k = 0; k < 5; ++k) {
    auto* edit = new ParamEdit(drawKeys[k], drawGroup);
    edit->configure(ranges[k][0], ranges[k][1], false, -1e3, 1e3, 4, 0.01);
    edit->setToolTips(drawTips[k]);
    edit->onEdited = [this, k](double value, bool dragging) { editDraw(k, value, dragging); };
    drawEdits_[k] = edit;
    form->addRow(drawLabels[k], edit);
  }
  drawExactLabel_ = smallNote(QString(), drawGroup);
  drawExactLabel_->setObjectName(u"drawExact"_s);
  form->addRow(drawExactLabel_);
  layout->addWidget(drawGroup);
  layout->addWidget(smallNote(tr("Outline: filter centres \u00b1 d/2. Dashed: \u00b12s around the outer centres. "
                                 "Filled ellipse: one filter's 1s contour."),
                              page));
  layout->addStretch(1);
  return page;
}

QWidget* GlimpseWorkbench::buildStnPage() {
  auto* page = new QWidget();
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(6, 6, 6, 6);
  stnEdits_.assign(kStnFieldCount, nullptr);

  auto* familyForm = new QFormLayout();
  familyBox_ = new QComboBox(page);
  familyBox_->setObjectName(u"family"_s);
  for (Family family : {Family::NoShear, Family::Similarity, Family::TranslationScale, Family::Affine}) {
    familyBox_->addItem(familyName(family), int(family));
  }
  familyBox_->setToolTip(
      tr("The constrained families of theta (Jaderberg et al. 2015): changing the family keeps "
         "the window as close as the new family allows"));
  familyForm->addRow(tr("&Family:"), familyBox_);
  layout->addLayout(familyForm);
  familyNote_ = smallNote(QString(), page);
  layout->addWidget(familyNote_);

  familyStack_ = new QStackedWidget(page);
  const auto makePage = [&](std::initializer_list<std::tuple<int, QString, QString, double, double, bool>> rows) {
    auto* p = new QWidget(familyStack_);
    auto* form = new QFormLayout(p);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const auto& [field, key, label, lo, hi, logScale] : rows) {
      auto* edit = new ParamEdit(key, p);
      edit->configure(lo, hi, logScale, -1e3, 1e3, 4, 0.01);
      edit->onEdited = [this, field](double value, bool dragging) { editStn(field, value, dragging); };
      stnEdits_[std::size_t(field)] = edit;
      form->addRow(label, edit);
    }
    familyStack_->addWidget(p);
    return p;
  };
  makePage({{kNsScaleX, u"stn.no_shear.scale_x"_s, tr("Scale x"), 0.01, 2.0, true},
            {kNsScaleY, u"stn.no_shear.scale_y"_s, tr("Scale y"), 0.01, 2.0, true},
            {kNsShiftX, u"stn.no_shear.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {kNsShiftY, u"stn.no_shear.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  makePage({{kSimScale, u"stn.similarity.scale"_s, tr("Scale"), 0.01, 2.0, true},
            {kSimRotation, u"stn.similarity.rotation"_s, tr("Rotation"), -180.0, 180.0, false},
            {kSimShiftX, u"stn.similarity.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {kSimShiftY, u"stn.similarity.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  stnEdits_[kSimRotation]->setSuffix(u"\u00b0"_s);
  stnEdits_[kSimRotation]->configure(-180.0, 180.0, false, -3600.0, 3600.0, 2, 1.0);
  makePage({{kTsScale, u"stn.translation_scale.scale"_s, tr("Scale"), 0.01, 2.0, true},
            {kTsShiftX, u"stn.translation_scale.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {kTsShiftY, u"stn.translation_scale.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  makePage({{kAffine0, u"stn.theta0"_s, u"\u03b8\u2081\u2081"_s, -2.0, 2.0, false},
            {kAffine1, u"stn.theta1"_s, u"\u03b8\u2081\u2082"_s, -2.0, 2.0, false},
            {kAffine2, u"stn.theta2"_s, u"\u03b8\u2081\u2083"_s, -1.5, 1.5, false},
            {kAffine3, u"stn.theta3"_s, u"\u03b8\u2082\u2081"_s, -2.0, 2.0, false},
            {kAffine4, u"stn.theta4"_s, u"\u03b8\u2082\u2082"_s, -2.0, 2.0, false},
            {kAffine5, u"stn.theta5"_s, u"\u03b8\u2082\u2083"_s, -1.5, 1.5, false}});
  layout->addWidget(familyStack_);

  auto* outputGroup = new QGroupBox(tr("Output and sampler"), page);
  auto* outputForm = new QFormLayout(outputGroup);
  outputForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (auto [field, key, label] :
       {std::tuple{int(kOutW), u"stn.out_w"_s, tr("Width")}, std::tuple{int(kOutH), u"stn.out_h"_s, tr("Height")}}) {
    auto* edit = new ParamEdit(key, outputGroup);
    edit->configure(1, 256, false, 1, attn::glimpse::kMaxStnSide, 0, 1.0);
    edit->setSuffix(u" px"_s);
    edit->onEdited = [this, f = field](double value, bool dragging) { editStn(f, value, dragging); };
    stnEdits_[std::size_t(field)] = edit;
    outputForm->addRow(label, edit);
  }
  samplingBox_ = new QComboBox(outputGroup);
  samplingBox_->setObjectName(u"sampling"_s);
  samplingBox_->addItem(tr("Bilinear"), int(attn::glimpse::Sampling::Bilinear));
  samplingBox_->addItem(tr("Nearest"), int(attn::glimpse::Sampling::Nearest));
  outputForm->addRow(tr("Sampling"), samplingBox_);
  paddingBox_ = new QComboBox(outputGroup);
  paddingBox_->setObjectName(u"padding"_s);
  paddingBox_->addItem(tr("Zeros"), int(attn::glimpse::Padding::Zeros));
  paddingBox_->addItem(tr("Border"), int(attn::glimpse::Padding::Border));
  outputForm->addRow(tr("Padding"), paddingBox_);
  layout->addWidget(outputGroup);

  thetaLabel_ = new QLabel(page);
  thetaLabel_->setObjectName(u"theta"_s);
  thetaLabel_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  thetaLabel_->setTextFormat(Qt::PlainText);
  thetaLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  thetaLabel_->setFrameShape(QFrame::StyledPanel);
  thetaLabel_->setMargin(4);
  thetaLabel_->setToolTip(tr("theta as torch.nn.functional.affine_grid takes it (align_corners=False)"));
  layout->addWidget(thetaLabel_);
  layout->addStretch(1);

  connect(familyBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (syncing_ || index < 0) return;
    auto s = settings_;
    const Family family = Family(familyBox_->itemData(index).toInt());
    const int w = image_ ? image_->width : 512;
    const int h = image_ ? image_->height : 512;
    const auto theta = s.stn.theta(w, h);
    switch (family) {
      case Family::NoShear: s.stn.no_shear = attn::glimpse::no_shear_of(theta); break;
      case Family::Similarity: s.stn.similarity = attn::glimpse::similarity_of(theta, w, h); break;
      case Family::TranslationScale: s.stn.translation_scale = attn::glimpse::translation_scale_of(theta); break;
      case Family::Affine: s.stn.affine = theta; break;
    }
    s.stn.family = family;
    edit(s, false);
  });
  connect(samplingBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (syncing_ || index < 0) return;
    auto s = settings_;
    s.stn.sampler.sampling = attn::glimpse::Sampling(samplingBox_->itemData(index).toInt());
    edit(s, false);
  });
  connect(paddingBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (syncing_ || index < 0) return;
    auto s = settings_;
    s.stn.sampler.padding = attn::glimpse::Padding(paddingBox_->itemData(index).toInt());
    edit(s, false);
  });
  return page;
}

void GlimpseWorkbench::buildRightColumn(QWidget* column) {
  auto* layout = new QVBoxLayout(column);
  layout->setContentsMargins(4, 6, 8, 4);
  layout->setSpacing(4);
  auto* split = new QSplitter(Qt::Vertical, column);
  split->setChildrenCollapsible(false);

  auto* views = new QWidget(split);
  auto* grid = new QGridLayout(views);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(6);
  glimpseView_ = new PixelView(views);
  glimpseView_->setObjectName(u"gaussianGlimpse"_s);
  glimpseView_->setCaption(tr("Gaussian read"));
  glimpseView_->setPlaceholder(tr("The glimpse appears here"));
  glimpseView_->setToolTip(tr("\u03b3 Fy I Fx\u1d40: the Gaussian glimpse, one square per filter"));
  stnView_ = new PixelView(views);
  stnView_->setObjectName(u"stnGlimpse"_s);
  stnView_->setCaption(tr("STN glimpse"));
  stnView_->setToolTip(tr("grid_sample(I, affine_grid(\u03b8)): the spatial transformer's glimpse"));
  differenceView_ = new PixelView(views);
  differenceView_->setObjectName(u"glimpseDifference"_s);
  differenceView_->setCaption(tr("|Gaussian \u2212 STN|"));
  differenceView_->setPlaceholder(tr("Turn on \u201csame window\u201d to compare the two glimpses of one region"));
  differenceView_->setToolTip(
      tr("Largest channel difference per pixel, magma colour map, 0 .. the largest difference"));
  writeView_ = new PixelView(views);
  writeView_->setObjectName(u"writeCanvas"_s);
  writeView_->setCaption(tr("Write canvas"));
  writeView_->setPlaceholder(tr("Turn on \u201cwrite mode\u201d to write each glimpse back to a canvas, as DRAW does"));
  grid->addWidget(glimpseView_, 0, 0);
  grid->addWidget(stnView_, 0, 1);
  grid->addWidget(differenceView_, 1, 0);
  grid->addWidget(writeView_, 1, 1);
  // Shown only while same-window or write mode is on: otherwise the two glimpses get the room.
  differenceView_->setVisible(false);
  writeView_->setVisible(false);
  auto* status = new QHBoxLayout();
  busyLabel_ = new QLabel(views);
  busyLabel_->setObjectName(u"glimpseBusy"_s);
  busyLabel_->setForegroundRole(QPalette::PlaceholderText);
  errorSummary_ = new QLabel(views);
  errorSummary_->setObjectName(u"errorSummary"_s);
  errorSummary_->setTextFormat(Qt::PlainText);
  status->addWidget(errorSummary_, 1);
  status->addWidget(busyLabel_);
  grid->addLayout(status, 2, 0, 1, 2);

  plotTabs_ = new QTabWidget(split);
  plotTabs_->setDocumentMode(true);
  auto* curves = new QWidget(plotTabs_);
  auto* curvesLayout = new QVBoxLayout(curves);
  curvesLayout->setContentsMargins(0, 2, 0, 0);
  curvesLayout->setSpacing(2);
  fxPlot_ = new QCustomPlot(curves);
  fxPlot_->setObjectName(u"fxPlot"_s);
  setupPlot(fxPlot_, tr("Fx"), tr("x (px)"));
  fyPlot_ = new QCustomPlot(curves);
  fyPlot_->setObjectName(u"fyPlot"_s);
  setupPlot(fyPlot_, tr("Fy"), tr("y (px)"));
  curvesLayout->addWidget(fxPlot_, 1);
  curvesLayout->addWidget(fyPlot_, 1);
  plotNote_ = smallNote(QString(), curves);
  curvesLayout->addWidget(plotNote_);
  plotTabs_->addTab(curves, tr("Filterbank curves"));

  bankMapPlot_ = new QCustomPlot(plotTabs_);
  bankMapPlot_->setObjectName(u"bankMaps"_s);
  bankMapPlot_->plotLayout()->clear();
  for (int k = 0; k < 2; ++k) {
    auto* title = new QCPTextElement(bankMapPlot_, k == 0 ? tr("Fx (filter \u00d7 x)") : tr("Fy (filter \u00d7 y)"));
    QFont font = bankMapPlot_->font();
    font.setBold(true);
    title->setFont(font);
    auto* rect = new QCPAxisRect(bankMapPlot_);
    bankMapPlot_->plotLayout()->addElement(2 * k, 0, title);
    bankMapPlot_->plotLayout()->addElement(2 * k + 1, 0, rect);
    rect->axis(QCPAxis::atBottom)->setLabel(k == 0 ? tr("x (px)") : tr("y (px)"));
    rect->axis(QCPAxis::atLeft)->setLabel(tr("filter"));
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true);  // filter 0 on top, as a matrix
    auto* map = new QCPColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    map->setInterpolate(false);
    map->setGradient(render::gradient(render::Colormap::Viridis));
    map->setTightBoundary(true);
  }
  plotTabs_->addTab(bankMapPlot_, tr("Filterbank heatmaps"));

  split->addWidget(views);
  split->addWidget(plotTabs_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({470, 380});  // the glimpses first; the plots keep enough height for two readable axes
  layout->addWidget(split, 1);
  column->setMinimumWidth(380);
}

// ---- samples and loading ------------------------------------------------------------------------------

bool GlimpseWorkbench::isImageFileName(const QString& path) {
  static const QStringList suffixes = {u"png"_s, u"jpg"_s, u"jpeg"_s, u"jpe"_s, u"bmp"_s,
                                       u"dib"_s, u"tif"_s, u"tiff"_s, u"webp"_s};
  return suffixes.contains(QFileInfo(path).suffix().toLower());
}

bool GlimpseWorkbench::openSample(const QString& key) {
  const QString resource = sampleImageResource(key);
  if (resource.isEmpty()) {
    emit statusMessage(tr("There is no sample called %1").arg(key), 6000);
    return false;
  }
  GlimpseSource source;
  source.name = QFileInfo(resource).fileName();
  source.path = resource;
  source.limits = limits_;
  startLoad(std::move(source));
  return true;
}

void GlimpseWorkbench::openFile(const QString& path) {
  GlimpseSource source;
  source.name = QFileInfo(path).fileName();
  source.path = path;
  source.limits = limits_;
  startLoad(std::move(source));
}

void GlimpseWorkbench::openWithSettings(const QString& path, const GlimpseSettings& settings) {
  GlimpseSource source;
  source.name = QFileInfo(path).fileName();
  source.path = path;
  source.limits = limits_;
  startLoad(std::move(source));
  settingsForLoad_ = std::pair{loadRequested_, settings};
}

void GlimpseWorkbench::startLoad(GlimpseSource source) {
  // A load that has not finished yet is dropped by the worker for this one. Keep it (with the settings and
  // session state that were to come with it): if this one fails, that one is what "the previous image"
  // means, so it is opened after all (`attnscope --image bad.png` over a restored session's photo).
  if (currentLoad_ && loadSettled_ < loadRequested_) {
    superseded_ = SupersededLoad{*currentLoad_,
                                 settingsForLoad_ && settingsForLoad_->first == loadRequested_
                                     ? std::optional(settingsForLoad_->second)
                                     : std::nullopt,
                                 pendingState_};
  }
  settingsForLoad_.reset();
  currentLoad_ = source;
  ++loadRequested_;
  loadingName_ = source.name;
  loadProgress_->setValue(0);
  loadProgress_->setFormat(tr("opening %1").arg(source.name));
  loadProgress_->setVisible(true);
  worker_->load(loadRequested_, std::move(source));
}

QString GlimpseWorkbench::imagePath() const { return image_ ? image_->path : QString(); }

attn::io::GlimpseSection GlimpseWorkbench::state() const {
  attn::io::GlimpseSection s;
  if (pendingState_) s = *pendingState_;
  s.write_mode = writeMode_;
  s.edit_stn = editStnRadio_->isChecked();
  if (pendingState_ || !image_) return s;
  s.settings = settings_;
  s.image = {attn::io::ImageRef::Kind::File, image_->path.toStdString()};
  for (const auto& sample : sampleImages()) {
    if (sample.resource == image_->path) s.image = {attn::io::ImageRef::Kind::Sample, sample.key.toStdString()};
  }
  s.image_width = image_->width;
  s.image_height = image_->height;
  return s;
}

void GlimpseWorkbench::saveTo(attn::io::Session& session) const { session.glimpse = state(); }

QStringList GlimpseWorkbench::restoreFrom(const attn::io::Session& session, const QString& origin) {
  // Pixel numbers refer to the image: without it the glimpse starts over on the default photo.
  if (session.glimpse && imageRefExists(session.glimpse->image)) {
    applyState(*session.glimpse);
    return {};
  }
  QStringList notes;
  if (session.glimpse)
    notes.append(goneNote(origin, QString::fromStdString(session.glimpse->image.value), tr("the Glimpse tab")));
  setWriteMode(false);
  setEditStn(false);
  openSample(defaultSampleKey());
  return notes;
}

void GlimpseWorkbench::applyState(const attn::io::GlimpseSection& state) {
  setWriteMode(state.write_mode);
  setEditStn(state.edit_stn);
  const QString path = state.image.kind == attn::io::ImageRef::Kind::Sample
                           ? sampleImageResource(QString::fromStdString(state.image.value))
                           : QString::fromStdString(state.image.value);
  if (path.isEmpty()) return;
  if (image_ && image_->path == path && !isLoading()) {
    setSettings(state.settings);
    return;
  }
  openWithSettings(path, state.settings);
  pendingState_ = state;
}

GlimpseSettings GlimpseWorkbench::rescaled(const GlimpseSettings& settings, int fromW, int fromH, int toW,
                                           int toH) const {
  GlimpseSettings out = settings;
  if (fromW <= 0 || fromH <= 0) return out;
  const auto scaleAxis = [](attn::glimpse::GaussianAxis& axis, double k) {
    // Edges scale, not centres: pixel a's centre is at a, its left edge at a - 0.5.
    axis.first = (axis.first + 0.5) * k - 0.5;
    axis.stride *= k;
    axis.sigma *= k;
  };
  scaleAxis(out.gaussian.x, double(toW) / fromW);
  scaleAxis(out.gaussian.y, double(toH) / fromH);
  return out;  // the STN is in normalised coordinates: it covers the same part of any image
}

void GlimpseWorkbench::onLoaded(std::shared_ptr<const GlimpseImage> image) {
  if (!image || image->serial != loadRequested_) return;  // a newer load is on its way
  loadSettled_ = image->serial;
  superseded_.reset();
  const bool fallback = image->serial == fallbackLoad_;  // after a failed load: its error stays in view
  pendingState_.reset();
  loadProgress_->setVisible(false);
  const auto previous = image_;
  image_ = std::move(image);
  GlimpseSettings next = settings_;
  if (settingsForLoad_ && settingsForLoad_->first == image_->serial) {
    next = settingsForLoad_->second;
    settingsForLoad_.reset();
  } else if (previous) {
    next = rescaled(settings_, previous->width, previous->height, image_->width, image_->height);
  } else {
    next = presetSettings(Preset::DrawDefault, image_->width, image_->height, settings_);
  }
  if (!fallback) {
    lastError_.clear();
    errorBanner_->setVisible(false);
  }
  canvas_->setImage(image_);
  imageInfo_->setText(tr("%1 \u00b7 %2 \u00d7 %3 px \u00b7 %4 channels \u00b7 %5 pyramid levels \u00b7 opened in %6 ms")
                          .arg(image_->name)
                          .arg(image_->width)
                          .arg(image_->height)
                          .arg(image_->pyramid->base().channels)
                          .arg(image_->pyramid->levels())
                          .arg(image_->loadMs, 0, 'f', 0));
  imageInfo_->setToolTip(image_->path);
  {
    const QSignalBlocker block(sampleBox_);
    int index = -1;
    for (int i = 0; i < sampleBox_->count(); ++i) {
      if (sampleImageResource(sampleBox_->itemData(i).toString()) == image_->path) index = i;
    }
    sampleBox_->setCurrentIndex(index);
  }
  updateSliderRanges();
  setSettings(next);
  if (!fallback) {
    emit statusMessage(tr("Opened %1 (%2 \u00d7 %3)").arg(image_->name).arg(image_->width).arg(image_->height), 5000);
  }
  emit imageLoaded(image_->path);
}

void GlimpseWorkbench::onLoadFailed(quint64 serial, const QString& message) {
  if (serial != loadRequested_) return;
  loadSettled_ = serial;
  loadProgress_->setVisible(false);
  settingsForLoad_.reset();
  pendingState_.reset();
  if (!superseded_) {
    showError(message);
    emit imageFailed(message);
    return;
  }
  // The image this one replaced before it had opened is the previous image: it opens now, and the error
  // stays in view while it does (and after: onLoaded leaves it for a fallback).
  SupersededLoad back = std::move(*superseded_);
  superseded_.reset();
  showError(message, back.source.name);
  emit imageFailed(message);
  startLoad(back.source);
  fallbackLoad_ = loadRequested_;
  if (back.settings) settingsForLoad_ = std::pair{loadRequested_, *back.settings};
  pendingState_ = back.state;
}

void GlimpseWorkbench::showError(const QString& message, const QString& previousName) {
  lastError_ = message;
  const QString previous = !previousName.isEmpty() ? previousName : image_ ? image_->name : QString();
  const QString kept = !previous.isEmpty() ? tr("The previous image (%1) and its parameters stay.").arg(previous)
                                           : tr("No image is open.");
  errorBanner_->setText(tr("Cannot open the image: %1\n%2").arg(message, kept));
  errorBanner_->setVisible(true);
  emit statusMessage(tr("Cannot open the image: %1. %2").arg(message, kept), 0);
}

// ---- settings -----------------------------------------------------------------------------------------

GlimpseSettings GlimpseWorkbench::presetSettings(Preset preset, int width, int height, const GlimpseSettings& base) {
  GlimpseSettings s = base;
  const double cx = 0.5 * (width - 1);
  const double cy = 0.5 * (height - 1);
  GaussianGlimpse g;
  switch (preset) {
    case Preset::WholeImage: {
      const int n = 12;
      g = attn::glimpse::centred_glimpse(cx, cy, n, double(width) / n, 0.5 * double(width) / n);
      g.y.stride = double(height) / n;
      g.y.sigma = 0.5 * g.y.stride;
      g.y.first = cy - 0.5 * (n - 1) * g.y.stride;
      break;
    }
    case Preset::CentreQuarter: {
      const int n = 12;
      g = attn::glimpse::centred_glimpse(cx, cy, n, 0.5 * width / n, 0.25 * width / n);
      g.y.stride = 0.5 * height / n;
      g.y.sigma = 0.5 * g.y.stride;
      g.y.first = cy - 0.5 * (n - 1) * g.y.stride;
      break;
    }
    case Preset::Fine64: g = attn::glimpse::centred_glimpse(cx, cy, 64, 1.0, 0.5); break;
    case Preset::DrawDefault: {
      attn::glimpse::DrawParams params;  // all zeros: centred, delta~ = 1 (whole image), sigma = 1, gamma = 1
      params.nx = params.ny = 12;
      g = attn::glimpse::from_draw(params, width, height);
      break;
    }
  }
  s.gaussian = g;
  // The STN gets the same window, so switching the handles over shows the same region.
  s.stn.family = Family::NoShear;
  s.stn.no_shear = attn::glimpse::stn_of(attn::glimpse::sanitise(g, width, height).glimpse, width, height);
  s.stn.out_w = std::clamp(g.x.n, 1, attn::glimpse::kMaxFilters);
  s.stn.out_h = std::clamp(g.y.n, 1, attn::glimpse::kMaxFilters);
  return s;
}

attn::Result<GlimpseSettings> GlimpseWorkbench::settingsFromSpecs(const QString& gaussianSpec, const QString& stnSpec,
                                                                  bool sameWindow) const {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  GlimpseSettings settings = presetSettings(Preset::DrawDefault, w, h);
  if (!gaussianSpec.isEmpty()) {
    auto parsed = attn::glimpse::parse_gaussian_spec(gaussianSpec.toStdString(), w, h, settings.gaussian);
    if (!parsed) return std::unexpected(parsed.error());
    settings.gaussian = *parsed;
    settings.stn.no_shear = attn::glimpse::stn_of(attn::glimpse::sanitise(settings.gaussian, w, h).glimpse, w, h);
    settings.stn.out_w = std::clamp(settings.gaussian.x.n, 1, attn::glimpse::kMaxStnSide);
    settings.stn.out_h = std::clamp(settings.gaussian.y.n, 1, attn::glimpse::kMaxStnSide);
  }
  if (!stnSpec.isEmpty()) {
    auto parsed = attn::glimpse::parse_stn_spec(stnSpec.toStdString(), settings.stn);
    if (!parsed) return std::unexpected(parsed.error());
    settings.stn = *parsed;
  }
  settings.same_window = sameWindow;
  return settings;
}

void GlimpseWorkbench::applyPreset(Preset preset) {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  edit(presetSettings(preset, w, h, settings_), false);
  const QSignalBlocker block(presetBox_);
  presetBox_->setCurrentIndex(-1);  // the same preset can be chosen again after an edit
}

void GlimpseWorkbench::resetParameters() {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  GlimpseSettings s = presetSettings(Preset::DrawDefault, w, h);
  s.stn = attn::glimpse::StnSettings{};
  s.same_window = false;
  edit(s, false);
}

void GlimpseWorkbench::setSettings(const GlimpseSettings& settings) { edit(settings, false); }

void GlimpseWorkbench::setSameWindow(bool on) {
  if (settings_.same_window == on && sameWindowCheck_->isChecked() == on) return;
  auto s = settings_;
  s.same_window = on;
  edit(s, false);
}

void GlimpseWorkbench::setWriteMode(bool on) {
  if (writeMode_ == on && writeCheck_->isChecked() == on) return;
  writeMode_ = on;
  {
    const QSignalBlocker block(writeCheck_);
    writeCheck_->setChecked(on);
  }
  clearCanvasButton_->setEnabled(on);
  if (!on) {
    writeView_->setImage({});
    writeView_->setCaption(tr("Write canvas"));
  }
  post();
}

void GlimpseWorkbench::clearCanvas() {
  worker_->clearCanvas();
  post();
}

void GlimpseWorkbench::setEditStn(bool stn) {
  {
    const QSignalBlocker a(editStnRadio_);
    const QSignalBlocker b(editGaussianRadio_);
    editStnRadio_->setChecked(stn);
    editGaussianRadio_->setChecked(!stn);
  }
  canvas_->setTarget(stn ? GlimpseCanvas::Target::Stn : GlimpseCanvas::Target::Gaussian);
  if (paramTabs_) paramTabs_->setCurrentIndex(stn ? 1 : 0);
}

void GlimpseWorkbench::edit(const GlimpseSettings& settings, bool dragging, bool fromCanvas) {
  settings_ = settings;
  dragging_ = dragging;
  if (!fromCanvas || !(canvas_->settings() == settings_)) canvas_->setSettings(settings_);
  syncPanel();
  updateStnControls();
  post();
  emit settingsChanged();
}

void GlimpseWorkbench::editGaussianAxis(int axis, int field, double value, bool dragging) {
  auto s = settings_;
  const bool link = linkAxesCheck_->isChecked() && field >= 2;
  for (int a = 0; a < 2; ++a) {
    if (a != axis && !link) continue;
    auto& ax = a == 0 ? s.gaussian.x : s.gaussian.y;
    const double centre = ax.centre();
    switch (field) {
      case 0: ax.first = value - 0.5 * (ax.n - 1) * ax.stride; break;
      case 1: ax.first = value; break;
      case 2:
        ax.stride = value;
        if (std::isfinite(centre)) ax.first = centre - 0.5 * (ax.n - 1) * ax.stride;
        break;
      case 3: ax.sigma = value; break;
      case 4:
        ax.n = int(std::lround(value));
        if (std::isfinite(centre)) ax.first = centre - 0.5 * (ax.n - 1) * ax.stride;
        break;
    }
  }
  edit(s, dragging);
}

void GlimpseWorkbench::editDraw(int field, double value, bool dragging) {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  attn::glimpse::DrawParams p;
  p.gx_tilde = drawEdits_[0]->value();
  p.gy_tilde = drawEdits_[1]->value();
  p.log_sigma2 = drawEdits_[2]->value();
  p.log_delta_tilde = drawEdits_[3]->value();
  p.log_gamma = drawEdits_[4]->value();
  double* fields[5] = {&p.gx_tilde, &p.gy_tilde, &p.log_sigma2, &p.log_delta_tilde, &p.log_gamma};
  *fields[field] = value;
  p.nx = settings_.gaussian.x.n;
  p.ny = settings_.gaussian.y.n;
  auto s = settings_;
  s.gaussian = attn::glimpse::from_draw(p, w, h);
  edit(s, dragging);
}

void GlimpseWorkbench::editStn(int field, double value, bool dragging) {
  auto s = settings_;
  auto& stn = s.stn;
  switch (field) {
    case kNsScaleX: stn.no_shear.scale_x = value; break;
    case kNsScaleY: stn.no_shear.scale_y = value; break;
    case kNsShiftX: stn.no_shear.shift_x = value; break;
    case kNsShiftY: stn.no_shear.shift_y = value; break;
    case kSimScale: stn.similarity.scale = value; break;
    case kSimRotation: stn.similarity.rotation = value * std::numbers::pi / 180.0; break;
    case kSimShiftX: stn.similarity.shift_x = value; break;
    case kSimShiftY: stn.similarity.shift_y = value; break;
    case kTsScale: stn.translation_scale.scale = value; break;
    case kTsShiftX: stn.translation_scale.shift_x = value; break;
    case kTsShiftY: stn.translation_scale.shift_y = value; break;
    case kOutW: stn.out_w = int(std::lround(value)); break;
    case kOutH: stn.out_h = int(std::lround(value)); break;
    default:
      if (field >= kAffine0 && field <= kAffine5) stn.affine[std::size_t(field - kAffine0)] = value;
      break;
  }
  edit(s, dragging);
}

void GlimpseWorkbench::updateSliderRanges() {
  const double w = image_ ? image_->width : 512;
  const double h = image_ ? image_->height : 512;
  const double size[2] = {w, h};
  for (int a = 0; a < 2; ++a) {
    gaussianEdits_[a][0]->setSliderRange(0.0, size[a] - 1.0);
    gaussianEdits_[a][1]->setSliderRange(-size[a] / 2, size[a]);
    gaussianEdits_[a][2]->setSliderRange(0.05, std::max(w, h));
    gaussianEdits_[a][3]->setSliderRange(0.05, std::max(w, h) / 2);
  }
}

void GlimpseWorkbench::syncPanel() {
  syncing_ = true;
  const auto& g = settings_.gaussian;
  const attn::glimpse::GaussianAxis* axes[2] = {&g.x, &g.y};
  for (int a = 0; a < 2; ++a) {
    gaussianEdits_[a][0]->setValue(axes[a]->centre());
    gaussianEdits_[a][1]->setValue(axes[a]->first);
    gaussianEdits_[a][2]->setValue(axes[a]->stride);
    gaussianEdits_[a][3]->setValue(axes[a]->sigma);
    gaussianEdits_[a][4]->setValue(axes[a]->n);
  }
  gammaEdit_->setValue(g.gamma);

  // The paper's form of what the engine will use (the sanitised glimpse: no NaN from N = 1 or sigma = 0).
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  const auto used = attn::glimpse::sanitise(g, w, h).glimpse;
  const auto fit = attn::glimpse::to_draw(used, w, h);
  const double values[5] = {fit.params.gx_tilde, fit.params.gy_tilde, fit.params.log_sigma2, fit.params.log_delta_tilde,
                            fit.params.log_gamma};
  bool allFinite = true;
  for (int k = 0; k < 5; ++k) {
    drawEdits_[k]->setValue(values[k]);
    allFinite = allFinite && std::isfinite(values[k]);
  }
  if (!allFinite) {
    setLabel(drawExactLabel_, tr("Not expressible in the paper's form (N = 1 has no \u03b4\u0303)"),
             u"color: #9a5b00;"_s);
  } else if (fit.exact) {
    setLabel(drawExactLabel_, tr("Exact: the paper's form gives this glimpse"));
  } else {
    setLabel(drawExactLabel_,
             tr("Approximate: the paper has one \u03c3 and one \u03b4\u0303 for both axes; "
                "x's values are shown. Editing them makes the glimpse isotropic."),
             u"color: #9a5b00;"_s);
  }

  // STN.
  const auto& stn = settings_.stn;
  const double stnValues[kStnFieldCount] = {stn.no_shear.scale_x,
                                            stn.no_shear.scale_y,
                                            stn.no_shear.shift_x,
                                            stn.no_shear.shift_y,
                                            stn.similarity.scale,
                                            stn.similarity.rotation * 180.0 / std::numbers::pi,
                                            stn.similarity.shift_x,
                                            stn.similarity.shift_y,
                                            stn.translation_scale.scale,
                                            stn.translation_scale.shift_x,
                                            stn.translation_scale.shift_y,
                                            stn.affine[0],
                                            stn.affine[1],
                                            stn.affine[2],
                                            stn.affine[3],
                                            stn.affine[4],
                                            stn.affine[5],
                                            double(stn.out_w),
                                            double(stn.out_h)};
  for (int k = 0; k < kStnFieldCount; ++k) {
    if (stnEdits_[std::size_t(k)]) stnEdits_[std::size_t(k)]->setValue(stnValues[k]);
  }
  familyBox_->setCurrentIndex(std::max(0, familyBox_->findData(int(stn.family))));
  samplingBox_->setCurrentIndex(std::max(0, samplingBox_->findData(int(stn.sampler.sampling))));
  paddingBox_->setCurrentIndex(std::max(0, paddingBox_->findData(int(stn.sampler.padding))));
  {
    const QSignalBlocker block(sameWindowCheck_);
    sameWindowCheck_->setChecked(settings_.same_window);
  }
  syncing_ = false;
}

void GlimpseWorkbench::updateStnControls() {
  const bool same = settings_.same_window;
  const Family family = settings_.stn.family;
  int page = 0;
  switch (family) {
    case Family::NoShear: page = 0; break;
    case Family::Similarity: page = 1; break;
    case Family::TranslationScale: page = 2; break;
    case Family::Affine: page = 3; break;
  }
  familyStack_->setCurrentIndex(page);
  // A stacked widget is as tall as its tallest page; let the hidden pages claim no room.
  for (int i = 0; i < familyStack_->count(); ++i) {
    familyStack_->widget(i)->setSizePolicy(QSizePolicy::Preferred,
                                           i == page ? QSizePolicy::Preferred : QSizePolicy::Ignored);
  }
  familyStack_->adjustSize();
  familyStack_->setEnabled(!same);
  familyBox_->setEnabled(!same);
  stnEdits_[kOutW]->setEnabled(!same);
  stnEdits_[kOutH]->setEnabled(!same);
  editStnRadio_->setEnabled(!same);
  if (same && editStnRadio_->isChecked()) setEditStn(false);
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  attn::glimpse::Theta theta;
  if (same) {
    setLabel(familyNote_, tr("Same window: the STN is the no-shear transform whose %1 \u00d7 %2 samples fall on the "
                             "Gaussian's filter centres (stn_of). Its own parameters are kept for later.")
                              .arg(settings_.gaussian.x.n)
                              .arg(settings_.gaussian.y.n));
    theta =
        attn::glimpse::theta_of(attn::glimpse::stn_of(attn::glimpse::sanitise(settings_.gaussian, w, h).glimpse, w, h));
  } else {
    setLabel(familyNote_, family == Family::Similarity
                              ? tr("Drag the round handle on the canvas to rotate; Shift+wheel turns by 5\u00b0.")
                              : tr("Scale 1 and shift 0 cover the whole image; the wheel scales about the centre."));
    theta = settings_.stn.theta(w, h);
  }
  const auto number = [](double v) { return QString::asprintf("%+8.4f", v); };
  setLabel(thetaLabel_, tr("\u03b8 = [%1 %2 %3]\n    [%4 %5 %6]")
                            .arg(number(theta[0]), number(theta[1]), number(theta[2]), number(theta[3]),
                                 number(theta[4]), number(theta[5])));
}

// ---- requests and results -----------------------------------------------------------------------------

void GlimpseWorkbench::post() {
  if (!image_) return;
  ++submitted_;
  postTimes_.emplace_back(submitted_, clock_.nsecsElapsed());
  if (postTimes_.size() > 64) postTimes_.erase(postTimes_.begin(), postTimes_.begin() + 32);
  GlimpseRequest request{settings_, dragging_, writeMode_};
  if (synchronous_) {
    pending_ = worker_->computeNow(submitted_, image_->serial, request);
    applyPending();
    return;
  }
  worker_->submit(submitted_, image_, std::move(request));
  if (!busyTimer_.isActive()) busyTimer_.start();
}

void GlimpseWorkbench::onFinished(std::shared_ptr<const GlimpseOutcome> outcome) {
  if (!outcome || !image_ || outcome->imageSerial != image_->serial) return;
  if (outcome->generation <= shown_) return;
  if (pending_ && pending_->generation > outcome->generation) return;
  pending_ = std::move(outcome);
  scheduleApply();
}

void GlimpseWorkbench::endBusy() {
  busyTimer_.stop();
  if (!busy_) return;
  busy_ = false;
  busyLabel_->clear();
  glimpseView_->unsetCursor();
}

void GlimpseWorkbench::applyPending() {
  if (!pending_) return;
  outcome_ = std::move(pending_);
  pending_.reset();
  const GlimpseOutcome& o = *outcome_;
  shown_ = o.generation;
  settled_ = std::max(settled_, shown_);
  if (shown_ == submitted_) endBusy();
  for (const auto& [generation, ns] : postTimes_) {
    if (generation == o.generation) lastFrameMs_ = double(clock_.nsecsElapsed() - ns) / 1e6;
  }

  const auto& g = o.sanitised.glimpse;
  glimpseView_->setImage(o.gaussianImage, o.generation);
  glimpseView_->setCaption(tr("Gaussian read \u00b7 %1 \u00d7 %2").arg(g.x.n).arg(g.y.n));
  if (o.plan.preview()) {
    glimpseView_->setBadge(tr("preview (level %1)").arg(o.plan.level), QColor(200, 110, 0));
  } else {
    glimpseView_->setBadge({});
  }
  stnView_->setImage(o.stnImage, o.generation);
  stnView_->setCaption(o.request.settings.same_window
                           ? tr("STN (same window) \u00b7 %1 \u00d7 %2").arg(o.stnWidth).arg(o.stnHeight)
                           : tr("STN \u00b7 %1 \u00b7 %2 \u00d7 %3")
                                 .arg(familyKey(o.request.settings.stn.family))
                                 .arg(o.stnWidth)
                                 .arg(o.stnHeight));
  if (o.compared) {
    differenceView_->setImage(o.differenceImage, o.generation);
    differenceView_->setCaption(tr("|Gaussian \u2212 STN| \u00b7 max %1").arg(render::shortNumber(o.maxError, 3)));
    setLabel(errorSummary_, tr("Gaussian vs STN: max |error| %1 \u00b7 RMS %2%3")
                                .arg(render::shortNumber(o.maxError, 3), render::shortNumber(o.rmsError, 3),
                                     o.plan.preview() ? tr(" (against the preview)") : QString()));
  } else {
    if (!differenceView_->image().isNull()) differenceView_->setImage({});
    differenceView_->setCaption(tr("|Gaussian \u2212 STN|"));
    setLabel(errorSummary_, QString());
  }
  differenceView_->setVisible(o.request.settings.same_window);
  writeView_->setVisible(o.hasCanvas);
  if (o.hasCanvas) {
    writeView_->setImage(o.canvasImage, o.generation);
    writeView_->setCaption(o.canvasWrites == 1 ? tr("Write canvas \u00b7 1 write")
                                               : tr("Write canvas \u00b7 %1 writes").arg(o.canvasWrites));
    writeView_->setToolTip(
        tr("The sum of the writes (1/\u03b3) Fy\u1d40 P Fx at pyramid level %1, divided at each pixel "
           "by the weight the writes gave it (largest %2), so every written region shows its "
           "glimpse as the write puts it back; black: nothing written")
            .arg(o.canvasLevel)
            .arg(render::shortNumber(o.canvasPeak, 3)));
  }
  showClamps(o);

  // Plots: exact results only, and at most every 100 ms during a drag.
  if (o.fx && o.fy) {
    const qint64 now = clock_.nsecsElapsed();
    if (!o.request.dragging || now - lastPlotNs_ >= kPlotIntervalNs) {
      plotPending_.reset();
      plotTimer_.stop();
      applyPlots(o);
    } else {
      plotPending_ = outcome_;
      if (!plotTimer_.isActive()) plotTimer_.start();
    }
  }

  const auto pathName = attn::glimpse::to_string(o.stats.path);
  const QString path = QString::fromLatin1(pathName.data(), qsizetype(pathName.size()));
  const QString summary = tr("glimpse: %1 \u00d7 %2 \u00b7 %3 \u00b7 read %4 ms (%5, %6 M MACs) \u00b7 frame %7 ms")
                              .arg(g.x.n)
                              .arg(g.y.n)
                              .arg(o.plan.preview() ? tr("preview (level %1)").arg(o.plan.level) : tr("exact"))
                              .arg(o.readMs, 0, 'f', o.readMs < 10 ? 2 : 1)
                              .arg(path)
                              .arg(o.stats.macs / 1e6, 0, 'f', 1)
                              .arg(lastFrameMs_, 0, 'f', 1);
  setRunSummary(summary);
  emit resultShown(shown_);
}

QString GlimpseWorkbench::clampText() const { return clampLabel_->text(); }

void GlimpseWorkbench::showClamps(const GlimpseOutcome& o) {
  QStringList notes = render::clampDescriptions(o.sanitised.clamps);
  const bool clamped = !notes.isEmpty();
  for (int a = 0; a < 2; ++a) {
    const auto& axis = a == 0 ? o.sanitised.glimpse.x : o.sanitised.glimpse.y;
    if (axis.n == 1) {
      notes.append(tr("%1: N = 1, a single filter: the stride has no effect and the paper's δ̃ is taken "
                      "as for N = 2")
                       .arg(a == 0 ? u"x"_s : u"y"_s));
    }
  }
  if (o.sanitised.outside) {
    notes.append(
        tr("The glimpse lies outside the image: no filter centre is within 3 \u03c3 of it on some axis; "
           "DRAW's normalisation then reads the edge pixels, faintly."));
  }
  clampNotes_ = notes;
  // Mark the spin boxes the engine overrode.
  for (int a = 0; a < 2; ++a) {
    for (int f = 0; f < 5; ++f) gaussianEdits_[a][f]->setClamped(false);
  }
  gammaEdit_->setClamped(false);
  for (const auto& clamp : o.sanitised.clamps) {
    const QString parameter = QString::fromStdString(clamp.parameter).toLower();
    const int axis = parameter.startsWith(u"y"_s) ? 1 : 0;
    if (parameter.contains(u"gamma"_s))
      gammaEdit_->setClamped(true);
    else if (parameter.contains(u"sigma"_s))
      gaussianEdits_[axis][3]->setClamped(true);
    else if (parameter.contains(u"stride"_s))
      gaussianEdits_[axis][2]->setClamped(true);
    else if (parameter.endsWith(u".n"_s) || parameter == u"n"_s)
      gaussianEdits_[axis][4]->setClamped(true);
    else if (parameter.contains(u"first"_s) || parameter.contains(u"centre"_s)) {
      gaussianEdits_[axis][0]->setClamped(true);
      gaussianEdits_[axis][1]->setClamped(true);
    }
  }
  if (notes.isEmpty()) {
    setLabel(clampLabel_, tr("No clamps: the engine uses the parameters as set."),
             u"QLabel { color: palette(placeholder-text); }"_s);
  } else {
    setLabel(clampLabel_,
             (clamped ? tr("Clamped by the engine:\n") : QString()) + u"\u2022 "_s + notes.join(u"\n\u2022 "_s),
             clamped ? u"QLabel { color: #a01c1c; background: #fbe9e7; padding: 3px; }"_s
                     : u"QLabel { color: #8a5200; background: #fdf3e1; padding: 3px; }"_s);
  }
}

void GlimpseWorkbench::applyPlots(const GlimpseOutcome& o) {
  lastPlotNs_ = clock_.nsecsElapsed();
  const attn::glimpse::FilterBank* banks[2] = {o.fx.get(), o.fy.get()};
  QCustomPlot* plots[2] = {fxPlot_, fyPlot_};
  const QString names[2] = {u"Fx"_s, u"Fy"_s};
  QStringList notes;
  for (int k = 0; k < 2; ++k) {
    QCustomPlot* plot = plots[k];
    const auto& bank = *banks[k];
    plot->clearGraphs();
    const auto curves = render::filterCurves(bank, kMaxPlottedCurves);
    for (const auto& curve : curves.curves) {
      auto* graph = plot->addGraph();
      graph->setData(curve.keys, curve.values, true);
      const double t = bank.n > 1 ? double(curve.filter) / (bank.n - 1) : 0.5;
      graph->setPen(QPen(QColor::fromRgb(render::sample(render::Colormap::Viridis, 0.05 + 0.85 * t)), 1.3));
      // A filter narrower than a pixel has one or two samples: draw them as stems so they show.
      if (curve.keys.size() <= 2) {
        graph->setLineStyle(QCPGraph::lsImpulse);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
      }
    }
    const double pad = std::max(1.0, 0.02 * (curves.upper - curves.lower));
    plot->xAxis->setRange(curves.lower - pad, curves.upper + pad);
    plot->yAxis->setRange(0.0, curves.peak > 0.0 ? curves.peak * 1.08 : 1.0);
    if (auto* title = plotTitle(plot)) {
      title->setText(
          curves.subset
              ? tr("%1: %2 of %3 filters plotted (evenly spaced)").arg(names[k]).arg(curves.curves.size()).arg(bank.n)
              : tr("%1: %2 filters").arg(names[k]).arg(bank.n));
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
    if (curves.subset) notes.append(names[k]);
  }
  plotNote_->setText(
      tr("Each curve is one filter's band (weights below %1 of its peak are cut; dropped mass \u2264 %2).")
          .arg(render::shortNumber(attn::glimpse::kBandTolerance, 2))
          .arg(render::shortNumber(std::max(o.fx->dropped, o.fy->dropped), 2)));

  // Heatmaps.
  int mapIndex = 0;
  for (int i = 0; i < bankMapPlot_->plottableCount() && mapIndex < 2; ++i) {
    auto* map = qobject_cast<QCPColorMap*>(bankMapPlot_->plottable(i));
    if (!map) continue;
    const auto& bank = *banks[mapIndex];
    const auto info = render::fillFilterBankMap(*map->data(), bank, 1024);
    map->setDataRange(QCPRange(0.0, info.peak > 0.0 ? info.peak : 1.0));
    map->keyAxis()->setRange(info.lower - 0.5 * info.pixelsPerColumn, info.upper + 0.5 * info.pixelsPerColumn);
    map->valueAxis()->setRange(-0.5, bank.n - 0.5);
    ++mapIndex;
  }
  bankMapPlot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- exports ------------------------------------------------------------------------------------------

attn::Result<void> GlimpseWorkbench::exportGlimpse(const QString& path) const {
  if (!outcome_ || outcome_->gaussianImage.isNull()) {
    return std::unexpected(exportError(path, tr("there is no glimpse yet")));
  }
  if (QFileInfo(path).suffix().toLower() != u"png"_s) {
    return std::unexpected(exportError(path, tr("the glimpse is saved as .png")));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  if (!outcome_->gaussianImage.save(&file, "PNG") || !file.commit()) {
    return std::unexpected(exportError(path, tr("could not write the file")));
  }
  return {};
}

attn::Result<void> GlimpseWorkbench::exportAnnotated(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || *format == ExportFormat::Csv) {
    return std::unexpected(exportError(path, tr("the annotated image can be saved as .png, .svg or .pdf")));
  }
  if (!image_) return std::unexpected(exportError(path, tr("no image is open")));
  if (*format == ExportFormat::Png) {
    const QImage annotated = canvas_->annotatedImage(4096);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
    if (annotated.isNull() || !annotated.save(&file, "PNG") || !file.commit()) {
      return std::unexpected(exportError(path, tr("could not write the file")));
    }
    return {};
  }
  return exportWidget(*canvas_, path);
}

attn::Result<void> GlimpseWorkbench::exportCurrentView(const QString& path) const {
  if (QFileInfo(path).suffix().toLower() == u"json"_s) return exportParameters(path);
  return exportAnnotated(path);
}

std::string GlimpseWorkbench::parametersJson() const {
  const int w = image_ ? image_->width : 0;
  const int h = image_ ? image_->height : 0;
  return attn::glimpse::to_json(settings_, w, h, imagePath().toStdString());
}

attn::Result<void> GlimpseWorkbench::exportParameters(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  const std::string json = parametersJson();
  file.write(json.data(), qint64(json.size()));
  if (!file.commit()) return std::unexpected(exportError(path, file.errorString()));
  return {};
}

void GlimpseWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }

bool GlimpseWorkbench::isSidePanelVisible() const { return !sideScroll_->isHidden(); }

}  // namespace attn::ui
