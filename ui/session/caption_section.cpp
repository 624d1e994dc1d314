#include "session/caption_section.h"

#include "core/try.h"

#include <array>
#include <string_view>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr std::array<std::string_view, 2> kStyles = {"colour", "light-mask"};
}  // namespace

ojson to_json(const CaptionSection& c) {
  ojson input;
  switch (c.input) {
    case CaptionSection::Input::Scene: input = {{"scene", c.seed}}; break;
    case CaptionSection::Input::Sample: input = {{"sample", c.image}}; break;
    case CaptionSection::Input::File: input = {{"file", c.image}}; break;
  }
  return {{"model", c.model},
          {"input", input},
          {"beam", c.beam},
          {"hypothesis", c.hypothesis},
          {"word", c.word},
          {"overlay",
           {{"sigma", c.sigma},
            {"opacity", c.opacity},
            {"colormap", c.colormap},
            {"threshold", c.threshold},
            {"style", kStyles[static_cast<std::size_t>(c.style)]}}},
          {"per_row", c.per_row}};
}

Result<CaptionSection> read_caption_section(const io::SessionReader& reader, const nlohmann::json& j,
                                            std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.caption");
  CaptionSection s;
  ATTN_TRY(m.text("model", io::kMaxSessionName, s.model, true, true));
  const nlohmann::json* input = nullptr;
  ATTN_ASSIGN(input, m.object("input"));
  if (input) {
    io::SessionMembers in(reader, *input, "tabs.caption.input");
    const int given = int(input->contains("scene")) + int(input->contains("sample")) + int(input->contains("file"));
    if (given != 1 || input->size() != 1) {
      return m.error(ErrorKind::Malformed, "input",
                     "must hold one of \"scene\" (a seed), \"sample\" (a bundled photo) or \"file\" (a path)");
    }
    if (input->contains("scene")) {
      s.input = CaptionSection::Input::Scene;
      ATTN_TRY(in.whole("scene", 0, static_cast<std::int64_t>(io::kMaxSessionSeed), s.seed));
      s.image.clear();
    } else if (input->contains("sample")) {
      s.input = CaptionSection::Input::Sample;
      ATTN_TRY(in.text("sample", io::kMaxSessionName, s.image, true, true));
      if (!is_sample_key(s.image)) {
        return in.error(ErrorKind::OutOfRange, "sample",
                        io::SessionMembers::quote(s.image) + " is not a sample's name");
      }
    } else {
      s.input = CaptionSection::Input::File;
      ATTN_TRY(in.text("file", io::kMaxSessionName, s.image, true, true));
    }
  }
  ATTN_TRY(m.whole("beam", 1, io::kMaxSessionBeam, s.beam));
  ATTN_TRY(m.whole("hypothesis", 0, io::kMaxSessionBeam - 1, s.hypothesis));
  ATTN_TRY(m.whole("word", 0, io::kMaxSessionIndex, s.word));
  const nlohmann::json* overlay = nullptr;
  ATTN_ASSIGN(overlay, m.object("overlay"));
  if (overlay) {
    io::SessionMembers o(reader, *overlay, "tabs.caption.overlay");
    ATTN_TRY(o.number("sigma", 0.0, 24.0, s.sigma));
    ATTN_TRY(o.number("opacity", 0.0, 1.0, s.opacity));
    ATTN_TRY(read_colormap(o, "colormap", s.colormap));
    ATTN_TRY(o.number("threshold", 0.0, 0.95, s.threshold));
    ATTN_TRY(o.choice("style", kStyles, s.style));
    o.warn_unknown(warnings);
  }
  ATTN_TRY(m.whole("per_row", 1, 12, s.per_row));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
