#include "attn/models/config.h"

#include "../../core/json_config.h"
#include "../../core/try.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <numbers>
#include <optional>
#include <system_error>

namespace attn::models {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using detail::kMaxConfigSize;
using detail::quote;

// Sizes a config may ask for, checked before anything is allocated from them (the tensors are then checked
// against the config, so a small file cannot make the loader reserve gigabytes). Each is far above the
// published models: BERT-large 1024 hidden, 16 heads, 24 layers; GPT-2 XL 1600, 25, 48; vocabularies of 250k.
constexpr std::int64_t kMaxHidden = 1 << 16;
constexpr std::int64_t kMaxHeads = 1024;
constexpr std::int64_t kMaxLayers = 1024;
constexpr std::int64_t kMaxIntermediate = 1 << 18;
constexpr std::int64_t kMaxVocab = 1 << 20;
constexpr std::int64_t kMaxPositions = 1 << 20;
constexpr std::int64_t kMaxTypeVocab = 1024;
constexpr std::int64_t kMaxImageSize = 8192;
constexpr std::int64_t kMaxLabels = 1 << 16;
constexpr std::string_view kSupported =
    "AttnScope runs the model_types bert, distilbert, gpt2, vit and the decoders llama, mistral, qwen2, qwen3, "
    "gemma2, gemma3_text (gemma3) and phi3";
// The decoder model_types and the architectures that name them.
constexpr std::pair<std::string_view, std::string_view> kDecoderTypes[] = {
    {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"}, {"gemma2", "Gemma2ForCausalLM"},   {"gemma3_text", "Gemma3ForCausalLM"},
    {"phi3", "Phi3ForCausalLM"}};
constexpr std::string_view kRopeTypes = "default, linear, dynamic, llama3 and yarn";

std::string number_text(double v) { return json(v).dump(); }

// The keys of one JSON object, read under transformers' aliases (the first alias present wins).
class Keys : public detail::JsonKeys {
 public:
  using JsonKeys::JsonKeys;

  // The first of `names` present with a non-null value, and which one it was.
  std::pair<std::string_view, const json*> find_any(std::initializer_list<std::string_view> names) const {
    for (const std::string_view name : names) {
      if (const json* value = find(name)) return {name, value};
    }
    return {*names.begin(), nullptr};
  }

  // A whole number in [lo, hi], or `fallback` when absent. `key_used` says which alias was read.
  Result<int> whole(std::initializer_list<std::string_view> names, int fallback, std::int64_t lo = 1,
                    std::int64_t hi = kMaxConfigSize, std::string_view* key_used = nullptr) const {
    const std::string_view key = find_any(names).first;
    if (key_used) *key_used = key;
    return whole_or(key, fallback, lo, hi);
  }

  Result<float> epsilon(std::initializer_list<std::string_view> names, float fallback) const {
    const auto [key, value] = find_any(names);
    if (!value) return fallback;
    if (!value->is_number()) {
      return error(ErrorKind::Malformed, key, std::string(key) + " must be a number, got " + value->dump());
    }
    const double v = value->get<double>();
    if (!(v > 0.0 && v < 1.0)) {
      return error(ErrorKind::OutOfRange, key,
                   std::string(key) + " is " + number_text(v) + "; a layer-norm epsilon is above 0 and below 1");
    }
    return static_cast<float>(v);
  }

  Result<Activation> activation(std::string_view key, std::string_view fallback) const {
    std::string act;
    ATTN_ASSIGN(act, text_or(key, std::string(fallback)));
    if (act == "gelu" || act == "gelu_python") return Activation::GeluErf;
    if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return Activation::GeluTanh;
    if (act == "relu") return Activation::Relu;
    return error(ErrorKind::Unsupported, key,
                 std::string(key) + " " + quote(act) +
                     " is not supported; use \"gelu\", \"gelu_new\", \"gelu_pytorch_tanh\", \"gelu_fast\" or "
                     "\"relu\"");
  }
};

std::optional<Family> family_of_model_type(std::string_view t) {
  if (t == "bert") return Family::Bert;
  if (t == "distilbert") return Family::DistilBert;
  if (t == "gpt2") return Family::Gpt2;
  if (t == "vit") return Family::Vit;
  for (const auto& [type, arch] : kDecoderTypes) {
    if (t == type) return Family::Decoder;
  }
  if (t == "gemma3") return Family::Decoder;  // multimodal Gemma 3: its text_config is read
  return std::nullopt;
}

std::optional<Family> family_of_architecture(std::string_view a) {
  // DistilBert... before Bert...: one name is a prefix of the other only in this order.
  if (a.starts_with("DistilBert")) return Family::DistilBert;
  if (a.starts_with("Bert")) return Family::Bert;
  if (a.starts_with("GPT2")) return Family::Gpt2;
  if (a.starts_with("ViT")) return Family::Vit;
  for (const auto& [type, arch] : kDecoderTypes) {
    if (a == arch) return Family::Decoder;
  }
  if (a == "Gemma3ForConditionalGeneration") return Family::Decoder;
  return std::nullopt;
}

Result<Family> read_family(const Keys& keys, TransformerConfig& c) {
  const json& root = keys.root();
  const auto architectures = root.find("architectures");
  if (architectures != root.end() && !architectures->is_null()) {
    if (!architectures->is_array() || architectures->empty() || !(*architectures)[0].is_string()) {
      return keys.error(ErrorKind::Malformed, "architectures",
                        "architectures must be a list of class names, got " + architectures->dump());
    }
    c.architecture = (*architectures)[0].get<std::string>();
  }
  const auto model_type = root.find("model_type");
  if (model_type != root.end() && !model_type->is_null()) {
    if (!model_type->is_string()) {
      return keys.error(ErrorKind::Malformed, "model_type", "model_type must be a string, got " + model_type->dump());
    }
    if (const auto f = family_of_model_type(model_type->get<std::string>())) return *f;
    return keys.error(ErrorKind::Unsupported, "model_type",
                      "model_type " + model_type->dump() + " is not supported; " + std::string(kSupported));
  }
  if (!c.architecture.empty()) {
    if (const auto f = family_of_architecture(c.architecture)) return *f;
    return keys.error(ErrorKind::Unsupported, "architectures",
                      "architectures " + architectures->dump() + " is not supported; " + std::string(kSupported));
  }
  return keys.error(ErrorKind::Malformed, "names neither model_type nor architectures; " + std::string(kSupported));
}

Result<std::vector<std::string>> read_labels(const Keys& keys) {
  constexpr std::string_view key = "id2label";
  const json* value = keys.find(key);
  std::vector<std::string> labels;
  if (!value) return labels;
  if (!value->is_object()) {
    return keys.error(ErrorKind::Malformed, key,
                      "id2label must be an object {\"0\": \"label\", ...}, got " + value->dump());
  }
  std::vector<std::optional<std::string>> by_id;
  for (const auto& [id_text, label] : value->items()) {
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec == std::errc() && end == id_text.data() + id_text.size() && id >= kMaxLabels) {
      return keys.error(ErrorKind::TooLarge, key,
                        "id2label key " + quote(id_text) + " is over the limit of " + std::to_string(kMaxLabels - 1));
    }
    if (ec != std::errc() || end != id_text.data() + id_text.size() || id < 0) {
      return keys.error(ErrorKind::Malformed, key,
                        "id2label key " + quote(id_text) + " is not a class id (a whole number from 0)");
    }
    if (!label.is_string()) {
      return keys.error(ErrorKind::Malformed, key,
                        "id2label[" + quote(id_text) + "] must be a string, got " + label.dump());
    }
    if (static_cast<std::size_t>(id) >= by_id.size()) by_id.resize(static_cast<std::size_t>(id) + 1);
    by_id[static_cast<std::size_t>(id)] = label.get<std::string>();
  }
  for (std::size_t i = 0; i < by_id.size(); ++i) {
    labels.push_back(by_id[i] ? *by_id[i] : "LABEL_" + std::to_string(i));  // transformers' own default name
  }
  return labels;
}

// The model_type of a decoder config: model_type, else the one its architectures[0] names.
Result<std::string> decoder_type(const Keys& k, const TransformerConfig& c) {
  std::string t;
  ATTN_ASSIGN(t, k.text_or("model_type", ""));
  if (!t.empty()) return t;
  for (const auto& [type, arch] : kDecoderTypes) {
    if (c.architecture == arch) return std::string(type);
  }
  if (c.architecture == "Gemma3ForConditionalGeneration") return std::string("gemma3");
  return k.error(ErrorKind::Malformed, "names neither model_type nor architectures; " + std::string(kSupported));
}

// A number of the rope_scaling object `s` (of type `t`) in [lo, hi] (`above` refuses lo itself): absent or null takes
// `fallback`, and without a fallback a key that must be there (lo > 0) is refused. Errors name the field, its value
// and the range, at the line of rope_scaling.
Result<std::optional<double>> rope_number(const Keys& k, const json& s, const std::string& t, const char* name,
                                          std::optional<double> fallback, double lo, double hi, bool above = false) {
  constexpr std::string_view key = "rope_scaling";
  if (!s.contains(name) || s[name].is_null()) {
    if (!fallback && lo > 0) {
      return k.error(ErrorKind::Malformed, key, "rope_scaling type " + quote(t) + " needs \"" + name + "\"");
    }
    return fallback;
  }
  const json& v = s[name];
  if (!v.is_number()) {
    return k.error(ErrorKind::Malformed, key,
                   std::string("rope_scaling ") + name + " must be a number, got " + v.dump());
  }
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || (above && x == lo) || x > hi) {
    return k.error(x > hi ? ErrorKind::TooLarge : ErrorKind::OutOfRange, key,
                   std::string("rope_scaling ") + name + " is " + (std::isfinite(x) ? v.dump() : "not finite") +
                       "; it must be " + (above ? "above " : "from ") + number_text(lo) +
                       (above ? " and at most " : " to ") + number_text(hi));
  }
  return x;
}

