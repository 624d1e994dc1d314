// GlimpseCanvas: the view (fit, zoom, pan), the handles and the edit gestures; painting is in glimpse_canvas_paint.cpp.
#include "views/glimpse_canvas.h"

#include "views/glimpse_canvas_parts.h"
#include "render/glimpse_image.h"

#include <QFocusEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <numbers>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using StnFamily = attn::glimpse::Family;
using attn::glimpse::GlimpseSettings;
using attn::glimpse::Theta;

using glimpse_detail::finite;
using glimpse_detail::kHandleRadius;

constexpr double kRotationArm = 24.0;  // screen pixels from the window's top edge to the rotation handle
constexpr double kStepFactor = 1.1;    // one wheel notch or +/- key
// Around the fitted photo: room for a window that reaches a little past the edges (the DRAW default's
// bounding box is half a stride larger than the photo).
double fitMargin(QSize size) { return std::max(10.0, 0.05 * std::min(size.width(), size.height())); }

double wrapAngle(double a) {
  while (a > std::numbers::pi) a -= 2.0 * std::numbers::pi;
  while (a <= -std::numbers::pi) a += 2.0 * std::numbers::pi;
  return a;
}

}  // namespace

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

void GlimpseCanvas::setSettings(const GlimpseSettings& settings, const attn::glimpse::ResolvedGlimpse& geometry) {
  settings_ = settings;
  geometry_ = geometry;
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

QPointF GlimpseCanvas::centreHandle() const {
  const int w = imageWidth();
  const int h = imageHeight();
  if (effectiveTarget() == Target::Gaussian) {
    const auto& g = geometry_.gaussian.glimpse;
    return toWidget(g.x.centre(), g.y.centre());
  }
  const Theta& theta = geometry_.stn_theta;
  const auto centre = attn::glimpse::to_pixels(theta[2], theta[5], w, h);
  return toWidget(centre.x, centre.y);
}

std::optional<QPointF> GlimpseCanvas::rotationHandle() const {
  if (!image_ || effectiveTarget() != Target::Stn || settings_.stn.family != StnFamily::Similarity) return std::nullopt;
  const auto corners = attn::glimpse::window_corners(geometry_.stn_theta, imageWidth(), imageHeight());
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

void GlimpseCanvas::moveBy(double dx, double dy, const GlimpseSettings& from,
                           const attn::glimpse::ResolvedGlimpse& fromGeometry) {
  if (!finite(dx) || !finite(dy) || !image_) return;
  settings_ = from;
  if (effectiveTarget() == Target::Gaussian) {
    auto& g = settings_.gaussian;
    // A non-finite position would stay non-finite: start from what the engine uses.
    if (!finite(g.x.first) || !finite(g.y.first)) g = fromGeometry.gaussian.glimpse;
    g.x.first += dx;
    g.y.first += dy;
    return;
  }
  // theta's translation is the window centre in normalised units: 2 / W per pixel.
  const double tx = 2.0 * dx / imageWidth();
  const double ty = 2.0 * dy / imageHeight();
  auto& stn = settings_.stn;
  switch (stn.family) {
    case StnFamily::NoShear:
      stn.no_shear.shift_x += tx;
      stn.no_shear.shift_y += ty;
      break;
    case StnFamily::Similarity:
      stn.similarity.shift_x += tx;
      stn.similarity.shift_y += ty;
      break;
    case StnFamily::TranslationScale:
      stn.translation_scale.shift_x += tx;
      stn.translation_scale.shift_y += ty;
      break;
    case StnFamily::Affine:
      stn.affine[2] += tx;
      stn.affine[5] += ty;
      break;
  }
}

void GlimpseCanvas::scaleBy(double factor) {
  if (!image_ || !(factor > 0.0)) return;
  if (effectiveTarget() == Target::Gaussian) {
    auto& g = settings_.gaussian;
    const auto& used = geometry_.gaussian.glimpse;  // start from what the engine uses
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
    case StnFamily::NoShear:
      stn.no_shear.scale_x *= factor;
      stn.no_shear.scale_y *= factor;
      break;
    case StnFamily::Similarity: stn.similarity.scale *= factor; break;
    case StnFamily::TranslationScale: stn.translation_scale.scale *= factor; break;
    case StnFamily::Affine:
      for (int k : {0, 1, 3, 4}) stn.affine[std::size_t(k)] *= factor;
      break;
  }
}

void GlimpseCanvas::sigmaBy(double factor) {
  if (!image_ || !(factor > 0.0)) return;
  auto& g = settings_.gaussian;
  const auto& used = geometry_.gaussian.glimpse;  // start from what the engine uses
  g.x.sigma = std::max(used.x.sigma * factor, attn::glimpse::kMinSigma);
  g.y.sigma = std::max(used.y.sigma * factor, attn::glimpse::kMinSigma);
}

double GlimpseCanvas::rotationSign() const {
  // How much the handle turns on screen per radian of the family's rotation parameter: the engine's
  // convention decides, not a guess about the sign of y.
  const int w = imageWidth();
  const int h = imageHeight();
  auto stn = settings_.stn;
  stn.family = StnFamily::Similarity;
  const auto handleAngle = [&](double rotation) {
    stn.similarity.rotation = rotation;
    const auto theta = stn.theta(w, h);  // a probe of the family's theta, not the settings' geometry
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
  if (!image_ || effectiveTarget() != Target::Stn || settings_.stn.family != StnFamily::Similarity) return;
  double& rotation = settings_.stn.similarity.rotation;
  if (!finite(rotation)) rotation = 0.0;
  rotation = wrapAngle(rotation + screenRadians * rotationSign());
}

void GlimpseCanvas::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  pressPos_ = event->position();
  pressSettings_ = settings_;
  pressGeometry_ = geometry_;
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
      moveBy(delta.x(), delta.y(), pressSettings_, pressGeometry_);
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
  moveBy(target.x() - centre.x(), target.y() - centre.y(), settings_, geometry_);
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
    } else if (settings_.stn.family == StnFamily::Similarity) {
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
    case Qt::Key_Left: moveBy(-step, 0, settings_, geometry_); break;
    case Qt::Key_Right: moveBy(step, 0, settings_, geometry_); break;
    case Qt::Key_Up: moveBy(0, -step, settings_, geometry_); break;
    case Qt::Key_Down: moveBy(0, step, settings_, geometry_); break;
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
