// llama.cpp's float arithmetic, operation for operation (see ggml_math.h).
#include "ggml_math.h"

#include "../../io/half.h"

#include <algorithm>
#include <cmath>

namespace attn::models::ggml {

void rope_tables(double base, double freq_scale, Index dims, Index p0, Index rows, std::vector<float>& cos,
                 std::vector<float>& sin) {
  const Index half = dims / 2;
  const float theta_scale = std::pow(static_cast<float>(base), -2.0f / static_cast<float>(dims));
  const auto scale = static_cast<float>(freq_scale);
  cos.resize(static_cast<std::size_t>(rows * half));
  sin.resize(static_cast<std::size_t>(rows * half));
  for (Index i = 0; i < rows; ++i) {
    float theta = static_cast<float>(p0 + i);
    for (Index k = 0; k < half; ++k) {
      const float t = scale * theta;
      cos[static_cast<std::size_t>(i * half + k)] = std::cos(t);
      sin[static_cast<std::size_t>(i * half + k)] = std::sin(t);
      theta *= theta_scale;
    }
  }
}

void geglu(float* g, const float* u, Index f) {
  static const std::vector<std::uint16_t> table = [] {
    std::vector<std::uint16_t> t(1 << 16);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const float x = io::half_to_float(static_cast<std::uint16_t>(i));
      // ggml_gelu_f32
      const float y =
          0.5f * x * (1.0f + std::tanh(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
      t[i] = io::float_to_half(y);
    }
    return t;
  }();
  for (Index i = 0; i < f; ++i) {
    const float x = g[i];
    if (x <= -10.0f) {
      g[i] = 0.0f;
    } else if (x >= 10.0f) {
      g[i] = x * u[i];
    } else {
      g[i] = io::half_to_float(table[io::float_to_half(x)]) * u[i];
    }
  }
}

float dot_lanes(const float* a, const float* b, Index k) {
  float acc[16] = {};
  for (Index i = 0; i < k; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(a[i + l], b[i + l], acc[l]);
  }
  return reduce16(acc);
}

float vec_dot_f16(const float* a, const float* b, Index k) {
  const Index np = k & ~Index{63};
  float acc[4][16] = {};
  for (Index i = 0; i < np; i += 64) {
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 16; ++l) acc[c][l] = std::fma(a[i + 16 * c + l], b[i + 16 * c + l], acc[c][l]);
    }
  }
  float s[16];
  for (int l = 0; l < 16; ++l) s[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  double sum = reduce16(s);
  for (Index i = np; i < k; ++i) sum += static_cast<double>(a[i] * b[i]);
  return static_cast<float>(sum);
}

namespace {

// soft_max_ext over keys [lo, hi] of one row of scores (p holds them on entry, the weights on return).
void softmax(float* p, Index lo, Index hi, float scale) {
  float max = -INFINITY;
  for (Index j = lo; j <= hi; ++j) {
    p[j] *= scale;
    max = std::max(max, p[j]);
  }
  for (Index j = lo; j <= hi; ++j) p[j] = ggml::expf(p[j] - max);
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

void attention_row(const AttentionRow& a, const float* q, Index lo, Index hi, float* p, float* out, float* scratch) {
  const Index hd = a.hd;
  const bool lanes = a.batch >= 2 && hd % 16 == 0;  // llamafile_sgemm takes the product, else ggml_vec_dot_f16
  std::fill(p, p + lo, 0.0f);
  for (Index j = lo; j <= hi; ++j) {
    p[j] = lanes ? dot_lanes(q, a.keys + j * hd, hd) : vec_dot_f16(q, a.keys + j * hd, hd);
  }
  if (a.softcap > 0.0f) {
    const float inv = 1.0f / a.softcap;
    for (Index j = lo; j <= hi; ++j) p[j] = std::tanh(p[j] * inv) * a.softcap;
  }
  softmax(p, lo, hi, a.scale);
  // The weights times the values: ggml_mul_mat(v, kq) with the weights converted to F16. tinyBLAS (a batch of two
  // or more rows) sums key j into lane j mod 16; ggml_vec_dot_f16 (one row) into lane j mod 64 of 4 x 16, the
  // blocks then added pairwise. Keys outside [lo, hi] weigh exactly 0 and change no lane.
  const Index slots = a.batch >= 2 ? 16 : 64;
  std::fill(scratch, scratch + slots * hd, 0.0f);
  for (Index j = lo; j <= hi; ++j) {
    const float w = io::half_to_float(io::float_to_half(p[j]));
    float* acc = scratch + (j % slots) * hd;
    const float* v = a.values + j * hd;
    for (Index d = 0; d < hd; ++d) acc[d] = std::fma(w, v[d], acc[d]);
  }
  for (Index d = 0; d < hd; ++d) {
    float s[16];
    for (int l = 0; l < 16; ++l) {
      const auto at = [&](Index slot) { return scratch[slot * hd + d]; };
      s[l] = slots == 16 ? at(l) : (at(l) + at(32 + l)) + (at(16 + l) + at(48 + l));
    }
    out[d] = reduce16(s);
  }
}

}  // namespace attn::models::ggml
