// llama.cpp's float arithmetic, operation for operation (see ggml_math.h).
#include "ggml_math.h"

#include "../../io/half.h"

#include <algorithm>
#include <cmath>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace attn::models::ggml {

void rope_tables(double base, double freq_scale, std::span<const float> factors, Index dims, Index p0, Index rows,
                 std::vector<float>& cos, std::vector<float>& sin) {
  const Index half = dims / 2;
  const float theta_scale = std::pow(static_cast<float>(base), -2.0f / static_cast<float>(dims));
  const auto scale = static_cast<float>(freq_scale);
  cos.resize(static_cast<std::size_t>(rows * half));
  sin.resize(static_cast<std::size_t>(rows * half));
  for (Index i = 0; i < rows; ++i) {
    float theta = static_cast<float>(p0 + i);
    for (Index k = 0; k < half; ++k) {
      const float t = scale * (factors.empty() ? theta : theta / factors[static_cast<std::size_t>(k)]);
      cos[static_cast<std::size_t>(i * half + k)] = std::cos(t);
      sin[static_cast<std::size_t>(i * half + k)] = std::sin(t);
      theta *= theta_scale;
    }
  }
}

namespace {

// ggml_gelu_f32 (tanh's approximation) at every F16 value, as F16: ggml's table (GGML_GELU_FP16).
float gelu_from_table(float x) {
  static const std::vector<std::uint16_t> table = [] {
    std::vector<std::uint16_t> t(1 << 16);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const float v = io::half_to_float(static_cast<std::uint16_t>(i));
      // ggml_gelu_f32
      const float y =
          0.5f * v * (1.0f + std::tanh(0.79788456080286535587989211986876f * v * (1.0f + 0.044715f * v * v)));
      t[i] = io::float_to_half(y);
    }
    return t;
  }();
  return io::half_to_float(table[io::float_to_half(x)]);
}

// ggml_vec_gelu_f32's value of x: 0 from x <= -10, x from 10, the table between.
float gelu_value(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return gelu_from_table(x);
}

}  // namespace

void geglu(float* g, const float* u, Index f) {
  for (Index i = 0; i < f; ++i) g[i] = gelu_value(g[i]) * u[i];
}

void gelu(float* x, Index n) {
  for (Index i = 0; i < n; ++i) x[i] = gelu_value(x[i]);
}

void layer_norm(const float* in, float* out, const float* w, const float* b, Index d, float eps) {
  // ggml_vec_sum_f32: in double, then float; the mean a float divided by the count.
  double total = 0.0;
  for (Index i = 0; i < d; ++i) total += static_cast<double>(in[i]);
  const float mean = static_cast<float>(total) / static_cast<float>(d);
  // ggml_vec_cvar_f32 (AVX-512): 16 lanes of (x - mean)^2 reduced in float, the blocks summed in double, the rest
  // one by one; the variance the double sum over the count, as float.
  double sum = 0.0;
  Index i = 0;
  for (; i + 15 < d; i += 16) {
    float sq[16];
    for (int l = 0; l < 16; ++l) {
      out[i + l] = in[i + l] - mean;
      sq[l] = out[i + l] * out[i + l];
    }
    // The squares rounded before they are added: without this barrier GCC fuses a square into the reduction's first
    // sums (x x + y, one rounding), where ggml's _mm512_mul_ps rounds each square first.
    asm volatile("" : : "r"(sq) : "memory");
    sum += static_cast<double>(reduce16(sq));
  }
  for (; i < d; ++i) {
    const float v = in[i] - mean;
    out[i] = v;
    sum += static_cast<double>(v * v);
  }
  const auto variance = static_cast<float>(sum / static_cast<double>(d));
  const float scale = 1.0f / std::sqrt(variance + eps);
  // ggml_vec_scale_f32, then the graph's ggml_mul by the weight and ggml_add of the bias: three operations, each
  // rounded. Three loops through memory, so that GCC (whose C++ default is -ffp-contract=fast) does not fuse the
  // product and the sum into one multiply-add as it did in one loop (1 ulp off llama.cpp in 12 of 64 values).
  for (Index k = 0; k < d; ++k) out[k] *= scale;
  for (Index k = 0; k < d; ++k) out[k] *= w[k];
  for (Index k = 0; k < d; ++k) out[k] += b[k];
}

float dot_lanes(const float* a, const float* b, Index k) {
  float acc[16] = {};
  for (Index i = 0; i < k; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(a[i + l], b[i + l], acc[l]);
  }
  return reduce16(acc);
}

