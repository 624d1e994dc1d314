// A GGUF file's matrix products as llama.cpp's x86 CPU backend computes them (DecoderSettings::ggml_arithmetic):
// the quantised types in ggml's integer lanes and float order (vec_dot for one activation row; for a batch,
// tinyBLAS_Q0 for Q8_0 and Q5_0, vec_dot for Q4_1, Q5_1, Q3_K, Q5_K and Q6_K), F32 and F16 in tinyBLAS's or vec_dot's
// order of sums. Each routine names the ggml code it follows (ggml/src/ggml-cpu: arch/x86/quants.c,
// llamafile/sgemm.cpp, vec.h, of the release node-llama-cpp 3.22.1 ships). Checked bit for bit against ggml's own
// vec_dot (tests/unit/test_ggml_products.cpp) and llama.cpp's logits (tests/parity/test_gguf_parity.cpp). Where the
// AMX build's buffer holds a matrix (StoredMatrix::ggml_amx: llama.cpp on a CPU with AMX-INT8), its order instead
// (ggml-cpu/amx/mmq.cpp: each block's or super-block's exact integer sums fused-multiply-added into one float per
// output), checked against goldens made on such a CPU (tests/data/gguf/amx).
// Internal to engine/src/models.
#pragma once

#include "decoder_impl.h"

#include <omp.h>

#include <algorithm>

namespace attn::models::ggml {

// A batch product's loop: blocks of `token_block` activation rows stay in L2 while each thread's contiguous share of
// the weight rows passes, `group` rows at a time (one parallel region, no barrier between blocks): fn(o, count, i0,
// i1) for weight rows [o, o + count) and activation rows [i0, i1).
template <class Fn>
void blocked_rows(Index n, Index rows, Index group, Index token_block, bool parallel, Fn&& fn) {
  const Index groups = (rows + group - 1) / group;
#pragma omp parallel if (parallel)
  {
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    const Index g0 = groups * me / threads, g1 = groups * (me + 1) / threads;
    for (Index i0 = 0; i0 < n; i0 += token_block) {
      const Index i1 = std::min(n, i0 + token_block);
      for (Index g = g0; g < g1; ++g) fn(g * group, std::min(group, rows - g * group), i0, i1);
    }
  }
}

// Whether llama.cpp's AMX build holds a matrix of this type and shape in its AMX buffer, which takes a product's
// weights before its repacking buffer does (ggml-cpu/amx/amx.cpp, supports_op): Q4_0, Q4_1, Q8_0 rows of whole
// 32-element blocks, Q4_K, Q5_K, Q6_K rows of whole super-blocks, F16 rows of a multiple of 16, rows a multiple of
// 32.
bool ggml_amx_holds(io::DType dtype, std::uint32_t ggml_type, Index rows, Index cols);

// y[n, W.rows] = x[n, W.cols] W^T (strides ldx, ldy) with x's rows quantised as ggml quantises a product's
// activations (Q8_0, Q8_1 or Q8_K) and multiplied in integer kernels, where W is a GGUF file's quantised matrix with
// llama.cpp's arithmetic on and this build has a kernel for its type and for n rows (AVX2, FMA and F16C; a batch of
// Q4_K rows needs AVX-512 VNNI). Q4_0 one row at a time, and Q4_K, in llama.cpp's repacked order where it repacks
// (StoredMatrix::ggml_repacked). False, y untouched, otherwise.
bool integer_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy);

// The same for a GGUF file's F32 or F16 matrix, x already rounded (io::ggml_round_activations): the float products
// summed in llama.cpp's order. False, y untouched, for any other matrix.
bool float_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy);

// The same for a GGUF file's BF16 matrix, x already rounded to BF16, where the CPU has AVX512-BF16 (ggml_bf16.cpp):
// ggml_vec_dot_bf16's sums for one row, tinyBLAS's for more. False, y untouched, for any other matrix or CPU.
bool bf16_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy);

}  // namespace attn::models::ggml
