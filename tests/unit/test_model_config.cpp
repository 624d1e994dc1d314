// config.json of the four transformer families: the transformers library's defaults per family, the
// aliases of its attribute_map, refusals naming the key and its line, and preprocessor_config.json.
#include "attn/models/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("attn-config-" + std::string(info->name()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path write(const char* name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TransformerConfig parse_ok(const std::string& json) {
  auto c = parse_config(json, "config.json");
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message());
  return c ? *c : TransformerConfig{};
}

Error parse_error(const std::string& json) {
  auto c = parse_config(json, "config.json");
  EXPECT_FALSE(c.has_value()) << json;
  return c ? Error{} : c.error();
}

// bert-base-uncased's config.json as the Hub serves it.
constexpr const char* kBertBase = R"({
  "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
})";

TEST(ModelConfig, BertBase) {
  const auto c = parse_ok(kBertBase);
  EXPECT_EQ(c.family, Family::Bert);
  EXPECT_EQ(c.architecture, "BertForMaskedLM");
  EXPECT_EQ(c.hidden, 768);
  EXPECT_EQ(c.heads, 12);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.layers, 12);
  EXPECT_EQ(c.intermediate, 3072);
  EXPECT_EQ(c.max_positions, 512);
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_EQ(c.layer_norm_eps, 1e-12f);
  EXPECT_EQ(c.activation, Activation::GeluErf);
  EXPECT_TRUE(c.labels.empty());
}

TEST(ModelConfig, BertDefaultsAndSmallSizes) {
  const auto d = parse_ok(R"({"model_type": "bert"})");
  EXPECT_EQ(d.hidden, 768);
  EXPECT_EQ(d.heads, 12);
  EXPECT_EQ(d.layers, 12);
  EXPECT_EQ(d.intermediate, 3072);
  EXPECT_EQ(d.max_positions, 512);
  EXPECT_EQ(d.vocab_size, 30522);
  EXPECT_EQ(d.type_vocab_size, 2);
  EXPECT_EQ(d.pad_token_id, 0);
  EXPECT_EQ(d.activation, Activation::GeluErf);

  const auto tiny = parse_ok(R"({"architectures": ["BertModel"], "hidden_size": 32, "num_attention_heads": 4,
    "num_hidden_layers": 2, "intermediate_size": 37, "vocab_size": 99, "hidden_act": "relu", "layer_norm_eps": 1e-5})");
  EXPECT_EQ(tiny.family, Family::Bert);
  EXPECT_EQ(tiny.head_dim(), 8);
  EXPECT_EQ(tiny.layers, 2);
  EXPECT_EQ(tiny.intermediate, 37);
  EXPECT_EQ(tiny.vocab_size, 99);
  EXPECT_EQ(tiny.activation, Activation::Relu);
  EXPECT_EQ(tiny.layer_norm_eps, 1e-5f);
}

TEST(ModelConfig, DistilBert) {
  const auto c = parse_ok(R"({"activation": "gelu", "architectures": ["DistilBertForMaskedLM"],
    "attention_dropout": 0.1, "dim": 768, "dropout": 0.1, "hidden_dim": 3072, "initializer_range": 0.02,
    "max_position_embeddings": 512, "model_type": "distilbert", "n_heads": 12, "n_layers": 6, "pad_token_id": 0,
    "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": false, "tie_weights_": true,
    "vocab_size": 30522})");
  EXPECT_EQ(c.family, Family::DistilBert);
  EXPECT_EQ(c.hidden, 768);
  EXPECT_EQ(c.layers, 6);
  EXPECT_EQ(c.intermediate, 3072);
  EXPECT_EQ(c.layer_norm_eps, 1e-12f);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_FALSE(c.sinusoidal_positions);

  // Defaults, the family from architectures alone, and the hidden_size alias of DistilBertConfig.
  const auto d = parse_ok(R"({"architectures": ["DistilBertModel"], "hidden_size": 96, "sinusoidal_pos_embds": true,
    "layer_norm_eps": 0.5})");
  EXPECT_EQ(d.family, Family::DistilBert);
  EXPECT_EQ(d.hidden, 96);
  EXPECT_EQ(d.heads, 12);
  EXPECT_EQ(d.layers, 6);
  EXPECT_EQ(d.intermediate, 3072);
  EXPECT_EQ(d.max_positions, 512);
  EXPECT_EQ(d.layer_norm_eps, 1e-12f);  // DistilBERT ignores the key: transformers hard-codes 1e-12
  EXPECT_EQ(d.activation, Activation::GeluErf);
  EXPECT_TRUE(d.sinusoidal_positions);
}

