// `attnscope-cli align`: the Alignment tab without a window. Loads a bundled model by name (or a model
// folder), runs it on --text and writes what the tab draws with the same renderers: for a seq2seq model the
// alignment heatmap of one hypothesis (the step in view outlined, local-p's windows drawn) or the decoding
// figure (--view shading); for a review classifier the word shading with the sentence bars and the class
// probabilities; for an entailment model (--text the premise, --pair the hypothesis) the hypothesis x premise
// heatmap with the word in view outlined, or the label, the hypothesis and the premise shaded by that word's
// attention (--view shading). --csv writes the matrix (the alignment, the classifier's heads x words, the
// entailment model's hypothesis x premise words). A speech model says --text with espeak-ng (or reads --wav) and
// writes its phonemes x encoder steps alignment (the true phonemes from the synthesis among the notes).
#pragma once

#include "cli/headless.h"
#include "render/colormap.h"

#include "attn/models/seq2seq.h"

#include <QSize>
#include <QString>

#include <expected>
#include <string>

namespace attn::ui {

struct AlignJob {
  QString model;     // a bundled model's key or a model folder
  std::string text;  // raw bytes, as the engine's offsets refer to them
  bool hasText = false;
  QString wavPath;              // a speech model's audio file (instead of --text, which it says with espeak-ng)
  std::string voice = "en-us";  // the espeak-ng voice a speech model's --text is said in
  attn::models::AttentionShaping shaping;  // a speech model's weights (--sharpen, --smooth, --top-k, --window)
  std::string pair;                        // an entailment model's hypothesis, raw bytes
  bool hasPair = false;
  int beam = 1;  // seq2seq: 1 = greedy
  bool beamSet = false;
  int hypothesis = 0;  // 0 = the best
  bool hypothesisSet = false;
  bool stepSet = false;
  int step = -1;   // the output step to outline (0 = the first); -1: none
  int layer = -1;  // a ConvS2S model's decoder layer (0 = the first); -1: the layers' mean
  bool layerSet = false;
  enum class View { Heatmap, Shading } view = View::Heatmap;
  bool viewSet = false;
  QString outPath;  // .png, .svg or .pdf
  QString csvPath;
  QSize size{900, 700};  // the heatmap exactly; the width of the shading figure
  render::Colormap colormap = render::Colormap::Viridis;
};

// summary: "align: Dates · Bahdanau (additive) · 11 characters -> “2026-11-21” · beam 1 · 1.2 ms";
// notes: hypotheses with their scores, the label and probabilities, warnings; written: the files.
std::expected<RenderReport, RenderFailure> runAlign(const AlignJob& job);

// The kinds of model `align` runs, from the Alignment tab's registry of pages: "dates, headlines, ...".
QString alignKinds();
// `align --list`: the bundled models under the kind whose page shows each ("dates:", then "  key  name" lines).
QString alignModelList();

}  // namespace attn::ui
