// Attention over a picture: a coarse grid of weights (a captioner's alpha over its G x G cells, a ViT's
// class-token row over its patches) brought to the picture's size and composited over it, as Xu et al.
// 2015 (Show, Attend and Tell, figs. 2-3) draw it. Pure functions on planar float images or 8-bit
// interleaved RGB(A) buffers, shared by the GUI (ui/render) and the command-line tools.
#pragma once

#include "attn/core.h"
#include "attn/vision/image.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace attn {

// ---------------------------------------------------------------------------------------------------------
// Upsampling

// Bilinear upsampling of grid [rows, cols] to height x width: sample centres as torch's
// F.interpolate(mode="bilinear", align_corners=False), sources clamped at the edges (a band of half a cell
// along each edge takes the edge cells' values). Empty for an empty grid or a size below 1.
Matrix upsample_bilinear(const MatrixCRef& grid, int width, int height);

// The Show, Attend and Tell tutorial's smoothing, skimage.transform.pyramid_expand(alpha, upscale, sigma):
// the bilinear upsampling above, then a Gaussian blur of standard deviation `sigma` output pixels with
// scipy.ndimage.gaussian_filter's rules (mode "reflect", i.e. OpenCV's BORDER_REFLECT, and a kernel radius
// of floor(4 sigma + 0.5)). sigma <= 0 is upsample_bilinear.
// Both steps are separable and linear, so the result is Ry grid Rx^T with Ry [height, rows] and
// Rx [width, cols] the blurred interpolation weights (OpenCV's GaussianBlur over the weight columns):
// a 512 x 512 map costs two narrow products instead of a 171-tap blur of every pixel (0.5 ms with the
// weights, 0.15 ms without; GridUpsampler keeps them).
Matrix upsample_smooth(const MatrixCRef& grid, int width, int height, float sigma);

// upsample_smooth (sigma <= 0: upsample_bilinear) for one grid shape and output size, its weights Ry and Rx
// built once: every word of a caption is drawn with the same ones.
class GridUpsampler {
 public:
  GridUpsampler() = default;
  GridUpsampler(Index rows, Index cols, int width, int height, float sigma = 0.0f);
  // The grid (rows x cols, else the result is empty) at width x height.
  Matrix operator()(const MatrixCRef& grid) const;
  Index rows() const { return ry_.cols(); }
  Index cols() const { return rx_t_.rows(); }

 private:
  Matrix ry_;    // [height, rows]
  Matrix rx_t_;  // [cols, width]
};

// The tutorial's blur for `pixels` output pixels over `cells` grid cells: pyramid_expand(upscale=24,
// sigma=8) on its 14 x 14 grid is a third of a cell, so (pixels / cells) / 3.
float tutorial_sigma(int cells, int pixels);

// ---------------------------------------------------------------------------------------------------------
// Blending

// How values become t in [0, 1] before they are drawn.
enum class AlphaScale {
  Max,     // t = v / max (0 stays dark: a uniform alpha lights the whole picture evenly)
  MinMax,  // t = (v - min) / (max - min) (the full range of the colours, as matplotlib's imshow)
};

// The range [lo, hi] that maps to t = 0 .. 1 (MinMax: the values' own; Max: 0 .. max). A flat or empty map
// gets a span of 1.
std::pair<float, float> alpha_range(const MatrixCRef& values, AlphaScale scale);

// The "light mask" (the paper's figures: the picture lit where the model looks):
// out = image * (floor + (1 - floor) * t), t the scaled value at the pixel.
struct LightMask {
  float floor = 0.25f;  // the brightness of the least attended pixels
  AlphaScale scale = AlphaScale::Max;
  std::optional<std::pair<float, float>> range;  // overrides alpha_range(values, scale)
};

// A colour layer over the picture: colour = colors(t), out = under * (1 - a) + colour * a with
// a = opacity * t (value_opacity: the least attended pixels keep the picture) or a = opacity (on 8-bit
// pixels a is rounded to 1/256 steps and the mix to the nearest byte).
struct ColorBlend {
  // 0xRRGGBB entries (the top byte is ignored, so Qt's QRgb tables serve as they are) for t evenly spaced
  // from 0 to 1, looked up at the nearest entry; a colormap tabulated at 256 levels or more.
  std::span<const std::uint32_t> colors;
  float opacity = 0.6f;
  bool value_opacity = true;
  AlphaScale scale = AlphaScale::MinMax;
  std::optional<std::pair<float, float>> range;  // overrides alpha_range(values, scale)
};

// 8-bit interleaved pixels: `channels` 3 (RGB) or 4 (RGBA or RGBX; the fourth byte is left as it is).
struct PixelsU8 {
  std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;  // bytes per row
  int channels = 3;
};

// `values` must be [image.height, image.width] (upsample first); the float versions return a new image with
// the image's channels (a grey image stays grey under a light mask, and becomes RGB under colours), the
// 8-bit ones draw in place. A size mismatch returns the image unchanged (the float versions) or does
// nothing, and says so by returning false.
Image light_mask(const Image& image, const MatrixCRef& values, const LightMask& options = {});
bool light_mask(PixelsU8 pixels, const MatrixCRef& values, const LightMask& options = {});
Image color_blend(const Image& image, const MatrixCRef& values, const ColorBlend& options);
bool color_blend(PixelsU8 pixels, const MatrixCRef& values, const ColorBlend& options);

}  // namespace attn
