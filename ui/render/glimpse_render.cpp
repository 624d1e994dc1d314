#include "render/glimpse_render.h"

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui::render {

QImage toQImage(const attn::Image& image) {
  if (image.empty() || image.data.size() < image.plane_size() * std::size_t(image.channels)) return {};
  // image_to_u8 writes R, G, B, 255 bytes: QImage's RGBX8888. RGB32 is what the raster engine paints
  // fastest, so convert once here rather than at every paint.
  QImage rgbx(image.width, image.height, QImage::Format_RGBX8888);
  if (rgbx.isNull()) return {};
  attn::image_to_u8(image, rgbx.bits(), rgbx.bytesPerLine(), 4);
  rgbx.convertTo(QImage::Format_RGB32);
  return rgbx;
}

QImage toQImageByCoverage(const attn::Image& canvas, const attn::Image& coverage, double* peak) {
  if (canvas.empty() || coverage.width != canvas.width || coverage.height != canvas.height || coverage.channels != 1)
    return toQImageNormalised(canvas, peak);
  double top = 0.0;
  for (float v : coverage.data)
    if (std::isfinite(v)) top = std::max(top, double(v));
  if (peak) *peak = top;
  attn::Image shown(canvas.width, canvas.height, canvas.channels, 0.0f);
  if (top > 0.0) {
    const float floor = float(1e-3 * top);
    const float* w = coverage.plane(0);
    for (int c = 0; c < canvas.channels; ++c) {
      const float* src = canvas.plane(c);
      float* dst = shown.plane(c);
      for (std::size_t i = 0; i < canvas.plane_size(); ++i) dst[i] = w[i] > floor ? src[i] / w[i] : 0.0f;
    }
  }
  return toQImage(shown);
}

QImage toQImageNormalised(const attn::Image& image, double* peak) {
  double top = 0.0;
  for (float v : image.data) {
    if (std::isfinite(v)) top = std::max(top, double(v));
  }
  if (peak) *peak = top;
  if (top <= 0.0 || top == 1.0) return toQImage(image);
  attn::Image scaled = image;
  const float k = float(1.0 / top);
  for (float& v : scaled.data) v = std::isfinite(v) ? v * k : 0.0f;
  return toQImage(scaled);
}

QImage differenceImage(const attn::Image& difference, Colormap map, double range) {
  if (difference.empty()) return {};
  const int w = difference.width;
  const int h = difference.height;
  std::vector<float> worst(difference.plane_size(), 0.0f);
  for (int c = 0; c < difference.channels; ++c) {
    const float* plane = difference.plane(c);
    for (std::size_t i = 0; i < worst.size(); ++i) {
      const float v = std::abs(plane[i]);
      if (std::isfinite(v)) worst[i] = std::max(worst[i], v);
    }
  }
  double top = range;
  if (!(top > 0.0)) {
    top = 0.0;
    for (float v : worst) top = std::max(top, double(v));
  }
  QImage out(w, h, QImage::Format_RGB32);
  const ColorTable& table = colorTable(map);
  for (int y = 0; y < h; ++y) {
    auto* line = reinterpret_cast<QRgb*>(out.scanLine(y));
    for (int x = 0; x < w; ++x) {
      const double v = worst[std::size_t(y) * std::size_t(w) + std::size_t(x)];
      line[x] = table(top > 0.0 ? float(v / top) : 0.0f) | 0xff000000u;
    }
  }
  return out;
}

std::vector<int> curveSubset(int filters, int maxCurves) {
  std::vector<int> chosen;
  if (filters <= 0 || maxCurves <= 0) return chosen;
  if (filters <= maxCurves || maxCurves == 1) {
    const int count = std::min(filters, maxCurves);
    for (int i = 0; i < count; ++i) chosen.push_back(i);
    return chosen;
  }
  // Evenly spaced, first and last included, no repeats.
  for (int k = 0; k < maxCurves; ++k) {
    const int i = int(std::lround(double(k) * double(filters - 1) / double(maxCurves - 1)));
    if (chosen.empty() || chosen.back() != i) chosen.push_back(i);
  }
  return chosen;
}

FilterCurves filterCurves(const attn::glimpse::FilterBank& bank, int maxCurves) {
  FilterCurves out;
  out.filters = bank.n;
  const auto chosen = curveSubset(bank.n, maxCurves);
  out.subset = int(chosen.size()) < bank.n;
  bool any = false;
  for (int i : chosen) {
    if (std::size_t(i) >= bank.begin.size() || std::size_t(i) >= bank.length.size() ||
        std::size_t(i) >= bank.offset.size())
      break;
    FilterCurve curve;
    curve.filter = i;
    const int begin = bank.begin[std::size_t(i)];
    const int length = bank.length[std::size_t(i)];
    const int offset = bank.offset[std::size_t(i)];
    if (length <= 0 || offset < 0 || std::size_t(offset) + std::size_t(length) > bank.values.size()) {
      out.curves.push_back(std::move(curve));
      continue;
    }
    curve.keys.reserve(length);
    curve.values.reserve(length);
    for (int k = 0; k < length; ++k) {
      const double v = bank.values[std::size_t(offset + k)];
      curve.keys.push_back(double(begin + k));
      curve.values.push_back(std::isfinite(v) ? v : 0.0);
      out.peak = std::max(out.peak, std::isfinite(v) ? v : 0.0);
    }
    const double lo = begin;
    const double hi = begin + length - 1;
    out.lower = any ? std::min(out.lower, lo) : lo;
    out.upper = any ? std::max(out.upper, hi) : hi;
    any = true;
    out.curves.push_back(std::move(curve));
  }
  if (!any) {
    out.lower = 0.0;
    out.upper = std::max(1, bank.size - 1);
  }
  if (out.upper <= out.lower) out.upper = out.lower + 1.0;
  return out;
}

QString shortNumber(double value, int digits) {
  if (!std::isfinite(value)) return std::isnan(value) ? u"NaN"_s : (value > 0 ? u"\u221e"_s : u"\u2212\u221e"_s);
  QString text = QString::number(value, 'g', digits);
  if (text.startsWith(u'-')) text.replace(0, 1, u"\u2212"_s);
  return text;
}

QStringList clampDescriptions(const std::vector<attn::glimpse::Clamp>& clamps) {
  QStringList lines;
  for (const auto& clamp : clamps) {
    QString line = QString::fromStdString(clamp.parameter) + u" "_s + shortNumber(clamp.requested) + u" \u2192 "_s +
                   shortNumber(clamp.used);
    if (!clamp.reason.empty()) line += u" ("_s + QString::fromStdString(clamp.reason) + u")"_s;
    lines.append(line);
  }
  return lines;
}

}  // namespace attn::ui::render
