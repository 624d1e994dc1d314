// llama.cpp's float arithmetic for a decoder's per-row passes, operation for operation, so that a GGUF file's forward
// gives llama.cpp's CPU backend's numbers bit for bit (DecoderSettings::ggml_arithmetic). Each function names the
// ggml routine it follows (ggml/src/ggml-cpu: ops.cpp, vec.cpp, vec.h, llamafile/sgemm.cpp, of the release
// node-llama-cpp 3.22.1 ships, its x86 AVX-512 build, which llama.cpp picks on this machine). Vector lanes are written
// out as arrays: a fused multiply-add rounds once at any vector width, so the results do not depend on the width this
// file is compiled for. Checked against llama.cpp's own intermediate tensors (tests/parity/test_gguf_parity.cpp).
// Internal to engine/src/models.
#pragma once

#include "attn/core.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <span>
#include <vector>

namespace attn::models::ggml {

// ggml_v_expf (vec.h, AVX-512): exp by a degree-5 polynomial and a scale by 2^n, lane by lane.
inline float expf(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : INFINITY;
  const float u = b * b;
  const float j =
      std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
               std::fma(0x1.ffffecp-1f, b, 1.0f));
  // _mm512_scalef_ps(j, n): j 2^n rounded once; 2^n as a float's exponent bits where it is a normal float.
  const int e = static_cast<int>(n);
  if (e >= -126 && e <= 127) return j * std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23);
  return std::ldexp(j, e);
}

// _mm512_reduce_add_ps: 16 lanes added as halves, then quarters, then pairs.
inline float reduce16(const float* v) {
  float t[8], u[4];
  for (int i = 0; i < 8; ++i) t[i] = v[i] + v[i + 8];
  for (int i = 0; i < 4; ++i) u[i] = t[i] + t[i + 4];
  return (u[0] + u[2]) + (u[1] + u[3]);
}

// ggml_compute_forward_rms_norm_f32 (fused with the weight's MUL): float squares summed in double, the mean and
// 1 / sqrt(mean + eps) in float, x * scale * w. in and out may alias.
inline void rms_norm(const float* in, float* out, const float* w, Index d, float eps) {
  double sum = 0.0;
  for (Index i = 0; i < d; ++i) sum += static_cast<double>(in[i] * in[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(d));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (Index i = 0; i < d; ++i) out[i] = in[i] * scale * w[i];
}

// ggml_rope_cache_init with rope_yarn (no extrapolation mix, attention factor 1): for each position, theta starts at
// the position and is multiplied by base^(-2 / dims) in float from one pair to the next; freq_scale * (theta / the
// pair's factor) gives cosf and sinf. `factors`: one per pair (rope_freqs.weight), or empty for none. cos and sin
// [rows][dims / 2].
void rope_tables(double base, double freq_scale, std::span<const float> factors, Index dims, Index p0, Index rows,
                 std::vector<float>& cos, std::vector<float>& sin);

// ggml_rope's rotation of a pair (x0, x1) as the x86 build compiles it (contracted to fused multiply-adds):
// x0 cos - x1 sin and x0 sin + x1 cos; the pairs are (k, k + half) in the engine's rotate-half layout.
inline void rotate(float* v, const float* cos, const float* sin, Index half) {
  for (Index k = 0; k < half; ++k) {
    const float a = v[k], b = v[k + half];
    v[k] = std::fma(a, cos[k], -(b * sin[k]));
    v[k + half] = std::fma(a, sin[k], b * cos[k]);
  }
}

// ggml_vec_swiglu_f32 over one row: silu(g) u with ggml_v_silu (g / (1 + expf(-g)), the polynomial exp) on the
// 16-lane blocks and libm's expf on the last f mod 16 values, as ggml_silu_f32.
void swiglu(float* g, const float* u, Index f);

// ggml_vec_geglu_f32 as the CPU backend builds it (GGML_GELU_FP16) over one row: gelu(g) u, gelu read from a table
// of F16 values (ggml_gelu_f32, tanh's approximation, at every F16) at g rounded to F16; 0 from g <= -10, g from 10.
void geglu(float* g, const float* u, Index f);
// ggml_vec_gelu_f32 in place over n values: the same table (GPT-2's ungated MLP).
void gelu(float* x, Index n);

// ggml_compute_forward_norm_f32 (AVX-512 build) and the graph's ggml_mul by w and ggml_add of b (llama.cpp's
// LLM_NORM, GPT-2): the mean in double then float, x - mean, the variance's 16-lane blocks reduced in float and
// summed in double, 1 / sqrtf(variance + eps) in float, each product and sum rounded to float. in and out may alias.
void layer_norm(const float* in, float* out, const float* w, const float* b, Index d, float eps);

// A dot product of vectors holding F16 values (products exact in float), in the order of the routine llama.cpp's
// matrix product picks: tinyBLAS (llamafile_sgemm: two or more rows in the batch and k a multiple of 16; 16 lanes of
// fused multiply-adds, then reduce16) or ggml_vec_dot_f16 (one row, or k not a multiple of 16: 4 x 16 lanes over
// blocks of 64, the lanes reduced, then the remaining products added in double).
float dot_lanes(const float* a, const float* b, Index k);
float vec_dot_f16(const float* a, const float* b, Index k);
// ggml_vec_dot_f32's order for float vectors: the same lanes, the remaining products rounded and added in float.
float vec_dot_f32(const float* a, const float* b, Index k);

// Heads of hd floats from the rotate-half order (i, i + hd / 2) to llama.cpp's RoPE pairs (2i, 2i + 1).
inline void to_pairs(const float* in, float* out, Index heads, Index hd) {
  for (Index h = 0; h < heads; ++h) {
    for (Index i = 0; i < hd / 2; ++i) {
      out[h * hd + 2 * i] = in[h * hd + i];
      out[h * hd + 2 * i + 1] = in[h * hd + hd / 2 + i];
    }
  }
}

// One row of llama.cpp's attention (build_attn_mha without flash attention): scores q . k_j of the keys [lo, hi] (q
// and keys already F16 values with an F16 cache), soft_max_ext (scores times `scale`, the masked keys out,
// ggml_vec_soft_max_f32: expf of the shifted scores, 16-key blocks from key 0 reduced in float and summed in double,
// 1 / sum in double then float), written to p[0 .. hi] (zero outside [lo, hi]); then the weights (rounded to F16
// with an F16 cache) and their product with the values into out[0 .. hd). With a float cache (`f16` false) the
// same matrix products in float: tinyBLAS's lanes alike, vec_dot_f32's for one row. `batch` is the number of rows the
// forward computes at once (llama.cpp's ubatch), which picks the products' order as llama.cpp's matrix product does.
// keys and values are rows of hd floats, one per key position; scratch holds 64 x hd floats.
struct AttentionRow {
  const float* keys;
  const float* values;
  Index hd;
  float scale;
  Index batch;
  float softcap = 0.0f;  // > 0 (Gemma 2): each score s first cap tanhf(s (1 / cap))
  // Optional, for speed: the keys transposed, [hd][keys_t_ld] (in the order the scores sum them: the file's RoPE
  // pairs where ggml_rope_pairs), readable 16 keys past the row's last; the scores then go 16 (AVX-512) or 8 keys
  // at a time.
  const float* keys_t = nullptr;
  Index keys_t_ld = 0;
  bool f16 = true;  // llama.cpp's F16 cache (false: its F32 one)
};
void attention_row(const AttentionRow& a, const float* q, Index lo, Index hi, float* p, float* out, float* scratch);

}  // namespace attn::models::ggml
