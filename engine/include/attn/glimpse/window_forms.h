// Three ways of attending to one window of an image, side by side (the catalogue's soft mask and hard crop
// beside DRAW's matrix form), for the window of a Gaussian glimpse:
//
//   window   per axis [lo, hi) = [first - stride / 2, last + stride / 2): the cells the filters stand for,
//            the window the STN's same-window mode samples too (pixel a has its centre at a)
//   soft     a_x(p) = Phi((p - lo) / sigma) - Phi((p - hi) / sigma), the window's indicator with its edges
//            blurred by the axis's sigma (Phi the normal CDF); a = a_y a_x^T over the whole image, and the
//            attended image a (.) I, per channel: image sized, every pixel multiplied (the costly form)
//   hard     the crop I[y0:y1, x0:x1] of the pixels whose centres lie in the window
//   matrix   gamma Fy I Fx^T with dense filterbanks (read_dense): Ny x Nx, two matrix products per channel
//
// As sigma goes to 0 the soft mask becomes the crop's indicator: a (.) I is the crop inside and 0 outside.
#pragma once

#include "attn/core.h"
#include "attn/glimpse/gaussian.h"
#include "attn/vision/image.h"

namespace attn::glimpse {

// Pixels [x, x + width) x [y, y + height) of the image; empty (width or height 0) when the window misses it.
struct WindowBox {
  int x = 0, y = 0, width = 0, height = 0;
  bool empty() const { return width <= 0 || height <= 0; }
  friend bool operator==(const WindowBox&, const WindowBox&) = default;
};

// The window's pixels (centres in [lo, hi) per axis), clipped to the image. The glimpse is used as
// sanitise() makes it.
WindowBox window_box(const GaussianGlimpse& glimpse, int width, int height);

// a over the `size` pixels of one axis (the axis as sanitise() makes it).
Vector soft_window(const GaussianAxis& axis, int size);

struct WindowForms {
  WindowBox box;
  Vector a_x, a_y;  // the soft window per axis
  Image mask;       // 1 channel, the image's size: a = a_y a_x^T
  Image masked;     // a (.) I, the image's size and channels
  Image crop;       // I[y0:y1, x0:x1] (empty when the window misses the image)
  Image matrix;     // gamma Fy I Fx^T (channels x Ny x Nx)
  // Wall time of each form, in ms: the soft mask's outer product and its product with the image; the crop's
  // copy; the matrix form's filterbanks and products.
  double mask_ms = 0.0, crop_ms = 0.0, matrix_ms = 0.0;
  // Multiplies each form did: H W (1 + C) for the mask, none for the crop, Ny H W + Ny W Nx per channel.
  double mask_mults = 0.0, matrix_mults = 0.0;
};

// The three forms of `glimpse`'s window on `image` (sanitised first).
WindowForms window_forms(const Image& image, const GaussianGlimpse& glimpse);

}  // namespace attn::glimpse
