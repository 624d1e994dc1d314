// An entailment model's views: on the step page, the label with its probabilities, the hypothesis with the word in
// view outlined and the premise shaded by its attention, a slider over the hypothesis words, and the hypothesis x
// premise heatmap; both sentences shaded by an attribution of the predicted label (a Display option shared with the
// reviews); the run's summary and the message for an empty premise or hypothesis.
#pragma once

#include "workbenches/alignment/alignment_attribution.h"
#include "workbenches/alignment/alignment_views.h"

namespace attn::ui {

class EntailmentViews : public AlignmentViews {
  Q_OBJECT

 public:
  using AlignmentViews::AlignmentViews;

  void buildDisplay(QWidget* group, QFormLayout& form) override { attribution_.build(group, form, this); }
  void setOpen(bool open) override { attribution_.setOpen(open); }
  void addToRequest(AlignmentRequest& request) const override { attribution_.addToRequest(request); }
  QString emptyInputMessage(const QString& text) const override;
  void showMaps(const AlignmentViewState& state) override;
  int stepCount(const AlignmentViewState& state) const override;
  bool showStep(const AlignmentViewState& state) override;
  const attn::AttentionMap* currentMap(const AlignmentViewState& state) const override;
  QString summary(const AlignmentViewState& state) const override;
  AlignmentInputCount inputCount(const AlignmentViewState& state) const override;
  // The hypothesis (the tab's second input) as the section's "pair" (entailment_session.h).
  void save(AlignmentSection& section, const QString& pair) const override;
  void restore(const AlignmentSection& section, QString& pair) override;

 private:
  AttributionDisplay attribution_;
};

std::unique_ptr<AlignmentViews> makeEntailmentViews(const AlignmentPage& page, QObject* parent);

}  // namespace attn::ui