// Llama 3's and YaRN's fields of the rope_scaling object `s`.
Result<void> read_rope_llama3_yarn(const Keys& k, const json& s, const std::string& t, DecoderSettings& d,
                                   int max_positions) {
  constexpr std::string_view key = "rope_scaling";
  std::optional<double> v;
  const auto original = [&](std::optional<double> fallback) -> Result<void> {
    ATTN_ASSIGN(
        v, rope_number(k, s, t, "original_max_position_embeddings", fallback, 1, static_cast<double>(kMaxPositions)));
    if (*v != std::floor(*v)) {
      return k.error(ErrorKind::Malformed, key,
                     "rope_scaling original_max_position_embeddings is " + number_text(*v) + ", not a whole number");
    }
    d.original_max_positions = static_cast<int>(*v);
    return {};
  };
  if (d.rope == RopeScaling::Llama3) {
    ATTN_ASSIGN(v, rope_number(k, s, t, "low_freq_factor", std::nullopt, 1e-6, kMaxRopeFactor));
    d.low_freq_factor = *v;
    ATTN_ASSIGN(v, rope_number(k, s, t, "high_freq_factor", std::nullopt, 1e-6, kMaxRopeFactor));
    d.high_freq_factor = *v;
    if (d.high_freq_factor <= d.low_freq_factor) {
      return k.error(ErrorKind::OutOfRange, key, "rope_scaling high_freq_factor must be above low_freq_factor");
    }
    ATTN_TRY(original(std::nullopt));
  }
  if (d.rope == RopeScaling::Yarn) {
    ATTN_TRY(original(static_cast<double>(max_positions)));
    ATTN_ASSIGN(d.attention_factor, rope_number(k, s, t, "attention_factor", std::nullopt, 0, kMaxRopeFactor, true));
    // The ramp's ends are log(positions / (beta 2 pi)): a beta of 0 would make them infinite.
    ATTN_ASSIGN(v, rope_number(k, s, t, "beta_fast", 32.0, 0, kMaxRopeFactor, true));
    d.beta_fast = *v;
    ATTN_ASSIGN(v, rope_number(k, s, t, "beta_slow", 1.0, 0, kMaxRopeFactor, true));
    d.beta_slow = *v;
    ATTN_ASSIGN(v, rope_number(k, s, t, "mscale", 0.0, 0, kMaxRopeFactor));
    d.mscale = *v;
    ATTN_ASSIGN(v, rope_number(k, s, t, "mscale_all_dim", 0.0, 0, kMaxRopeFactor));
    d.mscale_all_dim = *v;
  }
  return {};
}

