#include "render/overlay_render.h"

#include "attn/vision/overlay.h"

#include <algorithm>
#include <utility>

namespace attn::ui::render {

std::optional<attn::Matrix> classTokenGrid(const attn::Matrix& map, int gridRows, int gridCols, int row) {
  const Index patches = Index(gridRows) * Index(gridCols);
  if (gridRows <= 0 || gridCols <= 0 || map.cols() != patches + 1 || row < 0 || row >= map.rows()) {
    return std::nullopt;
  }
  attn::Matrix grid(gridRows, gridCols);
  for (int r = 0; r < gridRows; ++r) {
    for (int c = 0; c < gridCols; ++c) grid(r, c) = map(row, 1 + Index(r) * gridCols + c);
  }
  return grid;
}

attn::Matrix upsampleBilinear(const attn::Matrix& grid, int width, int height) {
  return attn::upsample_bilinear(grid, width, height);
}

QImage overlayImage(const QImage& photo, const attn::Matrix& grid, const OverlayOptions& options) {
  if (photo.isNull()) return {};
  if (grid.size() == 0) return photo.convertToFormat(QImage::Format_RGB32);
  // The engine blends 8-bit RGB in place; RGB888 is R, G, B bytes on every platform.
  QImage rgb = photo.convertToFormat(QImage::Format_RGB888);
  const attn::Matrix values = attn::upsample_bilinear(grid, rgb.width(), rgb.height());
  attn::ColorBlend blend;
  blend.colors = colorTable(options.colormap).entries();
  blend.opacity = float(std::clamp(options.alpha, 0.0, 1.0));
  blend.value_opacity = options.valueAlpha;
  // Min .. max of this grid: a rollout's class-token row varies little around 1/patches, and on 0 .. max it
  // would colour the whole photo alike.
  blend.range = std::pair(grid.minCoeff(), grid.maxCoeff());
  attn::color_blend(attn::PixelsU8{rgb.bits(), rgb.width(), rgb.height(), rgb.bytesPerLine(), 3}, values, blend);
  return rgb.convertToFormat(QImage::Format_RGB32);
}

}  // namespace attn::ui::render
