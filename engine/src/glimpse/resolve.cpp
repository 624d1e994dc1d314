#include "attn/glimpse/resolve.h"

#include "attn/glimpse/convert.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn::glimpse {

namespace {

// stn_over_window for a glimpse that is sanitised already.
StnSettings window_of_sanitised(const GaussianGlimpse& used, int width, int height, StnSettings base) {
  base.family = Family::NoShear;
  base.no_shear = stn_of(used, width, height);
  base.out_w = used.x.n;
  base.out_h = used.y.n;
  return base;
}

}  // namespace

StnSettings stn_over_window(const GaussianGlimpse& gaussian, int width, int height, StnSettings base) {
  return window_of_sanitised(sanitise(gaussian, width, height).glimpse, width, height, std::move(base));
}

ResolvedGlimpse resolve(const GlimpseSettings& settings, int width, int height) {
  ResolvedGlimpse out;
  out.image_width = width;
  out.image_height = height;
  out.gaussian = sanitise(settings.gaussian, width, height);
  const StnSettings stn =
      settings.same_window ? window_of_sanitised(out.gaussian.glimpse, width, height, settings.stn) : settings.stn;
  out.stn_theta = stn.theta(width, height);
  if (!std::all_of(out.stn_theta.begin(), out.stn_theta.end(), [](double t) { return std::isfinite(t); })) {
    out.stn_theta = kIdentityTheta;
    out.stn_theta_replaced = true;
  }
  out.stn_width = stn.output_width();
  out.stn_height = stn.output_height();
  return out;
}

}  // namespace attn::glimpse
