#include "attn/glimpse/stn.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace attn::glimpse {

namespace {

constexpr int kMaxOutputSide = 8192;
// Below this many output pixels the sampler stays on one thread.
constexpr int kParallelPixels = 2048;
constexpr int kPrefetchAhead = 8;

bool finite(const Theta& t) {
  return std::all_of(t.begin(), t.end(), [](double v) { return std::isfinite(v); });
}

// One output pixel from input pixel coordinates (ix, iy), every channel, with torch's grid_sample rules.
// `out` points at channel 0's output pixel; channels are `out_plane` apart.
template <Sampling S, Padding P>
inline void sample_pixel(const Image& image, double ix, double iy, float* out, std::size_t out_plane) {
  const int W = image.width, H = image.height, C = image.channels;
  const std::size_t plane = image.plane_size();
  const float* src = image.data.data();
  if constexpr (P == Padding::Border) {
    ix = std::clamp(ix, 0.0, static_cast<double>(W - 1));
    iy = std::clamp(iy, 0.0, static_cast<double>(H - 1));
  }
  // Far outside (or not a number): every tap is out of bounds. This also keeps the casts below defined.
  if (!(ix > -2.0 && ix < W + 1.0 && iy > -2.0 && iy < H + 1.0)) {
    for (int c = 0; c < C; ++c) out[c * out_plane] = 0.0f;
    return;
  }
  if constexpr (S == Sampling::Nearest) {
    const int x = static_cast<int>(std::nearbyint(ix));
    const int y = static_cast<int>(std::nearbyint(iy));
    if (x < 0 || x >= W || y < 0 || y >= H) {
      for (int c = 0; c < C; ++c) out[c * out_plane] = 0.0f;
      return;
    }
    const std::size_t at = static_cast<std::size_t>(y) * W + x;
    for (int c = 0; c < C; ++c) out[c * out_plane] = src[c * plane + at];
  } else {
    const double fx = std::floor(ix), fy = std::floor(iy);
    const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
    const double ax = ix - fx, ay = iy - fy;
    const auto w00 = static_cast<float>((1.0 - ax) * (1.0 - ay));
    const auto w01 = static_cast<float>(ax * (1.0 - ay));
    const auto w10 = static_cast<float>((1.0 - ax) * ay);
    const auto w11 = static_cast<float>(ax * ay);
    if (x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H) {
      const std::size_t at = static_cast<std::size_t>(y0) * W + x0;
      for (int c = 0; c < C; ++c) {
        const float* p = src + c * plane + at;
        out[c * out_plane] = w00 * p[0] + w01 * p[1] + w10 * p[W] + w11 * p[W + 1];
      }
      return;
    }
    const bool in_x0 = x0 >= 0 && x0 < W, in_x1 = x0 + 1 >= 0 && x0 + 1 < W;
    const bool in_y0 = y0 >= 0 && y0 < H, in_y1 = y0 + 1 >= 0 && y0 + 1 < H;
    for (int c = 0; c < C; ++c) {
      const float* p = src + c * plane;
      float v = 0.0f;
      if (in_y0 && in_x0) v += w00 * p[static_cast<std::size_t>(y0) * W + x0];
      if (in_y0 && in_x1) v += w01 * p[static_cast<std::size_t>(y0) * W + x0 + 1];
      if (in_y1 && in_x0) v += w10 * p[static_cast<std::size_t>(y0 + 1) * W + x0];
      if (in_y1 && in_x1) v += w11 * p[static_cast<std::size_t>(y0 + 1) * W + x0 + 1];
      out[c * out_plane] = v;
    }
  }
}

using SampleFn = void (*)(const Image&, double, double, float*, std::size_t);

SampleFn sampler_for(SamplerOptions o) {
  if (o.sampling == Sampling::Nearest)
    return o.padding == Padding::Border ? &sample_pixel<Sampling::Nearest, Padding::Border>
                                        : &sample_pixel<Sampling::Nearest, Padding::Zeros>;
  return o.padding == Padding::Border ? &sample_pixel<Sampling::Bilinear, Padding::Border>
                                      : &sample_pixel<Sampling::Bilinear, Padding::Zeros>;
}

// The packed sampler: four floats per pixel, so a tap is one 16-byte load.
template <Sampling S, Padding P>
inline void sample_pixel(const PackedImage& image, double ix, double iy, float* out, std::size_t out_plane) {
  const int W = image.width, H = image.height, C = image.channels;
  const float* src = image.data.data();
  if constexpr (P == Padding::Border) {
    ix = std::clamp(ix, 0.0, static_cast<double>(W - 1));
    iy = std::clamp(iy, 0.0, static_cast<double>(H - 1));
  }
  if (!(ix > -2.0 && ix < W + 1.0 && iy > -2.0 && iy < H + 1.0)) {
    for (int c = 0; c < C; ++c) out[c * out_plane] = 0.0f;
    return;
  }
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if constexpr (S == Sampling::Nearest) {
    const int x = static_cast<int>(std::nearbyint(ix));
    const int y = static_cast<int>(std::nearbyint(iy));
    if (x >= 0 && x < W && y >= 0 && y < H) {
      const float* p = src + (static_cast<std::size_t>(y) * W + x) * 4;
      for (int c = 0; c < 4; ++c) v[c] = p[c];
    }
  } else {
    const double fx = std::floor(ix), fy = std::floor(iy);
    const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
    const auto ax = static_cast<float>(ix - fx), ay = static_cast<float>(iy - fy);
    float w00 = (1.0f - ax) * (1.0f - ay);
    float w01 = ax * (1.0f - ay);
    float w10 = (1.0f - ax) * ay;
    float w11 = ax * ay;
#if defined(__SSE2__)
    if (x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H) {
      // Interior: one 4-lane multiply-add per tap.
      const float* p = src + (static_cast<std::size_t>(y0) * W + x0) * 4;
      const float* q = p + static_cast<std::size_t>(W) * 4;
      __m128 acc = _mm_mul_ps(_mm_set1_ps(w00), _mm_loadu_ps(p));
      acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w01), _mm_loadu_ps(p + 4)));
      acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w10), _mm_loadu_ps(q)));
      acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w11), _mm_loadu_ps(q + 4)));
      _mm_storeu_ps(v, acc);
      for (int c = 0; c < C; ++c) out[c * out_plane] = v[c];
      return;
    }
