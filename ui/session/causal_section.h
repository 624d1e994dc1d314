// The Transformer tab's Patching and Head detectors views in the session file (issue 43), under
// "tabs.transformer.causal": the patching settings and the sweep in view (its cells, null where not computed), and
// the head detection in view, and the Attribution view's settings. Absent in older files: the views start empty.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

// At most this many sweep cells or heads are kept (a sweep of GPT-2 small's heads x 1024 positions is 147,456).
inline constexpr int kMaxSessionCells = 1 << 22;

struct PatchingSweepState {
  std::string kind = "heads";  // attn::models::sweep_name
  int layers = 0, heads = 1, positions = 1, done = 0;
  std::vector<double> values;  // layers x heads x positions; NaN: not computed (null in the file)
  std::vector<std::string> tokens;
  double clean_metric = 0, corrupt_metric = 0;
  friend bool operator==(const PatchingSweepState& a, const PatchingSweepState& b);
};

struct HeadDetectionState {
  int layers = 0, heads = 0, sequences = 0, length = 0, max_offset = 0;
  std::string pool;
  // Per head, layer-major.
  std::vector<double> previous_token, duplicate_token, induction, sink;
  std::vector<int> induction_offset;
  friend bool operator==(const HeadDetectionState&, const HeadDetectionState&) = default;
};

// The Attribution view (issue 44): its method, target and integrated gradients' settings; the scores are computed
// again when the session opens.
struct AttributionState {
  std::string method = "grad-x-input";  // attn::models::method_name
  std::string kind = "logit";           // "logit" or "logprob"
  std::string token;                    // the explained token's text; empty: the model's top prediction
  int steps = 32;                       // integrated gradients, 1 .. 1024
  std::string baseline = "zero";        // "zero" or "pad"
  friend bool operator==(const AttributionState&, const AttributionState&) = default;
};

struct CausalSection {
  std::string corrupt;                // the corrupted input
  std::string metric = "logit-diff";  // attn::models::metric_name
  std::string answer, wrong;
  std::string sweep = "heads";
  std::optional<PatchingSweepState> result;
  std::optional<HeadDetectionState> heads;
  AttributionState attribution;  // absent in older files: the defaults
  friend bool operator==(const CausalSection&, const CausalSection&) = default;
};

nlohmann::ordered_json to_json(const CausalSection& section);
// `j` at "tabs.transformer.causal"; warnings for the keys it does not know.
Result<CausalSection> read_causal_section(const io::SessionReader& reader, const nlohmann::json& j,
                                          std::vector<Error>& warnings);

}  // namespace attn::ui
