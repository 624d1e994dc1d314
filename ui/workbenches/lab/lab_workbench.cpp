#include "workbenches/lab/lab_workbench.h"
#include "workbenches/common/side_panel.h"

#include "render/strings.h"
#include "views/export.h"
#include "views/heatmap_view.h"
#include "views/map_grid_view.h"
#include "workbenches/lab/lab_workbench_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QPushButton>
#include <QSlider>
#include <QToolButton>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QStringDecoder>

#include <algorithm>
#include <climits>
#include <optional>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using attn::lab::LabParams;
using attn::lab::Mechanism;
using attn::lab::MechanismInfo;

using lab_detail::fromView;

}  // namespace

namespace {
Workbench::Identity labIdentity() {
  return {attn::ui::SessionTab::Lab, LabWorkbench::tr("Mechanism &Lab"),
          LabWorkbench::tr("Run any attention mechanism on two sentences"),
          LabWorkbench::tr("Edit the sentences or the parameters: the map follows every change"),
          LabWorkbench::tr("Last run: mechanism, map shape and engine time")};
}
}  // namespace

// Bursts of results (a held-down key) are drawn once per 12 ms apply period, not once each.
LabWorkbench::LabWorkbench(QWidget* parent)
    : Workbench(labIdentity(), 12, parent), worker_(std::make_unique<LabWorker>()) {
  setObjectName(u"labWorkbench"_s);
  connect(worker_.get(), &LabWorker::finished, this, &LabWorkbench::onFinished, Qt::QueuedConnection);
  thread_.host(worker_.get(), u"lab worker"_s);

  busyTimer_.setSingleShot(true);
  busyTimer_.setInterval(150);
  connect(&busyTimer_, &QTimer::timeout, this, [this] {
    if (settled_ >= submitted_ || busy_) return;
    busy_ = true;
    idleShapeText_ = shapeLabel_->text();
    shapeLabel_->setText(tr("computing\u2026"));
    heatmap_->setCursor(Qt::BusyCursor);
  });

  const SidePanelFrame frame = makeWorkbenchFrame(
      this, u"labSidePanel"_s, [this](QWidget* p) { buildSidePanel(p); },
      [this](QWidget* area) { buildMainArea(area); });
  splitter_ = frame.splitter;
  sideScroll_ = frame.scroll;
  connect(busyRow_, &BusyRow::cancelRequested, this, &LabWorkbench::cancelRun);
  connect(worker_.get(), &LabWorker::progress, this, &LabWorkbench::onProgress, Qt::QueuedConnection);

  setParamsToWidgets(LabParams{});
  queryEdit_->setText(fromView(attn::lab::kDefaultQuery));
  sourceEdit_->setPlainText(fromView(attn::lab::kDefaultSource));
  updateMechanismControls();

  // Every edit posts a request; the worker coalesces them.
  connect(queryEdit_, &QLineEdit::textChanged, this, &LabWorkbench::post);
  connect(sourceEdit_, &QPlainTextEdit::textChanged, this, &LabWorkbench::post);
  connect(mechanismBox_, &QComboBox::currentIndexChanged, this, [this] {
    updateMechanismControls();
    markExampleTarget();
    post();
  });
  for (auto* box : {scoreBox_, normaliserBox_, positionsBox_}) {
    connect(box, &QComboBox::currentIndexChanged, this, &LabWorkbench::post);
  }
  for (auto* spin : {temperatureSpin_, sigmaSpin_}) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, &LabWorkbench::post);
  }
  // A new dimension that the heads no longer divide moves the heads to the nearest divisor first, quietly, so
  // that the one request the dimension posts (connected below) already has them.
  connect(dimSpin_, &QSpinBox::valueChanged, this, [this] {
    updateHeadsDividend();
    if (!headsSpin_->allows(headsSpin_->value())) {
      const QSignalBlocker quiet(headsSpin_);
      headsSpin_->setValue(headsSpin_->nearestAllowed(headsSpin_->value()));
    }
  });
  std::vector<QSpinBox*> spins = {windowSpin_, headsSpin_, seedSpin_, dimSpin_};
  spins.insert(spins.end(), countSpins_.begin(), countSpins_.end());
  for (QSpinBox* spin : spins) connect(spin, &QSpinBox::valueChanged, this, &LabWorkbench::post);
  connect(causalCheck_, &QCheckBox::toggled, this, &LabWorkbench::post);
  connect(shuffleButton_, &QPushButton::toggled, this, &LabWorkbench::post);
  connect(colormapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0) setColormap(render::Colormap(colormapBox_->itemData(index).toInt()));
  });
  connect(unitRangeCheck_, &QCheckBox::toggled, this,
          [this](bool on) { setRangeMode(on ? render::RangeMode::Unit : render::RangeMode::Data); });
  connect(mapBox_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index >= 0 && index != currentMap_) showMap(index);
  });
  connect(grid_, &MapGrid::mapActivated, this, [this](int index) { setCurrentMapIndex(index); });
  connect(stepSlider_, &QSlider::valueChanged, this, [this](int step) {
    if (step >= 0 && step < int(series_.size()) && series_[std::size_t(step)] != currentMap_) {
      showMap(series_[std::size_t(step)]);
    }
  });
  playTimer_.setInterval(700);
  connect(&playTimer_, &QTimer::timeout, this, &LabWorkbench::advanceStep);
  connect(playButton_, &QToolButton::toggled, this, &LabWorkbench::setPlaying);
  setPlaying(false);
  setRangeMode(rangeMode_);

  post();
}

