// Loading: Hugging Face tensor names -> the fused, pre-transposed layout of transformer_impl.h.
#include "attn/io/safetensors.h"
#include "attn/models/transformer.h"
#include "transformer_impl.h"
#include "gguf_load.h"
#include "attn/io/gguf.h"
#include "tensor_reader.h"
#include "../../core/json_config.h"
#include "../../core/json_keys.h"
#include "../../core/try.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace attn::models {

namespace fs = std::filesystem;

namespace {

using detail::TensorReader;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Q, K, V ([out, in] each, or GPT-2's fused [in, 3 out]) -> one [d, 3d] matrix, Q scaled.
struct QkvParts {
  Matrix q, k, v;  // [in, out]
  RowVector qb, kb, vb;
};
void fuse_qkv(LayerWeights& w, QkvParts& p, Index d, float scale) {
  w.qkv.resize(d, 3 * d);
  w.qkv.leftCols(d) = p.q * scale;
  w.qkv.middleCols(d, d) = p.k;
  w.qkv.rightCols(d) = p.v;
  w.qkv_bias.resize(3 * d);
  w.qkv_bias.head(d) = p.qb * scale;
  w.qkv_bias.segment(d, d) = p.kb;
  w.qkv_bias.tail(d) = p.vb;
}

std::string decoder_family_name(const std::string& model_type) {
  if (model_type == "llama") return "Llama";
  if (model_type == "mistral") return "Mistral";
  if (model_type == "qwen2") return "Qwen2";
  if (model_type == "qwen3") return "Qwen3";
  if (model_type == "gemma2") return "Gemma 2";
  if (model_type == "gemma3_text") return "Gemma 3";
  if (model_type == "phi3") return "Phi-3";
  if (model_type == "gpt2") return "GPT-2";  // a GGUF file (DecoderSettings::gpt2)
  return model_type;
}

std::string pick_prefix(const TensorReader& r, std::initializer_list<const char*> prefixes, const std::string& marker) {
  for (const char* p : prefixes) {
    if (r.has(std::string(p) + marker)) return p;
  }
  return *prefixes.begin();
}

// A position table computed rather than read (DistilBERT's sinusoidal one) is the one size the file does not
// vouch for: capped at 32 MiB of floats (DistilBERT's is 512 x 768).
constexpr std::int64_t kMaxComputedPositionValues = std::int64_t{1} << 23;

// parse_config() has checked every size against its limit; this is for configs built in code (from_parts).
Result<void> check_config(const TransformerConfig& c) {
  if (c.hidden <= 0 || c.heads <= 0 || c.layers <= 0 || c.intermediate <= 0 || c.max_positions <= 0) {
    return fail(ErrorKind::OutOfRange,
                "config: hidden size, heads, layers, intermediate size and positions must be positive");
  }
  if (c.family == Family::Decoder) {
    const DecoderSettings& d = c.decoder;
    if (d.kv_heads <= 0 || c.heads % d.kv_heads != 0) {
      return fail(ErrorKind::Mismatch, "config: " + std::to_string(d.kv_heads) + " key/value heads do not divide " +
                                           std::to_string(c.heads) + " heads");
    }
    if (d.head_dim <= 0 || d.head_dim % 2 != 0 || d.sliding.size() != static_cast<std::size_t>(c.layers)) {
      return fail(ErrorKind::Mismatch, "config: head_dim must be even and positive, with one sliding flag per layer");
    }
  } else if (c.hidden % c.heads != 0) {
    return fail(ErrorKind::Mismatch, "config: hidden size " + std::to_string(c.hidden) + " is not divisible by " +
                                         std::to_string(c.heads) + " heads");
  }
  if (c.family != Family::Vit && c.vocab_size <= 0) {
    return fail(ErrorKind::OutOfRange, "config: vocab_size must be positive");
  }
  if (c.family == Family::Vit && (c.patch_size <= 0 || c.image_size < c.patch_size || c.num_channels <= 0)) {
    return fail(ErrorKind::OutOfRange, "config: image_size, patch_size and num_channels must be positive");
  }
  return {};
}

class Loader {
 public:
  Loader(TransformerModel::Impl& m, TensorReader& r, const Progress& progress) : m_(m), r_(r), progress_(progress) {}

  Result<void> run() {
    const auto& c = m_.config;
    ATTN_TRY(check_config(c));
    if (!report(0.0, "embeddings")) return fail(ErrorKind::Cancelled, "cancelled");
    switch (c.family) {
      case Family::Bert: ATTN_TRY(bert()); break;
      case Family::DistilBert: ATTN_TRY(distilbert()); break;
      case Family::Gpt2: ATTN_TRY(gpt2()); break;
      case Family::Vit: ATTN_TRY(vit()); break;
      case Family::Decoder: ATTN_TRY(load_decoder(m_, r_, [this](int i) { return layer_progress(i); })); break;
    }
    if (!report(1.0, "done")) return fail(ErrorKind::Cancelled, "cancelled");
    if (r_.checking()) return {};
    for (const std::string& note : r_.nonfinite()) m_.warnings.push_back(note);
    const auto unused = r_.unused({"position_ids", "attn.bias", "attn.masked_bias", "pooler.", "seq_relationship"});
    if (!unused.empty()) {
      std::string w = std::to_string(unused.size()) + " tensor" + (unused.size() == 1 ? "" : "s") + " not used: ";
      for (std::size_t i = 0; i < unused.size() && i < 8; ++i) w += (i ? ", " : "") + unused[i];
      if (unused.size() > 8) w += ", ...";
      m_.warnings.push_back(std::move(w));
    }
    m_.parameters = r_.parameters();
    return {};
  }

 private:
  // The checking pass is quick and says nothing; only cancelling it counts.
  bool report(double f, const std::string& what) {
    if (r_.checking()) return !progress_ || progress_(0.0, "checking the tensors against the config");
    return !progress_ || progress_(f, what);
  }
  Result<void> layer_progress(int i) {
    if (!report((i + 1.0) / (m_.config.layers + 1.0),
                "layers " + std::to_string(i + 1) + " of " + std::to_string(m_.config.layers)))
      return fail(ErrorKind::Cancelled, "cancelled");
    return {};
  }
  float q_scale() const { return 1.0f / std::sqrt(static_cast<float>(m_.config.head_dim())); }

  Result<void> linear_qkv(LayerWeights& w, const std::string& q, const std::string& k, const std::string& v,
                          bool bias) {
    const Index d = m_.config.hidden;
    QkvParts p;
    ATTN_ASSIGN(p.q, r_.linear_t(q + ".weight", d, d));
    ATTN_ASSIGN(p.k, r_.linear_t(k + ".weight", d, d));
    ATTN_ASSIGN(p.v, r_.linear_t(v + ".weight", d, d));
    if (bias) {
      ATTN_ASSIGN(p.qb, r_.vector(q + ".bias", d));
      ATTN_ASSIGN(p.kb, r_.vector(k + ".bias", d));
      ATTN_ASSIGN(p.vb, r_.vector(v + ".bias", d));
    } else {
      p.qb = p.kb = p.vb = RowVector::Zero(d);
    }
    if (!r_.checking()) fuse_qkv(w, p, d, q_scale());
    return {};
  }
  Result<void> linear(const std::string& base, Index out, Index in, Matrix& w, RowVector& b) {
    ATTN_ASSIGN(w, r_.linear_t(base + ".weight", out, in));
    ATTN_ASSIGN(b, r_.vector(base + ".bias", out));
    return {};
  }
  // Output embedding: absent or equal to the input embedding => tied (kept once).
  Result<void> output_embedding(const std::string& name) {
    if (!r_.has(name)) return {};
    Matrix dec;
    ATTN_ASSIGN(dec, r_.matrix(name, m_.config.vocab_size, m_.config.hidden));
    if (r_.checking()) return {};
    if (dec != m_.word) {
      m_.decoder = std::move(dec);
    } else {
      r_.uncount(dec.size());  // tied: counted once, as transformers counts it
    }
    return {};
  }

  Result<void> bert() {
    const auto& c = m_.config;
    const Index d = c.hidden, f = c.intermediate;
    const std::string p = pick_prefix(r_, {"bert.", ""}, "embeddings.word_embeddings.weight");
    ATTN_ASSIGN(m_.word, r_.matrix(p + "embeddings.word_embeddings.weight", c.vocab_size, d));
    ATTN_ASSIGN(m_.positions, r_.matrix(p + "embeddings.position_embeddings.weight", c.max_positions, d));
    ATTN_ASSIGN(m_.types, r_.matrix(p + "embeddings.token_type_embeddings.weight", c.type_vocab_size, d));
    ATTN_TRY(r_.layer_norm(p + "embeddings.LayerNorm", d, m_.embed_gamma, m_.embed_beta));
    m_.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers; ++i) {
      auto& w = m_.layers[static_cast<std::size_t>(i)];
      const std::string L = p + "encoder.layer." + std::to_string(i) + ".";
      ATTN_TRY(linear_qkv(w, L + "attention.self.query", L + "attention.self.key", L + "attention.self.value", true));
      ATTN_TRY(linear(L + "attention.output.dense", d, d, w.out, w.out_bias));
      ATTN_TRY(r_.layer_norm(L + "attention.output.LayerNorm", d, w.norm1_gamma, w.norm1_beta));
      ATTN_TRY(linear(L + "intermediate.dense", f, d, w.fc1, w.fc1_bias));
      ATTN_TRY(linear(L + "output.dense", d, f, w.fc2, w.fc2_bias));
      ATTN_TRY(r_.layer_norm(L + "output.LayerNorm", d, w.norm2_gamma, w.norm2_beta));
      ATTN_TRY(layer_progress(i));
    }
    if (r_.has("cls.predictions.transform.dense.weight")) {
      ATTN_TRY(linear("cls.predictions.transform.dense", d, d, m_.head_dense, m_.head_dense_bias));
      ATTN_TRY(r_.layer_norm("cls.predictions.transform.LayerNorm", d, m_.head_gamma, m_.head_beta));
      ATTN_TRY(output_embedding("cls.predictions.decoder.weight"));
      const std::string bias = r_.has("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias";
      ATTN_ASSIGN(m_.decoder_bias, r_.vector(bias, c.vocab_size));
      if (r_.has("cls.predictions.decoder.bias")) r_.mark_used("cls.predictions.decoder.bias");
      m_.has_head = true;
    }
    return {};
  }

  Result<void> distilbert() {
    const auto& c = m_.config;
    const Index d = c.hidden, f = c.intermediate;
    const std::string p = pick_prefix(r_, {"distilbert.", ""}, "embeddings.word_embeddings.weight");
    ATTN_ASSIGN(m_.word, r_.matrix(p + "embeddings.word_embeddings.weight", c.vocab_size, d));
    const std::string pos = p + "embeddings.position_embeddings.weight";
    if (c.sinusoidal_positions && !r_.has(pos)) {
      if (static_cast<std::int64_t>(c.max_positions) * d > kMaxComputedPositionValues) {
        return fail(ErrorKind::TooLarge,
                    "config: " + std::to_string(c.max_positions) + " sinusoidal positions x " + std::to_string(d) +
                        " dimensions is over the limit of " + std::to_string(kMaxComputedPositionValues) +
                        " values for a position table not in the file",
                    r_.file_name());
      }
      // transformers' create_sinusoidal_embeddings: sin on even columns, cos on odd, 10000^(2 (j / 2) / d).
      m_.positions = sinusoidal_positions(c.max_positions, d);
    } else {
      ATTN_ASSIGN(m_.positions, r_.matrix(pos, c.max_positions, d));
    }
    ATTN_TRY(r_.layer_norm(p + "embeddings.LayerNorm", d, m_.embed_gamma, m_.embed_beta));
    m_.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers; ++i) {
      auto& w = m_.layers[static_cast<std::size_t>(i)];
      const std::string L = p + "transformer.layer." + std::to_string(i) + ".";
      ATTN_TRY(linear_qkv(w, L + "attention.q_lin", L + "attention.k_lin", L + "attention.v_lin", true));
      ATTN_TRY(linear(L + "attention.out_lin", d, d, w.out, w.out_bias));
      ATTN_TRY(r_.layer_norm(L + "sa_layer_norm", d, w.norm1_gamma, w.norm1_beta));
      ATTN_TRY(linear(L + "ffn.lin1", f, d, w.fc1, w.fc1_bias));
      ATTN_TRY(linear(L + "ffn.lin2", d, f, w.fc2, w.fc2_bias));
      ATTN_TRY(r_.layer_norm(L + "output_layer_norm", d, w.norm2_gamma, w.norm2_beta));
      ATTN_TRY(layer_progress(i));
    }
    if (r_.has("vocab_transform.weight")) {
      ATTN_TRY(linear("vocab_transform", d, d, m_.head_dense, m_.head_dense_bias));
      ATTN_TRY(r_.layer_norm("vocab_layer_norm", d, m_.head_gamma, m_.head_beta));
      ATTN_TRY(output_embedding("vocab_projector.weight"));
      ATTN_ASSIGN(m_.decoder_bias, r_.vector("vocab_projector.bias", c.vocab_size));
      m_.has_head = true;
    }
    return {};
  }

  Result<void> gpt2() {
    const auto& c = m_.config;
    const Index d = c.hidden, f = c.intermediate;
    const std::string p = pick_prefix(r_, {"transformer.", ""}, "wte.weight");
    ATTN_ASSIGN(m_.word, r_.matrix(p + "wte.weight", c.vocab_size, d));
    ATTN_ASSIGN(m_.positions, r_.matrix(p + "wpe.weight", c.max_positions, d));
    m_.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers; ++i) {
      auto& w = m_.layers[static_cast<std::size_t>(i)];
      const std::string L = p + "h." + std::to_string(i) + ".";
      ATTN_TRY(r_.layer_norm(L + "ln_1", d, w.norm1_gamma, w.norm1_beta));
      // Conv1D stores [in, out]: c_attn is already the fused [d, 3d] layout.
      ATTN_ASSIGN(w.qkv, r_.matrix(L + "attn.c_attn.weight", d, 3 * d));
      ATTN_ASSIGN(w.qkv_bias, r_.vector(L + "attn.c_attn.bias", 3 * d));
      if (!r_.checking()) {
        w.qkv.leftCols(d) *= q_scale();
        w.qkv_bias.head(d) *= q_scale();
      }
      ATTN_ASSIGN(w.out, r_.matrix(L + "attn.c_proj.weight", d, d));
      ATTN_ASSIGN(w.out_bias, r_.vector(L + "attn.c_proj.bias", d));
      ATTN_TRY(r_.layer_norm(L + "ln_2", d, w.norm2_gamma, w.norm2_beta));
      ATTN_ASSIGN(w.fc1, r_.matrix(L + "mlp.c_fc.weight", d, f));
      ATTN_ASSIGN(w.fc1_bias, r_.vector(L + "mlp.c_fc.bias", f));
      ATTN_ASSIGN(w.fc2, r_.matrix(L + "mlp.c_proj.weight", f, d));
      ATTN_ASSIGN(w.fc2_bias, r_.vector(L + "mlp.c_proj.bias", d));
      ATTN_TRY(layer_progress(i));
    }
    ATTN_TRY(r_.layer_norm(p + "ln_f", d, m_.final_gamma, m_.final_beta));
    ATTN_TRY(output_embedding("lm_head.weight"));
    m_.has_head = true;  // the LM head is tied to wte
    return {};
  }

