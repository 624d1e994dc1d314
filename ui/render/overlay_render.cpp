#include "render/overlay_render.h"

#include <algorithm>
#include <cmath>
#include <vector>

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
  attn::Matrix out(std::max(height, 0), std::max(width, 0));
  if (grid.size() == 0 || width <= 0 || height <= 0) return out;
  const Index gh = grid.rows(), gw = grid.cols();
  const double sy = double(gh) / double(height), sx = double(gw) / double(width);
  std::vector<Index> x0(static_cast<std::size_t>(width)), x1(static_cast<std::size_t>(width));
  std::vector<float> fx(static_cast<std::size_t>(width));
  for (int x = 0; x < width; ++x) {
    const double src = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(gw - 1));
    x0[std::size_t(x)] = Index(std::floor(src));
    x1[std::size_t(x)] = std::min<Index>(x0[std::size_t(x)] + 1, gw - 1);
    fx[std::size_t(x)] = float(src - double(x0[std::size_t(x)]));
  }
  for (int y = 0; y < height; ++y) {
    const double src = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(gh - 1));
    const Index y0 = Index(std::floor(src));
    const Index y1 = std::min<Index>(y0 + 1, gh - 1);
    const float fy = float(src - double(y0));
    for (int x = 0; x < width; ++x) {
      const std::size_t i = std::size_t(x);
      const float top = grid(y0, x0[i]) * (1 - fx[i]) + grid(y0, x1[i]) * fx[i];
      const float bottom = grid(y1, x0[i]) * (1 - fx[i]) + grid(y1, x1[i]) * fx[i];
      out(y, x) = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}

QImage overlayImage(const QImage& photo, const attn::Matrix& grid, const OverlayOptions& options) {
  if (photo.isNull()) return {};
  QImage out = photo.convertToFormat(QImage::Format_RGB32);
  if (grid.size() == 0) return out;
  const attn::Matrix values = upsampleBilinear(grid, out.width(), out.height());
  // Min .. max of this grid: a rollout's class-token row varies little around 1/patches, and on 0 .. max it
  // would colour the whole photo alike.
  const float lo = grid.minCoeff(), hi = grid.maxCoeff();
  const float span = hi > lo ? hi - lo : 1.0f;
  const double alpha = std::clamp(options.alpha, 0.0, 1.0);
  const ColorTable& table = colorTable(options.colormap);
  for (int y = 0; y < out.height(); ++y) {
    auto* line = reinterpret_cast<QRgb*>(out.scanLine(y));
    for (int x = 0; x < out.width(); ++x) {
      const double t = std::clamp(double(values(y, x) - lo) / double(span), 0.0, 1.0);
      const QRgb c = table(float(t));
      const double a = options.valueAlpha ? alpha * t : alpha;
      const QRgb p = line[x];
      const auto mix = [a](int under, int over) { return int(std::lround(under * (1.0 - a) + over * a)); };
      line[x] = qRgb(mix(qRed(p), qRed(c)), mix(qGreen(p), qGreen(c)), mix(qBlue(p), qBlue(c)));
    }
  }
  return out;
}

}  // namespace attn::ui::render
