// The spatial transformer's glimpse (Jaderberg et al. 2015, "Spatial Transformer Networks"): an affine
// grid generator and a sampler, with PyTorch's conventions so that the numbers match
// torch.nn.functional.affine_grid + grid_sample:
//  - normalised coordinates in [-1, 1] over the image's extent, align_corners=False: the output pixel
//    (i, j) of an H_out x W_out grid sits at x = (2j + 1) / W_out - 1, y = (2i + 1) / H_out - 1;
//  - the source point is theta (2 x 3) times (x, y, 1); it maps back to input pixels as
//    ix = ((xs + 1) W - 1) / 2, iy = ((ys + 1) H - 1) / 2;
//  - bilinear or nearest (round half to even, as torch's nearbyint) sampling; zero padding (taps outside
//    the image contribute 0) or border padding (coordinates clamped to the image).
#pragma once

#include "attn/core.h"
#include "attn/vision/image.h"

#include <array>
#include <string_view>
#include <vector>

namespace attn::glimpse {

// Row-major 2 x 3: xs = t[0] x + t[1] y + t[2], ys = t[3] x + t[4] y + t[5].
using Theta = std::array<double, 6>;
inline constexpr Theta kIdentityTheta{1, 0, 0, 0, 1, 0};

enum class Family { Affine, NoShear, Similarity, TranslationScale };
std::string_view to_string(Family family);

// The constrained families. Scales and shifts are in normalised units: scale 1 and shift 0 cover the
// whole image, as theta = identity does.
struct NoShear {  // the seed's (scale_y, shift_y, scale_x, shift_x)
  double scale_x = 1.0, shift_x = 0.0, scale_y = 1.0, shift_y = 0.0;
  friend bool operator==(const NoShear&, const NoShear&) = default;
};
// Scale, rotation (radians, counter-clockwise as seen on screen with y down is clockwise), shift. The
// rotation is a true rotation in pixels: theta is corrected for the image's aspect ratio, so a window on a
// 4:3 photo turns without shearing. With rotation 0 it equals TranslationScale.
struct Similarity {
  double scale = 1.0, rotation = 0.0, shift_x = 0.0, shift_y = 0.0;
  friend bool operator==(const Similarity&, const Similarity&) = default;
};
struct TranslationScale {
  double scale = 1.0, shift_x = 0.0, shift_y = 0.0;
  friend bool operator==(const TranslationScale&, const TranslationScale&) = default;
};

Theta theta_of(const NoShear& p);
Theta theta_of(const Similarity& p, int width, int height);
Theta theta_of(const TranslationScale& p);
// The family's parameters that best describe theta (exact when theta is in the family).
NoShear no_shear_of(const Theta& theta);
Similarity similarity_of(const Theta& theta, int width, int height);
TranslationScale translation_scale_of(const Theta& theta);

enum class Sampling { Bilinear, Nearest };
enum class Padding { Zeros, Border };
struct SamplerOptions {
  Sampling sampling = Sampling::Bilinear;
  Padding padding = Padding::Zeros;
  friend bool operator==(const SamplerOptions&, const SamplerOptions&) = default;
};

// affine_grid: (out_h * out_w) x 2, row (i * out_w + j) = (xs, ys) in normalised coordinates.
Matrix affine_grid(const Theta& theta, int out_w, int out_h);
// grid_sample over a grid as affine_grid returns it (any grid of normalised points works).
Image grid_sample(const Image& image, const Matrix& grid, int out_w, int out_h, SamplerOptions options = {});
// The two fused, without materialising the grid: the fast path the workbench and the bench use. `out`
// is resized when its shape differs, so a caller that keeps it does not allocate per frame.
void stn_glimpse_into(const Image& image, const Theta& theta, int out_w, int out_h, SamplerOptions options, Image& out);
Image stn_glimpse(const Image& image, const Theta& theta, int out_w, int out_h, SamplerOptions options = {});

// The sampler's own layout: interleaved, four floats per pixel (channels beyond the image's are 0), so one
// bilinear tap reads 16 contiguous bytes instead of one cache line per channel plane. Packing is done once
// per image (the workbench packs on load); sampling from it is about three times faster on large photos,
// where every tap is a cache miss. Images with more than four channels cannot be packed (channels = 0).
struct PackedImage {
  int width = 0;
  int height = 0;
  int channels = 0;         // of the source, 1..4
  std::vector<float> data;  // data[(y * width + x) * 4 + c]
  bool empty() const { return width <= 0 || height <= 0 || channels <= 0; }
};
PackedImage pack(const Image& image);
// Same numbers as the planar overload.
void stn_glimpse_into(const PackedImage& image, const Theta& theta, int out_w, int out_h, SamplerOptions options,
                      Image& out);

// Where a normalised point falls in pixels of a width x height image, and back. Pixel coordinates are the
// engine's: pixel a's centre is at a, so the image spans [-0.5, width - 0.5].
struct PixelPoint {
  double x = 0.0, y = 0.0;
};
PixelPoint to_pixels(double xs, double ys, int width, int height);
PixelPoint to_normalised(double px, double py, int width, int height);
// The four corners of the sampled window (the outer edges of the output's corner pixels), in input pixels,
// in the order top-left, top-right, bottom-right, bottom-left of the output.
std::array<PixelPoint, 4> window_corners(const Theta& theta, int width, int height);
// Sample point (i, j) of an out_w x out_h grid in input pixels (for drawing the warped grid).
PixelPoint sample_point(const Theta& theta, int i, int j, int out_w, int out_h, int width, int height);

}  // namespace attn::glimpse
