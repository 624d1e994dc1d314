// Character-level seq2seq with attention: a bidirectional GRU encoder and a GRU decoder with Bahdanau
// (additive) or Luong (dot, general, concat; global or local-p) attention, or the convolutional model of
// Gehring et al. 2017 (ConvS2S: gated convolutions, one attention per decoder layer), as
// tools/train/MODELS.md section 1 specifies and tools/train/seq2seq_torch.py (convs2s_torch.py) trains; and the
// speech recogniser of section 6 (Chorowski et al. 2015: log-mel frames in, phonemes out, location-aware
// attention; speech_torch.py).
// Greedy and beam-search decoding keep every step's attention row (for local-p also its predicted position
// p_t; for ConvS2S every decoder layer's row) for every hypothesis.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/trace.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {
class SafeTensors;
}

namespace attn::models {

enum class Seq2SeqAttention { Bahdanau, Luong, ConvS2S, Location };
enum class Seq2SeqScore { Additive, Dot, General, Concat };

struct Seq2SeqConfig {
  std::string task;        // "date normalisation"
  std::string trained_on;  // what the training data was, in a sentence (optional)
  // "unit": what one source and one output id is: a character (the default), or a word (split_words of
  // classifier.h without the terminators . ! ?; the output's words are joined by spaces).
  bool words = false;
  // "unit": "frame": a speech model. Its source is log-mel frames (audio.h's MelSettings, `feature_bands` of them),
  // `feature_stack` consecutive frames to an encoder step, and its outputs are phonemes (joined by spaces).
  bool frames = false;
  int feature_bands = 0, feature_stack = 0;
  // Location-aware attention (Chorowski et al.): the previous alignment convolved with `location_filters` filters
  // of odd width `location_width`, fed into the additive score.
  int location_filters = 0, location_width = 0;
  Seq2SeqAttention attention = Seq2SeqAttention::Bahdanau;
  Seq2SeqScore score = Seq2SeqScore::Additive;
  bool local = false;                     // Luong local-p (general score)
  int window = 0;                         // local-p: D
  std::vector<std::string> source_vocab;  // id -> character or word ("<pad>" 0, "<unk>" 1)
  std::vector<std::string> target_vocab;  // id -> character or word ("<pad>" 0, "<s>" 1, "</s>" 2)
  int embedding_size = 0, encoder_hidden = 0, decoder_hidden = 0, attention_size = 0;
  int max_source_length = 0, max_target_length = 0;
  // ConvS2S: embedding_size is the one width d; the GRU sizes above are unused (0). A speech model: the encoder's
  // bidirectional GRU layers.
  int encoder_layers = 0, encoder_kernel = 0, decoder_layers = 0, decoder_kernel = 0;

  // Parses config.json; every error names the file and the key.
  static Result<Seq2SeqConfig> parse(std::string_view json, const std::string& file);
  // "Bahdanau (additive)", "Luong global (general)", "Luong local-p (D = 4)", "ConvS2S (3 decoder layers)",
  // "location-aware (10 filters of 31 steps)"
  std::string variant_name() const;
};

// Decoding as tools/train/seq2seq_torch.py's beam_search makes MODELS.md precise: each step keeps the k
// best extensions of the alive hypotheses (ties: the id sequences compared, lower id first); those that
// emit </s> or reach max_steps ids leave the beam for the ended list; the search stops when the k best of
// ended + alive have all ended and returns the k best ended ones.
// How a location-aware (speech) model's scores e_j become its weights at decode time: Chorowski et al. 2015's
// section 2.3 (sharpening with beta, smoothing with the sigmoid, keeping the top k) and the window around the
// previous alignment's median that Bahdanau et al. 2016 decode long utterances with. The defaults are the model's
// own softmax, the one it was trained with: any other setting is an experiment on how it reads, not how it learnt.
struct AttentionShaping {
  float sharpen = 1.0f;  // beta: softmax(beta e); above 1 sharper, below flatter (0 to 100, not 0)
  bool smooth = false;   // sigmoid(e_j) / sum sigmoid(e) instead of the softmax (beta then stays 1)
  int top_k = 0;         // only the k highest-scoring encoder steps, renormalised; 0: every step
  int window = 0;        // only the steps within +-window of the previous alignment's median; 0: every step
  bool shaped() const { return sharpen != 1.0f || smooth || top_k > 0 || window > 0; }
  std::string problem() const;  // why these settings cannot decode ("sharpening beta is 0; ..."), or empty
  bool operator==(const AttentionShaping&) const = default;
};

struct DecodeOptions {
  int beam = 1;                  // 1: greedy (from 1 to 256)
  std::optional<int> max_steps;  // default: the config's max_target_length
  AttentionShaping shaping;      // location-aware (speech) models only
};

struct Hypothesis {
  std::vector<int> ids;          // target ids, without <s>; ends with </s> when the model emitted it
  std::string text;              // the characters (words: the words, a space between), without </s>
  float log_prob = 0.0f;         // sum of log-softmax over the emitted ids
  bool finished = false;         // emitted </s>
  Matrix attention;              // [ids.size(), source length]: the row of the step that emitted each id
                                 // (ConvS2S: the mean of its decoder layers' rows)
  std::vector<Matrix> layers;    // ConvS2S: each decoder layer's rows [ids.size(), source length]; else empty
  std::vector<float> positions;  // local-p: p_t per step; empty otherwise
  Labels labels;                 // one per id: its character or word, "</s>" for the end (the alignment's rows)
};

struct Seq2SeqRun {
  Labels source;            // one label per source character (as typed; "<unk>" characters too) or word; a speech
                            // model's encoder steps: the time at the step's start ("0.27 s")
  std::vector<Span> spans;  // byte span of each source character or word in the input text; a speech model's
                            // encoder steps: their log-mel frames [stack j, stack (j + 1))
  std::vector<int> source_ids;
  std::vector<bool> unknown;           // source unit not in the vocabulary (decoded as <unk>)
  std::vector<Hypothesis> hypotheses;  // best first; greedy: one
  std::vector<std::string> warnings;   // e.g. "input truncated to 64 characters (of 10000)"
  bool words = false;                  // the model's units are words (Seq2SeqConfig::words)
  bool frames = false;                 // a speech model's run (run_frames)

