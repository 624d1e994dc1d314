// What the Alignment tab's worker and `attnscope-cli align` pass around: a loaded model, a request and its
// outcome (immutable values, sent between threads), and a page's runner, which turns the one into the other. No
// widgets here: the pages' runs (alignment/<kind>/<kind>_run.cpp) and the command line include it.
#pragma once

#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/seq2seq.h"
#include "attn/models/word_attribution.h"
#include "attn/trace.h"
#include "render/alignment_render.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/speech/speech_input.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

// A loaded model. Immutable once sent.
struct AlignmentSource {
  quint64 serial = 0;
  AlignmentModel model;
  double loadMs = 0.0;
  bool isSeq2Seq() const { return model.isSeq2Seq(); }
};

struct AlignmentRequest {
  std::string text;             // UTF-8, as typed (an entailment model's premise)
  std::string hypothesis;       // an entailment model's hypothesis, UTF-8
  int beam = 1;                 // seq2seq: 1 = greedy
  bool readings = false;        // a flat classifier: also run the bundled readings of saliency (kReadingModels)
  QString wavPath;              // a speech model: this audio file instead of `text` said by espeak-ng
  std::string voice = "en-us";  // a speech model: the espeak-ng voice `text` is said in
  attn::models::AttentionShaping shaping;  // a speech model: how its scores become weights (the defaults: its own)
  // A review or entailment model: also explain the predicted label's logit by this method (integrated gradients:
  // kAlignmentAttributionSteps steps from the zero embedding).
  std::optional<attn::models::WordAttributionMethod> attribution;
};

inline constexpr int kAlignmentAttributionSteps = 256;

// The bundled review classifiers whose saliency needs no query, in the order the tab shows them: attention
// pooling, the LSTM's gates, the CNN's max pooling.
inline constexpr const char* kReadingModels[] = {"sentiment-pooling", "sentiment-lstm", "sentiment-cnn"};

struct AlignmentOutcome {
  quint64 generation = 0;
  quint64 sourceSerial = 0;
  AlignmentRequest request;
  std::shared_ptr<const attn::models::Seq2SeqRun> seq2seq;
  std::shared_ptr<const SpeechInput> speech;  // a speech model's audio, true phonemes and log-mel frames
  // Each hypothesis' alignment (rows: output characters, "</s>" for the end; columns: source characters,
  // an unknown one marked "(unk)"), in the run's order (best first).
  std::vector<std::shared_ptr<const attn::AttentionMap>> alignments;
  // ConvS2S: per hypothesis, each decoder layer's map (the alignment above is their mean); empty lists otherwise.
  std::vector<std::vector<std::shared_ptr<const attn::AttentionMap>>> layerAlignments;
  std::shared_ptr<const attn::models::ClassifierRun> classifier;
  std::shared_ptr<const attn::AttentionMap> wordMap;  // classifier: heads x words (or the saliency row)
  // classifier: every matrix of the run (ClassifierRun::maps(), unknown words marked), wordMap first
  std::vector<std::shared_ptr<const attn::AttentionMap>> maps;
  // request.readings: the bundled readings that could run on the text (the open model's own run where it is
  // one of them), and why any other could not ("sentiment-cnn: ...").
  std::vector<render::SaliencyReading> readings;
  QStringList readingNotes;
  std::shared_ptr<const attn::models::EntailmentRun> entailment;
  std::shared_ptr<const attn::AttentionMap> entailmentMap;  // hypothesis words x premise words
  // request.attribution: every word's score (an entailment pair's premise, then its hypothesis), or why there is none.
  std::shared_ptr<const attn::models::WordAttribution> attribution;
  QString attributionNote;
  std::optional<attn::Error> error;  // the run was refused (nothing else is set)
  QStringList modelWarnings;         // the model's load-time warnings: non-finite weights, tensors not used
  double runMs = 0.0;
  bool ok() const { return seq2seq != nullptr || classifier != nullptr || entailment != nullptr; }
  QStringList warnings() const;  // the model's, then the run's
};

// The alignment of hypothesis `h` of a run as the heatmap shows it (unknown source characters marked); a ConvS2S
// run's decoder layer `layer` (from 0) instead of the layers' mean when layer >= 0 (null when there is none).
std::shared_ptr<const attn::AttentionMap> alignmentMap(const attn::models::Seq2SeqRun& run, std::size_t h,
                                                       int layer = -1);
// The word map of a classifier run with unknown words marked; `base`, one of its maps, with them marked.
std::shared_ptr<const attn::AttentionMap> wordMap(const attn::models::ClassifierRun& run);
std::shared_ptr<const attn::AttentionMap> markUnknown(const attn::models::ClassifierRun& run,
                                                      const std::shared_ptr<const attn::AttentionMap>& base);

// A page's session of one model (scratch buffers, kept on the worker thread while the model is open): the page's run.
class AlignmentRunner {
 public:
  virtual ~AlignmentRunner() = default;
  // Runs `request`: sets the outcome's run and its maps, or its error.
  virtual void run(const AlignmentRequest& request, AlignmentOutcome& outcome) = 0;
};

// The options request.attribution asks for (the predicted label), or none.
std::optional<attn::models::WordAttributionOptions> attributionOptions(const AlignmentRequest& request);
// Sets outcome.attribution, or outcome.attributionNote with the reason it failed.
void setAttribution(attn::Result<attn::models::WordAttribution> result, AlignmentOutcome& outcome);

// Sets a seq2seq run and each hypothesis' alignments (and ConvS2S's layers') on `outcome`, or the run's error.
void setSeq2SeqRun(attn::Result<attn::models::Seq2SeqRun> run, AlignmentOutcome& outcome);
// The runner of a seq2seq model that reads text (the dates' and the headlines' pages share it).
std::unique_ptr<AlignmentRunner> textSeq2SeqRunner(const AlignmentModel& model);

}  // namespace attn::ui