  Result<void> vit() {
    const auto& c = m_.config;
    const Index d = c.hidden, f = c.intermediate;
    const Index grid = c.image_size / c.patch_size;
    const Index tokens = grid * grid + 1;
    const std::string p = pick_prefix(r_, {"vit.", ""}, "embeddings.cls_token");
    ATTN_ASSIGN(m_.class_token, r_.vector(p + "embeddings.cls_token", d));
    ATTN_ASSIGN(m_.positions, r_.matrix(p + "embeddings.position_embeddings", tokens, d));
    {
      const std::string name = p + "embeddings.patch_embeddings.projection.weight";
      const Index pp = c.patch_size;
      auto v = r_.read(name, {d, c.num_channels, pp, pp});
      if (!v) return std::unexpected(v.error());
      if (!r_.checking()) m_.patch = Eigen::Map<const Matrix>(v->data(), d, c.num_channels * pp * pp).transpose();
      ATTN_ASSIGN(m_.patch_bias, r_.vector(p + "embeddings.patch_embeddings.projection.bias", d));
    }
    m_.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers; ++i) {
      auto& w = m_.layers[static_cast<std::size_t>(i)];
      const std::string L = p + "encoder.layer." + std::to_string(i) + ".";
      ATTN_TRY(r_.layer_norm(L + "layernorm_before", d, w.norm1_gamma, w.norm1_beta));
      const std::string A = L + "attention.attention.";
      ATTN_TRY(linear_qkv(w, A + "query", A + "key", A + "value", c.qkv_bias || r_.has(A + "query.bias")));
      ATTN_TRY(linear(L + "attention.output.dense", d, d, w.out, w.out_bias));
      ATTN_TRY(r_.layer_norm(L + "layernorm_after", d, w.norm2_gamma, w.norm2_beta));
      ATTN_TRY(linear(L + "intermediate.dense", f, d, w.fc1, w.fc1_bias));
      ATTN_TRY(linear(L + "output.dense", d, f, w.fc2, w.fc2_bias));
      ATTN_TRY(layer_progress(i));
    }
    ATTN_TRY(r_.layer_norm(p + "layernorm", d, m_.final_gamma, m_.final_beta));
    if (const auto found = r_.find("classifier.weight"); found.info && found.info->shape.size() == 2) {
      const Index labels = found.info->shape[0];
      ATTN_ASSIGN(m_.classifier, r_.linear_t("classifier.weight", labels, d));
      ATTN_ASSIGN(m_.classifier_bias, r_.vector("classifier.bias", labels));
      m_.has_head = true;
    }
    return {};
  }

  TransformerModel::Impl& m_;
  TensorReader& r_;
  const Progress& progress_;
};

