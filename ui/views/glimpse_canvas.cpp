#include "views/glimpse_canvas.h"

#include "attn/glimpse/convert.h"
#include "views/glimpse_image.h"

#include <QElapsedTimer>
#include <QFocusEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPaintEngine>
#include <QPainterPath>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <numbers>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using attn::glimpse::Family;
using attn::glimpse::GaussianGlimpse;
using attn::glimpse::GlimpseSettings;
using attn::glimpse::Theta;

constexpr double kMinLineSpacing = 6.0;  // screen pixels between drawn lattice lines
constexpr double kMinDotSpacing = 5.0;   // screen pixels between centre dots
constexpr int kMaxDots = 64 * 64;
constexpr int kMaxSigmaCircles = 16;  // per axis
constexpr double kHandleRadius = 5.0;
constexpr double kRotationArm = 24.0;  // screen pixels from the window's top edge to the rotation handle
constexpr double kStepFactor = 1.1;    // one wheel notch or +/- key
// Around the fitted photo: room for a window that reaches a little past the edges (the DRAW default's
// bounding box is half a stride larger than the photo).
double fitMargin(QSize size) { return std::max(10.0, 0.05 * std::min(size.width(), size.height())); }

const QColor kGaussianColour(255, 176, 32);
const QColor kStnColour(64, 210, 255);
const QColor kShadow(0, 0, 0, 150);

bool finite(QPointF p) { return std::isfinite(p.x()) && std::isfinite(p.y()); }
bool finite(double v) { return std::isfinite(v); }

double wrapAngle(double a) {
  while (a > std::numbers::pi) a -= 2.0 * std::numbers::pi;
  while (a <= -std::numbers::pi) a += 2.0 * std::numbers::pi;
  return a;
}

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

GlimpseCanvas::GlimpseCanvas(QWidget* parent) : QWidget(parent) {
  setObjectName(u"glimpseCanvas"_s);
  setFocusPolicy(Qt::WheelFocus);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setCursor(Qt::OpenHandCursor);
  setToolTip(tr(
      "Drag: move the glimpse \u00b7 wheel: stride / scale \u00b7 Shift+wheel: sigma / rotation\n"
      "Arrows: nudge 1 px (Shift: 10) \u00b7 + / \u2212: zoom the glimpse \u00b7 [ / ]: sigma\n"
      "Ctrl+wheel: zoom the view \u00b7 middle or right drag: pan \u00b7 Home: fit \u00b7 double-click: centre here"));
  burstTimer_.setSingleShot(true);
  burstTimer_.setInterval(150);
  connect(&burstTimer_, &QTimer::timeout, this, [this] {
    if (drag_ == Drag::Move || drag_ == Drag::Rotate) return;  // the release ends that gesture
    emitEdit(false);
  });
}

GlimpseCanvas::~GlimpseCanvas() = default;

QSize GlimpseCanvas::sizeHint() const { return {640, 560}; }
QSize GlimpseCanvas::minimumSizeHint() const { return {240, 200}; }

int GlimpseCanvas::imageWidth() const { return image_ ? image_->width : 0; }
int GlimpseCanvas::imageHeight() const { return image_ ? image_->height : 0; }

void GlimpseCanvas::setImage(std::shared_ptr<const GlimpseImage> image) {
  image_ = std::move(image);
  background_ = {};
  pixmapKey_ = {};
  fitToWindow();
}

void GlimpseCanvas::setSettings(const GlimpseSettings& settings) {
  settings_ = settings;
  update();
}

void GlimpseCanvas::setTarget(Target target) {
  target_ = target;
  update();
}

GlimpseCanvas::Target GlimpseCanvas::effectiveTarget() const {
  return settings_.same_window ? Target::Gaussian : target_;
}

// ---- view ---------------------------------------------------------------------------------------------

