#include "session/glimpse_section.h"

#include "core/try.h"

#include <array>
#include <string_view>
#include <utility>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
}  // namespace

ojson to_json(const GlimpseSection& g) {
  return {{"image", image_json(g.image)},
          {"image_width", g.image_width},
          {"image_height", g.image_height},
          {"settings", nested_json(glimpse::to_json(g.settings, g.image_width, g.image_height))},
          {"write", g.write_mode},
          {"forms", g.window_forms},
          {"edit_stn", g.edit_stn}};
}

Result<GlimpseSection> read_glimpse_section(const io::SessionReader& reader, const nlohmann::json& j,
                                            std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.glimpse");
  GlimpseSection s;
  ATTN_TRY(read_image(m, "image", s.image));
  ATTN_TRY(m.whole("image_width", 0, io::kMaxSessionIndex, s.image_width));
  ATTN_TRY(m.whole("image_height", 0, io::kMaxSessionIndex, s.image_height));
  const nlohmann::json* settings = nullptr;
  ATTN_ASSIGN(settings, m.object("settings"));
  if (settings) {
    auto parsed = glimpse::glimpse_settings_from_json(
        settings->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "tabs.glimpse.settings");
    if (!parsed) return m.error(parsed.error().kind, "settings", parsed.error().reason);
    s.settings = *parsed;
  }
  ATTN_TRY(m.boolean("write", s.write_mode));
  ATTN_TRY(m.boolean("forms", s.window_forms));
  ATTN_TRY(m.boolean("edit_stn", s.edit_stn));
  m.warn_unknown(warnings);
  return s;
}

}  // namespace attn::ui