namespace {

// ggml_vec_dot_f16's and ggml_vec_dot_f32's lanes (GGML_F32_STEP 64: 4 x 16 lanes of fused multiply-adds) over the
// first np elements, reduced (GGML_F32_VEC_REDUCE): their sum before the remaining products.
float lanes64(const float* a, const float* b, Index np) {
  float acc[4][16] = {};
  for (Index i = 0; i < np; i += 64) {
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 16; ++l) acc[c][l] = std::fma(a[i + 16 * c + l], b[i + 16 * c + l], acc[c][l]);
    }
  }
  float s[16];
  for (int l = 0; l < 16; ++l) s[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  return reduce16(s);
}

}  // namespace

float vec_dot_f16(const float* a, const float* b, Index k) {
  const Index np = k & ~Index{63};
  double sum = lanes64(a, b, np);
  for (Index i = np; i < k; ++i) sum += static_cast<double>(a[i] * b[i]);
  return static_cast<float>(sum);
}

float vec_dot_f32(const float* a, const float* b, Index k) {
  const Index np = k & ~Index{63};
  float sum = lanes64(a, b, np);
  for (Index i = np; i < k; ++i) {
    const float product = a[i] * b[i];  // rounded, then added: vmulps, vaddss in libggml-cpu-zen4.so
    sum += product;
  }
  return sum;
}

namespace {

#if defined(__AVX2__) && defined(__FMA__)
// ggml::expf on 8 lanes (the AVX-512 polynomial and scale, in AVX2); false where a lane's 2^n is not a normal float
// (the caller takes those lanes one by one).
bool expf8(const float* x, float* y) {
  const __m256 v = _mm256_loadu_ps(x), r = _mm256_set1_ps(0x1.8p23f);
  const __m256 n = _mm256_sub_ps(_mm256_fmadd_ps(v, _mm256_set1_ps(0x1.715476p+0f), r), r);
  const __m256 out = _mm256_or_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-126.0f), _CMP_LT_OQ),
                                  _mm256_cmp_ps(n, _mm256_set1_ps(127.0f), _CMP_GT_OQ));
  if (_mm256_movemask_ps(out) != 0) return false;
  const __m256 b =
      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), v));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                      _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  _mm256_storeu_ps(y, _mm256_mul_ps(j, _mm256_castsi256_ps(e)));
  return true;
}

#if !defined(__AVX512F__)
// The scores of keys [j0, j0 + 8) from the transposed keys, 8 keys to a vector: in tinyBLAS's order (`lanes`) or
// ggml_vec_dot_f16's (hd a multiple of 64); each key's 16 lanes reduced as reduce16, lane by lane across the keys.
void scores8(const float* q, const float* kt, Index ld, Index hd, bool lanes, Index j0, float* out) {
  __m256 s[16];
  for (int l = 0; l < 16; ++l) {
    if (lanes) {
      s[l] = _mm256_setzero_ps();
      for (Index c = 0; c < hd; c += 16)
        s[l] = _mm256_fmadd_ps(_mm256_set1_ps(q[c + l]), _mm256_loadu_ps(kt + (c + l) * ld + j0), s[l]);
    } else {
      __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
      for (Index i = 0; i < hd; i += 64) {
        for (int c = 0; c < 4; ++c) {
          const Index d = i + 16 * c + l;
          a[c] = _mm256_fmadd_ps(_mm256_set1_ps(q[d]), _mm256_loadu_ps(kt + d * ld + j0), a[c]);
        }
      }
      s[l] = _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
    }
  }
  for (int l = 0; l < 8; ++l) s[l] = _mm256_add_ps(s[l], s[l + 8]);
  for (int l = 0; l < 4; ++l) s[l] = _mm256_add_ps(s[l], s[l + 4]);
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3])));
}
#endif
#endif

#if defined(__AVX512F__)
// scores8 for 16 keys at a time: the same lanes and sums per key, in 512-bit registers.
void scores16(const float* q, const float* kt, Index ld, Index hd, bool lanes, Index j0, float* out) {
  __m512 s[16];
  for (int l = 0; l < 16; ++l) {
    if (lanes) {
      s[l] = _mm512_setzero_ps();
    } else {
      __m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (Index i = 0; i < hd; i += 64) {
        for (int c = 0; c < 4; ++c) {
          const Index d = i + 16 * c + l;
          a[c] = _mm512_fmadd_ps(_mm512_set1_ps(q[d]), _mm512_loadu_ps(kt + d * ld + j0), a[c]);
        }
      }
      s[l] = _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3]));
    }
  }
  // tinyBLAS's lanes: 16 independent sums, each over its dimensions in order.
  for (Index c = 0; lanes && c < hd; c += 16) {
    for (int l = 0; l < 16; ++l)
      s[l] = _mm512_fmadd_ps(_mm512_set1_ps(q[c + l]), _mm512_loadu_ps(kt + (c + l) * ld + j0), s[l]);
  }
  for (int l = 0; l < 8; ++l) s[l] = _mm512_add_ps(s[l], s[l + 8]);
  for (int l = 0; l < 4; ++l) s[l] = _mm512_add_ps(s[l], s[l + 4]);
  _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(s[0], s[2]), _mm512_add_ps(s[1], s[3])));
}

