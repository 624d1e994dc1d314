// The Transformer tab: its sources and their loading, the input, the runs and what each result changes.
#include "workbenches/transformer/transformer_workbench.h"
#include "render/strings.h"

#include "models/head_stats_model.h"
#include "render/heatmap_render.h"
#include "views/head_grid_view.h"
#include "views/heatmap_view.h"
#include "views/token_lines_view.h"
#include "workbenches/common/model_files.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"
#include "workbenches/transformer/transformer_workbench_parts.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTemporaryDir>
#include <QTextCursor>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using ModelFamily = attn::models::Family;
using transformer_detail::defaultText;

// The texts the tab puts in the box itself (replaced by the next model's example; anything else was typed).
bool isExampleText(const QString& text) {
  return text.isEmpty() || text == defaultText(ModelFamily::Bert) || text == defaultText(ModelFamily::Gpt2) ||
         text == TransformerWorkbench::demoText() || text == TransformerWorkbench::storyText();
}

Workbench::Identity transformerIdentity() {
  return {attn::ui::SessionTab::Transformer,
          TransformerWorkbench::tr("&Transformer"),
          TransformerWorkbench::tr("BERT, GPT-2, DistilBERT and ViT attention, live, or any model's attention dump"),
          {},
          TransformerWorkbench::tr("Last run: model, tokens, layers x heads and engine time")};
}

}  // namespace

TransformerWorkbench::TransformerWorkbench(QWidget* parent)
    : Workbench(transformerIdentity(), 0, parent), worker_(std::make_unique<TransformerWorker>()) {
  setObjectName(u"transformerWorkbench"_s);
  connect(worker_.get(), &TransformerWorker::loadProgress, this, &TransformerWorkbench::onLoadProgress,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::loaded, this, &TransformerWorkbench::onLoaded, Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::loadFailed, this, &TransformerWorkbench::onLoadFailed,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::imageLoaded, this, &TransformerWorkbench::onImageLoaded,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::imageFailed, this, &TransformerWorkbench::onImageFailed,
          Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::finished, this, &TransformerWorkbench::onFinished, Qt::QueuedConnection);
  connect(worker_.get(), &TransformerWorker::previewReady, this, &TransformerWorkbench::onPreview,
          Qt::QueuedConnection);
  thread_.host(worker_.get(), u"transformer worker"_s);
  connect(this, &TransformerWorkbench::sourceFailed, this, &Workbench::failed);

  // Typing: every edit is posted at once. The worker holds one pending request and a newer one replaces
  // it, so a burst of keystrokes costs the run in flight plus one run of the newest text, with no pause
  // added. Results are applied on the next turn of the event loop, so a burst of outcomes (a rollout
  // slider dragged over a finished run) draws the newest once.

  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"transformerSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  splitter_ = frame.splitter;
  sideScroll_ = frame.scroll;
  updateInputControls();
}

TransformerWorkbench::~TransformerWorkbench() {
  stopApply();
  worker_->cancelLoad();
  worker_->abandon();  // a long run stops at its next block of rows, not minutes later
  thread_.stop();
  worker_.reset();
}

// ---- sources ----

bool TransformerWorkbench::isDumpFileName(const QString& path) {
  return path.endsWith(u".attn.safetensors"_s, Qt::CaseInsensitive);
}

bool TransformerWorkbench::isModelOrDumpPath(const QString& path) {
  return isDumpFileName(path) || QFileInfo(path).isDir();
}

void TransformerWorkbench::openPath(const QString& path) {
  ++loadRequested_;
  requestedSource_ = path;
  loadingPath_ = path;
  setLoadingUi(true);
  loadNote_->setText(tr("Opening %1\u2026").arg(QFileInfo(path).fileName()));
  worker_->load(loadRequested_, path);
}

