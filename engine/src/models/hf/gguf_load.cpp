// A GGUF file (llama.cpp's) as a decoder checkpoint: its metadata read as the Hugging Face config it was converted
// from, its tensors under the Hugging Face names the decoder loader asks for, its tokenizer rebuilt from the
// vocabulary it carries. Everything then goes through the same checks and the same forward as a safetensors
// folder, so the numbers are the engine's one implementation's.
//
// The architectures read (kArchs): llama, qwen2, qwen3, gemma2, gemma3 (Gemma 3's text model), phi3 and gpt2; the
// others are refused naming the architecture. Where llama.cpp reads the metadata otherwise than transformers
// reads the config it came from, the file means what llama.cpp computes (put_gemma, apply_arch_settings). A gpt2
// file is a decoder too (DecoderSettings::gpt2: LayerNorms with biases, learned positions, an ungated GELU MLP, as
// llama.cpp's src/models/gpt2.cpp builds it), so that its products are ggml's on the blocks like every other
// file's; the converter had already turned GPT-2's Conv1D weights [in, out] into [out, in] rows.
//
// What llama.cpp's converter (convert_hf_to_gguf.py) changed is undone here:
//   - names: token_embd, blk.N.attn_q, ffn_gate, output_norm, output ... back to model.embed_tokens, ...; Gemma's
//     post_attention_norm, ffn_norm (its pre-feed-forward norm), post_ffw_norm; Phi-3's fused attn_qkv and ffn_up;
//     GPT-2's position_embd (model.embed_positions), fused attn_qkv and the norms' and products' biases;
//   - Gemma's norms: the converter stored 1 + w (Hugging Face's Gemma RMSNorm scales by 1 + w, llama.cpp's by the
//     weight), which the loader takes as it is (DecoderSettings::norms_hold_one);
//   - shapes: ggml lists a tensor's dimensions innermost first, so [in, out] in the file is PyTorch's [out, in];
//   - the llama architecture's query and key rows: the converter permutes each head's rows from the "rotate half"
//     layout (the first half of a head's dimensions pairs with the second) into adjacent pairs, for ggml's RoPE
//     kernel; row 2i + j of a head (j in {0, 1}) is the original row j * head_dim / 2 + i. The decoder reads them
//     in place through that order (StoredMatrix::file_rows), nothing copied. Qwen2 and Qwen3 are not permuted
//     (llama.cpp runs them with the NeoX RoPE, the original layout).
//   - every tensor stays in the file's mapping, quantised ones as ggml's blocks (dequantised where they are read, as
//     ggml's dequantize_row_* does, io/ggml_types.h);
//   - and the arithmetic is llama.cpp's (DecoderSettings::ggml_arithmetic): each product's activations rounded to
//     the type ggml multiplies the matrix's rows with (F16, BF16, Q8_0, Q8_1, Q8_K), F32 and F16 products summed in
//     its order, its norms, RoPE, activations and F16-cache attention operation for operation (ggml_math.h), the
//     queries scaled where its graph scales them (ggml_scaled_queries: Gemma, Phi-3), the llama arch's query-key
//     dot products in the file's RoPE-pair order (ggml_rope_pairs).
#include "gguf_load.h"

#include "attn/io/gguf.h"
#include "attn/io/safetensors.h"
#include "attn/layered_trace.h"
#include "attn/text/tokenizer.h"
#include "../../core/json_config.h"
#include "../../core/try.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace attn::models {

