// `attnscope-cli glimpse`: one glimpse of a photo, without a window. The photo goes through the engine's
// checked loader, the glimpse is a --gaussian or --stn spec, and the result is magnified with nearest
// neighbour (so each glimpse pixel stays a visible square) and saved; --json writes the settings file the
// workbench's "Export parameters" writes.
#pragma once

#include "cli/headless.h"
#include "attn/glimpse/gaussian.h"
#include "attn/vision/image.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <expected>
#include <string>

namespace attn::ui {

struct GlimpseJob {
  enum class Kind { Gaussian, Stn };
  QString imagePath;
  Kind kind = Kind::Gaussian;
  std::string spec;  // the spec's raw bytes, which error offsets refer to
  QString outPath;   // .png (or .jpg, .bmp, .tif, .webp)
  QString jsonPath;  // may be empty
  int scale = 0;     // magnification; 0 = the smallest that makes the longer side at least 256 px
};

// summary: "glimpse: Gaussian 12 x 12 on 451 x 300 ... -> 264 x 264 px (x22)"; notes: parameters the engine
// clamped, a window outside the image; written: the files.
using GlimpseReport = RenderReport;

std::expected<GlimpseReport, RenderFailure> renderGlimpse(const GlimpseJob& job);

// The Gaussian glimpse `--gaussian` starts from: 12 x 12 filters centred on the image, spanning half its
// shorter side, sigma half the stride.
attn::glimpse::GaussianGlimpse defaultGaussianFor(int width, int height);

inline constexpr int kMinMagnifiedSide = 256;
inline constexpr int kMaxMagnifiedSide = 16384;
inline constexpr std::int64_t kMaxMagnifiedPixels = 100'000'000;  // as attn::ImageLimits
// The smallest integer factor that makes the longer side at least `minSide` pixels (at least 1).
int defaultMagnification(int width, int height, int minSide = kMinMagnifiedSide);
// Each pixel becomes a factor x factor square.
attn::Image magnify(const attn::Image& image, int factor);

}  // namespace attn::ui
