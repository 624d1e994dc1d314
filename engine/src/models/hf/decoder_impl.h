// The decoder family's weights in the layout its forward pass wants, and the one product it needs. Every matrix
// stays as the checkpoint stores it: an nn.Linear weight [out, in] in float32, float16 or bfloat16, read in
// place from the memory-mapped safetensors file and widened to float32 a block of rows at a time as it is used,
// so a 1.1 B-parameter BF16 checkpoint costs its 2.2 GB of (shared, evictable) file pages and no more. Norm
// weights and biases, a few thousand numbers, are widened at load. Internal to engine/models.
#pragma once

#include "attn/core.h"
#include "attn/io/safetensors.h"
#include "attn/models/config.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn::models {

// A row-major [rows, cols] matrix as stored. `data` points into a mapped file (F32, F16, BF16, or a GGUF file's
// quantised blocks: dtype GGML, each row a whole number of blocks of `ggml_type`) or into `owned` (float32: F64
// tensors and F32 data that is not 4-byte aligned are widened or copied at load).
struct StoredMatrix {
  io::DType dtype = io::DType::F32;
  const void* data = nullptr;
  Index rows = 0, cols = 0;
  std::vector<float> owned;
  std::uint32_t ggml_type = 0;  // dtype GGML: ggml's type number (io::GgmlType)
  bool ggml_rounding = false;  // activations rounded as llama.cpp's CPU backend does (DecoderSettings::ggml_arithmetic)
  // With ggml_rounding: a weight llama.cpp's CPU backend may repack into interleaved rows (its CPU_REPACK buffer,
  // for the types that have such a layout): every matrix product's weight, the tied output's too (llama.cpp loads
  // the embedding table a second time for it, TENSOR_DUPLICATED, into the output's buffer).
  bool ggml_repacked = false;
  // With ggml_rounding and DecoderSettings::ggml_amx: a weight llama.cpp's AMX buffer holds instead (ggml_amx_holds),
  // its products summed in that build's order.
  bool ggml_amx = false;
  // Rows in another order than stored: row m of the matrix is the stored row file_rows[m] (a GGUF file's llama query
  // and key rows, which llama.cpp's converter interleaved into RoPE pairs); empty when the order is the stored one.
  // Products multiply the stored rows and gather their outputs, so the file's bytes are used in place, uncopied.
  std::vector<Index> file_rows;

  bool empty() const { return data == nullptr; }
  // Rows [r0, r0 + count) widened to float32, row-major with stride cols, into out.
  void rows_to_float(Index r0, Index count, float* out) const;
  // The float32 rows in place when the matrix is float32 and in its stored order (nullptr otherwise).
  const float* f32() const {
    return dtype == io::DType::F32 && file_rows.empty() ? static_cast<const float*>(data) : nullptr;
  }
  // The same bytes as a matrix of the stored rows in their stored order (a view: nothing owned, nothing copied).
  StoredMatrix in_stored_order() const {
    StoredMatrix v;
    v.dtype = dtype;
    v.data = data;
    v.rows = rows;
    v.cols = cols;
    v.ggml_type = ggml_type;
    v.ggml_rounding = ggml_rounding;
    v.ggml_repacked = ggml_repacked;
    v.ggml_amx = ggml_amx;
    return v;
  }
};

// Up to this many activation rows (generation's one, a keystroke's few), the product is fused: each weight row is
// widened in registers and dotted with every activation row, one pass over the weights (which dominate: 270 MB of
// BF16 per token for a SmolLM2-135M), no second pass through a buffer and no BLAS call per block.
inline constexpr Index kFusedRows = 4;
// A fused product shares its rows between the threads only from this many weights on (the output embedding):
// measured here, a generated token's 200-odd small products (q, k, v, o, gate, up, down of 30 layers) each in its
// own parallel region ran 5x slower on 2 threads than on one, the threads' wake-ups costing more than the
// products.
inline constexpr Index kFusedParallelWeights = Index{1} << 22;
// A fused product asks for the weight row this many rows ahead while it multiplies one (prefetch_bytes): one
// activation row's products wait on the weights streaming from memory, not on arithmetic. Measured on a 2-core Xeon
// (bench_gguf, SmolLM2-135M shape, generating 128 tokens): Q8_0 48 -> 73 tokens/s, the Q4_K file 40 -> 95; 2 and 4
// rows ahead alike.
inline constexpr Index kFusedPrefetchRows = 2;
inline void prefetch_bytes(const void* p, std::size_t bytes) {
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const char*>(p) + line, 0, 3);
}

// y[n, W.rows] = x[n, W.cols] W^T, x and y row-major with row strides ldx and ldy. Float32 matrices go to one
// sgemm; 16-bit and quantised ones are widened in blocks of rows (into `scratch`) and each block multiplied: for
// one or a few rows (generation) the blocks are shared between the threads, each a small product kept in cache.
// With W.ggml_rounding, x's rows are first rounded as ggml rounds a product's activations
// (io::ggml_round_activations), so that the float product is ggml's to float rounding.
void stored_linear(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
                   std::vector<float>& scratch);

struct DecoderLayerWeights {
  // Projections. Phi-3 stores q, k and v as one qkv_proj (rows q | k | v) and the MLP's gate and up as one
  // gate_up_proj (rows gate | up): then `q` and `gate` hold the fused matrix and k, v, up are empty.
  StoredMatrix q, k, v, o, gate, up, down;
  RowVector q_bias, k_bias, v_bias, o_bias, gate_bias, up_bias, down_bias;  // empty when absent
  // RMSNorm weights, Gemma's (1 + w) already added.
  RowVector input_norm, post_attention_norm, pre_ffn_norm, post_ffn_norm, q_norm, k_norm;
  // GPT-2 (DecoderSettings::gpt2): the two norms are LayerNorms with these biases; q_bias is then the fused
  // product's bias, and `up` (with up_bias) the ungated MLP's first product.
  RowVector input_norm_bias, post_attention_norm_bias;
};

struct DecoderWeights {
  // Token `id` at `position` as the first layer takes it, d floats into out: the embedding row, Gemma's times sqrt(d),
  // GPT-2's plus its position's row (the forward's and the backward's embedding layer).
  void embed_token(const DecoderSettings& s, int id, Index position, float* out) const;

  std::vector<io::SafeTensors> files;  // the mappings the matrices point into
  StoredMatrix embed;                  // [vocab, d]
  std::vector<DecoderLayerWeights> layers;
  RowVector final_norm;
  RowVector final_norm_bias;  // GPT-2: the final LayerNorm's bias
  StoredMatrix positions;     // GPT-2: the learned position table [max_positions, d], added to the embedding
  StoredMatrix lm_head;       // empty when tied to `embed`
  const StoredMatrix& output() const { return lm_head.empty() ? embed : lm_head; }
};

// dst = a b for the attention of a row block: a few rows (generation, a keystroke) by Eigen's own kernel, since
// OpenBLAS would thread each of these tiny products and the threads' wake-ups cost more than the products
// (decoder_linear.cpp's kFusedParallelWeights); more rows by the library's GEMM.
template <class Dst, class A, class B>
void block_product(Dst&& dst, const A& a, const B& b) {
  if (a.rows() < 8) {
    dst.noalias() = a.lazyProduct(b);
  } else {
    dst.noalias() = a * b;
  }
}

}  // namespace attn::models
