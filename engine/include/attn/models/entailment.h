// Textual entailment with word-by-word attention (Rocktaeschel et al. 2016), as tools/train/MODELS.md
// section 5 specifies and tools/train/entailment_torch.py trains: an LSTM over the premise, an LSTM over the
// hypothesis started from the premise's final state, and for every hypothesis word t an attention row over
// the premise (with the running representation r_t); the pair (r_N, h_N) is classified as entailment,
// contradiction or neutral.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/word_attribution.h"
#include "attn/trace.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {
class SafeTensors;
}

namespace attn::models {

struct EntailmentConfig {
  std::string task;
  std::string trained_on;           // the training data in a sentence (optional)
  std::vector<std::string> labels;  // by id: "entailment", "contradiction", "neutral"
  std::vector<std::string> vocab;   // id -> word ("<pad>" 0, "<unk>" 1)
  int embedding_size = 0;
  int hidden = 0;     // k: both LSTMs and the attention
  int max_words = 0;  // per sentence; longer ones are truncated with a warning

  static Result<EntailmentConfig> parse(std::string_view json, const std::string& file);
};

struct EntailmentRun {
  // The words as the model reads them: split_words without the sentence terminators (. ! ?), after
  // truncation; spans are byte ranges of each sentence as given.
  WordSplit premise, hypothesis;
  std::vector<int> premise_ids, hypothesis_ids;
  std::vector<bool> premise_unknown, hypothesis_unknown;  // not in the vocabulary (<unk>)
  // [hypothesis words, premise words]: row t is alpha_t, hypothesis word t's attention over the premise.
  Matrix attention;
  std::vector<float> probabilities;  // by label
  int predicted = 0;
  std::vector<std::string> warnings;  // truncation, non-finite weights

  // The attention as a map: rows the hypothesis words, columns the premise words, unknown words marked
  // "(unk)" after the word.
  std::shared_ptr<const AttentionMap> map() const;
};

class EntailmentModel {
 public:
  // A folder with config.json ("architectures": ["AttnScopeEntailment"]) and model.safetensors.
  static Result<std::shared_ptr<const EntailmentModel>> load(const std::filesystem::path& folder);
  static Result<std::shared_ptr<const EntailmentModel>> from_parts(EntailmentConfig config,
                                                                   const io::SafeTensors& weights);
  ~EntailmentModel();
  const EntailmentConfig& config() const;
  std::string description() const;  // "textual entailment · word-by-word attention · 64 units · 87 k parameters"
  std::int64_t parameters() const;
  std::vector<std::string> warnings() const;  // load-time notes: tensors not used, non-finite weights

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit EntailmentModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class EntailmentRunner {
 public:
  explicit EntailmentRunner(std::shared_ptr<const EntailmentModel> model);
  ~EntailmentRunner();
  EntailmentRunner(EntailmentRunner&&) noexcept;
  EntailmentRunner& operator=(EntailmentRunner&&) noexcept;

  // A premise or hypothesis without a word is an error naming which; more words than max_words are
  // truncated with a warning.
  Result<EntailmentRun> run(std::string_view premise, std::string_view hypothesis);
  // The same words read as other ids (a perturbation: the faithfulness curves of attn/models/word_faithfulness.h
  // put <unk> in for words): a run's premise and hypothesis words, one id per word, each in the vocabulary.
  // Errors name the sentence: no words, a count or an id that does not fit, more words than max_words.
  Result<EntailmentRun> run_ids(WordSplit premise, WordSplit hypothesis, std::vector<int> premise_ids,
                                std::vector<int> hypothesis_ids);

 private:
  std::shared_ptr<const EntailmentModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// Attribution of one label's logit to the premise's and the hypothesis's words (attn/models/word_attribution.h).
// A label other than -1 and 0 .. labels - 1, integrated gradients' steps outside 1 .. 1024 and a run of another
// model (word ids outside the vocabulary) are errors; options.cancel stops integrated gradients between steps.
Result<WordAttribution> attribute_words(const EntailmentModel& model, const EntailmentRun& run,
                                        const WordAttributionOptions& options);

}  // namespace attn::models
