// DRAW's Gaussian attention (Gregor et al. 2015, "DRAW: A Recurrent Neural Network For Image
// Generation", section 3.2): an Ny x Nx grid of 2-D Gaussian filters, separable into the filterbanks
// Fx (Nx x W) and Fy (Ny x H).
//
//   Fx[i, a] = exp(-(a - mu_i)^2 / (2 sigma^2)) / (Z_i + eps),   Z_i = sum_a exp(...),  eps = 1e-8
//   read  = gamma * Fy I Fx^T           per channel: Ny x Nx
//   write = (1 / gamma) * Fy^T P Fx     per channel: H x W
//
// Coordinates are the engine's: pixel a (0-based) has its centre at a. Two parameterisations:
//  - pixel (the seed's gaussian_mask(u, s, d, R, C)): per axis the first centre u, the stride d and sigma s,
//    so mu_i = u + i d for i = 0..N-1;
//  - the paper's (eq. 21-24), raw network outputs (g~x, g~y, log sigma^2, log delta~, log gamma):
//    gx = (W + 1) / 2 (g~x + 1), delta = (max(W, H) - 1) / (N - 1) delta~, mu_i = gx + (i - N/2 - 0.5) delta
//    with the paper's 1-based i and pixel indices, i.e. gx - 1 in the engine's 0-based pixels. With separate
//    Nx and Ny the stride is per axis: (max(W, H) - 1) / (N_axis - 1) delta~.
//
// Reading exploits that a filter is negligible a few sigma from its centre: each filter keeps only the
// pixels whose weight is at least kBandTolerance of the filter's largest weight inside the image, plus a
// rigorous bound on the mass it drops (FilterBank::dropped). The banded read is exact up to
// gamma * max|I| * (dropped_x + dropped_y + dropped_x dropped_y), which the bench and tests check is under
// 1e-4 of the dense result. Where bands cover most of the image the read switches to dense matrix products,
// so it is never slower than dense.
#pragma once

#include "attn/core.h"
#include "attn/vision/image.h"

#include <string>
#include <string_view>
#include <vector>

namespace attn::glimpse {

inline constexpr double kFilterEps = 1e-8;
inline constexpr double kBandTolerance = 1e-6;  // relative weight below which a filter's tail is cut
inline constexpr int kMaxFilters = 1024;        // per axis
inline constexpr double kMinSigma = 0.05;       // pixels
inline constexpr double kMinStride = 0.01;      // pixels
inline constexpr double kMinGamma = 1e-3;
inline constexpr double kMaxGamma = 1e3;

// One axis of the grid in pixel terms.
struct GaussianAxis {
  double first = 0.0;   // u: centre of filter 0, in pixels
  double stride = 1.0;  // d: distance between neighbouring centres, in pixels
  double sigma = 1.0;   // s: standard deviation, in pixels
  int n = 12;           // filters on this axis
  double centre() const { return first + 0.5 * (n - 1) * stride; }
  double last() const { return first + (n - 1) * stride; }
  friend bool operator==(const GaussianAxis&, const GaussianAxis&) = default;
};

// The pixel parameterisation: two axes and the intensity gamma.
struct GaussianGlimpse {
  GaussianAxis x;
  GaussianAxis y;
  double gamma = 1.0;
  friend bool operator==(const GaussianGlimpse&, const GaussianGlimpse&) = default;
};

// The paper's parameterisation: the five raw outputs of the attention layer, plus the grid size.
struct DrawParams {
  double gx_tilde = 0.0;
  double gy_tilde = 0.0;
  double log_sigma2 = 0.0;
  double log_delta_tilde = 0.0;
  double log_gamma = 0.0;
  int nx = 12;
  int ny = 12;
  friend bool operator==(const DrawParams&, const DrawParams&) = default;
};

// A glimpse centred at (cx, cy) (0-based pixels) with n x n filters, stride d and sigma s on both axes.
GaussianGlimpse centred_glimpse(double cx, double cy, int n, double stride, double sigma, double gamma = 1.0);
// The paper's mapping (eq. 22-24) for an image of width x height.
GaussianGlimpse from_draw(const DrawParams& params, int width, int height);

// The paper's form of a pixel glimpse. It has one sigma and one delta~ for both axes, so it is exact only
// when the glimpse is isotropic in the paper's sense; otherwise the x axis's values are used and
// `exact` is false.
struct DrawFit {
  DrawParams params;
  bool exact = true;
};
DrawFit to_draw(const GaussianGlimpse& glimpse, int width, int height);

// A parameter the engine changed to keep the maths defined; the panel shows these.
struct Clamp {
  std::string parameter;  // "x.sigma", "y.n", "gamma", ...
  double requested = 0.0;
  double used = 0.0;
  std::string reason;  // "sigma must be at least 0.05 px"
};

struct Sanitised {
  GaussianGlimpse glimpse;
  std::vector<Clamp> clamps;
  bool outside = false;  // no filter centre within 3 sigma of the image on some axis
};
// n in [1, kMaxFilters]; sigma >= kMinSigma; stride >= kMinStride; gamma in [kMinGamma, kMaxGamma]; any
// non-finite value is replaced by its default. A glimpse outside the image is allowed (DRAW's
// normalisation then reads the edge pixels, faintly) and flagged.
Sanitised sanitise(const GaussianGlimpse& glimpse, int width, int height);

// A banded filterbank: filter i is nonzero only on pixels [begin[i], begin[i] + length[i]).
struct FilterBank {
  int n = 0;     // filters
  int size = 0;  // pixels on this axis
  std::vector<int> begin;
  std::vector<int> length;
  std::vector<int> offset;    // into values
  std::vector<float> values;  // the bands, normalised as the dense filter is
  double dropped = 0.0;       // bound on the mass any one filter loses to the band, relative to 1

