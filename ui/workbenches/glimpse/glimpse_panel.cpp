// GlimpseWorkbench's side panel: its construction, the edits made in it and its sync with the settings.
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/glimpse/glimpse_panel_parts.h"
#include "workbenches/common/sample_images.h"

#include "views/glimpse_canvas.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRadioButton>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numbers>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using StnFamily = attn::glimpse::Family;
using glimpse_detail::setLabel;
using glimpse_detail::smallNote;

QString familyName(StnFamily family) {
  switch (family) {
    case StnFamily::Affine: return QObject::tr("Affine (6 parameters)");
    case StnFamily::NoShear: return QObject::tr("No shear (scale + shift per axis)");
    case StnFamily::Similarity: return QObject::tr("Similarity (scale, rotation, shift)");
    case StnFamily::TranslationScale: return QObject::tr("Translation + scale");
  }
  return {};
}

}  // namespace

// ---- the side panel -----------------------------------------------------------------------------------

void GlimpseWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->addWidget(buildImageGroup(panel));
  layout->addWidget(buildGlimpseGroup(panel));

  paramTabs_ = new QTabWidget(panel);
  paramTabs_->setObjectName(u"glimpseParameters"_s);
  paramTabs_->addTab(buildGaussianPage(), tr("Gaussian (DRAW)"));
  paramTabs_->addTab(buildStnPage(), tr("Spatial transformer"));
  layout->addWidget(paramTabs_);
  layout->addStretch(1);
}

// Image: the sample photos, Open…, what is open and the progress of a load.
QGroupBox* GlimpseWorkbench::buildImageGroup(QWidget* panel) {
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
  return imageGroup;
}

// Glimpse options: presets, reset, same window, which glimpse the handles edit, write mode, the clamps.
QGroupBox* GlimpseWorkbench::buildGlimpseGroup(QWidget* panel) {
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
  editGaussianRadio_ = new QRadioButton(tr("Ga&ussian"), glimpseGroup);
  editGaussianRadio_->setObjectName(u"editGaussian"_s);
  editStnRadio_ = new QRadioButton(tr("ST&N"), glimpseGroup);
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
  clearCanvasButton_ = new QPushButton(tr("Cl&ear canvas"), glimpseGroup);
  clearCanvasButton_->setObjectName(u"clearCanvas"_s);
  clearCanvasButton_->setEnabled(false);
  connect(clearCanvasButton_, &QPushButton::clicked, this, &GlimpseWorkbench::clearCanvas);
  glimpseLayout->addWidget(writeCheck_, 3, 0, 1, 2);
  glimpseLayout->addWidget(clearCanvasButton_, 3, 2);
  formsCheck_ = new QCheckBox(tr("S&oft mask, crop and matrix form"), glimpseGroup);
  formsCheck_->setObjectName(u"windowForms"_s);
  formsCheck_->setToolTip(
      tr("The Gaussian window three ways, each timed: the image-sized soft mask a = a\u1d67 a\u2093\u1d40 applied as "
         "a \u2299 I, hard attention's crop I[y:y+h, x:x+w], and the matrix form \u03b3 Fy I Fx\u1d40"));
  connect(formsCheck_, &QCheckBox::toggled, this, &GlimpseWorkbench::setWindowForms);
  glimpseLayout->addWidget(formsCheck_, 4, 0, 1, 3);

  clampLabel_ = new QLabel(glimpseGroup);
  clampLabel_->setObjectName(u"clamps"_s);
  clampLabel_->setWordWrap(true);
  clampLabel_->setTextFormat(Qt::PlainText);
  clampLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  clampLabel_->setMinimumHeight(clampLabel_->fontMetrics().height() + 8);
  glimpseLayout->addWidget(clampLabel_, 5, 0, 1, 3);
  return glimpseGroup;
}

QWidget* GlimpseWorkbench::buildGaussianPage() {
  auto* page = new QWidget();
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(buildPixelGroup(page));
  layout->addWidget(buildDrawGroup(page));
  layout->addWidget(smallNote(tr("Outline: filter centres \u00b1 d/2. Dashed: \u00b12s around the outer centres. "
                                 "Filled ellipse: one filter's 1s contour."),
                              page));
  layout->addStretch(1);
  return page;
}