#endif
    int xa = x0, xb = x0 + 1, ya = y0, yb = y0 + 1;
    if (!(x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H)) {
      // A tap outside the image weighs nothing; point it at pixel 0 so the loads below stay in bounds.
      if (xa < 0 || xa >= W) {
        w00 = 0.0f;
        w10 = 0.0f;
        xa = 0;
      }
      if (xb < 0 || xb >= W) {
        w01 = 0.0f;
        w11 = 0.0f;
        xb = 0;
      }
      if (ya < 0 || ya >= H) {
        w00 = 0.0f;
        w01 = 0.0f;
        ya = 0;
      }
      if (yb < 0 || yb >= H) {
        w10 = 0.0f;
        w11 = 0.0f;
        yb = 0;
      }
    }
    const float* p00 = src + (static_cast<std::size_t>(ya) * W + xa) * 4;
    const float* p01 = src + (static_cast<std::size_t>(ya) * W + xb) * 4;
    const float* p10 = src + (static_cast<std::size_t>(yb) * W + xa) * 4;
    const float* p11 = src + (static_cast<std::size_t>(yb) * W + xb) * 4;
    for (int c = 0; c < 4; ++c) v[c] = w00 * p00[c] + w01 * p01[c] + w10 * p10[c] + w11 * p11[c];
  }
  for (int c = 0; c < C; ++c) out[c * out_plane] = v[c];
}

// The output pixel grid in input pixels is affine in (i, j): ix = x00 + i dx_di + j dx_dj.
struct PixelMap {
  double x00, y00, dx_dj, dx_di, dy_dj, dy_di;
};

PixelMap pixel_map(const Theta& t, int W_in, int H_in, int Wo, int Ho) {
  // ix = ((xs + 1) W - 1) / 2 with xs = t0 x + t1 y + t2 and x = (2j + 1) / Wo - 1.
  const double hx = W_in / 2.0, hy = H_in / 2.0;
  return {hx * (t[0] * (1.0 / Wo - 1.0) + t[1] * (1.0 / Ho - 1.0) + t[2] + 1.0) - 0.5,
          hy * (t[3] * (1.0 / Wo - 1.0) + t[4] * (1.0 / Ho - 1.0) + t[5] + 1.0) - 0.5,
          hx * t[0] * 2.0 / Wo,
          hx * t[1] * 2.0 / Ho,
          hy * t[3] * 2.0 / Wo,
          hy * t[4] * 2.0 / Ho};
}

