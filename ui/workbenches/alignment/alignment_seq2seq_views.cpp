// The shared seq2seq views (alignment_seq2seq_views.h).
#include "workbenches/alignment/alignment_seq2seq_views.h"

#include "render/alignment_overlay.h"
#include "render/strings.h"
#include "views/heatmap_view.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/alignment/alignment_step_page.h"

#include <QLabel>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

// The label of output step t of a hypothesis: its character, "</s>" for the end.
QString stepLabel(const attn::AttentionMap& map, int t) {
  if (t < 0 || std::size_t(t) >= map.row_labels.size()) return {};
  const auto& label = map.row_labels[std::size_t(t)];
  return label == "</s>" ? u"</s>"_s : quoted(render::tokenLabel(label));
}

}  // namespace

const attn::AttentionMap* Seq2SeqViews::currentMap(const AlignmentViewState& state) const {
  if (!state.outcome || !state.outcome->seq2seq) return nullptr;
  const auto h = std::size_t(state.hypothesis);
  return h < state.outcome->alignments.size() ? state.outcome->alignments[h].get() : nullptr;
}

int Seq2SeqViews::stepCount(const AlignmentViewState& state) const {
  const auto& outcome = state.outcome;
  if (!outcome || !outcome->seq2seq || std::size_t(state.hypothesis) >= outcome->seq2seq->hypotheses.size()) return 0;
  return int(outcome->seq2seq->hypotheses[std::size_t(state.hypothesis)].ids.size());
}

void Seq2SeqViews::showMaps(const AlignmentViewState& state) {
  static const std::vector<std::shared_ptr<const attn::AttentionMap>> none;
  const auto& outcome = state.outcome;
  const auto h = std::size_t(state.hypothesis);
  const bool layered =
      outcome && outcome->seq2seq && h < outcome->layerAlignments.size() && !outcome->layerAlignments[h].empty();
  steps_->setLayers(layered ? outcome->layerAlignments[h] : none);
  const attn::AttentionMap* map = currentMap(state);
  if (!map) {
    steps_->heatmap()->clear();
    steps_->heatmapTitle()->clear();
    return;
  }
  steps_->heatmap()->setMap(outcome->alignments[h]);
  const auto& run = *outcome->seq2seq;
  const auto& hyp = run.hypotheses[h];
  const QString units = page().text().units;
  steps_->heatmapTitle()->setText(
      run.hypotheses.size() > 1
          ? tr("Alignment of hypothesis %1 (0\u2013%2, log p %3) \u00b7 %4 output \u00d7 %5 source %6")
                .arg(state.hypothesis)
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
  steps_->setStepRange(int(map->weights.rows()));
}

bool Seq2SeqViews::showStep(const AlignmentViewState& state) {
  const auto& outcome = state.outcome;
  if (!outcome || !outcome->seq2seq || !state.source || !state.source->model.seq2seq) return false;
  const auto& run = *outcome->seq2seq;
  const int steps = stepCount(state);
  const int step = state.step;
  steps_->setStepValue(step);
  const auto& config = state.source->model.seq2seq->config();
  const attn::AttentionMap* map = currentMap(state);
  const auto& hyp = run.hypotheses[std::size_t(state.hypothesis)];
  render::AlignmentOverlay overlay;
  if (map) {
    overlay.rows = int(map->weights.rows());
    overlay.columns = int(map->weights.cols());
    if (steps > 0) overlay.focusRow = step;
    if (config.local && !hyp.positions.empty()) {
      overlay.bands = render::localWindowBands(hyp.positions, config.window, overlay.columns);
    }
  }
  steps_->setOverlay(overlay);
  render::DecodingFigureOptions options;
  options.colormap = state.colormap;
  options.window = config.local ? config.window : 0;
  showFigure(state, options);
  QString label = steps > 0 && map
                      ? tr("step %1 (0\u2013%2) \u00b7 %3").arg(step).arg(steps - 1).arg(stepLabel(*map, step))
                      : tr("no output");
  if (config.local && std::size_t(step) < hyp.positions.size()) {
    label += tr(" \u00b7 p = %1").arg(double(hyp.positions[std::size_t(step)]), 0, 'f', 2);
  }
  steps_->stepLabel()->setText(label);
  return true;
}

void Seq2SeqViews::showFigure(const AlignmentViewState& state, const render::DecodingFigureOptions& options) {
  steps_->setFigure(render::decodingFigure(*state.outcome->seq2seq, std::size_t(state.hypothesis), state.step,
                                           state.outcome->request.text, options));
}

QString Seq2SeqViews::summary(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->seq2seq;
  const QString best = run.hypotheses.empty() ? QString() : fromStd(run.hypotheses.front().text);
  return tr("alignment: %1 \u00b7 %2 %3 \u2192 %4 \u00b7 beam %5 \u00b7 %6 ms")
      .arg(state.source ? state.source->model.name : QString())
      .arg(run.source.size())
      .arg(page().text().units)
      .arg(quoted(best))
      .arg(state.outcome->request.beam)
      .arg(state.outcome->runMs, 0, 'f', 1);
}

AlignmentInputCount Seq2SeqViews::inputCount(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->seq2seq;
  return {tr("%1 %2 read").arg(run.source.size()).arg(page().text().units),
          std::count(run.unknown.begin(), run.unknown.end(), true), std::int64_t(run.unknown.size())};
}

}  // namespace attn::ui
