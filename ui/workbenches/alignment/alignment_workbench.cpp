#include "workbenches/alignment/alignment_workbench.h"

#include "render/strings.h"
#include "views/export.h"
#include "views/heatmap_view.h"
#include "views/speech_view.h"
#include "views/text_figure_view.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/common/side_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTreeWidget>

#include <algorithm>
#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

constexpr int kFigureExportWidth = 900;

Workbench::Identity alignmentIdentity() {
  return {attn::ui::SessionTab::Alignment, AlignmentWorkbench::tr("&Alignment"),
          AlignmentWorkbench::tr("Seq2seq alignment of dates (Bahdanau, Luong, local-p, ConvS2S) and headlines, word "
                                 "attention of review classifiers and word-by-word entailment, live as you type"),
          AlignmentWorkbench::tr("Type a date in any form: the alignment follows every keystroke"),
          AlignmentWorkbench::tr("Last run: model, input length, output or label, beam width and engine time")};
}

}  // namespace

AlignmentWorkbench::AlignmentWorkbench(QWidget* parent)
    : Workbench(alignmentIdentity(), 0, parent), worker_(std::make_unique<AlignmentWorker>()) {
  setObjectName(u"alignmentWorkbench"_s);
  connect(worker_.get(), &AlignmentWorker::loaded, this, &AlignmentWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &AlignmentWorker::loadFailed, this, &AlignmentWorkbench::onLoadFailed, Qt::QueuedConnection);
  connect(worker_.get(), &AlignmentWorker::finished, this, &AlignmentWorkbench::onFinished, Qt::QueuedConnection);
  thread_.host(worker_.get(), u"alignment worker"_s);
  connect(this, &AlignmentWorkbench::sourceFailed, this, &Workbench::failed);
  for (const auto& page : alignmentPages()) {
    kinds_.push_back(makeAlignmentViews(*page, this));
    AlignmentViews* views = kinds_.back().get();
    connect(views, &AlignmentViews::inputChanged, this, &AlignmentWorkbench::post);
    connect(views, &AlignmentViews::stepRequested, this, &AlignmentWorkbench::setStep);
    connect(views, &AlignmentViews::stepClicked, this, &AlignmentWorkbench::goToClickedStep);
  }

  // Typing posts every edit at once; the worker keeps only the newest pending request. Outcomes are
  // applied on the next turn of the event loop, so a burst of them draws the newest once.

  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"alignmentSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  sideScroll_ = frame.scroll;
  updateForSource();
}

AlignmentWorkbench::~AlignmentWorkbench() {
  stopApply();
  thread_.stop();
  worker_.reset();
}

// ---- models ----

void AlignmentWorkbench::fillModelBox() {
  attn::ui::fillModelBox(modelBox_, bundledModels(), tr("No bundled models in this build"));
}

void AlignmentWorkbench::openModel(const QString& nameOrFolder, bool announce) {
  ++loadRequested_;
  requestedModel_ = nameOrFolder;
  announceLoad_ = announce;
  textAtOpen_ = {text(), pairText()};
  // Messages name a folder by its name (the engine's error gives the whole path of the file at fault).
  loadingName_ = QFileInfo(nameOrFolder).fileName().isEmpty() ? nameOrFolder : QFileInfo(nameOrFolder).fileName();
  if (const auto bundled = findBundledModel(nameOrFolder)) loadingName_ = bundled->name;
  if (!source_) placeholder_->setText(tr("Opening %1\u2026").arg(loadingName_));
  emit loadingChanged(true);
  worker_->load(loadRequested_, nameOrFolder);
}

void AlignmentWorkbench::onLoaded(std::shared_ptr<const AlignmentSource> source) {
  if (source->serial != loadRequested_) return;  // a newer load is on its way
  loadSettled_ = source->serial;
  const AlignmentPage& was = page();
  const bool hadSource = source_ != nullptr;
  source_ = std::move(source);
  const AlignmentPage& now = page();
  requestedModel_ = source_->model.path.startsWith(u':') ? source_->model.key : source_->model.path;
  errorBanner_->setVisible(false);
  lastError_.clear();
  const auto& model = source_->model;

  // The selector shows what is open: a bundled entry, or the folder as an entry of its own.
  // What the model was trained on, under its description: small models answer confidently on anything.
  const QString description = model.trainedOn.isEmpty()
                                  ? model.description
                                  : model.description + u'\n' + tr("Trained on: %1").arg(model.trainedOn);
  showOpenModel(modelGroup_, model.key, model.path, model.name, description, !model.modelCard.isEmpty());

  switchKindText(was, now, hadSource);
  outcome_.reset();
  pending_.reset();
  hypothesis_ = 0;
  updateForSource();
  emit loadingChanged(false);
  emit sourceLoaded(model.path);
  if (announceLoad_) emit statusMessage(tr("Opened %1 (%2 ms)").arg(model.name).arg(source_->loadMs, 0, 'f', 0), 6000);
  post();
}

