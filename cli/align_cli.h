// `attnscope-cli align`: the Alignment tab without a window. Loads a bundled model by name (or a model
// folder), runs it on --text and writes what the tab draws with the same renderers: for a seq2seq model the
// alignment heatmap of one hypothesis (the step in view outlined, local-p's windows drawn) or the decoding
// figure (--view shading); for a review classifier the word shading with the sentence bars and the class
// probabilities; for an entailment model (--text the premise, --pair the hypothesis) the hypothesis x premise
// heatmap with the word in view outlined, or the label, the hypothesis and the premise shaded by that word's
// attention (--view shading). --csv writes the matrix (the alignment, the classifier's heads x words, the
// entailment model's hypothesis x premise words). A speech model says --text with espeak-ng (or reads --wav) and
// writes its phonemes x encoder steps alignment (the true phonemes from the synthesis among the notes).
// Each kind's part is behind its page (AlignmentPage::runCli, workbenches/alignment/<kind>/<kind>_cli.cpp): this
// file checks what the job asks of every kind, loads the model and hands the job to the page that shows it.
#pragma once

#include "cli/headless.h"
#include "workbenches/alignment/alignment_cli.h"

#include <QString>

#include <expected>

namespace attn::ui {

// summary: "align: Dates · Bahdanau (additive) · 11 characters -> “2026-11-21” · beam 1 · 1.2 ms";
// notes: hypotheses with their scores, the label and probabilities, warnings; written: the files.
std::expected<RenderReport, RenderFailure> runAlign(const AlignJob& job);

// The kinds of model `align` runs, from the Alignment tab's registry of pages: "dates, headlines, ...".
QString alignKinds();
// `align --list`: the bundled models under the kind whose page shows each ("dates:", then "  key  name" lines).
QString alignModelList();

}  // namespace attn::ui