Result<std::unique_ptr<TransformerModel::Impl>> build(TransformerConfig config,
                                                      std::vector<const io::SafeTensors*> shards,
                                                      std::shared_ptr<const text::Tokenizer> tokenizer,
                                                      const Progress& progress, std::vector<std::string> warnings) {
  auto impl = std::make_unique<TransformerModel::Impl>();
  impl->config = std::move(config);
  impl->tokenizer = std::move(tokenizer);
  impl->warnings = std::move(warnings);
  {
    // Every name, shape and dtype against the config, from the headers alone, before any data is read.
    TransformerModel::Impl scratch;
    scratch.config = impl->config;
    TensorReader checker(shards, /*checking=*/true);
    if (auto ok = Loader(scratch, checker, progress).run(); !ok) return std::unexpected(ok.error());
  }
  if (impl->config.family == Family::Decoder) {
    // The decoder's matrices stay in the files' mappings: the model keeps them alive.
    std::vector<io::SafeTensors> files;
    for (const auto* shard : shards) files.push_back(*shard);
    impl->lm_weights = std::make_unique<DecoderWeights>();
    impl->lm_weights->files = std::move(files);
  }
  TensorReader reader(shards, /*checking=*/false);
  Loader loader(*impl, reader, progress);
  // On failure `impl` is dropped here: nothing half-built survives.
  auto loaded = loader.run();
  // A shard truncated by another process while it was read read zeros (core/file_read_mapped.h): say that, not what
  // the zeros made of the tensors.
  for (const auto* shard : shards) {
    if (auto ok = shard->intact(); !ok) return std::unexpected(ok.error());
  }
  if (!loaded) return std::unexpected(loaded.error());
  return impl;
}

}  // namespace

