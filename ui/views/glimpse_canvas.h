// GlimpseCanvas: the photo with a glimpse drawn on it, and the handles that move it.
//
// The photo is shown fitted (or zoomed with Ctrl+wheel, panned with the middle or right button) from a
// cached pixmap of exactly the visible part, rebuilt only when the view changes (resize, zoom, pan),
// from the pyramid level nearest the display size, so a 4096 x 4096 photo is never rescaled per frame.
// Each paint copies that cached background into a frame image and draws the axis-aligned parts of the
// overlay (lattice, boxes, extents) straight into its pixels: Qt 6's raster engine hands every fill of
// more than 96 spans to a thread pool and waits for it, and a vertical line is one span per row, so 64
// lattice lines cost 70 such hand-offs (15 ms a frame on a busy 2-core machine); written directly they
// cost 0.1 ms. Exports to SVG/PDF draw the same overlay as vector shapes.
// On top of it, in image pixels mapped to the widget:
//  - a Gaussian glimpse: the bounding box of its filter centres (+/- half a stride), the +/- 2 sigma extent
//    (dashed), the centres as dots with sigma circles for small grids or as lattice lines for large ones
//    (every k-th line when they would be closer than 6 screen pixels, and the canvas says so), and one sigma ellipse at
//    the centre filter;
//  - an STN glimpse: the sampled window (attn::glimpse::window_corners) and its warped sampling grid
//    (attn::glimpse::sample_point), thinned the same way, with a rotation handle for the similarity family.
// Interaction on the glimpse being edited: left-drag moves it, the wheel changes the stride (Gaussian) or
// the scale (STN), Shift+wheel the sigma (Gaussian) or the rotation (similarity STN), the rotation handle
// turns a similarity STN, arrow keys nudge by one image pixel (Shift: 10), +/- change stride or scale,
// [ / ] sigma, Home fits the view. Every edit emits settingsEdited with `dragging` true while the gesture
// lasts (a wheel or key burst counts as one until it pauses for 150 ms), then once more with false.
// All geometry comes from the engine: the glimpses as the settings resolve (attn::glimpse::resolve, handed
// in with the settings: the sanitised Gaussian, the STN's theta and output size), window_corners and
// sample_point. The canvas does no glimpse maths of its own beyond moving the numbers the user moves.
#pragma once

#include "attn/glimpse/resolve.h"
#include "attn/glimpse/settings.h"

#include <QImage>
#include <QPointF>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QPainter;

namespace attn::ui::detail {
class PixelOverlay;
}

namespace attn::ui {

struct GlimpseImage;

class GlimpseCanvas : public QWidget {
  Q_OBJECT

 public:
  enum class Target { Gaussian, Stn };

  explicit GlimpseCanvas(QWidget* parent = nullptr);
  ~GlimpseCanvas() override;

  // The photo (its size and display levels). Keeps the settings; refits the view.
  void setImage(std::shared_ptr<const GlimpseImage> image);
  const GlimpseImage* image() const { return image_.get(); }
  int imageWidth() const;
  int imageHeight() const;

  // Sets what is drawn: the settings and what they resolve to for this image (attn::glimpse::resolve). Emits
  // nothing. The gestures start from `geometry`, so the owner hands it back after every settingsEdited.
  void setSettings(const attn::glimpse::GlimpseSettings& settings, const attn::glimpse::ResolvedGlimpse& geometry);
  const attn::glimpse::GlimpseSettings& settings() const { return settings_; }
  const attn::glimpse::ResolvedGlimpse& geometry() const { return geometry_; }
  // Which glimpse the handles edit (the other is drawn as an outline). Same-window mode edits the Gaussian.
  void setTarget(Target target);
  Target target() const { return target_; }
  Target effectiveTarget() const;

  // View: fitted by default; zoom is widget pixels per image pixel.
  void fitToWindow();
  bool isFitted() const { return fitted_; }
  double zoom() const { return scale_; }
  void zoomBy(double factor, QPointF anchor);
  // Image pixel coordinates (engine convention: pixel a has its centre at a) <-> widget coordinates.
  QPointF toWidget(double x, double y) const;
  QPointF toImage(QPointF widget) const;