// Every output pixel of the glimpse. For the packed layout, whose taps miss the cache on a large photo,
// the taps a few samples ahead are requested early.
template <Sampling S, Padding P, class Source>
void fused(const Source& image, const Theta& t, Image& out) {
  const int Wo = out.width, Ho = out.height;
  const PixelMap m = pixel_map(t, image.width, image.height, Wo, Ho);
  const std::size_t out_plane = out.plane_size();
#pragma omp parallel for schedule(dynamic, 8) if (Wo * Ho >= kParallelPixels)
  for (int i = 0; i < Ho; ++i) {
    float* row = out.data.data() + static_cast<std::size_t>(i) * Wo;
    const double xi = m.x00 + i * m.dx_di, yi = m.y00 + i * m.dy_di;
    for (int j = 0; j < Wo; ++j) {
      if constexpr (std::is_same_v<Source, PackedImage>) {
        const double px = xi + (j + kPrefetchAhead) * m.dx_dj, py = yi + (j + kPrefetchAhead) * m.dy_dj;
        if (px >= 0.0 && py >= 0.0 && px < image.width - 1 && py < image.height - 1) {
          const float* p =
              image.data.data() +
              (static_cast<std::size_t>(py) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(px)) * 4;
          __builtin_prefetch(p);
          __builtin_prefetch(p + static_cast<std::size_t>(image.width) * 4);
        }
      }
      sample_pixel<S, P>(image, xi + j * m.dx_dj, yi + j * m.dy_dj, row + j, out_plane);
    }
  }
}

// Shapes `out`, then samples: zeros for an empty image or a theta that is not finite.
template <class Source>
void glimpse_into(const Source& image, const Theta& theta, int out_w, int out_h, SamplerOptions o, Image& out) {
  out_w = std::clamp(out_w, 0, kMaxOutputSide);
  out_h = std::clamp(out_h, 0, kMaxOutputSide);
  const int channels = std::max(image.channels, 0);
  if (out.width != out_w || out.height != out_h || out.channels != channels) out = Image(out_w, out_h, channels);
  if (out.empty()) return;
  if (image.empty() || !finite(theta)) {
    std::fill(out.data.begin(), out.data.end(), 0.0f);
    return;
  }
  if (o.sampling == Sampling::Nearest) {
    if (o.padding == Padding::Border)
      fused<Sampling::Nearest, Padding::Border>(image, theta, out);
    else
      fused<Sampling::Nearest, Padding::Zeros>(image, theta, out);
  } else {
    if (o.padding == Padding::Border)
      fused<Sampling::Bilinear, Padding::Border>(image, theta, out);
    else
      fused<Sampling::Bilinear, Padding::Zeros>(image, theta, out);
  }
}

}  // namespace

std::string_view to_string(Family family) {
  switch (family) {
    case Family::Affine: return "affine";
    case Family::NoShear: return "no-shear";
    case Family::Similarity: return "similarity";
    case Family::TranslationScale: return "translation-scale";
  }
  return "?";
}

Theta theta_of(const NoShear& p) { return {p.scale_x, 0.0, p.shift_x, 0.0, p.scale_y, p.shift_y}; }

Theta theta_of(const Similarity& p, int width, int height) {
  const double c = std::cos(p.rotation), s = std::sin(p.rotation);
  const double aspect = height > 0 && width > 0 ? static_cast<double>(height) / width : 1.0;
  return {p.scale * c, -p.scale * s * aspect, p.shift_x, p.scale * s / aspect, p.scale * c, p.shift_y};
}

Theta theta_of(const TranslationScale& p) { return {p.scale, 0.0, p.shift_x, 0.0, p.scale, p.shift_y}; }

NoShear no_shear_of(const Theta& t) {
  // Each axis's scale is the length of the image of that axis (exact when there is no shear).
  return {std::hypot(t[0], t[3]), t[2], std::hypot(t[1], t[4]), t[5]};
}

Similarity similarity_of(const Theta& t, int width, int height) {
  const double aspect = height > 0 && width > 0 ? static_cast<double>(height) / width : 1.0;
  // Undo the aspect correction: in pixel-uniform units the linear part is scale * R.
  const double a = t[0], b = t[1] / aspect, c = t[3] * aspect, d = t[4];
  const double cos_part = 0.5 * (a + d), sin_part = 0.5 * (c - b);
  return {std::hypot(cos_part, sin_part), std::atan2(sin_part, cos_part), t[2], t[5]};
}

