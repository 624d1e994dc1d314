// A photo decoded for the Glimpse tab: its pyramid for the engine's reads, level 0 packed for the STN
// sampler, and display images for the canvas. The worker makes it; the canvas and the workbench show it.
#pragma once

#include "attn/glimpse/stn.h"
#include "attn/vision/pyramid.h"

#include <QImage>
#include <QString>

#include <memory>
#include <vector>

namespace attn::ui {

// A decoded image with everything the GUI needs to show it. Immutable once sent.
struct GlimpseImage {
  quint64 serial = 0;
  QString name;
  QString path;
  int width = 0;  // as opened: glimpse coordinates are in these pixels
  int height = 0;
  // The photo's own size; larger than width x height when it was shrunk to stay within the tab's memory budget.
  int photoWidth = 0;
  int photoHeight = 0;
  qint64 bytes = 0;  // what the opened image takes in the tab (GlimpseWorker::kBytesPerPixel a pixel)
  bool shrunk() const { return photoWidth != width || photoHeight != height; }
  std::shared_ptr<const attn::ImagePyramid> pyramid;
  // Level 0 interleaved for the STN sampler (attn::glimpse::pack; empty beyond four channels).
  std::shared_ptr<const attn::glimpse::PackedImage> packed;
  // The pyramid's levels as RGB32 images, level 0 = full resolution: the canvas scales the level closest
  // to its display size instead of the whole photo.
  std::vector<QImage> display;
  double loadMs = 0.0;
};

}  // namespace attn::ui
