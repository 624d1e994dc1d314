// What a GlimpseSettings means for one image, computed in one place: the Gaussian glimpse the read uses
// (sanitised, with its clamps), the theta the STN samples with and the STN's output size. The Glimpse
// tab resolves where settings enter (every edit, a new image) and its canvas, panel and worker read the
// result; attnscope-cli glimpse resolves the same way. Nothing else applies the same-window rule, the
// families or the output clamp.
#pragma once

#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/settings.h"
#include "attn/glimpse/stn.h"

namespace attn::glimpse {

struct ResolvedGlimpse {
  int image_width = 0;  // the image the pixel numbers refer to
  int image_height = 0;
  // The Gaussian glimpse as read: sanitise(settings.gaussian, width, height).
  Sanitised gaussian;
  // The theta the STN samples with. Same-window mode: the no-shear window whose samples fall on the sanitised
  // Gaussian's filter centres (stn_over_window); otherwise the family's theta (StnSettings::theta). A theta
  // with a non-finite entry is replaced by the identity, and stn_theta_replaced says so.
  Theta stn_theta = kIdentityTheta;
  bool stn_theta_replaced = false;
  // The STN's output size: the sanitised Gaussian's Nx x Ny in same-window mode, otherwise out_w x out_h
  // clamped to 1..kMaxStnSide (StnSettings::output_width / output_height).
  int stn_width = 1;
  int stn_height = 1;
};

// The geometry `settings` give on a width x height image.
ResolvedGlimpse resolve(const GlimpseSettings& settings, int width, int height);

// The no-shear STN whose gaussian.x.n x gaussian.y.n samples fall on the filter centres of the sanitised
// `gaussian` (stn_of): what same-window mode samples, and the STN a preset starts from so that both glimpses
// show the same region. The family becomes NoShear and out_w, out_h the grid's size; the other families'
// parameters and the sampler are kept from `base`.
StnSettings stn_over_window(const GaussianGlimpse& gaussian, int width, int height, StnSettings base = {});

}  // namespace attn::glimpse
