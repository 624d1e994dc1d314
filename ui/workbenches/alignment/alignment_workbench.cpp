#include "views/export.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "render/strings.h"

#include "render/alignment_overlay.h"
#include "workbenches/alignment/alignment_models.h"
#include "render/alignment_render.h"
#include "views/heatmap_view.h"
#include "views/speech_view.h"
#include "views/text_figure_view.h"
#include "workbenches/common/side_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QGroupBox>
#include <QLabel>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTreeWidget>

#include <algorithm>
#include <utility>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// The label of output step t of a hypothesis: its character, "</s>" for the end.
QString stepLabel(const attn::AttentionMap& map, int t) {
  if (t < 0 || std::size_t(t) >= map.row_labels.size()) return {};
  const auto& label = map.row_labels[std::size_t(t)];
  return label == "</s>" ? u"</s>"_s : quoted(render::tokenLabel(label));
}

constexpr int kFigureExportWidth = 900;

// The page of the open model; the first (the dates') with none open.
const AlignmentPage& pageOf(const AlignmentSource* source) {
  return source ? source->model.page() : *alignmentPages().front();
}

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
  const AlignmentPage& was = pageOf(source_.get());
  const bool hadSource = source_ != nullptr;
  source_ = std::move(source);
  const AlignmentPage& now = pageOf(source_.get());
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
  const AlignmentPage& page = pageOf(source_.get());
  const AlignmentPageParts parts = page.parts();
  const AlignmentTaskText words = page.text();
  decodingGroup_->setVisible(parts.decodes);
  hypothesisLabel_->setVisible(parts.pair);
  hypothesisEdit_->setVisible(parts.pair);
  textLabel_->setText(words.sourceLabel);
  textLabel_->setToolTip(words.sourceToolTip);
  textEdit_->setPlaceholderText(words.placeholder);
  stepTitle_->setText(words.stepTitle.isEmpty() ? tr("St&ep:") : words.stepTitle);
  stepSlider_->setToolTip(words.stepToolTip);
  {
    const QSignalBlocker block(exampleBox_);
    exampleBox_->clear();
    exampleBox_->addItems(page.exampleLabels());
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
  pages_->setCurrentWidget(parts.steps() ? decodingPage_ : static_cast<QWidget*>(reviewPage_));
  decodingView_->setVisible(!parts.audio);  // a model that hears audio: its spectrogram instead
  speechPanel_->setVisible(parts.audio);
  audioButton_->setVisible(parts.audio);
  shapingGroup_->setVisible(parts.audio);
  stopPlayback();
  if (!parts.audio) audioPath_.clear();
  readingsCheck_->setVisible(parts.readings);
  if (parts.steps()) {
    decodingView_->clear();
    speechView_->clear();
    heatmap_->clear();
    hypotheses_->clear();
  } else {
    reviewView_->clear();
    reviewHeatmap_->clear();
    matrixPanel_->setVisible(false);
  }
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
  s.pair = pairText().toStdString();
  s.beam = beam();
  s.hypothesis = pendingHypothesis_ >= 0 ? pendingHypothesis_ : hypothesis_;
  s.step = pendingStep_ >= 0 ? pendingStep_ : step_;
  s.colormap = render::colormapInfo(colormap_).key;
  s.readings = readingsCheck_->isChecked();
  s.shaping = shaping();
  return s;
}

