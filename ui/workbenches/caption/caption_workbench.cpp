#include "views/export.h"
#include "workbenches/caption/caption_workbench.h"
#include "render/strings.h"

#include "render/alignment_render.h"
#include "views/caption_strip_view.h"
#include "views/image_overlay_view.h"
#include "workbenches/caption/caption_workbench_parts.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QSpinBox>
#include <QToolButton>
#include <QTreeWidget>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

qint64 composedKey(int hypothesis, int word) { return (qint64(hypothesis) << 32) | qint64(quint32(word)); }

constexpr qsizetype kMaxComposed = 48;
using caption_detail::kMaxSeed;

Workbench::Identity captionIdentity() {
  return {attn::ui::SessionTab::Caption, CaptionWorkbench::tr("&Captioning"),
          CaptionWorkbench::tr("Show, Attend and Tell: where a captioner looks for each word, soft and hard attention"),
          CaptionWorkbench::tr("Click or drag across the caption's words: each shows where the model looked"),
          CaptionWorkbench::tr("Last caption: model, image, best caption, beam width and engine time")};
}

// The word a new caption opens on. The content word shown before (`kept`) where the caption has it, so that switching
// soft <-> hard, or the beam, compares the same word; otherwise the first content word ("a large red circle ...":
// "large"), since articles, prepositions and <end> attend diffusely by nature (issue 41, GUI finding 11).
int openingWordOf(const std::vector<std::string>& words, const std::string& kept) {
  static const std::set<std::string> kFunctionWords{"a",  "an", "the", "of",  "on",   "in",   "at",
                                                    "to", "is", "are", "and", "with", "<end>"};
  if (!kept.empty() && !kFunctionWords.contains(kept)) {
    if (const auto it = std::ranges::find(words, kept); it != words.end()) return int(it - words.begin());
  }
  const auto content = std::ranges::find_if(words, [&](const std::string& w) { return !kFunctionWords.contains(w); });
  return content == words.end() ? 0 : int(content - words.begin());
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
    const bool saved =
        !pendingModel_.isEmpty() && (bundledCaptionModelKeys().contains(pendingModel_) || isFolderPath(pendingModel_));
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
    } else if (!input.isEmpty() && isFilePath(input)) {
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
  busyRow_->start(tr("Opening %1\u2026").arg(openingName_));
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
  if (image->serial != openRequested_ || image->serial <= cancelledOpen_) return;
  openSettled_ = image->serial;
  updateBusyRow();
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
  if (serial != openRequested_ || serial <= cancelledOpen_) return;
  openSettled_ = serial;
  updateBusyRow();
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
  busyRow_->start(tr("Captioning %1 (beam %2)\u2026").arg(image_->name).arg(request.beam));
}

void CaptionWorkbench::onFinished(std::shared_ptr<const CaptionOutcome> outcome) {
  if (!source_ || !image_ || outcome->sourceSerial != source_->serial || outcome->imageSerial != image_->serial) return;
  if (outcome->generation <= shown_ || outcome->generation <= cancelledRun_) return;
  if (!outcome->ok()) {
    if (outcome->generation != submitted_) return;  // a newer request reports for itself
    settled_ = outcome->generation;
    updateBusyRow();
    pending_.reset();  // an older input's result, not shown yet, would hide this refusal
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
  updateBusyRow();
  errorBanner_->setVisible(false);
  lastError_.clear();
  maps_.clear();
  composed_.clear();
  mapsRequested_ = false;
  if (next->maps && next->maps->sigma == options_.sigma) {
    maps_[0] = next->maps;
  }
  const std::string kept = shownWordText();
  hypothesis_ = 0;
  word_ = 0;
  const auto& hypotheses = next->run->hypotheses;
  openingWord_ = hypotheses.empty() ? 0 : openingWordOf(hypotheses.front().words, kept);
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
    word_ = openingWord_;
    updateStrip();
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
    // Revealed whole: the overlay followed the newest word, and now settles on the opening word.
    revealTimer_.stop();
    word_ = std::clamp(openingWord_, 0, count - 1);
    {
      const QSignalBlocker block(strip_);
      strip_->setCurrent(word_);
    }
    updateOverlays();
    emit wordChanged(word_);
  }
}

std::string CaptionWorkbench::shownWordText() const {
  const auto* hyp = currentHypothesis();
  if (!hyp || word_ < 0 || word_ >= int(hyp->words.size())) return {};
  return hyp->words[std::size_t(word_)];
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
  QString caption = tr("%1 \u00b7 word %2 (0\u2013%3)").arg(quoted(wordText)).arg(word_).arg(count - 1);
  overlayView_->setCaption(caption);
  QString details =
      tr("\u03b2 (gate) %1 \u00b7 H(\u03b1) %2 of %3 nats")
          .arg(std::size_t(word_) < hyp->beta.size() ? double(hyp->beta[std::size_t(word_)]) : 0.0, 0, 'f', 2)
          .arg(std::size_t(word_) < entropy.size() ? double(entropy[std::size_t(word_)]) : 0.0, 0, 'f', 2)
          .arg(maxEntropy, 0, 'f', 2);
  if (std::size_t(word_) < hyp->location.size() && run.grid > 0) {
    const int cell = hyp->location[std::size_t(word_)];
    details += tr("\nHard attention: read cell (row %1, column %2) of the %3 \u00d7 %3 grid, outlined")
                   .arg(cell / run.grid)
                   .arg(cell % run.grid)
                   .arg(run.grid);
  }
  details += tr("\nHypothesis %1: %2 (log p %3)")
                 .arg(hypothesis_)
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

}  // namespace attn::ui
