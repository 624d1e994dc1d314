// AlignmentWorkbench's widgets: the side panel (model, input, decoding, display) and the main area (the
// decoding page with its step slider and heatmap, the review page, the placeholder).
#include "workbenches/alignment/alignment_workbench.h"

#include "workbenches/alignment/alignment_models.h"
#include "views/heatmap_view.h"
#include "views/text_figure_view.h"
#include "workbenches/common/side_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {

// The input group: the source (or review, or premise), an entailment model's hypothesis, the examples, the note.
QGroupBox* AlignmentWorkbench::buildInputGroup(QWidget* panel) {
  auto* inputGroup = new QGroupBox(tr("Input"), panel);
  auto* inputLayout = new QVBoxLayout(inputGroup);
  textLabel_ = new QLabel(tr("&Source: a date in any form"), inputGroup);
  textLabel_->setWordWrap(true);
  textEdit_ = new InputEdit(inputGroup);
  textEdit_->setObjectName(u"alignmentText"_s);
  textEdit_->setTabChangesFocus(true);
  textEdit_->setFixedHeight(textEdit_->fontMetrics().lineSpacing() * 4 + 14);
  textEdit_->setPlainText(defaultDateText());
  textLabel_->setBuddy(textEdit_);
  inputLayout->addWidget(textLabel_);
  inputLayout->addWidget(textEdit_);
  // An entailment model's second sentence (hidden for the other models).
  hypothesisLabel_ = new QLabel(tr("H&ypothesis: does it follow from the premise?"), inputGroup);
  hypothesisLabel_->setWordWrap(true);
  hypothesisEdit_ = new InputEdit(inputGroup);
  hypothesisEdit_->setObjectName(u"alignmentPair"_s);
  hypothesisEdit_->setTabChangesFocus(true);
  hypothesisEdit_->setFixedHeight(hypothesisEdit_->fontMetrics().lineSpacing() * 2 + 14);
  hypothesisEdit_->setPlaceholderText(tr("A sentence about the same scene, e.g. a man is sleeping"));
  hypothesisLabel_->setBuddy(hypothesisEdit_);
  inputLayout->addWidget(hypothesisLabel_);
  inputLayout->addWidget(hypothesisEdit_);
  auto* exampleForm = new QFormLayout();
  exampleForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  exampleBox_ = new QComboBox(inputGroup);
  exampleBox_->setObjectName(u"alignmentExamples"_s);
  exampleBox_->setPlaceholderText(tr("Choose an example"));
  // Reviews are long: the box shows their start, the list the whole text.
  exampleBox_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  exampleBox_->setMinimumContentsLength(16);
  exampleBox_->setToolTip(tr("Inputs of the kinds the model was trained on, and one it has to cope with"));
  exampleForm->addRow(tr("E&xamples:"), exampleBox_);
  inputLayout->addLayout(exampleForm);
  inputLayout->addWidget(makeAudioButton(inputGroup));  // before post's connection: typing leaves the file
  inputNote_ = new QLabel(inputGroup);
  inputNote_->setObjectName(u"alignmentInputNote"_s);
  inputNote_->setWordWrap(true);
  inputNote_->setTextFormat(Qt::PlainText);
  inputNote_->setForegroundRole(QPalette::PlaceholderText);
  inputLayout->addWidget(inputNote_);
  connect(textEdit_, &QPlainTextEdit::textChanged, this, &AlignmentWorkbench::post);
  connect(hypothesisEdit_, &QPlainTextEdit::textChanged, this, &AlignmentWorkbench::post);
  connect(exampleBox_, &QComboBox::activated, this, [this](int index) {
    const AlignmentPage& page = source_ ? source_->model.page() : *alignmentPages().front();
    const QStringList examples = page.examples();
    if (index < 0 || index >= examples.size()) return;
    const QString pair = page.examplePair(index);
    if (pair.isEmpty()) {
      setText(examples[index]);
      return;
    }
    {
      const QSignalBlocker block(textEdit_);  // one run, for the whole pair
      setText(examples[index]);
    }
    setPairText(pair);
  });
  return inputGroup;
}

