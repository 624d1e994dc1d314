#include "workbenches/alignment/alignment_run.h"

#include <utility>

namespace attn::ui {

std::optional<attn::models::WordAttributionOptions> attributionOptions(const AlignmentRequest& request) {
  if (!request.attribution) return std::nullopt;
  attn::models::WordAttributionOptions options;
  options.method = *request.attribution;
  options.steps = kAlignmentAttributionSteps;
  return options;
}

void setAttribution(attn::Result<attn::models::WordAttribution> result, AlignmentOutcome& outcome) {
  if (result) {
    outcome.attribution = std::make_shared<const attn::models::WordAttribution>(std::move(*result));
  } else {
    outcome.attributionNote = QString::fromStdString(result.error().message());
  }
}

QStringList AlignmentOutcome::warnings() const {
  QStringList out = modelWarnings;
  const std::vector<std::string>* list = seq2seq      ? &seq2seq->warnings
                                         : classifier ? &classifier->warnings
                                         : entailment ? &entailment->warnings
                                                      : nullptr;
  if (speech) {
    for (const auto& w : speech->audio.warnings) out.append(QString::fromStdString(w));
  }
  if (list) {
    for (const auto& w : *list) out.append(QString::fromStdString(w));
  }
  return out;
}

std::shared_ptr<const attn::AttentionMap> alignmentMap(const attn::models::Seq2SeqRun& run, std::size_t h, int layer) {
  auto base = layer < 0 ? run.alignment(h) : run.layer_alignment(std::size_t(layer), h);
  if (!base) return nullptr;
  auto map = std::make_shared<attn::AttentionMap>(*base);
  map->col_labels = render::sourceColumnLabels(run);
  map->row_axis = run.frames ? "phonemes" : run.words ? "headline words" : "output characters";
  if (run.frames && !run.spans.empty()) {
    // A speech model's steps: their log-mel frames, 10 ms apart.
    map->col_axis = "audio (a step is " + std::to_string(10 * (run.spans[0].end - run.spans[0].begin)) + " ms)";
  } else {
    map->col_axis = run.words ? "source words" : "source characters";
  }
  return map;
}

std::shared_ptr<const attn::AttentionMap> markUnknown(const attn::models::ClassifierRun& run,
                                                      const std::shared_ptr<const attn::AttentionMap>& base) {
  if (!base) return nullptr;
  auto map = std::make_shared<attn::AttentionMap>(*base);
  for (std::size_t w = 0; w < map->col_labels.size() && w < run.unknown.size(); ++w) {
    if (run.unknown[w]) map->col_labels[w] += " (unk)";
  }
  return map;
}

std::shared_ptr<const attn::AttentionMap> wordMap(const attn::models::ClassifierRun& run) {
  return markUnknown(run, run.word_map());
}

void setSeq2SeqRun(attn::Result<attn::models::Seq2SeqRun> run, AlignmentOutcome& outcome) {
  if (!run) {
    outcome.error = std::move(run.error());
    return;
  }
  auto shared = std::make_shared<const attn::models::Seq2SeqRun>(std::move(*run));
  for (std::size_t h = 0; h < shared->hypotheses.size(); ++h) {
    outcome.alignments.push_back(alignmentMap(*shared, h));
    auto& layers = outcome.layerAlignments.emplace_back();
    for (std::size_t l = 0; l < shared->hypotheses[h].layers.size(); ++l) {
      layers.push_back(alignmentMap(*shared, h, int(l)));
    }
  }
  outcome.seq2seq = std::move(shared);
}

namespace {

// A seq2seq model that reads text (the dates' characters, the headlines' words).
class TextSeq2SeqRunner final : public AlignmentRunner {
 public:
  explicit TextSeq2SeqRunner(std::shared_ptr<const attn::models::Seq2SeqModel> model) : session_(std::move(model)) {}
  void run(const AlignmentRequest& request, AlignmentOutcome& outcome) override {
    attn::models::DecodeOptions options;
    options.beam = std::max(1, request.beam);
    setSeq2SeqRun(session_.run(request.text, options), outcome);
  }

 private:
  attn::models::Seq2SeqRunner session_;
};

}  // namespace

std::unique_ptr<AlignmentRunner> textSeq2SeqRunner(const AlignmentModel& model) {
  return std::make_unique<TextSeq2SeqRunner>(model.seq2seq);
}

}  // namespace attn::ui
