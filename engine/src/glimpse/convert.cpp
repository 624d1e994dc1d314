#include "attn/glimpse/convert.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::glimpse {

NoShear stn_of(const GaussianGlimpse& g, int width, int height) {
  // Per axis (x shown): d = sx W / N and u = ((sx (1/N - 1) + tx + 1) W - 1) / 2, solved for sx and tx.
  auto axis = [](const GaussianAxis& a, int size, double& scale, double& shift) {
    const double n = std::max(a.n, 1), s = std::max(size, 1);
    scale = a.stride * n / s;
    shift = (2.0 * a.first + 1.0) / s - 1.0 - scale * (1.0 / n - 1.0);
  };
  NoShear p;
  axis(g.x, width, p.scale_x, p.shift_x);
  axis(g.y, height, p.scale_y, p.shift_y);
  return p;
}

GaussianGlimpse gaussian_of(const NoShear& stn, int out_w, int out_h, int width, int height, double sigma_per_stride,
                            double gamma) {
  auto axis = [&](double scale, double shift, int n, int size) {
    n = std::max(n, 1);
    const double stride = scale * size / n;
    const double first = ((scale * (1.0 / n - 1.0) + shift + 1.0) * size - 1.0) / 2.0;
    return GaussianAxis{first, stride, std::max(std::abs(stride) * sigma_per_stride, kMinSigma), n};
  };
  GaussianGlimpse g;
  g.x = axis(stn.scale_x, stn.shift_x, out_w, width);
  g.y = axis(stn.scale_y, stn.shift_y, out_h, height);
  g.gamma = gamma;
  return g;
}

GlimpseDifference compare(const Image& a, const Image& b) {
  GlimpseDifference d;
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
    d.max_abs = d.rms = std::numeric_limits<double>::infinity();
    return d;
  }
  d.difference = Image(a.width, a.height, a.channels);
  double sum = 0.0;
  for (std::size_t k = 0; k < a.data.size(); ++k) {
    const double e = std::abs(static_cast<double>(a.data[k]) - b.data[k]);
    d.difference.data[k] = static_cast<float>(e);
    d.max_abs = std::max(d.max_abs, e);
    sum += e * e;
  }
  d.rms = a.data.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(a.data.size()));
  return d;
}

}  // namespace attn::glimpse
