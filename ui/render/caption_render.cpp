#include "render/caption_render.h"

#include "attn/vision/overlay.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui::render {
namespace {

constexpr int kTutorialUpscale = 24;
constexpr int kMaxMapSide = 384;
constexpr int kDisplayMin = 384;
constexpr int kDisplayMax = 768;

}  // namespace

int captionUpscale(int grid) {
  if (grid <= 0) return kTutorialUpscale;
  return std::clamp(kMaxMapSide / grid, 1, kTutorialUpscale);
}

attn::Matrix smoothedAlpha(std::span<const float> alpha, int grid, double sigma) {
  if (grid <= 0 || alpha.size() != std::size_t(grid) * std::size_t(grid)) return {};
  const Eigen::Map<const attn::Matrix> cells(alpha.data(), grid, grid);  // row-major cells, as alpha
  const int upscale = captionUpscale(grid);
  return attn::upsample_smooth(cells, grid * upscale, grid * upscale,
                               float(std::max(0.0, sigma) * double(upscale) / double(kTutorialUpscale)));
}

std::vector<float> alphaCoverage(const attn::Matrix& alpha) {
  std::vector<float> out(std::size_t(alpha.cols()), 0.0f);
  for (Index c = 0; c < alpha.cols(); ++c) out[std::size_t(c)] = alpha.col(c).sum();
  return out;
}

std::vector<float> alphaEntropy(const attn::Matrix& alpha) {
  std::vector<float> out(std::size_t(alpha.rows()), 0.0f);
  for (Index r = 0; r < alpha.rows(); ++r) {
    double h = 0.0;
    for (Index c = 0; c < alpha.cols(); ++c) {
      const double p = alpha(r, c);
      if (p > 0.0) h -= p * std::log(p);
    }
    out[std::size_t(r)] = float(h);
  }
  return out;
}

QImage alphaLayer(const attn::Matrix& map, const CaptionOverlayOptions& options) {
  if (map.size() == 0) return {};
  QImage layer(int(map.cols()), int(map.rows()), QImage::Format_ARGB32_Premultiplied);
  const float peak = map.maxCoeff();
  const float scale = peak > 0.0f ? 1.0f / peak : 0.0f;
  const double opacity = std::clamp(options.opacity, 0.0, 1.0);
  const double threshold = std::clamp(options.threshold, 0.0, 1.0);
  const ColorTable& table = colorTable(options.colormap);
  for (int y = 0; y < layer.height(); ++y) {
    auto* line = reinterpret_cast<QRgb*>(layer.scanLine(y));
    for (int x = 0; x < layer.width(); ++x) {
      const double t = std::clamp(double(map(y, x) * scale), 0.0, 1.0);
      if (options.mode == CaptionOverlayMode::LightMask) {
        // Black over the image, opaque where α is low: what the model looked at stays lit. The threshold
        // moves where the light starts (t rescaled from it), so the mask has no edge.
        const double lit = threshold < 1.0 ? std::max(0.0, (t - threshold) / (1.0 - threshold)) : 0.0;
        const double a = opacity * (1.0 - lit);
        line[x] = qPremultiply(qRgba(0, 0, 0, int(std::lround(255.0 * a))));
      } else if (t < threshold) {
        line[x] = 0;
      } else {
        // Opacity grows with the value: the faintly attended parts keep the picture visible.
        const QRgb c = table(float(t));
        line[x] = qPremultiply(qRgba(qRed(c), qGreen(c), qBlue(c), int(std::lround(255.0 * opacity * t))));
      }
    }
  }
  return layer;
}

QImage composeOverlay(const QImage& photo, const QImage& layer, int outlineCell, int grid) {
  if (photo.isNull()) return {};
  QImage out = photo.convertToFormat(QImage::Format_RGB32);
  QPainter painter(&out);
  painter.setRenderHint(QPainter::SmoothPixmapTransform);
  if (!layer.isNull()) painter.drawImage(QRectF(out.rect()), layer);
  if (outlineCell >= 0 && grid > 0 && outlineCell < grid * grid) {
    const double w = double(out.width()) / grid, h = double(out.height()) / grid;
    const QRectF cell((outlineCell % grid) * w, (outlineCell / grid) * h, w, h);
    const double pen = std::max(2.0, out.width() / 160.0);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(QColor(0, 0, 0, 170), pen + 2.0));
    painter.drawRect(cell.adjusted(pen / 2, pen / 2, -pen / 2, -pen / 2));
    painter.setPen(QPen(QColor(0x00, 0xe5, 0xff), pen));
    painter.drawRect(cell.adjusted(pen / 2, pen / 2, -pen / 2, -pen / 2));
  }
  painter.end();
  return out;
}