void AlignmentWorkbench::onLoadFailed(quint64 serial, const QString& message) {
  if (serial != loadRequested_) return;
  loadSettled_ = serial;
  textForLoad_ = false;
  lastError_ = message;
  showError(openFailedMessage(loadingName_, message, source_ ? source_->model.name : QString()));
  requestedModel_ = !source_                               ? QString()
                    : source_->model.path.startsWith(u':') ? source_->model.key
                                                           : source_->model.path;
  if (source_) {
    reselectOpenModel(modelBox_, source_->model.key, source_->model.path);
  } else {
    placeholder_->setText(
        tr("No model open. Choose a bundled model in the side panel or open a model folder "
           "(File > Open Model\u2026, Ctrl+Shift+M)."));
  }
  emit loadingChanged(false);
  emit statusMessage(tr("Cannot open %1: %2").arg(loadingName_, message), 0);
  emit sourceFailed(message);
}

void AlignmentWorkbench::showError(const QString& message) {
  errorBanner_->setText(message);
  errorBanner_->setVisible(true);
}

void AlignmentWorkbench::updateForSource() {
  const AlignmentPageParts parts = page().parts();
  const auto words = page().text();
  decodingGroup_->setVisible(parts.decodes);
  hypothesisLabel_->setVisible(parts.pair);
  hypothesisEdit_->setVisible(parts.pair);
  textLabel_->setText(words.sourceLabel);
  textLabel_->setToolTip(words.sourceToolTip);
  textEdit_->setPlaceholderText(words.placeholder);
  steps_->stepTitle()->setText(words.stepTitle.isEmpty() ? tr("St&ep:") : words.stepTitle);
  steps_->slider()->setToolTip(words.stepToolTip);
  {
    const QSignalBlocker block(exampleBox_);
    exampleBox_->clear();
    exampleBox_->addItems(page().exampleLabels());
    exampleBox_->setCurrentIndex(-1);
  }
  if (!source_) {
    placeholder_->setText(bundledModels().empty()
                              ? tr("This build bundles no models (resources/models was empty when it was built).\n"
                                   "Open a model folder: File > Open Model\u2026 (Ctrl+Shift+M).")
                              : tr("No model open. Choose a bundled model in the side panel or open a model folder "
                                   "(File > Open Model\u2026, Ctrl+Shift+M)."));
    pages_->setCurrentWidget(placeholder_);
    return;
  }
  AlignmentViews& open = views();
  pages_->setCurrentWidget(parts.steps() || !open.ownPage() ? steps_ : open.ownPage());
  if (parts.steps()) {
    steps_->clear();
    hypotheses_->clear();
  }
  for (const auto& kind : kinds_) {
    if (kind.get() != &open) kind->setOpen(false);
  }
  open.setOpen(true);
}

void AlignmentWorkbench::showAbout() {
  if (source_ && !source_->model.modelCard.isEmpty())
    showModelCard(this, source_->model.name, source_->model.modelCard);
}

// ---- input ----

void AlignmentWorkbench::setText(const QString& text) { textEdit_->setPlainText(text); }
QString AlignmentWorkbench::text() const { return textEdit_->toPlainText(); }
void AlignmentWorkbench::setPairText(const QString& text) { hypothesisEdit_->setPlainText(text); }
QString AlignmentWorkbench::pairText() const { return hypothesisEdit_->toPlainText(); }
attn::ui::AlignmentSection AlignmentWorkbench::state() const {
  attn::ui::AlignmentSection s;
  if (!requestedModel_.isEmpty()) s.model = requestedModel_.toStdString();
  s.text = text().toStdString();
  s.beam = beam();
  s.hypothesis = pendingHypothesis_ >= 0 ? pendingHypothesis_ : hypothesis_;
  s.step = pendingStep_ >= 0 ? pendingStep_ : step_;
  s.colormap = render::colormapInfo(colormap_).key;
  for (const auto& kind : kinds_) kind->save(s, pairText());
  return s;
}

