// The Transformer tab's views: linked selection, matrix, ViT overlay, colour map, session section and exports.
#include "workbenches/transformer/transformer_workbench.h"
#include "workbenches/transformer/transformer_detectors.h"
#include "workbenches/transformer/transformer_attribution.h"
#include "workbenches/transformer/transformer_patching.h"
#include "render/strings.h"

#include "models/head_stats_model.h"
#include "render/heatmap_render.h"
#include "render/overlay_render.h"
#include "views/qcustomplot.h"
#include "views/export.h"
#include "views/head_grid_view.h"
#include "views/heatmap_view.h"
#include "views/logit_lens_view.h"
#include "views/long_map_panel.h"
#include "views/image_overlay_view.h"
#include "views/token_lines_view.h"
#include "workbenches/common/sample_images.h"
#include "workbenches/common/side_panel.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QStackedWidget>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {

// ---- selection ----

void TransformerWorkbench::selectHead(int layer, int head) {
  if (selecting_) return;
  selecting_ = true;
  if (outcome_) {
    layer = std::clamp(layer, 0, std::max(0, layerCount(*outcome_) - 1));
    head = std::clamp(head, 0, std::max(0, headCount(*outcome_, layer) - 1));
  }
  const bool changed = layer != layer_ || head != head_;
  layer_ = layer;
  head_ = head;
  tokenLines_->setLayer(layer_);
  headGrid_->setSelected(layer_, head_);
  selectStatsRow();
  selecting_ = false;
  if (changed) {
    updateMatrix();
    updateOverlay();
    emit selectionChanged(layer_, head_);
  }
  updateSelectionLabel();
}

void TransformerWorkbench::openHead(int layer, int head) {
  selectHead(layer, head);
  const bool was = selecting_;
  selecting_ = true;
  tokenLines_->soloHead(head_);
  selecting_ = was;
}