// LongRoPE's per-dimension factors: read by no type AttnScope runs, checked all the same where they are given.
Result<void> check_rope_factor_lists(const Keys& k, const json& s) {
  constexpr std::string_view key = "rope_scaling";
  for (const char* name : {"long_factor", "short_factor"}) {
    if (!s.contains(name) || s[name].is_null()) continue;
    const json& list = s[name];
    if (!list.is_array() || list.size() > static_cast<std::size_t>(kMaxHidden)) {
      return k.error(ErrorKind::Malformed, key,
                     std::string("rope_scaling ") + name + " must be a list of at most " + std::to_string(kMaxHidden) +
                         " numbers");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& e = list[i];
      if (!e.is_number() || !std::isfinite(e.get<double>()) || e.get<double>() < 1e-6 ||
          e.get<double>() > kMaxRopeFactor) {
        return k.error(ErrorKind::OutOfRange, key,
                       std::string("rope_scaling ") + name + "[" + std::to_string(i) + "] is " + e.dump() +
                           "; it must be a number from " + number_text(1e-6) + " to " + number_text(kMaxRopeFactor));
      }
    }
  }
  return {};
}

// rope_scaling: null, or {"rope_type" (or "type"): ..., "factor": ..., per-type keys}. Every number is checked for
// finiteness and range here, where it enters: the rotary frequencies and the context are computed from them.
Result<void> read_rope_scaling(const Keys& k, DecoderSettings& d, int max_positions) {
  constexpr std::string_view key = "rope_scaling";
  const json* s = k.find(key);
  if (!s) return {};
  if (!s->is_object())
    return k.error(ErrorKind::Malformed, key, "rope_scaling must be an object or null, got " + s->dump());
  const json* kind = s->contains("rope_type") ? &(*s)["rope_type"] : s->contains("type") ? &(*s)["type"] : nullptr;
  if (!kind || !kind->is_string()) {
    return k.error(ErrorKind::Malformed, key,
                   "rope_scaling needs a \"rope_type\" (or \"type\") string, got " + s->dump());
  }
  const std::string t = kind->get<std::string>();
  if (t == "default")
    d.rope = RopeScaling::Default;
  else if (t == "linear")
    d.rope = RopeScaling::Linear;
  else if (t == "dynamic")
    d.rope = RopeScaling::Dynamic;
  else if (t == "llama3")
    d.rope = RopeScaling::Llama3;
  else if (t == "yarn")
    d.rope = RopeScaling::Yarn;
  else {
    return k.error(
        ErrorKind::Unsupported, key,
        "rope_scaling type " + quote(t) + " is not supported; AttnScope supports " + std::string(kRopeTypes));
  }
  if (d.rope != RopeScaling::Default) {
    std::optional<double> v;
    const std::optional<double> fallback = d.rope == RopeScaling::Yarn ? std::optional<double>(1.0) : std::nullopt;
    ATTN_ASSIGN(v, rope_number(k, *s, t, "factor", fallback, 1e-6, kMaxRopeFactor));
    d.rope_factor = *v;
  }
  if (d.rope == RopeScaling::Dynamic) {
    // Dynamic scaling is for inputs up to max_position_embeddings x factor: that product is the context.
    const double context = static_cast<double>(max_positions) * std::max(1.0, d.rope_factor);
    if (context > static_cast<double>(kMaxDecoderContext)) {
      return k.error(ErrorKind::TooLarge, key,
                     "rope_scaling factor " + number_text(d.rope_factor) + " (dynamic) stretches " +
                         "max_position_embeddings " + std::to_string(max_positions) + " to a context of " +
                         number_text(context) + " tokens; at most " + std::to_string(kMaxDecoderContext));
    }
  }
  ATTN_TRY(read_rope_llama3_yarn(k, *s, t, d, max_positions));
  return check_rope_factor_lists(k, *s);
}