namespace {

using json = nlohmann::json;
using detail::quote;

// The architectures read, each with the Hugging Face model_type and class it came from, and whether the converter
// permuted its query and key rows.
struct Arch {
  std::string_view gguf;
  std::string_view model_type;
  std::string_view hf_class;
  bool permuted;
};
constexpr Arch kArchs[] = {
    {"llama", "llama", "LlamaForCausalLM", true},
    {"qwen2", "qwen2", "Qwen2ForCausalLM", false},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", false},
    {"gemma2", "gemma2", "Gemma2ForCausalLM", false},
    {"gemma3", "gemma3_text", "Gemma3ForCausalLM", false},
    {"phi3", "phi3", "Phi3ForCausalLM", false},
    // (a decoder config with GPT-2's switches set after it is read: apply_arch_settings)
    {"gpt2", "llama", "LlamaForCausalLM", false},
};

bool is_gemma(const Arch& arch) { return arch.gguf == "gemma2" || arch.gguf == "gemma3"; }

const Arch* find_arch(std::string_view name) {
  for (const Arch& a : kArchs) {
    if (a.gguf == name) return &a;
  }
  return nullptr;
}

std::string arch_list() {
  std::string out;
  for (const Arch& a : kArchs) out += (out.empty() ? "" : ", ") + std::string(a.gguf);
  return out;
}

// A GGUF tensor name's Hugging Face name; empty for a name with no counterpart (left as it is, and reported unused).
// Gemma's four norms a layer and Phi-3's fused products have names of their own (gguf-py's tensor_mapping.py).
std::string hf_name(const std::string& name, const Arch& arch) {
  static const std::map<std::string, std::string, std::less<>> kTop = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
      {"output_norm.bias", "model.norm.bias"},
      {"position_embd.weight", "model.embed_positions.weight"},
  };
  static const std::map<std::string, std::string, std::less<>> kLayer = {
      {"attn_norm.weight", "input_layernorm.weight"},    {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_q.bias", "self_attn.q_proj.bias"},          {"attn_k.bias", "self_attn.k_proj.bias"},
      {"attn_v.bias", "self_attn.v_proj.bias"},          {"attn_output.weight", "self_attn.o_proj.weight"},
      {"attn_output.bias", "self_attn.o_proj.bias"},     {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"}, {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},       {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  static const std::map<std::string, std::string, std::less<>> kGemmaLayer = {
      {"post_attention_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
  };
  static const std::map<std::string, std::string, std::less<>> kPhi3Layer = {
      {"attn_qkv.weight", "self_attn.qkv_proj.weight"},
      {"ffn_up.weight", "mlp.gate_up_proj.weight"},
  };
  static const std::map<std::string, std::string, std::less<>> kGpt2Layer = {
      {"attn_qkv.weight", "self_attn.qkv_proj.weight"},
      {"attn_qkv.bias", "self_attn.qkv_proj.bias"},
      {"attn_norm.bias", "input_layernorm.bias"},
      {"ffn_norm.bias", "post_attention_layernorm.bias"},
      {"ffn_up.bias", "mlp.up_proj.bias"},
      {"ffn_down.bias", "mlp.down_proj.bias"},
  };
  if (const auto it = kTop.find(name); it != kTop.end()) return it->second;
  if (name.rfind("blk.", 0) != 0) return {};
  const std::size_t dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return {};
  const std::string layer = name.substr(4, dot - 4);
  if (layer.find_first_not_of("0123456789") != std::string::npos) return {};
  const std::string_view rest = std::string_view(name).substr(dot + 1);
  static const std::map<std::string, std::string, std::less<>> kNone;
  const auto& own = is_gemma(arch)        ? kGemmaLayer
                    : arch.gguf == "phi3" ? kPhi3Layer
                    : arch.gguf == "gpt2" ? kGpt2Layer
                                          : kNone;
  if (const auto it = own.find(rest); it != own.end()) return "model.layers." + layer + "." + it->second;
  const auto it = kLayer.find(rest);
  if (it == kLayer.end()) return {};
  return "model.layers." + layer + "." + it->second;
}

// The head size the metadata gives: attention.key_length, else embedding_length / head_count (as llama.cpp).
std::int64_t head_dim_of(const json& c) {
  if (c.contains("head_dim")) return c["head_dim"].get<std::int64_t>();
  const std::int64_t heads = c["num_attention_heads"].get<std::int64_t>();
  return heads > 0 ? c["hidden_size"].get<std::int64_t>() / heads : 0;
}

// RoPE: the rotary part of each head (rope.dimension_count under head_dim is the config's partial_rotary_factor)
// and the scaling. llama.cpp takes a factor without a type as linear scaling; Llama 3's factors, which it keeps as a
// tensor (rope_freqs.weight), are the llama architecture's (read by rope_freq_factors); Phi-3's LongRoPE factors,
// and factors in another architecture (which llama.cpp would not load), are refused by name.
Result<void> put_rope(const io::GgufFile& f, const std::string& a, json& c) {
  auto rotary = f.integer(a + ".rope.dimension_count");
  if (!rotary) return std::unexpected(rotary.error());
  const std::int64_t head_dim = head_dim_of(c);
  if (*rotary && head_dim > 0 && **rotary != head_dim) {
    c["partial_rotary_factor"] = static_cast<double>(**rotary) / static_cast<double>(head_dim);
  }
  if (const io::GgufTensor* t = f.find("rope_freqs.weight"); t && a != "llama") {
    const std::string why =
        "the file holds rope_freqs.weight (Llama 3's RoPE scaling), which llama.cpp reads for "
        "the llama architecture only, not " +
        a;
    return fail(ErrorKind::Unsupported, why, f.name(), t->offset);
  }
  for (const char* tensor : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (const io::GgufTensor* t = f.find(tensor)) {
      return fail(ErrorKind::Unsupported,
                  "the file holds " + std::string(tensor) +
                      " (Phi-3's LongRoPE factors, as llama.cpp stores them), which AttnScope does not read yet",
                  f.name(), t->offset);
    }
  }
  auto scaling = f.string(a + ".rope.scaling.type");
  if (!scaling) return std::unexpected(scaling.error());
  auto factor = f.number(a + ".rope.scaling.factor");
  if (!factor) return std::unexpected(factor.error());
  const std::string type = scaling->value_or(*factor ? "linear" : "none");
  if (type == "none") return {};
  if (type != "linear") {
    return std::unexpected(f.error(a + ".rope.scaling.type", ErrorKind::Unsupported,
                                   "RoPE scaling " + quote(type) + " in a GGUF file is not read yet; linear is"));
  }
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", factor->value_or(1.0)}};
  return {};
}

// A positive number a key holds, or `fallback` when it is absent (nullopt fallback: absent stays absent).
Result<std::optional<double>> positive(const io::GgufFile& f, const std::string& key, std::optional<double> fallback) {
  auto v = f.number(key);
  if (!v) return std::unexpected(v.error());
  if (!*v) return fallback;
  if (!(**v > 0) || !std::isfinite(**v)) {
    return std::unexpected(
        f.error(key, ErrorKind::OutOfRange, key + " is " + json(**v).dump() + "; it must be a positive number"));
  }
  return *v;
}

// Gemma's sliding layers as the config's layer_types: attention.sliding_window_pattern, one flag per layer or a
// period n (layer i slides unless i % n == n - 1; 0: every layer), else the arch's period (Gemma 2's 2, Gemma 3's
// 6), as llama.cpp's load_swa_pattern reads it.
Result<void> put_gemma_pattern(const io::GgufFile& f, const std::string& a, std::int64_t period, json& c) {
  const std::string key = a + ".attention.sliding_window_pattern";
  const std::int64_t layers = c["num_hidden_layers"].get<std::int64_t>();
  std::vector<bool> sliding(static_cast<std::size_t>(std::max<std::int64_t>(0, layers)));
  const io::GgufValue* v = f.value(key);
  if (v && v->array) {
    if (!v->is_integer() || static_cast<std::int64_t>(v->integers.size()) != layers) {
      return std::unexpected(
          f.error(key, ErrorKind::Mismatch, key + " must hold one flag per layer (" + std::to_string(layers) + ")"));
    }
    for (std::size_t i = 0; i < sliding.size(); ++i) sliding[i] = v->integers[i] != 0;
  } else {
    auto n = f.integer(key);
    if (!n) return std::unexpected(n.error());
    if (*n) period = **n;
    if (period < 0 || period > layers + 1'000'000) {
      return std::unexpected(f.error(key, ErrorKind::OutOfRange,
                                     key + " is " + std::to_string(period) + "; a period of layers is at least 0"));
    }
    for (std::size_t i = 0; i < sliding.size(); ++i) {
      sliding[i] = period == 0 || static_cast<std::int64_t>(i) % period < period - 1;
    }
  }
  json types = json::array();
  for (const bool s : sliding) types.push_back(s ? "sliding_attention" : "full_attention");
  c["layer_types"] = std::move(types);
  return {};
}

// Gemma 2 and 3 as llama.cpp reads them (src/models/gemma2.cpp, gemma3.cpp): Gemma 2's soft caps and window with
// its defaults (50, 30, 4096) when absent; Gemma 3 slides only with a positive window, caps no scores and caps the
// logits only when the key says so; the query scaled by 1 / sqrt(head_dim), or 1 / sqrt(hidden / heads) for the
// 27B models (46 and 62 layers), whatever the original config's query_pre_attn_scalar was.
Result<void> put_gemma(const io::GgufFile& f, const Arch& arch, json& c) {
  const std::string a(arch.gguf);
  const bool two = a == "gemma2";
  std::optional<double> v;
  ATTN_ASSIGN(v, positive(f, a + ".attn_logit_softcapping", two ? std::optional(50.0) : std::nullopt));
  if (two) c["attn_logit_softcapping"] = *v;
  ATTN_ASSIGN(v, positive(f, a + ".final_logit_softcapping", two ? std::optional(30.0) : std::nullopt));
  if (v) c["final_logit_softcapping"] = *v;
  const std::string window_key = a + ".attention.sliding_window";
  auto window = f.integer(window_key);
  if (!window) return std::unexpected(window.error());
  const std::int64_t w = window->value_or(two ? 4096 : 0);
  if (w < 0 || (two && w == 0)) {
    return std::unexpected(f.error(
        window_key, ErrorKind::OutOfRange,
        window_key + " is " + std::to_string(w) + "; a window of keys is at least 1" + (two ? "" : " (0: none)")));
  }
  if (w > 0) {
    c["sliding_window"] = w;
    ATTN_TRY(put_gemma_pattern(f, a, two ? 2 : 6, c));
  }
  if (!two) {
    ATTN_ASSIGN(v, positive(f, a + ".rope.freq_base_swa", 10000.0));
    c["rope_local_base_freq"] = *v;
  }
  const std::int64_t heads = c["num_attention_heads"].get<std::int64_t>();
  const bool big = c["num_hidden_layers"].get<std::int64_t>() == (two ? 46 : 62);
  c["query_pre_attn_scalar"] = big && heads > 0 ? c["hidden_size"].get<std::int64_t>() / heads : head_dim_of(c);
  c["hidden_activation"] = "gelu_pytorch_tanh";
  return {};
}

// The metadata read as a Hugging Face config.json: the config reader then checks every value as it checks a
// folder's, and its errors name the Hugging Face key, under this file's name.
Result<json> config_from_metadata(const io::GgufFile& f, const Arch& arch) {
  const std::string a(arch.gguf);
  json c;
  c["model_type"] = arch.model_type;
  c["architectures"] = json::array({arch.hf_class});
  const auto put_int = [&](const std::string& key, const char* hf, bool required) -> Result<void> {
    auto v = f.integer(a + "." + key);
    if (!v) return std::unexpected(v.error());
    if (!*v) {
      if (required) return fail(ErrorKind::Mismatch, "the metadata has no " + a + "." + key, f.name());
      return {};
    }
    c[hf] = **v;
    return {};
  };
  const auto put_number = [&](const std::string& key, const char* hf) -> Result<void> {
    auto v = f.number(a + "." + key);
    if (!v) return std::unexpected(v.error());
    if (*v) c[hf] = **v;
    return {};
  };
  ATTN_TRY(put_int("embedding_length", "hidden_size", true));
  ATTN_TRY(put_int("block_count", "num_hidden_layers", true));
  ATTN_TRY(put_int("feed_forward_length", "intermediate_size", true));
  ATTN_TRY(put_int("attention.head_count", "num_attention_heads", true));
  ATTN_TRY(put_int("attention.head_count_kv", "num_key_value_heads", false));
  ATTN_TRY(put_int("context_length", "max_position_embeddings", true));
  ATTN_TRY(put_int("attention.key_length", "head_dim", false));
  if (a == "gpt2") {
    // LayerNorm's epsilon (llama.cpp requires it), GPT-2's GELU (tanh's approximation) and its biases; no RoPE.
    auto eps = positive(f, a + ".attention.layer_norm_epsilon", std::nullopt);
    if (!eps) return std::unexpected(eps.error());
    if (!*eps) return fail(ErrorKind::Mismatch, "the metadata has no gpt2.attention.layer_norm_epsilon", f.name());
    c["rms_norm_eps"] = **eps;
    c["hidden_act"] = "gelu_new";
    c["attention_bias"] = true;
    c["mlp_bias"] = true;
  } else {
    ATTN_TRY(put_number("attention.layer_norm_rms_epsilon", "rms_norm_eps"));
    ATTN_TRY(put_number("rope.freq_base", "rope_theta"));
    ATTN_TRY(put_rope(f, a, c));
  }
  if (is_gemma(arch)) ATTN_TRY(put_gemma(f, arch, c));
  // (Phi-3's attention.sliding_window is not read: llama.cpp runs Phi-3 without it; load_gguf notes it.)
  // The vocabulary's size is the embedding's rows; the output head is tied when the file has none (always for
  // Gemma 2, whose output llama.cpp takes from the embedding even when the file has an output.weight).
  const io::GgufTensor* embed = f.find("token_embd.weight");
  if (!embed || embed->ne.size() != 2) {
    return fail(ErrorKind::Mismatch, "the file has no token_embd.weight of two dimensions", f.name());
  }
  c["vocab_size"] = embed->ne[1];
  c["tie_word_embeddings"] = a == "gemma2" || f.find("output.weight") == nullptr;
  for (const auto& [key, hf] : {std::pair{"tokenizer.ggml.bos_token_id", "bos_token_id"},
                                std::pair{"tokenizer.ggml.eos_token_id", "eos_token_id"}}) {
    auto v = f.integer(key);
    if (!v) return std::unexpected(v.error());
    if (*v) c[hf] = **v;
  }
  return c;
}

// The llama architecture's rope_freqs.weight (Llama 3's RoPE scaling as llama.cpp's converter writes it): F32, one
// factor per rotary pair, each finite and positive (llama.cpp divides each pair's angle by it), as
// DecoderSettings::rope_freq_factors.
Result<void> read_rope_freq_factors(const io::GgufFile& f, DecoderSettings& d) {
  const io::GgufTensor* t = f.find("rope_freqs.weight");
  if (!t) return {};
  const auto pairs = static_cast<std::int64_t>(static_cast<double>(d.head_dim) * d.partial_rotary) / 2;
  if (static_cast<io::GgmlType>(t->type) != io::GgmlType::F32 || t->ne.size() != 1 || t->ne[0] != pairs) {
    return std::unexpected(f.error(*t, ErrorKind::Mismatch,
                                   "rope_freqs.weight is " + t->type_name() + " of " + std::to_string(t->elements()) +
                                       " values; llama.cpp reads one F32 factor per rotary pair, " +
                                       std::to_string(pairs) + " here"));
  }
  auto factors = f.to_float(*t);
  if (!factors) return std::unexpected(factors.error());
  for (std::size_t i = 0; i < factors->size(); ++i) {
    const float v = (*factors)[i];
    if (!std::isfinite(v) || !(v > 0.0f)) {
      return fail(ErrorKind::OutOfRange,
                  "rope_freqs.weight[" + std::to_string(i) + "] is " + std::to_string(v) +
                      ": a RoPE frequency factor must be finite and positive",
                  f.name(), t->offset + static_cast<std::int64_t>(4 * i));
    }
  }
  d.rope_freq_factors = std::move(*factors);
  return {};
}

// What a config.json cannot say: Gemma's norms stored as 1 + w (the converter added the 1); Gemma 2's sliding
// layers' own RoPE base (rope.freq_base_swa, which llama.cpp reads for Gemma 2 too, defaulting to the global one);
// the llama architecture's RoPE factors (read_rope_freq_factors); and a note that Phi-3's sliding window is not
// applied, as llama.cpp does not apply it (src/models/phi3.cpp).
Result<void> apply_arch_settings(const io::GgufFile& f, const Arch& arch, DecoderSettings& d,
                                 std::vector<std::string>& warnings) {
  const std::string a(arch.gguf);
  d.norms_hold_one = is_gemma(arch);
  if (a == "llama") ATTN_TRY(read_rope_freq_factors(f, d));
  if (a == "gpt2") {
    d.model_type = "gpt2";
    d.gpt2 = true;
    d.partial_rotary = 0.0;  // learned positions: no dimension rotates
  }
  if (a == "gemma2") {
    auto base = positive(f, a + ".rope.freq_base_swa", std::nullopt);
    if (!base) return std::unexpected(base.error());
    if (*base && **base != d.rope_theta) {
      if (d.rope_factor != 1.0) {  // llama.cpp scales Gemma 2's sliding layers too; the engine's local base is not
        return std::unexpected(f.error(a + ".rope.freq_base_swa", ErrorKind::Unsupported,
                                       "a Gemma 2 file with both RoPE scaling and its own sliding-layer base is "
                                       "not read yet"));
      }
      d.local_rope_theta = **base;
    }
  }
  if (a == "phi3") {
    auto window = f.integer(a + ".attention.sliding_window");
    if (!window) return std::unexpected(window.error());
    if (*window && **window > 0) {
      warnings.push_back("phi3.attention.sliding_window " + std::to_string(**window) +
                         " is not applied: every layer sees the whole context, as in llama.cpp, which runs Phi-3 "
                         "without its window");
    }
  }
  return {};
}

// What keeps the views alive: the file's mapping.
struct Held {
  io::GgufFile file;
};

// Every tensor under its Hugging Face name, as a view of the mapping: F32, F16 and BF16 as themselves, the quantised
// types as ggml's blocks (io::DType::GGML), read where they are used. (The llama arch's query and key rows stay in
// the file's RoPE-pair order: the decoder loader reads them through it, decoder_load.cpp's rope_pair_rows.)
Result<io::SafeTensors> tensors_as_checkpoint(std::shared_ptr<Held> held, const Arch& arch, const json& config,
                                              const Progress& progress) {
  const io::GgufFile& f = held->file;
  const std::int64_t heads = config["num_attention_heads"].get<std::int64_t>();
  const std::int64_t kv_heads =
      config.contains("num_key_value_heads") ? config["num_key_value_heads"].get<std::int64_t>() : heads;
  std::vector<io::SafeTensors::View> views;
  std::int64_t total = 0, done = 0;
  for (const io::GgufTensor& t : f.tensors()) total += t.bytes;
  for (const io::GgufTensor& t : f.tensors()) {
    if (progress && !progress(0.5 * static_cast<double>(done) / static_cast<double>(std::max<std::int64_t>(1, total)),
                              "reading " + t.name + " (" + t.type_name() + ")")) {
      return fail(ErrorKind::Cancelled, "cancelled");
    }
    done += t.bytes;
    // (rope_freqs.weight is read into the settings: apply_arch_settings.)
    if (arch.gguf == "llama" && t.name == "rope_freqs.weight") continue;
    std::string name = hf_name(t.name, arch);
    if (name.empty()) name = t.name;
    io::SafeTensors::View v;
    v.info.name = name;
    v.info.shape = t.shape();
    v.info.begin = t.offset;
    const std::span<const std::byte> bytes = f.bytes(t);
    const bool q = t.name.ends_with("attn_q.weight"), k = t.name.ends_with("attn_k.weight");
    const std::int64_t permute_heads = arch.permuted && (q || k) ? (q ? heads : kv_heads) : 0;
    if (permute_heads > 0) {
      const std::int64_t rows = t.rows();
      if (permute_heads <= 0 || rows % permute_heads != 0 || (rows / permute_heads) % 2 != 0) {
        return std::unexpected(f.error(t, ErrorKind::Mismatch,
                                       "tensor " + quote(t.name) + " has " + std::to_string(rows) +
                                           " rows, not an even number per head for " + std::to_string(permute_heads) +
                                           " heads"));
      }
    }
    const auto type = static_cast<io::GgmlType>(t.type);
    if (type == io::GgmlType::F32 || type == io::GgmlType::F16 || type == io::GgmlType::BF16) {
      v.info.dtype = type == io::GgmlType::F32   ? io::DType::F32
                     : type == io::GgmlType::F16 ? io::DType::F16
                                                 : io::DType::BF16;
      v.bytes = bytes;
    } else {
      const auto info = io::ggml_type_info(t.type);
      if (!info || !info->readable) {
        return std::unexpected(f.error(t, ErrorKind::Unsupported,
                                       "tensor " + quote(t.name) + " is " + t.type_name() +
                                           ", a type AttnScope does not dequantise (it reads F32, F16, BF16, Q4_0, "
                                           "Q4_1, Q5_0, Q5_1, Q8_0 and Q2_K to Q6_K)"));
      }
      v.info.dtype = io::DType::GGML;  // kept as blocks: the decoder multiplies them as ggml does (decoder_linear.cpp)
      v.info.ggml_type = t.type;
      v.bytes = bytes;
    }
    views.push_back(std::move(v));
  }
  if (auto ok = f.intact(); !ok) return std::unexpected(ok.error());
  const std::string name = f.name();
  std::weak_ptr<const Held> watch = held;
  auto intact = [watch]() -> Result<void> {
    const auto h = watch.lock();
    return h ? h->file.intact() : Result<void>{};
  };
  return io::SafeTensors::from_views(name, std::move(views), std::move(held), std::move(intact));
}

// Appends a protobuf varint.
void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void field_varint(std::string& out, int field, std::uint64_t v) {
  varint(out, static_cast<std::uint64_t>(field) << 3);
  varint(out, v);
}
void field_bytes(std::string& out, int field, std::string_view bytes) {
  varint(out, (static_cast<std::uint64_t>(field) << 3) | 2);
  varint(out, bytes.size());
  out.append(bytes);
}
void field_float(std::string& out, int field, float v) {
  varint(out, (static_cast<std::uint64_t>(field) << 3) | 5);
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

// A "llama" (SentencePiece) vocabulary as the ModelProto libsentencepiece reads (sentencepiece_model.proto): each
// piece with its score and type (GGUF's token types are SentencePiece's numbers), a BPE model with byte fallback,
// the identity normaliser that adds the leading space (tokenizer.ggml.add_space_prefix, true when absent) and
// keeps runs of spaces, as llama.cpp's SentencePiece tokenizer does.
Result<std::string> sentencepiece_proto(const io::GgufFile& f, const io::GgufValue& tokens) {
  const io::GgufValue* scores = f.value("tokenizer.ggml.scores");
  const io::GgufValue* types = f.value("tokenizer.ggml.token_type");
  const std::size_t n = tokens.strings.size();
  if (!scores || !scores->array || !scores->is_number() || scores->numbers.size() != n) {
    return std::unexpected(f.error("tokenizer.ggml.scores", ErrorKind::Mismatch,
                                   "a llama vocabulary needs tokenizer.ggml.scores: one f32 per token (" +
                                       with_commas(static_cast<long long>(n)) + ")"));
  }
  if (types && (!types->array || !types->is_integer() || types->integers.size() != n)) {
    return std::unexpected(f.error(
        "tokenizer.ggml.token_type", ErrorKind::Mismatch,
        "tokenizer.ggml.token_type must hold one integer per token (" + with_commas(static_cast<long long>(n)) + ")"));
  }
  std::string proto;
  for (std::size_t i = 0; i < n; ++i) {
    std::string piece;
    field_bytes(piece, 1, tokens.strings[i]);
    field_float(piece, 2, static_cast<float>(scores->numbers[i]));
    std::int64_t type = types ? types->integers[i] : 1;
    if (type < 1 || type > 6) type = 1;  // llama.cpp reads an undefined type (0) as normal
    field_varint(piece, 3, static_cast<std::uint64_t>(type));
    field_bytes(proto, 1, piece);
  }
  std::string trainer;
  field_varint(trainer, 3, 2);   // model_type: BPE
  field_varint(trainer, 35, 1);  // byte_fallback
  const auto special = [&](const char* key, int field, std::int64_t fallback) -> Result<void> {
    auto v = f.integer(key);
    if (!v) return std::unexpected(v.error());
    const std::int64_t id = v->value_or(fallback);
    if (id < -1 || id >= static_cast<std::int64_t>(n)) {
      return std::unexpected(f.error(key, ErrorKind::OutOfRange,
                                     std::string(key) + " " + std::to_string(id) + " is not a token of the " +
                                         with_commas(static_cast<long long>(n)) + " in the vocabulary"));
    }
    field_varint(trainer, field, static_cast<std::uint64_t>(static_cast<std::int32_t>(id)));
    return {};
  };
  ATTN_TRY(special("tokenizer.ggml.unknown_token_id", 40, 0));
  ATTN_TRY(special("tokenizer.ggml.bos_token_id", 41, 1));
  ATTN_TRY(special("tokenizer.ggml.eos_token_id", 42, 2));
  ATTN_TRY(special("tokenizer.ggml.padding_token_id", 43, -1));
  field_bytes(proto, 2, trainer);
  auto prefix = f.boolean("tokenizer.ggml.add_space_prefix");
  if (!prefix) return std::unexpected(prefix.error());
  std::string normalizer;
  field_bytes(normalizer, 1, "identity");
  field_varint(normalizer, 3, prefix->value_or(true) ? 1 : 0);
  field_varint(normalizer, 4, 0);  // remove_extra_whitespaces
  field_varint(normalizer, 5, 1);  // escape_whitespaces
  field_bytes(proto, 3, normalizer);
  return proto;
}

// The pre-tokenizer a "gpt2" vocabulary's tokenizer.ggml.pre names, as llama.cpp's llama-vocab.cpp splits: its
// patterns in order, each splitting what the previous left.
Result<std::vector<std::string>> pre_patterns(const io::GgufFile& f, const std::string& pre) {
  static const std::string kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
  if (pre == "default" || pre == "gpt-2" || pre == "gpt2" || pre == "mpt" || pre == "olmo" || pre == "jais") {
    return std::vector<std::string>{kGpt2};
  }
  if (pre == "smollm" || pre == "starcoder" || pre == "refact" || pre == "command-r" || pre == "codeshell" ||
      pre == "exaone") {
    return std::vector<std::string>{R"(\p{N})", kGpt2};
  }
  if (pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3" || pre == "falcon3" || pre == "pixtral" ||
      pre == "granite-docling") {
    return std::vector<std::string>{
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
  }
  if (pre == "qwen2" || pre == "stablelm2" || pre == "deepseek-r1-qwen" || pre == "hunyuan") {
    return std::vector<std::string>{
        R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
  }
  return std::unexpected(f.error("tokenizer.ggml.pre", ErrorKind::Unsupported,
                                 "the pre-tokenizer " + quote(pre) +
                                     " is not read; AttnScope reads default (GPT-2), smollm, llama3 and qwen2 and "
                                     "the names llama.cpp gives the same patterns"));
}

// A "gpt2" (byte-level BPE) vocabulary as the tokenizer.json Hugging Face's library would write for it: the BPE
// model with the merges, the pre-tokenizer's patterns as Split steps before a ByteLevel without its own regex,
// control and user-defined tokens as added tokens, BOS added in front when tokenizer.ggml.add_bos_token says so.
Result<std::string> tokenizer_json(const io::GgufFile& f, const io::GgufValue& tokens, bool add_bos) {
  const io::GgufValue* merges = f.value("tokenizer.ggml.merges");
  if (!merges || !merges->array || merges->type != io::GgufType::String) {
    return std::unexpected(f.error("tokenizer.ggml.merges", ErrorKind::Mismatch,
                                   "a gpt2 vocabulary needs tokenizer.ggml.merges, an array of strings"));
  }
  const io::GgufValue* types = f.value("tokenizer.ggml.token_type");
  const std::size_t n = tokens.strings.size();
  if (types && (!types->array || !types->is_integer() || types->integers.size() != n)) {
    return std::unexpected(f.error(
        "tokenizer.ggml.token_type", ErrorKind::Mismatch,
        "tokenizer.ggml.token_type must hold one integer per token (" + with_commas(static_cast<long long>(n)) + ")"));
  }
  auto pre = f.string("tokenizer.ggml.pre");
  if (!pre) return std::unexpected(pre.error());
  auto patterns = pre_patterns(f, pre->value_or("default"));
  if (!patterns) return std::unexpected(patterns.error());
  json vocab = json::object();
  json added = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    vocab[tokens.strings[i]] = i;
    const std::int64_t type = types ? types->integers[i] : 1;
    if (type == 3 || type == 4) {
      added.push_back({{"id", i},
                       {"content", tokens.strings[i]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", type == 4},
                       {"special", type == 3}});
    }
  }
  json steps = json::array();
  for (const std::string& p : *patterns) {
    steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", p}}}, {"behavior", "Isolated"}, {"invert", false}});
  }
  steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}});
  json t = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", steps}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"vocab", vocab},
        {"merges", merges->strings}}}};
  if (add_bos) {
    auto bos = f.integer("tokenizer.ggml.bos_token_id");
    if (!bos) return std::unexpected(bos.error());
    if (!*bos || **bos < 0 || **bos >= static_cast<std::int64_t>(n)) {
      return std::unexpected(f.error("tokenizer.ggml.add_bos_token", ErrorKind::Mismatch,
                                     "tokenizer.ggml.add_bos_token is set but tokenizer.ggml.bos_token_id names no "
                                     "token of the vocabulary"));
    }
    const std::string b = tokens.strings[static_cast<std::size_t>(**bos)];
    t["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         json::array({{{"SpecialToken", {{"id", b}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"pair", json::array({{{"SpecialToken", {{"id", b}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                              {{"SpecialToken", {{"id", b}, {"type_id", 1}}}},
                              {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}})},
        {"special_tokens", {{b, {{"id", b}, {"ids", json::array({**bos})}, {"tokens", json::array({b})}}}}}};
  }
  return t.dump();
}

