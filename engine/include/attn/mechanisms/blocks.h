// Transformer building blocks (Ba et al. 2016 layer norm; Hendrycks & Gimpel 2016 GELU; Vaswani et al.
// 2017 position-wise FFN and sinusoidal positions).
#pragma once

#include "attn/core.h"

namespace attn {

// Row-wise (x - mean) / sqrt(var + eps) * gamma + beta, biased variance as torch.nn.LayerNorm.
Matrix layer_norm(const MatrixCRef& x, const VectorCRef& gamma, const VectorCRef& beta, float eps = 1e-5f);
void layer_norm_inplace(Eigen::Ref<Matrix> x, const VectorCRef& gamma, const VectorCRef& beta, float eps = 1e-5f);

enum class GeluForm { Erf, Tanh };
Matrix gelu(const MatrixCRef& x, GeluForm form = GeluForm::Erf);
float gelu(float x, GeluForm form = GeluForm::Erf);

enum class Activation { Relu, GeluErf, GeluTanh };
// act(x W1^T + b1) W2^T + b2, weights in [out, in] layout.
Matrix feed_forward(const MatrixCRef& x, const MatrixCRef& W1, const VectorCRef& b1, const MatrixCRef& W2,
                    const VectorCRef& b2, Activation act = Activation::GeluErf);

// PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...); n x d.
Matrix sinusoidal_positions(Index n, Index d);

// x W^T + b for [out, in] weights; b may be empty.
Matrix linear(const MatrixCRef& x, const MatrixCRef& W, const VectorCRef& b);
// The same into y, reusing its storage when the shape is unchanged.
void linear_into(Matrix& y, const MatrixCRef& x, const MatrixCRef& W, const VectorCRef& b);

}  // namespace attn
