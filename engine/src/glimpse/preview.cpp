#include "attn/glimpse/preview.h"

#include <algorithm>
#include <cmath>

namespace attn::glimpse {

GaussianGlimpse at_level(const GaussianGlimpse& g, int level) {
  if (level <= 0) return g;
  const double f = std::ldexp(1.0, level);
  // pyrDown keeps the even pixels: level pixel a' sits where base pixel f a' was. Each step blurs with the
  // binomial [1 4 6 4 1] / 16 (variance 1 in that level's pixels), so level L has already blurred by
  // (4^L - 1) / 3 base pixels squared; the preview filter adds only what is missing, but never less than
  // half a level pixel.
  const double pyramid_variance = (std::ldexp(1.0, 2 * level) - 1.0) / 3.0;
  auto axis = [&](const GaussianAxis& a) {
    const double remaining = std::sqrt(std::max(a.sigma * a.sigma - pyramid_variance, 0.0));
    return GaussianAxis{a.first / f, a.stride / f, std::max(remaining, 0.5 * f) / f, a.n};
  };
  return {axis(g.x), axis(g.y), g.gamma};
}

ReadPlan plan_read(const GaussianGlimpse& g, const ImagePyramid& pyramid, double budget_macs) {
  ReadPlan plan;
  if (pyramid.empty()) return plan;
  // Never coarser than the grid itself: past the level where the stride is one pixel, a preview would
  // only magnify a blur.
  const double stride =
      std::min(std::abs(g.x.n > 1 ? g.x.stride : g.y.stride), std::abs(g.y.n > 1 ? g.y.stride : g.x.stride));
  const int finest_useful = stride >= 1.0 ? static_cast<int>(std::floor(std::log2(stride))) : 0;
  const int last = std::clamp(finest_useful, 0, pyramid.levels() - 1);
  for (int level = 0; level <= last; ++level) {
    const Image& im = pyramid.level(level);
    const ReadStats s = estimate_read(at_level(g, level), im.width, im.height, im.channels);
    plan.level = level;
    plan.macs = s.cost;
    if (s.cost <= budget_macs) break;
  }
  return plan;
}

Image read_planned(const ImagePyramid& pyramid, const GaussianGlimpse& g, const ReadPlan& plan, ReadStats* stats,
                   ReadWorkspace* workspace) {
  if (pyramid.empty()) return {};
  const int level = std::clamp(plan.level, 0, pyramid.levels() - 1);
  return read(pyramid.level(level), at_level(g, level), stats, workspace);
}

}  // namespace attn::glimpse
