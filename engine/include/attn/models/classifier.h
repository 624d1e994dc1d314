// Text classifiers as tools/train/MODELS.md section 2 specifies and tools/train/classifier_torch.py trains:
// attention pooling (no query: s_i = w^T tanh(W x_i + b), one or more heads) over a bidirectional GRU,
// flat or hierarchical (words within each sentence, then sentences; Yang et al. 2016), and the two
// classifiers whose saliency needs no query either: an LSTM read through its gates, a CNN read through its
// global max pooling.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
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

// "kind" in config.json: "attention-pooling" (the default; "hierarchical": true makes it Hierarchical),
// "lstm" or "cnn".
enum class ClassifierKind { AttentionPooling, Hierarchical, Lstm, Cnn };

struct ClassifierConfig {
  std::string task;                 // "review sentiment"
  std::string trained_on;           // what the training data was, in a sentence (optional)
  std::vector<std::string> labels;  // class names, by id
  std::vector<std::string> vocab;   // id -> word ("<pad>" 0, "<unk>" 1)
  ClassifierKind kind = ClassifierKind::AttentionPooling;
  bool hierarchical = false;  // kind == Hierarchical
  int heads = 1;              // pooling heads (the word level when hierarchical); 0 for the LSTM and the CNN
  int embedding_size = 0;
  int hidden = 0;                // GRU: per direction; LSTM: its units
  int attention_size = 0;        // attention pooling only
  int channels = 0, kernel = 0;  // CNN: output channels, odd kernel width (zero padding (kernel - 1) / 2)
  // "saliency_on_deciding_words": the training script's held-out measure of the model's saliency (the share
  // on the words that decide the label, tools/train/train_sentiment.py), 0..1; -1 when the file has none.
  double held_out_saliency = -1.0;
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

  // Saliency without a query (flat models; empty when hierarchical): one weight per word, summing to 1.
  //   attention pooling: the pooling weights, mean over heads;
  //   LSTM: column sums of `written` over the whole map's sum (the share of the final cell state each word
  //         wrote);
  //   CNN:  per word, the weights of the channels whose winning window covers it, over their sum.
  Vector saliency;
  // LSTM, [units, words]: the input gate i_t, the forget gate f_t, and written = i_t * prod_{s>t} f_s, the
  // part of word t's candidate g_t still in the final cell state (c_T = sum_t written_t * g_t, exactly).
  Matrix input_gate, forget_gate, written;
  // CNN: the ReLU activations [channels, words]; each channel's winner (the first position of its
  // maximum, 0-based) and weight: max(0, W[predicted, c] - mean over labels of W[., c]), 0 when its maximum
  // is 0 (it adds nothing to any logit).
  Matrix activations;
  std::vector<int> winners;
  Vector channel_weights;
  int cnn_kernel = 0;  // the CNN's kernel width (its windows)

  // Word attention as a map for the generic views: rows = heads ("head 1", ...), columns = words; for
  // the LSTM and the CNN one row, "saliency".
  std::shared_ptr<const AttentionMap> word_map() const;
  // Every matrix the run computed, as maps over the words: the word map, then the LSTM's gates, `written`
  // and the gates averaged over the units (rows: mean f, mean i, saliency), or the CNN's activations and each
  // channel's weight over its winning window (whose column sums are the saliency before normalising).
  std::vector<std::shared_ptr<const AttentionMap>> maps() const;
};

// What `kind` is called in descriptions and views: "attention pooling", "hierarchical attention",
// "LSTM forget gate", "CNN max pooling".
std::string kind_name(ClassifierKind kind);

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
  // The same words read as other ids (a perturbation: the faithfulness curves of attn/models/word_faithfulness.h
  // put <unk> in for words): `input` a run's words after truncation, `ids` one per word, each in the vocabulary.
  // Errors: a count or an id that does not fit, sentence indices that do not number the words in order, more words
  // than the model reads.
  Result<ClassifierRun> run_ids(WordSplit input, std::vector<int> ids);

 private:
  std::shared_ptr<const ClassifierModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// Attribution of one label's logit to the run's words (attn/models/word_attribution.h), by a hand-written
// backward pass through the model's forward. `run` must come from a ClassifierRunner of `model`. A label
// out of range, integrated gradients' steps outside 1 .. 1024, or a run of another model are errors; the
// cancel flag is read between integrated gradients' steps (ErrorKind::Cancelled).
Result<WordAttribution> attribute_words(const ClassifierModel& model, const ClassifierRun& run,
                                        const WordAttributionOptions& options);

}  // namespace attn::models