void AlignmentWorkbench::buildSidePanel(QWidget* panel) {
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(8, 8, 8, 8);

  modelGroup_ = makeModelGroup(
      panel, u"alignment"_s,
      tr("The bundled models: date normalisers with Bahdanau's additive attention and Luong's dot, general, concat "
         "and local-p attention, review classifiers that pool words with attention (and an LSTM and a CNN read "
         "without a query), and an entailment model with word-by-word attention. Switching keeps the input."),
      tr("A model folder: config.json + model.safetensors of an AttnScopeSeq2Seq, AttnScopeClassifier or "
         "AttnScopeEntailment model (File > Open Model\u2026, Ctrl+Shift+M)"),
      tr("The model card: what the model was trained on, how well it does and where it fails"));
  modelBox_ = modelGroup_.box;
  modelLabel_ = modelGroup_.description;
  aboutButton_ = modelGroup_.about;
  fillModelBox();  // before the panel's size hint is taken: the longest name sets the panel's width
  connect(modelGroup_.openFolder, &QPushButton::clicked, this, &AlignmentWorkbench::openModelRequested);
  connect(aboutButton_, &QPushButton::clicked, this, &AlignmentWorkbench::showAbout);
  layout->addWidget(modelGroup_.group);
  connect(modelBox_, &QComboBox::activated, this, [this](int index) {
    const QString target = modelBox_->itemData(index).toString();
    if (!target.isEmpty() && (!source_ || (target != source_->model.key && target != source_->model.path))) {
      openModel(target);
    }
  });

  layout->addWidget(buildInputGroup(panel));

  const DecodingGroup decoding = makeDecodingGroup(
      panel, u"alignment"_s, kMaxBeam,
      tr("Beam width: how many hypotheses the search keeps at each step. 1 is greedy decoding: the most likely "
         "character at every step."),
      tr("Output"),
      tr("The hypotheses the beam search ended with, ranked by log-probability (the sum of the log-softmax of their "
         "characters, </s> included). Select one to see its own alignment."));
  decodingGroup_ = decoding.group;
  beamSpin_ = decoding.beam;
  hypotheses_ = decoding.hypotheses;
  layout->addWidget(decodingGroup_);
  layout->addWidget(makeShapingGroup(panel));
  connect(beamSpin_, &QSpinBox::valueChanged, this, &AlignmentWorkbench::post);
  connect(hypotheses_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* current) {
    if (current) selectHypothesis(hypotheses_->indexOfTopLevelItem(current));
  });

  auto* displayGroup = new QGroupBox(tr("Display"), panel);
  auto* displayForm = new QFormLayout(displayGroup);
  displayForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  colormapBox_ = new QComboBox(displayGroup);
  for (const auto& info : render::colormaps()) colormapBox_->addItem(QString::fromLatin1(info.name), int(info.id));
  colormapBox_->setToolTip(tr("Colour map of the heatmap and of the shaded characters"));
  displayForm->addRow(tr("Colo&ur map:"), colormapBox_);
  readingsCheck_ = new QCheckBox(tr("Com&pare the three readings of saliency"), displayGroup);
  readingsCheck_->setObjectName(u"alignmentReadings"_s);
  readingsCheck_->setChecked(true);
  readingsCheck_->setToolTip(
      tr("Reviews: shade the same text by the three bundled classifiers whose saliency needs no query (attention "
         "pooling, an LSTM's gates, a CNN's max pooling), each with its prediction and its held-out share on the "
         "deciding words"));
  displayForm->addRow(readingsCheck_);
  layout->addWidget(displayGroup);
  connect(readingsCheck_, &QCheckBox::toggled, this, &AlignmentWorkbench::post);
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  layout->addStretch(1);
}