TEST(ModelConfig, Gpt2) {
  const auto c = parse_ok(R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
    "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257})");
  EXPECT_EQ(c.family, Family::Gpt2);
  EXPECT_EQ(c.architecture, "GPT2LMHeadModel");
  EXPECT_EQ(c.hidden, 768);
  EXPECT_EQ(c.layers, 12);
  EXPECT_EQ(c.intermediate, 3072);
  EXPECT_EQ(c.max_positions, 1024);
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.layer_norm_eps, 1e-5f);
  EXPECT_EQ(c.activation, Activation::GeluTanh);

  const auto d = parse_ok(R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_inner": null})");
  EXPECT_EQ(d.intermediate, 256);  // null: 4 x n_embd
  EXPECT_EQ(d.layers, 12);
  EXPECT_EQ(d.max_positions, 1024);
  EXPECT_EQ(d.vocab_size, 50257);
  EXPECT_EQ(d.layer_norm_eps, 1e-5f);
  EXPECT_EQ(d.activation, Activation::GeluTanh);
  EXPECT_EQ(parse_ok(R"({"model_type": "gpt2", "n_inner": 100})").intermediate, 100);
  EXPECT_EQ(parse_ok(R"({"model_type": "gpt2", "activation_function": "gelu_pytorch_tanh"})").activation,
            Activation::GeluTanh);
  EXPECT_EQ(parse_ok(R"({"model_type": "gpt2", "activation_function": "gelu"})").activation, Activation::GeluErf);
  // GPT2Config's attribute_map: hidden_size etc. stand for n_embd etc.
  const auto alias = parse_ok(R"({"model_type": "gpt2", "hidden_size": 128, "num_attention_heads": 2,
    "num_hidden_layers": 3, "max_position_embeddings": 64})");
  EXPECT_EQ(alias.hidden, 128);
  EXPECT_EQ(alias.heads, 2);
  EXPECT_EQ(alias.layers, 3);
  EXPECT_EQ(alias.max_positions, 64);
  EXPECT_EQ(alias.intermediate, 512);
}

TEST(ModelConfig, Vit) {
  const auto c = parse_ok(R"({"architectures": ["ViTForImageClassification"], "attention_probs_dropout_prob": 0.0,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "hidden_size": 768,
    "id2label": {"0": "tench, Tinca tinca", "2": "great white shark", "1": "goldfish"},
    "image_size": 224, "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-12,
    "model_type": "vit", "num_attention_heads": 12, "num_channels": 3, "num_hidden_layers": 12, "patch_size": 16,
    "qkv_bias": true})");
  EXPECT_EQ(c.family, Family::Vit);
  EXPECT_EQ(c.max_positions, 197);  // 14 x 14 patches + [CLS]
  EXPECT_EQ(c.vocab_size, 0);
  EXPECT_EQ(c.image_size, 224);
  EXPECT_EQ(c.patch_size, 16);
  EXPECT_EQ(c.num_channels, 3);
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_EQ(c.labels, (std::vector<std::string>{"tench, Tinca tinca", "goldfish", "great white shark"}));
  EXPECT_EQ(c.image_mean, (std::vector<float>{0.5f, 0.5f, 0.5f}));

  const auto d = parse_ok(R"({"model_type": "vit", "image_size": 32, "patch_size": 8, "qkv_bias": false,
    "id2label": {"1": "b"}})");
  EXPECT_EQ(d.max_positions, 17);
  EXPECT_EQ(d.hidden, 768);
  EXPECT_EQ(d.layer_norm_eps, 1e-12f);
  EXPECT_FALSE(d.qkv_bias);
  EXPECT_EQ(d.labels, (std::vector<std::string>{"LABEL_0", "b"}));
}

