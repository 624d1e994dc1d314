// The Alignment tab's section of the session file: the model, its input and the view, and each kind's own keys.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

namespace attn::ui {

// The section's keys that one kind of model has and the others do not (whether a review classifier shows its
// readings of saliency, how a speech model shapes its attention weights): the kind's session part, in its folder
// (workbenches/alignment/<kind>/<kind>_session.cpp, compiled here: ui/session/CMakeLists.txt finds the files and lists
// them for alignmentKindSessions()). Its keys sit at the section's top level beside the shared ones, as they always
// have; AlignmentSection::kinds holds their values.
class AlignmentKindSession {
 public:
  virtual ~AlignmentKindSession() = default;
  // Its keys at their defaults, into `kinds`.
  virtual void defaults(nlohmann::json& kinds) const = 0;
  // Its keys from the section's members `m` (those absent keep their values in `kinds`); refuses a malformed value
  // as the shared keys are refused, and warns of the keys inside its values that it does not know.
  virtual Result<void> read(io::SessionMembers& m, nlohmann::json& kinds, std::vector<Error>& warnings) const = 0;
};

// Every kind's session part (in the order of their folders' names).
std::span<const AlignmentKindSession* const> alignmentKindSessions();
// Every kind's keys at their defaults.
nlohmann::json alignmentKindDefaults();

struct AlignmentSection {
  std::string model = "date-bahdanau";              // a bundled model's key or a model folder
  std::string text = "Saturday, 21 November 2026";  // an entailment model's premise
  int beam = 1;                                     // 1 = greedy
  int hypothesis = 0;
  int step = 0;  // the output step in view, 0-based
  std::string colormap = "viridis";
  // The review and entailment models' attribution shading: "none", "grad-x-input" or "integrated-gradients"
  // (attn::models::word_method_name).
  std::string attribution = "none";
  // The kinds' own keys, key -> value (as written); each kind reads and sets its own through its session part.
  nlohmann::json kinds = alignmentKindDefaults();
  friend bool operator==(const AlignmentSection&, const AlignmentSection&) = default;
};

nlohmann::ordered_json to_json(const AlignmentSection& section);
// The section's object (`j`, at "tabs.alignment"); warnings for the keys it does not know.
Result<AlignmentSection> read_alignment_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                std::vector<Error>& warnings);

}  // namespace attn::ui