Result<SafetensorsIndex> read_safetensors_index(std::string_view text, const std::string& name) {
  auto parsed = detail::parse_json(text, name);
  if (!parsed) return std::unexpected(parsed.error());
  const auto& json = *parsed;
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
    return fail(ErrorKind::Malformed, "not a safetensors index: expected an object with a \"weight_map\"", name);
  }
  // nlohmann keeps the last of two equal keys: a tensor listed twice (in two shards, maybe) is refused instead.
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> first_at;
  for (const auto& key : detail::object_keys(text, 2)) {
    const auto [seen, inserted] = first_at.emplace(std::pair{key.object, key.name}, key.offset);
    if (!inserted) {
      return fail(ErrorKind::Malformed,
                  "lists " + detail::quote(key.name) + " twice (first at byte " + std::to_string(seen->second) +
                      "): a tensor is in one shard",
                  name, key.offset);
    }
  }
  SafetensorsIndex index;
  std::set<std::string> names;
  for (const auto& [tensor, file] : json["weight_map"].items()) {
    if (!file.is_string()) return fail(ErrorKind::Malformed, "weight_map[\"" + tensor + "\"] is not a file name", name);
    const std::string f = file.get<std::string>();
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\\') != std::string::npos ||
        f.find('\0') != std::string::npos) {
      return fail(ErrorKind::Malformed, "weight_map names a file outside the folder: \"" + f + "\"", name);
    }
    names.insert(f);
    index.weight_map.emplace(tensor, f);
  }
  index.files.assign(names.begin(), names.end());
  return index;
}