void AlignmentWorkbench::applyState(const attn::ui::AlignmentSection& state) {
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) setColormap(*map);
  pendingHypothesis_ = state.hypothesis;
  pendingStep_ = state.step;
  QString pair;
  for (const auto& kind : kinds_)
    kind->restore(state, pair);  // without running: the runs below (or the load's) read them
  const QString model = QString::fromStdString(state.model);
  if (model != requestedModel_ && source_) kindTexts_[page().name()] = {text(), pairText()};
  setText(QString::fromStdString(state.text));
  setPairText(pair);
  setBeam(state.beam);
  if (model != requestedModel_) {
    textForLoad_ = true;      // the text set above is the incoming model's
    openModel(model, false);  // runs when loaded
  } else {
    post();  // a fresh result even when nothing changed, for the hypothesis and the step
  }
}

void AlignmentWorkbench::saveTo(attn::ui::Session& session) const { session.alignment = state(); }

QStringList AlignmentWorkbench::restoreFrom(const attn::ui::Session& session, const QString& origin) {
  QStringList notes;
  attn::ui::AlignmentSection section = session.alignment.value_or(attn::ui::AlignmentSection{});
  if (const QString model = QString::fromStdString(section.model); !findBundledModel(model) && !pathExists(model)) {
    notes.append(goneNote(origin, model, tr("the Alignment tab")));
    section = attn::ui::AlignmentSection{};
    section.model = defaultAlignmentModel().toStdString();
  }
  applyState(section);
  return notes;
}

void AlignmentWorkbench::setBeam(int beam) { beamSpin_->setValue(std::clamp(beam, 1, kMaxBeam)); }
int AlignmentWorkbench::beam() const { return beamSpin_->value(); }

void AlignmentWorkbench::post() {
  if (!source_) return;
  const QString text = textEdit_->toPlainText();
  const bool pair = page().parts().pair;
  if ((text.isEmpty() && !views().hasOwnInput()) || (pair && pairText().isEmpty())) {
    // Nothing to run: the view keeps the last input, and a run still on its way for an older text is not
    // shown over the message.
    inputMessage_ = views().emptyInputMessage(text);
    stale_ = submitted_;
    settled_ = submitted_;
    pending_.reset();
    updateBusyRow();
    if (!outcome_) {
      // Nothing shown yet (a model opened over an empty input): the views say what to do.
      steps_->figureView()->setPlaceholder(inputMessage_);
      for (const auto& kind : kinds_) kind->setPlaceholder(inputMessage_);
    }
    updateWarnings();
    updateInputNote();
    emit statusMessage(inputMessage_, 6000);
    return;
  }
  inputMessage_.clear();
  steps_->figureView()->setPlaceholder(tr("Decoding\u2026"));
  for (const auto& kind : kinds_) kind->setPlaceholder(QString());
  // An example edited is no longer that example.
  const QString shown = pair ? EntailmentExample{text, pairText()}.display() : text;
  if (exampleBox_->currentIndex() >= 0 && exampleBox_->currentText() != shown) {
    const QSignalBlocker block(exampleBox_);
    exampleBox_->setCurrentIndex(-1);
  }
  AlignmentRequest request;
  request.text = text.toStdString();
  if (pair) request.hypothesis = pairText().toStdString();
  request.beam = beamSpin_->value();
  for (const auto& kind : kinds_) kind->addToRequest(request);
  ++submitted_;
  worker_->submit(submitted_, source_, std::move(request));
  busyRow_->start(tr("Running %1\u2026").arg(source_->model.name));
  updateWarnings();
}

void AlignmentWorkbench::onFinished(std::shared_ptr<const AlignmentOutcome> outcome) {
  if (!source_ || outcome->sourceSerial != source_->serial) return;
  if (outcome->generation <= shown_ || outcome->generation <= stale_) return;
  if (!outcome->ok()) {
    if (outcome->generation != submitted_) return;  // a newer request reports for itself
    settled_ = outcome->generation;
    pending_.reset();  // an older input's result, not shown yet, would hide this refusal
    const QString message = fromStd(outcome->error ? outcome->error->message() : std::string());
    lastError_ = message;
    updateBusyRow();
    showError(tr("Input refused: %1. The previous view stays.").arg(message));
    emit statusMessage(tr("Input refused: %1").arg(message), 0);
    return;
  }
  pending_ = std::move(outcome);
  scheduleApply();
}