void AlignmentWorkbench::applyState(const attn::ui::AlignmentSection& state) {
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) setColormap(*map);
  pendingHypothesis_ = state.hypothesis;
  pendingStep_ = state.step;
  {
    const QSignalBlocker block(readingsCheck_);  // the run below (or the load's) reads it
    readingsCheck_->setChecked(state.readings);
  }
  const QString model = QString::fromStdString(state.model);
  if (model != requestedModel_ && source_) kindTexts_[pageOf(source_.get()).name()] = {text(), pairText()};
  setText(QString::fromStdString(state.text));
  setPairText(QString::fromStdString(state.pair));
  setBeam(state.beam);
  setShaping(state.shaping);
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
  const bool pair = pageOf(source_.get()).parts().pair;
  if ((text.isEmpty() && audioPath_.isEmpty()) || (pair && pairText().isEmpty())) {
    // Nothing to run: the view keeps the last input, and a run still on its way for an older text is not
    // shown over the message.
    inputMessage_ = emptyInputMessage();
    stale_ = submitted_;
    settled_ = submitted_;
    pending_.reset();
    updateBusyRow();
    if (!outcome_) {
      // Nothing shown yet (a model opened over an empty input): the views say what to do.
      decodingView_->setPlaceholder(inputMessage_);
      reviewView_->setPlaceholder(inputMessage_);
    }
    updateWarnings();
    updateInputNote();
    emit statusMessage(inputMessage_, 6000);
    return;
  }
  inputMessage_.clear();
  decodingView_->setPlaceholder(tr("Decoding\u2026"));
  reviewView_->setPlaceholder(tr("Classifying\u2026"));
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
  request.readings = readingsCheck_->isChecked();
  request.wavPath = audioPath_;
  request.shaping = shaping();
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

  const QString name = source_ ? source_->model.name : QString();
  QString summary;
  if (outcome_->seq2seq) {
    hypothesis_ = 0;
    updateHypotheses();
    updateHeatmap();
    updateStepViews();
    // The hypothesis and the step of applyState, on the first result of what it set.
    if ((pendingHypothesis_ >= 0 || pendingStep_ >= 0) && next->generation == submitted_ && !isLoading()) {
      const int step = pendingStep_;
      if (pendingHypothesis_ >= 0) selectHypothesis(pendingHypothesis_);
      pendingHypothesis_ = pendingStep_ = -1;
      if (step >= 0) setStep(step);
    }
    const auto& run = *outcome_->seq2seq;
    const QString best = run.hypotheses.empty() ? QString() : fromStd(run.hypotheses.front().text);
    summary = tr("alignment: %1 \u00b7 %2 %3 \u2192 %4 \u00b7 beam %5 \u00b7 %6 ms")
                  .arg(name)
                  .arg(run.source.size())
                  .arg(pageOf(source_.get()).text().units)
                  .arg(quoted(best))
                  .arg(outcome_->request.beam)
                  .arg(outcome_->runMs, 0, 'f', 1);
  } else if (outcome_->entailment) {
    updateHeatmap();
    updateStepViews();
    if (pendingStep_ >= 0 && next->generation == submitted_ && !isLoading()) {
      const int step = pendingStep_;
      pendingHypothesis_ = pendingStep_ = -1;
      setStep(step);
    }
    summary = entailmentSummary();
  } else {
    if (next->generation == submitted_ && !isLoading()) pendingHypothesis_ = pendingStep_ = -1;  // no steps
    updateReview();
    const auto& run = *outcome_->classifier;
    const auto& config = source_->model.classifier->config();
    const QString label = std::size_t(run.predicted) < config.labels.size()
                              ? fromStd(config.labels[std::size_t(run.predicted)])
                              : QString::number(run.predicted);
    const float p =
        std::size_t(run.predicted) < run.probabilities.size() ? run.probabilities[std::size_t(run.predicted)] : 0.0f;
    summary = tr("alignment: %1 \u00b7 %2 words \u2192 %3 (%4) \u00b7 %5 ms")
                  .arg(name)
                  .arg(run.input.words.size())
                  .arg(label, render::percentText(p))
                  .arg(outcome_->runMs, 0, 'f', 1);
  }
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
  if (outcome_->seq2seq) {
    const auto& run = *outcome_->seq2seq;
    const auto unknown = std::count(run.unknown.begin(), run.unknown.end(), true);
    QString note = tr("%1 %2 read").arg(run.source.size()).arg(pageOf(source_.get()).text().units);
    note += unknownNote(unknown, std::int64_t(run.unknown.size()));
    inputNote_->setText(note);
  } else if (outcome_->entailment) {
    const auto& run = *outcome_->entailment;
    const auto unknown = std::count(run.premise_unknown.begin(), run.premise_unknown.end(), true) +
                         std::count(run.hypothesis_unknown.begin(), run.hypothesis_unknown.end(), true);
    QString note =
        tr("%1 premise words, %2 hypothesis words").arg(run.premise.words.size()).arg(run.hypothesis.words.size());
    note += unknownNote(unknown, std::int64_t(run.premise_unknown.size() + run.hypothesis_unknown.size()));
    inputNote_->setText(note);
  } else {
    const auto& run = *outcome_->classifier;
    const auto unknown = std::count(run.unknown.begin(), run.unknown.end(), true);
    QString note = tr("%1 words").arg(run.input.words.size());
    if (run.input.sentences > 1) note += tr(" in %1 sentences").arg(run.input.sentences);
    note += unknownNote(unknown, std::int64_t(run.unknown.size()));
    inputNote_->setText(note);
  }
}

