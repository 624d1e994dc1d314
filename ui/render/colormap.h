// Colour maps as lists of colour stops, shared by the heatmap (QCPColorGradient), the thumbnails
// (QImage) and the exporters, so every surface draws a value in the same colour.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

#include <optional>
#include <span>

class QCPColorGradient;

namespace attn::ui::render {

enum class Colormap { Viridis, Magma, Inferno, Plasma, Cividis, Greys };

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

// The same stops for QCustomPlot.
QCPColorGradient gradient(Colormap map);

}  // namespace attn::ui::render
