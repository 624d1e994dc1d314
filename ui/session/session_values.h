// What more than one tab's section holds (a photo by sample or file, a colour map's name) and how it is read.
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::ui {

// A photo: one of the bundled samples by key ("astronaut") or a file.
struct ImageRef {
  enum class Kind : std::uint8_t { Sample, File };
  Kind kind = Kind::Sample;
  std::string value = "astronaut";  // the key or the path
  friend bool operator==(const ImageRef&, const ImageRef&) = default;
};

// A bundled sample's key: short, lower case (the tab looks it up and says so when it has no such sample).
bool is_sample_key(std::string_view key);

// {"sample": key} or {"file": path}.
nlohmann::ordered_json image_json(const ImageRef& image);
Result<void> read_image(io::SessionMembers& parent, std::string_view key, ImageRef& out);

// A section's part written by its own JSON writer (lab::to_json, glimpse::to_json), nested as an object.
nlohmann::ordered_json nested_json(const std::string& text);

// One of render::kColormapKeys.
Result<void> read_colormap(io::SessionMembers& members, std::string_view key, std::string& out);

}  // namespace attn::ui