bool TransformerWorkbench::openDemo(const QString& key) {
  if (!isDemoKey(key)) return false;
  ensureBundledModels();
  const QString resource = u":/models/"_s + key;
  if (!QFileInfo::exists(resource + u"/config.json"_s)) return false;
  if (!demoDir_) {
    auto dir = std::make_unique<QTemporaryDir>();
    if (!dir->isValid()) {
      emit sourceFailed(tr("Could not make a temporary folder for the demo model: %1").arg(dir->errorString()));
      return false;
    }
    demoDir_ = std::move(dir);
  }
  // A folder named as the model, so that the tab and its title bar say "induction-gpt2".
  const QString folder = demoDir_->filePath(key);
  if (!QFileInfo::exists(folder + u"/config.json"_s)) {
    if (!QDir().mkpath(folder)) {
      emit sourceFailed(tr("Could not make a temporary folder for the demo model in %1").arg(demoDir_->path()));
      return false;
    }
    const QStringList files{u"config.json"_s,     u"model.safetensors"_s,     u"vocab.json"_s,   u"merges.txt"_s,
                            u"tokenizer.model"_s, u"tokenizer_config.json"_s, u"MODEL_CARD.md"_s};
    for (const QString& name : files) {
      if (!QFileInfo::exists(resource + u'/' + name)) continue;
      const QString target = folder + u'/' + name;
      if (!QFile::copy(resource + u'/' + name, target)) {
        emit sourceFailed(tr("Could not write the demo model's %1 into %2").arg(name, demoDir_->path()));
        return false;
      }
      QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
    }
  }
  openPath(folder);  // the example text follows with the model
  requestedSource_ = key;
  return true;
}

QString TransformerWorkbench::sourceKey() const {
  if (!source_) return {};
  for (const QString& key : {demoModelKey(), storyModelKey()}) {
    if (demoDir_ && source_->path == demoDir_->filePath(key)) return key;
  }
  return source_->path;
}

void TransformerWorkbench::cancelLoad() {
  if (!isLoading()) return;
  worker_->cancelLoad();
  loadNote_->setText(tr("Cancelling\u2026"));
}

void TransformerWorkbench::setLoadingUi(bool loading) {
  loadProgress_->setVisible(loading);
  cancelButton_->setVisible(loading);
  loadNote_->setVisible(loading || !loadNote_->text().isEmpty());
  if (loading) loadProgress_->setValue(0);
  emit loadingChanged(loading);
}

void TransformerWorkbench::onLoadProgress(quint64 serial, int percent, const QString& what) {
  if (serial != loadRequested_) return;
  loadProgress_->setValue(percent);
  loadNote_->setText(what);
}

void TransformerWorkbench::onLoaded(std::shared_ptr<const TransformerSource> source) {
  if (source->serial != loadRequested_) return;  // a newer load is on its way
  loadSettled_ = source->serial;
  source_ = std::move(source);
  loadNote_->clear();
  setLoadingUi(false);
  errorBanner_->setVisible(false);
  lastError_.clear();
  modelLabel_->setText(source_->description + u"\n"_s + QDir::toNativeSeparators(source_->path));
  aboutModel_->setVisible(!source_->card.isEmpty());
  modelLabel_->setToolTip(source_->path);
  const bool textChanged = takeTextForSource();
  updateInputControls();
  clearRunViews();
  emit sourceLoaded(source_->path);
  emit statusMessage(textChanged ? tr("Opened %1 (%2 ms) with the text last used with its kind of model; Ctrl+Z in "
                                      "the text box brings back the previous text")
                                       .arg(source_->name)
                                       .arg(source_->loadMs, 0, 'f', 0)
                                 : tr("Opened %1 (%2 ms)").arg(source_->name).arg(source_->loadMs, 0, 'f', 0),
                     6000);
  if (source_->isVision() && !image_) {
    // A photo asked for (--image, File > Open) may still be decoding: it runs when it arrives, and the sample
    // does not replace it.
    if (requestedImage_.isEmpty()) openSample(sampleBox_->currentData().toString());  // runs once decoded
    return;
  }
  post();
}

QString TransformerWorkbench::textKindOf(const TransformerSource& source) const {
  if (!source.model || source.isVision()) return {};
  const QString key = sourceKey();
  if (isDemoKey(key)) return key;
  if (!source.model->tokenizer()) return u"ids"_s;
  const std::string_view family = attn::models::to_string(source.family());
  return QString::fromUtf8(family.data(), qsizetype(family.size()));
}

QString TransformerWorkbench::exampleTextFor(const QString& kind, const TransformerSource& source) {
  if (kind == u"ids"_s) {  // a model without a tokenizer: a few ids
    idsExample_ = u"ids:"_s;
    for (int id = 0; id < std::min(8, source.model->config().vocab_size); ++id)
      idsExample_ += u' ' + QString::number(id);
    return idsExample_;
  }
  return kind == demoModelKey() ? demoText() : kind == storyModelKey() ? storyText() : defaultText(source.family());
}

