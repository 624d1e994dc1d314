// config.json of the four transformer families, as Hugging Face writes it. The family comes from
// "model_type" (bert, distilbert, gpt2, vit), else from "architectures" (BertModel, BertForMaskedLM,
// DistilBertForMaskedLM, GPT2LMHeadModel, ViTForImageClassification, ...). Defaults are the
// transformers library's own for each family when a key is absent.
#pragma once

#include "attn/error.h"
#include "attn/mechanisms/blocks.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

enum class Family { Bert, DistilBert, Gpt2, Vit };
std::string_view to_string(Family family);

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

  int head_dim() const { return hidden / heads; }
};

// Parses and validates (every size > 0, hidden divisible by heads, known activation, ...). `file` names
// the input in errors; errors carry the line of the offending key where the JSON parser gives one.
Result<TransformerConfig> parse_config(std::string_view json, const std::string& file);
// config.json of a folder, plus preprocessor_config.json's image_mean/image_std/size for ViT if present.
Result<TransformerConfig> load_config(const std::filesystem::path& folder);

}  // namespace attn::models