void GlimpseCanvas::fitToWindow() {
  fitted_ = true;
  if (!image_ || image_->width <= 0 || image_->height <= 0) {
    update();
    return;
  }
  const double margin = fitMargin(size());
  const double w = std::max(1.0, width() - 2 * margin);
  const double h = std::max(1.0, height() - 2 * margin);
  scale_ = std::min(w / image_->width, h / image_->height);
  if (!(scale_ > 0.0) || !finite(scale_)) scale_ = 1.0;
  origin_ = QPointF((width() - image_->width * scale_) / 2.0, (height() - image_->height * scale_) / 2.0);
  update();
  emit viewChanged();
}

void GlimpseCanvas::zoomBy(double factor, QPointF anchor) {
  if (!image_ || !(factor > 0.0)) return;
  const double margin = fitMargin(size());
  const double fit = std::min(std::max(1.0, width() - 2 * margin) / image_->width,
                              std::max(1.0, height() - 2 * margin) / image_->height);
  const double next = std::clamp(scale_ * factor, std::min(fit, 1.0) * 0.5, 64.0);
  if (next == scale_) return;
  // Keep the image point under the anchor where it is.
  const QPointF edge = (anchor - origin_) / scale_;
  scale_ = next;
  origin_ = anchor - edge * scale_;
  fitted_ = false;
  update();
  emit viewChanged();
}

GlimpseCanvas::Mapping GlimpseCanvas::mapping() const { return Mapping{scale_, origin_}; }

QPointF GlimpseCanvas::toWidget(double x, double y) const { return mapping().map(x, y); }

QPointF GlimpseCanvas::toImage(QPointF widget) const {
  return {(widget.x() - origin_.x()) / scale_ - 0.5, (widget.y() - origin_.y()) / scale_ - 0.5};
}