LabWorkbench::~LabWorkbench() {
  stopApply();
  worker_->abandon();  // a long run stops at its next step rather than holding up the close
  thread_.stop();
  // The thread has finished: no event of the worker can run any more, so deleting it here is safe.
  worker_.reset();
}

const MechanismInfo& LabWorkbench::currentInfo() const {
  const auto catalogue = attn::lab::mechanisms();
  const int index = std::clamp(mechanismBox_->currentData().toInt(), 0, int(catalogue.size()) - 1);
  return catalogue[std::size_t(index)];
}

attn::lab::LabRequest LabWorkbench::request() const {
  attn::lab::LabRequest r;
  r.query = queryEdit_->text().toStdString();
  r.source = sourceEdit_->toPlainText().toStdString();
  LabParams& p = r.params;
  p.mechanism = currentInfo().id;
  p.score = attn::ScoreKind(scoreBox_->currentData().toInt());
  p.normaliser = attn::Normaliser(normaliserBox_->currentData().toInt());
  p.temperature = float(temperatureSpin_->value());
  p.window = windowSpin_->value();
  p.sigma = sigmaSpin_->value() <= 0.0 ? -1.0f : float(sigmaSpin_->value());
  p.heads = headsSpin_->value();
  const auto counts = attn::lab::count_params();
  for (std::size_t i = 0; i < counts.size(); ++i) p.*counts[i].field = countSpins_[i]->value();
  p.causal = causalCheck_->isChecked();
  p.shuffle = shuffleButton_->isChecked();
  p.positions = attn::PositionKind(positionsBox_->currentData().toInt());
  p.seed = std::uint64_t(seedSpin_->value());
  p.dim = dimSpin_->value();
  return r;
}

