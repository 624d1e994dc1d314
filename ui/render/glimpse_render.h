// Pure drawing helpers of the Glimpse workbench: engine images -> QImage, filterbanks -> curves (views/plot_data.h: as
// QCustomPlot data),
// a glimpse difference -> a colour-mapped QImage. No widgets, and safe on any thread (the glimpse worker
// converts its results here so the GUI thread only paints).
#pragma once

#include "attn/glimpse/gaussian.h"
#include "attn/vision/image.h"
#include "render/colormap.h"

#include <QImage>
#include <QList>
#include <QStringList>
#include <QString>
#include <QVector>

#include <vector>

namespace attn::ui::render {

// Planar float [C, H, W] in [0, 1] -> QImage::Format_RGB32 (clamped and rounded by image_to_u8; one
// channel is shown as grey). Null for an empty image.
QImage toQImage(const attn::Image& image);

// The same, scaled so that the largest value maps to 1 (a write canvas accumulates glimpses and leaves
// [0, 1]). `peak` receives that largest value (0 for an all-zero image, which is drawn black).
// DRAW's write canvas as a picture: each pixel is the sum of the writes divided by the weight it received
// (`coverage`: the same writes of a patch of gamma, one channel), so a written region shows the glimpse
// as the write puts it back, whatever its sigma; pixels with under 1e-3 of the largest weight are black.
// `peak` receives the largest weight.
QImage toQImageByCoverage(const attn::Image& canvas, const attn::Image& coverage, double* peak = nullptr);
QImage toQImageNormalised(const attn::Image& image, double* peak = nullptr);

// |a - b| per channel as a colour-mapped image: the largest channel difference of each pixel over
// `range` (0 .. range; range <= 0 uses the image's own maximum, and a zero image draws as colour 0).
QImage differenceImage(const attn::Image& difference, Colormap map, double range = 0.0);

// Which filters of a bank get a curve: all when there are at most `maxCurves`, otherwise an evenly spaced
// subset that always contains the first and the last filter.
std::vector<int> curveSubset(int filters, int maxCurves);

// One filter's band as a curve: x = pixel (engine convention, pixel a at a), y = weight.
struct FilterCurve {
  int filter = 0;
  QVector<double> keys;
  QVector<double> values;
};
struct FilterCurves {
  std::vector<FilterCurve> curves;
  int filters = 0;      // filters in the bank
  bool subset = false;  // fewer curves than filters
  double lower = 0.0;   // pixel range the plotted bands cover
  double upper = 1.0;
  double peak = 0.0;  // largest plotted weight
};
FilterCurves filterCurves(const attn::glimpse::FilterBank& bank, int maxCurves = 24);

// "x.sigma 0 → 0.05 (sigma must be at least 0.05 px)": one line per clamp, in words.
QStringList clampDescriptions(const std::vector<attn::glimpse::Clamp>& clamps);

// A number for a label: up to `digits` significant digits, no trailing zeros, "−" for minus.
QString shortNumber(double value, int digits = 4);

}  // namespace attn::ui::render
