// GlimpseCanvas's painting: the cached photo, each frame with its overlay (glimpses, grids, handles), PNG export.
#include "views/glimpse_canvas.h"

#include "views/glimpse_canvas_parts.h"
#include "render/glimpse_image.h"

#include <QElapsedTimer>
#include <QPainter>
#include <QPaintEngine>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace attn::ui {
namespace {

using attn::glimpse::GaussianGlimpse;
using attn::glimpse::Theta;
using glimpse_detail::finite;
using glimpse_detail::kHandleRadius;

constexpr double kMinLineSpacing = 6.0;  // screen pixels between drawn lattice lines
constexpr double kMinDotSpacing = 5.0;   // screen pixels between centre dots
constexpr int kMaxDots = 64 * 64;
constexpr int kMaxSigmaCircles = 16;  // per axis

const QColor kGaussianColour(255, 176, 32);
const QColor kStnColour(64, 210, 255);
const QColor kShadow(0, 0, 0, 150);

// A line drawn twice, dark underneath, so it reads on bright and dark photos alike.
void shadowedLine(QPainter& painter, QPointF a, QPointF b, const QColor& colour, double width) {
  if (!finite(a) || !finite(b)) return;
  painter.setPen(QPen(kShadow, width + 2.0, Qt::SolidLine, Qt::RoundCap));
  painter.drawLine(a, b);
  painter.setPen(QPen(colour, width, Qt::SolidLine, Qt::RoundCap));
  painter.drawLine(a, b);
}

void shadowedPolygon(QPainter& painter, const QPolygonF& polygon, const QColor& colour, double width,
                     Qt::PenStyle style = Qt::SolidLine) {
  for (const QPointF& p : polygon) {
    if (!finite(p)) return;
  }
  painter.setBrush(Qt::NoBrush);
  painter.setPen(QPen(kShadow, width + 2.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  painter.drawPolygon(polygon);
  QPen pen(colour, width, style, Qt::FlatCap, Qt::MiterJoin);
  painter.setPen(pen);
  painter.drawPolygon(polygon);
}

void handle(QPainter& painter, QPointF at, const QColor& colour, bool round) {
  if (!finite(at)) return;
  painter.setPen(QPen(QColor(0, 0, 0, 200), 1.5));
  painter.setBrush(colour);
  const QRectF box(at.x() - kHandleRadius, at.y() - kHandleRadius, 2 * kHandleRadius, 2 * kHandleRadius);
  if (round) {
    painter.drawEllipse(box);
  } else {
    painter.drawRect(box);
  }
}

// Every k-th of n indices so that neighbours are at least `minSpacing` apart at `spacing`; the last
// index is always included.
std::vector<int> thinned(int n, double spacing, double minSpacing) {
  std::vector<int> out;
  if (n <= 0) return out;
  int k = 1;
  if (spacing > 0.0 && finite(spacing) && spacing < minSpacing) k = int(std::ceil(minSpacing / spacing));
  if (!(spacing > 0.0)) k = std::max(1, n - 1);
  for (int i = 0; i < n; i += k) out.push_back(i);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

}  // namespace

namespace detail {

// Axis-aligned lines and rectangles written straight into an RGB32 image, alpha-blended, clipped.
class PixelOverlay {
 public:
  explicit PixelOverlay(QImage& image) : image_(image) {}

  void hline(double x0, double x1, double y, QColor colour, int width = 1, int dash = 0) {
    if (!finite(x0) || !finite(x1) || !finite(y)) return;
    if (x1 < x0) std::swap(x0, x1);
    const int top = int(std::floor(y - 0.5 * (width - 1)));
    for (int k = 0; k < width; ++k) span(int(std::floor(x0)), int(std::floor(x1)), top + k, colour, dash, true);
  }
  void vline(double x, double y0, double y1, QColor colour, int width = 1, int dash = 0) {
    if (!finite(x) || !finite(y0) || !finite(y1)) return;
    if (y1 < y0) std::swap(y0, y1);
    const int left = int(std::floor(x - 0.5 * (width - 1)));
    for (int k = 0; k < width; ++k) span(int(std::floor(y0)), int(std::floor(y1)), left + k, colour, dash, false);
  }
  // The outline of `r`, dark underneath when `shadow`.
  void rect(const QRectF& r, QColor colour, int width, int dash, bool shadow) {
    if (shadow) {
      rectOnce(r, kShadow, width + 2, 0);
    }
    rectOnce(r, colour, width, dash);
  }

 private:
  void rectOnce(const QRectF& r, QColor colour, int width, int dash) {
    hline(r.left(), r.right(), r.top(), colour, width, dash);
    hline(r.left(), r.right(), r.bottom(), colour, width, dash);
    vline(r.left(), r.top(), r.bottom(), colour, width, dash);
    vline(r.right(), r.top(), r.bottom(), colour, width, dash);
  }
  // Pixels [from, to] along a row (horizontal) or a column; dash > 0 draws dash on, dash off.
  void span(int from, int to, int at, QColor colour, int dash, bool horizontal) {
    const int limit = horizontal ? image_.width() : image_.height();
    const int across = horizontal ? image_.height() : image_.width();
    if (at < 0 || at >= across) return;
    const int phase = from;
    from = std::max(from, 0);
    to = std::min(to, limit - 1);
    if (from > to) return;
    const int a = colour.alpha();
    const int r = colour.red() * a, g = colour.green() * a, b = colour.blue() * a;
    const int keep = 255 - a;
    const qsizetype stride = image_.bytesPerLine() / 4;
    auto* bits = reinterpret_cast<QRgb*>(image_.bits());
    for (int i = from; i <= to; ++i) {
      if (dash > 0 && ((i - phase) / dash) % 2 == 1) continue;
      QRgb& d = horizontal ? bits[qsizetype(at) * stride + i] : bits[qsizetype(i) * stride + at];
      d = qRgb((qRed(d) * keep + r) / 255, (qGreen(d) * keep + g) / 255, (qBlue(d) * keep + b) / 255);
    }
  }

  QImage& image_;
};

}  // namespace detail

using detail::PixelOverlay;

void GlimpseCanvas::rebuildPixmapIfNeeded() {
  const QColor surround(46, 48, 52);
  const PixmapKey key{scale_, origin_, size(), image_ ? image_->serial : 0};
  if (key == pixmapKey_ && !background_.isNull() && background_.size() == size()) return;
  pixmapKey_ = key;
  background_ = QImage(std::max(1, width()), std::max(1, height()), QImage::Format_RGB32);
  background_.fill(surround);
  ++pixmapBuilds_;
  if (!image_ || image_->display.empty()) return;
  const double W = image_->width;
  const double H = image_->height;
  // The visible part, in image edge coordinates ([0, W] x [0, H]).
  const double x0 = std::clamp(-origin_.x() / scale_, 0.0, W);
  const double x1 = std::clamp((width() - origin_.x()) / scale_, 0.0, W);
  const double y0 = std::clamp(-origin_.y() / scale_, 0.0, H);
  const double y1 = std::clamp((height() - origin_.y()) / scale_, 0.0, H);
  if (x1 <= x0 || y1 <= y0) return;
  // The coarsest pyramid level that still has at least one pixel per screen pixel.
  int level = 0;
  while (level + 1 < int(image_->display.size()) && std::ldexp(1.0, level + 1) * scale_ <= 1.0) ++level;
  const QImage& source = image_->display[std::size_t(level)];
  if (source.isNull()) return;
  const double fx = double(source.width()) / W;
  const double fy = double(source.height()) / H;
  const int sx0 = std::clamp(int(std::floor(x0 * fx)), 0, source.width() - 1);
  const int sy0 = std::clamp(int(std::floor(y0 * fy)), 0, source.height() - 1);
  const int sx1 = std::clamp(int(std::ceil(x1 * fx)), sx0 + 1, source.width());
  const int sy1 = std::clamp(int(std::ceil(y1 * fy)), sy0 + 1, source.height());
  const QPointF topLeft(origin_.x() + sx0 / fx * scale_, origin_.y() + sy0 / fy * scale_);
  const QPointF bottomRight(origin_.x() + sx1 / fx * scale_, origin_.y() + sy1 / fy * scale_);
  const QSize target(std::max(1, int(std::lround(bottomRight.x() - topLeft.x()))),
                     std::max(1, int(std::lround(bottomRight.y() - topLeft.y()))));
  const QImage part = source.copy(QRect(sx0, sy0, sx1 - sx0, sy1 - sy0));
  // Magnified: crisp pixels; reduced: smooth, from a level at most 2x larger than the screen.
  const bool magnified = scale_ / fx >= 1.0;
  QPainter painter(&background_);
  painter.drawImage(
      QPointF(std::round(topLeft.x()), std::round(topLeft.y())),
      part.scaled(target, Qt::IgnoreAspectRatio, magnified ? Qt::FastTransformation : Qt::SmoothTransformation));
}

void GlimpseCanvas::paintEvent(QPaintEvent*) {
  QElapsedTimer timer;
  timer.start();
  rebuildPixmapIfNeeded();
  QPainter widgetPainter(this);
  // Exports (QWidget::render into SVG or PDF) get vector shapes; the screen gets the fast frame.
  const bool raster = widgetPainter.paintEngine() && widgetPainter.paintEngine()->type() == QPaintEngine::Raster;
  QImage* frame = nullptr;
  std::optional<QPainter> framePainter;
  std::optional<PixelOverlay> fast;
  if (raster) {
    frame_ = background_;
    frame_.detach();
    frame = &frame_;
    framePainter.emplace(frame);
    fast.emplace(frame_);
  } else {
    widgetPainter.drawImage(QPointF(0, 0), background_);
  }
  QPainter& painter = raster ? *framePainter : widgetPainter;
  if (image_) {
    painter.setRenderHint(QPainter::Antialiasing, true);
    paintOverlay(painter, mapping(), fast ? &*fast : nullptr);
    painter.setRenderHint(QPainter::Antialiasing, false);
    // The zoom, bottom left: a reminder that a 4096 px photo is shown at a fraction of its pixels.
    const QString zoomText = fitted_ ? tr("fit \u00b7 %1%").arg(scale_ * 100.0, 0, 'f', scale_ < 0.1 ? 1 : 0)
                                     : tr("%1%").arg(scale_ * 100.0, 0, 'f', scale_ < 0.1 ? 1 : 0);
    QString text = tr("%1 \u00d7 %2 px \u00b7 %3").arg(image_->width).arg(image_->height).arg(zoomText);
    // Say so when the lattice shows only every k-th line of a large grid.
    if (latticeLines_ > drawnLines_ && drawnLines_ > 0) {
      text += tr(" \u00b7 lattice: %1 of %2 lines").arg(drawnLines_).arg(latticeLines_);
    }
    const QFontMetrics metrics(font());
    const QRect box(6, height() - metrics.height() - 8, metrics.horizontalAdvance(text) + 10, metrics.height() + 4);
    painter.fillRect(box, QColor(0, 0, 0, 150));
    painter.setPen(QColor(235, 235, 235));
    painter.drawText(box, Qt::AlignCenter, text);
  } else {
    painter.setPen(QColor(200, 200, 200));
    painter.drawText(rect(), Qt::AlignCenter, tr("Open an image (Ctrl+Shift+O) or pick a sample photo"));
  }
  if (hasFocus()) {
    const QColor highlight = palette().color(QPalette::Highlight);
    if (fast) {
      fast->rect(QRectF(rect()).adjusted(0, 0, -1, -1), highlight, 2, 0, false);
    } else {
      painter.setPen(QPen(highlight, 2.0));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(QRectF(rect()).adjusted(1, 1, -1, -1));
    }
  }
  if (raster) {
    framePainter->end();
    widgetPainter.drawImage(QPointF(0, 0), frame_);
  }
  ++paintCount_;
  lastPaintMs_ = double(timer.nsecsElapsed()) / 1e6;
}

// ---- overlay ------------------------------------------------------------------------------------------

void GlimpseCanvas::paintOverlay(QPainter& painter, const Mapping& m, PixelOverlay* fast) const {
  drawnLines_ = 0;
  latticeLines_ = 0;
  if (settings_.same_window || effectiveTarget() == Target::Gaussian) {
    // Same window: the Gaussian's lattice is also where the STN samples; the STN draws its outline only.
    paintStn(painter, m, fast, false);
    paintGaussian(painter, m, fast, true);
  } else {
    paintGaussian(painter, m, fast, false);
    paintStn(painter, m, fast, true);
  }
}

void GlimpseCanvas::paintGaussian(QPainter& painter, const Mapping& m, PixelOverlay* fast, bool active) const {
  const GaussianGlimpse& g = geometry_.gaussian.glimpse;  // as the engine reads it
  const auto& ax = g.x;
  const auto& ay = g.y;
  const QColor colour =
      active ? kGaussianColour : QColor(kGaussianColour.red(), kGaussianColour.green(), kGaussianColour.blue(), 150);
  // Bounding box: the filter centres +/- half a stride.
  const QPointF boxTopLeft = m.map(ax.first - 0.5 * ax.stride, ay.first - 0.5 * ay.stride);
  const QPointF boxBottomRight = m.map(ax.last() + 0.5 * ax.stride, ay.last() + 0.5 * ay.stride);
  const QRectF box = QRectF(boxTopLeft, boxBottomRight).normalized();
  if (!active) {
    if (fast) {
      fast->rect(box, colour, 1, 5, true);
    } else {
      shadowedPolygon(painter, QPolygonF(box), colour, 1.2, Qt::DashLine);
    }
    return;
  }
  // +/- 2 sigma around the outer centres: where the filters take their pixels from.
  const QPointF extentTopLeft = m.map(ax.first - 2.0 * ax.sigma, ay.first - 2.0 * ay.sigma);
  const QPointF extentBottomRight = m.map(ax.last() + 2.0 * ax.sigma, ay.last() + 2.0 * ay.sigma);
  const QRectF extent = QRectF(extentTopLeft, extentBottomRight).normalized();
  if (fast) {
    fast->rect(extent, QColor(255, 230, 160, 220), 1, 5, true);
  } else {
    shadowedPolygon(painter, QPolygonF(extent), QColor(255, 230, 160, 200), 1.0, Qt::DashLine);
  }

  const double spacingX = std::abs(ax.stride) * m.scale;
  const double spacingY = std::abs(ay.stride) * m.scale;
  const bool dots = std::int64_t(ax.n) * ay.n <= kMaxDots && spacingX >= kMinDotSpacing && spacingY >= kMinDotSpacing;
  if (dots) {
    paintGaussianDots(painter, m, fast, g);
  } else {
    paintGaussianLattice(painter, m, fast, g);
  }

  if (fast) {
    fast->rect(box, kGaussianColour, 2, 0, true);
  } else {
    shadowedPolygon(painter, QPolygonF(box), kGaussianColour, 2.0);
  }

  // One sigma ellipse at the centre filter (the middle one; for an even N the one right of the middle).
  const int ci = ax.n / 2;
  const int cj = ay.n / 2;
  const QPointF centreFilter = m.map(ax.first + ci * ax.stride, ay.first + cj * ay.stride);
  if (finite(centreFilter)) {
    const double rx = std::max(1.0, ax.sigma * m.scale);
    const double ry = std::max(1.0, ay.sigma * m.scale);
    painter.setPen(QPen(kShadow, 3.0));
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(centreFilter, rx, ry);
    painter.setPen(QPen(QColor(255, 255, 255), 1.5));
    painter.setBrush(QColor(255, 176, 32, 60));
    painter.drawEllipse(centreFilter, rx, ry);
  }
  handle(painter, m.map(ax.centre(), ay.centre()), kGaussianColour, false);
}

// Few centres, far enough apart on screen: sigma circles (small grids only), faint lattice lines, then the
// centres as dots.
void GlimpseCanvas::paintGaussianDots(QPainter& painter, const Mapping& m, PixelOverlay* fast,
                                      const GaussianGlimpse& g) const {
  const auto& ax = g.x;
  const auto& ay = g.y;
  const double spacingX = std::abs(ax.stride) * m.scale;
  const double spacingY = std::abs(ay.stride) * m.scale;
  const QPointF first = m.map(ax.first, ay.first);
  const QPointF last = m.map(ax.last(), ay.last());
  if (ax.n <= kMaxSigmaCircles && ay.n <= kMaxSigmaCircles && ax.sigma * m.scale >= 2.0 && ay.sigma * m.scale >= 2.0) {
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(QColor(255, 255, 255, 70), 1.0));
    for (int j = 0; j < ay.n; ++j) {
      for (int i = 0; i < ax.n; ++i) {
        const QPointF c = m.map(ax.first + i * ax.stride, ay.first + j * ay.stride);
        painter.drawEllipse(c, ax.sigma * m.scale, ay.sigma * m.scale);
      }
    }
  }
  // Lattice lines, faint, then the centres as dots.
  const QColor faint(kGaussianColour.red(), kGaussianColour.green(), kGaussianColour.blue(), 90);
  painter.setPen(QPen(faint, 1.0));
  for (int i = 0; i < ax.n; ++i) {
    const double x = m.map(ax.first + i * ax.stride, 0).x();
    if (fast) {
      fast->vline(x, first.y(), last.y(), faint);
    } else {
      painter.drawLine(QPointF(x, first.y()), QPointF(x, last.y()));
    }
  }
  for (int j = 0; j < ay.n; ++j) {
    const double y = m.map(0, ay.first + j * ay.stride).y();
    if (fast) {
      fast->hline(first.x(), last.x(), y, faint);
    } else {
      painter.drawLine(QPointF(first.x(), y), QPointF(last.x(), y));
    }
  }
  drawnLines_ = ax.n;
  QPolygonF points;
  points.reserve(ax.n * ay.n);
  for (int j = 0; j < ay.n; ++j) {
    for (int i = 0; i < ax.n; ++i) points.append(m.map(ax.first + i * ax.stride, ay.first + j * ay.stride));
  }
  const double dot = std::clamp(std::min(spacingX, spacingY) * 0.22, 2.0, 5.0);
  painter.setPen(QPen(kShadow, dot + 2.0, Qt::SolidLine, Qt::RoundCap));
  painter.drawPoints(points);
  painter.setPen(QPen(kGaussianColour, dot, Qt::SolidLine, Qt::RoundCap));
  painter.drawPoints(points);
}

// Large grids: lattice lines through the centres, every k-th when they would crowd.
void GlimpseCanvas::paintGaussianLattice(QPainter& painter, const Mapping& m, PixelOverlay* fast,
                                         const GaussianGlimpse& g) const {
  const auto& ax = g.x;
  const auto& ay = g.y;
  const double spacingX = std::abs(ax.stride) * m.scale;
  const double spacingY = std::abs(ay.stride) * m.scale;
  const QPointF first = m.map(ax.first, ay.first);
  const QPointF last = m.map(ax.last(), ay.last());
  const QColor lineColour(kGaussianColour.red(), kGaussianColour.green(), kGaussianColour.blue(), 120);
  painter.setPen(QPen(lineColour, 1.0));
  const auto columns = thinned(ax.n, spacingX, kMinLineSpacing);
  const auto rows = thinned(ay.n, spacingY, kMinLineSpacing);
  latticeLines_ = ax.n;
  if (fast) {
    for (int i : columns) fast->vline(m.map(ax.first + i * ax.stride, 0).x(), first.y(), last.y(), lineColour);
    for (int j : rows) fast->hline(first.x(), last.x(), m.map(0, ay.first + j * ay.stride).y(), lineColour);
    drawnLines_ = int(columns.size());
  }
  QVector<QLineF> lines;
  lines.reserve(qsizetype(columns.size() + rows.size()));
  for (int i : columns) {
    const double x = m.map(ax.first + i * ax.stride, 0).x();
    lines.append(QLineF(x, first.y(), x, last.y()));
  }
  for (int j : rows) {
    const double y = m.map(0, ay.first + j * ay.stride).y();
    lines.append(QLineF(first.x(), y, last.x(), y));
  }
  if (!fast) {
    painter.drawLines(lines);
    drawnLines_ = int(columns.size());
  }
}

void GlimpseCanvas::paintStn(QPainter& painter, const Mapping& m, PixelOverlay* fast, bool active) const {
  const int w = imageWidth();
  const int h = imageHeight();
  const Theta& theta = geometry_.stn_theta;  // the window's in same-window mode
  const auto corners = attn::glimpse::window_corners(theta, w, h);
  // window_corners gives the outer edges in input pixel coordinates (pixel a's centre at a).
  QPolygonF window;
  for (const auto& c : corners) window.append(m.map(c.x, c.y));
  const QColor faint(kStnColour.red(), kStnColour.green(), kStnColour.blue(), 160);
  if (!active) {
    // Without rotation or shear the window is a rectangle: written straight into the frame.
    if (fast && std::abs(theta[1]) < 1e-12 && std::abs(theta[3]) < 1e-12) {
      fast->rect(QRectF(window[0], window[2]).normalized(), faint, 1, 5, true);
    } else {
      shadowedPolygon(painter, window, faint, 1.2, Qt::DashLine);
    }
    return;
  }
  const int ow = geometry_.stn_width;
  const int oh = geometry_.stn_height;
  const auto point = [&](int i, int j) {
    const auto p = attn::glimpse::sample_point(theta, i, j, ow, oh, w, h);
    return m.map(p.x, p.y);
  };
  // Screen spacing of neighbouring samples along a row and along a column.
  const QPointF origin = point(0, 0);
  const double alongRow = ow > 1 ? QLineF(origin, point(0, 1)).length() : 0.0;
  const double alongColumn = oh > 1 ? QLineF(origin, point(1, 0)).length() : 0.0;
  const auto rows = thinned(oh, alongColumn, kMinLineSpacing);
  const auto columns = thinned(ow, alongRow, kMinLineSpacing);
  QVector<QLineF> lines;
  lines.reserve(qsizetype(rows.size() + columns.size()));
  for (int i : rows) lines.append(QLineF(point(i, 0), point(i, ow - 1)));
  for (int j : columns) lines.append(QLineF(point(0, j), point(oh - 1, j)));
  bool ok = true;
  for (const auto& line : lines) ok = ok && finite(line.p1()) && finite(line.p2());
  if (ok) {
    painter.setPen(QPen(QColor(kStnColour.red(), kStnColour.green(), kStnColour.blue(), 140), 1.0));
    painter.drawLines(lines);
  }
  drawnLines_ = std::max(drawnLines_, int(columns.size()));
  if (std::int64_t(ow) * oh <= kMaxDots && alongRow >= kMinDotSpacing + 1 && alongColumn >= kMinDotSpacing + 1) {
    QPolygonF points;
    points.reserve(ow * oh);
    for (int i = 0; i < oh; ++i) {
      for (int j = 0; j < ow; ++j) points.append(point(i, j));
    }
    painter.setPen(QPen(kShadow, 5.0, Qt::SolidLine, Qt::RoundCap));
    painter.drawPoints(points);
    painter.setPen(QPen(kStnColour, 3.0, Qt::SolidLine, Qt::RoundCap));
    painter.drawPoints(points);
  }
  shadowedPolygon(painter, window, kStnColour, 2.0);
  // The output's top edge, thicker: shows which way up the glimpse comes out.
  if (window.size() == 4) shadowedLine(painter, window[0], window[1], QColor(255, 255, 255), 2.5);
  const auto centre = attn::glimpse::to_pixels(theta[2], theta[5], w, h);
  handle(painter, m.map(centre.x, centre.y), kStnColour, false);
  if (const auto rotation = rotationHandle()) {
    if (window.size() == 4) {
      const QPointF topMid = (window[0] + window[1]) / 2.0;
      shadowedLine(painter, topMid, *rotation, kStnColour, 1.5);
    }
    handle(painter, *rotation, kStnColour, true);
  }
}

QImage GlimpseCanvas::annotatedImage(int maxSide) const {
  if (!image_ || image_->display.empty()) return {};
  const double scale = std::min(1.0, double(maxSide) / std::max(image_->width, image_->height));
  const QSize size(std::max(1, int(std::lround(image_->width * scale))),
                   std::max(1, int(std::lround(image_->height * scale))));
  int level = 0;
  while (level + 1 < int(image_->display.size()) && std::ldexp(1.0, level + 1) * scale <= 1.0) ++level;
  QImage out = image_->display[std::size_t(level)].scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  out.convertTo(QImage::Format_RGB32);
  QPainter painter(&out);
  painter.setRenderHint(QPainter::Antialiasing, true);
  paintOverlay(painter, Mapping{scale, QPointF(0, 0)}, nullptr);
  painter.end();
  return out;
}

}  // namespace attn::ui