void LabWorkbench::setParamsToWidgets(const LabParams& p) {
  // One request for the whole change, not one per widget.
  QList<QWidget*> widgets = {mechanismBox_, scoreBox_,  normaliserBox_, temperatureSpin_,
                             windowSpin_,   sigmaSpin_, headsSpin_,     causalCheck_,
                             positionsBox_, seedSpin_,  dimSpin_,       shuffleButton_};
  widgets.append(QList<QWidget*>(countSpins_.begin(), countSpins_.end()));
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (auto* w : widgets) blockers.push_back(std::make_unique<QSignalBlocker>(w));
  const auto catalogue = attn::lab::mechanisms();
  for (std::size_t i = 0; i < catalogue.size(); ++i) {
    if (catalogue[i].id == p.mechanism) mechanismBox_->setCurrentIndex(int(i));
  }
  scoreBox_->setCurrentIndex(std::max(0, scoreBox_->findData(int(p.score))));
  normaliserBox_->setCurrentIndex(std::max(0, normaliserBox_->findData(int(p.normaliser))));
  temperatureSpin_->setValue(double(p.temperature));
  windowSpin_->setValue(p.window);
  sigmaSpin_->setValue(p.sigma <= 0.0f ? 0.0 : double(p.sigma));
  headsSpin_->setValue(p.heads);
  const auto counts = attn::lab::count_params();
  for (std::size_t i = 0; i < counts.size(); ++i) countSpins_[i]->setValue(p.*counts[i].field);
  causalCheck_->setChecked(p.causal);
  shuffleButton_->setChecked(p.shuffle);
  positionsBox_->setCurrentIndex(std::max(0, positionsBox_->findData(int(p.positions))));
  seedSpin_->setValue(int(std::min<std::uint64_t>(p.seed, INT_MAX)));
  dimSpin_->setValue(p.dim);
  updateHeadsDividend();
}

void LabWorkbench::updateHeadsDividend() {
  // Multi-head self-attention and multi-head capsules split the dimension among their heads (attn::lab's
  // check says the same).
  const auto id = currentInfo().id;
  const bool splits = id == attn::lab::Mechanism::MultiHead || id == attn::lab::Mechanism::MultiHeadCapsule;
  headsSpin_->setDividend(splits ? dimSpin_->value() : 0);
}

void LabWorkbench::updateMechanismControls() {
  const auto& info = currentInfo();
  updateHeadsDividend();
  formulaLabel_->setText(fromView(info.formula));
  paperLabel_->setText(fromView(info.paper));
  paramsForm_->setRowVisible(scoreBox_, info.uses_score);
  paramsForm_->setRowVisible(normaliserBox_, info.uses_normaliser);
  paramsForm_->setRowVisible(temperatureSpin_, info.uses_normaliser);
  paramsForm_->setRowVisible(windowSpin_, info.uses_window);
  paramsForm_->setRowVisible(sigmaSpin_, info.uses_window);
  paramsForm_->setRowVisible(headsSpin_, info.uses_heads);
  const auto counts = attn::lab::count_params();
  for (std::size_t i = 0; i < counts.size(); ++i) paramsForm_->setRowVisible(countSpins_[i], info.*counts[i].used);
  paramsForm_->setRowVisible(causalCheck_, info.uses_causal);
  paramsForm_->setRowVisible(shuffleButton_, info.uses_positions);
  paramsForm_->setRowVisible(positionsBox_, info.uses_positions);
  queryEdit_->setEnabled(info.uses_query);
  queryNote_->setVisible(!info.uses_query);
  mapLabel_->setText(info.uses_heads ? tr("Head:") : tr("Map:"));
}

void LabWorkbench::resetParameters() {
  LabParams defaults;
  defaults.mechanism = currentInfo().id;  // a reset keeps the mechanism being looked at
  setParamsToWidgets(defaults);
  updateMechanismControls();
  post();
}

void LabWorkbench::setRequest(const attn::lab::LabRequest& request) {
  {
    const QSignalBlocker blockQuery(queryEdit_);
    const QSignalBlocker blockSource(sourceEdit_);
    queryEdit_->setText(QString::fromStdString(request.query));
    sourceEdit_->setPlainText(QString::fromStdString(request.source));
  }
  setParamsToWidgets(request.params);
  updateMechanismControls();
  post();
}

attn::ui::LabSection LabWorkbench::state() const {
  attn::ui::LabSection s;
  s.request = request();
  s.colormap = render::colormapInfo(colormap_).key;
  s.unit_range = rangeMode_ == render::RangeMode::Unit;
  s.map = pendingMap_ >= 0 ? pendingMap_ : std::max(0, currentMap_);
  return s;
}

void LabWorkbench::applyState(const attn::ui::LabSection& state) {
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) setColormap(*map);
  setRangeMode(state.unit_range ? render::RangeMode::Unit : render::RangeMode::Data);
  pendingMap_ = state.map;
  setRequest(state.request);
  restoreGeneration_ = submitted_;  // if the engine refuses it, the old map must not pass for it
}

