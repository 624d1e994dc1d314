// Colour maps as lists of colour stops, shared by the heatmap (views/plot_data.h: QCPColorGradient), the thumbnails
// (QImage) and the exporters, so every surface draws a value in the same colour.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

#include <array>
#include <cstddef>
#include <optional>
#include <span>

namespace attn::ui::render {

// RdBu is diverging (blue below the middle, white at it, red above): for values around 0, on a symmetric range.
enum class Colormap { Viridis, Magma, Inferno, Plasma, Cividis, Greys, RdBu };

struct ColormapInfo {
  Colormap id;
  const char* key;   // command-line and settings name, e.g. "viridis"
  const char* name;  // shown in menus
};

std::span<const ColormapInfo> colormaps();
const ColormapInfo& colormapInfo(Colormap map);
std::optional<Colormap> findColormap(const QString& key);

// The colour stops, evenly spaced from 0 to 1 (matplotlib's perceptually uniform maps sampled at
// equal steps; linear RGB interpolation between them is indistinguishable at 8 bits per channel).
std::span<const QRgb> colorStops(Colormap map);

// Colour of t in [0, 1] (clamped; NaN maps to transparent).
QRgb sample(Colormap map, double t);

// The map tabulated at kLevels evenly spaced values, for colouring every pixel of an image: a multiply and
// a load per pixel instead of sample()'s interpolation and rounding. Entry i is sample(i / (kLevels - 1)),
// so a value lands at most half a level (1/2046) from where sample() puts it: well under one 8-bit step
// of any of the maps. Tables are built once per map, on first use, from any thread.
class ColorTable {
 public:
  static constexpr int kLevels = 1024;
  explicit ColorTable(Colormap map);
  QRgb operator()(float t) const {
    if (!(t == t)) return 0;  // NaN: transparent, as sample()
    const float c = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return rgb_[std::size_t(c * float(kLevels - 1) + 0.5f)];
  }
  // The kLevels entries (the engine's attn::ColorBlend takes them as its colours).
  std::span<const QRgb> entries() const { return rgb_; }

 private:
  std::array<QRgb, kLevels> rgb_{};
};
const ColorTable& colorTable(Colormap map);

}  // namespace attn::ui::render
