// Between the two glimpses. A Gaussian glimpse has six numbers for its window (first centre, stride and
// sigma per axis) but only four degrees of freedom of placement: the window's position and size per axis.
// Sigma is the extra pair; it says how much each sample blurs. An STN glimpse of the no-shear family has
// exactly those four.
//
// With out_w = Nx and out_h = Ny, the STN's sample points are x-pixel ix_j = ((sx x_j + tx + 1) W - 1) / 2
// with x_j = (2j + 1) / Nx - 1, which is linear in j: the stride is d = sx W / Nx and the first centre is
// u = ((sx (1 / Nx - 1) + tx + 1) W - 1) / 2. So the STN samples exactly the Gaussian filter centres; the
// difference between the two glimpses is the sampling kernel (bilinear against Gaussian), which the
// workbench shows side by side with its error.
#pragma once

#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/stn.h"

namespace attn::glimpse {

// The no-shear STN whose out_w = glimpse.x.n by out_h = glimpse.y.n samples fall on the filter centres.
NoShear stn_of(const GaussianGlimpse& glimpse, int width, int height);
// The Gaussian glimpse with nx = out_w, ny = out_h filters centred on the STN's sample points. Sigma is
// not in the STN: it is `sigma_per_stride` times each axis's stride (0.5 by default: neighbouring filters
// meet at about one sigma).
GaussianGlimpse gaussian_of(const NoShear& stn, int out_w, int out_h, int width, int height,
                            double sigma_per_stride = 0.5, double gamma = 1.0);

struct GlimpseDifference {
  double max_abs = 0.0;
  double rms = 0.0;
  Image difference;  // |a - b| per channel
};
// Both glimpses must have the same shape.
GlimpseDifference compare(const Image& a, const Image& b);

}  // namespace attn::glimpse