void LabWorkbench::saveTo(attn::ui::Session& session) const { session.lab = state(); }

QStringList LabWorkbench::restoreFrom(const attn::ui::Session& session, const QString&) {
  attn::ui::LabSection defaults;
  defaults.unit_range = true;                  // a session without the tab: the tab's defaults, distributions on 0..1
  applyState(session.lab.value_or(defaults));  // the lab names no files
  return {};
}

attn::Result<void> LabWorkbench::exportCurrentView(const QString& path) const {
  if (!currentMap()) return attn::fail(attn::ErrorKind::Unsupported, "nothing to export yet: the lab has no result");
  return exportHeatmap(*heatmap_, path);
}

attn::Result<void> LabWorkbench::exportMatrix(const QString& path) const {
  const attn::AttentionMap* map = currentMap();
  if (!map) return attn::fail(attn::ErrorKind::Unsupported, "nothing to export yet: the lab has no result");
  const auto format = exportFormatFor(path);
  return format == ExportFormat::Npy ? writeMatrixNpy(map->weights, path) : writeMatrixCsv(*map, path);
}

void LabWorkbench::post() { submitRequest(request()); }

void LabWorkbench::submitRequest(attn::lab::LabRequest request, const QString& origin) {
  ++submitted_;
  if (!origin.isEmpty()) {
    originGeneration_ = submitted_;
    origin_ = origin;
  }
  const QString name = QString::fromUtf8(attn::lab::info(request.params.mechanism).name);
  worker_->submit(submitted_, std::move(request));
  busyTimer_.start();
  busyRow_->start(tr("Running %1\u2026").arg(name));
}

void LabWorkbench::cancelRun() {
  if (settled_ >= submitted_) return;
  cancelledUpTo_ = submitted_;
  if (pending_ && pending_->generation <= cancelledUpTo_) pending_.reset();
  worker_->cancel();  // the run stops at its next step (Transformer-XL's segment); what it answers is dropped
  settleCancelled(submitted_);
}

void LabWorkbench::onProgress(quint64 generation, int done, int steps) {
  if (generation != submitted_ || generation <= cancelledUpTo_) return;
  // Only Transformer-XL reports steps today: its segments (engine/include/attn/lab/lab.h, LabControl).
  const QString text = currentInfo().uses_segments ? tr("%1 of %2 segments done") : tr("%1 of %2 steps done");
  busyRow_->setProgress(done, steps, text.arg(done).arg(steps));
}

void LabWorkbench::settleCancelled(quint64 generation) {
  if (generation != submitted_ || settled_ >= generation) return;  // a newer request reports; or said already
  settled_ = generation;
  endBusy();
  emit statusMessage(outcome_ ? tr("Cancelled: the previous map stays") : tr("Cancelled"), 8000);
}

void LabWorkbench::endBusy() {
  busyTimer_.stop();
  busyRow_->stop();
  if (!busy_) return;
  busy_ = false;
  shapeLabel_->setText(idleShapeText_);
  heatmap_->unsetCursor();
}

bool LabWorkbench::loadText(const QByteArray& bytes, const QString& origin) {
  auto [query, source] = splitQuerySource(bytes);
  if (query.empty()) {
    emit statusMessage(tr("%1: the file holds no text; the lab is unchanged").arg(origin), 8000);
    return false;
  }
  QStringDecoder decoder(QStringConverter::Utf8);
  const QString queryText = decoder.decode(QByteArrayView(query.data(), qsizetype(query.size())));
  const QString sourceText = decoder.decode(QByteArrayView(source.data(), qsizetype(source.size())));
  if (decoder.hasError()) {
    // Let the engine name the offending byte: the editors cannot hold invalid UTF-8 anyway.
    auto raw = request();
    raw.query = std::move(query);
    if (!source.empty()) raw.source = std::move(source);
    submitRequest(std::move(raw), origin);
    return false;
  }
  {
    const QSignalBlocker blockQuery(queryEdit_);
    const QSignalBlocker blockSource(sourceEdit_);
    queryEdit_->setText(queryText);
    if (!sourceText.isEmpty()) sourceEdit_->setPlainText(sourceText);
  }
  submitRequest(request(), origin);
  emit statusMessage(sourceText.isEmpty()
                         ? tr("Opened %1: one line, used as the query (the source is unchanged)").arg(origin)
                         : tr("Opened %1").arg(origin),
                     5000);
  return true;
}