void AlignmentWorkbench::buildMainArea(QWidget* area) {
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(6, 8, 8, 4);
  errorBanner_ = makeMessageStrip(area, u"alignmentError"_s, MessageStrip::Error);
  layout->addWidget(errorBanner_);
  warningStrip_ = makeMessageStrip(area, u"alignmentWarnings"_s, MessageStrip::Warning);
  layout->addWidget(warningStrip_);
  busyRow_ = new BusyRow(area, this);
  busyRow_->setObjectName(u"alignmentBusy"_s);
  connect(busyRow_, &BusyRow::cancelRequested, this, &AlignmentWorkbench::cancelRun);
  layout->addWidget(busyRow_);

  pages_ = new QStackedWidget(area);
  placeholder_ = new QLabel(pages_);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setForegroundRole(QPalette::PlaceholderText);
  pages_->addWidget(placeholder_);

  decodingPage_ = new QWidget(pages_);
  auto* decoding = new QVBoxLayout(decodingPage_);
  decoding->setContentsMargins(0, 0, 0, 0);
  decodingView_ = new TextFigureView(decodingPage_);
  decodingView_->setObjectName(u"alignmentDecoding"_s);
  decodingView_->setPlaceholder(tr("Decoding\u2026"));
  decodingView_->setToolTip(QString());
  decoding->addWidget(decodingView_);
  decoding->addWidget(makeSpeechView());
  auto* stepRow = new QHBoxLayout();
  stepTitle_ = new QLabel(tr("St&ep:"), decodingPage_);
  stepSlider_ = new QSlider(Qt::Horizontal, decodingPage_);
  stepSlider_->setObjectName(u"alignmentStep"_s);
  stepSlider_->setRange(0, 0);
  stepSlider_->setSingleStep(1);
  stepSlider_->setPageStep(1);
  stepSlider_->setTickPosition(QSlider::TicksBelow);
  stepSlider_->setTickInterval(1);
  stepSlider_->setToolTip(
      tr("The output step in view (Left/Right, Home/End): its row of the heatmap is outlined "
         "and the source characters are shaded by its attention. A click on a heatmap row "
         "goes to that step."));
  stepTitle_->setBuddy(stepSlider_);
  stepLabel_ = new QLabel(decodingPage_);
  stepLabel_->setObjectName(u"alignmentStepLabel"_s);
  stepLabel_->setTextFormat(Qt::PlainText);
  stepLabel_->setMinimumWidth(stepLabel_->fontMetrics().horizontalAdvance(u"step 12 of 12 \u00b7 \u201c0\u201d  "_s));
  stepRow->addWidget(stepTitle_);
  stepRow->addWidget(stepSlider_, 1);
  stepRow->addWidget(stepLabel_);
  decoding->addLayout(stepRow);
  heatmapTitle_ = new QLabel(decodingPage_);
  heatmapTitle_->setObjectName(u"alignmentHeatmapTitle"_s);
  heatmapTitle_->setTextFormat(Qt::PlainText);
  heatmapTitle_->setWordWrap(true);
  decoding->addWidget(heatmapTitle_);
  heatmap_ = new HeatmapView(HeatmapView::Style::Full, decodingPage_);
  heatmap_->setObjectName(u"alignmentHeatmap"_s);
  heatmapGrid_ = new QGridLayout();
  heatmapGrid_->setSpacing(6);
  heatmapPanel_ = makeHeatmapPanel(heatmap_, meanTitle_, u"alignmentMeanTitle"_s);
  meanTitle_->hide();
  heatmapGrid_->addWidget(heatmapPanel_, 0, 0);
  decoding->addLayout(heatmapGrid_, 1);
  pages_->addWidget(decodingPage_);

  buildReviewPage();
  layout->addWidget(pages_, 1);

  connect(stepSlider_, &QSlider::valueChanged, this, [this](int value) { setStep(value); });
  connect(heatmap_, &HeatmapView::cellClicked, this, [this](int row, int) { goToClickedStep(row); });
}