// The tokenizer the file carries; nullopt-like (an error the caller turns into a warning) when it has none.
Result<std::unique_ptr<text::Tokenizer>> tokenizer_from(const io::GgufFile& f) {
  auto model = f.string("tokenizer.ggml.model");
  if (!model) return std::unexpected(model.error());
  if (!*model || **model == "none" || **model == "no_vocab") {
    return fail(ErrorKind::Mismatch, "the file carries no vocabulary (tokenizer.ggml.model)", f.name());
  }
  const io::GgufValue* tokens = f.value("tokenizer.ggml.tokens");
  if (!tokens || !tokens->array || tokens->type != io::GgufType::String) {
    return std::unexpected(f.error("tokenizer.ggml.tokens", ErrorKind::Mismatch,
                                   "the vocabulary needs tokenizer.ggml.tokens, an array of strings"));
  }
  auto add_bos = f.boolean("tokenizer.ggml.add_bos_token");
  if (!add_bos) return std::unexpected(add_bos.error());
  auto add_eos = f.boolean("tokenizer.ggml.add_eos_token");
  if (!add_eos) return std::unexpected(add_eos.error());
  const std::string name = f.name() + " (its vocabulary)";
  if (**model == "llama") {
    auto proto = sentencepiece_proto(f, *tokens);
    if (!proto) return std::unexpected(proto.error());
    return text::parse_sentencepiece(*proto, name, add_bos->value_or(true), add_eos->value_or(false));
  }
  if (**model == "gpt2") {
    auto text = tokenizer_json(f, *tokens, add_bos->value_or(false));
    if (!text) return std::unexpected(text.error());
    return text::parse_tokenizer_json(*text, name);
  }
  return std::unexpected(f.error("tokenizer.ggml.model", ErrorKind::Unsupported,
                                 "tokenizer.ggml.model " + quote(**model) +
                                     " is not read; AttnScope reads llama (SentencePiece) and gpt2 (byte-level BPE)"));
}

