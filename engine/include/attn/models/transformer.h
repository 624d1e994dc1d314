// Transformer families loaded from Hugging Face checkpoints (config.json + *.safetensors + tokenizer):
//   BERT (post-LN, erf GELU, padding mask, token types), DistilBERT (post-LN, no token types),
//   GPT-2 (pre-LN, tanh GELU, causal; Conv1D weights stored [in, out]), ViT (patch embedding, class
//   token, pre-LN). Every layer's per-head attention probabilities land in the run's LayeredTrace.
//
// TransformerModel is immutable once loaded and may be shared by any number of Sessions and threads;
// a TransformerRunner owns scratch buffers and the last run, so re-running on every keystroke allocates nothing
// new once the buffers have grown.
//
// Tensor names are the ones Hugging Face writes, with or without the `bert.`, `distilbert.`,
// `transformer.`, `vit.` prefixes; old `LayerNorm.gamma/beta` names are accepted; GPT-2's `attn.bias` /
// `attn.masked_bias` buffers are ignored; tied output embeddings may be absent. Missing or mis-shaped
// tensors are errors naming the file, the tensor and its byte offset. Pickled checkpoints
// (pytorch_model.bin, *.pt, *.ckpt) are refused: unpickling runs code; the message says how to convert.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"
#include "attn/models/activations.h"
#include "attn/models/config.h"
#include "attn/on_demand_attention.h"
#include "attn/text/tokenizer.h"
#include "attn/vision/image.h"

#include <filesystem>
#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::io {
class SafeTensors;
}

