// Text classifier with attention pooling (no query: s_i = w^T tanh(W x_i + b), one or more heads) over a
// bidirectional GRU, flat or hierarchical (words within each sentence, then sentences; Yang et al.
// 2016), as tools/train/MODELS.md section 2 specifies and tools/train/classifier_torch.py trains.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
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

struct ClassifierConfig {
  std::string task;                 // "review sentiment"
  std::string trained_on;           // what the training data was, in a sentence (optional)
  std::vector<std::string> labels;  // class names, by id
  std::vector<std::string> vocab;   // id -> word ("<pad>" 0, "<unk>" 1)
  bool hierarchical = false;
  int heads = 1;  // pooling heads (the word level when hierarchical)
  int embedding_size = 0, hidden = 0, attention_size = 0;
  int max_words = 0;      // per input; per sentence when hierarchical
  int max_sentences = 0;  // hierarchical

  static Result<ClassifierConfig> parse(std::string_view json, const std::string& file);
};

// The words of a text as the classifier sees them: lower-cased, [a-z0-9']+ or one of . ! ?, which
// also end a sentence. Spans are byte ranges of the original text.
struct WordSplit {
  Labels words;
  std::vector<Span> spans;
  std::vector<int> sentence;  // sentence index of each word
  int sentences = 0;
};
WordSplit split_words(std::string_view text);

struct ClassifierRun {
  WordSplit input;  // after truncation
  std::vector<int> ids;
  std::vector<bool> unknown;  // word not in the vocabulary (<unk>)
  // [heads, words]: each head's pooling weights. Flat: a distribution over all words per head.
  // Hierarchical: the word-level weights, a distribution within each sentence per head.
  Matrix word_attention;
  Vector sentence_attention;         // hierarchical: one weight per sentence (sums to 1); else empty
  std::vector<float> probabilities;  // by label
  int predicted = 0;
  std::vector<std::string> warnings;  // truncation

  // Word attention as a map for the generic views: rows = heads ("head 1", ...), columns = words.
  std::shared_ptr<const AttentionMap> word_map() const;
};

class ClassifierModel {
 public:
  // A folder with config.json ("architectures": ["AttnScopeClassifier"]) and model.safetensors.
  static Result<std::shared_ptr<const ClassifierModel>> load(const std::filesystem::path& folder);
  static Result<std::shared_ptr<const ClassifierModel>> from_parts(ClassifierConfig config,
                                                                   const io::SafeTensors& weights);
  ~ClassifierModel();
  const ClassifierConfig& config() const;
  std::string description() const;  // "review sentiment · hierarchical attention · 2 heads · 96 k parameters"
  std::int64_t parameters() const;  // elements of every tensor the model uses
  std::vector<std::string> warnings() const;  // load-time notes: tensors of the file the model does not use

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit ClassifierModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ClassifierRunner {
 public:
  explicit ClassifierRunner(std::shared_ptr<const ClassifierModel> model);
  ~ClassifierRunner();
  ClassifierRunner(ClassifierRunner&&) noexcept;
  ClassifierRunner& operator=(ClassifierRunner&&) noexcept;

  // Empty text (no word) is an error; more words (or sentences) than the config allows are truncated
  // with a warning.
  Result<ClassifierRun> run(std::string_view text);

 private:
  std::shared_ptr<const ClassifierModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace attn::models