TEST(ModelConfig, ZeroHeads) {
  const auto e = parse_error("{\n  \"model_type\": \"bert\",\n  \"num_attention_heads\": 0\n}");
  EXPECT_EQ(e.file, "config.json");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.reason, "num_attention_heads is 0: a transformer needs at least one head");
  EXPECT_EQ(e.message(), "config.json:3: num_attention_heads is 0: a transformer needs at least one head");
  EXPECT_EQ(parse_error(R"({"model_type": "gpt2", "n_head": 0})").reason,
            "n_head is 0: a transformer needs at least one head");
}

TEST(ModelConfig, HiddenNotDivisibleByHeads) {
  EXPECT_EQ(parse_error(R"({"model_type": "bert", "hidden_size": 100})").reason,
            "hidden_size 100 is not divisible by num_attention_heads 12: every head needs the same number of "
            "dimensions");
  EXPECT_EQ(parse_error(R"({"model_type": "distilbert", "dim": 64, "n_heads": 5})").reason,
            "dim 64 is not divisible by n_heads 5: every head needs the same number of dimensions");
}

TEST(ModelConfig, UnknownFamily) {
  const std::string supported =
      "AttnScope runs the model_types bert, distilbert, gpt2, vit and the decoders llama, mistral, qwen2, qwen3, "
      "gemma2, gemma3_text (gemma3) and phi3";
  const auto arch = parse_error("{\n\"architectures\": [\"RobertaForMaskedLM\"]}");
  EXPECT_EQ(arch.reason, "architectures [\"RobertaForMaskedLM\"] is not supported; " + supported);
  EXPECT_EQ(arch.line, 2);
  EXPECT_EQ(parse_error(R"({"model_type": "t5", "architectures": ["BertModel"]})").reason,
            "model_type \"t5\" is not supported; " + supported);
  EXPECT_EQ(parse_error(R"({"hidden_size": 768})").reason, "names neither model_type nor architectures; " + supported);
}

// The decoder family: each model_type's switches as transformers' configuration classes set them.
TEST(ModelConfig, DecoderFamilies) {
  const auto llama =
      parse_config(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_attention_heads": 8,
      "num_key_value_heads": 4, "num_hidden_layers": 2, "intermediate_size": 172, "vocab_size": 512,
      "eos_token_id": [2, 1], "bos_token_id": 1})",
                   "config.json");
  ASSERT_TRUE(llama) << llama.error().message();
  EXPECT_EQ(llama->family, Family::Decoder);
  EXPECT_EQ(llama->decoder.model_type, "llama");
  EXPECT_EQ(llama->head_dim(), 8);
  EXPECT_EQ(llama->decoder.kv_heads, 4);
  EXPECT_FALSE(llama->decoder.tied);
  EXPECT_EQ(llama->decoder.eos, (std::vector<int>{2, 1}));
  EXPECT_EQ(llama->decoder.sliding, (std::vector<bool>{false, false}));
  EXPECT_TRUE(llama->causal());

  const auto gemma = parse_config(R"({"model_type": "gemma2", "hidden_size": 64, "num_attention_heads": 4,
      "head_dim": 32, "num_hidden_layers": 4, "intermediate_size": 64, "vocab_size": 64, "sliding_window": 8,
      "query_pre_attn_scalar": 16, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0})",
                                  "config.json");
  ASSERT_TRUE(gemma) << gemma.error().message();
  EXPECT_EQ(gemma->head_dim(), 32);  // explicit: 4 x 32 is not the hidden size
  EXPECT_TRUE(gemma->decoder.gemma && gemma->decoder.tied);
  EXPECT_EQ(gemma->decoder.sliding, (std::vector<bool>{true, false, true, false}));
  EXPECT_DOUBLE_EQ(gemma->decoder.query_scale, 0.25);
  EXPECT_EQ(gemma->decoder.attn_softcap, 50.0f);
  EXPECT_EQ(gemma->decoder.activation, GatedActivation::GeluTanh);

  const auto qwen = parse_config(R"({"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "intermediate_size": 64, "vocab_size": 64, "sliding_window": 8})",
                                 "config.json");
  ASSERT_TRUE(qwen);
  EXPECT_TRUE(qwen->decoder.qkv_bias);
  EXPECT_FALSE(qwen->decoder.o_bias);
  EXPECT_EQ(qwen->decoder.window, 0);  // use_sliding_window is false by default

  // A multimodal Gemma 3 is read through its text_config.
  const auto gemma3 = parse_config(R"({"model_type": "gemma3", "text_config": {"hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 6,
      "intermediate_size": 64, "vocab_size": 64, "sliding_window": 4}})",
                                   "config.json");
  ASSERT_TRUE(gemma3) << gemma3.error().message();
  EXPECT_EQ(gemma3->decoder.model_type, "gemma3_text");
  EXPECT_TRUE(gemma3->decoder.qk_norm);
  EXPECT_EQ(gemma3->decoder.sliding, (std::vector<bool>{true, true, true, true, true, false}));
}