// A token id or a list of them (eos_token_id).
Result<std::vector<int>> token_ids(const Keys& k, std::string_view key, int vocab) {
  std::vector<int> ids;
  const json* v = k.find(key);
  if (!v) return ids;
  const json list = v->is_array() ? *v : json::array({*v});
  for (const json& e : list) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() >= vocab) {
      return k.error(
          ErrorKind::OutOfRange, key,
          std::string(key) + " " + v->dump() + " is not a token id of the vocabulary of " + std::to_string(vocab));
    }
    ids.push_back(e.get<int>());
  }
  return ids;
}

Result<TransformerConfig> read_config(const Keys& k);

// A multimodal Gemma 3: the text model is its text_config, read as a gemma3_text config.
Result<TransformerConfig> read_gemma3_text_config(const Keys& k) {
  const json* text = k.find("text_config");
  if (!text || !text->is_object()) {
    return k.error(ErrorKind::Malformed, "model_type", "a gemma3 config needs a text_config object");
  }
  json inner = *text;
  inner["model_type"] = "gemma3_text";
  const std::string dumped = inner.dump();
  return detail::read_json_config<Keys>(dumped, k.file() + " (text_config)",
                                        [](const Keys& tk) { return read_config(tk); });
}

// The sizes: hidden, heads (and key/value heads, which must divide them), layers, vocabulary, positions, head_dim.
Result<void> read_decoder_sizes(const Keys& k, TransformerConfig& c) {
  DecoderSettings& d = c.decoder;
  std::string_view heads_key;
  ATTN_ASSIGN(c.hidden, k.whole({"hidden_size"}, 4096, 1, kMaxHidden));
  ATTN_ASSIGN(c.heads, k.whole({"num_attention_heads"}, 32, 1, kMaxHeads, &heads_key));
  ATTN_ASSIGN(c.layers, k.whole({"num_hidden_layers"}, 32, 1, kMaxLayers));
  ATTN_ASSIGN(c.intermediate, k.whole({"intermediate_size"}, 11008, 1, kMaxIntermediate));
  ATTN_ASSIGN(c.vocab_size, k.whole({"vocab_size"}, 32000, 1, kMaxVocab));
  ATTN_ASSIGN(c.max_positions, k.whole({"max_position_embeddings"}, 2048, 1, kMaxPositions));
  c.type_vocab_size = 0;
  ATTN_ASSIGN(d.kv_heads, k.whole({"num_key_value_heads"}, c.heads, 1, kMaxHeads));
  if (c.heads % d.kv_heads != 0) {
    return k.error(ErrorKind::Mismatch, "num_key_value_heads",
                   "num_key_value_heads " + std::to_string(d.kv_heads) + " does not divide num_attention_heads " +
                       std::to_string(c.heads) + ": every key/value head serves the same number of query heads");
  }
  if (k.find("head_dim")) {
    ATTN_ASSIGN(d.head_dim, k.whole({"head_dim"}, 0, 1, kMaxHidden));
  } else if (c.hidden % c.heads != 0) {
    return k.error(ErrorKind::Mismatch, heads_key,
                   "hidden_size " + std::to_string(c.hidden) + " is not divisible by num_attention_heads " +
                       std::to_string(c.heads) + " and there is no head_dim");
  } else {
    d.head_dim = c.hidden / c.heads;
  }
  if (d.head_dim % 2 != 0)
    return k.error(ErrorKind::Mismatch, "head_dim",
                   "head_dim " + std::to_string(d.head_dim) + " is odd: RoPE rotates pairs");
  return {};
}

