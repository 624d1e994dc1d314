// Show, Attend and Tell's pictures (Xu et al. 2015, figures 2-3; the PyTorch tutorial's visualize_att):
// each word's α over the G x G grid upsampled and smoothed (skimage's pyramid_expand: bilinear, then a
// Gaussian of sigma pixels at 24 pixels per cell), drawn over the image as a colour layer or as a light
// mask (the image dimmed where α is low), the cell a hard-attention step read outlined; the entropy of each
// step's α; and the grid figure: the image, then every word with its overlay under the word as title.
// Pure functions, so the Captioning tab, attnscope-cli caption and the tests draw the same pictures.
#pragma once

#include "attn/core.h"
#include "render/colormap.h"

#include <QFont>
#include <QImage>
#include <QSize>
#include <QString>

#include <span>
#include <vector>

class QPainter;

namespace attn::ui::render {

// Pixels per grid cell of the smoothed maps (the tutorial's upscale) for a G x G grid: 24, fewer for
// grids wider than 16 cells so that a map stays within 384 pixels a side.
int captionUpscale(int grid);

// One α row (L = G * G values, row-major cells) as a (G * upscale)^2 map: attn::upsample_smooth, bilinear
// then a Gaussian of `sigma` pixels at 24 pixels per cell (scaled with the upscale; 0 = bilinear only).
// The tutorial uses 8.
attn::Matrix smoothedAlpha(std::span<const float> alpha, int grid, double sigma);
// Σ_t α_t per cell over the rows of a hypothesis' alpha [T, L] (the doubly stochastic regulariser pushes
// it towards 1 everywhere).
std::vector<float> alphaCoverage(const attn::Matrix& alpha);
// H(α_t) = -Σ_i α_ti log α_ti per row, nats (log L for a uniform α).
std::vector<float> alphaEntropy(const attn::Matrix& alpha);

enum class CaptionOverlayMode { Colour, LightMask };

struct CaptionOverlayOptions {
  double sigma = 8.0;    // see smoothedAlpha
  double opacity = 0.8;  // of the colour layer at the maximum (Colour), of the darkest dimming (LightMask)
  Colormap colormap = Colormap::Inferno;
  double threshold = 0.15;  // values below this fraction of the map's maximum: transparent (Colour), dark (LightMask)
  CaptionOverlayMode mode = CaptionOverlayMode::Colour;
};

// The layer drawn over the image: ARGB32 premultiplied, the map's size. Values are scaled by the map's own
// maximum, t = v / max (each word's α fills the colour range, as the tutorial's imshow does). Colour: the
// map's colour at t with opacity × t, nothing below the threshold. LightMask: black with opacity × (1 - t'),
// t' = t rescaled from the threshold (0) to the maximum (1): fully dimmed below the threshold, no edge.
QImage alphaLayer(const attn::Matrix& map, const CaptionOverlayOptions& options);

// `photo` with `layer` stretched over it and, when outlineCell >= 0, that cell of a grid x grid lattice
// outlined (the location a hard-attention step read). RGB32, the photo's size.
QImage composeOverlay(const QImage& photo, const QImage& layer, int outlineCell = -1, int grid = 0);

// The image to draw overlays on: RGB32, longer side from 384 (small images enlarged by a whole factor
// without smoothing, so a 128-pixel scene stays crisp) to 768 (large ones scaled down smoothly).
QImage captionDisplayImage(const QImage& image);

struct CaptionGridCell {
  QString title;  // the word
  QImage image;   // composed, any size (drawn scaled to the cell)
};

struct CaptionGridFigure {
  QString heading;                     // the caption, model, log p
  std::vector<CaptionGridCell> cells;  // the image first, then one per word
  int perRow = 5;
  int cellWidth = 224;  // the image's width in a cell; heights follow its aspect
};

QSize captionGridSize(const CaptionGridFigure& figure, const QFont& font);
// Paints on a white background from (0, 0): the heading, then the cells row by row, each word over its
// image.
void paintCaptionGrid(QPainter& painter, const CaptionGridFigure& figure, const QFont& font);

}  // namespace attn::ui::render