// tinyBLAS's product of the weights p[lo .. hi] (rounded to F16 where `f16`) with the values (rows of hd floats, hd a
// multiple of 16), key j into lane j mod 16 of each output, the lanes reduced as _mm512_reduce_add_ps does: the 16
// lanes of 16 outputs at a time in registers (the same fused multiply-adds per lane, in key order, as the slots in
// memory of attention_row's general loop).
void weighted_values16(const float* p, const float* values, Index hd, Index lo, Index hi, bool f16, float* out) {
  for (Index c = 0; c < hd; c += 16) {
    __m512 acc[16];
    for (auto& v : acc) v = _mm512_setzero_ps();
    for (Index j0 = lo - lo % 16; j0 <= hi; j0 += 16) {
      const Index first = std::max<Index>(lo, j0), last = std::min<Index>(hi, j0 + 15);
      const auto mask = static_cast<__mmask16>(((1u << (last - first + 1)) - 1u) << (first - j0));
      __m512 w = _mm512_maskz_loadu_ps(mask, p + j0);
      if (f16) w = _mm512_cvtph_ps(_mm512_cvtps_ph(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      alignas(64) float ws[16];
      _mm512_store_ps(ws, w);
      const float* v = values + j0 * hd + c;
      if (mask == 0xFFFF) {
        for (int k = 0; k < 16; ++k)
          acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(ws[k]), _mm512_loadu_ps(v + k * hd), acc[k]);
      } else {
        for (int k = 0; k < 16; ++k) {
          if (mask >> k & 1) acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(ws[k]), _mm512_loadu_ps(v + k * hd), acc[k]);
        }
      }
    }
    for (int l = 0; l < 8; ++l) acc[l] = _mm512_add_ps(acc[l], acc[l + 8]);
    for (int l = 0; l < 4; ++l) acc[l] = _mm512_add_ps(acc[l], acc[l + 4]);
    _mm512_storeu_ps(out + c, _mm512_add_ps(_mm512_add_ps(acc[0], acc[2]), _mm512_add_ps(acc[1], acc[3])));
  }
}
#endif

// soft_max_ext over keys [lo, hi] of one row of scores (p holds them on entry, the weights on return).
void softmax(float* p, Index lo, Index hi, float scale) {
  float max = -INFINITY;
  Index first = lo;
#if defined(__AVX512F__)
  // The same products; the maximum is exact in any order (a signed zero's sign does not change p - max below).
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (; first + 16 <= hi + 1; first += 16) {
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(p + first), _mm512_set1_ps(scale));
    _mm512_storeu_ps(p + first, v);
    top = _mm512_max_ps(top, v);
  }
  max = _mm512_reduce_max_ps(top);
#endif
  for (Index j = first; j <= hi; ++j) {
    p[j] *= scale;
    max = std::max(max, p[j]);
  }
  for (Index j = lo; j <= hi; ++j) p[j] -= max;
  Index j = lo;
#if defined(__AVX2__) && defined(__FMA__)
  for (; j + 8 <= hi + 1; j += 8) {
    if (!expf8(p + j, p + j)) {
      for (Index k = j; k < j + 8; ++k) p[k] = ggml::expf(p[k]);
    }
  }
#endif
  for (; j <= hi; ++j) p[j] = ggml::expf(p[j]);
  // ggml_vec_soft_max_f32 sums 16 keys at a time from key 0, each block reduced in float, in double across blocks
  // (the masked keys are exact zeros).
  double sum = 0.0;
  for (Index b0 = lo - lo % 16; b0 <= hi; b0 += 16) {
    float lanes[16];
    for (int l = 0; l < 16; ++l) {
      const Index j = b0 + l;
      lanes[l] = j >= lo && j <= hi ? p[j] : 0.0f;
    }
    sum += reduce16(lanes);
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (Index j = lo; j <= hi; ++j) p[j] *= inv;
}

}  // namespace