// RoPE: its base, the rotary part of each head, the scaling.
Result<void> read_decoder_rope(const Keys& k, TransformerConfig& c) {
  DecoderSettings& d = c.decoder;
  double v = 0;
  ATTN_ASSIGN(v, k.number_or("rope_theta", 10000.0, 1.0, 1e12));
  d.rope_theta = v;
  ATTN_ASSIGN(d.partial_rotary, k.number_or("partial_rotary_factor", 1.0, 1e-6, 1.0));
  const int rotary = static_cast<int>(d.head_dim * d.partial_rotary);
  if (rotary < 2 || rotary % 2 != 0) {
    return k.error(ErrorKind::OutOfRange, "partial_rotary_factor",
                   "partial_rotary_factor leaves " + std::to_string(rotary) + " rotary dimensions of head_dim " +
                       std::to_string(d.head_dim) + "; RoPE needs an even number, at least 2");
  }
  ATTN_TRY(read_rope_scaling(k, d, c.max_positions));
  if (d.rope == RopeScaling::Llama3 || d.rope == RopeScaling::Yarn) {
    if (d.original_max_positions == 0) d.original_max_positions = c.max_positions;
  }
  // What the forward computes from them, at the shortest and the longest input the model takes: every rotary
  // frequency and the factor finite and positive (rope_theta 1 with YaRN, say, divides by log(1)).
  for (const Index seq_len : {Index{1}, static_cast<Index>(c.max_positions), c.context()}) {
    const RopeFrequencies r = rope_frequencies(c, seq_len, false);
    const auto bad = std::find_if(r.inv.begin(), r.inv.end(), [](double f) { return !(std::isfinite(f) && f > 0); });
    if (bad != r.inv.end() || !(std::isfinite(r.factor) && r.factor > 0)) {
      const std::string what = bad != r.inv.end() ? "the inverse frequency of rotary pair " +
                                                        std::to_string(bad - r.inv.begin()) + " is " + number_text(*bad)
                                                  : "the attention factor is " + number_text(r.factor);
      return k.error(ErrorKind::OutOfRange, k.find("rope_scaling") ? "rope_scaling" : "rope_theta",
                     "rope_theta " + number_text(d.rope_theta) + " with this rope_scaling gives, at " +
                         std::to_string(seq_len) + " tokens, " + what + "; RoPE needs finite positive values");
    }
  }
  return {};
}

// The biases, the tied embedding and the gated MLP's activation.
Result<void> read_decoder_layer_kinds(const Keys& k, DecoderSettings& d) {
  const std::string& t = d.model_type;
  bool attention_bias = false;
  ATTN_ASSIGN(attention_bias, k.boolean_or("attention_bias", false));
  d.qkv_bias = t == "qwen2" || attention_bias;
  d.o_bias = attention_bias && t != "qwen2";
  ATTN_ASSIGN(d.mlp_bias, k.boolean_or("mlp_bias", false));
  ATTN_ASSIGN(d.tied, k.boolean_or("tie_word_embeddings", d.gemma));
  std::string act;
  const std::string_view act_key = k.find("hidden_activation") ? "hidden_activation" : "hidden_act";
  ATTN_ASSIGN(act, k.text_or(act_key, d.gemma ? "gelu_pytorch_tanh" : "silu"));
  if (act == "silu" || act == "swish")
    d.activation = GatedActivation::Silu;
  else if (act == "gelu_pytorch_tanh" || act == "gelu_new" || act == "gelu_fast")
    d.activation = GatedActivation::GeluTanh;
  else if (act == "gelu")
    d.activation = GatedActivation::GeluErf;
  else {
    return k.error(ErrorKind::Unsupported, act_key,
                   std::string(act_key) + " " + quote(act) + " is not supported; use silu, gelu or gelu_pytorch_tanh");
  }
  return {};
}

// The query's scale (Gemma's query_pre_attn_scalar) and Gemma's soft caps of the scores and the logits.
Result<void> read_decoder_scales(const Keys& k, DecoderSettings& d) {
  double scalar = d.head_dim;
  if (d.gemma) ATTN_ASSIGN(scalar, k.number_or("query_pre_attn_scalar", d.head_dim, 1e-6, 1e9));
  d.query_scale = 1.0 / std::sqrt(scalar);
  if (d.gemma) {
    double v = 0;
    ATTN_ASSIGN(v, k.number_or("attn_logit_softcapping", 0.0, 0.0, 1e9));
    d.attn_softcap = static_cast<float>(v);
    ATTN_ASSIGN(v, k.number_or("final_logit_softcapping", 0.0, 0.0, 1e9));
    d.final_softcap = static_cast<float>(v);
  }
  return {};
}

// Which layers slide: layer_types when given, else the family's rule; Gemma 3's local layers' RoPE base.
Result<void> read_sliding_layers(const Keys& k, int layers, DecoderSettings& d) {
  const std::string& t = d.model_type;
  ATTN_ASSIGN(d.window, k.whole({"sliding_window"}, 0, 1, kMaxPositions));
  bool use_window = true;
  if (t == "qwen2") ATTN_ASSIGN(use_window, k.boolean_or("use_sliding_window", false));
  if (!use_window) d.window = 0;
  d.sliding.assign(static_cast<std::size_t>(layers), d.window > 0);
  if (const json* types = k.find("layer_types")) {
    if (!types->is_array() || types->size() != static_cast<std::size_t>(layers)) {
      return k.error(ErrorKind::Mismatch, "layer_types",
                     "layer_types must list one type per layer (" + std::to_string(layers) + ")");
    }
    for (std::size_t i = 0; i < types->size(); ++i) {
      const json& e = (*types)[i];
      if (!e.is_string() || (e != "sliding_attention" && e != "full_attention")) {
        return k.error(ErrorKind::Unsupported, "layer_types",
                       "layer_types[" + std::to_string(i) + "] " + e.dump() +
                           " is not \"sliding_attention\" or \"full_attention\"");
      }
      d.sliding[i] = d.window > 0 && e == "sliding_attention";
    }
  } else if (t == "gemma2") {
    for (int i = 0; i < layers; ++i) d.sliding[static_cast<std::size_t>(i)] = d.window > 0 && i % 2 == 0;
  } else if (t == "gemma3_text") {
    int pattern = 6;
    ATTN_ASSIGN(pattern, k.whole({"sliding_window_pattern"}, 6, 1, kMaxLayers));
    for (int i = 0; i < layers; ++i) d.sliding[static_cast<std::size_t>(i)] = d.window > 0 && (i + 1) % pattern != 0;
  }
  if (t == "gemma3_text") {
    double v = 0;
    ATTN_ASSIGN(v, k.number_or("rope_local_base_freq", 10000.0, 1.0, 1e12));
    d.local_rope_theta = v;
  }
  return {};
}

