#include "render/heatmap_render.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace attn::ui::render {

ValueRange valueRange(const attn::Matrix& m, RangeMode mode) {
  if (mode == RangeMode::Unit || m.size() == 0) return {0.0, 1.0};
  double lo = 0.0;
  double hi = 0.0;
  bool any = false;
  // NaN cells are drawn transparent; they must not poison the range.
  for (Index i = 0; i < m.size(); ++i) {
    const float v = m.data()[i];
    if (!std::isfinite(v)) continue;
    lo = any ? std::min(lo, double(v)) : double(v);
    hi = any ? std::max(hi, double(v)) : double(v);
    any = true;
  }
  if (!any) return mode == RangeMode::Symmetric ? ValueRange{-1.0, 1.0} : ValueRange{0.0, 1.0};
  if (mode == RangeMode::Symmetric) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    return m > 0.0 ? ValueRange{-m, m} : ValueRange{-1.0, 1.0};
  }
  if (lo >= 0.0) lo = 0.0;  // weights: anchor the dark end at zero so colours mean the same across maps
  if (hi <= lo) hi = lo + 1.0;
  return {lo, hi};
}

bool isDistribution(const attn::Matrix& m) {
  if (m.size() == 0) return false;
  constexpr double kTolerance = 1e-3;
  Eigen::VectorXd rows = Eigen::VectorXd::Zero(m.rows()), cols = Eigen::VectorXd::Zero(m.cols());
  for (Index r = 0; r < m.rows(); ++r) {
    for (Index c = 0; c < m.cols(); ++c) {
      const float v = m(r, c);
      if (std::isnan(v)) continue;
      if (!(v >= -1e-6f && v <= 1.0f + 1e-4f)) return false;
      rows(r) += double(v);
      cols(c) += double(v);
    }
  }
  const auto ones = [&](const Eigen::VectorXd& sums) { return ((sums.array() - 1.0).abs() <= kTolerance).all(); };
  return ones(rows) || ones(cols);
}

QImage matrixImage(const attn::Matrix& m, Colormap map, ValueRange range) {
  QImage image(int(m.cols()), int(m.rows()), QImage::Format_ARGB32);
  const ColorTable& table = colorTable(map);
  const double span = range.upper - range.lower;
  const float lower = float(range.lower), scale = float(1.0 / span);
  for (int r = 0; r < image.height(); ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    for (int c = 0; c < image.width(); ++c) line[c] = table((m(r, c) - lower) * scale);
  }
  return image;
}

int labelStride(double pixelsPerCell, double minPixels) {
  if (!(pixelsPerCell > 0.0)) return 1 << 20;
  return std::max(1, int(std::ceil(minPixels / pixelsPerCell - 1e-9)));
}

QString tokenLabel(const std::string& token, int maxChars) {
  QString text = QString::fromUtf8(token.data(), qsizetype(token.size()));
  if (text.isEmpty()) return QStringLiteral("\u2205");
  text.replace(QLatin1Char('\n'), QStringLiteral("\u21b5"));
  text.replace(QLatin1Char('\t'), QStringLiteral("\u21e5"));
  // Spaces inside a label ("sentence 1") read normally; a token that is only whitespace (or carries it at
  // an end, as byte-level BPE tokens do) shows it, or it would look like an empty label.
  if (text.trimmed().isEmpty() || text.front().isSpace() || text.back().isSpace()) {
    text.replace(QLatin1Char(' '), QStringLiteral("\u2423"));
  }
  if (text.size() > maxChars) text = text.left(maxChars - 1) + QStringLiteral("\u2026");
  return text;
}

QString exactValue(float value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc()) return QString::number(double(value), 'g', 9);
  return QString::fromLatin1(buffer, end - buffer);
}

}  // namespace attn::ui::render