void TransformerWorkbench::selectStatsRow() {
  const int row = statsModel_->rowOf(layer_, head_);
  if (row < 0) return;
  const QModelIndex index = statsProxy_->mapFromSource(statsModel_->index(row, 0));
  const bool was = selecting_;
  selecting_ = true;
  statsTable_->selectionModel()->setCurrentIndex(index,
                                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  statsTable_->scrollTo(index);
  selecting_ = was;
}

void TransformerWorkbench::updateSelectionLabel() {
  if (!outcome_) {
    selectionLabel_->setText(source_ ? tr("Running\u2026") : tr("No model open"));
    return;
  }
  QString text = tr("Layer %1 \u00b7 head %2").arg(layer_).arg(head_);
  if (source_ && source_->model && source_->family() == attn::models::Family::Decoder) {
    // Grouped-query attention: the key/value group the head reads (heads g x H/KV .. share group g).
    const auto& c = source_->model->config();
    if (c.decoder.kv_heads < c.heads) {
      text += tr(" \u00b7 key/value group %1 (0\u2013%2)")
                  .arg(head_ / (c.heads / c.decoder.kv_heads))
                  .arg(c.decoder.kv_heads - 1);
    }
  }
  if (const auto token = tokenLines_->selectedToken()) {
    const auto& tokens = outcome_->trace->tokens;
    if (std::size_t(token->index) < tokens.size()) {
      text += tr(" \u00b7 token %1 \u201c%2\u201d")
                  .arg(token->index)
                  .arg(render::tokenLabel(tokens[std::size_t(token->index)]));
    }
  }
  if (const int row = statsModel_->rowOf(layer_, head_); const auto* s = statsModel_->at(row)) {
    text +=
        tr(" \u00b7 entropy %1 \u00b7 mean distance %2").arg(statText(s->entropy, 3), statText(s->mean_distance, 2));
  }
  selectionLabel_->setText(text);
}

attn::ui::TransformerSection TransformerWorkbench::state() const {
  using Section = attn::ui::TransformerSection;
  Section s;
  s.source = requestedSource_.toStdString();
  s.text = text().toStdString();
  s.pair = pairEdit_->text().toStdString();
  const QString image =
      requestedImage_.isEmpty() ? sampleImageResource(sampleBox_->currentData().toString()) : requestedImage_;
  s.image = {attn::ui::ImageRef::Kind::File, image.toStdString()};
  for (const auto& sample : sampleImages()) {
    if (sample.resource == image) s.image = {attn::ui::ImageRef::Kind::Sample, sample.key.toStdString()};
  }
  s.layer = pendingLayer_ >= 0 ? pendingLayer_ : layer_;
  s.head = pendingLayer_ >= 0 ? pendingHead_ : head_;
  switch (currentView()) {
    case View::Head: s.view = Section::View::Head; break;
    case View::Model: s.view = Section::View::Model; break;
    case View::Statistics: s.view = Section::View::Statistics; break;
    case View::Overlay: s.view = Section::View::Overlay; break;
    case View::Lens: s.view = Section::View::Lens; break;
    case View::Matrix: s.view = Section::View::Matrix; break;
  }
  switch (matrixMode()) {
    case MatrixMode::Head: s.matrix = Section::Matrix::Head; break;
    case MatrixMode::LayerMean: s.matrix = Section::Matrix::LayerMean; break;
    case MatrixMode::Rollout: s.matrix = Section::Matrix::Rollout; break;
  }
  switch (attn::analysis::HeadFusion(fusionBox_->currentData().toInt())) {
    case attn::analysis::HeadFusion::Mean: s.fusion = Section::Fusion::Mean; break;
    case attn::analysis::HeadFusion::Max: s.fusion = Section::Fusion::Max; break;
    case attn::analysis::HeadFusion::Min: s.fusion = Section::Fusion::Min; break;
  }
  // The spin boxes' own values: a float on the way would turn 0.3 into 0.30000001.
  s.discard_ratio = discardSpin_->value();
  s.residual = residualSpin_->value();
  s.overlay = OverlaySource(overlaySourceBox_->currentData().toInt()) == OverlaySource::Head
                  ? Section::Overlay::Head
                  : Section::Overlay::Rollout;
  s.overlay_alpha = alphaSlider_->value() / 100.0;
  s.line_threshold = thresholdSpin_->value();
  s.colormap = render::colormapInfo(colormap_).key;
  const attn::models::GenerateOptions g = generation();
  s.new_tokens = g.max_new_tokens;
  s.temperature = g.temperature;
  s.top_k = g.top_k;
  s.top_p = g.top_p;
  s.seed = g.seed;
  if (pendingGeneration_) {
    s.generated = true;
    s.step = pendingGeneration_->step;
  } else if (outcome_ && outcome_->request.generation && outcome_->run && outcome_->run->prompt_tokens > 0) {
    s.generated = true;
    s.step = scrubber_->value();
  }
  saveInterventionState(s);
  patching_->saveTo(s.causal);
  attribution_->saveTo(s.causal.attribution);
  detectors_->saveTo(s.causal);
  return s;
}

void TransformerWorkbench::applyState(const attn::ui::TransformerSection& state) {
  const QString causalSource = state.source.empty() ? sourceKey() : QString::fromStdString(state.source);
  patching_->restoreFrom(state.causal, causalSource);
  attribution_->restoreFrom(state.causal.attribution);
  detectors_->restoreFrom(state.causal, causalSource);
  using Section = attn::ui::TransformerSection;
  if (const auto map = render::findColormap(QString::fromStdString(state.colormap))) setColormap(*map);
  setMatrixMode(state.matrix == Section::Matrix::Rollout     ? MatrixMode::Rollout
                : state.matrix == Section::Matrix::LayerMean ? MatrixMode::LayerMean
                                                             : MatrixMode::Head);
  setOverlaySource(state.overlay == Section::Overlay::Head ? OverlaySource::Head : OverlaySource::Rollout);
  setOverlayAlpha(state.overlay_alpha);
  thresholdSpin_->setValue(state.line_threshold);
  {
    const QSignalBlocker a(fusionBox_), b(discardSpin_), c(residualSpin_), d(textEdit_), e(pairEdit_);
    const auto fusion = state.fusion == Section::Fusion::Max   ? attn::analysis::HeadFusion::Max
                        : state.fusion == Section::Fusion::Min ? attn::analysis::HeadFusion::Min
                                                               : attn::analysis::HeadFusion::Mean;
    fusionBox_->setCurrentIndex(std::max(0, fusionBox_->findData(int(fusion))));
    discardSpin_->setValue(state.discard_ratio);
    residualSpin_->setValue(state.residual);
    textEdit_->setPlainText(QString::fromStdString(state.text));
    pairEdit_->setText(QString::fromStdString(state.pair));
  }
  attn::models::GenerateOptions g;
  g.max_new_tokens = state.new_tokens;
  g.temperature = static_cast<float>(state.temperature);
  g.top_k = state.top_k;
  g.top_p = static_cast<float>(state.top_p);
  g.seed = state.seed;
  setGeneration(g);
  // A generated run in view is generated again (the same settings and seed give the same tokens), at its step.
  pendingGeneration_.reset();
  if (state.generated) pendingGeneration_ = PendingGeneration{g, state.step};
  switch (state.view) {
    case Section::View::Head: setView(View::Head); break;
    case Section::View::Model: setView(View::Model); break;
    case Section::View::Statistics: setView(View::Statistics); break;
    case Section::View::Overlay: setView(View::Overlay); break;
    case Section::View::Lens: setView(View::Lens); break;
    case Section::View::Matrix: setView(View::Matrix); break;
  }
  pendingLayer_ = state.layer;
  pendingHead_ = state.head;
  const QString image = state.image.kind == attn::ui::ImageRef::Kind::Sample
                            ? sampleImageResource(QString::fromStdString(state.image.value))
                            : QString::fromStdString(state.image.value);
  if (!image.isEmpty() && image != requestedImage_) {
    if (state.image.kind == attn::ui::ImageRef::Kind::Sample) {
      openSample(QString::fromStdString(state.image.value));
    } else {
      openImage(image);
    }
  }
  const QString source = QString::fromStdString(state.source);
  if (!source.isEmpty() && source != requestedSource_) {
    textChosenForLoad_ = true;  // the model opened here keeps the session's text (takeTextForSource)
    if (isDemoKey(source)) {
      openDemo(source);
    } else {
      openPath(source);
    }
  }
  applyInterventionState(state);
  post();  // a fresh result for the selection; a source still loading runs when it is in
}

void TransformerWorkbench::saveTo(attn::ui::Session& session) const { session.transformer = state(); }

QStringList TransformerWorkbench::restoreFrom(const attn::ui::Session& session, const QString& origin) {
  // Nothing to fall back to: without its section the tab keeps what it has.
  if (!session.transformer) return {};
  QStringList notes;
  attn::ui::TransformerSection section = *session.transformer;
  if (const QString source = QString::fromStdString(section.source);
      !source.isEmpty() && !isDemoKey(source) && !QFileInfo::exists(source)) {
    notes.append(goneNote(origin, source, tr("the Transformer tab")));
    section.source.clear();
  }
  if (!imageRefExists(section.image)) {
    notes.append(goneNote(origin, QString::fromStdString(section.image.value), tr("the Transformer tab's photo")));
    section.image = attn::ui::ImageRef{};
  }
  applyState(section);
  return notes;
}

void TransformerWorkbench::setMatrixMode(MatrixMode mode) {
  matrixModeBox_->setCurrentIndex(std::max(0, matrixModeBox_->findData(int(mode))));
}

TransformerWorkbench::MatrixMode TransformerWorkbench::matrixMode() const {
  return MatrixMode(matrixModeBox_->currentData().toInt());
}

attn::analysis::RolloutOptions TransformerWorkbench::rolloutOptions() const {
  attn::analysis::RolloutOptions options;
  options.fusion = attn::analysis::HeadFusion(fusionBox_->currentData().toInt());
  options.discard_ratio = float(discardSpin_->value());
  options.residual = float(residualSpin_->value());
  return options;
}

void TransformerWorkbench::setRolloutOptions(const attn::analysis::RolloutOptions& options) {
  {
    const QSignalBlocker a(fusionBox_), b(discardSpin_), c(residualSpin_);
    fusionBox_->setCurrentIndex(std::max(0, fusionBox_->findData(int(options.fusion))));
    discardSpin_->setValue(double(options.discard_ratio));
    residualSpin_->setValue(double(options.residual));
  }
  post();
}

QString TransformerWorkbench::emptyMatrixText() const {
  if (source_) return tr("Type a text: the attention of every layer and head of %1 shows here.").arg(source_->name);
  return tr(
      "No model yet.\n\nOpen a model folder (File > Open Model\u2026, Ctrl+Shift+M) or an attention dump "
      "(File > Open Attention Dump\u2026), drop either on the window, or press Open the Demo Model; then type "
      "a text. Every layer and head of its attention shows here.");
}

bool TransformerWorkbench::isOnDemand() const { return outcome_ && !outcome_->run->on_demand.empty(); }

int TransformerWorkbench::layerCount(const TransformerOutcome& outcome) const {
  if (!outcome.run->on_demand.empty()) return int(outcome.run->on_demand.size());
  return outcome.trace->layer_count(outcome.stage);
}

int TransformerWorkbench::headCount(const TransformerOutcome& outcome, int layer) const {
  if (!outcome.run->on_demand.empty()) {
    return layer >= 0 && std::size_t(layer) < outcome.run->on_demand.size()
               ? outcome.run->on_demand[std::size_t(layer)].heads()
               : 0;
  }
  const auto* l = outcome.trace->find(outcome.stage, layer);
  return l ? l->maps.heads() : 0;
}

bool TransformerWorkbench::updateLongMap() {
  if (!isOnDemand()) {
    matrixStack_->setCurrentWidget(heatmap_);
    longMapRun_.reset();
    return false;
  }
  const auto& run = outcome_->run;
  if (longMapRun_ != run) {
    QStringList tokens;
    tokens.reserve(qsizetype(run->attention.tokens.size()));
    for (const auto& t : run->attention.tokens) tokens.append(QString::fromStdString(t));
    longMap_->setTokens(tokens);  // their text: the panel makes the labels and finds across tokens
    longMapRun_ = run;
  }
  const auto& layer = run->on_demand[std::size_t(layer_)];
  // A version-2 dump's head is checked the first time it is shown (its checksums: a few ms at 32,768 tokens).
  if (auto ok = layer.verify(head_); !ok) {
    longMap_->clear();
    headDamage_ = fromStd(ok.error().message());
    showError(headDamage_);
    matrixStack_->setCurrentWidget(longMap_);
    matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 head %2 \u00b7 not shown: its data in the file is damaged")
                              .arg(layer_)
                              .arg(head_));
    return true;
  }
  if (!headDamage_.isEmpty() && errorBanner_->text() == headDamage_) errorBanner_->setVisible(false);
  headDamage_.clear();
  const auto& stats = layer.stats(head_);
  LongMapHead head;
  head.reader = std::make_shared<const attn::OnDemandHead>(run, layer, head_);
  head.received = std::shared_ptr<const std::vector<float>>(run, &stats.received);
  head.sinkMass = stats.rows > 0 ? stats.first_mass / double(stats.rows) : 0.0;
  head.title = tr("layer %1 \u00b7 head %2").arg(layer_).arg(head_);
  longMap_->setHead(std::move(head));
  // The rollout of one row (the whole matrix is out of reach): the tab's rollout choices, in the row strip.
  const auto options = rolloutOptions();
  longMap_->setRollout(
      [run, options](qint64 query, const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress) {
        return attn::analysis::rollout_row(run->on_demand, query, options, cancel, progress);
      },
      tr("%1 layers (%2 fusion, discard %3, residual %4)")
          .arg(run->on_demand.size())
          .arg(fusionBox_->itemText(fusionBox_->findData(int(options.fusion))))
          .arg(double(options.discard_ratio), 0, 'f', 2)
          .arg(double(options.residual), 0, 'f', 2),
      run.get());
  if (matrixMode() == MatrixMode::Rollout) longMap_->setRowMode(LongMapPanel::RowMode::Rollout);
  matrixStack_->setCurrentWidget(longMap_);
  matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 head %2 \u00b7 %3 tokens, attention kept on demand: every "
                           "cell recomputed exactly when shown (one head at a time)")
                            .arg(layer_)
                            .arg(head_)
                            .arg(run->attention.tokens.size()));
  return true;
}