void GlimpseCanvas::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (fitted_) fitToWindow();
}

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
  const auto sanitised = attn::glimpse::sanitise(settings_.gaussian, imageWidth(), imageHeight());
  const GaussianGlimpse& g = sanitised.glimpse;
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
  const QPointF first = m.map(ax.first, ay.first);
  const QPointF last = m.map(ax.last(), ay.last());
  const bool dots = std::int64_t(ax.n) * ay.n <= kMaxDots && spacingX >= kMinDotSpacing && spacingY >= kMinDotSpacing;
  if (dots) {
    if (ax.n <= kMaxSigmaCircles && ay.n <= kMaxSigmaCircles && ax.sigma * m.scale >= 2.0 &&
        ay.sigma * m.scale >= 2.0) {
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
  } else {
    // Large grids: lattice lines through the centres, every k-th when they would crowd.
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

Theta GlimpseCanvas::currentTheta() const {
  const int w = imageWidth();
  const int h = imageHeight();
  Theta theta = attn::glimpse::kIdentityTheta;
  if (settings_.same_window) {
    const auto sanitised = attn::glimpse::sanitise(settings_.gaussian, w, h);
    theta = attn::glimpse::theta_of(attn::glimpse::stn_of(sanitised.glimpse, w, h));
  } else {
    theta = settings_.stn.theta(w, h);
  }
  for (double t : theta) {
    if (!finite(t)) return attn::glimpse::kIdentityTheta;
  }
  return theta;
}

int GlimpseCanvas::stnOutWidth() const {
  if (settings_.same_window) return std::clamp(settings_.gaussian.x.n, 1, attn::glimpse::kMaxFilters);
  return settings_.stn.output_width();
}

int GlimpseCanvas::stnOutHeight() const {
  if (settings_.same_window) return std::clamp(settings_.gaussian.y.n, 1, attn::glimpse::kMaxFilters);
  return settings_.stn.output_height();
}

void GlimpseCanvas::paintStn(QPainter& painter, const Mapping& m, PixelOverlay* fast, bool active) const {
  const int w = imageWidth();
  const int h = imageHeight();
  const Theta theta = currentTheta();
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
  const int ow = stnOutWidth();
  const int oh = stnOutHeight();
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

QPointF GlimpseCanvas::centreHandle() const {
  const int w = imageWidth();
  const int h = imageHeight();
  if (effectiveTarget() == Target::Gaussian) {
    const auto g = attn::glimpse::sanitise(settings_.gaussian, w, h).glimpse;
    return toWidget(g.x.centre(), g.y.centre());
  }
  const Theta theta = currentTheta();
  const auto centre = attn::glimpse::to_pixels(theta[2], theta[5], w, h);
  return toWidget(centre.x, centre.y);
}

std::optional<QPointF> GlimpseCanvas::rotationHandle() const {
  if (!image_ || effectiveTarget() != Target::Stn || settings_.stn.family != Family::Similarity) return std::nullopt;
  const auto corners = attn::glimpse::window_corners(currentTheta(), imageWidth(), imageHeight());
  const QPointF a = toWidget(corners[0].x, corners[0].y);
  const QPointF b = toWidget(corners[1].x, corners[1].y);
  const QPointF topMid = (a + b) / 2.0;
  const QPointF centre = centreHandle();
  QPointF dir = topMid - centre;
  const double length = std::hypot(dir.x(), dir.y());
  dir = length > 1e-6 ? dir / length : QPointF(0, -1);
  const QPointF at = topMid + dir * kRotationArm;
  if (!finite(at)) return std::nullopt;
  return at;
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

// ---- interaction --------------------------------------------------------------------------------------

void GlimpseCanvas::emitEdit(bool dragging) {
  interacting_ = dragging;
  update();
  emit settingsEdited(settings_, dragging);
}

void GlimpseCanvas::burst() {
  burstTimer_.start();
  emitEdit(true);
}

void GlimpseCanvas::moveBy(double dx, double dy, const GlimpseSettings& from) {
  if (!finite(dx) || !finite(dy) || !image_) return;
  settings_ = from;
  if (effectiveTarget() == Target::Gaussian) {
    auto& g = settings_.gaussian;
    // A non-finite position would stay non-finite: start from what the engine uses.
    if (!finite(g.x.first) || !finite(g.y.first)) g = attn::glimpse::sanitise(g, imageWidth(), imageHeight()).glimpse;
    g.x.first += dx;
    g.y.first += dy;
    return;
  }
  // theta's translation is the window centre in normalised units: 2 / W per pixel.
  const double tx = 2.0 * dx / imageWidth();
  const double ty = 2.0 * dy / imageHeight();
  auto& stn = settings_.stn;
  switch (stn.family) {
    case Family::NoShear:
      stn.no_shear.shift_x += tx;
      stn.no_shear.shift_y += ty;
      break;
    case Family::Similarity:
      stn.similarity.shift_x += tx;
      stn.similarity.shift_y += ty;
      break;
    case Family::TranslationScale:
      stn.translation_scale.shift_x += tx;
      stn.translation_scale.shift_y += ty;
      break;
    case Family::Affine:
      stn.affine[2] += tx;
      stn.affine[5] += ty;
      break;
  }
}

void GlimpseCanvas::scaleBy(double factor) {
  if (!image_ || !(factor > 0.0)) return;
  if (effectiveTarget() == Target::Gaussian) {
    auto& g = settings_.gaussian;
    const auto used = attn::glimpse::sanitise(g, imageWidth(), imageHeight()).glimpse;
    for (auto [axis, base] : {std::pair{&g.x, used.x}, std::pair{&g.y, used.y}}) {
      const double centre = base.centre();
      axis->n = base.n;
      axis->stride = std::max(base.stride * factor, attn::glimpse::kMinStride);
      axis->first = centre - 0.5 * (axis->n - 1) * axis->stride;
    }
    return;
  }
  auto& stn = settings_.stn;
  switch (stn.family) {
    case Family::NoShear:
      stn.no_shear.scale_x *= factor;
      stn.no_shear.scale_y *= factor;
      break;
    case Family::Similarity: stn.similarity.scale *= factor; break;
    case Family::TranslationScale: stn.translation_scale.scale *= factor; break;
    case Family::Affine:
      for (int k : {0, 1, 3, 4}) stn.affine[std::size_t(k)] *= factor;
      break;
  }
}

void GlimpseCanvas::sigmaBy(double factor) {
  if (!image_ || !(factor > 0.0)) return;
  auto& g = settings_.gaussian;
  const auto used = attn::glimpse::sanitise(g, imageWidth(), imageHeight()).glimpse;
  g.x.sigma = std::max(used.x.sigma * factor, attn::glimpse::kMinSigma);
  g.y.sigma = std::max(used.y.sigma * factor, attn::glimpse::kMinSigma);
}

double GlimpseCanvas::rotationSign() const {
  // How much the handle turns on screen per radian of the family's rotation parameter: the engine's
  // convention decides, not a guess about the sign of y.
  const int w = imageWidth();
  const int h = imageHeight();
  auto stn = settings_.stn;
  const auto handleAngle = [&](double rotation) {
    stn.similarity.rotation = rotation;
    const auto theta = attn::glimpse::theta_of(stn.similarity, w, h);
    const auto c = attn::glimpse::window_corners(theta, w, h);
    const auto centre = attn::glimpse::to_pixels(theta[2], theta[5], w, h);
    return std::atan2((c[0].y + c[1].y) / 2.0 - centre.y, (c[0].x + c[1].x) / 2.0 - centre.x);
  };
  const double r = settings_.stn.similarity.rotation;
  const double turned = wrapAngle(handleAngle(r + 0.01) - handleAngle(r));
  const double gain = 0.01 / turned;
  if (!finite(gain) || std::abs(gain) > 100.0 || std::abs(gain) < 0.01) return 1.0;
  return gain;
}

void GlimpseCanvas::rotateBy(double screenRadians) {
  if (!image_ || effectiveTarget() != Target::Stn || settings_.stn.family != Family::Similarity) return;
  double& rotation = settings_.stn.similarity.rotation;
  if (!finite(rotation)) rotation = 0.0;
  rotation = wrapAngle(rotation + screenRadians * rotationSign());
}

void GlimpseCanvas::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  pressPos_ = event->position();
  pressSettings_ = settings_;
  if (event->button() == Qt::MiddleButton || event->button() == Qt::RightButton) {
    drag_ = Drag::Pan;
    setCursor(Qt::SizeAllCursor);
    event->accept();
    return;
  }
  if (event->button() != Qt::LeftButton || !image_) {
    QWidget::mousePressEvent(event);
    return;
  }
  const auto rotation = rotationHandle();
  if (rotation && QLineF(*rotation, event->position()).length() <= kHandleRadius + 4.0) {
    drag_ = Drag::Rotate;
    const QPointF c = centreHandle();
    lastAngle_ = std::atan2(event->position().y() - c.y(), event->position().x() - c.x());
    rotationGain_ = rotationSign();
  } else {
    drag_ = Drag::Move;
    setCursor(Qt::ClosedHandCursor);
  }
  burstTimer_.stop();
  interacting_ = true;
  event->accept();
}

void GlimpseCanvas::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pos = event->position();
  switch (drag_) {
    case Drag::None: {
      const auto rotation = rotationHandle();
      setCursor(rotation && QLineF(*rotation, pos).length() <= kHandleRadius + 4.0 ? Qt::PointingHandCursor
                                                                                   : Qt::OpenHandCursor);
      return;
    }
    case Drag::Pan: {
      origin_ += pos - pressPos_;
      pressPos_ = pos;
      fitted_ = false;
      update();
      emit viewChanged();
      return;
    }
    case Drag::Move: {
      const QPointF delta = (pos - pressPos_) / scale_;
      moveBy(delta.x(), delta.y(), pressSettings_);
      emitEdit(true);
      return;
    }
    case Drag::Rotate: {
      const QPointF c = centreHandle();
      const double angle = std::atan2(pos.y() - c.y(), pos.x() - c.x());
      const double turned = wrapAngle(angle - lastAngle_);
      lastAngle_ = angle;
      double& rotation = settings_.stn.similarity.rotation;
      if (!finite(rotation)) rotation = 0.0;
      rotation = wrapAngle(rotation + turned * rotationGain_);
      emitEdit(true);
      return;
    }
  }
}

void GlimpseCanvas::mouseReleaseEvent(QMouseEvent* event) {
  const Drag was = drag_;
  drag_ = Drag::None;
  setCursor(Qt::OpenHandCursor);
  if (was == Drag::Move || was == Drag::Rotate) {
    emitEdit(false);  // the exact glimpse for where the drag ended
    event->accept();
    return;
  }
  QWidget::mouseReleaseEvent(event);
}

void GlimpseCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !image_) return;
  // Centre the glimpse on the point.
  const QPointF target = toImage(event->position());
  const QPointF centre = toImage(centreHandle());
  moveBy(target.x() - centre.x(), target.y() - centre.y(), settings_);
  drag_ = Drag::None;
  emitEdit(false);
}

