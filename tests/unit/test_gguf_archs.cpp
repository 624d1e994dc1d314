// Gemma 2, Gemma 3, Phi-3, Llama 3 and GPT-2 GGUF files (issue 45): the random checkpoints of tests/data/gguf (written
// by tools/gguf/convert.py as llama.cpp's converter writes them; tests/data/gguf/SOURCES.md) read onto the decoder's
// settings as llama.cpp reads their metadata, and each the same model as its Hugging Face folder: the folder is
// rebuilt here from the file (the names back, Gemma's norms back from the 1 + w the converter stored) and both run
// in float arithmetic. Then the metadata llama.cpp would take differently or not at all, each refused naming its
// key or tensor, or read with llama.cpp's defaults. (llama.cpp's own numbers: tests/parity/test_gguf_parity.cpp.)
#include "attn/io/gguf.h"
#include "attn/io/safetensors.h"
#include "attn/models/config.h"
#include "attn/models/transformer.h"
#include "gguf_writer.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::io {
namespace {

namespace fs = std::filesystem;
using test::Bytes;
using test::Writer;

const fs::path kDir = fs::path(ATTN_TEST_DATA_DIR) / "gguf";

void put_element(Writer& w, const GgufValue& v, std::size_t i) {
  switch (v.type) {
    case GgufType::String: w.str(v.strings[i]); break;
    case GgufType::F32: w.put(static_cast<float>(v.numbers[i])); break;
    case GgufType::F64: w.put(v.numbers[i]); break;
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool: w.put(static_cast<std::uint8_t>(v.integers[i])); break;
    case GgufType::U16:
    case GgufType::I16: w.put(static_cast<std::uint16_t>(v.integers[i])); break;
    case GgufType::U32:
    case GgufType::I32: w.put(static_cast<std::uint32_t>(v.integers[i])); break;
    default: w.put(static_cast<std::uint64_t>(v.integers[i])); break;
  }
}

// A GGUF file's keys and tensors, to change and write again.
struct Editable {
  std::vector<std::pair<std::string, std::function<void(Writer&)>>> kvs;
  std::vector<test::Tensor> tensors;

