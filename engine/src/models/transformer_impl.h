// The loaded weights of a TransformerModel in the layout the forward pass wants: every linear map as
// [in, out] row-major (x W is one GEMM), Q, K and V fused into one [d, 3d] matrix with 1/sqrt(d_head)
// folded into the Q columns and bias, so a layer starts with a single sgemm. Internal to engine/models.
#pragma once

#include "attn/models/transformer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::models {

struct LayerWeights {
  Matrix qkv;          // [d, 3d]: Q (scaled) | K | V
  RowVector qkv_bias;  // [3d]
  Matrix out;          // [d, d]
  RowVector out_bias;
  // Post-LN (BERT, DistilBERT): norm1 after attention, norm2 after the FFN.
  // Pre-LN (GPT-2, ViT): norm1 before attention, norm2 before the FFN.
  RowVector norm1_gamma, norm1_beta, norm2_gamma, norm2_beta;
  Matrix fc1;  // [d, ffn]
  RowVector fc1_bias;
  Matrix fc2;  // [ffn, d]
  RowVector fc2_bias;
};

struct TransformerModel::Impl {
  TransformerConfig config;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  // Why the folder's tokenizer could not be read (the file, the line or byte, the reason), when it could not:
  // run_text says this instead of only "no tokenizer".
  std::optional<Error> tokenizer_error;

  Matrix word;                        // [vocab, d]; also the tied output embedding
  Matrix positions;                   // [max_positions, d] (ViT: [patches + 1, d])
  Matrix types;                       // [type_vocab, d] (BERT)
  RowVector embed_gamma, embed_beta;  // BERT/DistilBERT embedding layer norm

  // ViT
  Matrix patch;  // [C * p * p, d], rows in (channel, y, x) order as the conv weight flattens
  RowVector patch_bias, class_token;

  std::vector<LayerWeights> layers;
  RowVector final_gamma, final_beta;  // GPT-2 ln_f, ViT layernorm

  // Prediction heads.
  bool has_head = false;
  Matrix head_dense;  // MLM transform [d, d] (BERT: cls.predictions.transform.dense; DistilBERT: vocab_transform)
  RowVector head_dense_bias, head_gamma, head_beta;
  Matrix decoder;          // [vocab, d] when the file has an untied output embedding; empty: use `word`
  RowVector decoder_bias;  // [vocab] (may be empty: GPT-2)
  Matrix classifier;       // ViT [d, labels]
  RowVector classifier_bias;

  std::vector<std::string> warnings;
  std::int64_t parameters = 0;

  const Matrix& output_embedding() const { return decoder.size() != 0 ? decoder : word; }
  bool post_ln() const { return config.family == Family::Bert || config.family == Family::DistilBert; }
};

}  // namespace attn::models
