// The views of a seq2seq model that reads text (the dates' and the headlines' pages, and the base of the speech
// views): on the step page, the decoding with the step in view outlined and the source shaded by its attention, the
// step slider, and the alignment heatmap with that row outlined (for local-p each step's p_t and window; ConvS2S
// one heatmap per decoder layer, then their mean).
#pragma once

#include "render/alignment_render.h"
#include "workbenches/alignment/alignment_views.h"

namespace attn::ui {

class Seq2SeqViews : public AlignmentViews {
  Q_OBJECT

 public:
  using AlignmentViews::AlignmentViews;

  void showMaps(const AlignmentViewState& state) override;
  int stepCount(const AlignmentViewState& state) const override;
  bool showStep(const AlignmentViewState& state) override;
  const attn::AttentionMap* currentMap(const AlignmentViewState& state) const override;
  QString summary(const AlignmentViewState& state) const override;
  AlignmentInputCount inputCount(const AlignmentViewState& state) const override;

 protected:
  // The step's figure: the decoding with the source shaded (a speech model's spectrogram instead).
  virtual void showFigure(const AlignmentViewState& state, const render::DecodingFigureOptions& options);
};

}  // namespace attn::ui