  explicit Editable(const fs::path& path) {
    auto f = GgufFile::open(path);
    EXPECT_TRUE(f.has_value());
    for (const std::string& key : f->keys()) {
      const GgufValue v = *f->value(key);
      kvs.emplace_back(key, [key, v](Writer& w) {
        w.str(key);
        if (v.array) {
          w.type(GgufType::Array).type(v.type).put<std::uint64_t>(v.size());
        } else {
          w.type(v.type);
        }
        for (std::size_t i = 0; i < v.size(); ++i) put_element(w, v, i);
      });
    }
    for (const GgufTensor& t : f->tensors()) {
      const auto bytes = f->bytes(t);
      const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
      tensors.push_back({t.name, {t.ne.begin(), t.ne.end()}, t.type, Bytes(p, p + bytes.size())});
    }
  }
  void set(const std::string& key, std::function<void(Writer&)> kv) {
    erase(key);
    kvs.emplace_back(key, std::move(kv));
  }
  void erase(const std::string& key) {
    std::erase_if(kvs, [&](const auto& kv) { return kv.first == key; });
  }
  fs::path write(const fs::path& path) const {
    test::File f;
    for (const auto& kv : kvs) f.kvs.push_back(kv.second);
    f.tensors = tensors;
    const Bytes bytes = f.bytes();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
};

std::function<void(Writer&)> kv_i32(std::string key, std::int32_t value) {
  return [=](Writer& w) { w.str(key).type(GgufType::I32).put(value); };
}
std::function<void(Writer&)> kv_bools(std::string key, std::vector<bool> flags) {
  return [=](Writer& w) {
    w.str(key).type(GgufType::Array).type(GgufType::Bool).put<std::uint64_t>(flags.size());
    for (const bool b : flags) w.put<std::uint8_t>(b ? 1 : 0);
  };
}

models::DecoderSettings settings_of(const fs::path& path) {
  auto m = models::TransformerModel::load(path);
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return m ? (*m)->config().decoder : models::DecoderSettings{};
}

TEST(GgufArchs, Gemma2MetadataAsLlamaCppReadsIt) {
  auto m = models::TransformerModel::load(kDir / "gemma2-random-F32.gguf");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  const models::TransformerConfig& c = (*m)->config();
  const models::DecoderSettings& d = c.decoder;
  EXPECT_EQ(d.model_type, "gemma2");
  EXPECT_EQ(c.hidden, 64);
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(d.kv_heads, 2);
  EXPECT_EQ(d.head_dim, 16);
  EXPECT_EQ(c.intermediate, 128);
  EXPECT_EQ(c.max_positions, 8192);
  EXPECT_TRUE(d.gemma && d.norms_hold_one && d.tied && !d.qk_norm && !d.fused);
  EXPECT_FLOAT_EQ(d.rms_eps, 1e-6f);
  EXPECT_DOUBLE_EQ(d.rope_theta, 10000.0);  // Gemma 2's converter writes no base: llama.cpp's default
  EXPECT_FALSE(d.local_rope_theta.has_value());
  EXPECT_FLOAT_EQ(d.attn_softcap, 2.0f);
  EXPECT_FLOAT_EQ(d.final_softcap, 15.0f);
  EXPECT_DOUBLE_EQ(d.query_scale, 0.25);  // 1 / sqrt(head_dim 16)
  EXPECT_EQ(d.window, 4);
  EXPECT_EQ(d.sliding, (std::vector<bool>{true, false}));
  EXPECT_EQ(d.activation, models::GatedActivation::GeluTanh);
  EXPECT_TRUE((*m)->warnings().empty()) << (*m)->warnings().front();
}

TEST(GgufArchs, Gemma3MetadataAsLlamaCppReadsIt) {
  const models::DecoderSettings d = settings_of(kDir / "gemma3-random-F32.gguf");
  EXPECT_EQ(d.model_type, "gemma3_text");
  EXPECT_TRUE(d.gemma && d.norms_hold_one && d.qk_norm && d.tied);
  EXPECT_DOUBLE_EQ(d.rope_theta, 1e6);
  ASSERT_TRUE(d.local_rope_theta.has_value());
  EXPECT_DOUBLE_EQ(*d.local_rope_theta, 10000.0);
  EXPECT_EQ(d.rope, models::RopeScaling::Linear);
  EXPECT_DOUBLE_EQ(d.rope_factor, 2.0);
  EXPECT_FLOAT_EQ(d.attn_softcap, 0.0f);
  EXPECT_FLOAT_EQ(d.final_softcap, 0.0f);
  EXPECT_DOUBLE_EQ(d.query_scale, 0.25);
  EXPECT_EQ(d.window, 4);
  EXPECT_EQ(d.sliding, (std::vector<bool>{true, true, true, true, true, false}));
}

TEST(GgufArchs, Phi3MetadataAsLlamaCppReadsIt) {
  auto m = models::TransformerModel::load(kDir / "phi3-random-F32.gguf");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  const models::DecoderSettings& d = (*m)->config().decoder;
  EXPECT_EQ(d.model_type, "phi3");
  EXPECT_TRUE(d.fused && !d.gemma && !d.norms_hold_one && !d.tied);
  EXPECT_DOUBLE_EQ(d.partial_rotary, 0.5);  // rope.dimension_count 8 of head_dim 16
  EXPECT_FLOAT_EQ(d.rms_eps, 1e-5f);
  // The file's window (2047) is not applied, as llama.cpp does not apply it; the load says so.
  EXPECT_EQ(d.window, 0);
  EXPECT_EQ(d.sliding, (std::vector<bool>{false, false}));
  ASSERT_FALSE((*m)->warnings().empty());
  EXPECT_NE((*m)->warnings().front().find("phi3.attention.sliding_window 2047 is not applied"), std::string::npos)
      << (*m)->warnings().front();
}

// One of a file's tensors as the Hugging Face folder it was converted from holds it: its name (empty: unknown), its
// values and shape changed back where the converter changed them.
using Unconvert = std::function<std::string(const GgufTensor&, std::vector<float>&, std::vector<std::int64_t>&)>;

// The Hugging Face folder a file was converted from, rebuilt from it with `unconvert` and `config`.
void write_folder(const fs::path& gguf, const fs::path& folder, const std::string& config, const Unconvert& unconvert) {
  auto f = GgufFile::open(gguf);
  ASSERT_TRUE(f.has_value());
  std::vector<std::vector<float>> values;
  values.reserve(f->tensors().size());
  std::vector<TensorData> out;
  for (const GgufTensor& t : f->tensors()) {
    auto v = f->to_float(t);
    ASSERT_TRUE(v.has_value());
    std::vector<std::int64_t> shape = t.shape();
    const std::string name = unconvert(t, *v, shape);
    ASSERT_FALSE(name.empty()) << t.name;
    values.push_back(std::move(*v));
    out.push_back(f32_tensor(name, shape, values.back()));
  }
  fs::create_directories(folder);
  ASSERT_TRUE(write_safetensors(folder / "model.safetensors", out).has_value());
  std::ofstream(folder / "config.json") << config;
}

// The decoders' unconversion: the test's own statement of the converter's names (gguf-py's tensor_mapping.py),
// Gemma's norms back to w of 1 + w.
Unconvert decoder_names(const std::string& config) {
  return [config](const GgufTensor& t, std::vector<float>& v, std::vector<std::int64_t>&) -> std::string {
    static const std::map<std::string, std::string> kNames = {
        {"attn_norm", "input_layernorm"},
        {"attn_q", "self_attn.q_proj"},
        {"attn_k", "self_attn.k_proj"},
        {"attn_v", "self_attn.v_proj"},
        {"attn_qkv", "self_attn.qkv_proj"},
        {"attn_output", "self_attn.o_proj"},
        {"attn_q_norm", "self_attn.q_norm"},
        {"attn_k_norm", "self_attn.k_norm"},
        {"ffn_gate", "mlp.gate_proj"},
        {"ffn_down", "mlp.down_proj"},
        {"post_ffw_norm", "post_feedforward_layernorm"},
    };
    const bool gemma = config.find("gemma") != std::string::npos;
    if (gemma && t.ne.size() == 1) {
      for (float& x : v) x -= 1.0f;
    }
    if (t.name == "token_embd.weight") return "model.embed_tokens.weight";
    if (t.name == "output_norm.weight") return "model.norm.weight";
    if (t.name == "output.weight") return "lm_head.weight";
    const std::size_t dot = t.name.find('.', 4);
    const std::string layer = t.name.substr(4, dot - 4), what = t.name.substr(dot + 1, t.name.size() - dot - 8);
    std::string hf = kNames.contains(what) ? kNames.at(what) : "";
    if (what == "ffn_up") hf = config.find("phi3") != std::string::npos ? "mlp.gate_up_proj" : "mlp.up_proj";
    if (what == "ffn_norm") hf = gemma ? "pre_feedforward_layernorm" : "post_attention_layernorm";
    if (what == "post_attention_norm") hf = "post_attention_layernorm";
    return hf.empty() ? "" : "model.layers." + layer + "." + hf + ".weight";
  };
}

// GPT-2's: GPT2LMHeadModel's names, each Conv1D weight back from [out, in] rows to [in, out].
std::string gpt2_name(const GgufTensor& t, std::vector<float>& v, std::vector<std::int64_t>& shape) {
  static const std::map<std::string, std::string> kNames = {
      {"attn_norm", "ln_1"}, {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"},
      {"ffn_norm", "ln_2"},  {"ffn_up", "mlp.c_fc"},      {"ffn_down", "mlp.c_proj"},
      {"token_embd", "wte"}, {"position_embd", "wpe"},    {"output_norm", "ln_f"},
  };
  const std::size_t dot = t.name.rfind('.');
  const std::string stem = t.name.substr(0, dot), kind = t.name.substr(dot + 1);
  if (!stem.starts_with("blk.")) return kNames.contains(stem) ? "transformer." + kNames.at(stem) + "." + kind : "";
  const std::size_t at = stem.find('.', 4);
  const std::string what = stem.substr(at + 1);
  if (!kNames.contains(what)) return "";
  if (shape.size() == 2) {
    std::vector<float> turned(v.size());
    for (std::int64_t r = 0; r < shape[0]; ++r)
      for (std::int64_t k = 0; k < shape[1]; ++k) turned[k * shape[0] + r] = v[r * shape[1] + k];
    v = std::move(turned);
    std::swap(shape[0], shape[1]);
  }
  return "transformer.h." + stem.substr(4, at - 4) + "." + kNames.at(what) + "." + kind;
}

// The file and its folder, both in float arithmetic: every logit and attention weight the same to float rounding.
// `first_slides`: layer 0 is a sliding layer (window 4), so its last query sees no key older than 3 positions.
void expect_file_is_folder(const std::string& file, const std::string& config, bool first_slides) {
  attn::test::TempDir dir;
  write_folder(kDir / file, dir.path() / "folder", config, decoder_names(config));
  auto a = models::TransformerModel::load(kDir / file, {}, models::LoadOptions{.gguf_llama_cpp_arithmetic = false});
  ASSERT_TRUE(a.has_value()) << a.error().message();
  auto b = models::TransformerModel::load(dir.path() / "folder");
  ASSERT_TRUE(b.has_value()) << b.error().message();
  std::vector<int> ids;
  for (int i = 0; i < 12; ++i) ids.push_back((37 * i + 5) % 384);
  const auto runs = attn::io::test::expect_same_runs_of(*a, *b, ids);
  ASSERT_TRUE(runs.has_value());
  // The first layer's sliding window: query 11 sees key 0 only without one.
  const HeadStack& first = runs->first.attention.layers.front().maps;
  for (int h = 0; h < first.heads(); ++h) EXPECT_EQ(first.head(h)(11, 0) == 0.0f, first_slides) << "head " << h;
}

TEST(GgufArchs, Gemma2FileIsItsFolder) {
  expect_file_is_folder("gemma2-random-F32.gguf", R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 384, "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "query_pre_attn_scalar": 16, "sliding_window": 4,
    "attn_logit_softcapping": 2.0, "final_logit_softcapping": 15.0})",
                        true);
}

TEST(GgufArchs, Gemma3FileIsItsFolder) {
  expect_file_is_folder("gemma3-random-F32.gguf", R"({"architectures": ["Gemma3ForCausalLM"],
    "model_type": "gemma3_text", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 6,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 384,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
    "query_pre_attn_scalar": 16, "sliding_window": 4, "sliding_window_pattern": 6})",
                        true);
}