void TransformerWorkbench::updateMatrix() {
  matrixMap_.reset();
  if (updateLongMap()) return;
  if (!outcome_) {
    heatmap_->setEmptyText(emptyMatrixText());
    heatmap_->clear();
    matrixTitle_->setText(tr("Matrix"));
    updateInterventionViews();
    return;
  }
  const auto& trace = *outcome_->trace;
  switch (matrixMode()) {
    case MatrixMode::Head:
      matrixMap_ = trace.map(outcome_->stage, layer_, head_, HeatmapView::kMaxCellsPerSide);
      matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 head %2").arg(layer_).arg(head_));
      break;
    case MatrixMode::LayerMean:
      matrixMap_ = trace.map(outcome_->stage, layer_, -1, HeatmapView::kMaxCellsPerSide);
      matrixTitle_->setText(tr("Matrix \u00b7 layer %1 \u00b7 mean of its heads").arg(layer_));
      break;
    case MatrixMode::Rollout:
      if (outcome_->rollout) {
        auto map = std::make_shared<attn::AttentionMap>();
        map->stage = outcome_->stage;
        map->name = "rollout";
        map->weights = *outcome_->rollout;
        map->row_labels = trace.tokens;
        map->col_labels = trace.tokens;
        map->row_axis = "output tokens";
        map->col_axis = "input tokens";
        matrixMap_ = std::move(map);
        const auto options = outcome_->request.rollout;
        matrixTitle_->setText(
            tr("Matrix \u00b7 rollout over %1 layers \u00b7 %2 fusion \u00b7 discard %3 \u00b7 residual %4")
                .arg(trace.layer_count(outcome_->stage))
                .arg(fusionBox_->itemText(fusionBox_->findData(int(options.fusion))))
                .arg(double(options.discard_ratio), 0, 'f', 2)
                .arg(double(options.residual), 0, 'f', 2));
      } else {
        matrixTitle_->setText(tr("Rollout unavailable: %1").arg(outcome_->rolloutError));
      }
      break;
  }
  // A dump's maps are views of its mapped file: truncated by another process meanwhile, they read zeros, refused here.
  if (outcome_->intact) {
    if (auto ok = outcome_->intact(); !ok) {
      matrixMap_.reset();
      showError(fromStd(ok.error().message()));
      matrixTitle_->setText(tr("Matrix \u00b7 not shown: the dump changed on disk while open; reopen it"));
    }
  }
  if (matrixMap_) {
    heatmap_->setMap(matrixMap_);
  } else {
    heatmap_->setEmptyText(matrixTitle_->text());  // why there is nothing to draw
    heatmap_->clear();
  }
  updateInterventionViews();
}

