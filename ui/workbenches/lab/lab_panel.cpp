// LabWorkbench's widgets: the side panel built group by group (mechanism, parameters, display) and the main
// area (the two sentences, the map selector, the heatmap and the small multiples).
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/common/side_panel.h"

#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/lab/lab_workbench_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QSlider>
#include <QToolButton>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <climits>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using lab_detail::fromView;

// A source editor that leaves file drops to the main window (which opens them) instead of pasting the
// file's URL into the sentence.
class SentenceEdit : public QPlainTextEdit {
 public:
  using QPlainTextEdit::QPlainTextEdit;

 protected:
  bool canInsertFromMimeData(const QMimeData* source) const override {
    return !source->hasUrls() && QPlainTextEdit::canInsertFromMimeData(source);
  }
};

}  // namespace

void LabWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  layout->addWidget(buildMechanismGroup(panel));
  layout->addWidget(buildParamsGroup(panel));
  layout->addWidget(buildDisplayGroup(panel));
  layout->addStretch(1);
}

// The mechanism: its selector, its formula and its paper.
QGroupBox* LabWorkbench::buildMechanismGroup(QWidget* panel) {
  auto* mechanismGroup = new QGroupBox(tr("Mechanism"), panel);
  auto* mechanismLayout = new QVBoxLayout(mechanismGroup);
  mechanismBox_ = new QComboBox(mechanismGroup);
  mechanismBox_->setObjectName(u"mechanism"_s);
  mechanismBox_->setToolTip(tr("The attention mechanism to run (Ctrl+M)"));
  const auto catalogue = attn::lab::mechanisms();
  for (std::size_t i = 0; i < catalogue.size(); ++i) {
    const auto& info = catalogue[i];
    mechanismBox_->addItem(fromView(info.name), int(i));
    mechanismBox_->setItemData(int(i), fromView(info.formula) + u"\n"_s + fromView(info.paper), Qt::ToolTipRole);
  }
  mechanismLayout->addWidget(mechanismBox_);
  formulaLabel_ = new QLabel(mechanismGroup);
  formulaLabel_->setObjectName(u"formula"_s);
  formulaLabel_->setWordWrap(true);
  formulaLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  formulaLabel_->setTextFormat(Qt::PlainText);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  formulaLabel_->setFont(mono);
  formulaLabel_->setFrameShape(QFrame::StyledPanel);
  formulaLabel_->setMargin(6);
  formulaLabel_->setBackgroundRole(QPalette::Base);
  formulaLabel_->setAutoFillBackground(true);
  mechanismLayout->addWidget(formulaLabel_);
  paperLabel_ = new QLabel(mechanismGroup);
  paperLabel_->setObjectName(u"paper"_s);
  paperLabel_->setWordWrap(true);
  paperLabel_->setTextFormat(Qt::PlainText);
  paperLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont italic = paperLabel_->font();
  italic.setItalic(true);
  paperLabel_->setFont(italic);
  paperLabel_->setForegroundRole(QPalette::PlaceholderText);
  mechanismLayout->addWidget(paperLabel_);
  return mechanismGroup;
}

namespace {

// A whole-number row of the parameters form.
QSpinBox* addCountRow(QFormLayout* form, QWidget* parent, const QString& name, const QString& label, int low, int high,
                      const QString& toolTip) {
  auto* spin = new QSpinBox(parent);
  spin->setObjectName(name);
  spin->setRange(low, high);
  spin->setToolTip(toolTip);
  form->addRow(label, spin);
  return spin;
}

}  // namespace