// Issue 41 (finding 8): the text typed for one model was carried into the next, or an example replaced it. Now
// each kind of model keeps its own last text: a model of another kind gets the text last used with that kind, or,
// the first time, what was typed (its example when the box holds only an example, or when ids and words would be
// read as the other's); a model of the same kind keeps the text. A session's text stays with the model it opens.
bool TransformerWorkbench::takeTextForSource() {
  const QString kind = textKindOf(*source_);
  if (kind.isEmpty()) return false;  // a dump or ViT: the box is not read, and keeps its kind
  const QString current = textEdit_->toPlainText();
  const bool example = isExampleText(current) || current == idsExample_;
  QString next = current;
  if (textChosenForLoad_) {
    next = current;
  } else if (kind != textKind_) {
    if (!textKind_.isEmpty()) kindTexts_.insert(textKind_, current);
    const auto kept = kindTexts_.constFind(kind);
    if (kept != kindTexts_.constEnd()) {
      next = *kept;
    } else if (example || kind == u"ids"_s || textKind_ == u"ids"_s) {  // ids are no words, and back
      next = exampleTextFor(kind, *source_);
    }
  } else if (example) {
    next = exampleTextFor(kind, *source_);
  }
  textChosenForLoad_ = false;
  textKind_ = kind;
  if (next == current) return false;
  // One undoable edit (setPlainText would empty the undo stack), without a run for the model being replaced.
  const QSignalBlocker block(textEdit_);
  QTextCursor cursor(textEdit_->document());
  cursor.beginEditBlock();
  cursor.select(QTextCursor::Document);
  cursor.insertText(next);
  cursor.endEditBlock();
  return !example;
}

void TransformerWorkbench::clearRunViews() {
  outcome_.reset();
  pending_.reset();
  generating_ = 0;
  tokenLines_->setEmptyText(source_ ? tr("Running\u2026") : tr("No attention yet: open a model or an attention dump"));
  tokenLines_->clear();
  headGrid_->setThumbnails(nullptr);
  statsModel_->setStatistics({});
  generationLabel_->clear();
  updateGenerationControls();
  updateLens();
  updateScrubber();
  updateMatrix();
  updateOverlay();
  updatePredictions();
  updateWarnings();
  updateSelectionLabel();
  setRunSummary(source_ ? tr("transformer: %1 \u00b7 running\u2026").arg(source_->name) : QString());
  updateBusy();
}

void TransformerWorkbench::onLoadFailed(quint64 serial, const QString& message, bool cancelled) {
  if (serial != loadRequested_) return;
  loadSettled_ = serial;
  textChosenForLoad_ = false;  // a session's text was for that model; the text stays, the next model chooses
  const QString name = QFileInfo(loadingPath_).fileName();
  if (cancelled) {
    loadNote_->setText(source_ ? tr("Loading %1 cancelled; %2 stays open.").arg(name, source_->name)
                               : tr("Loading %1 cancelled.").arg(name));
    requestedSource_ = sourceKey();
    setLoadingUi(false);
    emit statusMessage(loadNote_->text(), 6000);
    emit sourceFailed(tr("cancelled"));
    return;
  }
  loadNote_->clear();
  setLoadingUi(false);
  lastError_ = message;
  requestedSource_ = sourceKey();
  showError(source_ ? tr("Cannot open %1: %2\nThe previous model (%3) stays loaded.").arg(name, message, source_->name)
                    : tr("Cannot open %1: %2").arg(name, message));
  emit statusMessage(tr("Cannot open %1: %2").arg(name, message), 0);
  emit sourceFailed(message);
}

void TransformerWorkbench::showError(const QString& message) {
  errorBanner_->setText(message);
  errorBanner_->setVisible(true);
}

void TransformerWorkbench::updateInputControls() {
  const bool dump = source_ && source_->kind == TransformerSource::Kind::Dump;
  const bool vision = source_ && source_->isVision();
  const bool pair = source_ && source_->takesPair();
  textLabel_->setVisible(!vision);
  textEdit_->setVisible(!vision);
  textEdit_->setEnabled(!dump);
  pairLabel_->setVisible(pair);
  pairEdit_->setVisible(pair);
  imageRow_->setVisible(vision);
  if (!source_) {
    inputNote_->setText(
        tr("Open a model: File > Open Model\u2026 (Ctrl+Shift+M), or drop a model folder or a "
           ".attn.safetensors file on the window."));
  } else if (dump) {
    inputNote_->setText(tr("An attention dump: its tokens and weights are fixed."));
  } else if (source_->model && !source_->model->tokenizer() && !vision) {
    inputNote_->setText(tr("This model has no tokenizer: type token ids as numbers, e.g. \u201cids: 5 17 3\u201d "
                           "(0\u2013%1).")
                            .arg(source_->model->config().vocab_size - 1));
  } else if (source_->family() == ModelFamily::Gpt2) {
    inputNote_->setText(tr("GPT-2 attends causally: each token sees itself and the tokens before it."));
  } else if (source_->family() == ModelFamily::Decoder) {
    inputNote_->setText(
        tr("A decoder attends causally; typing at the end computes only the new tokens. Generate "
           "below continues the text."));
  } else if (vision) {
    inputNote_->setText(
        tr("The photo is resized to the model's input and cut into patches; token 0 is the class "
           "token."));
  } else {
    inputNote_->setText(tr("Write [MASK] where BERT should guess a word."));
  }
}