TEST(GgufArchs, Phi3FileIsItsFolder) {
  expect_file_is_folder("phi3-random-F32.gguf", R"({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 384, "max_position_embeddings": 4096, "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0, "partial_rotary_factor": 0.5, "tie_word_embeddings": false})",
                        false);
}

// A gpt2 file (llama.cpp's converter: Conv1D weights turned into [out, in] rows, the output tied to token_embd) is
// a decoder with GPT-2's switches, and the same model as its Hugging Face GPT-2 folder, which the engine runs with
// its own GPT-2 (Family::Gpt2, checked against torch in tests/parity): the folder rebuilt here, each Conv1D weight
// transposed back.
TEST(GgufArchs, Gpt2MetadataAsLlamaCppReadsIt) {
  auto m = models::TransformerModel::load(kDir / "gpt2-random-F32.gguf");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  const models::TransformerConfig& c = (*m)->config();
  const models::DecoderSettings& d = c.decoder;
  EXPECT_EQ(c.family, models::Family::Decoder);
  EXPECT_EQ(d.model_type, "gpt2");
  EXPECT_TRUE(d.gpt2 && d.tied && d.qkv_bias && d.o_bias && d.mlp_bias && !d.fused && !d.gemma);
  EXPECT_EQ(d.partial_rotary, 0.0);  // learned positions, no RoPE
  EXPECT_EQ(d.activation, models::GatedActivation::GeluTanh);
  EXPECT_FLOAT_EQ(d.rms_eps, 1e-5f);  // gpt2.attention.layer_norm_epsilon
  EXPECT_EQ(c.max_positions, 256);    // gpt2.context_length: the position table's rows
  EXPECT_EQ(c.intermediate, 256);     // 4 x n_embd
  EXPECT_EQ(d.head_dim, 16);
  EXPECT_TRUE((*m)->warnings().empty()) << (*m)->warnings().front();  // every tensor read
}