void AlignmentWorkbench::applyPending() {
  auto next = std::move(pending_);
  pending_.reset();
  if (!next || next->generation <= shown_ || next->generation <= stale_) return;
  outcome_ = next;
  shown_ = next->generation;
  settled_ = std::max(settled_, shown_);
  updateBusyRow();
  errorBanner_->setVisible(false);
  lastError_.clear();

  const AlignmentPageParts parts = page().parts();
  if (parts.decodes) {
    hypothesis_ = 0;
    updateHypotheses();
  }
  views().showMaps(viewState());
  updateStepViews();
  // The hypothesis and the step of applyState, on the first result of what it set (a kind without steps drops them).
  if (next->generation == submitted_ && !isLoading()) {
    if (!parts.steps()) {
      pendingHypothesis_ = pendingStep_ = -1;
    } else if ((parts.decodes && pendingHypothesis_ >= 0) || pendingStep_ >= 0) {
      const int step = pendingStep_;
      if (parts.decodes && pendingHypothesis_ >= 0) selectHypothesis(pendingHypothesis_);
      pendingHypothesis_ = pendingStep_ = -1;
      if (step >= 0) setStep(step);
    }
  }
  const QString summary = views().summary(viewState());
  updateWarnings();
  updateInputNote();
  setRunSummary(summary);
  emit resultShown(next->generation);
}

QStringList AlignmentWorkbench::warnings() const { return outcome_ ? outcome_->warnings() : QStringList(); }

void AlignmentWorkbench::updateWarnings() {
  QStringList lines;
  if (!inputMessage_.isEmpty()) lines.append(inputMessage_);
  lines += warnings();
  warningStrip_->setText(u"\u26a0 "_s + lines.join(u"\n\u26a0 "_s));
  warningStrip_->setVisible(!lines.isEmpty());
}

void AlignmentWorkbench::updateInputNote() {
  if (!inputMessage_.isEmpty()) {
    inputNote_->setText(inputMessage_);
    inputNote_->setForegroundRole(QPalette::WindowText);
    return;
  }
  inputNote_->setForegroundRole(QPalette::PlaceholderText);
  if (!outcome_) {
    inputNote_->clear();
    return;
  }
  // How much of the input the model has never seen: "3 of 40 (8%) not in the vocabulary"; when that is most
  // of it, the note says plainly that the answer means little.
  const auto unknownNote = [this](std::int64_t unknown, std::int64_t total) {
    if (unknown <= 0 || total <= 0) return QString();
    QString note = tr(" \u00b7 %1 of %2 (%3%) not in the vocabulary (red), read as <unk>")
                       .arg(unknown)
                       .arg(total)
                       .arg(qRound(100.0 * double(unknown) / double(total)));
    if (2 * unknown > total) {
      note += tr(" \u00b7 most of this input is unlike the model's training data: its answer means little");
      inputNote_->setForegroundRole(QPalette::WindowText);
    }
    return note;
  };
  const AlignmentInputCount count = views().inputCount(viewState());
  inputNote_->setText(count.read + unknownNote(count.unknown, count.total));
}

// ---- hypotheses and steps ----

void AlignmentWorkbench::updateHypotheses() {
  std::vector<HypothesisRow> rows;
  if (outcome_ && outcome_->seq2seq) {
    for (const auto& hyp : outcome_->seq2seq->hypotheses) {
      rows.push_back({hyp.log_prob, fromStd(hyp.text), hyp.finished,
                      hyp.finished ? tr("ended with </s> after %1 %2").arg(hyp.ids.size() - 1).arg(page().text().units)
                                   : tr("stopped at the length limit without </s>")});
    }
  }
  fillHypothesisList(hypotheses_, rows, hypothesis_);
}

void AlignmentWorkbench::selectHypothesis(int index) {
  if (!outcome_ || !outcome_->seq2seq || outcome_->alignments.empty()) return;
  index = std::clamp(index, 0, int(outcome_->alignments.size()) - 1);
  hypothesis_ = index;
  setCurrentHypothesis(hypotheses_, index);
  views().showMaps(viewState());
  updateStepViews();
}

int AlignmentWorkbench::hypothesisSteps() const { return outcome_ ? views().stepCount(viewState()) : 0; }

int AlignmentWorkbench::stepCount() const { return hypothesisSteps(); }
int AlignmentWorkbench::step() const { return step_; }