// ---- input ----

void TransformerWorkbench::setText(const QString& text) { textEdit_->setPlainText(text); }
QString TransformerWorkbench::text() const { return textEdit_->toPlainText(); }
void TransformerWorkbench::setPair(const QString& pair) { pairEdit_->setText(pair); }

bool TransformerWorkbench::openSample(const QString& key) {
  const QString resource = sampleImageResource(key);
  if (resource.isEmpty()) return false;
  const int index = sampleBox_->findData(key);
  if (index >= 0) sampleBox_->setCurrentIndex(index);
  requestedImage_ = resource;
  ++imageRequested_;
  worker_->loadImage(imageRequested_, resource, QFileInfo(resource).fileName());
  return true;
}

void TransformerWorkbench::openImage(const QString& path) {
  ++imageRequested_;
  requestedImage_ = path;
  worker_->loadImage(imageRequested_, path, QFileInfo(path).fileName());
}

void TransformerWorkbench::onImageLoaded(std::shared_ptr<const VisionInput> image) {
  if (image->serial != imageRequested_) return;
  image_ = std::move(image);
  imageInfo_->setText(tr("%1 \u00b7 %2 \u00d7 %3").arg(image_->name).arg(image_->width).arg(image_->height));
  if (!image_->path.startsWith(u':')) {
    const QSignalBlocker block(sampleBox_);
    sampleBox_->setCurrentIndex(-1);
  }
  post();
}

void TransformerWorkbench::onImageFailed(quint64 serial, const QString& message) {
  if (serial != imageRequested_) return;
  lastError_ = message;
  requestedImage_ = image_ ? image_->path : QString();
  showError(tr("Cannot open the image: %1. The previous image stays.").arg(message));
  emit statusMessage(tr("Cannot open the image: %1").arg(message), 0);
}

// ---- runs ----

void TransformerWorkbench::post() {
  if (!source_) return;
  if (source_->isVision() && !image_) return;
  TransformerRequest request;
  if (source_->model && !source_->isVision()) {
    request.text = textEdit_->toPlainText().toStdString();
    if (source_->takesPair()) request.pair = pairEdit_->text().toStdString();
  }
  if (source_->isVision()) request.image = image_;
  request.rollout = rolloutOptions();
  request.run.top_k = 5;
  request.run.keep = attn::models::RunOptions::Keep::Auto;  // long inputs: attention on demand
  request.run.on_demand_above = onDemandAbove_;
  request.lens = readsLens();
  request.run.hidden_states = request.lens;
  request.previewLayer = layer_;
  // A generated run in view stays one, at its step, while its text is unchanged (a rollout, a colour or the lens
  // tab reads it again; the worker re-uses the run).
  if (outcome_ && outcome_->request.generation && outcome_->request.text == request.text) {
    request.generation = outcome_->request.generation;
    request.step = outcome_->request.step;
  }
  // A session's generated run, once its model is in (dropped if that model does not generate).
  if (pendingGeneration_ && !isLoading() && source_->serial == loadRequested_) {
    if (generates()) {
      request.generation = pendingGeneration_->options;
      request.step = pendingGeneration_->step;
    }
    pendingGeneration_.reset();
  }
  fillIntervention(request);
  ++submitted_;
  worker_->submit(submitted_, source_, std::move(request));
  armBusy();
}