namespace attn::models {

// Reports progress in [0, 1] with a short description; returning false cancels (the load then fails
// with reason "cancelled").
using Progress = std::function<bool(double fraction, const std::string& what)>;

struct Prediction {
  int position = 0;  // token index the prediction is for ([MASK] position; GPT-2: the last token)
  struct Candidate {
    int id = 0;
    std::string text;  // display form
    float probability = 0;
  };
  std::vector<Candidate> top;  // best first
};

struct TransformerRun;

// Keep::Auto's threshold: above 1 GiB of stored maps (the SmolLM2-135M shape: from 1,000 tokens on) a text model keeps
// its attention on demand. Chosen by memory, measured (docs/BENCHMARKS.md, "Long inputs against torch"): from 1,024
// tokens on the forward takes about as long either way, while stored maps grow as tokens^2 (4.5 GB at 2,048 tokens).
inline constexpr std::size_t kOnDemandAbove = std::size_t{1} << 30;

struct RunOptions {
  Precision precision = Precision::F32;  // storage of the captured maps
  bool hidden_states = false;            // capture the embeddings and every layer's output
  int top_k = 5;                         // predictions per position when the head is in the file
  std::optional<int> max_tokens;         // truncate earlier than the model's positions
  // run_ids on BERT/DistilBERT: 1 = a real token, 0 = padding (masked out as a key, as transformers'
  // attention_mask); empty = every token is real. Ignored by GPT-2 (causal) and ViT.
  std::vector<int> attention_mask;
  // Called on the running thread as soon as a layer's maps are final, with the trace so far (tokens,
  // spans and layers 0..l): a viewer can draw the layer in view long before the last layer is done.
  // Returning false stops the run, which then fails with reason "cancelled".
  std::function<bool(const LayeredTrace& so_far)> on_layer;
  // Decoders: keep the logits of every position in TransformerRun::logits (else the last position's only).
  bool all_logits = false;
  // Decoders: this runner's previous run. When the new ids begin with tokens of its ids, the key/value cache
  // of those tokens is kept and their maps (and hidden states) are copied from it, so typing at the end of a
  // long text computes the new tokens only. Ignored when it does not fit (other ids in the cache, another
  // precision, hidden states asked but not kept, dynamic RoPE beyond the model's positions).
  const TransformerRun* previous = nullptr;
  // Text models (long inputs; every family but ViT, whose maps are small): OnDemand keeps every layer's queries,
  // keys and per-row softmax statistics in TransformerRun::on_demand instead of maps (run.attention then has tokens
  // and no layers); any map, tile, row or column is recomputed from them, and each head's statistics are streamed
  // while the rows run (attn/on_demand_attention.h). Both: the maps and the on-demand data of the same forward (the
  // recomputed weights are then the stored ones: tests, small inputs). `previous` is not used by either. Auto: OnDemand
  // for a text model whose maps would take more than on_demand_above bytes, Maps otherwise (what the GUI asks for). On
  // demand takes no padding: BERT's attention_mask with a 0 is refused.
  enum class Keep { Maps, OnDemand, Both, Auto };
  Keep keep = Keep::Maps;
  std::size_t on_demand_above = kOnDemandAbove;
  // Read between layers (every text family) and, in decoders, between blocks of query rows; once true, the run stops
  // (a decoder within one linear map of the layer running) and fails with reason "cancelled".
  const std::atomic<bool>* cancel = nullptr;
  // Called on the running thread after each layer of a run (not of generation's steps), maps or on demand alike:
  // the layers done, the model's layers and the tokens the run computes (a decoder's reused ones not counted), for a
  // progress bar with tokens per second (one layer of a 32,768-token input takes seconds).
  std::function<void(int done, int layers, Index tokens)> on_progress;
  // A run whose estimate (run_bytes) is over this many bytes is refused before anything is allocated, with the
  // figure and the number of tokens that would fit; 0: the memory the machine has available now (MemAvailable).
  std::size_t memory_limit = 0;
  // Interventions (attn/models/activations.h): the activations of every layer kept in TransformerRun::activations
  // (a decoder then computes every token: `previous` is not used), and edits made to them as the run passes them.
  // Not for generation or attention on demand.
  bool capture = false;
  std::vector<Edit> edits;
  // The position whose logits TransformerRun::logits keeps when all_logits is false (-1: the family's own: the last
  // position of a causal model, the first [MASK] of BERT/DistilBERT, ViT's class token).
  int logits_position = -1;
};

// Generation (decoders): greedy when temperature is 0, else sampling from softmax(logits / temperature)
// restricted to the top_k most likely tokens (0: all) and then to the smallest set whose probability reaches
// top_p, drawn with a generator seeded by `seed`.
struct GenerateOptions {
  int max_new_tokens = 32;
  float temperature = 0.0f;
  int top_k = 0;
  float top_p = 1.0f;
  std::uint64_t seed = 0;
  bool stop_at_eos = true;  // stop after any of config.json's eos_token_id
  // Called after each new token (its position in the run, id and probability); returning false stops the
  // generation there (not an error: the run holds what was generated).
  std::function<bool(int position, int id, float probability)> on_token;
};

struct TransformerRun {
  LayeredTrace attention;               // one Encoder (BERT, DistilBERT, ViT) or Decoder (GPT-2) stack per layer
  std::vector<int> ids;                 // token ids (ViT: empty)
  std::vector<int> type_ids;            // BERT segment ids
  std::vector<Matrix> hidden_states;    // layers + 1 matrices [tokens, hidden] when asked
  std::vector<Prediction> predictions;  // masked-token (BERT/DistilBERT) or next-token (GPT-2)
  std::vector<std::string> labels;      // ViT: top classes "label (p)" when a classifier head is loaded
  std::vector<int> special_positions;   // [CLS]/[SEP]/BOS/class-token positions, for head statistics
  std::vector<std::string> warnings;    // e.g. "text truncated to 512 tokens (the model's positions)"
  int truncated_tokens = 0;             // run_text: the text's tokens cut off at the positions or max_tokens
  int grid_rows = 0, grid_cols = 0;     // ViT: patch grid (token 0 is the class token)
  // The logits of positions logits_from, logits_from + 1, ...: one row (RunOptions::logits_position or the family's
  // own) or every position (all_logits); ViT: the classifier's, one row for the class token. Empty without a head.
  Matrix logits;
  int logits_from = 0;
  int reused_tokens = 0;  // tokens whose keys, values and maps came from RunOptions::previous
  // Generation: the prompt is ids[0, prompt_tokens); every later token was generated, with the probability
  // it had when it was chosen (after temperature, before top-k and top-p).
  int prompt_tokens = 0;
  std::vector<float> generated_probability;
  // Generation with RunOptions::top_k > 0: per generated token, the model's top_k next-token candidates at the
  // position before it (softmax of the logits, before temperature), the alternatives it was chosen among.
  std::vector<Prediction> step_predictions;
  // RunOptions::keep OnDemand or Both: one per layer (the maps recomputed on demand, the streamed statistics).
  std::vector<OnDemandLayer> on_demand;
  // Generation: what the request was estimated to need (generate_bytes, bytes) and the budget it was checked against
  // (RunOptions::memory_limit, or what the machine had available; 0: unknown).
  std::size_t memory_estimate = 0, memory_budget = 0;
  // RunOptions::capture: every layer's activations (TransformerRunner::rerun starts from them).
  std::shared_ptr<const Activations> activations;
};

// The logit lens: the final norm and the output embedding applied to the residual stream after every layer.
struct LogitLens {
  std::vector<int> positions;  // the columns: token positions of the run
  // [layer][column]: the best tokens of that layer's reading, best first (the last layer's is the model's).
  std::vector<std::vector<std::vector<Prediction::Candidate>>> top;
  // [layer][column]: the rank (0: first) at that layer of the token the model finally predicts there.
  std::vector<std::vector<int>> final_rank;
};

// What a loader knows about the file a model came from, beyond its config and weights (a GGUF file's).
struct SourceNotes {
  std::vector<std::string> warnings;  // load-time notes
  std::string card;                   // Markdown: TransformerModel::card()
  std::string format;                 // "GGUF Q4_K": appended to description()
};

// How a model file is read where its format leaves a choice.
struct LoadOptions {
  // A GGUF file computed as llama.cpp's CPU backend computes it (DecoderSettings::ggml_arithmetic): each product's
  // activations rounded to the type ggml multiplies the weights with. false: in float32, as a folder is.
  bool gguf_llama_cpp_arithmetic = true;
  // With it, keys, values, queries and attention weights rounded to F16 where llama.cpp's default (F16) key/value
  // cache rounds them (DecoderSettings::ggml_f16_cache); false: kept in float32, as llama.cpp with a float cache
  // (`--cache-type-k f32 --cache-type-v f32`).
  bool gguf_f16_cache = true;
  // Whose order of sums llama.cpp's arithmetic follows: the build llama.cpp's CPU backend loads on this machine
  // (its AMX build where the CPU has AMX-INT8 and the kernel lets the process use the tiles:
  // io::cpu_has_amx), or one named, to compare with goldens made on another machine.
  enum class GgmlBuild : std::uint8_t { ThisMachine, Avx512, Amx };
  GgmlBuild gguf_build = GgmlBuild::ThisMachine;
};

class TransformerModel {
 public:
  // A folder with config.json, one or more *.safetensors (model.safetensors or a sharded index) and
  // tokenizer files (none needed for ViT); or a GGUF file (llama.cpp's: the llama, qwen2, qwen3, gemma2, gemma3
  // and phi3 architectures, quantised or not), or a folder whose only checkpoint is one.
  static Result<std::shared_ptr<const TransformerModel>> load(const std::filesystem::path& folder,
                                                              const Progress& progress = {},
                                                              const LoadOptions& options = {});
  // From parts already in memory (tests, benchmarks); tokenizer may be null (ids-only runs, ViT).
  static Result<std::shared_ptr<const TransformerModel>> from_parts(TransformerConfig config,
                                                                    const io::SafeTensors& weights,
                                                                    std::shared_ptr<const text::Tokenizer> tokenizer,
                                                                    const Progress& progress = {},
                                                                    SourceNotes notes = {});