// A review classifier's page: the shaded text and, under it, the matrices behind a reading.
void AlignmentWorkbench::buildReviewPage() {
  reviewScroll_ = new QScrollArea(pages_);
  reviewScroll_->setWidgetResizable(true);
  reviewScroll_->setFrameShape(QFrame::NoFrame);
  reviewScroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  reviewView_ = new TextFigureView(reviewScroll_);
  reviewView_->setObjectName(u"alignmentReview"_s);
  reviewView_->setPlaceholder(tr("Classifying\u2026"));
  reviewScroll_->setWidget(reviewView_);
  reviewPage_ = new QSplitter(Qt::Vertical, pages_);
  reviewPage_->setChildrenCollapsible(false);
  reviewPage_->addWidget(reviewScroll_);
  // The matrices behind a reading (the LSTM's gates, the CNN's activations), one at a time.
  matrixPanel_ = new QWidget(reviewPage_);
  auto* matrixLayout = new QVBoxLayout(matrixPanel_);
  matrixLayout->setContentsMargins(0, 4, 0, 0);
  auto* matrixRow = new QHBoxLayout();
  auto* matrixTitle = new QLabel(tr("Matr&ix:"), matrixPanel_);
  matrixBox_ = new QComboBox(matrixPanel_);
  matrixBox_->setObjectName(u"alignmentMatrix"_s);
  matrixBox_->setToolTip(tr("Which of the model's matrices the heatmap shows (File > Export Matrix saves it)"));
  matrixBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  matrixTitle->setBuddy(matrixBox_);
  matrixRow->addWidget(matrixTitle);
  matrixRow->addWidget(matrixBox_);
  matrixRow->addStretch(1);
  matrixLayout->addLayout(matrixRow);
  reviewHeatmap_ = new HeatmapView(HeatmapView::Style::Full, matrixPanel_);
  reviewHeatmap_->setObjectName(u"alignmentReviewHeatmap"_s);
  matrixLayout->addWidget(reviewHeatmap_, 1);
  reviewPage_->addWidget(matrixPanel_);
  reviewPage_->setStretchFactor(0, 2);
  reviewPage_->setStretchFactor(1, 3);
  pages_->addWidget(reviewPage_);
  connect(matrixBox_, &QComboBox::currentIndexChanged, this, [this](int) { updateReviewMatrix(); });
}

// ---- the input of each kind ----

void AlignmentWorkbench::switchKindText(const AlignmentPage& was, const AlignmentPage& now, bool hadSource) {
  const QString current = textEdit_->toPlainText();
  QString text = current, pair = hypothesisEdit_->toPlainText();
  // Typed (or set) while the model was loading: the input is for it; what the open kind had stays with that kind.
  const bool editedSinceOpen = text != textAtOpen_.text || pair != textAtOpen_.pair;
  const bool forLoad = std::exchange(textForLoad_, false) || editedSinceOpen;
  if (hadSource && &was != &now && editedSinceOpen) kindTexts_[was.name()] = textAtOpen_;
  if (hadSource && &was != &now && !forLoad) {
    // Another kind: the input typed stays with its kind, and this kind's last input (or its example) comes back.
    kindTexts_[was.name()] = {current, pair};
    const auto kept = kindTexts_.find(now.name());
    text = kept != kindTexts_.end() ? kept->second.text : QString();
    if (kept != kindTexts_.end() && now.parts().pair) pair = kept->second.pair;
  } else {
    // The first model, or applyState's: keep the input unless it is another kind's example.
    bool otherExample = false;
    for (const auto& page : alignmentPages()) {
      otherExample = otherExample || (page.get() != &now && page->examples().contains(current));
    }
    if (&was != &now && otherExample) text.clear();
  }
  if (text.isEmpty()) text = now.examples().front();
  if (pair.isEmpty()) pair = now.examplePair(0);
  const QSignalBlocker block(textEdit_), blockPair(hypothesisEdit_);
  if (text != current) textEdit_->setPlainText(text);
  if (pair != hypothesisEdit_->toPlainText()) hypothesisEdit_->setPlainText(pair);
}

void AlignmentWorkbench::goToClickedStep(int step) {
  setStep(step);
  // Left/Right go on from the step clicked at once: the slider takes them (the heatmap has no keys of its own).
  stepSlider_->setFocus(Qt::MouseFocusReason);
}

}  // namespace attn::ui