TEST(ModelConfig, DecoderRefusals) {
  const std::string base = R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "intermediate_size": 64, "vocab_size": 64)";
  EXPECT_EQ(parse_error(base + R"(, "rope_scaling": {"rope_type": "longrope", "factor": 4}})").reason,
            "rope_scaling type \"longrope\" is not supported; AttnScope supports default, linear, dynamic, llama3 and "
            "yarn");
  EXPECT_EQ(parse_error(base + R"(, "num_key_value_heads": 3})").reason,
            "num_key_value_heads 3 does not divide num_attention_heads 4: every key/value head serves the same number "
            "of query heads");
  EXPECT_EQ(parse_error(base + R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8}})").reason,
            "rope_scaling type \"llama3\" needs \"low_freq_factor\"");
  EXPECT_EQ(parse_error(base + R"(, "hidden_act": "relu2"})").reason,
            "hidden_act \"relu2\" is not supported; use silu, gelu or gelu_pytorch_tanh");
  EXPECT_EQ(parse_error(base + R"(, "eos_token_id": 64})").reason,
            "eos_token_id 64 is not a token id of the vocabulary of 64");
  EXPECT_EQ(parse_error(base + R"(, "partial_rotary_factor": 0.01})").reason,
            "partial_rotary_factor leaves 0 rotary dimensions of head_dim 16; RoPE needs an even number, at least 2");
}