  ~TransformerModel();
  const TransformerConfig& config() const;
  const text::Tokenizer* tokenizer() const;   // null for ViT or when absent
  bool has_prediction_head() const;           // MLM head (BERT/DistilBERT), LM head (GPT-2), classifier (ViT)
  std::string description() const;            // "BERT · 12 layers · 12 heads · d 768 · 110 M parameters"
  std::vector<std::string> warnings() const;  // load-time notes, e.g. unused tensors
  // Markdown about the file the model came from: a GGUF file's tensor types (its quantisation), chat template and
  // metadata. Empty for a Hugging Face folder (its MODEL_CARD.md or README.md is the card).
  const std::string& card() const;
  // Decoders and GPT-2: the logit lens at `positions` of a run made with hidden_states, top_k tokens per cell.
  Result<LogitLens> logit_lens(const TransformerRun& run, const std::vector<int>& positions, int top_k = 5) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit TransformerModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What a run of `tokens` tokens with these options takes in memory (bytes, estimated before it starts): the maps
// or the on-demand data (Auto resolved as the run would), hidden states, logits, the key/value cache and the
// largest working buffers. `keep` is set to what Auto resolves to.
std::size_t run_bytes(const TransformerConfig& config, Index tokens, const RunOptions& options,
                      RunOptions::Keep* keep = nullptr);

// What a generation of `new_tokens` after `prompt_tokens` takes at most (bytes, estimated before it starts): every
// token's maps (grown as the tokens arrive, the last doubling holding the old maps beside the new), hidden states when
// asked, the key/value cache and the working buffers. TransformerRunner::generate refuses a request whose estimate is
// over RunOptions::memory_limit (0: MemAvailable), naming the figure, the limit and the new tokens that would fit.
std::size_t generate_bytes(const TransformerConfig& config, Index prompt_tokens, Index new_tokens,
                           const RunOptions& options);

class TransformerRunner {
 public:
  explicit TransformerRunner(std::shared_ptr<const TransformerModel> model);
  ~TransformerRunner();
  TransformerRunner(TransformerRunner&&) noexcept;
  TransformerRunner& operator=(TransformerRunner&&) noexcept;

