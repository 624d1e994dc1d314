#include "render/colormap.h"

#include "session/colormap_keys.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace attn::ui::render {
namespace {

// Stops from matplotlib's _cm_listed tables, sampled at equal steps.
constexpr std::array<QRgb, 11> kViridis = {0xff440154, 0xff482475, 0xff414487, 0xff355f8d, 0xff2a788e, 0xff21918c,
                                           0xff22a884, 0xff44bf70, 0xff7ad151, 0xffbddf26, 0xfffde725};
constexpr std::array<QRgb, 11> kMagma = {0xff000004, 0xff140e36, 0xff3b0f70, 0xff641a80, 0xff8c2981, 0xffb73779,
                                         0xffde4968, 0xfff7705c, 0xfffe9f6d, 0xfffecf92, 0xfffcfdbf};
constexpr std::array<QRgb, 11> kInferno = {0xff000004, 0xff160b39, 0xff420a68, 0xff6a176e, 0xff932667, 0xffbc3754,
                                           0xffdd513a, 0xfff37819, 0xfffca50a, 0xfff6d746, 0xfffcffa4};
constexpr std::array<QRgb, 11> kPlasma = {0xff0d0887, 0xff41049d, 0xff6a00a8, 0xff8f0da4, 0xffb12a90, 0xffcc4778,
                                          0xffe16462, 0xfff2844b, 0xfffca636, 0xfffcce25, 0xfff0f921};
constexpr std::array<QRgb, 10> kCividis = {0xff00224e, 0xff123570, 0xff3b496c, 0xff575d6d, 0xff707173,
                                           0xff8a8779, 0xffa69d75, 0xffc4b56c, 0xffe4cf5b, 0xfffee838};
// Light for small weights, dark for large ones: reads well when printed.
constexpr std::array<QRgb, 2> kGreys = {0xffffffff, 0xff111111};

// ColorBrewer's RdBu (11 classes), blue to red: patching recoveries and differences of two runs, centred on 0.
constexpr std::array<QRgb, 11> kRdBu = {0xff053061, 0xff2166ac, 0xff4393c3, 0xff92c5de, 0xffd1e5f0, 0xfff7f7f7,
                                        0xfffddbc7, 0xfff4a582, 0xffd6604d, 0xffb2182b, 0xff67001f};

constexpr std::array<ColormapInfo, 7> kInfos = {{
    {Colormap::Viridis, kColormapKeys[0].data(), "Viridis"},
    {Colormap::Magma, kColormapKeys[1].data(), "Magma"},
    {Colormap::Inferno, kColormapKeys[2].data(), "Inferno"},
    {Colormap::Plasma, kColormapKeys[3].data(), "Plasma"},
    {Colormap::Cividis, kColormapKeys[4].data(), "Cividis"},
    {Colormap::Greys, kColormapKeys[5].data(), "Greys"},
    {Colormap::RdBu, kColormapKeys[6].data(), "Red-Blue (diverging)"},
}};

}  // namespace

std::span<const ColormapInfo> colormaps() { return kInfos; }

const ColormapInfo& colormapInfo(Colormap map) {
  for (const auto& info : kInfos) {
    if (info.id == map) return info;
  }
  return kInfos.front();
}

std::optional<Colormap> findColormap(const QString& key) {
  for (const auto& info : kInfos) {
    if (key.compare(QLatin1String(info.key), Qt::CaseInsensitive) == 0) return info.id;
  }
  return std::nullopt;
}

std::span<const QRgb> colorStops(Colormap map) {
  switch (map) {
    case Colormap::Viridis: return kViridis;
    case Colormap::Magma: return kMagma;
    case Colormap::Inferno: return kInferno;
    case Colormap::Plasma: return kPlasma;
    case Colormap::Cividis: return kCividis;
    case Colormap::Greys: return kGreys;
    case Colormap::RdBu: return kRdBu;
  }
  return kViridis;
}

QRgb sample(Colormap map, double t) {
  if (std::isnan(t)) return 0;
  const auto stops = colorStops(map);
  t = std::clamp(t, 0.0, 1.0);
  const double pos = t * double(stops.size() - 1);
  const auto i = std::min<std::size_t>(std::size_t(pos), stops.size() - 2);
  const double f = pos - double(i);
  const QRgb a = stops[i];
  const QRgb b = stops[i + 1];
  const auto mix = [f](int x, int y) { return int(std::lround(x + (y - x) * f)); };
  return qRgb(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
}

ColorTable::ColorTable(Colormap map) {
  for (int i = 0; i < kLevels; ++i) rgb_[std::size_t(i)] = sample(map, double(i) / double(kLevels - 1));
}

const ColorTable& colorTable(Colormap map) {
  static const auto tables = [] {
    std::array<ColorTable, kInfos.size()> out{
        ColorTable(kInfos[0].id), ColorTable(kInfos[1].id), ColorTable(kInfos[2].id), ColorTable(kInfos[3].id),
        ColorTable(kInfos[4].id), ColorTable(kInfos[5].id), ColorTable(kInfos[6].id)};
    return out;
  }();
  for (std::size_t i = 0; i < kInfos.size(); ++i) {
    if (kInfos[i].id == map) return tables[i];
  }
  return tables.front();
}

}  // namespace attn::ui::render