  // True between the press and the release of a drag (or during a wheel/key burst).
  bool isInteracting() const { return interacting_; }
  // Where the handles are, in widget coordinates (tests press here).
  QPointF centreHandle() const;
  // The similarity STN's rotation handle; null point when there is none.
  std::optional<QPointF> rotationHandle() const;

  // The photo with the overlay at `maxSide` pixels on its longer side at most (PNG export).
  QImage annotatedImage(int maxSide = 4096) const;

  // Painting bookkeeping for benchmarks and tests.
  quint64 paintCount() const { return paintCount_; }
  double lastPaintMs() const { return lastPaintMs_; }
  // How many times the cached display pixmap was rebuilt (it must not be per frame).
  int pixmapBuilds() const { return pixmapBuilds_; }
  // How many lattice lines / grid lines the last paint drew per axis (thinned for large N).
  int drawnLatticeLines() const { return drawnLines_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void settingsEdited(const attn::glimpse::GlimpseSettings& settings, bool dragging);
  void viewChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;

 private:
  enum class Drag { None, Move, Rotate, Pan };
  struct Mapping {  // image pixels -> target pixels: (p + 0.5) * scale + origin
    double scale = 1.0;
    QPointF origin;
    QPointF map(double x, double y) const { return {origin.x() + (x + 0.5) * scale, origin.y() + (y + 0.5) * scale}; }
  };

  Mapping mapping() const;
  void rebuildPixmapIfNeeded();
  // `fast` (may be null) writes axis-aligned lines into the frame's pixels; without it, QPainter draws all.
  void paintOverlay(QPainter& painter, const Mapping& m, detail::PixelOverlay* fast) const;
  void paintGaussian(QPainter& painter, const Mapping& m, detail::PixelOverlay* fast, bool active) const;
  // The active Gaussian's centres: as dots when they are few and far enough apart, else as lattice lines.
  void paintGaussianDots(QPainter& painter, const Mapping& m, detail::PixelOverlay* fast,
                         const attn::glimpse::GaussianGlimpse& g) const;
  void paintGaussianLattice(QPainter& painter, const Mapping& m, detail::PixelOverlay* fast,
                            const attn::glimpse::GaussianGlimpse& g) const;
  void paintStn(QPainter& painter, const Mapping& m, detail::PixelOverlay* fast, bool active) const;

  // Edits: each changes settings_ and emits. `from` resolves to `fromGeometry`.
  void moveBy(double dx, double dy, const attn::glimpse::GlimpseSettings& from,
              const attn::glimpse::ResolvedGlimpse& fromGeometry);
  void scaleBy(double factor);
  void sigmaBy(double factor);
  void rotateBy(double radians);
  void emitEdit(bool dragging);
  void burst();  // a wheel or key edit: dragging until the burst pauses
  double rotationSign() const;

  std::shared_ptr<const GlimpseImage> image_;
  attn::glimpse::GlimpseSettings settings_;
  attn::glimpse::ResolvedGlimpse geometry_;  // what settings_ resolve to (from the owner)
  Target target_ = Target::Gaussian;

  bool fitted_ = true;
  double scale_ = 1.0;
  QPointF origin_;  // widget position of the image's top-left edge (pixel 0's left edge)

  QImage background_;  // widget-sized RGB32: the dark surround and the visible part of the photo
  QImage frame_;       // background_ + overlay, reused between paints
  struct PixmapKey {
    double scale = 0;
    QPointF origin;
    QSize size;
    quint64 serial = 0;
    bool operator==(const PixmapKey&) const = default;
  } pixmapKey_;
  int pixmapBuilds_ = 0;

  Drag drag_ = Drag::None;
  QPointF pressPos_;
  attn::glimpse::GlimpseSettings pressSettings_;
  attn::glimpse::ResolvedGlimpse pressGeometry_;
  double lastAngle_ = 0.0;
  double rotationGain_ = 1.0;
  bool interacting_ = false;
  QTimer burstTimer_;

  quint64 paintCount_ = 0;
  double lastPaintMs_ = 0.0;
  mutable int drawnLines_ = 0;
  mutable int latticeLines_ = 0;  // lines of the full lattice along x, when it was thinned
};

}  // namespace attn::ui
