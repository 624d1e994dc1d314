// The Glimpse tab's section of the session file: the photo and the settings (written by glimpse::to_json).
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "attn/glimpse/settings.h"
#include "session/session_values.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ui {

struct GlimpseSection {
  ImageRef image;
  // Pixel numbers refer to this image; its size is recorded so the file says so (0 when not known).
  int image_width = 0;
  int image_height = 0;
  glimpse::GlimpseSettings settings;
  bool write_mode = false;
  bool window_forms = false;  // the soft mask, the crop and the matrix form side by side
  bool edit_stn = false;      // the canvas handles edit the STN glimpse
  friend bool operator==(const GlimpseSection&, const GlimpseSection&) = default;
};

nlohmann::ordered_json to_json(const GlimpseSection& section);
// The section's object (`j`, at "tabs.glimpse"); warnings for the keys it does not know.
Result<GlimpseSection> read_glimpse_section(const io::SessionReader& reader, const nlohmann::json& j,
                                            std::vector<Error>& warnings);

}  // namespace attn::ui