void TransformerWorkbench::setOverlaySource(OverlaySource source) {
  overlaySourceBox_->setCurrentIndex(std::max(0, overlaySourceBox_->findData(int(source))));
}

void TransformerWorkbench::setOverlayAlpha(double alpha) { alphaSlider_->setValue(int(std::lround(alpha * 100.0))); }

void TransformerWorkbench::updateOverlay() {
  if (!outcome_ || outcome_->run->grid_rows <= 0 || !outcome_->request.image) {
    overlay_->setImage({});
    overlay_->setCaption(QString());
    return;
  }
  const auto& run = *outcome_->run;
  std::optional<attn::Matrix> grid;
  QString caption;
  if (OverlaySource(overlaySourceBox_->currentData().toInt()) == OverlaySource::Rollout) {
    if (outcome_->rollout) grid = render::classTokenGrid(*outcome_->rollout, run.grid_rows, run.grid_cols);
    caption =
        tr("Rollout: the class token's attention to the %1 \u00d7 %2 patches").arg(run.grid_rows).arg(run.grid_cols);
  } else {
    if (const auto map = outcome_->trace->map(outcome_->stage, layer_, head_)) {
      grid = render::classTokenGrid(map->weights, run.grid_rows, run.grid_cols);
    }
    caption = tr("Layer %1 \u00b7 head %2: the class token's attention to the patches").arg(layer_).arg(head_);
  }
  if (!grid) {
    overlay_->setImage(outcome_->request.image->display);
    overlay_->setCaption(tr("No class-token attention to draw"));
    return;
  }
  render::OverlayOptions options;
  // Viridis (the matrices' default) washes a photo green; a dark-to-bright map reads better over one.
  options.colormap = colormap_ == render::Colormap::Viridis ? render::Colormap::Inferno : colormap_;
  options.alpha = alphaSlider_->value() / 100.0;
  overlay_->setImage(render::overlayImage(outcome_->request.image->display, *grid, options));
  overlay_->setCaption(caption);
}

