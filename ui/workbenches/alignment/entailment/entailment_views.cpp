// An entailment model's views (entailment_views.h).
#include "workbenches/alignment/entailment/entailment_views.h"

#include "render/alignment_overlay.h"
#include "render/alignment_render.h"
#include "render/strings.h"
#include "views/heatmap_view.h"
#include "workbenches/alignment/entailment/entailment_session.h"
#include "workbenches/alignment/alignment_step_page.h"

#include <QLabel>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

std::unique_ptr<AlignmentViews> makeEntailmentViews(const AlignmentPage& page, QObject* parent) {
  return std::make_unique<EntailmentViews>(page, parent);
}

QString EntailmentViews::emptyInputMessage(const QString& text) const {
  return text.isEmpty()
             ? tr("The premise is empty: type a sentence to see what the hypothesis attends to. The view shows the "
                  "last pair.")
             : tr("The hypothesis is empty: type a sentence about the premise's scene. The view shows the last "
                  "pair.");
}

const attn::AttentionMap* EntailmentViews::currentMap(const AlignmentViewState& state) const {
  return state.outcome ? state.outcome->entailmentMap.get() : nullptr;
}

int EntailmentViews::stepCount(const AlignmentViewState& state) const {
  return state.outcome && state.outcome->entailment ? int(state.outcome->entailment->attention.rows()) : 0;
}

void EntailmentViews::showMaps(const AlignmentViewState& state) {
  steps_->setLayers({});
  const attn::AttentionMap* map = currentMap(state);
  if (!map || !state.outcome->entailment) {
    steps_->heatmap()->clear();
    steps_->heatmapTitle()->clear();
    return;
  }
  steps_->heatmap()->setMap(state.outcome->entailmentMap);
  steps_->heatmapTitle()->setText(
      tr("Word-by-word attention \u00b7 %1 hypothesis \u00d7 %2 premise words \u00b7 each row is one "
         "hypothesis word's attention over the premise")
          .arg(map->weights.rows())
          .arg(map->weights.cols()));
  steps_->setStepRange(int(map->weights.rows()));
}

bool EntailmentViews::showStep(const AlignmentViewState& state) {
  const auto& outcome = state.outcome;
  if (!outcome || !outcome->entailment || !state.source || !state.source->model.entailment) return false;
  const auto& run = *outcome->entailment;
  const int words = int(run.attention.rows());
  const int step = state.step;
  steps_->setStepValue(step);
  render::AlignmentOverlay overlay;
  overlay.rows = words;
  overlay.columns = int(run.attention.cols());
  if (words > 0) overlay.focusRow = step;
  steps_->heatmap()->setOverlay(overlay);
  steps_->setFigure(render::entailmentFigure(run, state.source->model.entailment->config(), step, outcome->request.text,
                                             outcome->request.hypothesis, state.colormap,
                                             attributionShading(*outcome)));
  steps_->stepLabel()->setText(words > 0 ? tr("word %1 (0\u2013%2) \u00b7 %3")
                                               .arg(step)
                                               .arg(words - 1)
                                               .arg(quoted(fromStd(run.hypothesis.words[std::size_t(step)])))
                                         : tr("no words"));
  return true;
}

QString EntailmentViews::summary(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->entailment;
  const auto& labels = state.source->model.entailment->config().labels;
  const auto predicted = std::size_t(run.predicted);
  const QString label = predicted < labels.size() ? fromStd(labels[predicted]) : QString::number(run.predicted);
  const float p = predicted < run.probabilities.size() ? run.probabilities[predicted] : 0.0f;
  return tr("alignment: %1 \u00b7 %2 premise and %3 hypothesis words \u2192 %4 (%5) \u00b7 %6 ms")
      .arg(state.source->model.name)
      .arg(run.premise.words.size())
      .arg(run.hypothesis.words.size())
      .arg(label, render::percentText(p))
      .arg(state.outcome->runMs, 0, 'f', 1);
}

AlignmentInputCount EntailmentViews::inputCount(const AlignmentViewState& state) const {
  const auto& run = *state.outcome->entailment;
  const auto unknown = std::count(run.premise_unknown.begin(), run.premise_unknown.end(), true) +
                       std::count(run.hypothesis_unknown.begin(), run.hypothesis_unknown.end(), true);
  return {tr("%1 premise words, %2 hypothesis words").arg(run.premise.words.size()).arg(run.hypothesis.words.size()),
          std::int64_t(unknown), std::int64_t(run.premise_unknown.size() + run.hypothesis_unknown.size())};
}

void EntailmentViews::save(AlignmentSection& section, const QString& pair) const {
  setEntailmentPair(section, pair.toStdString());
  attribution_.save(section);
}

void EntailmentViews::restore(const AlignmentSection& section, QString& pair) {
  pair = QString::fromStdString(entailmentPair(section));
  attribution_.restore(section);
}

}  // namespace attn::ui
