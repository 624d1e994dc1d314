#include "session/alignment_section.h"

#include "core/try.h"
#include "session/session_values.h"

#include <array>
#include <string_view>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
}  // namespace

ojson to_json(const AlignmentSection& a) {
  return {{"model", a.model},
          {"text", a.text},
          {"pair", a.pair},
          {"beam", a.beam},
          {"hypothesis", a.hypothesis},
          {"step", a.step},
          {"colormap", a.colormap},
          {"readings", a.readings},
          {"shaping",
           {{"sharpen", a.shaping.sharpen},
            {"smooth", a.shaping.smooth},
            {"top_k", a.shaping.top_k},
            {"window", a.shaping.window}}}};
}

Result<AlignmentSection> read_alignment_section(const io::SessionReader& reader, const nlohmann::json& j,
                                                std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.alignment");
  AlignmentSection s;
  ATTN_TRY(m.text("model", io::kMaxSessionName, s.model, true, true));
  ATTN_TRY(m.text("text", io::kMaxSessionText, s.text));
  ATTN_TRY(m.text("pair", io::kMaxSessionText, s.pair));
  ATTN_TRY(m.whole("beam", 1, io::kMaxSessionBeam, s.beam));
  ATTN_TRY(m.whole("hypothesis", 0, io::kMaxSessionBeam - 1, s.hypothesis));
  ATTN_TRY(m.whole("step", 0, io::kMaxSessionIndex, s.step));
  ATTN_TRY(read_colormap(m, "colormap", s.colormap));
  ATTN_TRY(m.boolean("readings", s.readings));
  const nlohmann::json* shaping = nullptr;
  ATTN_ASSIGN(shaping, m.object("shaping"));
  if (shaping) {
    io::SessionMembers o(reader, *shaping, "tabs.alignment.shaping");
    ATTN_TRY(o.number("sharpen", 0.01, 100.0, s.shaping.sharpen));
    ATTN_TRY(o.boolean("smooth", s.shaping.smooth));
    ATTN_TRY(o.whole("top_k", 0, io::kMaxSessionIndex, s.shaping.top_k));
    ATTN_TRY(o.whole("window", 0, io::kMaxSessionIndex, s.shaping.window));
    o.warn_unknown(warnings);
    if (s.shaping.smooth) s.shaping.sharpen = 1.0f;  // the sigmoid has no beta
  }
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
