// BF16 matrices times float activations on AMX tiles (issue 46: a corpus run's 128-token inputs spent three quarters
// of their time in float products of widened BF16 weights). Internal to engine/src/models.
#pragma once

#include "decoder_impl.h"

namespace attn::models {

// y[n, W.rows] = x[n, W.cols] W^T (strides ldx, ldy) for a BF16 matrix in its stored order, without llama.cpp's
// arithmetic, on AMX tiles where this CPU and build have them (io::cpu_has_amx), n at least kAmxBf16MinRows, W.cols a
// multiple of 32 and W.rows of 16. Each activation is split into three BF16 parts (x = hi + mid + lo to float's
// 24 bits), whose products with the BF16 weights are exact in float, and the tiles sum them in float: the
// product to float rounding, in another order of sums than a float GEMM's. False, y untouched, otherwise.
inline constexpr Index kAmxBf16MinRows = 16;
bool amx_bf16_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy);

}  // namespace attn::models