Result<std::vector<std::string>> parse_safetensors_index(std::string_view text, const std::string& name) {
  auto index = read_safetensors_index(text, name);
  if (!index) return std::unexpected(index.error());
  return std::move(index->files);
}

Result<void> check_weight_map(const SafetensorsIndex& index, const std::vector<const io::SafeTensors*>& shards,
                              const std::string& name) {
  std::map<std::string, const io::SafeTensors*, std::less<>> by_file;
  for (const auto* shard : shards) by_file.emplace(fs::path(shard->name()).filename().string(), shard);
  const auto mismatch = [&](const std::string& why) { return fail(ErrorKind::Mismatch, why, name); };
  // Every entry: its shard holds the tensor.
  for (const auto& [tensor, file] : index.weight_map) {
    const auto shard = by_file.find(file);
    if (shard == by_file.end()) return mismatch("weight_map names " + file + ", which was not opened");
    if (shard->second->find(tensor)) continue;
    std::string where;
    for (const auto* other : shards) {
      if (other->find(tensor)) where = fs::path(other->name()).filename().string();
    }
    return mismatch("weight_map puts " + detail::quote(tensor) + " in " + file + ", which does not hold it" +
                    (where.empty() ? std::string(" (no shard does)") : " (" + where + " does)"));
  }
  // Every tensor of every shard: listed, in that shard (so a tensor stored twice is refused, whichever is named).
  for (const auto* shard : shards) {
    const std::string file = fs::path(shard->name()).filename().string();
    for (const io::TensorInfo& t : shard->tensors()) {
      const auto listed = index.weight_map.find(t.name);
      if (listed == index.weight_map.end()) {
        return mismatch(file + " holds " + detail::quote(t.name) + ", which weight_map does not list");
      }
      if (listed->second != file) {
        return mismatch(detail::quote(t.name) + " is in both " + listed->second + " and " + file +
                        "; weight_map names " + listed->second + ": a tensor is stored in one shard");
      }
    }
  }
  return {};
}