void AlignmentWorkbench::setStep(int step) {
  const int steps = hypothesisSteps();
  const int clamped = steps > 0 ? std::clamp(step, 0, steps - 1) : std::max(0, step);
  if (clamped == step_) return;
  step_ = clamped;
  updateStepViews();
}

const attn::AttentionMap* AlignmentWorkbench::currentMap() const {
  return outcome_ ? views().currentMap(viewState()) : nullptr;
}

const render::TextFigure& AlignmentWorkbench::currentFigure() const {
  return outcome_ ? views().currentFigure() : steps_->figure();
}

void AlignmentWorkbench::updateStepViews() {
  if (!outcome_ || !page().parts().steps()) return;
  const int steps = hypothesisSteps();
  step_ = steps > 0 ? std::clamp(step_, 0, steps - 1) : 0;
  if (views().showStep(viewState())) emit stepChanged(step_);
}

// ---- the kinds ----

const AlignmentPage& AlignmentWorkbench::page() const {
  return source_ ? alignmentPageFor(source_->model) : *alignmentPages().front();
}

AlignmentViews& AlignmentWorkbench::views() const {
  const AlignmentPage& open = page();
  for (const auto& kind : kinds_) {
    if (&kind->page() == &open) return *kind;
  }
  return *kinds_.front();
}

AlignmentViewState AlignmentWorkbench::viewState() const { return {source_, outcome_, hypothesis_, step_, colormap_}; }

// The kinds' widgets, by name.
SpeechView* AlignmentWorkbench::speechView() const { return findChild<SpeechView*>(u"alignmentSpeech"_s); }
QPushButton* AlignmentWorkbench::playButton() const { return findChild<QPushButton*>(u"alignmentPlay"_s); }
QLabel* AlignmentWorkbench::playbackLabel() const { return findChild<QLabel*>(u"alignmentPlayback"_s); }
TextFigureView* AlignmentWorkbench::reviewView() const { return findChild<TextFigureView*>(u"alignmentReview"_s); }
QCheckBox* AlignmentWorkbench::readingsCheck() const { return findChild<QCheckBox*>(u"alignmentReadings"_s); }
QComboBox* AlignmentWorkbench::matrixBox() const { return findChild<QComboBox*>(u"alignmentMatrix"_s); }
HeatmapView* AlignmentWorkbench::reviewHeatmap() const { return findChild<HeatmapView*>(u"alignmentReviewHeatmap"_s); }
QWidget* AlignmentWorkbench::matrixPanel() const { return findChild<QWidget*>(u"alignmentMatrixPanel"_s); }

// ---- display ----

void AlignmentWorkbench::setColormap(render::Colormap map) {
  colormap_ = map;
  {
    const QSignalBlocker block(colormapBox_);
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(map))));
  }
  steps_->setColormap(map);
  for (const auto& kind : kinds_) kind->setColormap(map);
  if (outcome_ && page().parts().steps()) updateStepViews();
  if (outcome_ && !page().parts().steps()) views().showMaps(viewState());
}

void AlignmentWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }
bool AlignmentWorkbench::isSidePanelVisible() const { return sideScroll_->isVisibleTo(this); }

// ---- exports ----

AlignmentWorkbench::View AlignmentWorkbench::currentView() const {
  return outcome_ && !page().parts().steps() ? View::Shading : View::Heatmap;
}

attn::Result<void> AlignmentWorkbench::exportView(const QString& path, View view) const {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a view can be saved as .png, .svg or .pdf")));
  }
  if (!outcome_) return std::unexpected(exportError(path, tr("nothing to export yet: no run has finished")));
  if (view == View::Heatmap && page().parts().steps()) return exportHeatmap(*steps_->heatmap(), path);
  const TextFigureView* shown = views().figureView();
  return exportFigure(currentFigure(), shown->font(), std::max(kFigureExportWidth, shown->width()), path);
}

attn::Result<void> AlignmentWorkbench::exportCurrentView(const QString& path) const {
  return exportView(path, currentView());
}

attn::Result<void> AlignmentWorkbench::exportMatrix(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || !isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a matrix can be saved as .csv or .npy")));
  }
  const attn::AttentionMap* map = currentMap();
  if (!map) return std::unexpected(exportError(path, tr("nothing to export yet: no run has finished")));
  return *format == ExportFormat::Csv ? writeMatrixCsv(*map, path) : writeMatrixNpy(map->weights, path);
}

}  // namespace attn::ui