void TransformerWorkbench::setView(View view) {
  switch (view) {
    case View::Head: viewTabs_->setCurrentWidget(tokenLines_); break;
    case View::Model: viewTabs_->setCurrentWidget(gridScroll_); break;
    case View::Statistics: viewTabs_->setCurrentWidget(statsTable_); break;
    case View::Overlay: viewTabs_->setCurrentWidget(overlay_); break;
    case View::Lens: viewTabs_->setCurrentWidget(lensView_); break;
    case View::Matrix: break;
  }
  matrixActive_ = view == View::Matrix;
  if (matrixActive_) heatmap_->setFocus(Qt::OtherFocusReason);
}

TransformerWorkbench::View TransformerWorkbench::currentView() const {
  if (matrixActive_) return View::Matrix;
  QWidget* page = viewTabs_->currentWidget();
  if (page == gridScroll_) return View::Model;
  if (page == statsTable_) return View::Statistics;
  if (page == overlay_) return View::Overlay;
  if (page == lensView_) return View::Lens;
  return View::Head;
}

void TransformerWorkbench::setColormap(render::Colormap map) {
  colormap_ = map;
  {
    const QSignalBlocker block(colormapBox_);
    colormapBox_->setCurrentIndex(std::max(0, colormapBox_->findData(int(map))));
  }
  heatmap_->setColormap(map);
  longMap_->setColormap(map);
  headGrid_->setColormap(map);
  lensView_->setColormap(map);
  updateOverlay();
}