int LabWorkbench::workerRuns() const { return worker_->runs(); }

void LabWorkbench::onFinished(LabOutcome outcome) {
  if (outcome.generation <= shown_) return;  // older than what is on screen
  if (outcome.generation <= cancelledUpTo_ || (outcome.error && outcome.error->kind == attn::ErrorKind::Cancelled)) {
    settleCancelled(outcome.generation);  // cancelled, or superseded by a newer request
    return;
  }
  if (!outcome.ok()) {
    // A refusal that a newer request already superseded would only flash by; the newer one reports.
    if (outcome.generation != submitted_) return;
    settled_ = outcome.generation;
    endBusy();
    QString message = QString::fromStdString(outcome.error ? outcome.error->message() : std::string());
    if (outcome.generation == originGeneration_ && !origin_.isEmpty()) message = origin_ + u": "_s + message;
    lastError_ = message;
    setInputError(message);
    if (outcome.generation == restoreGeneration_) {
      // A restored session's request: the map on screen belongs to another request, and the panels now
      // describe this one. Draw nothing rather than a map that does not match them.
      showNothing(tr("The restored request was refused: %1").arg(message));
      emit statusMessage(tr("Input refused: %1").arg(message), 0);
      return;
    }
    if (!outcome_ || outcome_->request.params != outcome.request.params) {
      // Another mechanism or other parameters: the map on screen would pass under the new name. Only a map of the
      // same mechanism and parameters on the text before the edit stays while the text is refused.
      showNothing(tr("No map: %1").arg(message));
      emit statusMessage(tr("Input refused: %1").arg(message), 0);
      return;
    }
    emit statusMessage(tr("Input refused: %1. The previous view stays.").arg(message), 0);
    return;
  }
  pending_ = std::make_shared<const LabOutcome>(std::move(outcome));
  scheduleApply();
}

void LabWorkbench::showNothing(const QString& why) {
  outcome_.reset();
  pending_.reset();
  currentMap_ = -1;
  pendingMap_ = -1;
  heatmap_->setEmptyText(why);
  heatmap_->clear();
  shapeLabel_->clear();  // no map, no shape
  grid_->setMaps({});
  gridScroll_->setVisible(false);
  mapLabel_->setVisible(false);
  mapBox_->setVisible(false);
  updateStepControls();
  notesLabel_->clear();
  notesLabel_->setVisible(false);
  warningStrip_->setVisible(false);
}

