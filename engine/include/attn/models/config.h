// config.json of the transformer families, as Hugging Face writes it. The family comes from
// "model_type" (bert, distilbert, gpt2, vit; the decoders llama, mistral, qwen2, qwen3, gemma2, gemma3_text
// (or gemma3 with a text_config), phi3), else from "architectures" (BertModel, BertForMaskedLM,
// DistilBertForMaskedLM, GPT2LMHeadModel, ViTForImageClassification, LlamaForCausalLM, ...). Defaults are
// the transformers library's own for each family when a key is absent.
#pragma once

#include "attn/core.h"
#include "attn/error.h"
#include "attn/mechanisms/blocks.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

// Decoder: today's pre-norm decoders, one path with the per-family switches of DecoderSettings.
enum class Family { Bert, DistilBert, Gpt2, Vit, Decoder };
std::string_view to_string(Family family);

enum class RopeScaling { Default, Linear, Dynamic, Llama3, Yarn };

// The bounds of rope_scaling, checked where config.json is read: every factor (factor, low_freq_factor,
// high_freq_factor, YaRN's attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim, LongRoPE's lists) is finite
// and at most kMaxRopeFactor (published models use up to 64), and the longest input a decoder takes (its context:
// max_position_embeddings, times the factor for dynamic scaling) is at most kMaxDecoderContext tokens.
inline constexpr double kMaxRopeFactor = 1024.0;
inline constexpr Index kMaxDecoderContext = Index{1} << 24;
enum class GatedActivation { Silu, GeluTanh, GeluErf };  // act(gate(x)) * up(x)

// The switches of the decoder family, read from config.json the way each family's configuration class in
// transformers reads them (tools/parity/decoder_torch.py is the reference, written from the same classes).
struct DecoderSettings {
  std::string model_type;  // llama, mistral, qwen2, qwen3, gemma2, gemma3_text, phi3 (gpt2: a GGUF file)
  int kv_heads = 0;        // num_key_value_heads (default: num_attention_heads)
  int head_dim = 0;        // head_dim (default: hidden_size / num_attention_heads)
  float rms_eps = 1e-6f;
  double rope_theta = 10000.0;
  double partial_rotary = 1.0;  // partial_rotary_factor: the first head_dim x factor dimensions rotate
  RopeScaling rope = RopeScaling::Default;
  double rope_factor = 1.0;
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int original_max_positions = 0;                        // llama3, yarn (0: max_position_embeddings)
  std::optional<double> attention_factor;                // yarn
  double beta_fast = 32.0, beta_slow = 1.0, mscale = 0.0, mscale_all_dim = 0.0;  // yarn
  std::optional<double> local_rope_theta;  // Gemma 3: the sliding layers' base, unscaled
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;       // per-head RMSNorm on q and k before RoPE (Qwen3, Gemma 3)
  bool gemma = false;         // (1 + w) norms, embedding x sqrt(d), post-attention and feed-forward norms
  bool fused = false;         // Phi-3: qkv_proj and gate_up_proj
  bool tied = false;          // tie_word_embeddings
  double query_scale = 0;     // head_dim^-0.5, or query_pre_attn_scalar^-0.5 (Gemma)
  float attn_softcap = 0;     // 0: none
  float final_softcap = 0;    // 0: none
  int window = 0;             // sliding_window (0: none); a sliding layer sees keys i - window < j <= i
  std::vector<bool> sliding;  // per layer
  GatedActivation activation = GatedActivation::Silu;
  std::optional<int> bos;
  std::vector<int> eos;  // eos_token_id: one id or a list
  // A Gemma GGUF file (issue 45; never read from a config.json): llama.cpp's converter stored each norm's 1 + w,
  // so the loader takes the weights as they are instead of adding 1.
  bool norms_hold_one = false;
  // llama.cpp's arithmetic (a GGUF file, issue 45; never read from a config.json): each product's activations
  // rounded to the type ggml's CPU backend multiplies the matrix's rows with (io::ggml_round_activations).
  bool ggml_arithmetic = false;
  // With it, the order of sums of llama.cpp's AMX build (ggml-cpu/amx/mmq.cpp), which an x86 CPU with AMX-INT8 loads:
  // the products whose weights its AMX buffer holds (StoredMatrix::ggml_amx) summed block by block as its tiles
  // and VNNI kernels sum them, F16 weights' activations unrounded. false: its AVX-512 build's order.
  bool ggml_amx = false;
  // llama.cpp's default F16 key/value cache (GGUF, unless LoadOptions says otherwise): each key, value and
  // (unscaled) query rounded to F16 after RoPE, and each row of attention weights rounded to F16 for the product
  // with the values (the maps keep the float weights, as llama.cpp's soft_max output is float).
  bool ggml_f16_cache = false;
  // The file's query and key rows are llama.cpp's RoPE pairs (2i, 2i + 1), which the loader put back in the
  // rotate-half order (i, i + head_dim / 2): llama.cpp's dot products of queries and keys run in the file's order.
  bool ggml_rope_pairs = false;
  // llama.cpp scales this architecture's queries before the cache's F16 (Gemma 2 and 3, Phi-3: ggml_scale on Qcur,
  // the scores then unscaled); the others scale the scores.
  bool ggml_scaled_queries = false;
  // A GGUF file's rope_freqs.weight (never read from a config.json): Llama 3's RoPE scaling as llama.cpp's converter
  // stores it, one factor per rotary pair, each pair's frequency divided by its factor in every layer (the file's
  // rope.scaling.type is then absent: rope stays Default).
  std::vector<float> rope_freq_factors;
  // A GGUF file of llama.cpp's gpt2 architecture (never read from a config.json; a Hugging Face GPT-2 folder is
  // Family::Gpt2): LayerNorm with a bias (rms_eps its epsilon) for the input, post-attention and final norms instead of
  // RMSNorm; a learned position table added to the token embedding and no RoPE (partial_rotary 0); q, k and v as
  // one fused product with one bias (as Phi-3's, plus the bias); and an ungated MLP, down(act(up x + b)) + b.
  bool gpt2 = false;
};