// The decoder family (tools/parity/decoder_torch.py's DecoderConfig.from_hf is the same reading in Python).
Result<TransformerConfig> read_decoder(const Keys& k, TransformerConfig c) {
  std::string t;
  ATTN_ASSIGN(t, decoder_type(k, c));
  if (t == "gemma3") return read_gemma3_text_config(k);
  bool known = false;
  for (const auto& [type, arch] : kDecoderTypes) known = known || t == type;
  if (!known)
    return k.error(ErrorKind::Unsupported, "model_type",
                   "model_type " + quote(t) + " is not supported; " + std::string(kSupported));
  DecoderSettings& d = c.decoder;
  d.model_type = t;
  d.gemma = t == "gemma2" || t == "gemma3_text";
  d.fused = t == "phi3";
  d.qk_norm = t == "qwen3" || t == "gemma3_text";
  ATTN_TRY(read_decoder_sizes(k, c));
  ATTN_ASSIGN(d.rms_eps, k.epsilon({"rms_norm_eps"}, 1e-6f));
  ATTN_TRY(read_decoder_rope(k, c));
  ATTN_TRY(read_decoder_layer_kinds(k, d));
  ATTN_TRY(read_decoder_scales(k, d));
  ATTN_TRY(read_sliding_layers(k, c.layers, d));
  std::vector<int> bos;
  ATTN_ASSIGN(bos, token_ids(k, "bos_token_id", c.vocab_size));
  if (!bos.empty()) d.bos = bos.front();
  ATTN_ASSIGN(d.eos, token_ids(k, "eos_token_id", c.vocab_size));
  ATTN_ASSIGN(c.pad_token_id, k.whole({"pad_token_id"}, 0, 0, kMaxVocab));
  return c;
}