TranslationScale translation_scale_of(const Theta& t) {
  return {0.5 * (std::hypot(t[0], t[3]) + std::hypot(t[1], t[4])), t[2], t[5]};
}

Matrix affine_grid(const Theta& t, int out_w, int out_h) {
  out_w = std::clamp(out_w, 0, kMaxOutputSide);
  out_h = std::clamp(out_h, 0, kMaxOutputSide);
  Matrix grid(static_cast<Index>(out_w) * out_h, 2);
  for (int i = 0; i < out_h; ++i) {
    const double y = (2.0 * i + 1.0) / out_h - 1.0;
    for (int j = 0; j < out_w; ++j) {
      const double x = (2.0 * j + 1.0) / out_w - 1.0;
      const Index r = static_cast<Index>(i) * out_w + j;
      grid(r, 0) = static_cast<float>(t[0] * x + t[1] * y + t[2]);
      grid(r, 1) = static_cast<float>(t[3] * x + t[4] * y + t[5]);
    }
  }
  return grid;
}

Image grid_sample(const Image& image, const Matrix& grid, int out_w, int out_h, SamplerOptions options) {
  out_w = std::clamp(out_w, 0, kMaxOutputSide);
  out_h = std::clamp(out_h, 0, kMaxOutputSide);
  Image out(out_w, out_h, std::max(image.channels, 0), 0.0f);
  if (image.empty() || out.empty() || grid.rows() != static_cast<Index>(out_w) * out_h || grid.cols() != 2) return out;
  const SampleFn sample = sampler_for(options);
  const double W = image.width, H = image.height;
  for (Index r = 0; r < grid.rows(); ++r) {
    const double ix = ((grid(r, 0) + 1.0) * W - 1.0) / 2.0;
    const double iy = ((grid(r, 1) + 1.0) * H - 1.0) / 2.0;
    sample(image, ix, iy, out.data.data() + r, out.plane_size());
  }
  return out;
}

void stn_glimpse_into(const Image& image, const Theta& theta, int out_w, int out_h, SamplerOptions o, Image& out) {
  glimpse_into(image, theta, out_w, out_h, o, out);
}

PackedImage pack(const Image& image) {
  PackedImage p;
  if (image.empty() || image.channels > 4) return p;
  p.width = image.width;
  p.height = image.height;
  p.channels = image.channels;
  p.data.assign(image.plane_size() * 4, 0.0f);
  for (int c = 0; c < image.channels; ++c) {
    const float* src = image.plane(c);
    for (std::size_t k = 0; k < image.plane_size(); ++k) p.data[k * 4 + static_cast<std::size_t>(c)] = src[k];
  }
  return p;
}

void stn_glimpse_into(const PackedImage& image, const Theta& theta, int out_w, int out_h, SamplerOptions o,
                      Image& out) {
  glimpse_into(image, theta, out_w, out_h, o, out);
}

Image stn_glimpse(const Image& image, const Theta& theta, int out_w, int out_h, SamplerOptions options) {
  Image out;
  stn_glimpse_into(image, theta, out_w, out_h, options, out);
  return out;
}

PixelPoint to_pixels(double xs, double ys, int width, int height) {
  return {((xs + 1.0) * width - 1.0) / 2.0, ((ys + 1.0) * height - 1.0) / 2.0};
}

PixelPoint to_normalised(double px, double py, int width, int height) {
  return {(2.0 * px + 1.0) / width - 1.0, (2.0 * py + 1.0) / height - 1.0};
}

std::array<PixelPoint, 4> window_corners(const Theta& t, int width, int height) {
  auto corner = [&](double x, double y) {
    return to_pixels(t[0] * x + t[1] * y + t[2], t[3] * x + t[4] * y + t[5], width, height);
  };
  return {corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)};
}

PixelPoint sample_point(const Theta& t, int i, int j, int out_w, int out_h, int width, int height) {
  const double x = (2.0 * j + 1.0) / std::max(out_w, 1) - 1.0;
  const double y = (2.0 * i + 1.0) / std::max(out_h, 1) - 1.0;
  return to_pixels(t[0] * x + t[1] * y + t[2], t[3] * x + t[4] * y + t[5], width, height);
}

}  // namespace attn::glimpse