struct TransformerConfig {
  Family family = Family::Bert;
  std::string architecture;                     // architectures[0] when given, e.g. "BertForMaskedLM"
  int hidden = 768;                             // BERT/ViT hidden_size, GPT-2 n_embd, DistilBERT dim
  int heads = 12;                               // num_attention_heads / n_head / n_heads
  int layers = 12;                              // num_hidden_layers / n_layer / n_layers
  int intermediate = 3072;                      // intermediate_size / n_inner (null: 4 x n_embd) / hidden_dim
  int max_positions = 512;                      // max_position_embeddings / n_positions; ViT: patches + 1
  int vocab_size = 30522;                       // 0 for ViT
  int type_vocab_size = 2;                      // BERT only
  float layer_norm_eps = 1e-12f;                // layer_norm_eps / layer_norm_epsilon (DistilBERT: 1e-12)
  Activation activation = Activation::GeluErf;  // hidden_act / activation_function / activation
  bool sinusoidal_positions = false;            // DistilBERT sinusoidal_pos_embds
  int pad_token_id = 0;
  // ViT
  int image_size = 224, patch_size = 16, num_channels = 3;
  bool qkv_bias = true;
  std::vector<float> image_mean{0.5f, 0.5f, 0.5f}, image_std{0.5f, 0.5f, 0.5f};  // preprocessor_config.json
  std::vector<std::string> labels;  // id2label, by id (classification heads)
  DecoderSettings decoder;          // Family::Decoder (GPT-2: eos only)

  int head_dim() const { return family == Family::Decoder ? decoder.head_dim : hidden / heads; }
  bool causal() const { return family == Family::Gpt2 || family == Family::Decoder; }
  // The longest input: max_positions, or for dynamic RoPE the reach its scaling is for (positions x factor), never
  // above kMaxDecoderContext (parse_config refuses a config asking for more; a config built by hand is clamped).
  Index context() const {
    if (family == Family::Decoder && decoder.rope == RopeScaling::Dynamic) {
      const double reach = static_cast<double>(max_positions) * std::max(1.0, decoder.rope_factor);
      if (!(reach < static_cast<double>(kMaxDecoderContext))) return std::max<Index>(max_positions, kMaxDecoderContext);
      return static_cast<Index>(reach);
    }
    return max_positions;
  }
};

// A decoder's rotary embedding at an input of seq_len tokens: the inverse frequency of each rotary pair (head_dim x
// partial_rotary_factor / 2 of them) and the factor cos and sin are multiplied by (YaRN's attention factor; else 1).
// `local`: Gemma 3's sliding layers, unscaled with their own base. The formulas of transformers' rope initialisers
// (tools/parity/decoder_torch.py's rope_inv_freq); parse_config checks that a config's are finite and positive.
struct RopeFrequencies {
  std::vector<double> inv;
  double factor = 1.0;
};
RopeFrequencies rope_frequencies(const TransformerConfig& c, Index seq_len, bool local);

// Parses and validates (every size > 0, hidden divisible by heads, known activation, ...). `file` names
// the input in errors; errors carry the line of the offending key where the JSON parser gives one.
Result<TransformerConfig> parse_config(std::string_view json, const std::string& file);
// config.json of a folder, plus preprocessor_config.json's image_mean/image_std/size for ViT if present.
Result<TransformerConfig> load_config(const std::filesystem::path& folder);

}  // namespace attn::models