TEST(GgufArchs, Gpt2FileIsItsFolder) {
  attn::test::TempDir dir;
  write_folder(kDir / "gpt2-random-F32.gguf", dir.path() / "folder", R"({"architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 256, "n_inner": null,
    "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05, "vocab_size": 384})",
               gpt2_name);
  auto a = models::TransformerModel::load(kDir / "gpt2-random-F32.gguf", {},
                                          models::LoadOptions{.gguf_llama_cpp_arithmetic = false});
  ASSERT_TRUE(a.has_value()) << a.error().message();
  auto b = models::TransformerModel::load(dir.path() / "folder");
  ASSERT_TRUE(b.has_value()) << b.error().message();
  ASSERT_EQ((*b)->config().family, models::Family::Gpt2);
  std::vector<int> ids;
  for (int i = 0; i < 12; ++i) ids.push_back((37 * i + 5) % 384);
  const auto runs = attn::io::test::expect_same_runs_of(*a, *b, ids);
  ASSERT_TRUE(runs.has_value());
  // The backward pass through GPT-2's switches (its LayerNorms, positions, ungated MLP).
  attn::io::test::expect_same_attributions(**a, **b, runs->first, runs->second);
}

TEST(GgufArchs, GemmaMetadataLlamaCppDefaultsOrRefuses) {
  attn::test::TempDir dir;
  const fs::path gemma2 = kDir / "gemma2-random-F32.gguf", gemma3 = kDir / "gemma3-random-F32.gguf";
  const auto changed = [&](const fs::path& from, const std::string& name, const std::function<void(Editable&)>& f) {
    Editable e(from);
    f(e);
    return e.write(dir.path() / name);
  };
  // Gemma 2 without its caps and window: llama.cpp's defaults, Gemma 2's (50, 30, 4096).
  models::DecoderSettings d = settings_of(changed(gemma2, "no-caps.gguf", [](Editable& e) {
    for (const char* k :
         {"gemma2.attn_logit_softcapping", "gemma2.final_logit_softcapping", "gemma2.attention.sliding_window"}) {
      e.erase(k);
    }
  }));
  EXPECT_FLOAT_EQ(d.attn_softcap, 50.0f);
  EXPECT_FLOAT_EQ(d.final_softcap, 30.0f);
  EXPECT_EQ(d.window, 4096);
  test::expect_load_refused(
      changed(
          gemma2, "negative-window.gguf",
          [](Editable& e) { e.set("gemma2.attention.sliding_window", kv_i32("gemma2.attention.sliding_window", -4)); }),
      "gemma2.attention.sliding_window is -4; a window of keys is at least 1");
  test::expect_load_refused(changed(gemma2, "zero-window.gguf",
                                    [](Editable& e) {
                                      e.set("gemma2.attention.sliding_window",
                                            test::kv_u32("gemma2.attention.sliding_window", 0));
                                    }),
                            "gemma2.attention.sliding_window is 0");
  test::expect_load_refused(changed(gemma2, "negative-cap.gguf",
                                    [](Editable& e) {
                                      e.set("gemma2.final_logit_softcapping",
                                            test::kv_f32("gemma2.final_logit_softcapping", -1.0f));
                                    }),
                            "gemma2.final_logit_softcapping is -1.0; it must be a positive number");
  // Gemma 3 with no window slides nowhere; a window of 0 is llama.cpp's "none" too.
  d = settings_of(changed(gemma3, "no-window.gguf", [](Editable& e) { e.erase("gemma3.attention.sliding_window"); }));
  EXPECT_EQ(d.sliding, std::vector<bool>(6, false));
  d = settings_of(changed(gemma3, "window-0.gguf", [](Editable& e) {
    e.set("gemma3.attention.sliding_window", test::kv_u32("gemma3.attention.sliding_window", 0));
  }));
  EXPECT_EQ(d.sliding, std::vector<bool>(6, false));
  // attention.sliding_window_pattern: a period, or one flag per layer.
  const std::string pattern = "gemma3.attention.sliding_window_pattern";
  d = settings_of(changed(gemma3, "period-2.gguf", [&](Editable& e) { e.set(pattern, test::kv_u32(pattern, 2)); }));
  EXPECT_EQ(d.sliding, (std::vector<bool>{true, false, true, false, true, false}));
  const std::vector<bool> flags{false, true, true, false, true, true};
  d = settings_of(changed(gemma3, "flags.gguf", [&](Editable& e) { e.set(pattern, kv_bools(pattern, flags)); }));
  EXPECT_EQ(d.sliding, flags);
  test::expect_load_refused(changed(gemma3, "flags-5.gguf",
                                    [&](Editable& e) {
                                      e.set(pattern, kv_bools(pattern, {true, true, true, true, false}));
                                    }),
                            "gemma3.attention.sliding_window_pattern must hold one flag per layer (6)");
  test::expect_load_refused(
      changed(gemma3, "period-negative.gguf", [&](Editable& e) { e.set(pattern, kv_i32(pattern, -1)); }),
      "gemma3.attention.sliding_window_pattern is -1");
}