// rope_scaling: every field finite and in range where config.json is read, and the context derived from it bounded.
// A dynamic factor of 1e30 once overflowed the context (max_position_embeddings x factor) past int64, and the first
// run's cache reservation threw std::length_error: the CLI, the window and a restored session aborted.
TEST(ModelConfig, RopeScalingFieldsAreBounded) {
  const std::string base = R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "intermediate_size": 64, "vocab_size": 64, "max_position_embeddings": 2048,
      "rope_scaling": )";
  const auto refused = [&](const std::string& scaling, ErrorKind kind, const std::string& reason) {
    const Error e = parse_error(base + scaling + "}");
    EXPECT_EQ(e.kind, kind) << scaling << ": " << e.message();
    EXPECT_EQ(e.file, "config.json");
    EXPECT_EQ(e.line, 3) << scaling;
    EXPECT_EQ(e.reason, reason) << scaling;
  };
  refused(R"({"type": "dynamic", "factor": 1e30})", ErrorKind::TooLarge,
          "rope_scaling factor is 1e+30; it must be from 1e-06 to 1024.0");
  refused(R"({"type": "linear", "factor": -2})", ErrorKind::OutOfRange,
          "rope_scaling factor is -2; it must be from 1e-06 to 1024.0");
  refused(R"({"type": "linear", "factor": "4"})", ErrorKind::Malformed,
          "rope_scaling factor must be a number, got \"4\"");
  refused(R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 1e9,
      "original_max_position_embeddings": 8192})",
          ErrorKind::TooLarge, "rope_scaling high_freq_factor is 1000000000.0; it must be from 1e-06 to 1024.0");
  refused(R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
      "original_max_position_embeddings": 1e12})",
          ErrorKind::TooLarge,
          "rope_scaling original_max_position_embeddings is 1000000000000.0; it must be from 1.0 to 1048576.0");
  refused(R"({"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 512.5})", ErrorKind::Malformed,
          "rope_scaling original_max_position_embeddings is 512.5, not a whole number");
  refused(R"({"rope_type": "yarn", "factor": 4, "beta_fast": 0})", ErrorKind::OutOfRange,
          "rope_scaling beta_fast is 0; it must be above 0.0 and at most 1024.0");
  refused(R"({"rope_type": "yarn", "factor": 4, "attention_factor": 1e300})", ErrorKind::TooLarge,
          "rope_scaling attention_factor is 1e+300; it must be above 0.0 and at most 1024.0");
  refused(R"({"rope_type": "yarn", "factor": 4, "mscale": 1e9, "mscale_all_dim": 1})", ErrorKind::TooLarge,
          "rope_scaling mscale is 1000000000.0; it must be from 0.0 to 1024.0");
  refused(R"({"type": "linear", "factor": 2, "long_factor": [1, 1e30]})", ErrorKind::OutOfRange,
          "rope_scaling long_factor[1] is 1e+30; it must be a number from 1e-06 to 1024.0");
  // Within the factor's range, the context it derives must still be bounded: 2^20 positions x 1000.
  const Error wide = parse_error(R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 1, "intermediate_size": 64, "vocab_size": 64, "max_position_embeddings": 1048576,
      "rope_scaling": {"type": "dynamic", "factor": 1000}})");
  EXPECT_EQ(wide.kind, ErrorKind::TooLarge);
  EXPECT_EQ(wide.reason,
            "rope_scaling factor 1000.0 (dynamic) stretches max_position_embeddings 1048576 to a context of "
            "1048576000.0 tokens; at most 16777216");
  // YaRN with rope_theta 1: log(1) = 0 divides the ramp, and the frequencies would be NaN.
  const Error theta = parse_error(base + R"({"rope_type": "yarn", "factor": 4}, "rope_theta": 1})");
  EXPECT_EQ(theta.kind, ErrorKind::OutOfRange);
  EXPECT_NE(theta.reason.find("RoPE needs finite positive values"), std::string::npos) << theta.reason;

  // What is accepted derives a bounded context and finite frequencies.
  const TransformerConfig dynamic = parse_ok(base + R"({"type": "dynamic", "factor": 4}})");
  EXPECT_EQ(dynamic.context(), 8192);
  for (const Index n : {Index{1}, Index{2048}, Index{8192}}) {
    for (const double f : rope_frequencies(dynamic, n, false).inv) EXPECT_TRUE(std::isfinite(f) && f > 0);
  }
  // A config built by hand (tests, from_parts) never overflows either: its context is clamped.
  TransformerConfig by_hand = dynamic;
  by_hand.decoder.rope_factor = 1e30;
  EXPECT_EQ(by_hand.context(), kMaxDecoderContext);
}

TEST(ModelConfig, BadActivation) {
  const auto e = parse_error("{\"model_type\": \"bert\",\n\n \"hidden_act\": \"swish\"}");
  EXPECT_EQ(e.reason,
            "hidden_act \"swish\" is not supported; use \"gelu\", \"gelu_new\", \"gelu_pytorch_tanh\", \"gelu_fast\" "
            "or \"relu\"");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(parse_error(R"({"model_type": "distilbert", "activation": 3})").reason,
            "activation must be a string, got 3");
}

TEST(ModelConfig, BadValues) {
  EXPECT_EQ(parse_error(R"({"model_type": "bert", "hidden_size": "768"})").reason,
            "hidden_size must be a whole number, got \"768\"");
  EXPECT_EQ(parse_error(R"({"model_type": "bert", "num_hidden_layers": -1})").reason,
            "num_hidden_layers is -1; it must be from 1 to 1024");
  EXPECT_EQ(parse_error(R"({"model_type": "bert", "vocab_size": 99999999999})").reason,
            "vocab_size is 99999999999; it must be from 1 to 1048576");
  EXPECT_EQ(parse_error(R"({"model_type": "bert", "layer_norm_eps": 0})").reason,
            "layer_norm_eps is 0.0; a layer-norm epsilon is above 0 and below 1");
  EXPECT_EQ(parse_error(R"({"model_type": "vit", "image_size": 8, "patch_size": 16})").reason,
            "patch_size 16 is larger than image_size 8");
  EXPECT_EQ(parse_error(R"({"model_type": "vit", "qkv_bias": 1})").reason, "qkv_bias must be true or false, got 1");
  EXPECT_EQ(parse_error(R"({"model_type": "vit", "id2label": {"x": "a"}})").reason,
            "id2label key \"x\" is not a class id (a whole number from 0)");
  EXPECT_EQ(parse_error(R"(["bert"])").reason, "the file holds a JSON array, not an object");
}