void TransformerWorkbench::setSidePanelVisible(bool visible) { sideScroll_->setVisible(visible); }
bool TransformerWorkbench::isSidePanelVisible() const { return sideScroll_->isVisibleTo(this); }

// ---- exports ----

void TransformerWorkbench::setExportSize(QSize size) {
  for (int i = 0; i < exportSizeBox_->count(); ++i) {
    if (exportSizeBox_->itemData(i).toSize() == size) exportSizeBox_->setCurrentIndex(i);
  }
}

QSize TransformerWorkbench::exportSize() const { return exportSizeBox_->currentData().toSize(); }

QString TransformerWorkbench::exportTitle(View view) const {
  QStringList parts;
  if (source_) parts.append(source_->name);
  if (outcome_ && !outcome_->request.text.empty()) {
    QString text = QString::fromStdString(outcome_->request.text).simplified();
    if (text.size() > 60) text = text.left(59) + QChar(0x2026);
    parts.append(u"\u201c%1\u201d"_s.arg(text));
  } else if (outcome_ && outcome_->request.image) {
    parts.append(outcome_->request.image->name);
  }
  if (view == View::Matrix) {
    parts.append(matrixTitle_->text().section(u" \u00b7 "_s, 1));  // "layer 1 · head 2", "layer 1 · mean of ..."
  } else if (view == View::Head) {
    parts.append(tr("layer %1 \u00b7 %2 of %3 heads")
                     .arg(layer_)
                     .arg(tokenLines_->enabledHeads().size())
                     .arg(tokenLines_->headCount()));
  } else if (view == View::Model) {
    parts.append(tr("%1 layers \u00d7 %2 heads").arg(headGrid_->layers()).arg(headGrid_->heads()));
  } else {
    parts.append(tr("layer %1 \u00b7 head %2").arg(layer_).arg(head_));
  }
  return parts.join(u" \u00b7 "_s);
}