void LabWorkbench::applyPending() {
  if (!pending_) return;
  const bool sameShape = outcome_ && outcome_->request.params.mechanism == pending_->request.params.mechanism &&
                         outcome_->result->trace.size() == pending_->result->trace.size();
  outcome_ = std::move(pending_);
  pending_.reset();
  shown_ = outcome_->generation;
  settled_ = std::max(settled_, shown_);
  if (shown_ == submitted_) {
    endBusy();
    lastError_.clear();
    setInputError({});
  }

  const auto& trace = outcome_->result->trace;
  const int count = int(trace.size());
  const int opening = outcome_->result->opening_map < trace.size() ? int(outcome_->result->opening_map) : 0;
  int keep = sameShape && currentMap_ >= 0 && currentMap_ < count ? currentMap_ : opening;
  if (pendingMap_ >= 0 && shown_ == submitted_) {  // the result of applyState's request
    if (pendingMap_ < count) keep = pendingMap_;
    pendingMap_ = -1;
  }
  {
    const QSignalBlocker block(mapBox_);
    mapBox_->clear();
    for (const auto& map : trace.maps()) mapBox_->addItem(QString::fromStdString(map.title()));
  }
  mapLabel_->setVisible(count > 1);
  mapBox_->setVisible(count > 1);
  gridScroll_->setVisible(count > 1);
  if (count > 1) {
    std::vector<std::shared_ptr<const attn::AttentionMap>> maps;
    maps.reserve(std::size_t(count));
    const std::shared_ptr<const attn::lab::LabResult> owner = outcome_->result;
    for (const auto& map : trace.maps()) maps.emplace_back(owner, &map);  // aliasing: keeps the result alive
    grid_->setMaps(std::move(maps));
  } else {
    grid_->setMaps({});
  }

  QStringList warnings;
  for (const auto& w : outcome_->result->warnings) warnings.append(QString::fromStdString(w));
  warningStrip_->setText(u"\u26a0 "_s + warnings.join(u"\n\u26a0 "_s));
  warningStrip_->setVisible(!warnings.isEmpty());

  QStringList notes;
  const auto& rawNotes = outcome_->result->notes;
  constexpr std::size_t kMaxNotes = 12;
  for (std::size_t i = 0; i < std::min(rawNotes.size(), kMaxNotes); ++i) {
    notes.append(QString::fromStdString(rawNotes[i]));
  }
  if (rawNotes.size() > kMaxNotes) notes.append(tr("\u2026 and %1 more").arg(rawNotes.size() - kMaxNotes));
  notesLabel_->setText(notes.join(u"\n"_s));
  notesLabel_->setVisible(!notes.isEmpty());

  currentMap_ = -1;
  if (count == 0) {
    updateStepControls();
    heatmap_->clear();
    emit statusMessage(tr("The mechanism produced no attention map"), 5000);
  } else {
    showMap(keep);
  }
  emit resultShown(shown_);
}

void LabWorkbench::showMap(int index) {
  if (!outcome_ || !outcome_->ok()) return;
  const auto& maps = outcome_->result->trace.maps();
  if (index < 0 || index >= int(maps.size())) return;
  currentMap_ = index;
  const auto& map = maps[std::size_t(index)];
  heatmap_->setMap(std::shared_ptr<const attn::AttentionMap>(outcome_->result, &map));
  {
    const QSignalBlocker block(mapBox_);
    mapBox_->setCurrentIndex(index);
  }
  grid_->setCurrent(index);
  shapeLabel_->setText(tr("%1 \u00d7 %2").arg(map.weights.rows()).arg(map.weights.cols()));
  setRunSummary(labSummary(*outcome_, map));
  updateStepControls();
  emit currentMapChanged(index);
}

namespace {

// A map's series: maps of the same layer and head whose names differ only in a trailing number
// ("iteration 0" ... "iteration 4", "sorted by bucket · round 1").
std::optional<std::string> seriesName(const attn::AttentionMap& map) {
  const auto digits = map.name.find_last_not_of("0123456789");
  if (digits == std::string::npos || digits + 1 == map.name.size() || map.name[digits] != ' ') return std::nullopt;
  return map.name.substr(0, digits + 1);
}

}  // namespace

void LabWorkbench::updateStepControls() {
  series_.clear();
  const auto* maps = outcome_ && outcome_->ok() ? &outcome_->result->trace.maps() : nullptr;
  const auto* current =
      maps && currentMap_ >= 0 && currentMap_ < int(maps->size()) ? &(*maps)[std::size_t(currentMap_)] : nullptr;
  if (const auto name = current ? seriesName(*current) : std::nullopt) {
    for (std::size_t i = 0; i < maps->size(); ++i) {
      const auto& map = (*maps)[i];
      if (map.layer == current->layer && map.head == current->head && seriesName(map) == name) {
        series_.push_back(int(i));
      }
    }
  }
  const bool shown = series_.size() > 1;
  if (!shown) setPlaying(false);
  const int step = int(std::find(series_.begin(), series_.end(), currentMap_) - series_.begin());
  {
    const QSignalBlocker block(stepSlider_);
    stepSlider_->setRange(0, std::max(0, int(series_.size()) - 1));
    stepSlider_->setValue(step);
  }
  // "step 1 (0–3)": the index from 0 and the range, as every tab says an index of a count.
  stepLabel_->setText(tr("step %1 (0\u2013%2)").arg(step).arg(std::max(0, int(series_.size()) - 1)));
  for (QWidget* w :
       {static_cast<QWidget*>(stepLabel_), static_cast<QWidget*>(stepSlider_), static_cast<QWidget*>(playButton_)}) {
    w->setVisible(shown);
  }
}

