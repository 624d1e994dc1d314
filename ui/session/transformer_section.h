// The Transformer tab's section of the session file: the source, its input, the view and the Generate group.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "session/causal_section.h"
#include "session/session_values.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ui {

struct TransformerSection {
  enum class View : std::uint8_t { Head, Model, Statistics, Overlay, Matrix, Lens };
  enum class Matrix : std::uint8_t { Head, LayerMean, Rollout };
  enum class Fusion : std::uint8_t { Mean, Max, Min };
  enum class Overlay : std::uint8_t { Rollout, Head };
  // A model folder, a *.attn.safetensors dump, a bundled demo's key ("induction-gpt2", "stories260k"), or empty.
  std::string source;
  std::string text;
  std::string pair;  // BERT's second sentence
  ImageRef image;    // a ViT's input
  int layer = 0;
  int head = 0;
  View view = View::Head;
  Matrix matrix = Matrix::Head;
  Fusion fusion = Fusion::Mean;
  double discard_ratio = 0.0;  // [0, 0.99]
  double residual = 0.5;       // [0, 1]
  Overlay overlay = Overlay::Rollout;
  double overlay_alpha = 0.65;   // [0, 1]
  double line_threshold = 0.01;  // [0, 0.5]
  std::string colormap = "viridis";
  // The Generate group (GPT-2 and the decoders), and whether a generated run was in view and at which step: the
  // same settings and seed generate the same tokens again.
  int new_tokens = 40;       // [1, 4096]
  double temperature = 0.0;  // [0, 5]
  int top_k = 0;             // [0, 100000]
  double top_p = 1.0;        // [0.01, 1]
  std::uint64_t seed = 0;    // [0, 1e9]
  bool generated = false;
  int step = 0;  // the scrubbed generated token (0: the first)
  // Interventions ("intervene"; absent in older sessions: nothing ablated, Compare off): the ablated heads as
  // "L.H,L.H", the ablation mode, and the Compare input, whether it is on and how its maps are shown.
  enum class Ablation : std::uint8_t { Zero, Mean, Resample };
  enum class CompareShow : std::uint8_t { SideBySide, Difference };
  std::string ablated;
  Ablation ablation = Ablation::Zero;
  bool compare = false;
  std::string compare_text;
  CompareShow compare_show = CompareShow::Difference;
  CausalSection causal;  // the Patching and Head detectors views (absent in older files: empty)
  friend bool operator==(const TransformerSection&, const TransformerSection&) = default;
};

nlohmann::ordered_json to_json(const TransformerSection& section);
// The section's object (`j`, at "tabs.transformer"); warnings for the keys it does not know.
Result<TransformerSection> read_transformer_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                    std::vector<Error>& warnings);

}  // namespace attn::ui
