// Random BERT-base- and GPT-2-small-shaped checkpoints for the benchmarks: weights as Hugging Face
// initialises them, written as safetensors + config.json with Hugging Face's tensor names, so that they
// load as any downloaded checkpoint does. Shared by bench_transformer and bench_transformer_typing.
#pragma once

#include "attn/io/safetensors.h"
#include "attn/random.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attn::bench {

namespace fs = std::filesystem;

constexpr int kLayers = 12, kHidden = 768, kHeads = 12, kFfn = 3072;
constexpr int kBertVocab = 30522, kGpt2Vocab = 50257;

// Weights as Hugging Face initialises them (normal, std 0.02; layer norms 1 and 0), named as its
// checkpoints name them.
class WeightWriter {
 public:
  explicit WeightWriter(std::uint64_t seed) : rng_(seed) {}
  void normal(const std::string& name, std::vector<std::int64_t> shape) { add(name, std::move(shape), -1.0f); }
  void constant(const std::string& name, std::vector<std::int64_t> shape, float v) { add(name, std::move(shape), v); }
  attn::Result<void> write(const fs::path& path) {
    std::vector<attn::io::TensorData> tensors;
    for (auto& [name, t] : store_) tensors.push_back(attn::io::f32_tensor(name, t.shape, t.values));
    return attn::io::write_safetensors(path, tensors);
  }

 private:
  struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<float> values;
  };
  void add(const std::string& name, std::vector<std::int64_t> shape, float v) {
    std::size_t n = 1;
    for (auto s : shape) n *= static_cast<std::size_t>(s);
    Tensor t{std::move(shape), std::vector<float>(n, v)};
    if (v < 0) {
      for (float& x : t.values) x = 0.02f * rng_.normal();
    }
    store_[name] = std::move(t);
  }
  attn::SplitMix64 rng_;
  std::map<std::string, Tensor> store_;
};

inline void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A BERT-base-shaped folder (config.json + model.safetensors, no tokenizer: the benchmark runs ids).
inline fs::path make_bert(const fs::path& dir, int positions) {
  fs::create_directories(dir);
  WeightWriter w(20261122);
  const std::int64_t d = kHidden;
  w.normal("embeddings.word_embeddings.weight", {kBertVocab, d});
  w.normal("embeddings.position_embeddings.weight", {positions, d});
  w.normal("embeddings.token_type_embeddings.weight", {2, d});
  w.constant("embeddings.LayerNorm.weight", {d}, 1.0f);
  w.constant("embeddings.LayerNorm.bias", {d}, 0.0f);
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* m : {"query", "key", "value"}) {
      w.normal(p + "attention.self." + m + ".weight", {d, d});
      w.constant(p + "attention.self." + m + ".bias", {d}, 0.0f);
    }
    w.normal(p + "attention.output.dense.weight", {d, d});
    w.constant(p + "attention.output.dense.bias", {d}, 0.0f);
    w.constant(p + "attention.output.LayerNorm.weight", {d}, 1.0f);
    w.constant(p + "attention.output.LayerNorm.bias", {d}, 0.0f);
    w.normal(p + "intermediate.dense.weight", {kFfn, d});
    w.constant(p + "intermediate.dense.bias", {kFfn}, 0.0f);
    w.normal(p + "output.dense.weight", {d, kFfn});
    w.constant(p + "output.dense.bias", {d}, 0.0f);
    w.constant(p + "output.LayerNorm.weight", {d}, 1.0f);
    w.constant(p + "output.LayerNorm.bias", {d}, 0.0f);
  }
  if (auto ok = w.write(dir / "model.safetensors"); !ok) {
    std::fprintf(stderr, "bench_transformer: %s\n", ok.error().message().c_str());
    std::exit(1);
  }
  write_text(dir / "config.json", R"({"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 768,
 "num_attention_heads": 12, "num_hidden_layers": 12, "intermediate_size": 3072,
 "max_position_embeddings": )" + std::to_string(positions) + R"(, "vocab_size": 30522, "hidden_act": "gelu"})");
  return dir;
}

inline fs::path make_gpt2(const fs::path& dir) {
  fs::create_directories(dir);
  WeightWriter w(20261123);
  const std::int64_t d = kHidden;
  w.normal("wte.weight", {kGpt2Vocab, d});
  w.normal("wpe.weight", {1024, d});
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    w.constant(p + "ln_1.weight", {d}, 1.0f);
    w.constant(p + "ln_1.bias", {d}, 0.0f);
    w.normal(p + "attn.c_attn.weight", {d, 3 * d});  // Conv1D: [in, out]
    w.constant(p + "attn.c_attn.bias", {3 * d}, 0.0f);
    w.normal(p + "attn.c_proj.weight", {d, d});
    w.constant(p + "attn.c_proj.bias", {d}, 0.0f);
    w.constant(p + "ln_2.weight", {d}, 1.0f);
    w.constant(p + "ln_2.bias", {d}, 0.0f);
    w.normal(p + "mlp.c_fc.weight", {d, kFfn});
    w.constant(p + "mlp.c_fc.bias", {kFfn}, 0.0f);
    w.normal(p + "mlp.c_proj.weight", {kFfn, d});
    w.constant(p + "mlp.c_proj.bias", {d}, 0.0f);
  }
  w.constant("ln_f.weight", {d}, 1.0f);
  w.constant("ln_f.bias", {d}, 0.0f);
  if (auto ok = w.write(dir / "model.safetensors"); !ok) {
    std::fprintf(stderr, "bench_transformer: %s\n", ok.error().message().c_str());
    std::exit(1);
  }
  write_text(dir / "config.json", R"({"model_type": "gpt2", "architectures": ["GPT2Model"], "n_embd": 768,
 "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})");
  return dir;
}

inline fs::path bench_dir() {
  if (const char* env = std::getenv("ATTN_BENCH_DIR"); env && *env) return env;
  return fs::temp_directory_path() / "attnscope-bench";
}

}  // namespace attn::bench
