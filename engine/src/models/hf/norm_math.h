// The per-row normalisations and the rotary embedding every transformer forward uses, shared by the forward passes
// (transformer_run.cpp, decoder_run.cpp), the logit lens and the backward pass (backward.cpp), so that the backward
// differentiates exactly the arithmetic the forward runs. Internal to engine/src/models.
#pragma once

#include "attn/core.h"
#include "attn/models/config.h"

#include <Eigen/Core>

#include <cmath>
#include <vector>

namespace attn::models {

// (x - mean) / sqrt(var + eps) * g + b over one row of d floats (in and out may alias).
inline void layer_norm_row(const float* in, float* out, const RowVector& g, const RowVector& b, Index d, float eps) {
  Eigen::Map<const Eigen::ArrayXf> x(in, d);
  const float mean = x.sum() / static_cast<float>(d);
  const float var = (x - mean).square().sum() / static_cast<float>(d);
  const float inv = 1.0f / std::sqrt(var + eps);
  Eigen::Map<Eigen::ArrayXf>(out, d) = (x - mean) * inv * g.transpose().array() + b.transpose().array();
}

// 1 / sqrt(mean(x^2) + eps), the mean of squares summed in double as the decoders' forward does.
inline float rms_inverse(const float* in, Index d, float eps) {
  Eigen::Map<const Eigen::ArrayXf> x(in, d);
  const double ms = x.cast<double>().square().sum() / static_cast<double>(d);
  return static_cast<float>(1.0 / std::sqrt(ms + static_cast<double>(eps)));
}

// x / sqrt(mean(x^2) + eps) * w (Gemma's 1 + w is folded into w at load; in and out may alias).
inline void rms_norm(const float* in, float* out, const RowVector& w, Index d, float eps) {
  const float inv = rms_inverse(in, d, eps);
  Eigen::Map<Eigen::ArrayXf>(out, d) = Eigen::Map<const Eigen::ArrayXf>(in, d) * inv * w.transpose().array();
}

// cos and sin [rows][half] for positions p0 .. p0 + rows - 1, already times the rope's factor.
inline void rope_tables(const RopeFrequencies& r, Index p0, Index rows, std::vector<float>& cos,
                        std::vector<float>& sin) {
  const Index half = static_cast<Index>(r.inv.size());
  cos.resize(static_cast<std::size_t>(rows * half));
  sin.resize(static_cast<std::size_t>(rows * half));
  for (Index i = 0; i < rows; ++i) {
    for (Index k = 0; k < half; ++k) {
      const double a = static_cast<double>(p0 + i) * r.inv[static_cast<std::size_t>(k)];
      cos[static_cast<std::size_t>(i * half + k)] = static_cast<float>(std::cos(a) * r.factor);
      sin[static_cast<std::size_t>(i * half + k)] = static_cast<float>(std::sin(a) * r.factor);
    }
  }
}

// Rotate-half RoPE on the first 2 half dimensions of one head's vector; `inverse` applies the transposed rotation
// (the backward of the forward's).
inline void rotate(float* v, const float* cos, const float* sin, Index half, bool inverse = false) {
  const float sign = inverse ? -1.0f : 1.0f;
  for (Index k = 0; k < half; ++k) {
    const float a = v[k], b = v[k + half], s = sign * sin[k];
    v[k] = a * cos[k] - b * s;
    v[k + half] = b * cos[k] + a * s;
  }
}

}  // namespace attn::models
