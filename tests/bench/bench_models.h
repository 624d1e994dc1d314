// Random checkpoints for the benchmarks, written as safetensors + config.json under the names their loaders
// expect, so that they load as any downloaded or shipped model does: BERT-base- and GPT-2-small-shaped ones
// with Hugging Face's initialisation (bench_transformer, bench_transformer_typing), and the weights of the
// demo models with torch's (bench_seq2seq, bench_caption), which also share how a benchmark picks its
// model (--model=FOLDER, --random, else the shipped one when it is there).
#pragma once

#include "attn/io/safetensors.h"
#include "attn/random.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn::bench {

namespace fs = std::filesystem;

constexpr int kLayers = 12, kHidden = 768, kHeads = 12, kFfn = 3072;
constexpr int kBertVocab = 30522, kGpt2Vocab = 50257;

// Named random tensors, drawn in call order from one seed: as Hugging Face initialises them (normal, std
// 0.02; layer norms 1 and 0) or as torch does (nn.Linear and nn.Conv2d uniform in +-1/sqrt(fan_in),
// nn.Embedding N(0, 1)).
class WeightWriter {
 public:
  explicit WeightWriter(std::uint64_t seed) : rng_(seed) {}
  void normal(const std::string& name, std::vector<std::int64_t> shape) { add(name, std::move(shape), -1.0f); }
  void constant(const std::string& name, std::vector<std::int64_t> shape, float v) { add(name, std::move(shape), v); }
  // Uniform in +-bound (torch's Linear and Conv2d: bound = 1 / sqrt(fan_in)).
  void uniform(const std::string& name, std::vector<std::int64_t> shape, float bound) {
    fill(name, std::move(shape), [&] { return bound * (2.0f * rng_.uniform() - 1.0f); });
  }
  // N(0, 1) (torch's Embedding).
  void standard_normal(const std::string& name, std::vector<std::int64_t> shape) {
    fill(name, std::move(shape), [&] { return rng_.normal(); });
  }
  // One element set after the fact (a bias pushed down).
  void set(const std::string& name, std::size_t i, float v) { store_.at(name).values.at(i) = v; }
  attn::Result<void> write(const fs::path& path) {
    std::vector<attn::io::TensorData> tensors;
    for (auto& [name, t] : store_) tensors.push_back(attn::io::f32_tensor(name, t.shape, t.values));
    return attn::io::write_safetensors(path, tensors);
  }
  // write(), or the error printed as `program: ...` and exit(1).
  void write_or_exit(const fs::path& path, const char* program) {
    if (auto ok = write(path); !ok) {
      std::fprintf(stderr, "%s: %s\n", program, ok.error().message().c_str());
      std::exit(1);
    }
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
  template <class Draw>
  void fill(const std::string& name, std::vector<std::int64_t> shape, Draw&& draw) {
    std::size_t n = 1;
    for (auto s : shape) n *= static_cast<std::size_t>(s);
    Tensor t{std::move(shape), std::vector<float>(n)};
    for (float& x : t.values) x = draw();
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
  w.write_or_exit(dir / "model.safetensors", "bench_transformer");
  write_text(dir / "config.json", R"({"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 768,
 "num_attention_heads": 12, "num_hidden_layers": 12, "intermediate_size": 3072,
 "max_position_embeddings": )" + std::to_string(positions) +
                                      R"(, "vocab_size": 30522, "hidden_act": "gelu"})");
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
  w.write_or_exit(dir / "model.safetensors", "bench_transformer");
  write_text(dir / "config.json", R"({"model_type": "gpt2", "architectures": ["GPT2Model"], "n_embd": 768,
 "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})");
  return dir;
}

inline fs::path bench_dir() {
  if (const char* env = std::getenv("ATTN_BENCH_DIR"); env && *env) return env;
  return fs::temp_directory_path() / "attnscope-bench";
}

// Model::load(dir), or the error printed as `program: ...` and exit(1).
template <class Model>
std::shared_ptr<const Model> load_or_exit(const fs::path& dir, const char* program) {
  auto loaded = Model::load(dir);
  if (!loaded) {
    std::fprintf(stderr, "%s: %s\n", program, loaded.error().message().c_str());
    std::exit(1);
  }
  return *loaded;
}

// A demo model's benchmark: --model=FOLDER (another model folder) and --random (the random model even when
// the shipped one is there), taken out of argv before Google Benchmark parses it.
struct ModelArgs {
  std::string folder;
  bool random = false;
};
inline ModelArgs take_model_args(int& argc, char** argv) {
  ModelArgs out;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--model=")) {
      out.folder = std::string(arg.substr(8));
    } else if (arg == "--random") {
      out.random = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return out;
}

// The folder to benchmark: --model's, else the shipped `shipped` when it holds model.safetensors (and
// --random was not given), else make_random()'s. `random` says whether the random one was taken.
template <class MakeRandom>
fs::path model_folder(const ModelArgs& args, const fs::path& shipped, MakeRandom&& make_random, bool& random) {
  random = false;
  if (!args.folder.empty()) return args.folder;
  if (!args.random && fs::exists(shipped / "model.safetensors")) return shipped;
  random = true;
  return make_random();
}

}  // namespace attn::bench
