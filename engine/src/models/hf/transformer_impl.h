// The loaded weights of a TransformerModel in the layout the forward pass wants: every linear map as
// [in, out] row-major (x W is one GEMM), Q, K and V fused into one [d, 3d] matrix with 1/sqrt(d_head)
// folded into the Q columns and bias, so a layer starts with a single sgemm. Internal to engine/models.
#pragma once

#include "attn/models/transformer.h"
#include "decoder_impl.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::detail {
class TensorReader;
}

namespace attn::models {

struct LayerWeights {
  Matrix qkv;          // [d, 3d]: Q (scaled) | K | V
  RowVector qkv_bias;  // [3d]
  Matrix out;          // [d, d]
  RowVector out_bias;
  // Post-LN (BERT, DistilBERT): norm1 after attention, norm2 after the FFN.
  // Pre-LN (GPT-2, ViT): norm1 before attention, norm2 before the FFN.
  RowVector norm1_gamma, norm1_beta, norm2_gamma, norm2_beta;
  Matrix fc1;  // [d, ffn]
  RowVector fc1_bias;
  Matrix fc2;  // [ffn, d]
  RowVector fc2_bias;
};

struct TransformerModel::Impl {
  TransformerConfig config;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  // Why the folder's tokenizer could not be read (the file, the line or byte, the reason), when it could not:
  // run_text says this instead of only "no tokenizer".
  std::optional<Error> tokenizer_error;

  Matrix word;                        // [vocab, d]; also the tied output embedding
  Matrix positions;                   // [max_positions, d] (ViT: [patches + 1, d])
  Matrix types;                       // [type_vocab, d] (BERT)
  RowVector embed_gamma, embed_beta;  // BERT/DistilBERT embedding layer norm

  // ViT
  Matrix patch;  // [C * p * p, d], rows in (channel, y, x) order as the conv weight flattens
  RowVector patch_bias, class_token;

  std::vector<LayerWeights> layers;
  RowVector final_gamma, final_beta;  // GPT-2 ln_f, ViT layernorm

  // Prediction heads.
  bool has_head = false;
  Matrix head_dense;  // MLM transform [d, d] (BERT: cls.predictions.transform.dense; DistilBERT: vocab_transform)
  RowVector head_dense_bias, head_gamma, head_beta;
  Matrix decoder;          // [vocab, d] when the file has an untied output embedding; empty: use `word`
  RowVector decoder_bias;  // [vocab] (may be empty: GPT-2)
  Matrix classifier;       // ViT [d, labels]
  RowVector classifier_bias;

  std::unique_ptr<DecoderWeights> lm_weights;  // Family::Decoder: its weights instead of the fields above

  std::vector<std::string> warnings;
  std::string card;    // Markdown about the file (a GGUF file's types and metadata); empty for a folder
  std::string format;  // "GGUF Q4_K", shown in the description; empty for a folder
  std::int64_t parameters = 0;

  const Matrix& output_embedding() const { return decoder.size() != 0 ? decoder : word; }
  bool post_ln() const { return config.family == Family::Bert || config.family == Family::DistilBert; }
};

// Family::Decoder's tensors (Hugging Face's names, with the "model." or "language_model.model." prefix) into
// m.lm_weights; with a checking reader, only checked. `layer_done(i)` reports progress and may cancel (its error is
// returned).
Result<void> load_decoder(TransformerModel::Impl& m, attn::detail::TensorReader& r,
                          const std::function<Result<void>(int layer)>& layer_done);

// The k most likely of `logits` (softmax probabilities), with their display text from the tokenizer or labels.
std::vector<Prediction::Candidate> top_k(const RowVector& logits, int k, const text::Tokenizer* tok,
                                         const std::vector<std::string>* labels);
// A token's label in the views: WordPiece's entry as it is ("##ing"), otherwise the readable text.
std::string token_label(const text::Tokenizer* tok, int id);

// The decoder family's runs (decoder_run.cpp): a runner's key/value cache and buffers, kept between runs.
struct DecoderState;
std::shared_ptr<DecoderState> make_decoder_state();
// run_ids for a decoder, after the checks every run makes (run.ids and labels set): fills the maps, logits,
// hidden states and predictions, reusing options.previous where it fits.
// `hooks`: interventions (capture, edits); with `base` as well, a re-run from the base's activations
// (TransformerRunner::rerun).
class Hooks;
Result<void> decoder_run(const TransformerModel::Impl& m, DecoderState& state, TransformerRun& run,
                         const RunOptions& options, Hooks* hooks = nullptr, const TransformerRun* base = nullptr);
// TransformerRunner::rerun_cells for a decoder, on one batch: row k of `logits` is the logits at `position` of the
// base re-run with cells[k] (each non-empty, checked). The runner's key/value cache is left as it was.
Result<void> decoder_rerun_cells(const TransformerModel::Impl& m, DecoderState& state, const TransformerRun& base,
                                 const std::vector<std::vector<Edit>>& cells, Index position,
                                 const std::atomic<bool>* cancel, Matrix& logits);
// Generation for every causal family, after the same checks (run.ids holds the prompt): sizes every layer's maps
// (and hidden states) for the prompt and the tokens to come, calls extend(0, prompt), then per chosen token
// extend(position, position + 1); `extend` runs those tokens with the family's key/value cache, writes their rows
// of the maps and leaves the last row's logits in run.logits. Stops at EOS, the context or on_token's word.
Result<void> generate_with(const TransformerModel::Impl& m, TransformerRun& run, const GenerateOptions& generation,
                           const RunOptions& options, const std::function<Result<void>(Index p0, Index p1)>& extend);
// Appends to run.warnings, when a prediction's probabilities are NaN or infinite, "the predictions at N of the M
// positions are not finite (...)": how many, and the first position (prediction_checks.cpp). Every run that fills
// run.predictions calls it beside warn_nonfinite; the window shows it with the run's other warnings.
inline constexpr std::string_view kNonFinitePredictions = "the predictions at ";
void warn_nonfinite_predictions(TransformerRun& run);

// The decoder family's generation (after the same checks).
Result<void> decoder_generate(const TransformerModel::Impl& m, DecoderState& state, TransformerRun& run,
                              const GenerateOptions& generation, const RunOptions& options);

}  // namespace attn::models
