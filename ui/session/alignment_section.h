// The Alignment tab's section of the session file: the model, its input and the view.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "attn/models/seq2seq.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ui {

struct AlignmentSection {
  std::string model = "date-bahdanau";              // a bundled model's key or a model folder
  std::string text = "Saturday, 21 November 2026";  // an entailment model's premise
  std::string pair;                                 // an entailment model's hypothesis
  int beam = 1;                                     // 1 = greedy
  int hypothesis = 0;
  int step = 0;  // the output step in view, 0-based
  std::string colormap = "viridis";
  bool readings = true;              // a review: the three readings of saliency side by side
  models::AttentionShaping shaping;  // a speech model's weights, as its decoder makes them (the defaults: its own)
  friend bool operator==(const AlignmentSection&, const AlignmentSection&) = default;
};

nlohmann::ordered_json to_json(const AlignmentSection& section);
// The section's object (`j`, at "tabs.alignment"); warnings for the keys it does not know.
Result<AlignmentSection> read_alignment_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                std::vector<Error>& warnings);

}  // namespace attn::ui