// "12.3 MB", "1.02 GB": a size in the card.
std::string size_text(std::int64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / 1e9);
  } else if (bytes >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(bytes) / 1e3);
  }
  return buf;
}

// Text as it must stand in a Markdown table cell to show as itself: line breaks as spaces, every ASCII punctuation
// mark escaped (tokens such as "<s>" or "<|im_end|>" would otherwise be read as HTML or as the cell's end).
std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\n' || ch == '\r' || ch == '\t') {
      out += ' ';
    } else if (std::ispunct(static_cast<unsigned char>(ch))) {
      out += '\\';
      out += ch;
    } else {
      out += ch;
    }
  }
  return out;
}

// A key's value as one cell of the card's table: a scalar as it is (a string cut at 120 bytes), an array as its
// length and element type with its first elements.
std::string value_text(const io::GgufValue& v) {
  const auto cut = [](const std::string& s) {
    std::size_t end = std::min<std::size_t>(s.size(), 120);
    while (end < s.size() && end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // whole characters
    std::string out =
        end < s.size() ? s.substr(0, end) + "\xE2\x80\xA6 (" + with_commas(static_cast<long long>(s.size())) + " bytes)"
                       : s;
    return out;
  };
  const auto element = [&](std::size_t i) {
    if (v.type == io::GgufType::String) return cut(v.strings[i]);
    if (v.is_number()) {
      // The shortest text that reads back as the stored value: 1e-05 for an f32 1e-5, not its double's digits.
      char buf[32];
      const auto end = v.type == io::GgufType::F32
                           ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v.numbers[i])).ptr
                           : std::to_chars(buf, buf + sizeof buf, v.numbers[i]).ptr;
      return std::string(buf, end);
    }
    if (v.type == io::GgufType::Bool) return std::string(v.integers[i] ? "true" : "false");
    return std::to_string(v.integers[i]);
  };
  if (!v.array) return element(0);
  std::string out = with_commas(static_cast<long long>(v.size())) + " " + std::string(io::to_string(v.type)) + ": ";
  for (std::size_t i = 0; i < std::min<std::size_t>(v.size(), 5); ++i) out += (i ? ", " : "") + element(i);
  if (v.size() > 5) out += ", \xE2\x80\xA6";
  return out;
}

