// The soft mask, the crop and the matrix form of a Gaussian glimpse's window (window_forms.h).
#include "attn/glimpse/window_forms.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace attn::glimpse {

namespace {

struct Span {
  double lo = 0.0, hi = 0.0;
};

Span window_span(const GaussianAxis& axis) { return {axis.first - 0.5 * axis.stride, axis.last() + 0.5 * axis.stride}; }

// Pixels whose centres lie in [lo, hi), clipped to [0, size): [begin, end).
std::pair<int, int> pixels_in(const Span& s, int size) {
  const double begin = std::clamp(std::ceil(s.lo), 0.0, double(size));
  // The first pixel centre at or past hi is excluded.
  const double end = std::clamp(std::ceil(s.hi), 0.0, double(size));
  return {int(begin), std::max(int(begin), int(end))};
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

WindowBox window_box(const GaussianGlimpse& raw, int width, int height) {
  const GaussianGlimpse g = sanitise(raw, std::max(width, 1), std::max(height, 1)).glimpse;
  const auto [x0, x1] = pixels_in(window_span(g.x), std::max(width, 0));
  const auto [y0, y1] = pixels_in(window_span(g.y), std::max(height, 0));
  return {x0, y0, x1 - x0, y1 - y0};
}

Vector soft_window(const GaussianAxis& axis, int size) {
  const Span s = window_span(axis);
  const double scale = 1.0 / (std::sqrt(2.0) * axis.sigma);
  Vector a(std::max(size, 0));
  for (int p = 0; p < size; ++p) {
    // Phi(u) - Phi(v) = (erf(u / sqrt 2) - erf(v / sqrt 2)) / 2.
    a(p) = static_cast<float>(0.5 * (std::erf((p - s.lo) * scale) - std::erf((p - s.hi) * scale)));
  }
  return a;
}

WindowForms window_forms(const Image& image, const GaussianGlimpse& raw) {
  WindowForms out;
  if (image.empty()) return out;
  const int W = image.width, H = image.height, C = image.channels;
  const GaussianGlimpse g = sanitise(raw, W, H).glimpse;

  auto start = std::chrono::steady_clock::now();
  out.a_x = soft_window(g.x, W);
  out.a_y = soft_window(g.y, H);
  out.mask = Image(W, H, 1);
  out.mask.channel(0).noalias() = out.a_y * out.a_x.transpose();
  out.masked = Image(W, H, C);
  for (int c = 0; c < C; ++c) out.masked.channel(c) = out.mask.channel(0).cwiseProduct(image.channel(c));
  out.mask_ms = ms_since(start);
  out.mask_mults = double(W) * H * (1.0 + C);

  start = std::chrono::steady_clock::now();
  out.box = window_box(g, W, H);
  if (!out.box.empty()) {
    out.crop = Image(out.box.width, out.box.height, C);
    for (int c = 0; c < C; ++c) {
      out.crop.channel(c) = image.channel(c).block(out.box.y, out.box.x, out.box.height, out.box.width);
    }
  }
  out.crop_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  out.matrix = read_dense(image, g);
  out.matrix_ms = ms_since(start);
  out.matrix_mults = double(C) * (double(g.y.n) * H * W + double(g.y.n) * W * g.x.n);
  return out;
}

}  // namespace attn::glimpse