// ---- hypotheses and steps ----

void AlignmentWorkbench::updateHypotheses() {
  std::vector<HypothesisRow> rows;
  if (outcome_ && outcome_->seq2seq) {
    for (const auto& hyp : outcome_->seq2seq->hypotheses) {
      rows.push_back(
          {hyp.log_prob, fromStd(hyp.text), hyp.finished,
           hyp.finished
               ? tr("ended with </s> after %1 %2").arg(hyp.ids.size() - 1).arg(pageOf(source_.get()).text().units)
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
  updateHeatmap();
  updateStepViews();
}

int AlignmentWorkbench::hypothesisSteps() const {
  if (outcome_ && outcome_->entailment) return int(outcome_->entailment->attention.rows());
  if (!outcome_ || !outcome_->seq2seq || std::size_t(hypothesis_) >= outcome_->seq2seq->hypotheses.size()) return 0;
  return int(outcome_->seq2seq->hypotheses[std::size_t(hypothesis_)].ids.size());
}

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
  if (!outcome_) return nullptr;
  if (outcome_->entailment) return outcome_->entailmentMap.get();
  if (outcome_->seq2seq) {
    return std::size_t(hypothesis_) < outcome_->alignments.size() ? outcome_->alignments[std::size_t(hypothesis_)].get()
                                                                  : nullptr;
  }
  const int selected = matrixPanel_->isVisibleTo(this) ? matrixBox_->currentIndex() : 0;
  return selected >= 0 && std::size_t(selected) < outcome_->maps.size() ? outcome_->maps[std::size_t(selected)].get()
                                                                        : outcome_->wordMap.get();
}

const render::TextFigure& AlignmentWorkbench::currentFigure() const {
  return outcome_ && outcome_->classifier ? reviewFigure_ : decodingFigure_;
}

void AlignmentWorkbench::updateHeatmap() {
  updateLayerHeatmaps();
  const attn::AttentionMap* map = currentMap();
  if (outcome_ && outcome_->entailment && map) {
    updateEntailmentHeatmap(*map);
    return;
  }
  if (!outcome_ || !outcome_->seq2seq || !map) {
    heatmap_->clear();
    heatmapTitle_->clear();
    return;
  }
  heatmap_->setMap(outcome_->alignments[std::size_t(hypothesis_)]);
  const auto& run = *outcome_->seq2seq;
  const auto& hyp = run.hypotheses[std::size_t(hypothesis_)];
  const QString units = pageOf(source_.get()).text().units;
  heatmapTitle_->setText(
      run.hypotheses.size() > 1
          ? tr("Alignment of hypothesis %1 (0\u2013%2, log p %3) \u00b7 %4 output \u00d7 %5 source %6")
                .arg(hypothesis_)
                .arg(run.hypotheses.size() - 1)
                .arg(render::logProbText(hyp.log_prob))
                .arg(map->weights.rows())
                .arg(map->weights.cols())
                .arg(units)
          : tr("Alignment \u00b7 %1 output \u00d7 %2 source %3 \u00b7 each row is one decoding step's attention over "
               "the source")
                .arg(map->weights.rows())
                .arg(map->weights.cols())
                .arg(units));
  const QSignalBlocker block(stepSlider_);
  stepSlider_->setRange(0, std::max(0, int(map->weights.rows()) - 1));
}

void AlignmentWorkbench::updateStepViews() {
  if (outcome_ && outcome_->entailment) {
    updateEntailmentStep();
    return;
  }
  if (!outcome_ || !outcome_->seq2seq || !source_ || !source_->model.seq2seq) return;
  const auto& run = *outcome_->seq2seq;
  const int steps = hypothesisSteps();
  step_ = steps > 0 ? std::clamp(step_, 0, steps - 1) : 0;
  {
    const QSignalBlocker block(stepSlider_);
    stepSlider_->setValue(step_);
  }
  const auto& config = source_->model.seq2seq->config();
  const attn::AttentionMap* map = currentMap();
  render::AlignmentOverlay overlay;
  if (map) {
    overlay.rows = int(map->weights.rows());
    overlay.columns = int(map->weights.cols());
    if (steps > 0) overlay.focusRow = step_;
    const auto& hyp = run.hypotheses[std::size_t(hypothesis_)];
    if (config.local && !hyp.positions.empty()) {
      overlay.bands = render::localWindowBands(hyp.positions, config.window, overlay.columns);
    }
  }
  heatmap_->setOverlay(overlay);
  updateLayerOverlays(overlay);
  render::DecodingFigureOptions options;
  options.colormap = colormap_;
  options.window = config.local ? config.window : 0;
  if (outcome_->speech) {
    updateSpeechView();
  } else {
    decodingFigure_ = render::decodingFigure(run, std::size_t(hypothesis_), step_, outcome_->request.text, options);
    decodingView_->setFigure(decodingFigure_);
  }
  QString label = steps > 0 && map
                      ? tr("step %1 (0\u2013%2) \u00b7 %3").arg(step_).arg(steps - 1).arg(stepLabel(*map, step_))
                      : tr("no output");
  const auto& hyp = run.hypotheses[std::size_t(hypothesis_)];
  if (config.local && std::size_t(step_) < hyp.positions.size()) {
    label += tr(" \u00b7 p = %1").arg(double(hyp.positions[std::size_t(step_)]), 0, 'f', 2);
  }
  stepLabel_->setText(label);
  emit stepChanged(step_);
}

void AlignmentWorkbench::updateReview() {
  if (!outcome_ || !outcome_->classifier || !source_ || !source_->model.classifier) return;
  reviewFigure_ = render::reviewFigure(*outcome_->classifier, source_->model.classifier->config(),
                                       outcome_->request.text, colormap_, outcome_->readings);
  reviewView_->setFigure(reviewFigure_);
  // The matrix selector lists the run's matrices by name; the one in view stays when it is still there.
  const QString current = matrixBox_->currentText();
  {
    const QSignalBlocker block(matrixBox_);
    matrixBox_->clear();
    for (const auto& map : outcome_->maps) {
      matrixBox_->addItem(
          tr("%1 \u00b7 %2 \u00d7 %3").arg(fromStd(map->name), fromStd(map->row_axis), fromStd(map->col_axis)));
    }
    const int keep = matrixBox_->findText(current);
    matrixBox_->setCurrentIndex(keep >= 0 ? keep : (outcome_->maps.size() > 1 ? 1 : 0));
  }
  // Attention pooling's heads x words map is the shading above; the LSTM and the CNN have matrices of their own.
  const bool matrices = outcome_->maps.size() > 1;
  if (matrices && !matrixPanel_->isVisibleTo(this)) {
    // On showing, the figure keeps the larger part: the matrix's size hint would take nearly all of it.
    const int total = std::max(400, reviewPage_->height());
    reviewPage_->setSizes({total * 11 / 20, total * 9 / 20});
  }
  matrixPanel_->setVisible(matrices);
  updateReviewMatrix();
}

void AlignmentWorkbench::updateReviewMatrix() {
  if (!outcome_ || !outcome_->classifier) return;
  const int index = matrixBox_->currentIndex();
  if (index < 0 || std::size_t(index) >= outcome_->maps.size()) {
    reviewHeatmap_->clear();
    return;
  }
  reviewHeatmap_->setMap(outcome_->maps[std::size_t(index)]);
}

// ---- display ----

void AlignmentWorkbench::setColormap(render::Colormap map) {
  colormap_ = map;
  {
    const QSignalBlocker block(colormapBox_);
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(map))));
  }
  heatmap_->setColormap(map);
  for (auto* view : layerViews_) view->setColormap(map);
  reviewHeatmap_->setColormap(map);
  if (outcome_ && (outcome_->seq2seq || outcome_->entailment)) updateStepViews();
  if (outcome_ && outcome_->classifier) updateReview();
}

void AlignmentWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }
bool AlignmentWorkbench::isSidePanelVisible() const { return sideScroll_->isVisibleTo(this); }

// ---- exports ----

AlignmentWorkbench::View AlignmentWorkbench::currentView() const {
  return outcome_ && outcome_->classifier ? View::Shading : View::Heatmap;
}

attn::Result<void> AlignmentWorkbench::exportView(const QString& path, View view) const {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a view can be saved as .png, .svg or .pdf")));
  }
  if (!outcome_) return std::unexpected(exportError(path, tr("nothing to export yet: no run has finished")));
  if (view == View::Heatmap && (outcome_->seq2seq || outcome_->entailment)) return exportHeatmap(*heatmap_, path);
  const TextFigureView* shown = outcome_->classifier ? reviewView_ : decodingView_;
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
