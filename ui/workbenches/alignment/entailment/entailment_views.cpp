// AlignmentWorkbench's entailment parts: the hypothesis x premise heatmap, the view of one hypothesis word (the
// label, the hypothesis with the word outlined, the premise shaded by its attention), the run summary, the examples
// (pairs) and the message for an empty input of any model.
#include "workbenches/alignment/alignment_workbench.h"

#include "render/alignment_overlay.h"
#include "render/alignment_render.h"
#include "render/strings.h"
#include "views/heatmap_view.h"
#include "views/text_figure_view.h"
#include "workbenches/alignment/alignment_models.h"

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QSlider>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

void AlignmentWorkbench::updateEntailmentHeatmap(const attn::AttentionMap& map) {
  heatmap_->setMap(outcome_->entailmentMap);
  heatmapTitle_->setText(
      tr("Word-by-word attention \u00b7 %1 hypothesis \u00d7 %2 premise words \u00b7 each row is one "
         "hypothesis word's attention over the premise")
          .arg(map.weights.rows())
          .arg(map.weights.cols()));
  const QSignalBlocker block(stepSlider_);
  stepSlider_->setRange(0, std::max(0, int(map.weights.rows()) - 1));
}

void AlignmentWorkbench::updateEntailmentStep() {
  if (!outcome_ || !outcome_->entailment || !source_ || !source_->model.entailment) return;
  const auto& run = *outcome_->entailment;
  const int words = int(run.attention.rows());
  step_ = words > 0 ? std::clamp(step_, 0, words - 1) : 0;
  {
    const QSignalBlocker block(stepSlider_);
    stepSlider_->setValue(step_);
  }
  render::AlignmentOverlay overlay;
  overlay.rows = words;
  overlay.columns = int(run.attention.cols());
  if (words > 0) overlay.focusRow = step_;
  heatmap_->setOverlay(overlay);
  decodingFigure_ = render::entailmentFigure(run, source_->model.entailment->config(), step_, outcome_->request.text,
                                             outcome_->request.hypothesis, colormap_);
  decodingView_->setFigure(decodingFigure_);
  stepLabel_->setText(words > 0 ? tr("word %1 (0\u2013%2) \u00b7 %3")
                                      .arg(step_)
                                      .arg(words - 1)
                                      .arg(quoted(fromStd(run.hypothesis.words[std::size_t(step_)])))
                                : tr("no words"));
  emit stepChanged(step_);
}

QString AlignmentWorkbench::entailmentSummary() const {
  const auto& run = *outcome_->entailment;
  const auto& labels = source_->model.entailment->config().labels;
  const auto predicted = std::size_t(run.predicted);
  const QString label = predicted < labels.size() ? fromStd(labels[predicted]) : QString::number(run.predicted);
  const float p = predicted < run.probabilities.size() ? run.probabilities[predicted] : 0.0f;
  return tr("alignment: %1 \u00b7 %2 premise and %3 hypothesis words \u2192 %4 (%5) \u00b7 %6 ms")
      .arg(source_->model.name)
      .arg(run.premise.words.size())
      .arg(run.hypothesis.words.size())
      .arg(label, render::percentText(p))
      .arg(outcome_->runMs, 0, 'f', 1);
}

QString AlignmentWorkbench::emptyInputMessage() const {
  if (source_ && source_->model.isEntailment()) {
    return text().isEmpty()
               ? tr("The premise is empty: type a sentence to see what the hypothesis attends to. The view shows the "
                    "last pair.")
               : tr("The hypothesis is empty: type a sentence about the premise's scene. The view shows the last "
                    "pair.");
  }
  return (source_ ? source_->model.page() : *alignmentPages().front()).text().emptyInput;
}

}  // namespace attn::ui