attn::Result<void> TransformerWorkbench::exportView(const QString& path, View view) const {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a view can be saved as .png, .svg or .pdf")));
  }
  if (!outcome_) return std::unexpected(exportError(path, tr("nothing to export yet: no run has finished")));
  const QString title = exportTitle(view);
  const QSize chosen = exportSize();
  // A picture of its own (the head and model views, the overlay) under the title line, as it is.
  const auto picture = [&](const QImage& image) -> attn::Result<void> {
    if (image.isNull()) return std::unexpected(exportError(path, tr("nothing drawn in this view")));
    return exportTitledDrawing(path, title, font(), image.size(),
                               [&](QPainter& painter) { painter.drawImage(0, 0, image); });
  };
  const auto onScreen = [&](QWidget& widget) {
    return exportTitledDrawing(path, title, font(), widget.size(), [&](QPainter& painter) { widget.render(&painter); });
  };
  switch (view) {
    case View::Matrix:
      if (isOnDemand()) return onScreen(*longMap_);
      if (compareHeatmap_->isVisible()) return onScreen(*comparePane_);  // A beside B
      return exportHeatmapFigure(*heatmap_, path, chosen.isValid() ? chosen : heatmap_->plot()->size(), title, font());
    case View::Head: {
      auto image = tokenLines_->renderImage(chosen.isValid() ? chosen.width() : std::max(600, tokenLines_->width()));
      return picture(image);
    }
    case View::Model: {
      const int width = chosen.isValid() ? chosen.width() : std::max(600, headGrid_->width());
      return picture(headGrid_->renderImage(width, tr("Model view")));
    }
    case View::Overlay: return picture(overlay_->image());
    case View::Statistics: return onScreen(*statsTable_);
    case View::Lens: return onScreen(*lensView_);
  }
  return std::unexpected(exportError(path, tr("unknown view")));
}

attn::Result<void> TransformerWorkbench::exportCurrentView(const QString& path) const {
  if (!matrixActive_ && viewTabs_->currentWidget() == patching_) return patching_->exportTo(path);
  if (!matrixActive_ && viewTabs_->currentWidget() == detectors_) return detectors_->exportTo(path);
  if (!matrixActive_ && viewTabs_->currentWidget() == attribution_) return attribution_->exportTo(path);
  return exportView(path, currentView());
}

attn::Result<void> TransformerWorkbench::exportMatrix(const QString& path) const {
  const auto format = exportFormatFor(path);
  // The Attribution view's table: index, token, score.
  if (!matrixActive_ && viewTabs_->currentWidget() == attribution_ && format == ExportFormat::Csv)
    return attribution_->exportTo(path);
  if (!format || !isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, tr("a matrix can be saved as .csv or .npy")));
  }
  if (!matrixMap_) return std::unexpected(exportError(path, tr("nothing to export yet: no matrix is shown")));
  return *format == ExportFormat::Csv ? writeMatrixCsv(*matrixMap_, path) : writeMatrixNpy(matrixMap_->weights, path);
}

attn::Result<QStringList> TransformerWorkbench::exportLayer(const QString& folder) const {
  if (!outcome_) return std::unexpected(exportError(folder, tr("nothing to export yet: no run has finished")));
  if (!QDir().mkpath(folder)) return std::unexpected(exportError(folder, tr("cannot create the folder")));
  const auto* layer = outcome_->trace->find(outcome_->stage, layer_);
  if (!layer) return std::unexpected(exportError(folder, tr("the run has no layer %1").arg(layer_)));
  QStringList written;
  HeatmapView view(HeatmapView::Style::Full);
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.setColormap(colormap_);
  view.resize(760, 640);
  view.show();
  for (int h = 0; h < layer->maps.heads(); ++h) {
    const auto map = outcome_->trace->map(outcome_->stage, layer_, h);
    if (!map) continue;
    const QString base = QDir(folder).filePath(u"layer%1-head%2"_s.arg(layer_).arg(h));
    view.setMap(map);
    view.replotNow();
    if (auto ok = exportHeatmap(view, base + u".png"_s); !ok) return std::unexpected(ok.error());
    written.append(base + u".png"_s);
    if (auto ok = writeMatrixCsv(*map, base + u".csv"_s); !ok) return std::unexpected(ok.error());
    written.append(base + u".csv"_s);
  }
  return written;
}

}  // namespace attn::ui