QImage captionDisplayImage(const QImage& image) {
  if (image.isNull()) return {};
  const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
  const int longer = std::max(rgb.width(), rgb.height());
  if (longer < kDisplayMin) {
    const int factor = (kDisplayMin + longer - 1) / longer;
    return rgb.scaled(rgb.size() * factor, Qt::IgnoreAspectRatio, Qt::FastTransformation);
  }
  if (longer > kDisplayMax) return rgb.scaled(kDisplayMax, kDisplayMax, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  return rgb;
}

namespace {

struct GridGeometry {
  int columns = 1;
  int rows = 0;
  double cellWidth = 0, imageHeight = 0, titleHeight = 0, headingHeight = 0;
  static constexpr double kMargin = 16, kGap = 12;
};

GridGeometry gridGeometry(const CaptionGridFigure& figure, const QFont& font) {
  GridGeometry g;
  const int count = int(figure.cells.size());
  g.columns = std::clamp(figure.perRow, 1, std::max(1, count));
  g.rows = (count + g.columns - 1) / g.columns;
  g.cellWidth = std::max(32, figure.cellWidth);
  const QImage& first = figure.cells.empty() ? QImage() : figure.cells.front().image;
  g.imageHeight = first.isNull() || first.width() == 0 ? g.cellWidth : g.cellWidth * first.height() / first.width();
  QFont title = font;
  title.setPointSizeF(font.pointSizeF() * 1.2);
  g.titleHeight = QFontMetricsF(title).height() + 6;
  QFont heading = font;
  heading.setBold(true);
  const double width = g.columns * g.cellWidth + (g.columns - 1) * g.kGap;
  g.headingHeight = figure.heading.isEmpty() ? 0.0
                                             : QFontMetricsF(heading)
                                                       .boundingRect(QRectF(0, 0, width, 1e6),
                                                                     Qt::AlignLeft | Qt::TextWordWrap, figure.heading)
                                                       .height() +
                                                   QFontMetricsF(heading).height() * 0.5;
  return g;
}

}  // namespace

QSize captionGridSize(const CaptionGridFigure& figure, const QFont& font) {
  const GridGeometry g = gridGeometry(figure, font);
  const double width = 2 * g.kMargin + g.columns * g.cellWidth + (g.columns - 1) * g.kGap;
  const double height =
      2 * g.kMargin + g.headingHeight + g.rows * (g.titleHeight + g.imageHeight) + std::max(0, g.rows - 1) * g.kGap;
  return QSize(int(std::ceil(width)), int(std::ceil(height)));
}

void paintCaptionGrid(QPainter& painter, const CaptionGridFigure& figure, const QFont& font) {
  const GridGeometry g = gridGeometry(figure, font);
  const QSize size = captionGridSize(figure, font);
  painter.save();
  painter.fillRect(QRect(QPoint(), size), Qt::white);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  painter.setRenderHint(QPainter::SmoothPixmapTransform);
  const QColor ink(0x20, 0x20, 0x20);
  if (!figure.heading.isEmpty()) {
    QFont heading = font;
    heading.setBold(true);
    painter.setFont(heading);
    painter.setPen(ink);
    painter.drawText(QRectF(g.kMargin, g.kMargin, size.width() - 2 * g.kMargin, g.headingHeight),
                     Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, figure.heading);
  }
  QFont title = font;
  title.setPointSizeF(font.pointSizeF() * 1.2);
  painter.setFont(title);
  for (std::size_t i = 0; i < figure.cells.size(); ++i) {
    const int row = int(i) / g.columns, column = int(i) % g.columns;
    const double x = g.kMargin + column * (g.cellWidth + g.kGap);
    const double y = g.kMargin + g.headingHeight + row * (g.titleHeight + g.imageHeight + g.kGap);
    painter.setPen(ink);
    painter.drawText(QRectF(x, y, g.cellWidth, g.titleHeight), Qt::AlignLeft | Qt::AlignVCenter, figure.cells[i].title);
    const QRectF target(x, y + g.titleHeight, g.cellWidth, g.imageHeight);
    painter.drawImage(target, figure.cells[i].image);
  }
  painter.restore();
}

}  // namespace attn::ui::render