  // The best hypothesis' alignment as a map for the generic views: rows = output characters
  // ("</s>" for the end), columns = source characters.
  std::shared_ptr<const AttentionMap> alignment(std::size_t hypothesis = 0) const;
  // ConvS2S: decoder layer `layer`'s map (from 0; named "decoder layer 0", ...), where alignment() is the
  // layers' mean; null for other models or when out of range.
  std::shared_ptr<const AttentionMap> layer_alignment(std::size_t layer, std::size_t hypothesis = 0) const;
};

class Seq2SeqModel {
 public:
  // A folder with config.json ("architectures": ["AttnScopeSeq2Seq"]) and model.safetensors. Every
  // missing or mis-shaped tensor is an error naming the file, the tensor, the expected and found shape.
  static Result<std::shared_ptr<const Seq2SeqModel>> load(const std::filesystem::path& folder);
  static Result<std::shared_ptr<const Seq2SeqModel>> from_parts(Seq2SeqConfig config, const io::SafeTensors& weights);

  ~Seq2SeqModel();
  const Seq2SeqConfig& config() const;
  std::string description() const;            // "date normalisation · Luong global (general) · 412 k parameters"
  std::int64_t parameters() const;            // elements of every tensor the model uses
  std::vector<std::string> warnings() const;  // load-time notes: tensors of the file the model does not use

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Seq2SeqModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Seq2SeqRunner {
 public:
  explicit Seq2SeqRunner(std::shared_ptr<const Seq2SeqModel> model);
  ~Seq2SeqRunner();
  Seq2SeqRunner(Seq2SeqRunner&&) noexcept;
  Seq2SeqRunner& operator=(Seq2SeqRunner&&) noexcept;

  const Seq2SeqModel& model() const { return *model_; }

  // Empty text is an error ("nothing to decode"), as is a word model's text without a word; text longer than
  // max_source_length units is truncated with a warning; units outside the vocabulary are decoded as <unk> and
  // flagged in `unknown`.
  Result<Seq2SeqRun> run(std::string_view text, const DecodeOptions& options = {});
  // Source ids as given (tests, parity).
  Result<Seq2SeqRun> run_ids(const std::vector<int>& source_ids, const DecodeOptions& options = {});
  // A speech model on log-mel frames [frames, feature_bands] (audio::log_mel): fewer frames than one encoder step
  // is an error; more than max_source_length steps are cut with a warning ("audio cut at 30.00 s (of 41.20 s)", frames
  // x 10 ms).
  Result<Seq2SeqRun> run_frames(const Matrix& log_mel, const DecodeOptions& options = {});

 private:
  std::shared_ptr<const Seq2SeqModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// "architectures" of a config.json, to tell the bundled families apart before loading
// ("AttnScopeSeq2Seq", "AttnScopeClassifier", "AttnScopeCaptioner", or a transformers name); empty when
// absent or unreadable.
std::string config_architecture(const std::filesystem::path& folder);

}  // namespace attn::models
