// `attnscope-cli run`: a transformer (or an attention dump) without a window. Runs the model on --text
// [--pair] or --image, optionally writes the run's attention as a dump (--dump), and renders one view
// with the GUI's own renderers: the matrix (HeatmapView), the head view (render::tokenLinesImage), the
// model view (render::headGridImage) or the ViT overlay (render::overlayImage).
#pragma once

#include "cli/headless.h"
#include "attn/error.h"
#include "attn/models/intervention.h"
#include "attn/models/transformer.h"
#include "render/colormap.h"

#include <QSize>
#include <QString>

#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace attn::ui {

// --render: "layer=3,head=5", "layer=3,head=mean" or "rollout" (layers and heads 0-based).
struct RenderSpec {
  enum class Kind { Head, Mean, Rollout };
  Kind kind = Kind::Mean;
  int layer = 0;
  int head = 0;
};
// Errors name the byte offset in the spec of the key or value at fault (file "--render").
attn::Result<RenderSpec> parseRenderSpec(std::string_view spec);

// --tile: "r0:r1,c0:c1", query rows [r0, r1) and keys [c0, c1) (0-based, end excluded). Errors name the byte
// offset in the spec (file "--tile"); the bounds are checked against a run's tokens by the caller.
struct TileSpec {
  std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
};
attn::Result<TileSpec> parseTileSpec(std::string_view spec);

enum class TransformerView { Matrix, Head, Model, Overlay };
std::optional<TransformerView> findTransformerView(const QString& name);

struct TransformerJob {
  QString modelDir;  // a model folder, or
  QString dumpIn;    // an attention dump to render
  std::string text;  // text models (raw bytes, as the engine's offsets refer to them)
  std::string pair;  // BERT's second sentence
  bool hasText = false;
  std::string ids;  // --ids "5,17,3" or "5 17 3": token ids as given (a model without a tokenizer)
  bool hasIds = false;
  QString imagePath;      // ViT
  QString dumpOut;        // write the run's attention here (*.attn.safetensors)
  bool onDemand = false;  // a decoder keeps its attention on demand however short the text (--dump: version 2)
  std::string render;     // a RenderSpec; empty: no image
  TransformerView view = TransformerView::Matrix;
  QString outPath;       // .png (.svg, .pdf for the matrix view)
  QString csvPath;       // the drawn map's (or tile's) weights as CSV
  std::string tile;      // "r0:r1,c0:c1": query rows [r0, r1) x keys [c0, c1) exactly, instead of the whole map
  QSize size{900, 700};  // the matrix exactly; the width of the head and model views
  render::Colormap colormap = render::Colormap::Viridis;
  int generate = 0;                        // decoders: tokens to generate after the text (0: a plain run)
  attn::models::GenerateOptions sampling;  // its temperature, top-k, top-p and seed
  std::string ablate;                      // --ablate "L.H[,L.H...]": heads whose output is ablated (empty: none)
  attn::models::AblationMode ablateMode = attn::models::AblationMode::Zero;  // zero or mean
};

// summary: "run: BERT · 12 tokens · 2 layers x 4 heads · 3.1 ms"; notes: warnings and predictions (with
// --generate: the continuation and its speed); written: the files.
std::expected<RenderReport, RenderFailure> runTransformer(const TransformerJob& job);

}  // namespace attn::ui