TransformerModel::TransformerModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TransformerModel::~TransformerModel() = default;
const TransformerConfig& TransformerModel::config() const { return impl_->config; }
const text::Tokenizer* TransformerModel::tokenizer() const { return impl_->tokenizer.get(); }
bool TransformerModel::has_prediction_head() const { return impl_->has_head; }
std::vector<std::string> TransformerModel::warnings() const { return impl_->warnings; }
const std::string& TransformerModel::card() const { return impl_->card; }

std::string TransformerModel::description() const {
  const auto& c = impl_->config;
  std::string family;
  switch (c.family) {
    case Family::Bert: family = "BERT"; break;
    case Family::DistilBert: family = "DistilBERT"; break;
    case Family::Gpt2: family = "GPT-2"; break;
    case Family::Vit: family = "ViT"; break;
    case Family::Decoder: family = decoder_family_name(c.decoder.model_type); break;
  }
  const double millions = static_cast<double>(impl_->parameters) / 1e6;
  const std::string params = millions >= 1.0 ? std::to_string(static_cast<long long>(std::lround(millions))) + " M"
                                             : std::to_string(impl_->parameters);
  const std::string kv = c.family == Family::Decoder && c.decoder.kv_heads != c.heads
                             ? " (" + std::to_string(c.decoder.kv_heads) + " key/value)"
                             : std::string();
  const std::string format = impl_->format.empty() ? std::string() : " \xC2\xB7 " + impl_->format;
  return family + " \xC2\xB7 " + std::to_string(c.layers) + " layers \xC2\xB7 " + std::to_string(c.heads) + " heads" +
         kv + " \xC2\xB7 d " + std::to_string(c.hidden) + " \xC2\xB7 " + params + " parameters" + format;
}

