// ViT attention over the photo: the class token's row of a map (a head, the head mean or the rollout),
// reshaped to the patch grid, upsampled bilinearly to the picture (cell centres as PyTorch's
// interpolate with align_corners=False), coloured and blended over the photo. Pure functions.
#pragma once

#include "attn/core.h"
#include "render/colormap.h"

#include <QImage>

#include <optional>

namespace attn::ui::render {

// Row `row` (0: the class token) of a [1 + gridRows * gridCols]^2 map, columns 1.. as a gridRows x
// gridCols matrix. nullopt when the shapes do not match.
std::optional<attn::Matrix> classTokenGrid(const attn::Matrix& map, int gridRows, int gridCols, int row = 0);

// Bilinear upsampling of a coarse grid to width x height (sample centres, edges clamped): the engine's
// attn::upsample_bilinear.
attn::Matrix upsampleBilinear(const attn::Matrix& grid, int width, int height);

struct OverlayOptions {
  Colormap colormap = Colormap::Inferno;
  double alpha = 0.6;  // opacity of the colour layer at the grid's maximum
  // true: opacity grows with the value from 0 (the least attended patches leave the photo as it is);
  // false: uniform alpha.
  bool valueAlpha = true;
};

// The photo with the grid blended over it (attn::color_blend), at the photo's size (scale the photo down
// first for speed). The colours span the grid's own minimum to maximum.
QImage overlayImage(const QImage& photo, const attn::Matrix& grid, const OverlayOptions& options = {});

}  // namespace attn::ui::render
