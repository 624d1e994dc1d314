// The pieces of the backward pass (attn/models/attribution.h): element-wise functions, norms, linear maps and the
// attention of one layer, each with its forward (the forward passes' own arithmetic: norm_math.h, stored_linear,
// attention_scores, softmax_row) and its backward, plain or with AttnLRP's rules. Internal to engine/src/models.
#pragma once

#include "attn/models/attribution.h"
#include "decoder_impl.h"

#include <vector>

namespace attn::models::backward_ops {

enum class Act { GeluErf, GeluTanh, Relu, Silu };
Act act_of(Activation a);
Act act_of(GatedActivation a);

// out = f(in), n floats (in and out may alias).
void act_forward(Act a, const float* in, float* out, Index n);
// The local gradient times dy into dx (dx = dy * f'(in)); with `lrp`, AttnLRP's identity rule f(in) / in instead of
// f'(in) (f'(0) where |in| < 1e-6).
void act_backward(Act a, bool lrp, const float* in, const float* dy, float* dx, Index n);

struct Norm {
  bool rms = false;
  const RowVector* gamma = nullptr;  // null: no norm
  const RowVector* beta = nullptr;   // LayerNorm only
  float eps = 0;
  explicit operator bool() const { return gamma != nullptr; }
  void forward(const float* x, float* y, Index d) const;
  // dx += the backward of one row (x the norm's input); `lrp`: the variance held constant (identity rule).
  void backward(bool lrp, const float* x, const float* dy, float* dx, Index d) const;
};

// y = x W^T (+ b) with W as a checkpoint stores it ([out, in], float32 or 16-bit: decoders, output embeddings), or
// y = x W (+ b) with W [in, out] (the other families' layers).
struct Linear {
  const StoredMatrix* stored = nullptr;
  const Matrix* dense = nullptr;
  const RowVector* bias = nullptr;
  Index in() const;
  Index out() const;
  // y [n, out] at row stride ldy from x [n, in] at stride ldx.
  void forward(const float* x, Index n, Index ldx, float* y, Index ldy, std::vector<float>& scratch) const;
  // dx [n, in] += dy [n, out] W (or W^T).
  void backward(const float* dy, Index n, Index ldy, float* dx, Index ldx, std::vector<float>& scratch) const;
};
// A row-major float32 [rows, cols] matrix seen as a stored one (output embeddings kept as Matrix).
StoredMatrix stored_view(const Matrix& m);

// One layer's attention over B sequences of T tokens stacked as rows: qkv [B T, width] holds q (heads x dim, already
// scaled), k and v (kv_heads x dim each) per row; z [B T, heads x dim].
struct AttentionShape {
  Index B = 1, T = 0, heads = 0, kv_heads = 0, dim = 0;
  bool causal = false;
  Index window = 0;  // sliding window (0: none)
  float softcap = 0;
  Index width() const { return (heads + 2 * kv_heads) * dim; }
};
void attention_forward(const AttentionShape& s, const float* qkv, float* z);
// dqkv [B T, width] = the backward of attention_forward from dz. `on_block` (sequence 0 only) sees each block's
// weights and their gradient. AttnLRP: dV / 2 and dS / 4 (the uniform rule on P V and on q k^T).
void attention_backward(const AttentionShape& s, bool lrp, int layer, const float* qkv, const float* dz, float* dqkv,
                        const BackwardOptions::AttentionBlock& on_block, const std::atomic<bool>* cancel);

}  // namespace attn::models::backward_ops