void swiglu(float* g, const float* u, Index f) {
  const Index vec = f - f % 16;
  Index i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; i < vec; i += 8) {
    float x[8], e[8];
    for (int l = 0; l < 8; ++l) x[l] = -g[i + l];
    if (!expf8(x, e)) {
      for (int l = 0; l < 8; ++l) e[l] = ggml::expf(x[l]);
    }
    for (int l = 0; l < 8; ++l) g[i + l] = g[i + l] / (1.0f + e[l]) * u[i + l];
  }
#endif
  for (; i < f; ++i) {
    const float e = i < vec ? ggml::expf(-g[i]) : ::expf(-g[i]);
    g[i] = g[i] / (1.0f + e) * u[i];
  }
}

void attention_row(const AttentionRow& a, const float* q, Index lo, Index hi, float* p, float* out, float* scratch) {
  const Index hd = a.hd;
  // llamafile_sgemm takes the product, else ggml_vec_dot_f16; with F32 keys always vec_dot_f32 (mul_mat tries
  // llamafile_sgemm only with a contiguous or converted src1, and the permuted queries are neither).
  const bool lanes = a.f16 && a.batch >= 2 && hd % 16 == 0;
  std::fill(p, p + lo, 0.0f);
  Index j = lo;
#if defined(__AVX512F__)
  if (a.keys_t && (lanes || hd % 64 == 0)) {
    for (; j <= hi; j += 16) {
      float sixteen[16];
      scores16(q, a.keys_t, a.keys_t_ld, hd, lanes, j, sixteen);
      std::copy_n(sixteen, std::min<Index>(16, hi + 1 - j), p + j);
    }
  }
#elif defined(__AVX2__) && defined(__FMA__)
  if (a.keys_t && (lanes || hd % 64 == 0)) {
    for (; j <= hi; j += 8) {
      float eight[8];
      scores8(q, a.keys_t, a.keys_t_ld, hd, lanes, j, eight);
      std::copy_n(eight, std::min<Index>(8, hi + 1 - j), p + j);
    }
  }
#endif
  const auto one_row = a.f16 ? vec_dot_f16 : vec_dot_f32;
  for (; j <= hi; ++j) p[j] = lanes ? dot_lanes(q, a.keys + j * hd, hd) : one_row(q, a.keys + j * hd, hd);
  if (a.softcap > 0.0f) {
    const float inv = 1.0f / a.softcap;
    for (Index j = lo; j <= hi; ++j) p[j] = std::tanh(p[j] * inv) * a.softcap;
  }
  softmax(p, lo, hi, a.scale);
  // The weights times the values: ggml_mul_mat(v, kq) with the weights converted to F16. tinyBLAS (a batch of two
  // or more rows) sums key j into lane j mod 16; ggml_vec_dot_f16 (one row) into lane j mod 64 of 4 x 16, the
  // blocks then added pairwise. Keys outside [lo, hi] weigh exactly 0 and change no lane.
  const Index slots = a.batch >= 2 ? 16 : 64;
#if defined(__AVX512F__)
  if (slots == 16 && hd % 16 == 0) {
    weighted_values16(p, a.values, hd, lo, hi, a.f16, out);
    return;
  }
#endif
  std::fill(scratch, scratch + slots * hd, 0.0f);
  for (Index j0 = lo; j0 <= hi; j0 += 8) {
    const Index count = std::min<Index>(8, hi + 1 - j0);
    float w[8];
    std::copy_n(p + j0, count, w);
    if (a.f16) io::round_to_half(w, count);  // the weights in F16, 8 at a time
    for (Index k = 0; k < count; ++k) {
      float* acc = scratch + ((j0 + k) % slots) * hd;
      const float* v = a.values + (j0 + k) * hd;
      for (Index d = 0; d < hd; ++d) acc[d] = std::fma(w[k], v[d], acc[d]);
    }
  }
  // Each output's lanes reduced (reduce16, after vec_dot's pairwise blocks), for every d at once.
  const auto slot = [&](Index l) { return scratch + l * hd; };
  for (Index l = 0; slots == 64 && l < 16; ++l) {
    for (Index d = 0; d < hd; ++d) slot(l)[d] = (slot(l)[d] + slot(32 + l)[d]) + (slot(16 + l)[d] + slot(48 + l)[d]);
  }
  for (Index l = 0; l < 8; ++l)
    for (Index d = 0; d < hd; ++d) slot(l)[d] += slot(l + 8)[d];
  for (Index l = 0; l < 4; ++l)
    for (Index d = 0; d < hd; ++d) slot(l)[d] += slot(l + 4)[d];
  for (Index d = 0; d < hd; ++d) out[d] = (slot(0)[d] + slot(2)[d]) + (slot(1)[d] + slot(3)[d]);
}

}  // namespace attn::models::ggml
