// Attention pooling without a query: s_i = w^T tanh(W x_i + b), alpha = softmax(s), c = sum alpha_i x_i
// (Yang et al. 2016; Lin et al. 2017 for r heads sharing W, the heads' contexts concatenated).
#pragma once

#include "attn/core.h"
#include "attn/mechanisms/normalise.h"
#include "attn/trace.h"

#include <cstdint>

namespace attn {

enum class PositionKind { None, Sinusoidal, Learned };

struct PoolingWeights {
  Matrix W;          // da x d
  Vector b;          // da
  Matrix w;          // heads x da: one scoring vector per head
  Matrix positions;  // max_len x d, learned positions (PositionKind::Learned only)
};
PoolingWeights random_pooling_weights(Index d, Index da, int heads, Index max_len, std::uint64_t seed);

struct PoolingParams {
  PositionKind positions = PositionKind::None;
  float temperature = 1.0f;
  Normaliser normaliser = Normaliser::Softmax;
};

struct PoolingResult {
  Matrix weights;    // heads x n
  Matrix context;    // heads x d, one pooled vector per head
  RowVector pooled;  // 1 x (heads * d): the contexts concatenated
};

// Fails only by assertion on shapes; learned positions need positions.rows() >= n.
PoolingResult attention_pooling(const MatrixCRef& x, const PoolingWeights& w, const PoolingParams& params,
                                const TraceTag& tag = {});

}  // namespace attn