// The parameters: one row each, shown only for the mechanisms that use them (updateMechanismControls).
QGroupBox* LabWorkbench::buildParamsGroup(QWidget* panel) {
  auto* paramsGroup = new QGroupBox(tr("Parameters"), panel);
  paramsForm_ = new QFormLayout(paramsGroup);
  paramsForm_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  scoreBox_ = new QComboBox(paramsGroup);
  scoreBox_->setObjectName(u"score"_s);
  for (auto kind : attn::lab::score_kinds()) scoreBox_->addItem(fromView(attn::lab::score_key(kind)), int(kind));
  scoreBox_->setToolTip(tr("score(q, k): how a query is compared with each key"));
  paramsForm_->addRow(tr("Sc&ore:"), scoreBox_);

  normaliserBox_ = new QComboBox(paramsGroup);
  normaliserBox_->setObjectName(u"normaliser"_s);
  for (auto kind : attn::lab::normalisers())
    normaliserBox_->addItem(fromView(attn::lab::normaliser_key(kind)), int(kind));
  normaliserBox_->setToolTip(tr("Turns scores into weights; sparsemax can give exact zeros"));
  paramsForm_->addRow(tr("&Normaliser:"), normaliserBox_);

  temperatureSpin_ = new QDoubleSpinBox(paramsGroup);
  temperatureSpin_->setObjectName(u"temperature"_s);
  temperatureSpin_->setRange(0.01, 100.0);
  temperatureSpin_->setDecimals(2);
  temperatureSpin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
  temperatureSpin_->setToolTip(tr("Scores are divided by T before normalising: small T sharpens, large T flattens"));
  paramsForm_->addRow(tr("Temperat&ure:"), temperatureSpin_);

  windowSpin_ = addCountRow(paramsForm_, paramsGroup, u"window"_s, tr("Window &D:"), 0, 256,
                            tr("D: keys within D positions of p_t are visible (Luong et al. 2015)"));

  sigmaSpin_ = new QDoubleSpinBox(paramsGroup);
  sigmaSpin_->setObjectName(u"sigma"_s);
  sigmaSpin_->setRange(0.0, 256.0);
  sigmaSpin_->setDecimals(2);
  sigmaSpin_->setSingleStep(0.25);
  sigmaSpin_->setSpecialValueText(tr("auto (D/2)"));
  sigmaSpin_->setToolTip(tr("Width of the Gaussian around p_t; 0 uses D/2 as in the paper"));
  paramsForm_->addRow(tr("Sigma:"), sigmaSpin_);

  headsSpin_ = new DivisorSpinBox(paramsGroup);
  headsSpin_->setObjectName(u"heads"_s);
  headsSpin_->setRange(1, 16);
  headsSpin_->setToolTip(
      tr("Number of heads; each gets its own map. Multi-head self-attention splits the "
         "dimension among them, so it offers only the divisors of the dimension"));
  paramsForm_->addRow(tr("Hea&ds:"), headsSpin_);

  // Hops, iterations, k, the LSH counts and classes: one row per entry of the engine's table.
  for (const auto& c : attn::lab::count_params()) {
    countSpins_.push_back(
        addCountRow(paramsForm_, paramsGroup, fromView(c.key), fromView(c.label), c.min, c.max, fromView(c.help)));
  }

  causalCheck_ = new QCheckBox(tr("Causal mas&k"), paramsGroup);
  causalCheck_->setObjectName(u"causal"_s);
  causalCheck_->setToolTip(tr("A token may only attend to itself and earlier tokens"));
  paramsForm_->addRow(QString(), causalCheck_);

  positionsBox_ = new QComboBox(paramsGroup);
  positionsBox_->setObjectName(u"positions"_s);
  for (auto kind : attn::lab::position_kinds())
    positionsBox_->addItem(fromView(attn::lab::positions_key(kind)), int(kind));
  positionsBox_->setToolTip(tr("Position information added to the token embeddings"));
  paramsForm_->addRow(tr("P&ositions:"), positionsBox_);

  // The catalogue's point about pooling: without positions it cannot tell word order.
  shuffleButton_ = new QPushButton(tr("Shuffle &Words"), paramsGroup);
  shuffleButton_->setObjectName(u"shuffle"_s);
  shuffleButton_->setCheckable(true);
  shuffleButton_->setToolTip(
      tr("Also pool the words in a random order, with positions and without: without them the pooled vector "
         "is the same, with them it changes. The maps and |c' - c| / |c| are shown"));
  paramsForm_->addRow(QString(), shuffleButton_);

  seedSpin_ = addCountRow(paramsForm_, paramsGroup, u"seed"_s, tr("S&eed:"), 0, INT_MAX,
                          tr("Seed of the random weights and of sampling: same seed, same map"));

  dimSpin_ = new QSpinBox(paramsGroup);
  dimSpin_->setObjectName(u"dim"_s);
  dimSpin_->setRange(4, 1024);
  dimSpin_->setSingleStep(8);
  dimSpin_->setToolTip(tr("Size of the token embeddings and of the model"));
  paramsForm_->addRow(tr("D&imension:"), dimSpin_);

  auto* reset = new QPushButton(tr("&Reset Parameters"), paramsGroup);
  reset->setToolTip(tr("Back to the lab's default parameters (the sentences stay)"));
  connect(reset, &QPushButton::clicked, this, &LabWorkbench::resetParameters);
  paramsForm_->addRow(QString(), reset);
  return paramsGroup;
}