void TransformerWorkbench::onFinished(std::shared_ptr<const TransformerOutcome> outcome) {
  if (!source_ || outcome->sourceSerial != source_->serial) return;
  if (outcome->generation <= shown_) return;
  if (!outcome->ok()) {
    if (outcome->generation != submitted_) return;  // a newer request reports for itself
    settled_ = outcome->generation;
    pending_.reset();  // an older input's result, not shown yet, would hide this refusal
    if (previewed_ == outcome->generation && outcome_) {  // the early layer of a run that then failed
      tokenLines_->setTrace(outcome_->trace, outcome_->stage);
      updateMatrix();
    }
    if (outcome->error && outcome->error->kind == attn::ErrorKind::Cancelled) {
      if (generating_ && outcome->generation >= generating_) generating_ = 0;
      updateGenerationControls();
      updateBusy();
      const QString cancelled = outcome_ ? tr("Run cancelled; the views show the last result.")
                                         : tr("Run cancelled: edit the text to run it again.");
      if (!outcome_) {
        tokenLines_->setEmptyText(cancelled);
        heatmap_->setEmptyText(cancelled);
        heatmap_->clear();
      }
      emit statusMessage(cancelled, 6000);
      return;
    }
    const QString message = fromStd(outcome->error ? outcome->error->message() : std::string());
    if (generating_ && outcome->generation >= generating_) {
      generationLabel_->setText(tr("Generation refused: %1").arg(message));  // not "Generating..." forever
      generating_ = 0;
    }
    updateGenerationControls();
    if (!outcome_) {  // nothing of this model shown yet: the views say why they stay empty
      tokenLines_->setEmptyText(tr("No attention: the input was refused (the red strip says why)."));
      heatmap_->setEmptyText(tr("No attention: the input was refused (the red strip says why)."));
      heatmap_->clear();
      setRunSummary(tr("transformer: %1 \u00b7 input refused").arg(source_->name));
    }
    updateBusy();
    lastError_ = message;
    showError(tr("Input refused: %1. The previous view stays.").arg(message));
    emit statusMessage(tr("Input refused: %1").arg(message), 0);
    return;
  }
  pending_ = std::move(outcome);
  scheduleApply();
}

void TransformerWorkbench::onPreview(std::shared_ptr<const TransformerPreview> preview) {
  // Only for the newest request, ahead of its outcome, and while its layer is still the one in view.
  if (!source_ || preview->sourceSerial != source_->serial) return;
  if (preview->generation != submitted_ || preview->generation <= shown_ || preview->layer != layer_) return;
  tokenLines_->setTrace(preview->trace, preview->stage);
  if (const MatrixMode mode = matrixMode(); mode != MatrixMode::Rollout) {
    if (auto map = preview->trace->map(preview->stage, layer_, mode == MatrixMode::Head ? head_ : -1,
                                       HeatmapView::kMaxCellsPerSide)) {
      matrixMap_ = std::move(map);
      heatmap_->setMap(matrixMap_);
    }
  }
  previewed_ = preview->generation;
  emit previewShown(preview->generation);
}

void TransformerWorkbench::applyPending() {
  auto next = std::move(pending_);
  pending_.reset();
  if (!next || next->generation <= shown_) return;
  const auto previous = outcome_;
  outcome_ = next;
  shown_ = next->generation;
  settled_ = std::max(settled_, shown_);
  errorBanner_->setVisible(false);
  lastError_.clear();

  if (!previous || previous->trace != next->trace) {
    tokenLines_->setEmptyText(
        next->run->on_demand.empty()
            ? tr("No attention yet: open a model or an attention dump")
            : tr("%1 tokens: the attention of this run is kept on demand, not as maps, and the head view would draw "
                 "every link of every head. The matrix beside shows any head's whole map, zoomable, exactly.")
                  .arg(next->run->attention.tokens.size()));
    tokenLines_->setTrace(next->trace, next->stage);
  }
  if (!previous || previous->thumbnails != next->thumbnails) headGrid_->setThumbnails(next->thumbnails);
  if (!previous || previous->stats != next->stats) {
    const bool vision = next->run->grid_rows > 0;
    const bool gpt = source_ && source_->model && source_->model->config().causal();
    statsModel_->setSpecialNames(vision ? tr("class token") : (gpt ? tr("first token") : u"[CLS]"_s),
                                 vision || gpt ? tr("others") : u"[SEP]"_s);
    statsModel_->setStatistics(next->stats ? *next->stats : std::vector<attn::analysis::HeadStats>{});
  }
  // Keep the selection inside the new shape.
  const int layers = layerCount(*next);
  const int heads = headCount(*next, std::clamp(layer_, 0, std::max(0, layers - 1)));
  selectHead(std::clamp(layer_, 0, std::max(0, layers - 1)), std::clamp(head_, 0, std::max(0, heads - 1)));
  // The selection of applyState, on the first result of what it set.
  if (pendingLayer_ >= 0 && next->generation == submitted_ && !isLoading()) {
    selectHead(pendingLayer_, pendingHead_);
    pendingLayer_ = pendingHead_ = -1;
  }
  updateMatrix();
  updateOverlay();
  updatePredictions();
  updateWarnings();
  updateGenerationControls();
  updateLens();
  updateScrubber();  // after the lens: the step picks its column

  const auto& run = *next->run;
  const QString what =
      source_ && source_->kind == TransformerSource::Kind::Dump
          ? tr("dump")
          : (source_ && source_->model ? fromStd(source_->family() == ModelFamily::Decoder
                                                     ? source_->model->config().decoder.model_type
                                                     : std::string(attn::models::to_string(source_->family())))
                                       : QString());
  const QString summary = tr("transformer: %1 \u00b7 %2 tokens \u00b7 %3 layers \u00d7 %4 heads \u00b7 %5 ms")
                              .arg(what)
                              .arg(run.attention.tokens.size())
                              .arg(layers)
                              .arg(heads)
                              .arg(next->runMs + next->analysisMs, 0, 'f', 1);
  setRunSummary(summary);
  updateBusy();
  emit resultShown(next->generation);
}

