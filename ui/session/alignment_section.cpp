#include "session/alignment_section.h"

#include "core/try.h"
#include "session/session_values.h"

#include <array>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr std::array<std::string_view, 3> kAttributions = {"none", "grad-x-input", "integrated-gradients"};
}  // namespace

// The kinds' session parts: alignment_kind_sessions.inc, written by ui/session/CMakeLists.txt, has one
// ALIGNMENT_KIND_SESSION(kind) line per workbenches/alignment/<kind>/<kind>_session.cpp, which defines
// `const AlignmentKindSession& <kind>_session()`.
#define ALIGNMENT_KIND_SESSION(kind) const AlignmentKindSession& kind##_session();
#include "alignment_kind_sessions.inc"
#undef ALIGNMENT_KIND_SESSION

std::span<const AlignmentKindSession* const> alignmentKindSessions() {
#define ALIGNMENT_KIND_SESSION(kind) &kind##_session(),
  static const std::array parts = {
#include "alignment_kind_sessions.inc"
  };
#undef ALIGNMENT_KIND_SESSION
  return parts;
}

json alignmentKindDefaults() {
  json kinds = json::object();
  for (const AlignmentKindSession* part : alignmentKindSessions()) part->defaults(kinds);
  return kinds;
}

ojson to_json(const AlignmentSection& a) {
  ojson j = {{"model", a.model},           {"text", a.text}, {"beam", a.beam},
             {"hypothesis", a.hypothesis}, {"step", a.step}, {"colormap", a.colormap}};
  // Only when on, so that a file written before the key existed writes back the same.
  if (a.attribution != kAttributions[0]) j["attribution"] = a.attribution;
  for (const auto& [key, value] : a.kinds.items()) j[key] = ojson::parse(value.dump());
  return j;
}

Result<AlignmentSection> read_alignment_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.alignment");
  AlignmentSection s;
  ATTN_TRY(m.text("model", io::kMaxSessionName, s.model, true, true));
  ATTN_TRY(m.text("text", io::kMaxSessionText, s.text));
  ATTN_TRY(m.whole("beam", 1, io::kMaxSessionBeam, s.beam));
  ATTN_TRY(m.whole("hypothesis", 0, io::kMaxSessionBeam - 1, s.hypothesis));
  ATTN_TRY(m.whole("step", 0, io::kMaxSessionIndex, s.step));
  ATTN_TRY(read_colormap(m, "colormap", s.colormap));
  std::size_t attribution = 0;  // "none" when absent
  ATTN_TRY(m.choice("attribution", kAttributions, attribution));
  s.attribution = kAttributions[attribution];
  for (const AlignmentKindSession* part : alignmentKindSessions()) ATTN_TRY(part->read(m, s.kinds, warnings));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
