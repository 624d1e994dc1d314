// The Captioning tab's section of the session file: the model, the photo, the beam and the overlay.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "session/session_values.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::ui {

struct CaptionSection {
  enum class Input : std::uint8_t { Scene, Sample, File };
  enum class Style : std::uint8_t { Colour, LightMask };
  std::string model = "caption-soft";  // a bundled model's key or a captioner folder
  Input input = Input::Scene;
  std::uint64_t seed = 1;  // Scene
  std::string image;       // Sample: the key; File: the path
  int beam = 3;
  int hypothesis = 0;
  int word = 0;
  double sigma = 8.0;    // [0, 24]
  double opacity = 0.8;  // [0, 1]
  std::string colormap = "inferno";
  double threshold = 0.15;  // [0, 0.95]
  Style style = Style::Colour;
  int per_row = 5;  // the grid export's words a row
  friend bool operator==(const CaptionSection&, const CaptionSection&) = default;
};

nlohmann::ordered_json to_json(const CaptionSection& section);
// The section's object (`j`, at "tabs.caption"); warnings for the keys it does not know.
Result<CaptionSection> read_caption_section(const io::SessionReader& reader, const nlohmann::json& j,
                                            std::vector<Error>& warnings);

}  // namespace attn::ui