Result<TransformerConfig> read_config(const Keys& k) {
  TransformerConfig c;
  auto family = read_family(k, c);
  if (!family) return std::unexpected(family.error());
  c.family = *family;
  if (c.family == Family::Decoder) return read_decoder(k, std::move(c));

  // Which key each family calls each size; aliases are transformers' attribute_map.
  std::string_view hidden_key, heads_key;
  switch (c.family) {
    case Family::Decoder: break;  // read_decoder
    case Family::Bert:
    case Family::Vit: {
      const bool vit = c.family == Family::Vit;
      ATTN_ASSIGN(c.hidden, k.whole({"hidden_size"}, 768, 1, kMaxHidden, &hidden_key));
      ATTN_ASSIGN(c.heads, k.whole({"num_attention_heads"}, 12, 0, kMaxHeads, &heads_key));
      ATTN_ASSIGN(c.layers, k.whole({"num_hidden_layers"}, 12, 1, kMaxLayers));
      ATTN_ASSIGN(c.intermediate, k.whole({"intermediate_size"}, 3072, 1, kMaxIntermediate));
      ATTN_ASSIGN(c.layer_norm_eps, k.epsilon({"layer_norm_eps"}, 1e-12f));
      ATTN_ASSIGN(c.activation, k.activation("hidden_act", "gelu"));
      if (!vit) {
        ATTN_ASSIGN(c.vocab_size, k.whole({"vocab_size"}, 30522, 1, kMaxVocab));
        ATTN_ASSIGN(c.type_vocab_size, k.whole({"type_vocab_size"}, 2, 1, kMaxTypeVocab));
        ATTN_ASSIGN(c.max_positions, k.whole({"max_position_embeddings"}, 512, 1, kMaxPositions));
        ATTN_ASSIGN(c.pad_token_id, k.whole({"pad_token_id"}, 0, 0));
      } else {
        c.vocab_size = 0;
        c.type_vocab_size = 0;
        std::string_view patch_key;
        ATTN_ASSIGN(c.image_size, k.whole({"image_size"}, 224, 1, kMaxImageSize));
        ATTN_ASSIGN(c.patch_size, k.whole({"patch_size"}, 16, 1, kMaxConfigSize, &patch_key));
        ATTN_ASSIGN(c.num_channels, k.whole({"num_channels"}, 3, 1, 64));
        ATTN_ASSIGN(c.qkv_bias, k.boolean_or("qkv_bias", true));
        if (c.patch_size > c.image_size) {
          return k.error(ErrorKind::OutOfRange, patch_key,
                         "patch_size " + std::to_string(c.patch_size) + " is larger than image_size " +
                             std::to_string(c.image_size));
        }
        const std::int64_t side = c.image_size / c.patch_size;
        if (side * side + 1 > kMaxConfigSize) {
          return k.error(ErrorKind::TooLarge, patch_key,
                         "image_size / patch_size gives " + std::to_string(side * side) + " patches; at most " +
                             std::to_string(kMaxConfigSize - 1) + " are supported");
        }
        c.max_positions = static_cast<int>(side * side + 1);  // the patches and the [CLS] token
        c.image_mean.assign(static_cast<std::size_t>(c.num_channels), 0.5f);
        c.image_std.assign(static_cast<std::size_t>(c.num_channels), 0.5f);
      }
      break;
    }
    case Family::DistilBert:
      ATTN_ASSIGN(c.hidden, k.whole({"dim", "hidden_size"}, 768, 1, kMaxHidden, &hidden_key));
      ATTN_ASSIGN(c.heads, k.whole({"n_heads", "num_attention_heads"}, 12, 0, kMaxHeads, &heads_key));
      ATTN_ASSIGN(c.layers, k.whole({"n_layers", "num_hidden_layers"}, 6, 1, kMaxLayers));
      ATTN_ASSIGN(c.intermediate, k.whole({"hidden_dim"}, 3072, 1, kMaxIntermediate));
      ATTN_ASSIGN(c.vocab_size, k.whole({"vocab_size"}, 30522, 1, kMaxVocab));
      ATTN_ASSIGN(c.max_positions, k.whole({"max_position_embeddings"}, 512, 1, kMaxPositions));
      ATTN_ASSIGN(c.pad_token_id, k.whole({"pad_token_id"}, 0, 0));
      ATTN_ASSIGN(c.activation, k.activation("activation", "gelu"));
      ATTN_ASSIGN(c.sinusoidal_positions, k.boolean_or("sinusoidal_pos_embds", false));
      c.type_vocab_size = 0;
      c.layer_norm_eps = 1e-12f;  // hard-coded in transformers' modeling_distilbert.py
      break;
    case Family::Gpt2: {
      ATTN_ASSIGN(c.hidden, k.whole({"n_embd", "hidden_size"}, 768, 1, kMaxHidden, &hidden_key));
      ATTN_ASSIGN(c.heads, k.whole({"n_head", "num_attention_heads"}, 12, 0, kMaxHeads, &heads_key));
      ATTN_ASSIGN(c.layers, k.whole({"n_layer", "num_hidden_layers"}, 12, 1, kMaxLayers));
      ATTN_ASSIGN(c.max_positions, k.whole({"n_positions", "max_position_embeddings"}, 1024, 1, kMaxPositions));
      ATTN_ASSIGN(c.vocab_size, k.whole({"vocab_size"}, 50257, 1, kMaxVocab));
      ATTN_ASSIGN(c.layer_norm_eps, k.epsilon({"layer_norm_epsilon"}, 1e-5f));
      ATTN_ASSIGN(c.activation, k.activation("activation_function", "gelu_new"));
      ATTN_ASSIGN(c.pad_token_id, k.whole({"pad_token_id"}, 0, 0));
      c.type_vocab_size = 0;
      ATTN_ASSIGN(c.intermediate, k.whole({"n_inner"}, 4 * c.hidden, 1, kMaxIntermediate));  // null: 4 x n_embd
      ATTN_ASSIGN(c.decoder.eos, token_ids(k, "eos_token_id", c.vocab_size));                // where generation stops
      break;
    }
  }

  if (c.heads == 0) {
    return k.error(ErrorKind::OutOfRange, heads_key,
                   std::string(heads_key) + " is 0: a transformer needs at least one head");
  }
  if (c.hidden % c.heads != 0) {
    return k.error(ErrorKind::Mismatch, heads_key,
                   std::string(hidden_key) + " " + std::to_string(c.hidden) + " is not divisible by " +
                       std::string(heads_key) + " " + std::to_string(c.heads) +
                       ": every head needs the same number of dimensions");
  }
  auto labels = read_labels(k);
  if (!labels) return std::unexpected(labels.error());
  c.labels = std::move(*labels);
  return c;
}

// preprocessor_config.json of a ViT: normalisation, and a check that it resizes to the model's image size.
Result<void> read_preprocessor(const Keys& keys, TransformerConfig& c) {
  bool normalise = true;
  if (auto b = keys.boolean_or("do_normalize", true)) {
    normalise = *b;
  } else {
    return std::unexpected(b.error());
  }
  if (!normalise) {
    c.image_mean.assign(static_cast<std::size_t>(c.num_channels), 0.0f);
    c.image_std.assign(static_cast<std::size_t>(c.num_channels), 1.0f);
  } else {
    if (keys.find("image_mean")) {
      auto mean = keys.per_channel("image_mean", c.num_channels, false);
      if (!mean) return std::unexpected(mean.error());
      c.image_mean = std::move(*mean);
    }
    if (keys.find("image_std")) {
      auto stdev = keys.per_channel("image_std", c.num_channels, true);
      if (!stdev) return std::unexpected(stdev.error());
      c.image_std = std::move(*stdev);
    }
  }
  constexpr std::string_view key = "size";
  const json* size = keys.find(key);
  if (!size) return {};
  std::optional<std::int64_t> height, width;
  if (size->is_number_integer()) {
    height = width = size->get<std::int64_t>();
  } else if (size->is_object() && size->contains("height") && size->contains("width")) {
    const json& h = (*size)["height"];
    const json& w = (*size)["width"];
    if (!h.is_number_integer() || !w.is_number_integer()) {
      return keys.error(ErrorKind::Malformed, key, "size " + size->dump() + ": height and width must be whole numbers");
    }
    height = h.get<std::int64_t>();
    width = w.get<std::int64_t>();
  } else if (size->is_object()) {
    return {};  // {"shortest_edge": ...}: resized then cropped; the crop is the model's business
  } else {
    return keys.error(ErrorKind::Malformed, key,
                      "size must be a whole number or {\"height\": h, \"width\": w}, got " + size->dump());
  }
  if (*height != c.image_size || *width != c.image_size) {
    return keys.error(ErrorKind::Mismatch, key,
                      "size " + size->dump() + " does not match the model's image_size " +
                          std::to_string(c.image_size) + " in config.json");
  }
  return {};
}

}  // namespace