bool LabWorkbench::isPlaying() const { return playTimer_.isActive(); }

void LabWorkbench::setPlaying(bool on) {
  on = on && series_.size() > 1;
  if (on && stepSlider_->value() == stepSlider_->maximum()) stepSlider_->setValue(0);  // from the start again
  if (on) {
    playTimer_.start();
  } else {
    playTimer_.stop();
  }
  const QSignalBlocker block(playButton_);
  playButton_->setChecked(on);
  playButton_->setText(tr("Pla&y"));  // one mnemonic both ways; the icon says which
  playButton_->setIcon(style()->standardIcon(on ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
}

void LabWorkbench::advanceStep() {
  if (stepSlider_->value() >= stepSlider_->maximum()) {
    setPlaying(false);
    return;
  }
  stepSlider_->setValue(stepSlider_->value() + 1);
  if (stepSlider_->value() == stepSlider_->maximum()) setPlaying(false);
}

void LabWorkbench::setCurrentMapIndex(int index) { showMap(index); }

const attn::AttentionMap* LabWorkbench::currentMap() const {
  if (!outcome_ || !outcome_->ok() || currentMap_ < 0) return nullptr;
  const auto& maps = outcome_->result->trace.maps();
  return currentMap_ < int(maps.size()) ? &maps[std::size_t(currentMap_)] : nullptr;
}

void LabWorkbench::markExampleTarget() {
  if (!currentInfo().uses_target) return;
  const QString text = sourceEdit_->toPlainText();
  if (text.contains(u'[') || text.contains(u']')) return;  // marked already (or being marked)
  QString marked;
  if (text.trimmed().isEmpty() || text == fromView(attn::lab::kDefaultSource)) {
    marked = fromView(attn::lab::kTargetExample);
  } else {
    // The user's own text: its longest word (the first of the longest) becomes the target.
    QRegularExpressionMatch longest;
    static const QRegularExpression kWord(u"\\w+"_s, QRegularExpression::UseUnicodePropertiesOption);
    auto words = kWord.globalMatch(text);
    while (words.hasNext()) {
      const auto word = words.next();
      if (!longest.hasMatch() || word.capturedLength() > longest.capturedLength()) longest = word;
    }
    if (!longest.hasMatch()) return;
    marked = text.left(longest.capturedStart()) + u'[' + longest.captured() + u']' + text.mid(longest.capturedEnd());
  }
  {
    const QSignalBlocker quiet(sourceEdit_);  // the caller posts the request
    sourceEdit_->setPlainText(marked);
  }
  emit statusMessage(tr("%1 attends around a target phrase: the source now marks one in [brackets]; move them to "
                        "choose another")
                         .arg(fromView(currentInfo().name)),
                     8000);
}

void LabWorkbench::setInputError(const QString& message) {
  inputError_->setText(message);
  inputError_->setVisible(!message.isEmpty());
}

void LabWorkbench::setColormap(render::Colormap map) {
  if (map == colormap_ && colormapBox_->currentData().toInt() == int(map)) return;
  colormap_ = map;
  {
    const QSignalBlocker block(colormapBox_);
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(map))));
  }
  heatmap_->setColormap(map);
  grid_->setColormap(map);
  emit colormapChanged(map);
}

void LabWorkbench::setRangeMode(render::RangeMode mode) {
  rangeMode_ = mode;
  {
    const QSignalBlocker block(unitRangeCheck_);
    unitRangeCheck_->setChecked(mode == render::RangeMode::Unit);
  }
  heatmap_->setRangeMode(mode);
  grid_->setRangeMode(mode);
}

void LabWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }

bool LabWorkbench::isSidePanelVisible() const { return !sideScroll_->isHidden(); }

}  // namespace attn::ui
