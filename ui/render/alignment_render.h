// The Alignment tab's figures of shaded text, as pure functions of a run: a decoding step's attention over
// the source characters; a review's words per pooling head, its sentences and its class probabilities; an
// entailment pair's label and one hypothesis word's attention over the premise.
// The tab, attnscope-cli align and the tests draw with these (what goes over the heatmap is in
// render/alignment_overlay.h).
#pragma once

#include "attn/core.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/seq2seq.h"
#include "attn/models/word_attribution.h"
#include "render/colormap.h"
#include "render/text_figure.h"

#include <QString>

#include <memory>
#include <string_view>
#include <vector>

namespace attn::ui::render {

// A hypothesis' log-probability as listed: three decimals, or two significant digits when it rounds to
// zero there (a confident model's best hypothesis scores -0.00004, not "-0.000").
QString logProbText(float logProb);

// A probability in percent with one decimal; one that would round to 100.0 % or 0.0 % without being it
// reads "> 99.9 %" or "< 0.1 %".
QString percentText(float probability);

// Column labels of an alignment: the characters as typed, an unknown one marked "(unk)".
attn::Labels sourceColumnLabels(const attn::models::Seq2SeqRun& run);

struct DecodingFigureOptions {
  Colormap colormap = Colormap::Viridis;
  int window = 0;  // local-p's D: the source characters inside the step's window get a bar; 0 for global
};
// The output of `hypothesis` with the step in view outlined, and the source text shaded by that step's
// attention row (the heatmap's colour map, weight / the row's largest weight); unknown characters red and
// underlined; a truncated input's unread rest as a grey note.
TextFigure decodingFigure(const attn::models::Seq2SeqRun& run, std::size_t hypothesis, int step, std::string_view input,
                          const DecodingFigureOptions& options);

// One reading of saliency without a query: a flat review classifier and its run on the text.
struct SaliencyReading {
  std::shared_ptr<const attn::models::ClassifierModel> model;
  std::shared_ptr<const attn::models::ClassifierRun> run;
};

// What a classifier's saliency over the words is, in a line.
QString saliencyMeaning(attn::models::ClassifierKind kind);

// A word attribution as the review and entailment figures shade it: the scores of the predicted label's logit (RdBu,
// centred on 0, red for the label and blue against it, the largest |score| at full colour) under the other shadings,
// or, when the method refused the run, `note` as a warning.
struct AttributionShading {
  std::shared_ptr<const attn::models::WordAttribution> attribution;
  attn::models::WordAttributionMethod method = attn::models::WordAttributionMethod::GradientXInput;
  int steps = 0;  // integrated gradients
  QString note;
};

// A review: the predicted label and the class probabilities, the text shaded by each pooling head's word
// weights (one hue per head when there are several) or by the LSTM's or the CNN's saliency, the
// hierarchical model's sentence weights as bars; then, when `readings` has any, the same text shaded by
// each reading's saliency with its prediction and its held-out share on the deciding words.
TextFigure reviewFigure(const attn::models::ClassifierRun& run, const attn::models::ClassifierConfig& config,
                        std::string_view input, Colormap colormap, const std::vector<SaliencyReading>& readings = {},
                        const AttributionShading& attribution = {});

// An entailment pair: the predicted label and the label probabilities, the hypothesis with word `step` outlined,
// and the premise shaded by that word's attention row (weight / the row's largest weight); unknown words red
// and underlined.
TextFigure entailmentFigure(const attn::models::EntailmentRun& run, const attn::models::EntailmentConfig& config,
                            int step, std::string_view premise, std::string_view hypothesis, Colormap colormap,
                            const AttributionShading& attribution = {});

}  // namespace attn::ui::render
