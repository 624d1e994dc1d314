// AlignmentWorkbench's widgets: the side panel (model, input, decoding, display) and the main area (the
// step page with its step slider and heatmap, the kinds' own pages, the placeholder); the kinds' views build their
// own widgets into these (alignment_views.h).
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
  auto* kindInputs = new QVBoxLayout();  // the kinds' own inputs (a speech model's audio file)
  kindInputs->setContentsMargins(0, 0, 0, 0);
  for (const auto& kind : kinds_) kind->buildInput(inputGroup, *kindInputs);
  inputLayout->addLayout(kindInputs);
  inputNote_ = new QLabel(inputGroup);
  inputNote_->setObjectName(u"alignmentInputNote"_s);
  inputNote_->setWordWrap(true);
  inputNote_->setTextFormat(Qt::PlainText);
  inputNote_->setForegroundRole(QPalette::PlaceholderText);
  inputLayout->addWidget(inputNote_);
  connect(textEdit_, &QPlainTextEdit::textChanged, this, [this] {
    for (const auto& kind : kinds_) kind->sourceEdited();  // before the run: typing leaves an audio file
    post();
  });
  connect(hypothesisEdit_, &QPlainTextEdit::textChanged, this, &AlignmentWorkbench::post);
  connect(exampleBox_, &QComboBox::activated, this, [this](int index) {
    const QStringList examples = page().examples();
    if (index < 0 || index >= examples.size()) return;
    const QString pair = page().examplePair(index);
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
  for (const auto& kind : kinds_) kind->buildSide(panel, *layout);  // a speech model's attention weights
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
  for (const auto& kind : kinds_) kind->buildDisplay(displayGroup, *displayForm);  // a review's readings
  layout->addWidget(displayGroup);
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

  steps_ = new AlignmentStepPage(pages_, [this](AlignmentStepPage& steps, QVBoxLayout& column) {
    for (const auto& kind : kinds_) kind->buildSteps(steps, column);  // a speech model's spectrogram
  });
  pages_->addWidget(steps_);
  for (const auto& kind : kinds_) kind->buildPage(pages_);  // a review's page
  layout->addWidget(pages_, 1);

  connect(steps_, &AlignmentStepPage::stepChanged, this, &AlignmentWorkbench::setStep);
  connect(steps_, &AlignmentStepPage::stepClicked, this, &AlignmentWorkbench::goToClickedStep);
}

// ---- the input of each kind ----

void AlignmentWorkbench::switchKindText(const AlignmentPage& was, const AlignmentPage& now, bool hadSource) {
  const QString current = textEdit_->toPlainText();
  QString text = current, pair = hypothesisEdit_->toPlainText();
  // Typed (or set) while the model was loading: the input is for it; what the open kind had stays with that kind.
  const bool editedSinceOpen = text != textAtOpen_.text || pair != textAtOpen_.pair;
  const bool forLoad = std::exchange(textForLoad_, false) || editedSinceOpen;
  const bool otherKind = &was != &now;
  if (hadSource && otherKind && editedSinceOpen) kindTexts_[was.name()] = textAtOpen_;
  if (hadSource && otherKind && !forLoad) {
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
    if (otherKind && otherExample) text.clear();
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
  steps_->slider()->setFocus(Qt::MouseFocusReason);
}

}  // namespace attn::ui