  // The band's value at pixel a of filter i (0 outside the band).
  float at(int i, int a) const;
  // Pixels [lo, hi) touched by any filter (empty when lo >= hi).
  int touched_begin() const;
  int touched_end() const;
  std::int64_t nonzeros() const { return static_cast<std::int64_t>(values.size()); }
  Matrix dense() const;  // n x size
};

// Every entry of the formula (n x size), for reference and plots.
Matrix dense_filterbank(const GaussianAxis& axis, int size);
FilterBank make_filterbank(const GaussianAxis& axis, int size, double tolerance = kBandTolerance);

// How a read is computed. Banded: loops over each filter's band only. Windowed: dense matrix products
// restricted to the rows and columns any band touches (wins when bands overlap heavily). Dense: the full
// products (read_dense only). Banded and Windowed give the same numbers.
enum class ReadPath { Banded, Windowed, Dense };
std::string_view to_string(ReadPath path);
struct ReadStats {
  ReadPath path = ReadPath::Banded;
  double macs = 0.0;         // multiply-adds of the chosen path
  double dense_macs = 0.0;   // what the full dense products would have done
  double cost = 0.0;         // the planner's estimate of time, in banded-loop multiply-add equivalents
  double error_bound = 0.0;  // bound on |read - read_dense| per output, in units of gamma * max|I|
};

// Reusable scratch so that dragging does not allocate.
struct ReadWorkspace {
  FilterBank fx;
  FilterBank fy;
  std::vector<float> temp;
};

// gamma * Fy I Fx^T per channel: a channels x Ny x Nx image. The glimpse is sanitised first.
Image read(const Image& image, const GaussianGlimpse& glimpse, ReadStats* stats = nullptr,
           ReadWorkspace* workspace = nullptr);
// The same with dense filterbanks and matrix products (the reference the banded read is checked against).
Image read_dense(const Image& image, const GaussianGlimpse& glimpse);
// (1 / gamma) * Fy^T P Fx added to `canvas` (channels must match; the patch is Ny x Nx).
void write_add(Image& canvas, const Image& patch, const GaussianGlimpse& glimpse);
// The same into a fresh zero canvas of width x height.
Image write(const Image& patch, const GaussianGlimpse& glimpse, int width, int height);
Image write_dense(const Image& patch, const GaussianGlimpse& glimpse, int width, int height);

// Multiply-adds of the banded and the dense read for this glimpse on a width x height x channels image,
// without computing it (for choosing a preview level).
ReadStats estimate_read(const GaussianGlimpse& glimpse, int width, int height, int channels);

}  // namespace attn::glimpse
