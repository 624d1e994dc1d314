// Multi-head attention (Vaswani et al. 2017, sec. 3.2.2): per-head Q/K/V projections, scaled dot
// product, concatenation, output projection W_O. Weight layout follows torch.nn.MultiheadAttention /
// Hugging Face Linear: W is [out, in], y = x W^T + b.
#pragma once

#include "attn/core.h"
#include "attn/mechanisms/normalise.h"
#include "attn/trace.h"

#include <cstdint>
#include <vector>

namespace attn {

struct MultiHeadWeights {
  int heads = 1;
  Matrix Wq, Wk, Wv;  // E x E each; rows [h*dh, (h+1)*dh) are head h's projection
  Vector bq, bk, bv;  // E (may be empty: no bias)
  Matrix Wo;          // E x E
  Vector bo;          // E (may be empty)
  Index model_dim() const { return Wq.cols(); }
  Index head_dim() const { return heads > 0 ? Wq.rows() / heads : 0; }
};
MultiHeadWeights random_multi_head_weights(Index model_dim, int heads, std::uint64_t seed);

struct MultiHeadParams {
  bool causal = false;
  float temperature = 1.0f;  // divides the scaled scores
  Normaliser normaliser = Normaliser::Softmax;
  bool keep_weights = true;  // keep each head's n x m weights in the result (and the trace)
};

struct MultiHeadResult {
  std::vector<Matrix> head_weights;  // heads x (n x m), empty unless keep_weights
  Matrix queries;                    // n x E, projected (all heads side by side)
  Matrix keys;                       // m x E
  Matrix values;                     // m x E
  Matrix context;                    // n x E, the heads' outputs concatenated, before W_O
  Matrix output;                     // n x E, after W_O
  // Workspace, not a result: every head's keys and values packed for the attention kernel. Kept here so
  // that multi_head_attention_into() reuses it.
  std::vector<float, Eigen::aligned_allocator<float>> packed;
};

// Queries from xq (n x E), keys and values from xkv (m x E). `mask` is an optional n x m additive mask;
// params.causal adds the causal mask (aligned at the end when m > n) without materialising it.
MultiHeadResult multi_head_attention(const MatrixCRef& xq, const MatrixCRef& xkv, const MultiHeadWeights& w,
                                     const MultiHeadParams& params, const Matrix& mask = {}, const TraceTag& tag = {});

// The same, writing into `out` and reusing its buffers when the shapes are unchanged. A view that re-runs
// on every edit keeps one result and allocates nothing after the first run: at 2048 tokens the kept
// weights are 201 MB, and touching fresh pages for them costs more than the whole attention.
void multi_head_attention_into(MultiHeadResult& out, const MatrixCRef& xq, const MatrixCRef& xkv,
                               const MultiHeadWeights& w, const MultiHeadParams& params, const Matrix& mask = {},
                               const TraceTag& tag = {});

inline MultiHeadResult self_attention(const MatrixCRef& x, const MultiHeadWeights& w, const MultiHeadParams& params,
                                      const Matrix& mask = {}, const TraceTag& tag = {}) {
  return multi_head_attention(x, x, w, params, mask, tag);
}

}  // namespace attn