Result<std::shared_ptr<const TransformerModel>> TransformerModel::from_parts(
    TransformerConfig config, const io::SafeTensors& weights, std::shared_ptr<const text::Tokenizer> tokenizer,
    const Progress& progress, SourceNotes notes) {
  try {
    auto impl = build(std::move(config), {&weights}, std::move(tokenizer), progress, std::move(notes.warnings));
    if (!impl) return std::unexpected(impl.error());
    (*impl)->card = std::move(notes.card);
    (*impl)->format = std::move(notes.format);
    return std::shared_ptr<const TransformerModel>(new TransformerModel(std::move(*impl)));
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while loading the model", weights.name());
  }
}

Result<std::shared_ptr<const TransformerModel>> TransformerModel::load(const fs::path& folder, const Progress& progress,
                                                                       const LoadOptions& options) {
  try {
    std::error_code ec;
    if (fs::is_regular_file(folder, ec) && io::is_gguf_name(folder)) return load_gguf(folder, progress, options);
    if (fs::is_regular_file(folder, ec)) {
      if (auto foreign = foreign_checkpoint_message(folder)) {
        return fail(ErrorKind::Unsupported, *foreign, folder.string());
      }
      return fail(ErrorKind::Io, "expected a model folder (config.json + model.safetensors), got a file",
                  folder.string());
    }
    if (!fs::is_directory(folder, ec)) return fail(ErrorKind::Io, "no such folder", folder.string());

    // The weights: a sharded index, model.safetensors, or the folder's only *.safetensors.
    std::vector<fs::path> files;
    const fs::path index = folder / "model.safetensors.index.json";
    std::optional<SafetensorsIndex> weight_map;
    if (fs::exists(index, ec)) {
      auto text = detail::read_config_text(index);
      if (!text) return std::unexpected(text.error());
      ATTN_ASSIGN(weight_map, read_safetensors_index(*text, index.string()));
      for (const auto& n : weight_map->files) files.push_back(folder / n);
    } else if (fs::exists(folder / "model.safetensors", ec)) {
      files.push_back(folder / "model.safetensors");
    } else {
      // A folder whose only checkpoint is a GGUF file opens that file.
      std::vector<fs::path> gguf;
      for (const auto& e : fs::directory_iterator(folder, ec)) {
        if (e.is_regular_file(ec) && io::is_gguf_name(e.path())) gguf.push_back(e.path());
      }
      if (gguf.size() == 1) return load_gguf(gguf.front(), progress, options);
      for (const auto& e : fs::directory_iterator(folder, ec)) {
        if (auto foreign = foreign_checkpoint_message(e.path())) {
          return fail(ErrorKind::Unsupported, *foreign, e.path().string());
        }
      }
      return fail(ErrorKind::Io, "no model.safetensors (or model.safetensors.index.json) in the folder",
                  folder.string());
    }

    auto config = load_config(folder);
    if (!config) return std::unexpected(config.error());

    std::vector<std::string> warnings;
    std::shared_ptr<const text::Tokenizer> tokenizer;
    std::optional<Error> tokenizer_error;
    if (config->family != Family::Vit) {
      auto tok = text::load_tokenizer_dir(folder);
      if (tok) {
        tokenizer = std::shared_ptr<const text::Tokenizer>(std::move(*tok));
      } else {
        warnings.push_back("no tokenizer (" + tok.error().message() + "): only token ids can be run");
        tokenizer_error = std::move(tok.error());
      }
    }

    std::vector<io::SafeTensors> shards;
    shards.reserve(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (progress && !progress(0.0, "opening " + files[i].filename().string())) {
        return fail(ErrorKind::Cancelled, "cancelled");
      }
      auto st = io::SafeTensors::open(files[i]);
      if (!st) return std::unexpected(st.error());
      shards.push_back(std::move(*st));
    }
    std::vector<const io::SafeTensors*> ptrs;
    for (const auto& s : shards) ptrs.push_back(&s);
    if (weight_map) ATTN_TRY(check_weight_map(*weight_map, ptrs, index.string()));

    auto impl = build(std::move(*config), std::move(ptrs), std::move(tokenizer), progress, std::move(warnings));
    if (!impl) return std::unexpected(impl.error());
    (*impl)->tokenizer_error = std::move(tokenizer_error);
    return std::shared_ptr<const TransformerModel>(new TransformerModel(std::move(*impl)));
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while loading the model", folder.string());
  } catch (const std::exception& e) {
    return fail(ErrorKind::Malformed, std::string("could not load the model: ") + e.what(), folder.string());
  }
}