  const TransformerModel& model() const { return *model_; }

  // Text models: tokenises with the model's tokenizer and adds the family's special tokens
  // (BERT: [CLS] a [SEP] b [SEP] with type ids; GPT-2: none). Text beyond the model's positions is
  // truncated with a warning in the run.
  Result<TransformerRun> run_text(std::string_view text, std::string_view pair = {}, const RunOptions& options = {});
  // Ids as given (special tokens included by the caller); type_ids may be empty (all 0).
  Result<TransformerRun> run_ids(const std::vector<int>& ids, const std::vector<int>& type_ids = {},
                                 const RunOptions& options = {});
  // Decoders: the prompt, then up to max_new_tokens tokens with the key/value cache; the run holds every
  // token's maps (the prompt's and each generated token's row, over everything before it), ids and logits of
  // the last position. Stops at EOS, at the model's positions (with a warning) or when on_token says so.
  Result<TransformerRun> generate(const std::vector<int>& prompt, const GenerateOptions& generation,
                                  const RunOptions& options = {});
  Result<TransformerRun> generate_text(std::string_view prompt, const GenerateOptions& generation,
                                       const RunOptions& options = {});
  // ViT: resizes (bilinear, OpenCV) to image_size, normalises with image_mean/std, patchifies.
  Result<TransformerRun> run_image(const Image& image, const RunOptions& options = {});
  // `base` (a run of any family made with capture) again with options.edits: nothing before the first edited layer
  // is recomputed (its maps and hidden states are the base's), nor, in a decoder, the rows before the first edited
  // position (their keys and values come from the base's activations), nor the edited layer's attention when only its
  // head outputs or later sites are edited. The result equals run_ids (or run_image) of the same input with the same
  // edits. The tab's ablation after a click; the sweeps use rerun_cells.
  Result<TransformerRun> rerun(const TransformerRun& base, const RunOptions& options);
  // Many re-runs of `base` (made with capture), one per entry of `cells` (each a non-empty set of edits), of which
  // only the logits at `position` are kept (-1: the last position; ViT: the class logits, whatever `position`):
  // `on_done(first, logits)` receives them batch by batch in the order of `cells`, row i of `logits` being cell
  // first + i's, what rerun with logits_position = `position` gives at that position (to float rounding). A decoder
  // stacks a batch's cells' rows into one product per weight and layer (and computes its last layer, the final norm
  // and the output embedding for the measured rows only); the other families re-run each cell alone. False from
  // on_done, or `cancel` set, stops after the batch in progress (a cancel within one layer of it).
  using CellsDone = std::function<bool(std::size_t first, const Matrix& logits)>;
  Result<void> rerun_cells(const TransformerRun& base, const std::vector<std::vector<Edit>>& cells, int position,
                           const CellsDone& on_done, const std::atomic<bool>* cancel = nullptr);

 private:
  std::shared_ptr<const TransformerModel> model_;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
};

// model.safetensors.index.json: the shard files its weight_map names, each once, sorted. A name that is not a
// plain file name of the folder (empty, ".", "..", with a slash or a NUL) is refused. `name` stands for the file.
Result<std::vector<std::string>> parse_safetensors_index(std::string_view text, const std::string& name);
// The same index with its weight_map (tensor -> shard file); a key given twice is refused.
struct SafetensorsIndex {
  std::vector<std::string> files;                 // each shard once, sorted
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
};
Result<SafetensorsIndex> read_safetensors_index(std::string_view text, const std::string& name);
// The shards honour the weight_map exactly: every tensor it lists is in the shard it names, and every tensor of every
// shard is listed, at that shard (a tensor stored in two shards, or a map naming a shard without the tensor, is
// refused: which copy loaded would otherwise depend on the files' order). `name` is the index file, for the errors.
Result<void> check_weight_map(const SafetensorsIndex& index, const std::vector<const io::SafeTensors*>& shards,
                              const std::string& name);

// "pytorch_model.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl": refused with how to convert them.
bool is_pickled_checkpoint(const std::filesystem::path& path);
std::string pickled_checkpoint_message(const std::filesystem::path& path);
// "*.ggml", "*.ggjt": llama.cpp's files from before GGUF (2023), refused with how to convert them.
bool is_legacy_ggml_checkpoint(const std::filesystem::path& path);
// Why `path` is a checkpoint AttnScope does not read (pickled, or ggml from before GGUF), with how to get one it
// does; nullopt for anything else.
std::optional<std::string> foreign_checkpoint_message(const std::filesystem::path& path);

}  // namespace attn::models
