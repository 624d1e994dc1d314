// A GGUF file as a decoder: stories260K (resources/models/stories260k, llama2.c's tiny Llama) written here as
// llama.cpp's converter writes a llama model (its tensor names, ggml's dimension order, each head's query and key
// rows permuted into adjacent pairs for ggml's RoPE) loads to the same model as its folder: every logit and every
// attention weight of a run the same (to the last bits: see expect_same_runs), in F32 and in F16 (against the same
// halves in a safetensors file). And the refusals of what the mapping cannot take, each naming the key or tensor.
#include "attn/io/gguf.h"
#include "attn/io/safetensors.h"
#include "attn/models/config.h"
#include "attn/models/transformer.h"
#include "gguf_writer.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attn::io {
namespace {

using attn::HeadStack;

namespace fs = std::filesystem;
using test::Bytes;
using test::File;
using test::Writer;

const fs::path kFolder = fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "stories260k";

// Hugging Face names to llama.cpp's (convert_hf_to_gguf.py's tensor map for the llama architecture).
std::string gguf_name(const std::string& hf) {
  static const std::map<std::string, std::string> kTop = {{"model.embed_tokens.weight", "token_embd.weight"},
                                                          {"model.norm.weight", "output_norm.weight"},
                                                          {"lm_head.weight", "output.weight"}};
  static const std::map<std::string, std::string> kLayer = {
      {"input_layernorm.weight", "attn_norm.weight"},    {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},       {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  if (const auto it = kTop.find(hf); it != kTop.end()) return it->second;
  const std::string prefix = "model.layers.";
  const std::size_t dot = hf.find('.', prefix.size());
  return "blk." + hf.substr(prefix.size(), dot - prefix.size()) + "." + kLayer.at(hf.substr(dot + 1));
}

// The converter's permutation: a head's row j * head_dim / 2 + i goes to row 2i + j.
Bytes permute_rows(const Bytes& in, std::int64_t rows, std::int64_t heads) {
  Bytes out(in.size());
  const std::size_t row_bytes = in.size() / static_cast<std::size_t>(rows);
  const std::int64_t head_dim = rows / heads, half = head_dim / 2;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < half; ++i) {
      for (std::int64_t j = 0; j < 2; ++j) {
        std::memcpy(out.data() + (h * head_dim + 2 * i + j) * row_bytes,
                    in.data() + (h * head_dim + j * half + i) * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

Bytes to_half(const std::vector<float>& v) {
  Bytes out(v.size() * 2);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto bits = Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v[i]));
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

struct Written {
  fs::path gguf;
  fs::path reference;  // a folder with the same weights as safetensors (the halves, for F16)
};

// stories260K as GGUF in `type` (0 F32, 1 F16), with `change` applied to the file before it is written.
Written write_stories(const fs::path& dir, std::uint32_t type, const std::function<void(File&)>& change = {}) {
  auto st = SafeTensors::open(kFolder / "model.safetensors");
  EXPECT_TRUE(st.has_value());
  auto config = models::load_config(kFolder);
  EXPECT_TRUE(config.has_value());
  File f;
  f.kvs.push_back(test::kv_string("general.architecture", "llama"));
  f.kvs.push_back(test::kv_u32("llama.context_length", 512));
  f.kvs.push_back(test::kv_u32("llama.embedding_length", 64));
  f.kvs.push_back(test::kv_u32("llama.block_count", 5));
  f.kvs.push_back(test::kv_u32("llama.feed_forward_length", 172));
  f.kvs.push_back(test::kv_u32("llama.attention.head_count", 8));
  f.kvs.push_back(test::kv_u32("llama.attention.head_count_kv", 4));
  f.kvs.push_back(test::kv_u32("llama.rope.dimension_count", 8));
  f.kvs.push_back(test::kv_f32("llama.rope.freq_base", 10000.0f));
  f.kvs.push_back(test::kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f));
  f.kvs.push_back(test::kv_u32("tokenizer.ggml.bos_token_id", 1));
  f.kvs.push_back(test::kv_u32("tokenizer.ggml.eos_token_id", 2));
  std::vector<std::vector<float>> halves_as_float;
  std::vector<TensorData> reference;
  std::vector<Bytes> kept;
  for (const TensorInfo& t : st->tensors()) {
    if (t.name == "lm_head.weight") continue;  // tied: the converter writes no output.weight
    auto values = st->to_float(t);
    EXPECT_TRUE(values.has_value());
    const bool vector = t.shape.size() == 1;
    // The converter keeps norms in F32; matrices in the file's type.
    const bool half = type == 1 && !vector;
    Bytes data = half ? to_half(*values)
                      : Bytes(reinterpret_cast<const std::uint8_t*>(values->data()),
                              reinterpret_cast<const std::uint8_t*>(values->data() + values->size()));
    kept.push_back(data);
    reference.push_back({t.name, half ? DType::F16 : DType::F32, t.shape,
                         std::as_bytes(std::span(kept.back().data(), kept.back().size()))});
    const std::string name = gguf_name(t.name);
    if (name.ends_with("attn_q.weight")) data = permute_rows(data, t.shape[0], 8);
    if (name.ends_with("attn_k.weight")) data = permute_rows(data, t.shape[0], 4);
    std::vector<std::uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    f.tensors.push_back({name, ne, half ? 1u : 0u, std::move(data)});
  }
  if (change) change(f);
  static int written = 0;  // a folder per file: a test may write several
  const fs::path into = dir / ("w" + std::to_string(++written));
  fs::create_directories(into);
  Written w{into / "stories260k.gguf", into / "reference"};
  const Bytes bytes = f.bytes();
  std::ofstream(w.gguf, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  fs::create_directories(w.reference);
  fs::copy_file(kFolder / "config.json", w.reference / "config.json");
  EXPECT_TRUE(write_safetensors(w.reference / "model.safetensors", reference).has_value());
  return w;
}

// The same weights through the same forward agree to the last bits, not always to every bit: Eigen's vectorised
// sums start with the elements before the first aligned address, so where the allocator puts a buffer decides the
// order of a sum's last additions (measured: 5e-8 to 2e-6 on maps and logits between two loads of one file). A wrong
// permutation, name, shape or type moves them by tenths. The file is read in float arithmetic, as the folder is
// (LoadOptions); in llama.cpp's (the default: its F16 cache and, for F16 weights, F16 activations) the logits move by
// about 1e-2 here, which the last lines check.
void expect_same_runs(const fs::path& gguf, const fs::path& folder) {
  auto a = models::TransformerModel::load(gguf, {}, models::LoadOptions{.gguf_llama_cpp_arithmetic = false});
  ASSERT_TRUE(a.has_value()) << a.error().message();
  auto b = models::TransformerModel::load(folder);
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_EQ((*a)->config().decoder.kv_heads, 4);
  EXPECT_TRUE((*a)->config().decoder.tied);
  const std::vector<int> ids{1, 403, 407, 261, 378, 284, 426, 430, 271, 30, 2, 17};
  const auto runs = test::expect_same_runs_of(*a, *b, ids);
  ASSERT_TRUE(runs.has_value());
  // The backward too: the file's query and key rows read in its RoPE-pair order (StoredMatrix::file_rows).
  test::expect_same_attributions(**a, **b, runs->first, runs->second);
  ASSERT_EQ(runs->first.attention.layers.size(), 5u);
  EXPECT_EQ(runs->first.attention.layers.front().maps.heads(), 8);
  auto c = models::TransformerModel::load(gguf);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_TRUE((*c)->config().decoder.ggml_arithmetic && (*c)->config().decoder.ggml_f16_cache);
  models::TransformerRunner rc(*c);
  models::RunOptions options;
  options.all_logits = true;
  auto z = rc.run_ids(ids, {}, options);
  ASSERT_TRUE(z.has_value()) << z.error().message();
  const float moved = (z->logits - runs->second.logits).cwiseAbs().maxCoeff();
  EXPECT_GT(moved, 1e-4f);
  EXPECT_LT(moved, 0.1f);
}

TEST(GgufModel, StoriesInF32IsTheFolder) {
  attn::test::TempDir dir;
  const Written w = write_stories(dir.path(), 0);
  expect_same_runs(w.gguf, kFolder);
  // No vocabulary in this file: ids run, and the load says why text cannot.
  auto m = models::TransformerModel::load(w.gguf);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ((*m)->tokenizer(), nullptr);
  ASSERT_FALSE((*m)->warnings().empty());
  EXPECT_NE((*m)->warnings().front().find("no tokenizer"), std::string::npos) << (*m)->warnings().front();
  EXPECT_TRUE((*m)->description().ends_with(" \xC2\xB7 GGUF F32")) << (*m)->description();
  // The card: the tensors by type and every key.
  const std::string& card = (*m)->card();
  EXPECT_NE(card.find("A GGUF file (version 3) of the llama architecture"), std::string::npos) << card;
  EXPECT_NE(card.find("Computed as llama.cpp's CPU backend computes it"), std::string::npos) << card;
  EXPECT_NE(card.find("| F32 | 47 | 260,032 | 1.0 MB |"), std::string::npos) << card;
  EXPECT_NE(card.find("| llama\\.block\\_count | 5 |"), std::string::npos) << card;
  EXPECT_NE(card.find("| llama\\.rope\\.freq\\_base | 10000 |"), std::string::npos) << card;
  EXPECT_NE(card.find("| llama\\.attention\\.layer\\_norm\\_rms\\_epsilon | 1e\\-05 |"), std::string::npos) << card;
}

TEST(GgufModel, StoriesInF16IsTheSameHalvesInSafetensors) {
  attn::test::TempDir dir;
  const Written w = write_stories(dir.path(), 1);
  expect_same_runs(w.gguf, w.reference);
}

TEST(GgufModel, AFolderWhoseOnlyCheckpointIsAGgufOpensIt) {
  attn::test::TempDir dir;
  const Written w = write_stories(dir.path(), 0);
  const fs::path folder = dir.path() / "only-gguf";
  fs::create_directories(folder);
  fs::rename(w.gguf, folder / "model.gguf");
  auto m = models::TransformerModel::load(folder);
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ((*m)->config().layers, 5);
}

TEST(GgufModel, RefusesWhatTheMappingCannotTake) {
  attn::test::TempDir dir;
  const auto with = [&](const std::function<void(File&)>& change) { return write_stories(dir.path(), 0, change).gguf; };
  test::expect_load_refused(with([](File& f) { f.kvs[0] = test::kv_string("general.architecture", "mamba"); }),
                            "the architecture \"mamba\" is not read; AttnScope reads llama, qwen2, qwen3");
  test::expect_load_refused(with([](File& f) { f.kvs.erase(f.kvs.begin() + 3); }),
                            "the metadata has no llama.block_count");
  test::expect_load_refused(with([](File& f) { f.kvs[3] = test::kv_string("llama.block_count", "five"); }),
                            "llama.block_count is a string, not an integer");
  // The config reader's own checks, on the metadata read as config.json.
  test::expect_load_refused(with([](File& f) { f.kvs[6] = test::kv_u32("llama.attention.head_count_kv", 3); }),
                            "num_key_value_heads 3 does not divide num_attention_heads 8");
  // A tensor the config implies, missing; one of the wrong shape.
  test::expect_load_refused(
      with([](File& f) { std::erase_if(f.tensors, [](const auto& t) { return t.name == "blk.2.ffn_up.weight"; }); }),
      "missing tensor 'model.layers.2.mlp.up_proj.weight'");
  test::expect_load_refused(with([](File& f) {
                              for (auto& t : f.tensors) {
                                if (t.name == "blk.0.attn_v.weight") t.ne = {32, 64};
                              }
                            }),
                            "has shape [64, 32], the config implies [32, 64]");
  // A type ggml has that the engine does not dequantise (IQ4_NL, 20: blocks of 32 in 18 bytes).
  test::expect_load_refused(with([](File& f) {
                              for (auto& t : f.tensors) {
                                if (t.name == "blk.1.attn_q.weight") {
                                  t.type = 20;
                                  t.data.assign(64 * 64 / 32 * 18, 0);
                                }
                              }
                            }),
                            "tensor \"blk.1.attn_q.weight\" is IQ4_NL, a type AttnScope does not dequantise");
}

}  // namespace
}  // namespace attn::io