std::string_view to_string(Family family) {
  switch (family) {
    case Family::Bert: return "bert";
    case Family::DistilBert: return "distilbert";
    case Family::Gpt2: return "gpt2";
    case Family::Vit: return "vit";
    case Family::Decoder: return "decoder";
  }
  return "unknown";
}

RopeFrequencies rope_frequencies(const TransformerConfig& c, Index seq_len, bool local) {
  const DecoderSettings& s = c.decoder;
  const Index dim = static_cast<Index>(static_cast<double>(s.head_dim) * s.partial_rotary);
  const double base = local ? *s.local_rope_theta : s.rope_theta;
  RopeFrequencies r;
  const auto exponent = [&](Index i) { return static_cast<double>(2 * i) / static_cast<double>(dim); };
  for (Index i = 0; i < dim / 2; ++i) r.inv.push_back(1.0 / std::pow(base, exponent(i)));
  if (local) return r;
  // A GGUF file's factors (the loader checked one per pair); the scaling is then Default.
  for (std::size_t i = 0; i < s.rope_freq_factors.size() && i < r.inv.size(); ++i) r.inv[i] /= s.rope_freq_factors[i];
  const double f = s.rope_factor;
  switch (s.rope) {
    case RopeScaling::Default: break;
    case RopeScaling::Linear:
      for (double& v : r.inv) v /= f;
      break;
    case RopeScaling::Dynamic:
      if (seq_len > c.max_positions) {
        const double m = c.max_positions;
        const double b = base * std::pow(f * static_cast<double>(seq_len) / m - (f - 1.0),
                                         static_cast<double>(dim) / static_cast<double>(dim - 2));
        for (Index i = 0; i < dim / 2; ++i) r.inv[static_cast<std::size_t>(i)] = 1.0 / std::pow(b, exponent(i));
      }
      break;
    case RopeScaling::Llama3: {
      const double old = s.original_max_positions;
      const double low_wavelen = old / s.low_freq_factor, high_wavelen = old / s.high_freq_factor;
      for (double& v : r.inv) {
        const double wavelen = 2.0 * std::numbers::pi / v;
        const double scaled = wavelen > low_wavelen ? v / f : v;
        const double smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
        v = medium ? (1.0 - smooth) * scaled / f + smooth * scaled : scaled;
      }
      break;
    }
    case RopeScaling::Yarn: {
      const double m = s.original_max_positions;
      const auto mscale = [](double scale, double k) { return scale <= 1.0 ? 1.0 : 0.1 * k * std::log(scale) + 1.0; };
      if (s.attention_factor) {
        r.factor = *s.attention_factor;
      } else if (s.mscale != 0.0 && s.mscale_all_dim != 0.0) {
        r.factor = mscale(f, s.mscale) / mscale(f, s.mscale_all_dim);
      } else {
        r.factor = mscale(f, 1.0);
      }
      const auto correction = [&](double rotations) {
        return static_cast<double>(dim) * std::log(m / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
      };
      const double lo = std::max(std::floor(correction(s.beta_fast)), 0.0);
      double hi = std::min(std::ceil(correction(s.beta_slow)), static_cast<double>(dim - 1));
      if (lo == hi) hi += 0.001;
      for (Index i = 0; i < dim / 2; ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
        const double extrapolation = 1.0 - ramp;
        double& v = r.inv[static_cast<std::size_t>(i)];
        v = v / f * (1.0 - extrapolation) + v * extrapolation;
      }
      break;
    }
  }
  return r;
}

Result<TransformerConfig> parse_config(std::string_view text, const std::string& file) {
  return detail::read_json_config<Keys>(text, file, [](const Keys& k) { return read_config(k); });
}

Result<TransformerConfig> load_config(const fs::path& folder) {
  const fs::path config_path = folder / "config.json";
  auto text = detail::read_config_text(config_path);
  if (!text) return std::unexpected(text.error());
  auto config = parse_config(*text, config_path.string());
  if (!config) return config;
  const fs::path pre_path = folder / "preprocessor_config.json";
  std::error_code ec;
  if (config->family == Family::Vit && fs::exists(pre_path, ec)) {
    auto pre_text = detail::read_config_text(pre_path);
    if (!pre_text) return std::unexpected(pre_text.error());
    ATTN_TRY(detail::read_json_config<Keys>(*pre_text, pre_path.string(),
                                            [&](const Keys& k) { return read_preprocessor(k, *config); }));
  }
  return config;
}

}  // namespace attn::models