QStringList TransformerWorkbench::warnings() const {
  QStringList out;
  if (source_) out += source_->warnings;
  if (outcome_) {
    for (const auto& w : outcome_->run->warnings) out.append(fromStd(w));
    // "rollout: why"; for a run kept on demand only where the rollout is asked for (the matrix's title says it
    // then, and its row strip gives one row), not on every long run.
    if (!outcome_->rolloutError.isEmpty() && (!isOnDemand() || matrixMode() == MatrixMode::Rollout)) {
      out.append(outcome_->rolloutError);
    }
  }
  return out;
}

void TransformerWorkbench::updateWarnings() {
  const QStringList list = warnings();
  warningStrip_->setText(u"\u26a0 "_s + list.join(u"\n\u26a0 "_s));
  warningStrip_->setVisible(!list.isEmpty());
}

void TransformerWorkbench::updatePredictions() {
  predictions_->clear();
  if (!outcome_ || updateInterventionPredictions()) return;
  const auto& run = *outcome_->run;
  const auto& tokens = run.attention.tokens;
  // A generated step in view: the candidates the model chose that token among.
  const auto step = outcome_->request.step;
  const bool atStep = step && *step >= 0 && std::size_t(*step) < run.step_predictions.size();
  const std::vector<attn::models::Prediction> stepOnly =
      atStep ? std::vector{run.step_predictions[std::size_t(*step)]} : std::vector<attn::models::Prediction>{};
  const int chosen = atStep ? run.ids[std::size_t(run.prompt_tokens + *step)] : -1;
  for (const auto& prediction : atStep ? stepOnly : run.predictions) {
    if (!run.labels.empty()) break;  // ViT: the classes below say the same
    const QString at = std::size_t(prediction.position) < tokens.size()
                           ? render::tokenLabel(tokens[std::size_t(prediction.position)])
                           : QString::number(prediction.position);
    auto* header =
        new QListWidgetItem(tr("after \u201c%1\u201d (position %2):").arg(at).arg(prediction.position), predictions_);
    QFont bold = header->font();
    bold.setBold(true);
    header->setFont(bold);
    for (const auto& candidate : prediction.top) {
      predictions_->addItem(u"   %1   %2%%3"_s.arg(render::tokenLabel(candidate.text, 24))
                                .arg(100.0 * double(candidate.probability), 0, 'f', 1)
                                .arg(candidate.id == chosen ? tr("   \u2190 generated") : QString()));
      predictions_->item(predictions_->count() - 1)->setData(Qt::UserRole, fromStd(candidate.text));  // Patching
    }
    if (source_ && !(source_->model && source_->model->config().causal())) {
      header->setText(tr("[MASK] at position %1:").arg(prediction.position));
    }
  }
  for (const auto& label : run.labels) predictions_->addItem(fromStd(label));
  if (predictions_->count() == 0) {
    QString text = tr("No predictions");
    if (source_->kind == TransformerSource::Kind::Dump) {
      text = tr("A dump holds attention only");
    } else if (source_->model && !source_->model->has_prediction_head()) {
      text = tr("No prediction head in this checkpoint");
    } else if (source_->model && !source_->model->config().causal() && !source_->isVision()) {
      text = tr("Write [MASK] to see BERT's guesses");
    }
    auto* none = new QListWidgetItem(text, predictions_);
    none->setForeground(palette().color(QPalette::PlaceholderText));
  }
}

}  // namespace attn::ui