// Llama 3's RoPE scaling as llama.cpp's converter stores it: rope_freqs.weight, one F32 factor per rotary pair
// (tools/gguf/convert.py's llama3_rope_factors for the file's rope_scaling: factor 8, low 1, high 4, original 64).
TEST(GgufArchs, Llama3RopeFactorsAsLlamaCppReadsThem) {
  const fs::path file = kDir / "llama3-random-F32.gguf";
  auto m = models::TransformerModel::load(file);
  ASSERT_TRUE(m.has_value()) << m.error().message();
  const models::DecoderSettings& d = (*m)->config().decoder;
  EXPECT_EQ(d.rope, models::RopeScaling::Default);
  ASSERT_EQ(d.rope_freq_factors.size(), 8u);  // head_dim 16
  EXPECT_EQ(d.rope_freq_factors.front(), 1.0f);
  EXPECT_NEAR(d.rope_freq_factors[1], 1.29398f, 1e-5f);
  EXPECT_EQ(d.rope_freq_factors.back(), 8.0f);
  // Read into the settings, not left as an unused tensor.
  for (const std::string& w : (*m)->warnings()) EXPECT_EQ(w.find("rope_freqs"), std::string::npos) << w;
  // Each pair's inverse frequency divided by its factor (the engine's own arithmetic, as transformers' llama3).
  const models::RopeFrequencies r = models::rope_frequencies((*m)->config(), 16, false);
  ASSERT_EQ(r.inv.size(), 8u);
  EXPECT_DOUBLE_EQ(r.inv[7], 1.0 / std::pow(10000.0, 14.0 / 16.0) / 8.0);

  attn::test::TempDir dir;
  const auto with_factors = [&](const std::string& name, std::uint32_t type, std::vector<std::uint64_t> ne,
                                Bytes bytes) {
    Editable e(file);
    for (test::Tensor& t : e.tensors) {
      if (t.name == "rope_freqs.weight") t = test::Tensor{t.name, ne, type, bytes};
    }
    return e.write(dir.path() / name);
  };
  const auto f32 = [](std::vector<float> v) {
    Bytes b(4 * v.size());
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  test::expect_load_refused(with_factors("four.gguf", 0, {4}, f32({1, 1, 1, 1})),
                            "rope_freqs.weight is F32 of 4 values; llama.cpp reads one F32 factor per rotary pair, 8");
  test::expect_load_refused(with_factors("f16.gguf", 1, {8}, Bytes(16, 0)), "rope_freqs.weight is F16 of 8 values");
  test::expect_load_refused(with_factors("zero.gguf", 0, {8}, f32({1, 1, 0, 8, 8, 8, 8, 8})),
                            "rope_freqs.weight[2] is 0.000000: a RoPE frequency factor must be finite and positive");
  test::expect_load_refused(with_factors("nan.gguf", 0, {8}, f32({1, 1, 1, 8, 8, 8, 8, std::nanf("")})),
                            "rope_freqs.weight[7] is nan");
  // In another architecture llama.cpp would not load it: refused by name.
  Editable q(kDir / "phi3-random-F32.gguf");
  q.tensors.push_back({"rope_freqs.weight", {4}, 0, f32({1, 1, 1, 1})});
  test::expect_load_refused(q.write(dir.path() / "phi3-freqs.gguf"),
                            "the file holds rope_freqs.weight (Llama 3's RoPE scaling), which llama.cpp reads for the "
                            "llama architecture only, not phi3");
}

TEST(GgufArchs, RefusesWhatLlamaCppStoresAndTheEngineDoesNotRead) {
  attn::test::TempDir dir;
  // Phi-3's LongRoPE: its factors are tensors, named with their offset.
  Editable e(kDir / "phi3-random-F32.gguf");
  e.tensors.push_back({"rope_factors_long.weight", {4}, 0, Bytes(16, 0)});
  const fs::path longrope = e.write(dir.path() / "longrope.gguf");
  test::expect_load_refused(longrope, "the file holds rope_factors_long.weight (Phi-3's LongRoPE factors");
  auto m = models::TransformerModel::load(longrope);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("byte"), std::string::npos) << m.error().message();
  Editable s(kDir / "phi3-random-F32.gguf");
  s.set("phi3.rope.scaling.type", test::kv_string("phi3.rope.scaling.type", "longrope"));
  test::expect_load_refused(s.write(dir.path() / "longrope-type.gguf"),
                            "RoPE scaling \"longrope\" in a GGUF file is not read");
  // An architecture not read, by name.
  Editable g(kDir / "phi3-random-F32.gguf");
  g.set("general.architecture", test::kv_string("general.architecture", "falcon"));
  test::expect_load_refused(
      g.write(dir.path() / "falcon.gguf"),
      "the architecture \"falcon\" is not read; AttnScope reads llama, qwen2, qwen3, gemma2, gemma3, phi3, gpt2");
  // GPT-2 without its LayerNorm epsilon, which llama.cpp requires.
  Editable n(kDir / "gpt2-random-F32.gguf");
  n.erase("gpt2.attention.layer_norm_epsilon");
  test::expect_load_refused(n.write(dir.path() / "gpt2-eps.gguf"),
                            "the metadata has no gpt2.attention.layer_norm_epsilon");
  // ... or with one that is not a positive number, named with its key.
  Editable z(kDir / "gpt2-random-F32.gguf");
  z.set("gpt2.attention.layer_norm_epsilon",
        [](Writer& w) { w.str("gpt2.attention.layer_norm_epsilon").type(GgufType::F32).put(-1.0f); });
  test::expect_load_refused(z.write(dir.path() / "gpt2-eps-negative.gguf"), "gpt2.attention.layer_norm_epsilon is -1");
}

}  // namespace
}  // namespace attn::io