void GlimpseCanvas::wheelEvent(QWheelEvent* event) {
  if (!image_) return;
  const QPoint angle = event->angleDelta();
  // Some platforms turn Shift+wheel into a horizontal wheel.
  const double steps = double(angle.y() != 0 ? angle.y() : angle.x()) / 120.0;
  if (steps == 0.0) return;
  event->accept();
  const auto modifiers = event->modifiers();
  if (modifiers & Qt::ControlModifier) {
    zoomBy(std::pow(1.25, steps), event->position());
    return;
  }
  if (modifiers & Qt::ShiftModifier) {
    if (effectiveTarget() == Target::Gaussian) {
      sigmaBy(std::pow(kStepFactor, -steps));  // up: sharper
    } else if (settings_.stn.family == Family::Similarity) {
      rotateBy(steps * 5.0 * std::numbers::pi / 180.0);
    } else {
      return;
    }
  } else {
    scaleBy(std::pow(kStepFactor, -steps));  // up: a smaller window, as a zoom in
  }
  burst();
}

void GlimpseCanvas::keyPressEvent(QKeyEvent* event) {
  if (!image_) {
    QWidget::keyPressEvent(event);
    return;
  }
  const bool shift = event->modifiers() & Qt::ShiftModifier;
  const double step = shift ? 10.0 : 1.0;
  switch (event->key()) {
    case Qt::Key_Left: moveBy(-step, 0, settings_); break;
    case Qt::Key_Right: moveBy(step, 0, settings_); break;
    case Qt::Key_Up: moveBy(0, -step, settings_); break;
    case Qt::Key_Down: moveBy(0, step, settings_); break;
    case Qt::Key_Plus:
    case Qt::Key_Equal: scaleBy(1.0 / kStepFactor); break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore: scaleBy(kStepFactor); break;
    case Qt::Key_BracketLeft:
      if (effectiveTarget() != Target::Gaussian) return;
      sigmaBy(1.0 / kStepFactor);
      break;
    case Qt::Key_BracketRight:
      if (effectiveTarget() != Target::Gaussian) return;
      sigmaBy(kStepFactor);
      break;
    case Qt::Key_Comma:
    case Qt::Key_Less: rotateBy(-(shift ? 10.0 : 1.0) * std::numbers::pi / 180.0); break;
    case Qt::Key_Period:
    case Qt::Key_Greater: rotateBy((shift ? 10.0 : 1.0) * std::numbers::pi / 180.0); break;
    case Qt::Key_Home:
      fitToWindow();
      event->accept();
      return;
    default: QWidget::keyPressEvent(event); return;
  }
  event->accept();
  burst();
}

void GlimpseCanvas::focusInEvent(QFocusEvent* event) {
  QWidget::focusInEvent(event);
  update();
}

void GlimpseCanvas::focusOutEvent(QFocusEvent* event) {
  QWidget::focusOutEvent(event);
  update();
}

}  // namespace attn::ui
