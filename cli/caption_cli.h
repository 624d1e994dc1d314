// `attnscope-cli caption`: the Captioning tab without a window. Loads a bundled captioner by name (or a
// model folder), captions an image file, a bundled photo (sample:astronaut) or a generated scene (--scene
// SEED) and writes the Show-Attend-Tell grid of one hypothesis (the image, then every word over its
// overlay) with the tab's own renderers, as PNG, SVG or PDF.
#pragma once

#include "cli/headless.h"
#include "render/caption_render.h"

#include <QString>

#include <cstdint>
#include <expected>
#include <optional>

namespace attn::ui {

struct CaptionJob {
  QString model = QStringLiteral("caption-soft");  // a bundled captioner's key or a model folder
  QString imagePath;                               // a file or sample:<key>; or
  std::optional<std::uint64_t> scene;              // a generated scene's seed
  int beam = 1;                                    // 1 = greedy
  int hypothesis = 0;                              // 0 = the best
  int perRow = 5;
  render::CaptionOverlayOptions overlay;
  QString outPath;  // .png, .svg or .pdf
};

// summary: "caption: Scenes · soft attention (…) · scene 7 -> “a small red circle” · beam 1 · 2.3 ms";
// notes: the hypotheses with their log-probabilities, the scene's own caption, warnings; written: the grid.
std::expected<RenderReport, RenderFailure> runCaption(const CaptionJob& job);

}  // namespace attn::ui