TEST(ModelConfig, ParseErrorHasOffsetAndLine) {
  const auto e = parse_error("{\n  \"model_type\": \"bert\",\n  oops\n}");
  EXPECT_EQ(e.offset, 28);  // the 'o' of oops
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.reason.rfind("not valid JSON: ", 0), 0u) << e.reason;
}

TEST(ModelConfig, PreprocessorConfig) {
  TempDir dir;
  dir.write("config.json", R"({"model_type": "vit", "image_size": 224, "patch_size": 16})");
  // Without preprocessor_config.json: transformers' ViTImageProcessor defaults.
  auto plain = load_config(dir.path());
  ASSERT_TRUE(plain.has_value()) << plain.error().message();
  EXPECT_EQ(plain->image_mean, (std::vector<float>{0.5f, 0.5f, 0.5f}));

  dir.write("preprocessor_config.json", R"({"do_normalize": true, "image_mean": [0.485, 0.456, 0.406],
    "image_std": [0.229, 0.224, 0.225], "size": {"height": 224, "width": 224}})");
  auto c = load_config(dir.path());
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->image_mean, (std::vector<float>{0.485f, 0.456f, 0.406f}));
  EXPECT_EQ(c->image_std, (std::vector<float>{0.229f, 0.224f, 0.225f}));

  dir.write("preprocessor_config.json", R"({"image_mean": 0.25, "size": 224})");
  c = load_config(dir.path());
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->image_mean, (std::vector<float>{0.25f, 0.25f, 0.25f}));
  EXPECT_EQ(c->image_std, (std::vector<float>{0.5f, 0.5f, 0.5f}));

  dir.write("preprocessor_config.json", R"({"do_normalize": false})");
  c = load_config(dir.path());
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->image_mean, (std::vector<float>{0.0f, 0.0f, 0.0f}));
  EXPECT_EQ(c->image_std, (std::vector<float>{1.0f, 1.0f, 1.0f}));

  const auto pre_name = (dir.path() / "preprocessor_config.json").string();
  dir.write("preprocessor_config.json", "{\"size\": {\"height\": 384, \"width\": 384}}");
  c = load_config(dir.path());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().file, pre_name);
  EXPECT_EQ(c.error().line, 1);
  EXPECT_EQ(c.error().reason,
            "size {\"height\":384,\"width\":384} does not match the model's image_size 224 in config.json");

  dir.write("preprocessor_config.json", "{\n\"image_std\": [0.5, 0, 0.5]}");
  c = load_config(dir.path());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().line, 2);
  EXPECT_EQ(c.error().reason, "image_std [0.5,0,0.5] holds 0.0; every value must be above 0");

  dir.write("preprocessor_config.json", R"({"image_mean": [0.5, 0.5]})");
  c = load_config(dir.path());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().reason, "image_mean must be 3 numbers (one per channel), got [0.5,0.5]");
}

TEST(ModelConfig, LoadConfigNamesTheFile) {
  TempDir dir;
  const auto missing = load_config(dir.path());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().file, (dir.path() / "config.json").string());
  EXPECT_EQ(missing.error().reason, "no such file");

  dir.write("config.json", kBertBase);
  dir.write("preprocessor_config.json", "not read for a text model");
  const auto bert = load_config(dir.path());
  ASSERT_TRUE(bert.has_value()) << bert.error().message();
  EXPECT_EQ(bert->family, Family::Bert);
  EXPECT_EQ(to_string(bert->family), "bert");
}

}  // namespace
}  // namespace attn::models