// The pixel parameters: one row per AxisField with an edit per axis, gamma and the link between the axes.
QGroupBox* GlimpseWorkbench::buildPixelGroup(QWidget* page) {
  auto* pixelGroup = new QGroupBox(tr("Pixel parameters"), page);
  auto* grid = new QGridLayout(pixelGroup);
  grid->setHorizontalSpacing(6);
  grid->setVerticalSpacing(3);
  grid->addWidget(new QLabel(u"<b>x</b>"_s, pixelGroup), 0, 1, Qt::AlignHCenter);
  grid->addWidget(new QLabel(u"<b>y</b>"_s, pixelGroup), 0, 2, Qt::AlignHCenter);
  const QString axisNames[2] = {u"x"_s, u"y"_s};
  struct Row {
    AxisField field;
    QString key, label, tip;
    double sliderMin, sliderMax;
    bool logScale;
    double spinMin, spinMax;
    int decimals;
    double step;
  };
  const Row rows[kAxisFields] = {
      {AxisField::Centre, u"centre"_s, tr("Centre"),
       tr("Centre of the grid of filter centres, in pixels (pixel a has its centre at a)"), 0, 512, false, -1e6, 1e6, 2,
       1.0},
      {AxisField::First, u"first"_s, tr("First u"), tr("u: centre of filter 0; mu_i = u + i d"), 0, 512, false, -1e6,
       1e6, 2, 1.0},
      {AxisField::Stride, u"stride"_s, tr("Stride d"), tr("d: distance between neighbouring filter centres, in pixels"),
       0.05, 512, true, -1e5, 1e5, 3, 0.0},
      {AxisField::Sigma, u"sigma"_s, tr("Sigma s"), tr("s: standard deviation of every filter, in pixels"), 0.05, 256,
       true, -1e5, 1e5, 3, 0.0},
      {AxisField::Count, u"n"_s, tr("N"), tr("Filters on this axis (the glimpse is Ny \u00d7 Nx)"), 1, 256, false, 0,
       4096, 0, 1.0},
  };
  for (const Row& row : rows) {
    const int line = int(row.field) + 1;
    auto* label = new QLabel(row.label, pixelGroup);
    label->setToolTip(row.tip);
    grid->addWidget(label, line, 0);
    for (int a = 0; a < 2; ++a) {
      auto* edit = new ParamEdit(axisNames[a] + u"."_s + row.key, pixelGroup);
      edit->setToolTips(row.tip);
      edit->configure(row.sliderMin, row.sliderMax, row.logScale, row.spinMin, row.spinMax, row.decimals, row.step);
      if (row.field == AxisField::First) edit->setSliderVisible(false);
      edit->onEdited = [this, a, field = row.field](double value, bool dragging) {
        editGaussianAxis(a, field, value, dragging);
      };
      gaussianEdits_[a][int(row.field)] = edit;
      grid->addWidget(edit, line, a + 1);
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
  linkAxesCheck_ = new QCheckBox(tr("Link &x and y (stride, sigma, N)"), pixelGroup);
  linkAxesCheck_->setObjectName(u"linkAxes"_s);
  linkAxesCheck_->setChecked(true);
  grid->addWidget(linkAxesCheck_, 7, 0, 1, 3);
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(2, 1);
  return pixelGroup;
}

// The paper's parameters: one row per DrawField, and whether that form is exact for this glimpse.
QGroupBox* GlimpseWorkbench::buildDrawGroup(QWidget* page) {
  auto* drawGroup = new QGroupBox(tr("The paper's parameters (eq. 21\u201324)"), page);
  auto* form = new QFormLayout(drawGroup);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  struct DrawRow {
    DrawField field;
    QString key, label, tip;
    double sliderMin, sliderMax;
  };
  const DrawRow drawRows[kDrawFields] = {
      {DrawField::GxTilde, u"draw.gx"_s, u"g\u0303x"_s,
       tr("gx = (W + 1) / 2 (g\u0303x + 1): \u22121 .. 1 spans the image"), -1.5, 1.5},
      {DrawField::GyTilde, u"draw.gy"_s, u"g\u0303y"_s, tr("gy = (H + 1) / 2 (g\u0303y + 1)"), -1.5, 1.5},
      {DrawField::LogSigma2, u"draw.log_sigma2"_s, u"log \u03c3\u00b2"_s,
       tr("log of the filters' variance, in pixels\u00b2"), -5.0, 12.0},
      {DrawField::LogDeltaTilde, u"draw.log_delta"_s, u"log \u03b4\u0303"_s,
       tr("\u03b4 = (max(W, H) \u2212 1) / (N \u2212 1) \u03b4\u0303: 0 covers the image"), -7.0, 1.0},
      {DrawField::LogGamma, u"draw.log_gamma"_s, u"log \u03b3"_s, tr("log of the intensity \u03b3"), -4.0, 4.0},
  };
  for (const DrawRow& row : drawRows) {
    auto* edit = new ParamEdit(row.key, drawGroup);
    edit->configure(row.sliderMin, row.sliderMax, false, -1e3, 1e3, 4, 0.01);
    edit->setToolTips(row.tip);
    edit->onEdited = [this, field = row.field](double value, bool dragging) { editDraw(field, value, dragging); };
    drawEdits_[int(row.field)] = edit;
    form->addRow(row.label, edit);
  }
  drawExactLabel_ = smallNote(QString(), drawGroup);
  drawExactLabel_->setObjectName(u"drawExact"_s);
  form->addRow(drawExactLabel_);
  return drawGroup;
}

QWidget* GlimpseWorkbench::buildStnPage() {
  auto* page = new QWidget();
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(6, 6, 6, 6);
  stnEdits_.assign(kStnFields, nullptr);

  auto* familyForm = new QFormLayout();
  familyBox_ = new QComboBox(page);
  familyBox_->setObjectName(u"family"_s);
  for (StnFamily family : {StnFamily::NoShear, StnFamily::Similarity, StnFamily::TranslationScale, StnFamily::Affine}) {
    familyBox_->addItem(familyName(family), int(family));
  }
  familyBox_->setToolTip(
      tr("The constrained families of theta (Jaderberg et al. 2015): changing the family keeps "
         "the window as close as the new family allows"));
  familyForm->addRow(tr("Fa&mily:"), familyBox_);
  layout->addLayout(familyForm);
  familyNote_ = smallNote(QString(), page);
  layout->addWidget(familyNote_);

  buildFamilyStack(page);
  layout->addWidget(familyStack_);

  layout->addWidget(buildStnOutputGroup(page));

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
    const StnFamily family = StnFamily(familyBox_->itemData(index).toInt());
    const int w = image_ ? image_->width : 512;
    const int h = image_ ? image_->height : 512;
    const auto theta = s.stn.theta(w, h);
    switch (family) {
      case StnFamily::NoShear: s.stn.no_shear = attn::glimpse::no_shear_of(theta); break;
      case StnFamily::Similarity: s.stn.similarity = attn::glimpse::similarity_of(theta, w, h); break;
      case StnFamily::TranslationScale: s.stn.translation_scale = attn::glimpse::translation_scale_of(theta); break;
      case StnFamily::Affine: s.stn.affine = theta; break;
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

// familyStack_: one page of parameters per family, in familyBox_'s order.
void GlimpseWorkbench::buildFamilyStack(QWidget* page) {
  familyStack_ = new QStackedWidget(page);
  const auto makePage = [&](std::initializer_list<std::tuple<StnField, QString, QString, double, double, bool>> rows) {
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
  using F = StnField;
  makePage({{F::NoShearScaleX, u"stn.no_shear.scale_x"_s, tr("Scale x"), 0.01, 2.0, true},
            {F::NoShearScaleY, u"stn.no_shear.scale_y"_s, tr("Scale y"), 0.01, 2.0, true},
            {F::NoShearShiftX, u"stn.no_shear.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {F::NoShearShiftY, u"stn.no_shear.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  makePage({{F::SimilarityScale, u"stn.similarity.scale"_s, tr("Scale"), 0.01, 2.0, true},
            {F::SimilarityRotation, u"stn.similarity.rotation"_s, tr("Rotation"), -180.0, 180.0, false},
            {F::SimilarityShiftX, u"stn.similarity.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {F::SimilarityShiftY, u"stn.similarity.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  stnEdit(F::SimilarityRotation)->setSuffix(u"\u00b0"_s);
  stnEdit(F::SimilarityRotation)->configure(-180.0, 180.0, false, -3600.0, 3600.0, 2, 1.0);
  makePage({{F::TranslationScaleScale, u"stn.translation_scale.scale"_s, tr("Scale"), 0.01, 2.0, true},
            {F::TranslationScaleShiftX, u"stn.translation_scale.shift_x"_s, tr("Shift x"), -1.5, 1.5, false},
            {F::TranslationScaleShiftY, u"stn.translation_scale.shift_y"_s, tr("Shift y"), -1.5, 1.5, false}});
  makePage({{F::Affine0, u"stn.theta0"_s, u"\u03b8\u2081\u2081"_s, -2.0, 2.0, false},
            {F::Affine1, u"stn.theta1"_s, u"\u03b8\u2081\u2082"_s, -2.0, 2.0, false},
            {F::Affine2, u"stn.theta2"_s, u"\u03b8\u2081\u2083"_s, -1.5, 1.5, false},
            {F::Affine3, u"stn.theta3"_s, u"\u03b8\u2082\u2081"_s, -2.0, 2.0, false},
            {F::Affine4, u"stn.theta4"_s, u"\u03b8\u2082\u2082"_s, -2.0, 2.0, false},
            {F::Affine5, u"stn.theta5"_s, u"\u03b8\u2082\u2083"_s, -1.5, 1.5, false}});
}

// The STN's output size and its sampler (sampling and padding).
QGroupBox* GlimpseWorkbench::buildStnOutputGroup(QWidget* page) {
  auto* outputGroup = new QGroupBox(tr("Output and sampler"), page);
  auto* outputForm = new QFormLayout(outputGroup);
  outputForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (auto [field, key, label] : {std::tuple{StnField::OutW, u"stn.out_w"_s, tr("Width")},
                                   std::tuple{StnField::OutH, u"stn.out_h"_s, tr("Height")}}) {
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
  return outputGroup;
}

// ---- panel edits and sync -----------------------------------------------------------------------------

void GlimpseWorkbench::editGaussianAxis(int axis, AxisField field, double value, bool dragging) {
  auto s = settings_;
  // The link shares the grid's shape (stride, sigma, N), not its position.
  const bool link = linkAxesCheck_->isChecked() && field != AxisField::Centre && field != AxisField::First;
  for (int a = 0; a < 2; ++a) {
    if (a != axis && !link) continue;
    auto& ax = a == 0 ? s.gaussian.x : s.gaussian.y;
    const double centre = ax.centre();
    switch (field) {
      case AxisField::Centre: ax.first = value - 0.5 * (ax.n - 1) * ax.stride; break;
      case AxisField::First: ax.first = value; break;
      case AxisField::Stride:
        ax.stride = value;
        if (std::isfinite(centre)) ax.first = centre - 0.5 * (ax.n - 1) * ax.stride;
        break;
      case AxisField::Sigma: ax.sigma = value; break;
      case AxisField::Count:
        ax.n = int(std::lround(value));
        if (std::isfinite(centre)) ax.first = centre - 0.5 * (ax.n - 1) * ax.stride;
        break;
    }
  }
  edit(s, dragging);
}

void GlimpseWorkbench::editDraw(DrawField field, double value, bool dragging) {
  const int w = image_ ? image_->width : 512;
  const int h = image_ ? image_->height : 512;
  attn::glimpse::DrawParams p;
  p.gx_tilde = drawEdit(DrawField::GxTilde)->value();
  p.gy_tilde = drawEdit(DrawField::GyTilde)->value();
  p.log_sigma2 = drawEdit(DrawField::LogSigma2)->value();
  p.log_delta_tilde = drawEdit(DrawField::LogDeltaTilde)->value();
  p.log_gamma = drawEdit(DrawField::LogGamma)->value();
  switch (field) {
    case DrawField::GxTilde: p.gx_tilde = value; break;
    case DrawField::GyTilde: p.gy_tilde = value; break;
    case DrawField::LogSigma2: p.log_sigma2 = value; break;
    case DrawField::LogDeltaTilde: p.log_delta_tilde = value; break;
    case DrawField::LogGamma: p.log_gamma = value; break;
  }
  p.nx = settings_.gaussian.x.n;
  p.ny = settings_.gaussian.y.n;
  auto s = settings_;
  s.gaussian = attn::glimpse::from_draw(p, w, h);
  edit(s, dragging);
}

void GlimpseWorkbench::editStn(StnField field, double value, bool dragging) {
  auto s = settings_;
  auto& stn = s.stn;
  switch (field) {
    case StnField::NoShearScaleX: stn.no_shear.scale_x = value; break;
    case StnField::NoShearScaleY: stn.no_shear.scale_y = value; break;
    case StnField::NoShearShiftX: stn.no_shear.shift_x = value; break;
    case StnField::NoShearShiftY: stn.no_shear.shift_y = value; break;
    case StnField::SimilarityScale: stn.similarity.scale = value; break;
    case StnField::SimilarityRotation: stn.similarity.rotation = value * std::numbers::pi / 180.0; break;
    case StnField::SimilarityShiftX: stn.similarity.shift_x = value; break;
    case StnField::SimilarityShiftY: stn.similarity.shift_y = value; break;
    case StnField::TranslationScaleScale: stn.translation_scale.scale = value; break;
    case StnField::TranslationScaleShiftX: stn.translation_scale.shift_x = value; break;
    case StnField::TranslationScaleShiftY: stn.translation_scale.shift_y = value; break;
    case StnField::Affine0:
    case StnField::Affine1:
    case StnField::Affine2:
    case StnField::Affine3:
    case StnField::Affine4:
    case StnField::Affine5: stn.affine[std::size_t(field) - std::size_t(StnField::Affine0)] = value; break;
    case StnField::OutW: stn.out_w = int(std::lround(value)); break;
    case StnField::OutH: stn.out_h = int(std::lround(value)); break;
  }
  edit(s, dragging);
}

// The value the STN page shows for `field` (the rotation in degrees).
double GlimpseWorkbench::stnValue(const attn::glimpse::StnSettings& stn, StnField field) {
  using F = StnField;
  switch (field) {
    case F::NoShearScaleX: return stn.no_shear.scale_x;
    case F::NoShearScaleY: return stn.no_shear.scale_y;
    case F::NoShearShiftX: return stn.no_shear.shift_x;
    case F::NoShearShiftY: return stn.no_shear.shift_y;
    case F::SimilarityScale: return stn.similarity.scale;
    case F::SimilarityRotation: return stn.similarity.rotation * 180.0 / std::numbers::pi;
    case F::SimilarityShiftX: return stn.similarity.shift_x;
    case F::SimilarityShiftY: return stn.similarity.shift_y;
    case F::TranslationScaleScale: return stn.translation_scale.scale;
    case F::TranslationScaleShiftX: return stn.translation_scale.shift_x;
    case F::TranslationScaleShiftY: return stn.translation_scale.shift_y;
    case F::Affine0:
    case F::Affine1:
    case F::Affine2:
    case F::Affine3:
    case F::Affine4:
    case F::Affine5: return stn.affine[std::size_t(field) - std::size_t(F::Affine0)];
    case F::OutW: return double(stn.out_w);
    case F::OutH: return double(stn.out_h);
  }
  return 0.0;
}

void GlimpseWorkbench::updateSliderRanges() {
  const double w = image_ ? image_->width : 512;
  const double h = image_ ? image_->height : 512;
  const double size[2] = {w, h};
  for (int a = 0; a < 2; ++a) {
    axisEdit(a, AxisField::Centre)->setSliderRange(0.0, size[a] - 1.0);
    axisEdit(a, AxisField::First)->setSliderRange(-size[a] / 2, size[a]);
    axisEdit(a, AxisField::Stride)->setSliderRange(0.05, std::max(w, h));
    axisEdit(a, AxisField::Sigma)->setSliderRange(0.05, std::max(w, h) / 2);
  }
}

void GlimpseWorkbench::syncPanel() {
  syncing_ = true;
  const auto& g = settings_.gaussian;
  const attn::glimpse::GaussianAxis* axes[2] = {&g.x, &g.y};
  for (int a = 0; a < 2; ++a) {
    axisEdit(a, AxisField::Centre)->setValue(axes[a]->centre());
    axisEdit(a, AxisField::First)->setValue(axes[a]->first);
    axisEdit(a, AxisField::Stride)->setValue(axes[a]->stride);
    axisEdit(a, AxisField::Sigma)->setValue(axes[a]->sigma);
    axisEdit(a, AxisField::Count)->setValue(axes[a]->n);
  }
  gammaEdit_->setValue(g.gamma);

  // The paper's form of what the engine will use (the sanitised glimpse: no NaN from N = 1 or sigma = 0).
  const auto fit = attn::glimpse::to_draw(geometry_.gaussian.glimpse, geometry_.image_width, geometry_.image_height);
  const std::pair<DrawField, double> values[kDrawFields] = {{DrawField::GxTilde, fit.params.gx_tilde},
                                                            {DrawField::GyTilde, fit.params.gy_tilde},
                                                            {DrawField::LogSigma2, fit.params.log_sigma2},
                                                            {DrawField::LogDeltaTilde, fit.params.log_delta_tilde},
                                                            {DrawField::LogGamma, fit.params.log_gamma}};
  bool allFinite = true;
  for (const auto& [field, value] : values) {
    drawEdit(field)->setValue(value);
    allFinite = allFinite && std::isfinite(value);
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
  for (int k = 0; k < kStnFields; ++k) {
    if (stnEdits_[std::size_t(k)]) stnEdits_[std::size_t(k)]->setValue(stnValue(stn, StnField(k)));
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
  const StnFamily family = settings_.stn.family;
  int page = 0;
  switch (family) {
    case StnFamily::NoShear: page = 0; break;
    case StnFamily::Similarity: page = 1; break;
    case StnFamily::TranslationScale: page = 2; break;
    case StnFamily::Affine: page = 3; break;
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
  stnEdit(StnField::OutW)->setEnabled(!same);
  stnEdit(StnField::OutH)->setEnabled(!same);
  editStnRadio_->setEnabled(!same);
  if (same && editStnRadio_->isChecked()) setEditStn(false);
  if (same) {
    setLabel(familyNote_, tr("Same window: the STN is the no-shear transform whose %1 \u00d7 %2 samples fall on the "
                             "Gaussian's filter centres (stn_of). Its own parameters are kept for later.")
                              .arg(geometry_.stn_width)
                              .arg(geometry_.stn_height));
  } else {
    setLabel(familyNote_, family == StnFamily::Similarity
                              ? tr("Drag the round handle on the canvas to rotate; Shift+wheel turns by 5\u00b0.")
                              : tr("Scale 1 and shift 0 cover the whole image; the wheel scales about the centre."));
  }
  // The theta the STN samples with (geometry_: the window's in same-window mode).
  const attn::glimpse::Theta& theta = geometry_.stn_theta;
  const auto number = [](double v) { return QString::asprintf("%+8.4f", v); };
  QString text = tr("\u03b8 = [%1 %2 %3]\n    [%4 %5 %6]")
                     .arg(number(theta[0]), number(theta[1]), number(theta[2]), number(theta[3]), number(theta[4]),
                          number(theta[5]));
  if (geometry_.stn_theta_replaced) text += tr("\n(the family's \u03b8 is not finite: the identity is sampled)");
  setLabel(thetaLabel_, text);
}

}  // namespace attn::ui