bool is_pickled_checkpoint(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (ext == ".pt" || ext == ".pth" || ext == ".ckpt" || ext == ".pkl" || ext == ".pickle") return true;
  return ext == ".bin" && starts_with(path.filename().string(), "pytorch_model");
}

std::string pickled_checkpoint_message(const fs::path& path) {
  const std::string name = path.filename().string();
  return name +
         " is a pickled PyTorch checkpoint; AttnScope loads only safetensors because unpickling runs code. "
         "Convert it (only if you trust the file) with: python3 -c \"import torch; from safetensors.torch import "
         "save_file; sd = torch.load('" +
         name +
         "', map_location='cpu', weights_only=True); save_file({k: v.contiguous().clone() for k, v in sd.items()}, "
         "'model.safetensors', metadata={'format': 'pt'})\" (the clone() un-ties shared weights, which save_file "
         "refuses), or with transformers: model = <ModelClass>.from_pretrained(folder); "
         "model.save_pretrained(folder, safe_serialization=True)";
}

bool is_legacy_ggml_checkpoint(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".ggml" || ext == ".ggjt";
}

std::optional<std::string> foreign_checkpoint_message(const fs::path& path) {
  if (is_pickled_checkpoint(path)) return pickled_checkpoint_message(path);
  if (is_legacy_ggml_checkpoint(path)) {
    return path.filename().string() +
           " is a ggml file from before GGUF (llama.cpp's format until August 2023), which AttnScope does not read. "
           "Convert it to GGUF with llama.cpp's convert_llama_ggml_to_gguf.py, or open the model's Hugging Face "
           "folder (config.json and model.safetensors)";
  }
  return std::nullopt;
}

}  // namespace attn::models