// The display: the colour map and the fixed 0-1 range.
QGroupBox* LabWorkbench::buildDisplayGroup(QWidget* panel) {
  auto* displayGroup = new QGroupBox(tr("Display"), panel);
  auto* displayForm = new QFormLayout(displayGroup);
  colormapBox_ = new QComboBox(displayGroup);
  colormapBox_->setObjectName(u"colormap"_s);
  for (const auto& info : render::colormaps()) colormapBox_->addItem(QString::fromLatin1(info.name), int(info.id));
  colormapBox_->setToolTip(tr("Colour map of the heatmaps"));
  displayForm->addRow(tr("Colour &map:"), colormapBox_);
  unitRangeCheck_ = new QCheckBox(tr("Fi&xed range 0\u20131"), displayGroup);
  unitRangeCheck_->setObjectName(u"unitRange"_s);
  unitRangeCheck_->setToolTip(
      tr("Colour attention weights (rows that sum to 1) on the absolute 0\u20131 scale; off: "
         "0 to the largest weight. Gates, activations and scores always use their own range"));
  displayForm->addRow(QString(), unitRangeCheck_);
  return displayGroup;
}

// The map selector, the step slider with Play, and the map's shape.
QHBoxLayout* LabWorkbench::buildMapRow(QWidget* area) {
  auto* mapRow = new QHBoxLayout();
  mapLabel_ = new QLabel(tr("Map:"), area);
  mapBox_ = new QComboBox(area);
  mapBox_->setObjectName(u"map"_s);
  mapBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  mapBox_->setToolTip(tr("Which of the run's attention maps the main view shows"));
  mapLabel_->setBuddy(mapBox_);
  mapRow->addWidget(mapLabel_);
  mapRow->addWidget(mapBox_);
  // A series of maps (iteration 0..r-1, hop 0..S-1, round 0..n-1): a slider over it and Play, which steps through
  // it as an animation.
  stepLabel_ = new QLabel(area);
  stepLabel_->setObjectName(u"stepLabel"_s);
  stepSlider_ = new QSlider(Qt::Horizontal, area);
  stepSlider_->setObjectName(u"step"_s);
  stepSlider_->setPageStep(1);
  stepSlider_->setTickPosition(QSlider::TicksBelow);
  stepSlider_->setFixedWidth(160);
  stepSlider_->setToolTip(tr("Step through this series of maps (arrow keys, Home, End)"));
  playButton_ = new QToolButton(area);
  playButton_->setObjectName(u"play"_s);
  playButton_->setCheckable(true);
  playButton_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  playButton_->setToolTip(tr("Play the series as an animation, one map every 0.7 s"));
  mapRow->addSpacing(12);
  mapRow->addWidget(stepLabel_);
  mapRow->addWidget(stepSlider_);
  mapRow->addWidget(playButton_);
  mapRow->addStretch(1);
  shapeLabel_ = new QLabel(area);
  shapeLabel_->setForegroundRole(QPalette::PlaceholderText);
  mapRow->addWidget(shapeLabel_);
  return mapRow;
}

void LabWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);

  auto* inputs = new QFormLayout();
  inputs->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  queryEdit_ = new QLineEdit(area);
  queryEdit_->setObjectName(u"query"_s);
  queryEdit_->setMaxLength(1 << 24);  // the default 32767 would silently cut a long paste
  queryEdit_->setClearButtonEnabled(true);
  queryEdit_->setPlaceholderText(tr("The sentence that asks: one query per token"));
  queryEdit_->setToolTip(tr("Query sentence: each of its tokens attends over the source (rows of the map)"));
  queryEdit_->setAcceptDrops(false);  // dropped files go to the window, which opens them
  auto* queryRow = new QVBoxLayout();
  queryRow->setSpacing(2);
  queryRow->addWidget(queryEdit_);
  queryNote_ = new QLabel(tr("Not used: this mechanism attends within the source."), area);
  queryNote_->setForegroundRole(QPalette::PlaceholderText);
  queryRow->addWidget(queryNote_);
  auto* queryLabel = new QLabel(tr("&Query:"), area);
  queryLabel->setBuddy(queryEdit_);
  inputs->addRow(queryLabel, queryRow);

  sourceEdit_ = new SentenceEdit(area);
  sourceEdit_->setObjectName(u"source"_s);
  sourceEdit_->setTabChangesFocus(true);
  sourceEdit_->setPlaceholderText(tr("The sentence attended over: one key per token"));
  sourceEdit_->setToolTip(tr("Source sentence: its tokens are the keys (columns of the map)"));
  const int lineHeight = sourceEdit_->fontMetrics().lineSpacing();
  sourceEdit_->setFixedHeight(lineHeight * 3 + 14);
  auto* sourceLabel = new QLabel(tr("&Source:"), area);
  sourceLabel->setBuddy(sourceEdit_);
  inputs->addRow(sourceLabel, sourceEdit_);
  layout->addLayout(inputs);

  inputError_ = new QLabel(area);
  inputError_->setObjectName(u"inputError"_s);
  inputError_->setWordWrap(true);
  inputError_->setTextFormat(Qt::PlainText);
  QPalette errorPalette = inputError_->palette();
  errorPalette.setColor(QPalette::WindowText, QColor(190, 30, 30));
  inputError_->setPalette(errorPalette);
  inputError_->setVisible(false);
  layout->addWidget(inputError_);

  layout->addLayout(buildMapRow(area));
  busyRow_ = new BusyRow(area, this);
  busyRow_->setObjectName(u"labBusy"_s);
  layout->addWidget(busyRow_);

  auto* views = new QSplitter(Qt::Vertical, area);
  views->setChildrenCollapsible(false);
  heatmap_ = new HeatmapView(HeatmapView::Style::Full, views);
  heatmap_->setObjectName(u"heatmap"_s);
  gridScroll_ = new QScrollArea(views);
  gridScroll_->setWidgetResizable(true);
  gridScroll_->setFrameShape(QFrame::StyledPanel);
  grid_ = new MapGrid(gridScroll_);
  grid_->setObjectName(u"mapGrid"_s);
  grid_->setToolTip(tr("Every map of this run; click one (or use the arrow keys) to show it above"));
  gridScroll_->setWidget(grid_);
  gridScroll_->setMinimumHeight(150);
  views->addWidget(heatmap_);
  views->addWidget(gridScroll_);
  views->setStretchFactor(0, 3);
  views->setStretchFactor(1, 1);
  layout->addWidget(views, 1);

  // What the run changed of the input (a paste cut to kMaxTokens), worded and styled as in the other tabs.
  warningStrip_ = makeMessageStrip(area, u"labWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);

  notesLabel_ = new QLabel(area);
  notesLabel_->setObjectName(u"notes"_s);
  notesLabel_->setWordWrap(true);
  notesLabel_->setTextFormat(Qt::PlainText);
  notesLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notesLabel_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(notesLabel_);

  mapLabel_->setVisible(false);
  mapBox_->setVisible(false);
  for (QWidget* w :
       {static_cast<QWidget*>(stepLabel_), static_cast<QWidget*>(stepSlider_), static_cast<QWidget*>(playButton_)}) {
    w->setVisible(false);
  }
  gridScroll_->setVisible(false);
}

}  // namespace attn::ui