// The type most of the matrices' bytes are in ("Q4_K"): what the file is called by.
std::string main_type(const io::GgufFile& f) {
  std::map<std::string, std::int64_t> bytes;
  for (const io::GgufTensor& t : f.tensors()) {
    if (t.ne.size() >= 2) bytes[t.type_name()] += t.bytes;
  }
  if (bytes.empty()) return "F32";
  return std::max_element(bytes.begin(), bytes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

// The card: what the file is, its tensors by type (the quantisation), the chat template, every key.
std::string card_of(const io::GgufFile& f) {
  const auto name = f.string("general.name");
  std::string md = "# " + (name && *name ? **name : std::filesystem::path(f.name()).filename().string()) + "\n\n";
  const auto arch = f.string("general.architecture");
  md += "A GGUF file (version " + std::to_string(f.version()) + ") of the " + (arch && *arch ? **arch : "?") +
        " architecture, " + size_text(f.file_size()) + ", " + with_commas(static_cast<long long>(f.tensors().size())) +
        " tensors.\n\n## Tensor types\n\n| type | tensors | parameters | bytes |\n|---|---:|---:|---:|\n";
  std::map<std::string, std::array<std::int64_t, 3>> types;
  for (const io::GgufTensor& t : f.tensors()) {
    auto& row = types[t.type_name()];
    row[0] += 1;
    row[1] += t.elements();
    row[2] += t.bytes;
  }
  for (const auto& [type, row] : types) {
    md += "| " + type + " | " + with_commas(row[0]) + " | " + with_commas(row[1]) + " | " + size_text(row[2]) + " |\n";
  }
  if (const auto chat = f.string("tokenizer.chat_template"); chat && *chat) {
    md += "\n## Chat template\n\n```jinja\n" + **chat + "\n```\n";
  }
  md += "\n## Metadata\n\n| key | value |\n|---|---|\n";
  for (const std::string& key : f.keys()) {
    if (key == "tokenizer.chat_template") continue;
    md += "| " + markdown_cell(key) + " | " + markdown_cell(value_text(*f.value(key))) + " |\n";
  }
  return md;
}

}  // namespace

Result<std::shared_ptr<const TransformerModel>> load_gguf(const std::filesystem::path& path, const Progress& progress,
                                                          const LoadOptions& options) {
  if (progress && !progress(0.0, "opening " + path.filename().string())) {
    return fail(ErrorKind::Cancelled, "cancelled");
  }
  auto file = io::GgufFile::open(path);
  if (!file) return std::unexpected(file.error());
  auto arch_name = file->string("general.architecture");
  if (!arch_name) return std::unexpected(arch_name.error());
  if (!*arch_name) return fail(ErrorKind::Mismatch, "the metadata has no general.architecture", file->name());
  const Arch* arch = find_arch(**arch_name);
  if (!arch) {
    return std::unexpected(file->error(
        "general.architecture", ErrorKind::Unsupported,
        "the architecture " + quote(**arch_name) + " is not read; AttnScope reads " + arch_list() + " GGUF files"));
  }
  auto config_json = config_from_metadata(*file, *arch);
  if (!config_json) return std::unexpected(config_json.error());
  auto config = parse_config(config_json->dump(), file->name() + " (its metadata read as config.json)");
  if (!config) return std::unexpected(config.error());
  config->decoder.ggml_arithmetic = options.gguf_llama_cpp_arithmetic;
  config->decoder.ggml_f16_cache = options.gguf_llama_cpp_arithmetic && options.gguf_f16_cache;
  config->decoder.ggml_amx =
      options.gguf_llama_cpp_arithmetic &&
      (options.gguf_build == LoadOptions::GgmlBuild::ThisMachine ? io::cpu_has_amx()
                                                                 : options.gguf_build == LoadOptions::GgmlBuild::Amx);
  config->decoder.ggml_rope_pairs = arch->permuted;
  config->decoder.ggml_scaled_queries = is_gemma(*arch) || arch->gguf == "phi3";
  std::vector<std::string> warnings;
  ATTN_TRY(apply_arch_settings(*file, *arch, config->decoder, warnings));

  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::string tokenizer_note;
  if (auto tok = tokenizer_from(*file)) {
    tokenizer = std::shared_ptr<const text::Tokenizer>(std::move(*tok));
  } else {
    tokenizer_note = "no tokenizer (" + tok.error().message() + "): only token ids can be run";
  }

  std::string card = card_of(*file);
  // Under the first paragraph: how the numbers are computed (LoadOptions).
  const std::string arithmetic =
      !options.gguf_llama_cpp_arithmetic
          ? "Computed in float32, as a Hugging Face folder is (not as llama.cpp rounds).\n\n"
          : std::string(
                "Computed as llama.cpp's CPU backend computes it: each product's activations rounded to the "
                "type ggml multiplies the weights with (F16, BF16, Q8_0, Q8_1, Q8_K), F32 and F16 products summed "
                "in its order, norms, RoPE and activations operation for operation") +
                (options.gguf_f16_cache ? "; keys, values, queries and attention weights rounded to F16 as its "
                                          "default key/value cache does, the attention summed in its order.\n\n"
                                        : "; keys and values kept in float32.\n\n");
  if (const auto at = card.find("\n\n## Tensor types"); at != std::string::npos) card.insert(at + 2, arithmetic);
  auto held = std::make_shared<Held>();
  held->file = std::move(*file);
  auto weights = tensors_as_checkpoint(held, *arch, *config_json, progress);
  if (!weights) return std::unexpected(weights.error());
  const Progress second_half = [&progress](double fraction, const std::string& what) {
    return !progress || progress(0.5 + 0.5 * fraction, what);
  };
  SourceNotes notes;
  notes.warnings = std::move(warnings);
  if (!tokenizer_note.empty()) notes.warnings.push_back(std::move(tokenizer_note));
  notes.card = std::move(card);
  notes.format = "GGUF " + main_type(held->file);
  return TransformerModel::from_parts(std::move(*config), *weights, std::move(tokenizer), second_half,
                                      std::move(notes));
}

}  // namespace attn::models
